//! Valid kernels with arguments that used to corrupt memory
//! (a `__local` argument smaller than the work-group indexes, a host buffer
//! smaller than an unbounded array's accesses, a `__local` size beyond the
//! device, a host allocation that cannot be had) give one-line errors with
//! exit 2, and run under valgrind memcheck with zero errors (PoCL's own
//! noise suppressed by `capi/tests/valgrind.supp`).

use clpart_tests::workspace_root as root;
use std::path::Path;
use std::process::Command;

const SCRATCH: &str =
    "__kernel void scratch(__global const float *in, __global float *out, __local float *tmp) {
    int l = get_local_id(0);
    tmp[l] = in[get_global_id(0)] * 2.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tmp[get_local_size(0) - 1 - l];
}
";

const WALK: &str = "__kernel void walk(__global const int *idx, __global int *a) {
    int i = get_global_id(0);
    a[idx[i]] = i;
}
";

/// The cases: kernel source, `clpart run` arguments, expected error text.
fn cases(dir: &Path) -> Vec<(&'static str, Vec<String>, &'static str, bool)> {
    let scratch = dir.join("scratch.cl");
    let walk = dir.join("walk.cl");
    std::fs::write(&scratch, SCRATCH).unwrap();
    std::fs::write(&walk, WALK).unwrap();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let sc = scratch.display().to_string();
    let wk = walk.display().to_string();
    vec![
        (
            "local_too_small",
            s(&[
                "run",
                &sc,
                "--global",
                "256",
                "--local",
                "64",
                "--arg",
                "in=rand:256",
                "--arg",
                "out=zeros:256",
                "--arg",
                "tmp=local:1",
                "--split",
                "0:0.5,1:0.5",
            ]),
            "accesses __local argument 'tmp' outside its 1 elements",
            true,
        ),
        (
            "whole_array_too_small",
            s(&[
                "run",
                &wk,
                "--global",
                "64",
                "--local",
                "16",
                "--arg",
                "idx=seq:64",
                "--arg",
                "a=zeros:10",
            ]),
            "accesses array 'a' outside its 10 elements",
            true,
        ),
        (
            "local_beyond_device",
            s(&[
                "run",
                &sc,
                "--global",
                "256",
                "--local",
                "64",
                "--arg",
                "in=rand:256",
                "--arg",
                "out=zeros:256",
                "--arg",
                "tmp=local:268435456",
            ]),
            "bytes of local memory of device",
            false,
        ),
        (
            "host_allocation_fails",
            s(&[
                "run",
                &wk,
                "--global",
                "64",
                "--local",
                "16",
                "--arg",
                "idx=seq:64",
                "--arg",
                "a=zeros:12500000000",
            ]),
            "cannot allocate 50000000000 bytes of host memory",
            false,
        ),
    ]
}

#[test]
fn memory_cases_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    for (name, args, needle, _) in cases(dir.path()) {
        let o = Command::new(env!("CARGO_BIN_EXE_clpart"))
            .args(&args)
            .current_dir(root())
            .env("POCL_DEVICES", "pthread basic")
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {e}");
        let errors: Vec<&str> = e
            .lines()
            .filter(|l| l.starts_with("clpart: error:"))
            .collect();
        assert_eq!(errors.len(), 1, "{name}: {e}");
        assert!(
            errors[0].contains(needle),
            "{name}: expected '{needle}' in {e}"
        );
        assert!(!e.contains("panicked"), "{name}: {e}");
    }
}

#[test]
fn memory_cases_pass_memcheck() {
    let valgrind = Command::new("valgrind").arg("--version").output();
    assert!(
        valgrind.is_ok_and(|o| o.status.success()),
        "valgrind is not installed (scripts/setup.sh installs it)"
    );
    let dir = tempfile::tempdir().unwrap();
    let supp = root().join("capi/tests/valgrind.supp");
    let runs: Vec<_> = cases(dir.path())
        .into_iter()
        .filter(|c| c.3)
        .map(|(name, args, needle, _)| {
            let log = dir.path().join(format!("{name}.log"));
            let child = Command::new("valgrind")
                .arg("--error-exitcode=99")
                .arg("--child-silent-after-fork=yes")
                .arg(format!("--suppressions={}", supp.display()))
                .arg(format!("--log-file={}", log.display()))
                .arg(env!("CARGO_BIN_EXE_clpart"))
                .args(&args)
                .current_dir(root())
                .env("POCL_DEVICES", "pthread basic")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            (name, needle, log, child)
        })
        .collect();
    for (name, needle, log, child) in runs {
        let o = child.wait_with_output().unwrap();
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{name} under valgrind: {e}\n--- log\n{log}"
        );
        assert!(e.contains(needle), "{name}: {e}");
        assert!(
            log.contains("ERROR SUMMARY: 0 errors"),
            "{name}: memcheck errors:\n{log}"
        );
    }
}
