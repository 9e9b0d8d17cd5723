//! The application's objects as the layer records them: buffers and
//! sub-buffers, programs (their source and build options), kernels and
//! their arguments, each with its reference count.

use super::*;

pub(super) unsafe extern "C" fn create_buffer(
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
pub(super) fn added(old: Option<state::BufferRec>, mem: cl_mem) {
    if let Some(old) = old {
        resident::gone(vec![(mem as usize, old)]);
    }
}

pub(super) unsafe extern "C" fn create_buffer_with_properties(
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

pub(super) unsafe extern "C" fn create_sub_buffer(
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

pub(super) unsafe extern "C" fn retain_mem_object(mem: cl_mem) -> cl_int {
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

pub(super) unsafe extern "C" fn release_mem_object(mem: cl_mem) -> cl_int {
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
pub(super) unsafe fn source_text(
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

pub(super) unsafe extern "C" fn create_program_with_source(
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

pub(super) unsafe extern "C" fn build_program(
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
pub(super) fn built_source(program: usize) {
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
            crate::analyses::ask_clpart(&exe, &args, given.as_bytes(), false).and_then(|out| {
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

pub(super) unsafe extern "C" fn retain_program(program: cl_program) -> cl_int {
    let f = below!(clRetainProgram);
    // SAFETY: passed on unchanged.
    let r = unsafe { f(program) };
    if r == CL_SUCCESS {
        record(|| state::with(|s| s.retain_program(program as usize, 1)));
    }
    r
}

pub(super) unsafe extern "C" fn release_program(program: cl_program) -> cl_int {
    let f = below!(clReleaseProgram);
    // SAFETY: passed on unchanged.
    let r = unsafe { f(program) };
    if r == CL_SUCCESS {
        record(|| state::with(|s| s.retain_program(program as usize, -1)));
    }
    r
}

pub(super) unsafe extern "C" fn create_kernel(
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
pub(super) fn kernel_name(kernel: cl_kernel) -> Option<String> {
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

pub(super) unsafe extern "C" fn create_kernels_in_program(
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

pub(super) unsafe extern "C" fn clone_kernel(
    source_kernel: cl_kernel,
    errcode_ret: *mut cl_int,
) -> cl_kernel {
    let f = below_handle!(clCloneKernel, errcode_ret);
    // SAFETY: passed on unchanged.
    let kernel = unsafe { f(source_kernel, errcode_ret) };
    if !kernel.is_null() {
        record(|| state::with(|s| s.clone_kernel(kernel as usize, source_kernel as usize)));
    }
    kernel
}

pub(super) unsafe extern "C" fn set_kernel_arg_svm_pointer(
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

pub(super) unsafe extern "C" fn set_kernel_exec_info(
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

pub(super) unsafe extern "C" fn retain_kernel(kernel: cl_kernel) -> cl_int {
    let f = below!(clRetainKernel);
    // SAFETY: passed on unchanged.
    let r = unsafe { f(kernel) };
    if r == CL_SUCCESS {
        record(|| state::with(|s| s.retain_kernel(kernel as usize, 1)));
    }
    r
}

pub(super) unsafe extern "C" fn release_kernel(kernel: cl_kernel) -> cl_int {
    let f = below!(clReleaseKernel);
    // SAFETY: passed on unchanged.
    let r = unsafe { f(kernel) };
    if r == CL_SUCCESS {
        record(|| state::with(|s| s.retain_kernel(kernel as usize, -1)));
    }
    r
}

pub(super) unsafe extern "C" fn set_kernel_arg(
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
