//! End-to-end on two PoCL devices (`POCL_DEVICES="pthread basic"`): every
//! corpus kernel, every run line of its header, split with even, uneven (the
//! thesis's 0.86/0.14) and one-sided shares, equals the unsplit output bit for
//! bit; kernels the corpus marks not splittable run whole and still match.

use clpart_tests::{check_split, corpus, corpus_order_independent, pocl_env, split_runs};

#[test]
fn every_corpus_kernel_splits_bit_exact_on_two_devices() {
    pocl_env(Some("pthread basic"));
    let rt = launcher::Runtime::new().unwrap();
    assert_eq!(rt.devices().len(), 2, "POCL_DEVICES gives two devices");
    let mut failures = Vec::new();
    for k in corpus_order_independent() {
        for run in 0..k.runs.len() {
            if let Err(e) = check_split(
                &rt,
                &k,
                run,
                &[
                    &[(0, 0.5), (1, 0.5)],
                    &[(0, 0.86), (1, 0.14)],
                    &[(0, 0.0), (1, 1.0)],
                ],
            ) {
                failures.push(e);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The kernels reaching their buffers through pointers cast to
/// another element type (`(__global float4 *)x`, `(__global uint *)` on a
/// `uint2` buffer, `(__global uchar *)` on an `int` one, inline casts,
/// read-modify-writes through views) split with the run-time guard on,
/// which checks every access through a view without firing, and with it
/// off, bit for bit as one device either way.
#[test]
fn pointer_cast_kernels_split_bit_exact_with_and_without_the_guard() {
    pocl_env(Some("pthread basic"));
    let rt = launcher::Runtime::new().unwrap();
    let kernels: Vec<_> = corpus()
        .into_iter()
        .filter(|k| k.name.starts_with("ptr_cast_") || k.name.starts_with("view_"))
        .collect();
    assert_eq!(kernels.len(), 5);
    for unchecked in [false, true] {
        let options = launcher::LaunchOptions {
            verify: true,
            unchecked,
            ..Default::default()
        };
        for k in &kernels {
            for run in 0..k.runs.len() {
                let shares: [&[(usize, f64)]; 2] = [&[(0, 0.5), (1, 0.5)], &[(0, 0.86), (1, 0.14)]];
                let reports = split_runs(&rt, k, run, &shares, &options).unwrap();
                for (r, s) in reports.iter().zip(shares) {
                    assert!(r.split, "{} run {run} {s:?}: {:?}", k.name, r.reason);
                    assert!(!r.guard_fired, "{} run {run} {s:?}: {r}", k.name);
                    assert_eq!(
                        r.verified,
                        Some(true),
                        "{} run {run} {s:?}: {:?}",
                        k.name,
                        r.mismatch
                    );
                }
            }
        }
    }
}
