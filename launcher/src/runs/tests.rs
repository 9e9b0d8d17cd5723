//! Unit tests of [`Runs`] and [`Rect`], and property tests against a
//! `BTreeSet<i64>` model on small universes.

use std::collections::BTreeSet;

use proptest::prelude::*;

use super::*;

fn runs(v: &[(i64, i64)]) -> Runs {
    Runs::from_intervals(v.to_vec())
}

/// A cost model of `command_bytes` a command whose extra-bytes budget
/// (100 times the set) never binds on these small sets.
fn unbudgeted(command_bytes: u64) -> CostModel {
    CostModel {
        command_bytes,
        max_extra_percent: 10_000,
    }
}

/// Whether the intervals are sorted, disjoint, non-adjacent and non-empty.
fn normalized(r: &Runs) -> bool {
    r.intervals().iter().all(|&(lo, hi)| lo <= hi)
        && r.intervals().windows(2).all(|w| w[0].1 + 1 < w[1].0)
}

fn set(r: &Runs) -> BTreeSet<i64> {
    r.intervals().iter().flat_map(|&(lo, hi)| lo..=hi).collect()
}

fn from_set(s: &BTreeSet<i64>) -> Runs {
    Runs::from_intervals(s.iter().map(|&i| (i, i)).collect())
}

/// The union of the rects' elements, checking on the way that they are
/// well formed and pairwise disjoint.
fn rects_union(rects: &[Rect]) -> Runs {
    let mut all = Runs::new();
    for r in rects {
        assert!(r.is_well_formed(), "{r:?}");
        let e = r.runs();
        assert_eq!(e.n_elems(), r.n_elems(), "{r:?}");
        assert_eq!(r.end(), e.hull().unwrap().1 + 1, "{r:?}");
        assert!(!all.overlaps(&e), "{r:?} overlaps an earlier rect");
        all = all.union(&e);
    }
    all
}

// ---- set operations ----

#[test]
fn interval_and_from_intervals_normalize() {
    assert_eq!(Runs::interval(3, 2), Runs::new());
    assert_eq!(Runs::interval(2, 2).intervals(), &[(2, 2)]);
    let r = runs(&[(10, 12), (0, 3), (4, 5), (2, 2), (7, 6), (13, 13), (20, 25)]);
    assert_eq!(r.intervals(), &[(0, 5), (10, 13), (20, 25)]);
    assert_eq!(r.n_elems(), 6 + 4 + 6);
    assert_eq!(r.n_runs(), 3);
    assert_eq!(r.hull(), Some((0, 25)));
    assert_eq!(Runs::new().hull(), None);
    assert_eq!(r.to_string(), "{0..=5, 10..=13, 20..=25}");
    assert_eq!(Runs::new().to_string(), "{}");
}

#[test]
fn union_subtract_intersect() {
    let a = runs(&[(0, 9), (20, 29)]);
    let b = runs(&[(5, 21), (29, 30), (40, 40)]);
    assert_eq!(a.union(&b).intervals(), &[(0, 30), (40, 40)]);
    assert_eq!(a.subtract(&b).intervals(), &[(0, 4), (22, 28)]);
    assert_eq!(b.subtract(&a).intervals(), &[(10, 19), (30, 30), (40, 40)]);
    assert_eq!(a.intersect(&b).intervals(), &[(5, 9), (20, 21), (29, 29)]);
    // Touching intervals merge in a union.
    assert_eq!(
        runs(&[(0, 4)]).union(&runs(&[(5, 9)])).intervals(),
        &[(0, 9)]
    );
    // One interval of `other` spanning several of `self`.
    let c = runs(&[(0, 1), (3, 4), (6, 7), (9, 9)]);
    assert_eq!(
        c.subtract(&runs(&[(1, 6)])).intervals(),
        &[(0, 0), (7, 7), (9, 9)]
    );
    assert_eq!(
        c.intersect(&runs(&[(1, 6)])).intervals(),
        &[(1, 1), (3, 4), (6, 6)]
    );
}

#[test]
fn contains_and_overlaps() {
    let a = runs(&[(0, 9), (20, 29)]);
    assert!(a.contains(&runs(&[(0, 3), (5, 9), (25, 25)])));
    assert!(!a.contains(&runs(&[(8, 10)])));
    assert!(!a.contains(&runs(&[(30, 30)])));
    assert!(a.contains(&Runs::new()));
    assert!(Runs::new().contains(&Runs::new()));
    assert!(a.overlaps(&runs(&[(9, 12)])));
    assert!(!a.overlaps(&runs(&[(10, 19), (30, 40)])));
    assert!(
        a.contains_elem(0) && a.contains_elem(29) && !a.contains_elem(10) && !a.contains_elem(-1)
    );
}

#[test]
fn large_sets_stay_linear() {
    // 10^5 runs over 10^9 elements: every operation is a merge of the runs.
    let a = Runs::from_intervals(
        (0..100_000i64)
            .map(|k| (k * 10_000, k * 10_000 + 4_999))
            .collect(),
    );
    let b = Runs::from_intervals(
        (0..100_000i64)
            .map(|k| (k * 10_000 + 2_500, k * 10_000 + 7_499))
            .collect(),
    );
    assert_eq!(a.n_elems(), 500_000_000);
    assert_eq!(a.union(&b).n_elems(), 750_000_000);
    assert_eq!(a.intersect(&b).n_elems(), 250_000_000);
    assert_eq!(a.subtract(&b).n_runs(), 100_000);
    assert!(a.union(&b).contains(&a));
    assert_eq!(a.rects().len(), 1);
}

// ---- from_box ----

#[test]
fn from_box_rows_and_columns() {
    // Rows 1..=2, columns 2..=4 of a 4x8 array.
    let r = Runs::from_box(0, &[(1, 2), (2, 4)], &[8, 1], 100).unwrap();
    assert_eq!(r.intervals(), &[(10, 12), (18, 20)]);
    // Full rows collapse into one run.
    let r = Runs::from_box(100, &[(1, 2), (0, 7)], &[8, 1], 1).unwrap();
    assert_eq!(r.intervals(), &[(108, 123)]);
    // A column: one run per row, or None past max_runs.
    let r = Runs::from_box(0, &[(0, 3), (5, 5)], &[8, 1], 4).unwrap();
    assert_eq!(r.intervals(), &[(5, 5), (13, 13), (21, 21), (29, 29)]);
    assert_eq!(Runs::from_box(0, &[(0, 3), (5, 5)], &[8, 1], 3), None);
    // An empty dimension, and no dimension at all.
    assert_eq!(
        Runs::from_box(0, &[(0, 3), (5, 4)], &[8, 1], 0),
        Some(Runs::new())
    );
    assert_eq!(
        Runs::from_box(7, &[], &[], 1).unwrap().intervals(),
        &[(7, 7)]
    );
}

#[test]
fn from_box_3d_collapses_inner_full_dims() {
    // Planes 1..=2, all rows, all columns of a 3x4x5 array: one run.
    let r = Runs::from_box(0, &[(1, 2), (0, 3), (0, 4)], &[20, 5, 1], 1).unwrap();
    assert_eq!(r.intervals(), &[(20, 59)]);
    // Planes 0..=2, rows 1..=2, all columns: one run per plane.
    let r = Runs::from_box(0, &[(0, 2), (1, 2), (0, 4)], &[20, 5, 1], 3).unwrap();
    assert_eq!(r.intervals(), &[(5, 14), (25, 34), (45, 54)]);
}

#[test]
fn from_box_odd_strides() {
    // Last stride 3: one run per element.
    let r = Runs::from_box(1, &[(0, 3)], &[3], 4).unwrap();
    assert_eq!(r.intervals(), &[(1, 1), (4, 4), (7, 7), (10, 10)]);
    // Column-major strides: the smaller stride is the inner dimension.
    let r = Runs::from_box(0, &[(0, 3), (0, 1)], &[1, 4], 1).unwrap();
    assert_eq!(r.intervals(), &[(0, 7)]);
    // Negative and zero strides.
    let r = Runs::from_box(10, &[(0, 2), (4, 9)], &[-1, 0], 1).unwrap();
    assert_eq!(r.intervals(), &[(8, 10)]);
    // A box wider than the rows: overlapping rows merge.
    let r = Runs::from_box(0, &[(0, 1), (0, 5)], &[4, 1], 1).unwrap();
    assert_eq!(r.intervals(), &[(0, 9)]);
    // Indices past i64.
    assert_eq!(Runs::from_box(i64::MAX, &[(0, 1)], &[1], 1), None);
}

// ---- rects and transfers ----

#[test]
fn rects_single_run_and_empty() {
    assert_eq!(Runs::new().rects(), vec![]);
    assert_eq!(runs(&[(5, 9)]).rects(), vec![Rect::run(5, 5)]);
}

#[test]
fn rects_2d_box() {
    // Rows 1..=3, columns 2..=4 of an array of 8 columns.
    let r = Runs::from_box(0, &[(1, 3), (2, 4)], &[8, 1], 100).unwrap();
    let rects = r.rects();
    assert_eq!(
        rects,
        vec![Rect {
            start: 10,
            run: 3,
            rows: 3,
            row_pitch: 8,
            planes: 1,
            plane_pitch: 24
        }]
    );
    assert_eq!(rects[0].to_string(), "10+3 x 3/8");
    assert_eq!(rects_union(&rects), r);
}

#[test]
fn rects_3d_box() {
    // Planes 1..=2, rows 1..=3, columns 2..=4 of a 4x5x8 array.
    let r = Runs::from_box(0, &[(1, 2), (1, 3), (2, 4)], &[40, 8, 1], 100).unwrap();
    let rects = r.rects();
    assert_eq!(
        rects,
        vec![Rect {
            start: 50,
            run: 3,
            rows: 3,
            row_pitch: 8,
            planes: 2,
            plane_pitch: 40
        }]
    );
    assert_eq!(rects[0].to_string(), "50+3 x 3/8 x 2/40");
    assert_eq!(rects_union(&rects), r);
}

#[test]
fn rects_column_walk_is_one_rect() {
    // Column 7 of a 4096x4096 array.
    let r = Runs::from_box(0, &[(0, 4095), (7, 7)], &[4096, 1], 4096).unwrap();
    assert_eq!(r.n_runs(), 4096);
    let rects = r.rects();
    assert_eq!(
        rects,
        vec![Rect {
            start: 7,
            run: 1,
            rows: 4096,
            row_pitch: 4096,
            planes: 1,
            plane_pitch: 4096 * 4096
        }]
    );
}

#[test]
fn rects_greedy_mixed() {
    // Two rows of 2 at pitch 5, then a run of 3, then three runs of 1 at pitch 4.
    let r = runs(&[(0, 1), (5, 6), (10, 12), (20, 20), (24, 24), (28, 28)]);
    let rects = r.rects();
    assert_eq!(
        rects,
        vec![
            Rect {
                start: 0,
                run: 2,
                rows: 2,
                row_pitch: 5,
                planes: 1,
                plane_pitch: 10
            },
            Rect::run(10, 3),
            Rect {
                start: 20,
                run: 1,
                rows: 3,
                row_pitch: 4,
                planes: 1,
                plane_pitch: 12
            },
        ]
    );
    assert_eq!(rects_union(&rects), r);
}

#[test]
fn rects_plane_pitch_must_be_a_multiple_of_row_pitch() {
    // Two rows at pitch 8, twice, 20 apart: 20 is no multiple of 8, so two
    // 2-D rects, not one 3-D rect.
    let r = runs(&[(0, 1), (8, 9), (20, 21), (28, 29)]);
    assert_eq!(r.rects().len(), 2);
    // 24 apart: one 3-D rect.
    let r = runs(&[(0, 1), (8, 9), (24, 25), (32, 33)]);
    assert_eq!(
        r.rects(),
        vec![Rect {
            start: 0,
            run: 2,
            rows: 2,
            row_pitch: 8,
            planes: 2,
            plane_pitch: 24
        }]
    );
}

#[test]
fn transfers_bridge_small_gaps_inside_fill() {
    let r = runs(&[(0, 9), (12, 20), (30, 31)]);
    // Gaps 10..=11 and 21..=29 both inside fill and cheap: one run.
    let fill = runs(&[(10, 11), (21, 29)]);
    assert_eq!(
        bridge(r.rects(), &fill, 4, 1024, u128::MAX),
        vec![Rect::run(0, 32)]
    );
    // Gap 21..=29 (9 elements, 36 bytes) costs more than a 32-byte command.
    assert_eq!(
        bridge(r.rects(), &fill, 4, 32, u128::MAX),
        vec![Rect::run(0, 21), Rect::run(30, 2)]
    );
    // (`transfers` moves 30 elements instead of 32: rows 0..=9, 11..=20
    // and 22..=31, one 3 x 10 rect at pitch 11, the gaps' ends padded.)
    let padded = Rect {
        start: 0,
        run: 10,
        rows: 3,
        row_pitch: 11,
        planes: 1,
        plane_pitch: 33,
    };
    assert_eq!(r.transfers(&fill, 4, unbudgeted(1024)), vec![padded]);
    // Rows 0..=9 and 12..=21 (pitch 12), then the run 30..=31.
    let pitch_12 = vec![
        Rect {
            start: 0,
            run: 10,
            rows: 2,
            row_pitch: 12,
            planes: 1,
            plane_pitch: 24,
        },
        Rect::run(30, 2),
    ];
    // At 32 bytes a command, those cost the same 152 and come first.
    assert_eq!(r.transfers(&fill, 4, unbudgeted(32)), pitch_12);
    // Gap 21..=29 not wholly inside fill: bridging stops at 20, and the
    // rows 0..=9 and 12..=21 at pitch 12 move one element fewer.
    let fill = runs(&[(10, 11), (21, 28)]);
    assert_eq!(
        bridge(r.rects(), &fill, 4, 1024, u128::MAX),
        vec![Rect::run(0, 21), Rect::run(30, 2)]
    );
    assert_eq!(r.transfers(&fill, 4, unbudgeted(1024)), pitch_12);
    // Nothing to fill: the rects.
    assert_eq!(r.transfers(&Runs::new(), 4, unbudgeted(1024)), r.rects());
}

#[test]
fn transfers_pad_a_staircase_into_one_rect() {
    // The rows 1..=4 of a lower triangle of an 8-wide matrix: lengths 1..=4.
    let r = runs(&[(8, 8), (16, 17), (24, 26), (32, 35)]);
    let fill = Runs::interval(0, 63).subtract(&r);
    // Bridging makes one run of 28 elements; the padded 4 x 4 rect moves 16.
    assert_eq!(
        r.transfers(&fill, 4, unbudgeted(1024)),
        vec![Rect {
            start: 8,
            run: 4,
            rows: 4,
            row_pitch: 8,
            planes: 1,
            plane_pitch: 32
        }]
    );
    assert_eq!(
        bridge(r.rects(), &fill, 4, 1024, u128::MAX),
        vec![Rect::run(8, 28)]
    );
    // Right-aligned, starts at uneven spacing: the pitch of the ends.
    let r = runs(&[(4, 7), (13, 15), (23, 23), (30, 31)]);
    let fill = Runs::interval(0, 63).subtract(&r);
    assert_eq!(
        r.transfers(&fill, 4, unbudgeted(1024)),
        vec![Rect {
            start: 4,
            run: 4,
            rows: 4,
            row_pitch: 8,
            planes: 1,
            plane_pitch: 32
        }]
    );
    // Padding outside fill is never moved: the plain rects.
    assert_eq!(r.transfers(&Runs::new(), 4, unbudgeted(1024)), r.rects());
    // A command cheaper than the padding: each row its own run.
    assert_eq!(r.transfers(&fill, 4, unbudgeted(4)), r.rects());
}

#[test]
fn transfers_keep_rects_of_several_rows() {
    // A 2-D rect and a run right after it: bridging would break the rect
    // and save no command.
    let r = runs(&[(0, 1), (8, 9), (16, 17), (19, 25)]);
    let fill = Runs::interval(0, 100).subtract(&r);
    let t = r.transfers(&fill, 1, unbudgeted(1 << 20));
    assert_eq!(t, r.rects());
    assert_eq!(t.len(), 2);
    // The gaps inside a rect are never bridged.
    let col = Runs::from_box(0, &[(0, 99), (0, 0)], &[2, 1], 100).unwrap();
    assert_eq!(
        col.transfers(&Runs::interval(0, 1000), 1, unbudgeted(1 << 20))
            .len(),
        1
    );
}

#[test]
fn transfers_move_at_most_five_percent_more_than_the_set() {
    // A pivot and the slice of its row (row_scale): 1 + 128
    // elements and a gap of 124 that costs less than a command. Bridging
    // would move 1.96x the set: two commands instead.
    let r = runs(&[(771, 771), (896, 1023)]);
    let fill = Runs::interval(0, 4095).subtract(&r);
    assert_eq!(r.transfers(&fill, 4, COST_MODEL), r.rects());
    assert_eq!(
        r.transfers(&fill, 4, unbudgeted(COMMAND_COST_BYTES)),
        vec![Rect::run(771, 253)]
    );
    // A wrapping read (ushort_read): 250 + 6 elements, which rows
    // of 250 at one pitch would pad to 500.
    let r = runs(&[(0, 249), (65530, 65535)]);
    let fill = Runs::interval(0, 65535).subtract(&r);
    assert_eq!(r.transfers(&fill, 4, COST_MODEL), r.rects());
    assert_eq!(
        r.transfers(&fill, 4, unbudgeted(COMMAND_COST_BYTES)).len(),
        1
    );
    // Gaps within the budget are still bridged, smallest first: 199
    // elements allow 9 more; the gaps of 4 and 5 fit, that of 7 does not.
    let r = runs(&[(0, 49), (54, 99), (107, 160), (166, 214)]);
    let fill = Runs::interval(0, 300).subtract(&r);
    assert_eq!(r.n_elems(), 199);
    assert_eq!(
        r.transfers(&fill, 4, COST_MODEL),
        vec![Rect::run(0, 100), Rect::run(107, 108)]
    );
}

// ---- properties against a BTreeSet model ----

/// A set of indices within about 0..64 (a few out of range on both sides).
fn arb_runs() -> impl Strategy<Value = Runs> {
    prop::collection::vec((-2i64..64, 0i64..12), 0..6)
        .prop_map(|v| Runs::from_intervals(v.into_iter().map(|(lo, n)| (lo, lo + n - 1)).collect()))
}

/// A set given element by element (many short runs).
fn arb_scattered() -> impl Strategy<Value = Runs> {
    prop::collection::btree_set(0i64..64, 0..40).prop_map(|s| from_set(&s))
}

fn arb_any() -> impl Strategy<Value = Runs> {
    prop_oneof![arb_runs(), arb_scattered()]
}

/// Number of maximal runs of consecutive elements of a set.
fn model_n_runs(s: &BTreeSet<i64>) -> usize {
    s.iter().filter(|&&i| !s.contains(&(i - 1))).count()
}

/// A box of a row-major array: (offset, dims, strides), the array's extents
/// 1..=5 per dimension, the box within them or empty.
fn arb_row_major_box() -> impl Strategy<Value = (i64, Vec<(i64, i64)>, Vec<i64>)> {
    prop::collection::vec((1i64..=5, 0i64..5, 0i64..5), 1..=3).prop_flat_map(|d| {
        let mut strides = vec![1i64; d.len()];
        for k in (0..d.len() - 1).rev() {
            strides[k] = strides[k + 1] * d[k + 1].0;
        }
        let dims: Vec<(i64, i64)> = d
            .iter()
            .map(|&(n, a, b)| (a.min(n - 1), b.min(n - 1)))
            .collect();
        (0i64..8, Just(dims), Just(strides))
    })
}

/// The elements of a box by enumeration.
fn model_box(offset: i64, dims: &[(i64, i64)], strides: &[i64]) -> BTreeSet<i64> {
    let mut out = BTreeSet::from([offset]);
    for (&(lo, hi), &s) in dims.iter().zip(strides) {
        out = out
            .iter()
            .flat_map(|&b| (lo..=hi).map(move |i| b + i * s))
            .collect();
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn from_intervals_matches_model(v in prop::collection::vec((-5i64..70, -3i64..12), 0..10)) {
        let r = Runs::from_intervals(v.iter().map(|&(lo, n)| (lo, lo + n - 1)).collect());
        let model: BTreeSet<i64> = v.iter().flat_map(|&(lo, n)| lo..lo + n).collect();
        prop_assert!(normalized(&r), "{:?}", r);
        prop_assert_eq!(set(&r), model.clone());
        prop_assert_eq!(r.n_elems(), model.len() as u64);
        prop_assert_eq!(r.n_runs(), model_n_runs(&model));
        prop_assert_eq!(r.hull(), model.first().map(|&lo| (lo, *model.last().unwrap())));
        prop_assert_eq!(r.is_empty(), model.is_empty());
    }

    #[test]
    fn set_ops_match_model(a in arb_any(), b in arb_any(), i in -3i64..67) {
        let (sa, sb) = (set(&a), set(&b));
        let u = a.union(&b);
        let d = a.subtract(&b);
        let x = a.intersect(&b);
        for r in [&u, &d, &x] {
            prop_assert!(normalized(r), "{:?}", r);
        }
        prop_assert_eq!(set(&u), sa.union(&sb).copied().collect::<BTreeSet<_>>());
        prop_assert_eq!(set(&d), sa.difference(&sb).copied().collect::<BTreeSet<_>>());
        prop_assert_eq!(set(&x), sa.intersection(&sb).copied().collect::<BTreeSet<_>>());
        prop_assert_eq!(a.contains(&b), sb.is_subset(&sa));
        prop_assert!(a.contains(&x) && u.contains(&a) && a.contains(&d));
        prop_assert_eq!(a.overlaps(&b), !sa.is_disjoint(&sb));
        prop_assert_eq!(a.contains_elem(i), sa.contains(&i));
    }

    /// The paths driven by a few runs against many (`sparse`), both ways.
    #[test]
    fn set_ops_of_few_runs_against_many_match_model(
        many in prop::collection::btree_set(-4i64..200, 40..150).prop_map(|s| from_set(&s)),
        few in prop::collection::vec((-6i64..206, 0i64..30), 0..4)
            .prop_map(|v| Runs::from_intervals(v.into_iter().map(|(lo, n)| (lo, lo + n)).collect())),
    ) {
        let (sm, sf) = (set(&many), set(&few));
        for (a, b, sa, sb) in [(&many, &few, &sm, &sf), (&few, &many, &sf, &sm)] {
            let (u, d) = (a.union(b), a.subtract(b));
            prop_assert!(normalized(&u) && normalized(&d), "{:?} {:?}", u, d);
            prop_assert_eq!(set(&u), sa.union(sb).copied().collect::<BTreeSet<_>>());
            prop_assert_eq!(set(&d), sa.difference(sb).copied().collect::<BTreeSet<_>>());
            prop_assert_eq!(set(&a.intersect(b)), sa.intersection(sb).copied().collect::<BTreeSet<_>>());
            prop_assert_eq!(a.contains(b), sb.is_subset(sa));
            prop_assert_eq!(a.overlaps(b), !sa.is_disjoint(sb));
        }
    }

    #[test]
    fn from_box_matches_model((offset, dims, strides) in arb_row_major_box(), max_runs in 0usize..12) {
        let model = model_box(offset, &dims, &strides);
        let n_runs = model_n_runs(&model);
        match Runs::from_box(offset, &dims, &strides, max_runs) {
            Some(r) => {
                prop_assert!(normalized(&r));
                prop_assert_eq!(set(&r), model);
            }
            // Boxes within a row-major array: None exactly past max_runs.
            None => prop_assert!(n_runs > max_runs, "{} runs, max {}", n_runs, max_runs),
        }
        prop_assert_eq!(Runs::from_box(offset, &dims, &strides, n_runs).is_some(), true);
    }

    #[test]
    fn from_box_any_strides_matches_model(
        offset in -10i64..10,
        d in prop::collection::vec((-3i64..4, 0i64..4, -4i64..6), 0..=3),
        max_runs in 0usize..40,
    ) {
        let dims: Vec<(i64, i64)> = d.iter().map(|&(lo, n, _)| (lo, lo + n - 1)).collect();
        let strides: Vec<i64> = d.iter().map(|&(_, _, s)| s).collect();
        let model = model_box(offset, &dims, &strides);
        if model.is_empty() {
            prop_assert_eq!(Runs::from_box(offset, &dims, &strides, 0), Some(Runs::new()));
        }
        if let Some(r) = Runs::from_box(offset, &dims, &strides, max_runs) {
            prop_assert!(normalized(&r));
            prop_assert!(r.n_runs() <= max_runs);
            prop_assert_eq!(set(&r), model.clone());
        }
        let r = Runs::from_box(offset, &dims, &strides, usize::MAX).unwrap();
        prop_assert_eq!(set(&r), model);
    }

    /// One run (or none) is sent as the cost model would send it,
    /// without planning.
    #[test]
    fn one_run_transfers_as_the_cost_model_plans(
        lo in -2i64..64,
        n in 0i64..12,
        fill in arb_any(),
        cost in prop::sample::select(vec![1u64, 4, 32, 1024]),
    ) {
        let r = Runs::interval(lo, lo + n - 1);
        prop_assert_eq!(r.transfers(&fill, 4, unbudgeted(cost)), r.planned_transfers(&fill, 4, unbudgeted(cost)));
    }

    #[test]
    fn rects_cover_exactly(r in arb_any()) {
        let rects = r.rects();
        prop_assert_eq!(rects_union(&rects), r.clone());
        prop_assert!(rects.len() <= r.n_runs());
        // Each rect a consecutive stretch of the runs, in order.
        let mut k = 0;
        for rect in &rects {
            let n = (rect.rows * rect.planes) as usize;
            let covered = rect.runs();
            prop_assert_eq!(covered.intervals(), &r.intervals()[k..k + n]);
            k += n;
        }
    }

    #[test]
    fn rects_of_boxes_cover_exactly((offset, dims, strides) in arb_row_major_box()) {
        let r = Runs::from_box(offset, &dims, &strides, usize::MAX).unwrap();
        let rects = r.rects();
        prop_assert_eq!(rects_union(&rects), r.clone());
        // A box of a row-major array of up to 3 dimensions is one rect.
        prop_assert!(rects.len() <= 1, "{:?} -> {:?}", r, rects);
    }

    #[test]
    fn transfers_within_self_and_fill(
        r in arb_any(),
        fill in arb_any(),
        elem_size in 1u64..9,
        cost in 0u64..64,
        percent in prop::sample::select(vec![0u64, 5, 20, 50, 10_000]),
    ) {
        let fill = fill.subtract(&r);
        let model = CostModel { command_bytes: cost, max_extra_percent: percent };
        let t = r.transfers(&fill, elem_size, model);
        let moved = rects_union(&t);
        prop_assert!(moved.contains(&r));
        prop_assert!(r.union(&fill).contains(&moved));
        let rects = r.rects();
        prop_assert!(t.len() <= rects.len());
        // Pairwise disjoint and well formed.
        let sum: u64 = t.iter().map(Rect::n_elems).sum();
        prop_assert_eq!(sum, moved.n_elems());
        prop_assert!(t.iter().all(Rect::is_well_formed));
        // Every extra element is cheaper than the commands it saves, and
        // the plan costs no more than bridging alone.
        let extra = moved.n_elems() - r.n_elems();
        prop_assert!(extra == 0 || extra * elem_size < (rects.len() - t.len()) as u64 * cost);
        // Never more extra elements than the budget.
        prop_assert!(extra as u128 <= r.n_elems() as u128 * percent as u128 / 100, "{:?}", t);
        let cost_of = |rects: &[Rect]| {
            rects.iter().map(Rect::n_elems).sum::<u64>() * elem_size + rects.len() as u64 * cost
        };
        let budget = model.extra_budget(r.n_elems());
        prop_assert!(cost_of(&t) <= cost_of(&bridge(rects, &fill, elem_size, cost, budget)));
    }

    #[test]
    fn transfers_of_staircases(n in 2i64..12, pitch in 12i64..20, lead in 0i64..3, up in any::<bool>(), cost in 0u64..200) {
        // Rows k = 0..n of a triangle: run lengths 1..=n, aligned left or right.
        let rows: Vec<(i64, i64)> = (0..n)
            .map(|k| {
                let len = if up { k + 1 } else { n - k };
                let lo = lead + k * pitch;
                (lo, lo + len - 1)
            })
            .collect();
        let r = runs(&rows);
        let fill = Runs::interval(0, lead + n * pitch).subtract(&r);
        let t = r.transfers(&fill, 1, unbudgeted(cost));
        let moved = rects_union(&t);
        prop_assert!(moved.contains(&r));
        prop_assert!(r.union(&fill).contains(&moved));
        prop_assert_eq!(t.iter().map(Rect::n_elems).sum::<u64>(), moved.n_elems());
        let cost_of = |rects: &[Rect]| {
            rects.iter().map(Rect::n_elems).sum::<u64>() + rects.len() as u64 * cost
        };
        // Never worse than the one padded rect, n x n.
        prop_assert!(cost_of(&t) <= (n * n) as u64 + cost, "{:?}", t);
    }
}
