//! Property: on three PoCL devices, any NDRange size, work-group size and
//! split (1 to 3 devices, zero shares included) gives bit-for-bit the unsplit
//! output.

mod common;

use common::*;
use host_data::PlanArgs;
use launcher::{launch, LaunchOptions, NdRange, Plan};
use proptest::prelude::*;

fn shares_from(weights: &[u32]) -> Vec<(usize, f64)> {
    let sum: u32 = weights.iter().sum();
    weights
        .iter()
        .enumerate()
        .map(|(d, &w)| (d, w as f64 / sum as f64))
        .collect()
}

fn weights() -> impl Strategy<Value = Vec<u32>> {
    prop::collection::vec(0u32..10, 1..=3).prop_filter("some share", |w| w.iter().any(|&x| x > 0))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn vadd_split_matches_unsplit(local in prop::sample::select(vec![1u64, 2, 3, 8, 16]), n_groups in 1u64..40, w in weights(), seed in 0u64..1000) {
        let rt = setup("pthread pthread pthread");
        prop_assert_eq!(rt.devices().len(), 3);
        let mut plan = Plan::from_kernel(&rt, vadd_ranges(), VADD, &[]).unwrap();
        let n = local * n_groups;
        let nd = NdRange::new(&[n], &[local]).unwrap();
        let mut args = plan.args_from_specs(&[
            format!("a=rand:{n}:{seed}"),
            format!("b=rand:{n}:{}", seed + 1),
            format!("c=zeros:{n}"),
            format!("n={n}"),
        ]).unwrap();
        let opts = LaunchOptions { verify: true, verify_device: Some(2), unchecked: true, ..Default::default() };
        let report = launch(&mut plan, &nd, &mut args, &shares_from(&w), &opts).unwrap();
        prop_assert_eq!(report.verified, Some(true), "{}", report);
        prop_assert_eq!(report.devices.iter().map(|d| d.work_groups).sum::<u64>(), n_groups);
        prop_assert_eq!(Some(report.bytes_total), report.bytes_exact);
    }

    #[test]
    fn matmul_split_matches_unsplit(l0 in prop::sample::select(vec![1u64, 4, 8]), gx in 1u64..9, l1 in 1u64..4, gy in 1u64..5, wa in 1u64..12, w in weights()) {
        let rt = setup("pthread pthread pthread");
        let mut plan = Plan::from_kernel(&rt, matmul_ranges(), MATMUL, &[]).unwrap();
        let (wb, hc) = (l0 * gx, l1 * gy);
        let nd = NdRange::new(&[wb, hc], &[l0, l1]).unwrap();
        let mut args = plan.args_from_specs(&[
            format!("A=rand:{}:1", hc * wa),
            format!("B=rand:{}:2", wa * wb),
            format!("C=rand:{}:3", hc * wb),
            format!("wa={wa}"),
            format!("wb={wb}"),
        ]).unwrap();
        let opts = LaunchOptions { verify: true, unchecked: true, ..Default::default() };
        let report = launch(&mut plan, &nd, &mut args, &shares_from(&w), &opts).unwrap();
        prop_assert_eq!(report.verified, Some(true), "{}", report);
        prop_assert_eq!(report.devices.iter().map(|d| d.work_groups).sum::<u64>(), gx * gy);
    }

    #[test]
    fn split_groups_is_a_partition(n in 0u64..10_000, w in weights()) {
        let shares: Vec<f64> = shares_from(&w).into_iter().map(|s| s.1).collect();
        let slices = launcher::split_groups(n, &shares);
        let mut next = 0;
        for ((lo, hi), s) in slices.iter().zip(&shares) {
            prop_assert_eq!(*lo, next);
            prop_assert!(hi >= lo);
            // within one work-group of the exact share
            prop_assert!(((hi - lo) as f64 - s * n as f64).abs() < 1.0 + 1e-9);
            if *s == 0.0 { prop_assert_eq!(hi, lo); }
            next = *hi;
        }
        prop_assert_eq!(next, n);
    }
}
