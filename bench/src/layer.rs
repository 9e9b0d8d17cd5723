//! Item 7: the OpenCL layer's cost when nothing splits:
//! `tests/apps/passthrough` (two kernels with global atomics, launched in a
//! loop with a read every 64 launches) run as a plain program and under
//! `clpart exec`, one after the other, `reps` times. The program times its first iteration (where
//! the layer analyzes each kernel once) apart from the others; the figure
//! is the median of the others' wall time under the layer over the plain
//! median. The whole process's wall time is given beside it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::run::{Report, Settings};
use crate::stats::median;
use crate::table::Row;

#[derive(Serialize)]
pub struct Output {
    pub n: u64,
    pub launches: u64,
    pub reps: usize,
    pub plain_loop_ms: Vec<f64>,
    pub layer_loop_ms: Vec<f64>,
    pub plain_first_ms: Vec<f64>,
    pub layer_first_ms: Vec<f64>,
    pub plain_wall_ms: Vec<f64>,
    pub layer_wall_ms: Vec<f64>,
}

impl Output {
    /// Median loop wall time under the layer / plain.
    pub fn loop_ratio(&self) -> f64 {
        median(&self.layer_loop_ms) / median(&self.plain_loop_ms).max(1e-9)
    }
}

/// `libclpart_layer.so`: `$CLPART_LAYER`, else beside `clpart`.
pub(crate) fn find_layer(clpart: &Path) -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("CLPART_LAYER").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let p = clpart.with_file_name("libclpart_layer.so");
    if !p.is_file() {
        bail!("'{}' does not exist; build it with 'cargo build --release -p layer' or set CLPART_LAYER", p.display());
    }
    Ok(p)
}

/// One run: (first iteration ms, other iterations ms, process wall ms).
fn once(mut c: Command) -> Result<(f64, f64, f64)> {
    let t = Instant::now();
    let out = c.output().context("running the passthrough program")?;
    let wall = t.elapsed().as_secs_f64() * 1e3;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || !stdout.contains(": 0 mismatches") {
        bail!(
            "passthrough failed ({:?}): {stdout}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let field = |name: &str| -> Result<f64> {
        stdout
            .split_whitespace()
            .find_map(|w| w.strip_prefix(name))
            .and_then(|v| v.parse().ok())
            .with_context(|| format!("no '{name}' in: {stdout}"))
    };
    Ok((field("first_ms=")?, field("loop_ms=")?, wall))
}

pub fn run(clpart: &Path, root: &Path, n: u64, launches: u64, reps: usize) -> Result<Output> {
    let layer = find_layer(clpart)?;
    let dir = root.join("tests/apps/passthrough");
    let exe = std::env::temp_dir().join(format!("clpart-bench-passthrough-{}", std::process::id()));
    let gcc = Command::new("gcc")
        .args([
            "-O2",
            "-std=c99",
            "-DCL_TARGET_OPENCL_VERSION=120",
            "-Wno-deprecated-declarations",
            "-o",
        ])
        .arg(&exe)
        .arg(dir.join("main.c"))
        .args(["-lOpenCL", "-lm"])
        .output()
        .context("running gcc")?;
    if !gcc.status.success() {
        bail!("gcc passthrough: {}", String::from_utf8_lossy(&gcc.stderr));
    }
    let args = [n.to_string(), launches.to_string()];
    let mut o = Output {
        n,
        launches,
        reps,
        plain_loop_ms: Vec::new(),
        layer_loop_ms: Vec::new(),
        plain_first_ms: Vec::new(),
        layer_first_ms: Vec::new(),
        plain_wall_ms: Vec::new(),
        layer_wall_ms: Vec::new(),
    };
    for _ in 0..reps {
        let mut plain = Command::new(&exe);
        plain
            .args(&args)
            .current_dir(&dir)
            .env("POCL_DEVICES", "pthread basic")
            .env_remove("OPENCL_LAYERS");
        let (first, looped, wall) = once(plain)?;
        o.plain_first_ms.push(first);
        o.plain_loop_ms.push(looped);
        o.plain_wall_ms.push(wall);
        let mut layered = Command::new(clpart);
        layered
            .args(["exec", "--split", "0:0.5,1:0.5", "--"])
            .arg(&exe)
            .args(&args)
            .current_dir(&dir)
            .env("POCL_DEVICES", "pthread basic")
            .env("CLPART_LAYER", &layer)
            .env_remove("OPENCL_LAYERS");
        let (first, looped, wall) = once(layered)?;
        o.layer_first_ms.push(first);
        o.layer_loop_ms.push(looped);
        o.layer_wall_ms.push(wall);
    }
    let _ = std::fs::remove_file(&exe);
    Ok(o)
}

/// Item 7, the OpenCL layer's cost: measures it and adds its rows and JSON
/// to `out`.
pub(crate) fn report(s: &Settings, out: &mut Report) -> Result<()> {
    let Settings {
        clpart, root, cli, ..
    } = s;
    let Report { rows, results, .. } = out;
    let (launches, reps) = if cli.quick { (256, 3) } else { (4096, 7) };
    eprintln!("== 7. layer pass-through overhead ({launches} iterations, {reps} runs each way)");
    let l = run(clpart, root, 16384, launches, reps)?;
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
    Ok(())
}
