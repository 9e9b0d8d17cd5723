//! Kernels whose global atomics merge as reductions (the histogram, the
//! scatter-add, one kernel per family of atomics): split on two and on three
//! PoCL devices, with the run-time guard on and off, each launch equals the
//! unsplit one bit for bit, and the report says how each array was glued;
//! the kernel whose atomic's value is used runs whole, saying why.

use clpart_tests::{corpus, pocl_env, split_runs, CorpusKernel};

/// The corpus kernels with global atomics.
fn atomic_kernels() -> Vec<CorpusKernel> {
    let names = [
        "atomic_bitmask",
        "atomic_extrema",
        "atomic_ledger",
        "atomic_ticket",
        "histogram",
        "scatter_conflict",
    ];
    let ks: Vec<CorpusKernel> = corpus()
        .into_iter()
        .filter(|k| names.contains(&k.name.as_str()))
        .collect();
    assert_eq!(ks.len(), names.len());
    ks
}

fn check(shares: &[&[(usize, f64)]]) {
    let rt = launcher::Runtime::new().unwrap();
    assert_eq!(rt.devices().len(), shares[0].len());
    for unchecked in [false, true] {
        let options = launcher::LaunchOptions {
            verify: true,
            unchecked,
            ..Default::default()
        };
        for k in atomic_kernels() {
            for run in 0..k.runs.len() {
                let reports = split_runs(&rt, &k, run, shares, &options).unwrap();
                for (r, s) in reports.iter().zip(shares) {
                    let at = format!("{} run {run} {s:?} unchecked={unchecked}", k.name);
                    assert_eq!(r.verified, Some(true), "{at}: {:?}", r.mismatch);
                    assert!(!r.guard_fired, "{at}: {r}");
                    if k.name == "atomic_ticket" {
                        assert!(!r.split, "{at}");
                        let why = r.reason.as_deref().unwrap_or_default();
                        assert!(why.contains("its returned value is used"), "{at}: {why}");
                        continue;
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
                }
            }
        }
    }
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
