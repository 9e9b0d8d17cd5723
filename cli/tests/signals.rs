//! Signals: `clpart exec` passes SIGINT, SIGTERM, SIGHUP and SIGQUIT on to
//! its program and exits as the program did, never leaving it running;
//! `clpart run` interrupted ends with 128 + the signal as a normal exit,
//! with no output and no temporary left.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The layer cargo built for this test run (beside the test binary).
fn layer() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().join("libclpart_layer.so")
}

fn wait_at_most(child: &mut Child, secs: u64) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if start.elapsed() > Duration::from_secs(secs) {
            child.kill().unwrap();
            panic!("clpart still runs {secs} s after the signal");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn kill(pid: u32, sig: i32) {
    // SAFETY: kill has no memory preconditions.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, sig) }, 0);
}

/// The first child of process `pid`, once it has one.
fn child_of(pid: u32) -> u32 {
    let path = format!("/proc/{pid}/task/{pid}/children");
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if let Some(c) = text.split_whitespace().next() {
            return c.parse().unwrap();
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "clpart exec started no program"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn exec(program: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_clpart"))
        .arg("exec")
        .arg("--")
        .args(program)
        .env("CLPART_LAYER", layer())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn exec_passes_each_ending_signal_to_its_program_and_exits_as_it_did() {
    use libc::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    for sig in [SIGTERM, SIGINT, SIGHUP, SIGQUIT] {
        let mut clpart = exec(&["sleep", "30"]);
        let program = child_of(clpart.id());
        kill(clpart.id(), sig);
        let status = wait_at_most(&mut clpart, 20);
        assert_eq!(status.code(), Some(128 + sig), "signal {sig}: {status:?}");
        assert!(
            !Path::new(&format!("/proc/{program}")).exists(),
            "signal {sig}: the program {program} still exists"
        );
    }
}

#[test]
fn exec_exits_with_the_status_its_program_chose_on_a_signal() {
    // the program ends on SIGTERM with a status of its own
    let mut clpart = exec(&["sh", "-c", "trap 'exit 7' TERM; sleep 5 & wait"]);
    let program = child_of(clpart.id());
    // the trap is set once the shell has started its sleep
    let start = Instant::now();
    while std::fs::read_to_string(format!("/proc/{program}/task/{program}/children"))
        .unwrap_or_default()
        .trim()
        .is_empty()
    {
        assert!(start.elapsed() < Duration::from_secs(20));
        std::thread::sleep(Duration::from_millis(10));
    }
    kill(clpart.id(), libc::SIGTERM);
    let status = wait_at_most(&mut clpart, 20);
    assert_eq!(status.code(), Some(7), "{status:?}");
}

/// A kernel that spins long enough (tens of seconds on PoCL) that every
/// signal below reaches it running.
const SPIN: &str = "__kernel void spin(__global float *a, int n)
{
    int i = get_global_id(0);
    float x = a[i];
    for (int k = 0; k < n; k++)
        x = x * 0.999f + 0.001f;
    a[i] = x;
}
";

#[test]
fn an_interrupted_verified_run_exits_130_and_leaves_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let kernel = dir.path().join("spin.cl");
    std::fs::write(&kernel, SPIN).unwrap();
    let outs = dir.path().join("outs");
    std::fs::create_dir(&outs).unwrap();
    let out = format!("a={}", outs.join("a.npy").display());
    // the signal lands in the analysis, the build, the split launch or the
    // unsplit one
    for delay_ms in [100, 400, 900, 1500, 2500] {
        let mut clpart = Command::new(env!("CARGO_BIN_EXE_clpart"))
            .args(["run", kernel.to_str().unwrap()])
            .args(["--global", "16384", "--local", "64"])
            .args(["--arg", "a=rand:16384", "--arg", "n=400000"])
            .args(["--verify", "--out", &out])
            .env("POCL_DEVICES", "pthread basic")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        kill(clpart.id(), libc::SIGINT);
        let status = wait_at_most(&mut clpart, 30);
        // a normal exit: not killed by SIGINT, nor crashed
        assert_eq!(status.code(), Some(130), "after {delay_ms} ms: {status:?}");
        let left: Vec<_> = std::fs::read_dir(&outs)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "after {delay_ms} ms: left {left:?}");
    }
}
