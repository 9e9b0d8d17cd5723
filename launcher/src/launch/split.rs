//! The split run over resident buffers ([`run_split`]): phase 0 on the host
//! (gather what the devices need, allocate from the devices' pools, the
//! transfer commands, the guard's backups), phase 1 (every device's
//! transfers, subkernel, guard flags and staged reads, each device enqueued
//! and finished from a thread of its own), the guard's verdict, the record
//! of what each device now holds, the early reads taken by the host, and
//! the merge on the host.
//!
//! Phase 1 is one command stream per device with one wait: what comes back
//! (merged arrays' write ranges; for a host-array launch, each written set
//! of one run) is read into staging right after the kernel and its flags,
//! and trusted only after the guard's verdict. The subkernel's extra
//! arguments are kept with the schedule ([`Split::extras`]).
//!
//! The phases live in submodules: `placement` (phase 0), `streams`
//! (phase 1), `guard` (the verdict and the restore when it fires),
//! `outputs` (the record, the early reads, the merge).

mod guard;
mod outputs;
mod placement;
mod streams;

use std::sync::Arc;

use opencl3::memory::ClMem;

use super::options::{check_cap, LaunchOptions};
use super::report::{add_gathered, RunReport};
use super::schedule::{range_runs, DevArray, DevWork, Glue, Split};
use super::setargs::{local_window, GUARD_FLAG_BYTES};
use crate::args::KernelArgs;
use crate::coherence::Holder;
use crate::error::{LaunchError, Result};
use crate::exec::{self, HostRegion};
use crate::ndrange::NdRange;
use crate::plan::{ExtraValue, Plan, Window, NO_WINDOW};
use crate::resident::Residency;
use crate::runtime::DeviceCtx;
use guard::{guard_verdict, restore};
use outputs::{conflict, merge, record, staged_reads, take_early_reads};
pub(super) use placement::ensure_alloc;
use placement::{phase0, Fresh, Phase0};
use streams::{phase1, Enqueued, Transfers};

/// What [`run_split`] ended with (once per launch: the report is not
/// boxed, which would cost an allocation).
#[allow(clippy::large_enum_variant)]
pub(super) enum SplitOutcome {
    Done(RunReport),
    /// The run-time guard caught these accesses; nothing reached the host.
    GuardFired(Vec<String>),
    /// Two devices' writes conflict ([`crate::conflict`]); nothing reached
    /// the host.
    Conflict(String),
}

/// Runs the subkernels of `split` on their devices over resident buffers,
/// in the phases of the module doc.
pub(super) fn run_split(
    plan: &mut Plan,
    nd: &NdRange,
    args: &mut KernelArgs,
    res: &mut [Option<&mut Residency>],
    split: &Split,
    split_dim: u32,
    options: &LaunchOptions,
) -> Result<SplitOutcome> {
    let Split {
        works,
        glue,
        staging_len,
        footprint,
        kept,
        ..
    } = split;
    prepare(plan, res, works, options)?;

    // Built: from here on the plan is only read. Its arguments are those of
    // `args` (`Plan::check_args`: names, kinds and sizes), borrowed apart.
    let plan: &Plan = plan;
    let guarded = !options.unchecked && plan.guard.is_ok();
    let mut gathered: Vec<(usize, u64, u64)> = Vec::new();

    let ctx_of: Vec<Arc<DeviceCtx>> = works
        .iter()
        .map(|w| plan.kernels[&w.device].ctx.clone())
        .collect();
    let mut ctxs: Vec<_> = ctx_of.clone();
    ctxs.sort_by_key(|c| c.info.index);
    ctxs.dedup_by_key(|c| c.info.index);
    let _busy: Vec<_> = ctxs.iter().map(|c| c.take()).collect();
    let grow = options.mem_cap_bytes.is_none();
    // What this schedule's launches kept: the staging buffers, and for
    // each array whose buffer starts fresh what a launch does to it.
    let (mut staging, mut fresh) = {
        let mut k = kept.lock().unwrap_or_else(|p| p.into_inner());
        let fresh: Vec<Option<Fresh>> = plan
            .arrays
            .iter()
            .enumerate()
            .map(|(ai, a)| {
                let r = res[a.arg_index as usize].as_deref().expect("checked above");
                r.is_fresh()
                    .then(|| k.fresh.get(ai).cloned().unwrap_or_default())
            })
            .collect();
        (std::mem::take(&mut k.staging), fresh)
    };
    // A replayed array's bookkeeping is the kept one, set when the launch
    // has succeeded.
    let replay: Vec<bool> = fresh
        .iter()
        .map(|f| f.as_ref().is_some_and(|f| f.after.is_some()))
        .collect();
    let Phase0 {
        placed,
        sends,
        backups,
    } = phase0(
        plan,
        args,
        res,
        works,
        glue,
        &ctx_of,
        grow,
        // (a conflict discards the launch as the guard does)
        guarded || glue.contains(&Glue::Checked),
        &mut gathered,
        &mut fresh,
    )?;
    let mems: Vec<Vec<opencl3::types::cl_mem>> = works
        .iter()
        .map(|w| {
            plan.arrays
                .iter()
                .map(|a| {
                    res[a.arg_index as usize]
                        .as_deref()
                        .expect("checked above")
                        .allocs[&w.device]
                        .mem
                        .get()
                })
                .collect()
        })
        .collect();

    // Order matters: memory that enqueued commands use (staging, flags,
    // backups) lives here, longer than the Finisher of each phase, so that
    // on an early return the Finisher waits for the queues before that
    // memory is dropped.
    let extras = split.extras(plan, nd, args, split_dim, &placed);
    let mut staging_lens = staging_len.clone();
    let staged = staged_reads(plan, res, works, glue, &mut staging_lens);
    // (a staged read fills its buffer whole before anything reads it: a
    // kept buffer's old bytes never show)
    staging.resize_with(staging_lens.len(), Vec::new);
    for (v, &n) in staging.iter_mut().zip(&staging_lens) {
        if n > v.capacity() {
            // zeroed by the allocator (fresh pages for a large one), not
            // written twice
            *v = vec![0; n];
        } else {
            v.resize(n, 0);
        }
    }
    let stage_regions: Vec<HostRegion> = staging.iter_mut().map(|v| HostRegion::of(v)).collect();
    let mut flags: Vec<[u8; GUARD_FLAG_BYTES]> = vec![[0; GUARD_FLAG_BYTES]; works.len()];
    let enqueued = phase1(
        plan,
        nd,
        args,
        works,
        split_dim,
        guarded,
        &ctx_of,
        Transfers {
            sends: &sends,
            placed: &placed,
            mems: &mems,
            extras: &extras,
            staged: &staged,
            stage: &stage_regions,
        },
        &mut flags,
    );
    let Enqueued {
        flag_bufs,
        kernel_events,
        mut dev_reports,
        spans,
    } = match enqueued {
        Ok(e) => e,
        Err(e) => {
            // A device failed: what any device may have written is no longer
            // trusted there; elements no other holder has are lost.
            // (A replayed array's devices hold nothing valid yet.)
            for w in works {
                for (ai, a) in plan.arrays.iter().enumerate() {
                    let r = res[a.arg_index as usize]
                        .as_deref_mut()
                        .expect("checked above");
                    r.coh
                        .invalidate(Holder::Device(w.device), &range_runs(w.arrays[ai].write_r));
                }
            }
            return Err(e);
        }
    };
    // The host copies went to the devices (a replayed array's record comes
    // at the end; until then its devices hold nothing valid).
    for (ai, a) in plan.arrays.iter().enumerate() {
        if replay[ai] {
            continue;
        }
        let r = res[a.arg_index as usize]
            .as_deref_mut()
            .expect("checked above");
        for (wi, w) in works.iter().enumerate() {
            r.coh
                .copied(Holder::Device(w.device), &sends[ai].to_device[wi]);
        }
    }
    if guarded {
        // The guard's verdict comes before any output is trusted.
        let fired = guard_verdict(plan, works, &flags);
        if !fired.is_empty() {
            restore(plan, res, works, &ctx_of, &backups)?;
            exec::release((flag_bufs, kernel_events, backups));
            return Ok(SplitOutcome::GuardFired(fired));
        }
    }
    if let Some(c) = conflict(plan, args, works, glue, &staging) {
        restore(plan, res, works, &ctx_of, &backups)?;
        exec::release((flag_bufs, kernel_events, backups));
        return Ok(SplitOutcome::Conflict(c));
    }
    exec::release(backups);
    if guarded {
        // Read back and clear: they hold zeros for the next launch.
        for ((fb, w), f) in flag_bufs.into_iter().zip(works).zip(&flags) {
            if let (Some(fb), true) = (fb, f.iter().all(|&b| b == 0)) {
                exec::give_zero_flags(&plan.kernels[&w.device].ctx, fb);
            }
        }
    } else {
        exec::release(flag_bufs);
    }
    let done = (|| -> Result<()> {
        record(plan, res, works, glue, &replay);
        take_early_reads(plan, args, res, &staged, &staging, &replay)?;
        for (((r, ev), w), span) in dev_reports
            .iter_mut()
            .zip(&kernel_events)
            .zip(works)
            .zip(&spans)
        {
            if let Some(ev) = ev {
                let ctx = &plan.kernels[&w.device].ctx;
                r.kernel_ms = exec::kernel_ms(ctx, ev)?;
                r.busy_ms = span.busy_ms(ctx, ev)?;
            }
        }
        exec::release(kernel_events);
        exec::release(spans);
        merge(plan, args, res, works, glue, &staging, &replay);
        Ok(())
    })();
    // A replayed array now holds what the first launch left (its elements
    // all lost if this one failed after the verdict: never stale bytes); a
    // fresh one's first successful launch leaves it to the next ones.
    for (ai, a) in plan.arrays.iter().enumerate() {
        let Some(f) = &mut fresh[ai] else {
            continue;
        };
        let r = res[a.arg_index as usize]
            .as_deref_mut()
            .expect("checked above");
        match (&f.after, &done) {
            (Some(after), Ok(())) => r.coh.clone_from(after),
            (Some(_), Err(_)) => r.coh.lose(&r.coh.all()),
            (None, Ok(())) => f.after = Some(Arc::new(r.coh.clone())),
            (None, Err(_)) => {}
        }
    }
    done?;
    {
        let mut k = kept.lock().unwrap_or_else(|p| p.into_inner());
        // (large staging is not worth holding between launches: its
        // allocation is small beside the transfers that fill it)
        if staging.iter().map(Vec::len).sum::<usize>() <= MAX_KEPT_STAGING_BYTES {
            k.staging = staging;
        }
        if fresh.iter().any(|f| f.is_some()) {
            k.fresh.resize_with(fresh.len(), Fresh::default);
            for (kf, f) in k.fresh.iter_mut().zip(fresh) {
                if let Some(f) = f {
                    *kf = f;
                }
            }
        }
    }

    let mut report = RunReport {
        kernel: plan.kernel.name.clone(),
        ndrange: nd.clone(),
        split: true,
        splittable: plan.kernel.splittable,
        split_dim: Some(split_dim),
        reason: None,
        devices: dev_reports,
        bytes_total: 0,
        bytes_whole_buffers: footprint.whole_bytes,
        bytes_exact: footprint.exact,
        wall_ms: 0.0,
        host_us: 0.0,
        verified: None,
        mismatch: None,
        notes: footprint.notes.clone(),
        guard_fired: false,
        assumption_failed: false,
    };
    report.bytes_total = report
        .devices
        .iter()
        .map(|d| d.bytes_to_device + d.bytes_from_device)
        .sum();
    add_gathered(&mut report, &gathered);
    Ok(SplitOutcome::Done(report))
}

/// Before any device runs: the memory cap of every device, then the
/// subkernels built, and every array bound to a resident buffer.
fn prepare(
    plan: &mut Plan,
    res: &[Option<&mut Residency>],
    works: &[DevWork],
    options: &LaunchOptions,
) -> Result<()> {
    // memory cap, then build: all before any device runs
    for w in works {
        let needed: u64 = w
            .arrays
            .iter()
            .zip(&plan.arrays)
            .map(|(da, a)| da.cover.map_or(1, |(l, u)| (u - l + 1) as u64) * a.elem_size)
            .sum();
        check_cap(plan, w.device, needed, options)?;
    }
    let unchecked = options.unchecked || plan.guard.is_err();
    for w in works {
        exec::cl_timed(|| plan.sub_kernel(w.device, unchecked))?;
    }
    for a in &plan.arrays {
        if res.get(a.arg_index as usize).is_none_or(|r| r.is_none()) {
            return Err(LaunchError::Buffer {
                message: format!("array '{}' has no resident buffer", a.name),
            });
        }
    }
    Ok(())
}

/// Most bytes of staging buffers a schedule keeps for its next launch
/// ([`Kept::staging`]): enough for the small launches whose host time they
/// save, not a copy of a large output held between launches.
const MAX_KEPT_STAGING_BYTES: usize = 1 << 20;

/// What the launches of one split schedule keep for the next
/// ([`Split::kept`]).
#[derive(Default)]
pub(crate) struct Kept {
    /// The last launch's staging buffers, when they hold at most
    /// [`MAX_KEPT_STAGING_BYTES`].
    staging: Vec<Vec<u8>>,
    /// Per array of the plan, what a launch does to it when its buffer
    /// starts fresh (empty until a launch has had one).
    fresh: Vec<Fresh>,
}

/// The guard window of an array on one device: what the slice may read and
/// write, relative to its device buffer.
fn split_window(da: &DevArray, (base, extent): (i64, u64)) -> Window {
    let rel = |r: Option<(i64, i64)>| r.map_or((0, 0), |(l, u)| (l - base, u - base + 1));
    Window {
        base,
        read: rel(da.read_r),
        write: rel(da.write_r),
        extent: extent as i64,
        boxes: da.boxes.clone(),
    }
}

impl Split {
    /// The subkernel's extra arguments of each device (the guard's windows
    /// relative to each allocation, the slice's parameters): a function of
    /// the schedule and where the allocations start and end (`placed`), so
    /// kept with the schedule and made again only when `placed` changes.
    fn extras(
        &self,
        plan: &Plan,
        nd: &NdRange,
        args: &KernelArgs,
        split_dim: u32,
        placed: &[Vec<(i64, u64)>],
    ) -> Arc<Vec<Vec<ExtraValue>>> {
        let mut cache = self.extras.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((p, e)) = cache.as_ref() {
            if p.as_slice() == placed {
                return e.clone();
            }
        }
        let extras: Vec<Vec<ExtraValue>> = self
            .works
            .iter()
            .zip(placed)
            .map(|(w, placed)| {
                let windows: Vec<Window> = plan
                    .array_of_arg
                    .iter()
                    .enumerate()
                    .map(|(i, ai)| match ai {
                        Some(ai) => split_window(&w.arrays[*ai], placed[*ai]),
                        None => local_window(args, i as u32),
                    })
                    .collect();
                plan.extra_values(nd, split_dim, w.lo, |i| {
                    windows.get(i as usize).unwrap_or(&NO_WINDOW)
                })
            })
            .collect();
        let extras = Arc::new(extras);
        *cache = Some((placed.to_vec(), extras.clone()));
        extras
    }
}
