//! Item 1: analysis time per corpus kernel, in-process
//! (`session::Session::from_source` + `analyze`, what `clpart analyze` calls) and as a
//! cold process (`clpart analyze kernels/<folder>/X.cl --json`, spawned and waited
//! for). Also in-process: the analysis a launch makes (the layer, the C
//! API: only the written counts gluing needs, `Counts::Written`), and the
//! analysis without counts (`Counts::None`); counting time is the in-process
//! median minus the median without counts.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use clpart_tests::CorpusKernel;
use partitioner::{Counts, PartitionOptions};
use serde::Serialize;

use crate::run::{Report, Settings};
use crate::stats::{max, median, time_ms};
use crate::table::{detail, Row};

/// One kernel's analysis times.
#[derive(Clone, Debug, Serialize)]
pub struct KernelAnalysis {
    pub kernel: String,
    /// Median of the in-process runs, milliseconds.
    pub in_process_ms: f64,
    /// Median of the cold-process runs (spawn to exit), milliseconds.
    pub cold_ms: f64,
    /// Every in-process run, milliseconds.
    pub in_process_all: Vec<f64>,
    /// Every cold-process run, milliseconds.
    pub cold_all: Vec<f64>,
    /// Median of the in-process runs with the written counts only (what a
    /// launch analyzes), milliseconds.
    pub launch_ms: f64,
    /// Every in-process run with the written counts only, milliseconds.
    pub launch_all: Vec<f64>,
    /// Every in-process run without counts (`Counts::None`), milliseconds.
    pub no_counts_all: Vec<f64>,
    /// Time spent counting (barvinok, PolyLib where it cannot): the median
    /// in-process time minus the median without counts, at least 0.
    pub counting_ms: f64,
}

/// Times every corpus kernel up to `n_reps` times each way, fewer once the
/// kernel's runs have taken `budget_ms` (at least once each way).
pub fn run(
    corpus: &[CorpusKernel],
    clpart: &Path,
    root: &Path,
    n_reps: usize,
    budget_ms: f64,
) -> Result<Vec<KernelAnalysis>> {
    let options = PartitionOptions::default();
    let launch = PartitionOptions {
        counts: Counts::Written,
        ..PartitionOptions::default()
    };
    let no_counts = PartitionOptions {
        counts: Counts::None,
        ..PartitionOptions::default()
    };
    let mut out = Vec::new();
    for k in corpus {
        let file = k.file();
        let mut in_process_all = Vec::new();
        let mut cold_all = Vec::new();
        let mut no_counts_all = Vec::new();
        let mut launch_all = Vec::new();
        // Interleaved, so that a burst of load from elsewhere hits both ways.
        let mut spent = 0.0;
        for _ in 0..n_reps.max(1) {
            if spent > budget_ms && !cold_all.is_empty() {
                break;
            }
            let (ms, r) = time_ms(|| {
                session::Session::from_source(&file, &k.source, &k.build)
                    .and_then(|s| s.analyze(None, &options))
            });
            r.with_context(|| format!("analyze {file}"))?;
            in_process_all.push(ms);
            let (ms, r) = time_ms(|| {
                session::Session::from_source(&file, &k.source, &k.build)
                    .and_then(|s| s.analyze(None, &no_counts))
            });
            r.with_context(|| format!("analyze {file} without counts"))?;
            no_counts_all.push(ms);
            let (ms, r) = time_ms(|| {
                session::Session::from_source(&file, &k.source, &k.build)
                    .and_then(|s| s.analyze(None, &launch))
            });
            r.with_context(|| format!("analyze {file} with the written counts"))?;
            launch_all.push(ms);
            let (ms, status) = time_ms(|| {
                Command::new(clpart)
                    .args(["analyze", &file, "--json"])
                    .current_dir(root)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
            });
            let status = status.with_context(|| format!("cannot run '{}'", clpart.display()))?;
            // 1: analyzed, nothing splittable
            if !matches!(status.code(), Some(0 | 1)) {
                bail!("'clpart analyze {file} --json' exited with {status}");
            }
            cold_all.push(ms);
            spent += ms
                + [&in_process_all, &no_counts_all, &launch_all]
                    .iter()
                    .map(|v| v.last().copied().unwrap_or(0.0))
                    .sum::<f64>();
        }
        let counting_ms = (median(&in_process_all) - median(&no_counts_all)).max(0.0);
        eprintln!(
            "  analysis {:<16} in-process {:8.1} ms  launch {:8.1} ms  cold {:8.1} ms  counting {:8.1} ms",
            k.name,
            median(&in_process_all),
            median(&launch_all),
            median(&cold_all),
            counting_ms
        );
        out.push(KernelAnalysis {
            kernel: k.name.clone(),
            in_process_ms: median(&in_process_all),
            launch_ms: median(&launch_all),
            launch_all,
            cold_ms: median(&cold_all),
            in_process_all,
            cold_all,
            no_counts_all,
            counting_ms,
        });
    }
    Ok(out)
}

/// Item 1, analysis time per corpus kernel: measures it and adds its rows,
/// detail table and JSON to `out`.
pub(crate) fn report(s: &Settings, out: &mut Report) -> Result<()> {
    let Settings {
        clpart,
        root,
        scale,
        corpus,
        cli,
    } = s;
    let Report {
        rows,
        details,
        results,
    } = out;
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
    let a = run(
        &timed,
        clpart,
        root,
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
    rows.push(Row::info(
        1,
        format!(
            "counting time ({engine}), in-process with counts minus without, median over kernels"
        ),
        format!("{:.1} ms", median(&counting)),
    ));
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
    Ok(())
}
