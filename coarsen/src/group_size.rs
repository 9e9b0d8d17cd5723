//! Whether a kernel's results may depend on its work-group size.
//!
//! A launch with a NULL local size leaves the work-group size to the
//! driver, and each driver chooses its own (PoCL: 4,096 work-items on its
//! `basic` device, 2,048 on `pthread`, 48x40 in 2-D). A split runs each
//! slice with a size clpart chooses, so it may only do that for a kernel
//! whose results cannot tell the difference: one that never observes a
//! local or group id, a work-group size or count, and never shares data
//! within a group (barriers, `__local` memory, work-group and sub-group
//! functions), directly or through the helpers it calls.
//! [`group_size_use`] finds the first construct that observes it.

use crate::ir::{
    called_functions, visit_expr, AddrSpace, ExprKind, Function, Program, Span, Stmt, Type,
    WorkItemFn,
};

/// Builtins other than the work-item functions whose results depend on
/// the work-group (collectives, sub-groups, group copies).
fn group_builtin(name: &str) -> bool {
    name.starts_with("work_group_")
        || name.starts_with("sub_group_")
        || name.starts_with("get_sub_group")
        || name.starts_with("get_enqueued_")
        || name.starts_with("async_work_group_")
        || matches!(
            name,
            "barrier"
                | "wait_group_events"
                | "get_num_sub_groups"
                | "get_max_sub_group_size"
                | "get_local_linear_id"
                | "intel_sub_group_shuffle"
        )
}

/// The first construct of `kernel` (or of a helper it calls) through which
/// its results may depend on the work-group size, as an end-user message
/// with its location (`get_local_id (k.cl:4:13)`); `None` when there is
/// none, and when `kernel` is not in `program`.
pub fn group_size_use(program: &Program, kernel: &str) -> Option<String> {
    let mut names = vec![kernel.to_string()];
    names.extend(called_functions(&program.functions, kernel));
    names
        .iter()
        .filter_map(|n| program.function(n))
        .find_map(|f| in_function(f).map(|(what, at)| format!("{what} ({}:{at})", program.file)))
}

fn in_function(f: &Function) -> Option<(String, Span)> {
    for p in &f.params {
        if let Type::Pointer {
            space: AddrSpace::Local,
            ..
        } = p.ty
        {
            return Some((format!("the __local argument '{}'", p.name), p.span.clone()));
        }
    }
    in_stmts(&f.body)
}

fn in_stmts(body: &[Stmt]) -> Option<(String, Span)> {
    body.iter().find_map(in_stmt)
}

fn in_stmt(s: &Stmt) -> Option<(String, Span)> {
    match s {
        Stmt::Barrier(span) => Some(("a barrier".into(), span.clone())),
        Stmt::Decl(d) if d.space == AddrSpace::Local => {
            Some((format!("the __local variable '{}'", d.name), d.span.clone()))
        }
        Stmt::Decl(d) => d.init.as_ref().and_then(in_expr),
        Stmt::Expr(e) | Stmt::Return(Some(e), _) => in_expr(e),
        Stmt::If {
            cond, then, els, ..
        } => in_expr(cond)
            .or_else(|| in_stmts(then))
            .or_else(|| els.as_deref().and_then(in_stmts)),
        Stmt::For {
            init,
            cond,
            step,
            body,
            ..
        } => init
            .as_deref()
            .and_then(in_stmt)
            .or_else(|| cond.as_ref().and_then(in_expr))
            .or_else(|| step.as_ref().and_then(in_expr))
            .or_else(|| in_stmts(body)),
        Stmt::While { cond, body, .. } => in_expr(cond).or_else(|| in_stmts(body)),
        Stmt::Block(b) => in_stmts(b),
        Stmt::Return(None, _) | Stmt::Break(_) | Stmt::Continue(_) | Stmt::Unsupported(..) => None,
    }
}

fn in_expr(e: &crate::ir::Expr) -> Option<(String, Span)> {
    let mut found = None;
    visit_expr(e, &mut |e| {
        if found.is_some() {
            return;
        }
        match &e.kind {
            ExprKind::WorkItem(
                w @ (WorkItemFn::LocalId
                | WorkItemFn::GroupId
                | WorkItemFn::LocalSize
                | WorkItemFn::NumGroups),
                _,
            ) => found = Some((w.name().to_string(), e.span.clone())),
            ExprKind::Call(name, _) if group_builtin(name) => {
                found = Some((name.clone(), e.span.clone()))
            }
            _ => {}
        }
    });
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_program, ParseOptions};

    fn use_of(src: &str, kernel: &str) -> Option<String> {
        let p = parse_program("k.cl", src, &ParseOptions::default()).unwrap();
        group_size_use(&p, kernel)
    }

    #[test]
    fn global_ids_alone_do_not_observe_the_group_size() {
        let src = "__kernel void k(__global float* a, int n) {\n  int i = get_global_id(0);\n  if (i < n) a[i] = a[i] * 2.0f + get_global_size(0);\n}\n";
        assert_eq!(use_of(src, "k"), None);
    }

    #[test]
    fn each_observing_construct_is_named_with_its_place() {
        let cases = [
            ("__kernel void k(__global int* a) { a[get_global_id(0)] = get_local_id(0); }", "get_local_id (k.cl:1:"),
            ("__kernel void k(__global int* a) { a[get_global_id(0)] = get_group_id(0); }", "get_group_id (k.cl:1:"),
            ("__kernel void k(__global int* a) { a[get_global_id(0)] = get_local_size(0); }", "get_local_size (k.cl:1:"),
            ("__kernel void k(__global int* a) { a[get_global_id(0)] = get_num_groups(0); }", "get_num_groups (k.cl:1:"),
            ("__kernel void k(__global int* a, __local int* s) { a[get_global_id(0)] = 1; }", "the __local argument 's' (k.cl:1:"),
            ("__kernel void k(__global int* a) {\n  __local int t[4];\n  a[get_global_id(0)] = 1;\n}", "the __local variable 't' (k.cl:2:"),
            ("__kernel void k(__global int* a) {\n  a[get_global_id(0)] = 1;\n  barrier(CLK_GLOBAL_MEM_FENCE);\n}", "a barrier (k.cl:3:"),
        ];
        for (src, want) in cases {
            let got = use_of(src, "k").unwrap_or_default();
            assert!(got.starts_with(want), "{src}: got {got:?}, want {want:?}");
        }
    }

    #[test]
    fn a_helper_that_observes_the_group_size_counts_for_its_callers() {
        let src = "int lane(void) { return get_local_id(0); }\nint twice(int x) { return 2 * x + lane(); }\n__kernel void k(__global int* a) { a[get_global_id(0)] = twice(3); }\n__kernel void other(__global int* a) { a[get_global_id(0)] = 3; }\n";
        let got = use_of(src, "k").unwrap_or_default();
        assert!(got.starts_with("get_local_id (k.cl:1:"), "{got}");
        assert_eq!(use_of(src, "other"), None);
    }
}
