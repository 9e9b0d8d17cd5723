//! The interval of an expression over the work-group ([`GroupCheck::iv`]):
//! literals, work-item builtins, scalar arguments, single-assignment locals
//! and loop counters ([`Fact`]), narrowed by the comparisons known to hold,
//! combined by the arithmetic the test models.

use coarsen::ir::*;

use super::facts::Fact;
use super::{param_through_casts, GroupCheck, Iv, FAST};

impl<'a> GroupCheck<'a> {
    /// The interval of `e` over the work-group; `ptr` counts as 0 (pointer
    /// chains). `None` when the expression is outside what the test models.
    pub(super) fn iv(&mut self, e: &Expr, ptr: Option<&str>) -> Option<Iv> {
        if let Some(p) = ptr {
            if param_through_casts(e, p).is_some() {
                return Some(Iv::point("0L".into()));
            }
            if matches!(e.ty, Type::Pointer { .. }) {
                return match &e.kind {
                    ExprKind::Binary(BinOp::Add, l, r) => {
                        let (pl, il) = if matches!(l.ty, Type::Pointer { .. }) {
                            (l, r)
                        } else {
                            (r, l)
                        };
                        let a = self.iv(pl, ptr)?;
                        let b = self.iv(il, None)?;
                        Some(self.add(&a, &b))
                    }
                    ExprKind::Binary(BinOp::Sub, l, r) if !matches!(r.ty, Type::Pointer { .. }) => {
                        let a = self.iv(l, ptr)?;
                        let b = self.iv(r, None)?;
                        Some(self.sub(&a, &b))
                    }
                    _ => None,
                };
            }
        }
        let out = match &e.kind {
            ExprKind::IntLit(v) => {
                if v.unsigned_abs() >= 1u128 << 62 {
                    return None;
                }
                Iv::point(format!("{v}L"))
            }
            ExprKind::Var(n) => self.var(n)?,
            ExprKind::Cast(x) => {
                if !x.ty.is_integer() {
                    return None;
                }
                self.iv(x, None)?
            }
            ExprKind::WorkItem(w, d) => {
                let d = d.const_int().filter(|d| (0..3).contains(d))? as u32;
                self.work_item(*w, d)
            }
            ExprKind::Unary(UnOp::Plus, x) => self.iv(x, None)?,
            ExprKind::Unary(UnOp::Neg, x) => {
                let a = self.iv(x, None)?;
                self.sub(&Iv::point("0L".into()), &a)
            }
            ExprKind::Unary(UnOp::Not, _) => Iv {
                lo: "0L".into(),
                hi: "1L".into(),
            },
            ExprKind::Binary(op, l, r) => {
                use BinOp::*;
                if matches!(op, Lt | Gt | Le | Ge | Eq | Ne | LogAnd | LogOr) {
                    Iv {
                        lo: "0L".into(),
                        hi: "1L".into(),
                    }
                } else {
                    let a = self.iv(l, None)?;
                    let b = self.iv(r, None)?;
                    // the operands as the operation sees them
                    if !self.fits(&a, &e.ty) || !self.fits(&b, &e.ty) {
                        return None;
                    }
                    match op {
                        Add => self.add(&a, &b),
                        Sub => self.sub(&a, &b),
                        Mul => self.mul(&a, &b)?,
                        Div => {
                            self.require(format!("({} >= 1L)", b.lo));
                            self.corners(
                                &a,
                                &b,
                                |x, y| if y >= 1 { x.checked_div(y) } else { None },
                                &|x, y| format!("({x} / {y})"),
                            )
                        }
                        Rem => {
                            self.require(format!("({} >= 1L)", b.lo));
                            let lo = self
                                .tmp(format!("({0} >= 0L ? 0L : max({0}, 1L - {1}))", a.lo, b.hi));
                            let hi = self
                                .tmp(format!("({0} <= 0L ? 0L : min({0}, {1} - 1L))", a.hi, b.hi));
                            Iv { lo, hi }
                        }
                        Shl | Shr => {
                            let bits = (e.ty.size()? * 8).min(62);
                            self.require(format!("({} >= 0L) & ({} < {bits}L)", b.lo, b.hi));
                            if *op == Shl {
                                self.corners(
                                    &a,
                                    &b,
                                    |x, y| {
                                        if (0..62).contains(&y) {
                                            x.checked_mul(1 << y)
                                        } else {
                                            None
                                        }
                                    },
                                    &|x, y| format!("__clpart_gmul({x}, 1L << {y}, &{FAST})"),
                                )
                            } else {
                                self.corners(
                                    &a,
                                    &b,
                                    |x, y| {
                                        if (0..62).contains(&y) {
                                            Some(x >> y)
                                        } else {
                                            None
                                        }
                                    },
                                    &|x, y| format!("({x} >> {y})"),
                                )
                            }
                        }
                        BitAnd => {
                            // with a non-negative side, the result lies in [0, that side]
                            let lo = "0L".to_string();
                            let hi = self.tmp(format!(
                                "({0} >= 0L && {1} >= 0L) ? min({2}, {3}) : {0} >= 0L ? {2} : {3}",
                                a.lo, b.lo, a.hi, b.hi
                            ));
                            self.require(format!("(({} >= 0L) | ({} >= 0L))", a.lo, b.lo));
                            Iv { lo, hi }
                        }
                        _ => return None,
                    }
                }
            }
            ExprKind::Cond(_, t, f) => {
                let a = self.iv(t, None)?;
                let b = self.iv(f, None)?;
                let lo = self.tmp(format!("min({}, {})", a.lo, b.lo));
                let hi = self.tmp(format!("max({}, {})", a.hi, b.hi));
                Iv { lo, hi }
            }
            ExprKind::Call(f, args) => self.call(f, args, &e.ty)?,
            _ => return None,
        };
        if !self.fits(&out, &e.ty) {
            return None;
        }
        Some(out)
    }

    fn call(&mut self, f: &str, args: &[Expr], ty: &Type) -> Option<Iv> {
        if !ty.is_integer() {
            return None;
        }
        let ivs: Vec<Iv> = args
            .iter()
            .map(|a| self.iv(a, None))
            .collect::<Option<_>>()?;
        for a in &ivs {
            if !self.fits(a, ty) {
                return None;
            }
        }
        Some(match (f, ivs.as_slice()) {
            ("min", [a, b]) => {
                let lo = self.tmp(format!("min({}, {})", a.lo, b.lo));
                let hi = self.tmp(format!("min({}, {})", a.hi, b.hi));
                Iv { lo, hi }
            }
            ("max", [a, b]) => {
                let lo = self.tmp(format!("max({}, {})", a.lo, b.lo));
                let hi = self.tmp(format!("max({}, {})", a.hi, b.hi));
                Iv { lo, hi }
            }
            ("clamp", [x, a, b]) => {
                // defined only for a <= b
                self.require(format!("({} <= {})", a.hi, b.lo));
                let lo = self.tmp(format!("min(max({}, {}), {})", x.lo, a.lo, b.lo));
                let hi = self.tmp(format!("min(max({}, {}), {})", x.hi, a.hi, b.hi));
                Iv { lo, hi }
            }
            ("mul24" | "mad24", [a, b, rest @ ..]) if rest.len() == usize::from(f == "mad24") => {
                // exact only for 24-bit operands
                let (m, n) = if matches!(ty, Type::Scalar(s) if s.is_signed()) {
                    (-(1i64 << 23), (1i64 << 23) - 1)
                } else {
                    (0, (1i64 << 24) - 1)
                };
                for x in [a, b] {
                    self.require(format!("({} >= {m}L) & ({} <= {n}L)", x.lo, x.hi));
                }
                let p = self.mul(a, b)?;
                match rest.first() {
                    Some(c) => self.add(&p, c),
                    None => p,
                }
            }
            _ => return None,
        })
    }

    fn work_item(&mut self, w: WorkItemFn, d: u32) -> Iv {
        match w {
            WorkItemFn::GlobalId => {
                let lo = self.tmp(format!(
                    "(long)get_global_id({d}) - (long)get_local_id({d})"
                ));
                let hi = self.tmp(format!("{lo} + (long)get_local_size({d}) - 1L"));
                Iv { lo, hi }
            }
            WorkItemFn::LocalId => Iv {
                lo: "0L".into(),
                hi: format!("((long)get_local_size({d}) - 1L)"),
            },
            WorkItemFn::LocalSize => Iv::point(format!("(long)get_local_size({d})")),
            WorkItemFn::WorkDim => Iv::point("(long)get_work_dim()".into()),
            // the rewritten builtins: the unsplit NDRange's values (see `rewrite`)
            _ if self.macro_use => Iv::point(format!("(long){}({d})", w.name())),
            WorkItemFn::GroupId => Iv::point(format!(
                "((long)get_group_id({d}) + __clpart_group_base{d})"
            )),
            WorkItemFn::GlobalSize => Iv::point(format!("__clpart_global_size{d}")),
            WorkItemFn::NumGroups => Iv::point(format!("__clpart_num_groups{d}")),
            WorkItemFn::GlobalOffset => Iv::point(format!("__clpart_global_offset{d}")),
        }
    }

    pub(super) fn var(&mut self, n: &str) -> Option<Iv> {
        let key = format!("{}|{n}", self.ctx);
        if let Some(iv) = self.memo.get(&key) {
            return Some(iv.clone());
        }
        if self.busy.iter().any(|b| b == n) {
            return None;
        }
        let fact = *self.facts.get(n)?;
        self.busy.push(n.to_string());
        let iv = match fact {
            // one value: nothing to narrow
            Fact::Uniform(_) => self.fact(n, fact),
            _ => self.fact(n, fact).and_then(|iv| self.refine(n, iv)),
        };
        self.busy.pop();
        let iv = iv?;
        self.memo.insert(key, iv.clone());
        Some(iv)
    }

    /// Narrows `n`'s interval by the comparisons known to hold. Each holds
    /// at the access: its variables never change while it is in force
    /// (arguments and single-assignment locals never change; a loop counter
    /// changes only at its loop's step, outside any condition tested in
    /// its body).
    fn refine(&mut self, n: &str, mut iv: Iv) -> Option<Iv> {
        let known: Vec<(BinOp, Expr)> = self
            .known
            .iter()
            .filter(|(v, ..)| v == n)
            .map(|(_, op, e)| (*op, e.clone()))
            .collect();
        for (op, e) in known {
            // the comparison's operands are converted to its type: both
            // must keep their values
            let Some(b) = self.iv(&e, None) else { continue };
            let cmp_ty = e.ty.clone();
            if !self.fits(&iv, &cmp_ty) {
                continue;
            }
            use BinOp::*;
            let one = Iv::point("1L".into());
            let (lo, hi) = match op {
                Lt => (None, Some(self.sub(&Iv::point(b.hi.clone()), &one).lo)),
                Le => (None, Some(b.hi.clone())),
                Gt => (Some(self.add(&Iv::point(b.lo.clone()), &one).lo), None),
                Ge => (Some(b.lo.clone()), None),
                Eq => (Some(b.lo.clone()), Some(b.hi.clone())),
                _ => continue,
            };
            if let Some(l) = lo {
                iv.lo = self.tmp(format!("max({}, {l})", iv.lo));
            }
            if let Some(h) = hi {
                iv.hi = self.tmp(format!("min({}, {h})", iv.hi));
            }
        }
        Some(iv)
    }

    fn fact(&mut self, n: &str, fact: Fact<'_>) -> Option<Iv> {
        match fact {
            Fact::Uniform(ty) => {
                let iv = Iv::point(format!("(long){n}"));
                // an unsigned long argument above LONG_MAX does not fit
                self.fits(&iv, ty).then_some(iv)
            }
            Fact::Def(init, ty) => {
                let iv = self.iv(init, None)?;
                self.fits(&iv, ty).then_some(iv)
            }
            Fact::Loop(l, ty) => {
                let init = self.iv(l.init, None)?;
                let bound = self.iv(l.bound, None)?;
                let step = match l.step {
                    Some(s) => self.iv(s, None)?,
                    None => Iv::point("1L".into()),
                };
                self.require(format!("({} >= 1L)", step.lo));
                use BinOp::*;
                // the counter's values in the body, and the furthest value
                // it takes (after the last step): no wrap-around allowed
                let (lo, hi) = match (l.up, l.op) {
                    (true, Lt) => (
                        init.lo.clone(),
                        self.tmp(format!("__clpart_gsub({}, 1L, &{FAST})", bound.hi)),
                    ),
                    (true, Le) => (init.lo.clone(), bound.hi.clone()),
                    (false, Gt) => (
                        self.tmp(format!("__clpart_gadd({}, 1L, &{FAST})", bound.lo)),
                        init.hi.clone(),
                    ),
                    (false, Ge) => (bound.lo.clone(), init.hi.clone()),
                    _ => return None,
                };
                let reach = if l.up {
                    let top = self.tmp(format!("max({}, {})", init.hi, hi));
                    let t = self.tmp(format!("__clpart_gadd({top}, {}, &{FAST})", step.hi));
                    Iv {
                        lo: init.lo.clone(),
                        hi: t,
                    }
                } else {
                    let bottom = self.tmp(format!("min({}, {})", init.lo, lo));
                    let t = self.tmp(format!("__clpart_gsub({bottom}, {}, &{FAST})", step.hi));
                    Iv {
                        lo: t,
                        hi: init.hi.clone(),
                    }
                };
                // every value the counter takes (up to one step past the
                // bound) fits its type and the comparison's type
                if !self.fits(&reach, ty)
                    || !self.fits(&reach, l.cmp_ty)
                    || !self.fits(&bound, l.cmp_ty)
                {
                    return None;
                }
                Some(Iv { lo, hi })
            }
        }
    }
}
