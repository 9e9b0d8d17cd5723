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
//!
//! By what the entry points handle: [`objects`] (buffers, programs,
//! kernels and their arguments), [`launches`], [`transfers`] (buffer
//! commands), [`events`] and [`images`].

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

/// Runs a sync of the layer's, `fallback` when clpart itself is calling or
/// the sync panicked (which loses nothing the application sees: its call
/// is made as if no copy were resident).
fn guarded<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    if Inside::active() {
        return fallback;
    }
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// `?` for entry points returning a `cl_int`.
macro_rules! synced {
    ($e:expr) => {
        if let Err(code) = $e {
            return code;
        }
    };
}

// (after the macros above, which they use)
mod events;
mod images;
mod launches;
mod objects;
mod transfers;

use events::*;
use images::*;
use launches::*;
use objects::*;
use transfers::*;
