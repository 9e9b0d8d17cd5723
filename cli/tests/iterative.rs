//! The iterative programs of `kernels/iterative/` run by `clpart
//! steps` over buffers that stay on the devices.
//!
//! - `*_bit_identical`: each run file split across 2 and 3 PoCL devices,
//!   and with shares that change from step to step, gives every buffer bit
//!   for bit what one device gives (a separate single-device process, and
//!   `--verify` in the same process); every launch splits and the guard
//!   never fires.
//! - `*_bytes_within_resident_model`: the bytes moved (launches plus the
//!   final reads) are within 1.1 times the resident model: a simulation of
//!   the kernels' exact accesses per device slice (the slices the launches
//!   report) that moves an element to a device only when the device lacks
//!   it — from the host, or from the device that wrote it through the host
//!   (two moves) — keeps what a device writes on that device only, and
//!   reads back at the end every element the host lacks. Upload once, halo
//!   per step, download what is read.
//! - `steps_*`: the command's errors and outputs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use clpart_tests::{assert_input_error, stderr, workspace_root as root};
use ranges_format::{RunFile, StepArg};

const TWO: &str = "pthread basic";
const THREE: &str = "pthread pthread pthread";

fn clpart(devices: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clpart"))
        .args(args)
        .current_dir(root())
        .env("POCL_DEVICES", devices)
        .output()
        .expect("clpart runs")
}

fn run_file_path(program: &str) -> PathBuf {
    root()
        .join("kernels/iterative")
        .join(format!("{program}.ron"))
}

fn run_file(program: &str) -> RunFile {
    RunFile::parse(&std::fs::read_to_string(run_file_path(program)).unwrap()).unwrap()
}

/// The run file of `program` with each step given shares of its own
/// (`shares[j % len]` for step `j`), written into `dir` (its source path
/// made absolute).
fn with_shares(program: &str, shares: &[&str], dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(run_file_path(program)).unwrap();
    let file = run_file(program);
    let source = root().join("kernels/iterative").join(&file.source);
    let mut out = text.replace(
        &format!("source: \"{}\"", file.source),
        &format!("source: \"{}\"", source.display()),
    );
    let mut parts: Vec<String> = out.split("(kernel: ").map(str::to_string).collect();
    for (j, p) in parts.iter_mut().enumerate().skip(1) {
        *p = format!(
            "(split: \"{}\", kernel: {p}",
            shares[(j - 1) % shares.len()]
        );
    }
    out = parts.concat();
    let path = dir.join(format!("{program}-shares.ron"));
    std::fs::write(&path, out).unwrap();
    let parsed = RunFile::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(
        parsed.steps.iter().all(|s| s.split.is_some()),
        "every step got shares"
    );
    path
}

/// Runs a run file with `--out` for every buffer into `dir`; returns the
/// JSON report and the output files by buffer name.
fn run_steps(
    devices: &str,
    file: &Path,
    extra: &[&str],
    dir: &Path,
) -> (serde_json::Value, BTreeMap<String, Vec<u8>>) {
    let rf = RunFile::parse(&std::fs::read_to_string(file).unwrap()).unwrap();
    let mut args: Vec<String> = vec!["steps".into(), file.display().to_string(), "--json".into()];
    for b in &rf.buffers {
        args.push("--out".into());
        args.push(format!(
            "{}={}",
            b.name,
            dir.join(format!("{}.npy", b.name)).display()
        ));
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = clpart(devices, &argv);
    assert_eq!(
        o.status.code(),
        Some(0),
        "clpart {argv:?} with POCL_DEVICES='{devices}':\n{}",
        stderr(&o)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let outs = rf
        .buffers
        .iter()
        .map(|b| {
            (
                b.name.clone(),
                std::fs::read(dir.join(format!("{}.npy", b.name))).unwrap(),
            )
        })
        .collect();
    (v, outs)
}

/// Split runs of `program` (`devices`; `shares` per step, or the even
/// default) equal the single-device run bit for bit.
fn check_bit_identical(program: &str, devices: &str, shares: Option<&[&str]>) {
    let tmp = tempfile::tempdir().unwrap();
    let (one_dir, split_dir) = (tmp.path().join("one"), tmp.path().join("split"));
    std::fs::create_dir_all(&one_dir).unwrap();
    std::fs::create_dir_all(&split_dir).unwrap();
    let (_, want) = run_steps(
        "pthread",
        &run_file_path(program),
        &["--split", "0:1"],
        &one_dir,
    );
    let file = match shares {
        Some(s) => with_shares(program, s, tmp.path()),
        None => run_file_path(program),
    };
    let (v, got) = run_steps(devices, &file, &["--verify"], &split_dir);
    assert_eq!(
        v["verified"], true,
        "{program}: --verify: {}",
        v["mismatch"]
    );
    let n_devices = devices.split_whitespace().count();
    for l in v["launches"].as_array().unwrap() {
        let at = format!(
            "{program} launch {}.{} ({})",
            l["repetition"], l["step"], l["kernel"]
        );
        assert_eq!(l["split"], true, "{at} ran whole: {}", l["reason"]);
        assert_eq!(l["guard_fired"], false, "{at}: the guard fired");
        assert_eq!(
            l["devices"].as_array().unwrap().len(),
            n_devices,
            "{at}: every device ran"
        );
    }
    if let Some(s) = shares {
        let first: Vec<f64> = v["launches"][0]["shares"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["share"].as_f64().unwrap())
            .collect();
        let want_first: Vec<f64> = launcher::parse_shares(s[0])
            .unwrap()
            .iter()
            .map(|x| x.1)
            .collect();
        assert_eq!(
            first, want_first,
            "{program}: the first step's own shares were used"
        );
    }
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    for (name, bytes) in &want {
        assert!(
            got[name] == *bytes,
            "{program}: buffer '{name}' split on '{devices}' differs from one device"
        );
    }
}

// ---- bit-identical outputs ---------------------------------------------

#[test]
fn jacobi1d_two_devices_bit_identical() {
    check_bit_identical("jacobi1d", TWO, None);
}

#[test]
fn jacobi1d_three_devices_bit_identical() {
    check_bit_identical("jacobi1d", THREE, None);
}

#[test]
fn jacobi1d_shares_changing_between_steps_bit_identical() {
    check_bit_identical("jacobi1d", TWO, Some(&["0:0.7,1:0.3", "0:0.25,1:0.75"]));
}

#[test]
fn jacobi2d_two_devices_bit_identical() {
    check_bit_identical("jacobi2d", TWO, None);
}

#[test]
fn jacobi2d_three_devices_bit_identical() {
    check_bit_identical("jacobi2d", THREE, None);
}

#[test]
fn jacobi2d_shares_changing_between_steps_bit_identical() {
    check_bit_identical(
        "jacobi2d",
        THREE,
        Some(&["0:0.5,1:0.25,2:0.25", "0:0.2,1:0.3,2:0.5"]),
    );
}

#[test]
fn fdtd2d_two_devices_bit_identical() {
    check_bit_identical("fdtd2d", TWO, None);
}

#[test]
fn fdtd2d_three_devices_bit_identical() {
    check_bit_identical("fdtd2d", THREE, None);
}

#[test]
fn fdtd2d_shares_changing_between_steps_bit_identical() {
    check_bit_identical(
        "fdtd2d",
        TWO,
        Some(&["0:0.75,1:0.25", "0:0.5,1:0.5", "0:0.125,1:0.875"]),
    );
}

/// Bins updated by atomics merge as a sum launch after launch, with the
/// data they count resident on the devices and changed in place between.
#[test]
fn histogram_two_devices_bit_identical() {
    check_bit_identical("histogram", TWO, None);
}

#[test]
fn histogram_three_devices_bit_identical() {
    check_bit_identical("histogram", THREE, None);
}

#[test]
fn histogram_shares_changing_between_steps_bit_identical() {
    check_bit_identical("histogram", TWO, Some(&["0:0.8,1:0.2", "0:0.3,1:0.7"]));
}

/// Scatters over resident buffers: the same-value scatter splits and
/// merges, the conflicting one is caught at every repetition and runs
/// unsplit after its split results are discarded (the ring, held only on
/// the devices, restored), and every buffer equals one device's.
fn check_scatter_steps(devices: &str) {
    let tmp = tempfile::tempdir().unwrap();
    for unchecked in [false, true] {
        let extra: &[&str] = if unchecked {
            &["--verify", "--unchecked"]
        } else {
            &["--verify"]
        };
        let (v, _) = run_steps(devices, &run_file_path("scatter"), extra, tmp.path());
        assert_eq!(v["verified"], true, "--verify: {}", v["mismatch"]);
        for l in v["launches"].as_array().unwrap() {
            let at = format!("launch {}.{} ({})", l["repetition"], l["step"], l["kernel"]);
            if l["kernel"] == "scatter_overwrite" {
                assert_eq!(l["split"], false, "{at}");
                let why = l["reason"].as_str().unwrap_or_default();
                assert!(
                    why.contains("wrote different values to element"),
                    "{at}: {why}"
                );
            } else {
                assert_eq!(l["split"], true, "{at} ran whole: {}", l["reason"]);
            }
        }
    }
}

/// (devices that run their work-groups in one order: the conflicting
/// scatter is a write race, of which only such devices give one result)
#[test]
fn scatter_conflicts_over_resident_buffers_run_unsplit_on_two_devices() {
    check_scatter_steps("basic basic");
}

#[test]
fn scatter_conflicts_over_resident_buffers_run_unsplit_on_three_devices() {
    check_scatter_steps("basic basic basic");
}

#[test]
fn lu_two_devices_bit_identical() {
    check_bit_identical("lu", TWO, None);
}

#[test]
fn lu_three_devices_bit_identical() {
    check_bit_identical("lu", THREE, None);
}

#[test]
fn lu_shares_changing_between_steps_bit_identical() {
    check_bit_identical("lu", TWO, Some(&["0:0.75,1:0.25", "0:0.25,1:0.75"]));
}

// ---- bytes moved against the resident model ------------------------------

/// One launch's argument values: buffers by name, integers.
struct LaunchArgs<'a> {
    step: &'a ranges_format::Step,
    rep: i64,
}

impl LaunchArgs<'_> {
    fn buf(&self, arg: &str) -> String {
        match &self.step.args[arg] {
            StepArg::Text(t) => t.clone(),
            other => panic!("argument '{arg}' is {other}, not a buffer"),
        }
    }

    fn int(&self, arg: &str) -> i64 {
        match &self.step.args[arg] {
            StepArg::Int(v) => *v,
            StepArg::Text(t) if t == "step" => self.rep,
            StepArg::Text(t) => t.parse().unwrap(),
            other => panic!("argument '{arg}' is {other}, not an integer"),
        }
    }
}

/// The elements work-item `(x, y)` reads and writes, as the kernels of
/// `kernels/iterative/` do (their C, in Rust).
fn accesses(
    kernel: &str,
    a: &LaunchArgs,
    x: i64,
    y: i64,
    reads: &mut Vec<(String, i64)>,
    writes: &mut Vec<(String, i64)>,
) {
    match kernel {
        "jacobi1d" => {
            let (src, dst, n) = (a.buf("src"), a.buf("dst"), a.int("n"));
            let i = x;
            if i >= 1 && i < n - 1 {
                for d in [-1, 0, 1] {
                    reads.push((src.clone(), i + d));
                }
                writes.push((dst, i));
            }
        }
        "jacobi2d" => {
            let (src, dst, n) = (a.buf("src"), a.buf("dst"), a.int("n"));
            let (col, row) = (x, y);
            if row >= 1 && row < n - 1 && col >= 1 && col < n - 1 {
                let at = row * n + col;
                for d in [0, -1, 1, -n, n] {
                    reads.push((src.clone(), at + d));
                }
                writes.push((dst, at));
            }
        }
        "fdtd2d_ey" => {
            let (fict, ey, hz) = (a.buf("fict"), a.buf("ey"), a.buf("hz"));
            let (t, nx, ny) = (a.int("t"), a.int("nx"), a.int("ny"));
            let (j, i) = (x, y);
            if i < nx && j < ny {
                let here = i * ny + j;
                if i == 0 {
                    reads.push((fict, t));
                } else {
                    reads.push((ey.clone(), here));
                    reads.push((hz.clone(), here));
                    reads.push((hz, here - ny));
                }
                writes.push((ey, here));
            }
        }
        "fdtd2d_ex" => {
            let (ex, hz, nx, ny) = (a.buf("ex"), a.buf("hz"), a.int("nx"), a.int("ny"));
            let (j, i) = (x, y);
            if i < nx && j >= 1 && j < ny {
                let here = i * ny + j;
                reads.push((ex.clone(), here));
                reads.push((hz.clone(), here));
                reads.push((hz, here - 1));
                writes.push((ex, here));
            }
        }
        "fdtd2d_hz" => {
            let (ex, ey, hz) = (a.buf("ex"), a.buf("ey"), a.buf("hz"));
            let (nx, ny) = (a.int("nx"), a.int("ny"));
            let (j, i) = (x, y);
            if i < nx - 1 && j < ny - 1 {
                let here = i * ny + j;
                reads.push((hz.clone(), here));
                reads.push((ex.clone(), here + 1));
                reads.push((ex, here));
                reads.push((ey.clone(), here + ny));
                reads.push((ey, here));
                writes.push((hz, here));
            }
        }
        "lu_scale_col" => {
            let (m, k, n) = (a.buf("a"), a.int("k"), a.int("n"));
            let i = x;
            if i > k && i < n {
                reads.push((m.clone(), i * n + k));
                reads.push((m.clone(), k * n + k));
                writes.push((m, i * n + k));
            }
        }
        "lu_update" => {
            let (m, k, n) = (a.buf("a"), a.int("k"), a.int("n"));
            let (col, row) = (x, y);
            if row > k && row < n && col > k && col < n {
                reads.push((m.clone(), row * n + col));
                reads.push((m.clone(), row * n + k));
                reads.push((m.clone(), k * n + col));
                writes.push((m, row * n + col));
            }
        }
        other => panic!("no model of kernel '{other}'"),
    }
}

const HOST: u8 = 1;

/// The resident model over the launches a run reported: bytes it moves.
fn resident_model(file: &RunFile, report: &serde_json::Value) -> u64 {
    let es = 4u64; // every buffer of the iterative programs holds floats
    let mut holders: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for b in &file.buffers {
        let n = b.size.unwrap_or_else(|| {
            let init = b.init.as_deref().unwrap();
            init.split(':').nth(1).unwrap().parse().unwrap()
        });
        holders.insert(b.name.clone(), vec![HOST; n as usize]);
    }
    let mut moved = 0u64;
    for l in report["launches"].as_array().unwrap() {
        let rep = l["repetition"].as_i64().unwrap();
        let step = &file.steps[l["step"].as_u64().unwrap() as usize];
        let args = LaunchArgs { step, rep };
        let kernel = l["kernel"].as_str().unwrap();
        let global: Vec<i64> = l["global"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        let local: Vec<i64> = l["local"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        let dim = l["split_dim"].as_u64().map(|d| d as usize);
        let mut written: Vec<(u8, Vec<(String, i64)>)> = Vec::new();
        for d in l["devices"].as_array().unwrap() {
            let bit = 2u8 << d["index"].as_u64().unwrap();
            let slice = (
                d["slice"][0].as_i64().unwrap(),
                d["slice"][1].as_i64().unwrap(),
            );
            let range = |k: usize| match dim {
                Some(s) if s == k => slice.0 * local[k]..slice.1 * local[k],
                _ => 0..*global.get(k).unwrap_or(&1),
            };
            let (mut reads, mut writes) = (Vec::new(), Vec::new());
            for y in range(1) {
                for x in range(0) {
                    accesses(kernel, &args, x, y, &mut reads, &mut writes);
                }
            }
            for (buf, idx) in reads {
                let m = &mut holders.get_mut(&buf).unwrap()[idx as usize];
                if *m & bit == 0 {
                    if *m & HOST == 0 {
                        moved += es; // from the device that holds it, through the host
                        *m |= HOST;
                    }
                    moved += es;
                    *m |= bit;
                }
            }
            written.push((bit, writes));
        }
        for (bit, writes) in written {
            for (buf, idx) in writes {
                holders.get_mut(&buf).unwrap()[idx as usize] = bit;
            }
        }
    }
    // the final reads: every buffer
    moved
        + holders
            .values()
            .flatten()
            .filter(|m| **m & HOST == 0)
            .count() as u64
            * es
}

/// Bytes moved by `program` on `devices` (shares per step, or even) are
/// within `limit` times the resident model; the error says by how much not.
fn bytes_vs_model(
    program: &str,
    devices: &str,
    shares: Option<&[&str]>,
    limit: f64,
) -> Result<(), String> {
    let tmp = tempfile::tempdir().unwrap();
    let file = match shares {
        Some(s) => with_shares(program, s, tmp.path()),
        None => run_file_path(program),
    };
    let (v, _) = run_steps(devices, &file, &[], tmp.path());
    let rf = RunFile::parse(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let model = resident_model(&rf, &v);
    let moved = v["total"]["bytes_total"].as_u64().unwrap();
    let per_launch = v["total"]["bytes_whole_buffers"].as_u64().unwrap();
    if moved as f64 > limit * model as f64 {
        return Err(format!(
            "{program} on '{devices}' (shares {shares:?}): moved {moved} bytes = {:.2}x the resident model {model} (limit {limit}x); whole buffers at every launch: {per_launch}",
            moved as f64 / model as f64
        ));
    }
    Ok(())
}

/// Every configuration of `program` within 1.1 times the model (all are
/// run, then every miss is reported).
fn check_bytes(program: &str, shares_two: &[&str], shares_three: &[&str]) {
    let limit = 1.1;
    let misses: Vec<String> = [
        bytes_vs_model(program, TWO, None, limit),
        bytes_vs_model(program, THREE, None, limit),
        bytes_vs_model(program, TWO, Some(shares_two), limit),
        bytes_vs_model(program, THREE, Some(shares_three), limit),
    ]
    .into_iter()
    .filter_map(Result::err)
    .collect();
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}

#[test]
fn jacobi1d_bytes_within_resident_model() {
    check_bytes(
        "jacobi1d",
        &["0:0.7,1:0.3", "0:0.25,1:0.75"],
        &["0:0.5,1:0.25,2:0.25", "0:0.2,1:0.3,2:0.5"],
    );
}

#[test]
fn jacobi2d_bytes_within_resident_model() {
    check_bytes(
        "jacobi2d",
        &["0:0.7,1:0.3", "0:0.25,1:0.75"],
        &["0:0.5,1:0.25,2:0.25", "0:0.2,1:0.3,2:0.5"],
    );
}

#[test]
fn fdtd2d_bytes_within_resident_model() {
    check_bytes(
        "fdtd2d",
        &["0:0.75,1:0.25", "0:0.5,1:0.5", "0:0.125,1:0.875"],
        &[
            "0:0.5,1:0.25,2:0.25",
            "0:0.25,1:0.25,2:0.5",
            "0:0.2,1:0.6,2:0.2",
        ],
    );
}

/// LU (issues 12 and 13): the update kernel reads the pivot row `k` beside
/// the slice's own rows, and the column scaling the pivot beside its
/// column; with one box per array the box ran from the pivot row to the
/// slice's last row, and the rows between (another device's) moved at
/// every launch: 2.2x to 12.6x the model (2026-11-24). With the read parts
/// (`Boxes::read_parts`, a box per group of reads) only the pivot row and
/// the slice's rows move: 1.10x to 1.16x. Measured launch by launch
/// (2026-11-24), every launch then moved exactly the model's bytes; the
/// rest was the final read-back, where the launcher's cost model
/// (`Runs::transfers`) moves elements the host already holds to save
/// commands: each device holds a staircase (the rows of a triangle), and
/// bridging its gaps moved up to twice the staircase. A staircase now goes
/// as one rect with its rows padded to a common width: 1.05x to 1.09x
/// (the rest is still bridging, cheaper than a command per row).
#[test]
fn lu_bytes_within_resident_model() {
    check_bytes(
        "lu",
        &["0:0.75,1:0.25", "0:0.25,1:0.75"],
        &["0:0.5,1:0.25,2:0.25", "0:0.2,1:0.3,2:0.5"],
    );
}

// ---- the command -----------------------------------------------------------

/// A variant of jacobi1d's run file in `dir` (source made absolute) with
/// `from` replaced by `to`.
fn broken(dir: &Path, name: &str, from: &str, to: &str) -> PathBuf {
    let text = std::fs::read_to_string(run_file_path("jacobi1d")).unwrap();
    assert!(text.contains(from), "'{from}' is in jacobi1d.ron");
    let source = root().join("kernels/iterative/jacobi1d.cl");
    let text = text
        .replace(
            "source: \"jacobi1d.cl\"",
            &format!("source: \"{}\"", source.display()),
        )
        .replacen(from, to, 1);
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn steps_errors_name_the_file_and_write_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("a.npy");
    let out_arg = format!("A={}", out.display());
    let cases: &[(&str, &str, &str)] = &[
        ("repeat: 10,", "repeat: 10,,", "bad0.ron:9:"),
        (
            "\"src\": \"A\"",
            "\"srcx\": \"A\"",
            "'srcx' is not an argument of the kernel (arguments: src, dst, n)",
        ),
        (
            "\"src\": \"A\"",
            "\"src\": \"C\"",
            "argument 'src': 'C' is not a buffer (buffers: A, B)",
        ),
        (
            "\"dst\": \"B\"",
            "\"dst\": \"A\"",
            "buffer 'A' is bound to two arguments ('src' and 'dst')",
        ),
        (
            "\"n\": 4096}",
            "\"n\": \"A\"}",
            "'A' is a buffer but the argument is a scalar",
        ),
        ("\"n\": 4096}", "\"n\": 0.5}", "'0.5' is not an integer"),
        ("\"n\": 4096}", "}", "argument 'n' is not given"),
        (
            "type: \"float\"",
            "type: \"int\"",
            "the argument is a float pointer and buffer 'A' holds int",
        ),
        (
            "type: \"float\"",
            "type: \"pair\"",
            "type 'pair' is not an OpenCL scalar or vector type",
        ),
        ("kernel: \"jacobi1d\"", "kernel: \"jacobi\"", "step 1: "),
        ("local: [64]", "local: [48]", "step 1 (kernel 'jacobi1d')"),
        (
            "init: \"rand:4096:1\"",
            "init: \"bogus:1\"",
            "unknown spec kind 'bogus'",
        ),
        (
            "args: {",
            "split: \"0:0.5,1:0.6\", args: {",
            "the shares sum to 1.1",
        ),
        (
            "args: {",
            "split: \"0:0.5,5:0.5\", args: {",
            "device 5 does not exist",
        ),
        (
            "rand:4096:1\"),\n        (name: \"B\"",
            "rand:40:1\"),\n        (name: \"B\"",
            "repetition 1, step 1 (kernel 'jacobi1d')",
        ),
    ];
    for (i, (from, to, needle)) in cases.iter().enumerate() {
        let path = broken(tmp.path(), &format!("bad{i}.ron"), from, to);
        let o = clpart(TWO, &["steps", path.to_str().unwrap(), "--out", &out_arg]);
        assert_input_error(&o, needle);
        assert!(
            stderr(&o).contains(&format!("bad{i}.ron")),
            "the message names the file: {}",
            stderr(&o)
        );
        assert!(!out.exists(), "case {i}: no output after an error");
    }
    let o = clpart(TWO, &["steps", "kernels/iterative/nope.ron"]);
    assert_input_error(&o, "cannot read 'kernels/iterative/nope.ron'");
    let o = clpart(
        TWO,
        &[
            "steps",
            "kernels/iterative/jacobi1d.ron",
            "--out",
            "C=x.npy",
        ],
    );
    assert_input_error(
        &o,
        "'C' is not a buffer of kernels/iterative/jacobi1d.ron (buffers: A, B)",
    );
    assert!(!root().join("x.npy").exists());
}

#[test]
fn steps_report_per_launch_and_total() {
    let o = clpart(TWO, &["steps", "kernels/iterative/jacobi1d.ron"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("kernels/iterative/jacobi1d.ron: 20 launches (2 steps x 10)"),
        "{text}"
    );
    assert!(
        lines[1].starts_with(
            "  1.1 jacobi1d [4096]/[64] split 0:0.500,1:0.500 along dimension 0: moved "
        ),
        "{text}"
    );
    assert!(lines[20].starts_with("  10.2 jacobi1d"), "{text}");
    assert!(
        lines[21].starts_with("total: 20 launches, moved "),
        "{text}"
    );
    assert!(lines[21].contains("whole buffers 1310720 B"), "{text}");
    let help = clpart(TWO, &["steps", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("clpart steps kernels/iterative/jacobi2d.ron --verify"),
        "{help}"
    );
    assert!(help.contains("repeat:"), "{help}");
}
