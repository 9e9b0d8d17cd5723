//! The wall-clock budget of an analysis: a watchdog that aborts an isl
//! context at a deadline.
//!
//! isl's operation limit (`isl_ctx_set_max_operations`) counts pivots and
//! allocations, but with large coefficients one operation can take
//! milliseconds (bignum gcds in `isl_tab_pivot` under `isl_map_gist`'s
//! `compute_divs`), so the limit alone does not bound time. The limit is
//! checked at every pivot and allocation, though: when the deadline passes,
//! the [`Watchdog`] lowers it to one operation (and keeps it there until it is
//! dropped, in case the owner resets it), the running operation fails at its
//! next pivot, and every later operation on the context fails at once.
//! Callers treat a failure as "cannot prove" (the array whole, the kernel
//! unsplit), so an expired budget only costs precision.
//!
//! (`isl_ctx_abort` is made for this, but isl reports its error without a
//! message and isl-rs then reads a NULL string; the operation limit's error
//! has one.) The limit is a word-sized field that isl reads before each
//! operation; the watchdog thread only stores to it.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

extern "C" {
    fn isl_ctx_set_max_operations(ctx: usize, max_operations: std::ffi::c_ulong);
}

/// How often an expired watchdog re-asserts the limit.
const REASSERT: Duration = Duration::from_millis(20);

/// Aborts an isl context at a deadline unless dropped first. Drop it before
/// the context (declare it after the context in a struct, or in a narrower
/// scope).
pub struct Watchdog {
    stop: Arc<(Mutex<bool>, Condvar)>,
    handle: Option<JoinHandle<()>>,
    expired: Arc<AtomicBool>,
}

impl Watchdog {
    /// Starts a watchdog that stops every isl operation on `ctx` from `deadline` on.
    pub fn arm(ctx: &isl_rs::Context, deadline: Instant) -> Watchdog {
        let ptr = ctx.ptr;
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let stop2 = Arc::clone(&stop);
        let expired = Arc::new(AtomicBool::new(false));
        let expired2 = Arc::clone(&expired);
        let handle = std::thread::Builder::new()
            .name("clpart-isl-watchdog".into())
            .spawn(move || {
                let (lock, cvar) = &*stop2;
                let Ok(mut stopped) = lock.lock() else { return };
                loop {
                    if *stopped {
                        return;
                    }
                    let now = Instant::now();
                    let wait = if now >= deadline {
                        expired2.store(true, Ordering::SeqCst);
                        // SAFETY: the context outlives the watchdog (its owner
                        // drops the watchdog first, which joins this thread);
                        // this stores one word that isl reads before each operation.
                        unsafe { isl_ctx_set_max_operations(ptr, 1) };
                        REASSERT
                    } else {
                        deadline - now
                    };
                    match cvar.wait_timeout(stopped, wait) {
                        Ok((g, _)) => stopped = g,
                        Err(_) => return,
                    }
                }
            })
            .ok();
        if handle.is_none() {
            // No thread: the budget cannot be enforced during operations; at
            // least honour a deadline that has already passed.
            if Instant::now() >= deadline {
                expired.store(true, Ordering::SeqCst);
                // SAFETY: as above, on this thread.
                unsafe { isl_ctx_set_max_operations(ptr, 1) };
            }
        }
        Watchdog {
            stop,
            handle,
            expired,
        }
    }

    /// Whether the deadline has passed (every isl operation fails from then on).
    pub fn expired(&self) -> bool {
        self.expired.load(Ordering::SeqCst)
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        let (lock, cvar) = &*self.stop;
        if let Ok(mut s) = lock.lock() {
            *s = true;
        }
        cvar.notify_all();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
