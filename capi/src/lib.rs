//! clpart's C API: `libclpart.so` / `libclpart.a` with the header
//! `capi/include/clpart.h`.
//!
//! An OpenCL application keeps its host code (platforms, devices, host
//! arrays, argument setting, the launch) and hands the kernel to a
//! `clpart_plan` instead of `clEnqueueNDRangeKernel`: the plan analyzes the
//! kernel (or loads its range file), splits the NDRange across the devices
//! by the given shares, moves to each device only the ranges its slice
//! touches and writes the glued outputs back into the application's arrays.
//!
//! This is the only crate of clpart with `extern "C"`. Every entry point
//! runs inside [`status`]'s guard: errors become a status code plus a
//! thread-local message, panics are caught (never unwind into C), and a plan
//! handle is checked against the set of live plans before it is used, so a
//! NULL, released or foreign handle gives `CLPART_INVALID_HANDLE` instead of
//! undefined behavior. The safe state of a plan is [`plan::PlanState`].
//!
//! The header `include/clpart.h` is cbindgen's output for this crate's
//! sources (`cbindgen.toml`: the prose at its top, then the status codes,
//! types and prototypes with these doc comments); `tests/header.rs`
//! generates it again and fails on any difference (`CLPART_BLESS=1`
//! rewrites it).

#![allow(non_camel_case_types)]

mod buffer;
mod plan;
pub mod status;

use std::collections::BTreeSet;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Mutex;

use launcher::NdRange;

use crate::plan::{runtime, PlanState, Shares};
pub use crate::status::*;
use crate::status::{err, guard, last_error_ptr, status_cname, Error, Result};

/// OpenCL's `cl_uint`.
pub type cl_uint = u32;
/// OpenCL's `cl_device_id` (an opaque handle).
pub type cl_device_id = *mut c_void;

/// A kernel ready to be launched split across devices (opaque to C).
pub struct clpart_plan {
    state: PlanState,
}

/// A buffer whose elements stay on the devices across launches (opaque to C).
pub struct clpart_buffer {
    data: buffer::Shared,
}

/// The outcome of a plan's last launch.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct clpart_report {
    /// 1 when the kernel ran split across devices, 0 when it ran whole on
    /// one device (the text report says why).
    pub split: c_int,
    /// 1 when verification ran and every output byte matched, 0 when it
    /// found a difference, -1 when verification was off.
    pub verified: c_int,
    /// 1 when this launch ran the analysis, 0 when it reused a cached one.
    pub analyzed: c_int,
    /// The NDRange dimension that was split (0 when it ran whole).
    pub split_dim: cl_uint,
    /// Devices that ran work-groups: entries of `clpart_plan_report_device`.
    pub n_devices: cl_uint,
    /// Bytes moved between host and devices, both directions, all devices.
    pub bytes_total: u64,
    /// Bytes a whole-buffer split would move.
    pub bytes_whole_buffers: u64,
    /// Bytes of the distinct elements the slices touch; `UINT64_MAX` when
    /// unknown.
    pub bytes_exact: u64,
    /// Milliseconds spent analyzing the kernel for this launch (0 when cached).
    pub analysis_ms: f64,
    /// Milliseconds of the launch: transfers, kernels and gluing (without the
    /// analysis and verification).
    pub wall_ms: f64,
}

/// What one device did in a plan's last launch.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct clpart_device_report {
    /// The device's clpart index.
    pub device_index: cl_uint,
    /// Work-groups the device ran.
    pub work_groups: u64,
    /// First work-group of its slice along the split dimension.
    pub slice_begin: u64,
    /// One past the last work-group of its slice.
    pub slice_end: u64,
    /// Bytes copied host to device.
    pub bytes_to_device: u64,
    /// Bytes copied device to host.
    pub bytes_from_device: u64,
    /// Kernel execution time (OpenCL profiling), milliseconds.
    pub kernel_ms: f64,
}

/// Addresses of the live plans: handles are checked here before use.
static LIVE: Mutex<BTreeSet<usize>> = Mutex::new(BTreeSet::new());

fn live() -> std::sync::MutexGuard<'static, BTreeSet<usize>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// The state behind a handle, after checking that it is a live plan.
///
/// # Safety
/// The plan must not be used by another thread during the call (the
/// header's thread-safety rule).
unsafe fn state<'a>(plan: *const clpart_plan) -> Result<&'a mut PlanState> {
    if plan.is_null() {
        return err(CLPART_INVALID_HANDLE, "the plan is NULL");
    }
    if !live().contains(&(plan as usize)) {
        return err(
            CLPART_INVALID_HANDLE,
            format!("{plan:p} is not a live plan (released, or never created by clpart)"),
        );
    }
    // SAFETY: live plans are boxes leaked by `register` and freed only by
    // `clpart_plan_release`; one thread at a time uses a plan.
    Ok(unsafe { &mut (*(plan as *mut clpart_plan)).state })
}

/// Addresses of the live buffer handles.
static LIVE_BUFFERS: Mutex<BTreeSet<usize>> = Mutex::new(BTreeSet::new());

fn live_buffers() -> std::sync::MutexGuard<'static, BTreeSet<usize>> {
    LIVE_BUFFERS.lock().unwrap_or_else(|p| p.into_inner())
}

/// The data behind a buffer handle, after checking that it is live.
///
/// # Safety
/// `buf` is NULL, a live handle, or any other value that is only compared.
unsafe fn buffer_data<'a>(buf: *const clpart_buffer) -> Result<&'a buffer::Shared> {
    if buf.is_null() {
        return err(CLPART_INVALID_HANDLE, "the buffer is NULL");
    }
    if !live_buffers().contains(&(buf as usize)) {
        return err(
            CLPART_INVALID_HANDLE,
            format!("{buf:p} is not a live buffer (released, or never created by clpart)"),
        );
    }
    // SAFETY: live buffers are boxes leaked by `register_buffer` and freed
    // only by `clpart_buffer_release`.
    Ok(unsafe { &(*buf).data })
}

fn register_buffer(data: buffer::Shared) -> *mut clpart_buffer {
    let p = Box::into_raw(Box::new(clpart_buffer { data }));
    live_buffers().insert(p as usize);
    p
}

fn register(state: PlanState) -> *mut clpart_plan {
    let p = Box::into_raw(Box::new(clpart_plan { state }));
    live().insert(p as usize);
    p
}

/// A NUL-terminated UTF-8 string argument.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string.
unsafe fn c_str<'a>(p: *const c_char, what: &str) -> Result<&'a str> {
    if p.is_null() {
        return err(CLPART_INVALID_ARGUMENT, format!("{what} is NULL"));
    }
    // SAFETY: the caller's contract.
    unsafe { CStr::from_ptr(p) }.to_str().map_err(|_| {
        Error::new(
            CLPART_INVALID_ARGUMENT,
            format!("{what} is not valid utf-8"),
        )
    })
}

/// Like [`c_str`], NULL giving `None`.
unsafe fn opt_c_str<'a>(p: *const c_char, what: &str) -> Result<Option<&'a str>> {
    if p.is_null() {
        Ok(None)
    } else {
        unsafe { c_str(p, what) }.map(Some)
    }
}

fn out_ptr<T>(p: *mut T, what: &str) -> Result<()> {
    if p.is_null() {
        return err(CLPART_INVALID_ARGUMENT, format!("{what} is NULL"));
    }
    Ok(())
}

/// The message of the last failed clpart call on this thread ("" when the
/// last call succeeded). Owned by clpart; valid until the next clpart call
/// on this thread. Never NULL.
#[no_mangle]
pub extern "C" fn clpart_last_error() -> *const c_char {
    std::panic::catch_unwind(last_error_ptr).unwrap_or(c"".as_ptr())
}

/// The name of a status code, e.g. "CLPART_SIZE_MISMATCH", or
/// "CLPART_UNKNOWN_STATUS". A static string. Never NULL.
#[no_mangle]
pub extern "C" fn clpart_status_name(status: c_int) -> *const c_char {
    status_cname(status)
        .unwrap_or(c"CLPART_UNKNOWN_STATUS")
        .as_ptr()
}

/// The version of the clpart library loaded at run time, "MAJOR.MINOR.PATCH"
/// (Cargo's version of clpart). The header a program was compiled with has
/// its own, CLPART_VERSION_STRING; they differ when the program runs
/// against a newer library of the same major version. A static string.
/// Never NULL.
#[no_mangle]
pub extern "C" fn clpart_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The number of OpenCL devices clpart sees, over all platforms.
/// CLPART_DEVICE_NOT_FOUND when there is none.
///
/// # Safety
/// `out_count` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clpart_device_count(out_count: *mut cl_uint) -> c_int {
    guard(|| {
        out_ptr(out_count, "out_count")?;
        let n = runtime()?.devices().len() as cl_uint;
        // SAFETY: checked not null; the caller's contract.
        unsafe { *out_count = n };
        Ok(())
    })
}

/// The name of device device_index, OpenCL style: with buf NULL, only
/// *out_size (bytes including the terminating NUL) is written; otherwise the
/// NUL-terminated name is copied into buf (buf_size bytes;
/// CLPART_SIZE_MISMATCH when too small). out_size may be NULL when buf is
/// given.
///
/// # Safety
/// `buf` is NULL or writable for `buf_size` bytes; `out_size` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn clpart_device_name(
    device_index: cl_uint,
    buf: *mut c_char,
    buf_size: usize,
    out_size: *mut usize,
) -> c_int {
    guard(|| {
        let rt = runtime()?;
        let info = rt.device(device_index as usize)?;
        let name = info.name.replace('\0', " ");
        let needed = name.len() + 1;
        if !out_size.is_null() {
            // SAFETY: the caller's contract.
            unsafe { *out_size = needed };
        }
        if buf.is_null() {
            if out_size.is_null() {
                return err(CLPART_INVALID_ARGUMENT, "buf and out_size are both NULL");
            }
            return Ok(());
        }
        if buf_size < needed {
            return err(
                CLPART_SIZE_MISMATCH,
                format!("buf_size {buf_size} is too small for the name of device {device_index} ({needed} bytes)"),
            );
        }
        // SAFETY: `buf` holds at least `needed` bytes (the caller's contract).
        unsafe {
            std::ptr::copy_nonoverlapping(name.as_ptr(), buf.cast::<u8>(), name.len());
            *buf.add(name.len()) = 0;
        }
        Ok(())
    })
}

/// The clpart index of one of the application's devices (a cl_device_id from
/// clGetDeviceIDs in this process). CLPART_DEVICE_NOT_FOUND for NULL, a
/// sub-device or an unknown handle. The handle is only compared.
///
/// # Safety
/// `out_index` is NULL or writable. `device` is only compared, never
/// dereferenced.
#[no_mangle]
pub unsafe extern "C" fn clpart_device_index(
    device: cl_device_id,
    out_index: *mut cl_uint,
) -> c_int {
    guard(|| {
        out_ptr(out_index, "out_index")?;
        let i = device_index(device)?;
        // SAFETY: checked not null; the caller's contract.
        unsafe { *out_index = i as cl_uint };
        Ok(())
    })
}

fn device_index(device: cl_device_id) -> Result<usize> {
    if device.is_null() {
        return err(CLPART_DEVICE_NOT_FOUND, "the cl_device_id is NULL");
    }
    let rt = runtime()?;
    rt.device_index_of(device).ok_or_else(|| {
        let valid = rt
            .devices()
            .iter()
            .map(|d| d.label())
            .collect::<Vec<_>>()
            .join(", ");
        Error::new(
            CLPART_DEVICE_NOT_FOUND,
            format!("cl_device_id {device:p} is none of clpart's devices ({valid}); sub-devices are not supported"),
        )
    })
}

/// Creates a plan for kernel kernel_name (NULL: the first kernel) of the
/// NUL-terminated OpenCL C source. build_options (NULL or e.g. "-DN=16
/// -DTYPE=float", separated by spaces; no quoting) are used both by the
/// analysis and by the OpenCL compiler. The source is parsed now
/// (CLPART_ANALYSIS_FAILED with file:line:col on a syntax error or an
/// unknown kernel name); the analysis runs at the first launch of each
/// distinct global size, local size and integer scalar argument values and
/// is cached in the plan (up to 16 configurations). On success *out_plan is
/// a new plan the caller releases with clpart_plan_release; on failure it is
/// set to NULL.
///
/// # Safety
/// The strings are NULL or NUL-terminated; `out_plan` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clpart_plan_create_from_source(
    source: *const c_char,
    kernel_name: *const c_char,
    build_options: *const c_char,
    out_plan: *mut *mut clpart_plan,
) -> c_int {
    guard(|| {
        out_ptr(out_plan, "out_plan")?;
        // SAFETY: checked not null.
        unsafe { *out_plan = std::ptr::null_mut() };
        let source = unsafe { c_str(source, "source") }?;
        let kernel = unsafe { opt_c_str(kernel_name, "kernel_name") }?;
        let options = unsafe { opt_c_str(build_options, "build_options") }?
            .unwrap_or("")
            .split_whitespace()
            .map(str::to_string)
            .collect();
        let state = PlanState::from_source(source, kernel, options)?;
        // SAFETY: checked not null.
        unsafe { *out_plan = register(state) };
        Ok(())
    })
}

/// Creates a plan for kernel kernel_name (NULL: the first kernel) of a range
/// file written by `clpart analyze -o FILE.ron` (nothing is analyzed at
/// launch). *out_plan as for clpart_plan_create_from_source.
///
/// # Safety
/// The strings are NULL or NUL-terminated; `out_plan` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clpart_plan_create_from_range_file(
    path: *const c_char,
    kernel_name: *const c_char,
    out_plan: *mut *mut clpart_plan,
) -> c_int {
    guard(|| {
        out_ptr(out_plan, "out_plan")?;
        // SAFETY: checked not null.
        unsafe { *out_plan = std::ptr::null_mut() };
        let path = unsafe { c_str(path, "path") }?;
        let kernel = unsafe { opt_c_str(kernel_name, "kernel_name") }?;
        let state = PlanState::from_range_file(path, kernel)?;
        // SAFETY: checked not null.
        unsafe { *out_plan = register(state) };
        Ok(())
    })
}

/// The number of arguments of the plan's kernel.
///
/// # Safety
/// `plan` is used by this thread only; `out_count` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clpart_plan_num_args(
    plan: *const clpart_plan,
    out_count: *mut cl_uint,
) -> c_int {
    guard(|| {
        let s = unsafe { state(plan) }?;
        out_ptr(out_count, "out_count")?;
        // SAFETY: checked not null.
        unsafe { *out_count = s.n_args() as cl_uint };
        Ok(())
    })
}

/// Sets a by-value argument as clSetKernelArg does: arg_size must be the
/// size of the argument's type (CLPART_SIZE_MISMATCH otherwise); the value
/// is copied. Integer scalars (e.g. a run-time width) may enter the
/// analysis.
///
/// # Safety
/// `plan` is used by this thread only; `arg_value` is NULL or readable for
/// `arg_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn clpart_plan_set_arg_scalar(
    plan: *mut clpart_plan,
    arg_index: cl_uint,
    arg_size: usize,
    arg_value: *const c_void,
) -> c_int {
    guard(|| {
        let s = unsafe { state(plan) }?;
        if arg_value.is_null() {
            return err(CLPART_INVALID_ARGUMENT, "arg_value is NULL");
        }
        // SAFETY: the caller's contract.
        let bytes = unsafe { std::slice::from_raw_parts(arg_value.cast::<u8>(), arg_size) };
        s.set_scalar(arg_index, bytes)
    })
}

/// Sets a __global or __constant buffer argument to the host array host_ptr
/// of size_bytes bytes (a whole number of elements). clpart keeps the
/// pointer: at each launch it copies the array (the kernel works on the
/// copy), and writes the kernel's output back into it (__global arrays
/// only, and only when the kernel changed them) before the launch returns. The array must stay valid until the
/// last launch that uses it has returned. Two buffer arguments must not
/// share memory when the kernel may write one of them
/// (CLPART_INVALID_ARGUMENT at launch).
///
/// # Safety
/// `plan` is used by this thread only; `host_ptr` stays valid for reads and
/// writes of `size_bytes` bytes until the launches that use it return.
#[no_mangle]
pub unsafe extern "C" fn clpart_plan_set_arg_buffer(
    plan: *mut clpart_plan,
    arg_index: cl_uint,
    host_ptr: *mut c_void,
    size_bytes: usize,
) -> c_int {
    guard(|| {
        let s = unsafe { state(plan) }?;
        if host_ptr.is_null() {
            return err(CLPART_INVALID_ARGUMENT, "host_ptr is NULL");
        }
        if size_bytes > isize::MAX as usize {
            return err(
                CLPART_SIZE_MISMATCH,
                format!("size_bytes {size_bytes} is too large"),
            );
        }
        s.set_buffer(arg_index, host_ptr.cast::<u8>(), size_bytes)
    })
}

/// Creates a buffer of n_elems zero elements of elem_type, an OpenCL C
/// scalar or vector type name ("float", "int", "uchar", "float4", ...;
/// CLPART_INVALID_ARGUMENT otherwise). On success *out_buffer is a new
/// handle the caller releases with clpart_buffer_release; on failure it is
/// set to NULL.
///
/// # Safety
/// `elem_type` is NULL or NUL-terminated; `out_buffer` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clpart_buffer_create(
    elem_type: *const c_char,
    n_elems: usize,
    out_buffer: *mut *mut clpart_buffer,
) -> c_int {
    guard(|| {
        out_ptr(out_buffer, "out_buffer")?;
        // SAFETY: checked not null.
        unsafe { *out_buffer = std::ptr::null_mut() };
        let elem = buffer::elem_type(unsafe { c_str(elem_type, "elem_type") }?)?;
        let data = buffer::zeros(elem, n_elems)?;
        // SAFETY: checked not null.
        unsafe { *out_buffer = register_buffer(data) };
        Ok(())
    })
}

/// Creates a buffer of elem_type holding a copy of the size_bytes bytes at
/// host_ptr (read during the call only; clpart keeps no pointer to it).
/// *out_buffer as for clpart_buffer_create.
///
/// # Safety
/// `elem_type` is NULL or NUL-terminated; `host_ptr` is NULL or readable
/// for `size_bytes` bytes; `out_buffer` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clpart_buffer_create_from_host(
    elem_type: *const c_char,
    host_ptr: *const c_void,
    size_bytes: usize,
    out_buffer: *mut *mut clpart_buffer,
) -> c_int {
    guard(|| {
        out_ptr(out_buffer, "out_buffer")?;
        // SAFETY: checked not null.
        unsafe { *out_buffer = std::ptr::null_mut() };
        let elem = buffer::elem_type(unsafe { c_str(elem_type, "elem_type") }?)?;
        if host_ptr.is_null() {
            return err(CLPART_INVALID_ARGUMENT, "host_ptr is NULL");
        }
        if size_bytes > isize::MAX as usize {
            return err(
                CLPART_SIZE_MISMATCH,
                format!("size_bytes {size_bytes} is too large"),
            );
        }
        // SAFETY: the caller's contract.
        let bytes = unsafe { std::slice::from_raw_parts(host_ptr.cast::<u8>(), size_bytes) };
        let data = buffer::from_bytes(elem, bytes)?;
        // SAFETY: checked not null.
        unsafe { *out_buffer = register_buffer(data) };
        Ok(())
    })
}

/// The buffer's size in bytes.
///
/// # Safety
/// `out_size_bytes` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clpart_buffer_size(
    buffer: *const clpart_buffer,
    out_size_bytes: *mut usize,
) -> c_int {
    guard(|| {
        let data = unsafe { buffer_data(buffer) }?;
        out_ptr(out_size_bytes, "out_size_bytes")?;
        let n = buffer::size_bytes(&buffer::lock(data));
        // SAFETY: checked not null.
        unsafe { *out_size_bytes = n };
        Ok(())
    })
}

/// Copies size_bytes bytes from src (read during the call only) into the
/// buffer at offset_bytes. Those elements are then valid on the host only:
/// the next launch sends them to the devices that read them.
///
/// # Safety
/// `src` is NULL or readable for `size_bytes` bytes.
#[no_mangle]
pub unsafe extern "C" fn clpart_buffer_write(
    buffer: *mut clpart_buffer,
    offset_bytes: usize,
    size_bytes: usize,
    src: *const c_void,
) -> c_int {
    guard(|| {
        let data = unsafe { buffer_data(buffer) }?;
        if src.is_null() {
            return err(CLPART_INVALID_ARGUMENT, "src is NULL");
        }
        let mut b = buffer::lock(data);
        let (offset, _) = buffer::elem_range(&b, offset_bytes, size_bytes)?;
        // SAFETY: the caller's contract.
        let bytes = unsafe { std::slice::from_raw_parts(src.cast::<u8>(), size_bytes) };
        b.write(offset, bytes).map_err(buffer::launcher_err)
    })
}

/// Copies size_bytes bytes of the buffer at offset_bytes into dst (the
/// caller's storage), gathering from the devices only the elements the
/// host copy lacks. CLPART_DATA_LOST when an element's last writer failed.
///
/// # Safety
/// `dst` is NULL or writable for `size_bytes` bytes.
#[no_mangle]
pub unsafe extern "C" fn clpart_buffer_read(
    buffer: *mut clpart_buffer,
    offset_bytes: usize,
    size_bytes: usize,
    dst: *mut c_void,
) -> c_int {
    guard(|| {
        let data = unsafe { buffer_data(buffer) }?;
        if dst.is_null() {
            return err(CLPART_INVALID_ARGUMENT, "dst is NULL");
        }
        let mut b = buffer::lock(data);
        let (offset, n) = buffer::elem_range(&b, offset_bytes, size_bytes)?;
        let bytes = b.read(offset, n).map_err(buffer::launcher_err)?;
        // SAFETY: the caller's contract; `bytes` has `size_bytes` bytes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst.cast::<u8>(), bytes.len()) };
        Ok(())
    })
}

/// Copies the whole buffer into dst; size_bytes must be the buffer's size
/// (clpart_buffer_size; CLPART_SIZE_MISMATCH otherwise). As
/// clpart_buffer_read otherwise.
///
/// # Safety
/// `dst` is NULL or writable for `size_bytes` bytes.
#[no_mangle]
pub unsafe extern "C" fn clpart_buffer_read_all(
    buffer: *mut clpart_buffer,
    dst: *mut c_void,
    size_bytes: usize,
) -> c_int {
    guard(|| {
        let data = unsafe { buffer_data(buffer) }?;
        if dst.is_null() {
            return err(CLPART_INVALID_ARGUMENT, "dst is NULL");
        }
        let mut b = buffer::lock(data);
        let total = buffer::size_bytes(&b);
        if size_bytes != total {
            return err(
                CLPART_SIZE_MISMATCH,
                format!("size_bytes {size_bytes} is not the buffer's size, {total} bytes"),
            );
        }
        let host = b.read_all().map_err(buffer::launcher_err)?;
        // SAFETY: the caller's contract; the host copy has `total` bytes.
        unsafe { std::ptr::copy_nonoverlapping(host.as_bytes().as_ptr(), dst.cast::<u8>(), total) };
        Ok(())
    })
}

/// Releases the handle: it is invalid afterwards (releasing it again returns
/// CLPART_INVALID_HANDLE). The data and its device memory are freed now, or
/// when the last plan argument bound to it is set again or its plan is
/// released.
///
/// # Safety
/// No other thread uses the handle.
#[no_mangle]
pub unsafe extern "C" fn clpart_buffer_release(buffer: *mut clpart_buffer) -> c_int {
    guard(|| {
        unsafe { buffer_data(buffer) }?;
        live_buffers().remove(&(buffer as usize));
        // SAFETY: a live buffer is a leaked box, now unregistered.
        drop(unsafe { Box::from_raw(buffer) });
        Ok(())
    })
}

/// Binds a __global or __constant buffer argument to a buffer handle (see
/// "Buffers" below): launches read and write the buffer where its elements
/// are, on the host or on the devices, and leave what they write on the
/// devices that wrote it; nothing is copied back to any host array. The
/// buffer's element size must be the argument's (CLPART_SIZE_MISMATCH).
/// The plan keeps a reference to the buffer's data (see OWNERSHIP). Two
/// arguments of one launch must not be bound to the same buffer
/// (CLPART_INVALID_ARGUMENT at launch). A buffer may be bound to arguments
/// of several plans, e.g. one kernel's output and the next one's input.
///
/// # Safety
/// `plan` is used by this thread only.
#[no_mangle]
pub unsafe extern "C" fn clpart_plan_set_arg_resident(
    plan: *mut clpart_plan,
    arg_index: cl_uint,
    buffer: *mut clpart_buffer,
) -> c_int {
    guard(|| {
        let s = unsafe { state(plan) }?;
        let data = unsafe { buffer_data(buffer) }?.clone();
        s.set_resident(arg_index, data)
    })
}

/// Sets a __local pointer argument to size_bytes bytes per work-group, as
/// clSetKernelArg(k, i, size_bytes, NULL) does.
///
/// # Safety
/// `plan` is used by this thread only.
#[no_mangle]
pub unsafe extern "C" fn clpart_plan_set_arg_local(
    plan: *mut clpart_plan,
    arg_index: cl_uint,
    size_bytes: usize,
) -> c_int {
    guard(|| {
        let s = unsafe { state(plan) }?;
        s.set_local(arg_index, size_bytes as u64)
    })
}

/// verify != 0: each launch also runs the kernel unsplit on one device and
/// compares every output byte (CLPART_VERIFY_FAILED on a difference). Off by
/// default; it costs an unsplit run.
///
/// # Safety
/// `plan` is used by this thread only.
#[no_mangle]
pub unsafe extern "C" fn clpart_plan_set_verify(plan: *mut clpart_plan, verify: c_int) -> c_int {
    guard(|| {
        let s = unsafe { state(plan) }?;
        s.set_verify(verify != 0);
        Ok(())
    })
}

/// unchecked != 0 turns the run-time guard off. With the guard on (the
/// default) each device's subkernel checks every access against the range the
/// analysis gave its slice; an access outside it is skipped, that launch's
/// device results are discarded and the kernel re-runs unsplit (noted in the
/// report); an access outside a host array or __local argument makes the
/// launch fail with nothing written back. Off, a defect of the analysis could
/// corrupt memory or change results.
///
/// # Safety
/// `plan` is used by this thread only.
#[no_mangle]
pub unsafe extern "C" fn clpart_plan_set_unchecked(
    plan: *mut clpart_plan,
    unchecked: c_int,
) -> c_int {
    guard(|| {
        let s = unsafe { state(plan) }?;
        s.set_unchecked(unchecked != 0);
        Ok(())
    })
}

/// on != 0: automatic shares. Each launch's devices get work-groups in
/// proportion to their measured speed on the kernel, refined from the
/// devices' busy times launch after launch; the shares passed to a launch
/// then only select the devices. A first launch over host arrays runs in
/// two rounds where the NDRange has enough work-groups (the first ones at
/// even shares measure the devices, the rest run at the measured shares);
/// over resident buffers it is even. on == 0 goes back to the given shares.
///
/// # Safety
/// `plan` is used by this thread only.
#[no_mangle]
pub unsafe extern "C" fn clpart_plan_set_auto_split(plan: *mut clpart_plan, on: c_int) -> c_int {
    guard(|| {
        let s = unsafe { state(plan) }?;
        s.set_auto_split(on != 0);
        Ok(())
    })
}

/// Reads an array argument of `n` elements.
///
/// # Safety
/// `p` is NULL or readable for `n` elements.
unsafe fn array<'a, T>(p: *const T, n: usize) -> Option<&'a [T]> {
    // SAFETY: the caller's contract.
    (!p.is_null()).then(|| unsafe { std::slice::from_raw_parts(p, n) })
}

/// The NDRange of a launch from the C arrays.
///
/// # Safety
/// The arrays are NULL or hold `work_dim` elements.
unsafe fn ndrange(
    work_dim: cl_uint,
    global_offset: *const usize,
    global_size: *const usize,
    local_size: *const usize,
) -> Result<NdRange> {
    if !(1..=3).contains(&work_dim) {
        return err(
            CLPART_INVALID_NDRANGE,
            format!("work_dim {work_dim} is not 1, 2 or 3"),
        );
    }
    let n = work_dim as usize;
    let to_u64 = |v: &[usize]| v.iter().map(|&x| x as u64).collect::<Vec<_>>();
    let Some(global) = (unsafe { array(global_size, n) }).map(to_u64) else {
        return err(CLPART_INVALID_NDRANGE, "global_size is NULL");
    };
    let local = match unsafe { array(local_size, n) } {
        Some(l) => to_u64(l),
        None => NdRange::default_local(&global),
    };
    let offset = match unsafe { array(global_offset, n) } {
        Some(o) => to_u64(o),
        None => vec![0; n],
    };
    NdRange::with_offset(&global, &local, &offset)
        .map_err(|e| Error::new(CLPART_INVALID_NDRANGE, e.to_string()))
}

/// Pairs devices with their shares: NULL shares are even, others are
/// weights normalized by their sum.
///
/// # Safety
/// `shares` is NULL or holds `devices.len()` elements.
unsafe fn shares(devices: Vec<usize>, shares: *const f64) -> Result<Shares> {
    let n = devices.len();
    let weights: Vec<f64> = match unsafe { array(shares, n) } {
        Some(w) => w.to_vec(),
        None => vec![1.0; n],
    };
    for (i, &w) in weights.iter().enumerate() {
        if !w.is_finite() || w < 0.0 {
            return err(
                CLPART_INVALID_ARGUMENT,
                format!("shares[{i}] is '{w}'; give a finite share of at least 0"),
            );
        }
    }
    let sum: f64 = weights.iter().sum();
    if sum <= 0.0 || !sum.is_finite() {
        return err(
            CLPART_INVALID_ARGUMENT,
            "the shares sum to 0; give at least one positive share",
        );
    }
    Ok(devices
        .into_iter()
        .zip(weights)
        .map(|(d, w)| (d, w / sum))
        .collect())
}

/// All devices when `n_devices` is 0 (then the device array and shares
/// must be NULL).
fn all_devices(has_devices: bool, has_shares: bool) -> Result<Vec<usize>> {
    if has_devices || has_shares {
        return err(
            CLPART_INVALID_ARGUMENT,
            "n_devices is 0 but a device array or shares are given; give n_devices, or NULL for both",
        );
    }
    Ok((0..runtime()?.devices().len()).collect())
}

/// Runs the kernel over the NDRange split across devices, as
/// clEnqueueNDRangeKernel would run it on one, and blocks until the outputs
/// are in the host arrays (buffer handles keep theirs on the devices).
/// - work_dim: 1 to 3; global_offset: NULL (zeros) or work_dim sizes;
///   global_size: work_dim sizes.
/// - local_size: work_dim sizes, each dividing the global size. The
///   work-group is the split unit, so pass the size the kernel expects. NULL
///   lets clpart choose: the largest divisor of global_size[0] up to 64 in
///   dimension 0, 1 in the others.
/// - n_devices, device_indices, shares: the devices by clpart index (NULL:
///   0 .. n_devices-1) and their shares of the work-groups (NULL: even;
///   otherwise non-negative weights normalized by their sum, e.g. {86, 14}
///   or {0.86, 0.14}); n_devices 0 with both NULL: every device, even
///   shares.
///
/// Every argument must be set (CLPART_ARGS_NOT_SET names the first unset
/// one). When a launch fails the host arrays are unchanged, except with
/// CLPART_VERIFY_FAILED, where they hold the split result; a buffer keeps
/// every element valid somewhere, except those a failed device was writing
/// (a later read of them is CLPART_DATA_LOST).
///
/// # Safety
/// `plan` is used by this thread only; the arrays are NULL or hold
/// `work_dim` (sizes) or `n_devices` (devices, shares) elements; every host
/// array set on the plan is valid (see `clpart_plan_set_arg_buffer`).
#[no_mangle]
pub unsafe extern "C" fn clpart_plan_launch(
    plan: *mut clpart_plan,
    work_dim: cl_uint,
    global_offset: *const usize,
    global_size: *const usize,
    local_size: *const usize,
    n_devices: cl_uint,
    device_indices: *const cl_uint,
    shares: *const f64,
) -> c_int {
    guard(|| {
        let s = unsafe { state(plan) }?;
        let nd = unsafe { ndrange(work_dim, global_offset, global_size, local_size) }?;
        let devices = if n_devices == 0 {
            all_devices(!device_indices.is_null(), !shares.is_null())?
        } else {
            match unsafe { array(device_indices, n_devices as usize) } {
                Some(d) => d.iter().map(|&i| i as usize).collect(),
                None => (0..n_devices as usize).collect(),
            }
        };
        let shares = unsafe { self::shares(devices, shares) }?;
        unsafe { s.launch(&nd, &shares) }
    })
}

/// As clpart_plan_launch, with the application's own devices: devices holds
/// n_devices cl_device_ids from clGetDeviceIDs (not sub-devices; see
/// clpart_device_index); shares as for clpart_plan_launch.
///
/// # Safety
/// As [`clpart_plan_launch`]; `devices` holds `n_devices` handles.
#[no_mangle]
pub unsafe extern "C" fn clpart_plan_launch_on(
    plan: *mut clpart_plan,
    work_dim: cl_uint,
    global_offset: *const usize,
    global_size: *const usize,
    local_size: *const usize,
    n_devices: cl_uint,
    devices: *const cl_device_id,
    shares: *const f64,
) -> c_int {
    guard(|| {
        let s = unsafe { state(plan) }?;
        let nd = unsafe { ndrange(work_dim, global_offset, global_size, local_size) }?;
        let indices = if n_devices == 0 {
            all_devices(!devices.is_null(), !shares.is_null())?
        } else {
            let Some(d) = (unsafe { array(devices, n_devices as usize) }) else {
                return err(CLPART_INVALID_ARGUMENT, "devices is NULL");
            };
            d.iter()
                .map(|&id| device_index(id))
                .collect::<Result<Vec<_>>>()?
        };
        let shares = unsafe { self::shares(indices, shares) }?;
        unsafe { s.launch(&nd, &shares) }
    })
}

/// The report of the plan's last launch (CLPART_NO_REPORT before one).
///
/// # Safety
/// `plan` is used by this thread only; `out_report` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clpart_plan_report(
    plan: *const clpart_plan,
    out_report: *mut clpart_report,
) -> c_int {
    guard(|| {
        let s = unsafe { state(plan) }?;
        out_ptr(out_report, "out_report")?;
        let Some(last) = &s.last else {
            return err(CLPART_NO_REPORT, "the plan has not been launched yet");
        };
        let r = &last.report;
        let out = clpart_report {
            split: r.split as c_int,
            verified: match r.verified {
                Some(true) => 1,
                Some(false) => 0,
                None => -1,
            },
            analyzed: last.analyzed as c_int,
            split_dim: if r.split { r.split_dim.unwrap_or(0) } else { 0 },
            n_devices: r.devices.len() as cl_uint,
            bytes_total: r.bytes_total,
            bytes_whole_buffers: r.bytes_whole_buffers,
            bytes_exact: r.bytes_exact.unwrap_or(u64::MAX),
            analysis_ms: last.analysis_ms,
            wall_ms: r.wall_ms,
        };
        // SAFETY: checked not null.
        unsafe { *out_report = out };
        Ok(())
    })
}

/// Device entry i (0 to n_devices-1 of clpart_plan_report) of the last
/// launch.
///
/// # Safety
/// `plan` is used by this thread only; `out_report` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clpart_plan_report_device(
    plan: *const clpart_plan,
    i: cl_uint,
    out_report: *mut clpart_device_report,
) -> c_int {
    guard(|| {
        let s = unsafe { state(plan) }?;
        out_ptr(out_report, "out_report")?;
        let Some(last) = &s.last else {
            return err(CLPART_NO_REPORT, "the plan has not been launched yet");
        };
        let n = last.report.devices.len();
        let Some(d) = last.report.devices.get(i as usize) else {
            return err(
                CLPART_INVALID_ARGUMENT,
                format!("device entry {i} is out of range: the last launch used {n} devices (entries 0 to {})", n.saturating_sub(1)),
            );
        };
        let out = clpart_device_report {
            device_index: d.index as cl_uint,
            work_groups: d.work_groups,
            slice_begin: d.slice.0,
            slice_end: d.slice.1,
            bytes_to_device: d.bytes_to_device,
            bytes_from_device: d.bytes_from_device,
            kernel_ms: d.kernel_ms,
        };
        // SAFETY: checked not null.
        unsafe { *out_report = out };
        Ok(())
    })
}

/// The last launch's report as text, several lines, as `clpart run` prints
/// it (devices, slices, bytes, times, why a kernel ran whole). *out_text is
/// owned by the plan: valid until its next launch or release.
///
/// # Safety
/// `plan` is used by this thread only; `out_text` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clpart_plan_report_text(
    plan: *const clpart_plan,
    out_text: *mut *const c_char,
) -> c_int {
    guard(|| {
        let s = unsafe { state(plan) }?;
        out_ptr(out_text, "out_text")?;
        let Some(last) = &s.last else {
            return err(CLPART_NO_REPORT, "the plan has not been launched yet");
        };
        // SAFETY: checked not null.
        unsafe { *out_text = last.text.as_ptr() };
        Ok(())
    })
}

/// Releases the plan and everything it owns (not the host arrays). The
/// handle is invalid afterwards; releasing it again returns
/// CLPART_INVALID_HANDLE.
///
/// # Safety
/// No other thread uses the plan.
#[no_mangle]
pub unsafe extern "C" fn clpart_plan_release(plan: *mut clpart_plan) -> c_int {
    guard(|| {
        unsafe { state(plan) }?;
        live().remove(&(plan as usize));
        // SAFETY: a live plan is a leaked box, now unregistered.
        drop(unsafe { Box::from_raw(plan) });
        Ok(())
    })
}
