//! `clpart-bench`: clpart's benchmark command. Measures, side by side, the
//! five figures of the benchmarks issue and prints one table (figure,
//! value, target, met) plus per-kernel detail tables; writes everything as
//! JSON. `bash scripts/bench.sh` builds the release binaries and runs it;
//! `BENCHMARKS.md` keeps the latest table.
//!
//! 1. analysis time per corpus kernel (in-process and cold `clpart analyze`),
//! 2. launch overhead (host time outside OpenCL calls; clpart vs opencl3),
//! 3. bytes moved by a 50/50 split vs the exact footprint,
//! 4. co-execution speed-up and efficiency on two PoCL devices,
//! 5. peak host memory of `clpart run`,
//! 7. the OpenCL layer's pass-through overhead (`layer.rs`),
//! 8. `clpart steps` across MPI ranks (`mpi.rs`; only when named:
//!    `--only mpi`, with `clpart` built with the feature `mpi`),
//! 11. real applications under `clpart exec` (`apps.rs`; only when named:
//!     `--only apps`),
//! 12. an application across MPI ranks, `mpirun -n N clpart exec`
//!     (`mpi_exec.rs`; only when named: `--only mpi-exec`, with `clpart`
//!     and the layer built with the feature `mpi`).
//!
//! Figures are medians over repeated runs; every ratio compares two things
//! measured in the same run. Anything that needs its own PoCL configuration
//! runs in a subprocess of this binary (`--worker NAME`, its parameters as
//! JSON on standard input, which has no length limit as an argument does): PoCL
//! reads `POCL_DEVICES` and `POCL_MAX_PTHREAD_COUNT` once per process.
//!
//! This file is the command line and the dispatch; each item's
//! measurement and report live in its module (`analysis.rs` for item 1,
//! `overhead.rs` for item 2, ...), what they share in `common.rs`,
//! `run.rs` (settings, report), `machine.rs`, `stats.rs` and `table.rs`.

mod analysis;
mod apps;
mod balance;
mod bytes;
mod coexec;
mod common;
mod coverage;
mod guard;
mod layer;
mod machine;
mod memory;
mod mpi;
mod mpi_exec;
mod overhead;
mod run;
mod stats;
mod table;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use serde_json::json;

use common::LaunchSpec;
use machine::{cpu_capacity, machine};
use run::{Choices, Report, Settings, FULL, QUICK};
use table::markdown;

/// Runs clpart's benchmarks (analysis time, launch overhead, bytes moved,
/// co-execution speed-up, peak memory), prints the table and writes JSON.
///
/// Needs the release `clpart` binary (built by `scripts/bench.sh`) and PoCL.
/// The full run takes about 12 minutes on a 2-core machine.
///
/// Examples:
///   bash scripts/bench.sh
///   target/release/clpart-bench --only bytes,launch --out /tmp/b.json
///   target/release/clpart-bench --quick
///   cargo build --release -p clpart -p clpart-bench --features clpart/mpi
///   target/release/clpart-bench --only mpi --out /tmp/mpi.json
///   cargo build --release -p clpart -p clpart-bench -p layer
///   target/release/clpart-bench --only apps --apps-time-limit 120
///   target/release/clpart-bench --only apps --apps gemm,lu_shrinking --apps-args 'gemm=256 256 256'
///   cargo build --release -p clpart -p clpart-bench -p layer --features clpart/mpi,layer/mpi
///   target/release/clpart-bench --only mpi-exec
#[derive(Parser)]
#[command(name = "clpart-bench", verbatim_doc_comment)]
struct Cli {
    /// Write the results as JSON here.
    #[arg(long, default_value = "bench-results.json", value_name = "FILE")]
    out: PathBuf,
    /// Also write the tables as Markdown here.
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
    /// The clpart binary (default: `clpart` beside this executable).
    #[arg(long, value_name = "PATH")]
    clpart: Option<PathBuf>,
    /// Fewer repeats and smaller co-execution sizes: a smoke run of about a
    /// minute whose figures are not the benchmark's.
    #[arg(long)]
    quick: bool,
    /// Run only these items (comma separated). `mpi` and `apps` run only when named.
    #[arg(long, value_enum, value_delimiter = ',')]
    only: Vec<Item>,
    /// Time only these corpus kernels in item 1 (comma separated names; all
    /// when absent): for profiling one kernel's analysis.
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    kernels: Vec<String>,
    /// `apps`: run only these programs of `tests/apps/` (comma separated).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    apps: Vec<String>,
    /// `apps`: a program's arguments instead of its benchmark sizes, as
    /// NAME=ARGS with ARGS space separated (repeatable).
    #[arg(long, value_name = "NAME=ARGS")]
    apps_args: Vec<String>,
    /// `apps`: kill a run (its process group) after this many seconds and
    /// show it as `timeout`.
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    apps_time_limit: u64,
    /// `apps`: kill a run once its processes hold this much resident
    /// memory, and show it as `memory`.
    #[arg(long, default_value_t = 8, value_name = "GIB")]
    apps_memory_limit: u64,
    /// Internal: run as a worker subprocess, its parameters (JSON) on
    /// standard input.
    #[arg(long, hide = true)]
    worker: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Item {
    /// 1: analysis time per corpus kernel.
    Analysis,
    /// 2: launch overhead.
    Launch,
    /// 3: bytes moved by a 50/50 split.
    Bytes,
    /// 4: co-execution speed-up.
    Coexec,
    /// 5: peak host memory.
    Memory,
    /// 6: the run-time guard's cost in kernel time.
    Guard,
    /// 7: the OpenCL layer's cost on a program whose kernels never split.
    Layer,
    /// 8: `clpart steps` across MPI ranks (needs mpirun and `clpart`
    /// built with the feature `mpi`; runs only when named).
    Mpi,
    /// 9: automatic shares (`--split auto`) against a sweep of fixed shares.
    Balance,
    /// 10: the corpus split at its launches' values (every `@run`).
    Coverage,
    /// 11: real host programs of `tests/apps/` plain and under `clpart
    /// exec` (needs the release layer; runs only when named).
    Apps,
    /// 12: a host program across MPI ranks, `mpirun -n N clpart exec`
    /// (needs mpirun, `clpart` and the layer built with the feature `mpi`;
    /// runs only when named).
    MpiExec,
}

fn main() {
    // The figures are of analyses, not of the persistent analysis cache
    // (`session::cache`): off here and in every worker and `clpart` child,
    // unless the caller says otherwise. Set before any thread starts.
    if std::env::var_os("CLPART_CACHE").is_none() {
        std::env::set_var("CLPART_CACHE", "0");
    }
    let cli = Cli::parse();
    // The in-process analyses count as `clpart analyze` does: in warm
    // children started while the process is small and has one thread.
    partitioner::ehrhart::start_warm_children();
    let r = match &cli.worker {
        Some(w) => {
            let mut param = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut param)
                .context("cannot read the worker's parameters")
                .and_then(|_| worker(w, &param))
        }
        None => bench(&cli),
    };
    if let Err(e) = r {
        eprintln!("clpart-bench: error: {e:#}");
        std::process::exit(2);
    }
}

fn worker(name: &str, param: &str) -> Result<()> {
    let out = match name {
        "launch" => serde_json::to_value(overhead::worker(&serde_json::from_str(param)?)?)?,
        "bytes" => serde_json::to_value(bytes::worker(&serde_json::from_str::<Vec<LaunchSpec>>(
            param,
        )?)?)?,
        "guard" => serde_json::to_value(guard::worker(&serde_json::from_str(param)?)?)?,
        "coexec" => serde_json::to_value(coexec::worker(&serde_json::from_str(param)?)?)?,
        "balance" => serde_json::to_value(balance::worker(&serde_json::from_str(param)?)?)?,
        "coverage" => serde_json::to_value(coverage::worker(&serde_json::from_str::<
            Vec<coverage::Case>,
        >(param)?)?)?,
        _ => bail!(
            "unknown worker '{name}' (workers: launch, bytes, guard, coexec, balance, coverage)"
        ),
    };
    println!("{}", serde_json::to_string(&out)?);
    Ok(())
}

fn bench(cli: &Cli) -> Result<()> {
    let t_start = Instant::now();
    let load_start = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    // Other processes on a shared machine move every timing: say how much
    // of it was free.
    let cap_start = cpu_capacity();
    eprintln!("CPU capacity free for the bench: {cap_start:.2} of 2");
    let root = clpart_tests::workspace_root();
    let clpart = match &cli.clpart {
        Some(p) => p.clone(),
        None => std::env::current_exe()?.with_file_name("clpart"),
    };
    if !clpart.exists() {
        bail!(
            "'{}' does not exist; build it with 'cargo build --release -p clpart' or pass --clpart",
            clpart.display()
        );
    }
    let scale = if cli.quick { &QUICK } else { &FULL };
    let wants = |i: Item| {
        (cli.only.is_empty() && !matches!(i, Item::Mpi | Item::Apps | Item::MpiExec))
            || cli.only.contains(&i)
    };
    let corpus = clpart_tests::corpus();
    let s = Settings {
        clpart,
        root,
        scale,
        corpus,
        cli: Choices {
            quick: cli.quick,
            kernels: cli.kernels.clone(),
            apps: cli.apps.clone(),
            apps_args: cli.apps_args.clone(),
            apps_time_limit: cli.apps_time_limit,
            apps_memory_limit: cli.apps_memory_limit,
        },
    };
    let mut out = Report::default();

    if wants(Item::Analysis) {
        analysis::report(&s, &mut out)?;
    }
    let mut platform_version = None;
    if wants(Item::Launch) {
        platform_version = Some(overhead::report(&s, &mut out)?);
    }
    if wants(Item::Bytes) {
        bytes::report(&s, &mut out)?;
    }
    if wants(Item::Coexec) {
        coexec::report(&s, &mut out)?;
    }
    if wants(Item::Balance) {
        balance::report(&s, &mut out)?;
    }
    if wants(Item::Coverage) {
        coverage::report(&s, &mut out)?;
    }
    if wants(Item::Memory) {
        memory::report(&s, &mut out)?;
    }
    if wants(Item::Guard) {
        guard::report(&s, &mut out)?;
    }
    if wants(Item::Layer) {
        layer::report(&s, &mut out)?;
    }
    if wants(Item::Mpi) {
        mpi::report(&s, &mut out)?;
    }
    if wants(Item::Apps) {
        apps::report(&s, &mut out)?;
    }
    if wants(Item::MpiExec) {
        mpi_exec::report(&s, &mut out)?;
    }
    let Report {
        rows,
        details,
        mut results,
    } = out;

    let elapsed = t_start.elapsed().as_secs_f64();
    let cap_end = cpu_capacity();
    let machine = format!(
        "{}CPU capacity free for the bench (2.00 = two idle cores): {cap_start:.2} at the start, {cap_end:.2} at the end\n",
        machine(platform_version)
    );
    let summary = markdown(&rows);
    println!("{details}\nSummary\n\n{summary}\n{machine}total bench time {elapsed:.0} s");
    results.insert("rows".into(), serde_json::to_value(&rows)?);
    results.insert("machine".into(), json!(machine));
    results.insert("quick".into(), json!(cli.quick));
    results.insert("elapsed_s".into(), json!(elapsed));
    results.insert("loadavg_start".into(), json!(load_start.trim()));
    results.insert("cpu_capacity_start".into(), json!(cap_start));
    results.insert("cpu_capacity_end".into(), json!(cap_end));
    let text = serde_json::to_string_pretty(&serde_json::Value::Object(results))?;
    std::fs::write(&cli.out, text + "\n")
        .with_context(|| format!("cannot write '{}'", cli.out.display()))?;
    eprintln!("wrote {}", cli.out.display());
    if let Some(md) = &cli.markdown {
        std::fs::write(
            md,
            format!("{summary}{details}\n{machine}total bench time {elapsed:.0} s\n"),
        )
        .with_context(|| format!("cannot write '{}'", md.display()))?;
        eprintln!("wrote {}", md.display());
    }
    Ok(())
}
