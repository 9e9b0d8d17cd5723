//! Rebasing an unguarded array's uses to the start of its range
//! ([`rebase_uses`]): `a[e]` becomes `a[(e) - base]`, `a + k` becomes
//! `a + ((k) - base)`, `vloadN`/`vstoreN` likewise; any other use makes the
//! caller rebase the pointer itself once at kernel entry.

use coarsen::ir::*;

use super::edit::Edit;
use super::source_spans::{apart, span_inside, text_is};

/// Rebases every use of pointer `name` precisely; returns false when some use
/// cannot be rewritten from the spans (then the caller falls back).
pub(super) fn rebase_uses(
    body: &[Stmt],
    name: &str,
    base: &str,
    src: &str,
    edits: &mut Vec<Edit>,
) -> bool {
    let mut ok = true;
    let mut handled: Vec<(u32, u32)> = Vec::new();
    visit_exprs(body, &mut |e| {
        let is_var = |x: &Expr| matches!(&x.kind, ExprKind::Var(n) if n == name);
        match &e.kind {
            ExprKind::Index(b, i) if is_var(b) => {
                if !text_is(src, &b.span, name)
                    || i.span.end <= i.span.start
                    || !apart(&b.span, &i.span)
                {
                    ok = false;
                    return;
                }
                edits.push(Edit {
                    at: i.span.start as usize,
                    del: 0,
                    text: "(".into(),
                    order: 500,
                    fast: None,
                });
                edits.push(Edit {
                    at: i.span.end as usize,
                    del: 0,
                    text: format!(") - {base}"),
                    order: 500,
                    fast: None,
                });
                handled.push((b.span.start, b.span.end));
            }
            ExprKind::Binary(BinOp::Add, l, r) if is_var(l) || is_var(r) => {
                let (p, k) = if is_var(l) { (l, r) } else { (r, l) };
                if !text_is(src, &p.span, name)
                    || k.span.end <= k.span.start
                    || !span_inside(&k.span, &e.span)
                {
                    ok = false;
                    return;
                }
                edits.push(Edit {
                    at: k.span.start as usize,
                    del: 0,
                    text: "((".into(),
                    order: 500,
                    fast: None,
                });
                edits.push(Edit {
                    at: k.span.end as usize,
                    del: 0,
                    text: format!(") - {base})"),
                    order: 500,
                    fast: None,
                });
                handled.push((p.span.start, p.span.end));
            }
            ExprKind::Call(f, args)
                if (f.starts_with("vload") || f.starts_with("vstore")) && args.len() >= 2 =>
            {
                let pi = args.len() - 1;
                let oi = args.len() - 2;
                if !is_var(&args[pi]) {
                    return;
                }
                let n: String = f
                    .trim_start_matches("vload")
                    .trim_start_matches("vstore")
                    .to_string();
                let (p, o) = (&args[pi], &args[oi]);
                if n.parse::<u32>().is_err()
                    || !text_is(src, &p.span, name)
                    || o.span.end <= o.span.start
                {
                    ok = false;
                    return;
                }
                // vloadN(o, a) reads a[N*o ..]: becomes vloadN(0, a + ((size_t)N*(o) - base)).
                edits.push(Edit {
                    at: o.span.start as usize,
                    del: (o.span.end - o.span.start) as usize,
                    text: "0".into(),
                    order: 500,
                    fast: None,
                });
                let ot = src[o.span.start as usize..o.span.end as usize].to_string();
                edits.push(Edit {
                    at: p.span.end as usize,
                    del: 0,
                    text: format!(" + ((long){n} * (long)({ot}) - {base})"),
                    order: 500,
                    fast: None,
                });
                handled.push((p.span.start, p.span.end));
            }
            _ => {}
        }
    });
    if !ok {
        edits.clear();
        return false;
    }
    // Any other use of the pointer (assignment to a local, call argument, ...) → fallback.
    let mut other = false;
    visit_exprs(body, &mut |e| {
        if let ExprKind::Var(n) = &e.kind {
            if n == name && !handled.contains(&(e.span.start, e.span.end)) {
                other = true;
            }
        }
    });
    if other {
        edits.clear();
        return false;
    }
    true
}
