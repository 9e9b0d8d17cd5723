//! Item 4: co-execution. One worker process per device configuration
//! (PoCL reads `POCL_DEVICES` and `POCL_MAX_PTHREAD_COUNT` once): each
//! device alone (`launch` with one share), then the split; launch wall
//! times (transfers, kernels, gluing), medians over the repeats.
//!
//! - Even: two equal devices, a 50/50 split, the single-device runs and the
//!   split interleaved repeat by repeat.
//!
//! A pthread device is listed first in the shares: the launcher enqueues
//! and flushes device by device, and PoCL's basic device runs its commands
//! inside `clFlush` in the calling thread, so a basic device listed first
//! would finish its slice before the other device gets its work.
//! - Uneven: the single-device runs first; the split's shares are the
//!   devices' measured throughputs (1 / median wall) normalized.
//!
//! Speed-up: the faster device's median wall over the split's. Efficiency:
//! split throughput over the sum of the single-device throughputs.

use anyhow::{bail, Result};
use launcher::Runtime;
use serde::{Deserialize, Serialize};

use crate::common::{ready, Checked, LaunchSpec};
use crate::stats::median;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Param {
    pub spec: LaunchSpec,
    pub reps: usize,
    /// Shares from measured throughputs (else 50/50, interleaved).
    pub uneven: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Output {
    /// The two devices, in share order (a pthread device first).
    pub device_names: Vec<String>,
    /// Median wall per device alone, ms.
    pub single_ms: Vec<f64>,
    pub single_all: Vec<Vec<f64>>,
    /// The split's shares (device 0, device 1).
    pub shares: Vec<f64>,
    pub split_ms: f64,
    pub split_all: Vec<f64>,
    /// Median kernel time per device in the split, ms.
    pub split_kernel_ms: Vec<f64>,
    /// The split output equals the single-device output bit for bit.
    pub same_output: bool,
    pub speedup: f64,
    pub efficiency: f64,
}

/// The worker (two devices).
pub fn worker(p: &Param) -> Result<Output> {
    let rt = Runtime::new()?;
    let devs = rt.devices();
    if devs.len() < 2 {
        bail!(
            "co-execution needs two OpenCL devices, found {}",
            devs.len()
        );
    }
    let pthread_second =
        !devs[0].name.starts_with("pthread") && devs[1].name.starts_with("pthread");
    let order = if pthread_second { [1, 0] } else { [0, 1] };
    let mut r = ready(&rt, &p.spec)?;
    r.plan.prepare(&order)?;
    let mut c = Checked::new(r, &p.spec.kernel);
    let mut single_all = vec![Vec::new(), Vec::new()];
    let mut split_all = Vec::new();
    let mut split_kernel = [Vec::new(), Vec::new()];
    let mut split = |c: &mut Checked, shares: &[(usize, f64)]| -> Result<()> {
        let rep = c.run(shares)?;
        split_all.push(rep.wall_ms);
        for (i, d) in rep.devices.iter().enumerate() {
            split_kernel[i].push(d.kernel_ms);
        }
        Ok(())
    };
    let even = [(order[0], 0.5), (order[1], 0.5)];
    for _ in 0..p.reps {
        for d in 0..2 {
            single_all[d].push(c.run(&[(order[d], 1.0)])?.wall_ms);
        }
        if !p.uneven {
            split(&mut c, &even)?;
        }
    }
    let single_ms: Vec<f64> = single_all.iter().map(|v| median(v)).collect();
    let shares = if p.uneven {
        let thr: Vec<f64> = single_ms.iter().map(|ms| 1.0 / ms).collect();
        let s0 = thr[0] / (thr[0] + thr[1]);
        let shares = vec![s0, 1.0 - s0];
        for _ in 0..p.reps {
            split(&mut c, &[(order[0], shares[0]), (order[1], shares[1])])?;
        }
        shares
    } else {
        vec![0.5, 0.5]
    };
    let split_ms = median(&split_all);
    let best_single = single_ms.iter().copied().fold(f64::INFINITY, f64::min);
    let efficiency = (1.0 / split_ms) / single_ms.iter().map(|ms| 1.0 / ms).sum::<f64>();
    Ok(Output {
        device_names: order.iter().map(|&i| devs[i].name.clone()).collect(),
        single_ms,
        single_all,
        shares,
        split_ms,
        split_all,
        split_kernel_ms: split_kernel.iter().map(|v| median(v)).collect(),
        same_output: c.same_output,
        speedup: best_single / split_ms,
        efficiency,
    })
}
