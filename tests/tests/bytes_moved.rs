//! What a split moves: for the thesis's vector add and for matmul with a
//! run-time width split in two, `bytes_total` is within 5% of `bytes_exact`
//! and well below `bytes_whole_buffers`; kernels with boxed footprints
//! (column walks, interior and plane writes, an unused buffer, a read-write
//! array, planes of a run-time size) move their traced footprint on two and
//! three devices, and so do loops with a constant step (a grid-stride loop once
//! specialized on the launch's global size); and the thesis's memory claim: a vector add whose arrays do not
//! fit one device's memory cap runs split across two.

use clpart_tests::cdriver::traced_footprint_bytes;
use clpart_tests::{corpus, pocl_env, run_inputs, split_runs, CorpusKernel};
use launcher::{LaunchOptions, RunReport};

fn kernel(name: &str) -> clpart_tests::CorpusKernel {
    corpus().into_iter().find(|k| k.name == name).unwrap()
}

fn check_near_exact(name: &str) {
    pocl_env(Some("pthread basic"));
    let rt = launcher::Runtime::new().unwrap();
    let k = kernel(name);
    for run in 0..k.runs.len() {
        let r = &split_runs(
            &rt,
            &k,
            run,
            &[&[(0, 0.5), (1, 0.5)]],
            &LaunchOptions {
                verify: true,
                ..Default::default()
            },
        )
        .unwrap()[0];
        assert_eq!(r.verified, Some(true));
        assert!(r.split, "{name}: {:?}", r.reason);
        let exact = r.bytes_exact.expect("counts available") as f64;
        let total = r.bytes_total as f64;
        assert!(
            total <= exact * 1.05,
            "{name} run {run}: bytes_total {total} vs bytes_exact {exact}"
        );
        assert!(
            total >= exact,
            "{name} run {run}: moved fewer bytes ({total}) than the footprint ({exact})"
        );
        assert!(
            total < 0.8 * r.bytes_whole_buffers as f64,
            "{name} run {run}: {total} vs whole buffers {}",
            r.bytes_whole_buffers
        );
    }
}

#[test]
fn vector_add_moves_its_footprint() {
    check_near_exact("vadd");
}

#[test]
fn matmul_with_runtime_width_moves_its_footprint() {
    check_near_exact("matmul");
}

#[test]
fn vector_add_too_big_for_one_device_runs_split() {
    pocl_env(Some("pthread basic"));
    let rt = launcher::Runtime::new().unwrap();
    let k = kernel("vadd");
    // Run 0: 1024 ints per array, 12 KiB in all; cap each device at 8 KiB.
    let cap = LaunchOptions {
        verify: true,
        mem_cap_bytes: Some(8 * 1024),
        ..Default::default()
    };
    let one = split_runs(&rt, &k, 0, &[&[(0, 1.0), (1, 0.0)]], &cap);
    assert!(one.is_err(), "one device must refuse: {one:?}");
    let msg = one.unwrap_err();
    assert!(msg.contains("cap") || msg.contains("memory"), "{msg}");
    let two = &split_runs(&rt, &k, 0, &[&[(0, 0.5), (1, 0.5)]], &cap).unwrap()[0];
    assert_eq!(two.verified, Some(true));
    assert_eq!(two.devices.len(), 2);
}

/// Corpus kernel `k`'s run `run` split by `shares` (verified against one
/// device), and the traced footprint of the same slices in bytes.
fn moved_and_traced(
    rt: &launcher::Runtime,
    k: &CorpusKernel,
    run: usize,
    shares: &[(usize, f64)],
) -> (RunReport, u64) {
    let mut inputs = run_inputs(rt, k, run).unwrap();
    let (plan, _) = inputs.session.plan(rt, &k.name, &inputs.config).unwrap();
    let mut args = inputs.args.clone();
    let options = LaunchOptions {
        verify: true,
        ..Default::default()
    };
    let r = launcher::launch(plan, &inputs.nd, &mut args, shares, &options).unwrap();
    assert_eq!(
        r.verified,
        Some(true),
        "{} run {run}: {:?}",
        k.name,
        r.mismatch
    );
    assert!(r.split, "{} run {run}: {:?}", k.name, r.reason);
    let program = inputs.session.program().expect("a session over source");
    let slices: Vec<(u64, u64)> = r.devices.iter().map(|d| d.slice).collect();
    let dir = tempfile::tempdir().unwrap();
    let traced = traced_footprint_bytes(
        program,
        &k.name,
        &inputs.nd,
        &inputs.args,
        r.split_dim.unwrap_or(0),
        &slices,
        dir.path(),
    )
    .unwrap();
    (r, traced)
}

/// Kernels with boxed footprints and what each may move against its traced
/// footprint: exactly it, except the 3-D interior stencil, whose read box
/// holds the edges of each plane that a 7-point stencil skips (up to 16 %
/// more on these small grids, 11 x 9 x 7 split three ways).
const BOXED_KERNELS: &[(&str, f64)] = &[
    ("column_walk", 1.0),
    ("conv3x3_interior", 1.0),
    ("plane_write", 1.0),
    ("read_write_array", 1.0),
    ("unused_buffer", 1.0),
    ("stencil7_interior", 1.2),
    ("chem_ratt", 1.0),
    ("chem_wdot", 1.0),
    ("strided_loop", 1.0),
    ("saxpy_offset", 1.0),
    ("two_bands", 1.0),
];

fn check_traced(shares: &[(usize, f64)]) {
    let rt = launcher::Runtime::new().unwrap();
    for &(name, most) in BOXED_KERNELS {
        let k = kernel(name);
        for run in 0..k.runs.len() {
            let (r, traced) = moved_and_traced(&rt, &k, run, shares);
            let moved = r.bytes_total;
            assert!(
                moved >= traced && moved as f64 <= most * traced as f64,
                "{name} run {run} {shares:?}: moved {moved} B, traced footprint {traced} B (at most {most}x); notes {:?}",
                r.notes
            );
            assert!(
                moved < r.bytes_whole_buffers,
                "{name} run {run}: moved {moved} B, whole buffers {} B",
                r.bytes_whole_buffers
            );
        }
    }
}

#[test]
fn boxed_kernels_move_their_traced_footprint_on_two_devices() {
    pocl_env(Some("pthread basic"));
    check_traced(&[(0, 0.5), (1, 0.5)]);
}

#[test]
fn boxed_kernels_move_their_traced_footprint_on_three_devices() {
    pocl_env(Some("pthread pthread basic"));
    check_traced(&[(0, 0.3), (1, 0.3), (2, 0.4)]);
}
