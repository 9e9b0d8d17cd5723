//! End-to-end on three PoCL devices: every corpus kernel split three ways,
//! evenly and unevenly, equals the unsplit output bit for bit.

use clpart_tests::{check_split, corpus_order_independent, pocl_env};

#[test]
fn every_corpus_kernel_splits_bit_exact_on_three_devices() {
    pocl_env(Some("pthread basic pthread"));
    let rt = launcher::Runtime::new().unwrap();
    assert_eq!(rt.devices().len(), 3, "POCL_DEVICES gives three devices");
    let mut failures = Vec::new();
    for k in corpus_order_independent() {
        for run in 0..k.runs.len() {
            if let Err(e) = check_split(
                &rt,
                &k,
                run,
                &[
                    &[(0, 0.34), (1, 0.33), (2, 0.33)],
                    &[(0, 0.7), (1, 0.2), (2, 0.1)],
                ],
            ) {
                failures.push(e);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
