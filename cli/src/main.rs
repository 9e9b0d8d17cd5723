//! `clpart`: the command-line front end (thin over the library crates).
//!
//! Exit codes: 0 ok, 1 verification failed or nothing to split, 2 usage or input error
//! (a range file that fails validation or its checksums is an input error).
//! A reader of standard output that goes away (`clpart analyze k.cl | head`)
//! ends the command quietly with 0, as cargo and ripgrep do ([`write_out`]).

/// `print!` to standard output through [`write_out`].
macro_rules! out {
    ($($t:tt)*) => { $crate::write_out(format_args!($($t)*)) };
}

/// `println!` to standard output through [`write_out`].
macro_rules! outln {
    () => { $crate::write_out(format_args!("\n")) };
    ($($t:tt)*) => { $crate::write_out(format_args!("{}\n", format_args!($($t)*))) };
}

/// Writes the command's output. A closed pipe ends the process with 0 and
/// nothing on standard error (what was to be read was not wanted); any
/// other write error ends it with 2 and says so.
fn write_out(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_fmt(args) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            // (outputs are committed before the results are printed; any
            // still being written are left as they were)
            ranges_format::output::remove_live_temporaries();
            std::process::exit(0);
        }
        terminal::error(&format!("cannot write to standard output: {e}"));
        std::process::exit(2);
    }
}

mod analyze;
mod analyze_request;
mod completions;
mod device_count;
mod exec;
mod include_request;
mod man_page;
mod output_files;
mod progress;
#[cfg(feature = "mpi")]
mod ranks;
mod run;
mod steps;
mod terminal;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::process::ExitCode;

/// OpenCL multi-device partitioning analyzer and launcher.
#[derive(Parser)]
#[command(
    name = "clpart",
    version,
    about,
    after_help = "Exit codes: 0 ok, 1 verification failed or nothing to split, 2 usage or input error.\n\nExamples:\n  clpart analyze kernels/basics/vadd.cl\n  clpart analyze kernels/linear_algebra/matmul.cl --emit coarsened\n  clpart analyze kernels/basics/vadd.cl -o vadd.ranges.ron\n  clpart analyze kernels/indirect/gather.cl --json\n  clpart analyze kernels/linear_algebra/matmul.cl --at gs0=64,gs1=48,ls0=16,ls1=8,width=64 --svg matmul.svg\n  clpart devices\n  POCL_DEVICES=\"pthread basic\" clpart run kernels/basics/vadd.cl --global 1024 --local 64 \\\n      --arg a=rand:1024 --arg b=rand:1024 --arg c=zeros:1024 --split 0:0.86,1:0.14 --verify --svg vadd.svg\n  POCL_DEVICES=\"pthread basic\" clpart steps kernels/iterative/jacobi2d.ron --verify --out A=a.npy\n  clpart exec --split 0:0.86,1:0.14 --report r.json -- ./app args\n  clpart completions bash > /etc/bash_completion.d/clpart\n  clpart man > clpart.1"
)]
struct Cli {
    /// No progress and no notes on standard error (errors still).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// More detail where the subcommand has it (`analyze`: the whole
    /// report; `exec`: each kernel's verdict and a summary at exit).
    #[arg(short, long, global = true)]
    verbose: bool,
    /// Colors and other escape sequences on standard error: auto (on a
    /// terminal, unless NO_COLOR is set), always or never (none at all, the
    /// progress spinner included).
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto")]
    color: clap::ColorChoice,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Analyze a kernel: footprints, ranges, verdicts; emit stage outputs.
    Analyze(analyze::AnalyzeArgs),
    /// Run a kernel split across OpenCL devices, moving only the ranges each needs.
    Run(run::RunArgs),
    /// Run a run file: several kernels' launches over buffers kept on the devices, repeated.
    Steps(steps::StepsArgs),
    /// List the OpenCL devices.
    Devices(run::DevicesArgs),
    /// Run an unmodified OpenCL program with its kernels split (through clpart's OpenCL layer).
    Exec(exec::ExecArgs),
    /// Print shell completions for clpart (bash, zsh, fish, elvish, powershell).
    Completions(completions::CompletionsArgs),
    /// Print clpart's man page (roff) on standard output.
    Man,
    /// Answer an analysis the OpenCL layer asks for (internal).
    #[command(hide = true)]
    AnalyzeRequest(analyze_request::AnalyzeRequestArgs),
    /// Write in a program's included files for the OpenCL layer (internal).
    #[command(hide = true)]
    IncludeRequest(include_request::IncludeRequestArgs),
}

/// Ends the command on SIGINT, SIGTERM or SIGHUP: removes the temporaries
/// of the output files being written (no target is replaced), then exits
/// at once with 128 + the signal number through `_exit`. No destructor and
/// no `atexit` handler runs: the OpenCL driver's threads may be running a
/// kernel, and tearing the driver down under them crashed the process now
/// and then (SIGSEGV in about one of a hundred interrupted runs).
fn install_signal_cleanup() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            ranges_format::output::remove_live_temporaries();
            // SAFETY: `_exit` ends the process without running any code of
            // it; nothing here depends on what the other threads hold.
            unsafe { libc::_exit(128 + sig) };
        }
    });
}

/// Points `LIBCLANG_PATH` at the libclang clpart was built with when the
/// variable is unset ([`coarsen::default_libclang_dir`]); the programs
/// `clpart exec` runs inherit it. Called first in `main`, while this is the
/// only thread (no other thread reads the environment meanwhile).
fn default_libclang_path() {
    if std::env::var_os("LIBCLANG_PATH").is_none() {
        if let Some(dir) = coarsen::default_libclang_dir() {
            std::env::set_var("LIBCLANG_PATH", dir);
        }
    }
}

/// Parses the command line. clap's errors become one `clpart: error:`
/// line (exit 2), as clpart's own; help and version print as clap writes
/// them, styled as `--color` says.
fn parse() -> Result<Cli, ExitCode> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let color = terminal::color_in_args(&args);
    let parsed = Cli::command()
        .color(color)
        .try_get_matches_from(&args)
        .and_then(|mut m| Cli::from_arg_matches_mut(&mut m));
    match parsed {
        Ok(c) => Ok(c),
        Err(e) => {
            use clap::error::ErrorKind;
            if !e.use_stderr() || e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                let _ = e.print();
                return Err(ExitCode::from(if e.use_stderr() { 2 } else { 0 }));
            }
            terminal::set(terminal::Terminal {
                quiet: false,
                verbose: false,
                color,
            });
            terminal::error(&terminal::clap_error_line(&e));
            Err(ExitCode::from(2))
        }
    }
}

fn main() -> ExitCode {
    default_libclang_path();
    let cli = match parse() {
        Ok(c) => c,
        Err(code) => return code,
    };
    terminal::set(terminal::Terminal {
        quiet: cli.quiet,
        verbose: cli.verbose,
        color: cli.color,
    });
    if matches!(cli.command, Command::Analyze(_) | Command::Run(_)) {
        // While the process is small and has one thread (see the function).
        partitioner::ehrhart::start_warm_children();
    }
    // `clpart exec` forwards signals to its program instead (exec::exec).
    if !matches!(cli.command, Command::Exec(_)) {
        install_signal_cleanup();
    }
    let result = match cli.command {
        Command::Analyze(a) => analyze::run(a),
        Command::Run(a) => run::run(a),
        Command::Steps(a) => steps::steps(a),
        Command::Devices(a) => run::devices(a),
        Command::Exec(a) => exec::exec(a),
        Command::Completions(a) => completions::completions(a, Cli::command()),
        Command::Man => man_page::man(Cli::command()),
        Command::AnalyzeRequest(a) => analyze_request::run(a),
        Command::IncludeRequest(a) => include_request::run(a),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            terminal::error(&one_line(&e));
            ExitCode::from(2)
        }
    }
}

/// [`one_line`] for the other modules.
#[cfg(feature = "mpi")]
pub(crate) fn one_line_pub(e: &anyhow::Error) -> String {
    one_line(e)
}

/// The error and its causes on one line.
fn one_line(e: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for c in e.chain() {
        let s = c.to_string().replace('\n', " ");
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
    }
    lower_os_messages(&parts.join(": "))
}

/// OS error texts (`No space left on device (os error 28)`) in lower case,
/// like every other message.
fn lower_os_messages(text: &str) -> String {
    let mut out = text.to_string();
    let mut from = 0;
    while let Some(pos) = out[from..].find(" (os error ").map(|p| p + from) {
        let start = out[..pos].rfind(": ").map_or(0, |p| p + 2);
        let lowered = out[start..start + 1].to_lowercase();
        if out.is_char_boundary(start + 1) {
            out.replace_range(start..start + 1, &lowered);
        }
        from = pos + 1;
    }
    out
}
