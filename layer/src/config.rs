//! The layer's configuration, read once from the environment that `clpart
//! exec` sets:
//!
//! - `CLPART_LAYER_SPLIT=IDX:SHARE,...`: device shares, device indices as
//!   `clpart devices` lists them, or `auto`: every device, in proportion to
//!   its measured speed on each kernel (`launcher::Balancer`; even at a
//!   kernel's first launch); default: even over every device;
//! - `CLPART_LAYER_REPORT=FILE.json`: where the report goes at exit;
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
    pub(crate) verbose: bool,
}

pub(crate) fn config() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(|| Config {
        shares: std::env::var("CLPART_LAYER_SPLIT")
            .ok()
            .filter(|s| !s.trim().is_empty() && s.trim() != "auto")
            .map(|s| parse_shares(&s).map_err(|e| format!("CLPART_LAYER_SPLIT '{s}': {e}"))),
        auto: std::env::var("CLPART_LAYER_SPLIT").is_ok_and(|s| s.trim() == "auto"),
        report: std::env::var_os("CLPART_LAYER_REPORT")
            .filter(|s| !s.is_empty())
            .map(PathBuf::from),
        verbose: std::env::var("CLPART_LAYER_VERBOSE").is_ok_and(|v| v == "1"),
    })
}

/// Parses `IDX:SHARE,...` (the syntax of `clpart run --split`).
pub(crate) fn parse_shares(text: &str) -> Result<Vec<(usize, f64)>, String> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let (i, s) = part
            .split_once(':')
            .ok_or_else(|| format!("entry '{part}' must be IDX:SHARE"))?;
        let i: usize = i
            .trim()
            .parse()
            .map_err(|_| format!("entry '{part}': '{i}' is not a device index"))?;
        let s: f64 = s
            .trim()
            .parse()
            .map_err(|_| format!("entry '{part}': '{s}' is not a number"))?;
        if !(0.0..=1.0).contains(&s) {
            return Err(format!("entry '{part}': share {s} is not between 0 and 1"));
        }
        out.push((i, s));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::parse_shares;

    #[test]
    fn shares_parse_like_clpart_run() {
        assert_eq!(
            parse_shares("0:0.86, 1:0.14").unwrap(),
            vec![(0, 0.86), (1, 0.14)]
        );
        assert!(parse_shares("0").unwrap_err().contains("must be IDX:SHARE"));
        assert!(parse_shares("x:0.5")
            .unwrap_err()
            .contains("not a device index"));
        assert!(parse_shares("0:1.5")
            .unwrap_err()
            .contains("not between 0 and 1"));
    }
}
