//! Images: recorded with the buffer their storage shares (which is then
//! pinned), and their reads, writes, copies, fills and maps keep the
//! application's copies current.

use super::*;

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
pub(super) fn image_made(image: cl_mem, flags: cl_mem_flags, desc: *const c_void) {
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

pub(super) unsafe extern "C" fn create_image(
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

pub(super) unsafe extern "C" fn create_image_with_properties(
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
pub(super) unsafe extern "C" fn create_image_2d(
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
pub(super) unsafe extern "C" fn create_image_3d(
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
pub(super) unsafe extern "C" fn enqueue_read_image(
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
pub(super) unsafe extern "C" fn enqueue_write_image(
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
pub(super) unsafe extern "C" fn enqueue_copy_image(
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
pub(super) unsafe extern "C" fn enqueue_fill_image(
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
pub(super) unsafe extern "C" fn enqueue_map_image(
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
