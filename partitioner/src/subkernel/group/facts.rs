//! What bounds a name in the prologue ([`Fact`], [`facts`]): an integer
//! scalar argument never assigned, a local assigned only by its
//! declaration, or a for-loop counter of a shape the test bounds
//! ([`LoopShape`]); and the comparisons a condition implies at an access
//! ([`known_comparisons`]).

use std::collections::HashMap;

use coarsen::ir::*;

use super::{is_var, strip_casts};

/// How a for-loop moves its counter.
#[derive(Clone, Copy)]
pub(super) struct LoopShape<'a> {
    pub(super) init: &'a Expr,
    /// The other side of the condition `k OP bound` (normalized so that `k`
    /// is on the left).
    pub(super) bound: &'a Expr,
    pub(super) op: BinOp,
    /// The step's magnitude (`1` for `++`/`--`).
    pub(super) step: Option<&'a Expr>,
    pub(super) up: bool,
    /// The type the condition compares in.
    pub(super) cmp_ty: &'a Type,
}

/// What a variable name can be bounded by.
#[derive(Clone, Copy)]
pub(super) enum Fact<'a> {
    /// An integer scalar argument never assigned: one value.
    Uniform(&'a Type),
    /// A local assigned only by its declaration.
    Def(&'a Expr, &'a Type),
    /// A for-loop counter.
    Loop(LoopShape<'a>, &'a Type),
}

/// Collects the comparisons `var OP expr` that `c` implies when it
/// evaluates to `holds` (through `&&`, `||`, `!` and conversions; the
/// expression side converted to the comparison's type).
pub(super) fn known_comparisons(c: &Expr, holds: bool, out: &mut Vec<(String, BinOp, Expr)>) {
    use BinOp::*;
    match &c.kind {
        ExprKind::Binary(LogAnd, a, b) if holds => {
            known_comparisons(a, true, out);
            known_comparisons(b, true, out);
        }
        ExprKind::Binary(LogOr, a, b) if !holds => {
            known_comparisons(a, false, out);
            known_comparisons(b, false, out);
        }
        ExprKind::Unary(UnOp::Not, a) => known_comparisons(a, !holds, out),
        ExprKind::Cast(a) if c.ty.is_integer() || matches!(c.ty, Type::Scalar(Scalar::Bool)) => {
            known_comparisons(a, holds, out)
        }
        ExprKind::Binary(op @ (Lt | Le | Gt | Ge | Eq | Ne), l, r) => {
            let op = if holds {
                *op
            } else {
                match op {
                    Lt => Ge,
                    Le => Gt,
                    Gt => Le,
                    Ge => Lt,
                    Eq => Ne,
                    _ => Eq,
                }
            };
            let flip = |op: BinOp| match op {
                Lt => Gt,
                Gt => Lt,
                Le => Ge,
                Ge => Le,
                o => o,
            };
            // the variable side must be the variable itself, converted
            // at most to the comparison's type
            if let ExprKind::Var(n) = &strip_casts(l).kind {
                if !mentions(r, n) && l.ty == r.ty {
                    out.push((n.clone(), op, (**r).clone()));
                }
            }
            if let ExprKind::Var(n) = &strip_casts(r).kind {
                if !mentions(l, n) && l.ty == r.ty {
                    out.push((n.clone(), flip(op), (**l).clone()));
                }
            }
        }
        _ => {}
    }
}

fn mentions(e: &Expr, n: &str) -> bool {
    let mut found = false;
    visit_expr(e, &mut |x| {
        found |= matches!(&x.kind, ExprKind::Var(v) if v == n)
    });
    found
}

/// The names the prologue may bound, with how.
pub(super) fn facts(k: &Function) -> HashMap<&str, Fact<'_>> {
    let mut decls: HashMap<&str, usize> = HashMap::new();
    let mut assigned: HashMap<String, usize> = HashMap::new();
    let mut addr: Vec<String> = Vec::new();
    let mut loops: HashMap<&str, LoopShape<'_>> = HashMap::new();
    let mut defs: HashMap<&str, (&VarDecl, bool)> = HashMap::new();
    let mut outer: HashMap<&str, Vec<(&Stmt, LoopShape<'_>)>> = HashMap::new();
    walk(&k.body, &mut decls, &mut defs, &mut loops, &mut outer);
    visit_exprs(&k.body, &mut |e| match &e.kind {
        ExprKind::Assign(_, l, _)
        | ExprKind::Unary(UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec, l) => {
            if let ExprKind::Var(n) = &strip_casts(l).kind {
                *assigned.entry(n.clone()).or_default() += 1;
            }
        }
        ExprKind::Unary(UnOp::AddrOf, x) => {
            let mut b = &**x;
            while let ExprKind::Index(base, _) = &b.kind {
                b = base;
            }
            if let ExprKind::Var(n) = &strip_casts(b).kind {
                addr.push(n.clone());
            }
        }
        _ => {}
    });
    // a name declared once, never address-taken
    let clean = |n: &str, extra_decls: usize| {
        decls.get(n).copied().unwrap_or(0) + extra_decls == 1 && !addr.iter().any(|a| a == n)
    };
    let mut out = HashMap::new();
    for p in &k.params {
        if p.ty.is_integer() && clean(&p.name, 1) && !assigned.contains_key(&p.name) {
            out.insert(p.name.as_str(), Fact::Uniform(&p.ty));
        }
    }
    for (n, (d, in_for)) in &defs {
        if !d.ty.is_integer() || !clean(n, 0) || k.params.iter().any(|p| p.name == *n) {
            continue;
        }
        let writes = assigned.get(*n).copied().unwrap_or(0);
        if *in_for {
            if let Some(l) = loops.get(n) {
                // the step is the one assignment
                if writes == 1 {
                    out.insert(*n, Fact::Loop(*l, &d.ty));
                }
                continue;
            }
        }
        if writes == 0 {
            if let Some(init) = &d.init {
                out.insert(*n, Fact::Def(init, &d.ty));
            }
        }
        // a counter declared before its one loop (`int k; for (k = 0;
        // ...)`): assigned by the loop's initialization and step alone and
        // read only inside the loop, it takes the values of a counter the
        // loop declares (a private one: a `__local` counter is shared by
        // the work-items, which may step it under each other)
        if let Some([(lp, l)]) = outer.get(n).map(Vec::as_slice) {
            if writes == 2 && d.space == AddrSpace::Private && !mentioned_outside(&k.body, n, lp) {
                out.insert(*n, Fact::Loop(*l, &d.ty));
            }
        }
    }
    out
}

/// `name` occurs in `body` outside the statement `lp`.
fn mentioned_outside(body: &[Stmt], name: &str, lp: &Stmt) -> bool {
    let mut found = false;
    for s in body {
        if std::ptr::eq(s, lp) {
            continue;
        }
        match s {
            Stmt::If {
                cond, then, els, ..
            } => {
                found |= mentions(cond, name)
                    || mentioned_outside(then, name, lp)
                    || els.as_ref().is_some_and(|e| mentioned_outside(e, name, lp));
            }
            Stmt::For {
                init,
                cond,
                step,
                body,
                ..
            } => {
                found |= init
                    .as_ref()
                    .is_some_and(|i| mentioned_outside(std::slice::from_ref(&**i), name, lp))
                    || cond.as_ref().is_some_and(|c| mentions(c, name))
                    || step.as_ref().is_some_and(|c| mentions(c, name))
                    || mentioned_outside(body, name, lp);
            }
            Stmt::While { cond, body, .. } => {
                found |= mentions(cond, name) || mentioned_outside(body, name, lp);
            }
            Stmt::Block(b) => found |= mentioned_outside(b, name, lp),
            other => visit_exprs(std::slice::from_ref(other), &mut |e| {
                found |= matches!(&e.kind, ExprKind::Var(v) if v == name)
            }),
        }
        if found {
            return true;
        }
    }
    false
}

/// The loops of a body, by counter: `loops` for counters the loop
/// declares, `outer` for counters declared before it (`for (k = 0; ...)`).
fn walk<'a>(
    body: &'a [Stmt],
    decls: &mut HashMap<&'a str, usize>,
    defs: &mut HashMap<&'a str, (&'a VarDecl, bool)>,
    loops: &mut HashMap<&'a str, LoopShape<'a>>,
    outer: &mut HashMap<&'a str, Vec<(&'a Stmt, LoopShape<'a>)>>,
) {
    for s in body {
        match s {
            Stmt::Decl(d) => {
                *decls.entry(d.name.as_str()).or_default() += 1;
                defs.insert(d.name.as_str(), (d, false));
            }
            Stmt::If { then, els, .. } => {
                walk(then, decls, defs, loops, outer);
                if let Some(e) = els {
                    walk(e, decls, defs, loops, outer);
                }
            }
            Stmt::For {
                init,
                cond,
                step,
                body,
                ..
            } => {
                if let Some(init) = init {
                    if let Stmt::Decl(d) = &**init {
                        *decls.entry(d.name.as_str()).or_default() += 1;
                        defs.insert(d.name.as_str(), (d, true));
                        let shape = d
                            .init
                            .as_ref()
                            .and_then(|i| loop_shape(&d.name, i, cond.as_ref(), step.as_ref()));
                        if let Some(l) = shape {
                            loops.insert(d.name.as_str(), l);
                        }
                    } else {
                        if let Stmt::Expr(Expr {
                            kind: ExprKind::Assign(None, k, i),
                            ..
                        }) = &**init
                        {
                            if let ExprKind::Var(n) = &k.kind {
                                if let Some(l) = loop_shape(n, i, cond.as_ref(), step.as_ref()) {
                                    outer.entry(n.as_str()).or_default().push((s, l));
                                }
                            }
                        }
                        walk(std::slice::from_ref(&**init), decls, defs, loops, outer);
                    }
                }
                walk(body, decls, defs, loops, outer);
            }
            Stmt::While { body, .. } | Stmt::Block(body) => walk(body, decls, defs, loops, outer),
            _ => {}
        }
    }
}

/// `for (T k = e0; k OP e1; k STEP)` (or `for (k = e0; ...)`) in one of
/// the shapes the prologue bounds.
fn loop_shape<'a>(
    k: &str,
    init: &'a Expr,
    cond: Option<&'a Expr>,
    step: Option<&'a Expr>,
) -> Option<LoopShape<'a>> {
    if mentions(init, k) {
        return None;
    }
    let (op, l, r) = match &cond?.kind {
        ExprKind::Binary(op, l, r) => (*op, &**l, &**r),
        _ => return None,
    };
    use BinOp::*;
    let (op, bound, cmp_ty) = if is_var(l, k) && !mentions(r, k) {
        (op, r, &l.ty)
    } else if is_var(r, k) && !mentions(l, k) {
        let flipped = match op {
            Lt => Gt,
            Gt => Lt,
            Le => Ge,
            Ge => Le,
            _ => return None,
        };
        (flipped, l, &r.ty)
    } else {
        return None;
    };
    let (up, step) = match &step?.kind {
        ExprKind::Unary(UnOp::PreInc | UnOp::PostInc, x) if is_var(x, k) => (true, None),
        ExprKind::Unary(UnOp::PreDec | UnOp::PostDec, x) if is_var(x, k) => (false, None),
        ExprKind::Assign(Some(Add), x, s) if is_var(x, k) && !mentions(s, k) => (true, Some(&**s)),
        ExprKind::Assign(Some(Sub), x, s) if is_var(x, k) && !mentions(s, k) => (false, Some(&**s)),
        ExprKind::Assign(None, x, v) if is_var(x, k) => match &strip_casts(v).kind {
            ExprKind::Binary(Add, a, s) if is_var(a, k) && !mentions(s, k) => (true, Some(&**s)),
            ExprKind::Binary(Sub, a, s) if is_var(a, k) && !mentions(s, k) => (false, Some(&**s)),
            _ => return None,
        },
        _ => return None,
    };
    if !matches!((up, op), (true, Lt | Le) | (false, Gt | Ge)) {
        return None;
    }
    Some(LoopShape {
        init,
        bound,
        op,
        step,
        up,
        cmp_ty,
    })
}
