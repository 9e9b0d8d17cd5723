//! Columns that start at a scalar, `int j = get_global_id(0) + (k + 1)` (LU,
//! Gram-Schmidt): the analysis keeps `k` a parameter and assumes, checked
//! at each launch, that no work-item's column leaves `int`. On two PoCL
//! devices (`pthread basic`):
//! - one analysis, made once without launch values, serves an LU
//!   factorization whose `k` changes and whose NDRange shrinks at every
//!   step: every launch splits and equals one device bit for bit;
//! - a launch whose `k` (near `INT_MAX`) makes the column wrap around fails
//!   the assumption and runs whole, the guard off or on; through the session
//!   it is analyzed again at its values, where the wrap-around is modelled,
//!   and splits. Either way the result is one device's.

use clpart_tests::shared_runtime;
use host_data::PlanArgs;
use launcher::{KernelArgs, LaunchOptions, NdRange, Plan, Runtime};
use partitioner::PartitionOptions;
use ranges_format::RangeFile;
use session::{LaunchConfig, Session};

fn runtime() -> Runtime {
    shared_runtime("pthread basic")
}

/// LU without pivoting as public suites write it: step k scales row k
/// right of the pivot, then updates the trailing submatrix.
const LU: &str = "__kernel void lu_scale(__global float *a, int k, int n)
{
    int j = get_global_id(0) + (k + 1);
    if (j < n)
        a[k * n + j] = a[k * n + j] / a[k * n + k];
}

__kernel void lu_update(__global float *a, int k, int n)
{
    int j = get_global_id(0) + (k + 1);
    int i = get_global_id(1) + (k + 1);
    if (i < n && j < n)
        a[i * n + j] = a[i * n + j] - a[i * n + k] * a[k * n + j];
}
";

/// The range file of every kernel of `source`, without launch values.
fn parametric(file: &str, source: &str) -> RangeFile {
    let session = Session::from_source(file, source, &[]).unwrap();
    session.analyze(None, &PartitionOptions::default()).unwrap()
}

/// `n` rounded up to a multiple of `m` (at least `m`).
fn round_up(n: u64, m: u64) -> u64 {
    n.div_ceil(m).max(1) * m
}

/// Runs `plan` split in halves and whole on device 0 from the same `args`;
/// checks that it split (`split`), that no assumption failed, and that `a`
/// is bit for bit the same; leaves the split result in `args`.
fn split_equals_whole(plan: &mut Plan, nd: &NdRange, args: &mut KernelArgs, what: &str) {
    let mut want = args.clone();
    plan.run_whole(0, nd, &mut want).unwrap();
    let r = launcher::launch(
        plan,
        nd,
        args,
        &[(0, 0.5), (1, 0.5)],
        &LaunchOptions::default(),
    )
    .unwrap();
    assert!(r.split && !r.guard_fired, "{what}: {r}");
    assert!(
        r.notes.iter().all(|n| !n.contains("assumption")),
        "{what}: {r}"
    );
    assert_eq!(
        args.buffer("a").unwrap().as_bytes(),
        want.buffer("a").unwrap().as_bytes(),
        "{what}: {r}"
    );
}

#[test]
fn one_analysis_splits_every_step_of_an_lu_factorization() {
    let rt = runtime();
    let rf = parametric("lu.cl", LU);
    for k in &rf.kernels {
        assert!(k.splittable, "{}: {:?}", k.name, k.reason);
        // k stays a parameter: it is in the ranges, not specialized away
        assert!(k.params.iter().any(|p| p.name == "k"), "{}", k.name);
        assert!(
            k.arrays
                .iter()
                .all(|a| a.write.as_ref().is_some_and(|w| w.disjoint_across_slices)),
            "{}",
            k.name
        );
    }
    let mut scale = Plan::new(&rt, &rf, "lu_scale").unwrap();
    let mut update = Plan::new(&rt, &rf, "lu_update").unwrap();
    let n: u64 = 40;
    let spec = |k: u64| {
        vec![
            format!("a=rand:{}:7", n * n),
            format!("k={k}"),
            format!("n={n}"),
        ]
    };
    let mut a = scale.args_from_specs(&spec(0)).unwrap();
    for k in 0..n - 1 {
        // the NDRange shrinks with the trailing submatrix: n - k - 1
        // columns (and rows), rounded up to the work-group size
        let m = n - k - 1;
        let mut args = scale.args_from_specs(&spec(k)).unwrap();
        copy_a(&a, &mut args);
        let nd = NdRange::new(&[round_up(m, 4)], &[4]).unwrap();
        if nd.n_groups(0) >= 2 {
            split_equals_whole(&mut scale, &nd, &mut args, &format!("lu_scale k = {k}"));
        } else {
            scale.run_whole(0, &nd, &mut args).unwrap();
        }
        copy_a(&args, &mut a);

        let mut args = update.args_from_specs(&spec(k)).unwrap();
        copy_a(&a, &mut args);
        let nd = NdRange::new(&[round_up(m, 4), round_up(m, 4)], &[4, 4]).unwrap();
        if nd.n_groups(1) >= 2 {
            split_equals_whole(&mut update, &nd, &mut args, &format!("lu_update k = {k}"));
        } else {
            update.run_whole(0, &nd, &mut args).unwrap();
        }
        copy_a(&args, &mut a);
    }
}

/// Copies argument `a`'s elements from `from` to `to`.
fn copy_a(from: &KernelArgs, to: &mut KernelArgs) {
    let bytes = from.buffer("a").unwrap().as_bytes().to_vec();
    to.buffer_at_mut(0)
        .unwrap()
        .as_bytes_mut()
        .copy_from_slice(&bytes);
}

/// Work-items whose column wraps around (`j < 0`) write `wrapped`, which
/// the others leave alone: a model of the column without its wrap-around,
/// unchecked, would miss those writes.
const WRAP: &str =
    "__kernel void wrap_offset(__global int *out, __global int *wrapped, int k, int n)
{
    int j = get_global_id(0) + k;
    if (j >= 0 && j < n)
        out[j] = 1;
    else if (j < 0)
        wrapped[(long)j + 2147483648L] = 2;
}
";

/// `k` with which work-items 16.. of a 64-item launch wrap around to
/// `j = x - 16 - 2^31`, writing `wrapped[x - 16]`.
const K_WRAPS: i64 = i32::MAX as i64 - 15;

fn wrap_args(plan: &Plan, k: i64) -> KernelArgs {
    plan.args_from_specs(&[
        "out=zeros:64".to_string(),
        "wrapped=zeros:64".into(),
        format!("k={k}"),
        "n=64".into(),
    ])
    .unwrap()
}

/// The bytes of both outputs.
fn outputs(args: &KernelArgs) -> Vec<u8> {
    ["out", "wrapped"]
        .iter()
        .flat_map(|b| args.buffer(b).unwrap().as_bytes().to_vec())
        .collect()
}

#[test]
fn a_launch_whose_column_wraps_fails_the_assumption_and_runs_whole() {
    let rt = runtime();
    let rf = parametric("wrap_offset.cl", WRAP);
    let k = &rf.kernels[0];
    assert!(k.splittable, "{:?}", k.reason);
    assert!(
        k.assumptions.iter().any(|a| a
            .description
            .contains("'get_global_id(0) + k' stays within 'int'")),
        "{:?}",
        k.assumptions
    );
    let mut plan = Plan::new(&rt, &rf, "wrap_offset").unwrap();
    let nd = NdRange::new(&[64], &[8]).unwrap();
    let shares = [(0, 0.5), (1, 0.5)];
    // an ordinary k splits
    let mut args = wrap_args(&plan, 0);
    let r = launcher::launch(
        &mut plan,
        &nd,
        &mut args,
        &shares,
        &LaunchOptions::default(),
    )
    .unwrap();
    assert!(r.split, "{r}");
    // the wrapping k runs whole, with the guard off as on: the assumption
    // alone keeps the split from running
    for unchecked in [true, false] {
        let input = wrap_args(&plan, K_WRAPS);
        let mut want = input.clone();
        plan.run_whole(0, &nd, &mut want).unwrap();
        let wrapped = want.buffer("wrapped").unwrap().as_bytes();
        assert!(
            wrapped.chunks(4).any(|e| e == 2i32.to_ne_bytes()),
            "no work-item wrapped around"
        );
        let mut got = input.clone();
        let options = LaunchOptions {
            unchecked,
            ..Default::default()
        };
        let r = launcher::launch(&mut plan, &nd, &mut got, &shares, &options).unwrap();
        assert!(!r.split, "unchecked = {unchecked}: {r}");
        assert!(
            r.reason
                .as_deref()
                .is_some_and(|w| w.contains("a launch-time assumption does not hold")
                    && w.contains("stays within 'int'")),
            "unchecked = {unchecked}: {r}"
        );
        assert_eq!(outputs(&got), outputs(&want), "{r}");
    }
}

#[test]
fn through_the_session_a_wrapping_launch_gets_ranges_that_hold_at_its_values() {
    let rt = runtime();
    let mut session = Session::from_source("wrap_offset.cl", WRAP, &[]).unwrap();
    let mut config = LaunchConfig::new(&[64], &[8]);
    config.scalars.insert("k".into(), K_WRAPS);
    config.scalars.insert("n".into(), 64);
    let (plan, _) = session.plan(&rt, "wrap_offset", &config).unwrap();
    let nd = NdRange::new(&[64], &[8]).unwrap();
    let input = wrap_args(plan, K_WRAPS);
    let mut got = input.clone();
    let options = LaunchOptions {
        verify: true,
        ..Default::default()
    };
    let r = launcher::launch(plan, &nd, &mut got, &[(0, 0.5), (1, 0.5)], &options).unwrap();
    assert_eq!(r.verified, Some(true), "{r}: {:?}", r.mismatch);
    assert!(!r.guard_fired, "{r}");
    // specialized on k: the wrap-around is modelled, nothing fails, and
    // the launch splits
    assert!(r.split, "{r}");
    assert!(
        plan.kernel()
            .diagnostics
            .iter()
            .any(|d| d == session::SPECIALIZED_NOTE),
        "{r}"
    );
    assert!(r.notes.iter().all(|n| !n.contains("assumption")), "{r}");
}
