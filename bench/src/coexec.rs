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

use anyhow::{bail, Context, Result};
use launcher::Runtime;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::common::{ready, spawn_worker, Checked, LaunchSpec};
use crate::machine::cpu_capacity;
use crate::run::{Report, Scale, Settings};
use crate::stats::median;
use crate::table::{detail, Row};

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

/// Item 4, co-execution speed-up: measures it and adds its rows, detail
/// table and JSON to `out`.
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
        "== 4. co-execution ({} repeats per figure)",
        scale.coexec_reps
    );
    let cap_before = cpu_capacity();
    eprintln!("  CPU capacity free for the bench: {cap_before:.2} of 2");
    let specs = coexec_specs(corpus, scale)?;
    let mut all = Vec::new();
    let mut cells = Vec::new();
    // (label, environment, shares from measured throughputs)
    type Config<'a> = (&'a str, [(&'a str, &'a str); 2], bool);
    let configs: [Config; 3] = [
        (
            "2 x pthread, POCL_MAX_PTHREAD_COUNT=1",
            [
                ("POCL_DEVICES", "pthread pthread"),
                ("POCL_MAX_PTHREAD_COUNT", "1"),
            ],
            false,
        ),
        (
            "pthread + basic, 1 thread each",
            [
                ("POCL_DEVICES", "pthread basic"),
                ("POCL_MAX_PTHREAD_COUNT", "1"),
            ],
            false,
        ),
        (
            "pthread (2 threads) + basic",
            [
                ("POCL_DEVICES", "pthread basic"),
                ("POCL_MAX_PTHREAD_COUNT", "2"),
            ],
            true,
        ),
    ];
    for (label, env, uneven) in configs {
        for spec in &specs {
            let p = Param {
                spec: spec.clone(),
                reps: scale.coexec_reps,
                uneven,
            };
            let o: Output = spawn_worker("coexec", &p, &env, root)?;
            eprintln!(
                    "  {:<12} {label}: alone {:.0} / {:.0} ms, split {:.0} ms ({:.2}/{:.2}), speed-up {:.2}, efficiency {:.2}",
                    spec.kernel, o.single_ms[0], o.single_ms[1], o.split_ms, o.shares[0], o.shares[1], o.speedup, o.efficiency
                );
            let name = format!("{} {}", spec.kernel, spec.ndrange_text());
            if uneven {
                rows.push(Row::info(
                    4,
                    format!(
                        "{name}, {label}, shares {:.2}/{:.2}: speed-up over the faster device",
                        o.shares[0], o.shares[1]
                    ),
                    format!("{:.2}x", o.speedup),
                ));
                rows.push(Row::info(
                    4,
                    format!("{name}, {label}: efficiency"),
                    format!("{:.2}", o.efficiency),
                ));
            } else {
                rows.push(Row::target(
                    4,
                    format!("{name}, {label}, 50/50: speed-up over one device"),
                    format!("{:.2}x", o.speedup),
                    ">= 1.8x",
                    o.speedup >= 1.8,
                ));
                rows.push(Row::target(
                    4,
                    format!("{name}, {label}: efficiency"),
                    format!("{:.2}", o.efficiency),
                    ">= 0.90",
                    o.efficiency >= 0.90,
                ));
            }
            if !o.same_output {
                rows.push(Row::target(
                    4,
                    format!("{name}, {label}: split output equals one-device output"),
                    "no".into(),
                    "yes",
                    false,
                ));
            }
            let short = |n: &str| n.split('-').next().unwrap_or(n).to_string();
            cells.push(vec![
                spec.kernel.clone(),
                spec.ndrange_text(),
                label.to_string(),
                format!(
                    "{} / {}",
                    short(&o.device_names[0]),
                    short(&o.device_names[1])
                ),
                format!("{:.0} / {:.0}", o.single_ms[0], o.single_ms[1]),
                format!("{:.2} / {:.2}", o.shares[0], o.shares[1]),
                format!("{:.0}", o.split_ms),
                format!("{:.0} / {:.0}", o.split_kernel_ms[0], o.split_kernel_ms[1]),
                format!("{:.2}x", o.speedup),
                format!("{:.2}", o.efficiency),
                if o.same_output {
                    "yes".into()
                } else {
                    "NO".into()
                },
            ]);
            all.push(json!({ "kernel": spec.kernel, "ndrange": spec.ndrange_text(), "config": label, "env": env, "result": o }));
        }
    }
    let cap_after = cpu_capacity();
    rows.push(Row::info(
        4,
        "CPU capacity free for the bench before / after item 4 (2.00 = both cores idle)",
        format!("{cap_before:.2} / {cap_after:.2}"),
    ));
    details.push_str(&format!(
            "\nCo-execution (median launch wall of {} repeats, ms; kernel ms from profiling events; speed-up over the faster device alone)\n\n{}",
            scale.coexec_reps,
            detail(&["kernel", "global / local", "config", "devices (share order)", "alone", "shares", "split", "split kernels", "speed-up", "efficiency", "same output"], &cells)
        ));
    results.insert(
        "coexec".into(),
        json!({ "cpu_capacity_before": cap_before, "cpu_capacity_after": cap_after, "runs": all }),
    );
    Ok(())
}

/// The co-execution kernels: matmul, MDH and the random walk at sizes that
/// take about a second on one PoCL thread.
pub(crate) fn coexec_specs(
    corpus: &[clpart_tests::CorpusKernel],
    s: &Scale,
) -> Result<Vec<LaunchSpec>> {
    let find = |name: &str| -> Result<&clpart_tests::CorpusKernel> {
        corpus
            .iter()
            .find(|k| k.name == name)
            .with_context(|| format!("corpus kernel '{name}'"))
    };
    let spec =
        |name: &str, global: Vec<u64>, local: Vec<u64>, args: Vec<String>| -> Result<LaunchSpec> {
            let k = find(name)?;
            Ok(LaunchSpec {
                file: k.file(),
                source: k.source.clone(),
                build: vec![],
                kernel: name.into(),
                global,
                local,
                args,
            })
        };
    let n = s.matmul_n;
    let nn = n * n;
    let (pts, atoms) = (s.mdh_points, s.mdh_atoms);
    let groups = s.walk_items / 32;
    let mut mdh_args: Vec<String> = ["ax", "ay", "az", "charge", "size"]
        .iter()
        .enumerate()
        .map(|(i, a)| format!("{a}=rand:{atoms}:{}", i + 1))
        .collect();
    mdh_args.extend(
        ["gx", "gy", "gz"]
            .iter()
            .enumerate()
            .map(|(i, a)| format!("{a}=rand:{pts}:{}", i + 6)),
    );
    mdh_args.extend([
        format!("val=zeros:{pts}"),
        "pre1=0.5".into(),
        "xkappa=0.1".into(),
        format!("natoms={atoms}"),
    ]);
    Ok(vec![
        spec(
            "matmul",
            vec![n, n],
            vec![16, 16],
            vec![
                format!("c=zeros:{nn}"),
                format!("a=rand:{nn}:1"),
                format!("b=rand:{nn}:2"),
                format!("width={n}"),
            ],
        )?,
        spec("mdh", vec![pts], vec![64], mdh_args)?,
        spec(
            "random_walk",
            vec![s.walk_items],
            vec![32],
            vec![
                "bval=rand:4096:1".into(),
                format!("out=zeros:{groups}"),
                "gw=64".into(),
                "gh=64".into(),
                "nwalks=4".into(),
                format!("maxsteps={}", s.walk_steps),
                "seed=12345".into(),
            ],
        )?,
    ])
}
