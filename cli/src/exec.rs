//! `clpart exec`: runs an unmodified OpenCL application with clpart's layer
//! (`libclpart_layer.so`) loaded by the ICD loader through `OPENCL_LAYERS`.
//!
//! The layer is looked for, in order: `$CLPART_LAYER` (a path to the
//! library), next to the `clpart` executable, and in the parent folder of
//! the executable's folder (cargo puts test binaries in `target/<profile>/deps`
//! and the library in `target/<profile>`). The configuration goes to the
//! layer in `CLPART_LAYER_SPLIT`, `CLPART_LAYER_REPORT`,
//! `CLPART_LAYER_LAUNCH_LOG`, `CLPART_LAYER_VERBOSE` and `CLPART_LAYER_WAIT` (see the layer
//! crate).
//!
//! Under `mpirun` (feature `mpi`), rank 0 runs the application and leaves
//! MPI to it: the layer starts MPI at the application's first OpenCL call
//! (`CLPART_LAYER_RANKS`, `CLPART_LAYER_RANK_SPLIT`,
//! `CLPART_LAYER_RANK_TIMEOUT`; the layer's `ranks` module), and the
//! application dies with rank 0's `clpart` (`PR_SET_PDEATHSIG`), which is
//! the process mpirun signals. Every other rank serves it
//! (`mpi_ranks::serve`). An application that never started MPI (it used no
//! OpenCL) leaves rank 0 to tell the other ranks to finish.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};

use crate::run::parse_shares;

const LAYER_FILE: &str = "libclpart_layer.so";

#[derive(Args)]
#[command(
    after_help = "Examples:\n  POCL_DEVICES=\"pthread basic\" clpart exec --split 0:0.86,1:0.14 --report r.json -- ./app 1024\n  clpart exec --report r.json --report-launches -- ./app\n  clpart exec --devices 0,1 --verbose -- ./app\n\nThe program's exit code is clpart's; 2 when clpart cannot start it."
)]
pub struct ExecArgs {
    /// Device shares: IDX:SHARE,IDX:SHARE,... summing to 1, indices as `clpart devices`
    /// lists them, or `auto` (the default): every device in proportion to its measured
    /// speed on each kernel, even at a kernel's first launch.
    #[arg(long, value_name = "IDX:SHARE,...", conflicts_with = "devices")]
    pub split: Option<String>,
    /// Split evenly over these devices: IDX,IDX,...
    #[arg(long, value_name = "IDX,...")]
    pub devices: Option<String>,
    /// Write the report (per kernel: launches, split launches, reason, bytes) as JSON at exit.
    #[arg(long, value_name = "FILE.json")]
    pub report: Option<PathBuf>,
    /// Also log in the report, in order, every launch clpart ran (kernel, program source,
    /// NDRange, each device's slice, the arguments with buffer ids and sizes) and every
    /// sync of an application's buffer (`launch_log`, `programs`; at most 20000 events).
    #[arg(long, requires = "report")]
    pub report_launches: bool,
    /// Under mpirun: the longest wait, in seconds, for one answer of another rank; a rank that
    /// takes longer is named, the application's next calls that need it fail, and the job
    /// stops.
    #[arg(long, value_name = "SECONDS", default_value_t = 120)]
    pub rank_timeout: u64,
    /// A launch whose kernel is not analyzed yet waits for the analysis and
    /// splits, instead of running unsplit on the application's device while
    /// the analysis runs in the background (the default). For runs whose split
    /// launches must not depend on timing.
    #[arg(long)]
    pub wait_for_analysis: bool,
    /// The program and its arguments.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "PROGRAM ARGS"
    )]
    pub command: Vec<OsString>,
}

/// Where `libclpart_layer.so` is.
pub fn find_layer() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("CLPART_LAYER").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        if !p.is_file() {
            bail!("CLPART_LAYER '{}' is not a file", p.display());
        }
        return Ok(p);
    }
    let exe = std::env::current_exe().context("cannot find the clpart executable")?;
    let dir = exe
        .parent()
        .context("the clpart executable has no folder")?;
    let mut tried = Vec::new();
    for d in [Some(dir), dir.parent()].into_iter().flatten() {
        let p = d.join(LAYER_FILE);
        if p.is_file() {
            return Ok(p.canonicalize().unwrap_or(p));
        }
        tried.push(p.display().to_string());
    }
    // the layer goes beside this clpart only when built with its profile
    let build = if cfg!(debug_assertions) {
        "cargo build -p layer"
    } else {
        "cargo build --release -p layer"
    };
    bail!(
        "cannot find {LAYER_FILE} (looked at {}); build it with `{build}` or set CLPART_LAYER",
        tried.join(", ")
    )
}

/// The shares as the layer reads them, checked against the devices.
fn shares(args: &ExecArgs) -> Result<Option<String>> {
    let list = match (&args.split, &args.devices) {
        (Some(s), _) if s.trim() == "auto" => return Ok(Some("auto".to_string())),
        (Some(s), _) => parse_shares(s)?,
        (None, Some(d)) => {
            let idx: Vec<usize> = d
                .split(',')
                .map(|p| {
                    p.trim()
                        .parse::<usize>()
                        .with_context(|| format!("--devices entry '{p}' is not a device index"))
                })
                .collect::<Result<_>>()?;
            if idx.is_empty() {
                bail!("--devices '{d}' names no device");
            }
            idx.iter().map(|&i| (i, 1.0 / idx.len() as f64)).collect()
        }
        (None, None) => return Ok(Some("auto".to_string())),
    };
    let n = crate::device_count::device_count()?;
    if let Some((i, _)) = list.iter().find(|(i, _)| *i >= n) {
        bail!("device index {i} is out of range: there are {n} devices (see `clpart devices`)");
    }
    Ok(Some(
        list.iter()
            .map(|(i, s)| format!("{i}:{s}"))
            .collect::<Vec<_>>()
            .join(","),
    ))
}

pub fn exec(args: ExecArgs) -> Result<u8> {
    // under mpirun: rank 0 runs the application, the others serve it
    #[cfg(feature = "mpi")]
    if let Some((rank, n_ranks)) = mpi_ranks::World::place_from_env() {
        return over_ranks(args, rank, n_ranks);
    }
    #[cfg(not(feature = "mpi"))]
    if ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"].iter().any(|v| {
        std::env::var(v)
            .ok()
            .and_then(|n| n.trim().parse::<u32>().ok())
            .is_some_and(|n| n > 1)
    }) {
        bail!("this clpart was built without the feature `mpi`: under mpirun every rank would run the application on its own (build with `cargo build --release -p clpart -p layer --features clpart/mpi,layer/mpi`)");
    }
    let layer = find_layer()?;
    let shares = shares(&args)?;
    let mut cmd = command(&args, &layer)?;
    match shares {
        Some(s) => cmd.env("CLPART_LAYER_SPLIT", s),
        None => cmd.env_remove("CLPART_LAYER_SPLIT"),
    };
    run(&args, &mut cmd)
}

/// `clpart exec` as one rank of `mpirun -n N`: rank 0 runs the
/// application, whose layer starts MPI and splits launches across the
/// ranks (`--split` names ranks); every other rank serves it
/// (`mpi_ranks::serve`) until it says finish.
#[cfg(feature = "mpi")]
fn over_ranks(args: ExecArgs, rank: u32, n_ranks: u32) -> Result<u8> {
    if rank != 0 {
        let world =
            mpi_ranks::World::from_env().context("this rank of the job cannot start MPI")?;
        return Ok(mpi_ranks::serve(&world).clamp(0, 255) as u8);
    }
    if args.devices.is_some() {
        bail!("under mpirun, --split names ranks (IDX:SHARE,... or auto); --devices is not used");
    }
    let layer = find_layer()?;
    mpi_ranks::rank_shares(args.split.as_deref(), n_ranks as usize).map_err(anyhow::Error::msg)?;
    let mut cmd = command(&args, &layer)?;
    // the shares name ranks; rank 0's window divides evenly over its
    // devices. Automatic rank shares keep the layer's choice of home: a
    // launch configuration that runs faster on the application's own
    // device alone stays there
    let auto = args.split.as_deref().is_none_or(|s| s.trim() == "auto");
    match auto {
        true => cmd.env("CLPART_LAYER_SPLIT", "auto"),
        false => cmd.env_remove("CLPART_LAYER_SPLIT"),
    };
    cmd.env("CLPART_LAYER_RANKS", n_ranks.to_string());
    cmd.env(
        "CLPART_LAYER_RANK_SPLIT",
        args.split.as_deref().unwrap_or("auto"),
    );
    cmd.env("CLPART_LAYER_RANK_TIMEOUT", args.rank_timeout.to_string());
    let mark = tempfile::tempdir().context("cannot make a temporary folder")?;
    let started = mark.path().join("started");
    cmd.env("CLPART_LAYER_RANKS_STARTED", &started);
    // the application ends with this process (mpirun stops a job by
    // signalling the processes it started: this one)
    use std::os::unix::process::CommandExt;
    // SAFETY: prctl is async-signal-safe; nothing else runs in the child.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        })
    };
    let code = run(&args, &mut cmd);
    if !started.exists() {
        // the application never started MPI (it never used OpenCL, or the
        // layer was built without MPI): the other ranks are told to finish
        if let Some(world) = mpi_ranks::World::from_env() {
            mpi_ranks::Coordinator::new(&world).finish();
        }
        crate::terminal::note(
            "the application never started MPI through clpart's layer: nothing ran on the other ranks",
        );
    }
    code
}

/// The application's command with the layer and its configuration (all
/// but the shares).
fn command(args: &ExecArgs, layer: &Path) -> Result<std::process::Command> {
    let (program, rest) = args.command.split_first().context("no program given")?;
    let mut cmd = std::process::Command::new(program);
    cmd.args(rest);
    let layers = match std::env::var_os("OPENCL_LAYERS").filter(|v| !v.is_empty()) {
        // Layers already named stay, below clpart's.
        Some(old) => {
            let mut v = OsString::from(layer.as_os_str());
            v.push(":");
            v.push(old);
            v
        }
        None => layer.as_os_str().to_os_string(),
    };
    cmd.env("OPENCL_LAYERS", layers);
    match &args.report {
        Some(r) => cmd.env("CLPART_LAYER_REPORT", writable(r)?),
        None => cmd.env_remove("CLPART_LAYER_REPORT"),
    };
    cmd.env(
        "CLPART_LAYER_LAUNCH_LOG",
        if args.report_launches { "1" } else { "0" },
    );
    // (the global --verbose)
    let verbose = crate::terminal::verbose();
    cmd.env("CLPART_LAYER_VERBOSE", if verbose { "1" } else { "0" });
    // the layer's analyses run in `clpart analyze-request` processes
    if let Ok(exe) = std::env::current_exe() {
        cmd.env("CLPART_EXE", exe);
    }
    cmd.env(
        "CLPART_LAYER_WAIT",
        if args.wait_for_analysis { "1" } else { "0" },
    );
    Ok(cmd)
}

/// Runs the application and returns its exit code as clpart's.
fn run(args: &ExecArgs, cmd: &mut std::process::Command) -> Result<u8> {
    let program = Path::new(cmd.get_program()).to_path_buf();
    // (file times come from a coarser clock: a second's margin)
    let started = std::time::SystemTime::now() - std::time::Duration::from_secs(1);
    let status = run_forwarding_signals(cmd)
        .with_context(|| format!("cannot run '{}'", program.display()))?;
    if let Some(r) = &args.report {
        // the layer writes the report when the program's OpenCL ends: none
        // (or an older one) means the program never loaded the layer
        let written = std::fs::metadata(r)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t >= started);
        if !written {
            crate::terminal::note(&format!(
                "'{}' never used OpenCL through clpart's layer (nothing to split): no report written to '{}'",
                program.display(),
                r.display()
            ));
        }
    }
    if let Some(code) = status.code() {
        return Ok(code.clamp(0, 255) as u8);
    }
    use std::os::unix::process::ExitStatusExt;
    let sig = status.signal().unwrap_or(0);
    // a program ended by a closed pipe (`clpart exec -- app | head`) is
    // not news: a shell does not report it either
    if sig != libc::SIGPIPE {
        crate::terminal::error(&format!(
            "'{}' was killed by signal {sig}",
            program.display()
        ));
    }
    Ok((128 + sig).clamp(0, 255) as u8)
}

/// The signals `clpart exec` passes on to its program: those that ask a
/// process to end.
const FORWARDED: [i32; 4] = [
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGHUP,
    signal_hook::consts::SIGQUIT,
];

/// Runs the program and waits for it. A SIGINT, SIGTERM, SIGHUP or SIGQUIT
/// that `clpart exec` receives meanwhile is sent on to the program, whose
/// exit is then clpart's: the program is never left running without it.
/// (A terminal's Ctrl-C reaches both: the program then gets SIGINT twice.)
fn run_forwarding_signals(cmd: &mut std::process::Command) -> std::io::Result<ExitStatus> {
    // registered before the spawn: a signal from then on is held for the
    // program (the program itself starts with the default handlers)
    let mut signals = signal_hook::iterator::Signals::new(FORWARDED)?;
    let handle = signals.handle();
    let mut child = cmd.spawn()?;
    let pid = child.id() as libc::pid_t;
    // true until the program has ended: a pid is never signalled once it
    // may be reused
    let running = Arc::new(Mutex::new(true));
    let forwarder = {
        let running = Arc::clone(&running);
        std::thread::spawn(move || {
            for sig in signals.forever() {
                let running = running.lock().unwrap_or_else(|p| p.into_inner());
                if *running {
                    // SAFETY: kill has no memory preconditions; the pid is
                    // our unreaped child's.
                    unsafe { libc::kill(pid, sig) };
                }
            }
        })
    };
    wait_without_reaping(pid)?;
    *running.lock().unwrap_or_else(|p| p.into_inner()) = false;
    handle.close();
    let _ = forwarder.join();
    child.wait()
}

/// Waits until the child `pid` has ended, leaving it to be reaped (its pid
/// stays its own until [`std::process::Child::wait`]).
fn wait_without_reaping(pid: libc::pid_t) -> std::io::Result<()> {
    loop {
        // SAFETY: siginfo_t is plain data, all zeros is a valid value, and
        // waitid writes only into it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// The report path, absolute, once a file can be made in its folder: a
/// report that cannot be written is refused before the program runs, not
/// found out at its end.
fn writable(r: &Path) -> Result<PathBuf> {
    let path = absolute(r)?;
    if path.is_dir() {
        bail!("the report '{}' is a folder", r.display());
    }
    let folder = path.parent().unwrap_or(Path::new("/"));
    if let Err(e) = tempfile::NamedTempFile::new_in(folder) {
        bail!(
            "cannot write the report '{}': its folder '{}' cannot be written ({})",
            r.display(),
            folder.display(),
            e.kind()
        );
    }
    Ok(path)
}

/// The report path made absolute, so the program's working folder does not
/// change where it goes.
fn absolute(p: &Path) -> Result<PathBuf> {
    if p.is_absolute() {
        return Ok(p.to_path_buf());
    }
    Ok(std::env::current_dir()
        .context("cannot read the working folder")?
        .join(p))
}
