//! The intercepted entry points. Each calls the driver first (so the
//! application gets exactly the driver's result and error codes), then
//! records what succeeded; the bookkeeping runs behind `catch_unwind`, and
//! a panic there loses a record (the kernel then passes through), never
//! the application's call. `clEnqueueNDRangeKernel` tries a split launch
//! first ([`crate::split`]) and passes through when it cannot.
//!
//! The enqueued reads, writes, fills, copies, maps and unmaps of buffers,
//! and the kernel launches that reach the driver, keep the application's
//! copy of a resident buffer current ([`crate::resident`]): a stale one is
//! synced before the driver call (a failed sync returns its error instead
//! of calling the driver), and one the call writes is marked newer after
//! the driver accepted it. The driver call itself is the application's,
//! unchanged.

use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use opencl_sys::cl_icd::cl_icd_dispatch;
use opencl_sys::{
    cl_bool, cl_command_queue, cl_context, cl_device_id, cl_event, cl_int, cl_kernel, cl_map_flags,
    cl_mem, cl_mem_flags, cl_program, cl_uint, CL_KERNEL_FUNCTION_NAME, CL_SUCCESS,
};

use crate::resident;
use crate::state::{self, Inside, RawArg};
use crate::target;

/// The loader's table with the layer's entry points put in.
pub(crate) fn layer_table(below: cl_icd_dispatch) -> cl_icd_dispatch {
    let mut t = below;
    t.clCreateBuffer = Some(create_buffer);
    t.clRetainMemObject = Some(retain_mem_object);
    t.clReleaseMemObject = Some(release_mem_object);
    t.clCreateProgramWithSource = Some(create_program_with_source);
    t.clBuildProgram = Some(build_program);
    t.clRetainProgram = Some(retain_program);
    t.clReleaseProgram = Some(release_program);
    t.clCreateKernel = Some(create_kernel);
    t.clCreateKernelsInProgram = Some(create_kernels_in_program);
    t.clRetainKernel = Some(retain_kernel);
    t.clReleaseKernel = Some(release_kernel);
    t.clSetKernelArg = Some(set_kernel_arg);
    t.clEnqueueNDRangeKernel = Some(enqueue_nd_range_kernel);
    t.clCreateBufferWithProperties = Some(create_buffer_with_properties);
    t.clCloneKernel = Some(clone_kernel);
    t.clSetKernelArgSVMPointer = Some(set_kernel_arg_svm_pointer);
    t.clSetKernelExecInfo = Some(set_kernel_exec_info);
    t.clCreateSubBuffer = Some(create_sub_buffer);
    t.clEnqueueReadBuffer = Some(enqueue_read_buffer);
    t.clEnqueueReadBufferRect = Some(enqueue_read_buffer_rect);
    t.clEnqueueWriteBuffer = Some(enqueue_write_buffer);
    t.clEnqueueWriteBufferRect = Some(enqueue_write_buffer_rect);
    t.clEnqueueFillBuffer = Some(enqueue_fill_buffer);
    t.clEnqueueCopyBuffer = Some(enqueue_copy_buffer);
    t.clEnqueueCopyBufferRect = Some(enqueue_copy_buffer_rect);
    t.clEnqueueCopyBufferToImage = Some(enqueue_copy_buffer_to_image);
    t.clEnqueueCopyImageToBuffer = Some(enqueue_copy_image_to_buffer);
    t.clEnqueueMapBuffer = Some(enqueue_map_buffer);
    t.clEnqueueUnmapMemObject = Some(enqueue_unmap_mem_object);
    t.clEnqueueTask = Some(enqueue_task);
    t.clEnqueueMigrateMemObjects = Some(enqueue_migrate_mem_objects);
    t.clEnqueueNativeKernel = Some(enqueue_native_kernel);
    t.clCreateUserEvent = Some(create_user_event);
    t.clGetEventInfo = Some(get_event_info);
    t.clGetEventProfilingInfo = Some(get_event_profiling_info);
    t.clCreateImage = Some(create_image);
    t.clCreateImageWithProperties = Some(create_image_with_properties);
    t.clCreateImage2D = Some(create_image_2d);
    t.clCreateImage3D = Some(create_image_3d);
    t.clEnqueueReadImage = Some(enqueue_read_image);
    t.clEnqueueWriteImage = Some(enqueue_write_image);
    t.clEnqueueCopyImage = Some(enqueue_copy_image);
    t.clEnqueueFillImage = Some(enqueue_fill_image);
    t.clEnqueueMapImage = Some(enqueue_map_image);
    t
}

/// Runs the layer's bookkeeping unless clpart itself is calling; a panic
/// is swallowed.
fn record(f: impl FnOnce()) {
    if Inside::active() {
        return;
    }
    let _ = catch_unwind(AssertUnwindSafe(f));
}

/// The driver's entry point `$name` (the loader fills every entry it has;
/// never a panic here, outside the bookkeeping's `catch_unwind`).
macro_rules! below {
    ($name:ident) => {
        match crate::TARGET.get().and_then(|t| t.$name) {
            Some(f) => f,
            None => return opencl_sys::CL_INVALID_OPERATION as _,
        }
    };
}

/// Driver entry points returning a handle report failure through
/// `errcode_ret`.
macro_rules! below_handle {
    ($name:ident, $err:expr) => {
        match crate::TARGET.get().and_then(|t| t.$name) {
            Some(f) => f,
            None => {
                if !$err.is_null() {
                    // SAFETY: the application's out-pointer.
                    unsafe { *$err = opencl_sys::CL_INVALID_OPERATION };
                }
                return std::ptr::null_mut();
            }
        }
    };
}

unsafe extern "C" fn create_buffer(
    context: cl_context,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let f = below_handle!(clCreateBuffer, errcode_ret);
    // SAFETY: the application's arguments, passed on unchanged.
    let mem = unsafe { f(context, flags, size, host_ptr, errcode_ret) };
    if !mem.is_null() {
        record(|| {
            added(
                state::with(|s| s.add_buffer(mem as usize, size, flags)),
                mem,
            )
        });
    }
    mem
}

/// A record a reused handle replaced: its resident copy goes.
fn added(old: Option<state::BufferRec>, mem: cl_mem) {
    if let Some(old) = old {
        resident::gone(vec![(mem as usize, old)]);
    }
}

unsafe extern "C" fn create_buffer_with_properties(
    context: cl_context,
    properties: *const opencl_sys::cl_mem_properties,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let f = below_handle!(clCreateBufferWithProperties, errcode_ret);
    // SAFETY: the application's arguments, passed on unchanged.
    let mem = unsafe { f(context, properties, flags, size, host_ptr, errcode_ret) };
    if !mem.is_null() {
        record(|| {
            added(
                state::with(|s| s.add_buffer(mem as usize, size, flags)),
                mem,
            )
        });
    }
    mem
}

unsafe extern "C" fn create_sub_buffer(
    buffer: cl_mem,
    flags: cl_mem_flags,
    create_type: opencl_sys::cl_buffer_create_type,
    create_info: *const c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let f = below_handle!(clCreateSubBuffer, errcode_ret);
    // SAFETY: passed on unchanged.
    let mem = unsafe { f(buffer, flags, create_type, create_info, errcode_ret) };
    if !mem.is_null()
        && create_type == opencl_sys::CL_BUFFER_CREATE_TYPE_REGION
        && !create_info.is_null()
    {
        record(|| {
            // SAFETY: the driver accepted a `cl_buffer_region` here.
            let region = unsafe { *(create_info as *const opencl_sys::cl_buffer_region) };
            added(
                state::with(|s| {
                    s.add_sub_buffer(mem as usize, buffer as usize, region.size, flags)
                }),
                mem,
            )
        });
    }
    mem
}

unsafe extern "C" fn retain_mem_object(mem: cl_mem) -> cl_int {
    let f = below!(clRetainMemObject);
    // SAFETY: passed on unchanged.
    let r = unsafe { f(mem) };
    if r == CL_SUCCESS {
        record(|| {
            state::with(|s| s.retain_buffer(mem as usize, 1));
        });
    }
    r
}

unsafe extern "C" fn release_mem_object(mem: cl_mem) -> cl_int {
    let f = below!(clReleaseMemObject);
    // SAFETY: passed on unchanged.
    let r = unsafe { f(mem) };
    if r == CL_SUCCESS {
        record(|| resident::gone(state::with(|s| s.retain_buffer(mem as usize, -1))));
    }
    r
}

/// The program's source as the driver sees it: the strings concatenated,
/// each of its given length or up to its NUL.
///
/// # Safety
/// The arguments of a `clCreateProgramWithSource` the driver accepted.
unsafe fn source_text(
    count: cl_uint,
    strings: *mut *const c_char,
    lengths: *const usize,
) -> String {
    let mut bytes = Vec::new();
    for i in 0..count as usize {
        // SAFETY: the driver accepted `count` strings.
        let s = unsafe { *strings.add(i) };
        let len = if lengths.is_null() {
            0
        } else {
            unsafe { *lengths.add(i) }
        };
        if len == 0 {
            // SAFETY: NUL-terminated when no length is given.
            bytes.extend_from_slice(unsafe { CStr::from_ptr(s) }.to_bytes());
        } else {
            // SAFETY: `len` readable bytes (the OpenCL contract).
            bytes.extend_from_slice(unsafe { std::slice::from_raw_parts(s as *const u8, len) });
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

unsafe extern "C" fn create_program_with_source(
    context: cl_context,
    count: cl_uint,
    strings: *mut *const c_char,
    lengths: *const usize,
    errcode_ret: *mut cl_int,
) -> cl_program {
    let f = below_handle!(clCreateProgramWithSource, errcode_ret);
    // SAFETY: passed on unchanged.
    let program = unsafe { f(context, count, strings, lengths, errcode_ret) };
    if !program.is_null() {
        record(|| {
            // SAFETY: the driver accepted these arguments.
            let source = unsafe { source_text(count, strings, lengths) };
            state::with(|s| s.add_program(program as usize, source));
        });
    }
    program
}

type BuildNotify = Option<unsafe extern "C" fn(program: cl_program, user_data: *mut c_void)>;

unsafe extern "C" fn build_program(
    program: cl_program,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    options: *const c_char,
    pfn_notify: BuildNotify,
    user_data: *mut c_void,
) -> cl_int {
    let f = below!(clBuildProgram);
    // SAFETY: passed on unchanged.
    let r = unsafe {
        f(
            program,
            num_devices,
            device_list,
            options,
            pfn_notify,
            user_data,
        )
    };
    if r == CL_SUCCESS {
        record(|| {
            let text = if options.is_null() {
                String::new()
            } else {
                // SAFETY: a NUL-terminated string the driver accepted.
                unsafe { CStr::from_ptr(options) }
                    .to_string_lossy()
                    .into_owned()
            };
            state::with(|s| s.set_build_options(program as usize, &text));
            built_source(program as usize);
        });
    }
    r
}

/// Takes the files a program's source `#include`s as they are now, as the
/// driver has just read them (the working directory and `-I` paths of this
/// moment), for the program's analysis and subkernels: a header the
/// application rewrites afterwards, or a `chdir`, changes neither.
fn built_source(program: usize) {
    let Some((given, options)) = state::with(|s| s.given_source(program)) else {
        return;
    };
    if !coarsen::has_include(&given) {
        return;
    }
    let built = match std::env::var_os("CLPART_EXE").filter(|e| !e.is_empty()) {
        // libclang in a process of its own, as the analyses
        Some(exe) => {
            let _inside = Inside::enter();
            let args: Vec<&str> = ["include-request", "--"]
                .into_iter()
                .chain(options.iter().map(String::as_str))
                .collect();
            crate::analyses::ask_clpart(&exe, &args, given.as_bytes()).and_then(|out| {
                String::from_utf8(out).map_err(|_| "the source is not UTF-8".to_string())
            })
        }
        None => {
            let parse = coarsen::ParseOptions {
                clang_args: options.to_vec(),
            };
            coarsen::with_includes_written_in("program.cl", &given, &parse)
        }
    };
    state::with(|s| s.set_built_source(program, built));
}

unsafe extern "C" fn retain_program(program: cl_program) -> cl_int {
    let f = below!(clRetainProgram);
    // SAFETY: passed on unchanged.
    let r = unsafe { f(program) };
    if r == CL_SUCCESS {
        record(|| state::with(|s| s.retain_program(program as usize, 1)));
    }
    r
}

unsafe extern "C" fn release_program(program: cl_program) -> cl_int {
    let f = below!(clReleaseProgram);
    // SAFETY: passed on unchanged.
    let r = unsafe { f(program) };
    if r == CL_SUCCESS {
        record(|| state::with(|s| s.retain_program(program as usize, -1)));
    }
    r
}

unsafe extern "C" fn create_kernel(
    program: cl_program,
    kernel_name: *const c_char,
    errcode_ret: *mut cl_int,
) -> cl_kernel {
    let f = below_handle!(clCreateKernel, errcode_ret);
    // SAFETY: passed on unchanged.
    let kernel = unsafe { f(program, kernel_name, errcode_ret) };
    if !kernel.is_null() {
        record(|| {
            // SAFETY: a NUL-terminated name the driver accepted.
            let name = unsafe { CStr::from_ptr(kernel_name) }
                .to_string_lossy()
                .into_owned();
            state::with(|s| s.add_kernel(kernel as usize, program as usize, name));
        });
    }
    kernel
}

/// A kernel's function name, asked of the driver.
fn kernel_name(kernel: cl_kernel) -> Option<String> {
    let f = target().clGetKernelInfo?;
    let _inside = Inside::enter();
    let mut size = 0usize;
    // SAFETY: a size query on a kernel the driver just made.
    let r = unsafe {
        f(
            kernel,
            CL_KERNEL_FUNCTION_NAME,
            0,
            std::ptr::null_mut(),
            &mut size,
        )
    };
    if r != CL_SUCCESS || size == 0 {
        return None;
    }
    let mut buf = vec![0u8; size];
    // SAFETY: `buf` holds `size` bytes.
    let r = unsafe {
        f(
            kernel,
            CL_KERNEL_FUNCTION_NAME,
            size,
            buf.as_mut_ptr() as *mut c_void,
            std::ptr::null_mut(),
        )
    };
    if r != CL_SUCCESS {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Some(String::from_utf8_lossy(&buf[..end]).into_owned())
}

unsafe extern "C" fn create_kernels_in_program(
    program: cl_program,
    num_kernels: cl_uint,
    kernels: *mut cl_kernel,
    num_kernels_ret: *mut cl_uint,
) -> cl_int {
    let f = below!(clCreateKernelsInProgram);
    // SAFETY: passed on unchanged.
    let r = unsafe { f(program, num_kernels, kernels, num_kernels_ret) };
    if r == CL_SUCCESS && !kernels.is_null() {
        record(|| {
            // SAFETY: on success the driver filled `num_kernels_ret` (or at
            // most `num_kernels`) entries.
            let n = if num_kernels_ret.is_null() {
                num_kernels
            } else {
                unsafe { *num_kernels_ret }.min(num_kernels)
            };
            for i in 0..n as usize {
                // SAFETY: see above.
                let k = unsafe { *kernels.add(i) };
                if let Some(name) = kernel_name(k) {
                    state::with(|s| s.add_kernel(k as usize, program as usize, name));
                }
            }
        });
    }
    r
}

unsafe extern "C" fn clone_kernel(source_kernel: cl_kernel, errcode_ret: *mut cl_int) -> cl_kernel {
    let f = below_handle!(clCloneKernel, errcode_ret);
    // SAFETY: passed on unchanged.
    let kernel = unsafe { f(source_kernel, errcode_ret) };
    if !kernel.is_null() {
        record(|| state::with(|s| s.clone_kernel(kernel as usize, source_kernel as usize)));
    }
    kernel
}

unsafe extern "C" fn set_kernel_arg_svm_pointer(
    kernel: cl_kernel,
    arg_index: cl_uint,
    arg_value: *const c_void,
) -> cl_int {
    let f = below!(clSetKernelArgSVMPointer);
    // SAFETY: passed on unchanged.
    let r = unsafe { f(kernel, arg_index, arg_value) };
    if r == CL_SUCCESS {
        record(|| {
            let arg = RawArg {
                size: 0,
                value: None,
                svm: true,
            };
            state::with(|s| s.set_arg(kernel as usize, arg_index, arg));
        });
    }
    r
}

unsafe extern "C" fn set_kernel_exec_info(
    kernel: cl_kernel,
    param_name: opencl_sys::cl_kernel_exec_info,
    param_value_size: usize,
    param_value: *const c_void,
) -> cl_int {
    let f = below!(clSetKernelExecInfo);
    // SAFETY: passed on unchanged.
    let r = unsafe { f(kernel, param_name, param_value_size, param_value) };
    if r == CL_SUCCESS {
        record(|| state::with(|s| s.set_exec_info(kernel as usize)));
    }
    r
}

unsafe extern "C" fn retain_kernel(kernel: cl_kernel) -> cl_int {
    let f = below!(clRetainKernel);
    // SAFETY: passed on unchanged.
    let r = unsafe { f(kernel) };
    if r == CL_SUCCESS {
        record(|| state::with(|s| s.retain_kernel(kernel as usize, 1)));
    }
    r
}

unsafe extern "C" fn release_kernel(kernel: cl_kernel) -> cl_int {
    let f = below!(clReleaseKernel);
    // SAFETY: passed on unchanged.
    let r = unsafe { f(kernel) };
    if r == CL_SUCCESS {
        record(|| state::with(|s| s.retain_kernel(kernel as usize, -1)));
    }
    r
}

unsafe extern "C" fn set_kernel_arg(
    kernel: cl_kernel,
    arg_index: cl_uint,
    arg_size: usize,
    arg_value: *const c_void,
) -> cl_int {
    let f = below!(clSetKernelArg);
    // SAFETY: passed on unchanged.
    let r = unsafe { f(kernel, arg_index, arg_size, arg_value) };
    if r == CL_SUCCESS {
        record(|| {
            let value = if arg_value.is_null() {
                None
            } else {
                // SAFETY: the driver read `arg_size` bytes from it.
                Some(
                    unsafe { std::slice::from_raw_parts(arg_value as *const u8, arg_size) }
                        .to_vec(),
                )
            };
            state::with(|s| {
                s.set_arg(
                    kernel as usize,
                    arg_index,
                    RawArg {
                        size: arg_size,
                        value,
                        svm: false,
                    },
                )
            });
        });
    }
    r
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn enqueue_nd_range_kernel(
    queue: cl_command_queue,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_work_offset: *const usize,
    global_work_size: *const usize,
    local_work_size: *const usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let f = below!(clEnqueueNDRangeKernel);
    let pass = || {
        // SAFETY: the application's arguments, passed on unchanged.
        unsafe {
            f(
                queue,
                kernel,
                work_dim,
                global_work_offset,
                global_work_size,
                local_work_size,
                num_events_in_wait_list,
                event_wait_list,
                event,
            )
        }
    };
    if Inside::active() {
        return pass();
    }
    let launch = crate::split::Launch {
        queue,
        kernel,
        work_dim,
        offset: global_work_offset,
        global: global_work_size,
        local: local_work_size,
        wait: (num_events_in_wait_list, event_wait_list),
        event,
    };
    // SAFETY: the application's launch arguments, read as the driver would.
    match catch_unwind(AssertUnwindSafe(|| unsafe {
        crate::split::try_split(&launch)
    })) {
        Ok(crate::split::Outcome::Done(code)) => code,
        Ok(crate::split::Outcome::PassThrough) => launch_below(queue, kernel, pass),
        Ok(crate::split::Outcome::Probe(key)) => probe_home(queue, kernel, &key, pass),
        Err(_) => {
            crate::report::panicked(kernel as usize);
            launch_below(queue, kernel, pass)
        }
    }
}

/// [`launch_below`] timed from the application's queue empty (its
/// buffers synced) to the launch's end, for the choice between clpart's
/// devices and home ([`crate::home`]). The syncs are not timed: once every
/// kernel that touches those buffers runs at home they are not made again
/// (kernels that stay with clpart pay for bringing them back in their own
/// walls).
fn probe_home(
    queue: cl_command_queue,
    kernel: cl_kernel,
    key: &str,
    call: impl FnOnce() -> cl_int,
) -> cl_int {
    let finish = below!(clFinish);
    launch_below(queue, kernel, || {
        // SAFETY: the application's queue.
        unsafe { finish(queue) };
        let t = std::time::Instant::now();
        let r = call();
        if r == CL_SUCCESS {
            // SAFETY: as above.
            unsafe { finish(queue) };
            let ms = t.elapsed().as_secs_f64() * 1e3;
            guarded((), || crate::split::observe_home(key, ms));
        }
        r
    })
}

/// A launch of `kernel` that goes to the driver (`call`): its buffers are
/// made current first, and those it may write are newer afterwards.
fn launch_below(
    queue: cl_command_queue,
    kernel: cl_kernel,
    call: impl FnOnce() -> cl_int,
) -> cl_int {
    let writes = match guarded(Ok(Vec::new()), || {
        resident::before_launch(queue, kernel as usize)
    }) {
        Ok(w) => w,
        Err(code) => return code,
    };
    let r = call();
    if r == CL_SUCCESS {
        record(|| resident::written(&writes));
    }
    r
}

/// Runs a sync of the layer's, `fallback` when clpart itself is calling or
/// the sync panicked (which loses nothing the application sees: its call
/// is made as if no copy were resident).
fn guarded<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    if Inside::active() {
        return fallback;
    }
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// Makes `mems` current before the driver reads them: `Err` with the code
/// the application's call returns when that fails.
fn sync(queue: cl_command_queue, mems: &[cl_mem]) -> Result<(), cl_int> {
    let mems: Vec<usize> = mems.iter().map(|&m| m as usize).collect();
    guarded(Ok(()), || resident::sync_out(queue, &mems))
}

/// Makes a stale `mem` current before the driver writes `size` bytes of
/// it at `offset` (nothing when the write covers it all).
fn sync_for_write(
    queue: cl_command_queue,
    mem: cl_mem,
    offset: usize,
    size: usize,
) -> Result<(), cl_int> {
    guarded(Ok(()), || {
        resident::before_write(queue, mem as usize, offset, size)
    })
}

/// After the driver accepted a write of `mems`.
fn wrote(r: cl_int, mems: &[cl_mem]) -> cl_int {
    if r == CL_SUCCESS {
        record(|| resident::written(&mems.iter().map(|&m| m as usize).collect::<Vec<_>>()));
    }
    r
}

/// `?` for entry points returning a `cl_int`.
macro_rules! synced {
    ($e:expr) => {
        if let Err(code) = $e {
            return code;
        }
    };
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn enqueue_read_buffer(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    offset: usize,
    size: usize,
    ptr: *mut c_void,
    n_wait: cl_uint,
    wait: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let f = below!(clEnqueueReadBuffer);
    synced!(sync(queue, &[buffer]));
    // SAFETY: the application's arguments, passed on unchanged.
    unsafe {
        f(
            queue, buffer, blocking, offset, size, ptr, n_wait, wait, event,
        )
    }
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn enqueue_read_buffer_rect(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    buffer_row_pitch: usize,
    buffer_slice_pitch: usize,
    host_row_pitch: usize,
    host_slice_pitch: usize,
    ptr: *mut c_void,
    n_wait: cl_uint,
    wait: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let f = below!(clEnqueueReadBufferRect);
    synced!(sync(queue, &[buffer]));
    // SAFETY: the application's arguments, passed on unchanged.
    unsafe {
        f(
            queue,
            buffer,
            blocking,
            buffer_origin,
            host_origin,
            region,
            buffer_row_pitch,
            buffer_slice_pitch,
            host_row_pitch,
            host_slice_pitch,
            ptr,
            n_wait,
            wait,
            event,
        )
    }
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn enqueue_write_buffer(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    offset: usize,
    size: usize,
    ptr: *const c_void,
    n_wait: cl_uint,
    wait: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let f = below!(clEnqueueWriteBuffer);
    synced!(sync_for_write(queue, buffer, offset, size));
    // SAFETY: the application's arguments, passed on unchanged.
    let r = unsafe {
        f(
            queue, buffer, blocking, offset, size, ptr, n_wait, wait, event,
        )
    };
    wrote(r, &[buffer])
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn enqueue_write_buffer_rect(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    buffer_row_pitch: usize,
    buffer_slice_pitch: usize,
    host_row_pitch: usize,
    host_slice_pitch: usize,
    ptr: *const c_void,
    n_wait: cl_uint,
    wait: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let f = below!(clEnqueueWriteBufferRect);
    synced!(sync(queue, &[buffer]));
    // SAFETY: the application's arguments, passed on unchanged.
    let r = unsafe {
        f(
            queue,
            buffer,
            blocking,
            buffer_origin,
            host_origin,
            region,
            buffer_row_pitch,
            buffer_slice_pitch,
            host_row_pitch,
            host_slice_pitch,
            ptr,
            n_wait,
            wait,
            event,
        )
    };
    wrote(r, &[buffer])
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn enqueue_fill_buffer(
    queue: cl_command_queue,
    buffer: cl_mem,
    pattern: *const c_void,
    pattern_size: usize,
    offset: usize,
    size: usize,
    n_wait: cl_uint,
    wait: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let f = below!(clEnqueueFillBuffer);
    synced!(sync_for_write(queue, buffer, offset, size));
    // SAFETY: the application's arguments, passed on unchanged.
    let r = unsafe {
        f(
            queue,
            buffer,
            pattern,
            pattern_size,
            offset,
            size,
            n_wait,
            wait,
            event,
        )
    };
    wrote(r, &[buffer])
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn enqueue_copy_buffer(
    queue: cl_command_queue,
    src: cl_mem,
    dst: cl_mem,
    src_offset: usize,
    dst_offset: usize,
    size: usize,
    n_wait: cl_uint,
    wait: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let f = below!(clEnqueueCopyBuffer);
    synced!(sync(queue, &[src]));
    synced!(sync_for_write(queue, dst, dst_offset, size));
    // SAFETY: the application's arguments, passed on unchanged.
    let r = unsafe {
        f(
            queue, src, dst, src_offset, dst_offset, size, n_wait, wait, event,
        )
    };
    wrote(r, &[dst])
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn enqueue_copy_buffer_rect(
    queue: cl_command_queue,
    src: cl_mem,
    dst: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    src_row_pitch: usize,
    src_slice_pitch: usize,
    dst_row_pitch: usize,
    dst_slice_pitch: usize,
    n_wait: cl_uint,
    wait: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let f = below!(clEnqueueCopyBufferRect);
    synced!(sync(queue, &[src, dst]));
    // SAFETY: the application's arguments, passed on unchanged.
    let r = unsafe {
        f(
            queue,
            src,
            dst,
            src_origin,
            dst_origin,
            region,
            src_row_pitch,
            src_slice_pitch,
            dst_row_pitch,
            dst_slice_pitch,
            n_wait,
            wait,
            event,
        )
    };
    wrote(r, &[dst])
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn enqueue_copy_buffer_to_image(
    queue: cl_command_queue,
    src: cl_mem,
    dst_image: cl_mem,
    src_offset: usize,
    dst_origin: *const usize,
    region: *const usize,
    n_wait: cl_uint,
    wait: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let f = below!(clEnqueueCopyBufferToImage);
    // An image over a buffer shares its storage: the rest of it is kept.
    synced!(sync(queue, &[src, dst_image]));
    // SAFETY: the application's arguments, passed on unchanged.
    let r = unsafe {
        f(
            queue, src, dst_image, src_offset, dst_origin, region, n_wait, wait, event,
        )
    };
    wrote(r, &[dst_image])
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn enqueue_copy_image_to_buffer(
    queue: cl_command_queue,
    src_image: cl_mem,
    dst: cl_mem,
    src_origin: *const usize,
    region: *const usize,
    dst_offset: usize,
    n_wait: cl_uint,
    wait: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let f = below!(clEnqueueCopyImageToBuffer);
    synced!(sync(queue, &[src_image, dst]));
    // SAFETY: the application's arguments, passed on unchanged.
    let r = unsafe {
        f(
            queue, src_image, dst, src_origin, region, dst_offset, n_wait, wait, event,
        )
    };
    wrote(r, &[dst])
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn enqueue_map_buffer(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    flags: cl_map_flags,
    offset: usize,
    size: usize,
    n_wait: cl_uint,
    wait: *const cl_event,
    event: *mut cl_event,
    errcode_ret: *mut cl_int,
) -> *mut c_void {
    let f = below_handle!(clEnqueueMapBuffer, errcode_ret);
    if let Err(code) = sync(queue, &[buffer]) {
        if !errcode_ret.is_null() {
            // SAFETY: the application's out-pointer.
            unsafe { *errcode_ret = code };
        }
        return std::ptr::null_mut();
    }
    // SAFETY: the application's arguments, passed on unchanged.
    let ptr = unsafe {
        f(
            queue,
            buffer,
            blocking,
            flags,
            offset,
            size,
            n_wait,
            wait,
            event,
            errcode_ret,
        )
    };
    if !ptr.is_null() {
        record(|| resident::mapped(buffer as usize, ptr as usize, flags));
    }
    ptr
}

unsafe extern "C" fn enqueue_unmap_mem_object(
    queue: cl_command_queue,
    mem: cl_mem,
    ptr: *mut c_void,
    n_wait: cl_uint,
    wait: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let f = below!(clEnqueueUnmapMemObject);
    // SAFETY: the application's arguments, passed on unchanged.
    let r = unsafe { f(queue, mem, ptr, n_wait, wait, event) };
    if r == CL_SUCCESS {
        record(|| resident::unmapped(mem as usize, ptr as usize));
    }
    r
}

unsafe extern "C" fn enqueue_task(
    queue: cl_command_queue,
    kernel: cl_kernel,
    n_wait: cl_uint,
    wait: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let f = below!(clEnqueueTask);
    record(|| {
        let name = state::with(|s| s.kernels.get(&(kernel as usize)).map(|k| k.name.clone()));
        if let Some(name) = name {
            crate::report::whole(
                &name,
                "launched with clEnqueueTask (one work-item): runs on the application's device",
            );
        }
    });
    // SAFETY: the application's arguments, passed on unchanged.
    launch_below(queue, kernel, || unsafe {
        f(queue, kernel, n_wait, wait, event)
    })
}

/// `clEnqueueMigrateMemObjects`: the contents the application sees move
/// with its buffers, so a stale one is synced first (to the host or to the
/// queue's device alike: the migrated copy must be the current one); with
/// `CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED` the application gives the
/// contents up: a whole buffer is not synced and the driver's copy
/// (whatever it then holds) is the current one; a sub-buffer or an image
/// over a buffer is synced all the same (the rest of its buffer keeps its
/// contents). The command itself, with its wait list and
/// event, is the application's, unchanged.
unsafe extern "C" fn enqueue_migrate_mem_objects(
    queue: cl_command_queue,
    n_mems: cl_uint,
    mems: *const cl_mem,
    flags: opencl_sys::cl_mem_migration_flags,
    n_wait: cl_uint,
    wait: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let f = below!(clEnqueueMigrateMemObjects);
    let list: Vec<cl_mem> = if mems.is_null() {
        Vec::new()
    } else {
        // SAFETY: `n_mems` handles (the OpenCL contract; the driver checks
        // the handles themselves).
        unsafe { std::slice::from_raw_parts(mems, n_mems as usize) }.to_vec()
    };
    let undefined = flags & opencl_sys::CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED != 0;
    // Given up, a whole buffer needs no sync; a sub-buffer or an image over
    // a buffer gives up only its part, and the rest must stay current.
    let keep: Vec<cl_mem> = if undefined {
        // (All of them if the bookkeeping panicked.)
        guarded(list.clone(), || {
            state::with(|s| {
                list.iter()
                    .copied()
                    .filter(|&m| {
                        s.buffers
                            .get(&(m as usize))
                            .is_some_and(|b| b.parent.is_some())
                    })
                    .collect()
            })
        })
    } else {
        list.clone()
    };
    synced!(sync(queue, &keep));
    // SAFETY: the application's arguments, passed on unchanged.
    let r = unsafe { f(queue, n_mems, mems, flags, n_wait, wait, event) };
    if undefined {
        wrote(r, &list)
    } else {
        r
    }
}

/// `clEnqueueNativeKernel`: a host function that reads and may write the
/// buffers of `mem_list` through pointers the driver makes. The layer
/// cannot see what it does: those buffers are synced first, newer after,
/// and the command goes to the driver unchanged (reported as a launch
/// that was not split).
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn enqueue_native_kernel(
    queue: cl_command_queue,
    user_func: Option<unsafe extern "C" fn(*mut c_void)>,
    args: *mut c_void,
    cb_args: usize,
    n_mems: cl_uint,
    mem_list: *const cl_mem,
    args_mem_loc: *mut *const c_void,
    n_wait: cl_uint,
    wait: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let f = below!(clEnqueueNativeKernel);
    let list: Vec<cl_mem> = if mem_list.is_null() {
        Vec::new()
    } else {
        // SAFETY: `n_mems` handles (the OpenCL contract).
        unsafe { std::slice::from_raw_parts(mem_list, n_mems as usize) }.to_vec()
    };
    synced!(sync(queue, &list));
    // SAFETY: the application's arguments, passed on unchanged.
    let r = unsafe {
        f(
            queue,
            user_func,
            args,
            cb_args,
            n_mems,
            mem_list,
            args_mem_loc,
            n_wait,
            wait,
            event,
        )
    };
    if r == CL_SUCCESS {
        record(|| {
            crate::report::whole(
                "(native kernel)",
                "clEnqueueNativeKernel runs a host function the layer cannot see through; its buffers were synced and it ran on the application's device",
            )
        });
    }
    wrote(r, &list)
}

/// A split launch's event (a marker) says it is an NDRange launch.
unsafe extern "C" fn get_event_info(
    event: cl_event,
    param: opencl_sys::cl_event_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    let f = below!(clGetEventInfo);
    // SAFETY: the application's arguments, passed on unchanged.
    let r = unsafe { f(event, param, size, value, size_ret) };
    let kind = std::mem::size_of::<opencl_sys::cl_command_type>();
    if r == CL_SUCCESS
        && param == opencl_sys::CL_EVENT_COMMAND_TYPE
        && !value.is_null()
        && size >= kind
    {
        if let Some(t) = guarded(None, || crate::events::split_command_type(event)) {
            // SAFETY: the driver just wrote a command type there.
            unsafe { *(value as *mut opencl_sys::cl_command_type) = t };
        }
    }
    r
}

/// A split launch's event gives profiling times that span the launch, not
/// the marker's instant.
unsafe extern "C" fn get_event_profiling_info(
    event: cl_event,
    param: opencl_sys::cl_profiling_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    let f = below!(clGetEventProfilingInfo);
    // SAFETY: the application's arguments, passed on unchanged.
    let r = unsafe { f(event, param, size, value, size_ret) };
    if r == CL_SUCCESS && !value.is_null() && size >= std::mem::size_of::<u64>() {
        let marker = |what| {
            let mut v: u64 = 0;
            // SAFETY: a `cl_ulong` answer into `v`, of the same event.
            let r = unsafe {
                f(
                    event,
                    what,
                    std::mem::size_of::<u64>(),
                    &mut v as *mut u64 as *mut c_void,
                    std::ptr::null_mut(),
                )
            };
            (r == CL_SUCCESS).then_some(v)
        };
        if let Some(t) = guarded(None, || {
            crate::events::split_profiling(event, param, marker)
        }) {
            // SAFETY: the driver just wrote a `cl_ulong` there.
            unsafe { *(value as *mut u64) = t };
        }
    }
    r
}

unsafe extern "C" fn create_user_event(context: cl_context, errcode_ret: *mut cl_int) -> cl_event {
    let f = below_handle!(clCreateUserEvent, errcode_ret);
    // SAFETY: passed on unchanged.
    let e = unsafe { f(context, errcode_ret) };
    if !e.is_null() {
        record(|| crate::events::user_event_made(e));
    }
    e
}

/// The start of `cl_image_desc` up to its `buffer` (`mem_object`) field,
/// as OpenCL 1.2 and later lay it out.
#[repr(C)]
struct ImageDescHead {
    image_type: opencl_sys::cl_mem_object_type,
    image_width: usize,
    image_height: usize,
    image_depth: usize,
    image_array_size: usize,
    image_row_pitch: usize,
    image_slice_pitch: usize,
    num_mip_levels: cl_uint,
    num_samples: cl_uint,
    buffer: cl_mem,
}

/// An image the driver made: recorded, with the buffer its storage is
/// shared with (`CL_MEM_OBJECT_IMAGE1D_BUFFER`, or a 2-D image from a
/// buffer), which it then pins.
fn image_made(image: cl_mem, flags: cl_mem_flags, desc: *const c_void) {
    if image.is_null() {
        return;
    }
    record(|| {
        let over = if desc.is_null() {
            None
        } else {
            // SAFETY: the driver accepted a `cl_image_desc` here.
            let b = unsafe { (*(desc as *const ImageDescHead)).buffer };
            (!b.is_null()).then_some(b as usize)
        };
        added(
            state::with(|s| s.add_image(image as usize, over, flags)),
            image,
        )
    });
}

unsafe extern "C" fn create_image(
    context: cl_context,
    flags: cl_mem_flags,
    format: *const opencl_sys::cl_image_format,
    desc: *const opencl_sys::cl_image_desc,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let f = below_handle!(clCreateImage, errcode_ret);
    // SAFETY: passed on unchanged.
    let image = unsafe { f(context, flags, format, desc, host_ptr, errcode_ret) };
    image_made(image, flags, desc as *const c_void);
    image
}

unsafe extern "C" fn create_image_with_properties(
    context: cl_context,
    properties: *const opencl_sys::cl_mem_properties,
    flags: cl_mem_flags,
    format: *const opencl_sys::cl_image_format,
    desc: *const opencl_sys::cl_image_desc,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let f = below_handle!(clCreateImageWithProperties, errcode_ret);
    // SAFETY: passed on unchanged.
    let image = unsafe {
        f(
            context,
            properties,
            flags,
            format,
            desc,
            host_ptr,
            errcode_ret,
        )
    };
    image_made(image, flags, desc as *const c_void);
    image
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn create_image_2d(
    context: cl_context,
    flags: cl_mem_flags,
    format: *const opencl_sys::cl_image_format,
    width: usize,
    height: usize,
    row_pitch: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let f = below_handle!(clCreateImage2D, errcode_ret);
    // SAFETY: passed on unchanged.
    let image = unsafe {
        f(
            context,
            flags,
            format,
            width,
            height,
            row_pitch,
            host_ptr,
            errcode_ret,
        )
    };
    image_made(image, flags, std::ptr::null());
    image
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn create_image_3d(
    context: cl_context,
    flags: cl_mem_flags,
    format: *const opencl_sys::cl_image_format,
    width: usize,
    height: usize,
    depth: usize,
    row_pitch: usize,
    slice_pitch: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let f = below_handle!(clCreateImage3D, errcode_ret);
    // SAFETY: passed on unchanged.
    let image = unsafe {
        f(
            context,
            flags,
            format,
            width,
            height,
            depth,
            row_pitch,
            slice_pitch,
            host_ptr,
            errcode_ret,
        )
    };
    image_made(image, flags, std::ptr::null());
    image
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn enqueue_read_image(
    queue: cl_command_queue,
    image: cl_mem,
    blocking: cl_bool,
    origin: *const usize,
    region: *const usize,
    row_pitch: usize,
    slice_pitch: usize,
    ptr: *mut c_void,
    n_wait: cl_uint,
    wait: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let f = below!(clEnqueueReadImage);
    synced!(sync(queue, &[image]));
    // SAFETY: the application's arguments, passed on unchanged.
    unsafe {
        f(
            queue,
            image,
            blocking,
            origin,
            region,
            row_pitch,
            slice_pitch,
            ptr,
            n_wait,
            wait,
            event,
        )
    }
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn enqueue_write_image(
    queue: cl_command_queue,
    image: cl_mem,
    blocking: cl_bool,
    origin: *const usize,
    region: *const usize,
    row_pitch: usize,
    slice_pitch: usize,
    ptr: *const c_void,
    n_wait: cl_uint,
    wait: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let f = below!(clEnqueueWriteImage);
    synced!(sync(queue, &[image]));
    // SAFETY: the application's arguments, passed on unchanged.
    let r = unsafe {
        f(
            queue,
            image,
            blocking,
            origin,
            region,
            row_pitch,
            slice_pitch,
            ptr,
            n_wait,
            wait,
            event,
        )
    };
    wrote(r, &[image])
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn enqueue_copy_image(
    queue: cl_command_queue,
    src: cl_mem,
    dst: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    n_wait: cl_uint,
    wait: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let f = below!(clEnqueueCopyImage);
    synced!(sync(queue, &[src, dst]));
    // SAFETY: the application's arguments, passed on unchanged.
    let r = unsafe {
        f(
            queue, src, dst, src_origin, dst_origin, region, n_wait, wait, event,
        )
    };
    wrote(r, &[dst])
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn enqueue_fill_image(
    queue: cl_command_queue,
    image: cl_mem,
    fill_color: *const c_void,
    origin: *const usize,
    region: *const usize,
    n_wait: cl_uint,
    wait: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let f = below!(clEnqueueFillImage);
    synced!(sync(queue, &[image]));
    // SAFETY: the application's arguments, passed on unchanged.
    let r = unsafe {
        f(
            queue, image, fill_color, origin, region, n_wait, wait, event,
        )
    };
    wrote(r, &[image])
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn enqueue_map_image(
    queue: cl_command_queue,
    image: cl_mem,
    blocking: cl_bool,
    flags: cl_map_flags,
    origin: *const usize,
    region: *const usize,
    row_pitch: *mut usize,
    slice_pitch: *mut usize,
    n_wait: cl_uint,
    wait: *const cl_event,
    event: *mut cl_event,
    errcode_ret: *mut cl_int,
) -> *mut c_void {
    let f = below_handle!(clEnqueueMapImage, errcode_ret);
    if let Err(code) = sync(queue, &[image]) {
        if !errcode_ret.is_null() {
            // SAFETY: the application's out-pointer.
            unsafe { *errcode_ret = code };
        }
        return std::ptr::null_mut();
    }
    // SAFETY: the application's arguments, passed on unchanged.
    let ptr = unsafe {
        f(
            queue,
            image,
            blocking,
            flags,
            origin,
            region,
            row_pitch,
            slice_pitch,
            n_wait,
            wait,
            event,
            errcode_ret,
        )
    };
    if !ptr.is_null() {
        record(|| resident::mapped(image as usize, ptr as usize, flags));
    }
    ptr
}
