//! The layer's configuration, read once from the environment that `clpart
//! exec` sets:
//!
//! - `CLPART_LAYER_SPLIT=IDX:SHARE,...`: device shares, device indices as
//!   `clpart devices` lists them, or `auto`: every device, in proportion to
//!   its measured speed on each kernel (`launcher::Balancer`; even at a
//!   kernel's first launch); default: even over every device;
//! - `CLPART_LAYER_REPORT=FILE.json`: where the report goes at exit;
//! - `CLPART_LAYER_LAUNCH_LOG=1`: the report also holds the launch log
//!   (every launch clpart ran and every sync of an application's buffer,
//!   in order; see [`crate::report`]);
//! - `CLPART_LAYER_WAIT=1`: a launch whose analysis is not ready waits
//!   for it (made on the application's thread) instead of running unsplit
//!   on the application's device meanwhile (see [`crate::analyses`]);
//! - `CLPART_LAYER_VERBOSE=1`: one line per analyzed launch configuration
//!   and a summary at exit, on stderr.

use std::path::PathBuf;
use std::sync::OnceLock;

pub(crate) struct Config {
    /// The shares, or why the given ones are unusable (every launch then
    /// passes through with that reason).
    pub(crate) shares: Option<Result<Vec<(usize, f64)>, String>>,
    /// Automatic shares (`CLPART_LAYER_SPLIT=auto`).
    pub(crate) auto: bool,
    pub(crate) report: Option<PathBuf>,
    /// Keep the launch log for the report (`CLPART_LAYER_LAUNCH_LOG=1`).
    pub(crate) launch_log: bool,
    pub(crate) verbose: bool,
    /// Launches wait for their analysis (`CLPART_LAYER_WAIT=1`).
    pub(crate) wait_for_analysis: bool,
}

pub(crate) fn config() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(|| Config {
        shares: std::env::var("CLPART_LAYER_SPLIT")
            .ok()
            .filter(|s| !s.trim().is_empty() && s.trim() != "auto")
            .map(|s| {
                launcher::parse_shares(&s).map_err(|e| format!("CLPART_LAYER_SPLIT '{s}': {e}"))
            }),
        auto: std::env::var("CLPART_LAYER_SPLIT").is_ok_and(|s| s.trim() == "auto"),
        report: std::env::var_os("CLPART_LAYER_REPORT")
            .filter(|s| !s.is_empty())
            .map(PathBuf::from),
        launch_log: std::env::var("CLPART_LAYER_LAUNCH_LOG").is_ok_and(|v| v == "1"),
        verbose: std::env::var("CLPART_LAYER_VERBOSE").is_ok_and(|v| v == "1"),
        wait_for_analysis: std::env::var("CLPART_LAYER_WAIT").is_ok_and(|v| v == "1"),
    })
}
