//! The persistent analysis cache: a launch's [`RangeFile`], analyzed from
//! source, kept on disk so that the next process launching the same kernel
//! with the same configuration skips libclang's access analysis and isl.
//!
//! Where: `$CLPART_CACHE_DIR`, else `$XDG_CACHE_HOME/clpart/analysis`,
//! else `$HOME/.cache/clpart/analysis`; `CLPART_CACHE=0` turns it off.
//! One file per entry, `<key>.ron`, a range file written atomically
//! ([`RangeFile::write_atomic`]).
//!
//! The key ([`key`]) is a SHA-256 over everything the result depends on:
//! [`CACHE_VERSION`], clpart's version, the range-file format version, a
//! hash of the analysis crates' sources at build time
//! (`CLPART_ANALYSIS_BUILD_ID`, from `build.rs`), whether it is a debug
//! build (whose time budget differs), the source's name and
//! text, the build options, the kernel's name, every field of the
//! [`LaunchConfig`] and the default partitioner options. Bump
//! [`CACHE_VERSION`] when the analysis changes in a way none of these
//! capture (a system library such as libclang or isl is not in the key).
//!
//! An entry is untrusted: it is read through [`RangeFile::read`] (every
//! field validated, every section's checksum verified), like a range file a
//! user gives, and must be for this source, name, build options and kernel;
//! and the launch's run-time guard still checks every access. An entry
//! that fails any of this is ignored and overwritten. Only deterministic
//! results are stored: not one whose analysis ran out of its time budget,
//! nor one made after an Ehrhart count's process died ([`deterministic`]).
//! A cache that cannot be read or written is skipped without a word: it
//! never fails a launch. Sources that include other files are never
//! cached ([`cacheable`]): the key covers the source's own text only.
//!
//! Beside the range files, `<args key>.args.ron`: a kernel's argument list
//! (a [`SignatureFile`]), keyed ([`args_key`]) on what [`key`] covers but
//! the launch, so that a session over source that has not parsed it
//! ([`crate::Session::from_source_lazy`]) serves
//! [`crate::Session::arg_infos`] without libclang. It is read the same way
//! ([`SignatureFile::read`]: validated, checksum verified) and must name this
//! source's hash, name, build options and kernel.
//!
//! In `locks/`, `<key>.lock` per entry ([`hold`]): a process making an
//! entry holds it, and another about to make the same one waits for it and
//! reads the entry instead of analyzing again.

use std::path::{Path, PathBuf};

use ranges_format::{ArgInfo, RangeFile, SignatureFile, FORMAT_VERSION, SIGNATURE_VERSION};
use sha2::{Digest, Sha256};

use crate::LaunchConfig;

/// Bumped by hand when cached results must not be reused (the analysis
/// changed in a way the key does not capture).
pub const CACHE_VERSION: u32 = 1;

/// A hash of the analysis crates' sources when this clpart was built.
const BUILD_ID: &str = env!("CLPART_ANALYSIS_BUILD_ID");

/// The cache folder, or `None` when `CLPART_CACHE=0` or no folder is known.
pub fn dir() -> Option<PathBuf> {
    Some(match launcher::cache_root()? {
        launcher::CacheRoot::Given(d) => d,
        launcher::CacheRoot::Default(d) => d.join("analysis"),
    })
}

/// Whether results of `source` may be cached: not when it includes another
/// file (a line `#include ...`, [`coarsen::has_include`]), whose text the
/// key does not cover: a header changed since would otherwise get the old
/// ranges or argument list (a wrong result, or accesses past a device
/// buffer). The layer hands over sources with their includes written in.
pub fn cacheable(source: &str) -> bool {
    !coarsen::has_include(source)
}

/// The key of one launch's analysis (lower-case hex SHA-256).
pub fn key(
    file: &str,
    source: &str,
    build_options: &[String],
    kernel: &str,
    config: &LaunchConfig,
) -> String {
    // Debug text quotes and escapes strings, so fields cannot run together.
    let text = format!(
        "{:?}",
        (
            CACHE_VERSION,
            env!("CARGO_PKG_VERSION"),
            FORMAT_VERSION,
            BUILD_ID,
            cfg!(debug_assertions),
            file,
            source,
            build_options,
            kernel,
            config,
            partitioner::PartitionOptions::default(),
        )
    );
    hex_sha256(&text)
}

/// The key of one kernel's argument list ([`args_entry_path`]): what
/// [`key`] covers but the launch (its configuration and the partitioner's
/// options), and the word `args`.
pub fn args_key(file: &str, source: &str, build_options: &[String], kernel: &str) -> String {
    let text = format!(
        "{:?}",
        (
            "args",
            CACHE_VERSION,
            env!("CARGO_PKG_VERSION"),
            FORMAT_VERSION,
            SIGNATURE_VERSION,
            BUILD_ID,
            cfg!(debug_assertions),
            file,
            source,
            build_options,
            kernel,
        )
    );
    hex_sha256(&text)
}

fn hex_sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The entry's path in `dir`.
pub fn entry_path(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("{key}.ron"))
}

/// Holds `path` (a lock file, made when missing) exclusively until the
/// returned file is dropped, waiting while another process holds it: two
/// processes that would make the same entry (the analyses of two runs of
/// one program, left in the background) take turns, and the second reads
/// what the first kept instead of making it again. The lock dies with its
/// process. `None` where the file cannot be made or locked: the caller
/// goes on without it.
pub fn hold(path: &Path) -> Option<std::fs::File> {
    std::fs::create_dir_all(path.parent()?).ok()?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .ok()?;
    file.lock().ok()?;
    Some(file)
}

/// The lock file of the entry at `entry` ([`hold`]): `locks/<key>.lock`
/// beside it.
pub fn lock_path(entry: &Path) -> PathBuf {
    let key = entry.file_stem().unwrap_or_default().to_string_lossy();
    dir_lock_path(entry.parent().unwrap_or(Path::new("")), &key)
}

/// The lock `name` of the cache folder `dir` ([`hold`]).
pub fn dir_lock_path(dir: &Path, name: &str) -> PathBuf {
    dir.join("locks").join(format!("{name}.lock"))
}

/// The path of an argument list's entry (a [`SignatureFile`]) in `dir`.
pub fn args_entry_path(dir: &Path, args_key: &str) -> PathBuf {
    dir.join(format!("{args_key}.args.ron"))
}

/// The cached argument list at `path`, when it reads, validates, verifies
/// and is for exactly this source (by its hash), name, build options and
/// kernel.
pub fn load_args(
    path: &Path,
    file: &str,
    source: &str,
    build_options: &[String],
    kernel: &str,
) -> Option<Vec<ArgInfo>> {
    let sig = SignatureFile::read(path).ok()?;
    let fits = sig.source_name == file
        && sig.source_hash == ranges_format::source_hash(source)
        && sig.build_options == build_options
        && sig.kernel == kernel;
    fits.then_some(sig.args)
}

/// Stores the argument list `args` (sorted by index) of `kernel` at `path`
/// (folders made as needed); any failure is ignored.
pub fn store_args(
    path: &Path,
    file: &str,
    source: &str,
    build_options: &[String],
    kernel: &str,
    args: &[ArgInfo],
) {
    let sig = SignatureFile {
        source_name: file.to_string(),
        source_hash: ranges_format::source_hash(source),
        build_options: build_options.to_vec(),
        kernel: kernel.to_string(),
        args: args.to_vec(),
    };
    if let Some(parent) = path.parent() {
        if std::fs::create_dir_all(parent).is_err() {
            return;
        }
    }
    let _ = sig.write_atomic(path);
}

/// The cached range file at `path`, when it reads, validates, verifies and
/// is for exactly this source, name, build options and kernel.
pub fn load(
    path: &Path,
    file: &str,
    source: &str,
    build_options: &[String],
    kernel: &str,
) -> Option<RangeFile> {
    let rf = RangeFile::read(path).ok()?;
    let fits = rf.format_version == FORMAT_VERSION
        && rf.source_name == file
        && rf.source == source
        && rf.source_hash == ranges_format::source_hash(source)
        && with_added_options(&rf.build_options, build_options)
        && rf.kernels.len() == 1
        && rf.kernels[0].name == kernel;
    fits.then_some(rf)
}

/// Whether `rf` is the same whenever it is analyzed again: none of its
/// kernels' analyses was cut short by a time limit or a failed counting
/// process ([`ranges_format::KernelRanges::cut_short`]).
pub fn deterministic(rf: &RangeFile) -> bool {
    rf.kernels.iter().all(|k| k.cut_short.is_empty())
}

/// Stores `rf` at `path` (folders made as needed); any failure is ignored.
pub fn store(path: &Path, rf: &RangeFile) {
    if !deterministic(rf) {
        return;
    }
    if let Some(parent) = path.parent() {
        if std::fs::create_dir_all(parent).is_err() {
            return;
        }
    }
    let _ = rf.write_atomic(path);
}

/// Whether a range file's build options are the user's `build_options`,
/// with or without those the parse adds ([`coarsen::INT24_OPTIONS`]).
fn with_added_options(file: &[String], build_options: &[String]) -> bool {
    file.strip_prefix(build_options).is_some_and(|rest| {
        rest.is_empty() || rest.iter().map(String::as_str).eq(coarsen::INT24_OPTIONS)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry's lock is held by one maker at a time: a second waits
    /// until the first lets go (here: cannot take it meanwhile), and the
    /// folder of a first entry is made for it.
    #[test]
    fn one_maker_at_a_time_holds_an_entry() {
        let dir = tempfile::tempdir().unwrap();
        let lock = lock_path(&entry_path(&dir.path().join("new"), "k"));
        assert_eq!(lock, dir.path().join("new/locks/k.lock"));
        let first = hold(&lock).expect("the first maker holds the entry");
        let second = std::fs::File::open(&lock).unwrap();
        assert!(matches!(
            second.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(first);
        second.try_lock().expect("free once the first lets go");
    }

    /// Only analyses that ran to their end are kept: one whose kernel
    /// records what cut it short is neither deterministic nor stored.
    #[test]
    fn an_analysis_cut_short_is_not_kept() {
        let src = "__kernel void k(__global float *a, int n) { a[get_global_id(0)] = n; }";
        let session = crate::Session::from_source("k.cl", src, &[]).unwrap();
        let mut rf = session
            .analyze(None, &partitioner::PartitionOptions::default())
            .unwrap();
        assert!(deterministic(&rf));
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("kept.ron");
        store(&kept, &rf);
        assert!(kept.is_file());
        rf.kernels[0].cut_short = vec![ranges_format::CutShort::CountTime];
        assert!(!deterministic(&rf));
        let cut = dir.path().join("cut.ron");
        store(&cut, &rf);
        assert!(!cut.exists());
    }
}
