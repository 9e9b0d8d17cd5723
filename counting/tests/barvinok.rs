//! Per-slice counts from barvinok (and from PolyLib where it
//! answers) equal brute-force enumeration at random parameter values. Each
//! case is a footprint shape of the corpus (slice bounds `lo`/`hi` as
//! parameters), given as isl text and as a Rust predicate over a box.
//!
//! Needs barvinok's libraries (`scripts/setup.sh`); without them the
//! barvinok half is skipped unless `CLPART_REQUIRE_BARVINOK=1`.

use std::sync::OnceLock;
use std::time::Duration;

use counting::{
    barvinok_available, card_many, card_within, enumerate_many, enumerate_within, Card, Enumeration,
};
use proptest::prelude::*;

/// A set in isl syntax over parameters `[a, b, lo, hi]` (not all used) and
/// the same set as a predicate, enumerated over `[-8, BOX)^dims` (which holds
/// every point at the parameter values drawn).
struct Case {
    name: &'static str,
    set: &'static str,
    dims: usize,
    holds: fn(&[i64], &[i64]) -> bool,
}

const BOX: i64 = 120;

fn stencil(p: &[i64], x: &[i64]) -> bool {
    // 5-point stencil of rows [lo, hi) of an a x b grid (interior points only), elements [y, x].
    let (w, h, lo, hi) = (p[0], p[1], p[2], p[3]);
    let (y, xx) = (x[0], x[1]);
    let inside =
        |py: i64, px: i64| lo <= py && py < hi && 1 <= py && py < h - 1 && 1 <= px && px < w - 1;
    inside(y, xx)
        || inside(y - 1, xx)
        || inside(y + 1, xx)
        || inside(y, xx - 1)
        || inside(y, xx + 1)
}

const CASES: &[Case] = &[
    Case {
        name: "linearized column band (existential)",
        set: "[a, b, lo, hi] -> { [k] : exists (i, j : k = 8i + j and lo <= j < hi and 0 <= i < a and 0 <= j < 8) }",
        dims: 1,
        holds: |p, x| (0..p[0]).any(|i| (0..8).any(|j| x[0] == 8 * i + j && p[2] <= j && j < p[3])),
    },
    Case {
        name: "2-D 5-point stencil rows",
        set: "[a, b, lo, hi] -> { [y, x] : exists (py, px : lo <= py < hi and 1 <= py < b - 1 and 1 <= px < a - 1 and ((y = py and -1 <= x - px <= 1) or (x = px and -1 <= y - py <= 1))) }",
        dims: 2,
        holds: stencil,
    },
    Case {
        name: "transpose read (columns of the slice)",
        set: "[a, b, lo, hi] -> { [j, i] : 0 <= i < a and 0 <= j < b and lo <= i < hi }",
        dims: 2,
        holds: |p, x| 0 <= x[1] && x[1] < p[0] && 0 <= x[0] && x[0] < p[1] && p[2] <= x[1] && x[1] < p[3],
    },
    Case {
        name: "strided gather",
        set: "[a, b, lo, hi] -> { [k] : exists (i : k = 3i + b and lo <= i < hi and 0 <= i < a) }",
        dims: 1,
        holds: |p, x| (p[2].max(0)..p[3].min(p[0])).any(|i| x[0] == 3 * i + p[1]),
    },
    Case {
        name: "triangle of the slice's rows",
        set: "[a, b, lo, hi] -> { [i, j] : lo <= i < hi and 0 <= j <= i < a }",
        dims: 2,
        holds: |p, x| p[2] <= x[0] && x[0] < p[3] && 0 <= x[1] && x[1] <= x[0] && x[0] < p[0],
    },
    Case {
        name: "modulo hole",
        set: "[a, b, lo, hi] -> { [k] : lo <= k < hi and 0 <= k < a and k mod 4 != 3 }",
        dims: 1,
        holds: |p, x| p[2] <= x[0] && x[0] < p[3] && 0 <= x[0] && x[0] < p[0] && x[0].rem_euclid(4) != 3,
    },
];

const LIMIT: Duration = Duration::from_secs(20);

fn brute(case: &Case, p: &[i64]) -> i64 {
    let r = -8..BOX;
    match case.dims {
        1 => r.filter(|&i| (case.holds)(p, &[i])).count() as i64,
        _ => r
            .clone()
            .flat_map(|i| r.clone().map(move |j| [i, j]))
            .filter(|x| (case.holds)(p, x))
            .count() as i64,
    }
}

/// Each case counted once per engine (`None` when the engine does not
/// answer), all cases in one batch per engine.
fn counts() -> &'static Vec<(Option<Card>, Option<Enumeration>)> {
    static C: OnceLock<Vec<(Option<Card>, Option<Enumeration>)>> = OnceLock::new();
    C.get_or_init(|| {
        if let Err(why) = barvinok_available() {
            let required = std::env::var("CLPART_REQUIRE_BARVINOK").is_ok_and(|v| v == "1");
            assert!(
                !required,
                "barvinok required (CLPART_REQUIRE_BARVINOK=1): {why}"
            );
        }
        let batch: Vec<(&str, Duration)> = CASES.iter().map(|c| (c.set, LIMIT)).collect();
        let cards = card_many(&batch, None);
        let enums = enumerate_many(&batch, None);
        CASES
            .iter()
            .zip(cards.into_iter().zip(enums))
            .map(|(c, ((card, _), (e, _)))| {
                let b = match card {
                    Ok(card) => Some(card),
                    Err(e) => {
                        assert!(
                            barvinok_available().is_err(),
                            "{}: barvinok failed: {e}",
                            c.name
                        );
                        None
                    }
                };
                (b, e.ok())
            })
            .collect()
    })
}

/// The batches of [`counts`] give what one call per case gives.
#[test]
fn batches_equal_one_call_per_case() {
    for (c, (card, e)) in CASES.iter().zip(counts()) {
        assert_eq!(
            card,
            &card_within(c.set, LIMIT).ok(),
            "barvinok, {}",
            c.name
        );
        assert_eq!(
            e,
            &enumerate_within(c.set, None, LIMIT).ok(),
            "polylib, {}",
            c.name
        );
    }
}

/// The values of the case's parameters (isl drops none here: all four are named).
fn values(card_params: &[String], p: &[i64; 4]) -> Vec<i64> {
    card_params
        .iter()
        .map(|n| {
            p[["a", "b", "lo", "hi"]
                .iter()
                .position(|x| x == n)
                .expect("known parameter")]
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn counts_equal_brute_force(a in 0i64..12, b in 0i64..12, lo in -3i64..12, len in -2i64..10) {
        let p = [a, b, lo, lo + len];
        for (case, (card, polylib)) in CASES.iter().zip(counts()) {
            let want = brute(case, &p);
            if let Some(card) = card {
                prop_assert_eq!(card.eval(&values(&card.params, &p)).unwrap(), want, "barvinok, {} at {:?}", case.name, p);
            }
            if let Some(e) = polylib {
                prop_assert_eq!(e.eval(&values(&e.params, &p)).unwrap(), want, "polylib, {} at {:?}", case.name, p);
            }
        }
    }
}

/// The example: a column band of a linearized 1000-wide matrix, which
/// PolyLib does not count within its limit (large coefficient); barvinok's
/// count equals brute force on a grid of parameter values.
#[test]
fn wide_linearized_band_is_counted_exactly() {
    let set = "[N, lo, hi] -> { [k] : exists (i, j : k = 1000i + j and lo <= j < hi and 0 <= i < N and 0 <= j < 1000) }";
    let polylib = enumerate_within(set, None, counting::POLYLIB_TIME_LIMIT);
    eprintln!(
        "polylib: {}",
        polylib
            .as_ref()
            .map(|_| "a count".to_string())
            .unwrap_or_else(|e| e.to_string())
    );
    if barvinok_available().is_err() {
        return;
    }
    let card = card_within(set, LIMIT).unwrap();
    assert_eq!(card.params, ["N", "lo", "hi"]);
    for n in 0..4i64 {
        for lo in [-5i64, 0, 1, 499, 998, 999, 1000, 1200] {
            for hi in [-1i64, 0, 1, 2, 500, 999, 1000, 1001, 1500] {
                let want = n * (lo.max(0)..hi.min(1000)).count() as i64;
                assert_eq!(
                    card.eval(&[n, lo, hi]).unwrap(),
                    want,
                    "N={n} lo={lo} hi={hi}"
                );
            }
        }
    }
}

#[test]
fn an_unbounded_set_is_an_error_not_a_count() {
    if barvinok_available().is_err() {
        return;
    }
    let e = card_within("[N] -> { [i] : i >= N }", LIMIT).unwrap_err();
    assert_eq!(
        e.to_string(),
        "barvinok failed: the set is unbounded (barvinok counts infinitely many points)"
    );
}
