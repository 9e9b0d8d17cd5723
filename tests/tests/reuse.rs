//! Device memory reused across launches. Each device keeps the
//! buffers a launch no longer needs (`launcher`'s pool) for the next launch
//! that needs one of the same size; their old contents must never reach a
//! result, and the pool releases what it holds when the runtime goes. Two
//! PoCL devices (`pthread basic`), guarded subkernels from the analysis.

use clpart_tests::{plan_from_source, shared_runtime};
use host_data::PlanArgs;
use launcher::{DeviceBuffer, KernelArgs, LaunchOptions, NdRange, Plan, Runtime};

fn runtime() -> Runtime {
    shared_runtime("pthread basic")
}

/// A stencil: each work-item reads its neighbours, so a device reads
/// elements of `src` beyond its slice (a stale halo would show).
const STENCIL: &str = "__kernel void stencil(__global const int *src, __global int *dst, int n) {
    int i = get_global_id(0);
    if (i >= 1 && i < n - 1)
        dst[i] = src[i - 1] + 2 * src[i] + src[i + 1];
}";

const N: u64 = 1024;

fn plan(rt: &Runtime) -> Plan {
    plan_from_source(rt, "stencil", STENCIL, &[N], &[64], &[("n", N as i64)])
}

/// Launches `pristine`'s arguments split by `shares` and checks that the
/// split ran, the guard stayed quiet and output `out` is bit for bit that
/// of the kernel run whole on device 0 (launch `seed`).
fn split_equals_whole(
    p: &mut Plan,
    nd: &NdRange,
    pristine: &KernelArgs,
    shares: &[(usize, f64)],
    out: &str,
    seed: u64,
) {
    let mut want = pristine.clone();
    p.run_whole(0, nd, &mut want).unwrap();
    let mut got = pristine.clone();
    let r = launcher::launch(p, nd, &mut got, shares, &LaunchOptions::default()).unwrap();
    assert!(r.split && !r.guard_fired, "launch {seed}: {r}");
    assert_eq!(
        got.buffer(out).unwrap().as_bytes(),
        want.buffer(out).unwrap().as_bytes(),
        "launch {seed}, shares {shares:?}: {r}"
    );
}

fn args(p: &Plan, seed: u64) -> KernelArgs {
    p.args_from_specs(&[
        format!("src=rand:{N}:{seed}"),
        format!("dst=rand:{N}:{}", seed + 1000),
        format!("n={N}"),
    ])
    .unwrap()
}

/// Host-array launches one after another, with new data each time and
/// shares that change (two devices, one, the other): each gives exactly
/// what the original kernel gives on its own data, while the devices'
/// pools hand the same buffers out again.
#[test]
fn pooled_buffers_give_each_launch_its_own_result() {
    let rt = runtime();
    let mut p = plan(&rt);
    let nd = NdRange::new(&[N], &[64]).unwrap();
    let shares: [&[(usize, f64)]; 4] = [
        &[(0, 0.5), (1, 0.5)],
        &[(0, 1.0)],
        &[(0, 0.3), (1, 0.7)],
        &[(1, 1.0)],
    ];
    let reused0 = rt.pool_counts(0).unwrap().reused();
    for seed in 0..12u64 {
        let s = shares[seed as usize % shares.len()];
        let pristine = args(&p, seed);
        split_equals_whole(&mut p, &nd, &pristine, s, "dst", seed);
    }
    assert!(
        rt.pool_counts(0).unwrap().reused() > reused0,
        "device 0 never took a buffer from its pool"
    );
}

/// Resident buffers: a buffer's device allocations go back to the pool
/// when it drops, and a new buffer of the same size gets them, still
/// holding the old buffer's elements. The new buffer's launch must send
/// every element its devices read: its result is that of its own data.
#[test]
fn a_reused_allocation_never_serves_stale_elements() {
    let rt = runtime();
    let mut p = plan(&rt);
    let nd = NdRange::new(&[N], &[64]).unwrap();
    let half: &[(usize, f64)] = &[(0, 0.5), (1, 0.5)];
    for seed in 0..4u64 {
        let pristine = args(&p, 100 + seed);
        let mut want = pristine.clone();
        p.run_whole(0, &nd, &mut want).unwrap();
        let mut src = DeviceBuffer::new(pristine.buffer("src").unwrap().clone());
        let mut dst = DeviceBuffer::new(pristine.buffer("dst").unwrap().clone());
        let mut a = pristine.clone();
        let r = launcher::launch_resident(
            &mut p,
            &nd,
            &mut a,
            &mut [(0, &mut src), (1, &mut dst)],
            half,
            &LaunchOptions::default(),
        )
        .unwrap();
        assert!(r.split && !r.guard_fired, "launch {seed}: {r}");
        assert_eq!(
            dst.read_all().unwrap().as_bytes(),
            want.buffer("dst").unwrap().as_bytes(),
            "launch {seed}"
        );
        // `src` and `dst` drop here: their allocations go to the pools
    }
}

/// The pool holds buffers after launches and releases every one of them
/// when the last user of the runtime (the plan) is gone.
#[test]
fn the_pool_releases_its_buffers_when_the_runtime_drops() {
    runtime(); // PoCL initialized once, before a second runtime
    let rt = Runtime::new().unwrap();
    let counts = [rt.pool_counts(0).unwrap(), rt.pool_counts(1).unwrap()];
    let mut p = plan(&rt);
    let nd = NdRange::new(&[N], &[64]).unwrap();
    for seed in 0..3 {
        let mut a = args(&p, seed);
        let r = launcher::launch(
            &mut p,
            &nd,
            &mut a,
            &[(0, 0.5), (1, 0.5)],
            &LaunchOptions::default(),
        )
        .unwrap();
        assert!(r.split, "{r}");
    }
    for c in &counts {
        assert!(c.held() > 0, "a device's pool kept nothing: {c:?}");
        assert!(c.reused() > 0, "a device's pool was never used: {c:?}");
    }
    drop(p);
    drop(rt);
    for c in &counts {
        assert_eq!(c.held(), 0, "buffers still held after the drop: {c:?}");
    }
}

/// Array-of-structures to structure-of-arrays (the corpus kernel): a
/// slice writes four separate runs of `soa` (a box of four rows), which
/// come back to the host after the launch rather than with the kernel.
const AOS_TO_SOA: &str = "__kernel void aos_to_soa(__global const float *aos, __global float *soa,
                         int npoints)
{
    int i = get_global_id(0);
    if (i < 4 * npoints) {
        int rec = i / 4;
        int field = i % 4;
        soa[field * npoints + rec] = aos[i];
    }
}";

/// A host-array launch replays the bookkeeping of the first
/// launch of its configuration over fresh buffers (what each device was
/// sent, what each holder held afterwards, hence what comes back to the
/// host). Launched again and again with new data, split and alone, each
/// launch gives what the original kernel gives on its own data, including
/// written sets of several runs gathered after the launch.
#[test]
fn a_replayed_launch_brings_back_every_written_element() {
    let rt = runtime();
    let mut p = plan_from_source(
        &rt,
        "aos_to_soa",
        AOS_TO_SOA,
        &[N],
        &[64],
        &[("npoints", N as i64 / 4)],
    );
    let nd = NdRange::new(&[N], &[64]).unwrap();
    let shares: [&[(usize, f64)]; 3] =
        [&[(0, 0.5), (1, 0.5)], &[(1, 1.0)], &[(0, 0.25), (1, 0.75)]];
    for seed in 0..9u64 {
        let s = shares[seed as usize / 3];
        let pristine = p
            .args_from_specs(&[
                format!("aos=rand:{N}:{seed}"),
                format!("soa=rand:{N}:{}", seed + 1000),
                format!("npoints={}", N / 4),
            ])
            .unwrap();
        split_equals_whole(&mut p, &nd, &pristine, s, "soa", seed);
    }
}
