//! Issue 17: golden human reports of the corpus
//! (`kernels/golden/<kernel>.report.txt`), made by
//! `partitioner::report::human` from the golden range files
//! (`kernels/golden/<kernel>.ranges.ron`, themselves checked against the
//! analysis by `tests/tests/ranges_golden.rs`): text in, text out, with no
//! analysis and no count that depends on the machine's load. Re-blessed
//! with `CLPART_BLESS=1`; a mismatch prints a diff and the bless hint.

use clpart_tests::{check_golden, corpus, workspace_root};
use ranges_format::RangeFile;

#[test]
fn human_reports_match_golden_files() {
    let mut failures = Vec::new();
    let mut n = 0;
    for k in corpus() {
        let ranges = workspace_root().join(format!("kernels/golden/{}.ranges.ron", k.name));
        let rf = RangeFile::read(&ranges).unwrap_or_else(|e| panic!("{}: {e}", ranges.display()));
        let text: String = rf.kernels.iter().map(partitioner::report::human).collect();
        if let Err(e) = check_golden(&format!("kernels/golden/{}.report.txt", k.name), &text) {
            failures.push(e);
        }
        n += 1;
    }
    assert!(n > 20, "the corpus");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The report speaks in named quantities, with a legend, per dimension for
/// delinearized arrays, counts with their domains, refusals with locations.
#[test]
fn reports_name_their_quantities() {
    let read = |name: &str| {
        let rf =
            RangeFile::read(workspace_root().join(format!("kernels/golden/{name}.ranges.ron")))
                .unwrap();
        partitioner::report::human(&rf.kernels[0])
    };
    let m = read("matmul");
    for needle in [
        "legend:",
        "sx_lo ",
        "width ",
        "kernel argument",
        "c[go1 + sx_lo .. go1 + sx_hi - 1][go0 .. gs0 + go0 - 1]",
        "elements, slice: ",
        "   if ",
        "writes: disjoint across slices",
    ] {
        assert!(m.contains(needle), "'{needle}' missing from:\n{m}");
    }
    let s = read("scatter");
    assert!(
        s.contains("not splittable")
            && s.contains("refused: ")
            && s.contains("(kernels/scatter.cl:11:5)"),
        "{s}"
    );
}
