//! Item 6: the cost of the run-time guard (issue 10). Every splittable
//! corpus kernel (its first `@run`) and three larger kernels run split 50/50
//! on two devices, alternately with the guard on and off (`--unchecked`);
//! the figure is the kernel time (profiling events, summed over the devices)
//! with the guard over the time without it, median of the launches, summed
//! over the kernels. Transfers are the same both ways; only the subkernels
//! differ (`-DCLPART_UNCHECKED` compiles the checks out).

use anyhow::{Context, Result};
use launcher::{LaunchOptions, Runtime};
use serde::{Deserialize, Serialize};

use crate::common::{ready, LaunchSpec};
use crate::stats::median;

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
            let rep = launcher::launch(&mut r.plan, &r.nd, &mut args, &[(0, 0.5), (1, 0.5)], &opts)
                .with_context(|| format!("launch {}", spec.kernel))?;
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
            guarded_ms: median(&times[0]),
            unchecked_ms: median(&times[1]),
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
            file: format!("kernels/{name}.cl"),
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
    vec![
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
    ]
}
