//! Text forms of affine expressions and constraint rows over the parameters.

use ranges_format::Rat;

/// Writes `sum(coefs[k] * names[k]) + constant` as e.g. `3/2 * N - lo + 1`;
/// `0` when everything is zero.
pub(crate) fn affine(coefs: &[Rat], constant: Rat, names: &[String]) -> String {
    let mut out = String::new();
    let push = |neg: bool, body: String, out: &mut String| {
        if out.is_empty() {
            if neg {
                out.push('-');
            }
        } else {
            out.push_str(if neg { " - " } else { " + " });
        }
        out.push_str(&body);
    };
    for (c, name) in coefs.iter().zip(names) {
        if c.is_zero() {
            continue;
        }
        let body = if c.is_unit() {
            name.clone()
        } else {
            format!("{} * {name}", c.abs_text())
        };
        push(c.is_negative(), body, &mut out);
    }
    if !constant.is_zero() || out.is_empty() {
        push(constant.is_negative(), constant.abs_text(), &mut out);
    }
    out
}

/// Writes one PolyLib constraint row `[eq(0)/ineq(1), coefs..., constant]`
/// as `expr >= c`, `expr <= c` or `expr = c`; `None` for a row that always
/// holds, `Some("false")` for one that never does.
pub(crate) fn constraint(row: &[i64], names: &[String]) -> Option<String> {
    let n = names.len();
    let is_eq = row[0] == 0;
    let mut coefs: Vec<i128> = row[1..=n].iter().map(|&v| v as i128).collect();
    let mut constant = row[n + 1] as i128;
    if coefs.iter().all(|&c| c == 0) {
        let holds = if is_eq { constant == 0 } else { constant >= 0 };
        return if holds {
            None
        } else {
            Some("false".to_string())
        };
    }
    // Prefer `N <= 5` to `-N >= -5`, and `N = 5` to `-N = -5`.
    let flip = if is_eq {
        coefs.iter().find(|&&c| c != 0).is_some_and(|&c| c < 0)
    } else {
        coefs.iter().all(|&c| c <= 0)
    };
    if flip {
        coefs.iter_mut().for_each(|c| *c = -*c);
        constant = -constant;
    }
    let lhs = affine(
        &coefs.iter().map(|&c| Rat::int(c)).collect::<Vec<_>>(),
        Rat::ZERO,
        names,
    );
    let op = match (is_eq, flip) {
        (true, _) => "=",
        (false, false) => ">=",
        (false, true) => "<=",
    };
    Some(format!("{lhs} {op} {}", -constant))
}

/// Writes a conjunction of constraint rows joined by ` and `; `true` when
/// no row constrains anything.
pub(crate) fn conjunction(rows: &[Vec<i64>], names: &[String]) -> String {
    let parts: Vec<String> = rows.iter().filter_map(|r| constraint(r, names)).collect();
    if parts.is_empty() {
        "true".to_string()
    } else {
        parts.join(" and ")
    }
}

/// Whether the parameter values satisfy every row of a conjunction.
/// `None` on arithmetic overflow.
pub(crate) fn holds(rows: &[Vec<i64>], values: &[i64]) -> Option<bool> {
    let n = values.len();
    for row in rows {
        let mut sum = row[n + 1] as i128;
        for (c, &v) in row[1..=n].iter().zip(values) {
            sum = sum.checked_add((*c as i128).checked_mul(v as i128)?)?;
        }
        let ok = if row[0] == 0 { sum == 0 } else { sum >= 0 };
        if !ok {
            return Some(false);
        }
    }
    Some(true)
}
