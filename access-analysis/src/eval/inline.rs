//! Inlining of the program's helper functions: arguments bound as the
//! parameters' types convert them, the body walked in a frame of its own,
//! and the returned values merged under their paths.

use super::domain::{is_int, IntVal, Val};
use super::{Walker, MAX_PIECES};
use crate::poly::Cond;
use coarsen::ir::{Expr, Function, Type};
use std::collections::HashMap;

/// Maximum depth of helper inlining.
const MAX_INLINE_DEPTH: usize = 16;

impl<'a> Walker<'a> {
    pub(super) fn inline(&mut self, f: &Function, args: &[Expr], e: &Expr) -> Val {
        let vals: Vec<Val> = args.iter().map(|a| self.eval(a)).collect();
        if self.frames.len() > MAX_INLINE_DEPTH {
            for v in &vals {
                if let Val::Ptr(ts) = v {
                    let ts = ts.clone();
                    self.escape(&ts, &f.name, e);
                }
            }
            return if is_int(&e.ty) {
                Val::Int(IntVal::unknown("inlining too deep"))
            } else {
                Val::Other
            };
        }
        let mut frame = HashMap::new();
        for ((p, v), arg) in f.params.iter().zip(vals).zip(args) {
            if let Type::Scalar(sc) = &p.ty {
                self.var_types.insert(p.name.clone(), *sc);
            }
            let v = self.convert(v, Some(&arg.ty), &p.ty, &p.span);
            frame.insert(p.name.clone(), v);
        }
        self.frames.push(self.scopes.len());
        self.scopes.push(frame);
        self.returns.push((self.path.len(), Vec::new()));
        let _ = self.stmts(&f.body);
        let (_, rets) = self.returns.pop().unwrap_or_default();
        self.scopes.pop();
        self.frames.pop();
        if rets.is_empty() {
            return if is_int(&e.ty) {
                Val::Int(IntVal::unknown(format!("'{}' returns no value", f.name)))
            } else {
                Val::Other
            };
        }
        if rets.iter().all(|(_, v)| matches!(v, Val::Int(_))) {
            let mut pieces = Vec::new();
            for (conds, v) in rets {
                let c = conds.into_iter().fold(Cond::True, Cond::and);
                match v {
                    Val::Int(IntVal::Known(ps)) => {
                        for (pc, p) in ps {
                            pieces.push((Cond::and(c.clone(), pc), p));
                        }
                    }
                    Val::Int(IntVal::Unknown(w)) => return Val::Int(IntVal::Unknown(w)),
                    _ => {}
                }
            }
            if pieces.len() > MAX_PIECES {
                return Val::Int(IntVal::unknown("too many return values"));
            }
            return Val::Int(IntVal::Known(pieces));
        }
        if rets.iter().all(|(_, v)| matches!(v, Val::Ptr(_))) {
            let mut all = Vec::new();
            for (_, v) in rets {
                if let Val::Ptr(ts) = v {
                    for t in ts {
                        if !all.contains(&t) {
                            all.push(t);
                        }
                    }
                }
            }
            return Val::Ptr(all);
        }
        Val::Other
    }
}
