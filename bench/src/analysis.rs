//! Item 1: analysis time per corpus kernel, in-process
//! (`session::Session::from_source` + `analyze`, what `clpart analyze` calls) and as a
//! cold process (`clpart analyze kernels/X.cl --json`, spawned and waited
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

use crate::stats::{median, time_ms};

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
