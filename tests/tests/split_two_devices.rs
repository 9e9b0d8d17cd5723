//! End-to-end on two PoCL devices (`POCL_DEVICES="pthread basic"`): every
//! corpus kernel, every run line of its header, split with even, uneven (the
//! thesis's 0.86/0.14) and one-sided shares, equals the unsplit output bit for
//! bit; kernels the corpus marks not splittable run whole and still match.

use clpart_tests::{check_split, corpus, pocl_env};

#[test]
fn every_corpus_kernel_splits_bit_exact_on_two_devices() {
    pocl_env(Some("pthread basic"));
    let rt = launcher::Runtime::new().unwrap();
    assert_eq!(rt.devices().len(), 2, "POCL_DEVICES gives two devices");
    let mut failures = Vec::new();
    for k in corpus() {
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
