//! Calls: the work-item functions (`get_global_id` and the others, as
//! domain dimensions and NDRange parameters), `vloadN`/`vstoreN`, atomics,
//! integer builtins (`min`, `max`, `clamp`, `abs`, `mul24`, `mad24`,
//! `convert_*`), and unknown functions, into which pointer arguments escape.
//! Calls of the program's own helpers are inlined (`inline.rs`).

use super::domain::{
    add_int, is_int, is_unsigned, min_max, nd_name, offset_targets, overflow, scale_int, IntVal,
    Val,
};
use super::expr::strip;
use super::Walker;
use crate::poly::{Cond, Poly, Why};
use crate::AccessKind;
use coarsen::ir::{BinOp, Expr, ExprKind, UnOp, WorkItemFn};

impl<'a> Walker<'a> {
    pub(super) fn work_item(&mut self, f: WorkItemFn, d: &Expr) -> Val {
        let wd = self.ndr.work_dim;
        if f == WorkItemFn::WorkDim {
            return Val::Int(IntVal::unknown("get_work_dim() is known only at launch"));
        }
        let Some(dim) = d
            .const_int()
            .filter(|v| (0..3).contains(v))
            .map(|v| v as u32)
        else {
            self.eval(d);
            return Val::Int(IntVal::unknown(format!(
                "{}() with a non-constant dimension",
                f.name()
            )));
        };
        let inside = dim < wd;
        let v = match f {
            WorkItemFn::GlobalId if inside => Poly::dim(&nd_name("x", dim)),
            WorkItemFn::LocalId if inside => Poly::dim(&nd_name("l", dim)),
            WorkItemFn::GroupId if inside => Poly::dim(&nd_name("g", dim)),
            WorkItemFn::GlobalSize if inside => Poly::param(&nd_name("gs", dim)),
            WorkItemFn::LocalSize if inside => match self.ndr.local_size {
                Some(ls) => Poly::konst(ls[dim as usize] as i128),
                None => Poly::param(&nd_name("ls", dim)),
            },
            WorkItemFn::NumGroups if inside => Poly::param(&nd_name("ng", dim)),
            WorkItemFn::GlobalOffset if inside => Poly::param(&nd_name("go", dim)),
            WorkItemFn::GlobalId
            | WorkItemFn::LocalId
            | WorkItemFn::GroupId
            | WorkItemFn::GlobalOffset => Poly::konst(0),
            _ => Poly::konst(1),
        };
        Val::Int(IntVal::poly(v))
    }

    pub(super) fn call(&mut self, name: &str, args: &[Expr], e: &Expr) -> Val {
        // Helpers are inlined.
        if let Some(f) = self.program.function(name) {
            return self.inline(f, args, e);
        }
        let int_result = is_int(&e.ty);
        // vloadN / vstoreN (and the half variants) on buffer pointers.
        if let Some(n) = vector_width(name, "vload") {
            if args.len() == 2 {
                let off = self.eval_int(&args[0]);
                let p = self.eval(&args[1]);
                if let Val::Ptr(ts) = p {
                    let idx = scale_int(&off, n as i128);
                    let ts = offset_targets(&ts, &idx, &self.ndr.rules);
                    self.record(&ts, AccessKind::Read, n, e);
                }
                return Val::Other;
            }
        }
        if let Some(n) = vector_width(name, "vstore") {
            if args.len() == 3 {
                self.eval(&args[0]);
                let off = self.eval_int(&args[1]);
                let p = self.eval(&args[2]);
                if let Val::Ptr(ts) = p {
                    let idx = scale_int(&off, n as i128);
                    let ts = offset_targets(&ts, &idx, &self.ndr.rules);
                    self.record(&ts, AccessKind::MustWrite, n, e);
                }
                return Val::Other;
            }
        }
        if name.starts_with("atomic_") || name.starts_with("atom_") {
            let vals: Vec<Val> = args.iter().map(|a| self.eval(a)).collect();
            if let Some(Val::Ptr(ts)) = vals.first() {
                let ts = ts.clone();
                let write = if name.ends_with("cmpxchg") {
                    AccessKind::MayWrite
                } else {
                    AccessKind::MustWrite
                };
                // The access is named by the element expression (`&bins[k]` -> `bins[k]`).
                let elem = match &strip(&args[0]).kind {
                    ExprKind::Unary(UnOp::AddrOf, inner) => inner.as_ref(),
                    _ => &args[0],
                };
                self.in_atomic = true;
                self.record(&ts, AccessKind::Read, 1, elem);
                self.record(&ts, write, 1, elem);
                self.in_atomic = false;
                let elem_ty = match &args[0].ty {
                    coarsen::ir::Type::Pointer { pointee, .. } => match pointee.as_ref() {
                        coarsen::ir::Type::Scalar(s) => Some(*s),
                        _ => None,
                    },
                    _ => None,
                };
                self.atomic_uses.push(crate::eval::AtomicUse {
                    name: name.to_string(),
                    bufs: ts.iter().map(|t| t.buf).collect(),
                    elem: elem_ty,
                    used: self.discarded.as_ref() != Some(&e.span),
                    loc: self.loc(&e.span),
                });
                for v in &vals[1..] {
                    if let Val::Ptr(o) = v {
                        let o = o.clone();
                        self.escape(&o, name, e);
                    }
                }
            }
            return if int_result {
                Val::Int(IntVal::Unknown(Why::indirect(format!(
                    "'{}' is loaded from memory",
                    self.text(&e.span)
                ))))
            } else {
                Val::Other
            };
        }
        let vals: Vec<Val> = args.iter().map(|a| self.eval(a)).collect();
        if int_result && args.iter().all(|a| is_int(&a.ty)) {
            let ints: Vec<IntVal> = vals
                .iter()
                .map(|v| match v {
                    Val::Int(i) => i.clone(),
                    _ => IntVal::unknown("argument"),
                })
                .collect();
            let unsigned = is_unsigned(&e.ty);
            match (name, ints.as_slice()) {
                ("min", [a, b]) => return Val::Int(min_max(a, b, true)),
                ("max", [a, b]) => return Val::Int(min_max(a, b, false)),
                ("clamp", [x, lo, hi]) => {
                    return Val::Int(min_max(&min_max(x, lo, false), hi, true))
                }
                ("abs", [a]) if !unsigned => {
                    let neg = a.lift1(&|p| {
                        p.scale(-1)
                            .map(|q| vec![(Cond::True, q)])
                            .ok_or_else(overflow)
                    });
                    return Val::Int(min_max(a, &neg, false));
                }
                ("abs", [a]) => return Val::Int(a.clone()),
                ("mul24", [a, b]) => return Val::Int(self.int_op(BinOp::Mul, a, b, unsigned, e)),
                ("mad24", [a, b, c]) => {
                    let p = self.int_op(BinOp::Mul, a, b, unsigned, e);
                    return Val::Int(add_int(&p, c));
                }
                _ => {}
            }
            if name.starts_with("convert_") && ints.len() == 1 {
                return Val::Int(ints[0].clone());
            }
        }
        if name == "prefetch" {
            return Val::Other;
        }
        for v in &vals {
            if let Val::Ptr(ts) = v {
                let ts = ts.clone();
                self.escape(&ts, name, e);
            }
        }
        if int_result {
            Val::Int(IntVal::unknown(format!(
                "'{}' is the result of '{name}'",
                self.text(&e.span)
            )))
        } else {
            Val::Other
        }
    }
}

/// `vload4` -> 4, `vload_half` -> 1, `vload_half4` -> 4 (for `prefix` vload/vstore).
fn vector_width(name: &str, prefix: &str) -> Option<u32> {
    let rest = name.strip_prefix(prefix)?;
    let rest = rest.strip_prefix("_half").unwrap_or(rest);
    if rest.is_empty() {
        return (name != prefix).then_some(1);
    }
    match rest.parse::<u32>() {
        Ok(n @ (2 | 3 | 4 | 8 | 16)) => Some(n),
        _ => None,
    }
}
