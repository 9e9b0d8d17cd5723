//! The command line a new user meets: a kernel on standard input, and
//! `--at` names checked before any output.

use clpart_tests::{stderr, workspace_root as root};
use std::io::Write;
use std::process::{Command, Output, Stdio};

fn clpart(args: &[&str]) -> Output {
    clpart_with_stdin(args, None)
}

fn clpart_with_stdin(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_clpart"));
    c.args(args)
        .current_dir(root())
        .env("POCL_DEVICES", "pthread basic")
        .env_remove("NO_COLOR")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("clpart runs");
    if let Some(bytes) = stdin {
        child.stdin.take().unwrap().write_all(bytes).unwrap();
    }
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn analyze_reads_the_kernel_from_standard_input() {
    let source = std::fs::read(root().join("kernels/vadd.cl")).unwrap();
    let o = clpart_with_stdin(&["analyze", "-", "--json"], Some(&source));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["file"], "<stdin>");
    assert_eq!(v["kernels"][0]["name"], "vadd");
    assert_eq!(v["kernels"][0]["splittable"], true);
    // the same report as from the file, but for the file's name
    let piped = clpart_with_stdin(&["analyze", "-", "--no-counts"], Some(&source));
    let file = clpart(&["analyze", "kernels/vadd.cl", "--no-counts"]);
    assert_eq!(stdout(&piped), stdout(&file));
    // nothing on standard input is an empty file
    let o = clpart_with_stdin(&["analyze", "-"], Some(b""));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("empty"), "{}", stderr(&o));
}

#[test]
fn an_unknown_at_name_is_refused_before_any_output() {
    let o = clpart(&[
        "analyze",
        "kernels/histogram.cl",
        "--at",
        "gs0=1024,ls0=64,nn=100",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "{}", stdout(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--at: unknown name 'nn'") && err.contains("n, "),
        "{err}"
    );
    // the known names still give the table
    let o = clpart(&[
        "analyze",
        "kernels/histogram.cl",
        "--at",
        "gs0=1024,ls0=64,n=100",
    ]);
    assert!(stdout(&o).contains("[0, 99]"), "{}", stdout(&o));
}
