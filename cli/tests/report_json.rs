//! The JSON report of `clpart analyze --json` has the documented
//! fields with the documented types, for every corpus kernel.
//!
//! The schema is the set of structs below, declared here independently of
//! the product's (`cli/src/report.rs`): every field required (an absent
//! value is `null`), no field unknown, each with its JSON type. A report
//! that adds, drops, renames or retypes a field fails to deserialize.

use clpart_tests::workspace_root as root;
use serde::Deserialize;
use std::path::PathBuf;
use std::process::Command;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Report {
    schema_version: u32,
    file: String,
    kernels: Vec<Kernel>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Kernel {
    name: String,
    work_dim: u32,
    splittable: bool,
    reason: Option<String>,
    split_dim: Option<u32>,
    params: Vec<Param>,
    arrays: Vec<Array>,
    assumptions: Vec<Assumption>,
    diagnostics: Vec<Diagnostic>,
    notes: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Param {
    name: String,
    source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Array {
    name: String,
    arg_index: u32,
    mode: Mode,
    status: Status,
    reason: Option<String>,
    elem_type: String,
    elem_size: u32,
    total: Option<Range>,
    slice: Option<Range>,
    read_slice: Option<Range>,
    write_slice: Option<Range>,
    boxes: Option<Boxes>,
    count_total: Option<Count>,
    count_slice: Option<Count>,
    vertices_slice: Option<Vec<Vertex>>,
    write: Option<Write>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Vertex {
    coords: Vec<String>,
    domain: String,
}

#[derive(Deserialize, PartialEq, Eq, Debug)]
#[serde(rename_all = "lowercase")]
enum Mode {
    R,
    W,
    Rw,
}

#[derive(Deserialize, PartialEq, Eq, Debug)]
#[serde(rename_all = "lowercase")]
enum Status {
    Bounded,
    Whole,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Range {
    lower: String,
    upper: String,
    lower_bound: Bound,
    upper_bound: Bound,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Bound {
    form: BoundForm,
    values: Vec<String>,
    conditions: Vec<String>,
}

#[derive(Deserialize, PartialEq, Eq, Debug)]
#[serde(rename_all = "lowercase")]
enum BoundForm {
    Value,
    Min,
    Max,
    Cases,
    Empty,
    Text,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Boxes {
    strides: Vec<String>,
    read: Option<Vec<Range>>,
    write: Option<Vec<Range>>,
    write_exact: bool,
    read_parts: Vec<Vec<Range>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Count {
    terms: Vec<Vec<Chamber>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Chamber {
    domain: String,
    value: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Write {
    disjoint_across_slices: bool,
    fills_hull: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Assumption {
    description: String,
    condition: String,
}

#[derive(Deserialize, PartialEq, Eq, Debug, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum Kind {
    NotSplittable,
    WholeArray,
    MayWrite,
    OverApproximated,
    NoCount,
    Note,
    Unsupported,
    Error,
    Warning,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Diagnostic {
    kind: Kind,
    message: String,
    array: Option<String>,
    file: Option<String>,
    line: Option<u32>,
    column: Option<u32>,
}

/// A bound's typed form: as many values as its form takes, a condition
/// per case, none of it in isl's syntax (every corpus bound is one clpart
/// reads, never `text`).
fn check_bound(what: &str, b: &Bound, bad: &mut Vec<String>) {
    let n = b.values.len();
    let fits = match b.form {
        BoundForm::Value => n == 1 && b.conditions.is_empty(),
        BoundForm::Min | BoundForm::Max => n >= 2 && b.conditions.is_empty(),
        BoundForm::Cases => n >= 2 && b.conditions.len() == n,
        BoundForm::Empty => n == 0 && b.conditions.is_empty(),
        BoundForm::Text => false,
    };
    let isl = b
        .values
        .iter()
        .chain(&b.conditions)
        .any(|t| t.contains("->") || t.contains(['{', '}', '[', ']']));
    if !fits || isl {
        bad.push(format!(
            "{what}: bound {:?} {:?} {:?}",
            b.form, b.values, b.conditions
        ));
    }
}

fn check_range(what: &str, r: &Range, bad: &mut Vec<String>) {
    check_bound(&format!("{what} lower"), &r.lower_bound, bad);
    check_bound(&format!("{what} upper"), &r.upper_bound, bad);
}

/// Checks one report's meaning beyond its types; returns the problems.
fn check(name: &str, r: &Report) -> Vec<String> {
    let mut bad = Vec::new();
    if r.schema_version != 1 {
        bad.push(format!("{name}: schema_version {}", r.schema_version));
    }
    for k in &r.kernels {
        if k.splittable == k.reason.is_some() {
            bad.push(format!(
                "{name}/{}: splittable {} but reason {:?}",
                k.name, k.splittable, k.reason
            ));
        }
        if !k.splittable
            && !k
                .diagnostics
                .iter()
                .any(|d| d.kind == Kind::NotSplittable || d.kind == Kind::Unsupported)
        {
            bad.push(format!(
                "{name}/{}: refused without a not_splittable diagnostic",
                k.name
            ));
        }
        for a in &k.arrays {
            let what = format!("{name}/{}: array {}", k.name, a.name);
            for r in [&a.total, &a.slice, &a.read_slice, &a.write_slice]
                .into_iter()
                .flatten()
            {
                check_range(&what, r, &mut bad);
            }
            if let Some(b) = &a.boxes {
                for r in b.read.iter().chain(&b.write).chain(&b.read_parts).flatten() {
                    check_range(&what, r, &mut bad);
                }
            }
            let whole = a.status == Status::Whole;
            if whole != a.reason.is_some() {
                bad.push(format!(
                    "{name}/{}: array {} status {:?} with reason {:?}",
                    k.name, a.name, a.status, a.reason
                ));
            }
            let fallback = k
                .diagnostics
                .iter()
                .any(|d| d.kind == Kind::WholeArray && d.array.as_deref() == Some(&a.name));
            if whole != fallback {
                bad.push(format!(
                    "{name}/{}: array {} whole {whole} but whole_array diagnostic {fallback}",
                    k.name, a.name
                ));
            }
            if let Some(b) = &a.boxes {
                // one stride only for a 1-D array's read runs
                let runs_1d = b.strides.len() == 1 && !b.read_parts.is_empty() && b.write.is_none();
                if (b.strides.len() < 2 && !runs_1d)
                    || b.strides.last().map(String::as_str) != Some("1")
                {
                    bad.push(format!(
                        "{name}/{}: array {} strides {:?}",
                        k.name, a.name, b.strides
                    ));
                }
                // read parts come two or more, each over every dimension
                if b.read_parts.len() == 1
                    || b.read_parts.iter().any(|p| p.len() != b.strides.len())
                {
                    bad.push(format!(
                        "{name}/{}: array {} read parts {:?}",
                        k.name,
                        a.name,
                        b.read_parts.iter().map(Vec::len).collect::<Vec<_>>()
                    ));
                }
            }
        }
        for d in &k.diagnostics {
            let located = [d.file.is_some(), d.line.is_some(), d.column.is_some()];
            if located.iter().any(|x| *x) && !located.iter().all(|x| *x) {
                bad.push(format!(
                    "{name}/{}: partial location in {:?}",
                    k.name, d.message
                ));
            }
            if let (Some(f), Some(l)) = (&d.file, d.line) {
                let lines = std::fs::read_to_string(root().join(f))
                    .map(|t| t.lines().count())
                    .unwrap_or(0);
                if l == 0 || l as usize > lines {
                    bad.push(format!(
                        "{name}/{}: location {f}:{l} is not a line of the file",
                        k.name
                    ));
                }
            }
            if d.message.contains(".cl:") && d.file.is_none() {
                bad.push(format!(
                    "{name}/{}: message names a location but has none: {:?}",
                    k.name, d.message
                ));
            }
        }
    }
    bad
}

/// Every corpus kernel, through the binary: `clpart analyze FILE --json`
/// (counts left out: they take the longest and are typed by the golden
/// range-file test below).
#[test]
fn every_corpus_kernels_json_report_has_the_documented_fields_and_types() {
    let files: Vec<PathBuf> = clpart_tests::corpus_files(&root().join("kernels"));
    assert!(files.len() > 20, "the corpus");
    let mut bad = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(root()).unwrap().display().to_string();
        let o = Command::new(env!("CARGO_BIN_EXE_clpart"))
            .args(["analyze", &rel, "--json", "--no-counts"])
            .current_dir(root())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{rel}: exit {:?}: {stderr}",
            o.status.code()
        );
        match serde_json::from_slice::<Report>(&o.stdout) {
            Ok(r) => {
                assert_eq!(r.file, rel);
                assert_eq!(
                    o.status.code() == Some(0),
                    r.kernels.iter().any(|k| k.splittable),
                    "{rel}: exit code and verdicts"
                );
                bad.extend(check(&rel, &r));
            }
            Err(e) => bad.push(format!("{rel}: {e}")),
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The counts' types, from the golden range files (barvinok's counts).
#[test]
fn reports_of_the_golden_range_files_have_the_documented_fields_and_types() {
    let dir = root().join("kernels/golden");
    let mut n = 0;
    let mut bad = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".ranges.ron"))
        .collect();
    files.sort();
    for p in files {
        let rf = ranges_format::RangeFile::read(&p).unwrap();
        let report = clpart_cli::report::report(&rf.source_name, &rf, None);
        let text = serde_json::to_string(&report).unwrap();
        match serde_json::from_str::<Report>(&text) {
            Ok(r) => bad.extend(check(&rf.source_name, &r)),
            Err(e) => bad.push(format!("{}: {e}", p.display())),
        }
        n += report
            .kernels
            .iter()
            .flat_map(|k| &k.arrays)
            .filter(|a| a.count_slice.is_some())
            .count();
    }
    assert!(n > 20, "the goldens have counts");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A refusal names its location; a fallback too.
#[test]
fn refusals_and_fallbacks_carry_their_locations() {
    let run = |f: &str| -> Report {
        let o = Command::new(env!("CARGO_BIN_EXE_clpart"))
            .args(["analyze", f, "--json", "--no-counts"])
            .current_dir(root())
            .output()
            .unwrap();
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let r = run("kernels/linearized/bitonic_merge.cl");
    let d = r.kernels[0]
        .diagnostics
        .iter()
        .find(|d| d.kind == Kind::NotSplittable)
        .expect("a refusal");
    assert_eq!(
        (d.file.as_deref(), d.line, d.column, d.array.as_deref()),
        (
            Some("kernels/linearized/bitonic_merge.cl"),
            Some(15),
            Some(13),
            Some("data")
        )
    );
    let r = run("kernels/indirect/gather.cl");
    let d = r.kernels[0]
        .diagnostics
        .iter()
        .find(|d| d.kind == Kind::WholeArray)
        .expect("a fallback");
    assert_eq!(
        (d.file.as_deref(), d.line, d.column, d.array.as_deref()),
        (
            Some("kernels/indirect/gather.cl"),
            Some(10),
            Some(12),
            Some("a")
        )
    );
    assert!(
        d.message.contains("whole array is transferred"),
        "{}",
        d.message
    );
}

/// Histogram's bound in the JSON report: the same minimum the human
/// report prints, as typed fields.
#[test]
fn bounds_are_typed_as_the_human_report_reads_them() {
    let o = Command::new(env!("CARGO_BIN_EXE_clpart"))
        .args([
            "analyze",
            "kernels/atomics/histogram.cl",
            "--json",
            "--no-counts",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let data = &v["kernels"][0]["arrays"][0];
    assert_eq!(data["name"], "data", "{data}");
    assert_eq!(
        data["total"]["upper_bound"],
        serde_json::json!({"form": "min", "values": ["gs0 + go0 - 1", "n - 1"], "conditions": []}),
        "{data}"
    );
    assert_eq!(
        data["total"]["lower_bound"],
        serde_json::json!({"form": "value", "values": ["go0"], "conditions": []}),
        "{data}"
    );
}
