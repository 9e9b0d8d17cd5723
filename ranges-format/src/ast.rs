//! The syntax tree shared by [`crate::PwExpr`] and [`crate::Condition`]:
//! name resolution, binding to value slots, exact evaluation and printing.
//!
//! Long sums, products and conjunctions are flat lists, so the depth of a
//! tree grows only with the nesting of brackets in the text (which the
//! parser bounds); recursion over a tree can therefore not overflow the stack.

use std::cmp::Ordering;
use std::fmt::{self, Write as _};

use crate::rational::Rat;
use crate::ExprError;

/// Most existential variables one expression may bind; their values live in a
/// fixed array on the stack during evaluation.
pub(crate) const MAX_EXISTENTIALS: usize = 16;

/// A variable reference, in the stage the tree is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Var {
    /// As parsed, not yet resolved.
    Name(String),
    /// Parameter `i` of the expression's parameter list.
    Param(u32),
    /// Existential variable slot `i`.
    Exist(u32),
    /// After binding: index `i` of the value vector.
    Value(u32),
}

/// `+` or `-` between the terms of a sum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AddOp {
    Add,
    Sub,
}

/// `* factor` or `/ constant` after the first factor of a product.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MulOp {
    Mul(Expr),
    /// Exact division by a positive integer constant.
    Div(i128),
}

/// A (quasi-polynomial, piecewise-free) expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Expr {
    Int(i128),
    Var(Var),
    Neg(Box<Expr>),
    Sum(Box<Expr>, Vec<(AddOp, Expr)>),
    Prod(Box<Expr>, Vec<MulOp>),
    Floor(Box<Expr>),
    Ceil(Box<Expr>),
    /// `e mod m1 mod m2 ...`, every modulus positive.
    Mod(Box<Expr>, Vec<i128>),
    Min(Vec<Expr>),
    Max(Vec<Expr>),
    Pow(Box<Expr>, u32),
    /// PolyLib periodic number: element `var mod len` of the list.
    Periodic(Var, Vec<Expr>),
}

/// A comparison operator of a chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CmpOp {
    Lt,
    Le,
    Eq,
    Ne,
    Ge,
    Gt,
}

impl CmpOp {
    pub(crate) fn text(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Eq => "=",
            CmpOp::Ne => "!=",
            CmpOp::Ge => ">=",
            CmpOp::Gt => ">",
        }
    }

    fn holds(self, o: Ordering) -> bool {
        match self {
            CmpOp::Lt => o == Ordering::Less,
            CmpOp::Le => o != Ordering::Greater,
            CmpOp::Eq => o == Ordering::Equal,
            CmpOp::Ne => o != Ordering::Equal,
            CmpOp::Ge => o != Ordering::Less,
            CmpOp::Gt => o == Ordering::Greater,
        }
    }
}

/// A condition over parameters (and existential variables).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cond {
    True,
    False,
    And(Vec<Cond>),
    Or(Vec<Cond>),
    /// `e0 op1 e1 op2 e2 ...`: every adjacent comparison holds.
    Chain(Expr, Vec<(CmpOp, Expr)>),
    Exists(Box<Exists>),
}

/// `exists (v1 = def, v2: body)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Exists {
    pub(crate) vars: Vec<ExVar>,
    pub(crate) body: Cond,
}

/// One existential variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExVar {
    pub(crate) name: String,
    /// Slot in the existential value array (set by resolution).
    pub(crate) slot: u32,
    /// `e = def` as printed by isl for a known integer division.
    pub(crate) def: Option<Expr>,
    /// For a variable without definition: expressions `f` linear in the
    /// variable with `f = 0` among the top-level conjuncts of the body; the
    /// first with a non-zero coefficient determines the variable.
    pub(crate) solve: Vec<Expr>,
}

/// One piece of a piecewise expression: its value where its condition holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Piece {
    pub(crate) value: Expr,
    pub(crate) cond: Cond,
}

// ---------------------------------------------------------------------------
// Name resolution

/// Resolves names to parameter and existential slots.
pub(crate) struct Resolver {
    /// The parameter list: fixed when the text had a `[...] ->` header,
    /// otherwise grown in order of first appearance.
    pub(crate) params: Vec<String>,
    pub(crate) fixed: bool,
    /// Names of all existential slots, in slot order.
    pub(crate) exist_names: Vec<String>,
    /// Existentials in scope, innermost last.
    scope: Vec<(String, u32)>,
}

impl Resolver {
    pub(crate) fn new(header: Option<Vec<String>>) -> Resolver {
        let fixed = header.is_some();
        Resolver {
            params: header.unwrap_or_default(),
            fixed,
            exist_names: Vec::new(),
            scope: Vec::new(),
        }
    }

    fn var(&mut self, v: &mut Var) -> Result<(), ExprError> {
        let Var::Name(name) = v else { return Ok(()) };
        if let Some((_, slot)) = self.scope.iter().rev().find(|(n, _)| n == name) {
            *v = Var::Exist(*slot);
            return Ok(());
        }
        if let Some(i) = self.params.iter().position(|p| p == name) {
            *v = Var::Param(i as u32);
            return Ok(());
        }
        if self.fixed {
            return Err(ExprError::UnknownParam {
                name: name.clone(),
                known: self.params.join(", "),
            });
        }
        self.params.push(name.clone());
        *v = Var::Param((self.params.len() - 1) as u32);
        Ok(())
    }

    pub(crate) fn expr(&mut self, e: &mut Expr) -> Result<(), ExprError> {
        match e {
            Expr::Int(_) => Ok(()),
            Expr::Var(v) => self.var(v),
            Expr::Neg(a) | Expr::Floor(a) | Expr::Ceil(a) | Expr::Pow(a, _) | Expr::Mod(a, _) => {
                self.expr(a)
            }
            Expr::Sum(first, rest) => {
                self.expr(first)?;
                rest.iter_mut().try_for_each(|(_, t)| self.expr(t))
            }
            Expr::Prod(first, rest) => {
                self.expr(first)?;
                rest.iter_mut().try_for_each(|op| match op {
                    MulOp::Mul(t) => self.expr(t),
                    MulOp::Div(_) => Ok(()),
                })
            }
            Expr::Min(v) | Expr::Max(v) => v.iter_mut().try_for_each(|t| self.expr(t)),
            Expr::Periodic(var, items) => {
                self.var(var)?;
                items.iter_mut().try_for_each(|t| self.expr(t))
            }
        }
    }

    pub(crate) fn cond(&mut self, c: &mut Cond) -> Result<(), ExprError> {
        match c {
            Cond::True | Cond::False => Ok(()),
            Cond::And(v) | Cond::Or(v) => v.iter_mut().try_for_each(|t| self.cond(t)),
            Cond::Chain(first, rest) => {
                self.expr(first)?;
                rest.iter_mut().try_for_each(|(_, t)| self.expr(t))
            }
            Cond::Exists(ex) => self.exists(ex),
        }
    }

    fn exists(&mut self, ex: &mut Exists) -> Result<(), ExprError> {
        let depth = self.scope.len();
        let first_slot = self.exist_names.len();
        for v in ex.vars.iter_mut() {
            if self.exist_names.len() >= MAX_EXISTENTIALS {
                return Err(ExprError::Unsupported(format!(
                    "more than {MAX_EXISTENTIALS} existential variables"
                )));
            }
            if let Some(d) = v.def.as_mut() {
                // A definition sees the variables listed before it.
                self.expr(d)?;
            }
            v.slot = self.exist_names.len() as u32;
            self.exist_names.push(v.name.clone());
            self.scope.push((v.name.clone(), v.slot));
        }
        self.cond(&mut ex.body)?;
        self.scope.truncate(depth);

        // Find, for each variable without definition, the equalities that
        // determine it. They may use variables listed before it (already
        // known when it is solved) and outer ones, but not later ones.
        let mut conjuncts = Vec::new();
        top_conjuncts(&ex.body, &mut conjuncts);
        for k in 0..ex.vars.len() {
            if ex.vars[k].def.is_some() {
                continue;
            }
            let slot = ex.vars[k].slot;
            let later: Vec<u32> = (first_slot as u32 + k as u32 + 1
                ..first_slot as u32 + ex.vars.len() as u32)
                .collect();
            let mut solve = Vec::new();
            for c in &conjuncts {
                let Cond::Chain(first, rest) = c else {
                    continue;
                };
                let mut lhs = first;
                for (op, rhs) in rest {
                    if *op == CmpOp::Eq {
                        let f = Expr::Sum(Box::new(lhs.clone()), vec![(AddOp::Sub, rhs.clone())]);
                        if uses_exist(&f, slot)
                            && linear_in(&f, slot)
                            && !later.iter().any(|s| uses_exist(&f, *s))
                        {
                            solve.push(f);
                        }
                    }
                    lhs = rhs;
                }
            }
            if solve.is_empty() {
                return Err(ExprError::Unsupported(format!(
                    "existential variable '{}' is neither defined nor fixed by an equality",
                    ex.vars[k].name
                )));
            }
            ex.vars[k].solve = solve;
        }
        // A definition may only use variables whose values are known first.
        for (k, v) in ex.vars.iter().enumerate() {
            if let Some(d) = &v.def {
                let later = first_slot as u32 + k as u32..first_slot as u32 + ex.vars.len() as u32;
                if later.clone().any(|s| uses_exist(d, s)) {
                    return Err(ExprError::Unsupported(format!(
                        "definition of existential variable '{}' uses itself or a later one",
                        v.name
                    )));
                }
            }
        }
        Ok(())
    }
}

fn top_conjuncts<'c>(c: &'c Cond, out: &mut Vec<&'c Cond>) {
    match c {
        Cond::And(v) => v.iter().for_each(|t| top_conjuncts(t, out)),
        other => out.push(other),
    }
}

/// Whether `e` mentions existential slot `s`.
fn uses_exist(e: &Expr, s: u32) -> bool {
    match e {
        Expr::Int(_) => false,
        Expr::Var(v) => *v == Var::Exist(s),
        Expr::Neg(a) | Expr::Floor(a) | Expr::Ceil(a) | Expr::Pow(a, _) | Expr::Mod(a, _) => {
            uses_exist(a, s)
        }
        Expr::Sum(first, rest) => {
            uses_exist(first, s) || rest.iter().any(|(_, t)| uses_exist(t, s))
        }
        Expr::Prod(first, rest) => {
            uses_exist(first, s)
                || rest
                    .iter()
                    .any(|op| matches!(op, MulOp::Mul(t) if uses_exist(t, s)))
        }
        Expr::Min(v) | Expr::Max(v) => v.iter().any(|t| uses_exist(t, s)),
        Expr::Periodic(var, items) => {
            *var == Var::Exist(s) || items.iter().any(|t| uses_exist(t, s))
        }
    }
}

/// Whether `e` is affine in existential slot `s` (other variables fixed).
fn linear_in(e: &Expr, s: u32) -> bool {
    match e {
        Expr::Int(_) | Expr::Var(_) => true,
        Expr::Neg(a) => linear_in(a, s),
        Expr::Sum(first, rest) => linear_in(first, s) && rest.iter().all(|(_, t)| linear_in(t, s)),
        Expr::Prod(first, rest) => {
            let mut factors =
                std::iter::once(&**first).chain(rest.iter().filter_map(|op| match op {
                    MulOp::Mul(t) => Some(t),
                    MulOp::Div(_) => None,
                }));
            let mut n_with = 0;
            factors.all(|f| {
                if uses_exist(f, s) {
                    n_with += 1;
                    n_with == 1 && linear_in(f, s)
                } else {
                    true
                }
            })
        }
        _ => !uses_exist(e, s),
    }
}

// ---------------------------------------------------------------------------
// Binding

/// Rewrites `Param(i)` into `Value(j)` with `names[j] == params[i]`, and
/// finds how long the value vector must be. Parameters that the tree does not
/// use need no name.
pub(crate) struct Binder<'a> {
    params: &'a [String],
    names: &'a [&'a str],
    map: Vec<Option<u32>>,
    /// Least value-vector length needed so far.
    pub(crate) need: usize,
    missing: Option<u32>,
}

impl<'a> Binder<'a> {
    pub(crate) fn new(params: &'a [String], names: &'a [&'a str]) -> Binder<'a> {
        let map = params
            .iter()
            .map(|p| names.iter().position(|n| n == p).map(|i| i as u32))
            .collect();
        Binder {
            params,
            names,
            map,
            need: 0,
            missing: None,
        }
    }

    /// The first used parameter that has no name, as an error.
    pub(crate) fn finish(&self) -> Result<usize, ExprError> {
        match self.missing {
            None => Ok(self.need),
            Some(i) => Err(ExprError::Unbound {
                name: self.params[i as usize].clone(),
                names: self.names.join(", "),
            }),
        }
    }

    fn var(&mut self, v: &mut Var) {
        if let Var::Param(i) = v {
            match self.map.get(*i as usize).copied().flatten() {
                Some(idx) => {
                    self.need = self.need.max(idx as usize + 1);
                    *v = Var::Value(idx);
                }
                None => {
                    self.missing.get_or_insert(*i);
                }
            }
        }
    }

    pub(crate) fn expr(&mut self, e: &mut Expr) {
        match e {
            Expr::Int(_) => {}
            Expr::Var(v) => self.var(v),
            Expr::Neg(a) | Expr::Floor(a) | Expr::Ceil(a) | Expr::Pow(a, _) | Expr::Mod(a, _) => {
                self.expr(a)
            }
            Expr::Sum(first, rest) => {
                self.expr(first);
                rest.iter_mut().for_each(|(_, t)| self.expr(t));
            }
            Expr::Prod(first, rest) => {
                self.expr(first);
                for op in rest {
                    if let MulOp::Mul(t) = op {
                        self.expr(t);
                    }
                }
            }
            Expr::Min(v) | Expr::Max(v) => v.iter_mut().for_each(|t| self.expr(t)),
            Expr::Periodic(var, items) => {
                self.var(var);
                items.iter_mut().for_each(|t| self.expr(t));
            }
        }
    }

    pub(crate) fn cond(&mut self, c: &mut Cond) {
        match c {
            Cond::True | Cond::False => {}
            Cond::And(v) | Cond::Or(v) => v.iter_mut().for_each(|t| self.cond(t)),
            Cond::Chain(first, rest) => {
                self.expr(first);
                rest.iter_mut().for_each(|(_, t)| self.expr(t));
            }
            Cond::Exists(ex) => {
                for v in ex.vars.iter_mut() {
                    if let Some(d) = v.def.as_mut() {
                        self.expr(d);
                    }
                    v.solve.iter_mut().for_each(|t| self.expr(t));
                }
                self.cond(&mut ex.body);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Evaluation

/// Evaluates a bound expression. `vals` must be at least as long as the
/// binding requires (checked by the caller); `ex` holds existential values.
pub(crate) fn eval_expr(e: &Expr, vals: &[i64], ex: &[Rat]) -> Result<Rat, ExprError> {
    Ok(match e {
        Expr::Int(n) => Rat::int(*n),
        Expr::Var(v) => var_value(v, vals, ex)?,
        Expr::Neg(a) => eval_child(a, vals, ex)?.neg()?,
        Expr::Sum(first, rest) => {
            let mut acc = eval_child(first, vals, ex)?;
            for (op, t) in rest {
                let v = eval_child(t, vals, ex)?;
                acc = match op {
                    AddOp::Add => acc.add(v)?,
                    AddOp::Sub => acc.sub(v)?,
                };
            }
            acc
        }
        Expr::Prod(first, rest) => {
            let mut acc = eval_child(first, vals, ex)?;
            for op in rest {
                acc = match op {
                    MulOp::Mul(t) => acc.mul(eval_child(t, vals, ex)?)?,
                    MulOp::Div(k) => acc.div_int(*k)?,
                };
            }
            acc
        }
        Expr::Floor(a) => eval_child(a, vals, ex)?.floor(),
        Expr::Ceil(a) => eval_child(a, vals, ex)?.ceil(),
        Expr::Mod(a, ms) => {
            let mut acc = eval_child(a, vals, ex)?;
            for m in ms {
                acc = acc.modulo(*m)?;
            }
            acc
        }
        Expr::Min(v) | Expr::Max(v) => {
            let want = if matches!(e, Expr::Min(_)) {
                Ordering::Less
            } else {
                Ordering::Greater
            };
            let mut it = v.iter();
            let mut best = match it.next() {
                Some(t) => eval_child(t, vals, ex)?,
                None => return Err(ExprError::Unsupported("empty min or max".into())),
            };
            for t in it {
                let x = eval_child(t, vals, ex)?;
                if x.cmp(best)? == want {
                    best = x;
                }
            }
            best
        }
        Expr::Pow(a, k) => eval_child(a, vals, ex)?.pow(*k)?,
        Expr::Periodic(var, items) => {
            let v = var_value(var, vals, ex)?;
            if !v.is_int() {
                return Err(ExprError::NotInteger {
                    value: v.to_string(),
                });
            }
            let idx = v.numer().rem_euclid(items.len() as i128) as usize;
            match items.get(idx) {
                Some(t) => eval_child(t, vals, ex)?,
                None => return Err(ExprError::Unsupported("empty periodic number".into())),
            }
        }
    })
}

/// Evaluates a child: leaves inline, anything else by recursion.
#[inline(always)]
fn eval_child(e: &Expr, vals: &[i64], ex: &[Rat]) -> Result<Rat, ExprError> {
    match e {
        Expr::Int(n) => Ok(Rat::int(*n)),
        Expr::Var(Var::Value(i)) => match vals.get(*i as usize) {
            Some(x) => Ok(Rat::int(*x as i128)),
            None => Err(ExprError::TooFewValues {
                needed: *i as usize + 1,
                got: vals.len(),
            }),
        },
        _ => eval_expr(e, vals, ex),
    }
}

#[inline]
fn var_value(v: &Var, vals: &[i64], ex: &[Rat]) -> Result<Rat, ExprError> {
    match v {
        Var::Value(i) => {
            vals.get(*i as usize)
                .map(|x| Rat::int(*x as i128))
                .ok_or(ExprError::TooFewValues {
                    needed: *i as usize + 1,
                    got: vals.len(),
                })
        }
        Var::Exist(s) => ex
            .get(*s as usize)
            .copied()
            .ok_or_else(|| ExprError::Unsupported("existential variable out of scope".into())),
        Var::Param(_) | Var::Name(_) => Err(ExprError::Unsupported(
            "evaluation of an unbound expression".into(),
        )),
    }
}

/// Evaluates a bound condition.
pub(crate) fn eval_cond(c: &Cond, vals: &[i64], ex: &mut [Rat]) -> Result<bool, ExprError> {
    match c {
        Cond::True => Ok(true),
        Cond::False => Ok(false),
        Cond::And(v) => {
            for t in v {
                if !eval_cond(t, vals, ex)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        Cond::Or(v) => {
            for t in v {
                if eval_cond(t, vals, ex)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        Cond::Chain(first, rest) => {
            let mut lhs = eval_child(first, vals, ex)?;
            for (op, t) in rest {
                let rhs = eval_child(t, vals, ex)?;
                if !op.holds(lhs.cmp(rhs)?) {
                    return Ok(false);
                }
                lhs = rhs;
            }
            Ok(true)
        }
        Cond::Exists(e) => {
            for v in &e.vars {
                let s = v.slot as usize;
                if s >= ex.len() {
                    return Err(ExprError::Unsupported(
                        "existential variable out of scope".into(),
                    ));
                }
                if let Some(d) = &v.def {
                    ex[s] = eval_expr(d, vals, ex)?;
                    continue;
                }
                let mut found = false;
                for f in &v.solve {
                    ex[s] = Rat::ZERO;
                    let f0 = eval_expr(f, vals, ex)?;
                    ex[s] = Rat::int(1);
                    let c = eval_expr(f, vals, ex)?.sub(f0)?;
                    if c == Rat::ZERO {
                        continue;
                    }
                    let x = f0.neg()?.div(c)?;
                    if !x.is_int() {
                        // The equality has no integer solution: no witness.
                        return Ok(false);
                    }
                    ex[s] = x;
                    found = true;
                    break;
                }
                if !found {
                    return Err(ExprError::Unsupported(format!(
                        "existential variable '{}' is not fixed by an equality for these values",
                        v.name
                    )));
                }
            }
            eval_cond(&e.body, vals, ex)
        }
    }
}

/// Evaluates pieces in order; the first whose condition holds gives the value.
pub(crate) fn eval_pieces(
    pieces: &[Piece],
    n_exist: usize,
    vals: &[i64],
) -> Result<Option<Rat>, ExprError> {
    if n_exist == 0 {
        return eval_pieces_in(pieces, vals, &mut []);
    }
    let mut store = [Rat::ZERO; MAX_EXISTENTIALS];
    eval_pieces_in(pieces, vals, &mut store[..n_exist.min(MAX_EXISTENTIALS)])
}

fn eval_pieces_in(
    pieces: &[Piece],
    vals: &[i64],
    ex: &mut [Rat],
) -> Result<Option<Rat>, ExprError> {
    for p in pieces {
        if eval_cond(&p.cond, vals, ex)? {
            return eval_expr(&p.value, vals, ex).map(Some);
        }
    }
    Ok(None)
}

// ---------------------------------------------------------------------------
// Printing

/// Names for printing variables.
pub(crate) struct Names<'a> {
    pub(crate) params: &'a [String],
    pub(crate) exist: &'a [String],
}

impl Names<'_> {
    fn var(&self, v: &Var, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match v {
            Var::Name(n) => f.write_str(n),
            Var::Param(i) => match self.params.get(*i as usize) {
                Some(n) => f.write_str(n),
                None => write!(f, "p{i}"),
            },
            Var::Exist(i) => match self.exist.get(*i as usize) {
                Some(n) => f.write_str(n),
                None => write!(f, "e{i}"),
            },
            Var::Value(i) => write!(f, "v{i}"),
        }
    }
}

// Precedence levels: sum 1, product 2, unary minus 3, power 4, mod 5, atom 6.
fn prec(e: &Expr) -> u8 {
    match e {
        Expr::Sum(..) => 1,
        Expr::Prod(..) => 2,
        Expr::Neg(_) => 3,
        Expr::Int(n) if *n < 0 => 3,
        Expr::Pow(..) => 4,
        Expr::Mod(..) => 5,
        _ => 6,
    }
}

pub(crate) fn write_expr(
    e: &Expr,
    min: u8,
    names: &Names<'_>,
    f: &mut fmt::Formatter<'_>,
) -> fmt::Result {
    if prec(e) < min {
        f.write_char('(')?;
        write_expr(e, 0, names, f)?;
        return f.write_char(')');
    }
    match e {
        Expr::Int(n) => write!(f, "{n}"),
        Expr::Var(v) => names.var(v, f),
        Expr::Neg(a) => {
            f.write_char('-')?;
            write_expr(a, 4, names, f)
        }
        Expr::Sum(first, rest) => {
            write_expr(first, 2, names, f)?;
            for (op, t) in rest {
                f.write_str(match op {
                    AddOp::Add => " + ",
                    AddOp::Sub => " - ",
                })?;
                write_expr(t, 2, names, f)?;
            }
            Ok(())
        }
        Expr::Prod(first, rest) => {
            write_expr(first, 3, names, f)?;
            for op in rest {
                match op {
                    MulOp::Mul(t) => {
                        f.write_char('*')?;
                        write_expr(t, 3, names, f)?;
                    }
                    MulOp::Div(k) => write!(f, "/{k}")?,
                }
            }
            Ok(())
        }
        Expr::Floor(a) | Expr::Ceil(a) => {
            f.write_str(if matches!(e, Expr::Floor(_)) {
                "floor("
            } else {
                "ceil("
            })?;
            write_expr(a, 0, names, f)?;
            f.write_char(')')
        }
        Expr::Mod(a, ms) => {
            write_expr(a, 6, names, f)?;
            for m in ms {
                write!(f, " mod {m}")?;
            }
            Ok(())
        }
        Expr::Min(v) | Expr::Max(v) => {
            f.write_str(if matches!(e, Expr::Min(_)) {
                "min("
            } else {
                "max("
            })?;
            write_list(v, names, f)?;
            f.write_char(')')
        }
        Expr::Pow(a, k) => {
            write_expr(a, 6, names, f)?;
            write!(f, "^{k}")
        }
        Expr::Periodic(var, items) => {
            f.write_char('[')?;
            write_list(items, names, f)?;
            f.write_str("]_")?;
            names.var(var, f)
        }
    }
}

fn write_list(v: &[Expr], names: &Names<'_>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    for (i, t) in v.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write_expr(t, 0, names, f)?;
    }
    Ok(())
}

pub(crate) fn write_cond(c: &Cond, names: &Names<'_>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match c {
        Cond::True => f.write_str("true"),
        Cond::False => f.write_str("false"),
        Cond::And(v) | Cond::Or(v) => {
            let is_and = matches!(c, Cond::And(_));
            for (i, t) in v.iter().enumerate() {
                if i > 0 {
                    f.write_str(if is_and { " and " } else { " or " })?;
                }
                let paren = match t {
                    Cond::Or(_) => true,
                    Cond::And(_) => is_and,
                    _ => false,
                };
                if paren {
                    f.write_char('(')?;
                }
                write_cond(t, names, f)?;
                if paren {
                    f.write_char(')')?;
                }
            }
            Ok(())
        }
        Cond::Chain(first, rest) => {
            write_expr(first, 0, names, f)?;
            for (op, t) in rest {
                write!(f, " {} ", op.text())?;
                write_expr(t, 0, names, f)?;
            }
            Ok(())
        }
        Cond::Exists(ex) => {
            f.write_str("exists (")?;
            for (i, v) in ex.vars.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                f.write_str(&v.name)?;
                if let Some(d) = &v.def {
                    f.write_str(" = ")?;
                    write_expr(d, 0, names, f)?;
                }
            }
            f.write_str(": ")?;
            write_cond(&ex.body, names, f)?;
            f.write_char(')')
        }
    }
}

/// Writes `[p1, p2] -> ` (nothing when there are no parameters).
pub(crate) fn write_header(params: &[String], f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if params.is_empty() {
        return Ok(());
    }
    write!(f, "[{}] -> ", params.join(", "))
}
