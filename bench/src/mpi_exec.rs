//! Item 12: an unmodified application across MPI ranks (`mpirun -n N
//! clpart exec -- ./app`). The 2-D Jacobi host program of
//! `tests/apps/jacobi2d` runs plain (one single-core PoCL device), under
//! `clpart exec` in one process on that device, and under `mpirun` on 2 and
//! 3 ranks over loopback (one single-core device each; the ranks share the
//! machine's cores and yield them while they wait). Per configuration,
//! medians over the runs after a first that warms the caches: the
//! program's own time of its launches and `clFinish` (the device section),
//! the whole process, its own check, and from the report the element bytes
//! over MPI per step (after the first two launches, which bring both grids)
//! beside what a whole-buffer remote driver would move per step. Needs
//! `clpart` and the layer built with the feature `mpi`, and `mpirun`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde::Serialize;
use serde_json::json;

use crate::run::{Report, Settings};
use crate::stats::median;
use crate::table::{detail, Row};

/// One configuration, medians over its runs.
#[derive(Clone, Debug, Serialize)]
pub struct Case {
    pub config: String,
    /// 0 plain, 1 one process under `clpart exec`, N ranks.
    pub n_ranks: usize,
    pub device_ms: f64,
    pub device_ms_all: Vec<f64>,
    pub process_ms: f64,
    /// Element bytes over MPI per launch after the first two (median).
    pub mpi_bytes_per_step: Option<u64>,
    /// What a whole-buffer remote driver moves per launch.
    pub whole_bytes_per_step: Option<u64>,
    pub mpi_bytes_total: Option<u64>,
    /// Launches that divided across the ranks / launches.
    pub divided: Option<(u64, u64)>,
    pub check_ok: bool,
}

/// The files one configuration's runs use.
struct Files<'a> {
    clpart: &'a Path,
    layer: &'a Path,
    app_dir: &'a Path,
    exe: &'a Path,
    cache: &'a Path,
    report: &'a Path,
}

/// One run of the program: (device section ms, process ms, check ok,
/// report).
fn once(
    f: &Files,
    args: &[String],
    n_ranks: usize,
    auto: bool,
) -> Result<(f64, f64, bool, Option<serde_json::Value>)> {
    let Files {
        clpart,
        layer,
        app_dir,
        exe,
        cache,
        report,
    } = *f;
    let _ = std::fs::remove_file(report);
    let mut c = match n_ranks {
        0 => Command::new(exe),
        1 => {
            let mut c = Command::new(clpart);
            c.arg("exec");
            c
        }
        n => {
            let mut c = Command::new("mpirun");
            // loopback, ranks that yield their core while they wait
            c.args(crate::mpi::LOOPBACK)
                .arg("lo")
                .args(crate::mpi::YIELD);
            for v in [
                "POCL_DEVICES",
                "POCL_MAX_PTHREAD_COUNT",
                "CLPART_LAYER",
                "CLPART_CACHE_DIR",
                "CLPART_CACHE",
            ] {
                c.args(["-x", v]);
            }
            c.args(["-n", &n.to_string()]).arg(clpart).arg("exec");
            c
        }
    };
    if n_ranks > 0 {
        c.args(["--wait-for-analysis", "--report"])
            .arg(report)
            .arg("--report-launches");
        if auto {
            c.args(["--split", "auto"]);
        } else if n_ranks > 1 {
            let even = (0..n_ranks)
                .map(|r| format!("{r}:{}", 1.0 / n_ranks as f64))
                .collect::<Vec<_>>()
                .join(",");
            c.args(["--split", &even]);
        }
        c.arg("--").arg(exe);
    }
    c.args(args)
        .current_dir(app_dir)
        .env("POCL_DEVICES", "pthread")
        .env("POCL_MAX_PTHREAD_COUNT", "1")
        .env("CLPART_LAYER", layer)
        .env("CLPART_CACHE_DIR", cache)
        .env("CLPART_CACHE", "1")
        .stdin(Stdio::null());
    let t = Instant::now();
    let out = c.output().context("running the jacobi2d program")?;
    let process_ms = t.elapsed().as_secs_f64() * 1e3;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        bail!(
            "jacobi2d on {n_ranks} ranks failed ({:?}): {stdout}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let device_ms = stdout
        .lines()
        .find_map(|l| {
            l.strip_prefix("device section: ")?
                .strip_suffix(" ms")?
                .parse()
                .ok()
        })
        .context("the program printed no device section time")?;
    let check_ok = stdout.contains(": 0 mismatches");
    let r = match n_ranks {
        0 => None,
        _ => Some(serde_json::from_slice(&std::fs::read(report)?).context("the report")?),
    };
    Ok((device_ms, process_ms, check_ok, r))
}

pub fn run(
    clpart: &Path,
    layer: &Path,
    root: &Path,
    args: &[String],
    reps: usize,
) -> Result<Vec<Case>> {
    let dir = tempfile::tempdir()?;
    let app_dir = root.join("tests/apps/jacobi2d");
    let exe = dir.path().join("jacobi2d");
    crate::apps::compile(&app_dir, &exe)?;
    let cache = dir.path().join("cache");
    let report = dir.path().join("r.json");
    let configs = [
        ("plain, 1 device (pthread, 1 thread)", 0, false),
        ("clpart exec, 1 process, 1 device", 1, false),
        ("mpirun -n 2 clpart exec, loopback, 1 device of 1 thread per rank, even shares", 2, false),
        ("mpirun -n 3 clpart exec, loopback, 1 device of 1 thread per rank (3 processes, 2 cores), even shares", 3, false),
        ("mpirun -n 2 clpart exec, loopback, 1 device of 1 thread per rank, auto (the default)", 2, true),
    ];
    let mut cases = Vec::new();
    for (label, n, auto) in configs {
        let (mut dev, mut proc_, mut ok, mut last) = (Vec::new(), Vec::new(), true, None);
        // the first run warms the analysis and PoCL caches
        for rep in 0..=reps {
            let files = Files {
                clpart,
                layer,
                app_dir: &app_dir,
                exe: &exe,
                cache: &cache,
                report: &report,
            };
            let (d, p, c, r) = once(&files, args, n, auto).with_context(|| label.to_string())?;
            ok &= c;
            if rep > 0 {
                dev.push(d);
                proc_.push(p);
                last = r;
            }
        }
        let per_step = last.as_ref().and_then(|r| {
            let v: Vec<u64> = r["launch_log"]
                .as_array()?
                .iter()
                .filter(|e| e["event"] == "launch")
                .skip(2)
                .filter_map(|e| e["bytes_mpi"].as_u64())
                .collect();
            (!v.is_empty()).then(|| {
                let mut v = v;
                v.sort_unstable();
                v[v.len() / 2]
            })
        });
        let launches = last.as_ref().and_then(|r| r["rank_launches"].as_u64());
        let case = Case {
            config: label.to_string(),
            n_ranks: n,
            device_ms: median(&dev),
            device_ms_all: dev,
            process_ms: median(&proc_),
            mpi_bytes_per_step: per_step,
            whole_bytes_per_step: last
                .as_ref()
                .and_then(|r| Some(r["bytes_mpi_whole_buffers"].as_u64()? / launches?.max(1))),
            mpi_bytes_total: last.as_ref().and_then(|r| r["bytes_mpi"].as_u64()),
            divided: last
                .as_ref()
                .and_then(|r| Some((r["rank_launches_divided"].as_u64()?, launches?))),
            check_ok: ok,
        };
        eprintln!(
            "  {label}: device section {:.1} ms, process {:.0} ms, mpi {} B/step (whole buffers {} B), check {}",
            case.device_ms,
            case.process_ms,
            case.mpi_bytes_per_step.map_or("-".into(), |b| b.to_string()),
            case.whole_bytes_per_step.map_or("-".into(), |b| b.to_string()),
            case.check_ok
        );
        cases.push(case);
    }
    Ok(cases)
}

/// Item 12: measures it and adds its rows, detail table and JSON to `out`.
pub(crate) fn report(s: &Settings, out: &mut Report) -> Result<()> {
    let layer = crate::layer::find_layer(&s.clpart)?;
    let (args, reps): (Vec<String>, usize) = if s.cli.quick {
        (vec!["512".into(), "20".into()], 1)
    } else {
        (vec!["2048".into(), "100".into()], 3)
    };
    eprintln!(
        "== 12. an application across MPI ranks (tests/apps/jacobi2d {}, {reps} runs per configuration after a warm-up)",
        args.join(" ")
    );
    let cases = run(&s.clpart, &layer, &s.root, &args, reps)?;
    let plain = cases.first().map_or(f64::NAN, |c| c.device_ms);
    let name = format!("jacobi2d {}", args.join(" "));
    for c in &cases {
        out.rows.push(Row::info(
            12,
            format!("{name}, {}: device section (vs plain)", c.config),
            format!("{:.1} ms ({:.2}x)", c.device_ms, c.device_ms / plain),
        ));
        if let (Some(m), Some(w)) = (c.mpi_bytes_per_step, c.whole_bytes_per_step) {
            out.rows.push(Row::info(
                12,
                format!(
                    "{name}, {}: bytes over MPI per step / whole buffers",
                    c.config
                ),
                format!("{m} B / {w} B ({:.5})", m as f64 / w.max(1) as f64),
            ));
        }
        if !c.check_ok {
            out.rows.push(Row::target(
                12,
                format!("{name}, {}: own check", c.config),
                "mismatches".into(),
                "0 mismatches",
                false,
            ));
        }
    }
    let b = |x: Option<u64>| x.map_or("-".to_string(), |v| v.to_string());
    let cells: Vec<Vec<String>> = cases
        .iter()
        .map(|c| {
            vec![
                c.config.clone(),
                format!("{:.1}", c.device_ms),
                format!("{:.2}", c.device_ms / plain),
                format!("{:.0}", c.process_ms),
                b(c.mpi_bytes_per_step),
                b(c.whole_bytes_per_step),
                b(c.mpi_bytes_total),
                c.divided.map_or("-".into(), |(d, n)| format!("{d}/{n}")),
                if c.check_ok {
                    "yes".into()
                } else {
                    "NO".into()
                },
            ]
        })
        .collect();
    out.details.push_str(&format!(
        "\nAn application across MPI ranks: {name} (median of {reps} warm runs)\n\n{}",
        detail(
            &[
                "configuration",
                "device section (ms)",
                "time vs plain",
                "process (ms)",
                "MPI B per step",
                "whole buffers B per step",
                "MPI B in all",
                "divided launches",
                "own check",
            ],
            &cells
        )
    ));
    out.results
        .insert("mpi_exec".into(), json!({ "args": args, "cases": cases }));
    Ok(())
}
