//! The C examples under valgrind's memcheck: no invalid reads or writes (no
//! memcheck error at all) and no definitely lost block, except the few that
//! PoCL and LLVM themselves leak while compiling kernels (allocated by their
//! own code; `tests/valgrind.supp`).
//!
//! Slow: the first run on a machine compiles the kernels under valgrind (PoCL's
//! kernel cache is keyed by the CPU valgrind emulates), 2 to 3 minutes; later
//! runs take about a minute. Both examples run at once.

mod common;

use std::process::Command;

use common::{install_and_build, repo, text};

#[test]
fn examples_are_clean_under_valgrind() {
    let valgrind = Command::new("valgrind").arg("--version").output();
    assert!(
        valgrind.is_ok_and(|o| o.status.success()),
        "valgrind is not installed (scripts/setup.sh installs it)"
    );
    let inst = install_and_build();
    let supp = repo().join("capi/tests/valgrind.supp");
    let runs: Vec<_> = ["vadd", "matmul"]
        .into_iter()
        .map(|example| {
            let log = inst.dir.path().join(format!("{example}.valgrind.log"));
            let child = inst
                .command("valgrind")
                .arg("--error-exitcode=99")
                .arg("--leak-check=full")
                .arg("--errors-for-leak-kinds=definite")
                .arg("--child-silent-after-fork=yes")
                .arg(format!("--suppressions={}", supp.display()))
                .arg(format!("--log-file={}", log.display()))
                .arg(inst.bin.join(example))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            (example, log, child)
        })
        .collect();
    for (example, log, child) in runs {
        let out = child.wait_with_output().unwrap();
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        let all = format!("{}--- valgrind log\n{log}", text(&out));
        assert!(
            out.status.success(),
            "{example} under valgrind exited with {:?}:\n{all}",
            out.status.code()
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).ends_with("PASS\n"),
            "{example}:\n{all}"
        );
        for bad in [
            "Invalid read",
            "Invalid write",
            "Invalid free",
            "Mismatched free",
        ] {
            assert!(
                !log.contains(bad),
                "{example}: valgrind reports '{bad}':\n{log}"
            );
        }
        assert!(log.contains("ERROR SUMMARY: 0 errors"), "{example}:\n{log}");
        assert!(
            log.contains("definitely lost: 0 bytes in 0 blocks")
                || log.contains("All heap blocks were freed"),
            "{example}:\n{log}"
        );
    }
}
