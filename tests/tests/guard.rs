//! Issue 10: the run-time guard. Subkernels check every buffer and
//! `__local` access against the window of their slice; an access outside it
//! is skipped, the launch's device results are discarded and the kernel
//! re-runs unsplit (correct output, reported); an access outside a host
//! buffer or a `__local` argument is an error with nothing written back;
//! `__local` sizes beyond the device's local memory are refused before
//! anything runs. Two PoCL devices (`pthread basic`).

use clpart_tests::pocl_env;
use launcher::{KernelArgs, LaunchError, LaunchOptions, NdRange, Plan, Runtime};

/// One runtime for the whole test binary: PoCL's initialization is not
/// safe to run in several threads at once.
fn runtime() -> Runtime {
    static RT: std::sync::OnceLock<Runtime> = std::sync::OnceLock::new();
    RT.get_or_init(|| {
        pocl_env(Some("pthread basic"));
        Runtime::new().unwrap()
    })
    .clone()
}

fn plan(rt: &Runtime, name: &str, source: &str, global: &[u64], local: &[u64], scalars: &[(&str, i64)]) -> Plan {
    let mut config = session::LaunchConfig::new(global, local);
    for (n, v) in scalars {
        config.scalars.insert(n.to_string(), *v);
    }
    let session = session::Session::from_source(&format!("{name}.cl"), source, &[]).unwrap();
    session.into_launch(rt, name, &config).unwrap().1
}

fn args(p: &Plan, specs: &[&str]) -> KernelArgs {
    p.args_from_specs(specs).unwrap()
}

const VADD: &str = "__kernel void vadd(__global const int *a, __global const int *b, __global int *c) {
    int i = get_global_id(0);
    c[i] = a[i] + b[i];
}";

#[test]
fn issue10_guard_never_fires_on_a_correct_split() {
    let rt = runtime();
    let mut p = plan(&rt, "vadd", VADD, &[1024], &[64], &[]);
    assert!(p.guard_status().is_ok(), "{:?}", p.guard_status());
    let nd = NdRange::new(&[1024], &[64]).unwrap();
    let mut a = args(&p, &["a=rand:1024:1", "b=rand:1024:2", "c=zeros:1024"]);
    let opts = LaunchOptions { verify: true, ..Default::default() };
    let r = launcher::launch(&mut p, &nd, &mut a, &[(0, 0.5), (1, 0.5)], &opts).unwrap();
    assert!(r.split && !r.guard_fired && r.verified == Some(true), "{r}");
}

#[test]
fn issue10_guard_catches_an_under_approximated_range_and_reruns_unsplit() {
    let rt = runtime();
    let mut p = plan(&rt, "vadd", VADD, &[1024], &[64], &[]);
    let nd = NdRange::new(&[1024], &[64]).unwrap();
    let pristine = args(&p, &["a=rand:1024:1", "b=rand:1024:2", "c=zeros:1024"]);
    // The reference: an unsplit run of the original kernel.
    let mut want = pristine.clone();
    p.run_whole(0, &nd, &mut want).unwrap();
    // The test hook makes 'a''s read range one element short on every device.
    let opts = LaunchOptions { verify: true, test_underapproximate: Some("a".into()), ..Default::default() };
    let mut got = pristine.clone();
    let r = launcher::launch(&mut p, &nd, &mut got, &[(0, 0.5), (1, 0.5)], &opts).unwrap();
    assert!(r.guard_fired, "the guard must fire: {r}");
    assert!(!r.split, "the launch re-ran unsplit: {r}");
    let reason = r.reason.clone().unwrap_or_default();
    assert!(reason.contains("'a'") && reason.contains("run-time guard"), "{reason}");
    assert_eq!(r.verified, Some(true), "{r}");
    assert_eq!(got.buffer("c").unwrap().as_bytes(), want.buffer("c").unwrap().as_bytes());
}

const SCRATCH: &str = "__kernel void scratch(__global const float *in, __global float *out, __local float *tmp) {
    int l = get_local_id(0);
    tmp[l] = in[get_global_id(0)] * 2.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tmp[get_local_size(0) - 1 - l];
}";

#[test]
fn issue10_a_local_argument_too_small_is_an_error_not_a_corruption() {
    let rt = runtime();
    let mut p = plan(&rt, "scratch", SCRATCH, &[256], &[64], &[]);
    let nd = NdRange::new(&[256], &[64]).unwrap();
    let mut a = args(&p, &["in=rand:256:1", "out=zeros:256", "tmp=local:1"]);
    let err = launcher::launch(&mut p, &nd, &mut a, &[(0, 0.5), (1, 0.5)], &LaunchOptions::default()).unwrap_err();
    assert!(matches!(err, LaunchError::GuardOutOfBounds { .. }), "{err}");
    assert!(err.to_string().contains("__local argument 'tmp'"), "{err}");
    assert!(a.buffer("out").unwrap().as_bytes().iter().all(|&b| b == 0), "nothing is written back");
    // The right size splits and verifies.
    let mut a = args(&p, &["in=rand:256:1", "out=zeros:256", "tmp=local:64"]);
    let opts = LaunchOptions { verify: true, ..Default::default() };
    let r = launcher::launch(&mut p, &nd, &mut a, &[(0, 0.5), (1, 0.5)], &opts).unwrap();
    assert!(r.split && !r.guard_fired && r.verified == Some(true), "{r}");
}

#[test]
fn issue10_a_local_argument_beyond_local_memory_is_refused_before_running() {
    let rt = runtime();
    let mut p = plan(&rt, "scratch", SCRATCH, &[256], &[64], &[]);
    let nd = NdRange::new(&[256], &[64]).unwrap();
    let mut a = args(&p, &["in=rand:256:1", "out=zeros:256", "tmp=local:268435456"]);
    let err = launcher::launch(&mut p, &nd, &mut a, &[(0, 0.5), (1, 0.5)], &LaunchOptions::default()).unwrap_err();
    assert!(matches!(err, LaunchError::LocalTooLarge { .. }), "{err}");
}

/// An array the analysis cannot bound (its subscript is data-dependent) with
/// a host buffer smaller than what the kernel touches.
const WHOLE: &str = "__kernel void walk(__global const int *idx, __global int *a) {
    int i = get_global_id(0);
    a[idx[i]] = i;
}";

#[test]
fn issue10_a_host_buffer_too_small_for_a_whole_array_is_caught() {
    let rt = runtime();
    let mut p = plan(&rt, "walk", WHOLE, &[64], &[16], &[]);
    let nd = NdRange::new(&[64], &[16]).unwrap();
    // idx = 0..63 but 'a' holds 10 elements.
    let mut a = args(&p, &["idx=seq:64", "a=zeros:10"]);
    let err = launcher::launch(&mut p, &nd, &mut a, &[(0, 0.5), (1, 0.5)], &LaunchOptions::default()).unwrap_err();
    assert!(matches!(err, LaunchError::GuardOutOfBounds { .. }), "{err}");
    assert!(err.to_string().contains("array 'a' outside its 10 elements"), "{err}");
    assert!(a.buffer("a").unwrap().as_bytes().iter().all(|&b| b == 0), "nothing is written back");
}

#[test]
fn issue10_unchecked_runs_without_the_guard() {
    let rt = runtime();
    let mut p = plan(&rt, "vadd", VADD, &[1024], &[64], &[]);
    let nd = NdRange::new(&[1024], &[64]).unwrap();
    let mut a = args(&p, &["a=rand:1024:1", "b=rand:1024:2", "c=zeros:1024"]);
    let opts = LaunchOptions { verify: true, unchecked: true, ..Default::default() };
    let r = launcher::launch(&mut p, &nd, &mut a, &[(0, 0.5), (1, 0.5)], &opts).unwrap();
    assert!(r.split && !r.guard_fired && r.verified == Some(true), "{r}");
}
