//! Expressions: conditions, integer and pointer values, the accesses to
//! buffer arguments they make (recorded as [`Rec`](super::Rec)s), assignments, and the
//! C integer conversions (interval bounds of a value, wrapping as a
//! quasi-affine remainder).
//!
//! This file holds the evaluation itself (conditions, values, operators,
//! assignments); its submodules the rest: `access` (the accesses a memory
//! lvalue makes, recorded), `conversion` (the C integer and pointer
//! conversions, wrapping under launch-time assumptions), `bounds` (interval
//! bounds of a value), `quotient` (integer quotients computed in floating
//! point, `ceil((float)n / 16)`).

mod access;
mod bounds;
mod conversion;
mod quotient;

use super::domain::{
    add_int, cmp, is_buffer_ptr, is_int, is_unsigned, no_ub, offset_targets, overflow, trunc_div,
    IntVal, Val,
};
use super::Walker;
use crate::poly::{Cond, Poly, Why};
use crate::AccessKind;
use coarsen::ir::{BinOp, Expr, ExprKind, Scalar, Type, UnOp};
use quotient::{comparison_rounding, float_division, float_quotient, int_operand, Round};

/// Strips casts around an expression.
pub(super) fn strip(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Cast(a) => strip(a),
        _ => e,
    }
}

pub(super) fn var_name(e: &Expr) -> Option<&str> {
    match &strip(e).kind {
        ExprKind::Var(n) => Some(n),
        _ => None,
    }
}

impl<'a> Walker<'a> {
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
            // an array member used as a pointer (not subscripted, which
            // `mem_ref` follows): into a buffer, a pointer the analysis
            // does not follow; of a private or local struct, no buffer's
            ExprKind::Member(..) if matches!(e.ty, Type::Array { .. }) => match self.mem_ref(e) {
                Some(_) => self.any_buffer(format!(
                    "the array member '{}' ({}) is used as a pointer",
                    self.text(&e.span),
                    self.loc(&e.span)
                )),
                None => Val::Other,
            },
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
