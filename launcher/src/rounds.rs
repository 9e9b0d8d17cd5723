//! One launch in rounds (dynamic chunks for a single launch):
//! for a kernel run once on devices of unknown speed, an even split leaves
//! the faster devices idle while the slowest finishes. [`launch_in_rounds`]
//! first runs a small window of the split dimension's work-groups
//! ([`PROBE_FRACTION`] of them, at least [`MIN_PROBE_GROUPS`] per device)
//! at the balancer's shares (even when nothing is measured), which measures
//! every device's rate, then the rest of the NDRange at the measured shares.
//! Both rounds run over the same resident buffers: what a device received
//! in the probe (a matrix every slice reads, say) is not sent again.
//!
//! **When it pays.** A round costs each device its commands (transfers and
//! a kernel) and the launch a second wait. With two rounds that is a fixed
//! cost, against an imbalance that grows with the kernel's length, so the
//! rounds are taken only where the balancer knows nothing of the
//! configuration yet, the devices are not alike (reporting the same
//! resources, [`crate::DeviceInfo::alike`]: an even split is what a probe
//! would find, and a probe window of a kernel whose work-groups differ in
//! work, a triangular loop's, measures the window rather than the device)
//! and the split dimension has at least [`MIN_GROUPS_PER_DEVICE`]
//! work-groups per device (fewer cannot be cut finely enough to balance).
//! More than two rounds (guided self-scheduling) would follow drifting
//! speeds inside one launch at one more round's cost each; two rounds
//! measure and then balance, which is what a first launch lacks.
//!
//! **The guarantee.** Each round is an ordinary split launch of its window
//! (ranges from the same parametric analysis; guard, glue and merge as
//! always). Rounds are taken only where no array is both read and written:
//! a window's outputs are then never another window's inputs, and a round
//! whose guard fires (which re-runs the whole NDRange on one device) only
//! computes again what the rounds before it computed. With `verify`, the
//! result of all rounds is compared with unsplit runs at the end.

use std::time::Instant;

use crate::args::KernelArgs;
use crate::balance::Balancer;
use crate::error::Result;
use crate::exec;
use crate::launch::{
    add_gathered, launch_over, lend_all_but, return_all, verify, LaunchOptions, RunReport,
};
use crate::ndrange::NdRange;
use crate::plan::Plan;
use crate::resident::DeviceBuffer;

/// The probe round's share of the split dimension's work-groups.
pub const PROBE_FRACTION: f64 = 0.125;

/// The least work-groups each device gets in the probe round.
pub const MIN_PROBE_GROUPS: u64 = 2;

/// Rounds are taken only with at least this many work-groups per device
/// along the split dimension.
pub const MIN_GROUPS_PER_DEVICE: u64 = 16;

/// The probe round's window `[0, hi)` of the split dimension's work-groups,
/// or `None` where this launch is not run in rounds (see the module doc).
pub fn probe_window(plan: &Plan, nd: &NdRange, devices: &[usize]) -> Option<(u64, u64)> {
    if devices.len() < 2 || plan.unsplit_reason().is_some() || plan.group_window.is_some() {
        return None;
    }
    // devices alike start even: a probe would measure what is known
    if plan.runtime.alike(devices) {
        return None;
    }
    let devices = devices.len();
    if plan.arrays.iter().any(|a| a.reads && a.writes) {
        return None;
    }
    let dim = plan.kernel.split_dim?.min(nd.work_dim().saturating_sub(1));
    let n = nd.n_groups(dim);
    let d = devices as u64;
    if n < MIN_GROUPS_PER_DEVICE * d {
        return None;
    }
    let hi = ((n as f64 * PROBE_FRACTION).round() as u64)
        .max(MIN_PROBE_GROUPS * d)
        .min(n - 1);
    Some((0, hi))
}

/// Runs one launch in two rounds where [`probe_window`] allows it (else
/// one ordinary launch at the balancer's shares), folding what each round
/// measures into `balancer` under `key`. The report is the launch's: both
/// rounds' work-groups, bytes and times per device, the total wall, and a
/// note of the rounds.
pub fn launch_in_rounds(
    plan: &mut Plan,
    nd: &NdRange,
    args: &mut KernelArgs,
    balancer: &mut Balancer,
    key: &str,
    options: &LaunchOptions,
) -> Result<RunReport> {
    launch_resident_in_rounds(plan, nd, args, &mut [], balancer, key, options)
}

/// [`launch_in_rounds`] over the resident buffers `bufs` (the OpenCL
/// layer's, as [`crate::launch_resident`] takes them); the other buffer
/// arguments' host copies are lent to the rounds. `verify` compares host
/// copies, which resident buffers do not have: with it, or where
/// [`probe_window`] says no, this is one [`crate::launch_resident`] at the
/// balancer's shares.
pub fn launch_resident_in_rounds(
    plan: &mut Plan,
    nd: &NdRange,
    args: &mut KernelArgs,
    bufs: &mut [(u32, &mut DeviceBuffer)],
    balancer: &mut Balancer,
    key: &str,
    options: &LaunchOptions,
) -> Result<RunReport> {
    let window =
        probe_window(plan, nd, balancer.devices()).filter(|_| bufs.is_empty() || !options.verify);
    let Some((_, probe_hi)) = window else {
        let shares = balancer.shares(key);
        let r = if bufs.is_empty() {
            crate::launch(plan, nd, args, &shares, options)?
        } else {
            launch_over(plan, nd, args, bufs, &shares, options)?
        };
        balancer.observe(key, &r);
        return Ok(r);
    };
    let t0 = Instant::now();
    let cl0 = exec::cl_time();
    let original = options.verify.then(|| args.clone());
    let t_verify = t0.elapsed();
    let round_options = LaunchOptions {
        verify: false,
        ..options.clone()
    };
    let dim = plan.kernel.split_dim.unwrap_or(0).min(nd.work_dim() - 1);
    let n = nd.n_groups(dim);
    let resident: Vec<u32> = bufs.iter().map(|(i, _)| *i).collect();
    let mut temps = lend_all_but(args, &resident);
    let mut refs: Vec<(u32, &mut DeviceBuffer)> = temps.iter_mut().map(|(i, b)| (*i, b)).collect();
    refs.extend(bufs.iter_mut().map(|(i, b)| (*i, &mut **b)));
    let mut reports: Vec<(RunReport, Vec<(usize, f64)>)> = Vec::new();
    let mut result = Ok(());
    for window in [(0, probe_hi), (probe_hi, n)] {
        let shares = balancer.split_shares(key);
        plan.set_group_window(Some(window));
        let r = launch_over(plan, nd, args, &mut refs, &shares, &round_options);
        plan.set_group_window(None);
        match r {
            Ok(r) => {
                balancer.observe_rates(key, &r);
                // A round whose guard fired ran the whole NDRange on one
                // device: nothing is left to run.
                let done = r.guard_fired || !r.split;
                reports.push((r, shares));
                if done {
                    break;
                }
            }
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    drop(refs);
    let gathered = return_all(args, temps);
    result?;
    let gathered = gathered?;
    let mut report = combine(&reports, probe_hi, n);
    add_gathered(&mut report, &gathered);
    let wall = t0.elapsed().saturating_sub(t_verify);
    report.wall_ms = wall.as_secs_f64() * 1e3;
    report.host_us = wall.saturating_sub(exec::cl_time() - cl0).as_secs_f64() * 1e6;
    if let Some(inputs) = original {
        let device = reports
            .first()
            .and_then(|(_, s)| s.iter().max_by(|a, b| a.1.total_cmp(&b.1)))
            .map_or(0, |s| s.0);
        verify(plan, nd, args, inputs, device, &mut report)?;
    }
    Ok(report)
}

/// One report of the rounds: per device the sums of work-groups, bytes,
/// commands and times; the split dimension's slices cover each device's
/// work-groups of both rounds.
fn combine(reports: &[(RunReport, Vec<(usize, f64)>)], probe_hi: u64, n_groups: u64) -> RunReport {
    let mut out = reports[0].0.clone();
    if reports.len() == 1 {
        return out;
    }
    for (r, _) in &reports[1..] {
        for d in &r.devices {
            match out.devices.iter_mut().find(|x| x.index == d.index) {
                Some(x) => {
                    x.work_groups += d.work_groups;
                    x.slice = (x.slice.0.min(d.slice.0), x.slice.1.max(d.slice.1));
                    x.bytes_to_device += d.bytes_to_device;
                    x.bytes_from_device += d.bytes_from_device;
                    x.commands += d.commands;
                    x.kernel_ms += d.kernel_ms;
                    x.busy_ms += d.busy_ms;
                }
                None => out.devices.push(d.clone()),
            }
        }
        out.bytes_total += r.bytes_total;
        // (each round's footprint is exact for its window; their sum counts
        // twice what both rounds read, and the union is not counted)
        out.bytes_exact = None;
        out.guard_fired |= r.guard_fired;
        out.assumption_failed |= r.assumption_failed;
        out.split &= r.split;
        for note in &r.notes {
            if !out.notes.contains(note) {
                out.notes.push(note.clone());
            }
        }
    }
    let shares = |s: &[(usize, f64)]| {
        s.iter()
            .map(|(d, x)| format!("{d}:{x:.3}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    out.notes.push(format!(
        "in two rounds: work-groups [0, {probe_hi}) of {n_groups} at shares {} measured the devices, the rest ran at {}",
        shares(&reports[0].1),
        shares(&reports[1].1)
    ));
    out
}
