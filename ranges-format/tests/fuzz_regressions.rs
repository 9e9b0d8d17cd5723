//! Replays every input in `fuzz/regressions/<target>/` (crashes the fuzz
//! targets of `fuzz/` once found, each fixed at its root) through the same
//! checks as the target, in the normal test suite.

use std::path::Path;

use ranges_format::{Condition, PwExpr, RangeFile};

fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/regressions")
        .join(target);
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.unwrap().path();
        if p.is_file() {
            out.push((p.display().to_string(), std::fs::read(&p).unwrap()));
        }
    }
    out
}

/// As `fuzz/fuzz_targets/range_file.rs`.
fn check_range_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(f) = RangeFile::from_ron_str_unvalidated(text) {
        let _ = f.validate();
    }
    let Ok(f) = RangeFile::from_ron_str(text) else {
        return;
    };
    let again = f.to_ron_string().unwrap();
    assert_eq!(RangeFile::from_ron_str(&again).unwrap(), f);
    for k in &f.kernels {
        let names = k.param_names();
        let values: Vec<i64> = (0..names.len() as i64).map(|i| i * 37 - 5).collect();
        for a in &k.arrays {
            for r in [&a.total, &a.slice, &a.read_slice, &a.write_slice]
                .into_iter()
                .flatten()
            {
                let _ = r.bind(&names).unwrap().eval(&values);
            }
        }
    }
}

/// As `fuzz/fuzz_targets/expr.rs`.
fn check_expr(data: &[u8]) {
    let n_vals = (data.first().copied().unwrap_or(0) % 5) as usize;
    let data = data.get(1..).unwrap_or(&[]);
    let split = (n_vals * 8).min(data.len());
    let values: Vec<i64> = data[..split]
        .chunks(8)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            i64::from_le_bytes(b)
        })
        .collect();
    let Ok(text) = std::str::from_utf8(&data[split..]) else {
        return;
    };
    if let Ok(e) = PwExpr::parse(text) {
        let mut names: Vec<&str> = e.params().iter().map(String::as_str).collect();
        names.push("zz_extra");
        let _ = e.bind(&names).unwrap().eval(&values);
    }
    if let Ok(c) = Condition::parse(text) {
        let names: Vec<&str> = c.params().iter().map(String::as_str).collect();
        let _ = c.bind(&names).unwrap().eval(&values);
    }
}

#[test]
fn range_file_regressions_and_seeds() {
    for (name, data) in inputs("range_file") {
        let r = std::panic::catch_unwind(|| check_range_file(&data));
        assert!(r.is_ok(), "{name}");
    }
}

#[test]
fn expr_regressions() {
    for (name, data) in inputs("expr") {
        let r = std::panic::catch_unwind(|| check_expr(&data));
        assert!(r.is_ok(), "{name}");
    }
}
