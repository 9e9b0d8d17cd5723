//! The application's events as far as the layer's own commands must not
//! wait for them.
//!
//! An application may enqueue a command that waits for a user event and
//! set the event only later, after further calls of its own. A command of
//! the layer's that blocks the host until the application's queue drains
//! (a blocking write, `clFinish`, `clWaitForEvents`) would then wait
//! forever. So:
//!
//! - the layer's syncs into the application's buffers are non-blocking
//!   writes ordered on the application's queue (in an out-of-order queue, a
//!   barrier waiting for the write follows it); the host bytes they write
//!   stay here until the driver says the write is done ([`keep`], [`reap`]);
//! - every user event the application makes is recorded (with a reference
//!   of the layer's own, so the handle is not reused while it is recorded)
//!   until the driver reports it complete or failed; while one is not
//!   ([`user_event_pending`]), no launch is split: a split launch finishes
//!   the application's queue first, which could wait for it.
//!
//! The statuses are asked of the driver (`clGetEventInfo`), never taken
//! from the application's `clSetUserEventStatus` calls, which the layer
//! does not intercept.

use std::ffi::c_void;
use std::sync::Mutex;

use opencl_sys::{
    cl_command_queue, cl_event, cl_int, CL_COMPLETE, CL_EVENT_COMMAND_EXECUTION_STATUS,
    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, CL_QUEUE_PROPERTIES, CL_SUCCESS,
};

use crate::target;

/// A handle, sendable between threads (only ever passed to the driver).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Event(usize);

/// User events of the application not yet complete.
static USER_EVENTS: Mutex<Vec<Event>> = Mutex::new(Vec::new());

/// The layer's non-blocking writes in flight, with the bytes they read.
static IN_FLIGHT: Mutex<Vec<(Event, Vec<u8>)>> = Mutex::new(Vec::new());

/// The event's execution status; `None` when the driver does not answer.
fn status(e: Event) -> Option<cl_int> {
    let info = target().clGetEventInfo?;
    let mut v: cl_int = 0;
    // SAFETY: a `cl_int` answer into `v`; `e` is a live event (the layer
    // holds a reference to it).
    let r = unsafe {
        info(
            e.0 as cl_event,
            CL_EVENT_COMMAND_EXECUTION_STATUS,
            std::mem::size_of::<cl_int>(),
            &mut v as *mut cl_int as *mut c_void,
            std::ptr::null_mut(),
        )
    };
    (r == CL_SUCCESS).then_some(v)
}

fn release(e: Event) {
    if let Some(f) = target().clReleaseEvent {
        // SAFETY: the layer's own reference.
        unsafe { f(e.0 as cl_event) };
    }
}

/// Whether the driver says the event is done (complete, or failed).
fn done(e: Event) -> bool {
    status(e).is_some_and(|s| s <= CL_COMPLETE as cl_int)
}

/// A user event the application made: recorded until it is done.
pub(crate) fn user_event_made(event: cl_event) {
    let Some(retain) = target().clRetainEvent else {
        return;
    };
    // SAFETY: an event the driver just made; the layer's reference is
    // released once the event is done.
    if unsafe { retain(event) } == CL_SUCCESS {
        USER_EVENTS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Event(event as usize));
    }
}

/// Whether a user event of the application is not done yet (the ones that
/// are done are forgotten).
pub(crate) fn user_event_pending() -> bool {
    let mut events = USER_EVENTS.lock().unwrap_or_else(|p| p.into_inner());
    events.retain(|&e| {
        if done(e) {
            release(e);
            false
        } else {
            true
        }
    });
    !events.is_empty()
}

/// Forgets the writes that are done, freeing their bytes (at each sync
/// and each split launch; what is in flight at exit is left to the
/// process's end).
pub(crate) fn reap() {
    let mut flight = IN_FLIGHT.lock().unwrap_or_else(|p| p.into_inner());
    flight.retain(|(e, _)| {
        if done(*e) {
            release(*e);
            false
        } else {
            true
        }
    });
}

fn keep(event: cl_event, bytes: Vec<u8>) {
    IN_FLIGHT
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((Event(event as usize), bytes));
}

/// Whether commands of `queue` may run out of order.
fn out_of_order(queue: cl_command_queue) -> bool {
    let Some(info) = target().clGetCommandQueueInfo else {
        return true;
    };
    let mut props: u64 = 0;
    // SAFETY: a `cl_command_queue_properties` (u64) answer into `props`.
    let r = unsafe {
        info(
            queue,
            CL_QUEUE_PROPERTIES,
            std::mem::size_of::<u64>(),
            &mut props as *mut u64 as *mut c_void,
            std::ptr::null_mut(),
        )
    };
    // Unknown: taken as out of order (a barrier more, never an order less).
    r != CL_SUCCESS || props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE != 0
}

/// Writes `bytes` at `offset` into the application's buffer `mem` with a
/// non-blocking write on `queue`, ordered before every command the
/// application enqueues on it afterwards; the bytes stay alive until the
/// driver says the write is done. Returns the driver's code.
pub(crate) fn write_ordered(
    queue: cl_command_queue,
    mem: usize,
    offset: usize,
    bytes: Vec<u8>,
) -> cl_int {
    reap();
    let t = target();
    let Some(write) = t.clEnqueueWriteBuffer else {
        return opencl_sys::CL_INVALID_OPERATION;
    };
    let mut event: cl_event = std::ptr::null_mut();
    // SAFETY: `bytes` is kept (moved into IN_FLIGHT below) until the event
    // says the driver is done reading it; a Vec's heap data does not move.
    let r = unsafe {
        write(
            queue,
            mem as _,
            opencl_sys::CL_FALSE,
            offset,
            bytes.len(),
            bytes.as_ptr() as *const c_void,
            0,
            std::ptr::null(),
            &mut event,
        )
    };
    if r != CL_SUCCESS {
        return r;
    }
    keep(event, bytes);
    if out_of_order(queue) {
        let Some(barrier) = t.clEnqueueBarrierWithWaitList else {
            return opencl_sys::CL_INVALID_OPERATION;
        };
        // SAFETY: one event of the layer's own in the wait list.
        let r = unsafe { barrier(queue, 1, &event, std::ptr::null_mut()) };
        if r != CL_SUCCESS {
            return r;
        }
    }
    CL_SUCCESS
}

/// How many split launches' events are remembered ([`split_launch_event`]);
/// past it the oldest is forgotten (and reads as the driver's marker).
const SPLIT_EVENTS_KEPT: usize = 4096;

/// The events the layer gave the application for split launches (markers
/// on its queue, complete once the results are in place), with each
/// launch's wall in nanoseconds. The layer holds a reference to each, so
/// the driver never reuses a remembered handle for another event.
static SPLIT_EVENTS: Mutex<std::collections::VecDeque<(Event, u64)>> =
    Mutex::new(std::collections::VecDeque::new());

/// Remembers `event`, the marker a split launch gave the application, and
/// the launch's wall: the application then sees it as an NDRange launch
/// ([`split_command_type`]) whose profiling times span the launch
/// ([`split_profiling`]).
pub(crate) fn split_launch_event(event: cl_event, wall_ns: u64) {
    let Some(retain) = target().clRetainEvent else {
        return;
    };
    // SAFETY: the event the driver just made for the application; the
    // layer's reference is released when it is forgotten.
    if unsafe { retain(event) } != CL_SUCCESS {
        return;
    }
    let mut kept = SPLIT_EVENTS.lock().unwrap_or_else(|p| p.into_inner());
    if kept.len() >= SPLIT_EVENTS_KEPT {
        if let Some((old, _)) = kept.pop_front() {
            release(old);
        }
    }
    kept.push_back((Event(event as usize), wall_ns));
}

/// The wall of the split launch whose event is `event`, if it is one.
fn split_wall(event: cl_event) -> Option<u64> {
    let kept = SPLIT_EVENTS.lock().unwrap_or_else(|p| p.into_inner());
    kept.iter()
        .rev()
        .find(|(e, _)| e.0 == event as usize)
        .map(|&(_, w)| w)
}

/// `CL_COMMAND_NDRANGE_KERNEL` for a split launch's event.
pub(crate) fn split_command_type(event: cl_event) -> Option<opencl_sys::cl_command_type> {
    split_wall(event).map(|_| opencl_sys::CL_COMMAND_NDRANGE_KERNEL)
}

/// The profiling time `what` of a split launch's event, given the marker's
/// own values (`marker(what)`, the driver's answer): it ends when the
/// marker ends (the results were in place just before) and starts the
/// launch's wall earlier; it was queued and submitted no later than it
/// started.
pub(crate) fn split_profiling(
    event: cl_event,
    what: opencl_sys::cl_profiling_info,
    marker: impl Fn(opencl_sys::cl_profiling_info) -> Option<u64>,
) -> Option<u64> {
    let wall = split_wall(event)?;
    let end = marker(opencl_sys::CL_PROFILING_COMMAND_END)?;
    let start = end.saturating_sub(wall);
    match what {
        opencl_sys::CL_PROFILING_COMMAND_START => Some(start),
        opencl_sys::CL_PROFILING_COMMAND_QUEUED | opencl_sys::CL_PROFILING_COMMAND_SUBMIT => {
            marker(what).map(|v| v.min(start))
        }
        _ => None,
    }
}
