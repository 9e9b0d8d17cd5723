//! A long-running program under `clpart exec` stays within a small
//! factor of its plain run's memory, split or not, and a kernel that does
//! not split moves nothing: a stream compaction of 300 rounds over a
//! million elements, whose kernel takes its output slots from an atomic
//! counter, runs on the application's device, its buffers left where they
//! are.

mod host_apps;

use host_apps::{compile, layer, repo};
use std::process::Command;

/// Runs `c` to its end: its stdout and the peak resident memory (KiB) of
/// the largest process it waited for (`clpart exec` waits for the
/// program, so its figure covers both).
// waited for with wait4, which also gives its resource usage
#[allow(clippy::zombie_processes)]
fn run_measured(c: &mut Command) -> (String, i64) {
    use std::io::Read;
    let mut child = c.stdout(std::process::Stdio::piped()).spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; `pid` is this test's child,
    // not waited for yet (`Child::wait` is never called).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "exit status {status}: {stdout}"
    );
    (stdout, usage.ru_maxrss)
}

/// A program's plain run and its run under `clpart exec` at 50/50 (waiting
/// for its analyses): the two outputs' result lines, their peak memory
/// (KiB) and the report.
struct Measured {
    plain_result: String,
    layered_result: String,
    plain_kib: i64,
    layered_kib: i64,
    report: serde_json::Value,
}

fn measured(app: &str, args: &[&str]) -> Measured {
    let tmp = tempfile::tempdir().unwrap();
    let exe = compile(app, tmp.path());
    let dir = repo().join("tests/apps").join(app);

    let (plain_out, plain_kib) = run_measured(
        Command::new(&exe)
            .args(args)
            .current_dir(&dir)
            .env("POCL_DEVICES", "pthread basic")
            .env_remove("OPENCL_LAYERS"),
    );
    assert!(plain_out.contains(": 0 mismatches"), "{plain_out}");

    let report = tmp.path().join("r.json");
    let (layered_out, layered_kib) = run_measured(
        Command::new(env!("CARGO_BIN_EXE_clpart"))
            .args([
                "exec",
                "--wait-for-analysis",
                "--split",
                "0:0.5,1:0.5",
                "--report",
            ])
            .arg(&report)
            .arg("--")
            .arg(&exe)
            .args(args)
            .current_dir(&dir)
            .env("POCL_DEVICES", "pthread basic")
            .env("CLPART_CACHE_DIR", tmp.path().join("cache"))
            .env("CLPART_LAYER", layer())
            .env_remove("OPENCL_LAYERS"),
    );
    // the result (the programs also print their device section's time)
    let result = |out: &str| {
        out.lines()
            .filter(|l| l.contains("mismatches"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    Measured {
        plain_result: result(&plain_out),
        layered_result: result(&layered_out),
        plain_kib,
        layered_kib,
        report: serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap(),
    }
}

impl Measured {
    /// clpart's own process adds libclang, isl and its devices: a
    /// constant, not a share of the program's buffers nor of its launches.
    fn assert_near_plain_memory(&self) {
        assert!(
            self.layered_kib <= 2 * self.plain_kib + 256 * 1024,
            "peak memory {} KiB under clpart against {} KiB plain",
            self.layered_kib,
            self.plain_kib
        );
    }
}

#[test]
fn a_long_program_under_clpart_stays_near_its_plain_memory_and_moves_nothing_unsplit() {
    let m = measured("compact", &["1048576", "300"]);
    assert_eq!(m.layered_result, m.plain_result);
    let r = &m.report;
    let k = &r["kernels"][0];
    assert_eq!(k["launches"], 300, "{k}");
    assert_eq!(k["split_launches"], 0, "{k}");
    assert!(
        k["reason"]
            .as_str()
            .is_some_and(|w| w.contains("its returned value is used")),
        "{k}"
    );
    assert_eq!(r["bytes_total"], 0, "{r}");
    assert_eq!(r["bytes_app_sync"], 0, "{r}");
    m.assert_near_plain_memory();
}

/// A wavefront of 300 launches over a 1024² score matrix, every access
/// through a subscript macro: split at every launch (the guard checks the
/// macro's expansions), near its plain memory.
#[test]
fn a_long_wavefront_through_a_subscript_macro_splits_near_its_plain_memory() {
    let m = measured("wavefront", &["1024", "300"]);
    assert_eq!(m.layered_result, m.plain_result);
    let k = &m.report["kernels"][0];
    assert_eq!(k["launches"], 300, "{k}");
    assert_eq!(k["split_launches"], 300, "{k}");
    m.assert_near_plain_memory();
}

/// Every launch split, 500 of them over 4 MiB grids: what clpart's devices
/// hold per launch (subkernel arguments, staging, the guard's flags) is
/// released or reused, not kept per launch.
#[test]
fn a_long_split_program_under_clpart_stays_near_its_plain_memory() {
    let m = measured("jacobi2d", &["1024", "500"]);
    assert_eq!(m.layered_result, m.plain_result);
    let k = &m.report["kernels"][0];
    assert_eq!(k["launches"], 500, "{k}");
    assert_eq!(k["split_launches"], 500, "{k}");
    m.assert_near_plain_memory();
}
