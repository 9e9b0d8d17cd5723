//! Golden tests: the access relations (Display form) of every corpus kernel,
//! compared to `tests/golden/<kernel>.access.txt`. Run with `CLPART_BLESS=1`
//! to rewrite the golden files.

mod common;

use access_analysis::{analyze_kernel, AnalysisOptions};
use common::{corpus_files::corpus_files, kernels_dir};
use std::path::{Path, PathBuf};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// A minimal line diff (expected vs actual) for failure messages.
fn diff(expected: &str, actual: &str) -> String {
    let e: Vec<&str> = expected.lines().collect();
    let a: Vec<&str> = actual.lines().collect();
    let mut out = String::new();
    for i in 0..e.len().max(a.len()) {
        match (e.get(i), a.get(i)) {
            (Some(x), Some(y)) if x == y => {}
            (x, y) => {
                if let Some(x) = x {
                    out.push_str(&format!("-{:4} {x}\n", i + 1));
                }
                if let Some(y) = y {
                    out.push_str(&format!("+{:4} {y}\n", i + 1));
                }
            }
        }
    }
    out
}

#[test]
fn golden_access_relations_of_corpus_kernels() {
    let bless = std::env::var("CLPART_BLESS").is_ok_and(|v| v == "1");
    let files: Vec<PathBuf> = corpus_files(&kernels_dir());
    assert!(files.len() >= 30, "corpus kernels not found");
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let source = std::fs::read_to_string(path).unwrap();
        let program =
            coarsen::parse_program(&name, &source, &coarsen::ParseOptions::default()).unwrap();
        for k in program.kernels() {
            let result = analyze_kernel(&program, &k.name, &AnalysisOptions::default()).unwrap();
            let actual = result.to_string();
            let golden = golden_dir().join(format!("{}.access.txt", k.name));
            if bless {
                std::fs::write(&golden, &actual).unwrap();
                continue;
            }
            let expected = std::fs::read_to_string(&golden).unwrap_or_default();
            if expected != actual {
                failures.push(format!(
                    "{}:\n{}",
                    golden.display(),
                    diff(&expected, &actual)
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "golden mismatch (run with CLPART_BLESS=1 to update):\n{}",
        failures.join("\n")
    );
}
