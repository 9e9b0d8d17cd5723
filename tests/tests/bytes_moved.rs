//! What a split moves: for the thesis's vector add and for matmul with a
//! run-time width split in two, `bytes_total` is within 5% of `bytes_exact`
//! and well below `bytes_whole_buffers`; and the thesis's memory claim: a
//! vector add whose arrays do not fit one device's memory cap runs split
//! across two.

use clpart_tests::{corpus, pocl_env, split_runs};
use launcher::LaunchOptions;

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
