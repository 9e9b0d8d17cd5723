//! Kernels whose writes cannot be proved disjoint between slices (indirect
//! scatters, a flag every slice writes, breadth-first search's level
//! updates): split on two and on three PoCL devices, with the run-time
//! guard on and off, the devices' copies merge element by element and
//! equal the unsplit run bit for bit; where two devices write different
//! values to one element the check finds it, the split results are
//! discarded and the launch runs unsplit, with the same result.

use clpart_tests::{check_verified_splits, corpus_named, pocl_env, split_runs};

const KERNELS: &[&str] = &[
    "bfs_expand",
    "bfs_visit",
    "flag_write",
    "scatter",
    "scatter_overwrite",
    "scatter_same_value",
];

fn check(shares: &[&[(usize, f64)]]) {
    check_verified_splits(&corpus_named(KERNELS), shares, |k, at, r| {
        if k.name == "scatter_overwrite" {
            assert!(!r.split, "{at}");
            let why = r.reason.as_deref().unwrap_or_default();
            assert!(
                why.contains("wrote different values to element")
                    && why.contains("the split results were discarded"),
                "{at}: {why}"
            );
            return;
        }
        assert!(r.split, "{at}: {:?}", r.reason);
        assert!(
            r.notes
                .iter()
                .any(|n| n.ends_with("checked for conflicting writes")),
            "{at}: {:?}",
            r.notes
        );
    });
}

#[test]
fn checked_merges_are_bit_exact_on_two_devices_with_and_without_the_guard() {
    // one thread on the pthread device, which then runs its work-groups in
    // one order: `scatter_overwrite` is `@order-dependent`
    // SAFETY: before any thread of this test process touches OpenCL.
    unsafe { std::env::set_var("POCL_MAX_PTHREAD_COUNT", "1") };
    pocl_env(Some("pthread basic"));
    check(&[&[(0, 0.5), (1, 0.5)], &[(0, 0.86), (1, 0.14)]]);
}

#[test]
fn checked_merges_are_bit_exact_on_three_devices_with_and_without_the_guard() {
    // devices that run their work-groups in one order: `scatter_overwrite`
    // is `@order-dependent`, and its unsplit runs compare bit for bit only
    // there
    pocl_env(Some("basic basic basic"));
    check(&[
        &[(0, 0.34), (1, 0.33), (2, 0.33)],
        &[(0, 0.7), (1, 0.2), (2, 0.1)],
    ]);
}

/// Breadth-first search's expand kernel over a random graph: a node's
/// neighbour in another slice gets its level from a device that is not
/// the one whose slice reads it (`cost[tid]`); the check cannot tell that
/// the read never happens (a frontier node is visited, so never updated),
/// finds a device changing an element of another slice's read range, and
/// the launch runs unsplit with the same result.
#[test]
fn a_change_in_another_slices_read_range_runs_the_launch_unsplit() {
    pocl_env(Some("pthread basic"));
    let rt = launcher::Runtime::new().unwrap();
    let mut k = corpus_named(&["bfs_expand"]).remove(0);
    let args = "--global 4096 --local 128 --arg starts=seq:4001 --arg edges=rand:4000:1 \
                --arg frontier=rand:4000:2 --arg visited=rand:4000:2 --arg cost=zeros:4000 \
                --arg updating=zeros:4000 --arg nnodes=4000";
    k.runs = vec![args.split_whitespace().map(String::from).collect()];
    for unchecked in [false, true] {
        let options = launcher::LaunchOptions {
            verify: true,
            unchecked,
            ..Default::default()
        };
        let r = &split_runs(&rt, &k, 0, &[&[(0, 0.5), (1, 0.5)]], &options).unwrap()[0];
        assert_eq!(r.verified, Some(true), "{:?}", r.mismatch);
        assert!(!r.split);
        let why = r.reason.as_deref().unwrap_or_default();
        assert!(
            why.contains("of 'cost', which device") && why.contains("may have read"),
            "{why}"
        );
    }
}
