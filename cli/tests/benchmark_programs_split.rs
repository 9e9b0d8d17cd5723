//! The benchmark's host programs of `tests/apps/` (PolyBench-style: many
//! launches with a changing scalar, NDRanges that shrink per step, a
//! driver-chosen local size) give under `clpart exec` split 50/50 over two
//! PoCL devices what they give plain: each exits 0, its own check finds no
//! mismatch, and its check lines are the same both ways. Small sizes; the
//! benchmark (`clpart-bench --only apps`) runs them at full size.

mod host_apps;

use host_apps::{compile, layer, repo};
use std::process::{Command, Output};

/// Runs `program` in `tests/apps/<app>` (it reads `kernel.cl` from there)
/// on "pthread basic", killed after two minutes (exit code 124: a hang).
fn run(app: &str, program: &[&std::ffi::OsStr]) -> Output {
    Command::new("timeout")
        .arg("120")
        .args(program)
        .current_dir(repo().join("tests/apps").join(app))
        .env("POCL_DEVICES", "pthread basic")
        .env("CLPART_LAYER", layer())
        .env_remove("OPENCL_LAYERS")
        .output()
        .unwrap()
}

/// The program's own check lines (`...: N mismatches`), asserting the run
/// exited 0 with no mismatch; `what` names the run.
fn check_lines(out: &Output, what: &str) -> Vec<String> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(": 0 mismatches"),
        "{what}: {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .filter(|l| l.contains("mismatches"))
        .map(String::from)
        .collect()
}

fn split_evenly_matches_plain(app: &str, args: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let exe = compile(app, tmp.path());
    let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    let mut plain = vec![exe.as_os_str()];
    plain.extend(&args);
    let want = check_lines(&run(app, &plain), &format!("{app} plain"));
    let clpart = env!("CARGO_BIN_EXE_clpart");
    let mut under = [
        "exec",
        "--wait-for-analysis",
        "--split",
        "0:0.5,1:0.5",
        "--",
    ]
    .map(std::ffi::OsStr::new)
    .to_vec();
    under.insert(0, std::ffi::OsStr::new(clpart));
    under.push(exe.as_os_str());
    under.extend(&args);
    let got = check_lines(&run(app, &under), &format!("{app} under clpart exec"));
    assert_eq!(got, want, "{app}: check lines plain and under clpart exec");
}

#[test]
fn lu_with_an_ndrange_shrinking_per_step_splits_as_it_runs_plain() {
    split_evenly_matches_plain("lu_shrinking", &["8"]);
}

#[test]
fn gramschmidt_with_three_kernels_per_column_splits_as_it_runs_plain() {
    split_evenly_matches_plain("gramschmidt", &["24", "20"]);
}

#[test]
fn adi_with_six_kernels_per_time_step_splits_as_it_runs_plain() {
    split_evenly_matches_plain("adi", &["40", "3"]);
}

#[test]
fn conv3d_launched_per_plane_splits_as_it_runs_plain() {
    split_evenly_matches_plain("conv3d", &["14"]);
}

#[test]
fn jacobi1d_with_many_tiny_launches_splits_as_it_runs_plain() {
    split_evenly_matches_plain("jacobi1d", &["600", "20"]);
}

#[test]
fn three_chained_matrix_products_split_as_they_run_plain() {
    split_evenly_matches_plain("3mm", &["40", "36", "32", "28", "24"]);
}

#[test]
fn syrk_splits_as_it_runs_plain() {
    split_evenly_matches_plain("syrk", &["40", "36"]);
}
