//! Random affine / floor / mod / min / max expressions and conditions,
//! rendered to isl-style text in several spellings, evaluate equal to a
//! direct Rust evaluation; their canonical text reads back equal.

use proptest::prelude::*;
use ranges_format::{Condition, PwExpr};

const NAMES: [&str; 4] = ["N", "lo", "hi", "w_1"];

#[derive(Debug, Clone)]
enum E {
    Int(i64),
    Var(usize),
    Add(Box<E>, Box<E>),
    Sub(Box<E>, Box<E>),
    /// Constant times expression; `style` picks `k*e`, `k * e` or `ke`.
    Scale(i64, Box<E>, u8),
    FloorDiv(Box<E>, i64),
    CeilDiv(Box<E>, i64),
    Mod(Box<E>, i64),
    Min(Box<E>, Box<E>),
    Max(Box<E>, Box<E>),
    Neg(Box<E>),
}

#[derive(Debug, Clone)]
enum C {
    Cmp(E, &'static str, E),
    Chain3(E, &'static str, E, &'static str, E),
    And(Box<C>, Box<C>),
    Or(Box<C>, Box<C>),
}

fn eval(e: &E, v: &[i64]) -> i128 {
    match e {
        E::Int(k) => *k as i128,
        E::Var(i) => v[*i] as i128,
        E::Add(a, b) => eval(a, v) + eval(b, v),
        E::Sub(a, b) => eval(a, v) - eval(b, v),
        E::Scale(k, a, _) => *k as i128 * eval(a, v),
        E::FloorDiv(a, d) => eval(a, v).div_euclid(*d as i128),
        E::CeilDiv(a, d) => -(-eval(a, v)).div_euclid(*d as i128),
        E::Mod(a, m) => eval(a, v).rem_euclid(*m as i128),
        E::Min(a, b) => eval(a, v).min(eval(b, v)),
        E::Max(a, b) => eval(a, v).max(eval(b, v)),
        E::Neg(a) => -eval(a, v),
    }
}

fn cmp(op: &str, a: i128, b: i128) -> bool {
    match op {
        "<" => a < b,
        "<=" => a <= b,
        ">" => a > b,
        ">=" => a >= b,
        "=" => a == b,
        _ => unreachable!("{op}"),
    }
}

fn eval_c(c: &C, v: &[i64]) -> bool {
    match c {
        C::Cmp(a, op, b) => cmp(op, eval(a, v), eval(b, v)),
        C::Chain3(a, o1, b, o2, c) => {
            let (a, b, c) = (eval(a, v), eval(b, v), eval(c, v));
            cmp(o1, a, b) && cmp(o2, b, c)
        }
        C::And(a, b) => eval_c(a, v) && eval_c(b, v),
        C::Or(a, b) => eval_c(a, v) || eval_c(b, v),
    }
}

fn is_atom(e: &E) -> bool {
    matches!(
        e,
        E::Var(_) | E::Min(..) | E::Max(..) | E::FloorDiv(..) | E::CeilDiv(..)
    ) || matches!(e, E::Int(k) if *k >= 0)
}

/// Renders with parentheses around every non-atomic operand.
fn render(e: &E) -> String {
    let p = |e: &E| {
        if is_atom(e) {
            render(e)
        } else {
            format!("({})", render(e))
        }
    };
    match e {
        E::Int(k) => k.to_string(),
        E::Var(i) => NAMES[*i].to_string(),
        // Sums need no parentheses on the left.
        E::Add(a, b) => format!("{} + {}", render(a), p(b)),
        E::Sub(a, b) => format!("{} - {}", render(a), p(b)),
        E::Scale(k, a, style) => match (style % 3, &**a) {
            (0, E::Var(i)) if *k >= 0 => format!("{k}{}", NAMES[*i]),
            (1, _) => format!("{k} * {}", p(a)),
            _ => format!("{k}*{}", p(a)),
        },
        E::FloorDiv(a, d) => format!("floor(({})/{d})", render(a)),
        E::CeilDiv(a, d) => format!("ceil(({})/{d})", render(a)),
        E::Mod(a, m) => format!("({}) mod {m}", render(a)),
        E::Min(a, b) => format!("min({}, {})", render(a), render(b)),
        E::Max(a, b) => format!("max({}, {})", render(a), render(b)),
        E::Neg(a) => format!("-{}", p(a)),
    }
}

fn render_c(c: &C) -> String {
    match c {
        C::Cmp(a, op, b) => format!("{} {op} {}", render(a), render(b)),
        C::Chain3(a, o1, b, o2, c) => {
            format!("{} {o1} {} {o2} {}", render(a), render(b), render(c))
        }
        C::And(a, b) => format!("({}) and ({})", render_c(a), render_c(b)),
        C::Or(a, b) => format!("{} or {}", render_c(a), render_c(b)),
    }
}

fn expr() -> impl Strategy<Value = E> {
    let leaf = prop_oneof![
        (-50i64..50).prop_map(E::Int),
        (0..NAMES.len()).prop_map(E::Var),
    ];
    leaf.prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Add(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Sub(Box::new(a), Box::new(b))),
            (-20i64..20, inner.clone(), any::<u8>()).prop_map(|(k, a, s)| E::Scale(
                k,
                Box::new(a),
                s
            )),
            (inner.clone(), 1i64..20).prop_map(|(a, d)| E::FloorDiv(Box::new(a), d)),
            (inner.clone(), 1i64..20).prop_map(|(a, d)| E::CeilDiv(Box::new(a), d)),
            (inner.clone(), 1i64..20).prop_map(|(a, m)| E::Mod(Box::new(a), m)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Min(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Max(Box::new(a), Box::new(b))),
            inner.prop_map(|a| E::Neg(Box::new(a))),
        ]
    })
}

fn op() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just("<"), Just("<="), Just(">"), Just(">="), Just("=")]
}

fn condition() -> impl Strategy<Value = C> {
    let leaf = prop_oneof![
        (expr(), op(), expr()).prop_map(|(a, o, b)| C::Cmp(a, o, b)),
        (expr(), op(), expr(), op(), expr())
            .prop_map(|(a, o1, b, o2, c)| C::Chain3(a, o1, b, o2, c)),
    ];
    leaf.prop_recursive(2, 6, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| C::And(Box::new(a), Box::new(b))),
            (inner.clone(), inner).prop_map(|(a, b)| C::Or(Box::new(a), Box::new(b))),
        ]
    })
}

fn values() -> impl Strategy<Value = Vec<i64>> {
    proptest::collection::vec(-1000i64..1000, NAMES.len())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn single_expression_matches_direct_evaluation(e in expr(), v in values()) {
        let text = format!("[{}] -> {{ [({})] }}", NAMES.join(", "), render(&e));
        let parsed = PwExpr::parse(&text).map_err(|err| TestCaseError::fail(format!("{text}: {err}")))?;
        let got = parsed.bind(&NAMES).unwrap().eval(&v).unwrap();
        prop_assert_eq!(got.map(i128::from), Some(eval(&e, &v)), "{}", text);

        // Bare form, parameters collected from the text.
        let bare = PwExpr::parse(&render(&e)).unwrap();
        prop_assert_eq!(bare.bind(&NAMES).unwrap().eval(&v).unwrap(), got);

        // Canonical text reads back to an equal expression.
        let canon = parsed.to_string();
        let again = PwExpr::parse(&canon).map_err(|err| TestCaseError::fail(format!("{canon}: {err}")))?;
        prop_assert_eq!(&again, &parsed, "{}", canon);
        prop_assert_eq!(again.bind(&NAMES).unwrap().eval(&v).unwrap(), got);
    }

    #[test]
    fn piecewise_takes_first_true_piece(
        pieces in proptest::collection::vec((expr(), condition()), 1..4),
        v in values(),
    ) {
        let body: Vec<String> = pieces
            .iter()
            .map(|(e, c)| format!("[({})] : {}", render(e), render_c(c)))
            .collect();
        let text = format!("[{}] -> {{ {} }}", NAMES.join(", "), body.join("; "));
        let want = pieces.iter().find(|(_, c)| eval_c(c, &v)).map(|(e, _)| eval(e, &v));
        let parsed = PwExpr::parse(&text).map_err(|err| TestCaseError::fail(format!("{text}: {err}")))?;
        let got = parsed.bind(&NAMES).unwrap().eval(&v).unwrap();
        prop_assert_eq!(got.map(i128::from), want, "{}", text);

        let canon = parsed.to_string();
        let again = PwExpr::parse(&canon).map_err(|err| TestCaseError::fail(format!("{canon}: {err}")))?;
        prop_assert_eq!(&again, &parsed, "{}", canon);

        // Each condition alone, as a Condition.
        for (_, c) in &pieces {
            let cond = Condition::parse(&render_c(c)).unwrap();
            prop_assert_eq!(cond.bind(&NAMES).unwrap().eval(&v).unwrap(), eval_c(c, &v));
            let again = Condition::parse(&cond.to_string()).unwrap();
            prop_assert_eq!(&again, &cond);
        }
    }

    #[test]
    fn parser_never_panics_on_garbage(s in "[ -~]{0,60}") {
        let _ = PwExpr::parse(&s);
        let _ = Condition::parse(&s);
    }

    #[test]
    fn parser_never_panics_on_near_valid_text(
        e in expr(),
        cut in 0usize..200,
        junk in "[-+*/()\\[\\]{}:;<=>, a-z0-9_]{0,4}",
    ) {
        let text = format!("[N, lo, hi, w_1] -> {{ [({})] : N >= 0 }}", render(&e));
        let at = text.char_indices().map(|(i, _)| i).nth(cut % text.len()).unwrap_or(0);
        let mangled = format!("{}{}{}", &text[..at], junk, &text[at..]);
        if let Ok(p) = PwExpr::parse(&mangled) {
            // Whatever parses must print and read back equal.
            let again = PwExpr::parse(&p.to_string()).unwrap();
            prop_assert_eq!(again, p);
        }
    }
}
