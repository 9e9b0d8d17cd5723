//! The command line a new user meets: the global flags (`--quiet`,
//! `--verbose`, `--color`) on every subcommand, clap's errors as one
//! `clpart: error:` line, shell completions and the man page, a kernel on
//! standard input, and `--at` names checked before any output.

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

const ESC: &str = "\x1b[";

#[test]
fn completions_for_bash_zsh_and_fish_name_the_subcommands() {
    for shell in ["bash", "zsh", "fish"] {
        let o = clpart(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}: {}", stderr(&o));
        let text = stdout(&o);
        assert!(
            text.contains("analyze") && text.contains("exec"),
            "{shell}: {text}"
        );
    }
    let o = clpart(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("'tcsh'"), "{}", stderr(&o));
}

#[test]
fn the_man_page_is_roff_with_every_subcommand() {
    let o = clpart(&["man"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let page = stdout(&o);
    assert!(page.contains(".TH clpart 1"), "{page}");
    for sub in ["analyze", "run", "steps", "devices", "exec", "completions"] {
        assert!(page.contains(sub), "'{sub}' missing from:\n{page}");
    }
}

/// clap's errors read as clpart's: one line, `clpart: error:`, exit 2.
#[test]
fn usage_errors_are_one_clpart_error_line() {
    let o = clpart(&["analyze", "--frob", "kernels/basics/vadd.cl"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("clpart: error: unexpected argument '--frob' found"),
        "{err}"
    );
    assert!(err.contains("usage: clpart analyze"), "{err}");
    // the message keeps what clap lists on the lines below it
    let o = clpart(&["analyze", "kernels/basics/vadd.cl", "--svg", "v.svg"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(
            "clpart: error: the following required arguments were not provided: --at <NAME=VALUE,...>; usage: "
        ),
        "{err}"
    );
    // a stage's text form has no JSON: --json beside --emit is refused,
    // not ignored
    for stage in ["access", "coarsened", "ranges"] {
        let o = clpart(&[
            "analyze",
            "kernels/basics/vadd.cl",
            "--emit",
            stage,
            "--json",
        ]);
        assert_eq!(o.status.code(), Some(2), "{stage}");
        assert!(o.stdout.is_empty(), "{stage}: {}", stdout(&o));
        assert!(
            stderr(&o).starts_with(
                "clpart: error: the argument '--emit <EMIT>' cannot be used with '--json'"
            ),
            "{stage}: {}",
            stderr(&o)
        );
    }
    // --quiet and --verbose together are a usage error too
    let o = clpart(&["devices", "-q", "-v"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("clpart: error: the argument '--quiet' cannot be used with"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn color_never_writes_no_escape_sequence() {
    for args in [
        &["--color", "never", "analyze", "--frob", "x.cl"][..],
        &["analyze", "kernels/nope.cl", "--color=never"],
        &["--color", "never", "--help"],
        &["--color", "never", "analyze", "kernels/basics/vadd.cl"],
    ] {
        let o = clpart(args);
        assert!(
            !stdout(&o).contains(ESC) && !stderr(&o).contains(ESC),
            "{args:?}: {}{}",
            stdout(&o),
            stderr(&o)
        );
        assert!(!o.stdout.is_empty() || !o.stderr.is_empty(), "{args:?}");
    }
    // what never turns off: always styles the same errors
    for args in [
        &["--color", "always", "analyze", "--frob", "x.cl"][..],
        &["analyze", "kernels/nope.cl", "--color=always"],
    ] {
        let o = clpart(args);
        assert!(stderr(&o).contains(ESC), "{args:?}: {}", stderr(&o));
        assert_eq!(o.status.code(), Some(2));
    }
}

#[test]
fn quiet_silences_notes_on_every_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("vadd.ranges.ron");
    let out = out.to_str().unwrap();
    let o = clpart(&["analyze", "kernels/basics/vadd.cl", "-o", out]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("wrote "), "{}", stderr(&o));
    let o = clpart(&["analyze", "kernels/basics/vadd.cl", "-o", out, "--quiet"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    assert!(stdout(&o).contains("kernel vadd"));
    // a global flag: accepted before the subcommand and by every one
    for args in [
        &["-q", "devices"][..],
        &["devices", "-v"],
        &["completions", "bash", "--quiet"],
    ] {
        let o = clpart(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn analyze_reads_the_kernel_from_standard_input() {
    let source = std::fs::read(root().join("kernels/basics/vadd.cl")).unwrap();
    let o = clpart_with_stdin(&["analyze", "-", "--json"], Some(&source));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["file"], "<stdin>");
    assert_eq!(v["kernels"][0]["name"], "vadd");
    assert_eq!(v["kernels"][0]["splittable"], true);
    // the same report as from the file, but for the file's name
    let piped = clpart_with_stdin(&["analyze", "-", "--no-counts"], Some(&source));
    let file = clpart(&["analyze", "kernels/basics/vadd.cl", "--no-counts"]);
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
        "kernels/atomics/histogram.cl",
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
        "kernels/atomics/histogram.cl",
        "--at",
        "gs0=1024,ls0=64,n=100",
    ]);
    assert!(stdout(&o).contains("[0, 99]"), "{}", stdout(&o));
}
