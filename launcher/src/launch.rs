//! The split launcher: slices, per-device ranges, transfers, subkernels,
//! gluing, the report; and the unsplit run.

use std::fmt;
use std::time::Instant;

use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, ClMem};
use ranges_format::ArgKind;
use serde::Serialize;

use crate::args::KernelArgs;
use crate::buffer::{ArgValue, HostBuffer};
use crate::coherence::Holder;
use crate::elem::ElemType;
use crate::resident::{with_host_copies, DevAlloc, DeviceBuffer, Residency};
use crate::runs::{Rect, Runs, COMMAND_COST_BYTES};
use crate::error::{cl_err, LaunchError, Result};
use crate::exec::{self, Finisher, HostRegion, SetArg};
use crate::ndrange::NdRange;
use crate::plan::{DeviceKernels, ExtraValue, Plan, Window, GUARD_SINK, NO_WINDOW};
use crate::runtime::{DeviceCtx, Runtime};

mod schedule;

pub(crate) use schedule::Schedules;
use schedule::{range_runs, DevArray, DevWork, Footprint, Glue, Run, Split};

/// Options of one launch.
#[derive(Clone, Debug)]
pub struct LaunchOptions {
    /// Also run the unsplit kernel on one device and compare every output
    /// byte ([`RunReport::verified`], [`RunReport::mismatch`]).
    pub verify: bool,
    /// The device that runs the verification (default: the device with the
    /// largest share).
    pub verify_device: Option<usize>,
    /// Most bytes of buffers one device may hold for its slice; a launch
    /// that needs more fails before any device runs.
    pub mem_cap_bytes: Option<u64>,
    /// Turns the run-time guard off: subkernels run without checking their
    /// accesses against their ranges (`--unchecked`). With the guard on (the
    /// default), an access outside the analyzed range is skipped, the
    /// launch's device results are discarded and the kernel re-runs
    /// unsplit; kernels whose buffers the guard cannot check run unsplit.
    pub unchecked: bool,
    /// Test-only: the read range of this array is made one element shorter
    /// at its top on every device (after its buffer is sized), as an analysis
    /// that under-approximates would; the guard must catch it.
    #[doc(hidden)]
    pub test_underapproximate: Option<String>,
    /// Test-only: the read box of this (delinearized) array loses its last
    /// column (the top of its last dimension) on every device, as an
    /// analysis that under-approximates a box would; the guard's box check
    /// must catch it (issue 12).
    #[doc(hidden)]
    pub test_shrink_box: Option<String>,
    /// Evaluate the Ehrhart counts of every slice for
    /// [`RunReport::bytes_exact`] (on by default). Callers that never read
    /// it (the layer, the launch-overhead bench) turn it off; `bytes_exact`
    /// is then `None`.
    pub exact_bytes: bool,
}

impl Default for LaunchOptions {
    fn default() -> LaunchOptions {
        LaunchOptions {
            verify: false,
            verify_device: None,
            mem_cap_bytes: None,
            unchecked: false,
            test_underapproximate: None,
            test_shrink_box: None,
            exact_bytes: true,
        }
    }
}

/// What one device did in a launch.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DeviceReport {
    /// Device index.
    pub index: usize,
    /// Device name.
    pub name: String,
    /// Work-groups the device ran.
    pub work_groups: u64,
    /// Its slice `[lo, hi)` of work-groups along the split dimension.
    pub slice: (u64, u64),
    /// Bytes copied host → device.
    pub bytes_to_device: u64,
    /// Bytes copied device → host.
    pub bytes_from_device: u64,
    /// Transfer commands (host → device and device → host, each rect one).
    pub commands: u64,
    /// Kernel execution time (profiling events), milliseconds.
    pub kernel_ms: f64,
}

/// The first output element that differs between the split and the unsplit
/// run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    /// The array argument.
    pub array: String,
    /// The element index.
    pub elem_idx: u64,
}

/// The result of [`launch`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunReport {
    /// The kernel.
    pub kernel: String,
    /// The NDRange of the launch.
    pub ndrange: NdRange,
    /// Whether the kernel ran split (subkernels on several slices) rather
    /// than whole on one device.
    pub split: bool,
    /// Whether the range file marks the kernel splittable.
    pub splittable: bool,
    /// The split dimension.
    pub split_dim: Option<u32>,
    /// Why the kernel ran whole, when it did.
    pub reason: Option<String>,
    /// Per participating device.
    pub devices: Vec<DeviceReport>,
    /// Bytes moved in both directions, all devices.
    pub bytes_total: u64,
    /// Bytes a whole-buffer approach would move: every buffer the kernel
    /// reads to each participating device, every buffer it writes back from
    /// each.
    pub bytes_whole_buffers: u64,
    /// Bytes of the distinct elements each slice touches (Ehrhart counts),
    /// once for reads and once for writes; `None` when a count is missing
    /// or the launch did not ask for it ([`LaunchOptions::exact_bytes`]).
    pub bytes_exact: Option<u64>,
    /// Wall time of the launch (validation, transfers, kernels, gluing),
    /// milliseconds; verification not included.
    pub wall_ms: f64,
    /// Host time clpart adds to the launch, microseconds: `wall_ms` minus
    /// the time spent inside OpenCL calls (buffer creation and release,
    /// transfers, argument setting, enqueues, waits, program builds). What
    /// remains is checks, range evaluation, slicing, bookkeeping and gluing.
    pub host_us: f64,
    /// `Some(true)` when verification ran and every output byte matched.
    pub verified: Option<bool>,
    /// The first differing element when verification failed.
    pub mismatch: Option<Mismatch>,
    /// Remarks: failed assumptions, devices left without work, ...
    pub notes: Vec<String>,
    /// Whether the run-time guard caught an access outside a slice's range
    /// (the launch then re-ran unsplit; see `reason`).
    pub guard_fired: bool,
}

impl fmt::Display for RunReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kernel '{}', {}", self.kernel, self.ndrange)?;
        match (&self.reason, self.split_dim) {
            (Some(r), _) => writeln!(f, ", ran whole: {r}")?,
            (None, Some(d)) => writeln!(f, ", split along dimension {d}")?,
            (None, None) => writeln!(f)?,
        }
        for d in &self.devices {
            writeln!(
                f,
                "  device {} '{}': {} work-groups [{}, {}), {} B to device, {} B from device, kernel {:.3} ms",
                d.index, d.name, d.work_groups, d.slice.0, d.slice.1, d.bytes_to_device, d.bytes_from_device, d.kernel_ms
            )?;
        }
        write!(
            f,
            "  bytes moved {} in {} transfer commands, whole buffers {}",
            self.bytes_total,
            self.devices.iter().map(|d| d.commands).sum::<u64>(),
            self.bytes_whole_buffers
        )?;
        match self.bytes_exact {
            Some(b) => writeln!(f, ", exact footprint {b}")?,
            None => writeln!(f)?,
        }
        write!(f, "  wall {:.3} ms", self.wall_ms)?;
        match (self.verified, &self.mismatch) {
            (Some(true), _) => write!(f, ", verified")?,
            (Some(false), Some(m)) => {
                write!(f, ", verification failed at '{}'[{}]", m.array, m.elem_idx)?
            }
            (Some(false), None) => write!(f, ", verification failed")?,
            (None, _) => {}
        }
        for n in &self.notes {
            write!(f, "\n  note: {n}")?;
        }
        Ok(())
    }
}

/// The outcome of an unsplit run ([`run_whole`], [`Plan::run_whole`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WholeRun {
    /// The device.
    pub device: usize,
    /// Kernel execution time, milliseconds.
    pub kernel_ms: f64,
    /// Bytes copied host → device.
    pub bytes_to_device: u64,
    /// Bytes copied device → host.
    pub bytes_from_device: u64,
}

/// Builds `source` (with `build_options` and `-cl-std=CL1.2`) on one device
/// and runs kernel `kernel` over the whole NDRange. Every buffer goes to the
/// device whole; afterwards every `__global` buffer of `args` holds the
/// kernel's output.
pub fn run_whole(
    runtime: &Runtime,
    source: &str,
    kernel: &str,
    build_options: &[String],
    device: usize,
    nd: &NdRange,
    args: &mut KernelArgs,
) -> Result<WholeRun> {
    nd.validate()?;
    let program = runtime.program(device, kernel, source, build_options)?;
    let ctx = runtime.ctx(device)?;
    let k = Kernel::create(&program, kernel).map_err(|e| match e.0 {
        opencl3::error_codes::CL_INVALID_KERNEL_NAME => LaunchError::RangeFile {
            kernel: kernel.to_string(),
            message: format!("the source has no kernel '{kernel}'"),
        },
        _ => cl_err("clCreateKernel", Some(ctx.info.label()))(e),
    })?;
    let Moved { kernel_ms, to, from, .. } =
        run_original(&ctx, &k, nd, args, &|_, kind| kind == ArgKind::GlobalBuffer)?;
    Ok(WholeRun {
        device,
        kernel_ms,
        bytes_to_device: to,
        bytes_from_device: from,
    })
}

impl Plan {
    /// Runs the original kernel whole on one device (see [`run_whole`]),
    /// with the program built once per device.
    pub fn run_whole(
        &mut self,
        device: usize,
        nd: &NdRange,
        args: &mut KernelArgs,
    ) -> Result<WholeRun> {
        nd.validate()?;
        self.check_args(args)?;
        self.whole_kernel(device)?;
        let dk = &self.kernels[&device];
        let kernel = dk.whole.as_ref().expect("built above");
        let Moved { kernel_ms, to, from, .. } = run_original(&dk.ctx, kernel, nd, args, &|_, kind| {
            kind == ArgKind::GlobalBuffer
        })?;
        Ok(WholeRun {
            device,
            kernel_ms,
            bytes_to_device: to,
            bytes_from_device: from,
        })
    }
}

/// What a run on one device did: its kernel time and the bytes and
/// transfer commands it moved.
struct Moved {
    kernel_ms: f64,
    to: u64,
    from: u64,
    commands: u64,
}

/// Runs a kernel on one device with every buffer whole; reads back the
/// buffers `readback(arg_index, kind)` selects into `args`.
fn run_original(
    ctx: &std::sync::Arc<DeviceCtx>,
    kernel: &Kernel,
    nd: &NdRange,
    args: &mut KernelArgs,
    readback: &dyn Fn(u32, ArgKind) -> bool,
) -> Result<Moved> {
    match run_on_one(ctx, kernel, nd, args, None, readback)? {
        Ok(r) => Ok(r),
        Err(_) => unreachable!("no guard, no flags"),
    }
}

/// The guarded form of a whole run: the subkernel's extra arguments, the
/// guarded arguments in flag-slot order.
struct GuardedRun<'a> {
    names: &'a [String],
    values: &'a [ExtraValue],
    guarded: &'a [u32],
}

/// Runs a kernel (the original, or with `guard` the guarded subkernel) on
/// one device over the whole NDRange with every buffer whole. With the
/// guard, the flags are read before any output: when one is raised nothing
/// is read back and the raised `(argument index, flag)` pairs are returned.
fn run_on_one(
    ctx: &std::sync::Arc<DeviceCtx>,
    kernel: &Kernel,
    nd: &NdRange,
    args: &mut KernelArgs,
    guard: Option<GuardedRun<'_>>,
    readback: &dyn Fn(u32, ArgKind) -> bool,
) -> Result<std::result::Result<Moved, Vec<(u32, i32)>>> {
    let infos = args.infos().to_vec();
    let scalars = scalar_values(args);
    let sink = if guard.is_some() { GUARD_SINK } else { 0 };
    let _busy = ctx.take();
    let mut bufs: Vec<Option<Buffer<u8>>> = Vec::new();
    let mut to = 0u64;
    let mut commands = 0u64;
    let mut from = 0u64;
    let zero_flags = vec![0u8; GUARD_FLAG_BYTES];
    let mut flags = zero_flags.clone();
    let mut fin = Finisher::new();
    fin.add(ctx);
    let mut regions = Vec::new();
    for i in 0..infos.len() {
        regions.push(args.buffer_at_mut(i as u32).map(|b| HostRegion::of(b.as_bytes_mut())));
    }
    for (i, region) in regions.iter().enumerate() {
        let Some(region) = *region else {
            bufs.push(None);
            continue;
        };
        let len = region.len();
        let es = infos[i].elem_size.max(1) as u64;
        let buf = exec::alloc(ctx, len + (sink * es) as usize)?;
        // SAFETY: the host buffer is borrowed mutably for this whole call and
        // the queue is finished before it returns (Finisher).
        exec::release(unsafe { exec::write_host(ctx, &buf, 0, region, 0, len)? });
        to += len as u64;
        commands += 1;
        bufs.push(Some(buf));
    }
    let flag_buf = match &guard {
        Some(_) => {
            let b = exec::alloc(ctx, zero_flags.len())?;
            // SAFETY: `zero_flags` outlives the queue (declared before the Finisher).
            exec::release(unsafe { exec::write(ctx, &b, 0, zero_flags.as_ptr(), zero_flags.len())? });
            Some(b)
        }
        None => None,
    };
    let mut set: Vec<(&str, SetArg<'_>)> = infos
        .iter()
        .enumerate()
        .map(|(i, info)| {
            (
                info.name.as_str(),
                guarded_arg(&scalars[i], bufs[i].as_ref().map(|b| b.get()), sink, info.elem_size),
            )
        })
        .collect();
    if let Some(g) = &guard {
        push_extra_args(&mut set, g.names, g.values, flag_buf.as_ref());
    }
    exec::set_args(ctx, kernel, &set)?;
    let offsets: Vec<usize> = nd.offset.iter().map(|&v| v as usize).collect();
    let global: Vec<usize> = nd.global.iter().map(|&v| v as usize).collect();
    let local: Vec<usize> = nd.local.iter().map(|&v| v as usize).collect();
    let ev = exec::run_kernel(ctx, kernel, &offsets, &global, &local)?;
    if let (Some(g), Some(fb)) = (&guard, &flag_buf) {
        // SAFETY: `flags` outlives the queue (declared before the Finisher).
        exec::release(unsafe { exec::read(ctx, fb, 0, flags.as_mut_ptr(), flags.len())? });
        fin.finish()?;
        let raised: Vec<(u32, i32)> = g
            .guarded
            .iter()
            .enumerate()
            .map(|(slot, &ai)| (ai, guard_bits(&flags, slot)))
            .filter(|&(_, f)| f != 0)
            .collect();
        if !raised.is_empty() {
            exec::release((ev, bufs, flag_buf));
            return Ok(Err(raised));
        }
        fin = Finisher::new();
        fin.add(ctx);
    }
    for (i, info) in infos.iter().enumerate() {
        if let (Some(buf), Some(region)) = (&bufs[i], regions[i]) {
            if readback(info.index, info.kind) {
                let len = region.len();
                // SAFETY: as above.
                exec::release(unsafe { exec::read_host(ctx, buf, 0, region, 0, len)? });
                from += len as u64;
                commands += 1;
            }
        }
    }
    fin.finish()?;
    let kernel_ms = exec::kernel_ms(ctx, &ev)?;
    exec::release((ev, bufs, flag_buf));
    Ok(Ok(Moved { kernel_ms, to, from, commands }))
}

/// A by-value argument copied out of `KernelArgs`, so that no reference into
/// the arguments is alive while transfers use raw pointers into them.
enum ScalarArg {
    Bytes(Vec<u8>),
    Local(usize),
    Buffer,
}

fn scalar_values(args: &KernelArgs) -> Vec<ScalarArg> {
    args.values()
        .iter()
        .map(|v| match v {
            ArgValue::Scalar { bytes, .. } => ScalarArg::Bytes(bytes.clone()),
            ArgValue::Local { bytes } => ScalarArg::Local(*bytes as usize),
            ArgValue::Buffer(_) => ScalarArg::Buffer,
        })
        .collect()
}

fn arg_value(s: &ScalarArg, mem: Option<opencl3::types::cl_mem>) -> SetArg<'_> {
    match (s, mem) {
        (ScalarArg::Bytes(b), _) => SetArg::Bytes(b),
        (ScalarArg::Local(n), _) => SetArg::Local(*n),
        (ScalarArg::Buffer, Some(m)) => SetArg::Mem(m),
        (ScalarArg::Buffer, None) => SetArg::Mem(std::ptr::null_mut()),
    }
}

/// The host regions of a launch, shared by the threads that enqueue the
/// devices' commands: phase 1 only reads through them (host-to-device
/// copies), and nothing writes the host buffers until every queue is
/// finished.
struct SharedRegions<'a>(&'a [Option<HostRegion>]);

// SAFETY: see the type's doc: the regions are only read while shared.
unsafe impl Sync for SharedRegions<'_> {}

impl SharedRegions<'_> {
    fn get(&self) -> &[Option<HostRegion>] {
        self.0
    }
}

/// A device's kernels, handed to the one thread that enqueues that device
/// (OpenCL kernel objects must not be used by two threads at once; each
/// device has its own).
struct OneThread<T>(T);

// SAFETY: see the type's doc: one thread per device uses the value.
unsafe impl<T> Send for OneThread<T> {}

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
    let indices: Vec<u32> = args
        .infos()
        .iter()
        .filter(|i| args.buffer_at(i.index).is_some())
        .map(|i| i.index)
        .collect();
    let mut temps: Vec<(u32, DeviceBuffer)> = indices
        .iter()
        .map(|&i| {
            let slot = args.buffer_at_mut(i).expect("a buffer argument");
            (i, DeviceBuffer::new(std::mem::replace(slot, placeholder(slot.elem().size))))
        })
        .collect();
    let result = {
        let mut refs: Vec<(u32, &mut DeviceBuffer)> = temps.iter_mut().map(|(i, b)| (*i, b)).collect();
        launch_over(plan, nd, args, &mut refs, shares, options)
    };
    let mut gathered: Vec<(usize, u64, u64)> = Vec::new();
    let mut first_err = None;
    for (i, mut b) in temps {
        match b.res.gather_all(&mut b.host) {
            Ok(m) => gathered.extend(m),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
        b.res.allocs.clear();
        std::mem::swap(args.buffer_at_mut(i).expect("a buffer argument"), &mut b.host);
    }
    let mut report = result?;
    if let Some(e) = first_err {
        return Err(e);
    }
    add_gathered(&mut report, &gathered);
    Ok(report)
}

/// An empty buffer of `size`-byte elements, held by an argument while its
/// data is away (no allocation: the type has no name).
fn placeholder(size: u32) -> HostBuffer {
    HostBuffer::from_bytes(ElemType { name: String::new(), scalar: None, lanes: 1, size }, Vec::new())
}

/// Adds device → host bytes to the report, per source device.
fn add_gathered(report: &mut RunReport, gathered: &[(usize, u64, u64)]) {
    for &(dev, n, commands) in gathered {
        if n == 0 {
            continue;
        }
        match report.devices.iter_mut().find(|d| d.index == dev) {
            Some(d) => {
                d.bytes_from_device += n;
                d.commands += commands;
            }
            None => report.devices.push(DeviceReport { index: dev, name: format!("device {dev}"), bytes_from_device: n, commands, ..DeviceReport::default() }),
        }
        report.bytes_total += n;
    }
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
        let mut temps: Vec<(u32, DeviceBuffer)> = unbound
            .iter()
            .map(|&i| (i, DeviceBuffer::new(args.buffer_at(i).expect("a buffer argument").clone())))
            .collect();
        let mut all: Vec<(u32, &mut DeviceBuffer)> = temps.iter_mut().map(|(i, b)| (*i, b)).collect();
        all.extend(bufs.iter_mut().map(|(i, b)| (*i, &mut **b)));
        let report = launch_over(plan, nd, args, &mut all, shares, options)?;
        drop(all);
        for (i, b) in temps {
            *args.buffer_at_mut(i).expect("a buffer argument") = b.into_host()?;
        }
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
    if plan.kernel.work_dim != 0 && nd.work_dim() != plan.kernel.work_dim {
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
    let sched = Schedules::get(plan, nd, args, shares, options)?;
    let main_device = sched.main_device;
    let whole_slice = (0, sched.n_groups);

    let verify_device = options.verify_device.unwrap_or(main_device);
    if options.verify {
        plan.runtime.device(verify_device)?;
        exec::cl_timed(|| plan.whole_kernel(verify_device))?;
    }
    let original = options.verify.then(|| args.clone());

    let mut report = match &sched.run {
        Run::Unsplit { reason, footprint } => {
            run_unsplit_resident(plan, nd, args, res, main_device, whole_slice, reason.clone(), footprint.clone(), options)?
        }
        Run::Split(split) => match run_split(plan, nd, args, res, split, sched.split_dim, options)? {
            SplitOutcome::Done(r) => r,
            SplitOutcome::GuardFired(fired) => {
                let why = format!(
                    "the run-time guard caught {} (an analysis defect); the split results were discarded",
                    fired.join(", ")
                );
                let footprint = Footprint::of(plan, args, &sched.base, options.exact_bytes);
                let mut r = run_unsplit_resident(plan, nd, args, res, main_device, whole_slice, why, footprint, options)?;
                r.guard_fired = true;
                r
            }
        },
    };
    report.notes.splice(0..0, sched.notes.iter().cloned());
    let wall = t0.elapsed();
    report.wall_ms = wall.as_secs_f64() * 1e3;
    report.host_us = wall.saturating_sub(exec::cl_time() - cl0).as_secs_f64() * 1e6;

    if let Some(mut reference) = original {
        // the split results, read into a copy of the host copies (neither
        // recorded nor counted as moved)
        let mut got_args = args.clone();
        for (i, r) in res.iter().enumerate() {
            if let (Some(r), Some(host)) = (r, got_args.buffer_at_mut(i as u32)) {
                r.read_all_into(host)?;
            }
        }
        plan.run_whole(verify_device, nd, &mut reference)?;
        let mut mismatch = None;
        for ((name, got), (_, want)) in got_args.global_buffers().zip(reference.global_buffers()) {
            let es = got.elem().size.max(1) as usize;
            if let Some(pos) = got
                .as_bytes()
                .iter()
                .zip(want.as_bytes())
                .position(|(a, b)| a != b)
            {
                mismatch = Some(Mismatch {
                    array: name.to_string(),
                    elem_idx: (pos / es) as u64,
                });
                break;
            }
        }
        report.verified = Some(mismatch.is_none());
        report.mismatch = mismatch;
    }
    Ok(report)
}

fn groups_other_dims(nd: &NdRange, split_dim: u32) -> u64 {
    (0..nd.work_dim())
        .filter(|&d| d != split_dim)
        .map(|d| nd.n_groups(d))
        .product()
}

fn check_cap(plan: &Plan, device: usize, needed: u64, options: &LaunchOptions) -> Result<()> {
    if let Some(cap) = options.mem_cap_bytes {
        if needed > cap {
            return Err(LaunchError::MemoryCap {
                device: plan.runtime.device(device)?.label(),
                needed,
                cap,
            });
        }
    }
    Ok(())
}

/// Appends the subkernel's extra arguments; the guard's flag buffer is
/// `flags` (NULL when the guard is compiled out and never touches it).
fn push_extra_args<'a>(set: &mut Vec<(&'a str, SetArg<'a>)>, names: &'a [String], values: &[ExtraValue], flags: Option<&Buffer<u8>>) {
    for (name, v) in names.iter().zip(values) {
        set.push((
            name.as_str(),
            match v {
                ExtraValue::Long(v) => SetArg::Long(*v),
                ExtraValue::GuardFlags => SetArg::Mem(flags.map_or(std::ptr::null_mut(), |b| b.get())),
            },
        ));
    }
}

/// Bytes of the guard's flag buffer: two `int`s, two bits per guarded
/// argument (see `partitioner::subkernel`).
const GUARD_FLAG_BYTES: usize = 8;

/// The guard's two bits for flag slot `slot` (1: an access outside the
/// buffer, 2: inside it but outside the window).
fn guard_bits(flags: &[u8], slot: usize) -> i32 {
    let lo = u32::from_ne_bytes(flags[0..4].try_into().expect("4 bytes")) as u64;
    let hi = u32::from_ne_bytes(flags[4..8].try_into().expect("4 bytes")) as u64;
    (((hi << 32 | lo) >> (2 * slot)) & 3) as i32
}

/// What [`run_split`] ended with.
enum SplitOutcome {
    Done(RunReport),
    /// The run-time guard caught these accesses; nothing reached the host.
    GuardFired(Vec<String>),
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

/// The guard window of a `__local` argument: all of it.
fn local_window(args: &KernelArgs, arg_index: u32) -> Window {
    let es = args.infos().get(arg_index as usize).map_or(1, |i| i.elem_size.max(1)) as i64;
    match args.value(arg_index) {
        Some(ArgValue::Local { bytes }) => {
            let n = *bytes as i64 / es;
            Window { base: 0, read: (0, n), write: (0, n), extent: n, boxes: None }
        }
        _ => Window::default(),
    }
}

/// An argument as the guarded subkernel takes it: `__local` arguments get
/// the guard's sink after their elements.
fn guarded_arg(s: &ScalarArg, mem: Option<opencl3::types::cl_mem>, sink: u64, elem_size: u32) -> SetArg<'_> {
    match s {
        ScalarArg::Local(n) if sink > 0 => SetArg::Local(*n + local_sink_bytes(elem_size) as usize),
        _ => arg_value(s, mem),
    }
}

/// Bytes of the guard's sink after a `__local` argument of elements of
/// `elem_size` bytes (an element type of unknown size gets a generous one).
fn local_sink_bytes(elem_size: u32) -> u64 {
    GUARD_SINK * if elem_size == 0 { 256 } else { elem_size as u64 }
}

/// Runs the kernel whole on `device` (guarded unless the launch is
/// unchecked or the guard cannot check it); `slice` is the whole NDRange's
/// work-groups along the split dimension, `footprint` the report's counts.
#[allow(clippy::too_many_arguments)]
fn run_unsplit(
    plan: &mut Plan,
    nd: &NdRange,
    args: &mut KernelArgs,
    device: usize,
    slice: (u64, u64),
    reason: String,
    footprint: Footprint,
    options: &LaunchOptions,
) -> Result<RunReport> {
    let needed: u64 = args
        .values()
        .iter()
        .map(|v| match v {
            ArgValue::Buffer(b) => b.as_bytes().len() as u64,
            _ => 0,
        })
        .sum();
    check_cap(plan, device, needed, options)?;
    let Footprint { whole_bytes, exact, mut notes } = footprint;
    let mut result = None;
    // Set when the guard caught a write the analysis did not see: the
    // original kernel then re-runs with every buffer read back.
    let mut guard_caught = false;
    // With the guard, the guarded subkernel runs over the whole NDRange: a
    // buffer too small for what the kernel accesses, or an access of a mode
    // the analysis did not see, is caught before any output is read back.
    if let (false, Ok(guarded)) = (options.unchecked, &plan.guard) {
        let guarded = guarded.clone();
        exec::cl_timed(|| plan.sub_kernel(device, false))?;
        let split_dim = plan.kernel.split_dim.unwrap_or(0).min(nd.work_dim() - 1);
        let windows: Vec<Window> = (0..args.infos().len() as u32)
            .map(|arg_index| match plan.arrays.iter().find(|a| a.arg_index == arg_index) {
                Some(a) => {
                    let len = args.buffer_at(arg_index).map_or(0, |b| b.len()) as i64;
                    Window { base: 0, read: (0, len), write: if a.writes { (0, len) } else { (0, 0) }, extent: len, boxes: None }
                }
                None => local_window(args, arg_index),
            })
            .collect();
        let extras = plan.extra_values(nd, split_dim, 0, |i| windows.get(i as usize).unwrap_or(&NO_WINDOW));
        let names = plan.extra_names();
        let dk = &plan.kernels[&device];
        let kernel = dk.sub.as_ref().expect("built above");
        let arrays = &plan.arrays;
        let g = GuardedRun { names, values: &extras, guarded: &guarded };
        match run_on_one(&dk.ctx, kernel, nd, args, Some(g), &|index, kind| match arrays.iter().find(|a| a.arg_index == index) {
            Some(a) => a.writes,
            None => kind == ArgKind::GlobalBuffer,
        })? {
            Ok(r) => result = Some(r),
            Err(raised) => {
                if let Some(&(ai, _)) = raised.iter().find(|(_, f)| f & 1 != 0) {
                    let info = &args.infos()[ai as usize];
                    let (what, len) = match args.value(ai) {
                        Some(ArgValue::Local { bytes }) => ("__local argument", bytes / info.elem_size.max(1) as u64),
                        _ => ("array", args.buffer_at(ai).map_or(0, |b| b.len())),
                    };
                    return Err(LaunchError::GuardOutOfBounds { kernel: plan.kernel.name.clone(), what, array: info.name.clone(), len });
                }
                let names: Vec<&str> = raised.iter().map(|&(ai, _)| args.infos()[ai as usize].name.as_str()).collect();
                guard_caught = true;
                notes.push(format!(
                    "the run-time guard caught a write the analysis did not see (arguments {}); the original kernel re-ran with every buffer read back",
                    names.join(", ")
                ));
            }
        }
    }
    let Moved { kernel_ms, to, from, commands } = match result {
        Some(r) => r,
        None => {
            exec::cl_timed(|| plan.whole_kernel(device))?;
            let dk = &plan.kernels[&device];
            let kernel = dk.whole.as_ref().expect("built above");
            let arrays = &plan.arrays;
            run_original(&dk.ctx, kernel, nd, args, &|index, kind| {
                if guard_caught {
                    return kind == ArgKind::GlobalBuffer;
                }
                match arrays.iter().find(|a| a.arg_index == index) {
                    Some(a) => a.writes,
                    None => kind == ArgKind::GlobalBuffer,
                }
            })?
        }
    };
    let dk = &plan.kernels[&device];
    Ok(RunReport {
        kernel: plan.kernel.name.clone(),
        ndrange: nd.clone(),
        split: false,
        splittable: plan.kernel.splittable,
        split_dim: plan.kernel.split_dim,
        reason: Some(reason),
        devices: vec![DeviceReport {
            index: device,
            name: dk.ctx.info.name.clone(),
            work_groups: nd.n_groups_total(),
            slice,
            bytes_to_device: to,
            bytes_from_device: from,
            commands,
            kernel_ms,
        }],
        bytes_total: to + from,
        bytes_whole_buffers: whole_bytes,
        bytes_exact: exact,
        wall_ms: 0.0,
        host_us: 0.0,
        verified: None,
        mismatch: None,
        notes,
        guard_fired: false,
    })
}

/// [`run_unsplit`] over resident buffers: an unsplit run moves every
/// buffer whole, so the host first gathers what it lacks, and afterwards
/// the host holds the results (device copies of `__global` buffers are
/// stale).
#[allow(clippy::too_many_arguments)]
fn run_unsplit_resident(
    plan: &mut Plan,
    nd: &NdRange,
    args: &mut KernelArgs,
    res: &mut [Option<&mut Residency>],
    device: usize,
    slice: (u64, u64),
    reason: String,
    footprint: Footprint,
    options: &LaunchOptions,
) -> Result<RunReport> {
    let mut gathered = Vec::new();
    for (i, r) in res.iter_mut().enumerate() {
        if let (Some(r), Some(host)) = (r.as_deref_mut(), args.buffer_at_mut(i as u32)) {
            gathered.extend(r.gather_all(host)?);
        }
    }
    let mut report = run_unsplit(plan, nd, args, device, slice, reason, footprint, options)?;
    for (i, r) in res.iter_mut().enumerate() {
        let info = &args.infos()[i];
        if let (Some(r), ArgKind::GlobalBuffer) = (r.as_deref_mut(), info.kind) {
            let n = args.buffer_at(i as u32).map_or(0, |b| b.len());
            r.coh.written(Holder::Host, &Runs::interval(0, n as i64 - 1));
        }
    }
    add_gathered(&mut report, &gathered);
    Ok(report)
}

/// Makes `res`'s allocation on the device of `ctx` hold elements
/// `[lo, hi]` (and the guard's sink): kept when it does, otherwise replaced
/// by one over `[lo, hi]` and, when `grow`, the elements the device already
/// holds. Valid elements the new allocation keeps are copied on the device;
/// those it drops that no other holder has are gathered to the host first.
fn ensure_alloc(
    res: &mut Residency,
    ctx: &std::sync::Arc<DeviceCtx>,
    host: &mut [u8],
    es: u64,
    (lo, hi): (i64, i64),
    grow: bool,
) -> Result<Vec<(usize, u64, u64)>> {
    let dev = ctx.info.index;
    if res.allocs.get(&dev).is_some_and(|a| a.covers(lo, hi)) {
        return Ok(Vec::new());
    }
    let valid = res.coh.valid(Holder::Device(dev));
    let (lo, hi) = match (grow, valid.hull()) {
        (true, Some((vl, vu))) => (lo.min(vl), hi.max(vu)),
        _ => (lo, hi),
    };
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
    let mem = exec::alloc(ctx, ((extent + GUARD_SINK) * es) as usize)?;
    if let (Some(old), Some((kl, ku))) = (res.allocs.get(&dev), valid.intersect(&keep).hull()) {
        let len = ((ku - kl + 1) as u64 * es) as usize;
        exec::release(exec::copy(ctx, &old.mem, ((kl - old.base) as u64 * es) as usize, &mem, ((kl - lo) as u64 * es) as usize, len)?);
    }
    res.allocs.insert(dev, DevAlloc { ctx: ctx.clone(), base: lo, extent, mem });
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

fn run_split(
    plan: &mut Plan,
    nd: &NdRange,
    args: &mut KernelArgs,
    res: &mut [Option<&mut Residency>],
    split: &Split,
    split_dim: u32,
    options: &LaunchOptions,
) -> Result<SplitOutcome> {
    let Split { works, glue, staging_len, footprint } = split;
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
    let n_arrays = plan.arrays.len();
    for a in &plan.arrays {
        if res.get(a.arg_index as usize).is_none_or(|r| r.is_none()) {
            return Err(LaunchError::Buffer { message: format!("array '{}' has no resident buffer", a.name) });
        }
    }

    // Built: from here on the plan is only read. Its arguments are those of
    // `args` (`Plan::check_args`: names, kinds and sizes), borrowed apart.
    let plan: &Plan = plan;
    let infos = &plan.kernel.args;
    let guarded = !options.unchecked && plan.guard.is_ok();
    let mut gathered: Vec<(usize, u64, u64)> = Vec::new();

    // Phase 0 (host): gather on the host what the devices need and only
    // other devices hold, and what a merge compares against; allocate.
    let ctx_of: Vec<std::sync::Arc<DeviceCtx>> = works.iter().map(|w| plan.kernels[&w.device].ctx.clone()).collect();
    let mut ctxs: Vec<_> = ctx_of.clone();
    ctxs.sort_by_key(|c| c.info.index);
    ctxs.dedup_by_key(|c| c.info.index);
    let _busy: Vec<_> = ctxs.iter().map(|c| c.take()).collect();
    let grow = options.mem_cap_bytes.is_none();
    let mut to_device: Vec<Vec<Runs>> = vec![vec![Runs::new(); n_arrays]; works.len()];
    // Per device and array: the first element and the elements of its
    // allocation (`DevAlloc::base`, `DevAlloc::extent`).
    let mut placed: Vec<Vec<(i64, u64)>> = vec![vec![(0, 0); n_arrays]; works.len()];
    for ai in 0..n_arrays {
        let a = &plan.arrays[ai];
        let r = res[a.arg_index as usize].as_deref_mut().expect("checked above");
        let host = args.buffer_at_mut(a.arg_index).expect("checked: array arguments are buffers");
        let es = a.elem_size;
        let mut want = Runs::new();
        for (wi, w) in works.iter().enumerate() {
            let da = &w.arrays[ai];
            let need = da.read_set.union(&da.prefill);
            let missing = need.subtract(&r.coh.valid(Holder::Device(w.device)));
            want = want.union(&missing);
            to_device[wi][ai] = missing;
        }
        if glue[ai] == Glue::DiffMerge {
            for w in works {
                want = want.union(&w.arrays[ai].write_set);
            }
        }
        gathered.extend(r.gather(host.as_bytes_mut(), es, &want)?);
        for (wi, w) in works.iter().enumerate() {
            let da = &w.arrays[ai];
            match da.cover {
                Some(cover) => gathered.extend(ensure_alloc(r, &ctx_of[wi], host.as_bytes_mut(), es, cover, grow)?),
                // untouched: any allocation will do (a placeholder when none)
                None if r.allocs.contains_key(&w.device) => {}
                None => gathered.extend(ensure_alloc(r, &ctx_of[wi], host.as_bytes_mut(), es, (0, 0), false)?),
            }
            // (an allocation keeps at least `cover`, which holds what the
            // device needs: `to_device` stays as computed above)
            let alloc = &r.allocs[&w.device];
            placed[wi][ai] = (alloc.base, alloc.extent);
        }
    }

    // The commands: what each device lacks, gaps bridged where the host
    // holds them and a gap costs less than a command (`Runs::transfers`).
    let mut sends: Vec<Vec<Vec<Rect>>> = Vec::with_capacity(works.len());
    for (wi, w) in works.iter().enumerate() {
        let mut per = Vec::with_capacity(n_arrays);
        for (ai, a) in plan.arrays.iter().enumerate() {
            let r = res[a.arg_index as usize].as_deref().expect("checked above");
            let fill = r.coh.valid(Holder::Host).intersect(&range_runs(w.arrays[ai].cover));
            let rects = to_device[wi][ai].transfers(&fill, a.elem_size, COMMAND_COST_BYTES);
            to_device[wi][ai] = Rect::union_of(&rects);
            per.push(rects);
        }
        sends.push(per);
    }

    // Backups of what only the device holds in its write window.
    let mut backups: Vec<Backup> = Vec::new();
    if guarded {
        for (wi, w) in works.iter().enumerate() {
            for (ai, a) in plan.arrays.iter().enumerate() {
                let Some((l, u)) = w.arrays[ai].write_r else { continue };
                let arg = a.arg_index as usize;
                let r = res[arg].as_deref().expect("checked above");
                let kept = Runs::interval(l, u).intersect(&r.coh.exclusive(Holder::Device(w.device)));
                let Some((kl, ku)) = kept.hull() else { continue };
                let alloc = &r.allocs[&w.device];
                let len = ((ku - kl + 1) as u64 * a.elem_size) as usize;
                let mem = exec::alloc(&ctx_of[wi], len)?;
                exec::release(exec::copy(&ctx_of[wi], &alloc.mem, ((kl - alloc.base) as u64 * a.elem_size) as usize, &mem, 0, len)?);
                backups.push(Backup { work: wi, array: ai, lo: kl, kept, mem });
            }
        }
    }

    let scalars = scalar_values(args);
    let sink = if guarded { GUARD_SINK } else { 0 };
    let mut host: Vec<Option<HostRegion>> = Vec::with_capacity(infos.len());
    for i in 0..infos.len() {
        host.push(args.buffer_at_mut(i as u32).map(|b| HostRegion::of(b.as_bytes_mut())));
    }
    let array_of_arg: Vec<Option<usize>> = infos
        .iter()
        .map(|info| plan.arrays.iter().position(|a| a.arg_index == info.index))
        .collect();
    let extras: Vec<Vec<ExtraValue>> = works
        .iter()
        .zip(&placed)
        .map(|(w, placed)| {
            let windows: Vec<Window> = array_of_arg
                .iter()
                .enumerate()
                .map(|(i, ai)| match ai {
                    Some(ai) => split_window(&w.arrays[*ai], placed[*ai]),
                    None => local_window(args, i as u32),
                })
                .collect();
            plan.extra_values(nd, split_dim, w.lo, |i| windows.get(i as usize).unwrap_or(&NO_WINDOW))
        })
        .collect();
    let extra_names = plan.extra_names();
    let mems: Vec<Vec<opencl3::types::cl_mem>> = works
        .iter()
        .map(|w| {
            plan.arrays
                .iter()
                .map(|a| res[a.arg_index as usize].as_deref().expect("checked above").allocs[&w.device].mem.get())
                .collect()
        })
        .collect();

    // Order matters: memory that enqueued commands use (staging, flags,
    // backups) is declared before the Finisher, so that on an early return
    // the Finisher waits for the queues before that memory is dropped.
    let mut staging: Vec<Vec<u8>> = staging_len.iter().map(|&n| vec![0u8; n]).collect();
    let zero_flags = vec![0u8; GUARD_FLAG_BYTES];
    let mut flags: Vec<Vec<u8>> = works.iter().map(|_| vec![0u8; GUARD_FLAG_BYTES]).collect();
    let mut flag_bufs: Vec<Option<Buffer<u8>>> = Vec::with_capacity(works.len());
    let mut kernel_events = Vec::with_capacity(works.len());
    let mut fin = Finisher::new();
    let mut dev_reports = Vec::with_capacity(works.len());
    // Phase 1: every device's transfers and kernel (and its guard flags),
    // each device enqueued from a thread of its own: some drivers run a
    // kernel while it is enqueued (PoCL's `basic`), which would otherwise
    // hold back the devices enqueued after it (BENCHMARKS.md §7).
    for c in &ctx_of {
        fin.add(c);
    }
    let host_ref = SharedRegions(&host);
    let arrays = &plan.arrays;
    let sends_ref = &sends;
    let placed_ref = &placed;
    let enqueue = |wi: usize, w: &DevWork, dk: OneThread<(&DeviceKernels, &[opencl3::types::cl_mem])>, flags_wi: &mut Vec<u8>| -> Result<(Option<Buffer<u8>>, Event, DeviceReport)> {
        let host = host_ref.get();
        let (dk, mems) = dk.0;
        let ctx = &dk.ctx;
        let kernel = if guarded { dk.sub.as_ref() } else { dk.sub_unchecked.as_ref() }.expect("built above");
        let mut to = 0u64;
        for (ai, a) in arrays.iter().enumerate() {
            let src = host[a.arg_index as usize].expect("checked: array arguments are buffers");
            for rect in &sends_ref[wi][ai] {
                // SAFETY: the copy is bounds-checked against the host and the
                // device buffer; host buffers are not touched until every
                // queue is finished (Finisher), and phase 1 only reads them.
                let buf = ManuallyDropped::new(mems[ai]);
                exec::release(unsafe { exec::write_rect(ctx, &buf, placed_ref[wi][ai].0, src, rect, a.elem_size)? });
                to += rect.n_elems() * a.elem_size;
            }
        }
        let flag_buf = if guarded {
            let b = exec::alloc(ctx, zero_flags.len())?;
            // SAFETY: `zero_flags` outlives the queue (declared before the Finisher).
            exec::release(unsafe { exec::write(ctx, &b, 0, zero_flags.as_ptr(), zero_flags.len())? });
            Some(b)
        } else {
            None
        };
        let mut set: Vec<(&str, SetArg<'_>)> = infos
            .iter()
            .enumerate()
            .map(|(i, info)| {
                let mem = array_of_arg[i].map(|ai| mems[ai]);
                (info.name.as_str(), guarded_arg(&scalars[i], mem, sink, info.elem_size))
            })
            .collect();
        push_extra_args(&mut set, extra_names, &extras[wi], flag_buf.as_ref());
        exec::set_args(ctx, kernel, &set)?;
        let mut offsets: Vec<usize> = nd.offset.iter().map(|&v| v as usize).collect();
        let mut global: Vec<usize> = nd.global.iter().map(|&v| v as usize).collect();
        let local: Vec<usize> = nd.local.iter().map(|&v| v as usize).collect();
        let d = split_dim as usize;
        offsets[d] += w.lo as usize * local[d];
        global[d] = (w.hi - w.lo) as usize * local[d];
        let ev = exec::run_kernel(ctx, kernel, &offsets, &global, &local)?;
        if let Some(fb) = &flag_buf {
            // SAFETY: `flags` outlives the queue (declared before the Finisher).
            exec::release(unsafe { exec::read(ctx, fb, 0, flags_wi.as_mut_ptr(), flags_wi.len())? });
        }
        let report = DeviceReport {
            index: w.device,
            name: ctx.info.name.clone(),
            work_groups: (w.hi - w.lo) * groups_other_dims(nd, split_dim),
            slice: (w.lo, w.hi),
            bytes_to_device: to,
            bytes_from_device: 0,
            commands: sends_ref[wi].iter().map(|v| v.len() as u64).sum(),
            kernel_ms: 0.0,
        };
        Ok((flag_buf, ev, report))
    };
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
        let r = enqueue(wi, w, dk, f);
        let (end, cl) = (Instant::now(), exec::cl_time() - cl0);
        (r, start, end, (end - start).saturating_sub(cl))
    });
    // This thread then waited for the other devices' enqueues, whose
    // OpenCL calls are timed in their own threads. Of the wait, the part
    // the last of them ran (from its start, or the wait's) less all its own
    // host time was spent inside OpenCL calls; the rest (waking it up, its
    // host time) stays host time.
    if let Some(&(_, start, end, host)) = results.iter().skip(1).max_by_key(|r| r.2) {
        exec::add_cl_time(end.saturating_duration_since(start.max(wait_from)).saturating_sub(host));
    }
    let mut failure = None;
    for (r, ..) in results {
        match r {
            Ok((flag_buf, ev, report)) => {
                flag_bufs.push(flag_buf);
                kernel_events.push(Some(ev));
                dev_reports.push(report);
            }
            Err(e) => {
                failure.get_or_insert(e);
                flag_bufs.push(None);
                kernel_events.push(None);
                dev_reports.push(DeviceReport::default());
            }
        }
    }
    // Every device starts at once, whatever their order (see `exec::on_each`).
    fin.flush();
    let finished = fin.finish();
    if let Some(e) = failure.or(finished.err()) {
        // A device failed: what any device may have written is no longer
        // trusted there; elements no other holder has are lost.
        for w in works {
            for (ai, a) in plan.arrays.iter().enumerate() {
                let r = res[a.arg_index as usize].as_deref_mut().expect("checked above");
                r.coh.invalidate(Holder::Device(w.device), &range_runs(w.arrays[ai].write_r));
            }
        }
        return Err(e);
    }
    // The host copies went to the devices.
    for (wi, w) in works.iter().enumerate() {
        for (ai, a) in plan.arrays.iter().enumerate() {
            let r = res[a.arg_index as usize].as_deref_mut().expect("checked above");
            r.coh.copied(Holder::Device(w.device), &to_device[wi][ai]);
        }
    }
    if guarded {
        // The guard's verdict comes before any output is trusted.
        let mut fired = Vec::new();
        for (wi, w) in works.iter().enumerate() {
            for (slot, arg_index) in plan.guard.as_ref().map(|g| g.as_slice()).unwrap_or(&[]).iter().enumerate() {
                let f = guard_bits(&flags[wi], slot);
                if f != 0 {
                    let name = infos.get(*arg_index as usize).map_or("?", |i| i.name.as_str());
                    let what = if f & 1 != 0 { "outside its device buffer" } else { "outside its analyzed range" };
                    fired.push(format!("an access of '{name}' {what} on device {}", w.device));
                }
            }
        }
        if !fired.is_empty() {
            // Restore what only a device held; the rest of each write
            // window is no longer trusted on that device.
            let mut fin = Finisher::new();
            for b in &backups {
                let a = &plan.arrays[b.array];
                let r = res[a.arg_index as usize].as_deref().expect("checked above");
                let alloc = &r.allocs[&works[b.work].device];
                fin.add(&ctx_of[b.work]);
                let len = b.kept.hull().map_or(0, |(l, u)| (u - l + 1) as u64 * a.elem_size) as usize;
                exec::release(exec::copy(&ctx_of[b.work], &b.mem, 0, &alloc.mem, ((b.lo - alloc.base) as u64 * a.elem_size) as usize, len)?);
            }
            fin.finish()?;
            for (wi, w) in works.iter().enumerate() {
                for (ai, a) in plan.arrays.iter().enumerate() {
                    let Some((l, u)) = w.arrays[ai].write_r else { continue };
                    let kept = backups.iter().find(|b| b.work == wi && b.array == ai).map_or_else(Runs::new, |b| b.kept.clone());
                    let r = res[a.arg_index as usize].as_deref_mut().expect("checked above");
                    r.coh.invalidate(Holder::Device(w.device), &Runs::interval(l, u).subtract(&kept));
                }
            }
            exec::release((flag_bufs, kernel_events, backups));
            return Ok(SplitOutcome::GuardFired(fired));
        }
    }
    exec::release(backups);
    // What each device wrote is recorded now, before anything else can
    // fail: resident where the written sets are disjoint; where they are
    // merged on the host, the devices' copies are distrusted (the host
    // held every element of them before the launch, phase 0).
    for (ai, a) in plan.arrays.iter().enumerate() {
        if !a.writes {
            continue;
        }
        let r = res[a.arg_index as usize].as_deref_mut().expect("checked above");
        for w in works {
            let da = &w.arrays[ai];
            if glue[ai] == Glue::DiffMerge {
                r.coh.invalidate(Holder::Device(w.device), &da.write_set);
            } else {
                r.coh.written(Holder::Device(w.device), &da.write_set);
            }
        }
    }
    // Phase 2: merged arrays come back through staging.
    let mut fin = Finisher::new();
    for ((wi, w), report) in works.iter().enumerate().zip(dev_reports.iter_mut()) {
        let ctx = &ctx_of[wi];
        let mut from = 0u64;
        for (ai, (da, a)) in w.arrays.iter().zip(&plan.arrays).enumerate() {
            let (Some((l, u)), Some(si)) = (da.write_r, da.staging) else { continue };
            fin.add(ctx);
            let es = a.elem_size as i64;
            let len = ((u - l + 1) * es) as usize;
            let buf = ManuallyDropped::new(mems[wi][ai]);
            // SAFETY: bounds-checked; the staging vector outlives the queue.
            exec::release(unsafe { exec::read_host(ctx, &buf, ((l - placed[wi][ai].0) * es) as usize, HostRegion::of(&mut staging[si]), 0, len)? });
            from += len as u64;
            report.commands += 1;
        }
        report.bytes_from_device = from;
    }
    fin.finish()?;
    for ((r, ev), w) in dev_reports.iter_mut().zip(&kernel_events).zip(works) {
        if let Some(ev) = ev {
            r.kernel_ms = exec::kernel_ms(&plan.kernels[&w.device].ctx, ev)?;
        }
    }
    exec::release((kernel_events, flag_bufs));

    // What each device wrote: resident there, or merged on the host.
    for (ai, a) in plan.arrays.iter().enumerate() {
        if !a.writes {
            continue;
        }
        let r = res[a.arg_index as usize].as_deref_mut().expect("checked above");
        if glue[ai] != Glue::DiffMerge {
            continue;
        }
        let es = a.elem_size as usize;
        let out = args
            .buffer_at_mut(a.arg_index)
            .expect("checked: array arguments are buffers")
            .as_bytes_mut();
        let parts: Vec<((i64, i64), usize)> = works
            .iter()
            .filter_map(|w| Some((w.arrays[ai].write_r?, w.arrays[ai].staging?)))
            .collect();
        let Some(gl) = parts.iter().map(|p| p.0 .0).min() else {
            continue;
        };
        let gu = parts.iter().map(|p| p.0 .1).max().unwrap_or(gl);
        let original = out[gl as usize * es..(gu as usize + 1) * es].to_vec();
        let mut merged = Runs::new();
        for ((l, u), si) in parts {
            let orig = &original[(l - gl) as usize * es..(u - gl + 1) as usize * es];
            let dst = &mut out[l as usize * es..(u as usize + 1) * es];
            for ((d, s), o) in dst
                .chunks_exact_mut(es)
                .zip(staging[si].chunks_exact(es))
                .zip(orig.chunks_exact(es))
            {
                if s != o {
                    d.copy_from_slice(s);
                }
            }
            merged = merged.union(&Runs::interval(l, u));
        }
        r.coh.written(Holder::Host, &merged);
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
    };
    report.bytes_total = report.devices.iter().map(|d| d.bytes_to_device + d.bytes_from_device).sum();
    add_gathered(&mut report, &gathered);
    Ok(SplitOutcome::Done(report))
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
