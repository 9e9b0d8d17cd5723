//! Golden range files for the corpus (`kernels/golden/<kernel>.ranges.ron`),
//! from the parametric analysis (no launch values), re-blessed with
//! `CLPART_BLESS=1`; every file also loads back equal.
//!
//! The goldens hold barvinok's counts. Without barvinok's libraries (and
//! without `CLPART_REQUIRE_BARVINOK=1`), counts come from PolyLib: the files
//! are then compared with every count and every note about counts left out.

use clpart_tests::{blessing, check_golden, corpus, workspace_root};
use ranges_format::{KernelRanges, RangeFile};

/// `k` without its counts and the notes about them.
fn without_counts(mut k: KernelRanges) -> KernelRanges {
    for a in &mut k.arrays {
        a.count_total = None;
        a.count_slice = None;
        if let Some(w) = &mut a.write {
            w.written_count = None;
        }
    }
    k.diagnostics.retain(|d| !d.contains("no count of") && !d.starts_with("counts from polylib"));
    k
}

#[test]
fn range_files_match_golden_files() {
    let barvinok = partitioner::ehrhart::barvinok_available();
    if let Err(why) = &barvinok {
        let required = std::env::var("CLPART_REQUIRE_BARVINOK").is_ok_and(|v| v == "1");
        assert!(!required, "barvinok required (CLPART_REQUIRE_BARVINOK=1): {why}");
        assert!(!blessing(), "goldens hold barvinok's counts: bless with barvinok ({why})");
        eprintln!("barvinok unavailable ({why}): comparing without counts");
    }
    let mut failures = Vec::new();
    for k in corpus() {
        let file = format!("kernels/{}.cl", k.name);
        let rf = session::Session::from_source(&file, &k.source, &k.build)
            .and_then(|s| s.analyze(Some(&k.name), &Default::default()))
            .unwrap_or_else(|e| panic!("{}: {e}", k.name));
        let text = rf.to_ron_string().unwrap();
        assert_eq!(RangeFile::from_ron_str(&text).unwrap(), rf, "{}: range file round trip", k.name);
        let rel = format!("kernels/golden/{}.ranges.ron", k.name);
        if barvinok.is_ok() {
            if let Err(e) = check_golden(&rel, &text) {
                failures.push(e);
            }
            continue;
        }
        let golden = std::fs::read_to_string(workspace_root().join(&rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let golden = RangeFile::from_ron_str(&golden).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let strip = |f: &RangeFile| f.kernels.iter().cloned().map(without_counts).collect::<Vec<_>>();
        if strip(&golden) != strip(&rf) {
            failures.push(format!("{rel}: differs from the golden file other than in counts"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
