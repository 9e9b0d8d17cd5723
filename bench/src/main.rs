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
//!     `--only apps`).
//!
//! Figures are medians over repeated runs; every ratio compares two things
//! measured in the same run. Anything that needs its own PoCL configuration
//! runs in a subprocess of this binary (`--worker NAME --param JSON`): PoCL
//! reads `POCL_DEVICES` and `POCL_MAX_PTHREAD_COUNT` once per process.

mod analysis;
mod apps;
mod balance;
mod bytes;
mod coexec;
mod common;
mod coverage;
mod guard;
mod layer;
mod memory;
mod mpi;
mod overhead;
mod stats;
mod table;

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use serde_json::json;

use common::{spawn_worker, LaunchSpec};
use stats::{geomean, max, median};
use table::{detail, markdown, Row};

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
    /// Internal: run as a worker subprocess.
    #[arg(long, hide = true)]
    worker: Option<String>,
    /// Internal: the worker's parameters (JSON).
    #[arg(long, hide = true)]
    param: Option<String>,
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
        Some(w) => worker(w, cli.param.as_deref().unwrap_or("null")),
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

/// Repeat counts and sizes of one run.
struct Scale {
    analysis_reps: usize,
    /// Stop repeating a kernel's analysis once it has taken this long (at
    /// least one run each way).
    analysis_budget_ms: f64,
    n_launches: usize,
    coexec_reps: usize,
    matmul_n: u64,
    mdh_points: u64,
    mdh_atoms: u64,
    walk_items: u64,
    walk_steps: u64,
    mem_elements: u64,
}

const FULL: Scale = Scale {
    analysis_reps: 5,
    analysis_budget_ms: 4000.0,
    n_launches: 3000,
    coexec_reps: 3,
    matmul_n: 1024,
    mdh_points: 65536,
    mdh_atoms: 1024,
    walk_items: 16384,
    walk_steps: 2048,
    mem_elements: 16 << 20,
};

const QUICK: Scale = Scale {
    analysis_reps: 1,
    analysis_budget_ms: 0.0,
    n_launches: 50,
    coexec_reps: 1,
    matmul_n: 256,
    mdh_points: 8192,
    mdh_atoms: 256,
    walk_items: 2048,
    walk_steps: 256,
    mem_elements: 1 << 20,
};

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
        (cli.only.is_empty() && i != Item::Mpi && i != Item::Apps) || cli.only.contains(&i)
    };
    let corpus = clpart_tests::corpus();
    let mut rows = Vec::new();
    let mut details = String::new();
    let mut results = serde_json::Map::new();

    if wants(Item::Analysis) {
        eprintln!(
            "== 1. analysis time ({} kernels, {} runs each way)",
            corpus.len(),
            scale.analysis_reps
        );
        // The slow-kernel set that still exceeds its budget is timed too.
        let mut timed = corpus.clone();
        timed.extend(clpart_tests::slow_corpus());
        if !cli.kernels.is_empty() {
            timed.retain(|k| cli.kernels.contains(&k.name));
            if timed.is_empty() {
                bail!(
                    "--kernels: no corpus kernel is named {}",
                    cli.kernels.join(", ")
                );
            }
        }
        let a = analysis::run(
            &timed,
            &clpart,
            &root,
            scale.analysis_reps,
            scale.analysis_budget_ms,
        )?;
        let inp: Vec<f64> = a.iter().map(|k| k.in_process_ms).collect();
        let cold: Vec<f64> = a.iter().map(|k| k.cold_ms).collect();
        let slowest = |v: &[f64]| {
            let m = max(v);
            let k = a
                .iter()
                .zip(v)
                .find(|(_, &x)| x == m)
                .map_or("", |(k, _)| k.kernel.as_str());
            (m, k.to_string())
        };
        let (inp_max, inp_k) = slowest(&inp);
        let (cold_max, cold_k) = slowest(&cold);
        rows.push(Row::target(
            1,
            format!(
                "analysis in-process (every count, as `clpart analyze`), median over {} kernels",
                a.len()
            ),
            format!("{:.1} ms", median(&inp)),
            "<= 20 ms",
            median(&inp) <= 20.0,
        ));
        rows.push(Row::target(
            1,
            format!("analysis in-process, slowest ({inp_k})"),
            format!("{inp_max:.1} ms"),
            "<= 1 s",
            inp_max <= 1000.0,
        ));
        let n_over = inp.iter().filter(|&&x| x > 2000.0).count();
        rows.push(Row::target(
            1,
            "analysis in-process, kernels over 2 s",
            format!("{n_over} of {}", a.len()),
            "0",
            n_over == 0,
        ));
        let launch: Vec<f64> = a.iter().map(|k| k.launch_ms).collect();
        let (launch_max, launch_k) = slowest(&launch);
        rows.push(Row::target(1, format!("analysis for a launch (written counts only: the layer, the C API), median over {} kernels", a.len()), format!("{:.1} ms", median(&launch)), "<= 20 ms", median(&launch) <= 20.0));
        rows.push(Row::target(
            1,
            format!("analysis for a launch, slowest ({launch_k})"),
            format!("{launch_max:.1} ms"),
            "<= 1 s",
            launch_max <= 1000.0,
        ));
        let n_over = launch.iter().filter(|&&x| x > 2000.0).count();
        rows.push(Row::target(
            1,
            "analysis for a launch, kernels over 2 s",
            format!("{n_over} of {}", a.len()),
            "0",
            n_over == 0,
        ));
        rows.push(Row::target(
            1,
            "analysis cold `clpart analyze --json`, median over kernels",
            format!("{:.1} ms", median(&cold)),
            "<= 60 ms",
            median(&cold) <= 60.0,
        ));
        rows.push(Row::target(
            1,
            format!("analysis cold process, slowest ({cold_k})"),
            format!("{cold_max:.1} ms"),
            "<= 1 s",
            cold_max <= 1000.0,
        ));
        let counting: Vec<f64> = a.iter().map(|k| k.counting_ms).collect();
        let (count_max, count_k) = slowest(&counting);
        let engine = if partitioner::ehrhart::barvinok_available().is_ok() {
            "barvinok"
        } else {
            "PolyLib, barvinok unavailable"
        };
        rows.push(Row::info(1, format!("counting time ({engine}), in-process with counts minus without, median over kernels"), format!("{:.1} ms", median(&counting))));
        rows.push(Row::info(
            1,
            format!("counting time, slowest ({count_k})"),
            format!("{count_max:.1} ms"),
        ));
        let cells: Vec<Vec<String>> = a
            .iter()
            .map(|k| {
                vec![
                    k.kernel.clone(),
                    format!("{:.1}", k.in_process_ms),
                    format!("{:.1}", k.launch_ms),
                    format!("{:.1}", k.cold_ms),
                    format!("{:.1}", k.counting_ms),
                    k.in_process_all.len().to_string(),
                ]
            })
            .collect();
        details.push_str(&format!(
            "\nAnalysis time per kernel (median of up to {} runs each way, fewer once a kernel has taken {:.0} s; ms)\n\n{}",
            scale.analysis_reps,
            scale.analysis_budget_ms / 1e3,
            detail(&["kernel", "in-process", "launch (written counts)", "cold process", "counting", "runs"], &cells)
        ));
        results.insert("analysis".into(), serde_json::to_value(&a)?);
    }

    let mut platform_version = None;
    if wants(Item::Launch) {
        eprintln!(
            "== 2. launch overhead ({} launches per figure)",
            scale.n_launches
        );
        let vadd = corpus
            .iter()
            .find(|k| k.name == "vadd")
            .context("kernels/vadd.cl")?;
        let p = overhead::Param {
            vadd_source: vadd.source.clone(),
            n_launches: scale.n_launches,
            only: None,
        };
        let o: overhead::Output =
            spawn_worker("launch", &p, &[("POCL_DEVICES", "pthread pthread")], &root)?;
        for h in &o.host {
            let what = if h.n_devices == 1 {
                "1 device".to_string()
            } else {
                format!("{} devices 50/50", h.n_devices)
            };
            rows.push(Row::target(
                2,
                format!(
                    "host time per launch outside OpenCL, {} ({} buffers, {} elements, {what})",
                    h.kernel, h.n_buffers, h.n_elements
                ),
                format!("{:.1} µs (of {:.0} µs wall)", h.host_us, h.wall_us),
                "< 20 µs",
                h.host_us < 20.0,
            ));
        }
        let t = o
            .tiny
            .as_ref()
            .context("the launch worker made no tiny-kernel figure")?;
        rows.push(Row::target(
            2,
            format!(
                "tiny kernel wall per launch, clpart 1 device / opencl3 direct (vadd {} ints)",
                t.n_elements
            ),
            format!(
                "{:.3} ({:.1} µs / {:.1} µs)",
                t.ratio, t.clpart_us, t.direct_us
            ),
            "< 1.10",
            t.ratio < 1.10,
        ));
        rows.push(Row::info(
            2,
            "  the same through opencl3 with clpart's OpenCL call pattern (profiling queue, flush, event times) / opencl3 direct",
            format!("{:.3} ({:.1} µs)", t.direct_pattern_us / t.direct_us, t.direct_pattern_us),
        ));
        rows.push(Row::info(
            2,
            "  in those launches: clpart host time; kernel time clpart subkernel / original kernel (profiling)",
            format!("{:.1} µs; {:.1} µs / {:.1} µs", t.clpart_host_us, t.clpart_kernel_us, t.direct_kernel_us),
        ));
        platform_version = Some(o.platform_version.clone());
        results.insert("launch".into(), serde_json::to_value(&o)?);
    }

    if wants(Item::Bytes) {
        let specs: Vec<LaunchSpec> = corpus
            .iter()
            .filter(|k| k.expect.splittable)
            .map(|k| LaunchSpec::corpus(k, 0))
            .collect();
        eprintln!(
            "== 3. bytes moved, 50/50 split ({} splittable kernels, first @run each)",
            specs.len()
        );
        let b: Vec<bytes::KernelBytes> = spawn_worker(
            "bytes",
            &specs,
            &[("POCL_DEVICES", "pthread pthread")],
            &root,
        )?;
        let (mut t_moved, mut t_whole, mut t_hull, mut e_moved, mut e_whole, mut e_hull) =
            Default::default();
        let push = |v: &mut Vec<f64>, x: Option<f64>| v.extend(x);
        let mut cells = Vec::new();
        let fmt = |x: Option<f64>| x.map_or("n/a".to_string(), |v| format!("{v:.3}"));
        for k in b.iter().filter(|k| k.split) {
            let tr = (
                k.ratio_traced(k.bytes_total),
                k.ratio_traced(k.bytes_whole_buffers),
                k.ratio_traced(k.bytes_hull),
            );
            if tr.0.is_some() {
                push(&mut t_moved, tr.0);
                push(&mut t_whole, tr.1);
                push(&mut t_hull, tr.2);
            }
            let ex = (
                k.ratio(k.bytes_total),
                k.ratio(k.bytes_whole_buffers),
                k.ratio(k.bytes_hull),
            );
            if ex.0.is_some() {
                push(&mut e_moved, ex.0);
                push(&mut e_whole, ex.1);
                push(&mut e_hull, ex.2);
            }
        }
        for k in &b {
            cells.push(vec![
                k.kernel.clone(),
                k.ndrange.clone(),
                k.bytes_traced.map_or("n/a".into(), |e| e.to_string()),
                k.bytes_exact.map_or("n/a".into(), |e| e.to_string()),
                k.bytes_total.to_string(),
                k.commands.to_string(),
                fmt(k.ratio_traced(k.bytes_total)),
                fmt(k.ratio_traced(k.bytes_whole_buffers)),
                fmt(k.ratio_traced(k.bytes_hull)),
                fmt(k.ratio(k.bytes_total)),
                match (&k.reason, &k.trace_error) {
                    (Some(r), _) => format!("ran whole: {r}"),
                    (None, Some(e)) => format!("not traced: {e}"),
                    _ => bytes_note(k),
                },
            ]);
        }
        let g = geomean(&t_moved);
        rows.push(Row::target(
            3,
            format!(
                "bytes moved / traced footprint, geometric mean over {} kernels",
                t_moved.len()
            ),
            format!("{g:.3}"),
            "<= 1.05",
            g <= 1.05,
        ));
        rows.push(Row::info(
            3,
            "whole-buffer copies / traced footprint, geometric mean",
            format!("{:.3}", geomean(&t_whole)),
        ));
        rows.push(Row::info(
            3,
            "thesis 1-D hull ranges / traced footprint, geometric mean",
            format!("{:.3}", geomean(&t_hull)),
        ));
        let g = geomean(&e_moved);
        rows.push(Row::target(
            3,
            format!(
                "bytes moved / bytes_exact (Ehrhart), geometric mean over the {} kernels with counts",
                e_moved.len()
            ),
            format!("{g:.3}"),
            "<= 1.02",
            g <= 1.02,
        ));
        // Per kernel, at most 1.10x the exact footprint (the
        // kernels over it named), never more than whole buffers.
        let over: Vec<String> = b
            .iter()
            .filter(|k| k.split && k.ratio(k.bytes_total).is_some_and(|r| r > 1.10))
            .map(|k| format!("{} {:.3}", k.kernel, k.ratio(k.bytes_total).unwrap_or(0.0)))
            .collect();
        rows.push(Row::info(
            3,
            "kernels moving over 1.10x their bytes_exact (<= 1.10 for affine accesses)",
            if over.is_empty() {
                "none".to_string()
            } else {
                over.join(", ")
            },
        ));
        let n_over_whole = b
            .iter()
            .filter(|k| k.split && k.bytes_total > k.bytes_whole_buffers)
            .count();
        rows.push(Row::target(
            3,
            "kernels moving more than whole buffers",
            n_over_whole.to_string(),
            "0",
            n_over_whole == 0,
        ));
        let commands: u64 = b.iter().filter(|k| k.split).map(|k| k.commands).sum();
        rows.push(Row::info(
            3,
            "transfer commands, all split kernels",
            commands.to_string(),
        ));
        rows.push(Row::info(
            3,
            "whole-buffer copies / bytes_exact, same kernels",
            format!("{:.3}", geomean(&e_whole)),
        ));
        rows.push(Row::info(
            3,
            "thesis 1-D hull ranges / bytes_exact, same kernels",
            format!("{:.3}", geomean(&e_hull)),
        ));
        let n_exact = b
            .iter()
            .filter(|k| {
                k.split
                    && k.ratio_traced(k.bytes_total)
                        .is_some_and(|r| r <= 1.0 + 1e-9)
            })
            .count();
        rows.push(Row::info(
            3,
            "kernels moving exactly their traced footprint",
            format!("{n_exact} of {}", t_moved.len()),
        ));
        details.push_str(&format!(
            "\nBytes moved by a 50/50 split on 2 devices (first @run of each kernel). \
             traced: distinct elements each slice reads + writes (coarsened C, traced); \
             exact: the launcher's Ehrhart bytes_exact; ratios to traced unless marked\n\n{}",
            detail(
                &[
                    "kernel",
                    "global / local",
                    "traced B",
                    "exact B",
                    "moved B",
                    "commands",
                    "moved",
                    "whole buffers",
                    "1-D hulls",
                    "moved/exact",
                    "note"
                ],
                &cells
            )
        ));
        results.insert("bytes".into(), serde_json::to_value(&b)?);
    }

    if wants(Item::Coexec) {
        eprintln!(
            "== 4. co-execution ({} repeats per figure)",
            scale.coexec_reps
        );
        let cap_before = cpu_capacity();
        eprintln!("  CPU capacity free for the bench: {cap_before:.2} of 2");
        let specs = coexec_specs(&corpus, scale)?;
        let mut all = Vec::new();
        let mut cells = Vec::new();
        // (label, environment, shares from measured throughputs)
        type Config<'a> = (&'a str, [(&'a str, &'a str); 2], bool);
        let configs: [Config; 3] = [
            (
                "2 x pthread, POCL_MAX_PTHREAD_COUNT=1",
                [
                    ("POCL_DEVICES", "pthread pthread"),
                    ("POCL_MAX_PTHREAD_COUNT", "1"),
                ],
                false,
            ),
            (
                "pthread + basic, 1 thread each",
                [
                    ("POCL_DEVICES", "pthread basic"),
                    ("POCL_MAX_PTHREAD_COUNT", "1"),
                ],
                false,
            ),
            (
                "pthread (2 threads) + basic",
                [
                    ("POCL_DEVICES", "pthread basic"),
                    ("POCL_MAX_PTHREAD_COUNT", "2"),
                ],
                true,
            ),
        ];
        for (label, env, uneven) in configs {
            for spec in &specs {
                let p = coexec::Param {
                    spec: spec.clone(),
                    reps: scale.coexec_reps,
                    uneven,
                };
                let o: coexec::Output = spawn_worker("coexec", &p, &env, &root)?;
                eprintln!(
                    "  {:<12} {label}: alone {:.0} / {:.0} ms, split {:.0} ms ({:.2}/{:.2}), speed-up {:.2}, efficiency {:.2}",
                    spec.kernel, o.single_ms[0], o.single_ms[1], o.split_ms, o.shares[0], o.shares[1], o.speedup, o.efficiency
                );
                let name = format!("{} {}", spec.kernel, spec.ndrange_text());
                if uneven {
                    rows.push(Row::info(
                        4,
                        format!(
                            "{name}, {label}, shares {:.2}/{:.2}: speed-up over the faster device",
                            o.shares[0], o.shares[1]
                        ),
                        format!("{:.2}x", o.speedup),
                    ));
                    rows.push(Row::info(
                        4,
                        format!("{name}, {label}: efficiency"),
                        format!("{:.2}", o.efficiency),
                    ));
                } else {
                    rows.push(Row::target(
                        4,
                        format!("{name}, {label}, 50/50: speed-up over one device"),
                        format!("{:.2}x", o.speedup),
                        ">= 1.8x",
                        o.speedup >= 1.8,
                    ));
                    rows.push(Row::target(
                        4,
                        format!("{name}, {label}: efficiency"),
                        format!("{:.2}", o.efficiency),
                        ">= 0.90",
                        o.efficiency >= 0.90,
                    ));
                }
                if !o.same_output {
                    rows.push(Row::target(
                        4,
                        format!("{name}, {label}: split output equals one-device output"),
                        "no".into(),
                        "yes",
                        false,
                    ));
                }
                let short = |n: &str| n.split('-').next().unwrap_or(n).to_string();
                cells.push(vec![
                    spec.kernel.clone(),
                    spec.ndrange_text(),
                    label.to_string(),
                    format!(
                        "{} / {}",
                        short(&o.device_names[0]),
                        short(&o.device_names[1])
                    ),
                    format!("{:.0} / {:.0}", o.single_ms[0], o.single_ms[1]),
                    format!("{:.2} / {:.2}", o.shares[0], o.shares[1]),
                    format!("{:.0}", o.split_ms),
                    format!("{:.0} / {:.0}", o.split_kernel_ms[0], o.split_kernel_ms[1]),
                    format!("{:.2}x", o.speedup),
                    format!("{:.2}", o.efficiency),
                    if o.same_output {
                        "yes".into()
                    } else {
                        "NO".into()
                    },
                ]);
                all.push(json!({ "kernel": spec.kernel, "ndrange": spec.ndrange_text(), "config": label, "env": env, "result": o }));
            }
        }
        let cap_after = cpu_capacity();
        rows.push(Row::info(
            4,
            "CPU capacity free for the bench before / after item 4 (2.00 = both cores idle)",
            format!("{cap_before:.2} / {cap_after:.2}"),
        ));
        details.push_str(&format!(
            "\nCo-execution (median launch wall of {} repeats, ms; kernel ms from profiling events; speed-up over the faster device alone)\n\n{}",
            scale.coexec_reps,
            detail(&["kernel", "global / local", "config", "devices (share order)", "alone", "shares", "split", "split kernels", "speed-up", "efficiency", "same output"], &cells)
        ));
        results.insert("coexec".into(), json!({ "cpu_capacity_before": cap_before, "cpu_capacity_after": cap_after, "runs": all }));
    }

    if wants(Item::Balance) {
        eprintln!(
            "== 9. automatic shares against a sweep ({} repeats per fixed share)",
            scale.coexec_reps
        );
        let cap_before = cpu_capacity();
        eprintln!("  CPU capacity free for the bench: {cap_before:.2} of 2");
        let specs = coexec_specs(&corpus, scale)?;
        let env = [
            ("POCL_DEVICES", "pthread basic"),
            ("POCL_MAX_PTHREAD_COUNT", "1"),
        ];
        let mut all = Vec::new();
        let mut cells = Vec::new();
        for spec in &specs {
            for basic_first in [false, true] {
                let p = balance::Param {
                    spec: spec.clone(),
                    reps: scale.coexec_reps,
                    basic_first,
                };
                let o: balance::Output = spawn_worker("balance", &p, &env, &root)?;
                let short = |n: &str| n.split('-').next().unwrap_or(n).to_string();
                let order = format!("{} first", short(&o.device_names[0]));
                eprintln!(
                    "  {:<12} {order}: alone {:.0} / {:.0} ms, auto {:.0} ms (shares {}), best fixed {:.2}: {:.0} ms; auto/best {:.3}, efficiency {:.2}",
                    spec.kernel,
                    o.single_ms[0],
                    o.single_ms[1],
                    o.auto_ms,
                    o.auto_launches.iter().map(|(s, _)| format!("{s:.2}")).collect::<Vec<_>>().join(" "),
                    o.best_share,
                    o.best_ms,
                    o.auto_over_best,
                    o.efficiency
                );
                let name = format!(
                    "{} {}, pthread + basic 1 thread each, {order}",
                    spec.kernel,
                    spec.ndrange_text()
                );
                rows.push(Row::target(
                    9,
                    format!(
                        "{name}: `--split auto` efficiency (launches {}..{})",
                        balance::SETTLE_LAUNCHES + 1,
                        balance::AUTO_LAUNCHES
                    ),
                    format!("{:.2}", o.efficiency),
                    ">= 0.95",
                    o.efficiency >= 0.95,
                ));
                rows.push(Row::target(
                    9,
                    format!(
                        "{name}: `--split auto` / best fixed share of the sweep ({:.2})",
                        o.best_share
                    ),
                    format!(
                        "{:.3} ({:.0} ms / {:.0} ms)",
                        o.auto_over_best, o.auto_ms, o.best_ms
                    ),
                    "<= 1.03",
                    o.auto_over_best <= 1.03,
                ));
                if !o.same_output {
                    rows.push(Row::target(
                        9,
                        format!("{name}: every output equals one device's"),
                        "no".into(),
                        "yes",
                        false,
                    ));
                }
                cells.push(vec![
                    spec.kernel.clone(),
                    spec.ndrange_text(),
                    order.clone(),
                    format!("{:.0} / {:.0}", o.single_ms[0], o.single_ms[1]),
                    o.auto_launches
                        .iter()
                        .map(|(s, ms)| format!("{s:.2}:{ms:.0}"))
                        .collect::<Vec<_>>()
                        .join(" "),
                    format!("{:.0}", o.auto_ms),
                    o.sweep
                        .iter()
                        .map(|(s, ms)| format!("{s:.2}:{ms:.0}"))
                        .collect::<Vec<_>>()
                        .join(" "),
                    format!("{:.2}: {:.0}", o.best_share, o.best_ms),
                    format!("{:.3}", o.auto_over_best),
                    format!("{:.2}", o.efficiency),
                    if o.same_output {
                        "yes".into()
                    } else {
                        "NO".into()
                    },
                ]);
                all.push(json!({ "kernel": spec.kernel, "ndrange": spec.ndrange_text(), "basic_first": basic_first, "result": o }));
            }
        }
        let cap_after = cpu_capacity();
        rows.push(Row::info(
            9,
            "CPU capacity free for the bench before / after item 9 (2.00 = both cores idle)",
            format!("{cap_before:.2} / {cap_after:.2}"),
        ));
        details.push_str(&format!(
            "\nAutomatic shares against a sweep (wall per launch, ms; the first device's share; auto figure: median of launches {}..{})\n\n{}",
            balance::SETTLE_LAUNCHES + 1,
            balance::AUTO_LAUNCHES,
            detail(&["kernel", "global / local", "order", "alone", "auto launches (share:ms)", "auto", "sweep (share:ms)", "best fixed", "auto / best", "efficiency", "same output"], &cells)
        ));
        results.insert("balance".into(), json!({ "cpu_capacity_before": cap_before, "cpu_capacity_after": cap_after, "runs": all }));
    }

    if wants(Item::Coverage) {
        let cases: Vec<coverage::Case> = corpus
            .iter()
            .flat_map(|k| {
                (0..k.runs.len()).map(move |run| coverage::Case {
                    spec: LaunchSpec::corpus(k, run),
                    run,
                    expect_splittable: k.expect.splittable,
                })
            })
            .collect();
        eprintln!(
            "== 10. the corpus split at its launches' values ({} kernels, {} launches, 50/50)",
            corpus.len(),
            cases.len()
        );
        // In a few workers: the cases (sources included) go on a command line.
        let mut o: Vec<coverage::Outcome> = Vec::new();
        for chunk in cases.chunks(40) {
            let part: Vec<coverage::Outcome> = spawn_worker(
                "coverage",
                &chunk,
                &[("POCL_DEVICES", "pthread pthread")],
                &root,
            )?;
            o.extend(part);
        }
        let kernels = coverage::per_kernel(&o);
        let all_split = |k: &(String, bool, usize, usize)| k.2 == k.3;
        let expected: Vec<_> = kernels.iter().filter(|k| k.1).collect();
        let refused: Vec<_> = kernels.iter().filter(|k| !k.1).collect();
        let expected_split = expected.iter().filter(|k| all_split(k)).count();
        rows.push(Row::target(
            10,
            format!(
                "corpus kernels not marked `@expect not-splittable` split at every @run's launch ({} launches)",
                o.iter().filter(|x| x.expect_splittable).count()
            ),
            format!("{expected_split} of {}", expected.len()),
            "all",
            expected_split == expected.len(),
        ));
        rows.push(Row::info(
            10,
            "corpus kernels split at every @run's launch, of all (the rest: the corpus's refusals)",
            format!(
                "{} of {} ({:.0} %)",
                kernels.iter().filter(|k| all_split(k)).count(),
                kernels.len(),
                100.0 * kernels.iter().filter(|k| all_split(k)).count() as f64
                    / kernels.len().max(1) as f64
            ),
        ));
        rows.push(Row::info(
            10,
            "launches split, of all corpus launches",
            format!("{} of {}", o.iter().filter(|x| x.split).count(), o.len()),
        ));
        let cells: Vec<Vec<String>> = o
            .iter()
            .filter(|x| !x.split)
            .map(|x| {
                vec![
                    x.kernel.clone(),
                    format!("{}", x.run + 1),
                    x.ndrange.clone(),
                    if x.expect_splittable {
                        "splittable"
                    } else {
                        "not-splittable"
                    }
                    .into(),
                    x.reason.clone().unwrap_or_default(),
                ]
            })
            .collect();
        details.push_str(&format!(
            "\nCorpus launches that ran unsplit (50/50 on two devices; {} kernels marked `@expect not-splittable`: {})\n\n{}",
            refused.len(),
            refused.iter().map(|k| k.0.as_str()).collect::<Vec<_>>().join(", "),
            detail(&["kernel", "@run", "global / local", "@expect", "why it ran unsplit"], &cells)
        ));
        results.insert("coverage".into(), serde_json::to_value(&o)?);
    }

    if wants(Item::Memory) {
        eprintln!("== 5. peak host memory of clpart run");
        let tiny = memory::peak(&clpart, &root, 1024, "pthread", "0:1")?;
        let one = memory::peak(&clpart, &root, scale.mem_elements, "pthread", "0:1")?;
        let two = memory::peak(
            &clpart,
            &root,
            scale.mem_elements,
            "pthread pthread",
            "0:0.5,1:0.5",
        )?;
        let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
        rows.push(Row::info(
            5,
            format!("peak RSS, {} (fixed cost)", tiny.case),
            format!("{:.0} MiB", mib(tiny.peak_bytes)),
        ));
        for p in [&one, &two] {
            rows.push(Row::info(
                5,
                format!(
                    "peak RSS / argument buffers, {} ({} MiB of buffers)",
                    p.case,
                    mib(p.args_bytes)
                ),
                format!(
                    "{:.2} ({:.0} MiB); above the fixed cost {:.2}",
                    p.peak_bytes as f64 / p.args_bytes as f64,
                    mib(p.peak_bytes),
                    (p.peak_bytes.saturating_sub(tiny.peak_bytes)) as f64 / p.args_bytes as f64
                ),
            ));
        }
        // Resident buffers over 20 launches, against the same
        // program on a 64 x 64 grid with the same devices (the fixed cost of
        // that many PoCL devices and their compiled kernels).
        let side = (scale.mem_elements as f64).sqrt() as u64 / 16 * 16;
        let mut steps = Vec::new();
        for (devices, split) in [("pthread", "0:1"), ("pthread pthread", "0:0.5,1:0.5")] {
            let base = memory::jacobi2d_steps_peak(&clpart, &root, 64, devices, split)?;
            let p = memory::jacobi2d_steps_peak(&clpart, &root, side, devices, split)?;
            rows.push(Row::info(
                5,
                format!(
                    "peak RSS above the 64x64 run's / buffers, {} ({} MiB of buffers; PoCL's device memory is host memory)",
                    p.case,
                    mib(p.args_bytes)
                ),
                format!(
                    "{:.2} ({:.0} MiB; 64x64: {:.0} MiB)",
                    (p.peak_bytes.saturating_sub(base.peak_bytes)) as f64 / p.args_bytes as f64,
                    mib(p.peak_bytes),
                    mib(base.peak_bytes)
                ),
            ));
            steps.push(base);
            steps.push(p);
        }
        results.insert("memory".into(), json!([tiny, one, two, steps]));
    }

    if wants(Item::Guard) {
        let mut specs: Vec<LaunchSpec> = corpus
            .iter()
            .filter(|k| k.expect.splittable)
            .map(|k| LaunchSpec::corpus(k, 0))
            .collect();
        specs.extend(guard::large_specs(cli.quick));
        let reps = if cli.quick { 3 } else { 15 };
        eprintln!(
            "== 6. run-time guard cost ({} kernels, {reps} launches each way)",
            specs.len()
        );
        let g: Vec<guard::KernelGuard> = spawn_worker(
            "guard",
            &guard::Param { specs, reps },
            &[("POCL_DEVICES", "pthread pthread")],
            &root,
        )?;
        let on: f64 = g.iter().filter(|k| k.split).map(|k| k.guarded_ms).sum();
        let off: f64 = g.iter().filter(|k| k.split).map(|k| k.unchecked_ms).sum();
        let ratio = on / off.max(1e-9);
        rows.push(Row::target(
            6,
            format!(
                "kernel time with the guard / without, summed over {} split kernels",
                g.iter().filter(|k| k.split).count()
            ),
            format!("{ratio:.3} ({on:.2} ms / {off:.2} ms)"),
            "<= 1.03",
            ratio <= 1.03,
        ));
        let fired = g.iter().filter(|k| k.fired).count();
        rows.push(Row::target(
            6,
            "launches where the guard fired on a correct analysis",
            fired.to_string(),
            "0",
            fired == 0,
        ));
        let cells: Vec<Vec<String>> = g
            .iter()
            .map(|k| {
                vec![
                    k.kernel.clone(),
                    k.ndrange.clone(),
                    if k.split { "yes".into() } else { "no".into() },
                    format!("{:.4}", k.guarded_ms),
                    format!("{:.4}", k.unchecked_ms),
                    format!("{:.3}", k.guarded_ms / k.unchecked_ms.max(1e-9)),
                ]
            })
            .collect();
        details.push_str(&format!(
            "\nRun-time guard: kernel time per launch, median, both devices summed (ms)\n\n{}",
            detail(
                &[
                    "kernel",
                    "ndrange",
                    "split",
                    "guard on",
                    "guard off",
                    "ratio"
                ],
                &cells
            )
        ));
        results.insert("guard".into(), serde_json::to_value(&g)?);
    }

    if wants(Item::Layer) {
        let (launches, reps) = if cli.quick { (256, 3) } else { (4096, 7) };
        eprintln!(
            "== 7. layer pass-through overhead ({launches} iterations, {reps} runs each way)"
        );
        let l = layer::run(&clpart, &root, 16384, launches, reps)?;
        let ratio = l.loop_ratio();
        rows.push(Row::target(
            7,
            format!("pass-through program under the layer / plain, loop wall after the first iteration (passthrough, {} iterations of 2 launches)", l.launches),
            format!("{ratio:.3} ({:.1} ms / {:.1} ms)", median(&l.layer_loop_ms), median(&l.plain_loop_ms)),
            "<= 1.05",
            ratio <= 1.05,
        ));
        rows.push(Row::info(
            7,
            "  first iteration (the layer analyzes each kernel once), under the layer / plain",
            format!(
                "{:.1} ms / {:.1} ms",
                median(&l.layer_first_ms),
                median(&l.plain_first_ms)
            ),
        ));
        rows.push(Row::info(
            7,
            "  whole process wall (`clpart exec` included), under the layer / plain",
            format!(
                "{:.1} ms / {:.1} ms",
                median(&l.layer_wall_ms),
                median(&l.plain_wall_ms)
            ),
        ));
        results.insert("layer".into(), serde_json::to_value(&l)?);
    }

    if wants(Item::Mpi) {
        // 20 launches as in kernels/iterative/jacobi2d.ron, on its grid and a larger one
        let (sizes, reps): (&[u64], usize) = if cli.quick {
            (&[256], 1)
        } else {
            (&[256, 2048], 3)
        };
        eprintln!("== 8. clpart steps across MPI ranks (jacobi2d, 20 launches, {reps} runs per configuration)");
        let (cases, no_netns) = mpi::run(&clpart, &root, sizes, 10, reps)?;
        for c in &cases {
            let base = cases
                .iter()
                .find(|b| b.n == c.n)
                .map_or(f64::NAN, |b| b.step_ms);
            let name = format!("jacobi2d {0}x{0}, {1}", c.n, c.config);
            if c.n_ranks > 0 {
                let (moved, whole) = (
                    c.mpi_bytes_per_step.unwrap_or(0),
                    c.whole_bytes_per_step.unwrap_or(0),
                );
                rows.push(Row::info(
                    8,
                    format!(
                        "{name}: bytes over MPI per launch after the first two / whole buffers"
                    ),
                    format!(
                        "{moved} B / {whole} B ({:.5})",
                        moved as f64 / whole.max(1) as f64
                    ),
                ));
            }
            rows.push(Row::info(
                8,
                format!("{name}: wall per launch after the first two (vs 1 process, 1 device)"),
                format!("{:.2} ms ({:.2}x)", c.step_ms, c.step_ms / base),
            ));
            if !c.same_output {
                rows.push(Row::target(
                    8,
                    format!("{name}: A equals the 1-process run"),
                    "no".into(),
                    "yes",
                    false,
                ));
            }
        }
        if let Some(why) = &no_netns {
            rows.push(Row::info(
                8,
                "2 ranks across network namespaces",
                format!("not run: {why}"),
            ));
        }
        let cells: Vec<Vec<String>> = cases
            .iter()
            .map(|c| {
                let b = |x: Option<u64>| x.map_or("-".to_string(), |v| v.to_string());
                vec![
                    format!("{0}x{0}", c.n),
                    c.config.clone(),
                    format!("{:.2}", c.step_ms),
                    b(c.mpi_bytes_per_step),
                    b(c.whole_bytes_per_step),
                    b(c.mpi_bytes_first_two),
                    b(c.mpi_bytes_total),
                    format!("{:.0}", c.launches_ms),
                    format!("{:.0}", c.process_ms),
                    if c.same_output {
                        "yes".into()
                    } else {
                        "NO".into()
                    },
                ]
            })
            .collect();
        details.push_str(&format!(
            "\nclpart steps across MPI ranks: 2-D Jacobi, {} launches (median of {reps} runs; a launch's wall and bytes after the first two)\n\n{}",
            cases.first().map_or(0, |c| c.launches),
            detail(&["grid", "configuration", "wall per launch (ms)", "MPI B per launch", "whole buffers B per launch", "MPI B, first two launches", "MPI B in all", "launches + read (ms)", "process (ms)", "same A"], &cells)
        ));
        results.insert(
            "mpi".into(),
            json!({ "cases": cases, "netns_not_run": no_netns }),
        );
    }

    if wants(Item::Apps) {
        let options = apps::Options {
            only: cli.apps.clone(),
            args: cli.apps_args.clone(),
            quick: cli.quick,
            time_limit: std::time::Duration::from_secs(cli.apps_time_limit),
            memory_limit: cli.apps_memory_limit << 30,
        };
        eprintln!(
            "== 11. real applications under `clpart exec` ({} s and {} GiB limit per run)",
            cli.apps_time_limit, cli.apps_memory_limit
        );
        let a = apps::run(&clpart, &root, &options)?;
        let (g, n_counted, n_bound) = apps::geomean_compute_bound(&a);
        rows.push(Row::info(
            11,
            format!("apps: device-section speed-up under `clpart exec` (auto, warm caches) over plain, geomean over {n_counted} of {n_bound} compute-bound programs"),
            if n_counted == 0 { "-".into() } else { format!("{g:.2}x") },
        ));
        for r in &a {
            let bad = |run: &apps::Run| run.status != "ok" || run.mismatches != Some(0);
            if bad(&r.plain_warm) || bad(&r.clpart_warm) || bad(&r.clpart_even) {
                rows.push(Row::info(
                    11,
                    format!("apps: {} own check plain / auto / 50-50", r.name),
                    format!(
                        "{} / {} / {}",
                        r.plain_warm.status, r.clpart_warm.status, r.clpart_even.status
                    ),
                ));
            }
        }
        details.push_str(&format!(
            "\nReal applications: plain and under `clpart exec` (auto split) on POCL_DEVICES=\"pthread basic\", POCL_MAX_PTHREAD_COUNT=1; plain cold = a fresh PoCL cache, plain warm = the caller's PoCL cache (filled by earlier runs); clpart cold = fresh PoCL and clpart caches, clpart warm = both kept; speed-up = plain / clpart; limits per run {} s, {} GiB resident\n\n{}",
            cli.apps_time_limit,
            cli.apps_memory_limit,
            apps::table(&a)
        ));
        results.insert("apps".into(), serde_json::to_value(&a)?);
    }

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

/// A note on a kernel's bytes: the arrays moved whole, or glued through a
/// merge (both move more than the footprint).
fn bytes_note(k: &bytes::KernelBytes) -> String {
    let whole: Vec<&str> = k
        .notes
        .iter()
        .filter(|n| n.contains("transferred whole"))
        .filter_map(|n| n.split('\'').nth(1))
        .collect();
    let merged: Vec<&str> = k
        .notes
        .iter()
        .filter(|n| n.contains("diff-merge"))
        .filter_map(|n| n.split('\'').nth(1))
        .collect();
    let mut parts = Vec::new();
    if !whole.is_empty() {
        parts.push(format!("whole: {}", whole.join(", ")));
    }
    if !merged.is_empty() {
        parts.push(format!("merged: {}", merged.join(", ")));
    }
    parts.join("; ")
}

/// How much of the machine's CPU this process can get right now: a fixed
/// amount of integer work on one thread, then on two threads at once;
/// `2 * t1 / t2` (2.0 when two cores are idle, about 1.0 when other load
/// leaves one). The median of three tries.
fn cpu_capacity() -> f64 {
    fn spin() -> u64 {
        let mut x = 1u64;
        for i in 0..200_000_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
        std::hint::black_box(x)
    }
    let tries: Vec<f64> = (0..3)
        .map(|_| {
            let (t1, _) = stats::time_ms(spin);
            let (t2, _) = stats::time_ms(|| {
                std::thread::scope(|s| {
                    let a = s.spawn(spin);
                    let b = s.spawn(spin);
                    (a.join().unwrap_or(0), b.join().unwrap_or(0))
                })
            });
            2.0 * t1 / t2
        })
        .collect();
    median(&tries)
}

/// The co-execution kernels: matmul, MDH and the random walk at sizes that
/// take about a second on one PoCL thread.
fn coexec_specs(corpus: &[clpart_tests::CorpusKernel], s: &Scale) -> Result<Vec<LaunchSpec>> {
    let src = |name: &str| -> Result<String> {
        Ok(corpus
            .iter()
            .find(|k| k.name == name)
            .with_context(|| format!("kernels/{name}.cl"))?
            .source
            .clone())
    };
    let spec =
        |name: &str, global: Vec<u64>, local: Vec<u64>, args: Vec<String>| -> Result<LaunchSpec> {
            Ok(LaunchSpec {
                file: format!("kernels/{name}.cl"),
                source: src(name)?,
                build: vec![],
                kernel: name.into(),
                global,
                local,
                args,
            })
        };
    let n = s.matmul_n;
    let nn = n * n;
    let (pts, atoms) = (s.mdh_points, s.mdh_atoms);
    let groups = s.walk_items / 32;
    let mut mdh_args: Vec<String> = ["ax", "ay", "az", "charge", "size"]
        .iter()
        .enumerate()
        .map(|(i, a)| format!("{a}=rand:{atoms}:{}", i + 1))
        .collect();
    mdh_args.extend(
        ["gx", "gy", "gz"]
            .iter()
            .enumerate()
            .map(|(i, a)| format!("{a}=rand:{pts}:{}", i + 6)),
    );
    mdh_args.extend([
        format!("val=zeros:{pts}"),
        "pre1=0.5".into(),
        "xkappa=0.1".into(),
        format!("natoms={atoms}"),
    ]);
    Ok(vec![
        spec(
            "matmul",
            vec![n, n],
            vec![16, 16],
            vec![
                format!("c=zeros:{nn}"),
                format!("a=rand:{nn}:1"),
                format!("b=rand:{nn}:2"),
                format!("width={n}"),
            ],
        )?,
        spec("mdh", vec![pts], vec![64], mdh_args)?,
        spec(
            "random_walk",
            vec![s.walk_items],
            vec![32],
            vec![
                "bval=rand:4096:1".into(),
                format!("out=zeros:{groups}"),
                "gw=64".into(),
                "gh=64".into(),
                "nwalks=4".into(),
                format!("maxsteps={}", s.walk_steps),
                "seed=12345".into(),
            ],
        )?,
    ])
}

/// The machine, the OpenCL platform and the PoCL package, as Markdown lines.
fn machine(platform: Option<String>) -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let n_cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines().next().map(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|k| k.parse::<u64>().ok())
                    .unwrap_or(0)
            })
        })
        .map_or("unknown".to_string(), |kb| {
            format!("{:.0} GiB", kb as f64 / (1u64 << 20) as f64)
        });
    let run = |cmd: &str, args: &[&str]| -> String {
        Command::new(cmd)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_else(|| "unknown".into())
    };
    let pocl = run("dpkg-query", &["-W", "-f=${Version}", "pocl-opencl-icd"]);
    let date = run("date", &["-u", "+%Y-%m-%d %H:%M UTC"]);
    let kernel = run("uname", &["-sr"]);
    let load = std::fs::read_to_string("/proc/loadavg").map_or("unknown".into(), |l| {
        l.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    });
    format!(
        "machine: {cpu}, {n_cpus} CPUs, {mem} RAM, {kernel}\nOpenCL: {}; pocl-opencl-icd {pocl}\ndate: {date}; load average at the end {load}\n",
        platform.unwrap_or_else(|| "(platform not queried in this run)".into())
    )
}
