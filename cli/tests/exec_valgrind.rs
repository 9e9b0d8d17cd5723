//! Seven host programs of `tests/apps/` under valgrind's memcheck with
//! clpart's layer loaded and their kernels split (`resident` goes through
//! every entry point that syncs a resident buffer, `null_local` keeps two
//! kernels on the application's device, `events` reads a split launch's
//! event and its profiling times, `host_threads` launches from three host
//! threads at once, `kernel_objects` clones a kernel and launches a 3-D
//! NDRange with an offset): no invalid read, write or
//! free, no definite leak (PoCL's, LLVM's and ld.so's own are suppressed:
//! `capi/tests/valgrind.supp`, `tests/exec_valgrind.supp`).
//!
//! About three minutes on 2 cores (PoCL and clpart's analysis run under
//! valgrind); the first run on a machine also compiles the kernels under
//! valgrind.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

#[test]
fn programs_under_the_layer_are_clean_under_valgrind() {
    let valgrind = Command::new("valgrind").arg("--version").output();
    assert!(
        valgrind.is_ok_and(|o| o.status.success()),
        "valgrind is not installed (scripts/setup.sh installs it)"
    );
    let exe = std::env::current_exe().unwrap();
    let layer = exe.parent().unwrap().join("libclpart_layer.so");
    assert!(layer.is_file(), "{} is missing", layer.display());
    let tmp = tempfile::tempdir().unwrap();
    // Each program, its arguments and the kernel that must split.
    let runs: Vec<_> = [
        ("vadd", &["1000"][..], "vadd"),
        ("jacobi2d", &["64", "2"][..], "jacobi2d"),
        ("resident", &["4096"][..], "axpb"),
        // a NULL local size beside kernels kept home; events read back
        ("null_local", &["4096"][..], "scale"),
        ("events", &[][..], "saxpy"),
        ("host_threads", &["1024", "6"][..], "relax"),
        // a cloned kernel, a 3-D NDRange with an offset
        ("kernel_objects", &["18", "10", "6", "2"][..], "fill3d"),
    ]
    .into_iter()
    .map(|(app, args, kernel)| {
        let dir = repo().join("tests/apps").join(app);
        let bin = tmp.path().join(app);
        let out = Command::new("gcc")
            .args(["-O1", "-g", "-std=c99", "-DCL_TARGET_OPENCL_VERSION=120"])
            .args(["-Wno-deprecated-declarations", "-o"])
            .arg(&bin)
            .arg(dir.join("main.c"))
            .args(["-lOpenCL", "-lm"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "gcc {app}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let log = tmp.path().join(format!("{app}.valgrind.log"));
        let child = Command::new("valgrind")
            .args(["--error-exitcode=99", "--leak-check=full"])
            .args([
                "--errors-for-leak-kinds=definite",
                "--child-silent-after-fork=yes",
            ])
            .arg(format!(
                "--suppressions={}",
                repo().join("capi/tests/valgrind.supp").display()
            ))
            .arg(format!(
                "--suppressions={}",
                repo().join("cli/tests/exec_valgrind.supp").display()
            ))
            .arg(format!("--log-file={}", log.display()))
            .arg(&bin)
            .args(args)
            .current_dir(&dir)
            .env("POCL_DEVICES", "pthread basic")
            .env("OPENCL_LAYERS", &layer)
            .env("CLPART_LAYER_SPLIT", "0:0.5,1:0.5")
            .env("CLPART_LAYER_VERBOSE", "1")
            .env("CLPART_LAYER_WAIT", "1")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        (app, kernel, log, child)
    })
    .collect();
    for (app, kernel, log, child) in runs {
        let out = child.wait_with_output().unwrap();
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let all = format!("{stdout}{stderr}--- valgrind log\n{log}");
        assert!(
            out.status.success(),
            "{app} under valgrind: {:?}\n{all}",
            out.status.code()
        );
        assert!(stdout.contains(": 0 mismatches"), "{app}:\n{all}");
        let summary = stderr
            .lines()
            .find(|l| l.starts_with(&format!("clpart: kernel '{kernel}': ")))
            .unwrap_or_default();
        assert!(
            summary.contains(" split;") && !summary.contains(" 0 split"),
            "{app}: '{kernel}' not split\n{all}"
        );
        for bad in [
            "Invalid read",
            "Invalid write",
            "Invalid free",
            "Mismatched free",
        ] {
            assert!(
                !log.contains(bad),
                "{app}: valgrind reports '{bad}':\n{log}"
            );
        }
        assert!(log.contains("ERROR SUMMARY: 0 errors"), "{app}:\n{log}");
    }
}
