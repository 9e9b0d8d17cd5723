//! Where the corpus kernels are: every `.cl` file under `kernels/`, in the
//! folders named after what each kernel exercises (`kernels/loops/do_while.cl`),
//! except the folders of other inputs ([`NOT_CORPUS`]). A kernel's file stem
//! is its name, unique across the folders, so a test names a kernel by its
//! stem alone and golden files are keyed by it.
//!
//! This file depends on `std` only: the analysis crates' tests, which cannot
//! depend on `clpart-tests` (it depends on them), include it by path.

use std::path::{Path, PathBuf};

/// The folders of `kernels/` that hold no corpus kernel: golden outputs,
/// bad inputs, image kernels, iterative programs and the slow-kernel set.
pub const NOT_CORPUS: &[&str] = &["golden", "images", "invalid", "iterative", "slow"];

/// Every corpus kernel file under `kernels` (the `kernels/` folder), sorted
/// by name. Panics when two files share a stem.
pub fn corpus_files(kernels: &Path) -> Vec<PathBuf> {
    cl_files(kernels, NOT_CORPUS)
}

/// The corpus kernel file whose stem is `name` (`vadd`), in whichever
/// folder of `kernels` it sits.
pub fn corpus_file(kernels: &Path, name: &str) -> PathBuf {
    corpus_files(kernels)
        .into_iter()
        .find(|p| p.file_stem().is_some_and(|s| s == name))
        .unwrap_or_else(|| panic!("no corpus kernel '{name}' under {}", kernels.display()))
}

/// Every `.cl` file under `dir` and its folders, but for the folders of
/// `dir` named in `skip`, sorted by name. Panics when two files share a stem.
pub fn cl_files(dir: &Path, skip: &[&str]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let entries = std::fs::read_dir(&folder)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", folder.display()));
        for entry in entries {
            let path = entry.expect("folder entry").path();
            if path.is_dir() {
                let skipped = folder == dir
                    && path
                        .file_name()
                        .is_some_and(|n| skip.iter().any(|s| n == *s));
                if !skipped {
                    folders.push(path);
                }
            } else if path.extension().is_some_and(|x| x == "cl") {
                files.push(path);
            }
        }
    }
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    if let Some(w) = files
        .windows(2)
        .find(|w| w[0].file_name() == w[1].file_name())
    {
        panic!(
            "two kernels named {:?}: {} and {}",
            w[0].file_stem().unwrap_or_default(),
            w[0].display(),
            w[1].display()
        );
    }
    files
}
