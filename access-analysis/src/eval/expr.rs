//! Expressions: conditions, integer and pointer values, the accesses to
//! buffer arguments they make (recorded as [`Rec`]s), assignments, and the
//! C integer conversions (interval bounds of a value, wrapping as a
//! quasi-affine remainder).

use super::domain::{
    add_int, cmp, imul, int_range, is_buffer_ptr, is_int, is_ndrange_size, is_unsigned, nd_name,
    no_ub, offset_targets, overflow, trunc_div, IntVal, PtrTarget, Rec, Val,
};
use super::Walker;
use crate::poly::{Atom, Cond, Poly, Why, WhyKind};
use crate::AccessKind;
use coarsen::ir::{BinOp, Expr, ExprKind, Scalar, Span, Type, UnOp};

/// A recorded access's element index by piece, or why it is unknown.
type Subscript = Result<Vec<(Cond, Poly)>, Why>;

/// Name prefix of the `x_d - go_d` dimensions used only inside range checks.
const OFFSET_DIM: &str = "u";

/// Strips casts around an expression.
pub(super) fn strip(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Cast(a) => strip(a),
        _ => e,
    }
}

/// How [`FloatQuotient`] rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Round {
    Ceil,
    Floor,
    /// Toward zero (a conversion to an integer type).
    Trunc,
}

/// `ceil(X)` or `floor(X)` with `X = (float)a / c`, an integer converted to
/// a floating type divided by a positive integer constant (`x <
/// ceil((float)width / TILE)`, a tile count): an integer, exactly
/// `ceil(a / c)` (`floor(a / c)`), wherever `|a|` is below `2^p` (`p` the
/// type's significand bits: 24 for `float`, 53 for `double`): `(float)a`
/// is then exact, and `a / c`, at least `1/c` from an integer unless it is
/// one, cannot round across one (half an ulp is at most `|a/c| 2^-p <
/// 1/c`). Compared with an integer `x`, converted, the result is the
/// integer comparison: exact where `|x| <= 2^p`, and where not, `(float)x`
/// is past `2^p` on the same side as `x`, beyond the quotient's value.
#[derive(Debug)]
pub(super) struct FloatQuotient<'e> {
    round: Round,
    /// The integer operand, before its conversion.
    num: &'e Expr,
    /// The divisor: an integer expression (converted) or an integral
    /// floating literal.
    den: Den<'e>,
    /// `2^p` of the floating type.
    exact_below: i128,
}

#[derive(Debug)]
enum Den<'e> {
    Int(&'e Expr),
    Lit(i128),
}

/// The [`FloatQuotient`] `e` is, if it is one (nothing evaluated).
pub(super) fn float_quotient(e: &Expr) -> Option<FloatQuotient<'_>> {
    let e = strip_float_casts(e);
    let ExprKind::Call(name, args) = &e.kind else {
        return None;
    };
    let round = match name.as_str() {
        "ceil" => Round::Ceil,
        "floor" => Round::Floor,
        _ => return None,
    };
    let [x] = args.as_slice() else {
        return None;
    };
    float_division(x, round)
}

/// `x = (float)a / c` (see [`FloatQuotient`]), to be rounded by `round`:
/// inside `ceil` or `floor`, or bare, rounded as what is done with it makes
/// it (a conversion to an integer truncates, [`Round::Trunc`]; a comparison
/// with one rounds as [`comparison_rounding`] says).
fn float_division(x: &Expr, round: Round) -> Option<FloatQuotient<'_>> {
    let x = strip_float_casts(x);
    let ExprKind::Binary(BinOp::Div, num, den) = &x.kind else {
        return None;
    };
    let exact_below = exact_integers_below(&x.ty)?;
    // The integer's own conversion may be to a narrower type than the
    // division's (`(float)n / 16.0` divides in double a float): the
    // narrower one bounds it.
    let converted = strip_float_casts(num);
    let (num, exact_below) = match &converted.kind {
        ExprKind::Cast(a) if is_int(&a.ty) => {
            (&**a, exact_below.min(exact_integers_below(&converted.ty)?))
        }
        _ => return None,
    };
    let den_converted = strip_float_casts(den);
    let (den, exact_below) = match &den_converted.kind {
        ExprKind::Cast(d) if is_int(&d.ty) => (
            Den::Int(d),
            exact_below.min(exact_integers_below(&den_converted.ty)?),
        ),
        ExprKind::FloatLit(f, _) if f.fract() == 0.0 && *f >= 1.0 && *f < exact_below as f64 => {
            (Den::Lit(*f as i128), exact_below)
        }
        _ => return None,
    };
    Some(FloatQuotient {
        round,
        num,
        den,
        exact_below,
    })
}

/// The rounding that makes `int OP q` (the integer on the left when
/// `int_left`) the same comparison with an integer, for a real `q`: `t <
/// q` is `t < ceil(q)`, `t <= q` is `t <= floor(q)`, `t > q` is `t >
/// floor(q)`, `t >= q` is `t >= ceil(q)` (and mirrored with `q` on the
/// left); none for `==` and `!=`.
fn comparison_rounding(op: BinOp, int_left: bool) -> Option<Round> {
    let op = if int_left {
        op
    } else {
        match op {
            BinOp::Lt => BinOp::Gt,
            BinOp::Gt => BinOp::Lt,
            BinOp::Le => BinOp::Ge,
            BinOp::Ge => BinOp::Le,
            other => other,
        }
    };
    match op {
        BinOp::Lt | BinOp::Ge => Some(Round::Ceil),
        BinOp::Le | BinOp::Gt => Some(Round::Floor),
        _ => None,
    }
}

/// `2^p` for a floating type of `p` significand bits: every integer of a
/// smaller magnitude converts to it exactly.
fn exact_integers_below(t: &Type) -> Option<i128> {
    match t {
        Type::Scalar(Scalar::Float) => Some(1 << 24),
        Type::Scalar(Scalar::Double) => Some(1 << 53),
        _ => None,
    }
}

/// `e` without conversions between floating types around it.
fn strip_float_casts(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Cast(a)
            if matches!(e.ty, Type::Scalar(s) if s.is_float())
                && matches!(a.ty, Type::Scalar(s) if s.is_float()) =>
        {
            strip_float_casts(a)
        }
        _ => e,
    }
}

/// The integer operand of a comparison with a [`FloatQuotient`]: an
/// integer, or one converted to a floating type.
fn int_operand(e: &Expr) -> Option<&Expr> {
    match &e.kind {
        _ if is_int(&e.ty) => Some(e),
        ExprKind::Cast(a) if is_int(&a.ty) => Some(a),
        _ => None,
    }
}

pub(super) fn var_name(e: &Expr) -> Option<&str> {
    match &strip(e).kind {
        ExprKind::Var(n) => Some(n),
        _ => None,
    }
}

impl<'a> Walker<'a> {
    /// Converts a value to the declared type of a variable.
    /// `from` is the C type of the stored value (see [`Walker::wrap`]).
    pub(super) fn convert(&self, v: Val, from: Option<&Type>, ty: &Type, span: &Span) -> Val {
        match ty {
            t if is_int(t) => match v {
                Val::Int(i) => Val::Int(self.wrap(i, from, t, span)),
                _ => Val::Int(IntVal::unknown(format!(
                    "value at {} is not an integer expression",
                    self.loc(span)
                ))),
            },
            t if is_buffer_ptr(t) => match v {
                Val::Ptr(p) => Val::Ptr(p),
                _ => self.any_buffer(format!(
                    "the target of the pointer at {} cannot be tracked",
                    self.loc(span)
                )),
            },
            _ => Val::Other,
        }
    }

    /// Evaluates a condition (side effects of its operands are recorded).
    pub fn eval_cond(&mut self, e: &Expr) -> Cond {
        match &e.kind {
            ExprKind::Cast(a) if is_int(&e.ty) || matches!(e.ty, Type::Scalar(Scalar::Bool)) => {
                self.eval_cond(a)
            }
            ExprKind::Binary(
                op @ (BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge | BinOp::Eq | BinOp::Ne),
                a,
                b,
            ) => {
                // `t < ceil((float)n / 16)`: an integer comparison
                let int_left = comparison_rounding(*op, true).and_then(|r| float_division(b, r));
                let int_right = comparison_rounding(*op, false).and_then(|r| float_division(a, r));
                match (
                    int_operand(a),
                    float_quotient(b).or(int_left),
                    float_quotient(a).or(int_right),
                    int_operand(b),
                ) {
                    (Some(x), Some(q), ..) => {
                        let x = self.eval_int(x);
                        let y = self.quotient_value(&q, b);
                        return cmp(*op, &x, &y);
                    }
                    (_, _, Some(q), Some(y)) => {
                        let x = self.quotient_value(&q, a);
                        let y = self.eval_int(y);
                        return cmp(*op, &x, &y);
                    }
                    _ => {}
                }
                let (va, vb) = (self.eval(a), self.eval(b));
                match (va, vb) {
                    (Val::Int(x), Val::Int(y)) if is_int(&a.ty) && is_int(&b.ty) => {
                        cmp(*op, &x, &y)
                    }
                    _ => Cond::Unknown(Why::other(format!(
                        "condition '{}' at {} is not an integer comparison",
                        self.text(&e.span),
                        self.loc(&e.span)
                    ))),
                }
            }
            ExprKind::Binary(BinOp::LogAnd, a, b) => {
                let ca = self.eval_cond(a);
                self.path.push(ca.clone());
                let cb = self.eval_cond(b);
                self.path.pop();
                Cond::and(ca, cb)
            }
            ExprKind::Binary(BinOp::LogOr, a, b) => {
                let ca = self.eval_cond(a);
                self.path.push(Cond::not(ca.clone()));
                let cb = self.eval_cond(b);
                self.path.pop();
                Cond::or(ca, cb)
            }
            ExprKind::Unary(UnOp::Not, a) => Cond::not(self.eval_cond(a)),
            _ => match self.eval(e) {
                Val::Int(v) => cmp(BinOp::Ne, &v, &IntVal::konst(0)),
                _ => Cond::Unknown(Why::other(format!(
                    "condition '{}' at {} is not an integer expression",
                    self.text(&e.span),
                    self.loc(&e.span)
                ))),
            },
        }
    }

    /// Evaluates an expression, recording its accesses.
    pub fn eval(&mut self, e: &Expr) -> Val {
        let v = self.eval_raw(e);
        if is_buffer_ptr(&e.ty) && !matches!(v, Val::Ptr(_)) {
            return self.any_buffer(format!(
                "the target of pointer '{}' ({}) cannot be tracked",
                self.text(&e.span),
                self.loc(&e.span)
            ));
        }
        if is_int(&e.ty) {
            match v {
                Val::Int(_) => v,
                _ => Val::Int(IntVal::unknown(format!(
                    "'{}' is not an integer expression",
                    self.text(&e.span)
                ))),
            }
        } else {
            v
        }
    }

    pub(super) fn eval_int(&mut self, e: &Expr) -> IntVal {
        match self.eval(e) {
            Val::Int(v) => v,
            _ => IntVal::unknown(format!("'{}' is not an integer", self.text(&e.span))),
        }
    }

    fn eval_raw(&mut self, e: &Expr) -> Val {
        match &e.kind {
            ExprKind::IntLit(v) if is_int(&e.ty) => Val::Int(IntVal::konst(*v)),
            ExprKind::IntLit(_) | ExprKind::FloatLit(..) => Val::Other,
            ExprKind::Var(n) => match (self.lookup(n), self.escaped.get(n)) {
                // Its address is taken: a store through a pointer may have
                // changed it (a counted loop's iterator too).
                (Some(Val::Int(_)), Some(at)) => Val::Int(IntVal::unknown(format!(
                    "the address of '{n}' is taken at {}",
                    self.loc(at)
                ))),
                (Some(Val::Ptr(_)), Some(at)) => {
                    let why = format!("the address of '{n}' is taken at {}", self.loc(at));
                    self.any_buffer(why)
                }
                (Some(v), _) => v.clone(),
                (None, _) => Val::Int(IntVal::unknown(format!("'{n}' is not a local variable"))),
            },
            ExprKind::Cast(a) => {
                // `(int)ceil((float)n / 16)`: the integer it is
                if is_int(&e.ty) {
                    if let Some(q) = float_quotient(a).or_else(|| float_division(a, Round::Trunc)) {
                        let i = self.quotient_value(&q, a);
                        return Val::Int(self.wrap(i, None, &e.ty, &e.span));
                    }
                }
                let v = self.eval(a);
                if is_int(&e.ty) {
                    match v {
                        // Integer conversions wrap (see the module doc).
                        Val::Int(i) if is_int(&a.ty) => {
                            Val::Int(self.wrap(i, Some(&a.ty), &e.ty, &e.span))
                        }
                        _ if !is_int(&a.ty) => Val::Int(IntVal::unknown(format!(
                            "'{}' is converted from a non-integer value",
                            self.text(&e.span)
                        ))),
                        other => other,
                    }
                } else if matches!(e.ty, Type::Pointer { .. }) {
                    self.cast_pointer(v, &a.ty, &e.ty, &e.span)
                } else {
                    Val::Other
                }
            }
            ExprKind::Unary(op, a) => self.unary(*op, a, e),
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b, e),
            ExprKind::Assign(op, l, r) => self.assign(*op, l, r, e),
            ExprKind::Index(..) => match self.mem_ref(e) {
                Some((targets, partial)) => {
                    let _ = partial;
                    self.record(&targets, AccessKind::Read, 1, e);
                    self.loaded(e)
                }
                None => self.loaded(e),
            },
            ExprKind::Call(name, args) => self.call(name, args, e),
            ExprKind::WorkItem(f, d) => self.work_item(*f, d),
            ExprKind::Cond(c, a, b) => {
                let cv = self.eval_cond(c);
                self.path.push(cv.clone());
                let va = self.eval(a);
                self.path.pop();
                self.path.push(Cond::not(cv.clone()));
                let vb = self.eval(b);
                self.path.pop();
                match (va, vb) {
                    (Val::Int(x), Val::Int(y)) => Val::Int(IntVal::select(&cv, x, y)),
                    (Val::Ptr(mut x), Val::Ptr(y)) => {
                        for t in y {
                            if !x.contains(&t) {
                                x.push(t);
                            }
                        }
                        Val::Ptr(x)
                    }
                    _ => Val::Other,
                }
            }
            ExprKind::Swizzle(a, _) => {
                self.eval(a);
                Val::Other
            }
            ExprKind::VectorLit(parts) => {
                for p in parts {
                    self.eval(p);
                }
                Val::Other
            }
            ExprKind::Unsupported(m) => {
                Val::Int(IntVal::unknown(format!("unsupported expression: {m}")))
            }
            // a member of a buffer element: a read of (part of) the element
            ExprKind::Member(..) => match self.mem_ref(e) {
                Some((targets, _)) => {
                    self.record(&targets, AccessKind::Read, 1, e);
                    self.loaded(e)
                }
                // a member of a struct passed by value that the kernel
                // never changes: a parameter; of another struct value (a
                // private copy, one the kernel changes, in a helper): a
                // value the analysis does not follow
                None if is_int(&e.ty) => match self.member_param(e) {
                    Some(name) => Val::Int(IntVal::poly(Poly::param(&name))),
                    None => Val::Int(IntVal::Unknown(Why::other(format!(
                        "'{}' is a member of a struct value, which the analysis does not follow",
                        self.text(&e.span)
                    )))),
                },
                None => Val::Other,
            },
        }
    }

    /// The value read from memory by `e`.
    fn loaded(&self, e: &Expr) -> Val {
        if is_int(&e.ty) {
            Val::Int(IntVal::Unknown(Why::indirect(format!(
                "'{}' is loaded from memory",
                self.text(&e.span)
            ))))
        } else {
            Val::Other
        }
    }

    /// For a memory lvalue (`p[i]`, `*p`, `p[i].x`): the targets with the
    /// element offset, and whether only part of the element is accessed.
    /// `None` for private/local memory.
    fn mem_ref(&mut self, e: &Expr) -> Option<(Vec<PtrTarget>, bool)> {
        // through a pointer to parts of the buffer's elements, an access
        // covers part of an element
        self.mem_ref_raw(e).map(|(ts, partial)| {
            let part = partial || ts.iter().any(PtrTarget::partial);
            (ts, part)
        })
    }

    fn mem_ref_raw(&mut self, e: &Expr) -> Option<(Vec<PtrTarget>, bool)> {
        match &e.kind {
            ExprKind::Index(base, idx) => {
                let b = self.eval(base);
                let i = self.eval_int(idx);
                match b {
                    Val::Ptr(ts) => Some((offset_targets(&ts, &i, &self.ndr.rules), false)),
                    _ => None,
                }
            }
            ExprKind::Unary(UnOp::Deref, p) => match self.eval(p) {
                Val::Ptr(ts) => Some((ts, false)),
                _ => None,
            },
            ExprKind::Swizzle(a, _) => self.mem_ref_raw(a).map(|(t, _)| (t, true)),
            // `p->m`: part of the element `p` points at
            ExprKind::Member(a, ..) if matches!(a.ty, Type::Pointer { .. }) => match self.eval(a) {
                Val::Ptr(ts) => Some((ts, true)),
                _ => None,
            },
            // `p[i].m`, `p[i].m.n`: part of the element
            ExprKind::Member(a, ..) => self.mem_ref_raw(a).map(|(t, _)| (t, true)),
            ExprKind::Cast(a) => self.mem_ref_raw(a),
            _ => None,
        }
    }

    pub(super) fn record(&mut self, targets: &[PtrTarget], kind: AccessKind, lanes: u32, e: &Expr) {
        let many = targets.len() > 1;
        let text = self.text(&e.span);
        for t in targets {
            let (first, lanes) = t.elements(lanes);
            let sub = match first {
                IntVal::Known(p) => Ok(p),
                IntVal::Unknown(w) => Err(w),
            };
            let note = if many {
                Some(format!(
                    "'{text}' ({}) may access one of several buffers",
                    self.loc(&e.span)
                ))
            } else {
                self.loop_notes.last().cloned()
            };
            let (sub, path) = self.in_counts(sub, self.path.clone());
            self.recs.push(Rec {
                buf: t.buf,
                kind,
                sub,
                lanes,
                path,
                exact: self.exact && !many,
                iters: self.iters.clone(),
                span: e.span.clone(),
                text: text.clone(),
                note,
            });
        }
    }

    /// An access's subscript and path with each strided iterator in scope
    /// (see `strided`) replaced by its start plus step times its count,
    /// innermost first (a start may use an outer iterator): a change of
    /// variables, one-to-one on the iterations the path allows (`i >= v`
    /// and `(i - v) mod s = 0` become `t >= 0`). Unchanged when a
    /// substitution fails (overflow).
    fn in_counts(&self, sub: Subscript, path: Vec<Cond>) -> (Subscript, Vec<Cond>) {
        let steps: Vec<(&String, &(Poly, i128))> = self
            .iters
            .iter()
            .rev()
            .filter_map(|d| self.strided.get(d).map(|x| (d, x)))
            .collect();
        if steps.is_empty() {
            return (sub, path);
        }
        let changed = || -> Option<(Subscript, Vec<Cond>)> {
            let (mut sub, mut path) = (sub.clone(), path.clone());
            for (d, (v, s)) in &steps {
                let by = v.add(&Poly::dim(d).scale(*s)?)?;
                let f = |p: &Poly| p.subst_dim(d, &by);
                if let Ok(pieces) = &mut sub {
                    for (c, p) in pieces.iter_mut() {
                        *p = f(p)?;
                        *c = c.map_polys(&f);
                    }
                }
                for c in path.iter_mut() {
                    *c = c.map_polys(&f);
                }
            }
            Some((sub, path))
        };
        match changed() {
            Some(x) => x,
            None => (sub, path),
        }
    }

    /// Records that the buffers of `targets` escape into something unknown.
    pub(super) fn escape(&mut self, targets: &[PtrTarget], what: &str, e: &Expr) {
        let msg = format!("is passed to '{what}'");
        for kind in [AccessKind::Read, AccessKind::MayWrite] {
            for t in targets {
                self.recs.push(Rec {
                    buf: t.buf,
                    kind,
                    sub: Err(Why {
                        kind: WhyKind::Escape,
                        msg: msg.clone(),
                    }),
                    lanes: 1,
                    path: self.path.clone(),
                    exact: false,
                    iters: self.iters.clone(),
                    span: e.span.clone(),
                    text: self.text(&e.span),
                    note: None,
                });
            }
        }
    }

    fn unary(&mut self, op: UnOp, a: &Expr, e: &Expr) -> Val {
        match op {
            UnOp::Plus => self.eval(a),
            UnOp::Neg => match self.eval(a) {
                Val::Int(v) => {
                    let r = v.lift1(&|p| {
                        p.scale(-1)
                            .map(|q| vec![(Cond::True, q)])
                            .ok_or_else(overflow)
                    });
                    Val::Int(if is_unsigned(&e.ty) {
                        self.wrap(r, None, &e.ty, &e.span)
                    } else {
                        r
                    })
                }
                _ => Val::Other,
            },
            UnOp::BitNot => match self.eval(a) {
                Val::Int(v) => {
                    let r = v.lift1(&|p| {
                        p.scale(-1)
                            .and_then(|q| q.add_const(-1))
                            .map(|q| vec![(Cond::True, q)])
                            .ok_or_else(overflow)
                    });
                    Val::Int(if is_unsigned(&e.ty) {
                        self.wrap(r, None, &e.ty, &e.span)
                    } else {
                        r
                    })
                }
                _ => Val::Other,
            },
            UnOp::Not => {
                let c = self.eval_cond(a);
                Val::Int(IntVal::from_cond(Cond::not(c)))
            }
            UnOp::Deref => match self.mem_ref(e) {
                Some((ts, _)) => {
                    self.record(&ts, AccessKind::Read, 1, e);
                    self.loaded(e)
                }
                None => self.loaded(e),
            },
            UnOp::AddrOf => match &strip(a).kind {
                ExprKind::Index(base, idx) => {
                    let b = self.eval(base);
                    let i = self.eval_int(idx);
                    match b {
                        Val::Ptr(ts) => Val::Ptr(offset_targets(&ts, &i, &self.ndr.rules)),
                        _ => Val::Other,
                    }
                }
                ExprKind::Unary(UnOp::Deref, p) => self.eval(p),
                ExprKind::Var(n) => {
                    // The variable may be modified through the pointer.
                    let why = format!("the address of '{n}' is taken at {}", self.loc(&e.span));
                    match self.lookup(n) {
                        Some(Val::Int(_)) => self.store(n, Val::Int(IntVal::unknown(why))),
                        Some(Val::Ptr(_)) => {
                            let v = self.any_buffer(why);
                            self.store(n, v)
                        }
                        _ => {}
                    }
                    Val::Other
                }
                _ => {
                    self.eval(a);
                    Val::Other
                }
            },
            UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec => {
                let delta = if matches!(op, UnOp::PreInc | UnOp::PostInc) {
                    1
                } else {
                    -1
                };
                let post = matches!(op, UnOp::PostInc | UnOp::PostDec);
                if let Some(n) = var_name(a) {
                    let old = self.eval(a);
                    let new = match &old {
                        // `c++` on a `uchar` is `c = (uchar)(c + 1)`: wraps like every store.
                        Val::Int(v) => Val::Int(self.wrap(
                            add_int(v, &IntVal::konst(delta)),
                            no_ub(&a.ty),
                            &a.ty,
                            &a.span,
                        )),
                        Val::Ptr(ts) => {
                            Val::Ptr(offset_targets(ts, &IntVal::konst(delta), &self.ndr.rules))
                        }
                        _ => Val::Other,
                    };
                    self.store(n, new.clone());
                    if post {
                        old
                    } else {
                        new
                    }
                } else {
                    match self.mem_ref(a) {
                        Some((ts, _)) => {
                            self.record(&ts, AccessKind::Read, 1, a);
                            self.record(&ts, AccessKind::MustWrite, 1, a);
                            self.loaded(a)
                        }
                        None => self.loaded(a),
                    }
                }
            }
        }
    }

    fn binary(&mut self, op: BinOp, a: &Expr, b: &Expr, e: &Expr) -> Val {
        match op {
            BinOp::Lt
            | BinOp::Gt
            | BinOp::Le
            | BinOp::Ge
            | BinOp::Eq
            | BinOp::Ne
            | BinOp::LogAnd
            | BinOp::LogOr => {
                let c = self.eval_cond(e);
                Val::Int(IntVal::from_cond(c))
            }
            BinOp::Comma => {
                self.eval(a);
                self.eval(b)
            }
            _ => {
                let va = self.eval(a);
                let vb = self.eval(b);
                self.arith(op, va, vb, e)
            }
        }
    }

    fn arith(&self, op: BinOp, va: Val, vb: Val, e: &Expr) -> Val {
        let rules = &self.ndr.rules;
        match (op, va, vb) {
            (BinOp::Add, Val::Ptr(ts), Val::Int(i)) | (BinOp::Add, Val::Int(i), Val::Ptr(ts)) => {
                Val::Ptr(offset_targets(&ts, &i, rules))
            }
            (BinOp::Sub, Val::Ptr(ts), Val::Int(i)) => {
                let neg = i.lift1(&|p| {
                    p.scale(-1)
                        .map(|q| vec![(Cond::True, q)])
                        .ok_or_else(overflow)
                });
                Val::Ptr(offset_targets(&ts, &neg, rules))
            }
            (_, Val::Int(x), Val::Int(y)) => {
                let unsigned = is_unsigned(&e.ty);
                let v = self.int_op(op, &x, &y, unsigned, e);
                // Unsigned arithmetic wraps; signed overflow is undefined.
                Val::Int(if unsigned {
                    self.wrap(v, None, &e.ty, &e.span)
                } else {
                    v
                })
            }
            _ => Val::Other,
        }
    }

    pub(super) fn int_op(
        &self,
        op: BinOp,
        x: &IntVal,
        y: &IntVal,
        unsigned: bool,
        e: &Expr,
    ) -> IntVal {
        let rules = &self.ndr.rules;
        let text = self.text(&e.span);
        // An unknown operand is the reason, whatever the operation.
        if let IntVal::Unknown(w) = x {
            return IntVal::Unknown(w.clone());
        }
        if let IntVal::Unknown(w) = y {
            return IntVal::Unknown(w.clone());
        }
        match op {
            BinOp::Add => add_int(x, y),
            BinOp::Sub => x.lift2(y, &|a, b| {
                a.sub(b).map(|q| vec![(Cond::True, q)]).ok_or_else(overflow)
            }),
            BinOp::Mul => x.lift2(y, &|a, b| {
                a.mul(b, rules)
                    .map(|q| vec![(Cond::True, q)])
                    .ok_or_else(overflow)
            }),
            BinOp::Div | BinOp::Rem => {
                let Some(d) = self.const_of(y) else {
                    return IntVal::unknown(format!("'{text}' divides by a non-constant"));
                };
                if d == 0 {
                    return IntVal::unknown(format!("'{text}' divides by zero"));
                }
                let nonneg =
                    |p: &Poly| unsigned || p.syntactically_nonneg(&|a| self.nonneg_atom(a));
                let rem = op == BinOp::Rem;
                x.lift1(&|a| trunc_div(a, d, rem, nonneg(a)))
            }
            BinOp::Shl => match self.const_of(y) {
                Some(k) if (0..63).contains(&k) => x.lift1(&|a| {
                    a.scale(1i128 << k)
                        .map(|q| vec![(Cond::True, q)])
                        .ok_or_else(overflow)
                }),
                _ => IntVal::unknown(format!("'{text}' shifts by a non-constant")),
            },
            BinOp::Shr => match self.const_of(y) {
                // Arithmetic shift right is a floor division.
                Some(k) if (0..63).contains(&k) => x.lift1(&|a| {
                    a.floor_div(1i128 << k)
                        .map(|q| vec![(Cond::True, q)])
                        .ok_or_else(|| Why::other(format!("'{text}' is not affine")))
                }),
                _ => IntVal::unknown(format!("'{text}' shifts by a non-constant")),
            },
            BinOp::BitAnd => {
                // x & (2^k - 1) == x mod 2^k in two's complement.
                let (m, v) = match (self.const_of(y), self.const_of(x)) {
                    (Some(m), _) => (m, x),
                    (None, Some(m)) => (m, y),
                    _ => return IntVal::unknown(format!("'{text}' is a bitwise operation")),
                };
                if m >= 0 && (m + 1) & m == 0 {
                    let k = m + 1;
                    v.lift1(&|a| {
                        let q = a
                            .floor_div(k)
                            .ok_or_else(|| Why::other(format!("'{text}' is not affine")))?;
                        let r = q.scale(k).and_then(|qk| a.sub(&qk)).ok_or_else(overflow)?;
                        Ok(vec![(Cond::True, r)])
                    })
                } else {
                    IntVal::unknown(format!("'{text}' is a bitwise operation"))
                }
            }
            _ => IntVal::unknown(format!("'{text}' is a bitwise operation")),
        }
    }

    /// Bounds of an atom (see the module doc for the NDRange premise).
    fn atom_range(&self, a: &Atom) -> Option<(i128, i128)> {
        // Everything of the NDRange fits in `int`: values up to 2^31 - 1.
        const NDR: i128 = (1 << 31) - 1;
        match a {
            Atom::Dim(d) => {
                if let Some(b) = self.dim_bounds.get(d) {
                    return Some(*b);
                }
                let (k, rest) = d.split_at(1);
                let nd = (k == "x" || k == "l" || k == "g" || k == OFFSET_DIM)
                    && rest.len() == 1
                    && rest.chars().all(|c| c.is_ascii_digit());
                nd.then_some((0, NDR))
            }
            Atom::Param(p) => {
                if let Some(v) = self.spec.get(p) {
                    return Some((*v, *v));
                }
                if is_ndrange_size(p) {
                    return Some((1, NDR));
                }
                if self.is_nd_param(p) {
                    return Some((0, NDR)); // go_d
                }
                let b = self.param_bounds.get(p).copied();
                if self.assumed_nonneg.borrow().contains(p) {
                    return b.map(|(lo, hi)| (lo.max(0), hi));
                }
                b
            }
            Atom::Div(num, d) => {
                let (lo, hi) = self.poly_range(num)?;
                Some((lo.div_euclid(*d), hi.div_euclid(*d)))
            }
        }
    }

    /// Interval bounds of a polynomial, `None` when some atom is unbounded.
    /// Both the polynomial as written and with each global id `x_d` written
    /// as `go_d + u_d` (`0 <= u_d < gs_d`) are bounded, and the tighter bounds
    /// of the two kept (`x0 - go0` is non-negative only in the second form).
    pub(super) fn poly_range(&self, p: &Poly) -> Option<(i128, i128)> {
        let direct = self.poly_range_raw(p);
        let mut sub = Poly::default();
        let mut changed = false;
        for (m, c) in &p.terms {
            let mut t = Poly::konst(*c);
            for a in m {
                let f = match a {
                    Atom::Dim(d)
                        if d.len() == 2
                            && d.starts_with('x')
                            && d[1..].chars().all(|c| c.is_ascii_digit()) =>
                    {
                        changed = true;
                        Poly::param(&format!("go{}", &d[1..]))
                            .add(&Poly::dim(&format!("{OFFSET_DIM}{}", &d[1..])))?
                    }
                    _ => Poly::atom(a.clone()),
                };
                t = t.mul(&f, &[])?;
            }
            sub = sub.add(&t)?;
        }
        let shifted = if changed {
            self.poly_range_raw(&sub)
        } else {
            None
        };
        match (direct, shifted) {
            (Some(a), Some(b)) => Some((a.0.max(b.0), a.1.min(b.1))),
            (a, b) => a.or(b),
        }
    }

    fn poly_range_raw(&self, p: &Poly) -> Option<(i128, i128)> {
        let mut acc = (0i128, 0i128);
        for (m, c) in &p.terms {
            let mut t = (*c, *c);
            for a in m {
                t = imul(t, self.atom_range(a)?)?;
            }
            acc = (acc.0.checked_add(t.0)?, acc.1.checked_add(t.1)?);
        }
        Some(acc)
    }

    /// The value of `v` converted to the integer type `ty` (C semantics: modulo
    /// 2^n, two's complement for signed targets); see the module doc.
    ///
    /// `from` is the C type the value already has, when it has one: a value of
    /// a type whose range lies within `ty`'s needs no wrapping (values of
    /// signed types are in range because signed overflow is undefined).
    fn wrap(&self, v: IntVal, from: Option<&Type>, ty: &Type, span: &Span) -> IntVal {
        let Some((lo, hi, bits, signed)) = int_range(ty) else {
            return v;
        };
        if let Some((flo, fhi, _, _)) = from.and_then(int_range) {
            if flo >= lo && fhi <= hi {
                return v;
            }
        }
        let IntVal::Known(pieces) = v else { return v };
        // Terms that are multiples of 2^bits vanish in the conversion: a
        // wider unsigned intermediate's wrap-around (`get_global_id(0) + (k +
        // 1)` is computed in `size_t`, then converted to `int`) leaves the
        // value itself.
        let m = 1i128 << bits;
        let pieces: Vec<(Cond, Poly)> = if bits > 1 {
            pieces
                .into_iter()
                .map(|(c, p)| (c, p.without_multiples_of(m)))
                .collect()
        } else {
            pieces
        };
        if pieces
            .iter()
            .all(|(_, p)| self.poly_range(p).is_some_and(|(a, b)| a >= lo && b <= hi))
        {
            return IntVal::Known(pieces);
        }
        let text = self.text(span);
        let why = || {
            Why::other(format!(
                "'{text}' may wrap around in '{}' ({})",
                ty.name(),
                self.loc(span)
            ))
        };
        if bits == 1 {
            return IntVal::Unknown(why());
        }
        let half = if signed { m / 2 } else { 0 };
        let mut out = Vec::new();
        for (c, p) in pieces {
            if self.poly_range(&p).is_some_and(|(a, b)| a >= lo && b <= hi) {
                out.push((c, p));
                continue;
            }
            // Kept whole under a launch-time assumption that it never wraps
            // (see `NoWrap`): a value of the NDRange alone that stays in
            // range on every NDRange of up to 2^24 work-items and
            // work-groups per dimension (one that wraps on ordinary
            // launches, `i + 4294967295u`, keeps its wrap-around), and a
            // sum of products of non-negative NDRange values and scalar
            // arguments (`get_global_id(1) * width + get_global_id(0)`,
            // `width` not negative), largest at the NDRange's largest ids.
            let ordinary = self
                .ordinary_range(&p)
                .is_some_and(|(a, b)| a >= lo && b <= hi);
            if ordinary && self.of_ndrange_alone(&p) || self.monotone_nonneg(&p, lo) {
                self.assume_no_wrap(super::NoWrap {
                    value: p.clone(),
                    lo,
                    hi,
                    above: true,
                    what: format!("'{text}' stays within '{}' ({})", ty.name(), self.loc(span)),
                });
                out.push((c, p));
                continue;
            }
            // An integer scalar argument converted to an unsigned type
            // (`get_global_id(1) * width` with `int width` converts `width`
            // to `size_t`): kept as it is under the assumption that it is
            // not negative, and taken as such from then on.
            if let Some(n) = self.scalar_param_alone(&p) {
                if lo == 0
                    && self
                        .atom_range(&Atom::Param(n.clone()))
                        .is_some_and(|(_, b)| b <= hi)
                {
                    self.assume_no_wrap(super::NoWrap {
                        value: p.clone(),
                        lo,
                        hi,
                        above: false,
                        what: format!(
                            "'{text}' converted to '{}' is not negative ({})",
                            ty.name(),
                            self.loc(span)
                        ),
                    });
                    self.assumed_nonneg.borrow_mut().insert(n);
                    out.push((c, p));
                    continue;
                }
            }
            // An affine value of the ids, the NDRange's values and integer
            // scalar arguments (`get_global_id(0) + (k + 1)` into an `int`,
            // `k + 1` converted to `size_t`) that stays in range on ordinary
            // launches whose scalars lie in [0, 2^24]: kept as it is under
            // the assumption, over the scalars too, that no work-item's value
            // leaves the range (one that does, `k` near `INT_MAX`, fails it
            // at launch).
            if ordinary && self.of_launch_values(&p) {
                let above = self.poly_range(&p).is_none_or(|(_, b)| b > hi);
                let what = if above || lo < 0 {
                    format!("'{text}' stays within '{}' ({})", ty.name(), self.loc(span))
                } else {
                    format!(
                        "'{text}' converted to '{}' is not negative ({})",
                        ty.name(),
                        self.loc(span)
                    )
                };
                self.assume_no_wrap(super::NoWrap {
                    value: p.clone(),
                    lo,
                    hi,
                    above,
                    what,
                });
                out.push((c, p));
                continue;
            }
            // r = ((p + half) mod m) - half
            let shifted = match p.add_const(half) {
                Some(q) => q,
                None => return IntVal::Unknown(why()),
            };
            let Some(q) = shifted.floor_div(m) else {
                return IntVal::Unknown(why());
            };
            let Some(r) = q
                .scale(m)
                .and_then(|qm| shifted.sub(&qm))
                .and_then(|r| r.add_const(-half))
            else {
                return IntVal::Unknown(why());
            };
            out.push((c, r));
        }
        IntVal::Known(out)
    }

    /// Whether `p` is affine and made of the NDRange's values alone: global,
    /// local and group ids, NDRange sizes and offsets (and floor divisions
    /// of such), so that whether it wraps around depends on the launch's
    /// sizes only, which every launch checks (see `NoWrap`).
    fn of_ndrange_alone(&self, p: &Poly) -> bool {
        affine_in_ids_and(p, |n| self.is_nd_param(n))
    }

    /// Interval bounds of `p` over ordinary launches: local and group ids
    /// below 2^24, global ids below 2^25, sizes, offsets and scalar
    /// arguments in [0, 2^24] (specialized values exact); see `wrap`.
    fn ordinary_range(&self, p: &Poly) -> Option<(i128, i128)> {
        const CAP: i128 = 1 << 24;
        let mut acc = (0i128, 0i128);
        for (m, c) in &p.terms {
            let mut t = (*c, *c);
            for a in m {
                let r = match a {
                    Atom::Param(n) => match self.spec.get(n) {
                        Some(v) => (*v, *v),
                        None => (0, CAP),
                    },
                    // a global id includes the offset
                    Atom::Dim(d) if d.starts_with('x') => (0, 2 * CAP - 1),
                    Atom::Dim(_) => (0, CAP - 1),
                    Atom::Div(num, d) => {
                        let (lo, hi) = self.ordinary_range(num)?;
                        (lo.div_euclid(*d), hi.div_euclid(*d))
                    }
                };
                t = imul(t, r)?;
            }
            acc = (acc.0.checked_add(t.0)?, acc.1.checked_add(t.1)?);
        }
        Some(acc)
    }

    /// Whether `p` is a non-affine sum of products of NDRange ids and sizes
    /// and non-negative integer scalar arguments, with positive
    /// coefficients and a constant of at least `lo`: never below `lo`, and
    /// largest where every id is (`Renderer::no_wrap_assumptions`).
    fn monotone_nonneg(&self, p: &Poly, lo: i128) -> bool {
        if p.is_affine() {
            return false;
        }
        p.terms.iter().all(|(m, c)| {
            if m.is_empty() {
                return *c >= lo;
            }
            *c > 0
                && m.iter().all(|a| match a {
                    Atom::Dim(d) => is_id_dim(d),
                    Atom::Param(n) => {
                        self.is_nd_param(n)
                            || self.atom_range(a).is_some_and(|(low, _)| low >= 0)
                                && !self.spec.contains_key(n)
                    }
                    Atom::Div(..) => false,
                })
        })
    }

    /// The integer a [`FloatQuotient`] (the expression `e`) is: its
    /// numerator evaluated (its accesses recorded), under the launch-time
    /// assumption that the numerator's magnitude stays below `2^p` (a
    /// [`super::NoWrap`]); unknown where the numerator is not an affine
    /// value of the NDRange and the scalar arguments, or the divisor not a
    /// constant.
    pub(super) fn quotient_value(&mut self, q: &FloatQuotient, e: &Expr) -> IntVal {
        let num = self.eval_int(q.num);
        let den = match q.den {
            Den::Lit(c) => Some(c),
            Den::Int(d) => self.eval_int(d).single().and_then(Poly::as_const),
        };
        let text = self.text(&e.span);
        let unknown =
            |why: &str| IntVal::unknown(format!("'{text}' at {}: {why}", self.loc(&e.span)));
        let Some(c) = den.filter(|&c| c >= 1 && c < q.exact_below) else {
            return unknown("the divisor is not a positive integer constant");
        };
        let IntVal::Known(pieces) = &num else {
            return num;
        };
        if !pieces.iter().all(|(_, p)| self.of_launch_values(p)) {
            return unknown(
                "the dividend is not an affine value of the NDRange and the scalar arguments",
            );
        }
        let float = if q.exact_below == 1 << 24 {
            "float"
        } else {
            "double"
        };
        for (_, p) in pieces {
            self.assume_no_wrap(super::NoWrap {
                value: p.clone(),
                lo: 1 - q.exact_below,
                hi: q.exact_below - 1,
                above: true,
                what: format!(
                    "'{}' converted to '{float}' is exact, and so is '{text}' ({})",
                    self.text(&q.num.span),
                    self.loc(&e.span)
                ),
            });
        }
        let single = |v: Option<Poly>| v.map(|v| vec![(Cond::True, v)]).ok_or_else(overflow);
        match q.round {
            Round::Ceil => num.lift1(&|p| single(p.add_const(c - 1).and_then(|x| x.floor_div(c)))),
            Round::Floor => num.lift1(&|p| single(p.floor_div(c))),
            // toward zero: C's integer division
            Round::Trunc => num.lift1(&|p| {
                trunc_div(
                    p,
                    c,
                    false,
                    p.syntactically_nonneg(&|a| self.nonneg_atom(a)),
                )
            }),
        }
    }

    /// Whether `p` is affine in the NDRange's values (ids, sizes, offsets)
    /// and the scalar arguments: a value the launch fixes per work-item,
    /// which a launch-time assumption can bound ([`super::NoWrap`]).
    fn of_launch_values(&self, p: &Poly) -> bool {
        affine_in_ids_and(p, |_| true)
    }

    /// A pointer value `v` of type `from` converted to `to`: where their
    /// pointees differ in size, each target counted in the new elements
    /// ([`PtrTarget::cast`]); a target that cannot be makes the pointer's
    /// targets unknown.
    fn cast_pointer(&self, v: Val, from: &Type, to: &Type, span: &Span) -> Val {
        let size = |t: &Type| match t {
            Type::Pointer { pointee, .. } => pointee.size(),
            _ => None,
        };
        let (Val::Ptr(ts), Some(a), Some(b)) = (&v, size(from), size(to)) else {
            return v;
        };
        if a == b {
            return v;
        }
        let cast: Option<Vec<PtrTarget>> = ts
            .iter()
            .map(|t| t.cast(self.buf_elem_sizes.get(&t.buf).copied().unwrap_or(1), b))
            .collect();
        match cast {
            Some(ts) => Val::Ptr(ts),
            None => self.any_buffer(format!(
                "the pointer cast at {} to '{}' is not a whole number of the buffer's elements, or of a part of one",
                self.loc(span),
                to.name()
            )),
        }
    }

    /// Records `nw` (each value and range once).
    fn assume_no_wrap(&self, nw: super::NoWrap) {
        let mut seen = self.no_wrap.borrow_mut();
        if !seen
            .iter()
            .any(|x| x.value == nw.value && x.lo == nw.lo && x.hi == nw.hi && x.above == nw.above)
        {
            seen.push(nw);
        }
    }

    /// The name of the integer scalar argument `p` is, alone (coefficient
    /// 1, no constant), if it is one (not an NDRange value).
    fn scalar_param_alone(&self, p: &Poly) -> Option<String> {
        let (m, c) = p.terms.iter().next()?;
        if p.terms.len() != 1 || *c != 1 || m.len() != 1 {
            return None;
        }
        match &m[0] {
            Atom::Param(n) if !self.is_nd_param(n) && !self.spec.contains_key(n) => Some(n.clone()),
            _ => None,
        }
    }

    fn nonneg_atom(&self, a: &Atom) -> bool {
        match a {
            Atom::Dim(d) => is_id_dim(d),
            Atom::Param(p) => {
                is_ndrange_size(p) || p.starts_with("go") && p.len() == 3 && self.is_nd_param(p)
            }
            Atom::Div(..) => false,
        }
    }

    fn is_nd_param(&self, p: &str) -> bool {
        ["gs", "ls", "go", "ng"]
            .iter()
            .any(|k| (0..3).any(|d| p == nd_name(k, d)))
    }

    fn assign(&mut self, op: Option<BinOp>, l: &Expr, r: &Expr, e: &Expr) -> Val {
        let rv = self.eval(r);
        if let Some(n) = var_name(l) {
            let (nv, from) = match op {
                None => (rv, Some(&r.ty)),
                Some(o) => {
                    let old = self.eval(l);
                    // Computed in the promoted type: exact for `int` and wider
                    // signed (overflow is undefined), wrapped for unsigned.
                    (
                        self.arith(o, old, rv, e),
                        no_ub(&l.ty).or(if is_unsigned(&l.ty) {
                            Some(&l.ty)
                        } else {
                            None
                        }),
                    )
                }
            };
            let nv = self.convert(nv, from, &l.ty, &l.span);
            self.store(n, nv.clone());
            return nv;
        }
        match self.mem_ref(l) {
            Some((ts, partial)) => {
                if op.is_some() || partial {
                    self.record(&ts, AccessKind::Read, 1, l);
                }
                let kind = if partial {
                    AccessKind::MayWrite
                } else {
                    AccessKind::MustWrite
                };
                self.record(&ts, kind, 1, l);
                self.loaded(l)
            }
            None => self.loaded(l),
        }
    }
}

/// Whether `p` is affine (and isl can write it) in the work-item ids and
/// the parameters `param` accepts, and floor divisions of such.
fn affine_in_ids_and(p: &Poly, param: impl Fn(&str) -> bool) -> bool {
    let mut atoms = Vec::new();
    p.atoms(&mut atoms);
    p.is_affine()
        && p.to_isl().is_some()
        && atoms.iter().all(|a| match a {
            Atom::Dim(d) => is_id_dim(d),
            Atom::Param(n) => param(n),
            // its numerator's atoms are in the list too
            Atom::Div(..) => true,
        })
}

/// Whether `d` is a work-item id dimension: a global (`x0`), local (`l1`)
/// or group (`g2`) id.
fn is_id_dim(d: &str) -> bool {
    let (k, rest) = d.split_at(1);
    (k == "x" || k == "l" || k == "g")
        && rest.len() == 1
        && rest.chars().all(|c| c.is_ascii_digit())
}
