//! Item 5: peak host memory (the child's peak resident set, `ru_maxrss`
//! from `wait4`) of `clpart run` on a large `vadd`, against the sum of its
//! argument buffers; of a tiny `vadd`, the fixed cost (the process,
//! libclang, isl, PoCL and its LLVM); and of `clpart steps` on a large 2-D
//! Jacobi over resident buffers (one host copy per buffer plus the
//! devices' ranges, which PoCL's CPU devices also keep in host memory).

use std::path::Path;
use std::process::{Command, Stdio};

use crate::run::{Report, Settings};
use crate::table::Row;
use anyhow::{bail, Context, Result};
use serde::Serialize;
use serde_json::json;

/// One `clpart run` measured.
#[derive(Clone, Debug, Serialize)]
pub struct Peak {
    /// What ran.
    pub case: String,
    /// `POCL_DEVICES`.
    pub devices: String,
    pub n_elements: u64,
    /// Sum of the argument buffers, bytes.
    pub args_bytes: u64,
    /// Peak resident set of the process, bytes.
    pub peak_bytes: u64,
}

/// Runs `clpart run kernels/basics/vadd.cl` with `n` ints per buffer and returns
/// its peak resident set.
pub fn peak(clpart: &Path, root: &Path, n: u64, devices: &str, split: &str) -> Result<Peak> {
    let local = if n.is_multiple_of(256) { 256 } else { 1 };
    let mut child = Command::new(clpart);
    child
        .args([
            "run",
            "kernels/basics/vadd.cl",
            "--global",
            &n.to_string(),
            "--local",
            &local.to_string(),
        ])
        .args([
            "--arg",
            &format!("a=rand:{n}:1"),
            "--arg",
            &format!("b=rand:{n}:2"),
            "--arg",
            &format!("c=zeros:{n}"),
        ])
        .args(["--split", split]);
    let peak_bytes = run_peak(
        child,
        clpart,
        root,
        devices,
        &format!("clpart run (vadd, {n} elements, {devices})"),
    )?;
    Ok(Peak {
        case: format!("clpart run vadd, 3 x {n} ints, --split {split}"),
        devices: devices.into(),
        n_elements: n,
        args_bytes: 3 * 4 * n,
        peak_bytes,
    })
}

/// Runs `cmd` (the `clpart` binary `clpart` with its arguments) on the PoCL
/// devices `devices` from `root`, and returns its peak resident set in
/// bytes; an error naming `what` unless it exited 0.
fn run_peak(
    mut cmd: Command,
    clpart: &Path,
    root: &Path,
    devices: &str,
    what: &str,
) -> Result<u64> {
    let mut child = cmd
        .env("POCL_DEVICES", devices)
        .current_dir(root)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot run '{}'", clpart.display()))?;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain old data; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our child, not yet waited for; pointers are valid.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if r != pid {
        let _ = child.kill();
        bail!(
            "wait4 on {what} failed: {}",
            std::io::Error::last_os_error()
        );
    }
    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        bail!("{what} failed with status {status}");
    }
    Ok(usage.ru_maxrss as u64 * 1024)
}

/// Runs `clpart steps` on `kernels/iterative/jacobi2d.cl` at `n` x `n`
/// (two float grids, 20 steps, every buffer resident between launches and
/// read back once at the end) and returns its peak resident set.
pub fn jacobi2d_steps_peak(
    clpart: &Path,
    root: &Path,
    n: u64,
    devices: &str,
    split: &str,
) -> Result<Peak> {
    let dir = tempfile::tempdir()?;
    let source = root.join("kernels/iterative/jacobi2d.cl");
    let step = |src: &str, dst: &str| {
        format!(
            "(kernel: \"jacobi2d\", global: [{n}, {n}], local: [16, 16], args: {{\"src\": \"{src}\", \"dst\": \"{dst}\", \"n\": {n}}})"
        )
    };
    let run_file = format!(
        "(source: {:?}, buffers: [(name: \"A\", type: \"float\", init: \"rand:{e}:2\"), (name: \"B\", type: \"float\", init: \"rand:{e}:2\")], repeat: 10, steps: [{}, {}])",
        source.display().to_string(),
        step("A", "B"),
        step("B", "A"),
        e = n * n,
    );
    let path = dir.path().join("jacobi2d.ron");
    std::fs::write(&path, run_file)?;
    let mut child = Command::new(clpart);
    child.arg("steps").arg(&path).args(["--split", split]);
    let peak_bytes = run_peak(
        child,
        clpart,
        root,
        devices,
        &format!("clpart steps (jacobi2d {n}x{n}, {devices})"),
    )?;
    Ok(Peak {
        case: format!("clpart steps jacobi2d {n}x{n}, 20 steps, 2 float grids, --split {split}"),
        devices: devices.into(),
        n_elements: n * n,
        args_bytes: 2 * 4 * n * n,
        peak_bytes,
    })
}

/// Item 5, peak host memory: measures it and adds its rows and JSON to
/// `out`.
pub(crate) fn report(s: &Settings, out: &mut Report) -> Result<()> {
    let Settings {
        clpart,
        root,
        scale,
        ..
    } = s;
    let Report { rows, results, .. } = out;
    eprintln!("== 5. peak host memory of clpart run");
    let tiny = peak(clpart, root, 1024, "pthread", "0:1")?;
    let one = peak(clpart, root, scale.mem_elements, "pthread", "0:1")?;
    let two = peak(
        clpart,
        root,
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
        let base = jacobi2d_steps_peak(clpart, root, 64, devices, split)?;
        let p = jacobi2d_steps_peak(clpart, root, side, devices, split)?;
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
    Ok(())
}
