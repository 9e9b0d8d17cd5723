//! Shared helpers of the partitioner's tests: corpus kernels by name.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

#[path = "../../../tests/src/corpus_files.rs"]
mod corpus_files;

/// The workspace's `kernels/` folder.
fn kernels_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels")
}

/// Corpus kernel `name` (`vadd`, in whichever folder of `kernels/` it
/// sits), parsed as `<name>.cl`.
pub fn program(name: &str) -> coarsen::ir::Program {
    let src = std::fs::read_to_string(corpus_files::corpus_file(&kernels_dir(), name)).unwrap();
    coarsen::parse_program(&format!("{name}.cl"), &src, &Default::default()).unwrap()
}

/// The names of every corpus kernel, sorted.
pub fn corpus_names() -> Vec<String> {
    corpus_files::corpus_files(&kernels_dir())
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect()
}
