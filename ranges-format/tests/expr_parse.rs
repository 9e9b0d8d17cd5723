//! Parser and evaluator on isl- and PolyLib-style texts, checked against
//! hand-computed values.

use ranges_format::{eval_count, Chamber, Condition, Count, ExprError, PwExpr};

/// Evaluates `text` with `names[i] = values[i]`.
fn ev(text: &str, names: &[&str], values: &[i64]) -> Option<i64> {
    let e = PwExpr::parse(text).unwrap_or_else(|err| panic!("parse '{text}': {err}"));
    let b = e
        .bind(names)
        .unwrap_or_else(|err| panic!("bind '{text}': {err}"));
    let v = b
        .eval(values)
        .unwrap_or_else(|err| panic!("eval '{text}': {err}"));
    // The canonical text must read back to the same expression and value.
    let again = PwExpr::parse(&e.to_string())
        .unwrap_or_else(|err| panic!("reparse '{e}' (from '{text}'): {err}"));
    assert_eq!(again, e, "canonical text '{e}' of '{text}'");
    assert_eq!(again.bind(names).unwrap().eval(values).unwrap(), v);
    v
}

fn cond(text: &str, names: &[&str], values: &[i64]) -> bool {
    let c = Condition::parse(text).unwrap_or_else(|err| panic!("parse '{text}': {err}"));
    let v = c.bind(names).unwrap().eval(values).unwrap();
    let again = Condition::parse(&c.to_string())
        .unwrap_or_else(|err| panic!("reparse '{c}' (from '{text}'): {err}"));
    assert_eq!(again, c, "canonical text '{c}' of '{text}'");
    // the text people read: no isl header or braces, the same condition
    let plain = c.text();
    assert!(
        !plain.contains(['{', '}']) && !plain.contains("->"),
        "{plain}"
    );
    let back = Condition::parse(if plain == "true" { "" } else { &plain })
        .unwrap_or_else(|err| panic!("parse the text '{plain}' of '{text}': {err}"));
    assert_eq!(
        back.bind(names).unwrap().eval(values).unwrap(),
        v,
        "{plain}"
    );
    v
}

const NLH: &[&str] = &["N", "lo", "hi"];

#[test]
fn slice_upper_bound_with_implicit_multiplication() {
    let t = "[N, lo, hi] -> { [(-1 + 16hi)] : hi > lo }";
    assert_eq!(ev(t, NLH, &[100, 2, 5]), Some(79));
    assert_eq!(ev(t, NLH, &[100, 5, 5]), None);
    assert_eq!(ev(t, NLH, &[100, -3, 0]), Some(-1));
}

#[test]
fn constants_and_simple_affine() {
    assert_eq!(ev("[N] -> { [(N - 1)] }", &["N"], &[10]), Some(9));
    assert_eq!(ev("{ [(5)] }", &[], &[]), Some(5));
    assert_eq!(ev("{ [(-5)] }", &[], &[]), Some(-5));
    assert_eq!(ev("[N] -> { [(-1 + N)] : N > 0 }", &["N"], &[0]), None);
    assert_eq!(ev("[N] -> { [(2N)] }", &["N"], &[21]), Some(42));
    assert_eq!(ev("[N] -> { [(-2N + 1)] }", &["N"], &[21]), Some(-41));
    assert_eq!(
        ev("[N, M] -> { [(16*N + 16 * M)] }", &["N", "M"], &[1, 2]),
        Some(48)
    );
}

#[test]
fn pieces_in_order_first_match_wins() {
    let t = "[w] -> { [(floor((w)/16) + 2w)] : w >= 0; [(0)] : w < 0 }";
    assert_eq!(ev(t, &["w"], &[0]), Some(0));
    assert_eq!(ev(t, &["w"], &[33]), Some(2 + 66));
    assert_eq!(ev(t, &["w"], &[-7]), Some(0));
    // Overlapping pieces: the first one is taken.
    let t = "[x] -> { [(1)] : x >= 0; [(2)] : x >= 5 }";
    assert_eq!(ev(t, &["x"], &[7]), Some(1));
}

#[test]
fn min_max_mod_floor() {
    let t = "[n, lo, hi] -> { [(min(n, 64hi) - 1)] : hi > lo >= 0 and n > 64lo }";
    assert_eq!(ev(t, &["n", "lo", "hi"], &[1000, 1, 3]), Some(191));
    assert_eq!(ev(t, &["n", "lo", "hi"], &[150, 1, 3]), Some(149));
    assert_eq!(ev(t, &["n", "lo", "hi"], &[50, 1, 3]), None);
    assert_eq!(
        ev("[a, b] -> { [(max(a, b, 3))] }", &["a", "b"], &[-4, 2]),
        Some(3)
    );
    assert_eq!(ev("[x] -> { [((x) mod 16)] }", &["x"], &[-1]), Some(15));
    assert_eq!(ev("[x] -> { [((x) mod 16)] }", &["x"], &[35]), Some(3));
    assert_eq!(ev("[x] -> { [(x % 4)] }", &["x"], &[-6]), Some(2));
    assert_eq!(
        ev("[lo] -> { [(-2 + 4 * floor((lo)/4))] }", &["lo"], &[7]),
        Some(2)
    );
    assert_eq!(
        ev("[lo] -> { [(-2 + 4 * floor((lo)/4))] }", &["lo"], &[-1]),
        Some(-6)
    );
    assert_eq!(ev("[x] -> { [(ceil((x)/4))] }", &["x"], &[-5]), Some(-1));
    assert_eq!(ev("[x] -> { [(ceil((x)/4))] }", &["x"], &[5]), Some(2));
    assert_eq!(ev("[x] -> { [(floord(x, 3))] }", &["x"], &[-1]), Some(-1));
    assert_eq!(ev("[x] -> { [(ceild(x, 3))] }", &["x"], &[-1]), Some(0));
    // isl's printing of a modulo term: f + a g - a (g mod m).
    assert_eq!(ev("[N] -> { [(N - (N) mod 2)] }", &["N"], &[7]), Some(6));
    assert_eq!(ev("[N] -> { [(3*((N) mod 4))] }", &["N"], &[7]), Some(9));
    // mod binds to the factor before it, as in isl: 2*(N mod 4).
    assert_eq!(ev("[N] -> { [(2*(N) mod 4)] }", &["N"], &[7]), Some(6));
    assert_eq!(ev("[N] -> { [(16N mod 5)] }", &["N"], &[7]), Some(32));
}

#[test]
fn rational_affine_value() {
    // isl prints a rational affine function as (num)/den.
    assert_eq!(
        ev("[N] -> { [(N)/2] : (N) mod 2 = 0 }", &["N"], &[10]),
        Some(5)
    );
    let e = PwExpr::parse("[N] -> { [(N)/2] }").unwrap();
    assert!(matches!(
        e.bind(&["N"]).unwrap().eval(&[3]),
        Err(ExprError::NotInteger { .. })
    ));
}

#[test]
fn chained_and_boolean_conditions() {
    let c = "0 <= lo < hi <= 10";
    assert!(cond(c, &["lo", "hi"], &[0, 10]));
    assert!(!cond(c, &["lo", "hi"], &[3, 3]));
    assert!(!cond(c, &["lo", "hi"], &[3, 11]));
    assert!(cond(
        "[N] -> { : N >= 1 and (N <= 5 or N = 100) }",
        &["N"],
        &[100]
    ));
    assert!(!cond(
        "[N] -> { : N >= 1 and (N <= 5 or N = 100) }",
        &["N"],
        &[99]
    ));
    assert!(cond("N >= 1 and hi > lo", &["N", "lo", "hi"], &[1, 0, 1]));
    assert!(cond("a != b", &["a", "b"], &[1, 2]));
    assert!(cond("a == b", &["a", "b"], &[2, 2]));
    assert!(cond("[N] -> { : }", &["N"], &[2]));
    assert!(cond("", &[], &[]));
    assert!(!cond("[N] -> { : false }", &["N"], &[2]));
    assert!(cond("(N) mod 2 = 0", &["N"], &[4]));
    assert!(cond("((N) mod 2 = 0)", &["N"], &[4]));
    // (y)/2 is rational: 7/2 > 3.
    assert!(cond("(x + 1 >= 0) and ((y)/2 <= 3)", &["x", "y"], &[-1, 6]));
    assert!(!cond(
        "(x + 1 >= 0) and ((y)/2 <= 3)",
        &["x", "y"],
        &[-1, 7]
    ));
    // and binds tighter than or
    assert!(cond("x = 1 or x = 2 and x = 3", &["x"], &[1]));
    assert!(!cond("(x = 1 or x = 2) and x = 3", &["x"], &[1]));
}

#[test]
fn existentials() {
    let even = "[N] -> { [(N)] : exists (e0 = floor((N)/2): 2e0 = N) }";
    assert_eq!(ev(even, &["N"], &[8]), Some(8));
    assert_eq!(ev(even, &["N"], &[9]), None);
    assert_eq!(ev(even, &["N"], &[-9]), None);
    // Determined only by an equality.
    let odd = "[N] -> { : exists (e0: N = 1 + 2e0 and e0 >= 0) }";
    assert!(cond(odd, &["N"], &[7]));
    assert!(!cond(odd, &["N"], &[8]));
    assert!(!cond(odd, &["N"], &[-1]));
    let two = "exists (e0, e1: 3e0 = N and 2e1 = e0)";
    assert!(cond(two, &["N"], &[12]));
    assert!(!cond(two, &["N"], &[9]));
    let defined = "[N] -> { : exists (e0 = floor((-1 + N)/2): N >= 2e0 + 1) }";
    assert!(cond(defined, &["N"], &[5]));
    // An existential that no equality fixes is reported, not guessed.
    assert!(matches!(
        Condition::parse("exists (e0: N <= 2e0 <= N + 1)"),
        Err(ExprError::Unsupported(_))
    ));
}

#[test]
fn quasi_polynomials() {
    let t = "1/2 * N^2 + 1/2 * N";
    for n in 0..20i64 {
        assert_eq!(ev(t, &["N"], &[n]), Some(n * (n + 1) / 2));
    }
    // Periodic number: element (N mod 2) of the list.
    let t = "1/2 * N + [0, 1/2]_N";
    for n in 0..20i64 {
        assert_eq!(ev(t, &["N"], &[n]), Some((n + 1) / 2), "N = {n}");
    }
    // Nested periodic numbers.
    let t = "[[1, 2]_M, [3, 4]_M]_N";
    assert_eq!(ev(t, &["N", "M"], &[0, 0]), Some(1));
    assert_eq!(ev(t, &["N", "M"], &[0, 1]), Some(2));
    assert_eq!(ev(t, &["N", "M"], &[3, 2]), Some(3));
    assert_eq!(ev(t, &["N", "M"], &[-1, -1]), Some(4));
    assert_eq!(ev("N*M + 2N^2", &["N", "M"], &[3, 4]), Some(30));
    assert_eq!(ev("( ( 1/2 * N + 3/2 ) * N + 1 )", &["N"], &[3]), Some(10));
    assert_eq!(ev("-N^2", &["N"], &[3]), Some(-9));
    assert_eq!(ev("(-N)^2", &["N"], &[3]), Some(9));
    assert_eq!(ev("[ 3, 7/2 ]_N * 2", &["N"], &[5]), Some(7));
    let e = PwExpr::parse("1/2 * N").unwrap();
    assert!(matches!(
        e.bind(&["N"]).unwrap().eval(&[3]),
        Err(ExprError::NotInteger { .. })
    ));
}

#[test]
fn params_without_header_in_order_of_appearance() {
    let e = PwExpr::parse("hi - lo + N*hi").unwrap();
    assert_eq!(e.params(), ["hi", "lo", "N"]);
    let e = PwExpr::parse("[N, lo, hi] -> { [(16lo)] }").unwrap();
    assert_eq!(e.params(), ["N", "lo", "hi"]);
    // Binding order is the caller's; extra names are fine.
    assert_eq!(
        e.bind(&["x", "lo", "N", "hi"])
            .unwrap()
            .eval(&[0, 3, 0, 0])
            .unwrap(),
        Some(48)
    );
}

#[test]
fn errors_are_reported_with_positions() {
    let err = PwExpr::parse("[N] -> { [(N - )] }").unwrap_err();
    let ExprError::Parse { col, message } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(*col, 16, "{message}");
    assert!(message.contains("expected an expression"), "{message}");

    let err = PwExpr::parse("[N] -> { [(M)] }").unwrap_err();
    assert_eq!(err.to_string(), "unknown parameter 'M' (parameters: N)");

    let err = PwExpr::parse("[N] -> { [(N)] }")
        .unwrap()
        .bind(&["M"])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "parameter 'N' has no value (bound names: M)"
    );

    // A header parameter that no piece uses needs no value.
    let e = PwExpr::parse("[N, lo, hi] -> { [(16lo)] : hi > lo }").unwrap();
    assert_eq!(
        e.bind(&["lo", "hi"]).unwrap().eval(&[1, 2]).unwrap(),
        Some(16)
    );
    assert_eq!(e.bind(&["lo", "hi"]).unwrap().n_values(), 2);
    assert!(matches!(e.bind(&["lo"]), Err(ExprError::Unbound { .. })));

    let err = PwExpr::parse("[N] -> { [(N)] }")
        .unwrap()
        .bind(&["N"])
        .unwrap()
        .eval(&[]);
    assert_eq!(err, Err(ExprError::TooFewValues { needed: 1, got: 0 }));

    for bad in [
        "",
        "{",
        "[N] -> { [(N)] ",
        "[N] -> { [(N)/0] }",
        "[N] -> { [(N mod 0)] }",
        "[N] -> { [(N)] : }",
        "[N] -> { [(N)] : N }",
        "[N] -> { [NaN] }",
        "[N, N] -> { [(N)] }",
        "N +* 2",
        "N ^ 100",
        "99999999999999999999999999999999999999999",
        "garbage!",
    ] {
        let r = PwExpr::parse(bad);
        assert!(r.is_err(), "'{bad}' parsed as {:?}", r);
        let msg = r.unwrap_err().to_string();
        assert!(!msg.contains('\n'), "{msg}");
    }

    // Deep nesting is refused, not a stack overflow.
    let deep = format!("{}N{}", "(".repeat(10_000), ")".repeat(10_000));
    assert!(PwExpr::parse(&deep).is_err());
    // Long flat sums are fine.
    let long = vec!["N"; 20_000].join(" + ");
    assert_eq!(ev(&long, &["N"], &[2]), Some(40_000));
}

#[test]
fn overflow_is_an_error() {
    let e = PwExpr::parse("N * N * N").unwrap().bind(&["N"]).unwrap();
    assert_eq!(e.eval(&[i64::MAX]), Err(ExprError::Overflow));
    let e = PwExpr::parse("N * N").unwrap().bind(&["N"]).unwrap();
    assert_eq!(e.eval(&[i64::MAX]), Err(ExprError::Overflow)); // i128 fits, i64 does not
    let e = PwExpr::parse("N^64").unwrap().bind(&["N"]).unwrap();
    assert_eq!(e.eval(&[3]), Err(ExprError::Overflow));
}

#[test]
fn counts_sum_first_matching_chambers() {
    let count = Count {
        at: Vec::new(),
        terms: vec![
            vec![
                Chamber {
                    domain: "N >= 16hi and hi > lo".into(),
                    value: "16hi - 16lo".into(),
                },
                Chamber {
                    domain: "16lo < N < 16hi".into(),
                    value: "N - 16lo".into(),
                },
            ],
            vec![Chamber {
                domain: "[N] -> { : N >= 1 }".into(),
                value: "[N] -> { [(1)] }".into(),
            }],
        ],
    };
    assert_eq!(eval_count(&count, NLH, &[1000, 10, 40]).unwrap(), 480 + 1);
    assert_eq!(eval_count(&count, NLH, &[1000, 50, 63]).unwrap(), 200 + 1);
    assert_eq!(eval_count(&count, NLH, &[0, 0, 1]).unwrap(), 0);
    let b = count.bind(NLH).unwrap();
    assert_eq!(b.eval(&[1000, 10, 40]).unwrap(), 481);
}

#[test]
fn opaque_products_become_parameters_shared_by_equal_subterms() {
    let e = PwExpr::parse(
        "[nx, ny, n] -> { [(ny*(nx - 1) + n)] : n > 0; [(ny*(nx - 1) + 2*ny + nx^2)] : n <= 0 }",
    )
    .unwrap();
    let o = e.with_opaque_products();
    assert_eq!(o.params(), ["nx", "ny", "n", "_p0", "_p1"]);
    let pieces = o.piece_texts();
    // one parameter for both `ny*(nx - 1)`, one for `nx^2`; `2*ny` stays
    assert_eq!(pieces[0].0, "_p0 + n");
    assert_eq!(pieces[1].0, "_p0 + 2*ny + _p1");
    // an affine expression is unchanged
    let affine = PwExpr::parse("[a] -> { [(2a + 1)] : a > 0 }").unwrap();
    assert_eq!(affine.with_opaque_products(), affine);
}
