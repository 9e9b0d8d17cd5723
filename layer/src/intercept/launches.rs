//! Kernel launches: `clEnqueueNDRangeKernel` tries a split launch first
//! ([`crate::split`]); what goes to the driver (passed through, a home
//! probe, a task, a native kernel) has its buffers made current first and
//! marked newer after.

use super::*;

#[allow(clippy::too_many_arguments)]
pub(super) unsafe extern "C" fn enqueue_nd_range_kernel(
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
pub(super) fn probe_home(
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
pub(super) fn launch_below(
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

pub(super) unsafe extern "C" fn enqueue_task(
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

/// `clEnqueueNativeKernel`: a host function that reads and may write the
/// buffers of `mem_list` through pointers the driver makes. The layer
/// cannot see what it does: those buffers are synced first, newer after,
/// and the command goes to the driver unchanged (reported as a launch
/// that was not split).
#[allow(clippy::too_many_arguments)]
pub(super) unsafe extern "C" fn enqueue_native_kernel(
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
