//! A command's output files are written all or none
//! (`ranges_format::output::Outputs`): every target is reserved before
//! anything runs, so one that cannot be written stops the command with one
//! line naming it and leaves every other target as it was, with no
//! temporary behind.

use clpart_tests::{assert_input_error, stderr, workspace_root as root};
use std::path::Path;
use std::process::{Command, Output};

fn clpart(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clpart"))
        .args(args)
        .current_dir(root())
        .env("POCL_DEVICES", "pthread basic")
        .output()
        .expect("clpart runs")
}

fn run_vadd(extra: &[&str]) -> Output {
    let mut a = vec!["run", "kernels/basics/vadd.cl"];
    a.extend_from_slice(clpart_tests::VADD_RUN_ARGS);
    a.extend_from_slice(extra);
    clpart(&a)
}

/// The names in `dir`, sorted (temporaries included: they start with '.').
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn one_unwritable_out_leaves_every_other_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("c.npy");
    let a = dir.path().join("missing").join("a.npy");
    let out_c = format!("c={}", c.display());
    let out_a = format!("a={}", a.display());
    // the unwritable target after a writable one, and before it
    for order in [[&out_c, &out_a], [&out_a, &out_c]] {
        let o = run_vadd(&["--out", order[0], "--out", order[1]]);
        assert_input_error(&o, &format!("cannot write '{}'", a.display()));
        assert_eq!(names(dir.path()), Vec::<String>::new(), "{}", stderr(&o));
    }
    // an existing target keeps its bytes
    std::fs::write(&c, b"before").unwrap();
    let o = run_vadd(&["--out", &out_c, "--out", &out_a]);
    assert_input_error(&o, &a.display().to_string());
    assert_eq!(std::fs::read(&c).unwrap(), b"before");
    assert_eq!(names(dir.path()), ["c.npy"]);
}

#[test]
fn an_unwritable_svg_stops_run_before_it_writes_any_out() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("c.npy");
    let svg = dir.path().join("missing").join("v.svg");
    let o = run_vadd(&[
        "--out",
        &format!("c={}", c.display()),
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert_input_error(&o, &format!("--svg: cannot write '{}'", svg.display()));
    assert_eq!(names(dir.path()), Vec::<String>::new());
}

#[test]
fn an_out_refused_after_the_reservations_leaves_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("c.npy");
    let o = run_vadd(&[
        "--out",
        &format!("c={}", c.display()),
        "--out",
        &format!("nope={}", dir.path().join("n.npy").display()),
    ]);
    assert_input_error(&o, "'nope' is not a buffer argument");
    assert_eq!(names(dir.path()), Vec::<String>::new());
}

#[test]
fn every_out_is_written_when_all_can_be() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_vadd(&[
        "--out",
        &format!("c={}", dir.path().join("c.npy").display()),
        "--out",
        &format!("a={}", dir.path().join("a.npy").display()),
        "--svg",
        dir.path().join("v.svg").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(names(dir.path()), ["a.npy", "c.npy", "v.svg"]);
}

#[test]
fn analyze_writes_its_range_file_and_picture_all_or_none() {
    let dir = tempfile::tempdir().unwrap();
    let ranges = dir.path().join("vadd.ranges.ron");
    let svg = dir.path().join("missing").join("v.svg");
    let o = clpart(&[
        "analyze",
        "kernels/basics/vadd.cl",
        "-o",
        ranges.to_str().unwrap(),
        "--at",
        "gs0=1024,ls0=64",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert_input_error(&o, &format!("cannot write '{}'", svg.display()));
    assert_eq!(names(dir.path()), Vec::<String>::new());
}

#[test]
fn steps_writes_its_outs_all_or_none() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.npy");
    let b = dir.path().join("missing").join("b.npy");
    let o = clpart(&[
        "steps",
        "kernels/iterative/jacobi1d.ron",
        "--out",
        &format!("A={}", a.display()),
        "--out",
        &format!("B={}", b.display()),
    ]);
    assert_input_error(&o, &format!("cannot write '{}'", b.display()));
    assert_eq!(names(dir.path()), Vec::<String>::new());
}
