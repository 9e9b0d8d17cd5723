//! The unsplit runs: the original kernel whole on one device
//! ([`run_whole`], [`Plan::run_whole`]), and a launch that does not split
//! ([`run_unsplit`], over resident buffers [`run_unsplit_resident`]), with
//! the guarded subkernel over the whole NDRange first unless the launch is
//! unchecked.

use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, ClMem};
use ranges_format::ArgKind;

use super::options::{check_cap, LaunchOptions};
use super::report::{add_gathered, DeviceReport, RunReport, WholeRun};
use super::schedule::Footprint;
use super::setargs::{
    guard_bits, guarded_arg, local_window, push_extra_args, scalar_values, GUARD_FLAG_BYTES,
};
use super::split::ensure_alloc;
use crate::args::KernelArgs;
use crate::buffer::ArgValue;
use crate::coherence::Holder;
use crate::error::{cl_err, LaunchError, Result};
use crate::exec::{self, ArgMemo, Finisher, HostRegion, SetArg};
use crate::ndrange::NdRange;
use crate::plan::{ExtraValue, Plan, Window, GUARD_SINK, NO_WINDOW};
use crate::resident::Residency;
use crate::runs::{Rect, Runs, COST_MODEL};
use crate::runtime::{DeviceCtx, Runtime};
use std::sync::Mutex;

/// Builds `source` (with `build_options`) on one device
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
    nd.check_device(runtime.device(device)?)?;
    let program = runtime.program(device, kernel, source, build_options)?;
    let ctx = runtime.ctx(device)?;
    let k = Kernel::create(&program, kernel).map_err(|e| match e.0 {
        opencl3::error_codes::CL_INVALID_KERNEL_NAME => LaunchError::RangeFile {
            kernel: kernel.to_string(),
            message: format!("the source has no kernel '{kernel}'"),
        },
        _ => cl_err("clCreateKernel", Some(ctx.info.label()))(e),
    })?;
    let Moved {
        kernel_ms,
        to,
        from,
        ..
    } = run_original(&ctx, &k, None, nd, args, &|_, kind| {
        kind == ArgKind::GlobalBuffer
    })?;
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
        let Moved {
            kernel_ms,
            to,
            from,
            ..
        } = run_original(
            &dk.ctx,
            kernel,
            Some(&dk.whole_args),
            nd,
            args,
            &|_, kind| kind == ArgKind::GlobalBuffer,
        )?;
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
    memo: Option<&Mutex<ArgMemo>>,
    nd: &NdRange,
    args: &mut KernelArgs,
    readback: &dyn Fn(u32, ArgKind) -> bool,
) -> Result<Moved> {
    match run_on_one(ctx, kernel, memo, nd, args, None, readback)? {
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
    memo: Option<&Mutex<ArgMemo>>,
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
    let mut sizes = vec![0usize; infos.len()];
    let mut to = 0u64;
    let mut commands = 0u64;
    let mut from = 0u64;
    let mut flags = vec![0u8; GUARD_FLAG_BYTES];
    let mut fin = Finisher::new();
    fin.add(ctx);
    let mut regions = Vec::new();
    for i in 0..infos.len() {
        regions.push(
            args.buffer_at_mut(i as u32)
                .map(|b| HostRegion::of(b.as_bytes_mut())),
        );
    }
    for (i, region) in regions.iter().enumerate() {
        let Some(region) = *region else {
            bufs.push(None);
            continue;
        };
        let len = region.len();
        let es = infos[i].elem_size.max(1) as u64;
        let bytes = len + (sink * es) as usize;
        let buf = exec::take(ctx, bytes)?;
        sizes[i] = bytes;
        // SAFETY: the host buffer is borrowed mutably for this whole call and
        // the queue is finished before it returns (Finisher).
        exec::release(unsafe { exec::write_host(ctx, &buf, 0, region, 0, len)? });
        to += len as u64;
        commands += 1;
        bufs.push(Some(buf));
    }
    let mut flag_buf = match &guard {
        Some(_) => Some(exec::zero_flags(ctx, GUARD_FLAG_BYTES)?),
        None => None,
    };
    let mut set: Vec<(&str, SetArg<'_>)> = infos
        .iter()
        .enumerate()
        .map(|(i, info)| {
            (
                info.name.as_str(),
                guarded_arg(
                    &scalars[i],
                    bufs[i].as_ref().map(|b| b.get()),
                    sink,
                    info.elem_size,
                ),
            )
        })
        .collect();
    if let Some(g) = &guard {
        push_extra_args(&mut set, g.names, g.values, flag_buf.as_ref());
    }
    match memo {
        Some(memo) => exec::set_args_memo(ctx, kernel, &set, memo)?,
        None => exec::set_args(ctx, kernel, &set)?,
    }
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
        if flags.iter().all(|&b| b == 0) {
            // read back and clear: it holds zeros for the next launch
            if let Some(fb) = flag_buf.take() {
                exec::give_zero_flags(ctx, fb);
            }
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
    // every command that used them is finished: back to the pool
    for (buf, bytes) in bufs.into_iter().zip(sizes) {
        if let Some(buf) = buf {
            exec::give(ctx, bytes, buf);
        }
    }
    exec::release((ev, flag_buf));
    Ok(Ok(Moved {
        kernel_ms,
        to,
        from,
        commands,
    }))
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
    let Footprint {
        whole_bytes,
        exact,
        mut notes,
    } = footprint;
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
        let extras = whole_extras(plan, nd, args);
        let names = plan.extra_names();
        let dk = &plan.kernels[&device];
        let kernel = dk.sub.as_ref().expect("built above");
        let arrays = &plan.arrays;
        let g = GuardedRun {
            names,
            values: &extras,
            guarded: &guarded,
        };
        match run_on_one(
            &dk.ctx,
            kernel,
            Some(&dk.sub_args),
            nd,
            args,
            Some(g),
            &|index, kind| match arrays.iter().find(|a| a.arg_index == index) {
                Some(a) => a.writes,
                None => kind == ArgKind::GlobalBuffer,
            },
        )? {
            Ok(r) => result = Some(r),
            Err(raised) => {
                if let Some(&(ai, _)) = raised.iter().find(|(_, f)| f & 1 != 0) {
                    return Err(out_of_bounds(plan, args, ai));
                }
                let names: Vec<&str> = raised
                    .iter()
                    .map(|&(ai, _)| args.infos()[ai as usize].name.as_str())
                    .collect();
                guard_caught = true;
                notes.push(format!(
                    "the run-time guard caught a write the analysis did not see (arguments {}); the original kernel re-ran with every buffer read back",
                    names.join(", ")
                ));
            }
        }
    }
    let Moved {
        kernel_ms,
        to,
        from,
        commands,
    } = match result {
        Some(r) => r,
        None => {
            exec::cl_timed(|| plan.whole_kernel(device))?;
            let dk = &plan.kernels[&device];
            let kernel = dk.whole.as_ref().expect("built above");
            let arrays = &plan.arrays;
            run_original(
                &dk.ctx,
                kernel,
                Some(&dk.whole_args),
                nd,
                args,
                &|index, kind| {
                    if guard_caught {
                        return kind == ArgKind::GlobalBuffer;
                    }
                    match arrays.iter().find(|a| a.arg_index == index) {
                        Some(a) => a.writes,
                        None => kind == ArgKind::GlobalBuffer,
                    }
                },
            )?
        }
    };
    let moved = Moved {
        kernel_ms,
        to,
        from,
        commands,
    };
    let footprint = Footprint {
        whole_bytes,
        exact,
        notes,
    };
    Ok(one_device_report(
        plan,
        nd,
        (device, slice),
        reason,
        moved,
        footprint,
        guard_caught,
    ))
}

/// The report of a run of the whole NDRange on `device` (its work-groups
/// `slice` along the split dimension): what it moved, the footprint's
/// counts and notes, whether the guard caught a write.
fn one_device_report(
    plan: &Plan,
    nd: &NdRange,
    (device, slice): (usize, (u64, u64)),
    reason: String,
    moved: Moved,
    footprint: Footprint,
    guard_fired: bool,
) -> RunReport {
    let Moved {
        kernel_ms,
        to,
        from,
        commands,
    } = moved;
    RunReport {
        kernel: plan.kernel.name.clone(),
        ndrange: nd.clone(),
        split: false,
        splittable: plan.kernel.splittable,
        split_dim: plan.kernel.split_dim,
        reason: Some(reason),
        devices: vec![DeviceReport {
            index: device,
            name: plan.kernels[&device].ctx.info.name.clone(),
            work_groups: nd.n_groups_total(),
            slice,
            bytes_to_device: to,
            bytes_from_device: from,
            commands,
            kernel_ms,
            busy_ms: 0.0,
        }],
        bytes_total: to + from,
        bytes_whole_buffers: footprint.whole_bytes,
        bytes_exact: footprint.exact,
        wall_ms: 0.0,
        host_us: 0.0,
        verified: None,
        mismatch: None,
        notes: footprint.notes,
        guard_fired,
        assumption_failed: false,
    }
}

/// The guarded subkernel's extra arguments for a run of the whole NDRange
/// with whole buffers: every array's read window whole, its write window
/// whole where the analysis says it is written.
fn whole_extras(plan: &Plan, nd: &NdRange, args: &KernelArgs) -> Vec<ExtraValue> {
    let split_dim = plan.kernel.split_dim.unwrap_or(0).min(nd.work_dim() - 1);
    let windows: Vec<Window> = (0..args.infos().len() as u32)
        .map(
            |arg_index| match plan.arrays.iter().find(|a| a.arg_index == arg_index) {
                Some(a) => {
                    let len = args.buffer_at(arg_index).map_or(0, |b| b.len()) as i64;
                    Window {
                        base: 0,
                        read: (0, len),
                        write: if a.writes { (0, len) } else { (0, 0) },
                        extent: len,
                        boxes: None,
                    }
                }
                None => local_window(args, arg_index),
            },
        )
        .collect();
    plan.extra_values(nd, split_dim, 0, |i| {
        windows.get(i as usize).unwrap_or(&NO_WINDOW)
    })
}

/// The error of a guarded run that caught an access past argument `ai`
/// (a buffer or a `__local` argument too small for the kernel).
fn out_of_bounds(plan: &Plan, args: &KernelArgs, ai: u32) -> LaunchError {
    let info = &args.infos()[ai as usize];
    let (what, len) = match args.value(ai) {
        Some(ArgValue::Local { bytes }) => {
            ("__local argument", bytes / info.elem_size.max(1) as u64)
        }
        _ => ("array", args.buffer_at(ai).map_or(0, |b| b.len())),
    };
    LaunchError::GuardOutOfBounds {
        kernel: plan.kernel.name.clone(),
        what,
        array: info.name.clone(),
        len,
    }
}

/// [`run_unsplit`] over resident buffers. Buffers kept across launches
/// (none gathered right after the launch) run in place
/// ([`run_unsplit_in_place`]) on whichever of `devices` lacks the fewest
/// of their bytes, `device` first among equals. Otherwise every buffer
/// moves whole: the host first gathers what it lacks, and afterwards the
/// host holds the results (device copies of `__global` buffers are stale).
#[allow(clippy::too_many_arguments)]
pub(super) fn run_unsplit_resident(
    plan: &mut Plan,
    nd: &NdRange,
    args: &mut KernelArgs,
    res: &mut [Option<&mut Residency>],
    (device, devices): (usize, &[usize]),
    slice: (u64, u64),
    reason: String,
    footprint: Footprint,
    options: &LaunchOptions,
) -> Result<RunReport> {
    let kept = (0..args.infos().len()).all(|i| {
        args.buffer_at(i as u32).is_none() || res[i].as_deref().is_some_and(|r| !r.gather_after)
    });
    if kept && args.infos().iter().any(|i| i.kind == ArgKind::GlobalBuffer) {
        let lacking = |d: usize| -> u64 {
            res.iter()
                .enumerate()
                .filter_map(|(i, r)| {
                    let host = args.buffer_at(i as u32)?;
                    let r = r.as_deref()?;
                    let all = Runs::interval(0, host.len() as i64 - 1);
                    let lacks = all.subtract(&r.coh.valid(Holder::Device(d)));
                    Some(lacks.n_elems() * host.elem().size.max(1) as u64)
                })
                .sum()
        };
        let mut best = (lacking(device), device);
        for &d in devices {
            best = best.min((lacking(d), d));
        }
        return run_unsplit_in_place(
            plan, nd, args, res, best.1, slice, reason, footprint, options,
        );
    }
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
            r.coh
                .written(Holder::Host, &Runs::interval(0, n as i64 - 1));
        }
    }
    add_gathered(&mut report, &gathered);
    Ok(report)
}

/// [`run_unsplit`] where the buffers are kept: the kernel runs on
/// `device` over allocations of its buffers whole there, sent only the
/// elements the device lacks (gathered first from the devices that hold
/// them); afterwards what it wrote is valid on that device only. An
/// application with one unsplit kernel among split ones then moves only
/// what changed hands between the devices, never whole arrays through the
/// host at every step.
///
/// Unless the launch is unchecked (or the guard cannot check the kernel),
/// the guarded subkernel runs with every array's read window whole and
/// the write window whole for the arrays the analysis says are written: an
/// access past a buffer goes to the sink and fails the launch (the
/// device's copies of its `__global` buffers dropped); a write the
/// analysis did not see goes to the sink too, and then what only the
/// device held of the written arrays is restored from copies taken before
/// (as a split launch's guard does) and the original kernel runs again,
/// every `__global` buffer counted as written. Unguarded, the original
/// kernel runs and every `__global` buffer counts as written; an unchecked
/// launch trusts the analysis's modes, as [`run_unsplit`] does.
#[allow(clippy::too_many_arguments)]
fn run_unsplit_in_place(
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
    let needed: u64 = (0..args.infos().len() as u32)
        .filter_map(|i| args.buffer_at(i))
        .map(|b| b.as_bytes().len() as u64)
        .sum();
    check_cap(plan, device, needed, options)?;
    let mut footprint = footprint;
    let mut gathered = Vec::new();
    let guarded = !options.unchecked && plan.guard.is_ok();
    let mut moved = in_place(plan, nd, args, res, device, guarded, options, &mut gathered)?;
    let guard_fired = moved.is_err();
    if let Err(names) = moved {
        footprint.notes.push(format!(
            "the run-time guard caught a write the analysis did not see (arguments {}); the original kernel re-ran on the same device",
            names.join(", ")
        ));
        moved = in_place(plan, nd, args, res, device, false, options, &mut gathered)?;
    }
    let Ok(moved) = moved else {
        unreachable!("no guard, no flags")
    };
    footprint.notes.push(format!(
        "ran unsplit on device {device}, over the buffers kept there: {} bytes sent to it",
        moved.to
    ));
    let slot = (device, slice);
    let mut report = one_device_report(plan, nd, slot, reason, moved, footprint, guard_fired);
    add_gathered(&mut report, &gathered);
    Ok(report)
}

/// One run of [`run_unsplit_in_place`], guarded or not: the sends, the
/// kernel, what the device holds afterwards. With the guard, a write the
/// analysis did not see returns the names of the arguments it caught, the
/// device's copies as they were before (or dropped where another holder
/// has the elements). `gathered` gets the device-to-host bytes.
#[allow(clippy::too_many_arguments)]
fn in_place(
    plan: &mut Plan,
    nd: &NdRange,
    args: &mut KernelArgs,
    res: &mut [Option<&mut Residency>],
    device: usize,
    guarded: bool,
    options: &LaunchOptions,
    gathered: &mut Vec<(usize, u64, u64)>,
) -> Result<std::result::Result<Moved, Vec<String>>> {
    match guarded {
        true => exec::cl_timed(|| plan.sub_kernel(device, false))?,
        false => exec::cl_timed(|| plan.whole_kernel(device))?,
    }
    let ctx = plan.kernels[&device].ctx.clone();
    let infos = args.infos().to_vec();
    let len_of = |args: &KernelArgs, i: usize| args.buffer_at(i as u32).map_or(0, |b| b.len());
    // What the analysis says the kernel writes (the guard checks it).
    let writes = |i: usize| {
        plan.arrays
            .iter()
            .find(|a| a.arg_index == i as u32)
            .is_some_and(|a| a.writes)
    };
    // Phase 0 (host): what the device lacks, gathered and placed whole
    // (the allocations keep the guard's sink after the elements).
    let (mut to, mut commands) = (0u64, 0u64);
    let mut sends: Vec<Vec<Rect>> = vec![Vec::new(); infos.len()];
    for i in 0..infos.len() {
        let (Some(r), Some(host)) = (res[i].as_deref_mut(), args.buffer_at_mut(i as u32)) else {
            continue;
        };
        let (es, n) = (host.elem().size.max(1) as u64, host.len() as i64);
        let all = Runs::interval(0, n - 1);
        let lacks = all.subtract(&r.coh.valid(Holder::Device(device)));
        gathered.extend(r.gather(host.as_bytes_mut(), es, &lacks)?);
        let whole = (0, n - 1);
        gathered.extend(ensure_alloc(
            r,
            &ctx,
            host.as_bytes_mut(),
            (es, 1),
            whole,
            false,
        )?);
        let fill = r.coh.valid(Holder::Host).intersect(&all);
        sends[i] = lacks.transfers(&fill, es, COST_MODEL);
    }
    // With the guard: the windows, and copies of what only the device
    // holds of the arrays it writes.
    let extras = whole_extras(plan, nd, args);
    let mut backups: Vec<(usize, Runs, Buffer<u8>)> = Vec::new();
    if guarded {
        for (i, info) in infos.iter().enumerate() {
            let Some(r) = res[i].as_deref() else {
                continue;
            };
            let all = Runs::interval(0, len_of(args, i) as i64 - 1);
            let kept = r.coh.exclusive_within(Holder::Device(device), &all);
            let (Some((lo, hi)), true) = (kept.hull(), writes(i)) else {
                continue;
            };
            let es = info.elem_size.max(1) as u64;
            let bytes = ((hi - lo + 1) as u64 * es) as usize;
            let mem = exec::alloc(&ctx, bytes)?;
            let alloc = &r.allocs[&device];
            let at = ((lo - alloc.base) as u64 * es) as usize;
            exec::release(exec::copy(&ctx, &alloc.mem, at, &mem, 0, bytes)?);
            backups.push((i, kept, mem));
        }
    }
    // Phase 1 (the device): the sends, the kernel, the flags.
    let dk = &plan.kernels[&device];
    let (kernel, memo) = match guarded {
        true => (dk.sub.as_ref(), &dk.sub_args),
        false => (dk.whole.as_ref(), &dk.whole_args),
    };
    let kernel = kernel.expect("built above");
    let scalars = scalar_values(args);
    let sink = if guarded { GUARD_SINK } else { 0 };
    let mut mems: Vec<Option<opencl3::types::cl_mem>> = vec![None; infos.len()];
    let mut regions: Vec<Option<HostRegion>> = vec![None; infos.len()];
    for i in 0..infos.len() {
        if let (Some(r), Some(host)) = (res[i].as_deref(), args.buffer_at_mut(i as u32)) {
            mems[i] = Some(r.allocs[&device].mem.get());
            regions[i] = Some(HostRegion::of(host.as_bytes_mut()));
        }
    }
    let mut flags = vec![0u8; GUARD_FLAG_BYTES];
    let _busy = ctx.take();
    let mut fin = Finisher::new();
    fin.add(&ctx);
    for (i, rects) in sends.iter().enumerate() {
        let (Some(r), Some(region)) = (res[i].as_deref(), regions[i]) else {
            continue;
        };
        let es = infos[i].elem_size.max(1) as u64;
        let alloc = &r.allocs[&device];
        for rect in rects {
            // SAFETY: bounds-checked against both sides; the host copy is
            // borrowed for this call and the queue finished before it
            // returns (Finisher).
            let ev = unsafe { exec::write_rect(&ctx, &alloc.mem, alloc.base, region, rect, es)? };
            exec::release(ev);
            to += rect.n_elems() * es;
            commands += 1;
        }
    }
    let flag_buf = match guarded {
        true => Some(exec::zero_flags(&ctx, GUARD_FLAG_BYTES)?),
        false => None,
    };
    let mut set: Vec<(&str, SetArg<'_>)> = infos
        .iter()
        .enumerate()
        .map(|(i, info)| {
            let arg = guarded_arg(&scalars[i], mems[i], sink, info.elem_size);
            (info.name.as_str(), arg)
        })
        .collect();
    if guarded {
        push_extra_args(&mut set, plan.extra_names(), &extras, flag_buf.as_ref());
    }
    exec::set_args_memo(&ctx, kernel, &set, memo)?;
    let offsets: Vec<usize> = nd.offset.iter().map(|&v| v as usize).collect();
    let global: Vec<usize> = nd.global.iter().map(|&v| v as usize).collect();
    let local: Vec<usize> = nd.local.iter().map(|&v| v as usize).collect();
    let ev = exec::run_kernel(&ctx, kernel, &offsets, &global, &local)?;
    if let Some(fb) = &flag_buf {
        // SAFETY: `flags` outlives the queue (declared before the Finisher).
        exec::release(unsafe { exec::read(&ctx, fb, 0, flags.as_mut_ptr(), flags.len())? });
    }
    fin.finish()?;
    let kernel_ms = exec::kernel_ms(&ctx, &ev)?;
    exec::release(ev);
    for i in 0..infos.len() {
        if let Some(r) = res[i].as_deref_mut() {
            r.coh
                .copied(Holder::Device(device), &Rect::union_of(&sends[i]));
        }
    }
    let raised: Vec<(u32, i32)> = match &plan.guard {
        Ok(g) if guarded => g
            .iter()
            .enumerate()
            .map(|(slot, &ai)| (ai, guard_bits(&flags, slot)))
            .filter(|&(_, f)| f != 0)
            .collect(),
        _ => Vec::new(),
    };
    if let Some(&(ai, _)) = raised.iter().find(|(_, f)| f & 1 != 0) {
        // what the kernel wrote before the access past the end is trusted
        // nowhere
        for (i, info) in infos.iter().enumerate() {
            if let (Some(r), ArgKind::GlobalBuffer) = (res[i].as_deref_mut(), info.kind) {
                let all = Runs::interval(0, len_of(args, i) as i64 - 1);
                r.coh.invalidate(Holder::Device(device), &all);
            }
        }
        return Err(out_of_bounds(plan, args, ai));
    }
    if !raised.is_empty() {
        // the written arrays back as they were where only the device held
        // them; the rest of them is valid elsewhere
        let mut fin = Finisher::new();
        fin.add(&ctx);
        for (i, kept, mem) in &backups {
            let r = res[*i].as_deref().expect("backed up above");
            let (lo, hi) = kept.hull().expect("backed up above");
            let es = infos[*i].elem_size.max(1) as u64;
            let bytes = ((hi - lo + 1) as u64 * es) as usize;
            let alloc = &r.allocs[&device];
            let at = ((lo - alloc.base) as u64 * es) as usize;
            exec::release(exec::copy(&ctx, mem, 0, &alloc.mem, at, bytes)?);
        }
        fin.finish()?;
        for i in (0..infos.len()).filter(|&i| writes(i)) {
            let kept = backups
                .iter()
                .find(|b| b.0 == i)
                .map_or_else(Runs::new, |b| b.1.clone());
            if let Some(r) = res[i].as_deref_mut() {
                let all = Runs::interval(0, len_of(args, i) as i64 - 1);
                r.coh
                    .invalidate(Holder::Device(device), &all.subtract(&kept));
            }
        }
        let names = raised
            .iter()
            .map(|&(ai, _)| infos[ai as usize].name.clone())
            .collect();
        return Ok(Err(names));
    }
    if let Some(fb) = flag_buf {
        exec::give_zero_flags(&ctx, fb);
    }
    // What it wrote: what the analysis says where the guard checked it
    // (an array it does not list was never touched), what it says or any
    // buffer it does not list where the launch is unchecked, every
    // `__global` buffer where nothing checked.
    for (i, info) in infos.iter().enumerate() {
        let Some(r) = res[i].as_deref_mut() else {
            continue;
        };
        let listed = plan.arrays.iter().any(|a| a.arg_index == i as u32);
        let written = info.kind == ArgKind::GlobalBuffer
            && match (guarded, options.unchecked) {
                (true, _) => writes(i),
                (false, true) => writes(i) || !listed,
                (false, false) => true,
            };
        if written {
            let all = Runs::interval(0, len_of(args, i) as i64 - 1);
            r.coh.written(Holder::Device(device), &all);
        }
    }
    Ok(Ok(Moved {
        kernel_ms,
        to,
        from: 0,
        commands,
    }))
}
