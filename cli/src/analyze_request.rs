//! `clpart analyze-request` (hidden): one analysis the OpenCL layer asks
//! for, its request (`ranges_format::AnalysisRequest`) on standard input
//! and the range file on standard output, answered here
//! (`session::answer`) so that libclang never runs in the application's
//! process. The subkernel's binaries are kept (and the driver's cache
//! filled) before the analysis reaches the persistent cache, and both
//! before the answer is written: an application that exits first still
//! leaves both for its next run, which finds no analysis without its
//! binaries.

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
/// next run. Any failure is the layer's to report when it builds.
fn build_for_the_driver_cache(file: &ranges_format::RangeFile, kernel: &str) {
    if !file.kernels.first().is_some_and(|k| k.splittable) {
        return;
    }
    let Ok(runtime) = launcher::Runtime::new() else {
        return;
    };
    let Ok(mut plan) = launcher::Plan::new(&runtime, file, kernel) else {
        return;
    };
    let devices: Vec<usize> = (0..runtime.devices().len()).collect();
    let _ = plan.prepare_split(&devices);
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
        let _one = session::cache::dir().and_then(|d| session::cache::hold(&d.join("ahead.lock")));
        // one failing does not stop the others: the layer reports each
        // when its launch asks again
        for request in &requests {
            let _ = session::answer_then(request, |file| {
                build_for_the_driver_cache(file, &request.kernel)
            });
        }
        return Ok(0);
    }
    let request =
        ranges_format::AnalysisRequest::from_text(&text, "the request").map_err(|e| anyhow!(e))?;
    // the argument list reaches the cache too (a later run reads both)
    // the ranges reach the cache after the builds: a run that finds them
    // there finds the subkernels' binaries kept too, and loads them at the
    // launch instead of building from source
    let file = session::answer_then(&request, |file| {
        build_for_the_driver_cache(file, &request.kernel)
    })?;
    let text = file.to_ron_string()?;
    std::io::stdout()
        .write_all(text.as_bytes())
        .context("writing the ranges")?;
    Ok(0)
}
