//! The guarantee: range files are untrusted input. A tampered
//! file is refused with exit 2 and a one-line error naming the field; output
//! files are written safely.

use std::os::unix::fs::FileTypeExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use clpart_tests::{stderr, workspace_root as root};
use ranges_format::RangeFile;

fn clpart(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clpart"))
        .args(args)
        .current_dir(root())
        .env("POCL_DEVICES", "pthread basic")
        .output()
        .unwrap()
}

const RUN: &[&str] = &[
    "--global",
    "1024",
    "--local",
    "64",
    "--arg",
    "a=rand:1024:1",
    "--arg",
    "b=rand:1024:2",
    "--arg",
    "c=zeros:1024",
    "--split",
    "0:0.5,1:0.5",
    "--verify",
];

/// A fresh range file of kernels/basics/vadd.cl in a temporary folder.
fn vadd_ranges(dir: &Path) -> (PathBuf, String) {
    let path = dir.join("vadd.ranges.ron");
    let o = clpart(&[
        "analyze",
        "kernels/basics/vadd.cl",
        "-o",
        path.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&path).unwrap();
    (path, text)
}

fn run_file(path: &Path, extra: &[&str]) -> Output {
    let mut a = vec!["run", path.to_str().unwrap()];
    a.extend_from_slice(RUN);
    a.extend_from_slice(extra);
    clpart(&a)
}

fn assert_refused(o: &Output, needle: &str) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(e.starts_with("clpart: error: "), "{e}");
    assert!(e.contains(needle), "expected '{needle}' in: {e}");
    assert!(!e.trim_end().ends_with('.'), "{e}");
}

/// Replaces the `n`-th (0-based) occurrence of `from` after `anchor`.
fn edit_after(text: &str, anchor: &str, from: &str, to: &str) -> String {
    let start = text.find(anchor).unwrap_or_else(|| panic!("no '{anchor}'"));
    let pos = start
        + text[start..]
            .find(from)
            .unwrap_or_else(|| panic!("no '{from}' after '{anchor}'"));
    format!("{}{}{}", &text[..pos], to, &text[pos + from.len()..])
}

#[test]
fn untampered_file_runs_and_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = vadd_ranges(dir.path());
    let o = run_file(&path, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn tampered_files_are_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let (path, text) = vadd_ranges(dir.path());
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "array elem_size 4 -> 64",
            edit_after(&text, "ArrayRanges(", "elem_size: 4", "elem_size: 64"),
            "array 'a': elem_size 64 does not match element type 'int' (4 bytes)",
        ),
        (
            "argument elem_size 1",
            edit_after(&text, "ArgInfo(", "elem_size: 4", "elem_size: 1"),
            "argument 'a': elem_size 1 does not match element type 'int'",
        ),
        (
            "narrowed range",
            edit_after(&text, "slice: Some(", "(go0 + sx_lo)", "(1 + go0 + sx_lo)"),
            "kernel 'vadd': array 'a': checksum mismatch",
        ),
        (
            "changed source_hash",
            edit_after(&text, "source_hash: \"", "\"", "\"0"),
            "source_hash: ",
        ),
        (
            "subkernel computes a - b",
            edit_after(&text, "&__clpart_bad, 0)", "] + b[", "] - b["),
            "kernel 'vadd': subkernel: checksum mismatch",
        ),
        (
            "extra argument source changed",
            edit_after(&text, "extra_args: [", "ArrayBase(", "Extent("),
            "kernel 'vadd': subkernel: checksum mismatch",
        ),
        (
            "version 1",
            text.replacen(
                &format!("format_version: {}", ranges_format::FORMAT_VERSION),
                "format_version: 1",
                1,
            ),
            "regenerate it with 'clpart analyze -o'",
        ),
    ];
    for (what, tampered, needle) in cases {
        assert_ne!(tampered, text, "{what}: no edit");
        std::fs::write(&path, &tampered).unwrap();
        let o = run_file(&path, &[]);
        assert_refused(&o, needle);
        assert!(stderr(&o).contains("cannot load range file"), "{what}");
    }
}

/// ~200 random single-field mutations of a real range file: each is refused
/// by the loader (no crash), or, if it loads, runs and verifies.
#[test]
fn random_single_field_mutations_are_refused_or_run_correctly() {
    let dir = tempfile::tempdir().unwrap();
    let (path, text) = vadd_ranges(dir.path());
    // Every token of the file that is a number, an identifier or a quoted
    // string's first character is a mutation site.
    let sites: Vec<usize> = text
        .char_indices()
        .filter(|&(i, c)| {
            c.is_ascii_alphanumeric() && (i == 0 || !text.as_bytes()[i - 1].is_ascii_alphanumeric())
        })
        .map(|(i, _)| i)
        .collect();
    let mut state = 0x9e3779b97f4a7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let replacements = [
        "0",
        "1",
        "4",
        "64",
        "4294967295",
        "-1",
        "x",
        "Whole",
        "None",
        "W",
        "GlobalSize(2)",
    ];
    let mut loaded = 0;
    for _ in 0..200 {
        let at = sites[next() as usize % sites.len()];
        let end = at
            + text[at..]
                .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .unwrap_or(0);
        let rep = replacements[next() as usize % replacements.len()];
        let mutated = format!("{}{}{}", &text[..at], rep, &text[end..]);
        let r = std::panic::catch_unwind(|| RangeFile::from_ron_str(&mutated));
        let r =
            r.unwrap_or_else(|_| panic!("loader panicked on a mutation at byte {at} ('{rep}')"));
        match r {
            Err(e) => {
                let s = e.to_string();
                assert!(!s.contains('\n') && !s.ends_with('.'), "{s}");
            }
            Ok(_) => {
                // Only a no-op edit can survive the checksums; it must run.
                loaded += 1;
                if loaded <= 3 {
                    std::fs::write(&path, &mutated).unwrap();
                    let o = run_file(&path, &[]);
                    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
                }
            }
        }
    }
}

/// A forged file (consistent, checksums recomputed) whose subkernel computes
/// `a - b`: the verification fails (exit 1) and no --out file is written,
/// unless --out-on-mismatch.
#[test]
fn failing_verify_writes_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = vadd_ranges(dir.path());
    let mut f = RangeFile::read(&path).unwrap();
    let sub = f.kernels[0].subkernel.as_mut().unwrap();
    assert!(sub.source.contains("] + b["));
    // in both copies of the body (fast and checked), not in the header comment
    let at = sub.source.find("__kernel").unwrap();
    let body = sub.source[at..].replace("] + b[", "] - b[");
    sub.source.replace_range(at.., &body);
    f.write_atomic(&path).unwrap();
    let out = dir.path().join("c.npy");
    let spec = format!("c={}", out.display());
    let o = run_file(&path, &["--out", &spec]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("verification failed"), "{}", stderr(&o));
    assert!(!out.exists(), "a failed verification wrote an output");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");

    let o = run_file(&path, &["--out", &spec, "--out-on-mismatch"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(out.exists());

    // Over several launches the first that fails is the one reported (the
    // launches after it do not run), not only the last.
    let o = run_file(&path, &["--repeat", "3"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("verification failed in launch 1 of 3"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn dev_null_stays_a_device_and_dev_full_is_a_one_line_error() {
    let o = clpart(&[
        "run",
        "kernels/basics/vadd.cl",
        "--global",
        "64",
        "--local",
        "8",
        "--arg",
        "a=rand:64",
        "--arg",
        "b=rand:64",
        "--arg",
        "c=zeros:64",
        "--out",
        "c=/dev/null",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());

    if Path::new("/dev/full").exists() {
        let o = clpart(&[
            "run",
            "kernels/basics/vadd.cl",
            "--global",
            "64",
            "--local",
            "8",
            "--arg",
            "a=rand:64",
            "--arg",
            "b=rand:64",
            "--arg",
            "c=zeros:64",
            "--out",
            "c=/dev/full",
        ]);
        assert_refused(&o, "no space left on device");
        assert!(std::fs::metadata("/dev/full")
            .unwrap()
            .file_type()
            .is_char_device());
        let o = clpart(&["analyze", "kernels/basics/vadd.cl", "-o", "/dev/full"]);
        assert_refused(&o, "no space left on device");
    }
}

/// SIGINT or SIGTERM while an output is being written removes its
/// temporary, leaves the target untouched and exits with 128 + the signal.
/// (The debug build holds the written temporary on
/// `CLPART_TEST_HOLD_OUTPUT_MS`, so the signal lands mid-write.)
#[test]
fn a_signal_during_the_output_write_leaves_no_temporary() {
    for (sig, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("c.npy");
        std::fs::write(&out, b"previous").unwrap();
        let spec = format!("c={}", out.display());
        let mut args = vec!["run", "kernels/basics/vadd.cl"];
        args.extend_from_slice(RUN);
        args.extend_from_slice(&["--out", &spec]);
        let mut child = Command::new(env!("CARGO_BIN_EXE_clpart"))
            .args(&args)
            .current_dir(root())
            .env("POCL_DEVICES", "pthread basic")
            .env("CLPART_TEST_HOLD_OUTPUT_MS", "30000")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let temporaries = || -> Vec<String> {
            std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
                .filter(|n| n.ends_with(".tmp"))
                .collect()
        };
        // the temporary is made before the run (empty) and written after
        // it: wait (up to 60 s) for its data
        let written = || {
            temporaries()
                .iter()
                .any(|n| std::fs::metadata(dir.path().join(n)).is_ok_and(|m| m.len() > 0))
        };
        let mut seen = false;
        for _ in 0..600 {
            if written() {
                seen = true;
                break;
            }
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        assert!(seen, "no temporary was written");
        unsafe { libc::kill(child.id() as i32, sig) };
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(code), "signal {sig}");
        assert!(
            temporaries().is_empty(),
            "signal {sig}: {:?}",
            temporaries()
        );
        assert_eq!(
            std::fs::read(&out).unwrap(),
            b"previous",
            "the target is untouched"
        );
    }
}
