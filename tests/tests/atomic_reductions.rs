//! Kernels whose global atomics merge as reductions (the histogram, the
//! scatter-add, one kernel per family of atomics): split on two and on three
//! PoCL devices, with the run-time guard on and off, each launch equals the
//! unsplit one bit for bit, and the report says how each array was glued;
//! the kernel whose atomic's value is used runs whole, saying why.

use clpart_tests::{check_verified_splits, corpus_named, pocl_env};

/// The corpus kernels with global atomics.
const ATOMIC_KERNELS: &[&str] = &[
    "atomic_bitmask",
    "atomic_extrema",
    "atomic_ledger",
    "atomic_ticket",
    "histogram",
    "scatter_conflict",
];

fn check(shares: &[&[(usize, f64)]]) {
    check_verified_splits(&corpus_named(ATOMIC_KERNELS), shares, |k, at, r| {
        if k.name == "atomic_ticket" {
            assert!(!r.split, "{at}");
            let why = r.reason.as_deref().unwrap_or_default();
            assert!(why.contains("its returned value is used"), "{at}: {why}");
            return;
        }
        assert!(r.split, "{at}: {:?}", r.reason);
        for name in &k.expect.whole {
            let note = format!("array '{name}' is glued as the ");
            assert!(
                r.notes.iter().any(|n| n.starts_with(&note)),
                "{at}: {:?}",
                r.notes
            );
        }
    });
}

#[test]
fn atomics_merge_bit_exact_on_two_devices_with_and_without_the_guard() {
    pocl_env(Some("pthread basic"));
    check(&[&[(0, 0.5), (1, 0.5)], &[(0, 0.86), (1, 0.14)]]);
}

#[test]
fn atomics_merge_bit_exact_on_three_devices_with_and_without_the_guard() {
    pocl_env(Some("pthread pthread pthread"));
    check(&[
        &[(0, 0.34), (1, 0.33), (2, 0.33)],
        &[(0, 0.7), (1, 0.2), (2, 0.1)],
    ]);
}
