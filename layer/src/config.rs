//! The layer's configuration, read once from the environment that `clpart
//! exec` sets:
//!
//! - `CLPART_LAYER_SPLIT=IDX:SHARE,...`: device shares, device indices as
//!   `clpart devices` lists them, or `auto`: every device, in proportion to
//!   its measured speed on each kernel (`launcher::Balancer`; even at a
//!   kernel's first launch); default: even over every device. Shares that
//!   give every work-group to one device (one device listed, or every
//!   other share 0) split nothing: every launch passes through to the
//!   application's device, untouched ([`Config::pass_through`]);
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
    /// Why every launch passes through untouched, when the shares give
    /// all the work to one device: splitting would only copy every buffer
    /// to that device and back ([`one_device`]).
    pub(crate) pass_through: Option<&'static str>,
    /// Automatic shares (`CLPART_LAYER_SPLIT=auto`).
    pub(crate) auto: bool,
    pub(crate) report: Option<PathBuf>,
    /// Keep the launch log for the report (`CLPART_LAYER_LAUNCH_LOG=1`).
    pub(crate) launch_log: bool,
    pub(crate) verbose: bool,
    /// Launches wait for their analysis (`CLPART_LAYER_WAIT=1`).
    pub(crate) wait_for_analysis: bool,
}

/// The reason a launch passes through when the shares give all the work
/// to one device.
const ONE_DEVICE: &str =
    "one device: runs on the application's device (the shares give it all the work)";

/// Whether `shares` give every work-group to one device: one device
/// listed, or every share but one 0.
fn one_device(shares: &[(usize, f64)]) -> bool {
    shares.iter().filter(|(_, s)| *s > 0.0).count() <= 1
}

pub(crate) fn config() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let shares = std::env::var("CLPART_LAYER_SPLIT")
            .ok()
            .filter(|s| !s.trim().is_empty() && s.trim() != "auto")
            .map(|s| {
                launcher::parse_shares(&s).map_err(|e| format!("CLPART_LAYER_SPLIT '{s}': {e}"))
            });
        let pass_through = match &shares {
            Some(Ok(s)) if one_device(s) => Some(ONE_DEVICE),
            _ => None,
        };
        Config {
            shares,
            pass_through,
            auto: std::env::var("CLPART_LAYER_SPLIT").is_ok_and(|s| s.trim() == "auto"),
            report: std::env::var_os("CLPART_LAYER_REPORT")
                .filter(|s| !s.is_empty())
                .map(PathBuf::from),
            launch_log: std::env::var("CLPART_LAYER_LAUNCH_LOG").is_ok_and(|v| v == "1"),
            verbose: std::env::var("CLPART_LAYER_VERBOSE").is_ok_and(|v| v == "1"),
            wait_for_analysis: std::env::var("CLPART_LAYER_WAIT").is_ok_and(|v| v == "1"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::one_device;

    #[test]
    fn shares_that_give_one_device_all_the_work_are_one_device() {
        assert!(one_device(&[(0, 1.0)]));
        assert!(one_device(&[(0, 0.0), (1, 1.0)]));
        assert!(one_device(&[(1, 1.0), (0, 0.0), (2, 0.0)]));
        assert!(!one_device(&[(0, 0.5), (1, 0.5)]));
        assert!(!one_device(&[(0, 0.99), (1, 0.01)]));
    }
}
