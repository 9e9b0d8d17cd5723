//! Item 9: automatic shares (`--split auto`) against a sweep of
//! fixed shares. One worker process per device order on `pthread` +
//! `basic`, one PoCL thread each:
//!
//! - each device alone (the median of `reps` launches);
//! - [`AUTO_LAUNCHES`] launches with shares from a `launcher::Balancer`
//!   (the first one even, as `clpart run --split auto` does), of which the
//!   figure is the median wall of the launches after the fifth;
//! - every fixed share of the first device in [`SWEEP`], `reps` launches
//!   each: the best share is the one with the least median wall.
//!
//! Efficiency: the automatic split's throughput over the sum of the
//! single-device throughputs. Every output is checked bit for bit against
//! the first device's alone.

use anyhow::{bail, Result};
use launcher::{Balancer, Runtime};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::coexec::coexec_specs;
use crate::common::{ready, spawn_worker, Checked, LaunchSpec};
use crate::machine::cpu_capacity;
use crate::run::{Report, Settings};
use crate::stats::median;
use crate::table::{detail, Row};

/// Launches with automatic shares; the figure is taken after the fifth.
pub const AUTO_LAUNCHES: usize = 8;

/// The automatic figure: the launches after this many.
pub const SETTLE_LAUNCHES: usize = 5;

/// The first device's fixed shares of the sweep.
pub const SWEEP: [f64; 9] = [0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60, 0.65, 0.70];

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Param {
    pub spec: LaunchSpec,
    pub reps: usize,
    /// List PoCL's `basic` device first (else the `pthread` device).
    pub basic_first: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Output {
    /// The two devices, in share order.
    pub device_names: Vec<String>,
    /// Median wall per device alone, ms.
    pub single_ms: Vec<f64>,
    /// Per automatic launch: the first device's share and the wall, ms.
    pub auto_launches: Vec<(f64, f64)>,
    /// Median wall of the automatic launches after the fifth, ms.
    pub auto_ms: f64,
    /// Per fixed share of the sweep: the share and the median wall, ms.
    pub sweep: Vec<(f64, f64)>,
    /// The sweep's best share and its wall, ms.
    pub best_share: f64,
    pub best_ms: f64,
    /// Automatic over the best fixed share (target <= 1.03).
    pub auto_over_best: f64,
    /// Automatic throughput over the sum of the single-device ones (target >= 0.95).
    pub efficiency: f64,
    /// Every output equals the first device's alone, bit for bit.
    pub same_output: bool,
}

/// The worker (two devices).
pub fn worker(p: &Param) -> Result<Output> {
    let rt = Runtime::new()?;
    let devs = rt.devices();
    if devs.len() < 2 {
        bail!("balancing needs two OpenCL devices, found {}", devs.len());
    }
    let basic = devs.iter().position(|d| !d.name.starts_with("pthread"));
    let pthread = devs.iter().position(|d| d.name.starts_with("pthread"));
    let (Some(basic), Some(pthread)) = (basic, pthread) else {
        bail!("balancing needs a pthread and a basic device");
    };
    let order = if p.basic_first {
        [basic, pthread]
    } else {
        [pthread, basic]
    };
    let mut r = ready(&rt, &p.spec)?;
    r.plan.prepare(&order)?;
    let mut c = Checked::new(r, &p.spec.kernel);
    let mut single_ms = Vec::new();
    for &d in &order {
        let mut walls = Vec::new();
        for _ in 0..p.reps.max(1) {
            walls.push(c.run(&[(d, 1.0)])?.wall_ms);
        }
        single_ms.push(median(&walls));
    }
    let mut balancer = Balancer::new(&order);
    let key = launcher::launch_key(&p.spec.kernel, &c.ready.nd);
    let mut auto_launches = Vec::new();
    for _ in 0..AUTO_LAUNCHES {
        let shares = balancer.shares(&key);
        let rep = c.run(&shares)?;
        balancer.observe(&key, &rep);
        auto_launches.push((shares[0].1, rep.wall_ms));
    }
    let settled: Vec<f64> = auto_launches[SETTLE_LAUNCHES..]
        .iter()
        .map(|&(_, ms)| ms)
        .collect();
    let auto_ms = median(&settled);
    let mut sweep = Vec::new();
    for s in SWEEP {
        let mut walls = Vec::new();
        for _ in 0..p.reps.max(1) {
            walls.push(c.run(&[(order[0], s), (order[1], 1.0 - s)])?.wall_ms);
        }
        sweep.push((s, median(&walls)));
    }
    let (best_share, best_ms) =
        sweep.iter().copied().fold(
            (f64::NAN, f64::INFINITY),
            |b, x| if x.1 < b.1 { x } else { b },
        );
    let efficiency = (1.0 / auto_ms) / single_ms.iter().map(|ms| 1.0 / ms).sum::<f64>();
    Ok(Output {
        device_names: order.iter().map(|&i| devs[i].name.clone()).collect(),
        single_ms,
        auto_launches,
        auto_ms,
        sweep,
        best_share,
        best_ms,
        auto_over_best: auto_ms / best_ms,
        efficiency,
        same_output: c.same_output,
    })
}

/// Item 9, automatic shares against fixed ones: measures it and adds its
/// rows, detail table and JSON to `out`.
pub(crate) fn report(s: &Settings, out: &mut Report) -> Result<()> {
    let Settings {
        root,
        scale,
        corpus,
        ..
    } = s;
    let Report {
        rows,
        details,
        results,
    } = out;
    eprintln!(
        "== 9. automatic shares against a sweep ({} repeats per fixed share)",
        scale.coexec_reps
    );
    let cap_before = cpu_capacity();
    eprintln!("  CPU capacity free for the bench: {cap_before:.2} of 2");
    let specs = coexec_specs(corpus, scale)?;
    let env = [
        ("POCL_DEVICES", "pthread basic"),
        ("POCL_MAX_PTHREAD_COUNT", "1"),
    ];
    let mut all = Vec::new();
    let mut cells = Vec::new();
    for spec in &specs {
        for basic_first in [false, true] {
            let p = Param {
                spec: spec.clone(),
                reps: scale.coexec_reps,
                basic_first,
            };
            let o: Output = spawn_worker("balance", &p, &env, root)?;
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
                    SETTLE_LAUNCHES + 1,
                    AUTO_LAUNCHES
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
            SETTLE_LAUNCHES + 1,
            AUTO_LAUNCHES,
            detail(&["kernel", "global / local", "order", "alone", "auto launches (share:ms)", "auto", "sweep (share:ms)", "best fixed", "auto / best", "efficiency", "same output"], &cells)
        ));
    results.insert(
        "balance".into(),
        json!({ "cpu_capacity_before": cap_before, "cpu_capacity_after": cap_after, "runs": all }),
    );
    Ok(())
}
