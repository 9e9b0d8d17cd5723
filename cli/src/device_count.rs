//! The number of OpenCL devices, for `clpart exec`'s check of its device
//! indices before the program starts, kept in the cache folder
//! (`session::cache::dir`, `devices-<key>.txt`) so that a warm start does
//! not open the OpenCL platforms (30-90 ms with PoCL, the application's
//! own start then pays it again).
//!
//! The key covers what decides the device list: the environment variables
//! the ICD loader and the drivers read, each vendor file's name and text,
//! the size and time of each library it names, and the device nodes of
//! GPUs. Where the list changes without any of them changing (hardware
//! added or removed), a stale count can only let an index through that the
//! layer then cannot use: every launch passes through to the application's
//! device with the reason, never a wrong result.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Environment variables that change which devices OpenCL lists.
const ENV: [&str; 10] = [
    "OCL_ICD_VENDORS",
    "OCL_ICD_FILENAMES",
    "OPENCL_VENDOR_PATH",
    "POCL_DEVICES",
    "CUDA_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL",
    "ZE_AFFINITY_MASK",
    "OPENCL_LAYERS",
];

/// The number of devices `launcher::devices` lists, from the cache when an
/// entry with this machine's key is there, else enumerated (and stored).
pub fn device_count() -> anyhow::Result<usize> {
    let path = session::cache::dir().map(|d| d.join(format!("devices-{}.txt", key())));
    if let Some(n) = path.as_deref().and_then(load) {
        return Ok(n);
    }
    let n = launcher::devices()?.len();
    if let Some(p) = path {
        store(&p, n);
    }
    Ok(n)
}

/// A cached count, when the entry reads as one.
fn load(path: &Path) -> Option<usize> {
    let text = ranges_format::input::read_text(path, ranges_format::input::CACHE_FILE).ok()?;
    text.strip_suffix('\n')?.parse().ok()
}

/// Stores `n` at `path` through a temporary of its own (a reader sees the
/// old entry or the new one); any failure is ignored.
fn store(path: &Path, n: usize) {
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = dir.join(format!(".devices-{}.tmp", std::process::id()));
    if std::fs::write(&tmp, format!("{n}\n")).is_ok() && std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// The key of this machine's device list (lower-case hex SHA-256).
fn key() -> String {
    key_with(&|v| std::env::var_os(v))
}

/// [`key`] with the environment variables read by `var`.
fn key_with(var: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> String {
    let mut text = format!("clpart {}\n", env!("CARGO_PKG_VERSION"));
    for v in ENV {
        text.push_str(&format!("{v}={:?}\n", var(v)));
    }
    let vendors = var("OCL_ICD_VENDORS")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from("/etc/OpenCL/vendors"), PathBuf::from);
    let mut icds: Vec<PathBuf> = if vendors.is_dir() {
        std::fs::read_dir(&vendors)
            .map(|rd| rd.flatten().map(|e| e.path()).collect())
            .unwrap_or_default()
    } else {
        vec![vendors]
    };
    icds.sort();
    for icd in icds {
        // (bounded: OCL_ICD_VENDORS may name any file)
        let body = ranges_format::input::read_text(&icd, ranges_format::input::CACHE_FILE)
            .unwrap_or_default();
        text.push_str(&format!("{} {body:?} {}\n", icd.display(), stamp(&icd)));
        for lib in body.lines().map(str::trim).filter(|l| l.starts_with('/')) {
            text.push_str(&format!("{lib} {}\n", stamp(Path::new(lib))));
        }
    }
    if let Some(libs) = var("OCL_ICD_FILENAMES") {
        for lib in std::env::split_paths(&libs) {
            text.push_str(&format!("{} {}\n", lib.display(), stamp(&lib)));
        }
    }
    for dev in ["/dev", "/dev/dri"] {
        let mut nodes: Vec<String> = std::fs::read_dir(dev)
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| {
                        n.starts_with("nvidia") || n.starts_with("kfd") || n.starts_with("render")
                    })
                    .collect()
            })
            .unwrap_or_default();
        nodes.sort();
        text.push_str(&format!("{dev}: {}\n", nodes.join(" ")));
    }
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A file's size and modification time, or `-` when it cannot be read.
fn stamp(p: &Path) -> String {
    std::fs::metadata(p)
        .ok()
        .and_then(|m| Some((m.len(), m.modified().ok()?)))
        .map_or_else(|| "-".into(), |(len, t)| format!("{len} {t:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_read_back_and_damaged_ones_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub").join("devices-x.txt");
        store(&p, 3);
        assert_eq!(load(&p), Some(3));
        for bad in ["", "3", "three\n", "-1\n", "3\n4\n"] {
            std::fs::write(&p, bad).unwrap();
            assert_eq!(load(&p), None, "{bad:?}");
        }
        let names: Vec<_> = std::fs::read_dir(p.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "no temporary left: {names:?}");
    }

    #[test]
    fn the_key_follows_the_environment_the_drivers_read() {
        let with = |pairs: &'static [(&'static str, &'static str)]| {
            move |v: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == v)
                    .map(|(_, x)| std::ffi::OsString::from(x))
            }
        };
        let two = key_with(&with(&[("POCL_DEVICES", "pthread basic")]));
        assert_eq!(two, key_with(&with(&[("POCL_DEVICES", "pthread basic")])));
        assert_eq!(two.len(), 64);
        assert_ne!(two, key_with(&with(&[("POCL_DEVICES", "pthread")])));
        assert_ne!(
            two,
            key_with(&with(&[
                ("POCL_DEVICES", "pthread basic"),
                ("CUDA_VISIBLE_DEVICES", "0")
            ]))
        );
        let dir = tempfile::tempdir().unwrap();
        let icd = dir.path().join("x.icd");
        std::fs::write(&icd, "/nonexistent/libx.so\n").unwrap();
        let vendors = |v: &str| (v == "OCL_ICD_VENDORS").then(|| dir.path().into());
        let a = key_with(&vendors);
        std::fs::write(&icd, "/nonexistent/liby.so\n").unwrap();
        let b = key_with(&vendors);
        assert_ne!(a, b, "a vendor file's text is in the key");
    }
}
