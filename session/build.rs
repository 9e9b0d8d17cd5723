//! Embeds `CLPART_ANALYSIS_BUILD_ID`: a hash of the sources the analysis
//! depends on (this crate, `coarsen`, `access-analysis`, `partitioner`, `counting`,
//! `ranges-format`, `barvinok-sys`), part of every analysis cache key
//! (`cache.rs`), so that a clpart built from changed analysis code never
//! reads entries an older build wrote. Outside the workspace (a folder is
//! missing) only what is found is hashed.

use std::hash::Hasher as _;
use std::path::{Path, PathBuf};

const DIRS: &[&str] = &[
    "src",
    "../coarsen/src",
    "../access-analysis/src",
    "../partitioner/src",
    "../ranges-format/src",
    "../barvinok-sys/src",
    "../counting/src",
    "../Cargo.lock",
];

fn files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let Ok(rd) = std::fs::read_dir(path) else {
            return;
        };
        for e in rd.flatten() {
            files(&e.path(), out);
        }
    } else if path.is_file() {
        out.push(path.to_path_buf());
    }
}

fn main() {
    let mut all = Vec::new();
    for d in DIRS {
        println!("cargo:rerun-if-changed={d}");
        files(Path::new(d), &mut all);
    }
    all.sort();
    // Two independent 64-bit hashes (std's SipHash with fixed keys).
    let mut h1 = std::hash::DefaultHasher::new();
    let mut h2 = std::hash::DefaultHasher::new();
    h2.write(b"clpart analysis build id");
    for f in &all {
        let bytes = std::fs::read(f).unwrap_or_default();
        for h in [&mut h1, &mut h2] {
            h.write(f.to_string_lossy().as_bytes());
            h.write_usize(bytes.len());
            h.write(&bytes);
        }
    }
    println!(
        "cargo:rustc-env=CLPART_ANALYSIS_BUILD_ID={:016x}{:016x}",
        h1.finish(),
        h2.finish()
    );
}
