//! Device memory kept for reuse between launches, one [`BufferPool`] per
//! device context: allocations a launch no longer needs (a host-array
//! launch's buffers, a replaced or dropped resident allocation, an unsplit
//! run's buffers) go back to the pool and the next launch that needs a
//! buffer of the same byte size takes one instead of calling
//! `clCreateBuffer`; and the guard's flag buffers that are known to hold
//! zeros, so that a launch neither creates nor resets one.
//!
//! What makes reuse safe:
//! - contents: a pooled buffer's old contents count for nothing. A buffer
//!   from the pool is a new allocation to the launch, whose coherence
//!   records no element valid in it (exactly as for the undefined contents
//!   of a fresh `clCreateBuffer`): every element a device reads is sent in
//!   that launch, and merges prefill what they compare against;
//! - ordering: a device has one in-order queue, and a pooled buffer is only
//!   ever used on its own device's queue, so commands that used it before
//!   it was given back complete before any command of its next use starts;
//! - flags: a flag buffer goes back to the zero list only after its
//!   read-back, the last command on it, finished and showed every flag
//!   clear: it then holds zeros (only the guarded subkernel writes it, and
//!   only to raise a flag). A buffer with a raised flag, or whose read
//!   failed, is released.
//!
//! The pool holds at most [`MAX_FREE`] buffers and [`MAX_FREE_BYTES`] bytes
//! per device; beyond that a buffer given back is released. Everything
//! pooled is released when the device context drops (with its
//! [`crate::Runtime`] and every plan and buffer that shares it).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use opencl3::memory::Buffer;

/// Most buffers a device's pool keeps (flag buffers apart).
pub(crate) const MAX_FREE: usize = 32;

/// Most bytes a device's pool keeps.
pub(crate) const MAX_FREE_BYTES: usize = 64 << 20;

/// Most zeroed flag buffers a device's pool keeps.
const MAX_ZERO_FLAGS: usize = 4;

/// Counts of a pool's device buffers, shared with whoever asked
/// ([`crate::Runtime::pool_counts`]) so that they can be read after the
/// pool is gone.
#[derive(Debug, Default)]
pub struct PoolCounts {
    /// Buffers given back and kept.
    kept: AtomicU64,
    /// Buffers taken from the pool instead of created.
    reused: AtomicU64,
    /// Kept buffers the pool released when it dropped.
    released: AtomicU64,
}

impl PoolCounts {
    /// Buffers the pool holds now: kept and neither taken again nor
    /// released.
    pub fn held(&self) -> u64 {
        self.kept.load(Ordering::Relaxed)
            - self.reused.load(Ordering::Relaxed)
            - self.released.load(Ordering::Relaxed)
    }

    /// Buffers taken from the pool instead of created.
    pub fn reused(&self) -> u64 {
        self.reused.load(Ordering::Relaxed)
    }
}

/// A device's pool (see the module doc).
pub(crate) struct BufferPool {
    /// Free buffers with their byte sizes, in the order given back.
    free: Mutex<Vec<(usize, Buffer<u8>)>>,
    /// Flag buffers that hold zeros.
    zero_flags: Mutex<Vec<Buffer<u8>>>,
    counts: Arc<PoolCounts>,
}

impl BufferPool {
    pub(crate) fn new() -> BufferPool {
        BufferPool {
            free: Mutex::new(Vec::new()),
            zero_flags: Mutex::new(Vec::new()),
            counts: Arc::new(PoolCounts::default()),
        }
    }

    pub(crate) fn counts(&self) -> Arc<PoolCounts> {
        self.counts.clone()
    }

    /// A free buffer of exactly `bytes` bytes, if the pool has one.
    pub(crate) fn take(&self, bytes: usize) -> Option<Buffer<u8>> {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        // the first given back first: a launch repeated with the same
        // buffers gets the same handles back in the same order
        let i = free.iter().position(|(n, _)| *n == bytes)?;
        self.counts.reused.fetch_add(1, Ordering::Relaxed);
        Some(free.remove(i).1)
    }

    /// Keeps `buf` (`bytes` bytes) for a later [`BufferPool::take`], or
    /// hands it back to be released when the pool is full.
    pub(crate) fn give(&self, bytes: usize, buf: Buffer<u8>) -> Option<Buffer<u8>> {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        let held: usize = free.iter().map(|(n, _)| n).sum();
        if free.len() >= MAX_FREE || held.saturating_add(bytes) > MAX_FREE_BYTES {
            return Some(buf);
        }
        free.push((bytes, buf));
        self.counts.kept.fetch_add(1, Ordering::Relaxed);
        None
    }

    /// A flag buffer that holds zeros, if the pool has one.
    pub(crate) fn take_zero_flags(&self) -> Option<Buffer<u8>> {
        self.zero_flags
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop()
    }

    /// Keeps a flag buffer that holds zeros (see the module doc for when
    /// that is known); hands it back to be released when the pool is full.
    pub(crate) fn give_zero_flags(&self, buf: Buffer<u8>) -> Option<Buffer<u8>> {
        let mut z = self.zero_flags.lock().unwrap_or_else(|p| p.into_inner());
        if z.len() >= MAX_ZERO_FLAGS {
            return Some(buf);
        }
        z.push(buf);
        None
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        let free = std::mem::take(self.free.get_mut().unwrap_or_else(|p| p.into_inner()));
        self.counts
            .released
            .fetch_add(free.len() as u64, Ordering::Relaxed);
        drop(free);
    }
}
