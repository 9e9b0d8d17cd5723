//! Item 8: `clpart steps` across MPI ranks. The 2-D Jacobi of
//! `kernels/iterative/jacobi2d.ron` (and the same program on a larger
//! grid) runs in one process and under `mpirun` on 2 and 3 ranks over
//! loopback, and on 2 ranks in two network namespaces joined by a veth
//! pair when this process may make them (root, `ip netns`). Per
//! configuration: the median wall of a launch after the first two (the
//! first upload), element bytes over MPI per launch against sending each
//! rank whole buffers, the whole process, and whether the grid equals the
//! one-process run bit for bit. Ranks yield the core while they wait
//! (`mpi_yield_when_idle`), except in one configuration that shows Open
//! MPI's default busy polling. Needs `clpart` built with the feature
//! `mpi` and Open MPI's `mpirun`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde::Serialize;
use serde_json::json;

use crate::run::{Report, Settings};
use crate::stats::median;
use crate::table::{detail, Row};

/// One configuration of one grid, medians over its runs.
#[derive(Clone, Debug, Serialize)]
pub struct Case {
    /// Grid side (n x n floats).
    pub n: u64,
    pub launches: usize,
    /// What ran: processes, devices, threads.
    pub config: String,
    /// 0 for one process without mpirun.
    pub n_ranks: usize,
    /// Median wall of one launch after the first two, ms (under mpirun:
    /// rank 0's sends, every rank's window, the replies).
    pub step_ms: f64,
    /// Every run's `step_ms`.
    pub step_ms_all: Vec<f64>,
    /// Element bytes over MPI per launch after the first two (both ways,
    /// all ranks); `None` for one process.
    pub mpi_bytes_per_step: Option<u64>,
    /// Element bytes over MPI in the first two launches (the first upload).
    pub mpi_bytes_first_two: Option<u64>,
    /// Whole buffers to and from each rank per launch.
    pub whole_bytes_per_step: Option<u64>,
    /// Element bytes over MPI in the whole run (launches and the final read of `A`).
    pub mpi_bytes_total: Option<u64>,
    /// The launches and the final read (`total.wall_ms`), median, ms.
    pub launches_ms: f64,
    /// The whole process (`mpirun` or `clpart`): start, analysis, PoCL
    /// builds, launches, output, median, ms.
    pub process_ms: f64,
    /// Whether `A` equals the one-process, one-device run's bit for bit.
    pub same_output: bool,
}

/// The loopback flags of the MPI tests (`cli/tests/mpi.rs`).
pub(crate) const LOOPBACK: [&str; 10] = [
    "--allow-run-as-root",
    "--oversubscribe",
    "--mca",
    "btl",
    "tcp,self",
    "--mca",
    "btl_tcp_if_include",
    "lo",
    "--mca",
    "oob_tcp_if_include",
];

/// A rank waiting for a message yields the core instead of spinning on
/// it: ranks share 2 cores with each other (and rank 0's PoCL threads).
/// Open MPI turns this on by itself only when it sees more ranks than slots.
pub(crate) const YIELD: [&str; 3] = ["--mca", "mpi_yield_when_idle", "1"];

/// The Jacobi program on an `n` x `n` grid, `repeat` x 2 launches, written
/// to `dir` beside a copy of its kernel.
fn program(root: &Path, dir: &Path, n: u64, repeat: u32) -> Result<PathBuf> {
    std::fs::copy(
        root.join("kernels/iterative/jacobi2d.cl"),
        dir.join("jacobi2d.cl"),
    )
    .context("kernels/iterative/jacobi2d.cl")?;
    let nn = n * n;
    let step = |src: &str, dst: &str| {
        format!("(kernel: \"jacobi2d\", global: [{n}, {n}], local: [16, 16], args: {{\"src\": \"{src}\", \"dst\": \"{dst}\", \"n\": {n}}})")
    };
    let text = format!(
        "// 2-D Jacobi on a {n} x {n} grid (clpart-bench item 8)\n(\n    source: \"jacobi2d.cl\",\n    buffers: [\n        (name: \"A\", type: \"float\", init: \"rand:{nn}:2\"),\n        (name: \"B\", type: \"float\", init: \"rand:{nn}:2\"),\n    ],\n    repeat: {repeat},\n    steps: [\n        {},\n        {},\n    ],\n)\n",
        step("A", "B"),
        step("B", "A")
    );
    let path = dir.join(format!("jacobi2d_{n}.ron"));
    std::fs::write(&path, text)?;
    Ok(path)
}

/// How one configuration starts.
enum Launch<'a> {
    /// `clpart steps` alone, with this environment and `--split`.
    Alone {
        env: Vec<(&'a str, &'a str)>,
        split: Option<&'a str>,
    },
    /// Under `mpirun -n N` on loopback, every rank with this environment;
    /// `poll`: Open MPI's default busy polling while a rank waits (else
    /// `mpi_yield_when_idle`).
    Loopback {
        n_ranks: usize,
        env: Vec<(&'a str, &'a str)>,
        poll: bool,
    },
    /// 2 ranks: mpirun in namespace `a`, rank 1 started by `agent` (in
    /// the other namespace) on the second host of `hosts`.
    Netns {
        a: String,
        agent: PathBuf,
        hosts: PathBuf,
        env: Vec<(&'a str, &'a str)>,
    },
}

/// One run: the report and the process wall (ms).
fn run_once(
    clpart: &Path,
    root: &Path,
    how: &Launch,
    file: &Path,
    out: &Path,
) -> Result<(serde_json::Value, f64)> {
    let steps = [
        "steps".to_string(),
        file.display().to_string(),
        "--json".into(),
        "--out".into(),
        format!("A={}", out.display()),
    ];
    let (mut cmd, env) = match how {
        Launch::Alone { env, split } => {
            let mut c = Command::new(clpart);
            c.args(&steps);
            if let Some(s) = split {
                c.args(["--split", s]);
            }
            (c, env)
        }
        Launch::Loopback { n_ranks, env, poll } => {
            let mut c = Command::new("mpirun");
            c.args(LOOPBACK).args(["lo", "-n", &n_ranks.to_string()]);
            if !poll {
                c.args(YIELD);
            }
            for (k, _) in env {
                c.args(["-x", k]);
            }
            c.arg(clpart).args(&steps);
            (c, env)
        }
        Launch::Netns {
            a,
            agent,
            hosts,
            env,
            ..
        } => {
            let mut c = Command::new("ip");
            c.args([
                "netns",
                "exec",
                a,
                "mpirun",
                "--allow-run-as-root",
                "--hostfile",
            ])
            .arg(hosts);
            c.args(["--mca", "plm_rsh_agent"]).arg(agent);
            c.args([
                "--mca",
                "oob_tcp_if_include",
                "10.219.0.0/24",
                "--mca",
                "btl",
                "tcp,self",
                "--mca",
                "btl_tcp_if_include",
                "10.219.0.0/24",
                "-n",
                "2",
            ])
            .args(YIELD);
            for (k, _) in env {
                c.args(["-x", k]);
            }
            c.arg(clpart).args(&steps);
            (c, env)
        }
    };
    cmd.current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let t0 = Instant::now();
    let o = cmd
        .output()
        .with_context(|| format!("cannot start {:?}", cmd.get_program()))?;
    let ms = t0.elapsed().as_secs_f64() * 1e3;
    if !o.status.success() {
        bail!(
            "{:?} exited with {}: {}",
            cmd.get_program(),
            o.status,
            String::from_utf8_lossy(&o.stderr).trim()
        );
    }
    let text = String::from_utf8_lossy(&o.stdout);
    let r: serde_json::Value = serde_json::from_str(text.trim()).with_context(|| {
        format!("'{}' printed no single JSON report under mpirun: is it built with the feature mpi (cargo build --release -p clpart --features mpi)?", clpart.display())
    })?;
    Ok((r, ms))
}

/// Makes the two namespaces of the veth case; `Err` says why not.
fn netns_setup(a: &str, b: &str, tag: u32) -> Result<(), String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("not root".into());
    }
    let sh = |cmd: String| -> Result<(), String> {
        let o = Command::new("sh")
            .args(["-c", &cmd])
            .output()
            .map_err(|e| e.to_string())?;
        if o.status.success() {
            Ok(())
        } else {
            Err(format!(
                "'{cmd}': {}",
                String::from_utf8_lossy(&o.stderr).trim()
            ))
        }
    };
    let (va, vb) = (format!("bva{tag}"), format!("bvb{tag}"));
    sh(format!("ip netns add {a}"))?;
    sh(format!("ip netns add {b}"))?;
    sh(format!("ip link add {va} type veth peer name {vb}"))?;
    sh(format!(
        "ip link set {va} netns {a} && ip link set {vb} netns {b}"
    ))?;
    sh(format!(
        "ip -n {a} addr add 10.219.0.1/24 dev {va} && ip -n {b} addr add 10.219.0.2/24 dev {vb}"
    ))?;
    sh(format!("ip -n {a} link set {va} up && ip -n {a} link set lo up && ip -n {b} link set {vb} up && ip -n {b} link set lo up"))?;
    Ok(())
}

fn netns_cleanup(a: &str, b: &str) {
    for ns in [a, b] {
        let _ = Command::new("ip")
            .args(["netns", "del", ns])
            .stderr(Stdio::null())
            .status();
    }
}

/// Runs every configuration on grids of `sizes`, `repeat` x 2 launches
/// each, `reps` runs per configuration. `mpirun` must be on the path.
pub fn run(
    clpart: &Path,
    root: &Path,
    sizes: &[u64],
    repeat: u32,
    reps: usize,
) -> Result<(Vec<Case>, Option<String>)> {
    if Command::new("mpirun")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_err()
    {
        bail!("mpirun not found (Debian: apt-get install openmpi-bin libopenmpi-dev; scripts/setup.sh installs them)");
    }
    let dir = std::env::temp_dir().join(format!("clpart-bench-mpi-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let tag = std::process::id() % 100000;
    let (a, b) = (format!("cbena{tag}"), format!("cbenb{tag}"));
    netns_cleanup(&a, &b);
    let netns = netns_setup(&a, &b, tag);
    let r = (|| -> Result<Vec<Case>> {
        let agent = dir.join("agent.sh");
        std::fs::write(
            &agent,
            format!("#!/bin/sh\nshift\nexec ip netns exec {b} sh -c \"$*\"\n"),
        )?;
        let _ = Command::new("chmod").arg("+x").arg(&agent).status();
        let hosts = dir.join("hosts");
        std::fs::write(&hosts, "10.219.0.1 slots=1\n10.219.0.2 slots=1\n")?;
        let one_thread = vec![("POCL_DEVICES", "pthread"), ("POCL_MAX_PTHREAD_COUNT", "1")];
        let mut configs: Vec<(String, usize, Launch)> = vec![
            (
                "1 process, 1 device (pthread, 2 threads)".into(),
                0,
                Launch::Alone {
                    env: vec![("POCL_DEVICES", "pthread")],
                    split: None,
                },
            ),
            (
                "1 process, 2 devices (pthread x 1 thread each), 50/50".into(),
                0,
                Launch::Alone {
                    env: vec![
                        ("POCL_DEVICES", "pthread pthread"),
                        ("POCL_MAX_PTHREAD_COUNT", "1"),
                    ],
                    split: Some("0:0.5,1:0.5"),
                },
            ),
            (
                "2 ranks, loopback, 1 device of 1 thread each, busy polling (Open MPI's default)"
                    .into(),
                2,
                Launch::Loopback {
                    n_ranks: 2,
                    env: one_thread.clone(),
                    poll: true,
                },
            ),
            (
                "2 ranks, loopback, 1 device of 1 thread each".into(),
                2,
                Launch::Loopback {
                    n_ranks: 2,
                    env: one_thread.clone(),
                    poll: false,
                },
            ),
            (
                "3 ranks, loopback, 1 device of 1 thread each (3 processes, 2 cores)".into(),
                3,
                Launch::Loopback {
                    n_ranks: 3,
                    env: one_thread.clone(),
                    poll: false,
                },
            ),
        ];
        if netns.is_ok() {
            configs.push((
                "2 ranks, 2 network namespaces over a veth pair, 1 device of 1 thread each".into(),
                2,
                Launch::Netns {
                    a: a.clone(),
                    agent: agent.clone(),
                    hosts: hosts.clone(),
                    env: one_thread.clone(),
                },
            ));
        }
        let mut cases = Vec::new();
        for &n in sizes {
            let file = program(root, &dir, n, repeat)?;
            let reference = dir.join(format!("ref_{n}.npy"));
            for (label, n_ranks, how) in &configs {
                let mut steps = Vec::new();
                let mut launches_ms = Vec::new();
                let mut process_ms = Vec::new();
                let mut same = true;
                let mut last = serde_json::Value::Null;
                for rep in 0..reps {
                    let out = dir.join(format!("out_{n}_{n_ranks}_{rep}.npy"));
                    let (r, ms) = run_once(clpart, root, how, &file, &out)
                        .with_context(|| format!("{label}, {n} x {n}"))?;
                    let lines = r["launches"].as_array().context("a report with launches")?;
                    let walls: Vec<f64> = lines
                        .iter()
                        .skip(2)
                        .filter_map(|l| l["wall_ms"].as_f64())
                        .collect();
                    steps.push(median(&walls));
                    launches_ms.push(r["total"]["wall_ms"].as_f64().unwrap_or(f64::NAN));
                    process_ms.push(ms);
                    if !reference.exists() {
                        std::fs::rename(&out, &reference)?;
                    } else {
                        same &= std::fs::read(&out)? == std::fs::read(&reference)?;
                        let _ = std::fs::remove_file(&out);
                    }
                    if *n_ranks > 0 && lines.iter().any(|l| l["mpi"].is_null()) {
                        bail!("{label}: a launch without its mpi part: '{}' is not built with the feature mpi", clpart.display());
                    }
                    last = r;
                }
                let lines = last["launches"].as_array().expect("checked above");
                let mpi = |i: usize, key: &str| lines[i]["mpi"][key].as_u64();
                let steady = |key: &str| -> Option<u64> {
                    let v: Vec<u64> = (2..lines.len()).filter_map(|i| mpi(i, key)).collect();
                    // every launch after the first two moves the same: report it, or the largest
                    v.iter().max().copied()
                };
                let case = Case {
                    n,
                    launches: lines.len(),
                    config: label.clone(),
                    n_ranks: *n_ranks,
                    step_ms: median(&steps),
                    step_ms_all: steps,
                    mpi_bytes_per_step: steady("bytes_mpi"),
                    mpi_bytes_first_two: (*n_ranks > 0).then(|| {
                        (0..2.min(lines.len()))
                            .filter_map(|i| mpi(i, "bytes_mpi"))
                            .sum()
                    }),
                    whole_bytes_per_step: steady("bytes_whole_buffers"),
                    mpi_bytes_total: last["total"]["bytes_mpi"].as_u64(),
                    launches_ms: median(&launches_ms),
                    process_ms: median(&process_ms),
                    same_output: same,
                };
                eprintln!(
                    "  {n}x{n} {label}: step {:.2} ms, mpi {} B/step (whole buffers {} B), process {:.0} ms, same output {}",
                    case.step_ms,
                    case.mpi_bytes_per_step.map_or("-".into(), |b| b.to_string()),
                    case.whole_bytes_per_step.map_or("-".into(), |b| b.to_string()),
                    case.process_ms,
                    case.same_output
                );
                cases.push(case);
            }
        }
        Ok(cases)
    })();
    netns_cleanup(&a, &b);
    let _ = std::fs::remove_dir_all(&dir);
    Ok((r?, netns.err()))
}

/// Item 8, `clpart steps` across MPI ranks: measures it and adds its rows,
/// detail table and JSON to `out`.
pub(crate) fn report(s: &Settings, out: &mut Report) -> Result<()> {
    let Settings {
        clpart, root, cli, ..
    } = s;
    let Report {
        rows,
        details,
        results,
    } = out;
    // 20 launches as in kernels/iterative/jacobi2d.ron, on its grid and a larger one
    let (sizes, reps): (&[u64], usize) = if cli.quick {
        (&[256], 1)
    } else {
        (&[256, 2048], 3)
    };
    eprintln!("== 8. clpart steps across MPI ranks (jacobi2d, 20 launches, {reps} runs per configuration)");
    let (cases, no_netns) = run(clpart, root, sizes, 10, reps)?;
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
                format!("{name}: bytes over MPI per launch after the first two / whole buffers"),
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
    Ok(())
}
