//! Thin, checked wrappers over the OpenCL calls a launch makes. Every
//! transfer is non-blocking; [`Finisher`] makes sure no command is still in
//! flight when host memory or device buffers go away, also on error paths.
//!
//! Host memory reaches OpenCL only through [`HostRegion`], bounds-checked on
//! both sides. Each device's part of a launch is enqueued, flushed and
//! finished from a thread of its own ([`Worker`]), because some drivers run
//! a queue's commands in the thread that enqueues or flushes them (PoCL's
//! `basic`), which would run the devices one after the other; a driver seen
//! to run its commands apart ([`runs_apart`], learned by [`probe_apart`]) is
//! enqueued from the launch's own thread instead. [`ArgMemo`] remembers the
//! argument values last set on a kernel object, so that a repeated launch
//! calls `clSetKernelArg` only for those that changed (a remembered buffer
//! is retained, so its handle cannot come to name another buffer). Device
//! buffers come from the device's pool and go back to it.

use std::cell::Cell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use opencl3::command_queue::{
    enqueue_copy_buffer, enqueue_read_buffer, enqueue_read_buffer_rect, enqueue_write_buffer,
    enqueue_write_buffer_rect, CL_NON_BLOCKING,
};
use opencl3::error_codes::ClError;
use opencl3::event::{Event, CL_COMPLETE};
use opencl3::kernel::{set_kernel_arg, Kernel};
use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::types::{cl_int, cl_mem};

use crate::error::{cl_err, LaunchError, Result};
use crate::runs::Rect;
use crate::runtime::DeviceCtx;

fn code_err<'a>(call: &'static str, ctx: &'a DeviceCtx) -> impl FnOnce(cl_int) -> LaunchError + 'a {
    move |code| LaunchError::OpenCl {
        call,
        code: String::from(ClError(code)),
        device: Some(ctx.info.label()),
    }
}

/// The error of the failed OpenCL call `call` on the device of `ctx`: the
/// device's label is formatted only on failure, never on the success path.
pub(crate) fn dev_err<'a>(
    call: &'static str,
    ctx: &'a DeviceCtx,
) -> impl FnOnce(ClError) -> LaunchError + 'a {
    move |e| cl_err(call, Some(ctx.info.label()))(e)
}

thread_local! {
    /// Time this thread has spent inside the OpenCL calls made through this
    /// module (and those the `launch` module wraps in [`cl_timed`]): what
    /// [`crate::RunReport::host_us`] subtracts from a launch's wall time.
    static CL_TIME: Cell<Duration> = const { Cell::new(Duration::ZERO) };
}

/// Runs `f`, which makes OpenCL calls, adding its duration to this thread's
/// OpenCL time ([`cl_time`]).
pub(crate) fn cl_timed<T>(f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let r = f();
    let dt = t.elapsed();
    CL_TIME.with(|c| c.set(c.get() + dt));
    r
}

/// Adds `d` to this thread's OpenCL time: time it waited for OpenCL calls
/// made in another thread.
pub(crate) fn add_cl_time(d: Duration) {
    CL_TIME.with(|c| c.set(c.get() + d));
}

/// This thread's OpenCL time so far (see [`cl_timed`]).
pub(crate) fn cl_time() -> Duration {
    CL_TIME.with(Cell::get)
}

/// Drops OpenCL handles (events, buffers: `clRelease*`), counted as OpenCL
/// time.
pub(crate) fn release<T>(handle: T) {
    cl_timed(|| drop(handle));
}

/// A device buffer of `bytes` bytes from the device's pool (see
/// `pool.rs`: its old contents count for nothing), else a new one
/// ([`alloc`]).
pub(crate) fn take(ctx: &DeviceCtx, bytes: usize) -> Result<Buffer<u8>> {
    match ctx.pool.take(bytes.max(1)) {
        Some(b) => Ok(b),
        None => alloc(ctx, bytes),
    }
}

/// Gives a buffer of `bytes` bytes that no launch uses any more (commands
/// on the device's queue may still use it) back to the device's pool, or
/// releases it when the pool is full.
pub(crate) fn give(ctx: &DeviceCtx, bytes: usize, buf: Buffer<u8>) {
    if let Some(b) = ctx.pool.give(bytes.max(1), buf) {
        release(b);
    }
}

/// A flag buffer of the guard (`bytes` bytes, at most 64) that holds
/// zeros: a pooled one (no command), else a new one with zeros written.
pub(crate) fn zero_flags(ctx: &DeviceCtx, bytes: usize) -> Result<Buffer<u8>> {
    static ZEROS: [u8; 64] = [0; 64];
    if let Some(b) = ctx.pool.take_zero_flags() {
        return Ok(b);
    }
    let b = alloc(ctx, bytes)?;
    let zeros = &ZEROS[..bytes.min(ZEROS.len())];
    // SAFETY: the source is a static.
    release(unsafe { write(ctx, &b, 0, zeros.as_ptr(), zeros.len())? });
    Ok(b)
}

/// Gives back a flag buffer whose read-back finished and showed every flag
/// clear: it holds zeros (see `pool.rs`).
pub(crate) fn give_zero_flags(ctx: &DeviceCtx, buf: Buffer<u8>) {
    if let Some(b) = ctx.pool.give_zero_flags(buf) {
        release(b);
    }
}

/// A device buffer of `bytes` bytes (at least one element's worth).
pub(crate) fn alloc(ctx: &DeviceCtx, bytes: usize) -> Result<Buffer<u8>> {
    // SAFETY: no host pointer is given.
    cl_timed(|| unsafe {
        Buffer::<u8>::create(
            &ctx.context,
            CL_MEM_READ_WRITE,
            bytes.max(1),
            std::ptr::null_mut(),
        )
    })
    .map_err(dev_err("clCreateBuffer", ctx))
}

/// A whole host buffer that transfers may touch: its base pointer and its
/// real length. Copies through [`write_host`] and [`read_host`] are checked
/// against it, whatever the range file says.
// The `launch` module switches its copies to these; until then unused.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HostRegion {
    ptr: *mut u8,
    len: usize,
}

impl HostRegion {
    /// The region of a whole host buffer (or staging vector).
    pub(crate) fn of(bytes: &mut [u8]) -> HostRegion {
        HostRegion {
            ptr: bytes.as_mut_ptr(),
            len: bytes.len(),
        }
    }

    /// Bytes in the region.
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

/// `offset..offset+len` inside `size` bytes, without overflow.
fn check_span(
    ctx: &DeviceCtx,
    op: &'static str,
    what: &'static str,
    offset: usize,
    len: usize,
    size: usize,
) -> Result<()> {
    match offset.checked_add(len) {
        Some(end) if end <= size => Ok(()),
        _ => Err(LaunchError::CopyOutOfBounds {
            op,
            what,
            offset: offset as u64,
            len: len as u64,
            size: size as u64,
            device: Some(ctx.info.label()),
        }),
    }
}

/// The size of a device buffer in bytes.
fn device_size(ctx: &DeviceCtx, buf: &Buffer<u8>) -> Result<usize> {
    cl_timed(|| buf.size()).map_err(dev_err("clGetMemObjectInfo", ctx))
}

/// Enqueues a non-blocking copy of `len` bytes from `host` at `host_offset`
/// to `buf` at `dev_offset`, refusing ([`LaunchError::CopyOutOfBounds`]) a
/// copy that reaches outside either buffer.
///
/// # Safety
/// The region must stay valid and unmodified until the queue finishes.
pub(crate) unsafe fn write_host(
    ctx: &DeviceCtx,
    buf: &Buffer<u8>,
    dev_offset: usize,
    host: HostRegion,
    host_offset: usize,
    len: usize,
) -> Result<Event> {
    const OP: &str = "host-to-device copy";
    check_span(ctx, OP, "host", host_offset, len, host.len)?;
    check_span(ctx, OP, "device", dev_offset, len, device_size(ctx, buf)?)?;
    // SAFETY: inside the region (checked); validity forwarded to the caller.
    unsafe { write(ctx, buf, dev_offset, host.ptr.add(host_offset), len) }
}

/// Enqueues a non-blocking copy of `len` bytes from `buf` at `dev_offset`
/// into `host` at `host_offset`, refusing ([`LaunchError::CopyOutOfBounds`])
/// a copy that reaches outside either buffer.
///
/// # Safety
/// The region must stay valid, and nothing else may access the bytes
/// copied, until the queue finishes.
pub(crate) unsafe fn read_host(
    ctx: &DeviceCtx,
    buf: &Buffer<u8>,
    dev_offset: usize,
    host: HostRegion,
    host_offset: usize,
    len: usize,
) -> Result<Event> {
    const OP: &str = "device-to-host copy";
    check_span(ctx, OP, "host", host_offset, len, host.len)?;
    check_span(ctx, OP, "device", dev_offset, len, device_size(ctx, buf)?)?;
    // SAFETY: inside the region (checked); validity forwarded to the caller.
    unsafe { read(ctx, buf, dev_offset, host.ptr.add(host_offset), len) }
}

/// Enqueues a non-blocking host → device copy. The device side is checked
/// against the buffer's size; the host side is the caller's (prefer
/// [`write_host`], which checks both).
///
/// # Safety
/// `src..src+len` must stay valid and unmodified until the queue finishes.
pub(crate) unsafe fn write(
    ctx: &DeviceCtx,
    buf: &Buffer<u8>,
    offset: usize,
    src: *const u8,
    len: usize,
) -> Result<Event> {
    check_span(
        ctx,
        "host-to-device copy",
        "device",
        offset,
        len,
        device_size(ctx, buf)?,
    )?;
    // SAFETY: forwarded to the caller.
    let ev = cl_timed(|| unsafe {
        enqueue_write_buffer(
            ctx.queue.get(),
            buf.get(),
            CL_NON_BLOCKING,
            offset,
            len,
            src as *const c_void,
            0,
            std::ptr::null(),
        )
    })
    .map_err(code_err("clEnqueueWriteBuffer", ctx))?;
    Ok(Event::new(ev))
}

/// Enqueues a non-blocking device → host copy. The device side is checked
/// against the buffer's size; the host side is the caller's (prefer
/// [`read_host`], which checks both).
///
/// # Safety
/// `dst..dst+len` must stay valid, and nothing else may access it, until the
/// queue finishes.
pub(crate) unsafe fn read(
    ctx: &DeviceCtx,
    buf: &Buffer<u8>,
    offset: usize,
    dst: *mut u8,
    len: usize,
) -> Result<Event> {
    check_span(
        ctx,
        "device-to-host copy",
        "device",
        offset,
        len,
        device_size(ctx, buf)?,
    )?;
    // SAFETY: forwarded to the caller.
    let ev = cl_timed(|| unsafe {
        enqueue_read_buffer(
            ctx.queue.get(),
            buf.get(),
            CL_NON_BLOCKING,
            offset,
            len,
            dst as *mut c_void,
            0,
            std::ptr::null(),
        )
    })
    .map_err(code_err("clEnqueueReadBuffer", ctx))?;
    Ok(Event::new(ev))
}

/// The byte geometry of a [`Rect`] of `es`-byte elements on a side whose
/// element `base` sits at byte 0: the origin `(x, y, z)` (x below the row
/// pitch, y below the rows of a plane), the region, the row and slice
/// pitches, and the span of bytes touched `[first, end)`.
struct RectBytes {
    origin: [usize; 3],
    region: [usize; 3],
    row_pitch: usize,
    slice_pitch: usize,
    first: usize,
    end: usize,
}

fn rect_bytes(rect: &Rect, base: i64, es: u64) -> Option<RectBytes> {
    let es = es as usize;
    let off = usize::try_from(rect.start.checked_sub(base)?)
        .ok()?
        .checked_mul(es)?;
    let row_pitch = (rect.row_pitch.max(rect.run) as usize).checked_mul(es)?;
    let slice_pitch = (rect.plane_pitch as usize)
        .max(row_pitch / es * rect.rows as usize)
        .checked_mul(es)?;
    let region = [
        (rect.run as usize).checked_mul(es)?,
        rect.rows.max(1) as usize,
        rect.planes.max(1) as usize,
    ];
    let span = (region[2] - 1)
        .checked_mul(slice_pitch)?
        .checked_add((region[1] - 1).checked_mul(row_pitch)?)?
        .checked_add(region[0])?;
    let (z, rem) = (off / slice_pitch, off % slice_pitch);
    let (y, x) = (rem / row_pitch, rem % row_pitch);
    Some(RectBytes {
        origin: [x, y, z],
        region,
        row_pitch,
        slice_pitch,
        first: off,
        end: off.checked_add(span)?,
    })
}

fn rect_err(
    ctx: &DeviceCtx,
    op: &'static str,
    what: &'static str,
    rect: &Rect,
    size: usize,
) -> LaunchError {
    LaunchError::CopyOutOfBounds {
        op,
        what,
        offset: rect.start.max(0) as u64,
        len: rect.n_elems(),
        size: size as u64,
        device: Some(ctx.info.label()),
    }
}

/// The device and host geometry of `rect` (device buffer starting at
/// array element `base`, host array at element 0), each checked against
/// its buffer's size.
fn rect_sides(
    ctx: &DeviceCtx,
    op: &'static str,
    buf: &Buffer<u8>,
    base: i64,
    host: HostRegion,
    rect: &Rect,
    es: u64,
) -> Result<(RectBytes, RectBytes)> {
    let size = device_size(ctx, buf)?;
    let d = rect_bytes(rect, base, es)
        .filter(|d| d.end <= size)
        .ok_or_else(|| rect_err(ctx, op, "device", rect, size))?;
    let h = rect_bytes(rect, 0, es)
        .filter(|h| h.end <= host.len)
        .ok_or_else(|| rect_err(ctx, op, "host", rect, host.len))?;
    Ok((d, h))
}

/// Enqueues a non-blocking copy of the elements of `rect` from the host
/// array `host` (element 0 at byte 0) into `buf`, whose first element is
/// array element `base` (one `clEnqueueWriteBufferRect`, or a plain write
/// for a single run). Both sides are bounds-checked.
///
/// # Safety
/// The region must stay valid and unmodified until the queue finishes.
pub(crate) unsafe fn write_rect(
    ctx: &DeviceCtx,
    buf: &Buffer<u8>,
    base: i64,
    host: HostRegion,
    rect: &Rect,
    es: u64,
) -> Result<Event> {
    let (d, h) = rect_sides(ctx, "host-to-device copy", buf, base, host, rect, es)?;
    if rect.rows <= 1 && rect.planes <= 1 {
        // SAFETY: inside both buffers (checked); validity forwarded to the caller.
        return unsafe { write(ctx, buf, d.first, host.ptr.add(h.first), h.end - h.first) };
    }
    // SAFETY: as above; the host origin is given as the pointer offset.
    let ev = cl_timed(|| unsafe {
        enqueue_write_buffer_rect(
            ctx.queue.get(),
            buf.get(),
            CL_NON_BLOCKING,
            d.origin.as_ptr(),
            h.origin.as_ptr(),
            d.region.as_ptr(),
            d.row_pitch,
            d.slice_pitch,
            h.row_pitch,
            h.slice_pitch,
            host.ptr as *const c_void,
            0,
            std::ptr::null(),
        )
    })
    .map_err(code_err("clEnqueueWriteBufferRect", ctx))?;
    Ok(Event::new(ev))
}

/// Enqueues a non-blocking copy of the elements of `rect` from `buf` (first
/// element: array element `base`) into the host array `host`; see
/// [`write_rect`].
///
/// # Safety
/// The region must stay valid, and nothing else may access the bytes
/// copied, until the queue finishes.
pub(crate) unsafe fn read_rect(
    ctx: &DeviceCtx,
    buf: &Buffer<u8>,
    base: i64,
    host: HostRegion,
    rect: &Rect,
    es: u64,
) -> Result<Event> {
    let (d, h) = rect_sides(ctx, "device-to-host copy", buf, base, host, rect, es)?;
    if rect.rows <= 1 && rect.planes <= 1 {
        // SAFETY: inside both buffers (checked); validity forwarded to the caller.
        return unsafe { read(ctx, buf, d.first, host.ptr.add(h.first), h.end - h.first) };
    }
    // SAFETY: as above.
    let ev = cl_timed(|| unsafe {
        enqueue_read_buffer_rect(
            ctx.queue.get(),
            buf.get(),
            CL_NON_BLOCKING,
            d.origin.as_ptr(),
            h.origin.as_ptr(),
            d.region.as_ptr(),
            d.row_pitch,
            d.slice_pitch,
            h.row_pitch,
            h.slice_pitch,
            host.ptr as *mut c_void,
            0,
            std::ptr::null(),
        )
    })
    .map_err(code_err("clEnqueueReadBufferRect", ctx))?;
    Ok(Event::new(ev))
}

/// Enqueues a copy of `len` bytes between two buffers of one device (both
/// sides checked).
pub(crate) fn copy(
    ctx: &DeviceCtx,
    src: &Buffer<u8>,
    src_offset: usize,
    dst: &Buffer<u8>,
    dst_offset: usize,
    len: usize,
) -> Result<Event> {
    const OP: &str = "device-to-device copy";
    check_span(ctx, OP, "source", src_offset, len, device_size(ctx, src)?)?;
    check_span(
        ctx,
        OP,
        "destination",
        dst_offset,
        len,
        device_size(ctx, dst)?,
    )?;
    // SAFETY: both spans are inside their buffers (checked); the buffers are
    // kept alive by the caller until the queue finishes.
    let ev = cl_timed(|| unsafe {
        enqueue_copy_buffer(
            ctx.queue.get(),
            src.get(),
            dst.get(),
            src_offset,
            dst_offset,
            len,
            0,
            std::ptr::null(),
        )
    })
    .map_err(code_err("clEnqueueCopyBuffer", ctx))?;
    Ok(Event::new(ev))
}

/// One kernel argument value as it is handed to `clSetKernelArg`.
pub(crate) enum SetArg<'a> {
    Mem(cl_mem),
    Bytes(&'a [u8]),
    Local(usize),
    Long(i64),
}

/// The argument values last set on one kernel object: a launch that sets
/// the same value again makes no `clSetKernelArg` call (a kernel object
/// keeps its arguments until they are set again). A buffer argument's
/// handle is retained while it is remembered, so that the handle cannot
/// name another buffer (a released one's address reused) while it is
/// compared against.
#[derive(Default)]
pub(crate) struct ArgMemo {
    vals: Vec<Option<MemoVal>>,
    /// The retained buffers of `vals`' `Mem` entries.
    held: Vec<Option<Buffer<u8>>>,
}

// SAFETY: OpenCL handles may be used from any thread; the raw `cl_mem`
// values are only compared, and the buffers they name are held.
unsafe impl Send for ArgMemo {}

#[derive(PartialEq)]
enum MemoVal {
    Mem(cl_mem),
    Bytes(Vec<u8>),
    Local(usize),
    Long(i64),
}

impl MemoVal {
    fn is(&self, arg: &SetArg<'_>) -> bool {
        match (self, arg) {
            (MemoVal::Mem(a), SetArg::Mem(b)) => a == b,
            (MemoVal::Bytes(a), SetArg::Bytes(b)) => a.as_slice() == *b,
            (MemoVal::Local(a), SetArg::Local(b)) => a == b,
            (MemoVal::Long(a), SetArg::Long(b)) => a == b,
            _ => false,
        }
    }

    fn of(arg: &SetArg<'_>) -> MemoVal {
        match arg {
            SetArg::Mem(m) => MemoVal::Mem(*m),
            SetArg::Bytes(b) => MemoVal::Bytes(b.to_vec()),
            SetArg::Local(n) => MemoVal::Local(*n),
            SetArg::Long(v) => MemoVal::Long(*v),
        }
    }
}

/// [`set_args`] that skips the arguments whose value `memo` (the kernel
/// object's own) says is already set, and records the others.
pub(crate) fn set_args_memo(
    ctx: &DeviceCtx,
    kernel: &Kernel,
    args: &[(&str, SetArg<'_>)],
    memo: &Mutex<ArgMemo>,
) -> Result<()> {
    let mut memo = memo.lock().unwrap_or_else(|p| p.into_inner());
    if memo.vals.len() != args.len() {
        memo.vals = (0..args.len()).map(|_| None).collect();
        memo.held = (0..args.len()).map(|_| None).collect();
    }
    let changed: Vec<usize> = (0..args.len())
        .filter(|&i| !memo.vals[i].as_ref().is_some_and(|v| v.is(&args[i].1)))
        .collect();
    if changed.is_empty() {
        return Ok(());
    }
    // forget first: after a failure the kernel's arguments are unknown
    for &i in &changed {
        memo.vals[i] = None;
    }
    set_some(ctx, kernel, args, Some(&changed))?;
    let mut released = Vec::new();
    for &i in &changed {
        let held = match args[i].1 {
            SetArg::Mem(m) if !m.is_null() => {
                // SAFETY: `m` is a live buffer (the caller set it as an
                // argument); the retained reference is released by the
                // `Buffer` made of it.
                cl_timed(|| unsafe { opencl3::memory::retain_mem_object(m) })
                    .map_err(code_err("clRetainMemObject", ctx))?;
                Some(Buffer::<u8>::new(m))
            }
            _ => None,
        };
        released.extend(std::mem::replace(&mut memo.held[i], held));
        memo.vals[i] = Some(MemoVal::of(&args[i].1));
    }
    release(released);
    Ok(())
}

/// Sets all arguments of a kernel, naming the argument on failure.
pub(crate) fn set_args(
    ctx: &DeviceCtx,
    kernel: &Kernel,
    args: &[(&str, SetArg<'_>)],
) -> Result<()> {
    set_some(ctx, kernel, args, None)
}

/// Sets the arguments `only` names (all when `None`).
fn set_some(
    ctx: &DeviceCtx,
    kernel: &Kernel,
    args: &[(&str, SetArg<'_>)],
    only: Option<&[usize]>,
) -> Result<()> {
    // One timed section for the list (between the calls the loop only
    // picks each value's pointer), not two clock reads per argument.
    let failed = cl_timed(|| {
        for (i, (_, arg)) in args.iter().enumerate() {
            if only.is_some_and(|o| !o.contains(&i)) {
                continue;
            }
            // SAFETY: every pointer refers to a live value of the given size; the
            // implementation copies it before returning.
            let r = unsafe {
                match arg {
                    SetArg::Mem(m) => set_kernel_arg(
                        kernel.get(),
                        i as u32,
                        std::mem::size_of::<cl_mem>(),
                        m as *const cl_mem as *const c_void,
                    ),
                    SetArg::Bytes(b) => {
                        set_kernel_arg(kernel.get(), i as u32, b.len(), b.as_ptr() as *const c_void)
                    }
                    SetArg::Local(n) => {
                        set_kernel_arg(kernel.get(), i as u32, (*n).max(1), std::ptr::null())
                    }
                    SetArg::Long(v) => set_kernel_arg(
                        kernel.get(),
                        i as u32,
                        std::mem::size_of::<i64>(),
                        v as *const i64 as *const c_void,
                    ),
                }
            };
            if let Err(code) = r {
                return Some((i, code));
            }
        }
        None
    });
    if let Some((i, code)) = failed {
        return Err(LaunchError::OpenCl {
            call: "clSetKernelArg",
            code: format!("{} (argument '{}')", String::from(ClError(code)), args[i].0),
            device: Some(ctx.info.label()),
        });
    }
    Ok(())
}

/// Enqueues an NDRange.
pub(crate) fn run_kernel(
    ctx: &DeviceCtx,
    kernel: &Kernel,
    offset: &[usize],
    global: &[usize],
    local: &[usize],
) -> Result<Event> {
    // SAFETY: the three arrays have work_dim entries and live across the call.
    cl_timed(|| unsafe {
        ctx.queue.enqueue_nd_range_kernel(
            kernel.get(),
            global.len() as u32,
            offset.as_ptr(),
            global.as_ptr(),
            local.as_ptr(),
            &[],
        )
    })
    .map_err(dev_err("clEnqueueNDRangeKernel", ctx))
}

/// Kernel time of a profiled event, in milliseconds.
pub(crate) fn kernel_ms(ctx: &DeviceCtx, ev: &Event) -> Result<f64> {
    span_ms(ctx, ev, ev)
}

/// Milliseconds from `first`'s start to `last`'s end (profiling events of
/// one queue), waiting for `last`.
pub(crate) fn span_ms(ctx: &DeviceCtx, first: &Event, last: &Event) -> Result<f64> {
    cl_timed(|| last.wait()).map_err(dev_err("clWaitForEvents", ctx))?;
    let start = cl_timed(|| first.profiling_command_start())
        .map_err(dev_err("clGetEventProfilingInfo", ctx))?;
    let end = cl_timed(|| last.profiling_command_end())
        .map_err(dev_err("clGetEventProfilingInfo", ctx))?;
    Ok(end.saturating_sub(start) as f64 / 1e6)
}

/// Work handed to a device's worker thread.
type Job = Box<dyn FnOnce() + Send + 'static>;

/// A device's worker thread, started on first use and kept while the
/// device's context lives: [`on_devices`] runs each device's part of a
/// launch there instead of starting a thread per launch. Some drivers run a
/// queue's commands inside the thread that enqueues, flushes or finishes
/// them (PoCL's `basic`), so each device needs a thread of its own for the
/// devices to run at once, unless its driver runs them apart
/// ([`runs_apart`]): such devices are all enqueued from the launch's own
/// thread, with no hand-off.
pub(crate) struct Worker {
    tx: std::sync::OnceLock<Option<Mutex<mpsc::Sender<Job>>>>,
    /// What launches have seen of the driver ([`probe_apart`]): the number
    /// of probes that found the kernel already finished, up to
    /// `APART_PROBES`, or `RUNS_APART`.
    apart: AtomicU8,
}

/// [`Worker::apart`]: a kernel was seen unfinished right after its queue
/// was flushed.
const RUNS_APART: u8 = u8::MAX;

/// Probes that find a device's kernel finished right after the flush
/// before [`probe_apart`] stops asking (the driver likely runs commands in
/// the thread that enqueues or flushes them).
const APART_PROBES: u8 = 16;

/// Whether the device's driver runs its commands on threads of its own:
/// a launch saw its kernel unfinished right after the enqueue and the
/// flush had returned, so neither ran it in the calling thread. (A driver
/// that ran commands only inside `clFinish`, in the waiting thread, would
/// pass for one that runs them apart: its devices would then run one after
/// the other, slower, with the same results.)
pub(crate) fn runs_apart(ctx: &DeviceCtx) -> bool {
    ctx.worker.apart.load(Ordering::Relaxed) == RUNS_APART
}

/// After a device's commands are enqueued and its queue flushed: looks at
/// its kernel `ev` once more, unless [`runs_apart`] is known or enough
/// probes found the kernel finished. A probe that fails counts for nothing.
pub(crate) fn probe_apart(ctx: &DeviceCtx, ev: &Event) {
    let seen = ctx.worker.apart.load(Ordering::Relaxed);
    if seen >= APART_PROBES {
        return;
    }
    let next = match cl_timed(|| ev.command_execution_status()) {
        Ok(s) if s.0 > CL_COMPLETE => RUNS_APART,
        Ok(_) => seen + 1,
        Err(_) => return,
    };
    let _ = ctx
        .worker
        .apart
        .compare_exchange(seen, next, Ordering::Relaxed, Ordering::Relaxed);
}

/// Flushes the queue of `ctx`: its commands start.
pub(crate) fn flush_queue(ctx: &DeviceCtx) -> Result<()> {
    cl_timed(|| ctx.queue.flush()).map_err(dev_err("clFlush", ctx))
}

impl Worker {
    pub(crate) fn new() -> Worker {
        Worker {
            tx: std::sync::OnceLock::new(),
            apart: AtomicU8::new(0),
        }
    }

    /// Hands `job` to the thread; gives it back when there is no thread (it
    /// could not be started).
    fn submit(&self, job: Job) -> std::result::Result<(), Job> {
        let tx = self.tx.get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("clpart-device".into())
                // jobs catch their own panics (see `on_devices`): the loop
                // ends only when the device's context drops the sender
                .spawn(move || rx.into_iter().for_each(|job| job()))
                .ok()
                .map(|_| Mutex::new(tx))
        });
        match tx {
            Some(tx) => tx
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .send(job)
                .map_err(|e| e.0),
            None => Err(job),
        }
    }
}

/// How many of a call's jobs have not finished yet.
struct Latch {
    left: Mutex<usize>,
    done: Condvar,
}

impl Latch {
    fn count_down(&self) {
        let mut left = self.left.lock().unwrap_or_else(|p| p.into_inner());
        *left -= 1;
        self.done.notify_all();
    }

    fn wait(&self) {
        let mut left = self.left.lock().unwrap_or_else(|p| p.into_inner());
        while *left > 0 {
            left = self.done.wait(left).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// Runs `f` on every item at once, each on its device: the first in this
/// thread, the others on their devices' worker threads ([`Worker`]; in this
/// thread when a worker cannot be had), and returns their results in order
/// with the instant this thread finished the first and began to wait for
/// the others. A panic in `f` is re-raised here, after every item has
/// finished.
pub(crate) fn on_devices<T: Send, R: Send>(
    items: Vec<(&DeviceCtx, T)>,
    f: impl Fn(T) -> R + Sync,
) -> (Vec<R>, Instant) {
    let n = items.len();
    if n <= 1 {
        let out = items.into_iter().map(|(_, t)| f(t)).collect();
        return (out, Instant::now());
    }
    let slots: Vec<Mutex<Option<std::thread::Result<R>>>> =
        (0..n).map(|_| Mutex::new(None)).collect();
    let latch = Latch {
        left: Mutex::new(n - 1),
        done: Condvar::new(),
    };
    let mut items = items.into_iter();
    let (_, first) = items.next().expect("n > 1");
    {
        let (f, slots, latch) = (&f, &slots, &latch);
        for (i, (ctx, item)) in items.enumerate() {
            let job: Box<dyn FnOnce() + Send + '_> = Box::new(move || {
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(item)));
                *slots[i + 1].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
                // the last use of anything borrowed: the caller may return
                // as soon as the count reaches zero
                latch.count_down();
            });
            // SAFETY: the job borrows `f`, `slots`, `latch` and the items'
            // borrows, all of which outlive this call: it returns (or
            // unwinds) only after `latch.wait()`, which waits until every
            // job has counted down, its last access to them.
            let job: Job =
                unsafe { std::mem::transmute::<Box<dyn FnOnce() + Send + '_>, Job>(job) };
            if let Err(job) = ctx.worker.submit(job) {
                job();
            }
        }
    }
    let r0 = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(first)));
    let wait_from = Instant::now();
    latch.wait();
    let mut out = Vec::with_capacity(n);
    match r0 {
        Ok(v) => out.push(v),
        Err(p) => std::panic::resume_unwind(p),
    }
    for slot in slots.into_iter().skip(1) {
        match slot
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .expect("every job finished")
        {
            Ok(v) => out.push(v),
            Err(p) => std::panic::resume_unwind(p),
        }
    }
    (out, wait_from)
}

/// Runs `f` on every device at once (see [`on_devices`]).
fn on_each<R: Send>(ctxs: &[Arc<DeviceCtx>], f: impl Fn(&DeviceCtx) -> R + Sync) -> Vec<R> {
    on_devices(ctxs.iter().map(|c| (&**c, &**c)).collect(), f).0
}

/// Waits for the queues it holds when dropped (errors ignored), so that an
/// early return never frees memory an enqueued command still uses.
/// [`Finisher::finish`] waits and reports errors.
pub(crate) struct Finisher {
    ctxs: Vec<Arc<DeviceCtx>>,
}

impl Finisher {
    pub(crate) fn new() -> Finisher {
        Finisher { ctxs: Vec::new() }
    }

    pub(crate) fn add(&mut self, ctx: &Arc<DeviceCtx>) {
        if !self.ctxs.iter().any(|c| Arc::ptr_eq(c, ctx)) {
            self.ctxs.push(ctx.clone());
        }
    }

    /// Flushes every queue (so all devices start), then waits for each.
    pub(crate) fn finish(self) -> Result<()> {
        if self.ctxs.is_empty() {
            return Ok(());
        }
        cl_timed(|| self.finish_untimed())
    }

    fn finish_untimed(mut self) -> Result<()> {
        let ctxs = std::mem::take(&mut self.ctxs);
        let results = on_each(&ctxs, |c| {
            let _ = c.queue.flush();
            c.queue.finish()
        });
        let mut first_err = None;
        for (c, r) in ctxs.iter().zip(results) {
            if let Err(e) = r {
                first_err.get_or_insert(LaunchError::OpenCl {
                    call: "clFinish",
                    code: String::from(e),
                    device: Some(c.info.label()),
                });
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Forgets the queues, without waiting: each was finished
    /// ([`finish_queue`]) since its last command was enqueued.
    pub(crate) fn disarm(mut self) {
        self.ctxs.clear();
    }
}

/// Waits, in this thread, for the queue of `ctx` (`clFinish` flushes it
/// first).
pub(crate) fn finish_queue(ctx: &DeviceCtx) -> Result<()> {
    cl_timed(|| ctx.queue.finish()).map_err(dev_err("clFinish", ctx))
}

impl Drop for Finisher {
    fn drop(&mut self) {
        for c in &self.ctxs {
            let _ = c.queue.finish();
        }
    }
}
