//! What the kernel's body declares and changes: its declarations
//! ([`visit_decls`], [`decls`]), a parameter shadowed by one
//! ([`shadowing`]), a variable assigned or addressed, and the types of
//! pointer parameters.

use coarsen::ir::*;

/// Calls `f` on every declaration of `body` with its block depth.
pub(super) fn visit_decls<'b>(body: &'b [Stmt], depth: u32, f: &mut dyn FnMut(&'b VarDecl, u32)) {
    for s in body {
        match s {
            Stmt::Decl(d) => f(d, depth),
            Stmt::If { then, els, .. } => {
                visit_decls(then, depth + 1, f);
                if let Some(e) = els {
                    visit_decls(e, depth + 1, f);
                }
            }
            Stmt::For { init, body, .. } => {
                if let Some(i) = init {
                    visit_decls(std::slice::from_ref(&**i), depth + 1, f);
                }
                visit_decls(body, depth + 1, f);
            }
            Stmt::While { body, .. } | Stmt::Block(body) => visit_decls(body, depth + 1, f),
            _ => {}
        }
    }
}

pub(super) fn pointee_name(t: &Type) -> Option<String> {
    match t {
        Type::Pointer { pointee, .. } => Some(pointee.name()),
        _ => None,
    }
}

pub(super) fn pointee_size(t: &Type) -> Option<u32> {
    match t {
        Type::Pointer { pointee, .. } => pointee.size(),
        _ => None,
    }
}

/// Variable `name` is assigned, stepped or has its address taken in `body`.
pub(super) fn changed_or_addressed(body: &[Stmt], name: &str) -> bool {
    let is = |x: &Expr| matches!(&x.kind, ExprKind::Var(n) if n == name);
    let mut addressed = false;
    visit_exprs(body, &mut |e| {
        addressed |= matches!(&e.kind, ExprKind::Unary(UnOp::AddrOf, x) if is(x))
    });
    addressed || assigns(body, name)
}

/// A declaration in `f`'s body of a variable named like one of its
/// parameters (in an inner scope: C forbids it in the outermost one).
pub(super) fn shadowing(f: &Function) -> Option<&VarDecl> {
    let mut all = Vec::new();
    decls(&f.body, &mut all);
    all.into_iter()
        .find(|d| f.params.iter().any(|p| p.name == d.name))
}

/// Every variable declaration in `body`, nested ones included.
pub(super) fn decls<'b>(body: &'b [Stmt], out: &mut Vec<&'b VarDecl>) {
    visit_decls(body, 0, &mut |d, _| out.push(d));
}

/// The C type of a pointer parameter, with its address space, for the prologue.
pub(super) fn param_c_type(t: &Type) -> String {
    match t {
        Type::Pointer {
            pointee,
            space,
            is_const,
        } => {
            format!(
                "{} {}{}*",
                space.qualifier(),
                if *is_const { "const " } else { "" },
                pointee.name()
            )
        }
        other => other.name(),
    }
}
