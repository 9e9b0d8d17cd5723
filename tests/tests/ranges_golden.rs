//! Golden range files for the corpus (`kernels/golden/<kernel>.ranges.ron`),
//! from the parametric analysis (no launch values), re-blessed with
//! `CLPART_BLESS=1`; every file also loads back equal.
//!
//! The goldens hold barvinok's counts. Without barvinok's libraries (and
//! without `CLPART_REQUIRE_BARVINOK=1`), counts come from PolyLib: the files
//! are then compared with every count and every note about counts left out.

use clpart_tests::{blessing, check_golden, corpus, workspace_root};
use ranges_format::{CutShort, KernelRanges, RangeFile};

/// `k` without its counts and the notes about them.
fn without_counts(mut k: KernelRanges) -> KernelRanges {
    for a in &mut k.arrays {
        a.count_total = None;
        a.count_slice = None;
        if let Some(w) = &mut a.write {
            w.written_count = None;
        }
    }
    k.diagnostics
        .retain(|d| !d.contains("no count of") && !d.starts_with("counts from polylib"));
    // whether a count ran out of its time (see below)
    k.cut_short
        .retain(|c| !matches!(c, CutShort::CountTime | CutShort::CountProcess));
    k
}

/// `a` and `b` agree except where a count (or the vertex bounds) is missing
/// on one side and that side says its counting (PolyLib) ran out of time
/// (the notes about such counts and vertices are not compared).
fn same_but_for_timed_out_counts(a: &RangeFile, b: &RangeFile) -> bool {
    let timed_out = |k: &KernelRanges, array: &str| {
        k.diagnostics.iter().any(|d| {
            d.starts_with(&format!("array '{array}': no count of")) && d.contains("ran out of time")
        })
    };
    let vertices_timed_out = |k: &KernelRanges, array: &str| {
        k.diagnostics.iter().any(|d| {
            d.starts_with(&format!("array '{array}': no vertex bounds"))
                && d.contains("ran out of time")
        })
    };
    let strip_notes = |k: &KernelRanges| {
        let mut k = k.clone();
        k.diagnostics
            .retain(|d| !d.contains("no count of") && !d.contains("no vertex bounds"));
        k.cut_short
            .retain(|c| !matches!(c, CutShort::CountTime | CutShort::CountProcess));
        k
    };
    if a.kernels.len() != b.kernels.len() {
        return false;
    }
    let without_counts_or_vertices = |k: &KernelRanges| {
        let mut k = without_counts(k.clone());
        for a in &mut k.arrays {
            a.vertices_slice = None;
        }
        k.diagnostics.retain(|d| !d.contains("no vertex bounds"));
        k
    };
    for (ka, kb) in a.kernels.iter().zip(&b.kernels) {
        if without_counts_or_vertices(ka) != without_counts_or_vertices(kb) {
            return false;
        }
        let (mut ka2, mut kb2) = (strip_notes(ka), strip_notes(kb));
        for (x, y) in ka2.arrays.iter_mut().zip(kb2.arrays.iter_mut()) {
            let (ta, tb) = (timed_out(ka, &x.name), timed_out(kb, &y.name));
            let settle = |p: &mut Option<ranges_format::Count>,
                          q: &mut Option<ranges_format::Count>| {
                if (p.is_none() && ta) || (q.is_none() && tb) {
                    *p = None;
                    *q = None;
                }
            };
            if (x.vertices_slice.is_none() && vertices_timed_out(ka, &x.name))
                || (y.vertices_slice.is_none() && vertices_timed_out(kb, &y.name))
            {
                x.vertices_slice = None;
                y.vertices_slice = None;
            }
            settle(&mut x.count_total, &mut y.count_total);
            settle(&mut x.count_slice, &mut y.count_slice);
            if let (Some(wx), Some(wy)) = (&mut x.write, &mut y.write) {
                settle(&mut wx.written_count, &mut wy.written_count);
            }
        }
        if ka2 != kb2 {
            return false;
        }
    }
    true
}

#[test]
fn range_files_match_golden_files() {
    let barvinok = partitioner::ehrhart::barvinok_available();
    if let Err(why) = &barvinok {
        let required = std::env::var("CLPART_REQUIRE_BARVINOK").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "barvinok required (CLPART_REQUIRE_BARVINOK=1): {why}"
        );
        assert!(
            !blessing(),
            "goldens hold barvinok's counts: bless with barvinok ({why})"
        );
        eprintln!("barvinok unavailable ({why}): comparing without counts");
    }
    let mut failures = Vec::new();
    for k in corpus() {
        let file = k.file();
        let rf = session::Session::from_source(&file, &k.source, &k.build)
            .and_then(|s| s.analyze(Some(&k.name), &Default::default()))
            .unwrap_or_else(|e| panic!("{}: {e}", k.name));
        let text = rf.to_ron_string().unwrap();
        assert_eq!(
            RangeFile::from_ron_str(&text).unwrap(),
            rf,
            "{}: range file round trip",
            k.name
        );
        let rel = format!("kernels/golden/{}.ranges.ron", k.name);
        if barvinok.is_ok() {
            if let Err(e) = check_golden(&rel, &text) {
                // Counting has a wall-clock limit per count: under load a
                // count may run out of time on one side. Everything else must
                // match, and every count both sides have.
                let golden = std::fs::read_to_string(workspace_root().join(&rel))
                    .ok()
                    .and_then(|g| RangeFile::from_ron_str(&g).ok());
                if !golden.is_some_and(|g| same_but_for_timed_out_counts(&g, &rf)) {
                    failures.push(e);
                }
            }
            continue;
        }
        let golden = std::fs::read_to_string(workspace_root().join(&rel))
            .unwrap_or_else(|e| panic!("{rel}: {e}"));
        let golden = RangeFile::from_ron_str(&golden).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let strip = |f: &RangeFile| {
            f.kernels
                .iter()
                .cloned()
                .map(without_counts)
                .collect::<Vec<_>>()
        };
        if strip(&golden) != strip(&rf) {
            failures.push(format!(
                "{rel}: differs from the golden file other than in counts"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The tolerance above forgives only a count that ran out of time (and says
/// so); any other difference, in a count or elsewhere, still fails.
#[test]
fn only_timed_out_counts_are_forgiven() {
    let text =
        std::fs::read_to_string(workspace_root().join("kernels/golden/vadd.ranges.ron")).unwrap();
    let golden = RangeFile::from_ron_str(&text).unwrap();
    assert!(
        golden.kernels[0].arrays[0].count_slice.is_some(),
        "the golden has counts"
    );
    let mut missing = golden.clone();
    missing.kernels[0].arrays[0].count_slice = None;
    assert!(
        !same_but_for_timed_out_counts(&golden, &missing),
        "a count missing without a reason"
    );
    let name = missing.kernels[0].arrays[0].name.clone();
    missing.kernels[0]
        .diagnostics
        .push(format!("array '{name}': no count of the elements a slice touches: counting ran out of time (at most 2 s per count)"));
    assert!(
        same_but_for_timed_out_counts(&golden, &missing),
        "a count that ran out of time"
    );
    let mut other = golden.clone();
    other.kernels[0].arrays[0].count_slice = other.kernels[0].arrays[0].count_total.clone();
    assert!(
        !same_but_for_timed_out_counts(&golden, &other),
        "a different count"
    );
    let with_vertices = golden.kernels[0]
        .arrays
        .iter()
        .position(|a| a.vertices_slice.is_some())
        .expect("the golden has vertices");
    let mut no_vertices = golden.clone();
    no_vertices.kernels[0].arrays[with_vertices].vertices_slice = None;
    assert!(
        !same_but_for_timed_out_counts(&golden, &no_vertices),
        "vertices missing without a reason"
    );
    let vname = no_vertices.kernels[0].arrays[with_vertices].name.clone();
    no_vertices.kernels[0]
        .diagnostics
        .push(format!("array '{vname}': no vertex bounds of a slice's footprint: polylib ran out of time (at most 500 ms)"));
    assert!(
        same_but_for_timed_out_counts(&golden, &no_vertices),
        "vertices that ran out of time, on the golden's side or the other"
    );
    assert!(
        same_but_for_timed_out_counts(&no_vertices, &golden),
        "vertices that ran out of time, on the other side"
    );
    let mut other_vertices = golden.clone();
    other_vertices.kernels[0].arrays[with_vertices]
        .vertices_slice
        .as_mut()
        .unwrap()
        .pop();
    assert!(
        !same_but_for_timed_out_counts(&golden, &other_vertices),
        "different vertices"
    );
    let mut elsewhere = missing.clone();
    elsewhere.kernels[0].splittable = !elsewhere.kernels[0].splittable;
    assert!(
        !same_but_for_timed_out_counts(&golden, &elsewhere),
        "a difference elsewhere"
    );
}
