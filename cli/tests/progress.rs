//! Progress only on a terminal. With stderr a pipe, a run that
//! lasts well over the progress delay (half a second) writes nothing but
//! its own lines: no spinner, no carriage return, no escape sequence.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

#[test]
fn no_progress_when_stderr_is_not_a_terminal() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let t = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_clpart"))
        .args(["analyze", "kernels/stencils/stencil2d.cl"])
        .current_dir(root)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !err.contains('\r') && !err.contains('\u{1b}') && !err.contains("analyzing"),
        "progress on a pipe: {err:?}"
    );
    assert!(!String::from_utf8_lossy(&o.stdout).contains('\u{1b}'));
    // the work lasted long enough that a terminal would have shown progress
    // (not a timing assertion on clpart: a precondition of this test)
    if t.elapsed() < std::time::Duration::from_millis(600) {
        eprintln!(
            "analysis took {:?}: shorter than the progress delay, the check above proves less",
            t.elapsed()
        );
    }
}

/// On a terminal (through `script`, when it is installed), the spinner
/// appears on stderr.
#[test]
fn progress_on_a_terminal() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("script (util-linux) not found: terminal check skipped");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("tty.log");
    let cmd = format!(
        "{} analyze kernels/stencils/stencil2d.cl > /dev/null",
        env!("CARGO_BIN_EXE_clpart")
    );
    let o = Command::new("script")
        .args(["-qec", &cmd])
        .arg(&log)
        .current_dir(root)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("analyzing kernels/stencils/stencil2d.cl"),
        "no progress on a terminal: {text:?}"
    );
}
