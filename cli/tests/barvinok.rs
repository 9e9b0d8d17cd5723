//! In one `clpart analyze`, ranges from isl (isl-rs) and counts
//! from barvinok (its own isl, loaded `RTLD_LOCAL | RTLD_DEEPBIND` in the
//! counting sandbox); `bytes_exact` of a 2-D stencil, which PolyLib does not
//! count; without barvinok, counts from PolyLib and the reason in the report.
//!
//! barvinok comes from `scripts/setup.sh`; when it is absent the barvinok
//! checks are skipped unless `CLPART_REQUIRE_BARVINOK=1`.

use clpart_tests::workspace_root as root;
use std::process::{Command, Output};

fn clpart(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_clpart"));
    c.args(args)
        .current_dir(root())
        .env("POCL_DEVICES", "pthread basic");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("clpart runs")
}

const UNAVAILABLE: &str = "counts from polylib (barvinok is unavailable";

/// Whether the report says barvinok was not there (then the test is skipped,
/// unless it is required).
fn barvinok_missing(report: &str) -> bool {
    if !report.contains(UNAVAILABLE) {
        return false;
    }
    let required = std::env::var("CLPART_REQUIRE_BARVINOK").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "barvinok required (CLPART_REQUIRE_BARVINOK=1):\n{report}"
    );
    eprintln!("barvinok not available, skipped");
    true
}

#[test]
fn barvinok_count_and_isl_range_in_one_analyze() {
    let o = clpart(
        &[
            "analyze",
            "-v",
            "kernels/stencils/stencil2d.cl",
            "--at",
            "gs0=64,gs1=32,ls0=16,ls1=8,width=64,height=32",
        ],
        &[],
    );
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    if barvinok_missing(&out) {
        return;
    }
    assert!(out.contains("    slice:         in["), "{out}");
    assert!(out.contains("    elements, slice: "), "{out}");
    assert!(!out.contains("no count of"), "{out}");
    // 16 of 32 rows of a 64-wide grid: the rows themselves plus the next
    // row's interior (62 points) = 16 * 64 + 62.
    let row = out
        .lines()
        .find(|l| l.split_whitespace().take(2).eq(["in", "1"]))
        .expect("table row 'in 1'");
    assert_eq!(row.split_whitespace().nth(5), Some("1086"), "{row}");
}

#[test]
fn split_stencil_run_has_bytes_exact() {
    let o = clpart(
        &[
            "run",
            "kernels/stencils/stencil2d.cl",
            "--global",
            "64,32",
            "--local",
            "16,8",
            "--arg",
            "in=rand:2048:1",
            "--arg",
            "out=zeros:2048",
            "--arg",
            "width=64",
            "--arg",
            "height=32",
            "--split",
            "0:0.5,1:0.5",
            "--verify",
            "--json",
        ],
        &[],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["verified"], true);
    let a = clpart(&["analyze", "kernels/stencils/stencil2d.cl"], &[]);
    if barvinok_missing(&String::from_utf8_lossy(&a.stdout)) {
        return;
    }
    // in: 1086 + 1086 elements read, out: 1024 + 1024 written, 4 bytes each.
    assert_eq!(v["bytes_exact"], (1086 + 1086 + 1024 + 1024) * 4, "{v}");
}

#[test]
fn without_barvinok_counts_come_from_polylib_with_the_reason() {
    let o = clpart(
        &["analyze", "-v", "kernels/basics/vadd.cl"],
        &[("CLPART_BARVINOK_DIR", "/nonexistent/clpart-barvinok")],
    );
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.contains("note: counts from polylib (barvinok is unavailable: no libbarvinok in /nonexistent/clpart-barvinok (run scripts/setup.sh, or set CLPART_BARVINOK_DIR))"),
        "{out}"
    );
    assert!(out.contains("    elements, slice: "), "{out}");
}
