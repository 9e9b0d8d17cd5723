//! `clpart exec` over the host programs of `tests/apps/`: each is built
//! with gcc against the ICD loader, run unmodified under the layer on two
//! PoCL devices at 50/50 and 86/14; its own check must pass (0 mismatches,
//! exit 0) and the report must show its splittable kernels split and its
//! unsplittable one passed through with the reason. Iterative programs
//! keep their buffers on clpart's devices: the report shows the
//! application's buffers crossing once each way per run and halos per
//! step. What clpart moves is within 1.25 times each program's resident
//! model, replayed from the report's launch log ([`layer_model`]).

mod layer_model;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The layer cargo built for this test run (a dev-dependency: it lands in
/// `target/<profile>/deps`, beside the test binary).
fn layer() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let p = exe.parent().unwrap().join("libclpart_layer.so");
    assert!(
        p.is_file(),
        "{} is missing: cargo builds it as a dev-dependency of clpart",
        p.display()
    );
    p
}

/// The programs built once per test run, in a temporary folder.
fn built() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        for app in APPS.iter().map(|a| a.name).chain([
            "histogram",
            "misuse",
            "native_image",
            "user_event",
            "passthrough",
            "adi",
            "jacobi1d",
        ]) {
            let src = repo().join("tests/apps").join(app);
            let out = Command::new("gcc")
                .args([
                    "-O1",
                    "-std=c99",
                    "-Wall",
                    "-DCL_TARGET_OPENCL_VERSION=120",
                    "-Wno-deprecated-declarations",
                    "-o",
                ])
                .arg(dir.path().join(app))
                .arg(src.join("main.c"))
                .args(["-lOpenCL", "-lm"])
                .output()
                .expect("gcc runs");
            assert!(
                out.status.success(),
                "gcc {app}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        dir
    })
    .path()
}

/// Runs `tests/apps/<app>` under `clpart exec` with these extra options,
/// in its own folder (it reads `kernel.cl` from there).
fn exec(app: &str, options: &[&str], report: Option<&Path>, args: &[&str]) -> Output {
    exec_on("pthread basic", app, options, report, args)
}

/// [`exec`] on the PoCL devices `devices` (the application gets the first
/// one PoCL lists), killed after two minutes (exit code 124: a hang).
fn exec_on(
    devices: &str,
    app: &str,
    options: &[&str],
    report: Option<&Path>,
    args: &[&str],
) -> Output {
    let mut c = Command::new("timeout");
    c.arg("120").arg(env!("CARGO_BIN_EXE_clpart"));
    c.arg("exec").arg("--wait-for-analysis").args(options);
    if let Some(r) = report {
        c.arg("--report").arg(r);
    }
    c.arg("--")
        .arg(built().join(app))
        .args(args)
        .current_dir(repo().join("tests/apps").join(app))
        .env("POCL_DEVICES", devices)
        .env("CLPART_LAYER", layer())
        .env_remove("OPENCL_LAYERS");
    // automatic shares start from what earlier runs of the program
    // measured (the cache's `history/`): each run here starts afresh
    let fresh = tempfile::tempdir().unwrap();
    let fixed =
        options.contains(&"--split") && !options.windows(2).any(|w| w == ["--split", "auto"]);
    if !fixed {
        c.env("CLPART_CACHE_DIR", fresh.path())
            .env_remove("CLPART_CACHE");
    }
    c.output().unwrap()
}

struct App {
    name: &'static str,
    args: &'static [&'static str],
    /// Kernels that must split at every launch, with their launch counts.
    kernels: &'static [(&'static str, u64)],
}

const APPS: &[App] = &[
    App {
        name: "vadd",
        args: &[],
        kernels: &[("vadd", 1)],
    },
    App {
        name: "gemm",
        args: &["100", "90", "70"],
        kernels: &[("gemm", 1)],
    },
    App {
        name: "2mm",
        args: &[],
        kernels: &[("mm", 2)],
    },
    App {
        name: "jacobi2d",
        args: &["96", "8"],
        kernels: &[("jacobi2d", 8)],
    },
    App {
        name: "fdtd2d",
        args: &["64", "80", "4"],
        kernels: &[("fdtd_ey", 4), ("fdtd_ex", 4), ("fdtd_hz", 4)],
    },
    // lu_scale's `a[k*n + j]` delinearizes with the stride n (not k), so
    // its launch-time assumption holds and it splits too.
    App {
        name: "lu",
        args: &["16"],
        kernels: &[("lu_scale", 15), ("lu_update", 15)],
    },
    App {
        name: "correlation",
        args: &[],
        kernels: &[
            ("corr_mean", 1),
            ("corr_std", 1),
            ("corr_reduce", 1),
            ("corr_corr", 1),
        ],
    },
    App {
        name: "matmul_tiled",
        args: &[],
        kernels: &[("matmul_tiled", 1)],
    },
    App {
        name: "scale_map",
        args: &[],
        kernels: &[("scale", 3)],
    },
    App {
        name: "events",
        args: &[],
        kernels: &[("saxpy", 1), ("square", 1)],
    },
    // Resident buffers read and written by the driver between split
    // launches (negate_above, with atomics, goes to the driver).
    App {
        name: "resident",
        args: &[],
        kernels: &[("axpb", 9), ("neighbor", 1), ("scale4", 1)],
    },
    // Buffers migrated to the host and to the device between
    // split launches, and one given up (contents undefined) and rewritten,
    // whole and through a sub-buffer.
    App {
        name: "migrate",
        args: &[],
        kernels: &[("axpb", 8), ("neighbor", 2)],
    },
    // An out-of-order queue, the program's commands ordered by
    // its events only; the layer's syncs are followed by a barrier there
    // (PoCL 3.1 ran this program correctly without the barrier too).
    App {
        name: "out_of_order",
        args: &[],
        kernels: &[("axpb", 9), ("neighbor", 3)],
    },
];

fn report(path: &Path) -> serde_json::Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("report {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn kernel<'a>(r: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    r["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == name)
        .unwrap_or_else(|| panic!("kernel '{name}' is not in the report: {r}"))
}

/// Asserts that a program under `clpart exec` exited 0 and that its own
/// check found no mismatch; `what` names the run in the failure message.
fn assert_own_check_passes(out: &Output, what: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(": 0 mismatches"),
        "{what}: {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

fn check_splits(split: &str) {
    let tmp = tempfile::tempdir().unwrap();
    for app in APPS {
        let path = tmp.path().join(format!("{}.json", app.name));
        let out = exec(app.name, &["--split", split], Some(&path), app.args);
        assert_own_check_passes(&out, &format!("{} at {split}", app.name));
        let r = report(&path);
        for &(name, launches) in app.kernels {
            let k = kernel(&r, name);
            assert_eq!(k["launches"], launches, "{}: {k}", app.name);
            if split == "auto" {
                // the balancer's first launches split (the first, which
                // loads the subkernels, and one measured at least);
                // launches measured faster on the application's device
                // run there
                let n = k["split_launches"].as_u64().unwrap();
                assert!(n >= launches.min(2), "{}: {k}", app.name);
                // every other launch ran at home, and says so
                let mut home = 0;
                for (why, count) in k["reasons"].as_object().into_iter().flatten() {
                    assert!(
                        why.starts_with("runs on the application's device: measured faster"),
                        "{}: {k}",
                        app.name
                    );
                    home += count.as_u64().unwrap();
                }
                assert_eq!(n + home, launches, "{}: {k}", app.name);
            } else {
                assert_eq!(k["split_launches"], launches, "{}: {k}", app.name);
                assert!(k.get("reason").is_none(), "{}: {k}", app.name);
                assert!(k.get("reasons").is_none(), "{}: {k}", app.name);
            }
            // one analysis serves every launch (scalars such as a time step
            // change between them)
            assert_eq!(k["analyses"], 1, "{}: {k}", app.name);
        }
        let moved: u64 = r["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| {
                k["bytes_to_devices"].as_u64().unwrap() + k["bytes_from_devices"].as_u64().unwrap()
            })
            .sum();
        assert_eq!(
            r["bytes_total"].as_u64().unwrap(),
            moved,
            "{}: {r}",
            app.name
        );
        // Each device gets only its slice's ranges: less than whole buffers.
        // With automatic shares, a share change moves the elements that
        // change owner, twice (through the host): at most twice as much.
        let whole = r["bytes_whole_buffers"].as_u64().unwrap();
        let limit = if split == "auto" { 2 * whole } else { whole };
        assert!(moved < limit, "{}: {r}", app.name);
        assert_eq!(
            r["bytes_app_sync"].as_u64().unwrap(),
            r["bytes_app_sync_in"].as_u64().unwrap() + r["bytes_app_sync_out"].as_u64().unwrap(),
            "{}: {r}",
            app.name
        );
        assert!(r.get("app_sync_errors").is_none(), "{}: {r}", app.name);
    }
}

fn count(r: &serde_json::Value, field: &str) -> u64 {
    r[field]
        .as_u64()
        .unwrap_or_else(|| panic!("no '{field}' in the report: {r}"))
}

/// The buffers of an iterative program stay on clpart's devices
/// from launch to launch. Over the whole run, each array crosses from the
/// application's device to the host once (its first launch) and back once
/// (when the program reads it: the part split launches wrote), however
/// many steps; each further step
/// moves only halos between clpart's devices.
#[test]
fn iterative_programs_move_halos_per_step_not_arrays() {
    struct Case {
        app: &'static str,
        /// Arguments for `steps` and for twice as many.
        args: [&'static [&'static str]; 2],
        steps: u64,
        /// Arrays its kernels use, and those the program reads at the end.
        n_arrays: u64,
        n_read: u64,
        array_bytes: u64,
        row_bytes: u64,
    }
    let cases = [
        Case {
            app: "jacobi2d",
            args: [&["96", "8"], &["96", "16"]],
            steps: 8,
            n_arrays: 2,
            n_read: 1,
            array_bytes: 96 * 96 * 4,
            row_bytes: 96 * 4,
        },
        Case {
            app: "fdtd2d",
            args: [&["64", "80", "4"], &["64", "80", "8"]],
            steps: 4,
            n_arrays: 3,
            n_read: 3,
            array_bytes: 64 * 80 * 4,
            row_bytes: 80 * 4,
        },
    ];
    let tmp = tempfile::tempdir().unwrap();
    for c in &cases {
        let mut launcher_bytes = Vec::new();
        for (run, args) in c.args.iter().enumerate() {
            let path = tmp.path().join(format!("{}-{run}.json", c.app));
            let out = exec(c.app, &["--split", "0:0.5,1:0.5"], Some(&path), args);
            assert_own_check_passes(&out, &format!("{} {args:?}", c.app));
            let r = report(&path);
            let what = format!("{} {args:?}: {r}", c.app);
            assert_eq!(count(&r, "n_app_syncs_in"), c.n_arrays, "{what}");
            assert_eq!(
                count(&r, "bytes_app_sync_in"),
                c.n_arrays * c.array_bytes,
                "{what}"
            );
            assert_eq!(count(&r, "n_app_syncs_out"), c.n_read, "{what}");
            // back: what the split launches wrote, at most the arrays and
            // at least their interiors (a stencil leaves a border as it was)
            let out = count(&r, "bytes_app_sync_out");
            assert!(
                out <= c.n_read * c.array_bytes
                    && out >= c.n_read * (c.array_bytes - 2 * c.row_bytes - 8),
                "{what}"
            );
            assert!(
                count(&r, "bytes_gathered") <= c.n_read * c.array_bytes,
                "{what}"
            );
            launcher_bytes.push(count(&r, "bytes_total"));
        }
        // The steps of the second run beyond the first's: halos only (a
        // handful of rows), where whole buffers used to cross every step.
        let per_step = (launcher_bytes[1] - launcher_bytes[0]) / c.steps;
        assert!(
            per_step > 0 && per_step <= 8 * c.row_bytes,
            "{}: {per_step} bytes per step between clpart's devices ({launcher_bytes:?})",
            c.app
        );
    }
}

/// At 50/50 and 86/14 on "pthread basic", what
/// program `name` of [`APPS`] makes clpart move (`bytes_total` +
/// `bytes_gathered`) is within `limit` times its resident model
/// ([`layer_model`], replayed from the report's launch log): 1.25, the
/// issue's target, but for the two programs that miss it (see their tests);
/// a miss names the ratio and the bytes per kernel and the launches over
/// the model. Every kernel of these programs accesses memory by the NDRange
/// and its scalars only, which the model needs (read off their sources).
fn check_resident_model(name: &str, limit: f64) {
    let app = APPS
        .iter()
        .find(|a| a.name == name)
        .unwrap_or_else(|| panic!("'{name}' is not in APPS"));
    let tmp = tempfile::tempdir().unwrap();
    let mut misses = Vec::new();
    for split in ["0:0.5,1:0.5", "0:0.86,1:0.14"] {
        let path = tmp.path().join("r.json");
        let out = exec(
            app.name,
            &["--split", split, "--report-launches"],
            Some(&path),
            app.args,
        );
        assert_own_check_passes(&out, &format!("{} at {split}", app.name));
        let r = report(&path);
        let c = layer_model::compare(&r)
            .unwrap_or_else(|e| panic!("{} at {split}: no model: {e}", app.name));
        let n_split: u64 = app.kernels.iter().map(|k| k.1).sum();
        assert!(
            c.n_launches as u64 >= n_split,
            "{} at {split}: {} launches logged, {n_split} split",
            app.name,
            c.n_launches
        );
        let line = format!(
            "{} at {split}: moved {} B, model {} B: {:.3}x",
            app.name,
            c.moved,
            c.model,
            c.ratio()
        );
        eprintln!("{line}");
        if c.ratio() > limit {
            misses.push(format!("{line} (limit {limit}x)\n{}", c.per_kernel_text()));
        }
    }
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}

/// One test per program of [`APPS`] (a miss of one does not hide another's).
macro_rules! resident_model_tests {
    ($($(#[$doc:meta])* $test:ident: $app:literal $(within $limit:literal)?,)*) => {
        $(
            $(#[$doc])*
            #[test]
            fn $test() {
                check_resident_model($app, [$($limit)?].first().copied().unwrap_or(1.25));
            }
        )*

        #[test]
        fn every_program_has_a_resident_model_test() {
            let tested = [$($app),*];
            for app in APPS {
                assert!(tested.contains(&app.name), "no resident model test for '{}'", app.name);
            }
        }
    };
}

resident_model_tests! {
    vadd_moves_within_1_25x_of_its_resident_model: "vadd",
    gemm_moves_within_1_25x_of_its_resident_model: "gemm",
    two_matrix_products_move_within_1_25x_of_their_resident_model: "2mm",
    jacobi2d_moves_within_1_25x_of_its_resident_model: "jacobi2d",
    fdtd2d_moves_within_1_25x_of_its_resident_model: "fdtd2d",
    /// 1.26x at 50/50 until 2026-11-28, when the cost model bridged the
    /// small gaps between the runs a device lacks to save commands
    /// (`lu_scale` sent row k from the pivot to the slice's end); the
    /// cost model now moves at most 5 % more than a set
    /// (`launcher::MAX_EXTRA_PERCENT`).
    lu_moves_within_1_25x_of_its_resident_model: "lu",
    correlation_moves_within_1_25x_of_its_resident_model: "correlation",
    matmul_tiled_moves_within_1_25x_of_its_resident_model: "matmul_tiled",
    scale_map_moves_within_1_25x_of_its_resident_model: "scale_map",
    events_moves_within_1_25x_of_its_resident_model: "events",
    /// `scale4` sees `x` as float4 between launches that see it as float:
    /// clpart's copy is seen with the new elements in place
    /// (`launcher::DeviceBuffer::retype`), each device keeping its half
    /// (1.43x before, when the copy was gathered whole and sent again).
    resident_moves_within_1_25x_of_its_resident_model: "resident",
    migrate_moves_within_1_25x_of_its_resident_model: "migrate",
    out_of_order_moves_within_1_25x_of_its_resident_model: "out_of_order",
}

/// The model itself on a log written by hand: vadd split in two, its two
/// inputs sent to each device's half, the output gathered for the
/// application's read; a second launch with `n` halved reads and writes
/// only the first device's half, whose inputs are there already.
#[test]
fn the_resident_model_counts_reads_lacked_and_the_read_back() {
    let source = std::fs::read_to_string(repo().join("tests/apps/vadd/kernel.cl")).unwrap();
    let buf = |id: u64| serde_json::json!({"kind": "buffer", "buffer": id, "bytes": 4096, "elem_size": 4, "resident": true});
    let launch = |n: i32| {
        serde_json::json!({"event": "launch", "kernel": "vadd", "program": 0, "split": true,
            "global": [1024], "local": [64], "offset": [0], "split_dim": 0,
            "devices": [{"index": 0, "slice": [0, 8]}, {"index": 1, "slice": [8, 16]}],
            "bytes_to_devices": 8192, "bytes_from_devices": 0,
            "args": [buf(0), buf(1), buf(2), {"kind": "scalar", "value": hex_le(n), "int": n}]})
    };
    let sync_in = |id: u64| serde_json::json!({"event": "sync_in", "buffer": id, "bytes": 4096, "changed": [[0, 4096]]});
    let r = serde_json::json!({
        "bytes_total": 8192, "bytes_gathered": 4096,
        "programs": [{"source": source, "options": []}],
        "launch_log": [sync_in(0), sync_in(1), sync_in(2), launch(1024),
            {"event": "sync_out", "buffer": 2, "bytes": 4096, "gathered": 4096},
            launch(512),
            {"event": "sync_out", "buffer": 2, "bytes": 4096, "gathered": 0}],
        "launch_log_truncated": false,
    });
    let c = layer_model::compare(&r).unwrap();
    // a and b to both halves; c back once; the second launch's c is the
    // first device's half again.
    assert_eq!(c.model, 2 * 4096 + 4096 + 2048, "{}", c.per_kernel_text());
    assert_eq!(c.n_launches, 2);
    assert_eq!(c.per_kernel["vadd"].0, 2 * 4096);
    assert_eq!(c.per_kernel["(syncs)"].0, 4096 + 2048);
    // A partial change of an input seen by both devices' next launch.
    let mut r2 = r.clone();
    let log = r2["launch_log"].as_array_mut().unwrap();
    log.truncate(5);
    log.push(serde_json::json!({"event": "sync_in", "buffer": 0, "bytes": 4096, "changed": [[1000, 3000]]}));
    log.push(launch(1024));
    let c = layer_model::compare(&r2).unwrap();
    assert_eq!(
        c.per_kernel["vadd"].0,
        2 * 4096 + 2000,
        "{}",
        c.per_kernel_text()
    );
}

fn hex_le(n: i32) -> String {
    n.to_le_bytes().iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn programs_split_evenly_give_their_own_results() {
    check_splits("0:0.5,1:0.5");
}

#[test]
fn programs_split_86_14_give_their_own_results() {
    check_splits("0:0.86,1:0.14");
}

/// Under `clpart exec` with automatic shares, a kernel's first
/// launch on devices of unknown speed runs in two rounds over the resident
/// buffers (a probe of its first work-groups at even shares, the rest at
/// the measured ones: `launch_log[].rounds` 2), and the launches after it
/// are single launches at the balancer's shares; every program's own
/// check passes.
#[test]
fn a_first_automatic_launch_runs_in_two_rounds_under_the_layer() {
    let tmp = tempfile::tempdir().unwrap();
    for (app, args, kernel) in [
        ("vadd", &["8192"][..], "vadd"),
        ("jacobi2d", &["256", "4"][..], "jacobi2d"),
    ] {
        let path = tmp.path().join(format!("{app}.json"));
        let out = exec(
            app,
            &["--split", "auto", "--report-launches"],
            Some(&path),
            args,
        );
        assert_own_check_passes(&out, &format!("{app} at auto"));
        let r = report(&path);
        let rounds: Vec<u64> = r["launch_log"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["event"] == "launch" && e["kernel"] == kernel)
            .map(|e| {
                assert_eq!(e["split"], true, "{app}: {e}");
                e["rounds"].as_u64().unwrap()
            })
            .collect();
        assert_eq!(rounds.first(), Some(&2), "{app}: {rounds:?}");
        assert!(rounds[1..].iter().all(|&n| n == 1), "{app}: {rounds:?}");
    }
}

/// Automatic shares (the default of `clpart exec`): every launch
/// still splits and every program's own check passes.
#[test]
fn programs_split_automatically_give_their_own_results() {
    check_splits("auto");
}

/// Automatic shares over a program some of whose launches the launcher
/// runs whole on one of clpart's devices (adi's sweeps at these sizes),
/// others split or at home: what they wrote reaches the application's copy
/// whole. A sync once wrote back only what the host copy lacked, and a
/// launch run whole left its results on the host: 475 elements of adi
/// 512 x 170 came out wrong.
#[test]
fn launches_run_whole_on_clparts_devices_are_synced_back() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("adi.json");
    let out = exec("adi", &["--report-launches"], Some(&path), &["128", "30"]);
    assert_own_check_passes(&out, "adi 128 30 under automatic shares");
    let r = report(&path);
    let launches = r["launch_log"].as_array().unwrap();
    let whole = launches
        .iter()
        .filter(|e| e["event"] == "launch" && e["split"] == false)
        .count();
    assert!(whole > 0, "no launch ran whole on clpart's devices: {r}");
}

/// A kernel whose parametric analysis splits but whose launch-time
/// assumption fails at its launches' values (ADI's last-row update,
/// `x[(n - 1) * n + j]`, ran unsplit at every launch) gets the analysis
/// specialized on the values that stay the same (`n`, the global size):
/// its later launches split, and the program's check passes.
#[test]
fn a_launch_time_assumption_that_fails_brings_the_specialized_analysis() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("adi.json");
    let out = exec(
        "adi",
        &["--split", "0:0.5,1:0.5"],
        Some(&path),
        &["128", "30"],
    );
    assert_own_check_passes(&out, "adi 128 30 at 50/50");
    let r = report(&path);
    let k = kernel(&r, "adi_col_last");
    assert_eq!(k["launches"], 30, "{k}");
    assert_eq!(k["analyses"], 2, "{k}");
    assert!(k["split_launches"].as_u64().unwrap() >= 27, "{k}");
}

/// Automatic shares remember what a run measured: a kernel too small to
/// pay for splitting (Jacobi-1D on 256 elements), found faster on the
/// application's device, starts there in the next run with the same cache:
/// no analysis read, no subkernel built, nothing moved, and the program's
/// own check passes both times. The first run does measure clpart's
/// devices (the test can fail).
#[test]
fn a_later_run_starts_where_an_earlier_run_found_a_kernel_faster() {
    let cache = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("r.json");
    let run = || {
        exec_with_cache("jacobi1d", &["256", "300"], cache.path(), &[], &path, &[]);
        report(&path)
    };
    let first = run();
    let split: u64 = first["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["split_launches"].as_u64().unwrap())
        .sum();
    assert!(split > 0, "{first}");
    assert!(first["n_builds"].as_u64().unwrap() > 0, "{first}");
    let history: Vec<_> = std::fs::read_dir(cache.path().join("history"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(history.len(), 1, "one history file per program");
    #[derive(serde::Deserialize)]
    struct Walls {
        home_ms: f64,
        clpart_ms: f64,
    }
    #[derive(serde::Deserialize)]
    struct Record {
        #[serde(default)]
        walls: Option<Walls>,
    }
    #[derive(serde::Deserialize)]
    struct History {
        configs: std::collections::BTreeMap<String, Record>,
    }
    let h: History = ron::from_str(&std::fs::read_to_string(&history[0]).unwrap()).unwrap();
    // the kernels the first run found faster at home (its walls, so that
    // a loaded machine's noise cannot fail the test; one at least)
    let kernels = ["jacobi1d_average", "jacobi1d_copy"];
    let at_home: Vec<&str> = kernels
        .into_iter()
        .filter(|k| {
            let mine = h
                .configs
                .iter()
                .filter(|(c, _)| c.starts_with(&format!("{k} ")))
                .map(|(_, r)| r.walls.as_ref());
            mine.clone().count() > 0
                && mine
                    .into_iter()
                    .all(|w| w.is_some_and(|w| w.home_ms < w.clpart_ms))
        })
        .collect();
    assert!(
        !at_home.is_empty(),
        "{:?}",
        h.configs.keys().collect::<Vec<_>>()
    );
    let second = run();
    for k in second["kernels"].as_array().unwrap() {
        assert_eq!(k["launches"], 300, "{k}");
        if at_home.contains(&k["name"].as_str().unwrap()) {
            assert_eq!(k["split_launches"], 0, "{k}");
            assert_eq!(k["analyses"], 0, "{k}");
        }
    }
    if at_home.len() == kernels.len() {
        assert_eq!(second["n_builds"], 0, "{second}");
        assert_eq!(second["bytes_total"], 0, "{second}");
    }
}

/// A kernel's first automatic launch runs in two rounds in its first run
/// (a probe round measures the devices); the next run with the same cache
/// starts from the rates that run measured after its first launch: one
/// round, split, the same results. (A kernel launched once remembers no
/// rates: its only launch may include the driver's compile.)
#[test]
fn a_later_run_starts_from_the_devices_rates_an_earlier_run_measured() {
    let cache = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("r.json");
    let rounds = |app: &str, args: &[&str]| {
        let options = ["--report-launches"];
        exec_with_cache(app, args, cache.path(), &options, &path, &[]);
        let r = report(&path);
        r["launch_log"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["event"] == "launch")
            .map(|e| {
                assert_eq!(e["split"], true, "{e}");
                e["rounds"].as_u64().unwrap()
            })
            .collect::<Vec<u64>>()
    };
    // two steps: the first launch loads the subkernels, the second is
    // measured, and home (far faster for this small grid) is never probed
    let first = rounds("jacobi2d", &["256", "2"]);
    assert_eq!(first, [2, 1]);
    let next = rounds("jacobi2d", &["256", "2"]);
    assert_eq!(next, [1, 1]);
    // launched once: two rounds again
    assert_eq!(rounds("vadd", &["8192"]), [2]);
    assert_eq!(rounds("vadd", &["8192"]), [2]);
}

/// Without `--wait-for-analysis`, the launches before a kernel's analysis
/// is ready run on the application's device, the later ones split, and the
/// results are the same; the process does not wait at exit for more than
/// the analysis in progress.
#[test]
fn launches_run_unsplit_until_their_analysis_is_ready() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("r.json");
    let mut c = Command::new("timeout");
    c.arg("120").arg(env!("CARGO_BIN_EXE_clpart"));
    c.args(["exec", "--split", "0:0.5,1:0.5", "--report"])
        .arg(&path)
        .arg("--")
        .arg(built().join("jacobi2d"))
        .args(["64", "400"])
        .current_dir(repo().join("tests/apps/jacobi2d"))
        .env("POCL_DEVICES", "pthread basic")
        .env("CLPART_LAYER", layer())
        .env_remove("OPENCL_LAYERS");
    let out = c.output().unwrap();
    assert_own_check_passes(&out, "jacobi2d in the background");
    let r = report(&path);
    for k in r["kernels"].as_array().unwrap() {
        let analyses = k["analyses"].as_u64().unwrap();
        assert!((1..=3).contains(&analyses), "{k}");
        assert!(
            k["split_launches"].as_u64() <= k["launches"].as_u64(),
            "{k}"
        );
    }
    assert!(r["n_analyses"].as_u64().unwrap() >= 1, "{r}");
}

/// A histogram's global atomics, whose values are unused, split under the
/// layer: each device counts into a whole copy of the bins, which start
/// from what the previous launches left, and the copies merge as a sum,
/// so the program's own check passes launch after launch.
#[test]
fn a_histogram_with_global_atomics_splits_as_a_reduction() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("r.json");
    let out = exec(
        "histogram",
        &["--split", "0:0.5,1:0.5", "--verbose"],
        Some(&path),
        &[],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains(": 0 mismatches"),
        "{stdout}\n{stderr}"
    );
    let r = report(&path);
    let k = kernel(&r, "histogram");
    assert_eq!(k["launches"], 6, "{k}");
    assert_eq!(k["split_launches"], 6, "{k}");
    assert!(
        stderr.contains("kernel 'histogram': 6 launches, 6 split"),
        "{stderr}"
    );
}

#[test]
fn the_program_exit_code_is_passed_on() {
    // A mismatch count is not checked here: the program exits 2 when it
    // cannot open its kernel file (run from the wrong folder).
    let mut c = Command::new(env!("CARGO_BIN_EXE_clpart"));
    let out = c
        .args(["exec", "--"])
        .arg(built().join("vadd"))
        .current_dir(std::env::temp_dir())
        .env("POCL_DEVICES", "pthread basic")
        .env("CLPART_LAYER", layer())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot open kernel.cl"));
}

#[test]
fn bad_options_are_refused_before_the_program_runs() {
    for (options, message) in [
        (
            &["--split", "0:0.5,7:0.5"][..],
            "device index 7 is out of range",
        ),
        (&["--split", "0:0.5,1:0.4"][..], "the shares sum to"),
        (&["--devices", "0,x"][..], "'x' is not a device index"),
    ] {
        let out = exec("vadd", options, None, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{options:?}: {stderr}");
        assert!(stderr.contains(message), "{options:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{options:?}: the program ran");
    }
    // a report that cannot be written: refused before the program runs
    for (report, message) in [
        (
            "/nonexistent/r.json",
            "cannot write the report '/nonexistent/r.json': its folder '/nonexistent' cannot be written",
        ),
        ("/tmp", "the report '/tmp' is a folder"),
    ] {
        let out = exec("vadd", &["--split", "0:0.5,1:0.5"], Some(Path::new(report)), &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{report}: {stderr}");
        assert!(stderr.starts_with("clpart: error: "), "{report}: {stderr}");
        assert!(stderr.contains(message), "{report}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{report}: {stderr}");
        assert!(out.stdout.is_empty(), "{report}: the program ran");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_clpart"))
        .args(["exec", "--", "/nonexistent/program"])
        .env("CLPART_LAYER", layer())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot run '/nonexistent/program'"));
}

#[test]
fn a_program_that_misuses_opencl_gets_the_drivers_error_codes() {
    // The program prints the code of each bad call (unset arguments, a
    // wrong index or size, a local size that does not divide, work_dim 0,
    // a read past the end) and its own check of the one good launch.
    let dir = repo().join("tests/apps/misuse");
    let plain = Command::new(built().join("misuse"))
        .current_dir(&dir)
        .env("POCL_DEVICES", "pthread basic")
        .env_remove("OPENCL_LAYERS")
        .output()
        .unwrap();
    let layered = exec("misuse", &["--split", "0:0.5,1:0.5"], None, &[]);
    assert!(
        plain.status.success(),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
    assert!(
        layered.status.success(),
        "{}",
        String::from_utf8_lossy(&layered.stderr)
    );
    let text = String::from_utf8_lossy(&layered.stdout);
    assert!(
        text.contains("arg index 7: -49") && text.contains(": 0 mismatches"),
        "{text}"
    );
    assert_eq!(text, String::from_utf8_lossy(&plain.stdout));
}

/// What the layer cannot see through runs on the application's
/// device after the buffers it touches are synced: a native kernel over a
/// buffer split launches wrote (the launches after it see what it wrote),
/// and a 1-D image made from such a buffer (a kernel reading the image,
/// `clEnqueueReadImage`); the buffer then stays unsplit, with the reason.
#[test]
fn native_kernels_and_images_over_buffers_run_unsplit_on_synced_buffers() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("r.json");
    let out = exec(
        "native_image",
        &["--split", "0:0.5,1:0.5"],
        Some(&path),
        &[],
    );
    assert_own_check_passes(&out, "native_image");
    let r = report(&path);
    // Six launches before the image is made split; the two after do not.
    let k = kernel(&r, "axpb");
    assert_eq!(
        (&k["launches"], &k["split_launches"]),
        (&8.into(), &6.into()),
        "{k}"
    );
    assert!(
        k["reason"]
            .as_str()
            .unwrap()
            .contains("an image was made from"),
        "{k}"
    );
    let k = kernel(&r, "twice_image");
    assert_eq!(k["split_launches"], 0, "{k}");
    assert!(k["reason"].as_str().unwrap().contains("is an image"), "{k}");
    let k = kernel(&r, "(native kernel)");
    assert_eq!(
        (&k["launches"], &k["split_launches"]),
        (&1.into(), &0.into()),
        "{k}"
    );
    assert!(
        k["reason"]
            .as_str()
            .unwrap()
            .contains("clEnqueueNativeKernel"),
        "{k}"
    );
    assert!(r.get("app_sync_errors").is_none(), "{r}");
}

/// A command waiting for a user event that the program sets
/// later sits ahead of a read of a buffer split launches wrote, and ahead
/// of a launch; another launch waits for such an event itself: the layer's
/// sync is not a blocking wait, and no launch is split (a split finishes
/// the queue first) while the event is pending. On `pthread pthread`: PoCL 3.1's `basic` device deadlocks in
/// `clSetUserEventStatus` when a command waits for the event, with or
/// without the layer.
#[test]
fn a_pending_user_event_never_blocks_the_layer() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("r.json");
    let out = exec_on(
        "pthread pthread",
        "user_event",
        &["--split", "0:0.5,1:0.5"],
        Some(&path),
        &[],
    );
    assert_own_check_passes(&out, "user_event (124: it hung)");
    let r = report(&path);
    let k = kernel(&r, "axpb");
    assert_eq!(
        (&k["launches"], &k["split_launches"]),
        (&10.into(), &8.into()),
        "{k}"
    );
    assert!(k["reason"].as_str().unwrap().contains("user event"), "{k}");
    assert!(r.get("app_sync_errors").is_none(), "{r}");
}

/// A program none of whose kernels split (global atomics) gets
/// its own results with every call passed through, nothing moved between
/// its device and clpart's; `clpart-bench --only layer` times it.
#[test]
fn a_program_whose_kernels_never_split_passes_everything_through() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("r.json");
    let out = exec(
        "passthrough",
        &["--split", "0:0.5,1:0.5"],
        Some(&path),
        &["4096", "70"],
    );
    assert_own_check_passes(&out, "passthrough");
    let r = report(&path);
    for name in ["histogram", "halve"] {
        let k = kernel(&r, name);
        assert_eq!(
            (&k["launches"], &k["split_launches"]),
            (&70.into(), &0.into()),
            "{k}"
        );
        assert!(k["reason"].as_str().unwrap().contains("atomic"), "{k}");
    }
    assert_eq!(count(&r, "bytes_total"), 0, "{r}");
    assert_eq!(count(&r, "bytes_app_sync"), 0, "{r}");
}

/// One device, or shares that give one device all the work, split
/// nothing: every launch passes through to the application's device with
/// the reason, and no buffer is copied anywhere.
#[test]
fn one_device_passes_every_launch_through_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    for options in [&["--devices", "0"][..], &["--split", "0:0,1:1"]] {
        let path = tmp.path().join("r.json");
        let out = exec("jacobi2d", options, Some(&path), &["96", "8"]);
        assert_own_check_passes(&out, &format!("jacobi2d {options:?}"));
        let r = report(&path);
        let k = kernel(&r, "jacobi2d");
        assert_eq!(
            (&k["launches"], &k["split_launches"]),
            (&8.into(), &0.into()),
            "{options:?}: {k}"
        );
        assert!(
            k["reason"].as_str().unwrap().starts_with("one device: "),
            "{options:?}: {k}"
        );
        for field in [
            "bytes_total",
            "bytes_gathered",
            "bytes_app_sync",
            "n_analyses",
        ] {
            assert_eq!(count(&r, field), 0, "{options:?}: {field}: {r}");
        }
    }
}

/// The report's top-level fields, declared: a field added or removed
/// fails this test until the layer's report `schema_version` and this list
/// are updated together. (`programs`, `launch_log` and
/// `launch_log_truncated` come with `--report-launches`; `app_sync_errors`
/// only when a sync failed; version 2 added the fields of a run under
/// mpirun, `cli/tests/mpi.rs` declares them.)
#[test]
fn the_report_declares_its_fields() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("r.json");
    let out = exec("vadd", &["--split", "0:0.5,1:0.5"], Some(&path), &[]);
    assert_own_check_passes(&out, "vadd");
    let r = report(&path);
    assert_eq!(r["schema_version"], 2, "{r}");
    let got: std::collections::BTreeSet<&str> =
        r.as_object().unwrap().keys().map(String::as_str).collect();
    let want: std::collections::BTreeSet<&str> = [
        "schema_version",
        "kernels",
        "n_analyses",
        "n_builds",
        "bytes_total",
        "bytes_whole_buffers",
        "bytes_app_sync",
        "bytes_gathered",
        "bytes_app_sync_in",
        "bytes_app_sync_out",
        "n_app_syncs_in",
        "n_app_syncs_out",
        "devices",
    ]
    .into_iter()
    .collect();
    assert_eq!(
        got,
        want,
        "the report's top-level fields changed (added: {:?}, removed: {:?}); \
         bump its schema_version (layer/src/report.rs) and update this test",
        got.difference(&want).collect::<Vec<_>>(),
        want.difference(&got).collect::<Vec<_>>()
    );
}

/// The persistent analysis cache under the layer: a second run of a
/// program reads the ranges the first stored (`--verbose` says so), and the
/// program's own check still passes; with `CLPART_CACHE=0` nothing is
/// stored.
#[test]
fn a_second_run_under_the_layer_reads_the_analysis_cache() {
    let cache = tempfile::tempdir().unwrap();
    let run = |env: &[(&str, &Path)]| {
        let mut c = Command::new("timeout");
        c.arg("120")
            .arg(env!("CARGO_BIN_EXE_clpart"))
            .args([
                "exec",
                "--wait-for-analysis",
                "--split",
                "0:0.5,1:0.5",
                "--verbose",
                "--",
            ])
            .arg(built().join("vadd"))
            .current_dir(repo().join("tests/apps/vadd"))
            .env("POCL_DEVICES", "pthread basic")
            .env("CLPART_LAYER", layer())
            .env_remove("OPENCL_LAYERS")
            .env_remove("CLPART_CACHE");
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            out.status.success() && stdout.contains(": 0 mismatches"),
            "{stdout}\n{stderr}"
        );
        assert!(stderr.contains("splits along dimension"), "{stderr}");
        stderr
    };
    let note = "ranges of kernel 'vadd' read from the analysis cache";
    let dir = [("CLPART_CACHE_DIR", cache.path())];
    assert!(!run(&dir).contains(note));
    // The launch's range file and the kernel's argument list (beside
    // `clpart exec`'s device count).
    let mut names: Vec<String> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with("devices-") && n != "programs" && n != "locks")
        .collect();
    names.sort_by_key(|n| n.ends_with(".args.ron"));
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(!names[0].ends_with(".args.ron") && names[1].ends_with(".args.ron"));
    assert!(run(&dir).contains(note));
    let off = tempfile::tempdir().unwrap();
    let zero = Path::new("0");
    let stderr = run(&[("CLPART_CACHE_DIR", off.path()), ("CLPART_CACHE", zero)]);
    assert!(!stderr.contains(note), "{stderr}");
    assert_eq!(std::fs::read_dir(off.path()).unwrap().count(), 0);
}

/// The analyses a program's launches asked for and the worker did not
/// start before the program exited (correlation: four kernels launched
/// once each, a few milliseconds apart) are made, built and kept by a
/// process that outlives it: the next run splits every kernel.
#[test]
fn analyses_left_at_exit_are_made_for_the_next_run() {
    let cache = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("r.json");
    let first = exec_unwaited("correlation", &[], cache.path(), &path);
    assert_eq!(first["kernels"].as_array().unwrap().len(), 4, "{first}");
    // four kernels on two devices
    assert_eq!(binaries_kept(cache.path(), 8), 8);
    let next = exec_unwaited("correlation", &[], cache.path(), &path);
    for k in next["kernels"].as_array().unwrap() {
        assert_eq!(k["split_launches"], 1, "{next}");
    }
}

/// `tests/apps/<app>` under `clpart exec --split 0:0.5,1:0.5` without
/// waiting for analyses, the analysis cache and the history in `cache`;
/// the program's own check must pass. Returns the report.
fn exec_unwaited(app: &str, args: &[&str], cache: &Path, report_at: &Path) -> serde_json::Value {
    let out = exec_in_cache(app, args, cache, &["--split", "0:0.5,1:0.5"], report_at)
        .output()
        .unwrap();
    assert_own_check_passes(&out, app);
    report(report_at)
}

/// The command running `tests/apps/<app>` under `clpart exec` with these
/// options and the report at `report`, the analysis cache and the history
/// in `cache`.
fn exec_in_cache(
    app: &str,
    args: &[&str],
    cache: &Path,
    options: &[&str],
    report: &Path,
) -> Command {
    let mut c = Command::new("timeout");
    c.arg("120")
        .arg(env!("CARGO_BIN_EXE_clpart"))
        .arg("exec")
        .args(options)
        .arg("--report")
        .arg(report)
        .arg("--")
        .arg(built().join(app))
        .args(args)
        .current_dir(repo().join("tests/apps").join(app))
        .env("POCL_DEVICES", "pthread basic")
        .env("CLPART_LAYER", layer())
        .env("CLPART_CACHE_DIR", cache)
        .env_remove("OPENCL_LAYERS")
        .env_remove("CLPART_CACHE");
    c
}

/// The binaries kept in `cache` once there are `want` (waiting up to five
/// minutes for the processes that build them, which outlive the program
/// and run at idle priority: beside the rest of the suite on two cores
/// they get little processor time).
fn binaries_kept(cache: &Path, want: usize) -> usize {
    let kept = || {
        std::fs::read_dir(cache.join("programs")).map_or(0, |d| {
            d.filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".bin"))
            })
            .count()
        })
    };
    let until = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while kept() < want && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    kept()
}

/// `tests/apps/<app>` under `clpart exec --wait-for-analysis` with these
/// options and the report at `report`, the analysis cache and the history
/// in `cache` (kept between calls) and these further variables; the
/// program's own check must pass.
fn exec_with_cache(
    app: &str,
    args: &[&str],
    cache: &Path,
    options: &[&str],
    report: &Path,
    env: &[(&str, &Path)],
) {
    let options: Vec<&str> = ["--wait-for-analysis"]
        .into_iter()
        .chain(options.iter().copied())
        .collect();
    let mut c = exec_in_cache(app, args, cache, &options, report);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    assert_own_check_passes(&out, &format!("{app} {}", args.join(" ")));
}

/// [`exec`] with the analysis cache in `cache` and these further variables;
/// the program's own check must pass. Returns each kernel's launches, split
/// launches and reason from the report.
fn exec_cached(
    app: &str,
    args: &[&str],
    cache: &Path,
    env: &[(&str, &Path)],
) -> Vec<(String, u64, u64, Option<String>)> {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("r.json");
    exec_with_cache(app, args, cache, &["--split", "0:0.5,1:0.5"], &path, env);
    let r = report(&path);
    let mut kernels: Vec<_> = r["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["name"].as_str().unwrap().to_string(),
                k["launches"].as_u64().unwrap(),
                k["split_launches"].as_u64().unwrap(),
                k["reason"].as_str().map(str::to_string),
            )
        })
        .collect();
    kernels.sort();
    kernels
}

/// Programs with several kernels, kernels analyzed per scalar value (lu),
/// kernels that never split (passthrough: their unsplit verdicts are
/// cached too) and kernels refused before their arguments are read
/// (native_image: an image argument, a native kernel).
const WARM_APPS: &[(&str, &[&str])] = &[
    ("vadd", &[]),
    ("lu", &["16"]),
    ("correlation", &[]),
    ("fdtd2d", &["64", "80", "4"]),
    ("passthrough", &["4096", "70"]),
    ("native_image", &[]),
];

/// Pass-through cost: a second run under the layer takes each
/// kernel's argument list and every launch's ranges from the analysis
/// cache and never loads libclang: with `LIBCLANG_PATH` naming an empty
/// folder it splits every launch the first run split, with the same
/// reasons for the others, and the program's check passes. The same
/// folder with an empty cache does stop the layer from parsing (the test
/// can fail).
#[test]
fn a_warm_run_under_the_layer_never_loads_libclang() {
    let no_clang = tempfile::tempdir().unwrap();
    let env = [("LIBCLANG_PATH", no_clang.path())];
    for &(app, args) in WARM_APPS {
        let cache = tempfile::tempdir().unwrap();
        let first = exec_cached(app, args, cache.path(), &[]);
        assert!(
            first.iter().any(|k| k.2 > 0) || app == "passthrough",
            "{app}: {first:?}"
        );
        let warm = exec_cached(app, args, cache.path(), &env);
        assert_eq!(warm, first, "{app}");
    }
    let cache = tempfile::tempdir().unwrap();
    let cold = exec_cached("vadd", &[], cache.path(), &env);
    assert_eq!(cold.len(), 1, "{cold:?}");
    assert_eq!(cold[0].2, 0, "{cold:?}");
    assert!(
        cold[0]
            .3
            .as_deref()
            .is_some_and(|r| r.contains("libclang could not be loaded")),
        "{cold:?}"
    );
}

/// An argument-list entry of the cache that does not read (damaged,
/// edited) is ignored: the layer parses the kernel, the program's results
/// are right, and the entry is written again (a run without libclang then
/// reads it).
#[test]
fn a_corrupt_argument_list_in_the_cache_is_ignored_and_rewritten() {
    let cache = tempfile::tempdir().unwrap();
    let args = ["64", "80", "4"];
    let first = exec_cached("fdtd2d", &args, cache.path(), &[]);
    let entries: Vec<PathBuf> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".args.ron"))
        .collect();
    assert_eq!(entries.len(), 3, "one per kernel: {entries:?}");
    for (i, e) in entries.iter().enumerate() {
        let text = std::fs::read_to_string(e).unwrap();
        let bad = match i {
            0 => "garbage".to_string(),
            1 => text[..text.len() / 2].to_string(),
            _ => text.replacen("Scalar", "GlobalBuffer", 1),
        };
        assert_ne!(bad, text);
        std::fs::write(e, bad).unwrap();
    }
    assert_eq!(exec_cached("fdtd2d", &args, cache.path(), &[]), first);
    let no_clang = tempfile::tempdir().unwrap();
    let env = [("LIBCLANG_PATH", no_clang.path())];
    assert_eq!(exec_cached("fdtd2d", &args, cache.path(), &env), first);
}

/// Pass-through cost: `clpart exec` checks its device indices
/// against a device count kept in the cache folder, so a warm start does
/// not open the OpenCL platforms before the program does. The entry is
/// written by the first run; an index out of range is still refused before
/// the program runs; and a count that went stale (here written by hand)
/// lets an index through that the layer cannot use: every launch then runs
/// unsplit on the application's device with the reason, and the program's
/// own check passes.
#[test]
fn the_device_count_is_cached_and_a_stale_one_never_breaks_a_program() {
    let cache = tempfile::tempdir().unwrap();
    let run = |split: &str, report: Option<&Path>| {
        let mut c = Command::new("timeout");
        c.arg("120").arg(env!("CARGO_BIN_EXE_clpart")).args([
            "exec",
            "--wait-for-analysis",
            "--split",
            split,
        ]);
        if let Some(r) = report {
            c.arg("--report").arg(r);
        }
        c.arg("--")
            .arg(built().join("vadd"))
            .current_dir(repo().join("tests/apps/vadd"))
            .env("POCL_DEVICES", "pthread basic")
            .env("CLPART_LAYER", layer())
            .env("CLPART_CACHE_DIR", cache.path())
            .env_remove("OPENCL_LAYERS")
            .env_remove("CLPART_CACHE");
        c.output().unwrap()
    };
    assert_own_check_passes(&run("0:0.5,1:0.5", None), "vadd");
    let entries: Vec<PathBuf> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("devices-"))
        })
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(std::fs::read_to_string(&entries[0]).unwrap(), "2\n");
    let out = run("0:0.5,2:0.5", None);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "the program ran");
    assert!(String::from_utf8_lossy(&out.stderr).contains("device index 2 is out of range"));
    // A stale count: four devices where there are two.
    std::fs::write(&entries[0], "4\n").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("r.json");
    let out = run("0:0.5,3:0.5", Some(&path));
    assert_own_check_passes(&out, "vadd");
    let r = report(&path);
    let k = kernel(&r, "vadd");
    assert_eq!(k["split_launches"], 0);
    assert!(
        k["reason"].as_str().unwrap().contains("unknown device 3"),
        "{k}"
    );
}

/// A report that cannot be written is refused before the program runs
/// (exit 2, one line naming it), not found out at its end.
#[test]
fn an_unwritable_report_is_refused_before_the_program_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = tmp.path().join("ran");
    let folder = tmp.path().to_string_lossy().into_owned();
    let missing = tmp.path().join("missing").join("r.json");
    for report in [missing.to_string_lossy().into_owned(), folder] {
        let out = Command::new(env!("CARGO_BIN_EXE_clpart"))
            .args(["exec", "--report", &report, "--", "touch"])
            .arg(&marker)
            .env("CLPART_LAYER", layer())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{report}: {stderr}");
        assert!(
            stderr.starts_with("clpart: error: ")
                && stderr.contains(&report)
                && stderr.trim_end().lines().count() == 1,
            "{report}: {stderr}"
        );
        assert!(!marker.exists(), "{report}: the program ran");
    }
}

/// A program that never loads OpenCL gets no report, and clpart says so
/// (its own exit code is the program's).
#[test]
fn a_program_without_opencl_gets_a_word_instead_of_a_report() {
    let tmp = tempfile::tempdir().unwrap();
    let report = tmp.path().join("r.json");
    let out = Command::new(env!("CARGO_BIN_EXE_clpart"))
        .args(["exec", "--report"])
        .arg(&report)
        .args(["--", "true"])
        .env("CLPART_LAYER", layer())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("never used OpenCL") && stderr.contains("no report written"),
        "{stderr}"
    );
    assert!(!report.exists());
}

/// Under mpirun, a clpart built without the feature `mpi` refuses rather
/// than let every rank run the application on its own.
#[cfg(not(feature = "mpi"))]
#[test]
fn under_mpirun_without_mpi_exec_refuses() {
    let o = Command::new(env!("CARGO_BIN_EXE_clpart"))
        .args(["exec", "--", "true"])
        .env("OMPI_COMM_WORLD_SIZE", "2")
        .env("OMPI_COMM_WORLD_RANK", "0")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("without the feature `mpi`"), "{err}");
}
