//! The `clpart` binary: bad input gives one-line errors with exit 2 and no
//! partial output; the analyze/run paths work end to end on PoCL.

use clpart_tests::{assert_input_error, stderr, workspace_root as root};
use std::process::{Command, Output};

fn clpart(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clpart"))
        .args(args)
        .current_dir(root())
        .env("POCL_DEVICES", "pthread basic")
        .output()
        .expect("clpart runs")
}

const VADD_RUN: &[&str] = clpart_tests::VADD_RUN_ARGS;

fn run_vadd(extra: &[&str]) -> Output {
    let mut a = vec!["run", "kernels/basics/vadd.cl"];
    a.extend_from_slice(VADD_RUN);
    a.extend_from_slice(extra);
    clpart(&a)
}

#[test]
fn syntax_error_is_reported_with_location() {
    assert_input_error(
        &clpart(&["analyze", "kernels/invalid/syntax_error.cl"]),
        "syntax_error.cl:5:29",
    );
}

#[test]
fn empty_file_is_refused() {
    assert_input_error(
        &clpart(&["analyze", "kernels/invalid/empty.cl"]),
        "empty file",
    );
}

#[test]
fn missing_file_is_refused() {
    assert_input_error(
        &clpart(&["analyze", "kernels/nope.cl"]),
        "cannot read 'kernels/nope.cl'",
    );
}

#[test]
fn unknown_kernel_lists_the_valid_ones() {
    assert_input_error(
        &clpart(&["analyze", "kernels/basics/vadd.cl", "--kernel", "nope"]),
        "no kernel named 'nope' (kernels: vadd)",
    );
}

#[test]
fn unsupported_constructs_are_diagnosed_with_location() {
    let o = clpart(&[
        "analyze",
        "kernels/invalid/uses_goto.cl",
        "--emit",
        "coarsened",
    ]);
    assert_input_error(&o, "uses_goto.cl:8:9");
    assert!(stderr(&o).contains("'goto'"));
    // The kernel is still accepted by the analysis, as not splittable:
    // exit 1, nothing to split (as --help documents).
    let o = clpart(&["analyze", "kernels/invalid/uses_goto.cl", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["kernels"][0]["splittable"], false);
    assert!(v["kernels"][0]["reason"].as_str().unwrap().contains("goto"));
}

/// A kernel including a header that sits beside it builds on the devices
/// from any directory (the analysis found the header from the file's path;
/// the device's compiler looked in the current directory).
#[test]
fn headers_beside_the_kernel_are_found_by_the_device_build() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("scale.h"), "#define SCALE 3.0f\n").unwrap();
    let k = dir.path().join("k.cl");
    std::fs::write(
        &k,
        "#include \"scale.h\"\n__kernel void k(__global float *a) {\n    int i = get_global_id(0);\n    a[i] = a[i] * SCALE;\n}\n",
    )
    .unwrap();
    let k = k.to_string_lossy().to_string();
    let o = clpart(&[
        "run",
        &k,
        "--global",
        "64",
        "--local",
        "8",
        "--arg",
        "a=seq:64",
        "--split",
        "0:0.5,1:0.5",
        "--verify",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// At a launch where the analysis' split dimension has one
/// work-group (a trailing 1), the launch splits along the dimension with
/// the most, each device taking work-groups.
#[test]
fn a_trailing_dimension_of_one_group_is_not_the_split_one() {
    // a verified 50/50 run of the kernel, its JSON report
    let run = |global: &str, local: &str, a: &str, k: &str| -> serde_json::Value {
        let o = clpart(&[
            "run",
            "kernels/work_groups/trailing_one_linear.cl",
            "--global",
            global,
            "--local",
            local,
            "--arg",
            a,
            "--arg",
            k,
            "--split",
            "0:0.5,1:0.5",
            "--verify",
            "--json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let v = run("4096,1", "64,1", "a=rand:4096:1", "k=2");
    assert_eq!(v["split"], true, "{v}");
    assert_eq!(v["split_dim"], 0, "{v}");
    assert_eq!(v["verified"], true, "{v}");
    for d in v["devices"].as_array().unwrap() {
        assert!(d["bytes_to_device"].as_u64().unwrap() > 0, "{v}");
    }
    // launched 1-D, `get_global_id(1)` is 0: analyzed for one dimension
    let v = run("256", "32", "a=rand:256:5", "k=4");
    assert_eq!(v["split"], true, "{v}");
    assert_eq!(v["verified"], true, "{v}");
}

/// A kernel with an image argument is analyzed and refused with
/// the argument's location; `clpart run` cannot give an image a value.
#[test]
fn image_kernels_are_analyzed_and_run_unsplit_with_the_reason() {
    let o = clpart(&["analyze", "kernels/images/read_image.cl", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let k = &v["kernels"][0];
    assert_eq!(k["splittable"], false);
    let reason = k["reason"].as_str().unwrap();
    assert!(
        reason.contains("argument 'src' is an image or a sampler (kernels/images/read_image.cl:8:"),
        "{reason}"
    );
    // the rest is analyzed: `out` is bounded
    let out = k["arrays"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "out")
        .unwrap();
    assert_eq!(out["status"], "bounded", "{out}");
    let o = clpart(&[
        "run",
        "kernels/images/read_image.cl",
        "--global",
        "8,8",
        "--arg",
        "src=bytes:0000000000000000",
        "--arg",
        "out=zeros:64",
        "--arg",
        "width=8",
    ]);
    assert_input_error(
        &o,
        "argument 'src' (image2d_t): images and samplers are made by the kernel's own host program",
    );
}

#[test]
fn analyze_json_has_the_documented_fields() {
    let o = clpart(&["analyze", "kernels/indirect/gather.cl", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let k = &v["kernels"][0];
    assert_eq!(k["name"], "gather");
    assert_eq!(k["splittable"], true);
    assert!(k["reason"].is_null());
    let arrays = k["arrays"].as_array().unwrap();
    let a = arrays.iter().find(|a| a["name"] == "a").unwrap();
    assert_eq!(a["status"], "whole");
    assert_eq!(a["mode"], "r");
    assert!(a["reason"].as_str().unwrap().contains("gather.cl:"), "{a}");
    let b = arrays.iter().find(|a| a["name"] == "b").unwrap();
    assert_eq!(
        (
            b["status"].as_str(),
            b["mode"].as_str(),
            b["arg_index"].as_u64()
        ),
        (Some("bounded"), Some("w"), Some(2))
    );
}

#[test]
fn range_file_round_trip_then_run_without_reanalysis() {
    let dir = tempfile::tempdir().unwrap();
    let rf = dir.path().join("vadd.ranges.ron");
    let o = clpart(&[
        "analyze",
        "kernels/basics/vadd.cl",
        "-o",
        rf.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut a = vec!["run", rf.to_str().unwrap()];
    a.extend_from_slice(VADD_RUN);
    a.extend_from_slice(&["--split", "0:0.86,1:0.14", "--verify", "--json"]);
    let o = clpart(&a);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["verified"], true);
    assert_eq!(v["devices"].as_array().unwrap().len(), 2);
}

#[test]
fn corrupt_or_newer_range_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.ranges.ron");
    assert_eq!(
        clpart(&[
            "analyze",
            "kernels/basics/vadd.cl",
            "-o",
            good.to_str().unwrap()
        ])
        .status
        .code(),
        Some(0)
    );
    let text = std::fs::read_to_string(&good).unwrap();
    let truncated = dir.path().join("trunc.ranges.ron");
    std::fs::write(&truncated, &text[..text.len() / 2]).unwrap();
    let mut a = vec!["run", truncated.to_str().unwrap()];
    a.extend_from_slice(VADD_RUN);
    assert_input_error(&clpart(&a), "corrupt range file");
    let newer = dir.path().join("newer.ranges.ron");
    std::fs::write(
        &newer,
        text.replacen(
            &format!("format_version: {}", ranges_format::FORMAT_VERSION),
            "format_version: 99",
            1,
        ),
    )
    .unwrap();
    let mut a = vec!["run", newer.to_str().unwrap()];
    a.extend_from_slice(VADD_RUN);
    assert_input_error(&clpart(&a), "format_version 99");
}

#[test]
fn run_errors_are_clear() {
    assert_input_error(&run_vadd(&["--split", "0:0.5,7:0.5"]), "7");
    assert_input_error(&run_vadd(&["--split", "0:0.5,1:0.4"]), "sum");
    let o = clpart(&[
        "run",
        "kernels/basics/vadd.cl",
        "--global",
        "1000",
        "--local",
        "8",
        "--arg",
        "a=rand:1000",
        "--arg",
        "b=rand:1000",
    ]);
    assert_input_error(&o, "'c'");
    let o = clpart(&[
        "run",
        "kernels/basics/vadd.cl",
        "--global",
        "1000",
        "--local",
        "8",
        "--arg",
        "a=rand:1000",
        "--arg",
        "b=rand:1000",
        "--arg",
        "c=zeros:999",
    ]);
    assert_input_error(&o, "c");
    let o = clpart(&[
        "run",
        "kernels/basics/vadd.cl",
        "--global",
        "1000",
        "--local",
        "8",
        "--arg",
        "a=bogus:1",
        "--arg",
        "b=rand:1000",
        "--arg",
        "c=zeros:1000",
    ]);
    assert_input_error(&o, "bogus");
}

#[test]
fn outputs_are_written_only_on_success() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.npy");
    let spec = format!("c={}", out.display());
    let o = run_vadd(&["--split", "0:0.5,1:0.5", "--out", &spec]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let bytes = std::fs::read(&out).unwrap();
    assert!(bytes.starts_with(b"\x93NUMPY"));
    // A failing run (shares do not sum to 1) leaves no file behind.
    let out2 = dir.path().join("c2.npy");
    let spec2 = format!("c={}", out2.display());
    let o = run_vadd(&["--split", "0:0.5,1:0.6", "--out", &spec2]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!out2.exists());
}

#[test]
fn verified_split_run_reports_bytes() {
    let o = run_vadd(&["--split", "0:0.86,1:0.14", "--verify", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["verified"], true);
    for key in [
        "bytes_total",
        "bytes_whole_buffers",
        "bytes_exact",
        "wall_ms",
    ] {
        assert!(v[key].is_number(), "{key} in {v}");
    }
    for d in v["devices"].as_array().unwrap() {
        for key in [
            "index",
            "name",
            "work_groups",
            "bytes_to_device",
            "bytes_from_device",
            "kernel_ms",
        ] {
            assert!(!d[key].is_null(), "{key} in {d}");
        }
    }
}

/// A buffer of structs is written with the struct's fields as numpy's
/// structured dtype (the analysis records the layout), and reads back.
#[test]
fn a_struct_buffers_out_file_has_its_fields() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.npy");
    let again = dir.path().join("again.npy");
    let run = |input: &str, to: &std::path::Path| {
        let o = clpart(&[
            "run",
            "kernels/structs/struct_buffer.cl",
            "--global",
            "64",
            "--local",
            "16",
            "--arg",
            input,
            "--arg",
            "d=1.5",
            "--split",
            "0:0.5,1:0.5",
            "--out",
            &format!("p={}", to.display()),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        std::fs::read(to).unwrap()
    };
    let bytes = run("p=zeros:64", &out);
    let text = String::from_utf8_lossy(&bytes);
    assert!(
        text.contains("'descr': [('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ]"),
        "{text}"
    );
    assert!(text.contains("'shape': (64, )"), "{text}");
    // element 0 after the header: x = 1.5, y = z = 0
    let data = &bytes[bytes.len() - 64 * 12..];
    let f = |i: usize| f32::from_le_bytes(data[4 * i..4 * i + 4].try_into().unwrap());
    assert_eq!((f(0), f(1), f(2)), (1.5, 0.0, 0.0));
    // read back as the input: x grows again
    let bytes = run(&format!("p=file:{}", out.display()), &again);
    let data = &bytes[bytes.len() - 64 * 12..];
    let f = |i: usize| f32::from_le_bytes(data[4 * i..4 * i + 4].try_into().unwrap());
    assert_eq!((f(3 * 63), f(3 * 63 + 1)), (3.0, 0.0));
}

/// Without an OpenCL platform (no ICD: the loader finds no vendor file),
/// every subcommand that needs a device says so in one line, with a hint.
#[test]
fn no_device_is_one_line_with_a_hint() {
    let mut run = vec!["run", "kernels/basics/vadd.cl"];
    run.extend_from_slice(VADD_RUN);
    for args in [&["devices"][..], &run] {
        let o = Command::new(env!("CARGO_BIN_EXE_clpart"))
            .args(args)
            .current_dir(root())
            .env("OCL_ICD_VENDORS", "/nonexistent")
            .env_remove("OPENCL_LAYERS")
            .output()
            .expect("clpart runs");
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert_eq!(
            stderr(&o).trim_end(),
            "clpart: error: no OpenCL device found (is an ICD installed? try POCL_DEVICES=\"pthread basic\")",
            "{args:?}"
        );
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

/// A report of the process's first launch says its kernel times may
/// include the driver's compile (PoCL compiles at the first launch);
/// after a warm-up launch, or of a later launch, it does not.
#[test]
fn the_first_launchs_compile_time_is_noted() {
    let note = "note: the process's first launch: a device's kernel time may include its driver compiling the kernel";
    let first = run_vadd(&["--split", "0:0.5,1:0.5"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let text = String::from_utf8_lossy(&first.stdout);
    assert!(text.contains(note), "{text}");
    assert!(text.contains("--warmup 1 leaves that out"), "{text}");
    for later in [&["--warmup", "1"][..], &["--repeat", "2"]] {
        let mut a = vec!["--split", "0:0.5,1:0.5"];
        a.extend_from_slice(later);
        let o = run_vadd(&a);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(!text.contains(note), "{later:?}: {text}");
    }
    // in the JSON report's notes too
    let o = run_vadd(&["--split", "0:0.5,1:0.5", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("the process's first launch")),
        "{v}"
    );
}

/// `--split auto` starts even and then follows the devices'
/// measured kernel times; every launch verifies, the shares sum to 1 and are
/// reported.
/// The first launch with automatic shares (devices not measured
/// yet) runs in two rounds where every device has 16 work-groups or more,
/// verified; warm-up launches measure nothing, so it still does after them.
#[test]
fn a_first_automatic_launch_runs_in_two_rounds_after_unmeasured_warm_ups() {
    let o = clpart(&[
        "run",
        "kernels/basics/vadd.cl",
        "--global",
        "4096",
        "--local",
        "64",
        "--arg",
        "a=rand:4096:1",
        "--arg",
        "b=rand:4096:2",
        "--arg",
        "c=zeros:4096",
        "--split",
        "auto",
        "--warmup",
        "2",
        "--verify",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("verified"), "{out}");
    assert!(
        out.contains("in two rounds: work-groups [0, 8) of 64 at shares 0:0.500,1:0.500"),
        "{out}"
    );
}

#[test]
fn automatic_shares_are_reported_and_verified() {
    let o = clpart(&[
        "run",
        "kernels/linear_algebra/matmul.cl",
        "--global",
        "64,48",
        "--local",
        "16,8",
        "--arg",
        "c=zeros:3072",
        "--arg",
        "a=rand:3072:1",
        "--arg",
        "b=rand:4096:2",
        "--arg",
        "width=64",
        "--split",
        "auto",
        "--repeat",
        "4",
        "--verify",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["verified"], serde_json::json!(true), "{v}");
    let shares = v["shares"].as_array().expect("shares reported");
    assert_eq!(shares.len(), 2, "{v}");
    let sum: f64 = shares.iter().map(|s| s["share"].as_f64().unwrap()).sum();
    assert!((sum - 1.0).abs() < 1e-9, "{v}");
    assert!(
        shares.iter().all(|s| s["share"].as_f64().unwrap() > 0.0),
        "{v}"
    );
    assert_eq!(v["wall_ms_all"].as_array().map(Vec::len), Some(4), "{v}");
    // text form names the shares and the measured rates
    let o = clpart(&[
        "run",
        "kernels/basics/vadd.cl",
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
        "auto",
        "--repeat",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("shares (auto) of the last launch") && out.contains("measured rates"),
        "{out}"
    );
}

/// `--local` takes sizes as `--global` does (16x16), and `clpart
/// run` without `--local` picks a work-group size that divides the global
/// size (not 1); `clpart analyze` exits 1 when nothing can be split.
#[test]
fn local_sizes_like_global_ones_a_useful_default_and_exit_codes() {
    let o = clpart(&[
        "run",
        "kernels/linear_algebra/matmul.cl",
        "--global",
        "64x48",
        "--local",
        "16x8",
        "--arg",
        "c=zeros:3072",
        "--arg",
        "a=rand:3072:1",
        "--arg",
        "b=rand:4096:2",
        "--arg",
        "width=64",
        "--split",
        "0:0.5,1:0.5",
        "--verify",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("global 64x48 local 16x8"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = clpart(&[
        "run",
        "kernels/basics/vadd.cl",
        "--global",
        "1000",
        "--arg",
        "a=rand:1000:3",
        "--arg",
        "b=rand:1000:4",
        "--arg",
        "c=zeros:1000",
        "--verify",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("global 1000 local 50"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = clpart(&[
        "analyze",
        "kernels/linear_algebra/matmul.cl",
        "--local",
        "16x8",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        clpart(&["analyze", "kernels/invalid/uses_goto.cl"])
            .status
            .code(),
        Some(1)
    );
}

/// `--budget-ms` bounds each kernel's analysis: at 1 ms nothing is bounded
/// or counted in time, and the report says so per array, without a panic; a
/// budget that is not a number is an input error.
#[test]
fn the_analysis_budget_falls_back_and_says_why() {
    let o = clpart(&[
        "analyze",
        "--json",
        "--budget-ms",
        "1",
        "kernels/stencils/stencil2d.cl",
    ]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    let text = json.to_string();
    assert!(
        text.contains("analysis time budget (1 ms) exceeded")
            || text.contains("the counting time is spent"),
        "no fallback says why: {text}"
    );
    let full = clpart(&[
        "analyze",
        "--json",
        "--budget-ms",
        "0",
        "kernels/stencils/stencil2d.cl",
    ]);
    assert_eq!(full.status.code(), Some(0), "{}", stderr(&full));
    let full = String::from_utf8_lossy(&full.stdout);
    assert!(!full.contains("budget"), "no budget, no fallback: {full}");
    let bad = clpart(&["analyze", "--budget-ms", "soon", "kernels/basics/vadd.cl"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(
        stderr(&bad).contains("'soon' for '--budget-ms <MS>'"),
        "{}",
        stderr(&bad)
    );
}

/// A kernel that splits only once its local size is known
/// (`out[get_group_id(0)]`) says so, with the size tried, instead of a
/// bare "not splittable"; with `--local` it splits.
#[test]
fn a_kernel_that_needs_its_local_size_says_so() {
    let o = clpart(&[
        "analyze",
        "--no-counts",
        "kernels/work_groups/group_id_write.cl",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert!(
        out.contains("kernel group_id_write (work_dim 1): does not split without its local size (pass --local)"),
        "{out}"
    );
    assert!(
        out.contains("note: splittable once the local size is known (pass --local): with --local 64 it splits along dimension 0"),
        "{out}"
    );
    let o = clpart(&[
        "analyze",
        "--no-counts",
        "--local",
        "64",
        "kernels/work_groups/group_id_write.cl",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(out.contains("splits along dimension 0"), "{out}");
    assert!(!out.contains("splittable once"), "{out}");
    // a kernel no local size helps keeps the bare verdict
    let o = clpart(&["analyze", "--no-counts", "kernels/refused/atomic_ticket.cl"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("): does not split\n"), "{out}");
    // a tile of 16 (`ls0 <= 16` checked at launch): the size tried is 16
    let o = clpart(&[
        "analyze",
        "--no-counts",
        "kernels/work_groups/group_tile.cl",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("note: splittable once the local size is known (pass --local): with --local 16 it splits along dimension 0"),
        "{out}"
    );
}

/// `mul24`/`mad24` on `size_t`, which clang calls ambiguous (it
/// declares them for 32-bit integers only) and other vendors' compilers
/// accept, no longer fail the file: it is parsed again with both as plain
/// arithmetic, the ranges are those of the same kernel written with `*` and
/// `+`, and the range file's build options carry the definitions for the
/// device builds. (PoCL's own headers reject such kernels, so they do not
/// run on this machine's devices, as the application itself would not.)
#[test]
fn mul24_on_size_t_is_analyzed_as_plain_arithmetic() {
    let body = |gy: &str, sub: &str| {
        format!(
            "__kernel void k(__global float *a, __global const float *b, int w)\n{{\n    int gx = get_global_id(0);\n    int gy = {gy};\n    a[{sub}] = b[gy * w + gx] * 2.0f;\n}}\n"
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let with = dir.path().join("with.cl");
    let plain = dir.path().join("plain.cl");
    std::fs::write(
        &with,
        body(
            "mul24(get_group_id(1), get_local_size(1)) + get_local_id(1)",
            "mad24(gy, w, gx)",
        ),
    )
    .unwrap();
    std::fs::write(
        &plain,
        body(
            "get_group_id(1) * get_local_size(1) + get_local_id(1)",
            "gy * w + gx",
        ),
    )
    .unwrap();
    let ranges = |file: &std::path::Path| {
        let o = clpart(&[
            "analyze",
            file.to_str().unwrap(),
            "--local",
            "16,4",
            "--json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["kernels"][0]["splittable"], true, "{v}");
        v["kernels"][0]["arrays"].clone()
    };
    assert_eq!(ranges(&with), ranges(&plain));
    let out = dir.path().join("with.ranges.ron");
    let o = clpart(&[
        "analyze",
        with.to_str().unwrap(),
        "--local",
        "16,4",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("-Dmul24(a,b)=((a)*(b))"), "{text}");
    // Any other error still fails the file, with its place.
    let bad = dir.path().join("bad.cl");
    std::fs::write(
        &bad,
        "int f(int x) { return x; }\nint f(float x) { return 0; }\n__kernel void k(__global int *a) { a[0] = f(1u); }\n",
    )
    .unwrap();
    let o = clpart(&["analyze", bad.to_str().unwrap()]);
    assert_input_error(&o, "bad.cl:2:5");
}

/// Runs clpart with standard output a pipe whose reading end is closed
/// before clpart starts: its first write fails with a broken pipe, as
/// under `clpart ... | head -1` once `head` has gone.
fn into_closed_pipe(args: &[&str], env: &[(&str, &std::path::Path)]) -> Output {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut c = Command::new(env!("CARGO_BIN_EXE_clpart"));
    c.args(args)
        .current_dir(root())
        .env("POCL_DEVICES", "pthread basic")
        .stdout(writer)
        .stderr(std::process::Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("clpart runs")
}

/// A reader of standard output that goes away before the output is
/// written (`clpart analyze k.cl | head -1`) ends every subcommand
/// quietly: exit 0, nothing on standard error (it used to panic with
/// exit 101), in every output form.
#[test]
fn a_closed_pipe_ends_every_subcommand_quietly() {
    let mut run = vec!["run", "kernels/basics/vadd.cl"];
    run.extend_from_slice(VADD_RUN);
    let mut run_json = run.clone();
    run_json.push("--json");
    let runs: [&[&str]; 16] = [
        &["analyze", "kernels/linear_algebra/matmul.cl"],
        &["analyze", "kernels/linear_algebra/matmul.cl", "-v"],
        &["analyze", "kernels/linear_algebra/matmul.cl", "--json"],
        &[
            "analyze",
            "kernels/linear_algebra/matmul.cl",
            "--emit",
            "access",
        ],
        &[
            "analyze",
            "kernels/linear_algebra/matmul.cl",
            "--emit",
            "coarsened",
        ],
        &[
            "analyze",
            "kernels/linear_algebra/matmul.cl",
            "--emit",
            "ranges",
        ],
        &["analyze", "kernels/basics/vadd.cl", "--at", "gs0=64,ls0=8"],
        &run,
        &run_json,
        &["steps", "kernels/iterative/jacobi1d.ron"],
        &["steps", "kernels/iterative/jacobi1d.ron", "--json"],
        &["devices"],
        &["devices", "--json"],
        &["completions", "bash"],
        &["completions", "zsh"],
        &["man"],
    ];
    for args in runs {
        let out = into_closed_pipe(args, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}

/// `clpart exec`'s standard output is its program's: a program that a
/// closed pipe ends (SIGPIPE, as `echo` into `head` once `head` has gone)
/// ends clpart with the status a shell gives it, 128 + 13, and clpart
/// says nothing about it (a shell does not either).
#[test]
fn a_closed_pipe_ends_exec_as_it_ends_its_program() {
    let layer = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .join("libclpart_layer.so");
    let out = into_closed_pipe(
        &["exec", "--", "sh", "-c", "echo one; echo two"],
        &[("CLPART_LAYER", &layer)],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(128 + 13), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

/// `clpart analyze --launch` analyzes one launch as `clpart run` and
/// `clpart exec` do and says what that launch does: ADI's last-row update,
/// whose parametric ranges need a launch-time assumption, is specialized
/// on the launch's values and splits; the table is printed at them.
#[test]
fn analyze_at_one_launch_says_what_that_launch_does() {
    let out = clpart(&[
        "analyze",
        "tests/apps/adi/kernel.cl",
        "--kernel",
        "adi_col_last",
        "--launch",
        "gs=512",
        "ls=64",
        "n=512",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}{}", text, stderr(&out));
    assert!(text.contains("note: this launch splits"), "{text}");
    assert!(text.contains("specialized n = 512"), "{text}");
    assert!(text.contains("2 slices of 8 work-groups"), "{text}");
    assert!(
        text.contains("x            total            [261632, 262143]"),
        "{text}"
    );
    // the same launch as one quoted word
    let one_word = clpart(&[
        "analyze",
        "tests/apps/adi/kernel.cl",
        "--kernel",
        "adi_col_last",
        "--launch",
        "gs=512 ls=64 n=512",
    ]);
    assert_eq!(String::from_utf8_lossy(&one_word.stdout), text);
    // bad launches: one line each, exit 2
    let adi = ["analyze", "tests/apps/adi/kernel.cl", "--launch"];
    for (launch, needle) in [
        (&["ls=64"][..], "--launch needs the global size"),
        (
            &["gs=512,0"][..],
            "--launch gs=512,0: give 1 to 3 positive integers",
        ),
        (
            &["gs=512", "n"][..],
            "--launch entry 'n' must be NAME=VALUE",
        ),
        (&["gs=512", "ls=8,8"][..], "ls has 2 dimensions, gs 1"),
        (
            &["gs=512"][..],
            "--launch analyzes one kernel: choose it with --kernel",
        ),
    ] {
        let mut a = adi.to_vec();
        a.extend_from_slice(launch);
        assert_input_error(&clpart(&a), needle);
    }
}
