//! A reader of `clpart`'s standard output that goes away before the output
//! is written (`clpart analyze k.cl | head -1`) ends the command quietly:
//! exit 0, nothing on standard error (it used to panic with exit 101).

use clpart_tests::workspace_root as root;
use std::process::{Command, Stdio};

/// Runs `clpart args` with its standard output a pipe whose read end is
/// closed at once; returns the exit code and standard error.
fn with_closed_stdout(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_clpart"))
        .args(args)
        .current_dir(root())
        .env("POCL_DEVICES", "pthread basic")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("clpart runs");
    // the analysis and the launch take far longer than this
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("clpart ends");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_closed_pipe_ends_analyze_and_run_quietly() {
    let runs: [&[&str]; 3] = [
        &["analyze", "kernels/matmul.cl"],
        &["analyze", "kernels/matmul.cl", "--json"],
        &[
            "run",
            "kernels/vadd.cl",
            "--global",
            "1000",
            "--local",
            "8",
            "--arg",
            "a=rand:1000:3",
            "--arg",
            "b=rand:1000:4",
            "--arg",
            "c=zeros:1000",
            "--json",
        ],
    ];
    for args in runs {
        let (code, stderr) = with_closed_stdout(args);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}
