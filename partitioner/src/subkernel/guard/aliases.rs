//! Local pointers into the parameter's buffer at an offset (`__global
//! const float *row = a + r * n;`, or `= &a[r * n]`): declared once, never
//! assigned, stepped or addressed afterwards, of the parameter's element
//! type. An access through one (`row[j]`, `*row`, `*(row + k)`) is guarded
//! as `a[check(&(ACCESS) - a)]`: its address, less the parameter, is the
//! element's index in the buffer whatever the offset's variables became
//! since, and the access itself only takes an address. Any other use of
//! such a pointer (passed, compared, copied) refuses the guard.
//!
//! The parameter itself stepped (`A += c;` then `A += lda` in a loop, as
//! tiled kernels write it) is guarded the same way against its value at
//! the kernel's start, which the prologue keeps
//! (`__clpart_orig_A`): each access `ORIG[check(&(ACCESS) - ORIG)]`, each
//! step left as written.

use coarsen::ir::*;

use super::{Access, Guarder};
use crate::subkernel::declarations::decls;
use crate::subkernel::group;

impl<'a> Guarder<'a> {
    /// The aliases of the parameter in `body` (see the module doc).
    pub(super) fn find_aliases(&self, body: &[Stmt]) -> Vec<String> {
        let mut all = Vec::new();
        decls(body, &mut all);
        all.iter()
            .filter(|d| {
                let (Some(init), Type::Pointer { pointee, space, .. }) = (&d.init, &d.ty) else {
                    return false;
                };
                matches!(space, AddrSpace::Global | AddrSpace::Constant)
                    && Some(pointee.name()) == self.pointee
                    && self.alias_init(init).is_some()
                    && self.param_use(init).is_none()
                    && self.fixed_local(&all, d, body)
            })
            .map(|d| d.name.clone())
            .collect()
    }

    /// The parameter's use in an alias's initializer: an offset chain of
    /// it (`a + r * n`), or the address of one of its elements (`&a[k]`).
    pub(super) fn alias_init<'e>(&self, e: &'e Expr) -> Option<&'e Expr> {
        match &e.kind {
            ExprKind::Unary(UnOp::AddrOf, x) => match &x.kind {
                ExprKind::Index(b, _) => self.param_use(b),
                _ => None,
            },
            ExprKind::Cast(inner) if self.param_use(e).is_none() => self
                .alias_init(inner)
                .filter(|_| matches!(&e.ty, Type::Pointer { pointee, .. } if Some(pointee.name()) == self.pointee)),
            _ => self.offset_chain(e),
        }
    }

    /// An alias's declaration: the parameter's use is no access; what the
    /// offset reads is visited.
    pub(super) fn alias_decl(&mut self, init: &Expr, depth: u32) {
        let Some(p) = self.alias_init(init) else {
            return;
        };
        self.handled.push((p.span.start, p.span.end));
        match &init.kind {
            ExprKind::Unary(UnOp::AddrOf, x) => {
                if let ExprKind::Index(_, k) = &x.kind {
                    self.expr(k, Access::Read, depth + 1);
                }
            }
            _ => self.expr_skipping_param(init, depth),
        }
    }

    /// `e` names an alias, or the stepped parameter, which is checked the
    /// same way (through same-type conversions).
    pub(super) fn alias_use<'e>(&self, e: &'e Expr) -> Option<&'e Expr> {
        match &e.kind {
            ExprKind::Var(n) if self.aliases.contains(n) => Some(e),
            ExprKind::Var(n) if self.stepped && n == self.name => Some(e),
            ExprKind::Cast(inner) => match (&e.ty, &self.pointee) {
                (Type::Pointer { pointee, .. }, Some(p)) if &pointee.name() == p => {
                    self.alias_use(inner)
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// The alias a dereferenced pointer `*(row + k1 - k2)` steps from.
    pub(super) fn alias_chain<'e>(&self, e: &'e Expr) -> Option<&'e Expr> {
        if let Some(v) = self.alias_use(e) {
            return Some(v);
        }
        let pointer = |x: &Expr| matches!(x.ty, Type::Pointer { .. });
        match &e.kind {
            ExprKind::Binary(BinOp::Add, l, _) if pointer(l) => self.alias_chain(l),
            ExprKind::Binary(BinOp::Add, _, r) if pointer(r) => self.alias_chain(r),
            ExprKind::Binary(BinOp::Sub, l, r) if pointer(l) && !pointer(r) => self.alias_chain(l),
            _ => None,
        }
    }

    /// Whether the kernel steps the parameter itself, and only so: every
    /// assignment to it is `p += k`, `p -= k`, `p++`, `p--` or `p = p +
    /// k`, its address is never taken, no view is taken of it, and the
    /// walk is in the kernel (not a helper's clone, which has no
    /// prologue).
    pub(super) fn param_stepped(&self, body: &[Stmt]) -> bool {
        // (a view assumes the argument's start: a view of a stepped one
        // is refused as a use of the pointer)
        if self.program.is_none() || !self.views.is_empty() {
            return false;
        }
        let is = |x: &Expr| self.param_use(x).is_some();
        let (mut steps, mut other) = (0, false);
        visit_exprs(body, &mut |e| match &e.kind {
            ExprKind::Assign(op, l, r) if is(l) => {
                let ok = match op {
                    Some(BinOp::Add | BinOp::Sub) => !matches!(r.ty, Type::Pointer { .. }),
                    None => self.offset_chain(r).is_some() && self.param_use(r).is_none(),
                    _ => false,
                };
                steps += 1;
                other |= !ok;
            }
            ExprKind::Unary(UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec, x)
                if is(x) =>
            {
                steps += 1
            }
            ExprKind::Unary(UnOp::AddrOf, x) if is(x) => other = true,
            _ => {}
        });
        steps > 0 && !other
    }

    /// The parameter's value at the kernel's start, where it is stepped.
    pub(super) fn orig_name(&self) -> String {
        format!("__clpart_orig_{}", self.tag)
    }

    /// A step of the stepped parameter (`A += lda`, `A++`, `A = A + k`):
    /// left as written, its offsets visited.
    pub(super) fn param_step(&mut self, e: &Expr, depth: u32) -> bool {
        if !self.stepped {
            return false;
        }
        match &e.kind {
            ExprKind::Assign(op, l, r) if self.param_use(l).is_some() => {
                let l = self.param_use(l).expect("matched");
                self.handled.push((l.span.start, l.span.end));
                if op.is_none() {
                    if let Some(p) = self.offset_chain(r) {
                        self.handled.push((p.span.start, p.span.end));
                    }
                    self.expr_skipping_param(r, depth + 1);
                } else {
                    self.expr(r, Access::Read, depth + 1);
                }
                true
            }
            ExprKind::Unary(UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec, x)
                if self.param_use(x).is_some() =>
            {
                let x = self.param_use(x).expect("matched");
                self.handled.push((x.span.start, x.span.end));
                true
            }
            _ => false,
        }
    }

    /// The access `e` through alias `v`, or through the stepped parameter
    /// (whose index or offset parts are `parts`), used as `access`:
    /// `a[check(&(e) - a)]`.
    pub(super) fn alias_access(
        &mut self,
        e: &Expr,
        v: &Expr,
        parts: &[&Expr],
        access: Access,
        depth: u32,
    ) {
        let inside = |s: &Span| s.start >= e.span.start && s.end <= e.span.end && s.start < s.end;
        if self.text(&e.span).is_none()
            || !inside(&v.span)
            || !parts.iter().all(|p| inside(&p.span))
        {
            return self.fail(
                e,
                "an access through a pointer into it inside a macro expansion",
            );
        }
        self.handled.push((v.span.start, v.span.end));
        // no per-work-group proof: the offset is the alias's
        let group = self.group.take();
        let c = self.check_call(access, None, group::Index::Zero);
        self.group = group;
        // once the parameter is stepped, its value at the start is the
        // buffer's (for its own accesses and for pointers taken from it)
        let base = if self.stepped {
            self.orig_name()
        } else {
            self.name.to_string()
        };
        self.wrap_address(e, &base, &c, depth);
        for p in parts {
            self.expr(p, Access::Read, depth + 1);
        }
    }
}

/// The integer operands of a pointer chain `row + k1 - k2` (see
/// [`Guarder::alias_chain`]).
pub(super) fn chain_offsets(e: &Expr) -> Vec<&Expr> {
    let pointer = |x: &Expr| matches!(x.ty, Type::Pointer { .. });
    match &e.kind {
        ExprKind::Binary(BinOp::Add | BinOp::Sub, l, r) if pointer(l) => {
            let mut v = chain_offsets(l);
            v.push(r);
            v
        }
        ExprKind::Binary(BinOp::Add, l, r) if pointer(r) => {
            let mut v = chain_offsets(r);
            v.push(l);
            v
        }
        ExprKind::Cast(inner) => chain_offsets(inner),
        _ => Vec::new(),
    }
}
