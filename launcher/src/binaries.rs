//! Built programs kept on disk, so that a later run loads a subkernel's
//! binary instead of building it from source.
//!
//! A driver's own cache (PoCL's) still preprocesses the source on every
//! build to find its entry: tens of milliseconds per program and device,
//! paid on the application's thread by a kernel whose analysis a warm run
//! reads from the cache. The binary (`CL_PROGRAM_BINARIES`) of each program
//! built from source is written here, keyed by a hash of everything the
//! build depends on: the source, the options, the device's name, its
//! platform, its OpenCL and driver versions. A source that includes another
//! file is never kept (the key does not cover the included text). A binary
//! that fails to load or build is ignored: the program is built from
//! source.
//!
//! Where: `$CLPART_CACHE_DIR/programs`, else
//! `$XDG_CACHE_HOME/clpart/programs`, else `$HOME/.cache/clpart/programs`;
//! `CLPART_CACHE=0` turns it off, as for the analysis cache. Files are
//! written to a temporary name and renamed, so a reader never sees half of
//! one.

use std::path::PathBuf;

use sha2::{Digest, Sha256};

/// The largest binary read back (a bound on what a damaged cache file can
/// make clpart allocate).
const MAX_BINARY_BYTES: u64 = 256 << 20;

/// Where clpart's persistent caches live.
pub enum CacheRoot {
    /// `$CLPART_CACHE_DIR`: the analysis cache's own folder.
    Given(PathBuf),
    /// `$XDG_CACHE_HOME/clpart`, else `$HOME/.cache/clpart`: one
    /// subfolder per cache.
    Default(PathBuf),
}

/// The caches' root, or `None` when `CLPART_CACHE=0` or no folder is
/// known (empty variables count as unset; a relative `XDG_CACHE_HOME` or
/// `HOME` is ignored).
pub fn cache_root() -> Option<CacheRoot> {
    let var = |n: &str| std::env::var_os(n).filter(|v| !v.is_empty());
    if var("CLPART_CACHE").is_some_and(|v| v == "0") {
        return None;
    }
    if let Some(d) = var("CLPART_CACHE_DIR") {
        return Some(CacheRoot::Given(PathBuf::from(d)));
    }
    if let Some(d) = var("XDG_CACHE_HOME").map(PathBuf::from) {
        if d.is_absolute() {
            return Some(CacheRoot::Default(d.join("clpart")));
        }
    }
    let home = PathBuf::from(var("HOME")?);
    home.is_absolute()
        .then(|| CacheRoot::Default(home.join(".cache").join("clpart")))
}

/// The programs' folder, or `None` when caching is off.
fn dir() -> Option<PathBuf> {
    match cache_root()? {
        CacheRoot::Given(d) | CacheRoot::Default(d) => Some(d.join("programs")),
    }
}

/// Whether a program of `source` may be kept: not when it includes a file.
fn keepable(source: &str) -> bool {
    !source.lines().any(|l| {
        l.trim_start()
            .strip_prefix('#')
            .is_some_and(|d| d.trim_start().starts_with("include"))
    })
}

/// The cache file of a program, `None` when it is not to be kept.
/// `device` names the device, its platform and versions.
pub(crate) fn path(device: &[&str], source: &str, options: &str) -> Option<PathBuf> {
    if !keepable(source) {
        return None;
    }
    let mut h = Sha256::new();
    for part in device.iter().copied().chain([options, source]) {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    let name: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Some(dir()?.join(format!("{name}.bin")))
}

/// The binary kept at `path`, if any.
pub(crate) fn load(path: &PathBuf) -> Option<Vec<u8>> {
    use std::io::Read;
    let f = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    f.take(MAX_BINARY_BYTES + 1).read_to_end(&mut bytes).ok()?;
    (!bytes.is_empty() && bytes.len() as u64 <= MAX_BINARY_BYTES).then_some(bytes)
}

/// Keeps `binary` at `path` (best effort: a cache that cannot be written
/// only costs the next run a build).
pub(crate) fn store(path: &PathBuf, binary: &[u8]) {
    if binary.is_empty() || binary.len() as u64 > MAX_BINARY_BYTES {
        return;
    }
    let Some(folder) = path.parent() else { return };
    if std::fs::create_dir_all(folder).is_err() {
        return;
    }
    if let Ok(mut tmp) = tempfile::NamedTempFile::new_in(folder) {
        use std::io::Write;
        if tmp.write_all(binary).is_ok() {
            let _ = tmp.persist(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_with_includes_are_not_kept_and_keys_cover_every_part() {
        let dev = ["pthread", "PoCL", "OpenCL 3.0", "3.1"];
        assert!(path(&dev, "#include \"a.h\"\n__kernel void k() {}", "").is_none());
        let (Some(a), Some(b), Some(c)) = (
            path(&dev, "__kernel void k() {}", ""),
            path(&dev, "__kernel void k() {}", "-DX"),
            path(
                &["basic", "PoCL", "OpenCL 3.0", "3.1"],
                "__kernel void k() {}",
                "",
            ),
        ) else {
            // no cache folder known here (no HOME): nothing is kept
            return;
        };
        assert!(a != b && a != c && b != c);
        assert_eq!(Some(a), path(&dev, "__kernel void k() {}", ""));
    }

    #[test]
    fn a_kept_binary_reads_back_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("sub").join("x.bin");
        store(&p, b"binary");
        assert_eq!(load(&p).as_deref(), Some(&b"binary"[..]));
        assert_eq!(load(&tmp.path().join("missing.bin")), None);
    }
}
