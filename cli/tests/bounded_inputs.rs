//! Every file clpart reads is bounded (`ranges_format::input`): a device
//! file or a FIFO is refused as not a regular file instead of being read
//! until memory runs out (or waited on forever), a file past its kind's
//! limit is refused naming the limit, and a `.npy` header cannot claim
//! more data than can exist. Each is one line and exit 2.

use clpart_tests::{assert_input_error, workspace_root as root};
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

fn clpart(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_clpart"))
        .args(args)
        .current_dir(root())
        .env("POCL_DEVICES", "pthread basic")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("clpart runs");
    // an unbounded read would run for minutes and take the machine's
    // memory: stop it well before that and fail
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("clpart {args:?} still runs after 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

const VADD_ARGS: &[&str] = clpart_tests::VADD_RUN_ARGS;

fn run_with(file: &str, extra: &[&str]) -> Output {
    let mut a = vec!["run", file];
    a.extend_from_slice(extra);
    clpart(&a)
}

#[test]
fn a_device_file_is_refused_as_source_run_file_range_file_and_data() {
    let refused = "'/dev/zero': not a regular file";
    assert_input_error(&clpart(&["analyze", "/dev/zero"]), refused);
    assert_input_error(&run_with("/dev/zero", VADD_ARGS), refused);
    assert_input_error(&clpart(&["steps", "/dev/zero"]), refused);
    // a range file (by its extension) that is a device
    let dir = tempfile::tempdir().unwrap();
    let ron = dir.path().join("zero.ron");
    std::os::unix::fs::symlink("/dev/zero", &ron).unwrap();
    assert_input_error(
        &run_with(ron.to_str().unwrap(), VADD_ARGS),
        "not a regular file",
    );
    // a buffer's data
    let mut a = VADD_ARGS.to_vec();
    a[5] = "a=file:/dev/zero";
    assert_input_error(
        &run_with("kernels/basics/vadd.cl", &a),
        "/dev/zero: not a regular file",
    );
}

#[test]
fn a_fifo_without_a_writer_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("k.cl");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    assert_input_error(
        &clpart(&["analyze", fifo.to_str().unwrap()]),
        "not a regular file",
    );
}

#[test]
fn a_source_past_its_limit_is_refused_naming_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.cl");
    // sparse: 16 MiB and one byte, nothing written
    std::fs::File::create(&big)
        .unwrap()
        .set_len((16 << 20) + 1)
        .unwrap();
    assert_input_error(
        &clpart(&["analyze", big.to_str().unwrap()]),
        "larger than 16 MiB, the most a kernel source may have",
    );
}

/// A version 1.0 `.npy` file with this header text and data.
fn npy(path: &Path, header: &str, data: &[u8]) {
    let mut h = header.to_string();
    while !(10 + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(h.len() as u16).to_le_bytes());
    bytes.extend_from_slice(h.as_bytes());
    bytes.extend_from_slice(data);
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_npy_header_cannot_claim_more_data_than_can_exist() {
    let dir = tempfile::tempdir().unwrap();
    let run_a = |file: &Path| {
        let spec = format!("a=file:{}", file.display());
        let mut a = VADD_ARGS.to_vec();
        a[5] = &spec;
        run_with("kernels/basics/vadd.cl", &a)
    };
    // 2^62 x 8 overflows 64 bits: "too large", never "empty"
    let huge = dir.path().join("huge.npy");
    npy(
        &huge,
        "{'descr': '<i4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }",
        &[0; 16],
    );
    assert_input_error(&run_a(&huge), "shape (4611686018427387904, 8) is too large");
    // fits in 64 bits, but not in any host's memory
    let big = dir.path().join("big.npy");
    npy(
        &big,
        "{'descr': '<i4', 'fortran_order': False, 'shape': (1099511627776, 1024), }",
        &[0; 16],
    );
    assert_input_error(&run_a(&big), "is too large: its data would be larger than");
    // a plausible shape over a short file: truncated, read no further
    let short = dir.path().join("short.npy");
    npy(
        &short,
        "{'descr': '<i4', 'fortran_order': False, 'shape': (1000,), }",
        &[0; 16],
    );
    assert_input_error(
        &run_a(&short),
        "file is truncated: shape needs 4000 bytes of data, found 16",
    );
    // and a whole one is read
    let whole = dir.path().join("whole.npy");
    npy(
        &whole,
        "{'descr': '<i4', 'fortran_order': False, 'shape': (1000,), }",
        &[1; 4000],
    );
    let o = run_a(&whole);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
