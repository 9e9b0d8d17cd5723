//! How the human report writes a piecewise bound: as `min(..)` or `max(..)`
//! only where that is arithmetic truth, else as its cases.
//!
//! A range's bound is isl's piecewise value: on each piece of its domain,
//! one value. `data[i]` read by work-items `i < n` has the upper bound
//! `gs0 + go0 - 1` where `n >= gs0 + go0` and `n - 1` where `n < gs0 + go0`,
//! which is `min(gs0 + go0 - 1, n - 1)`: on each piece its value is the
//! least of all the values. Nothing makes that so in general (a bound may
//! take the larger value on one piece and the smaller on another), so the
//! report asks isl whether, on every piece, the piece's value is at most
//! (for `min`) or at least (for `max`) every other piece's value; when
//! neither holds, or isl cannot tell, it lists the cases. A product of
//! parameters (a delinearized array's `ny*(nx - 1)`) is one more
//! parameter to isl, free to take any value: what holds for all of them
//! holds for the product.

use std::fmt;

use access_analysis::isl::Isl;
use ranges_format::PwExpr;

use super::tidy;

/// Most distinct values a bound is written with; past it, their count.
const MAX_PIECES: usize = 4;

/// isl operations each comparison of two pieces may take (0 would be none
/// at all); past it, the comparison is "unknown" and the cases are listed.
const MAX_ISL_OPERATIONS: u64 = 1_000_000;

/// A bound as the report writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoundForm {
    /// A text that is not a piecewise expression clpart reads, as it is.
    Text(String),
    /// Defined nowhere.
    Empty,
    /// One value wherever the bound is defined.
    Value(String),
    /// The least of these values, wherever the bound is defined.
    Min(Vec<String>),
    /// The greatest of these values, wherever the bound is defined.
    Max(Vec<String>),
    /// Each value with the condition under which the bound takes it.
    Cases(Vec<(String, String)>),
}

/// The form of the bound `text` (a range file's piecewise expression):
/// [`BoundForm::Min`] or [`BoundForm::Max`] only where isl proves it;
/// `upper` says which of the two to name when both hold (every value
/// equal wherever the bound is defined).
pub fn bound_form(text: &str, upper: bool) -> BoundForm {
    let Ok(e) = PwExpr::parse(text) else {
        return BoundForm::Text(text.to_string());
    };
    let pieces = e.piece_texts();
    // distinct values (tidied), each with its pieces' conditions
    let mut values: Vec<(String, Vec<String>)> = Vec::new();
    for (v, c) in &pieces {
        let v = tidy(v);
        match values.iter_mut().find(|(w, _)| *w == v) {
            Some((_, cs)) => cs.push(c.clone()),
            None => values.push((v, vec![c.clone()])),
        }
    }
    match values.len() {
        0 => return BoundForm::Empty,
        1 => return BoundForm::Value(values.pop().expect("one value").0),
        _ => {}
    }
    let names: Vec<String> = values.iter().map(|(v, _)| v.clone()).collect();
    let order = if upper {
        [Extreme::Greatest, Extreme::Least]
    } else {
        [Extreme::Least, Extreme::Greatest]
    };
    // isl compares affine values: products such as `ny*(nx - 1)` become
    // parameters of their own, which cancel where pieces share them
    let affine = e.with_opaque_products();
    let affine_pieces = affine.piece_texts();
    for extreme in order {
        if proven(&affine, &affine_pieces, extreme) {
            return match extreme {
                Extreme::Least => BoundForm::Min(names),
                Extreme::Greatest => BoundForm::Max(names),
            };
        }
    }
    BoundForm::Cases(
        values
            .into_iter()
            .map(|(v, cs)| {
                let c = if cs.len() == 1 {
                    cs[0].clone()
                } else {
                    cs.iter()
                        .map(|c| format!("({c})"))
                        .collect::<Vec<_>>()
                        .join(" or ")
                };
                (v, c)
            })
            .collect(),
    )
}

#[derive(Clone, Copy)]
enum Extreme {
    Least,
    Greatest,
}

/// Whether on each piece of `e` its value is the `extreme` of every
/// piece's value: no point of piece `i`'s condition where its value is
/// above (for the least) or below (for the greatest) piece `j`'s value.
fn proven(e: &PwExpr, pieces: &[(String, String)], extreme: Extreme) -> bool {
    let isl = Isl::new(MAX_ISL_OPERATIONS);
    let params = e.params().join(", ");
    let op = match extreme {
        Extreme::Least => ">",
        Extreme::Greatest => "<",
    };
    for (i, (vi, ci)) in pieces.iter().enumerate() {
        for (j, (vj, _)) in pieces.iter().enumerate() {
            if i == j || vi == vj {
                continue;
            }
            let cond = if ci.is_empty() {
                String::new()
            } else {
                format!("({ci}) and ")
            };
            let text = format!("[{params}] -> {{ : {cond}({vi}) {op} ({vj}) }}");
            let empty = isl
                .set(&text)
                .ok()
                .and_then(|s| s.is_empty().ok())
                .unwrap_or(false);
            if !empty {
                return false;
            }
        }
    }
    true
}

/// How the short report writes a bound of several values by case (what
/// its legend explains).
pub const ONE_OF: &str = "one of(";

impl BoundForm {
    /// The bound as the short report writes it: as [`fmt::Display`] does,
    /// but a bound by case as the values it takes, `one of(a, b)`, its
    /// conditions left to the whole report (they can run to thousands of
    /// characters: a 2-D stencil's halo at the array's edges).
    pub fn brief(&self) -> String {
        match self {
            BoundForm::Cases(cases) if cases.len() <= MAX_PIECES => {
                let values: Vec<&str> = cases.iter().map(|(v, _)| v.as_str()).collect();
                format!("{ONE_OF}{})", values.join(", "))
            }
            _ => self.to_string(),
        }
    }
}

impl fmt::Display for BoundForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoundForm::Text(t) => f.write_str(t),
            BoundForm::Empty => f.write_str("(empty)"),
            BoundForm::Value(v) => f.write_str(v),
            BoundForm::Min(vs) | BoundForm::Max(vs) => {
                let (name, words) = match self {
                    BoundForm::Min(_) => ("min", "least"),
                    _ => ("max", "greatest"),
                };
                if vs.len() <= MAX_PIECES {
                    write!(f, "{name}({})", vs.join(", "))
                } else {
                    write!(f, "<{words} of {} values>", vs.len())
                }
            }
            BoundForm::Cases(cases) => {
                if cases.len() > MAX_PIECES {
                    return write!(f, "<one of {} values, by case>", cases.len());
                }
                let parts: Vec<String> = cases
                    .iter()
                    .map(|(v, c)| {
                        if c.is_empty() {
                            v.clone()
                        } else {
                            format!("{v} if {c}")
                        }
                    })
                    .collect();
                write!(f, "({})", parts.join("; "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lesser_of_two_values_by_case_is_a_min() {
        // histogram's `data` upper bound: work-items i < n of the NDRange
        let upper = "[gs0, go0, n] -> { [(-1 + gs0 + go0)] : n >= gs0 + go0; [(-1 + n)] : go0 < n < gs0 + go0 }";
        assert_eq!(
            bound_form(upper, true),
            BoundForm::Min(vec!["gs0 + go0 - 1".into(), "n - 1".into()])
        );
        assert_eq!(
            bound_form(upper, true).to_string(),
            "min(gs0 + go0 - 1, n - 1)"
        );
    }

    #[test]
    fn products_shared_by_the_pieces_cancel() {
        // bicg's `A`, rows of ny elements: the last row's bound
        let upper = "[gs0, go0, nx, ny] -> { [(ny*(nx - 1) + (-1 + gs0 + go0))] : nx > 0 and ny > gs0 + go0; [(ny*(nx - 1) + (-1 + ny))] : nx > 0 and go0 < ny <= gs0 + go0 }";
        assert_eq!(
            bound_form(upper, true).to_string(),
            "min(ny*(nx - 1) + (gs0 + go0 - 1), ny*(nx - 1) + (ny - 1))"
        );
        // different products prove nothing
        let upper = "[a, b, c] -> { [(a*b)] : c > 0; [(a*c)] : c <= 0 }";
        assert!(matches!(bound_form(upper, true), BoundForm::Cases(_)));
    }

    #[test]
    fn the_greater_of_two_values_by_case_is_a_max() {
        let upper = "[a, b] -> { [(a)] : a >= b; [(b)] : a < b }";
        assert_eq!(bound_form(upper, true).to_string(), "max(a, b)");
        assert_eq!(bound_form(upper, false).to_string(), "max(a, b)");
    }

    #[test]
    fn values_that_are_neither_least_nor_greatest_are_listed_by_case() {
        // the larger value where a > 0, the smaller where a <= 0
        let upper = "[a] -> { [(a)] : a > 0; [(-a)] : a <= 0 }";
        // |a| is max(a, -a): a proof, not a guess
        assert_eq!(bound_form(upper, true).to_string(), "max(a, -a)");
        let neither = "[a] -> { [(2a)] : a > 0; [(a + 5)] : a <= 0 }";
        let form = bound_form(neither, true);
        assert_eq!(
            form,
            BoundForm::Cases(vec![
                ("2*a".into(), "a > 0".into()),
                ("a + 5".into(), "a <= 0".into())
            ]),
            "{form}"
        );
        assert_eq!(form.to_string(), "(2*a if a > 0; a + 5 if a <= 0)");
        // the short report names the values only
        assert_eq!(form.brief(), "one of(2*a, a + 5)");
        assert_eq!(bound_form(upper, true).brief(), "max(a, -a)");
    }
}
