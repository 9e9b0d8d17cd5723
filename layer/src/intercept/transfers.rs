//! Enqueued reads, writes, fills, copies, maps, unmaps and migrations of
//! buffers: a stale application copy is synced before the driver call,
//! and what the call writes is marked newer once the driver accepted it.

use super::*;

/// Makes `mems` current before the driver reads them: `Err` with the code
/// the application's call returns when that fails.
pub(super) fn sync(queue: cl_command_queue, mems: &[cl_mem]) -> Result<(), cl_int> {
    let mems: Vec<usize> = mems.iter().map(|&m| m as usize).collect();
    guarded(Ok(()), || resident::sync_out(queue, &mems))
}

/// Makes a stale `mem` current before the driver writes `size` bytes of
/// it at `offset` (nothing when the write covers it all).
pub(super) fn sync_for_write(
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
pub(super) fn wrote(r: cl_int, mems: &[cl_mem]) -> cl_int {
    if r == CL_SUCCESS {
        record(|| resident::written(&mems.iter().map(|&m| m as usize).collect::<Vec<_>>()));
    }
    r
}

#[allow(clippy::too_many_arguments)]
pub(super) unsafe extern "C" fn enqueue_read_buffer(
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
pub(super) unsafe extern "C" fn enqueue_read_buffer_rect(
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
pub(super) unsafe extern "C" fn enqueue_write_buffer(
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
pub(super) unsafe extern "C" fn enqueue_write_buffer_rect(
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
pub(super) unsafe extern "C" fn enqueue_fill_buffer(
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
pub(super) unsafe extern "C" fn enqueue_copy_buffer(
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
pub(super) unsafe extern "C" fn enqueue_copy_buffer_rect(
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
pub(super) unsafe extern "C" fn enqueue_copy_buffer_to_image(
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
pub(super) unsafe extern "C" fn enqueue_copy_image_to_buffer(
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
pub(super) unsafe extern "C" fn enqueue_map_buffer(
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

pub(super) unsafe extern "C" fn enqueue_unmap_mem_object(
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

/// `clEnqueueMigrateMemObjects`: the contents the application sees move
/// with its buffers, so a stale one is synced first (to the host or to the
/// queue's device alike: the migrated copy must be the current one); with
/// `CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED` the application gives the
/// contents up: a whole buffer is not synced and the driver's copy
/// (whatever it then holds) is the current one; a sub-buffer or an image
/// over a buffer is synced all the same (the rest of its buffer keeps its
/// contents). The command itself, with its wait list and
/// event, is the application's, unchanged.
pub(super) unsafe extern "C" fn enqueue_migrate_mem_objects(
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
