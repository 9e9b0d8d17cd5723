//! Text is for people and files, never the interface between
//! stages. isl text is parsed only inside the isl wrapper
//! (`access-analysis/src/isl.rs` and its builder `isl/build.rs`) and the range-file reader (`ranges-format`);
//! the Ehrhart engines' edges are the other places: their input
//! (`counting/src/isl_input.rs`, for PolyLib) and barvinok's
//! output, pieces of text from its child process read into range-file
//! expressions (`counting/src/barvinok.rs`). This
//! test lists every product source file that calls a text parser of isl
//! syntax and fails on any other.

use clpart_tests::workspace_root;
use std::path::Path;

/// Calls that turn isl-syntax text into values.
const PARSERS: &[&str] = &["PwExpr::parse(", "Condition::parse(", "read_from_str("];

/// Where they may appear (paths relative to the workspace root).
const ALLOWED: &[&str] = &[
    "access-analysis/src/isl.rs",
    // the wrapper's builder: what only text can say, and, in debug builds,
    // each built object compared with its text
    "access-analysis/src/isl/build.rs",
    "ranges-format/src/file.rs",
    "ranges-format/src/validate.rs",
    "ranges-format/src/expr.rs",
    // the human report reads the range file's expressions,
    // and its bounds' forms (min, max or cases) from them
    "partitioner/src/report.rs",
    "partitioner/src/report/bound.rs",
    "counting/src/isl_input.rs",
    "counting/src/barvinok.rs",
];

fn visit(dir: &Path, root: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            // Product code only: tests, benches, examples and fuzz targets may parse.
            let name = p.file_name().unwrap().to_string_lossy();
            if ![
                "target", "tests", "benches", "examples", "fuzz", ".git", "kernels",
            ]
            .contains(&name.as_ref())
            {
                visit(&p, root, out);
            }
        } else if rel.ends_with(".rs") {
            let text = std::fs::read_to_string(&p).unwrap();
            for (i, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                if PARSERS.iter().any(|c| code.contains(c)) && !ALLOWED.contains(&rel.as_str()) {
                    out.push(format!("{rel}:{}: {}", i + 1, line.trim()));
                }
            }
        }
    }
}

#[test]
fn isl_text_is_parsed_only_by_the_isl_wrapper_and_the_range_file_reader() {
    let root = workspace_root();
    let mut found = Vec::new();
    visit(&root, &root, &mut found);
    assert!(
        found.is_empty(),
        "isl text parsed outside the isl wrapper and the range-file reader:\n{}",
        found.join("\n")
    );
}
