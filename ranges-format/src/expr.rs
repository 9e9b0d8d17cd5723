//! Public expression types: [`PwExpr`], [`Condition`] and their bound forms.
//!
//! The life of an expression: the analysis prints it (isl's
//! `isl_pw_aff_to_str` text, or a quasi-polynomial), the range file stores
//! the text, the launcher parses it once ([`PwExpr::parse`]), binds the
//! parameter names to positions of its value vector once ([`PwExpr::bind`]),
//! and evaluates it per launch ([`BoundExpr::eval`]).
//!
//! See the crate docs for the syntax and the cost of evaluation.

use std::fmt;

use crate::ast::{self, Cond, Names, Piece};
use crate::parse;
use crate::rational::Rat;
use crate::ExprError;

/// A parsed piecewise quasi-affine expression (or quasi-polynomial): a list
/// of pieces `(value, condition)`; the first piece whose condition holds
/// gives the value, and no such piece means "undefined" (`None`).
///
/// Texts accepted, among others (see the syntax in the crate docs):
/// `[N, lo, hi] -> { [(-1 + 16hi)] : hi > lo }`, `{ [(5)] }`,
/// `[w] -> { [(floor((w)/16) + 2w)] : w >= 0; [(0)] : w < 0 }`, and a bare
/// quasi-polynomial such as `1/2 * N^2 + [0, 1/2]_N`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PwExpr {
    params: Vec<String>,
    exist_names: Vec<String>,
    pieces: Vec<Piece>,
}

/// A [`PwExpr`] whose parameters are resolved to positions of a value
/// vector; cheap to evaluate many times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundExpr {
    need: usize,
    n_exist: usize,
    pieces: Vec<Piece>,
}

impl PwExpr {
    /// Parses isl's piecewise text, a braced list of pieces with an optional
    /// `[params] ->` header, or a bare expression (one piece, always
    /// defined). With a header, every name must be a header parameter or an
    /// existential variable; without one, the parameters are the free names
    /// in order of first appearance.
    pub fn parse(text: &str) -> Result<PwExpr, ExprError> {
        let (header, mut pieces) = parse::parse_pw(text)?;
        let mut r = ast::Resolver::new(header);
        for p in pieces.iter_mut() {
            r.expr(&mut p.value)?;
            r.cond(&mut p.cond)?;
        }
        check_unique(&r.params)?;
        Ok(PwExpr {
            params: r.params,
            exist_names: r.exist_names,
            pieces,
        })
    }

    /// The parameter names, in the order of the text's header.
    pub fn params(&self) -> &[String] {
        &self.params
    }

    /// The number of pieces.
    pub fn n_pieces(&self) -> usize {
        self.pieces.len()
    }

    /// Resolves each parameter to its position in `names`; the values given
    /// to [`BoundExpr::eval`] follow `names`. Extra names are fine, and so is
    /// a header parameter that no piece uses; a used parameter missing from
    /// `names` is [`ExprError::Unbound`].
    pub fn bind(&self, names: &[&str]) -> Result<BoundExpr, ExprError> {
        let mut binder = ast::Binder::new(&self.params, names);
        let mut pieces = self.pieces.clone();
        for p in pieces.iter_mut() {
            binder.expr(&mut p.value);
            binder.cond(&mut p.cond);
        }
        let need = binder.finish()?;
        Ok(BoundExpr {
            need,
            n_exist: self.exist_names.len(),
            pieces,
        })
    }

    /// Parses, binds and evaluates in one call (slow path, for tests and
    /// one-off use).
    pub fn eval_named(&self, names: &[&str], values: &[i64]) -> Result<Option<i64>, ExprError> {
        self.bind(names)?.eval(values)
    }
}

impl BoundExpr {
    /// Evaluates with `values[i]` the value of `names[i]` given to
    /// [`PwExpr::bind`]. `Ok(None)` when no piece's condition holds. A value
    /// that is not an integer (a quasi-polynomial at a point where it is
    /// not integral) is [`ExprError::NotInteger`]; no allocation happens
    /// unless an error is returned.
    pub fn eval(&self, values: &[i64]) -> Result<Option<i64>, ExprError> {
        match self.eval_exact(values)? {
            Some(r) => r.to_i64().map(Some),
            None => Ok(None),
        }
    }

    pub(crate) fn eval_exact(&self, values: &[i64]) -> Result<Option<Rat>, ExprError> {
        if values.len() < self.need {
            return Err(ExprError::TooFewValues {
                needed: self.need,
                got: values.len(),
            });
        }
        ast::eval_pieces(&self.pieces, self.n_exist, values)
    }

    /// The least length of the value vector that [`BoundExpr::eval`] needs.
    pub fn n_values(&self) -> usize {
        self.need
    }
}

impl PwExpr {
    /// The expression with each non-affine product or power (of two
    /// factors that are not constants, e.g. `ny*(nx - 1)`) replaced by a new
    /// parameter, the same one for equal subterms, named `_p0`, `_p1`, ...
    /// What holds for every value of the new parameters holds for the
    /// expression, so a prover of affine facts (isl) can compare pieces
    /// whose non-affine parts are equal. Conditions under `exists` keep
    /// their products.
    pub fn with_opaque_products(&self) -> PwExpr {
        let mut opaque = Opaque {
            first: self.params.len() as u32,
            seen: Vec::new(),
        };
        let mut pieces = self.pieces.clone();
        for p in pieces.iter_mut() {
            opaque.expr(&mut p.value);
            opaque.cond(&mut p.cond);
        }
        let mut params = self.params.clone();
        for i in 0..opaque.seen.len() {
            let mut name = format!("_p{i}");
            while self.params.contains(&name) || self.exist_names.contains(&name) {
                name.insert(0, '_');
            }
            params.push(name);
        }
        PwExpr {
            params,
            exist_names: self.exist_names.clone(),
            pieces,
        }
    }
}

/// The non-affine subterms replaced so far ([`PwExpr::with_opaque_products`]):
/// the `i`-th is parameter `first + i`.
struct Opaque {
    first: u32,
    seen: Vec<ast::Expr>,
}

impl Opaque {
    fn param(&mut self, e: &ast::Expr) -> ast::Expr {
        let i = match self.seen.iter().position(|s| s == e) {
            Some(i) => i,
            None => {
                self.seen.push(e.clone());
                self.seen.len() - 1
            }
        };
        ast::Expr::Var(ast::Var::Param(self.first + i as u32))
    }

    fn expr(&mut self, e: &mut ast::Expr) {
        use ast::{Expr, MulOp};
        match e {
            Expr::Prod(first, rest) => {
                let n_varying = std::iter::once(&**first)
                    .chain(rest.iter().filter_map(|op| match op {
                        MulOp::Mul(t) => Some(t),
                        MulOp::Div(_) => None,
                    }))
                    .filter(|f| !is_constant(f))
                    .count();
                if n_varying >= 2 {
                    *e = self.param(e);
                    return;
                }
                self.expr(first);
                for op in rest {
                    if let MulOp::Mul(t) = op {
                        self.expr(t);
                    }
                }
            }
            Expr::Pow(a, k) if *k >= 2 && !is_constant(a) => *e = self.param(e),
            Expr::Neg(a) | Expr::Floor(a) | Expr::Ceil(a) | Expr::Mod(a, _) | Expr::Pow(a, _) => {
                self.expr(a)
            }
            Expr::Sum(first, rest) => {
                self.expr(first);
                for (_, t) in rest {
                    self.expr(t);
                }
            }
            Expr::Min(v) | Expr::Max(v) => v.iter_mut().for_each(|t| self.expr(t)),
            Expr::Int(_) | Expr::Var(_) | Expr::Periodic(..) => {}
        }
    }

    fn cond(&mut self, c: &mut Cond) {
        match c {
            Cond::And(v) | Cond::Or(v) => v.iter_mut().for_each(|c| self.cond(c)),
            Cond::Chain(first, rest) => {
                self.expr(first);
                for (_, t) in rest {
                    self.expr(t);
                }
            }
            Cond::True | Cond::False | Cond::Exists(_) => {}
        }
    }
}

/// Whether `e` names no variable.
fn is_constant(e: &ast::Expr) -> bool {
    use ast::{Expr, MulOp};
    match e {
        Expr::Int(_) => true,
        Expr::Var(_) | Expr::Periodic(..) => false,
        Expr::Neg(a) | Expr::Floor(a) | Expr::Ceil(a) | Expr::Mod(a, _) | Expr::Pow(a, _) => {
            is_constant(a)
        }
        Expr::Sum(first, rest) => is_constant(first) && rest.iter().all(|(_, t)| is_constant(t)),
        Expr::Prod(first, rest) => {
            is_constant(first)
                && rest.iter().all(|op| match op {
                    MulOp::Mul(t) => is_constant(t),
                    MulOp::Div(_) => true,
                })
        }
        Expr::Min(v) | Expr::Max(v) => v.iter().all(is_constant),
    }
}

/// Prints the canonical text: `[params] -> { [(value)] : cond; ... }`,
/// which [`PwExpr::parse`] reads back to an equal expression.
impl PwExpr {
    /// The pieces as text: `(value, condition)`, the condition `""` when
    /// always true. Names print as in [`fmt::Display`].
    pub fn piece_texts(&self) -> Vec<(String, String)> {
        let names = Names {
            params: &self.params,
            exist: &self.exist_names,
        };
        self.pieces
            .iter()
            .map(|p| {
                struct V<'a>(&'a Piece, &'a Names<'a>, bool);
                impl fmt::Display for V<'_> {
                    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        if self.2 {
                            ast::write_expr(&self.0.value, 0, self.1, f)
                        } else {
                            ast::write_cond(&self.0.cond, self.1, f)
                        }
                    }
                }
                let v = V(p, &names, true).to_string();
                let c = if p.cond == Cond::True {
                    String::new()
                } else {
                    V(p, &names, false).to_string()
                };
                (v, c)
            })
            .collect()
    }

    /// `sum_k coef_k * part_k` as one piecewise expression: the cross product
    /// of the parts' pieces, conditions conjoined. `coef_k` is an expression
    /// text over parameters (e.g. `width`, `nx*ny`, `1`). With no parts, or a
    /// part without pieces, the result has no pieces (undefined everywhere).
    pub fn linear_combination(terms: &[(&str, &PwExpr)]) -> Result<PwExpr, ExprError> {
        let mut params: Vec<String> = Vec::new();
        let mut pieces: Vec<(String, Vec<String>)> = vec![(String::new(), Vec::new())];
        for (coef, part) in terms {
            for p in &part.params {
                if !params.contains(p) {
                    params.push(p.clone());
                }
            }
            for w in coef.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
                if !w.is_empty()
                    && !w.chars().next().unwrap().is_ascii_digit()
                    && !params.iter().any(|p| p == w)
                {
                    params.push(w.to_string());
                }
            }
            let mut next = Vec::new();
            for (v, cs) in &pieces {
                for (pv, pc) in part.piece_texts() {
                    let term = if coef.trim() == "1" {
                        format!("({pv})")
                    } else {
                        format!("({coef})*({pv})")
                    };
                    let value = if v.is_empty() {
                        term
                    } else {
                        format!("{v} + {term}")
                    };
                    let mut conds = cs.clone();
                    let pc = format!("({pc})");
                    if pc != "()" && !conds.contains(&pc) {
                        conds.push(pc);
                    }
                    next.push((value, conds));
                }
            }
            pieces = next;
        }
        if terms.is_empty() {
            pieces.clear();
        }
        let body: Vec<String> = pieces
            .iter()
            .map(|(v, cs)| {
                if cs.is_empty() {
                    format!("[({v})]")
                } else {
                    format!("[({v})] : {}", cs.join(" and "))
                }
            })
            .collect();
        PwExpr::parse(&format!(
            "[{}] -> {{ {} }}",
            params.join(", "),
            body.join("; ")
        ))
    }
}

impl fmt::Display for PwExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = Names {
            params: &self.params,
            exist: &self.exist_names,
        };
        ast::write_header(&self.params, f)?;
        f.write_str("{ ")?;
        for (i, p) in self.pieces.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            f.write_str("[(")?;
            ast::write_expr(&p.value, 0, &names, f)?;
            f.write_str(")]")?;
            if p.cond != Cond::True {
                f.write_str(" : ")?;
                ast::write_cond(&p.cond, &names, f)?;
            }
        }
        f.write_str(" }")
    }
}

/// A parsed condition over parameters, as in a chamber domain or an
/// assumption: `N >= 1 and hi > lo`, `0 <= lo < hi <= 10`,
/// `[N] -> { : exists (e0 = floor((N)/2): 2e0 = N) }`. The empty text is
/// `true`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    params: Vec<String>,
    exist_names: Vec<String>,
    cond: Cond,
}

/// A [`Condition`] bound to positions of a value vector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundCondition {
    need: usize,
    n_exist: usize,
    cond: Cond,
}

impl Condition {
    /// Parses `cond`, `[params] -> { : cond }` or `{ : cond }`. Parameters
    /// follow the same rules as in [`PwExpr::parse`].
    pub fn parse(text: &str) -> Result<Condition, ExprError> {
        let (header, mut cond) = parse::parse_cond(text)?;
        let mut r = ast::Resolver::new(header);
        r.cond(&mut cond)?;
        check_unique(&r.params)?;
        Ok(Condition {
            params: r.params,
            exist_names: r.exist_names,
            cond,
        })
    }

    /// The parameter names.
    pub fn params(&self) -> &[String] {
        &self.params
    }

    /// The condition alone, as people read it (`w > 0`, `a = 0 or b > 1`):
    /// no parameter list, no braces; `true` where it always holds.
    pub fn text(&self) -> String {
        if self.cond == Cond::True {
            return "true".into();
        }
        struct C<'a>(&'a Condition);
        impl fmt::Display for C<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let names = Names {
                    params: &self.0.params,
                    exist: &self.0.exist_names,
                };
                ast::write_cond(&self.0.cond, &names, f)
            }
        }
        C(self).to_string()
    }

    /// Resolves parameters to positions in `names` (see [`PwExpr::bind`]).
    pub fn bind(&self, names: &[&str]) -> Result<BoundCondition, ExprError> {
        let mut binder = ast::Binder::new(&self.params, names);
        let mut cond = self.cond.clone();
        binder.cond(&mut cond);
        let need = binder.finish()?;
        Ok(BoundCondition {
            need,
            n_exist: self.exist_names.len(),
            cond,
        })
    }
}

impl BoundCondition {
    /// Whether the condition holds for `values` (ordered as the names given
    /// to [`Condition::bind`]).
    pub fn eval(&self, values: &[i64]) -> Result<bool, ExprError> {
        if values.len() < self.need {
            return Err(ExprError::TooFewValues {
                needed: self.need,
                got: values.len(),
            });
        }
        if self.n_exist == 0 {
            return ast::eval_cond(&self.cond, values, &mut []);
        }
        let mut store = [Rat::ZERO; ast::MAX_EXISTENTIALS];
        let n = self.n_exist.min(ast::MAX_EXISTENTIALS);
        ast::eval_cond(&self.cond, values, &mut store[..n])
    }
}

/// Prints `[params] -> { : cond }`, which [`Condition::parse`] reads back
/// to an equal condition.
impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = Names {
            params: &self.params,
            exist: &self.exist_names,
        };
        ast::write_header(&self.params, f)?;
        f.write_str("{ : ")?;
        ast::write_cond(&self.cond, &names, f)?;
        f.write_str(" }")
    }
}

fn check_unique(params: &[String]) -> Result<(), ExprError> {
    for (i, p) in params.iter().enumerate() {
        if params[..i].contains(p) {
            return Err(ExprError::Parse {
                col: 1,
                message: format!("parameter '{p}' is listed twice"),
            });
        }
    }
    Ok(())
}
