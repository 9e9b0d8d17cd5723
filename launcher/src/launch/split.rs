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

use std::sync::Arc;
use std::time::Instant;

use opencl3::event::Event;
use opencl3::memory::{Buffer, ClMem};

use super::check_cap;
use super::report::{add_gathered, DeviceReport, RunReport};
use super::schedule::{range_runs, DevArray, DevWork, Glue, Split};
use super::setargs::{
    guard_bits, guarded_arg, local_window, push_extra_args, scalar_values, GUARD_FLAG_BYTES,
};
use super::LaunchOptions;
use crate::args::KernelArgs;
use crate::coherence::{Coherence, Holder};
use crate::error::{LaunchError, Result};
use crate::exec::{self, Finisher, HostRegion, SetArg};
use crate::ndrange::NdRange;
use crate::plan::{DeviceKernels, ExtraValue, Plan, Window, GUARD_SINK, NO_WINDOW};
use crate::resident::{DevAlloc, Residency};
use crate::runs::{Rect, Runs, COST_MODEL};
use crate::runtime::DeviceCtx;

/// What [`run_split`] ended with (once per launch: the report is not
/// boxed, which would cost an allocation).
#[allow(clippy::large_enum_variant)]
pub(super) enum SplitOutcome {
    Done(RunReport),
    /// The run-time guard caught these accesses; nothing reached the host.
    GuardFired(Vec<String>),
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
        guarded,
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

/// What phase 0 leaves for phase 1.
struct Phase0 {
    /// Per device (work) and array: the first element and the elements of
    /// its allocation (`DevAlloc::base`, `DevAlloc::extent`).
    placed: Vec<Vec<(i64, u64)>>,
    /// Per array: what it sends each device.
    sends: Vec<Arc<ArraySends>>,
    /// With the guard, copies of what only the device holds in its write
    /// window.
    backups: Vec<Backup>,
}

/// What a split launch sends one array, per device (work).
pub(crate) struct ArraySends {
    /// The elements the device lacks, as the commands send them (gaps
    /// bridged included).
    to_device: Vec<Runs>,
    /// The host-to-device commands.
    rects: Vec<Vec<Rect>>,
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

/// What a split launch does to an array whose buffer starts fresh
/// ([`Residency::is_fresh`]: valid on the host only, no allocation; the
/// host-array form's buffers). From that start the bookkeeping (the
/// gathers' plans, the commands' cost model, what each holder holds
/// afterwards) depends on the schedule alone: the first launch's is kept
/// and the next ones replay it instead of computing it again. A fresh
/// buffer has nothing to gather and nothing only a device holds (no
/// backup); its allocations are made anew at every launch.
#[derive(Clone, Default)]
struct Fresh {
    /// Phase 0's commands.
    sends: Option<Arc<ArraySends>>,
    /// The coherence after a launch that the guard let through.
    after: Option<Arc<Coherence>>,
}

/// Phase 0 (host): gathers on the host what the devices need and only
/// other devices hold, and what a merge compares against; allocates; makes
/// the commands; with the guard, backs up what only a device holds in its
/// write window. `gathered` gets the device-to-host bytes. A fresh array
/// takes its commands from `fresh` (kept by an earlier launch), or leaves
/// them there.
#[allow(clippy::too_many_arguments)]
fn phase0(
    plan: &Plan,
    args: &mut KernelArgs,
    res: &mut [Option<&mut Residency>],
    works: &[DevWork],
    glue: &[Glue],
    ctx_of: &[Arc<DeviceCtx>],
    grow: bool,
    guarded: bool,
    gathered: &mut Vec<(usize, u64, u64)>,
    fresh: &mut [Option<Fresh>],
) -> Result<Phase0> {
    let n_arrays = plan.arrays.len();
    let mut placed: Vec<Vec<(i64, u64)>> = vec![vec![(0, 0); n_arrays]; works.len()];
    let mut sends: Vec<Arc<ArraySends>> = Vec::with_capacity(n_arrays);
    for ai in 0..n_arrays {
        let a = &plan.arrays[ai];
        let r = res[a.arg_index as usize]
            .as_deref_mut()
            .expect("checked above");
        let host = args
            .buffer_at_mut(a.arg_index)
            .expect("checked: array arguments are buffers");
        let es = a.elem_size;
        let kept = fresh[ai].as_ref().and_then(|f| f.sends.clone());
        let mut to_device: Vec<Runs> = Vec::new();
        if kept.is_none() {
            let mut want = Runs::new();
            for w in works {
                let da = &w.arrays[ai];
                let need = da.read_set.union(&da.prefill);
                let missing = need.subtract(&r.coh.valid(Holder::Device(w.device)));
                want = want.union(&missing);
                to_device.push(missing);
            }
            if glue[ai] == Glue::DiffMerge {
                for w in works {
                    want = want.union(&w.arrays[ai].write_set);
                }
            }
            gathered.extend(r.gather(host.as_bytes_mut(), es, &want)?);
        }
        for (wi, w) in works.iter().enumerate() {
            let da = &w.arrays[ai];
            match da.cover {
                Some(cover) => gathered.extend(ensure_alloc(
                    r,
                    &ctx_of[wi],
                    host.as_bytes_mut(),
                    (es, a.align as i64),
                    cover,
                    grow,
                )?),
                // untouched: any allocation will do (a placeholder when none)
                None if r.allocs.contains_key(&w.device) => {}
                None => gathered.extend(ensure_alloc(
                    r,
                    &ctx_of[wi],
                    host.as_bytes_mut(),
                    (es, 1),
                    (0, 0),
                    false,
                )?),
            }
            // (an allocation keeps at least `cover`, which holds what the
            // device needs: `to_device` stays as computed above)
            let alloc = &r.allocs[&w.device];
            placed[wi][ai] = (alloc.base, alloc.extent);
        }
        // The commands: what each device lacks, gaps bridged where the host
        // holds them and a gap costs less than a command (`Runs::transfers`).
        let s = match kept {
            Some(s) => s,
            None => {
                let mut rects = Vec::with_capacity(works.len());
                for (w, to) in works.iter().zip(to_device.iter_mut()) {
                    let fill = r
                        .coh
                        .valid(Holder::Host)
                        .intersect(&range_runs(w.arrays[ai].cover));
                    let rs = to.transfers(&fill, es, COST_MODEL);
                    *to = Rect::union_of(&rs);
                    rects.push(rs);
                }
                let s = Arc::new(ArraySends { to_device, rects });
                if let Some(f) = &mut fresh[ai] {
                    f.sends = Some(s.clone());
                }
                s
            }
        };
        sends.push(s);
    }

    // Backups of what only the device holds in its write window.
    let mut backups: Vec<Backup> = Vec::new();
    if guarded {
        for (wi, w) in works.iter().enumerate() {
            for (ai, a) in plan.arrays.iter().enumerate() {
                let Some((l, u)) = w.arrays[ai].write_r else {
                    continue;
                };
                let arg = a.arg_index as usize;
                let r = res[arg].as_deref().expect("checked above");
                let only = r.coh.exclusive(Holder::Device(w.device));
                if only.is_empty() {
                    continue;
                }
                let kept = Runs::interval(l, u).intersect(&only);
                let Some((kl, ku)) = kept.hull() else {
                    continue;
                };
                let alloc = &r.allocs[&w.device];
                let len = ((ku - kl + 1) as u64 * a.elem_size) as usize;
                let mem = exec::alloc(&ctx_of[wi], len)?;
                exec::release(exec::copy(
                    &ctx_of[wi],
                    &alloc.mem,
                    ((kl - alloc.base) as u64 * a.elem_size) as usize,
                    &mem,
                    0,
                    len,
                )?);
                backups.push(Backup {
                    work: wi,
                    array: ai,
                    lo: kl,
                    kept,
                    mem,
                });
            }
        }
    }
    Ok(Phase0 {
        placed,
        sends,
        backups,
    })
}

/// What phase 1 leaves, per device (work): its guard flags' buffer, its
/// kernel's event and its report so far.
struct Enqueued {
    flag_bufs: Vec<Option<Buffer<u8>>>,
    kernel_events: Vec<Option<Event>>,
    dev_reports: Vec<DeviceReport>,
    /// Per device, what its busy time is measured from.
    spans: Vec<Span>,
}

/// A device's commands of a launch, for its busy time
/// ([`DeviceReport::busy_ms`]): its first command before the kernel and
/// its last one after (`None`: the kernel itself), and the host's time
/// enqueueing them.
#[derive(Default)]
struct Span {
    first: Option<Event>,
    last: Option<Event>,
    host_ms: f64,
}

impl Span {
    /// The busy time, once the queue is finished.
    fn busy_ms(&self, ctx: &DeviceCtx, kernel: &Event) -> Result<f64> {
        let span = exec::span_ms(
            ctx,
            self.first.as_ref().unwrap_or(kernel),
            self.last.as_ref().unwrap_or(kernel),
        )?;
        Ok(span.max(self.host_ms))
    }
}

/// Phase 1: every device's transfers and kernel (and its guard flags, read
/// into `flags`), each device enqueued from a thread of its own: some
/// drivers run a kernel while it is enqueued (PoCL's `basic`), which would
/// otherwise hold back the devices enqueued after it (BENCHMARKS.md §7).
/// Returns once every queue is finished; an error means a device failed.
#[allow(clippy::too_many_arguments)]
fn phase1(
    plan: &Plan,
    nd: &NdRange,
    args: &mut KernelArgs,
    works: &[DevWork],
    split_dim: u32,
    guarded: bool,
    ctx_of: &[Arc<DeviceCtx>],
    transfers: Transfers<'_>,
    flags: &mut [[u8; GUARD_FLAG_BYTES]],
) -> Result<Enqueued> {
    let Transfers {
        sends,
        placed,
        mems,
        extras,
        staged,
        stage,
    } = transfers;
    let infos = &plan.kernel.args;
    let scalars = scalar_values(args);
    let sink = if guarded { GUARD_SINK } else { 0 };
    let mut host: Vec<Option<HostRegion>> = Vec::with_capacity(infos.len());
    for i in 0..infos.len() {
        host.push(
            args.buffer_at_mut(i as u32)
                .map(|b| HostRegion::of(b.as_bytes_mut())),
        );
    }
    let array_of_arg = &plan.array_of_arg;
    let extra_names = plan.extra_names();

    // Order matters: memory that enqueued commands use is declared before
    // the Finisher (see `run_split`).
    let mut flag_bufs: Vec<Option<Buffer<u8>>> = Vec::with_capacity(works.len());
    let mut kernel_events = Vec::with_capacity(works.len());
    let mut fin = Finisher::new();
    let mut dev_reports = Vec::with_capacity(works.len());
    for c in ctx_of {
        fin.add(c);
    }
    let host_ref = SharedRegions(&host);
    let stage_ref = SharedRegions(stage);
    let arrays = &plan.arrays;
    let sends_ref = sends;
    let placed_ref = placed;
    // `wait`: the device's queue is finished here (else only flushed).
    let enqueue = |wi: usize,
                   w: &DevWork,
                   dk: OneThread<(&DeviceKernels, &[opencl3::types::cl_mem])>,
                   flags_wi: &mut [u8; GUARD_FLAG_BYTES],
                   wait: bool|
     -> Result<(Option<Buffer<u8>>, Event, DeviceReport, Span)> {
        let host_t0 = Instant::now();
        let mut span = Span::default();
        let host = host_ref.get();
        let (dk, mems) = dk.0;
        let ctx = &dk.ctx;
        let kernel = if guarded {
            dk.sub.as_ref()
        } else {
            dk.sub_unchecked.as_ref()
        }
        .expect("built above");
        let mut to = 0u64;
        for (ai, a) in arrays.iter().enumerate() {
            let src = host[a.arg_index as usize].expect("checked: array arguments are buffers");
            for rect in &sends_ref[ai].rects[wi] {
                // SAFETY: the copy is bounds-checked against the host and the
                // device buffer; host buffers are not touched until every
                // queue is finished (Finisher), and phase 1 only reads them.
                let buf = ManuallyDropped::new(mems[ai]);
                let ev = unsafe {
                    exec::write_rect(ctx, &buf, placed_ref[wi][ai].0, src, rect, a.elem_size)?
                };
                if span.first.is_none() {
                    span.first = Some(ev);
                } else {
                    exec::release(ev);
                }
                to += rect.n_elems() * a.elem_size;
            }
        }
        let flag_buf = if guarded {
            Some(exec::zero_flags(ctx, GUARD_FLAG_BYTES)?)
        } else {
            None
        };
        let mut set: Vec<(&str, SetArg<'_>)> = Vec::with_capacity(infos.len() + extra_names.len());
        set.extend(infos.iter().enumerate().map(|(i, info)| {
            let mem = array_of_arg[i].map(|ai| mems[ai]);
            (
                info.name.as_str(),
                guarded_arg(&scalars[i], mem, sink, info.elem_size),
            )
        }));
        push_extra_args(&mut set, extra_names, &extras[wi], flag_buf.as_ref());
        let memo = if guarded {
            &dk.sub_args
        } else {
            &dk.sub_unchecked_args
        };
        exec::set_args_memo(ctx, kernel, &set, memo)?;
        let mut offsets: Vec<usize> = nd.offset.iter().map(|&v| v as usize).collect();
        let mut global: Vec<usize> = nd.global.iter().map(|&v| v as usize).collect();
        let local: Vec<usize> = nd.local.iter().map(|&v| v as usize).collect();
        let d = split_dim as usize;
        offsets[d] += w.lo as usize * local[d];
        global[d] = (w.hi - w.lo) as usize * local[d];
        let ev = exec::run_kernel(ctx, kernel, &offsets, &global, &local)?;
        if let Some(fb) = &flag_buf {
            // SAFETY: `flags` outlives the queue (declared before the Finisher).
            let ev = unsafe { exec::read(ctx, fb, 0, flags_wi.as_mut_ptr(), flags_wi.len())? };
            exec::release(span.last.replace(ev));
        }
        // What comes back through staging follows the kernel (and the
        // flags) in the same command stream.
        let mut from = 0u64;
        for sr in &staged[wi] {
            let es = arrays[sr.array].elem_size as i64;
            let len = ((sr.hi - sr.lo + 1) * es) as usize;
            let buf = ManuallyDropped::new(mems[sr.array]);
            // SAFETY: bounds-checked; the staging vectors outlive the queue
            // (declared before the Finisher), and this device's read is the
            // only access to this one until the queue is finished.
            let ev = unsafe {
                exec::read_host(
                    ctx,
                    &buf,
                    ((sr.lo - placed_ref[wi][sr.array].0) * es) as usize,
                    stage_ref.get()[sr.staging],
                    0,
                    len,
                )?
            };
            exec::release(span.last.replace(ev));
            from += len as u64;
        }
        // Each device's thread waits for its own queue: the devices run at
        // once, with no second round of threads to flush and finish them.
        // Until the driver is known (`exec::runs_apart`), the queue is
        // flushed first and the kernel looked at.
        if !wait || !exec::runs_apart(ctx) {
            exec::flush_queue(ctx)?;
            exec::probe_apart(ctx, &ev);
        }
        span.host_ms = host_t0.elapsed().as_secs_f64() * 1e3;
        if wait {
            exec::finish_queue(ctx)?;
        }
        let report = DeviceReport {
            index: w.device,
            name: ctx.info.name.clone(),
            work_groups: (w.hi - w.lo) * groups_other_dims(nd, split_dim),
            slice: (w.lo, w.hi),
            bytes_to_device: to,
            bytes_from_device: from,
            commands: sends_ref
                .iter()
                .map(|s| s.rects[wi].len() as u64)
                .sum::<u64>()
                + staged[wi].len() as u64,
            kernel_ms: 0.0,
            busy_ms: 0.0,
        };
        Ok((flag_buf, ev, report, span))
    };
    let results = if works.len() > 1 && ctx_of.iter().filter(|c| !exec::runs_apart(c)).count() <= 1
    {
        // Every device but at most one runs its commands apart: all are
        // enqueued from this thread, those first (each flushed, so that it
        // starts), the other one last (its driver may run it while it is
        // enqueued), then each queue is finished.
        let mut order: Vec<usize> = (0..works.len()).collect();
        order.sort_by_key(|&wi| !exec::runs_apart(&ctx_of[wi]));
        let mut slots: Vec<Option<Result<_>>> = (0..works.len()).map(|_| None).collect();
        let mut flags_of: Vec<Option<&mut [u8; GUARD_FLAG_BYTES]>> =
            flags.iter_mut().map(Some).collect();
        for &wi in &order {
            let dk = &plan.kernels[&works[wi].device];
            let f = flags_of[wi].take().expect("each device once");
            slots[wi] = Some(enqueue(
                wi,
                &works[wi],
                OneThread((dk, mems[wi].as_slice())),
                f,
                false,
            ));
        }
        let mut results = Vec::with_capacity(works.len());
        for (slot, c) in slots.into_iter().zip(ctx_of) {
            let r = slot.expect("each device once");
            results.push(r.and_then(|r| exec::finish_queue(c).map(|()| r)));
        }
        results
    } else {
        let jobs: Vec<_> = works
            .iter()
            .enumerate()
            .zip(flags.iter_mut())
            .map(|((wi, w), f)| {
                let dk = &plan.kernels[&w.device];
                (&*dk.ctx, (wi, w, OneThread((dk, mems[wi].as_slice())), f))
            })
            .collect();
        let (results, wait_from) = exec::on_devices(jobs, |(wi, w, dk, f)| {
            let (start, cl0) = (Instant::now(), exec::cl_time());
            let r = enqueue(wi, w, dk, f, true);
            let (end, cl) = (Instant::now(), exec::cl_time() - cl0);
            (r, start, end, (end - start).saturating_sub(cl))
        });
        // This thread then waited for the other devices' enqueues, whose
        // OpenCL calls are timed in their own threads. Of the wait, the part
        // the last of them ran (from its start, or the wait's) less all its
        // own host time was spent inside OpenCL calls; the rest (waking it
        // up, its host time) stays host time.
        if let Some(&(_, start, end, host)) = results.iter().skip(1).max_by_key(|r| r.2) {
            exec::add_cl_time(
                end.saturating_duration_since(start.max(wait_from))
                    .saturating_sub(host),
            );
        }
        results.into_iter().map(|(r, ..)| r).collect()
    };
    let mut failure = None;
    let mut spans = Vec::with_capacity(works.len());
    for r in results {
        match r {
            Ok((flag_buf, ev, report, span)) => {
                flag_bufs.push(flag_buf);
                kernel_events.push(Some(ev));
                dev_reports.push(report);
                spans.push(span);
            }
            Err(e) => {
                failure.get_or_insert(e);
                flag_bufs.push(None);
                kernel_events.push(None);
                dev_reports.push(DeviceReport::default());
                spans.push(Span::default());
            }
        }
    }
    if let Some(e) = failure {
        // a device failed: wait for every queue before anything is freed
        let _ = fin.finish();
        return Err(e);
    }
    // every device's thread finished its queue
    fin.disarm();
    Ok(Enqueued {
        flag_bufs,
        kernel_events,
        dev_reports,
        spans,
    })
}

/// The guard's verdict, from each device's flags: the accesses it caught
/// (none: the outputs can be trusted).
fn guard_verdict(plan: &Plan, works: &[DevWork], flags: &[[u8; GUARD_FLAG_BYTES]]) -> Vec<String> {
    let infos = &plan.kernel.args;
    let mut fired = Vec::new();
    for (wi, w) in works.iter().enumerate() {
        for (slot, arg_index) in plan
            .guard
            .as_ref()
            .map(|g| g.as_slice())
            .unwrap_or(&[])
            .iter()
            .enumerate()
        {
            let f = guard_bits(&flags[wi], slot);
            if f != 0 {
                let name = infos
                    .get(*arg_index as usize)
                    .map_or("?", |i| i.name.as_str());
                let what = if f & 1 != 0 {
                    "outside its device buffer"
                } else {
                    "outside its analyzed range"
                };
                fired.push(format!(
                    "an access of '{name}' {what} on device {}",
                    w.device
                ));
            }
        }
    }
    fired
}

/// After the guard fired: restores what only a device held (`backups`);
/// the rest of each write window is no longer trusted on that device.
fn restore(
    plan: &Plan,
    res: &mut [Option<&mut Residency>],
    works: &[DevWork],
    ctx_of: &[Arc<DeviceCtx>],
    backups: &[Backup],
) -> Result<()> {
    let mut fin = Finisher::new();
    for b in backups {
        let a = &plan.arrays[b.array];
        let r = res[a.arg_index as usize].as_deref().expect("checked above");
        let alloc = &r.allocs[&works[b.work].device];
        fin.add(&ctx_of[b.work]);
        let len = b
            .kept
            .hull()
            .map_or(0, |(l, u)| (u - l + 1) as u64 * a.elem_size) as usize;
        exec::release(exec::copy(
            &ctx_of[b.work],
            &b.mem,
            0,
            &alloc.mem,
            ((b.lo - alloc.base) as u64 * a.elem_size) as usize,
            len,
        )?);
    }
    fin.finish()?;
    for (wi, w) in works.iter().enumerate() {
        for (ai, a) in plan.arrays.iter().enumerate() {
            let Some((l, u)) = w.arrays[ai].write_r else {
                continue;
            };
            let kept = backups
                .iter()
                .find(|b| b.work == wi && b.array == ai)
                .map_or_else(Runs::new, |b| b.kept.clone());
            let r = res[a.arg_index as usize]
                .as_deref_mut()
                .expect("checked above");
            r.coh.invalidate(
                Holder::Device(w.device),
                &Runs::interval(l, u).subtract(&kept),
            );
        }
    }
    Ok(())
}

/// Records what each device wrote, now, before anything else can fail:
/// resident where the written sets are disjoint; where they are merged on
/// the host, the devices' copies are distrusted (the host held every
/// element of them before the launch, phase 0). A `replay`ed array's
/// record is set at the end of the launch.
fn record(
    plan: &Plan,
    res: &mut [Option<&mut Residency>],
    works: &[DevWork],
    glue: &[Glue],
    replay: &[bool],
) {
    for (ai, a) in plan.arrays.iter().enumerate() {
        if !a.writes || replay[ai] {
            continue;
        }
        let r = res[a.arg_index as usize]
            .as_deref_mut()
            .expect("checked above");
        for w in works {
            let da = &w.arrays[ai];
            if glue[ai] == Glue::DiffMerge {
                r.coh.invalidate(Holder::Device(w.device), &da.write_set);
            } else {
                r.coh.written(Holder::Device(w.device), &da.write_set);
            }
        }
    }
}

/// A device-to-host read that phase 1 enqueues right after a device's
/// kernel and flags, into a staging buffer: elements `[lo, hi]` of array
/// `array`. Its bytes are trusted only after the guard's verdict: merged
/// arrays' write ranges (the merge compares them with the host's
/// original), and, for a buffer that comes back to the host after the
/// launch (`Residency::gather_after`), a written set of one run, which
/// [`take_early_reads`] then copies to the host: the read the gather after
/// the launch would make (the same bytes, one command), without a second
/// round of commands.
struct StagedRead {
    array: usize,
    staging: usize,
    lo: i64,
    hi: i64,
    /// Copied to the host by [`take_early_reads`] (else merged).
    early: bool,
}

/// The staged reads of each device (work); the staging vectors' lengths
/// get the early reads' after the merged arrays'.
fn staged_reads(
    plan: &Plan,
    res: &[Option<&mut Residency>],
    works: &[DevWork],
    glue: &[Glue],
    lens: &mut Vec<usize>,
) -> Vec<Vec<StagedRead>> {
    let mut out = Vec::with_capacity(works.len());
    for w in works {
        let mut reads = Vec::new();
        for (ai, (da, a)) in w.arrays.iter().zip(&plan.arrays).enumerate() {
            if let (Some((lo, hi)), Some(staging)) = (da.write_r, da.staging) {
                reads.push(StagedRead {
                    array: ai,
                    staging,
                    lo,
                    hi,
                    early: false,
                });
                continue;
            }
            let r = res[a.arg_index as usize].as_deref().expect("checked above");
            if !(a.writes && glue[ai] == Glue::Direct && r.gather_after) {
                continue;
            }
            let &[(lo, hi)] = da.write_set.intervals() else {
                continue;
            };
            reads.push(StagedRead {
                array: ai,
                staging: lens.len(),
                lo,
                hi,
                early: true,
            });
            lens.push(((hi - lo + 1) as u64 * a.elem_size) as usize);
        }
        out.push(reads);
    }
    out
}

/// After the guard's verdict and [`record`]: the early reads' bytes go to
/// the host copies, which then hold those elements (recorded at the end
/// for a `replay`ed array).
fn take_early_reads(
    plan: &Plan,
    args: &mut KernelArgs,
    res: &mut [Option<&mut Residency>],
    staged: &[Vec<StagedRead>],
    staging: &[Vec<u8>],
    replay: &[bool],
) -> Result<()> {
    for sr in staged.iter().flatten().filter(|sr| sr.early) {
        let a = &plan.arrays[sr.array];
        let es = a.elem_size as usize;
        let out = args
            .buffer_at_mut(a.arg_index)
            .expect("checked: array arguments are buffers")
            .as_bytes_mut();
        let len = out.len();
        let Some(dst) = out.get_mut(sr.lo as usize * es..(sr.hi as usize + 1) * es) else {
            return Err(LaunchError::CopyOutOfBounds {
                op: "staging-to-host copy",
                what: "host",
                offset: sr.lo as u64,
                len: (sr.hi - sr.lo + 1) as u64,
                size: len as u64,
                device: None,
            });
        };
        dst.copy_from_slice(&staging[sr.staging]);
        if replay[sr.array] {
            continue;
        }
        res[a.arg_index as usize]
            .as_deref_mut()
            .expect("checked above")
            .coh
            .copied(Holder::Host, &Runs::interval(sr.lo, sr.hi));
    }
    Ok(())
}

/// Merges on the host what each device wrote of a diff-merged array: an
/// element a device changed (its staged value differs from the host's
/// original) takes that value (recorded at the end for a `replay`ed array).
fn merge(
    plan: &Plan,
    args: &mut KernelArgs,
    res: &mut [Option<&mut Residency>],
    works: &[DevWork],
    glue: &[Glue],
    staging: &[Vec<u8>],
    replay: &[bool],
) {
    for (ai, a) in plan.arrays.iter().enumerate() {
        if !a.writes {
            continue;
        }
        let r = res[a.arg_index as usize]
            .as_deref_mut()
            .expect("checked above");
        if glue[ai] != Glue::DiffMerge {
            continue;
        }
        let es = a.elem_size as usize;
        let out = args
            .buffer_at_mut(a.arg_index)
            .expect("checked: array arguments are buffers")
            .as_bytes_mut();
        let parts: Vec<((i64, i64), usize, &Runs)> = works
            .iter()
            .filter_map(|w| {
                let da = &w.arrays[ai];
                Some((da.write_r?, da.staging?, &da.write_set))
            })
            .collect();
        let Some(gl) = parts.iter().map(|p| p.0 .0).min() else {
            continue;
        };
        let gu = parts.iter().map(|p| p.0 .1).max().unwrap_or(gl);
        let original = out[gl as usize * es..(gu as usize + 1) * es].to_vec();
        let mut merged = Runs::new();
        for ((l, u), si, write_set) in parts {
            // Only the write set's elements: the device holds the host's
            // values there (its prefill) unless it wrote them. Between a
            // box's runs it holds nothing sent (another slice's writes,
            // which the guard keeps this one from making).
            let set = write_set.intersect(&Runs::interval(l, u));
            for &(rl, ru) in set.intervals() {
                let orig = &original[(rl - gl) as usize * es..(ru - gl + 1) as usize * es];
                let dst = &mut out[rl as usize * es..(ru as usize + 1) * es];
                let src = &staging[si][(rl - l) as usize * es..(ru - l + 1) as usize * es];
                for ((d, s), o) in dst
                    .chunks_exact_mut(es)
                    .zip(src.chunks_exact(es))
                    .zip(orig.chunks_exact(es))
                {
                    if s != o {
                        d.copy_from_slice(s);
                    }
                }
            }
            merged = merged.union(&set);
        }
        if !replay[ai] {
            r.coh.written(Holder::Host, &merged);
        }
    }
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

/// The host regions of a launch, shared by the threads that enqueue the
/// devices' commands: phase 1 only reads through the host buffers'
/// (host-to-device copies), and nothing writes the host buffers until
/// every queue is finished; each staging region is written by one
/// device's read only, and read on the host after every queue is finished.
struct SharedRegions<'a, T>(&'a [T]);

// SAFETY: see the type's doc: the regions are only read while shared.
unsafe impl<T> Sync for SharedRegions<'_, T> {}

impl<T> SharedRegions<'_, T> {
    fn get(&self) -> &[T] {
        self.0
    }
}

/// What phase 1 moves, per device (work): the host-to-device commands,
/// where each array's allocation starts and its handle, the subkernel's
/// extra arguments, the staged reads and the staging regions they fill.
struct Transfers<'a> {
    /// Per array.
    sends: &'a [Arc<ArraySends>],
    placed: &'a [Vec<(i64, u64)>],
    mems: &'a [Vec<opencl3::types::cl_mem>],
    /// The subkernel's extra arguments per device.
    extras: &'a [Vec<ExtraValue>],
    staged: &'a [Vec<StagedRead>],
    stage: &'a [HostRegion],
}

/// A device's kernels, handed to the one thread that enqueues that device
/// (OpenCL kernel objects must not be used by two threads at once; each
/// device has its own).
struct OneThread<T>(T);

// SAFETY: see the type's doc: one thread per device uses the value.
unsafe impl<T> Send for OneThread<T> {}

fn groups_other_dims(nd: &NdRange, split_dim: u32) -> u64 {
    (0..nd.work_dim())
        .filter(|&d| d != split_dim)
        .map(|d| nd.n_groups(d))
        .product()
}

/// Makes `res`'s allocation on the device of `ctx` hold elements
/// `[lo, hi]` (and the guard's sink) from a first element that is a
/// multiple of `align`: kept when it does, otherwise replaced by one over
/// `[lo, hi]` (its start rounded down to that multiple) and, when `grow`,
/// the elements the device already holds, with as much again of slack
/// towards the growth. Valid elements the new allocation keeps are copied on the device;
/// those it drops that no other holder has are gathered to the host first.
fn ensure_alloc(
    res: &mut Residency,
    ctx: &std::sync::Arc<DeviceCtx>,
    host: &mut [u8],
    (es, align): (u64, i64),
    (lo, hi): (i64, i64),
    grow: bool,
) -> Result<Vec<(usize, u64, u64)>> {
    let dev = ctx.info.index;
    let aligned = |l: i64| l - l.rem_euclid(align.max(1));
    if res
        .allocs
        .get(&dev)
        .is_some_and(|a| a.covers(lo, hi) && a.base == aligned(a.base))
    {
        return Ok(Vec::new());
    }
    let valid = res.coh.valid(Holder::Device(dev));
    let (lo, hi) = match (grow, valid.hull()) {
        (true, Some((vl, vu))) => (lo.min(vl), hi.max(vu)),
        _ => (lo, hi),
    };
    // Growing past an allocation: by its own size again towards the
    // growth (within the array), so that a window moving one step per
    // launch (a plane of a 3-D grid, a column of LU) is reallocated and
    // copied O(log n) times, not at every launch (O(n^2) bytes copied).
    let n = (host.len() as u64 / es.max(1)) as i64;
    let (lo, hi) = match (grow, res.allocs.get(&dev)) {
        (true, Some(old)) => {
            let (old_lo, old_hi) = (old.base, old.base + old.extent as i64 - 1);
            let slack = old.extent as i64;
            let lo = if lo < old_lo {
                (lo - slack).max(0).min(lo)
            } else {
                lo
            };
            let hi = if hi > old_hi {
                (hi + slack).min(n - 1).max(hi)
            } else {
                hi
            };
            (lo, hi)
        }
        _ => (lo, hi),
    };
    // a kernel viewing the array through wider elements needs them whole
    let lo = aligned(lo);
    let keep = Runs::interval(lo, hi);
    let dropped = valid.subtract(&keep);
    let mut gathered = Vec::new();
    if !dropped.is_empty() {
        let only_here = dropped.intersect(&res.coh.exclusive(Holder::Device(dev)));
        if !only_here.is_empty() {
            gathered = res.gather(host, es, &only_here)?;
        }
        res.coh.invalidate(Holder::Device(dev), &dropped);
    }
    let extent = (hi - lo + 1) as u64;
    let bytes = ((extent + GUARD_SINK) * es) as usize;
    let mem = exec::take(ctx, bytes)?;
    if let (Some(old), Some((kl, ku))) = (res.allocs.get(&dev), valid.intersect(&keep).hull()) {
        let len = ((ku - kl + 1) as u64 * es) as usize;
        exec::release(exec::copy(
            ctx,
            &old.mem,
            ((kl - old.base) as u64 * es) as usize,
            &mem,
            ((kl - lo) as u64 * es) as usize,
            len,
        )?);
    }
    res.allocs.insert(
        dev,
        DevAlloc {
            ctx: ctx.clone(),
            base: lo,
            extent,
            bytes,
            mem: std::mem::ManuallyDrop::new(mem),
        },
    );
    Ok(gathered)
}

/// A copy, on one device, of the elements of a written array that only
/// that device holds, taken before its kernel runs: restored when the guard
/// discards the launch, so that nothing is lost.
struct Backup {
    work: usize,
    array: usize,
    lo: i64,
    kept: Runs,
    mem: Buffer<u8>,
}

/// A device buffer handle borrowed from its owner for one call: wrapped as
/// a [`Buffer`] that never releases it.
struct ManuallyDropped(std::mem::ManuallyDrop<Buffer<u8>>);

impl ManuallyDropped {
    fn new(mem: opencl3::types::cl_mem) -> ManuallyDropped {
        ManuallyDropped(std::mem::ManuallyDrop::new(Buffer::new(mem)))
    }
}

impl std::ops::Deref for ManuallyDropped {
    type Target = Buffer<u8>;
    fn deref(&self) -> &Buffer<u8> {
        &self.0
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
