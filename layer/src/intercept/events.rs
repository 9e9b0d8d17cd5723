//! Events: a split launch's marker event answers as an NDRange launch,
//! with profiling times, and user events are tracked so that the layer
//! never waits on one the application sets later.

use super::*;

/// A split launch's event (a marker) says it is an NDRange launch.
pub(super) unsafe extern "C" fn get_event_info(
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
pub(super) unsafe extern "C" fn get_event_profiling_info(
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

pub(super) unsafe extern "C" fn create_user_event(
    context: cl_context,
    errcode_ret: *mut cl_int,
) -> cl_event {
    let f = below_handle!(clCreateUserEvent, errcode_ret);
    // SAFETY: passed on unchanged.
    let e = unsafe { f(context, errcode_ret) };
    if !e.is_null() {
        record(|| crate::events::user_event_made(e));
    }
    e
}
