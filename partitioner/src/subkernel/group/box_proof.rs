//! The box part of an access's per-work-group test ([`GroupCheck::box_test`]):
//! an access of a boxed array is proven only when its subscript splits, by
//! the extents, into components each inside `[0, E_k)` and the box (and a
//! read part), without a division.

use coarsen::ir::*;

use super::facts::Fact;
use super::{
    is_var, lit, lit_text, param_through_casts, strip_casts, GroupBox, GroupCheck, Index, Iv,
    Window, FAST,
};

/// One term of a subscript split into a sum of products (see
/// [`GroupCheck::box_proof`]): `±` the product of `factors` (1 when empty).
#[derive(Clone)]
struct Term {
    neg: bool,
    factors: Vec<Expr>,
}

impl<'a> GroupCheck<'a> {
    /// The box part of an access's test, once its window is
    /// proven (so that the subscript is computed exactly, without
    /// wrap-around, and is not negative). With the box check on (nonzero
    /// strides), an access is proven only when its subscript splits, from
    /// the innermost dimension out, as
    /// `C_m + E_m * (C_{m-1} + E_{m-1} * (... + E_1 * Q))` with each `E_k`
    /// the scalar argument that is dimension `k`'s extent (over literal
    /// strides, the integer literal that is the strides' ratio, the launch's
    /// extent argument required to equal it) and
    /// `0 <= C_k < E_k`: then `C_k` is the component the
    /// checked copy computes as `(i / stride_k) % extent_k`, and each must lie
    /// in the box. Every other access of a boxed array leaves the fast copy
    /// to launches that check no box. No division.
    ///
    /// With read parts, the access must also lie inside one part for the
    /// whole group: its rebased interval `sub` inside the part's linear
    /// window and each `C_k` inside the part's bounds (then every element
    /// it takes has its components inside the part, dimension 0 included,
    /// as the linear window bounds the outermost component once the others
    /// are bounded).
    pub(super) fn box_test(
        &mut self,
        index: &Index<'_>,
        w: &Window<'_>,
        b: &GroupBox,
        sub: (&str, &str),
    ) {
        let off = b
            .strides
            .iter()
            .map(|st| format!("({st} == 0)"))
            .collect::<Vec<_>>()
            .join(" & ");
        let off = if b.strides.len() > 1 {
            format!("({off})")
        } else if b.strides.is_empty() {
            // the read runs of a 1-D array: off when part 0 is empty
            b.parts
                .first()
                .map_or("1".to_string(), |((_, hi), _)| format!("({hi} == 0)"))
        } else {
            off
        };
        let (code_len, next, memo) = (self.code.len(), self.next, self.memo.clone());
        match self.box_proof(index, w, b, sub) {
            Some(p) => self
                .code
                .push_str(&format!("    {FAST} &= {off} | ({p});\n")),
            None => {
                self.code.truncate(code_len);
                self.next = next;
                self.memo = memo;
                self.code.push_str(&format!("    {FAST} &= {off};\n"));
            }
        }
    }

    /// The condition that proves an access inside its box (see
    /// [`Self::box_test`]); `None` when the subscript does not split.
    fn box_proof(
        &mut self,
        index: &Index<'_>,
        w: &Window<'_>,
        b: &GroupBox,
        sub: (&str, &str),
    ) -> Option<String> {
        let names = b.extent_names.as_ref()?;
        let m = names.len();
        if m == 0
            || b.strides.len() != m
            || b.extents.len() != m
            || b.bounds.len() != m
            || b.parts.iter().any(|(_, dims)| dims.len() != m)
        {
            return None;
        }
        if !names.iter().all(|n| {
            literal_extent(n).is_some()
                || matches!(self.facts.get(n.as_str()), Some(Fact::Uniform(_)))
        }) {
            return None;
        }
        let mut sum: Vec<Term> = Vec::new();
        match index {
            Index::Expr(e) => self.terms(e, None, names, false, &mut sum, 0)?,
            Index::Chain(e) => self.terms(e, Some(w.ptr), names, false, &mut sum, 0)?,
            Index::Zero => {}
            Index::Scaled(..) => return None,
        }
        // the launch's strides nest: stride_k = stride_{k+1} * extent_{k+1}
        let mut parts = vec![format!("({} == 1L)", b.strides[m - 1])];
        for k in 0..m - 1 {
            let p = self.tmp(format!(
                "__clpart_gmul({}, {}, &{FAST})",
                b.strides[k + 1],
                b.extents[k + 1]
            ));
            parts.push(format!("({} == {p})", b.strides[k]));
        }
        // per part, the conditions that put the access inside it
        let mut in_part: Vec<Vec<String>> = b
            .parts
            .iter()
            .map(|((plo, phi), _)| {
                vec![
                    format!("({} >= {plo})", sub.0),
                    format!("({} <= {phi} - {})", sub.1, w.n),
                ]
            })
            .collect();
        for k in (0..m).rev() {
            let ev = match literal_extent(&names[k]) {
                Some(e) => Iv::point(lit_text(e)),
                None => self.var(&names[k])?,
            };
            if !ev.is_point() {
                return None;
            }
            parts.push(format!("({} == {})", ev.lo, b.extents[k]));
            let (quotient, rest, fixed) = self.divide(sum, &names[k])?;
            // a specialized argument read as its value: the launch's
            // value must be it
            for (n, v) in fixed {
                parts.push(format!("((long){n} == {v}L)"));
            }
            let c = self.sum_iv(&rest)?;
            // the vector's elements after the first lie in the innermost dimension
            let last = if k == m - 1 && w.n > 1 {
                self.tmp(format!("__clpart_gadd({}, {}L, &{FAST})", c.hi, w.n - 1))
            } else {
                c.hi.clone()
            };
            match lit(&c.lo) {
                Some(v) if v >= 0 => {}
                Some(_) => return None,
                None => parts.push(format!("({} >= 0L)", c.lo)),
            }
            parts.push(format!("({last} < {})", ev.lo));
            for (lo, hi) in &b.bounds[k] {
                parts.push(format!("({} >= {lo})", c.lo));
                parts.push(format!("({last} <= {hi})"));
            }
            for (conds, (_, dims)) in in_part.iter_mut().zip(&b.parts) {
                let (lo, hi) = &dims[k];
                conds.push(format!("({} >= {lo})", c.lo));
                conds.push(format!("({last} <= {hi})"));
            }
            sum = quotient;
        }
        if !in_part.is_empty() {
            let any = in_part
                .iter()
                .map(|c| format!("({})", c.join(" & ")))
                .collect::<Vec<_>>()
                .join(" | ");
            parts.push(format!("({any})"));
        }
        Some(parts.join(" & "))
    }

    /// The interval of a sum of products.
    fn sum_iv(&mut self, terms: &[Term]) -> Option<Iv> {
        let mut acc: Option<Iv> = None;
        for t in terms {
            let mut p: Option<Iv> = None;
            for f in &t.factors {
                let iv = self.iv(f, None)?;
                p = Some(match p {
                    None => iv,
                    Some(p) => self.mul(&p, &iv)?,
                });
            }
            let p = p.unwrap_or_else(|| Iv::point("1L".into()));
            acc = Some(match (acc, t.neg) {
                (None, false) => p,
                (None, true) => self.sub(&Iv::point("0L".into()), &p),
                (Some(a), false) => self.add(&a, &p),
                (Some(a), true) => self.sub(&a, &p),
            });
        }
        Some(acc.unwrap_or_else(|| Iv::point("0L".into())))
    }

    /// Splits a sum of products into the quotients of its multiples of
    /// `name` (one factor `name` removed) and the other terms; a factor that
    /// is a sum mentioning `name` is distributed first. `None` past a size
    /// limit. Over a literal extent (literal strides, or strides the
    /// analysis specialized), a factor that is a specialized argument counts
    /// as its value; the third list names those used, with their values.
    #[allow(clippy::type_complexity)]
    fn divide(
        &self,
        terms: Vec<Term>,
        name: &str,
    ) -> Option<(Vec<Term>, Vec<Term>, Vec<(String, i64)>)> {
        if let Some(e) = literal_extent(name) {
            return Some(self.divide_literal(terms, e));
        }
        let mut work = terms;
        let (mut quotient, mut rest) = (Vec::new(), Vec::new());
        let mut steps = 0;
        while let Some(mut t) = work.pop() {
            steps += 1;
            if steps > 256 {
                return None;
            }
            if let Some(at) = t.factors.iter().position(|f| is_var(f, name)) {
                t.factors.remove(at);
                quotient.push(t);
            } else if let Some(at) = t
                .factors
                .iter()
                .position(|f| self.is_sum(f) && self.mentions_deep(f, name, 0))
            {
                let f = t.factors.remove(at);
                let mut parts = Vec::new();
                self.terms(&f, None, &[name.to_string()], false, &mut parts, 0)?;
                for p in parts {
                    let mut factors = p.factors;
                    factors.extend(t.factors.iter().cloned());
                    work.push(Term {
                        neg: t.neg ^ p.neg,
                        factors,
                    });
                }
            } else {
                rest.push(t);
            }
        }
        Some((quotient, rest, Vec::new()))
    }

    /// The literal value of a factor: an integer literal, or an integer
    /// scalar argument never assigned that the analysis specialized (with
    /// its name).
    fn literal_factor(&self, f: &Expr) -> Option<(i128, Option<String>)> {
        match &strip_casts(f).kind {
            ExprKind::IntLit(v) => Some((*v, None)),
            ExprKind::Var(n) if matches!(self.facts.get(n.as_str()), Some(Fact::Uniform(_))) => {
                let v = *self.specialized.get(n)?;
                Some((i128::from(v), Some(n.clone())))
            }
            _ => None,
        }
    }

    /// Splits a sum of products into the quotients of its terms with a
    /// literal factor ([`Self::literal_factor`]) that is a multiple of `e`
    /// (that factor divided by `e`) and the other terms; with the
    /// specialized arguments so read.
    fn divide_literal(
        &self,
        terms: Vec<Term>,
        e: i64,
    ) -> (Vec<Term>, Vec<Term>, Vec<(String, i64)>) {
        let (mut quotient, mut rest, mut fixed) = (Vec::new(), Vec::new(), Vec::new());
        for mut t in terms {
            let at = t.factors.iter().enumerate().find_map(|(i, f)| {
                let (v, n) = self.literal_factor(f)?;
                (v % i128::from(e) == 0).then_some((i, v, n))
            });
            match at {
                Some((at, v, n)) => {
                    let q = v / i128::from(e);
                    if let Some(n) = n {
                        if !fixed.iter().any(|(m, _)| *m == n) {
                            fixed.push((n, v as i64));
                        }
                    }
                    if q == 1 {
                        t.factors.remove(at);
                    } else {
                        let f = strip_casts(&t.factors[at]).clone();
                        t.factors[at] = Expr {
                            kind: ExprKind::IntLit(q),
                            ..f
                        };
                    }
                    quotient.push(t);
                }
                None => rest.push(t),
            }
        }
        (quotient, rest, fixed)
    }

    /// `e` is a sum (or a local standing for one) that [`Self::terms`] splits.
    fn is_sum(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Cast(x) if e.ty.is_integer() && x.ty.is_integer() => self.is_sum(x),
            ExprKind::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul, ..)
            | ExprKind::Unary(UnOp::Plus | UnOp::Neg, _) => true,
            ExprKind::Var(n) => matches!(self.facts.get(n.as_str()), Some(Fact::Def(..))),
            _ => false,
        }
    }

    /// `e` mentions `name`, through the initializers of single-assignment
    /// locals.
    fn mentions_deep(&self, e: &Expr, name: &str, depth: u32) -> bool {
        if depth > 8 {
            return false;
        }
        let mut found = false;
        visit_expr(e, &mut |x| {
            if let ExprKind::Var(v) = &x.kind {
                found |= v == name
                    || matches!(self.facts.get(v.as_str()), Some(Fact::Def(init, _)) if self.mentions_deep(init, name, depth + 1));
            }
        });
        found
    }

    /// The sum `e` (negated with `neg`) as terms, each a product of factors;
    /// pointer `ptr` counts as 0 (pointer chains) and a local assigned only by
    /// its declaration whose initializer mentions one of `names` stands for
    /// it. Conversions between integer types are looked through: the
    /// access's window test has proven that no sub-expression changes value
    /// in them (the subscript is computed exactly), so the terms sum to it.
    fn terms(
        &self,
        e: &Expr,
        ptr: Option<&str>,
        names: &[String],
        neg: bool,
        out: &mut Vec<Term>,
        depth: u32,
    ) -> Option<()> {
        if depth > 32 || out.len() > 64 {
            return None;
        }
        if let Some(p) = ptr {
            if param_through_casts(e, p).is_some() {
                return Some(());
            }
        }
        let pointer = matches!(e.ty, Type::Pointer { .. });
        match &e.kind {
            ExprKind::Cast(x) if e.ty.is_integer() && x.ty.is_integer() => {
                self.terms(x, ptr, names, neg, out, depth + 1)
            }
            ExprKind::Binary(BinOp::Add, l, r) => {
                self.terms(l, ptr, names, neg, out, depth + 1)?;
                self.terms(r, ptr, names, neg, out, depth + 1)
            }
            ExprKind::Binary(BinOp::Sub, l, r) if !matches!(r.ty, Type::Pointer { .. }) => {
                self.terms(l, ptr, names, neg, out, depth + 1)?;
                self.terms(r, ptr, names, !neg, out, depth + 1)
            }
            ExprKind::Unary(UnOp::Plus, x) => self.terms(x, ptr, names, neg, out, depth + 1),
            ExprKind::Unary(UnOp::Neg, x) => self.terms(x, ptr, names, !neg, out, depth + 1),
            _ if pointer => None,
            ExprKind::Var(n) => match self.facts.get(n.as_str()) {
                // looked through only when it holds a multiple (otherwise
                // its own interval, narrowed by the conditions, is tighter)
                Some(Fact::Def(init, _))
                    if names.iter().any(|m| self.mentions_deep(init, m, 0)) =>
                {
                    self.terms(init, None, names, neg, out, depth + 1)
                }
                _ => {
                    out.push(Term {
                        neg,
                        factors: vec![e.clone()],
                    });
                    Some(())
                }
            },
            ExprKind::Binary(BinOp::Mul, ..) => {
                let mut t = Term {
                    neg,
                    factors: Vec::new(),
                };
                flatten_product(e, &mut t);
                out.push(t);
                Some(())
            }
            _ => {
                out.push(Term {
                    neg,
                    factors: vec![e.clone()],
                });
                Some(())
            }
        }
    }
}

/// An extent that is an integer literal (literal strides, `a[y*1000 + x]`:
/// `"1000"`), at least 1.
fn literal_extent(name: &str) -> Option<i64> {
    name.parse().ok().filter(|&e: &i64| e >= 1)
}

/// The factors of a product (through integer conversions; a negation
/// flips the term's sign).
fn flatten_product(e: &Expr, t: &mut Term) {
    match &e.kind {
        ExprKind::Cast(x) if e.ty.is_integer() && x.ty.is_integer() => flatten_product(x, t),
        ExprKind::Unary(UnOp::Neg, x) => {
            t.neg = !t.neg;
            flatten_product(x, t)
        }
        ExprKind::Unary(UnOp::Plus, x) => flatten_product(x, t),
        ExprKind::Binary(BinOp::Mul, l, r) => {
            flatten_product(l, t);
            flatten_product(r, t)
        }
        _ => t.factors.push(e.clone()),
    }
}
