//! `clpart analyze-request` (hidden): one analysis the OpenCL layer asks
//! for, its request (`ranges_format::AnalysisRequest`) on standard input
//! and the range file on standard output, answered here
//! (`session::answer`) so that libclang never runs in the application's
//! process. The subkernel's binaries are kept (and the driver's cache
//! filled) before the analysis reaches the persistent cache, and both
//! before the answer is written: an application that exits first still
//! leaves both for its next run, which finds no analysis without its
//! binaries. Then, its outputs closed (the layer has its answer), it
//! launches the subkernel once per device on nothing, so that the driver's
//! work-group functions are compiled for the next run too
//! (`launcher::Plan::warm_launches`).

use std::io::Write;

use anyhow::{anyhow, Context, Result};
use clap::Args;

#[derive(Args)]
pub struct AnalyzeRequestArgs {
    /// Several requests (a list) the layer did not get to before its
    /// application exited: each is analyzed and built in turn, for the next
    /// run; nothing is written to standard output.
    #[arg(long)]
    ahead: bool,
}

/// Builds the subkernel on every device, as the layer will, before the
/// answer: the driver's own cache of compiled programs (PoCL's) then holds
/// them, and the layer's builds, made with the same source and options,
/// are read from it; an application that exits first leaves them for its
/// next run. The plan, for [`warm`]; any failure is the layer's to report
/// when it builds.
fn build_for_the_driver_cache(
    file: &ranges_format::RangeFile,
    kernel: &str,
) -> Option<(launcher::Plan, Vec<usize>)> {
    if !file.kernels.first().is_some_and(|k| k.splittable) {
        return None;
    }
    let runtime = launcher::Runtime::new().ok()?;
    let mut plan = launcher::Plan::new(&runtime, file, kernel).ok()?;
    let devices: Vec<usize> = (0..runtime.devices().len()).collect();
    plan.prepare_split(&devices).ok()?;
    Some((plan, devices))
}

/// The longest the warming launches may take before the process ends
/// without them (a kernel whose loop never ends on zero scalars).
const WARM_LIMIT: std::time::Duration = std::time::Duration::from_secs(20);

/// Fills the driver's cache of compiled work-group functions for the
/// launches of `request` (`launcher::Plan::warm_launches`), once the
/// analysis is answered and kept: nothing else is left to lose if a
/// launch over zero scalars faults, and a watchdog ends the process past
/// [`WARM_LIMIT`]. Without a work-group size (a launch with a NULL one
/// whose size clpart did not say) there is nothing to warm.
fn warm(plans: Vec<(launcher::Plan, Vec<usize>, Vec<u64>)>) {
    if plans.is_empty() {
        return;
    }
    let _ = std::thread::Builder::new()
        .name("clpart-warm-limit".into())
        .spawn(|| {
            std::thread::sleep(WARM_LIMIT);
            // SAFETY: ends the process at once, running no handler: its
            // work (the answer, the cache entries) is done.
            unsafe { libc::_exit(0) }
        });
    for (mut plan, devices, local) in plans {
        let _ = plan.warm_launches(&devices, &local);
    }
}

/// The work-group size to warm for `request`'s launches.
fn warm_local(request: &ranges_format::AnalysisRequest) -> Vec<u64> {
    if request.launch_local.len() == request.work_dim as usize {
        request.launch_local.clone()
    } else {
        request.local.clone()
    }
}

/// Points standard output and standard error at `/dev/null`: the layer
/// reads the answer to its end and goes on while this process warms.
fn close_outputs() {
    use std::os::fd::AsRawFd;
    let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") else {
        return;
    };
    // SAFETY: duplicates a descriptor this process owns onto 1 and 2.
    unsafe {
        libc::dup2(null.as_raw_fd(), 1);
        libc::dup2(null.as_raw_fd(), 2);
    }
}

pub fn run(args: AnalyzeRequestArgs) -> Result<u8> {
    // a request carries a kernel source: bounded as range files are
    let bytes =
        ranges_format::input::read_to_limit(std::io::stdin(), ranges_format::input::RANGE_FILE)
            .context("reading the request")?;
    let text = String::from_utf8(bytes).context("reading the request: not valid utf-8")?;
    if args.ahead {
        let requests = ranges_format::AnalysisRequest::list_from_text(&text, "the requests")
            .map_err(|e| anyhow!(e))?;
        // one such process at a time per cache: the runs of a program
        // started in quick succession each leave one, and they take turns
        // rather than the processors of the runs after them (each reads
        // what those before it made)
        let _one = session::cache::dir()
            .and_then(|d| session::cache::hold(&session::cache::dir_lock_path(&d, "ahead")));
        // one failing does not stop the others: the layer reports each
        // when its launch asks again; the warming comes after them all
        let mut plans = Vec::new();
        for request in &requests {
            let mut built = None;
            let _ = session::answer_then(request, |file| {
                built = build_for_the_driver_cache(file, &request.kernel)
            });
            if let Some((plan, devices)) = built {
                plans.push((plan, devices, warm_local(request)));
            }
        }
        warm(plans);
        return Ok(0);
    }
    let request =
        ranges_format::AnalysisRequest::from_text(&text, "the request").map_err(|e| anyhow!(e))?;
    // the argument list reaches the cache too (a later run reads both)
    // the ranges reach the cache after the builds: a run that finds them
    // there finds the subkernels' binaries kept too, and loads them at the
    // launch instead of building from source
    let mut built = None;
    let file = session::answer_then(&request, |file| {
        built = build_for_the_driver_cache(file, &request.kernel)
    })?;
    let text = file.to_ron_string()?;
    let mut out = std::io::stdout();
    let written = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    // (also when the application that asked has exited: the next run
    // finds the analysis kept, and the driver warm)
    if let Some((plan, devices)) = built {
        close_outputs();
        warm(vec![(plan, devices, warm_local(&request))]);
    }
    written.context("writing the ranges")?;
    Ok(0)
}
