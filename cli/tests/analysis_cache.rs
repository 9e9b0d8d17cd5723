//! The persistent analysis cache (`session::cache`) through `clpart run`:
//! a second run of the same launch reads the entry the first wrote, with
//! the same result, verified; a change of source, `-D` or local size
//! misses; a corrupt, truncated or foreign entry is ignored and replaced;
//! `CLPART_CACHE=0` writes nothing; an unwritable cache never fails a run.

use clpart_tests::workspace_root as root;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const MATMUL: &[&str] = &[
    "--global",
    "64,48",
    "--arg",
    "c=zeros:3072",
    "--arg",
    "a=rand:3072:1",
    "--arg",
    "b=rand:4096:2",
];

/// `clpart run FILE MATMUL-ARGS EXTRA --verify --json` with `env`; the
/// local size 16,8 and `width=64` unless `extra` gives them.
fn run(file: &Path, extra: &[&str], env: &[(&str, &Path)], off: bool) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_clpart"));
    cmd.arg("run").arg(file).args(MATMUL).args(extra);
    if !extra.contains(&"--local") {
        cmd.args(["--local", "16,8"]);
    }
    if !extra.iter().any(|a| a.starts_with("width=")) {
        cmd.args(["--arg", "width=64"]);
    }
    cmd.args(["--verify", "--json"])
        .current_dir(root())
        .env("POCL_DEVICES", "pthread basic")
        .env_remove("CLPART_CACHE")
        .env_remove("CLPART_CACHE_DIR");
    if off {
        cmd.env("CLPART_CACHE", "0");
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("clpart runs")
}

/// The JSON report of a run that verified.
fn verified(o: &Output) -> serde_json::Value {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "stderr: {err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json report");
    assert_eq!(v["verified"], serde_json::json!(true), "{v}");
    v
}

fn cached(v: &serde_json::Value) -> bool {
    v["ranges_cached"].as_bool().expect("ranges_cached")
}

/// What a run's result is, apart from timings: the split and each
/// device's slice and bytes.
fn result(v: &serde_json::Value) -> String {
    let devices: Vec<_> = v["devices"]
        .as_array()
        .expect("devices")
        .iter()
        .map(|d| {
            (
                d["slice"].clone(),
                d["bytes_to_device"].clone(),
                d["bytes_from_device"].clone(),
            )
        })
        .collect();
    format!(
        "{} {} {:?} {} {} {}",
        v["split"], v["split_dim"], devices, v["bytes_total"], v["bytes_exact"], v["notes"]
    )
}

/// The analysis entries in `dir` (not the built programs' folder).
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| !p.ends_with("programs") && !p.ends_with("locks"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

fn matmul() -> PathBuf {
    root().join("kernels/linear_algebra/matmul.cl")
}

#[test]
fn second_run_reads_the_entry_with_the_same_verified_result() {
    let dir = tempdir();
    let env = [("CLPART_CACHE_DIR", dir.path())];
    let first = verified(&run(&matmul(), &[], &env, false));
    assert!(!cached(&first), "an empty cache holds nothing");
    let files = entries(dir.path());
    assert_eq!(files.len(), 1, "one entry: {files:?}");
    assert!(files[0].extension().is_some_and(|e| e == "ron"));
    let entry = std::fs::read(&files[0]).unwrap();
    let second = verified(&run(&matmul(), &[], &env, false));
    assert!(cached(&second), "the second run reads the entry");
    assert_eq!(result(&first), result(&second));
    assert_eq!(entries(dir.path()), files, "no new entry");
    assert_eq!(
        std::fs::read(&files[0]).unwrap(),
        entry,
        "the entry is not rewritten"
    );
}

#[test]
fn changed_source_define_or_local_size_misses() {
    let dir = tempdir();
    let env = [("CLPART_CACHE_DIR", dir.path())];
    let src = tempdir();
    let copy = src.path().join("matmul.cl");
    let text = std::fs::read_to_string(matmul()).unwrap();
    std::fs::write(&copy, &text).unwrap();
    assert!(!cached(&verified(&run(&copy, &[], &env, false))));
    assert!(cached(&verified(&run(&copy, &[], &env, false))));
    // The source, changed in a comment only.
    std::fs::write(&copy, format!("{text}\n// edited\n")).unwrap();
    assert!(!cached(&verified(&run(&copy, &[], &env, false))));
    // A build option.
    assert!(!cached(&verified(&run(
        &copy,
        &["-D", "UNUSED=1"],
        &env,
        false
    ))));
    assert!(cached(&verified(&run(
        &copy,
        &["-D", "UNUSED=1"],
        &env,
        false
    ))));
    // The local size.
    assert!(!cached(&verified(&run(
        &copy,
        &["--local", "8,8"],
        &env,
        false
    ))));
    // The scalar arguments the analysis may specialize on.
    assert!(!cached(&verified(&run(
        &copy,
        &["--arg", "width=63"],
        &env,
        false
    ))));
    assert_eq!(entries(dir.path()).len(), 5, "{:?}", entries(dir.path()));
}

#[test]
fn corrupt_truncated_or_foreign_entries_are_ignored_and_replaced() {
    let dir = tempdir();
    let env = [("CLPART_CACHE_DIR", dir.path())];
    let first = verified(&run(&matmul(), &[], &env, false));
    let files = entries(dir.path());
    assert_eq!(files.len(), 1);
    let entry = files[0].clone();
    let good = std::fs::read(&entry).unwrap();
    // A valid range file, for another source.
    let other = tempdir();
    verified(&run(
        &matmul(),
        &["-D", "OTHER=1"],
        &[("CLPART_CACHE_DIR", other.path())],
        false,
    ));
    let foreign = std::fs::read(&entries(other.path())[0]).unwrap();
    assert_ne!(foreign, good);
    let bad: [(&str, Vec<u8>); 4] = [
        ("garbage", vec![0xff, 0x00, 0x13, 0x37, b'(', b'\n']),
        ("truncated", good[..good.len() / 2].to_vec()),
        ("empty", Vec::new()),
        ("foreign", foreign),
    ];
    for (what, bytes) in bad {
        std::fs::write(&entry, &bytes).unwrap();
        let v = verified(&run(&matmul(), &[], &env, false));
        assert!(!cached(&v), "{what}: the entry is not used");
        assert_eq!(result(&v), result(&first), "{what}");
        assert_eq!(
            std::fs::read(&entry).unwrap(),
            good,
            "{what}: the entry is replaced"
        );
        assert!(
            cached(&verified(&run(&matmul(), &[], &env, false))),
            "{what}"
        );
    }
}

#[test]
fn cache_off_writes_nothing() {
    let dir = tempdir();
    let env = [("CLPART_CACHE_DIR", dir.path())];
    for _ in 0..2 {
        let v = verified(&run(&matmul(), &[], &env, true));
        assert!(!cached(&v));
    }
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
}

#[test]
fn the_default_folder_is_under_xdg_cache_home_then_home() {
    let xdg = tempdir();
    verified(&run(
        &matmul(),
        &[],
        &[("XDG_CACHE_HOME", xdg.path())],
        false,
    ));
    assert_eq!(entries(&xdg.path().join("clpart/analysis")).len(), 1);
    let home = tempdir();
    let mut cmd_env = vec![("HOME", home.path())];
    // An empty XDG_CACHE_HOME counts as unset.
    let empty = Path::new("");
    cmd_env.push(("XDG_CACHE_HOME", empty));
    verified(&run(&matmul(), &[], &cmd_env, false));
    assert_eq!(
        entries(&home.path().join(".cache/clpart/analysis")).len(),
        1
    );
}

#[test]
fn an_unwritable_cache_does_not_fail_the_run() {
    let dir = tempdir();
    // A file where the folder should be: nothing can be made inside it.
    let file = dir.path().join("not-a-folder");
    std::fs::write(&file, b"x").unwrap();
    let v = verified(&run(&matmul(), &[], &[("CLPART_CACHE_DIR", &file)], false));
    assert!(!cached(&v));
    let v = verified(&run(
        &matmul(),
        &[],
        &[("CLPART_CACHE_DIR", &file.join("sub"))],
        false,
    ));
    assert!(!cached(&v));
    assert_eq!(std::fs::read(&file).unwrap(), b"x");
    // A read-only folder (unless the tests run as root, who may write anyway).
    use std::os::unix::fs::PermissionsExt as _;
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let v = verified(&run(&matmul(), &[], &[("CLPART_CACHE_DIR", &ro)], false));
    assert!(!cached(&v));
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The names of the folders (at any depth) under `dir` that start with
/// `prefix`.
fn folders_named(dir: &Path, prefix: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.path().is_dir() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with(prefix) {
                    found.push(name);
                }
                todo.push(e.path());
            }
        }
    }
    found.sort();
    found
}

/// `clpart analyze-request` (what the OpenCL layer asks for an analysis)
/// answers, keeps the entry, and then, its outputs closed, launches the
/// subkernel on each device once at offset zero and once beside it: PoCL
/// compiles its work-group functions then, into its cache, instead of at
/// the next run's first split launch. Both in the answer's process and
/// in one left for several requests (`--ahead`).
#[test]
fn an_answered_request_leaves_the_driver_warm() {
    use std::io::Write;
    let request = ranges_format::AnalysisRequest {
        file: "matmul.cl".into(),
        source: std::fs::read_to_string(matmul()).unwrap(),
        build_options: Vec::new(),
        kernel: "matmul".into(),
        work_dim: 2,
        local: vec![16, 8],
        only: Default::default(),
        launch_local: vec![16, 8],
    };
    for ahead in [false, true] {
        let (cache, driver) = (tempdir(), tempdir());
        let text = if ahead {
            ranges_format::AnalysisRequest::list_to_text(std::slice::from_ref(&request))
        } else {
            request.to_text()
        }
        .unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_clpart"))
            .arg("analyze-request")
            .args(ahead.then_some("--ahead"))
            .env("POCL_DEVICES", "pthread basic")
            .env("CLPART_CACHE_DIR", cache.path())
            .env("POCL_CACHE_DIR", driver.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("clpart runs");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        if !ahead {
            let file =
                ranges_format::RangeFile::from_ron_str(&String::from_utf8_lossy(&out.stdout))
                    .expect("the answer is a range file");
            assert!(file.kernels[0].splittable);
        }
        assert!(
            entries(cache.path())
                .iter()
                .any(|p| p.extension().is_some_and(|e| e == "ron")),
            "the entry is kept"
        );
        // two devices, each at offset zero and beside it
        let warmed = folders_named(driver.path(), "16-8-1");
        assert_eq!(
            warmed.iter().filter(|n| n.contains("goffs0")).count(),
            2,
            "{warmed:?}"
        );
        assert_eq!(
            warmed.iter().filter(|n| !n.contains("goffs0")).count(),
            2,
            "{warmed:?}"
        );
    }
}
