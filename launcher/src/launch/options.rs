//! The options of one launch ([`LaunchOptions`]) and the per-device memory
//! cap they set ([`check_cap`]), read by every kind of run.

use crate::error::{LaunchError, Result};
use crate::plan::Plan;

/// Options of one launch.
#[derive(Clone, Debug)]
pub struct LaunchOptions {
    /// Also run the unsplit kernel on one device and compare every output
    /// byte ([`RunReport::verified`](crate::RunReport::verified), [`RunReport::mismatch`](crate::RunReport::mismatch)).
    pub verify: bool,
    /// The device that runs the verification (default: the device with the
    /// largest share).
    pub verify_device: Option<usize>,
    /// Most bytes of buffers one device may hold for its slice; a launch
    /// that needs more fails before any device runs.
    pub mem_cap_bytes: Option<u64>,
    /// Turns the run-time guard off: subkernels run without checking their
    /// accesses against their ranges (`--unchecked`). With the guard on (the
    /// default), an access outside the analyzed range is skipped, the
    /// launch's device results are discarded and the kernel re-runs
    /// unsplit; kernels whose buffers the guard cannot check run unsplit.
    pub unchecked: bool,
    /// Test-only: the read range of this array is made one element shorter
    /// at its top on every device (after its buffer is sized), as an analysis
    /// that under-approximates would; the guard must catch it.
    #[doc(hidden)]
    pub test_underapproximate: Option<String>,
    /// Test-only: the read box of this (delinearized) array loses its last
    /// column (the top of its last dimension) on every device, as an
    /// analysis that under-approximates a box would; the guard's box check
    /// must catch it.
    #[doc(hidden)]
    pub test_shrink_box: Option<String>,
    /// Test-only: the read part of this array with the most rows (its
    /// outermost dimension) loses its last row on every device, while the
    /// read box and the windows stay whole, as an analysis that
    /// under-approximates one part would; the guard's part check must catch
    /// it.
    #[doc(hidden)]
    pub test_shrink_part: Option<String>,
    /// Evaluate the Ehrhart counts of every slice for
    /// [`RunReport::bytes_exact`](crate::RunReport::bytes_exact) (on by default). Callers that never read
    /// it (the layer, the launch-overhead bench) turn it off; `bytes_exact`
    /// is then `None`.
    pub exact_bytes: bool,
}

impl Default for LaunchOptions {
    fn default() -> LaunchOptions {
        LaunchOptions {
            verify: false,
            verify_device: None,
            mem_cap_bytes: None,
            unchecked: false,
            test_underapproximate: None,
            test_shrink_box: None,
            test_shrink_part: None,
            exact_bytes: true,
        }
    }
}

/// Fails when `device` would hold more than the launch's memory cap
/// ([`LaunchOptions::mem_cap_bytes`]) for its slice.
pub(super) fn check_cap(
    plan: &Plan,
    device: usize,
    needed: u64,
    options: &LaunchOptions,
) -> Result<()> {
    if let Some(cap) = options.mem_cap_bytes {
        if needed > cap {
            return Err(LaunchError::MemoryCap {
                device: plan.runtime.device(device)?.label(),
                needed,
                cap,
            });
        }
    }
    Ok(())
}
