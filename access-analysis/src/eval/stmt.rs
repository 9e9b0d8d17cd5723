//! Statements: the walk over a statement list, declarations, `if` (with
//! the environments of both branches merged), `while` and `for` loops (a
//! counted loop's iterator becomes a domain dimension bounded by its start
//! and condition), `return`, `break` and `continue` as early exits.

use super::domain::{
    int_range, is_int, is_ndrange_offset, is_ndrange_size, offset_targets, IntVal, PtrTarget, Val,
};
use super::expr::{strip, var_name};
use super::Walker;
use crate::poly::{Atom, Cond, Poly, Why};
use coarsen::ir::{assigned_var, BinOp, Expr, ExprKind, Span, Stmt, Type, UnOp};
use std::collections::HashMap;

/// Exit status of a statement: the condition (given that it was reached)
/// under which it leaves the enclosing block early (return/break/continue).
pub(super) type Exit = Cond;

impl<'a> Walker<'a> {
    /// Runs a statement list; returns the condition under which it exits early.
    pub(super) fn stmts(&mut self, body: &[Stmt]) -> Exit {
        let base = self.path.len();
        let mut exit = Cond::False;
        for s in body {
            let e = self.stmt(s);
            match e {
                Cond::False => {}
                Cond::True => {
                    exit = Cond::True;
                    break;
                }
                c => {
                    exit = Cond::or(exit, c.clone());
                    self.path.push(Cond::not(c));
                }
            }
        }
        self.path.truncate(base);
        exit
    }

    fn block(&mut self, body: &[Stmt]) -> Exit {
        self.scopes.push(HashMap::new());
        let e = self.stmts(body);
        self.scopes.pop();
        e
    }

    fn stmt(&mut self, s: &Stmt) -> Exit {
        self.steps += 1;
        if self.exhausted() {
            return Cond::False;
        }
        match s {
            Stmt::Decl(d) => {
                let v = match &d.init {
                    Some(e) => self.eval(e),
                    None => match &d.ty {
                        t if is_int(t) => {
                            Val::Int(IntVal::unknown(format!("'{}' is not initialized", d.name)))
                        }
                        _ => Val::Other,
                    },
                };
                if let Type::Scalar(sc) = &d.ty {
                    self.var_types.insert(d.name.clone(), *sc);
                }
                let v = self.convert(v, d.init.as_ref().map(|e| &e.ty), &d.ty, &d.span);
                self.declare(&d.name, v);
                Cond::False
            }
            Stmt::Expr(e) => {
                let outer = self.discarded.take();
                self.discarded = Some(strip(e).span.clone());
                self.eval(e);
                self.discarded = outer;
                Cond::False
            }
            Stmt::Block(b) => self.block(b),
            Stmt::If {
                cond,
                then,
                els,
                span,
            } => self.if_stmt(cond, then, els.as_deref(), span),
            Stmt::For {
                init,
                cond,
                step,
                body,
                span,
            } => self.for_stmt(
                init.as_deref(),
                cond.as_ref(),
                step.as_ref(),
                body,
                span,
                false,
            ),
            Stmt::While { cond, body, span } => self.while_stmt(cond, body, span),
            Stmt::Barrier(_) => Cond::False,
            Stmt::Return(e, _) => {
                let v = e.as_ref().map(|e| self.eval(e));
                if let Some((base, vals)) = self.returns.last_mut() {
                    let local = self.path[*base..].to_vec();
                    if let Some(v) = v {
                        vals.push((local, v));
                    }
                }
                Cond::True
            }
            Stmt::Break(_) | Stmt::Continue(_) => Cond::True,
            Stmt::Unsupported(..) => Cond::False,
        }
    }

    fn if_stmt(&mut self, cond: &Expr, then: &[Stmt], els: Option<&[Stmt]>, span: &Span) -> Exit {
        let c = self.eval_cond(cond);
        let before = self.scopes.clone();
        self.path.push(c.clone());
        let te = self.block(then);
        self.path.pop();
        let after_then = std::mem::replace(&mut self.scopes, before);
        self.path.push(Cond::not(c.clone()));
        let ee = match els {
            Some(e) => self.block(e),
            None => Cond::False,
        };
        self.path.pop();
        let after_else = std::mem::take(&mut self.scopes);
        self.scopes = if te == Cond::True {
            after_else
        } else if ee == Cond::True {
            after_then
        } else {
            self.merge(&c, after_then, after_else, span)
        };
        Cond::or(Cond::and(c.clone(), te), Cond::and(Cond::not(c), ee))
    }

    /// Merges the environments after the two branches of `if (c)`.
    fn merge(
        &self,
        c: &Cond,
        t: Vec<HashMap<String, Val>>,
        e: Vec<HashMap<String, Val>>,
        span: &Span,
    ) -> Vec<HashMap<String, Val>> {
        let mut out = t.clone();
        for (lvl, scope) in out.iter_mut().enumerate() {
            for (name, vt) in scope.iter_mut() {
                let Some(ve) = e.get(lvl).and_then(|s| s.get(name)) else {
                    continue;
                };
                if vt == ve {
                    continue;
                }
                let why = || {
                    Why::other(format!(
                        "'{name}' is assigned under a condition at {}",
                        self.loc(span)
                    ))
                };
                *vt = match (vt.clone(), ve.clone()) {
                    (Val::Int(a), Val::Int(b)) => {
                        if c.unknown().is_some() {
                            Val::Int(IntVal::Unknown(why()))
                        } else {
                            Val::Int(IntVal::select(c, a, b))
                        }
                    }
                    (Val::Ptr(a), Val::Ptr(b)) => {
                        if a.len() == 1
                            && b.len() == 1
                            && a[0].buf == b[0].buf
                            && (a[0].step, a[0].narrow) == (b[0].step, b[0].narrow)
                            && c.unknown().is_none()
                        {
                            Val::Ptr(vec![PtrTarget {
                                off: IntVal::select(c, a[0].off.clone(), b[0].off.clone()),
                                ..a[0].clone()
                            }])
                        } else {
                            let mut v = a;
                            for t in b {
                                if !v.contains(&t) {
                                    v.push(t);
                                }
                            }
                            Val::Ptr(v)
                        }
                    }
                    (Val::Ptr(_), _) | (_, Val::Ptr(_)) => self.any_buffer(why().msg),
                    _ => Val::Other,
                };
            }
        }
        out
    }

    fn while_stmt(&mut self, cond: &Expr, body: &[Stmt], span: &Span) -> Exit {
        // `do { B; j++; } while (c);` (the front end's `while (1) { B; j++;
        // if (!c) break; }`): a counted loop whose first iteration runs
        // whatever `c` says.
        if let Some((b, step, c)) = do_while_parts(cond, body) {
            return self.for_stmt(None, Some(c), Some(step), b, span, true);
        }
        let names = assigned_names(body, &[cond]);
        let why = format!("is modified in the loop at {}", self.loc(span));
        self.havoc(&names, &why);
        let c = self.eval_cond(cond);
        let saved = self.exact;
        self.exact = false;
        self.path.push(c);
        self.scopes.push(HashMap::new());
        let _ = self.stmts(body);
        self.scopes.pop();
        self.path.pop();
        self.exact = saved;
        self.havoc(&names, &why);
        if has_return(body) {
            Cond::Unknown(Why::other(format!(
                "the loop at {} may return",
                self.loc(span)
            )))
        } else {
            Cond::False
        }
    }

    /// A `for` loop; with `first_unconditional`, a `do ... while` whose
    /// `cond` is tested after `body` and `step`: its first iteration runs
    /// whatever `cond` says, and iteration `t > 0` runs where `cond` holds
    /// at the top of it (exact where `cond` is monotone in the iterator).
    fn for_stmt(
        &mut self,
        init: Option<&Stmt>,
        cond: Option<&Expr>,
        step: Option<&Expr>,
        body: &[Stmt],
        span: &Span,
        first_unconditional: bool,
    ) -> Exit {
        self.scopes.push(HashMap::new());
        if let Some(i) = init {
            self.stmt(i);
        }
        let loc = self.loc(span);
        let why = format!("is modified in the loop at {loc}");
        let mut extra: Vec<&Expr> = Vec::new();
        extra.extend(cond);
        extra.extend(step);
        let assigned = assigned_names(body, &extra);
        let step_info = step.and_then(parse_step);
        // The iterator: assigned only by the step (not in the body, not in
        // the condition: `j++ < n` steps it twice an iteration), an integer
        // variable in scope.
        let iter = step_info.as_ref().and_then(|(name, _, _)| {
            let in_body = assigned_names(body, cond.as_slice()).contains(name);
            let is_int_var = matches!(self.lookup(name), Some(Val::Int(_)));
            (is_int_var && !in_body).then(|| name.clone())
        });
        let mut loop_exact = !has_break_or_return(body, false);
        let mut notes = Vec::new();
        let saved_exact = self.exact;
        let path_base = self.path.len();
        let mut pushed_iter = false;
        // The first iteration (the iterator at its start), where known.
        let mut first_iter: Option<Cond> = None;
        match (&iter, &step_info) {
            (Some(name), Some((_, sign, amount))) => {
                let init_val = match self.lookup(name) {
                    Some(Val::Int(v)) => v.clone(),
                    _ => IntVal::unknown("iterator"),
                };
                let others: Vec<String> = assigned.iter().filter(|n| *n != name).cloned().collect();
                // Induction variables (`idx += stride` once per iteration):
                // their values at the loop's entry, before they are forgotten.
                // A pointer stepped so (`A += lda`) keeps its buffers, each
                // target moved by the steps made.
                let inductions: Vec<(String, Val, i128, Option<&Expr>)> =
                    induction_steps(body, &extra, &others, &assigned)
                        .into_iter()
                        .filter_map(|(v, sign, amount)| match self.lookup(&v) {
                            Some(x @ Val::Int(IntVal::Known(_))) => {
                                Some((v, x.clone(), sign, amount))
                            }
                            Some(x @ Val::Ptr(ts))
                                if ts.iter().all(|t| matches!(t.off, IntVal::Known(_))) =>
                            {
                                Some((v, x.clone(), sign, amount))
                            }
                            _ => None,
                        })
                        .collect();
                self.havoc(&others, &why);
                // Step amount, evaluated with loop-carried values forgotten.
                let amount_val = match amount {
                    None => IntVal::konst(1),
                    Some(e) => match self.eval(e) {
                        Val::Int(v) => v,
                        _ => IntVal::unknown("step"),
                    },
                };
                let dim = self.fresh_dim(name);
                let it = Poly::dim(&dim);
                self.declare(name, Val::Int(IntVal::poly(it.clone())));
                self.iters.push(dim.clone());
                pushed_iter = true;
                let step_const = self.const_of(&amount_val).map(|c| c * sign);
                let dir = match step_const {
                    Some(c) if c != 0 => c.signum(),
                    Some(_) => 0,
                    None => {
                        // A parameter step known to be positive (NDRange sizes).
                        let positive = amount_val.single().is_some_and(|p| {
                            p.terms.len() == 1
                                && p.terms.iter().all(|(m, c)| {
                                    *c > 0
                                        && m.len() == 1
                                        && matches!(&m[0], Atom::Param(n) if is_ndrange_size(n))
                                })
                        });
                        if positive {
                            *sign
                        } else {
                            0
                        }
                    }
                };
                // Bounds of the iterator for wrap-around checks: its type's
                // range, and its start in the direction of the step (for
                // `int`-sized and wider types; the condition keeps them from
                // wrapping, which narrower iterators promoted to `int` may do).
                if let Some(sc) = self.var_types.get(name.as_str()).copied() {
                    if let Some((mut lo, mut hi, bits, _)) = int_range(&Type::Scalar(sc)) {
                        if let (IntVal::Known(ps), true) = (&init_val, bits >= 32) {
                            let rs: Option<Vec<(i128, i128)>> =
                                ps.iter().map(|(_, p)| self.poly_range(p)).collect();
                            if let Some(rs) = rs.filter(|r| !r.is_empty()) {
                                if dir > 0 {
                                    lo = lo.max(rs.iter().map(|r| r.0).min().unwrap_or(lo));
                                } else if dir < 0 {
                                    hi = hi.min(rs.iter().map(|r| r.1).max().unwrap_or(hi));
                                }
                            }
                        }
                        self.dim_bounds.insert(dim.clone(), (lo, hi));
                    }
                }
                if step_const.is_none() {
                    loop_exact = false;
                    notes.push(format!(
                        "the step of loop '{name}' ({loc}) is not a constant; its stride is over-approximated"
                    ));
                }
                // Start bound and stride.
                match &init_val {
                    IntVal::Known(pieces) if dir != 0 => {
                        let mut start = Cond::False;
                        first_iter = pieces.iter().try_fold(Cond::False, |acc, (pc, v)| {
                            Some(Cond::or(acc, Cond::and(pc.clone(), Cond::eq(&it, v)?)))
                        });
                        for (pc, v) in pieces {
                            let bound = if dir > 0 {
                                Cond::ge(&it, v)
                            } else {
                                Cond::ge(v, &it)
                            };
                            let mut c = Cond::and(
                                pc.clone(),
                                bound.unwrap_or(Cond::Unknown(Why::other("overflow"))),
                            );
                            if let Some(s) = step_const {
                                if s.abs() > 1 {
                                    let d = it.sub(v).and_then(|x| {
                                        let q = x.floor_div(s.abs())?;
                                        x.sub(&q.scale(s.abs())?)
                                    });
                                    c = Cond::and(
                                        c,
                                        d.map(Cond::Eq)
                                            .unwrap_or(Cond::Unknown(Why::other("stride"))),
                                    );
                                }
                            }
                            start = Cond::or(start, c);
                        }
                        self.path.push(start);
                        // One affine start and a constant step: accesses
                        // are written in the iteration count (`record`).
                        // Starts with a scalar argument are left alone: a
                        // descending `k = n - 1; k >= 0; k -= 3` would
                        // split into `[-t][n - 1]`, strides that need
                        // `n <= 3` at launch.
                        if let (Some(s), [(_, v)]) = (step_const, pieces.as_slice()) {
                            let launch_only = v.terms.keys().flatten().all(|a| match a {
                                Atom::Param(n) => is_ndrange_offset(n),
                                _ => true,
                            });
                            if s.abs() > 1 && v.is_affine() && launch_only {
                                self.strided.insert(dim.clone(), (v.clone(), s));
                            }
                        }
                    }
                    IntVal::Unknown(w) => {
                        loop_exact = false;
                        notes.push(format!(
                            "the start of loop '{name}' ({loc}) is not affine: {}",
                            w.msg
                        ));
                    }
                    _ => loop_exact = false,
                }
                // An induction variable `v` stepped by `e` is, at the top of
                // the iteration `t = (it - start) / step`, `v0 + t*e`
                // (wrapped around where its type is unsigned and it may
                // leave the type's range).
                let t = match (&init_val, step_const) {
                    (IntVal::Known(pieces), Some(s)) if pieces.len() == 1 && s != 0 => {
                        let start = &pieces[0].1;
                        if s > 0 {
                            it.sub(start).and_then(|d| d.floor_div(s))
                        } else {
                            start.sub(&it).and_then(|d| d.floor_div(-s))
                        }
                    }
                    _ => None,
                };
                if let Some(t) = &t {
                    for (v, v0, sign, amount) in &inductions {
                        let step_val = match amount {
                            None => IntVal::konst(1),
                            Some(e) => match self.eval(e) {
                                Val::Int(x) => x,
                                _ => continue,
                            },
                        };
                        let v0 = match v0 {
                            Val::Int(x) => x,
                            Val::Ptr(ts) => {
                                // `t` steps of `e` elements (the pointer's)
                                let moved = step_val.lift2(&IntVal::poly(t.clone()), &|a, b| {
                                    a.mul(b, &self.ndr.rules)
                                        .and_then(|q| q.scale(*sign))
                                        .map(|q| vec![(Cond::True, q)])
                                        .ok_or_else(|| Why::other("overflow"))
                                });
                                let value = offset_targets(ts, &moved, &self.ndr.rules);
                                self.declare(v, Val::Ptr(value));
                                continue;
                            }
                            _ => continue,
                        };
                        let Some(ty) = self.var_types.get(v.as_str()).copied() else {
                            continue;
                        };
                        let value = step_val
                            .lift2(&IntVal::poly(t.clone()), &|a, b| {
                                a.mul(b, &self.ndr.rules)
                                    .and_then(|q| q.scale(*sign))
                                    .map(|q| vec![(Cond::True, q)])
                                    .ok_or_else(|| Why::other("overflow"))
                            })
                            .lift2(v0, &|a, b| {
                                a.add(b)
                                    .map(|q| vec![(Cond::True, q)])
                                    .ok_or_else(|| Why::other("overflow"))
                            });
                        // Each step is the variable's own arithmetic: a signed
                        // one cannot overflow (undefined), an unsigned one wraps
                        // around.
                        let ty = Type::Scalar(ty);
                        let signed = int_range(&ty).is_some_and(|r| r.3);
                        let value = self.convert(Val::Int(value), signed.then_some(&ty), &ty, span);
                        self.declare(v, value);
                    }
                }
                // The condition; exact when it only bounds the iterator in the
                // direction of the step.
                if let Some(c) = cond {
                    let cv = self.eval_cond(c);
                    if dir == 0 || !monotone(&cv, &dim, dir) {
                        loop_exact = false;
                    }
                    if let Some(w) = cv.unknown() {
                        notes.push(format!(
                            "the condition of loop '{name}' ({loc}) is not affine: {}",
                            w.msg
                        ));
                    }
                    let cv = match (first_unconditional, &first_iter) {
                        (false, _) => cv,
                        (true, Some(first)) => Cond::or(first.clone(), cv),
                        // No known first iteration: every iteration may run.
                        (true, None) => {
                            loop_exact = false;
                            Cond::True
                        }
                    };
                    self.path.push(cv);
                } else {
                    loop_exact = false;
                }
            }
            _ => {
                // Not a counted loop: like a while loop.
                self.havoc(&assigned, &why);
                loop_exact = false;
                if let Some(c) = cond {
                    let cv = self.eval_cond(c);
                    // (a `do ... while`'s first iteration runs whatever
                    // its condition says)
                    if !first_unconditional {
                        self.path.push(cv);
                    }
                }
                notes.push(format!(
                    "loop at {loc} is not a counted loop; accesses in it are approximated"
                ));
            }
        }
        self.exact &= loop_exact;
        let n_notes = self.loop_notes.len();
        self.loop_notes.extend(notes);
        self.scopes.push(HashMap::new());
        let _ = self.stmts(body);
        self.scopes.pop();
        // The step may use values from the body; evaluate it for its accesses.
        if iter.is_none() {
            if let Some(s) = step {
                self.eval(s);
            }
        }
        self.loop_notes.truncate(n_notes);
        self.path.truncate(path_base);
        if pushed_iter {
            self.iters.pop();
        }
        self.exact = saved_exact;
        self.scopes.pop();
        let mut after = assigned.clone();
        if let Some(n) = &iter {
            if !after.contains(n) {
                after.push(n.clone());
            }
        }
        self.havoc(&after, &why);
        if has_return(body) {
            Cond::Unknown(Why::other(format!("the loop at {loc} may return")))
        } else {
            Cond::False
        }
    }
}

/// A `do { B; step; } while (c);` as the front end writes it, `while (1) {
/// B; step; if (!c) break; }`, where `step` steps one variable (`j++`, `j
/// += e`, ...) and `c` assigns nothing: `(B, step, c)`. The same loop
/// written by hand as `while (1)` is the same loop.
fn do_while_parts<'a>(cond: &Expr, body: &'a [Stmt]) -> Option<(&'a [Stmt], &'a Expr, &'a Expr)> {
    if !matches!(cond.kind, ExprKind::IntLit(v) if v != 0) {
        return None;
    }
    let [b @ .., Stmt::Expr(step), Stmt::If {
        cond: test,
        then,
        els: None,
        ..
    }] = body
    else {
        return None;
    };
    let ExprKind::Unary(UnOp::Not, c) = &test.kind else {
        return None;
    };
    if !matches!(then.as_slice(), [Stmt::Break(_)]) || parse_step(step).is_none() {
        return None;
    }
    assigned_names(&[], &[c]).is_empty().then_some((b, step, c))
}

/// Names assigned (`=`, `op=`, `++`, `--`) anywhere in `body`.
pub(crate) fn assigned_names(body: &[Stmt], extra: &[&Expr]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut f = |e: &Expr| {
        if let Some(n) = assigned_var(e) {
            if !out.iter().any(|o| o == n) {
                out.push(n.to_string());
            }
        }
    };
    coarsen::ir::visit_exprs(body, &mut f);
    for e in extra {
        coarsen::ir::visit_expr(e, &mut f);
    }
    out
}

/// The induction variables of a counted loop's `body`: each of
/// `candidates` that one top-level statement steps by a loop-invariant
/// amount (`v += e`, `v -= e`, `v++`, `v--`, `v = v + e`: its name, the
/// step's sign and `e`) and nothing else in the body assigns. `e` is made
/// of literals, casts, arithmetic and variables that the body does not
/// assign (`assigned`): no call, no memory, no assignment. None when an
/// iteration may skip its step (`continue`) or leave early; not a variable
/// that the loop's condition or step (`extra`) also assigns, nor one the
/// body declares anew (its step would be the new variable's).
fn induction_steps<'b>(
    body: &'b [Stmt],
    extra: &[&Expr],
    candidates: &[String],
    assigned: &[String],
) -> Vec<(String, i128, Option<&'b Expr>)> {
    if has_break_or_return(body, false) || has_continue(body) {
        return Vec::new();
    }
    let mut out: Vec<(String, i128, Option<&Expr>)> = Vec::new();
    for s in body {
        let Stmt::Expr(e) = s else { continue };
        let Some((name, sign, amount)) = parse_step(e) else {
            continue;
        };
        if !candidates.contains(&name)
            || out.iter().any(|(n, _, _)| *n == name)
            || assignments_to(body, &name) != 1
            || extra.iter().any(|e| assignments_in(e, &name) > 0)
            || declares(body, &name)
            || amount.is_some_and(|a| !invariant(a, assigned))
        {
            continue;
        }
        out.push((name, sign, amount));
    }
    out
}

/// How many assignments (`=`, `op=`, `++`, `--`) to `name` `body` holds.
fn assignments_to(body: &[Stmt], name: &str) -> usize {
    let mut n = 0;
    coarsen::ir::visit_exprs(body, &mut |e: &Expr| n += usize::from(assigns(e, name)));
    n
}

/// How many assignments to `name` the expression `e` holds.
fn assignments_in(e: &Expr, name: &str) -> usize {
    let mut n = 0;
    coarsen::ir::visit_expr(e, &mut |x: &Expr| n += usize::from(assigns(x, name)));
    n
}

/// Whether `e` itself assigns `name`.
fn assigns(e: &Expr, name: &str) -> bool {
    assigned_var(e) == Some(name)
}

/// Whether `body` declares a variable `name`, at any depth.
pub(crate) fn declares(body: &[Stmt], name: &str) -> bool {
    body.iter().any(|s| match s {
        Stmt::Decl(d) => d.name == name,
        Stmt::If { then, els, .. } => {
            declares(then, name) || els.as_deref().is_some_and(|e| declares(e, name))
        }
        Stmt::For { init, body, .. } => {
            init.as_deref()
                .is_some_and(|i| declares(std::slice::from_ref(i), name))
                || declares(body, name)
        }
        Stmt::While { body, .. } | Stmt::Block(body) => declares(body, name),
        _ => false,
    })
}

/// Whether `e` has the same value at every iteration of a loop whose body
/// assigns `assigned` (see [`induction_steps`]).
fn invariant(e: &Expr, assigned: &[String]) -> bool {
    match &e.kind {
        ExprKind::IntLit(_) => true,
        ExprKind::Var(n) => !assigned.contains(n),
        ExprKind::Cast(a) => invariant(a, assigned),
        ExprKind::Unary(UnOp::Neg | UnOp::Plus | UnOp::BitNot, a) => invariant(a, assigned),
        ExprKind::Binary(_, a, b) => invariant(a, assigned) && invariant(b, assigned),
        _ => false,
    }
}

/// Whether `body` contains a `continue` of this loop.
fn has_continue(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Continue(_) => true,
        Stmt::If { then, els, .. } => {
            has_continue(then) || els.as_deref().is_some_and(has_continue)
        }
        Stmt::Block(b) => has_continue(b),
        _ => false,
    })
}

/// Whether `body` contains a `break` leaving this loop or a `return`.
fn has_break_or_return(body: &[Stmt], in_nested_loop: bool) -> bool {
    body.iter().any(|s| match s {
        Stmt::Break(_) => !in_nested_loop,
        Stmt::Return(..) => true,
        Stmt::If { then, els, .. } => {
            has_break_or_return(then, in_nested_loop)
                || els
                    .as_deref()
                    .is_some_and(|e| has_break_or_return(e, in_nested_loop))
        }
        Stmt::Block(b) => has_break_or_return(b, in_nested_loop),
        Stmt::For { body, .. } | Stmt::While { body, .. } => has_break_or_return(body, true),
        _ => false,
    })
}

fn has_return(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Return(..) => true,
        Stmt::If { then, els, .. } => has_return(then) || els.as_deref().is_some_and(has_return),
        Stmt::Block(b) | Stmt::For { body: b, .. } | Stmt::While { body: b, .. } => has_return(b),
        _ => false,
    })
}

/// Whether `c` only bounds the iterator `it` in the direction `dir` of the
/// step (so that the first iteration failing it ends the loop exactly).
fn monotone(c: &Cond, it: &str, dir: i128) -> bool {
    let mentions = |c: &Cond| {
        let mut v = Vec::new();
        c.atoms(&mut v);
        v.iter().any(|a| match a {
            Atom::Dim(d) => d == it,
            _ => false,
        })
    };
    match c {
        Cond::True | Cond::False => true,
        Cond::Ge(p) => {
            if !p.is_affine() {
                return false;
            }
            let k = p.coeff_of_dim(it);
            // The iterator must not hide in a division.
            let only_linear = {
                let mut q = p.clone();
                q.terms.remove(&vec![Atom::Dim(it.to_string())]);
                !q.mentions_dim(it)
            };
            only_linear && (k == 0 || k.signum() == -dir)
        }
        Cond::Eq(_) => !mentions(c),
        Cond::And(v) => v.iter().all(|c| monotone(c, it, dir)),
        Cond::Or(_) | Cond::Not(_) => !mentions(c) && c.unknown().is_none(),
        Cond::Unknown(_) => false,
    }
}

/// Recognizes `i++`, `++i`, `i--`, `i += e`, `i -= e`, `i = i + e`, `i = i - e`.
fn parse_step(step: &Expr) -> Option<(String, i128, Option<&Expr>)> {
    match &step.kind {
        ExprKind::Unary(UnOp::PostInc | UnOp::PreInc, a) => {
            Some((var_name(a)?.to_string(), 1, None))
        }
        ExprKind::Unary(UnOp::PostDec | UnOp::PreDec, a) => {
            Some((var_name(a)?.to_string(), -1, None))
        }
        ExprKind::Assign(Some(BinOp::Add), l, r) => Some((var_name(l)?.to_string(), 1, Some(r))),
        ExprKind::Assign(Some(BinOp::Sub), l, r) => Some((var_name(l)?.to_string(), -1, Some(r))),
        ExprKind::Assign(None, l, r) => {
            let n = var_name(l)?;
            match &strip(r).kind {
                ExprKind::Binary(BinOp::Add, a, b) if var_name(a) == Some(n) => {
                    Some((n.to_string(), 1, Some(b)))
                }
                ExprKind::Binary(BinOp::Add, a, b) if var_name(b) == Some(n) => {
                    Some((n.to_string(), 1, Some(a)))
                }
                ExprKind::Binary(BinOp::Sub, a, b) if var_name(a) == Some(n) => {
                    Some((n.to_string(), -1, Some(b)))
                }
                _ => None,
            }
        }
        _ => None,
    }
}
