//! The accesses an expression makes to buffer arguments: the targets of a
//! memory lvalue (`p[i]`, `*p`, `p[i].x`), each access recorded as a
//! [`Rec`] (its subscript counted in strided iterations), and buffers that
//! escape into something unknown.

use crate::eval::domain::{is_int, offset_targets, IntVal, PtrTarget, Rec, Val};
use crate::eval::Walker;
use crate::poly::{Cond, Poly, Why, WhyKind};
use crate::AccessKind;
use coarsen::ir::{Expr, ExprKind, Type, UnOp};

/// A recorded access's element index by piece, or why it is unknown.
type Subscript = Result<Vec<(Cond, Poly)>, Why>;

impl<'a> Walker<'a> {
    /// The value read from memory by `e`.
    pub(super) fn loaded(&self, e: &Expr) -> Val {
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
    pub(super) fn mem_ref(&mut self, e: &Expr) -> Option<(Vec<PtrTarget>, bool)> {
        // through a pointer to parts of the buffer's elements, an access
        // covers part of an element
        self.mem_ref_raw(e).map(|(ts, partial)| {
            let part = partial || ts.iter().any(PtrTarget::partial);
            (ts, part)
        })
    }

    fn mem_ref_raw(&mut self, e: &Expr) -> Option<(Vec<PtrTarget>, bool)> {
        match &e.kind {
            // `p[i].m[k]`, `m` an array member: part of element `i`
            // (an index past the member's array is undefined in C)
            ExprKind::Index(base, idx) if array_member(base).is_some() => {
                self.eval_int(idx);
                let m = array_member(base).expect("matched");
                self.mem_ref_raw(m).map(|(t, _)| (t, true))
            }
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

    pub(in crate::eval) fn record(
        &mut self,
        targets: &[PtrTarget],
        kind: AccessKind,
        lanes: u32,
        e: &Expr,
    ) {
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
                atomic: self.in_atomic,
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
    pub(in crate::eval) fn escape(&mut self, targets: &[PtrTarget], what: &str, e: &Expr) {
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
                    atomic: false,
                });
            }
        }
    }
}

/// The struct member of array type `e` is, through its conversions (the
/// array's decay to a pointer), if it is one.
pub(super) fn array_member(e: &Expr) -> Option<&Expr> {
    match &e.kind {
        ExprKind::Cast(a) => array_member(a),
        ExprKind::Member(..) if matches!(e.ty, Type::Array { .. }) => Some(e),
        _ => None,
    }
}
