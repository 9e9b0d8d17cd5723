//! Subkernel rewriting: the source a device runs for its slice.
//!
//! A device running work-groups `[lo, hi)` of the split dimension gets the
//! original kernel with:
//! - every bounded array indexed relative to the start of its range (extra
//!   argument `__clpart_base_<name>`), so its device buffer holds only that range;
//! - `get_group_id`, `get_global_size`, `get_num_groups` and `get_global_offset`
//!   returning the unsplit NDRange's values (the launcher runs the slice with a
//!   global work offset, which keeps `get_global_id` and `get_local_id` right).
//!
//! Rewriting is textual, driven by the IR's byte spans, so the rest of the
//! source (comments, macros, helpers) is left as the user wrote it. Subscripts
//! `a[e]` become `a[(e) - base]`, pointer arithmetic `a + k` becomes
//! `a + ((k) - base)`, `vloadN(i, a)`/`vstoreN(v, i, a)` are rebased the same
//! way; any other use of the pointer, or a use the spans cannot pin down (inside
//! a macro expansion), falls back to rebasing the pointer itself once at kernel
//! entry.

use coarsen::ir::*;
use ranges_format::{ExtraArg, ExtraArgMeaning, Subkernel};

/// Why a subkernel could not be produced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubkernelError {
    #[error("{file}:{line}:{col}: helper function '{helper}' uses '{builtin}', which a slice would get wrong")]
    HelperUsesBuiltin { file: String, line: u32, col: u32, helper: String, builtin: String },
    #[error("kernel '{0}' not found")]
    NoKernel(String),
}

const REWRITTEN: [WorkItemFn; 4] = [WorkItemFn::GroupId, WorkItemFn::GlobalSize, WorkItemFn::NumGroups, WorkItemFn::GlobalOffset];

/// Builds the subkernel of `kernel` rebasing the pointer parameters listed in
/// `rebased` (argument indices).
pub fn rewrite(program: &Program, kernel: &str, rebased: &[u32]) -> Result<Subkernel, SubkernelError> {
    let k = program.function(kernel).filter(|f| f.is_kernel).ok_or_else(|| SubkernelError::NoKernel(kernel.into()))?;
    // Helpers must not use the builtins we rewrite: they have no access to the extra arguments.
    let reached = called_functions(&program.functions, kernel);
    for f in program.functions.iter().filter(|f| !f.is_kernel && reached.contains(&f.name)) {
        let mut bad = None;
        visit_exprs(&f.body, &mut |e| {
            if let ExprKind::WorkItem(w, _) = &e.kind {
                if REWRITTEN.contains(w) && bad.is_none() {
                    bad = Some((w.name(), e.span.clone()));
                }
            }
        });
        if let Some((b, s)) = bad {
            return Err(SubkernelError::HelperUsesBuiltin {
                file: program.file.clone(),
                line: s.line,
                col: s.col,
                helper: f.name.clone(),
                builtin: b.into(),
            });
        }
    }

    let src = &program.source;
    let mut edits: Vec<Edit> = Vec::new();
    let mut extra_args: Vec<ExtraArg> = Vec::new();
    let mut prologue = String::new();

    for &idx in rebased {
        let Some(p) = k.params.get(idx as usize) else { continue };
        let base = format!("__clpart_base_{}", p.name);
        extra_args.push(ExtraArg { name: base.clone(), meaning: ExtraArgMeaning::ArrayBase { arg_index: idx } });
        let mut local = Vec::new();
        let exact = rebase_uses(&k.body, &p.name, &base, src, &mut local);
        if exact {
            edits.extend(local);
        } else {
            // Fallback: rename the parameter and rebase the pointer once.
            let renamed = format!("__clpart_dev_{}", p.name);
            let name_at = find_name_in_span(src, &p.span, &p.name);
            match name_at {
                Some(at) => edits.push(Edit { at, del: p.name.len(), text: renamed.clone() }),
                None => continue,
            }
            let ty = param_c_type(&p.ty);
            prologue.push_str(&format!("    {ty} {} = {renamed} - {base};\n", p.name));
        }
    }

    // Work-item builtins a slice gets wrong.
    let mut used = [[false; 3]; 4];
    let mut wi_edits = Vec::new();
    visit_exprs(&k.body, &mut |e| {
        if let ExprKind::WorkItem(w, d) = &e.kind {
            let Some(which) = REWRITTEN.iter().position(|r| r == w) else { return };
            let text = &src.get(e.span.start as usize..e.span.end as usize).unwrap_or("");
            if !text.starts_with(w.name()) {
                return; // inside a macro expansion: handled by the #define below
            }
            let dims: Vec<usize> = match d.const_int() {
                Some(v) if (0..3).contains(&v) => vec![v as usize],
                _ => vec![0, 1, 2],
            };
            for &dd in &dims {
                used[which][dd] = true;
            }
            let dim_text = src.get(d.span.start as usize..d.span.end as usize).unwrap_or("0").to_string();
            let pick = |prefix: &str| -> String {
                if dims.len() == 1 {
                    format!("{prefix}{}", dims[0])
                } else {
                    format!("(({dim_text}) == 0 ? {prefix}0 : ({dim_text}) == 1 ? {prefix}1 : {prefix}2)")
                }
            };
            let new = match w {
                WorkItemFn::GroupId => format!("(get_group_id({dim_text}) + {})", pick("__clpart_group_base")),
                WorkItemFn::GlobalSize => format!("((size_t){})", pick("__clpart_global_size")),
                WorkItemFn::NumGroups => format!("((size_t){})", pick("__clpart_num_groups")),
                _ => format!("((size_t){})", pick("__clpart_global_offset")),
            };
            wi_edits.push(Edit { at: e.span.start as usize, del: (e.span.end - e.span.start) as usize, text: new });
        }
    });
    // Builtins used through macros: mark all dims as needed (rewritten by #define).
    let macro_use = REWRITTEN.iter().any(|w| uses_in_macro(&k.body, *w, src));
    if macro_use {
        for row in used.iter_mut() {
            *row = [true; 3];
        }
    }
    edits.extend(wi_edits);
    let names = ["__clpart_group_base", "__clpart_global_size", "__clpart_num_groups", "__clpart_global_offset"];
    for (which, name) in names.iter().enumerate() {
        for d in 0..3u32 {
            if used[which][d as usize] {
                let meaning = match which {
                    0 => ExtraArgMeaning::GroupIdBase(d),
                    1 => ExtraArgMeaning::GlobalSize(d),
                    2 => ExtraArgMeaning::NumGroups(d),
                    _ => ExtraArgMeaning::GlobalOffset(d),
                };
                extra_args.push(ExtraArg { name: format!("{name}{d}"), meaning });
            }
        }
    }

    // Extra parameters go after the last original parameter.
    let params_text: String = extra_args.iter().map(|a| format!("long {}", a.name)).collect::<Vec<_>>().join(", ");
    if !params_text.is_empty() {
        let (at, text) = match k.params.last() {
            Some(p) => (p.span.end as usize, format!(", {params_text}")),
            None => (open_paren_after_name(src, k).unwrap_or(k.span.start as usize), params_text.clone()),
        };
        edits.push(Edit { at, del: 0, text });
    }
    if !prologue.is_empty() {
        if let Some(at) = body_open_brace(src, k) {
            edits.push(Edit { at: at + 1, del: 0, text: format!("\n{prologue}") });
        }
    }
    let mut out = src.clone();
    edits.sort_by(|a, b| b.at.cmp(&a.at).then(b.del.cmp(&a.del)));
    for e in &edits {
        if e.at + e.del <= out.len() {
            out.replace_range(e.at..e.at + e.del, &e.text);
        }
    }
    let mut header = String::from("/* clpart subkernel: arrays rebased to their range, work-item builtins of the unsplit NDRange */\n");
    if macro_use {
        header.push_str("#define get_group_id(d) (get_group_id(d) + ((d) == 0 ? __clpart_group_base0 : (d) == 1 ? __clpart_group_base1 : __clpart_group_base2))\n");
        header.push_str("#define get_global_size(d) ((size_t)((d) == 0 ? __clpart_global_size0 : (d) == 1 ? __clpart_global_size1 : __clpart_global_size2))\n");
        header.push_str("#define get_num_groups(d) ((size_t)((d) == 0 ? __clpart_num_groups0 : (d) == 1 ? __clpart_num_groups1 : __clpart_num_groups2))\n");
        header.push_str("#define get_global_offset(d) ((size_t)((d) == 0 ? __clpart_global_offset0 : (d) == 1 ? __clpart_global_offset1 : __clpart_global_offset2))\n");
    }
    Ok(Subkernel { name: k.name.clone(), source: header + &out, extra_args })
}

struct Edit {
    at: usize,
    del: usize,
    text: String,
}

fn uses_in_macro(body: &[Stmt], w: WorkItemFn, src: &str) -> bool {
    let mut found = false;
    visit_exprs(body, &mut |e| {
        if let ExprKind::WorkItem(x, _) = &e.kind {
            if *x == w && !src.get(e.span.start as usize..e.span.end as usize).unwrap_or("").starts_with(w.name()) {
                found = true;
            }
        }
    });
    found
}

fn text_is(src: &str, span: &Span, name: &str) -> bool {
    src.get(span.start as usize..span.end as usize).is_some_and(|t| t.trim() == name)
}

/// The C type of a pointer parameter, with its address space, for the prologue.
fn param_c_type(t: &Type) -> String {
    match t {
        Type::Pointer { pointee, space, is_const } => {
            format!("{} {}{}*", space.qualifier(), if *is_const { "const " } else { "" }, pointee.name())
        }
        other => other.name(),
    }
}

fn find_name_in_span(src: &str, span: &Span, name: &str) -> Option<usize> {
    let text = src.get(span.start as usize..span.end as usize)?;
    let bytes = text.as_bytes();
    let mut best = None;
    let mut from = 0;
    while let Some(i) = text[from..].find(name) {
        let at = from + i;
        let before_ok = at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        let after = at + name.len();
        let after_ok = after >= bytes.len() || !(bytes[after].is_ascii_alphanumeric() || bytes[after] == b'_');
        if before_ok && after_ok {
            best = Some(span.start as usize + at);
        }
        from = at + 1;
    }
    best
}

fn open_paren_after_name(src: &str, k: &Function) -> Option<usize> {
    let text = src.get(k.span.start as usize..k.span.end as usize)?;
    let at = find_name_in_span(src, &k.span, &k.name)? - k.span.start as usize;
    text[at..].find('(').map(|i| k.span.start as usize + at + i + 1)
}

fn body_open_brace(src: &str, k: &Function) -> Option<usize> {
    let text = src.get(k.span.start as usize..k.span.end as usize)?;
    // The first '{' after the closing ')' of the parameter list.
    let at = open_paren_after_name(src, k)? - k.span.start as usize;
    let mut depth = 1;
    let bytes = text.as_bytes();
    let mut i = at;
    while i < bytes.len() && depth > 0 {
        match bytes[i] {
            b'(' => depth += 1,
            b')' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    text[i..].find('{').map(|j| k.span.start as usize + i + j)
}

/// Rebases every use of pointer `name` precisely; returns false when some use
/// cannot be rewritten from the spans (then the caller falls back).
fn rebase_uses(body: &[Stmt], name: &str, base: &str, src: &str, edits: &mut Vec<Edit>) -> bool {
    let mut ok = true;
    let mut handled: Vec<(u32, u32)> = Vec::new();
    visit_exprs(body, &mut |e| {
        let is_var = |x: &Expr| matches!(&x.kind, ExprKind::Var(n) if n == name);
        match &e.kind {
            ExprKind::Index(b, i) if is_var(b) => {
                if !text_is(src, &b.span, name) || i.span.end <= i.span.start || i.span.start < b.span.end {
                    ok = false;
                    return;
                }
                edits.push(Edit { at: i.span.start as usize, del: 0, text: "(".into() });
                edits.push(Edit { at: i.span.end as usize, del: 0, text: format!(") - {base}") });
                handled.push((b.span.start, b.span.end));
            }
            ExprKind::Binary(BinOp::Add, l, r) if is_var(l) || is_var(r) => {
                let (p, k) = if is_var(l) { (l, r) } else { (r, l) };
                if !text_is(src, &p.span, name) || k.span.end <= k.span.start || !span_inside(&k.span, &e.span) {
                    ok = false;
                    return;
                }
                edits.push(Edit { at: k.span.start as usize, del: 0, text: "((".into() });
                edits.push(Edit { at: k.span.end as usize, del: 0, text: format!(") - {base})") });
                handled.push((p.span.start, p.span.end));
            }
            ExprKind::Call(f, args) if (f.starts_with("vload") || f.starts_with("vstore")) && args.len() >= 2 => {
                let pi = args.len() - 1;
                let oi = args.len() - 2;
                if !is_var(&args[pi]) {
                    return;
                }
                let n: String = f.trim_start_matches("vload").trim_start_matches("vstore").to_string();
                let (p, o) = (&args[pi], &args[oi]);
                if n.parse::<u32>().is_err() || !text_is(src, &p.span, name) || o.span.end <= o.span.start {
                    ok = false;
                    return;
                }
                // vloadN(o, a) reads a[N*o ..]: becomes vloadN(0, a + ((size_t)N*(o) - base)).
                edits.push(Edit { at: o.span.start as usize, del: (o.span.end - o.span.start) as usize, text: "0".into() });
                let ot = src[o.span.start as usize..o.span.end as usize].to_string();
                edits.push(Edit { at: p.span.end as usize, del: 0, text: format!(" + ((long){n} * (long)({ot}) - {base})") });
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

fn span_inside(inner: &Span, outer: &Span) -> bool {
    inner.start >= outer.start && inner.end <= outer.end
}
