//! Phase 1 of a split launch: one command stream per device (its
//! transfers, subkernel, guard flags and staged reads), each device
//! enqueued and finished from a thread of its own, with one wait.

use std::sync::Arc;
use std::time::Instant;

use opencl3::event::Event;
use opencl3::memory::Buffer;

use super::outputs::StagedRead;
use super::placement::ArraySends;
use crate::args::KernelArgs;
use crate::error::Result;
use crate::exec::{self, Finisher, HostRegion, SetArg};
use crate::launch::report::DeviceReport;
use crate::launch::schedule::DevWork;
use crate::launch::setargs::{guarded_arg, push_extra_args, scalar_values, GUARD_FLAG_BYTES};
use crate::ndrange::NdRange;
use crate::plan::{DeviceKernels, ExtraValue, Plan, GUARD_SINK};
use crate::runtime::DeviceCtx;

/// What phase 1 leaves, per device (work): its guard flags' buffer, its
/// kernel's event and its report so far.
pub(super) struct Enqueued {
    pub(super) flag_bufs: Vec<Option<Buffer<u8>>>,
    pub(super) kernel_events: Vec<Option<Event>>,
    pub(super) dev_reports: Vec<DeviceReport>,
    /// Per device, what its busy time is measured from.
    pub(super) spans: Vec<Span>,
}

/// A device's commands of a launch, for its busy time
/// ([`DeviceReport::busy_ms`]): its first command before the kernel and
/// its last one after (`None`: the kernel itself), and the host's time
/// enqueueing them.
#[derive(Default)]
pub(super) struct Span {
    first: Option<Event>,
    last: Option<Event>,
    host_ms: f64,
}

impl Span {
    /// The busy time, once the queue is finished.
    pub(super) fn busy_ms(&self, ctx: &DeviceCtx, kernel: &Event) -> Result<f64> {
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
pub(super) fn phase1(
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
pub(super) struct Transfers<'a> {
    /// Per array.
    pub(super) sends: &'a [Arc<ArraySends>],
    pub(super) placed: &'a [Vec<(i64, u64)>],
    pub(super) mems: &'a [Vec<opencl3::types::cl_mem>],
    /// The subkernel's extra arguments per device.
    pub(super) extras: &'a [Vec<ExtraValue>],
    pub(super) staged: &'a [Vec<StagedRead>],
    pub(super) stage: &'a [HostRegion],
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
