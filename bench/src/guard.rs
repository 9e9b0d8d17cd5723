//! Item 6: the cost of the run-time guard. Every splittable
//! corpus kernel (its first `@run`) and larger launches (vadd, matmul,
//! stencil2d, and the compute-bound PolyBench/GPU forms: gemm, 2mm, 3mm,
//! syrk, syr2k, correlation, covariance, a 3-D convolution's plane) run split 50/50
//! on two devices, alternately with the guard on and off (`--unchecked`);
//! the figure is the kernel time (profiling events, summed over the devices)
//! with the guard over the time without it, median of the launches, summed
//! over the kernels. Transfers are the same both ways; only the subkernels
//! differ (`-DCLPART_UNCHECKED` compiles the checks out).

use anyhow::{Context, Result};
use launcher::{LaunchOptions, Runtime};
use serde::{Deserialize, Serialize};

use crate::common::{ready, spawn_worker, LaunchSpec};
use crate::run::{Report, Settings};
use crate::stats::median;
use crate::table::{detail, Row};

/// The worker's parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Param {
    pub specs: Vec<LaunchSpec>,
    pub reps: usize,
}

/// One kernel's kernel times.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KernelGuard {
    pub kernel: String,
    pub ndrange: String,
    /// Whether it ran split with the guard on (guarded subkernels).
    pub split: bool,
    /// Median kernel time with the guard, ms (summed over devices).
    pub guarded_ms: f64,
    /// Median kernel time without it, ms.
    pub unchecked_ms: f64,
    /// Whether the guard fired (it must not).
    pub fired: bool,
}

/// The worker (two devices).
pub fn worker(p: &Param) -> Result<Vec<KernelGuard>> {
    let rt = Runtime::new()?;
    let mut out = Vec::new();
    for spec in &p.specs {
        let mut r = ready(&rt, spec)?;
        let pristine = r.args.clone();
        let mut times = [Vec::new(), Vec::new()];
        let mut split = true;
        let mut fired = false;
        // one warm-up launch each way (program builds), then alternate
        for i in 0..2 * (p.reps + 1) {
            let unchecked = i % 2 == 1;
            let mut args = pristine.clone();
            let opts = LaunchOptions {
                unchecked,
                ..Default::default()
            };
            let rep =
                match launcher::launch(&mut r.plan, &r.nd, &mut args, &[(0, 0.5), (1, 0.5)], &opts)
                {
                    Ok(rep) => rep,
                    // a launch that cannot run one way (an analyzed range past
                    // a buffer is refused without the guard) is no comparison:
                    // listed unsplit, left out of the sums
                    Err(e) if unchecked => {
                        eprintln!(
                            "guard: {} left out: the launch without the guard is refused: {e}",
                            spec.kernel
                        );
                        split = false;
                        break;
                    }
                    Err(e) => return Err(e).with_context(|| format!("launch {}", spec.kernel)),
                };
            if !unchecked {
                split &= rep.split;
                fired |= rep.guard_fired;
            }
            if i >= 2 {
                times[unchecked as usize]
                    .push(rep.devices.iter().map(|d| d.kernel_ms).sum::<f64>());
            }
        }
        out.push(KernelGuard {
            kernel: spec.kernel.clone(),
            ndrange: spec.ndrange_text(),
            split,
            // (0 for a kernel left out: JSON has no NaN)
            guarded_ms: if times[0].is_empty() {
                0.0
            } else {
                median(&times[0])
            },
            unchecked_ms: if times[1].is_empty() {
                0.0
            } else {
                median(&times[1])
            },
            fired,
        });
    }
    Ok(out)
}

/// The larger kernels: where kernel time dominates the launch.
pub fn large_specs(quick: bool) -> Vec<LaunchSpec> {
    let corpus = clpart_tests::corpus();
    let find = |n: &str| corpus.iter().find(|k| k.name == n).expect("corpus kernel");
    let s = if quick { 4 } else { 1 };
    let spec = |name: &str, global: Vec<u64>, local: Vec<u64>, args: Vec<String>| {
        let k = find(name);
        LaunchSpec {
            file: k.file(),
            source: k.source.clone(),
            build: k.build.clone(),
            kernel: name.to_string(),
            global,
            local,
            args,
        }
    };
    let n = 1u64 << 22 >> (2 * (s - 1));
    let m = 512 / s;
    let w = 2048 / s;
    let mm = m * m;
    let square = |name: &str, args: &[String]| spec(name, vec![m, m], vec![32, 8], args.to_vec());
    let sizes =
        |names: &[&str]| -> Vec<String> { names.iter().map(|n| format!("{n}={m}")).collect() };
    let bufs = |names: &[&str]| -> Vec<String> {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| format!("{n}=rand:{mm}:{}", i + 1))
            .collect()
    };
    let cat = |a: Vec<String>, b: Vec<String>, c: &[&str]| -> Vec<String> {
        a.into_iter()
            .chain(b)
            .chain(c.iter().map(|x| x.to_string()))
            .collect()
    };
    let plane = 1024 / s;
    let volume = 4 * plane * plane;
    let polybench = vec![
        square(
            "gemm_outer_counter",
            &cat(
                bufs(&["a", "b", "c"]),
                sizes(&["ni", "nj", "nk"]),
                &["alpha=1.5", "beta=0.5"],
            ),
        ),
        square(
            "mm2_product",
            &cat(
                bufs(&["tmp", "A", "B"]),
                sizes(&["ni", "nj", "nk"]),
                &["alpha=1.5"],
            ),
        ),
        square(
            "mm2_accumulate",
            &cat(
                bufs(&["tmp", "C", "D"]),
                sizes(&["ni", "nj", "nl"]),
                &["beta=0.5"],
            ),
        ),
        square(
            "mm3_product",
            &cat(bufs(&["A", "B", "E"]), sizes(&["ni", "nj", "nk"]), &[]),
        ),
        square(
            "syrk",
            &cat(
                bufs(&["a", "c"]),
                sizes(&["m", "n"]),
                &["alpha=1.5", "beta=0.5"],
            ),
        ),
        square(
            "syr2k",
            &cat(
                bufs(&["a", "b", "c"]),
                sizes(&["m", "n"]),
                &["alpha=1.5", "beta=0.5"],
            ),
        ),
        spec(
            "correlation",
            vec![m],
            vec![32],
            cat(bufs(&["symmat", "data"]), sizes(&["m", "n"]), &[]),
        ),
        spec(
            "covariance",
            vec![m],
            vec![32],
            cat(bufs(&["symmat", "data"]), sizes(&["m", "n"]), &[]),
        ),
        spec(
            "conv3d_plane",
            vec![plane, plane],
            vec![32, 8],
            vec![
                format!("A=rand:{volume}:1"),
                format!("B=zeros:{volume}"),
                "ni=4".into(),
                format!("nj={plane}"),
                format!("nk={plane}"),
                "i=2".into(),
            ],
        ),
    ];
    let mut out = vec![
        spec(
            "vadd",
            vec![n],
            vec![64],
            vec![
                format!("a=rand:{n}:1"),
                format!("b=rand:{n}:2"),
                format!("c=zeros:{n}"),
            ],
        ),
        spec(
            "matmul",
            vec![m, m],
            vec![16, 16],
            vec![
                format!("width={m}"),
                format!("a=rand:{}:1", m * m),
                format!("b=rand:{}:2", m * m),
                format!("c=zeros:{}", m * m),
            ],
        ),
        spec(
            "stencil2d",
            vec![w, w],
            vec![32, 8],
            vec![
                format!("in=rand:{}:1", w * w),
                format!("out=zeros:{}", w * w),
                format!("width={w}"),
                format!("height={w}"),
            ],
        ),
    ];
    out.extend(polybench);
    out
}

/// Item 6, the run-time guard's cost: measures it and adds its rows, detail
/// table and JSON to `out`.
pub(crate) fn report(s: &Settings, out: &mut Report) -> Result<()> {
    let Settings {
        root, corpus, cli, ..
    } = s;
    let Report {
        rows,
        details,
        results,
    } = out;
    let mut specs: Vec<LaunchSpec> = corpus
        .iter()
        .filter(|k| k.expect.splittable)
        .map(|k| LaunchSpec::corpus(k, 0))
        .collect();
    specs.extend(large_specs(cli.quick));
    let reps = if cli.quick { 3 } else { 15 };
    eprintln!(
        "== 6. run-time guard cost ({} kernels, {reps} launches each way)",
        specs.len()
    );
    let g: Vec<KernelGuard> = spawn_worker(
        "guard",
        &Param { specs, reps },
        &[("POCL_DEVICES", "pthread pthread")],
        root,
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
    Ok(())
}
