//! The safe side of a buffer handle: a [`launcher::DeviceBuffer`] that
//! lives across launches (its elements stay on the devices that wrote
//! them), shared between the handle and the plan arguments bound to it.
//!
//! The data is reference counted: releasing the handle ends the
//! application's use of it, and a plan argument still bound to it keeps the
//! data until that argument is set again or the plan is released. Every use
//! locks the buffer, so calls on one buffer from different threads take
//! turns; a launch locks all its buffers in one global order (by address),
//! so launches sharing buffers cannot deadlock.

use std::sync::{Arc, Mutex, MutexGuard};

use launcher::{DeviceBuffer, ElemType, HostBuffer};

use crate::status::*;

/// A buffer's shared state.
pub(crate) type Shared = Arc<Mutex<DeviceBuffer>>;

/// Locks a buffer (a panic while it was locked left it usable: every
/// operation on it either completes or leaves its coherence state intact).
pub(crate) fn lock(b: &Shared) -> MutexGuard<'_, DeviceBuffer> {
    b.lock().unwrap_or_else(|p| p.into_inner())
}

/// The element type called `name`, refused unless it is an OpenCL C scalar
/// or vector type.
pub(crate) fn elem_type(name: &str) -> Result<ElemType> {
    let elem = ElemType::parse(name, 0);
    if elem.scalar.is_none() || name.trim().is_empty() {
        return err(
            CLPART_INVALID_ARGUMENT,
            format!("elem_type '{name}' is not an OpenCL C scalar or vector type (e.g. float, int, uchar, float4)"),
        );
    }
    Ok(elem)
}

/// A new buffer of `n_elems` zero elements.
pub(crate) fn zeros(elem: ElemType, n_elems: usize) -> Result<Shared> {
    if n_elems == 0 {
        return err(
            CLPART_SIZE_MISMATCH,
            "n_elems is 0; a buffer holds at least one element",
        );
    }
    if (n_elems as u64)
        .checked_mul(elem.size as u64)
        .is_none_or(|b| b > isize::MAX as u64)
    {
        return err(
            CLPART_SIZE_MISMATCH,
            format!("{n_elems} elements of {} are too many", elem.name),
        );
    }
    let host = HostBuffer::zeros(elem, n_elems as u64).map_err(|m| {
        Error::new(
            CLPART_LAUNCH_FAILED,
            format!("cannot allocate the buffer: {m}"),
        )
    })?;
    Ok(Arc::new(Mutex::new(DeviceBuffer::new(host))))
}

/// A new buffer holding a copy of `bytes` (a whole number of elements).
pub(crate) fn from_bytes(elem: ElemType, bytes: &[u8]) -> Result<Shared> {
    let es = elem.size.max(1) as usize;
    if bytes.is_empty() || !bytes.len().is_multiple_of(es) {
        return err(
            CLPART_SIZE_MISMATCH,
            format!(
                "size_bytes {} is not a positive whole number of {es}-byte {} elements",
                bytes.len(),
                elem.name
            ),
        );
    }
    let mut data = Vec::new();
    data.try_reserve_exact(bytes.len()).map_err(|_| {
        Error::new(
            CLPART_LAUNCH_FAILED,
            format!("cannot allocate {} bytes of host memory", bytes.len()),
        )
    })?;
    data.extend_from_slice(bytes);
    Ok(Arc::new(Mutex::new(DeviceBuffer::new(
        HostBuffer::from_bytes(elem, data),
    ))))
}

/// Bytes of the buffer.
pub(crate) fn size_bytes(b: &DeviceBuffer) -> usize {
    (b.len() * b.elem().size.max(1) as u64) as usize
}

/// The elements `[offset, offset + n)` of a byte range, checked to be whole
/// elements inside the buffer.
pub(crate) fn elem_range(
    b: &DeviceBuffer,
    offset_bytes: usize,
    size_bytes_: usize,
) -> Result<(u64, u64)> {
    let es = b.elem().size.max(1) as usize;
    if !offset_bytes.is_multiple_of(es) || !size_bytes_.is_multiple_of(es) {
        return err(
            CLPART_SIZE_MISMATCH,
            format!(
                "offset_bytes {offset_bytes} and size_bytes {size_bytes_} must be multiples of the element size, {es} bytes ({})",
                b.elem().name
            ),
        );
    }
    let total = size_bytes(b);
    if offset_bytes
        .checked_add(size_bytes_)
        .is_none_or(|end| end > total)
    {
        return err(
            CLPART_INVALID_ARGUMENT,
            format!("bytes [{offset_bytes}, {offset_bytes}+{size_bytes_}) are outside the buffer of {total} bytes"),
        );
    }
    Ok(((offset_bytes / es) as u64, (size_bytes_ / es) as u64))
}

/// The status of a failed buffer operation of the launcher: lost data has
/// its own code.
pub(crate) fn launcher_err(e: launcher::LaunchError) -> Error {
    match e {
        launcher::LaunchError::Lost { .. } => Error::new(CLPART_DATA_LOST, e.to_string()),
        other => Error::from(other),
    }
}

/// Locks `bufs` in address order (one global order: no deadlock between
/// launches that share buffers) and returns the guards in the order given.
pub(crate) fn lock_all(bufs: &[Shared]) -> Vec<MutexGuard<'_, DeviceBuffer>> {
    let mut order: Vec<usize> = (0..bufs.len()).collect();
    order.sort_by_key(|&i| Arc::as_ptr(&bufs[i]) as usize);
    let mut guards: Vec<Option<MutexGuard<'_, DeviceBuffer>>> =
        (0..bufs.len()).map(|_| None).collect();
    for i in order {
        guards[i] = Some(lock(&bufs[i]));
    }
    guards
        .into_iter()
        .map(|g| g.expect("every buffer locked"))
        .collect()
}
