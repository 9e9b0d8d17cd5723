//! The guard's walk of one expression ([`Guarder::expr`]): each access of
//! the buffer (a subscript, a dereference, a `vloadN`/`vstoreN`, an atomic,
//! a view's subscript) wrapped in its check; any other use of the pointer
//! recorded as the reason it cannot be guarded.

use coarsen::ir::*;

use super::aliases::chain_offsets;
use super::{Access, Guarder};
use crate::subkernel::edit::Edit;
use crate::subkernel::group;
use crate::subkernel::source_spans::{apart, macro_subscript};

impl<'a> Guarder<'a> {
    /// Visits `e`, an expression used as `access` (an lvalue context for
    /// `Write`/`ReadWrite`).
    pub(super) fn expr(&mut self, e: &Expr, access: Access, depth: u32) {
        if self.failure.is_some() {
            return;
        }
        if matches!(
            &e.kind,
            ExprKind::Index(..) | ExprKind::Unary(UnOp::Deref, _) | ExprKind::Call(..)
        ) && e.span.start < e.span.end
        {
            // the same text met again: one macro argument's expansions
            let key = (e.span.start, e.span.end);
            if self.both.contains(&key) {
                // read by one expansion, written by another: one check of
                // both (the same text, the same element)
                if self.seen.iter().any(|s| (s.0, s.1) == key) {
                    return;
                }
                self.seen.push((key.0, key.1, Access::ReadWrite));
                return self.expr_checked(e, Access::ReadWrite, depth);
            }
            match self.seen.iter().find(|s| (s.0, s.1) == key) {
                Some(s) if s.2 == access => return,
                Some(_) => {
                    self.met_both.push(key);
                    return self.fail(e, "a macro argument both read and written");
                }
                None => self.seen.push((key.0, key.1, access)),
            }
        }
        self.expr_checked(e, access, depth);
    }

    /// [`Guarder::expr`] past the macro-argument bookkeeping.
    fn expr_checked(&mut self, e: &Expr, access: Access, depth: u32) {
        if self.param_step(e, depth) {
            return;
        }
        // a stepped parameter given to a call (a helper, an atomic on its
        // first element, `vloadN`): the offsets there are from its current
        // value, which the checks do not know
        if let ExprKind::Call(_, args) = &e.kind {
            if self.stepped && args.iter().any(|a| self.offset_chain(a).is_some()) {
                return self.fail(e, "the stepped pointer is passed to a call");
            }
        }
        match &e.kind {
            // through a pointer into the buffer, or the stepped parameter
            ExprKind::Index(b, i) if self.alias_use(b).is_some() => {
                let v = self.alias_use(b).expect("matched");
                self.alias_access(e, v, &[&**i], access, depth);
            }
            ExprKind::Unary(UnOp::Deref, x) if self.alias_chain(x).is_some() => {
                let v = self.alias_chain(x).expect("matched");
                self.alias_access(e, v, &chain_offsets(x), access, depth);
            }
            ExprKind::Index(b, i) => {
                if let Some(view) = self.view_use(b) {
                    self.view_access(e, view, i, access, depth);
                } else if let Some(v) = self.param_use(b) {
                    // the whole subscript is one macro's expansion
                    // (`#define SCORE(i, j) score[...]`): guarded at the
                    // expansion site, its address giving the index
                    if b.span == e.span
                        && i.span == e.span
                        && matches!(&b.kind, ExprKind::Var(_))
                        && macro_subscript(self.src, &e.span, self.name)
                    {
                        self.handled.push((v.span.start, v.span.end));
                        self.wrap_expansion(e, i, access, depth);
                        return;
                    }
                    if self.text(&v.span).map(str::trim) != Some(self.name)
                        || self.text(&i.span).is_none()
                        || !apart(&b.span, &i.span)
                    {
                        return self.fail(e, "a subscript inside a macro expansion");
                    }
                    self.handled.push((v.span.start, v.span.end));
                    self.wrap_index(i, access, depth);
                    self.expr(i, Access::Read, depth + 1);
                } else {
                    // `a[i].m[k]`, `m` an array member: the access is to
                    // `a[i]` as the whole subscript uses it
                    match array_member(b) {
                        Some(m) => self.expr(m, access, depth + 1),
                        None => self.expr(b, Access::Read, depth + 1),
                    }
                    self.expr(i, Access::Read, depth + 1);
                }
            }
            ExprKind::Unary(UnOp::Deref, x)
                if self.param_use(x).is_none() && self.offset_chain(x).is_some() =>
            {
                // `*(a + k1 + k2 - k3)`: `a[check((a + k1 + k2 - k3) - a)]`;
                // the pointer difference is the element offset.
                let p = self.offset_chain(x).expect("checked by the guard");
                let (Some(et), Some(_)) = (self.text(&e.span), self.text(&p.span)) else {
                    return self.fail(e, "a dereference inside a macro expansion");
                };
                if !et.starts_with('*') || x.span.start < e.span.start || x.span.end > e.span.end {
                    return self.fail(e, "a dereference inside a macro expansion");
                }
                self.handled.push((p.span.start, p.span.end));
                let c = self.check_call(access, None, group::Index::Chain(x));
                let nm = self.name;
                let (fh, ft) = c.fast_parts();
                self.edits.push(Edit {
                    at: e.span.start as usize,
                    del: 1,
                    text: format!("{nm}[{}(", c.head),
                    order: depth,
                    fast: fh.map(|h| format!("{nm}[{h}(")),
                });
                self.edits.push(Edit {
                    at: e.span.end as usize,
                    del: 0,
                    text: format!(") - {nm}{}]", c.tail),
                    order: 1000 - depth,
                    fast: ft.map(|t| format!(") - {nm}{t}]")),
                });
                self.expr_skipping_param(x, depth + 1);
            }
            ExprKind::Call(f, args)
                if (f.starts_with("atomic_") || f.starts_with("atom_"))
                    && matches!(args.first().map(|a| &a.kind), Some(ExprKind::Unary(UnOp::AddrOf, x)) if matches!(&x.kind, ExprKind::Index(b, _) if self.param_use(b).is_some())) =>
            {
                // `atomic_op(&a[i], ...)` reads and writes element i.
                let Some(ExprKind::Unary(UnOp::AddrOf, x)) = args.first().map(|a| &a.kind) else {
                    return;
                };
                self.expr(x, Access::ReadWrite, depth + 1);
                for a in &args[1..] {
                    self.expr(a, Access::Read, depth + 1);
                }
            }
            ExprKind::Call(f, args)
                if (f.starts_with("atomic_") || f.starts_with("atom_"))
                    && matches!(args.first().map(|a| &a.kind), Some(ExprKind::Var(n)) if n == self.name) =>
            {
                // `atomic_op(a, ...)` reads and writes element 0:
                // `atomic_op(&a[check(0)], ...)`.
                let p = &args[0];
                if self.text(&p.span).map(str::trim) != Some(self.name) {
                    return self.fail(e, "an atomic inside a macro expansion");
                }
                self.handled.push((p.span.start, p.span.end));
                let c = self.check_call(Access::ReadWrite, None, group::Index::Zero);
                let nm = self.name;
                self.edits.push(Edit {
                    at: p.span.start as usize,
                    del: (p.span.end - p.span.start) as usize,
                    text: format!("&{nm}[{}0{}]", c.head, c.tail),
                    order: depth,
                    fast: c.fast.map(|(h, t)| format!("&{nm}[{h}0{t}]")),
                });
                for a in &args[1..] {
                    self.expr(a, Access::Read, depth + 1);
                }
            }
            ExprKind::Unary(UnOp::Deref, x) => {
                let (p, k) = match &x.kind {
                    _ if self.param_use(x).is_some() => (self.param_use(x), None),
                    ExprKind::Binary(BinOp::Add, l, r) if self.param_use(l).is_some() => {
                        (self.param_use(l), Some(&**r))
                    }
                    ExprKind::Binary(BinOp::Add, l, r) if self.param_use(r).is_some() => {
                        (self.param_use(r), Some(&**l))
                    }
                    _ => (None, None),
                };
                let Some(p) = p else {
                    return self.expr(x, Access::Read, depth + 1);
                };
                let (Some(et), Some(_)) = (self.text(&e.span), self.text(&p.span)) else {
                    return self.fail(e, "a dereference inside a macro expansion");
                };
                if !et.starts_with('*') {
                    return self.fail(e, "a dereference inside a macro expansion");
                }
                self.handled.push((p.span.start, p.span.end));
                let nm = self.name;
                match k {
                    None => {
                        // `*a` → `a[check(0)]`
                        let c = self.check_call(access, None, group::Index::Zero);
                        let text = format!("{nm}[{}0{}]", c.head, c.tail);
                        let fast = c.fast.map(|(h, t)| format!("{nm}[{h}0{t}]"));
                        self.edits.push(Edit {
                            at: e.span.start as usize,
                            del: (e.span.end - e.span.start) as usize,
                            text,
                            order: depth,
                            fast,
                        });
                    }
                    Some(k) => {
                        if self.text(&k.span).is_none()
                            || k.span.start < e.span.start
                            || k.span.end > e.span.end
                        {
                            return self.fail(e, "a dereference inside a macro expansion");
                        }
                        // `*(a + k)` → `a[check(k)]`, keeping `k`'s own text (and its edits).
                        let c = self.check_call(access, None, group::Index::Expr(k));
                        let (fh, ft) = c.fast_parts();
                        self.edits.push(Edit {
                            at: e.span.start as usize,
                            del: (k.span.start - e.span.start) as usize,
                            text: format!("{nm}[{}", c.head),
                            order: depth,
                            fast: fh.map(|h| format!("{nm}[{h}")),
                        });
                        self.edits.push(Edit {
                            at: k.span.end as usize,
                            del: (e.span.end - k.span.end) as usize,
                            text: format!("{}]", c.tail),
                            order: 1000 - depth,
                            fast: ft.map(|t| format!("{t}]")),
                        });
                        self.expr(k, Access::Read, depth + 1);
                    }
                }
            }
            ExprKind::Call(f, args)
                if (f.starts_with("vload") || f.starts_with("vstore")) && args.len() >= 2 =>
            {
                let n = f.trim_start_matches("vload").trim_start_matches("vstore");
                let last = args.len() - 1;
                match self.param_use(&args[last]) {
                    Some(p) if n.parse::<u32>().is_ok() => {
                        let o = &args[last - 1];
                        let (Some(ot), Some(pt)) =
                            (self.text(&o.span).map(str::to_string), self.text(&p.span))
                        else {
                            return self.fail(e, "a vector load or store inside a macro expansion");
                        };
                        if pt.trim() != self.name {
                            return self.fail(e, "a vector load or store inside a macro expansion");
                        }
                        if o.span.end > p.span.start {
                            return self.fail(e, "a vector load or store with unexpected operands");
                        }
                        let mut inner = false;
                        visit_expr(o, &mut |x| {
                            inner |= matches!(
                                &x.kind,
                                ExprKind::Index(..)
                                    | ExprKind::Call(..)
                                    | ExprKind::WorkItem(..)
                                    | ExprKind::Unary(UnOp::Deref, _)
                            )
                        });
                        if inner {
                            return self.fail(
                                e,
                                "a vector load or store whose offset holds an access or call",
                            );
                        }
                        self.handled.push((p.span.start, p.span.end));
                        let acc = if f.starts_with("vload") {
                            Access::Read
                        } else {
                            Access::Write
                        };
                        let width: u32 = n.parse().unwrap_or(1);
                        let c = self.check_call(acc, Some(n), group::Index::Scaled(o, width));
                        // vloadN(o, a) → vloadN(0, a + check(N*o))
                        self.edits.push(Edit {
                            at: o.span.start as usize,
                            del: (o.span.end - o.span.start) as usize,
                            text: "0".into(),
                            order: depth,
                            fast: None,
                        });
                        self.edits.push(Edit {
                            at: p.span.end as usize,
                            del: 0,
                            text: format!(" + {}(long){n} * (long)({ot}){}", c.head, c.tail),
                            order: 1000 - depth,
                            fast: c
                                .fast
                                .map(|(h, t)| format!(" + {h}(long){n} * (long)({ot}){t}")),
                        });
                        for a in &args[..last - 1] {
                            self.expr(a, Access::Read, depth + 1);
                        }
                    }
                    _ => {
                        for a in args {
                            self.expr(a, Access::Read, depth + 1);
                        }
                    }
                }
            }
            ExprKind::Assign(op, l, r) => {
                self.expr(
                    l,
                    if op.is_some() {
                        Access::ReadWrite
                    } else {
                        Access::Write
                    },
                    depth + 1,
                );
                self.expr(r, Access::Read, depth + 1);
            }
            ExprKind::Unary(UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec, x) => {
                self.expr(x, Access::ReadWrite, depth + 1)
            }
            ExprKind::Unary(UnOp::AddrOf, x) => {
                // `&a[i]` makes a pointer into the buffer: not checkable per access.
                let names_param = self.param_use(x).is_some()
                    || matches!(&x.kind, ExprKind::Index(b, _) if self.param_use(b).is_some() || self.view_use(b).is_some())
                    || matches!(&x.kind, ExprKind::Unary(UnOp::Deref, p) if self.offset_chain(p).is_some());
                if names_param {
                    return self.fail(e, "its address is taken ('&')");
                }
                self.expr(x, Access::Read, depth + 1)
            }
            // A partial write `a[i].x = v` (vector lane or struct member)
            // writes the element.
            ExprKind::Swizzle(x, _) | ExprKind::Member(x, ..) => self.expr(x, access, depth + 1),
            ExprKind::Var(n) if n == self.name => {
                self.fail(e, "the pointer itself is used (copied, passed or compared)")
            }
            ExprKind::Unary(_, a) | ExprKind::Cast(a) | ExprKind::WorkItem(_, a) => {
                self.expr(a, Access::Read, depth + 1)
            }
            ExprKind::Binary(_, a, b) => {
                self.expr(a, Access::Read, depth + 1);
                self.expr(b, Access::Read, depth + 1);
            }
            ExprKind::Cond(a, b, c) => {
                self.expr(a, Access::Read, depth + 1);
                self.expr(b, access, depth + 1);
                self.expr(c, access, depth + 1);
            }
            ExprKind::Call(f, args) if args.iter().any(|a| self.param_use(a).is_some()) => {
                self.helper_call(e, f, args, depth)
            }
            ExprKind::Call(_, args) | ExprKind::VectorLit(args) => {
                for a in args {
                    self.expr(a, Access::Read, depth + 1);
                }
            }
            ExprKind::IntLit(_)
            | ExprKind::FloatLit(..)
            | ExprKind::Var(_)
            | ExprKind::Unsupported(_) => {}
        }
    }
}

/// The struct member of array type `e` is, through its conversions (the
/// array's decay to a pointer), if it is one.
fn array_member(e: &Expr) -> Option<&Expr> {
    match &e.kind {
        ExprKind::Cast(a) => array_member(a),
        ExprKind::Member(..) if matches!(e.ty, Type::Array { .. }) => Some(e),
        _ => None,
    }
}
