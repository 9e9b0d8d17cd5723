//! A launch: its options, the host-array form [`launch`] and the launch
//! over resident buffers, which checks the launch, takes its schedule and
//! runs it split or unsplit, then verifies it when asked.
//!
//! The submodules: `options` ([`LaunchOptions`] and the memory cap they
//! set), `schedule` (the pure part: slices, ranges, read, write
//! and prefill sets, gluing, no OpenCL), `split` (the split run: phase 0,
//! phase 1 with its staged reads, the guard's verdict, record, the early
//! reads and the merge),
//! `unsplit` (the kernel whole on one device), `setargs` (how kernels'
//! arguments are set, the guard's flags and windows) and `report`
//! ([`RunReport`] and the other report types).

use std::time::Instant;

use crate::args::KernelArgs;
use crate::buffer::HostBuffer;
use crate::elem::ElemType;
use crate::error::{LaunchError, Result};
use crate::exec;
use crate::ndrange::NdRange;
use crate::plan::Plan;
use crate::resident::{gather_all_and_free, with_host_copies, DeviceBuffer, Residency};

mod options;
mod report;
mod schedule;
mod setargs;
mod split;
mod unsplit;

pub use options::LaunchOptions;
pub use report::{DeviceReport, Mismatch, RunReport, WholeRun};
pub(crate) use schedule::Schedules;
pub(crate) use setargs::{local_sink_bytes, push_extra_args, GUARD_FLAG_BYTES};
pub use unsplit::run_whole;

pub(crate) use report::add_gathered;
use schedule::{Footprint, Run};
use split::{run_split, SplitOutcome};
use unsplit::run_unsplit_resident;

/// Runs `plan`'s kernel over `nd` split across devices by `shares`
/// (`(device index, fraction)` pairs summing to 1).
///
/// Everything is checked before any device runs: the shares, the NDRange,
/// the arguments, that every buffer holds the elements the NDRange accesses,
/// the per-device memory cap; the subkernels are built (once per device).
/// Then each device gets buffers of its slice's ranges, non-blocking writes
/// of what it reads, its subkernel, and non-blocking reads of what it
/// writes, on its own queue; all devices are enqueued before the launcher
/// waits for any. Outputs are glued into `args`' buffers, bit-for-bit what
/// one device would produce. Kernels the range file marks unsplittable (or
/// whose launch-time assumptions fail while they write) run whole on the
/// device with the largest share, and the report says why.
pub fn launch(
    plan: &mut Plan,
    nd: &NdRange,
    args: &mut KernelArgs,
    shares: &[(usize, f64)],
    options: &LaunchOptions,
) -> Result<RunReport> {
    // The host form: each buffer becomes a resident buffer for this launch,
    // valid on the host, and what the devices wrote is gathered afterwards.
    // That work is the launch's too: its time joins the report's.
    let (t0, cl0) = (Instant::now(), exec::cl_time());
    let mut temps = lend_all(args);
    let mut refs: Vec<(u32, &mut DeviceBuffer)> = temps.iter_mut().map(|(i, b)| (*i, b)).collect();
    let (t1, cl1) = (Instant::now(), exec::cl_time());
    let result = launch_over(plan, nd, args, &mut refs, shares, options);
    let (t2, cl2) = (Instant::now(), exec::cl_time());
    drop(refs);
    let gathered = return_all(args, temps);
    let mut report = result?;
    add_gathered(&mut report, &gathered?);
    let (t3, cl3) = (Instant::now(), exec::cl_time());
    let own = (t1 - t0) + (t3 - t2);
    let own_cl = (cl1 - cl0) + (cl3 - cl2);
    report.wall_ms += own.as_secs_f64() * 1e3;
    report.host_us += own.saturating_sub(own_cl).as_secs_f64() * 1e6;
    Ok(report)
}

/// An empty buffer of `size`-byte elements, held by an argument while its
/// data is away (no allocation: the type has no name).
fn placeholder(size: u32) -> HostBuffer {
    HostBuffer::from_bytes(
        ElemType {
            name: String::new(),
            scalar: None,
            lanes: 1,
            size,
            fields: Vec::new(),
        },
        Vec::new(),
    )
}

/// [`launch`] over resident buffers (see [`crate::launch_resident`]): every
/// buffer argument must be bound; buffer arguments left unbound are made
/// resident for this launch only.
pub(crate) fn launch_over(
    plan: &mut Plan,
    nd: &NdRange,
    args: &mut KernelArgs,
    bufs: &mut [(u32, &mut DeviceBuffer)],
    shares: &[(usize, f64)],
    options: &LaunchOptions,
) -> Result<RunReport> {
    let unbound: Vec<u32> = args
        .infos()
        .iter()
        .filter(|i| args.buffer_at(i.index).is_some() && !bufs.iter().any(|b| b.0 == i.index))
        .map(|i| i.index)
        .collect();
    if !unbound.is_empty() {
        // The host copies go to temporary buffers for the launch: a buffer
        // the kernel writes is copied (on an error the argument keeps its
        // bytes as they were), one it only reads (or never touches) is
        // lent, since no launch changes its bytes, and given back whatever
        // happens.
        let written = |i: u32| {
            plan.array_of_arg
                .get(i as usize)
                .copied()
                .flatten()
                .is_some_and(|ai| plan.arrays[ai].writes)
        };
        let lent: Vec<bool> = unbound.iter().map(|&i| !written(i)).collect();
        let mut temps = lend(args, &unbound, written);
        let mut all: Vec<(u32, &mut DeviceBuffer)> =
            temps.iter_mut().map(|(i, b)| (*i, b)).collect();
        all.extend(bufs.iter_mut().map(|(i, b)| (*i, &mut **b)));
        let result = launch_over(plan, nd, args, &mut all, shares, options);
        drop(all);
        // What the devices wrote comes back to the host, counted in the
        // report as `launch` counts it.
        let result = result.and_then(|report| {
            gather_all_and_free(temps.iter_mut().map(|(_, b)| b)).map(|g| (report, g))
        });
        for ((i, mut b), lend) in temps.into_iter().zip(lent) {
            if result.is_ok() || lend {
                std::mem::swap(
                    args.buffer_at_mut(i).expect("a buffer argument"),
                    &mut b.host,
                );
            }
        }
        let (mut report, gathered) = result?;
        add_gathered(&mut report, &gathered);
        return Ok(report);
    }
    with_host_copies(args, bufs, |args, bufs| {
        let mut res: Vec<Option<&mut Residency>> = (0..args.infos().len()).map(|_| None).collect();
        for (i, b) in bufs.iter_mut() {
            res[*i as usize] = Some(&mut b.res);
        }
        launch_inner(plan, nd, args, &mut res, shares, options)
    })
}

/// Checks, before anything runs, that every device the launch may use (the
/// shares' and the verifying one) can run its NDRange
/// ([`NdRange::check_device`]) and hold each of its buffers whole (the
/// unsplit and verifying runs do).
fn check_devices(
    plan: &Plan,
    nd: &NdRange,
    args: &KernelArgs,
    shares: &[(usize, f64)],
    options: &LaunchOptions,
) -> Result<()> {
    let devices = shares.iter().map(|s| s.0).chain(options.verify_device);
    for d in devices {
        let dev = plan.runtime.device(d)?;
        nd.check_device(dev)?;
        for (name, b) in args.global_buffers() {
            let bytes = b.as_bytes().len() as u64;
            if dev.max_alloc_bytes > 0 && bytes > dev.max_alloc_bytes {
                return Err(LaunchError::BeyondDevice {
                    what: format!("buffer '{name}' of {bytes} bytes"),
                    device: dev.label(),
                    limit: format!("at most {} bytes in a buffer", dev.max_alloc_bytes),
                });
            }
        }
    }
    Ok(())
}

/// The launch proper, with every buffer's host copy in `args` and its
/// residency in `res` (by argument index).
fn launch_inner(
    plan: &mut Plan,
    nd: &NdRange,
    args: &mut KernelArgs,
    res: &mut [Option<&mut Residency>],
    shares: &[(usize, f64)],
    options: &LaunchOptions,
) -> Result<RunReport> {
    let t0 = Instant::now();
    let cl0 = exec::cl_time();
    nd.validate()?;
    // A kernel analyzed for fewer dimensions runs on an NDRange whose extra
    // trailing dimensions hold one work-item at offset 0 (hosts launch 1-D
    // kernels as `work_dim` 2 with global `[n, 1]`): every id and size the
    // analysis knows is the same there, `get_work_dim()` is unknown to it,
    // and the subkernels keep the launch's `work_dim`.
    if plan.kernel.work_dim != 0 && !nd.fits_work_dim(plan.kernel.work_dim) {
        return Err(LaunchError::NdRange {
            message: format!(
                "kernel '{}' was analyzed for {} dimensions, the ndrange has {}",
                plan.kernel.name,
                plan.kernel.work_dim,
                nd.work_dim()
            ),
        });
    }
    plan.check_args(args)?;
    check_devices(plan, nd, args, shares, options)?;
    let sched = Schedules::get(plan, nd, args, shares, options)?;
    let main_device = sched.main_device;
    let share_devices: Vec<usize> = shares.iter().map(|s| s.0).collect();
    let whole_slice = (0, sched.n_groups);

    let verify_device = options.verify_device.unwrap_or(main_device);
    // What verifying costs before the launch (the unsplit kernel's build,
    // the copy of the inputs) is not the launch's, and not in its wall.
    let (tv, clv) = (Instant::now(), exec::cl_time());
    if options.verify {
        plan.runtime.device(verify_device)?;
        exec::cl_timed(|| plan.whole_kernel(verify_device))?;
    }
    let original = options.verify.then(|| args.clone());
    let (verify_setup, verify_cl) = (tv.elapsed(), exec::cl_time() - clv);

    let mut report = match &sched.run {
        Run::Unsplit {
            reason,
            footprint,
            assumption_failed,
        } => {
            let mut r = run_unsplit_resident(
                plan,
                nd,
                args,
                res,
                (main_device, &share_devices),
                whole_slice,
                reason.clone(),
                footprint.clone(),
                options,
            )?;
            r.assumption_failed = *assumption_failed;
            r
        }
        Run::Split(split) => {
            // the split results kept, or discarded with the reason (and
            // whether the guard caught them) and the launch run unsplit
            let outcome = match run_split(plan, nd, args, res, split, sched.split_dim, options)? {
                SplitOutcome::Done(r) => Ok(r),
                SplitOutcome::GuardFired(fired) => Err((
                    format!(
                        "the run-time guard caught {} (an analysis defect); the split results were discarded",
                        fired.join(", ")
                    ),
                    true,
                )),
                SplitOutcome::Conflict(what) => Err((
                    format!("{what}: the split results were discarded (a write conflict between slices)"),
                    false,
                )),
            };
            match outcome {
                Ok(r) => r,
                Err((why, guard_fired)) => {
                    let footprint = Footprint::of(plan, args, &sched.base, options.exact_bytes);
                    let mut r = run_unsplit_resident(
                        plan,
                        nd,
                        args,
                        res,
                        (main_device, &share_devices),
                        whole_slice,
                        why,
                        footprint,
                        options,
                    )?;
                    r.guard_fired |= guard_fired;
                    r
                }
            }
        }
    };
    report.notes.splice(0..0, sched.notes.iter().cloned());
    let wall = t0.elapsed().saturating_sub(verify_setup);
    report.wall_ms = wall.as_secs_f64() * 1e3;
    let cl = (exec::cl_time() - cl0).saturating_sub(verify_cl);
    report.host_us = wall.saturating_sub(cl).as_secs_f64() * 1e6;

    if let Some(reference) = original {
        // the split results, read into a copy of the host copies (neither
        // recorded nor counted as moved)
        let mut got_args = args.clone();
        for (i, r) in res.iter().enumerate() {
            if let (Some(r), Some(host)) = (r, got_args.buffer_at_mut(i as u32)) {
                r.read_all_into(host)?;
            }
        }
        verify(plan, nd, &got_args, reference, verify_device, &mut report)?;
    }
    Ok(report)
}

/// Verifies a launch's outputs `got` against the unsplit kernel run on
/// `device` from the launch's inputs `inputs`, into `report.verified` and
/// `report.mismatch`. Devices of another kind may round differently (their
/// math libraries, fused multiply-adds): where the comparison fails, every
/// other device that took part runs the kernel unsplit too, and each
/// element must equal one of these runs (noted where that is what passed).
pub(crate) fn verify(
    plan: &mut Plan,
    nd: &NdRange,
    got: &KernelArgs,
    inputs: KernelArgs,
    device: usize,
    report: &mut RunReport,
) -> Result<()> {
    let others: Vec<usize> = if report.split {
        report
            .devices
            .iter()
            .filter(|d| d.work_groups > 0 && d.index != device)
            .map(|d| d.index)
            .collect()
    } else {
        Vec::new()
    };
    let pristine = (!others.is_empty()).then(|| inputs.clone());
    let mut reference = inputs;
    plan.run_whole(device, nd, &mut reference)?;
    let mut refs = vec![(device, reference)];
    let mut mismatch = first_mismatch(got, &refs);
    if let (Some(_), Some(pristine)) = (&mismatch, pristine) {
        for &d in &others {
            let mut r = pristine.clone();
            plan.run_whole(d, nd, &mut r)?;
            refs.push((d, r));
        }
        mismatch = first_mismatch(got, &refs);
        if mismatch.is_none() {
            let by: Vec<String> = others.iter().map(|d| d.to_string()).collect();
            report.notes.push(format!(
                "verified element by element: {} equal device {}'s own unsplit run and not device {device}'s (the devices round differently)",
                differing(got, &refs),
                by.join(" or "),
            ));
        }
    }
    report.verified = Some(mismatch.is_none());
    report.mismatch = mismatch;
    Ok(())
}

/// Every buffer argument's host copy moved into a buffer made for one
/// launch (see [`lend`]); [`return_all`] gives them back.
pub(crate) fn lend_all(args: &mut KernelArgs) -> Vec<(u32, DeviceBuffer)> {
    lend_all_but(args, &[])
}

/// [`lend_all`] but for the buffer arguments `skip` (resident ones).
pub(crate) fn lend_all_but(args: &mut KernelArgs, skip: &[u32]) -> Vec<(u32, DeviceBuffer)> {
    let indices: Vec<u32> = args
        .infos()
        .iter()
        .filter(|i| args.buffer_at(i.index).is_some() && !skip.contains(&i.index))
        .map(|i| i.index)
        .collect();
    lend(args, &indices, |_| false)
}

/// The host copies of buffer arguments `indices`, each in a buffer made for
/// one launch (valid on the host, gathered after): moved out of `args`,
/// which holds an empty placeholder meanwhile, or copied where `copy(i)`.
fn lend(
    args: &mut KernelArgs,
    indices: &[u32],
    copy: impl Fn(u32) -> bool,
) -> Vec<(u32, DeviceBuffer)> {
    indices
        .iter()
        .map(|&i| {
            let slot = args.buffer_at_mut(i).expect("a buffer argument");
            let host = if copy(i) {
                slot.clone()
            } else {
                std::mem::replace(slot, placeholder(slot.elem().size))
            };
            let mut b = DeviceBuffer::new(host);
            b.res.gather_after = true;
            (i, b)
        })
        .collect()
}

/// Gathers what the devices wrote into the buffers of [`lend_all`] and
/// frees their device copies, then gives the host copies back to `args`
/// (whatever the gather gives: its moves, or its error).
pub(crate) fn return_all(
    args: &mut KernelArgs,
    mut temps: Vec<(u32, DeviceBuffer)>,
) -> Result<Vec<(usize, u64, u64)>> {
    let gathered = gather_all_and_free(temps.iter_mut().map(|(_, b)| b));
    for (i, mut b) in temps {
        std::mem::swap(
            args.buffer_at_mut(i).expect("a buffer argument"),
            &mut b.host,
        );
    }
    gathered
}

/// The first output element of `got` that equals the element of none of
/// the references (each an unsplit run's arguments, on its device).
fn first_mismatch(got: &KernelArgs, refs: &[(usize, KernelArgs)]) -> Option<Mismatch> {
    for (bi, (name, g)) in got.global_buffers().enumerate() {
        let es = g.elem().size.max(1) as usize;
        let wants: Vec<&[u8]> = refs
            .iter()
            .filter_map(|(_, r)| r.global_buffers().nth(bi).map(|(_, w)| w.as_bytes()))
            .collect();
        let bytes = g.as_bytes();
        if wants.contains(&bytes) {
            continue;
        }
        for (i, e) in bytes.chunks(es).enumerate() {
            let at = i * es..i * es + e.len();
            if !wants.iter().any(|w| w.get(at.clone()) == Some(e)) {
                return Some(Mismatch {
                    array: name.to_string(),
                    elem_idx: i as u64,
                });
            }
        }
    }
    None
}

/// How many output elements of `got` differ from the first reference's
/// (and so equal another's), as "N elements of A, M of B".
fn differing(got: &KernelArgs, refs: &[(usize, KernelArgs)]) -> String {
    let mut parts = Vec::new();
    for (bi, (name, g)) in got.global_buffers().enumerate() {
        let es = g.elem().size.max(1) as usize;
        let Some((_, w)) = refs[0].1.global_buffers().nth(bi) else {
            continue;
        };
        let n = g
            .as_bytes()
            .chunks(es)
            .zip(w.as_bytes().chunks(es))
            .filter(|(a, b)| a != b)
            .count();
        if n > 0 {
            let s = if n == 1 { "" } else { "s" };
            parts.push(format!("{n} element{s} of {name}"));
        }
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::ArgValue;
    use ranges_format::{ArgInfo, ArgKind};

    fn args(out: &[f32], n: i32) -> KernelArgs {
        let infos = vec![
            ArgInfo {
                index: 0,
                name: "out".into(),
                kind: ArgKind::GlobalBuffer,
                elem_type: "float".into(),
                elem_size: 4,
                fields: Vec::new(),
            },
            ArgInfo {
                index: 1,
                name: "n".into(),
                kind: ArgKind::Scalar,
                elem_type: "int".into(),
                elem_size: 4,
                fields: Vec::new(),
            },
        ];
        let values = vec![
            ArgValue::Buffer(
                HostBuffer::zeros(ElemType::of_arg(&infos[0]), out.len() as u64).unwrap(),
            ),
            ArgValue::Scalar {
                bytes: n.to_le_bytes().to_vec(),
                int: Some(n.into()),
            },
        ];
        let mut a = KernelArgs::from_values("k", &infos, values).unwrap();
        let b = a.buffer_at_mut(0).unwrap().as_bytes_mut();
        for (i, v) in out.iter().enumerate() {
            b[i * 4..i * 4 + 4].copy_from_slice(&v.to_ne_bytes());
        }
        a
    }

    /// A split over devices that round differently verifies element by
    /// element: each element must equal one device's own unsplit run;
    /// anything else (here an element neither device gives) is a mismatch.
    #[test]
    fn verification_accepts_each_element_from_some_devices_unsplit_run() {
        let gpu = args(&[1.0, 2.0, 3.0000002, 4.0], 4);
        let cpu = args(&[1.0, 2.0, 3.0, 4.0000005], 4);
        let refs = vec![(0, gpu), (1, cpu)];
        // elements 0..3 from the GPU's slice, 3 from the CPU's
        let mixed = args(&[1.0, 2.0, 3.0000002, 4.0000005], 4);
        assert_eq!(first_mismatch(&mixed, &refs[..1]).unwrap().elem_idx, 3);
        assert_eq!(first_mismatch(&mixed, &refs), None);
        assert_eq!(differing(&mixed, &refs), "1 element of out");
        let wrong = args(&[1.0, 2.5, 3.0, 4.0], 4);
        let m = first_mismatch(&wrong, &refs).unwrap();
        assert_eq!((m.array.as_str(), m.elem_idx), ("out", 1));
    }
}
