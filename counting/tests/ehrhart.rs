//! Ehrhart counts from PolyLib checked against isl's exact counts.

use std::sync::OnceLock;
use std::time::Duration;

use counting::{
    enumerate, enumerate_many, enumerate_within, vertices_many, EhrhartError, Enumeration,
    POLYLIB_TIME_LIMIT,
};
use isl_rs::{Context, DimType, Set};
use proptest::prelude::*;

/// isl's exact number of points of `set ∩ context` at the given parameter values.
fn isl_count(set_text: &str, context_text: Option<&str>, values: &[i64]) -> i64 {
    let ctx = Context::alloc();
    let count = {
        let mut set = Set::read_from_str(&ctx, set_text).expect("set parses");
        if let Some(c) = context_text {
            set = set
                .intersect_params(Set::read_from_str(&ctx, c).expect("context parses"))
                .unwrap();
        }
        for (k, &v) in values.iter().enumerate() {
            set = set
                .fix_si(DimType::Param, k as u32, i32::try_from(v).unwrap())
                .unwrap();
        }
        let val = set.count_val().unwrap();
        assert!(
            val.is_int().unwrap(),
            "isl count of {set_text} at {values:?} is not finite"
        );
        val.get_num_si().unwrap()
    };
    count
}

/// Sets to cross-check, with an optional context, and the range of each
/// parameter's random values (parameters in isl's order).
struct Case {
    set: &'static str,
    context: Option<&'static str>,
}

const CASES: &[Case] = &[
    Case { set: "[N] -> { [i] : 0 <= i < N }", context: None },
    Case { set: "[N, lo, hi] -> { [i] : 16lo <= i < 16hi and 0 <= i < N }", context: None },
    Case {
        set: "[N, lo, hi] -> { [i] : 16lo <= i < 16hi and 0 <= i < N }",
        context: Some("[N, lo, hi] -> { : N >= 1 and 0 <= lo < hi }"),
    },
    Case { set: "[N] -> { [i, j] : 0 <= j <= i < N }", context: None },
    Case { set: "[N, M] -> { [i, j] : 0 <= i < N and 0 <= j < M and j <= i }", context: None },
    Case { set: "[N] -> { [i] : exists k : i = 2k and 0 <= i < N }", context: None },
    Case { set: "[N] -> { [i] : 0 <= i < N and i mod 3 = 1 }", context: None },
    Case { set: "[N, s] -> { [i] : 0 <= i < N and s <= i and exists k : i = 3k + 1 }", context: None },
    Case { set: "[W, H] -> { [y, x] : 0 <= y < H and 0 <= x < W }", context: None },
    Case { set: "[N] -> { [i] : 0 <= i < N or 2N <= i < 3N }", context: None },
    Case { set: "[N, M] -> { [i] : 0 <= i < N or 5 <= i < M }", context: None },
    Case {
        set: "[N, lo, hi] -> { [a] : exists g, l : lo <= g < hi and 0 <= l < 16 and a = 16g + l and 0 <= a < N }",
        context: None,
    },
    Case {
        set: "[N, lo, hi] -> { [y, x] : 16lo <= y < 16hi and y < N and 0 <= x < N }",
        context: Some("[N, lo, hi] -> { : N >= 1 and lo >= 0 and hi > lo }"),
    },
    Case { set: "[N] -> { [i, j] : i = j and 0 <= i < N }", context: None },
    Case { set: "[N, M] -> { [i] : 0 <= i < N and M = 2N }", context: None },
    Case { set: "[N] -> { [i] : 0 <= i < N and i > N }", context: None },
    Case { set: "[N, M] -> { [i] : 0 <= 2i <= N and i <= M and 3i >= M - 7 }", context: None },
    Case { set: "[N, M] -> { [i, j] : 0 <= i < N and 0 <= j < M and (i + j) mod 7 = 3 }", context: None },
    Case { set: "[N] -> { [i] : 0 <= i < N and (i mod 4 = 0 or i mod 6 = 0) }", context: None },
    Case { set: "[N] -> { [i] : 0 <= i < N }", context: Some("[N] -> { : exists k : N = 2k }") },
    Case { set: "[N] -> { [i] : 0 <= i < N }", context: Some("[N] -> { : N = 3 or N = 7 }") },
    Case { set: "[M, N] -> { [i] : 0 <= i < N }", context: Some("[N] -> { : N >= 1 }") },
    Case { set: "[N] -> { [i] : i = N }", context: None },
    // Periodic in parameters that take negative values.
    Case { set: "[a, b] -> { [i] : a - 40 <= i <= b - 40 and i mod 3 = 0 }", context: None },
    Case { set: "[a, b, c] -> { [i, j] : a - 30 <= 2i <= b - 30 and 0 <= j <= i + c - 20 and (i + j) mod 5 = 1 }", context: None },
    Case {
        set: "[N, lo, hi] -> { [y, x] : exists g : lo <= g < hi and 4g <= y < 4g + 4 and 0 <= x <= y and y < N }",
        context: None,
    },
];

fn enumerations() -> &'static Vec<Enumeration> {
    static E: OnceLock<Vec<Enumeration>> = OnceLock::new();
    E.get_or_init(|| {
        CASES
            .iter()
            .map(|c| {
                // What is checked is the count, not PolyLib's speed: a limit
                // far above the production one, so a loaded machine cannot
                // fail the test.
                enumerate_within(c.set, c.context, Duration::from_secs(120))
                    .unwrap_or_else(|e| panic!("enumerate {}: {e}", c.set))
            })
            .collect()
    })
}

fn check_at(case_idx: usize, values: &[i64]) {
    let case = &CASES[case_idx];
    let e = &enumerations()[case_idx];
    let values = &values[..e.params.len()];
    let want = isl_count(case.set, case.context, values);
    let got = e
        .eval(values)
        .unwrap_or_else(|err| panic!("eval {} at {values:?}: {err}", case.set));
    assert_eq!(
        got, want,
        "{} (context {:?}) at {:?} = {values:?}\n{e}",
        case.set, case.context, e.params
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn eval_matches_isl_count(
        case_idx in 0..CASES.len(),
        values in proptest::collection::vec(-6i64..70, 3),
    ) {
        check_at(case_idx, &values);
    }
}

#[test]
fn eval_matches_isl_count_on_a_grid() {
    for case_idx in 0..CASES.len() {
        let n = enumerations()[case_idx].params.len();
        let range: Vec<i64> = (-3..=9).collect();
        let mut values = vec![range[0]; 3];
        let total = range.len().pow(n as u32);
        for mut k in 0..total {
            for v in values.iter_mut().take(n) {
                *v = range[k % range.len()];
                k /= range.len();
            }
            check_at(case_idx, &values);
        }
    }
}

#[test]
fn interval_counts_n() {
    let e = enumerate("[N] -> { [i] : 0 <= i < N }", None).unwrap();
    assert_eq!(e.params, ["N"]);
    assert_eq!(e.terms.len(), 1);
    assert_eq!(e.terms[0].len(), 1);
    assert_eq!(e.terms[0][0].domain, "N >= 1");
    assert_eq!(e.terms[0][0].value, "N");
    let mut coords: Vec<_> = e.vertices[0].iter().map(|v| v.coords.join(", ")).collect();
    coords.sort();
    assert_eq!(coords, ["0", "N - 1"]);
    for n in [-5, 0, 1, 7, 1000] {
        assert_eq!(e.eval(&[n]).unwrap(), n.max(0));
    }
}

#[test]
fn slice_has_four_chambers() {
    let e = enumerate(
        "[N, lo, hi] -> { [i] : 16lo <= i < 16hi and 0 <= i < N }",
        None,
    )
    .unwrap();
    assert_eq!(e.params, ["N", "lo", "hi"]);
    let mut values: Vec<&str> = e.terms[0].iter().map(|c| c.value.as_str()).collect();
    values.sort();
    assert_eq!(
        values,
        ["-16 * lo + 16 * hi", "16 * hi", "N", "N - 16 * lo"]
    );
    assert_eq!(e.eval(&[1000, 2, 5]).unwrap(), 48);
    assert_eq!(e.eval(&[40, 2, 5]).unwrap(), 8);
    assert_eq!(e.eval(&[40, 3, 5]).unwrap(), 0);
    let mut coords: Vec<_> = e.vertices[0].iter().map(|v| v.coords[0].as_str()).collect();
    coords.sort();
    assert_eq!(coords, ["0", "16 * hi - 1", "16 * lo", "N - 1"]);
}

#[test]
fn triangle_is_quadratic() {
    let e = enumerate("[N] -> { [i, j] : 0 <= j <= i < N }", None).unwrap();
    assert_eq!(e.terms[0].len(), 1);
    assert_eq!(e.terms[0][0].value, "1/2 * N^2 + 1/2 * N");
    assert_eq!(e.eval(&[10]).unwrap(), 55);
}

#[test]
fn strided_set_is_lifted_and_periodic() {
    let e = enumerate("[N] -> { [i] : exists k : i = 2k and 0 <= i < N }", None).unwrap();
    assert_eq!(e.terms[0].len(), 1);
    assert_eq!(e.terms[0][0].value, "1/2 * N + [ 0, 1/2 ]_N");
    // One coordinate for i, one for the lifted k.
    assert!(e.vertices[0].iter().all(|v| v.coords.len() == 2));
    assert!(e.vertices[0]
        .iter()
        .any(|v| v.coords == ["N - 1", "1/2 * N - 1/2"]));
    assert_eq!(e.eval(&[7]).unwrap(), 4);
    assert_eq!(e.eval(&[8]).unwrap(), 4);
}

#[test]
fn matmul_plane_is_w_times_h() {
    let e = enumerate("[W, H] -> { [y, x] : 0 <= y < H and 0 <= x < W }", None).unwrap();
    assert_eq!(e.terms[0].len(), 1);
    assert_eq!(e.terms[0][0].value, "W * H");
    assert_eq!(e.terms[0][0].domain, "H >= 1 and W >= 1");
    assert_eq!(e.vertices[0].len(), 4);
    assert_eq!(e.eval(&[640, 480]).unwrap(), 640 * 480);
}

#[test]
fn union_of_disjoint_intervals_has_two_terms() {
    let e = enumerate("[N] -> { [i] : 0 <= i < N or 2N <= i < 3N }", None).unwrap();
    assert_eq!(e.terms.len(), 2);
    assert_eq!(e.vertices.len(), 2);
    assert_eq!(e.eval(&[9]).unwrap(), 18);
}

#[test]
fn set_without_parameters() {
    let e = enumerate("{ [i, j] : 0 <= i < 5 and 0 <= j <= i }", None).unwrap();
    assert!(e.params.is_empty());
    assert_eq!(e.eval(&[]).unwrap(), 15);
}

#[test]
fn empty_set_counts_zero() {
    let e = enumerate("[N] -> { [i] : 0 <= i < N and i > N }", None).unwrap();
    assert!(e.terms.iter().all(|t| t.is_empty()) || e.eval(&[5]).unwrap() == 0);
    assert_eq!(e.eval(&[5]).unwrap(), 0);
}

#[test]
fn context_restricts_the_count() {
    let e = enumerate("[N] -> { [i] : 0 <= i < N }", Some("[N] -> { : N >= 10 }")).unwrap();
    assert_eq!(e.eval(&[12]).unwrap(), 12);
    assert_eq!(e.eval(&[5]).unwrap(), 0);
}

#[test]
fn unbounded_set_is_unsupported() {
    let err = enumerate("[N] -> { [i] : i >= N }", None).unwrap_err();
    assert!(matches!(err, EhrhartError::Unsupported { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "cannot count with ehrhart polynomials: the set is unbounded for fixed parameters"
    );
}

#[test]
fn malformed_text_is_a_parse_error() {
    for bad in [
        "[N] -> { [i] : 0 <= i < }",
        "not a set",
        "[N] -> { : N > 0 }",
        "a\0b",
    ] {
        let err = enumerate(bad, None).unwrap_err();
        assert!(matches!(err, EhrhartError::Parse { .. }), "{bad:?}: {err}");
    }
    let err = enumerate(
        "[N] -> { [i] : 0 <= i < N }",
        Some("[N] -> { [j] : j < N }"),
    )
    .unwrap_err();
    assert!(matches!(err, EhrhartError::Parse { .. }), "{err}");
}

#[test]
fn too_many_dimensions_is_refused() {
    let err = enumerate("[A, B, C, D, E] -> { [a, b, c, d] : 0 <= a < A and 0 <= b < B and 0 <= c < C and 0 <= d < D }", None)
        .unwrap_err();
    assert!(matches!(err, EhrhartError::TooLarge { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "4 set dimensions plus 5 parameters exceed the limit of 8"
    );
}

#[test]
fn eval_checks_the_number_of_values() {
    let e = enumerate("[W, H] -> { [y, x] : 0 <= y < H and 0 <= x < W }", None).unwrap();
    let err = e.eval(&[1]).unwrap_err();
    assert_eq!(err.to_string(), "expected 2 parameter values (W, H), got 1");
}

#[test]
fn eval_reports_overflow() {
    let e = enumerate("[W, H] -> { [y, x] : 0 <= y < H and 0 <= x < W }", None).unwrap();
    let err = e.eval(&[i64::MAX, i64::MAX]).unwrap_err();
    assert!(matches!(err, EhrhartError::Overflow { .. }), "{err}");
}

/// Whether `text` uses only the parameter names and the characters of the
/// documented text forms.
fn only_tokens(text: &str, params: &[String], extra: &[&str]) -> bool {
    text.split(|c: char| c.is_whitespace() || "+-*/^[],_=<>()".contains(c))
        .filter(|w| !w.is_empty())
        .all(|w| {
            w.chars().all(|c| c.is_ascii_digit())
                || params.iter().any(|p| p == w)
                || extra.contains(&w)
        })
}

#[test]
fn text_forms_use_only_parameters_and_numbers() {
    // `cargo test -- --nocapture` shows every case's text form.
    for (case, e) in CASES.iter().zip(enumerations()) {
        println!("{}  (context {:?})\n{e}", case.set, case.context);
        for c in e.terms.iter().flatten() {
            assert!(only_tokens(&c.value, &e.params, &[]), "value {:?}", c.value);
            assert!(
                only_tokens(&c.domain, &e.params, &["and", "true", "false"]),
                "domain {:?}",
                c.domain
            );
        }
        for v in e.vertices.iter().flatten() {
            assert!(
                v.coords.iter().all(|x| only_tokens(x, &e.params, &[])),
                "vertex {:?}",
                v.coords
            );
            assert!(
                only_tokens(&v.domain, &e.params, &["and", "true", "false"]),
                "vertex domain {:?}",
                v.domain
            );
        }
    }
}

/// A batch gives, per set, what one call per set gives; a set on
/// which PolyLib aborts, throws, or that it cannot take costs only itself.
#[test]
fn a_batch_equals_one_call_per_set() {
    let sets = [
        "[N] -> { [i] : 0 <= i < N }",
        "[N] -> { [i, j] : 0 <= 1000000 i <= N and 0 <= j <= 999999 i + N }",
        "[N, lo, hi] -> { [i] : lo <= i < hi and 0 <= i < N }",
        "[N] -> { [i] : i >= N }",
        "[N] -> { [i] : exists k : i = 2k and 0 <= i < N }",
        "[N] -> { [i] : 0 <= i < N and i > N }",
        "[N] -> { [i] : 0 <= i <",
        "[N] -> { [i, j, k] : 0 <= 1000000007 i <= N and 0 <= 1000003 j <= 999999 i + N \
         and 0 <= 99991 k <= 77777 j + 55555 i }",
        "[N] -> { [i, j] : 0 <= j <= i < N }",
    ];
    let batch: Vec<(&str, std::time::Duration)> =
        sets.iter().map(|&s| (s, POLYLIB_TIME_LIMIT)).collect();
    let many = enumerate_many(&batch, None);
    assert_eq!(many.len(), sets.len());
    for (set, (e, _)) in sets.iter().zip(&many) {
        assert_eq!(e, &enumerate(set, None), "{set}");
    }
    assert!(
        many[1]
            .0
            .as_ref()
            .is_err_and(|e| e.to_string().contains("SIGABRT")),
        "{:?}",
        many[1].0
    );
    assert_eq!(many[8].0.as_ref().unwrap().eval(&[4]).unwrap(), 10);
    assert!(enumerate_many(&[], None).is_empty());
}

/// The vertices alone (`vertices_many`, no count) are the
/// enumeration's vertices; they are made beyond the count's dimension limit,
/// and a context keeps only the vertices valid within it.
#[test]
fn vertices_alone_match_the_enumerations_and_go_further() {
    let limit = Duration::from_secs(10);
    for (case, e) in CASES.iter().zip(enumerations()) {
        if case.context.is_some() {
            continue;
        }
        let (alone, _) = vertices_many(&[(case.set, None, limit)], None)
            .pop()
            .unwrap();
        let alone = alone.unwrap_or_else(|err| panic!("{}: {err}", case.set));
        assert_eq!(alone, e.vertices, "{}", case.set);
    }
    // 2 set dimensions and 8 parameters: over the count's limit, not the vertices'.
    let wide = "[a, b, c, d, e, f, g, h] -> { [i, j] : a <= i < b and c <= j < d and i + j < e + f + g + h }";
    assert!(matches!(
        enumerate(wide, None),
        Err(EhrhartError::TooLarge { .. })
    ));
    let (v, _) = vertices_many(&[(wide, None, limit)], None).pop().unwrap();
    let v = v.unwrap();
    assert!(v[0].iter().any(|v| v.coords == ["a", "c"]), "{v:?}");
    // `0 <= i < min(n, 10)`: the vertex 9 exists only where n >= 10, so the
    // context n <= 5 leaves it out.
    let set = "[n] -> { [i] : 0 <= i < n and i < 10 }";
    let coords = |context: Option<&str>| {
        let (v, _) = vertices_many(&[(set, context, limit)], None).pop().unwrap();
        let mut c: Vec<String> = v.unwrap()[0].iter().map(|v| v.coords.join(", ")).collect();
        c.sort();
        c.dedup();
        c
    };
    assert_eq!(coords(None), ["0", "9", "n - 1"]);
    assert_eq!(coords(Some("[n] -> { : 1 <= n <= 5 }")), ["0", "n - 1"]);
}
