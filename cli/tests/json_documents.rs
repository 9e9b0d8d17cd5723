//! Every JSON document `clpart` writes carries `schema_version`, and its
//! top-level fields are declared here: a field added or removed fails this
//! test until the document's schema version and the list below are updated
//! together. (`clpart exec --report`'s file, written by the layer, is
//! declared in `cli/tests/exec.rs`, beside the programs it runs.)

use clpart_tests::{stderr, workspace_root as root};
use std::collections::BTreeSet;
use std::process::{Command, Output};

fn clpart(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clpart"))
        .args(args)
        .current_dir(root())
        .env("POCL_DEVICES", "pthread basic")
        .output()
        .expect("clpart runs")
}

/// Runs `args`, which must succeed and print one JSON object, and checks
/// its `schema_version` and its top-level field names against `fields`.
fn check_document(args: &[&str], version: u64, fields: &[&str]) {
    let o = clpart(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{args:?}: not JSON: {e}"));
    let object = v
        .as_object()
        .unwrap_or_else(|| panic!("{args:?}: the document is not an object: {v}"));
    assert_eq!(
        object.get("schema_version").and_then(|s| s.as_u64()),
        Some(version),
        "{args:?}: schema_version"
    );
    let got: BTreeSet<&str> = object.keys().map(String::as_str).collect();
    let want: BTreeSet<&str> = fields.iter().copied().collect();
    assert_eq!(
        got,
        want,
        "{args:?}: the top-level fields changed (added: {:?}, removed: {:?}); \
         bump the document's schema_version and update this test",
        got.difference(&want).collect::<Vec<_>>(),
        want.difference(&got).collect::<Vec<_>>()
    );
}

#[test]
fn analyze_json_declares_its_fields() {
    check_document(
        &["analyze", "kernels/basics/vadd.cl", "--json"],
        1,
        &["schema_version", "file", "kernels"],
    );
}

/// The fields of every `clpart run --json` report.
const RUN_FIELDS: &[&str] = &[
    "schema_version",
    "kernel",
    "ndrange",
    "split",
    "splittable",
    "split_dim",
    "reason",
    "devices",
    "bytes_total",
    "bytes_whole_buffers",
    "bytes_exact",
    "wall_ms",
    "host_us",
    "verified",
    "mismatch",
    "notes",
    "guard_fired",
    "analysis_ms",
    "ranges_cached",
];

/// `clpart run` of the shared vadd launch, as JSON.
fn vadd_run() -> Vec<&'static str> {
    let mut a = vec!["run", "kernels/basics/vadd.cl"];
    a.extend_from_slice(clpart_tests::VADD_RUN_ARGS);
    a.push("--json");
    a
}

#[test]
fn run_json_declares_its_fields() {
    let mut args = vadd_run();
    args.extend(["--split", "0:0.5,1:0.5", "--verify"]);
    check_document(&args, 1, RUN_FIELDS);
    // repeated launches add their walls; automatic shares the shares used
    let mut args = vadd_run();
    args.extend(["--split", "auto", "--repeat", "2"]);
    let mut fields = RUN_FIELDS.to_vec();
    fields.extend(["wall_ms_all", "shares"]);
    check_document(&args, 1, &fields);
}

#[test]
fn steps_json_declares_its_fields() {
    check_document(
        &["steps", "kernels/iterative/jacobi1d.ron", "--json"],
        1,
        &[
            "schema_version",
            "file",
            "repeat",
            "n_steps",
            "launches",
            "total",
            "verified",
            "mismatch",
        ],
    );
}

#[test]
fn devices_json_declares_its_fields() {
    check_document(&["devices", "--json"], 1, &["schema_version", "devices"]);
}
