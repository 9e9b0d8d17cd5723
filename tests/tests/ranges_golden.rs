//! Golden range files for the corpus (`kernels/golden/<kernel>.ranges.ron`),
//! from the parametric analysis (no launch values), re-blessed with
//! `CLPART_BLESS=1`; every file also loads back equal.

use clpart_tests::{check_golden, corpus};
use ranges_format::RangeFile;

#[test]
fn range_files_match_golden_files() {
    let mut failures = Vec::new();
    for k in corpus() {
        let file = format!("kernels/{}.cl", k.name);
        let rf = session::Session::from_source(&file, &k.source, &k.build)
            .and_then(|s| s.analyze(Some(&k.name), &Default::default()))
            .unwrap_or_else(|e| panic!("{}: {e}", k.name));
        let text = rf.to_ron_string().unwrap();
        assert_eq!(RangeFile::from_ron_str(&text).unwrap(), rf, "{}: range file round trip", k.name);
        if let Err(e) = check_golden(&format!("kernels/golden/{}.ranges.ron", k.name), &text) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
