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
//!
//! **The run-time guard.** Every `__global`/`__constant` buffer parameter
//! whose every use is a subscript `a[e]`, a dereference `*a` / `*(a + k)` or a
//! `vloadN`/`vstoreN` gets each access checked against a window of its device
//! buffer: reads against `[__clpart_rlo_a, __clpart_rhi_a)`, writes against
//! `[__clpart_wlo_a, __clpart_whi_a)` (indices relative to the buffer, extra
//! `long` arguments set per launch). A refused access is redirected to the
//! buffer's sink (the elements past `__clpart_len_a`, which the launcher
//! allocates and never copies back) and raises the array's flag in the
//! `__global int *__clpart_guard` buffer: bit 1 when the index lies outside
//! the buffer, bit 2 when it lies inside the buffer but outside the window
//! the analysis promised (two bits per slot, accumulated branch-free in the
//! work-item's private `__clpart_bad` and flushed with two `atomic_or`s on
//! the two ints of the buffer at every exit of the kernel). Building with `-DCLPART_UNCHECKED` turns the checks
//! into plain indices. A buffer used any other way (passed to a helper that
//! cannot be cloned, copied to a local pointer that changes, compared) is
//! listed in [`Subkernel::unguarded`] with the reason; the launcher does not
//! split such a kernel while the guard is on.
//!
//! **Views.** A local pointer initialized with the parameter
//! under casts and never changed (`__global float4 *x4 = (__global float4
//! *)x;`), or an inline cast `((__global uint *)p)[i]`, is a view: its
//! subscripts are checked in the parameter's elements. An element `m` times
//! wider covers `m` consecutive ones (checked like `vloadN`, then turned back
//! into the view's index by `__clpart_valign`, which also refuses a device
//! buffer whose first element is not a multiple of `m`; the launcher
//! allocates at such multiples, [`Subkernel::aligned`]); an element `m` times
//! narrower is checked against the element holding it (`__clpart_vsub`).
//!
//! **Boxes.** For a delinearized array with boxes
//! ([`rewrite_with_boxes`], `ranges_format::Boxes`), the device buffer holds
//! the linear hull of the slice's footprint but only the box's elements are
//! promised, so the guard also checks box membership: per dimension `k >= 1`
//! the extra arguments `__clpart_bs<k>_a` (stride, 0 when the launch checks
//! no box), `__clpart_be<k>_a` (extent, `stride[k-1] / stride[k]`) and the
//! inclusive read and write bounds `__clpart_brl/brh/bwl/bwh<k>_a`
//! ([`ExtraArgMeaning::BoxStride`] .. [`ExtraArgMeaning::BoxWriteHi`]).
//! Dimension 0 is bounded by the 1-D window, which the launcher sets to the
//! box's linear hull. Accesses become `__clpart_bchk<m>` /
//! `__clpart_brw<m>` (`m` checked dimensions): the absolute index `i`'s
//! component `(i / stride_k) % extent_k` must lie in the bounds, else the
//! access is refused like a window miss (bit 2). The per-work-group test
//! (module `group`) proves an access of a boxed array only when its
//! subscript splits as `C_m + E_m * (C_{m-1} + ...)` by the extents' scalar
//! arguments with every `C_k` inside `[0, E_k)` and the box, without a
//! division; any other access of a boxed array keeps the fast copy only in
//! launches that check no box.

mod group;

use std::cell::RefCell;

use coarsen::ir::*;
use ranges_format::{ExtraArg, ExtraArgMeaning, Subkernel};

/// Why a subkernel could not be produced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubkernelError {
    #[error("{file}:{line}:{col}: helper function '{helper}' uses '{builtin}', which a slice would get wrong")]
    HelperUsesBuiltin {
        file: String,
        line: u32,
        col: u32,
        helper: String,
        builtin: String,
    },
    #[error("kernel '{0}' not found")]
    NoKernel(String),
    #[error("kernel '{0}': the braces of its body are not in the source (a macro), so the run-time guard cannot be placed")]
    NoBody(String),
    /// The guard's flush goes around every `return` as written.
    #[error("{file}:{line}:{col}: a return inside a macro expansion: the run-time guard cannot flush its flags there")]
    MacroReturn { file: String, line: u32, col: u32 },
    /// The rewrite finds a parameter's uses by name.
    #[error("{file}:{line}:{col}: variable '{name}' shadows the kernel's parameter of that name, which the subkernel's rewrite cannot tell apart from it")]
    Shadowed {
        file: String,
        line: u32,
        col: u32,
        name: String,
    },
}

const REWRITTEN: [WorkItemFn; 4] = [
    WorkItemFn::GroupId,
    WorkItemFn::GlobalSize,
    WorkItemFn::NumGroups,
    WorkItemFn::GlobalOffset,
];

/// An array whose accesses the guard also checks against a box:
/// its argument index and the strides of its delinearized dimensions
/// (`ranges_format::Boxes::strides`, at least two, the last `"1"`).
#[derive(Debug, Clone, Copy)]
pub struct BoxedArray<'s> {
    /// Argument position of the array.
    pub arg_index: u32,
    /// Stride texts, outermost first.
    pub strides: &'s [String],
    /// Number of read parts (`ranges_format::Boxes::read_parts`; 0: none):
    /// a read must also lie in one of them.
    pub read_parts: usize,
}

/// Builds the subkernel of `kernel` rebasing the pointer parameters listed in
/// `rebased` (argument indices).
pub fn rewrite(
    program: &Program,
    kernel: &str,
    rebased: &[u32],
) -> Result<Subkernel, SubkernelError> {
    rewrite_with_boxes(program, kernel, rebased, &[], 3, &Default::default())
}

/// [`rewrite`], with the guard of each array of `boxed` (when it guards it)
/// also checking every access against the array's box: extra arguments
/// [`ExtraArgMeaning::BoxStride`] to [`ExtraArgMeaning::BoxWriteHi`] per
/// delinearized dimension after the first (see the module doc).
/// `specialized` holds the scalar arguments the analysis fixed (by name):
/// the per-work-group test reads their literal values where the strides
/// are literals (and requires the launch's values to be those).
pub fn rewrite_with_boxes(
    program: &Program,
    kernel: &str,
    rebased: &[u32],
    boxed: &[BoxedArray<'_>],
    work_dim: u32,
    specialized: &std::collections::BTreeMap<String, i64>,
) -> Result<Subkernel, SubkernelError> {
    let k = program
        .function(kernel)
        .filter(|f| f.is_kernel)
        .ok_or_else(|| SubkernelError::NoKernel(kernel.into()))?;
    if let Some(d) = shadowing(k) {
        return Err(SubkernelError::Shadowed {
            file: program.file.clone(),
            line: d.span.line,
            col: d.span.col,
            name: d.name.clone(),
        });
    }
    // Helpers must not use the builtins we rewrite: they have no access to the extra arguments.
    let reached = called_functions(&program.functions, kernel);
    for f in program
        .functions
        .iter()
        .filter(|f| !f.is_kernel && reached.contains(&f.name))
    {
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

    // The guard first: every buffer parameter whose uses can all be checked.
    let mut guarded: Vec<u32> = Vec::new();
    let mut unguarded: Vec<(u32, String)> = Vec::new();
    let mut aligned: Vec<(u32, u32)> = Vec::new();
    // some guarded access goes through a view: the header's view functions
    let mut viewed = false;
    // (box-checked dimensions, read parts) in use (the header's check functions)
    let mut box_dims: std::collections::BTreeSet<(usize, usize)> = Default::default();
    let mut guard_edits: Vec<Edit> = Vec::new();
    let hidden = unsupported_texts(&k.body, src);
    let buffer_names: Vec<String> = k
        .params
        .iter()
        .filter(|p| {
            matches!(
                p.space(),
                AddrSpace::Global | AddrSpace::Constant | AddrSpace::Local
            )
        })
        .map(|p| p.name.clone())
        .collect();
    let mut clones: Vec<(String, String)> = Vec::new();
    // Builtins used through macros are rewritten by `#define`s (below).
    let macro_use = REWRITTEN.iter().any(|w| uses_in_macro(&k.body, *w, src));
    let group = RefCell::new(group::GroupCheck::new(k, macro_use, specialized));
    for (idx, p) in k.params.iter().enumerate() {
        if !matches!(
            p.space(),
            AddrSpace::Global | AddrSpace::Constant | AddrSpace::Local
        ) {
            continue;
        }
        let idx = idx as u32;
        let slot = guarded.len();
        if slot >= 32 {
            unguarded.push((idx, "the guard checks at most 32 buffer arguments".into()));
            continue;
        }
        let boxes = match p.space() {
            AddrSpace::Local => None,
            _ => boxed
                .iter()
                .find(|b| {
                    b.arg_index == idx
                        && (b.strides.len() >= 2 || (b.strides.len() == 1 && b.read_parts > 0))
                })
                .map(|b| BoxSpec {
                    extent_names: extent_names(b.strides),
                    dims: b.strides.len(),
                    parts: b.read_parts,
                }),
        };
        let mut g = Guarder {
            boxes: boxes.clone(),
            name: &p.name,
            tag: &p.name,
            program: Some(program),
            buffers: &buffer_names,
            clones: Vec::new(),
            pointee: pointee_name(&p.ty),
            elem_size: pointee_size(&p.ty),
            views: Vec::new(),
            align: 1,
            viewed: false,
            slot,
            src,
            edits: Vec::new(),
            failure: None,
            handled: Vec::new(),
            group: Some(&group),
            conds: Vec::new(),
        };
        let before = group.borrow().snapshot();
        let failure = g.guard_body(&k.body, &hidden, &program.file);
        match failure {
            None => {
                guarded.push(idx);
                guard_edits.append(&mut g.edits);
                clones.append(&mut g.clones);
                if g.align > 1 {
                    aligned.push((idx, g.align));
                }
                viewed |= g.viewed;
                let n = &p.name;
                extra_args.push(ExtraArg {
                    name: format!("__clpart_base_{n}"),
                    meaning: ExtraArgMeaning::ArrayBase { arg_index: idx },
                });
                extra_args.push(ExtraArg {
                    name: format!("__clpart_rlo_{n}"),
                    meaning: ExtraArgMeaning::ReadLo { arg_index: idx },
                });
                extra_args.push(ExtraArg {
                    name: format!("__clpart_rhi_{n}"),
                    meaning: ExtraArgMeaning::ReadHi { arg_index: idx },
                });
                extra_args.push(ExtraArg {
                    name: format!("__clpart_wlo_{n}"),
                    meaning: ExtraArgMeaning::WriteLo { arg_index: idx },
                });
                extra_args.push(ExtraArg {
                    name: format!("__clpart_whi_{n}"),
                    meaning: ExtraArgMeaning::WriteHi { arg_index: idx },
                });
                extra_args.push(ExtraArg {
                    name: format!("__clpart_len_{n}"),
                    meaning: ExtraArgMeaning::Extent { arg_index: idx },
                });
                if let Some(b) = &boxes {
                    box_dims.insert((b.dims - 1, b.parts));
                    for (name, meaning) in box_args(n, b, idx) {
                        extra_args.push(ExtraArg { name, meaning });
                    }
                }
            }
            Some(why) => {
                group.borrow_mut().restore(before);
                unguarded.push((idx, why));
            }
        }
    }
    edits.append(&mut guard_edits);
    if !clones.is_empty() {
        let text: String = clones.iter().map(|(_, t)| format!("{t}\n\n")).collect();
        edits.push(Edit {
            at: k.span.start as usize,
            del: 0,
            text,
            order: 0,
            fast: None,
        });
    }

    for &idx in rebased {
        if guarded.contains(&idx) {
            continue; // rebased by the guard's rewrite
        }
        let Some(p) = k.params.get(idx as usize) else {
            continue;
        };
        let base = format!("__clpart_base_{}", p.name);
        extra_args.push(ExtraArg {
            name: base.clone(),
            meaning: ExtraArgMeaning::ArrayBase { arg_index: idx },
        });
        let mut local = Vec::new();
        let exact = rebase_uses(&k.body, &p.name, &base, src, &mut local);
        if exact {
            edits.extend(local);
        } else {
            // Fallback: rename the parameter and rebase the pointer once.
            let renamed = format!("__clpart_dev_{}", p.name);
            let name_at = find_name_in_span(src, &p.span, &p.name);
            match name_at {
                Some(at) => edits.push(Edit {
                    at,
                    del: p.name.len(),
                    text: renamed.clone(),
                    order: 500,
                    fast: None,
                }),
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
            let Some(which) = REWRITTEN.iter().position(|r| r == w) else {
                return;
            };
            let text = &src
                .get(e.span.start as usize..e.span.end as usize)
                .unwrap_or("");
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
            let dim_text = src
                .get(d.span.start as usize..d.span.end as usize)
                .unwrap_or("0")
                .to_string();
            let pick = |prefix: &str| -> String {
                if dims.len() == 1 {
                    format!("{prefix}{}", dims[0])
                } else {
                    format!("(({dim_text}) == 0 ? {prefix}0 : ({dim_text}) == 1 ? {prefix}1 : {prefix}2)")
                }
            };
            let new = match w {
                WorkItemFn::GroupId => format!(
                    "(get_group_id({dim_text}) + {})",
                    pick("__clpart_group_base")
                ),
                WorkItemFn::GlobalSize => format!("((size_t){})", pick("__clpart_global_size")),
                WorkItemFn::NumGroups => format!("((size_t){})", pick("__clpart_num_groups")),
                _ => format!("((size_t){})", pick("__clpart_global_offset")),
            };
            wi_edits.push(Edit {
                at: e.span.start as usize,
                del: (e.span.end - e.span.start) as usize,
                text: new,
                order: 500,
                fast: None,
            });
        }
    });
    // Builtins used through macros: mark every dimension of the NDRange as
    // needed (rewritten by #define; past `work_dim` they have OpenCL's
    // values, with no argument).
    if macro_use {
        for row in used.iter_mut() {
            for (d, u) in row.iter_mut().enumerate() {
                *u |= (d as u32) < work_dim;
            }
        }
    }
    edits.extend(wi_edits);
    let names = [
        "__clpart_group_base",
        "__clpart_global_size",
        "__clpart_num_groups",
        "__clpart_global_offset",
    ];
    for (which, name) in names.iter().enumerate() {
        for d in 0..3u32 {
            if used[which][d as usize] {
                let meaning = match which {
                    0 => ExtraArgMeaning::GroupIdBase(d),
                    1 => ExtraArgMeaning::GlobalSize(d),
                    2 => ExtraArgMeaning::NumGroups(d),
                    _ => ExtraArgMeaning::GlobalOffset(d),
                };
                extra_args.push(ExtraArg {
                    name: format!("{name}{d}"),
                    meaning,
                });
            }
        }
    }

    if !guarded.is_empty() {
        extra_args.push(ExtraArg {
            name: "__clpart_guard".into(),
            meaning: ExtraArgMeaning::GuardFlags,
        });
        // The work-item's private accumulator, flushed to the flag buffer
        // at every exit of the kernel.
        let flush = "__clpart_flush(__clpart_bad, __clpart_guard);";
        match (
            body_open_brace(src, k),
            src.as_bytes().get(k.span.end as usize - 1),
        ) {
            (Some(open), Some(b'}')) => {
                edits.push(Edit {
                    at: open + 1,
                    del: 0,
                    text: "\n    ulong __clpart_bad = 0;".into(),
                    order: 1,
                    fast: None,
                });
                edits.push(Edit {
                    at: k.span.end as usize - 1,
                    del: 0,
                    text: format!("    {flush}\n"),
                    order: 1000,
                    fast: None,
                });
                let mut returns = Vec::new();
                collect_returns(&k.body, &mut returns);
                for sp in returns {
                    // `return ...;` as written, not from a macro's expansion
                    // (whose span would send the braces elsewhere)
                    let semi = src.get(sp.end as usize..).and_then(|t| t.find(';'));
                    let written = src
                        .get(sp.start as usize..sp.end as usize)
                        .is_some_and(|t| t.starts_with("return"))
                        && semi.is_some_and(|n| {
                            src[sp.end as usize..sp.end as usize + n].trim().is_empty()
                        });
                    let Some(semi) = semi.filter(|_| written) else {
                        return Err(SubkernelError::MacroReturn {
                            file: program.file.clone(),
                            line: sp.line,
                            col: sp.col,
                        });
                    };
                    edits.push(Edit {
                        at: sp.start as usize,
                        del: 0,
                        text: format!("{{ {flush} "),
                        order: 0,
                        fast: None,
                    });
                    edits.push(Edit {
                        at: sp.end as usize + semi + 1,
                        del: 0,
                        text: " }".into(),
                        order: 1000,
                        fast: None,
                    });
                }
            }
            _ => return Err(SubkernelError::NoBody(k.name.clone())),
        }
    }
    // Extra parameters go after the last original parameter.
    let params_text: String = extra_args
        .iter()
        .map(|a| match a.meaning {
            ExtraArgMeaning::GuardFlags => format!("__global int *{}", a.name),
            _ => format!("long {}", a.name),
        })
        .collect::<Vec<_>>()
        .join(", ");
    if !params_text.is_empty() {
        let (at, text) = match k.params.last() {
            Some(p) => (p.span.end as usize, format!(", {params_text}")),
            None => (
                open_paren_after_name(src, k).unwrap_or(k.span.start as usize),
                params_text.clone(),
            ),
        };
        edits.push(Edit {
            at,
            del: 0,
            text,
            order: 500,
            fast: None,
        });
    }
    if !prologue.is_empty() {
        if let Some(at) = body_open_brace(src, k) {
            edits.push(Edit {
                at: at + 1,
                del: 0,
                text: format!("\n{prologue}"),
                order: 500,
                fast: None,
            });
        }
    }
    // At one position: replacements first, then insertions with the smaller
    // `order` ending up first in the text (outer prefixes before inner ones,
    // inner suffixes before outer ones).
    edits.sort_by(|a, b| {
        b.at.cmp(&a.at)
            .then(b.del.cmp(&a.del))
            .then(b.order.cmp(&a.order))
    });
    let group = group.borrow();
    let out = match versioned(src, k, &mut edits, &group) {
        Some(out) => out,
        None => apply(src, &edits, false),
    };
    let mut header = String::from("/* clpart subkernel: arrays rebased to their range, work-item builtins of the unsplit NDRange */\n");
    if !guarded.is_empty() {
        header.push_str(GUARD_HEADER);
        if viewed {
            header.push_str(VIEW_FNS);
        }
        if !box_dims.is_empty() {
            header.push_str(BOX_BIN);
        }
        // the plain functions serve writes, the parts' ones reads
        let plain: std::collections::BTreeSet<usize> = box_dims.iter().map(|&(m, _)| m).collect();
        for &m in &plain {
            header.push_str(&box_header(m, 0));
        }
        for &(m, parts) in box_dims.iter().filter(|&&(_, p)| p > 0) {
            header.push_str(&box_header(m, parts));
        }
    }
    if macro_use {
        // Per dimension: the extra argument, or past `work_dim` OpenCL's
        // value (group 0 of one, of size 1, at offset 0).
        let by_dim = |prefix: &str, past: &str| -> String {
            let v: Vec<String> = (0..3u32)
                .map(|d| {
                    if d < work_dim {
                        format!("{prefix}{d}")
                    } else {
                        past.to_string()
                    }
                })
                .collect();
            format!("((d) == 0 ? {} : (d) == 1 ? {} : {})", v[0], v[1], v[2])
        };
        header.push_str(&format!(
            "#define get_group_id(d) (get_group_id(d) + {})\n",
            by_dim("__clpart_group_base", "0")
        ));
        header.push_str(&format!(
            "#define get_global_size(d) ((size_t){})\n",
            by_dim("__clpart_global_size", "1")
        ));
        header.push_str(&format!(
            "#define get_num_groups(d) ((size_t){})\n",
            by_dim("__clpart_num_groups", "1")
        ));
        header.push_str(&format!(
            "#define get_global_offset(d) ((size_t){})\n",
            by_dim("__clpart_global_offset", "0")
        ));
    }
    Ok(Subkernel {
        name: k.name.clone(),
        source: header + &out,
        extra_args,
        guarded,
        unguarded,
        aligned,
    })
}

/// Applies `edits` (sorted as in [`rewrite`]) to `src`, with their fast
/// texts for the fast copy of the body.
fn apply(src: &str, edits: &[Edit], fast: bool) -> String {
    let mut out = src.to_string();
    for e in edits {
        if e.at + e.del <= out.len() {
            let text = if fast {
                e.fast.as_deref().unwrap_or(&e.text)
            } else {
                &e.text
            };
            out.replace_range(e.at..e.at + e.del, text);
        }
    }
    out
}

const BODY_BEGIN: &str = "/*@clpart body@*/";
const BODY_END: &str = "/*@clpart end@*/";

/// The kernel with its body in two copies (module [`group`]): the prologue's
/// per-work-group test picks the fast copy, where the proven accesses use
/// their plain rebased index, or the checked one. `None` when no access is
/// proven, or when the body's `__local` declarations cannot be moved in
/// front of the copies (they must stay at kernel scope).
fn versioned(
    src: &str,
    k: &Function,
    edits: &mut Vec<Edit>,
    group: &group::GroupCheck<'_>,
) -> Option<String> {
    // a copy of an unmodeled construct may not be valid twice (a label)
    if group.proven == 0 || !unsupported_texts(&k.body, src).is_empty() {
        return None;
    }
    let open = body_open_brace(src, k)?;
    let close = k.span.end as usize - 1;
    if src.as_bytes().get(close) != Some(&b'}') {
        return None;
    }
    // `__local` declarations: only at the top of the body, one per statement
    let mut hoisted = String::new();
    let mut moves = Vec::new();
    let mut nested_local = false;
    visit_decls(&k.body, 0, &mut |d, depth| {
        if d.space == AddrSpace::Local {
            if depth > 0 {
                nested_local = true;
                return;
            }
            let rest = src.get(d.span.end as usize..).unwrap_or("");
            match rest.find(';') {
                Some(semi) if rest[..semi].trim().is_empty() => {
                    let end = d.span.end as usize + semi + 1;
                    hoisted.push_str(&format!("    {}\n", &src[d.span.start as usize..end]));
                    moves.push(Edit {
                        at: d.span.start as usize,
                        del: end - d.span.start as usize,
                        text: String::new(),
                        order: 0,
                        fast: None,
                    });
                }
                _ => nested_local = true,
            }
        }
    });
    if nested_local {
        return None;
    }
    let mut all: Vec<Edit> = std::mem::take(edits);
    all.extend(moves);
    all.push(Edit {
        at: open + 1,
        del: 0,
        text: BODY_BEGIN.into(),
        order: 0,
        fast: None,
    });
    all.push(Edit {
        at: close,
        del: 0,
        text: BODY_END.into(),
        order: u32::MAX,
        fast: None,
    });
    all.sort_by(|a, b| {
        b.at.cmp(&a.at)
            .then(b.del.cmp(&a.del))
            .then(b.order.cmp(&a.order))
    });
    *edits = all;
    let checked = apply(src, edits, false);
    let fast = apply(src, edits, true);
    let body = |t: &str| -> Option<(usize, usize)> {
        let b = t.find(BODY_BEGIN)?;
        let e = t.rfind(BODY_END)?;
        (b < e).then_some((b, e))
    };
    let (cb, ce) = body(&checked)?;
    let (fb, fe) = body(&fast)?;
    let checked_body = &checked[cb + BODY_BEGIN.len()..ce];
    let fast_body = &fast[fb + BODY_BEGIN.len()..fe];
    Some(format!(
        "{}\n{hoisted}#ifndef CLPART_UNCHECKED\n    /* one test per work-group: every access below that the prologue bounds stays in its window */\n{}    if (__clpart_fast) {{\n#endif\n{fast_body}\n#ifndef CLPART_UNCHECKED\n    }} else {{\n{checked_body}\n    }}\n#endif\n{}",
        &checked[..cb],
        group.prologue(),
        &checked[ce + BODY_END.len()..]
    ))
}

/// Calls `f` on every declaration of `body` with its block depth.
fn visit_decls<'b>(body: &'b [Stmt], depth: u32, f: &mut dyn FnMut(&'b VarDecl, u32)) {
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

struct Edit {
    at: usize,
    del: usize,
    text: String,
    /// Among insertions at one position, smaller comes first in the text.
    order: u32,
    /// The text in the body's fast copy, when it differs (an access the
    /// per-work-group test proves: its plain rebased index).
    fast: Option<String>,
}

/// The guard's checks (see the module doc). `__clpart_r`/`__clpart_w`/
/// `__clpart_rw` check one element, `__clpart_rn`/`__clpart_wn` `n`
/// consecutive ones (vloadN/vstoreN); each returns the index to use.
const GUARD_HEADER: &str = r#"#ifdef CLPART_UNCHECKED
#define __clpart_r(i, lo, hi, len, bad, s) (i)
#define __clpart_w(i, lo, hi, len, bad, s) (i)
#define __clpart_rw(i, rlo, rhi, wlo, whi, len, bad, s) (i)
#define __clpart_rn(i, n, lo, hi, len, bad, s) (i)
#define __clpart_wn(i, n, lo, hi, len, bad, s) (i)
#define __clpart_flush(bad, f)
#else
/* Branch-free: a refused index goes to the sink (len) and sets the slot's
   bits in the work-item's private accumulator (1: outside the buffer,
   2: inside it but outside the window), flushed to the flag buffer once
   when the work-item ends. */
long __clpart_chk(long i, long n, long lo, long hi, long len, ulong *bad, int s) {
    int ok = (i >= lo) & (i <= hi - n);
    ulong oob = (ulong)((i < 0) | (i > len - n));
    *bad |= (ok ? 0UL : (2UL - oob)) << (2 * s);
    return ok ? i : len;
}
#define __clpart_r(i, lo, hi, len, bad, s) __clpart_chk((i), 1, (lo), (hi), (len), (bad), (s))
#define __clpart_w(i, lo, hi, len, bad, s) __clpart_chk((i), 1, (lo), (hi), (len), (bad), (s))
#define __clpart_rn(i, n, lo, hi, len, bad, s) __clpart_chk((i), (n), (lo), (hi), (len), (bad), (s))
#define __clpart_wn(i, n, lo, hi, len, bad, s) __clpart_chk((i), (n), (lo), (hi), (len), (bad), (s))
long __clpart_rw(long i, long rlo, long rhi, long wlo, long whi, long len, ulong *bad, int s) {
    return __clpart_chk(i, 1, rlo > wlo ? rlo : wlo, rhi < whi ? rhi : whi, len, bad, s);
}
void __clpart_flush(ulong bad, __global int *f) {
    if (bad) {
        atomic_or((volatile __global int *)f, (int)(uint)bad);
        atomic_or((volatile __global int *)f + 1, (int)(uint)(bad >> 32));
    }
}
/* The per-work-group test's arithmetic: exact, or *ok cleared on overflow. */
long __clpart_gadd(long a, long b, int *ok) {
    long s = (long)((ulong)a + (ulong)b);
    *ok &= ((a ^ s) & (b ^ s)) >= 0;
    return s;
}
long __clpart_gsub(long a, long b, int *ok) {
    long s = (long)((ulong)a - (ulong)b);
    *ok &= ((a ^ b) & (a ^ s)) >= 0;
    return s;
}
long __clpart_gmul(long a, long b, int *ok) {
    long p = (long)((ulong)a * (ulong)b);
    *ok &= mul_hi(a, b) == (p >> 63);
    return p;
}
#endif
"#;

/// The checks of views ([`View`]): `__clpart_valign` turns a
/// checked index of the first of `m` elements into the wider view's,
/// `__clpart_vsub` checks a narrower view's element against the element
/// holding it.
const VIEW_FNS: &str = r#"#ifdef CLPART_UNCHECKED
#define __clpart_valign(i, m, len, bad, s) ((i) / (m))
#define __clpart_vsub(e, m, lo, hi, len, bad, s, b) ((e) - (m) * (b))
#else
/* A view of elements m times wider: the checked index i (the
   first of m elements, or len when refused) in the view's elements; a
   buffer whose first element is not at a multiple of m cannot be viewed
   (bit 2). */
long __clpart_valign(long i, long m, long len, ulong *bad, int s) {
    int ok = (i % m) == 0;
    *bad |= (ok ? 0UL : 2UL) << (2 * s);
    return ok ? i / m : (len + m - 1) / m;
}
/* A view of elements m times narrower: view element e is part of element
   floor(e / m), checked; the result in the view's elements. */
long __clpart_vsub(long e, long m, long lo, long hi, long len, ulong *bad, int s, long b) {
    long r = ((e % m) + m) % m;
    return __clpart_chk((e - r) / m - b, 1, lo, hi, len, bad, s) * m + r;
}
#endif
"#;

/// The box check of one dimension: 1 when the component of
/// absolute element index `a` in a dimension of stride `st` and extent `ex`,
/// `(a / st) % ex`, lies in `[lo, hi]` (with the `n - 1` elements after it,
/// in the dimension of stride 1), or when the launch checks no box (`st`
/// is 0). Never divides by zero.
const BOX_BIN: &str = r#"#ifndef CLPART_UNCHECKED
int __clpart_bin(long a, long n, long st, long ex, long lo, long hi) {
    long c = (a / (st > 0 ? st : 1L)) % (ex > 0 ? ex : 1L);
    return (st == 0) | ((c >= lo) & (c + (st == 1 ? n - 1 : 0L) <= hi));
}
#endif
"#;

/// How an access uses the element.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    Write,
    ReadWrite,
}

/// A pointer that views a guarded buffer through elements of another type:
/// a local `T *v = (T *)a;` that is never assigned again, or
/// an inline cast `((T *)a)[i]`. Its subscripts are checked in the
/// parameter's elements: a view element `m` times larger covers `m`
/// consecutive ones, one `m` times smaller is part of one.
#[derive(Clone, Debug)]
struct View {
    /// The local pointer's name (the parameter's, for an inline cast).
    name: String,
    /// Its element type's spelling.
    pointee: String,
    scale: Scale,
}

/// How a view's elements relate to the parameter's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scale {
    /// The same size: element `i` is element `i`.
    Same,
    /// View element `i` is parameter elements `m*i .. m*i + m - 1`.
    Wider(u32),
    /// View element `i` is part of parameter element `floor(i / m)`.
    Narrower(u32),
}

/// The widest view: a refused access goes to the sink at the first
/// multiple of `m` at or after the buffer's end, and its `m` elements must
/// fit in the sink's [`GUARD_SINK_ELEMENTS`].
const WIDEST_VIEW: u32 = 8;

/// Elements in the sink past each guarded buffer (the launcher's
/// `GUARD_SINK`, which must not be smaller).
const GUARD_SINK_ELEMENTS: u32 = 16;

// a refused access of the widest view ends at most `2m - 2` elements past
// the buffer's end
const _: () = assert!(2 * WIDEST_VIEW - 2 < GUARD_SINK_ELEMENTS);

fn lcm(a: u32, b: u32) -> u32 {
    let gcd = |mut x: u32, mut y: u32| {
        while y != 0 {
            (x, y) = (y, x % y);
        }
        x
    };
    a / gcd(a, b) * b
}

/// The scale of a view of `view`-byte elements over `param`-byte ones.
fn scale_of(param: u32, view: u32) -> Option<Scale> {
    if param == 0 || view == 0 {
        None
    } else if param == view {
        Some(Scale::Same)
    } else if view % param == 0 && view / param <= WIDEST_VIEW {
        Some(Scale::Wider(view / param))
    } else if param % view == 0 {
        Some(Scale::Narrower(param / view))
    } else {
        None
    }
}

/// The box check of one guarded array.
#[derive(Clone, Debug)]
struct BoxSpec {
    /// Per checked dimension `k = 1..dims`, the name whose value is its
    /// extent, when the strides' texts nest (see [`extent_names`]): what the
    /// per-work-group test proves subscripts against.
    extent_names: Option<Vec<String>>,
    /// Delinearized dimensions (at least 2); dimensions `1..dims` are checked.
    dims: usize,
    /// Read parts: a read must lie in one of them too.
    parts: usize,
}

/// The extent of each dimension `k >= 1` as one name, from stride texts
/// that are products of names (`["nx*ny", "nx", "1"]`: `["ny", "nx"]`), or
/// as an integer literal from literal strides (`["1000", "1"]`:
/// `["1000"]`); `None` when they do not nest that way.
fn extent_names(strides: &[String]) -> Option<Vec<String>> {
    // literal strides (`["1000", "1"]`): the extents are their ratios
    let literal: Option<Vec<i64>> = strides.iter().map(|s| s.trim().parse().ok()).collect();
    if let Some(v) = literal {
        return (1..v.len())
            .map(|k| {
                (v[k] >= 1 && v[k - 1] >= v[k] && v[k - 1] % v[k] == 0)
                    .then(|| (v[k - 1] / v[k]).to_string())
            })
            .collect();
    }
    let factors = |s: &str| -> Option<Vec<String>> {
        if s.trim() == "1" {
            return Some(Vec::new());
        }
        let mut f: Vec<String> = s.split('*').map(|x| x.trim().to_string()).collect();
        if f.iter().any(|x| {
            x.is_empty()
                || !x.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                || x.starts_with(|c: char| c.is_ascii_digit())
        }) {
            return None;
        }
        f.sort();
        Some(f)
    };
    let mut out = Vec::new();
    for k in 1..strides.len() {
        let (mut outer, inner) = (factors(&strides[k - 1])?, factors(&strides[k])?);
        for x in &inner {
            let at = outer.iter().position(|y| y == x)?;
            outer.remove(at);
        }
        if outer.len() != 1 {
            return None;
        }
        out.push(outer.remove(0));
    }
    Some(out)
}

/// The box-check arguments of array `n` (argument `idx`) with box check
/// `b`, in order: per dimension `k >= 1`, its stride, extent, read bounds
/// and write bounds; then per read part, per dimension `k >= 0`, its lower
/// and upper bound (dimension 0: the part's linear window).
fn box_args(n: &str, b: &BoxSpec, idx: u32) -> Vec<(String, ExtraArgMeaning)> {
    let dims = b.dims;
    let mut out = Vec::new();
    for k in 1..dims {
        let dim = k as u32;
        let a = idx;
        out.push((
            format!("__clpart_bs{k}_{n}"),
            ExtraArgMeaning::BoxStride { arg_index: a, dim },
        ));
        out.push((
            format!("__clpart_be{k}_{n}"),
            ExtraArgMeaning::BoxExtent { arg_index: a, dim },
        ));
        out.push((
            format!("__clpart_brl{k}_{n}"),
            ExtraArgMeaning::BoxReadLo { arg_index: a, dim },
        ));
        out.push((
            format!("__clpart_brh{k}_{n}"),
            ExtraArgMeaning::BoxReadHi { arg_index: a, dim },
        ));
        out.push((
            format!("__clpart_bwl{k}_{n}"),
            ExtraArgMeaning::BoxWriteLo { arg_index: a, dim },
        ));
        out.push((
            format!("__clpart_bwh{k}_{n}"),
            ExtraArgMeaning::BoxWriteHi { arg_index: a, dim },
        ));
    }
    for p in 0..b.parts {
        let part = p as u32;
        for k in 0..dims {
            let dim = k as u32;
            out.push((
                format!("__clpart_ppl{p}_{k}_{n}"),
                ExtraArgMeaning::BoxPartLo {
                    arg_index: idx,
                    part,
                    dim,
                },
            ));
            out.push((
                format!("__clpart_pph{p}_{k}_{n}"),
                ExtraArgMeaning::BoxPartHi {
                    arg_index: idx,
                    part,
                    dim,
                },
            ));
        }
    }
    out
}

/// The box check functions for `m` checked dimensions (see the module doc):
/// `__clpart_bchk<m>` (one access of `n` elements) and `__clpart_brw<m>`
/// (a read-modify-write: both windows and both boxes); with `parts` read
/// parts, `__clpart_bchkp<m>_<parts>` and
/// `__clpart_brwp<m>_<parts>`, whose read must also lie in some part (its
/// linear window and its bounds in every dimension `k >= 1`) when the
/// launch checks boxes.
fn box_header(m: usize, parts: usize) -> String {
    if parts > 0 {
        return box_parts_header(m, parts);
    }
    let BoxLists {
        one,
        one_decl,
        rw,
        rw_decl,
        both,
        inside,
    } = BoxLists::new(m, "", "");
    let mut out = String::new();
    out.push_str(&format!(
        "#ifdef CLPART_UNCHECKED
#define __clpart_bchk{m}(i, n, lo, hi, len, bad, s, b{one}) (i)
#define __clpart_brw{m}(i, rlo, rhi, wlo, whi, len, bad, s, b{rw}) (i)
#else
"
    ));
    out.push_str(&format!(
        "long __clpart_bchk{m}(long i, long n, long lo, long hi, long len, ulong *bad, int s, long b{one_decl}) {{
    long a = (long)((ulong)i + (ulong)b);
    int ok = (i >= lo) & (i <= hi - n){inside};
    ulong oob = (ulong)((i < 0) | (i > len - n));
    *bad |= (ok ? 0UL : (2UL - oob)) << (2 * s);
    return ok ? i : len;
}}
long __clpart_brw{m}(long i, long rlo, long rhi, long wlo, long whi, long len, ulong *bad, int s, long b{rw_decl}) {{
    return __clpart_bchk{m}(i, 1, max(rlo, wlo), min(rhi, whi), len, bad, s, b{both});
}}
#endif
"
    ));
    out
}

/// The argument lists of the box check functions with `m` checked
/// dimensions, each after a comma when not empty (to follow the leading
/// arguments) and ending in the read parts' arguments given (`pargs`, and
/// `pdecl` for the declarations); `inside`, the box test of every
/// dimension.
struct BoxLists {
    one: String,
    one_decl: String,
    rw: String,
    rw_decl: String,
    both: String,
    inside: String,
}

impl BoxLists {
    fn new(m: usize, pargs: &str, pdecl: &str) -> BoxLists {
        let both = (1..=m)
            .map(|k| format!("st{k}, ex{k}, max(rlo{k}, wlo{k}), min(rhi{k}, whi{k})"))
            .collect::<Vec<_>>()
            .join(", ");
        BoxLists {
            one: cat(&[&box_list(m, &["st", "ex", "lo", "hi"], ""), pargs]),
            one_decl: cat(&[&box_list(m, &["st", "ex", "lo", "hi"], "long "), pdecl]),
            rw: cat(&[
                &box_list(m, &["st", "ex", "rlo", "rhi", "wlo", "whi"], ""),
                pargs,
            ]),
            rw_decl: cat(&[
                &box_list(m, &["st", "ex", "rlo", "rhi", "wlo", "whi"], "long "),
                pdecl,
            ]),
            both: cat(&[&both, pargs]),
            inside: (1..=m)
                .map(|k| format!(" & __clpart_bin(a, n, st{k}, ex{k}, lo{k}, hi{k})"))
                .collect(),
        }
    }
}

/// The names `<name>k` of box dimensions `1..=m`, per dimension in the
/// order of `names`, each after `ty` (`"long "` for declarations).
fn box_list(m: usize, names: &[&str], ty: &str) -> String {
    (1..=m)
        .map(|k| {
            names
                .iter()
                .map(|n| format!("{ty}{n}{k}"))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The non-empty lists of `parts`, each after a comma (to follow a
/// function's leading arguments; empty when all are).
fn cat(parts: &[&str]) -> String {
    parts
        .iter()
        .filter(|p| !p.is_empty())
        .map(|p| format!(", {p}"))
        .collect()
}

/// [`box_header`] with read parts. Without box-checked dimensions (`m` 0:
/// the read runs of a 1-D array) the check is off when part 0 is `[0, 0)`,
/// which a launch without parts passes (every part argument 0); a launch
/// with parts always has a non-empty part 0 (its read window when no part
/// is left).
fn box_parts_header(m: usize, parts: usize) -> String {
    let part_names = |p: usize| {
        (0..=m)
            .map(|k| format!("pl{p}_{k}, ph{p}_{k}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let pargs = (0..parts).map(part_names).collect::<Vec<_>>().join(", ");
    let pdecl = (0..parts)
        .map(|p| {
            (0..=m)
                .map(|k| format!("long pl{p}_{k}, long ph{p}_{k}"))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect::<Vec<_>>()
        .join(", ");
    let in_part = (0..parts)
        .map(|p| {
            let dims = (1..=m)
                .map(|k| format!(" & __clpart_bin(a, n, st{k}, ex{k}, pl{p}_{k}, ph{p}_{k})"))
                .collect::<String>();
            format!(" | ((i >= pl{p}_0) & (i <= ph{p}_0 - n){dims})")
        })
        .collect::<String>();
    let off = if m == 0 { "(ph0_0 == 0)" } else { "(st1 == 0)" };
    let BoxLists {
        one,
        one_decl,
        rw,
        rw_decl,
        both,
        inside,
    } = BoxLists::new(m, &pargs, &pdecl);
    format!(
        "#ifdef CLPART_UNCHECKED
#define __clpart_bchkp{m}_{parts}(i, n, lo, hi, len, bad, s, b{one}) (i)
#define __clpart_brwp{m}_{parts}(i, rlo, rhi, wlo, whi, len, bad, s, b{rw}) (i)
#else
long __clpart_bchkp{m}_{parts}(long i, long n, long lo, long hi, long len, ulong *bad, int s, long b{one_decl}) {{
    long a = (long)((ulong)i + (ulong)b);
    int part = {off}{in_part};
    int ok = (i >= lo) & (i <= hi - n){inside} & part;
    ulong oob = (ulong)((i < 0) | (i > len - n));
    *bad |= (ok ? 0UL : (2UL - oob)) << (2 * s);
    return ok ? i : len;
}}
long __clpart_brwp{m}_{parts}(long i, long rlo, long rhi, long wlo, long whi, long len, ulong *bad, int s, long b{rw_decl}) {{
    return __clpart_bchkp{m}_{parts}(i, 1, max(rlo, wlo), min(rhi, whi), len, bad, s, b{both});
}}
#endif
"
    )
}

/// Rewrites every access of one buffer parameter into a guarded one, or
/// records why it cannot.
struct Guarder<'a> {
    /// The array's box check, when it has one.
    boxes: Option<BoxSpec>,
    /// The pointer's name in the code walked (the kernel parameter, or the
    /// helper parameter it is passed to).
    name: &'a str,
    /// The kernel parameter's name: the suffix of the extra arguments.
    tag: &'a str,
    /// The program, when helpers taking the pointer may be cloned (not
    /// inside a clone).
    program: Option<&'a Program>,
    /// Every buffer parameter of the kernel.
    buffers: &'a [String],
    /// Guarded clones of helpers (name, text).
    clones: Vec<(String, String)>,
    /// The parameter's element type spelling (implicit pointer conversions
    /// to the same element type are looked through).
    pointee: Option<String>,
    /// The parameter's element size in bytes.
    elem_size: Option<u32>,
    /// Local pointers that view the parameter's buffer through a cast
    /// (`__global float4 *x4 = (__global float4 *)x;`), found by
    /// [`Guarder::find_views`] when the walk starts.
    views: Vec<View>,
    /// The multiple of elements the device buffer must start at: the
    /// least common multiple of the wider views' scales (1 without one).
    align: u32,
    /// An access through a view was rewritten (here or in a helper's clone).
    viewed: bool,
    slot: usize,
    src: &'a str,
    edits: Vec<Edit>,
    failure: Option<String>,
    /// Spans of the uses of the parameter that were rewritten.
    handled: Vec<(u32, u32)>,
    /// The per-work-group test (in the kernel, not in helper clones).
    group: Option<&'a RefCell<group::GroupCheck<'a>>>,
    /// Conditions known to hold (true) or not (false) where the walk is.
    conds: Vec<(bool, &'a Expr)>,
}

/// The block always leaves by `return`, `continue` or `break` at its end.
fn ends_in_jump(body: &[Stmt]) -> bool {
    match body.last() {
        Some(Stmt::Return(..) | Stmt::Continue(_) | Stmt::Break(_)) => true,
        Some(Stmt::Block(b)) => ends_in_jump(b),
        _ => false,
    }
}

/// An access's check: `head` and `tail` around the index; `fast`, the same
/// for the fast copy of the body (plain rebased index) when proven per
/// work-group.
struct Check {
    head: String,
    tail: String,
    fast: Option<(String, String)>,
}

impl Check {
    fn fast_parts(&self) -> (Option<String>, Option<String>) {
        match &self.fast {
            Some((h, t)) => (Some(h.clone()), Some(t.clone())),
            None => (None, None),
        }
    }
}

impl<'a> Guarder<'a> {
    /// Rewrites every access of the pointer in `body` (a kernel's or a
    /// helper's); the reason it cannot be guarded, if any: a use the walk
    /// could not rewrite, any other use of the pointer, or a mention inside
    /// a construct the IR does not model (`hidden`, from [`unsupported_texts`]).
    fn guard_body(
        &mut self,
        body: &'a [Stmt],
        hidden: &[(String, Span)],
        file: &str,
    ) -> Option<String> {
        self.views = self.find_views(body);
        self.stmts(body, 0);
        if let Some(f) = self.failure.take() {
            return Some(f);
        }
        let mut other = None;
        visit_exprs(body, &mut |e| {
            if let ExprKind::Var(n) = &e.kind {
                if other.is_some() || self.handled.contains(&(e.span.start, e.span.end)) {
                    return;
                }
                if n == self.name {
                    other = Some(format!(
                        "'{n}' is used other than by subscript at {file}:{}:{}",
                        e.span.line, e.span.col
                    ));
                } else if self.views.iter().any(|v| &v.name == n) {
                    other = Some(format!(
                        "'{n}', a view of '{}', is used other than by subscript at {file}:{}:{}",
                        self.name, e.span.line, e.span.col
                    ));
                }
            }
        });
        other.or_else(|| {
            let names =
                std::iter::once(self.name).chain(self.views.iter().map(|v| v.name.as_str()));
            let names: Vec<&str> = names.collect();
            hidden.iter().find_map(|(t, sp)| {
                names.iter().find(|n| mentions(t, n)).map(|n| {
                    format!(
                        "'{n}' appears in a construct clpart does not model at {file}:{}:{}",
                        sp.line, sp.col
                    )
                })
            })
        })
    }

    /// The parameter itself under any casts (`(T *)(U *)a`).
    fn param_through_casts<'e>(&self, e: &'e Expr) -> Option<&'e Expr> {
        match &e.kind {
            ExprKind::Var(n) if n == self.name => Some(e),
            ExprKind::Cast(inner) => self.param_through_casts(inner),
            _ => None,
        }
    }

    /// The local pointers of `body` that view the parameter: declared once
    /// (no other declaration or parameter of that name), initialized with
    /// the parameter under casts, never assigned, stepped or addressed
    /// afterwards, with elements of a size that scales to the parameter's.
    fn find_views(&self, body: &[Stmt]) -> Vec<View> {
        let Some(param_size) = self.elem_size else {
            return Vec::new();
        };
        let mut all = Vec::new();
        decls(body, &mut all);
        let mut views = Vec::new();
        for d in &all {
            let (Some(init), Type::Pointer { pointee, .. }) = (&d.init, &d.ty) else {
                continue;
            };
            if self.param_through_casts(init).is_none()
                || d.name == self.name
                || self.buffers.contains(&d.name)
                || all.iter().filter(|o| o.name == d.name).count() != 1
                || changed_or_addressed(body, &d.name)
            {
                continue;
            }
            if let Some(scale) = pointee.size().and_then(|q| scale_of(param_size, q)) {
                views.push(View {
                    name: d.name.clone(),
                    pointee: pointee.name(),
                    scale,
                });
            }
        }
        views
    }

    /// `b`, the pointer of a subscript, is a view of the parameter: the
    /// variable naming the pointer, and the view.
    fn view_use<'e>(&self, b: &'e Expr) -> Option<(&'e Expr, View)> {
        match &b.kind {
            ExprKind::Var(n) => self
                .views
                .iter()
                .find(|v| &v.name == n)
                .map(|v| (b, v.clone())),
            ExprKind::Cast(inner) => {
                let Type::Pointer { pointee, .. } = &b.ty else {
                    return None;
                };
                if let Some((v, view)) = self.view_use(inner) {
                    // an implicit conversion of the view to its own type
                    return (view.pointee == pointee.name()).then_some((v, view));
                }
                let v = self.param_through_casts(inner)?;
                if Some(pointee.name()) == self.pointee {
                    return None; // the parameter's own type: `param_use`
                }
                let scale = pointee
                    .size()
                    .zip(self.elem_size)
                    .and_then(|(q, p)| scale_of(p, q))?;
                Some((
                    v,
                    View {
                        name: self.name.to_string(),
                        pointee: pointee.name(),
                        scale,
                    },
                ))
            }
            _ => None,
        }
    }

    /// `v[i]` through a view (`e`): the index is checked in the
    /// parameter's elements and turned back into the view's.
    fn view_access(
        &mut self,
        e: &Expr,
        (v, view): (&Expr, View),
        i: &Expr,
        access: Access,
        depth: u32,
    ) {
        if self.text(&v.span).map(str::trim) != Some(view.name.as_str())
            || self.text(&i.span).is_none()
            || !apart(&v.span, &i.span)
        {
            return self.fail(e, "a subscript inside a macro expansion");
        }
        let nm = self.tag;
        let (base, len) = (format!("__clpart_base_{nm}"), format!("__clpart_len_{nm}"));
        let bad = self.flag_args();
        // no fast copy: the per-work-group test proves windows, not the
        // alignment a wider view needs
        let group = self.group.take();
        let checked = match view.scale {
            Scale::Same => {
                let c = self.check_call(access, None, group::Index::Expr(i));
                Some((c.head, c.tail))
            }
            Scale::Wider(m) => {
                self.align = lcm(self.align, m);
                let n = m.to_string();
                let one = |g: &Self, a| g.check_call(a, Some(&n), group::Index::Expr(i));
                let (h, t) = match access {
                    Access::ReadWrite => {
                        // the write window's check inside the read window's
                        let (w, r) = (one(self, Access::Write), one(self, Access::Read));
                        (
                            format!("{}{}", r.head, w.head),
                            format!("{} + {base}{}", w.tail, r.tail),
                        )
                    }
                    a => {
                        let c = one(self, a);
                        (c.head, c.tail)
                    }
                };
                Some((
                    format!("__clpart_valign({h}(long){m} * (long)("),
                    format!("){t}, {m}, {len}, {bad})"),
                ))
            }
            Scale::Narrower(_) if self.boxes.is_some() => None,
            Scale::Narrower(m) => {
                let win = match access {
                    Access::Read => format!("__clpart_rlo_{nm}, __clpart_rhi_{nm}"),
                    Access::Write => format!("__clpart_wlo_{nm}, __clpart_whi_{nm}"),
                    Access::ReadWrite => format!(
                        "max(__clpart_rlo_{nm}, __clpart_wlo_{nm}), min(__clpart_rhi_{nm}, __clpart_whi_{nm})"
                    ),
                };
                Some((
                    "__clpart_vsub((long)(".to_string(),
                    format!("), {m}, {win}, {len}, {bad}, {base})"),
                ))
            }
        };
        self.group = group;
        let Some((head, tail)) = checked else {
            return self.fail(
                e,
                &format!(
                    "'{}' views it as smaller elements ('{}') while its ranges are boxes",
                    view.name, view.pointee
                ),
            );
        };
        self.viewed = true;
        self.handled.push((v.span.start, v.span.end));
        self.edits.push(Edit {
            at: i.span.start as usize,
            del: 0,
            text: head,
            order: depth,
            fast: None,
        });
        self.edits.push(Edit {
            at: i.span.end as usize,
            del: 0,
            text: tail,
            order: 1000 - depth,
            fast: None,
        });
        self.expr(i, Access::Read, depth + 1);
    }

    fn fail(&mut self, e: &Expr, what: &str) {
        if self.failure.is_none() {
            self.failure = Some(format!(
                "'{}': {what} at line {}:{}",
                self.name, e.span.line, e.span.col
            ));
        }
    }

    /// `e` names the parameter (through implicit same-type pointer conversions).
    fn param_use<'e>(&self, e: &'e Expr) -> Option<&'e Expr> {
        match &e.kind {
            ExprKind::Var(n) if n == self.name => Some(e),
            ExprKind::Cast(inner) => {
                let same = match (&e.ty, &self.pointee) {
                    (Type::Pointer { pointee, .. }, Some(p)) => &pointee.name() == p,
                    _ => false,
                };
                if same {
                    self.param_use(inner)
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// The use of the parameter in a pointer expression `a + k1 - k2 + ...`
    /// (the parameter as the pointer operand of a chain of additions and
    /// subtractions of integers).
    fn offset_chain<'e>(&self, e: &'e Expr) -> Option<&'e Expr> {
        if let Some(p) = self.param_use(e) {
            return Some(p);
        }
        match &e.kind {
            ExprKind::Binary(BinOp::Add, l, r) => {
                if matches!(l.ty, Type::Pointer { .. }) {
                    self.offset_chain(l).filter(|_| !self.mentions_param(r))
                } else {
                    self.offset_chain(r).filter(|_| !self.mentions_param(l))
                }
            }
            ExprKind::Binary(BinOp::Sub, l, r)
                if matches!(l.ty, Type::Pointer { .. })
                    && !matches!(r.ty, Type::Pointer { .. }) =>
            {
                self.offset_chain(l).filter(|_| !self.mentions_param(r))
            }
            _ => None,
        }
    }

    fn mentions_param(&self, e: &Expr) -> bool {
        let mut found = false;
        visit_expr(e, &mut |x| {
            found |= matches!(&x.kind, ExprKind::Var(n) if n == self.name)
        });
        found
    }

    /// Visits the offsets of a pointer chain (see [`Self::offset_chain`]).
    fn expr_skipping_param(&mut self, e: &Expr, depth: u32) {
        if self.param_use(e).is_some() {
            return;
        }
        match &e.kind {
            ExprKind::Binary(_, l, r) => {
                self.expr_skipping_param(l, depth);
                self.expr_skipping_param(r, depth);
            }
            _ => self.expr(e, Access::Read, depth),
        }
    }

    fn text(&self, sp: &Span) -> Option<&str> {
        if sp.end <= sp.start {
            return None;
        }
        self.src.get(sp.start as usize..sp.end as usize)
    }

    /// The check functions' last two arguments: the accumulator of refused
    /// accesses (in the kernel the private one, in a helper clone its
    /// pointer) and the parameter's slot.
    fn flag_args(&self) -> String {
        let s = self.slot;
        if self.program.is_some() {
            format!("&__clpart_bad, {s}")
        } else {
            format!("__clpart_badp, {s}")
        }
    }

    /// The check around an access's index (`head`, `tail`), and the plain
    /// rebased index for the fast copy of the body when the per-work-group
    /// test proves the access.
    fn check_call(&self, access: Access, n: Option<&str>, index: group::Index<'_>) -> Check {
        let nm = self.tag;
        let fast = self.group.and_then(|g| {
            let win =
                |lo: &str, hi: &str| (format!("__clpart_{lo}_{nm}"), format!("__clpart_{hi}_{nm}"));
            let bounds = match access {
                Access::Read => vec![win("rlo", "rhi")],
                Access::Write => vec![win("wlo", "whi")],
                Access::ReadWrite => vec![win("rlo", "rhi"), win("wlo", "whi")],
            };
            let boxes = self.boxes.as_ref().map(|b| {
                let dims = 1..b.dims;
                let bwin = |k: usize, lo: &str, hi: &str| {
                    (
                        format!("__clpart_{lo}{k}_{nm}"),
                        format!("__clpart_{hi}{k}_{nm}"),
                    )
                };
                let reads = matches!(access, Access::Read | Access::ReadWrite);
                group::GroupBox {
                    parts: (0..if reads { b.parts } else { 0 })
                        .map(|p| {
                            let part = |k: usize| {
                                (
                                    format!("__clpart_ppl{p}_{k}_{nm}"),
                                    format!("__clpart_pph{p}_{k}_{nm}"),
                                )
                            };
                            (part(0), (1..b.dims).map(part).collect())
                        })
                        .collect(),
                    extent_names: b.extent_names.clone(),
                    strides: dims
                        .clone()
                        .map(|k| format!("__clpart_bs{k}_{nm}"))
                        .collect(),
                    extents: dims
                        .clone()
                        .map(|k| format!("__clpart_be{k}_{nm}"))
                        .collect(),
                    bounds: dims
                        .map(|k| match access {
                            Access::Read => vec![bwin(k, "brl", "brh")],
                            Access::Write => vec![bwin(k, "bwl", "bwh")],
                            Access::ReadWrite => vec![bwin(k, "brl", "brh"), bwin(k, "bwl", "bwh")],
                        })
                        .collect(),
                }
            });
            let w = group::Window {
                base: format!("__clpart_base_{nm}"),
                bounds,
                n: n.and_then(|n| n.parse().ok()).unwrap_or(1),
                ptr: self.name,
                boxes,
            };
            g.borrow_mut()
                .access(index, &w, &self.conds)
                .then(|| ("((long)(".to_string(), format!(") - __clpart_base_{nm})")))
        });
        let f = self.flag_args();
        let (r, w) = (
            format!("__clpart_rlo_{nm}, __clpart_rhi_{nm}"),
            format!("__clpart_wlo_{nm}, __clpart_whi_{nm}"),
        );
        if let Some(b) = &self.boxes {
            // the box-checked forms: the absolute index's components too
            let m = b.dims - 1;
            let dims =
                |f: &dyn Fn(usize) -> String| (1..b.dims).map(f).collect::<Vec<_>>().join(", ");
            let rbox = cat(&[&dims(&|k| {
                format!("__clpart_bs{k}_{nm}, __clpart_be{k}_{nm}, __clpart_brl{k}_{nm}, __clpart_brh{k}_{nm}")
            })]);
            let wbox = cat(&[&dims(&|k| {
                format!("__clpart_bs{k}_{nm}, __clpart_be{k}_{nm}, __clpart_bwl{k}_{nm}, __clpart_bwh{k}_{nm}")
            })]);
            let rwbox = cat(&[&dims(&|k| {
                format!("__clpart_bs{k}_{nm}, __clpart_be{k}_{nm}, __clpart_brl{k}_{nm}, __clpart_brh{k}_{nm}, __clpart_bwl{k}_{nm}, __clpart_bwh{k}_{nm}")
            })]);
            let base = format!("__clpart_base_{nm}");
            let len = format!("__clpart_len_{nm}");
            let count = n.unwrap_or("1");
            // the read parts' arguments, and the suffix of the functions that take them
            let (pargs, psuffix) = if b.parts > 0 {
                let names = (0..b.parts)
                    .flat_map(|p| {
                        (0..b.dims).map(move |k| {
                            format!(", __clpart_ppl{p}_{k}_{nm}, __clpart_pph{p}_{k}_{nm}")
                        })
                    })
                    .collect::<String>();
                (names, format!("p{m}_{}", b.parts))
            } else {
                (String::new(), m.to_string())
            };
            let (head, tail) = match access {
                Access::ReadWrite if n.is_none() => (
                    format!("__clpart_brw{psuffix}((long)("),
                    format!(") - {base}, {r}, {w}, {len}, {f}, {base}{rwbox}{pargs})"),
                ),
                Access::Read => (
                    format!("__clpart_bchk{psuffix}((long)("),
                    format!(") - {base}, {count}, {r}, {len}, {f}, {base}{rbox}{pargs})"),
                ),
                _ => (
                    format!("__clpart_bchk{m}((long)("),
                    format!(") - {base}, {count}, {w}, {len}, {f}, {base}{wbox})"),
                ),
            };
            return Check { head, tail, fast };
        }
        let head = match (access, n) {
            (Access::Read, None) => "__clpart_r((long)(".to_string(),
            (Access::Write, None) => "__clpart_w((long)(".to_string(),
            (Access::ReadWrite, None) => "__clpart_rw((long)(".to_string(),
            (Access::Read, Some(_)) => "__clpart_rn((long)(".to_string(),
            (_, Some(_)) => "__clpart_wn((long)(".to_string(),
        };
        let tail = match (access, n) {
            (Access::Read, None) => format!(") - __clpart_base_{nm}, {r}, __clpart_len_{nm}, {f})"),
            (Access::Write, None) => {
                format!(") - __clpart_base_{nm}, {w}, __clpart_len_{nm}, {f})")
            }
            (Access::ReadWrite, None) => {
                format!(") - __clpart_base_{nm}, {r}, {w}, __clpart_len_{nm}, {f})")
            }
            (Access::Read, Some(n)) => {
                format!(") - __clpart_base_{nm}, {n}, {r}, __clpart_len_{nm}, {f})")
            }
            (_, Some(n)) => format!(") - __clpart_base_{nm}, {n}, {w}, __clpart_len_{nm}, {f})"),
        };
        Check { head, tail, fast }
    }

    /// Wraps the index expression `i` of an access in its check.
    fn wrap_index(&mut self, i: &Expr, access: Access, depth: u32) {
        let c = self.check_call(access, None, group::Index::Expr(i));
        let (fh, ft) = c.fast_parts();
        self.edits.push(Edit {
            at: i.span.start as usize,
            del: 0,
            text: c.head,
            order: depth,
            fast: fh,
        });
        self.edits.push(Edit {
            at: i.span.end as usize,
            del: 0,
            text: c.tail,
            order: 1000 - depth,
            fast: ft,
        });
    }

    fn stmts(&mut self, body: &'a [Stmt], depth: u32) {
        let known = self.conds.len();
        for s in body {
            self.stmt(s, depth);
            // `if (c) return;` (or `continue`/`break`): !c holds for the
            // rest of the block
            if let Stmt::If {
                cond,
                then,
                els: None,
                ..
            } = s
            {
                if ends_in_jump(then) {
                    self.conds.push((false, cond));
                }
            }
        }
        self.conds.truncate(known);
    }

    fn stmt(&mut self, s: &'a Stmt, depth: u32) {
        match s {
            Stmt::Decl(d) => match &d.init {
                // a view's declaration: the buffer's pointer, not an access
                Some(e) if self.views.iter().any(|v| v.name == d.name) => {
                    let p = self.param_through_casts(e).expect("a view's initializer");
                    self.handled.push((p.span.start, p.span.end));
                }
                Some(e) => self.expr(e, Access::Read, depth),
                None => {}
            },
            Stmt::Expr(e) => self.expr(e, Access::Read, depth),
            Stmt::If {
                cond, then, els, ..
            } => {
                self.expr(cond, Access::Read, depth);
                self.conds.push((true, cond));
                self.stmts(then, depth);
                self.conds.pop();
                if let Some(e) = els {
                    self.conds.push((false, cond));
                    self.stmts(e, depth);
                    self.conds.pop();
                }
            }
            Stmt::For {
                init,
                cond,
                step,
                body,
                ..
            } => {
                if let Some(i) = init {
                    self.stmt(i, depth);
                }
                if let Some(c) = cond {
                    self.expr(c, Access::Read, depth);
                }
                if let Some(st) = step {
                    self.expr(st, Access::Read, depth);
                }
                self.stmts(body, depth);
            }
            Stmt::While { cond, body, .. } => {
                self.expr(cond, Access::Read, depth);
                self.stmts(body, depth);
            }
            Stmt::Block(b) => self.stmts(b, depth),
            Stmt::Return(Some(e), _) => self.expr(e, Access::Read, depth),
            Stmt::Barrier(_)
            | Stmt::Return(None, _)
            | Stmt::Break(_)
            | Stmt::Continue(_)
            | Stmt::Unsupported(..) => {}
        }
    }

    /// Visits `e`, an expression used as `access` (an lvalue context for
    /// `Write`/`ReadWrite`).
    fn expr(&mut self, e: &Expr, access: Access, depth: u32) {
        if self.failure.is_some() {
            return;
        }
        match &e.kind {
            ExprKind::Index(b, i) => {
                if let Some(view) = self.view_use(b) {
                    self.view_access(e, view, i, access, depth);
                } else if let Some(v) = self.param_use(b) {
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
                    self.expr(b, Access::Read, depth + 1);
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

impl<'a> Guarder<'a> {
    /// `helper(..., a, ...)`: the call goes to a clone of the helper whose
    /// accesses through that parameter are guarded with the kernel
    /// parameter's window (extra arguments appended to the call).
    fn helper_call(&mut self, e: &Expr, f: &str, args: &[Expr], depth: u32) {
        let Some(program) = self.program else {
            return self.fail(e, "passed on from a helper to another function");
        };
        let Some(helper) = program.function(f).filter(|h| !h.is_kernel) else {
            return self.fail(e, &format!("passed to '{f}'"));
        };
        if let Some(d) = shadowing(helper) {
            return self.fail(
                e,
                &format!(
                    "passed to helper '{f}', where variable '{}' at {}:{} shadows its parameter",
                    d.name, d.span.line, d.span.col
                ),
            );
        }
        let positions: Vec<usize> = (0..args.len())
            .filter(|&i| self.param_use(&args[i]).is_some())
            .collect();
        // another buffer passed as a pointer (a value read from one, `b[i]`,
        // is an access its own guard checks)
        let others = args.iter().enumerate().any(|(i, a)| {
            let mut any = false;
            if !positions.contains(&i) && matches!(a.ty, Type::Pointer { .. } | Type::Array { .. })
            {
                visit_expr(a, &mut |x| {
                    any |= matches!(&x.kind, ExprKind::Var(m) if self.buffers.contains(m))
                });
            }
            any
        });
        if positions.len() != 1 || others {
            return self.fail(
                e,
                &format!("passed to helper '{f}' together with other buffers"),
            );
        }
        let pos = positions[0];
        let Some(hp) = helper.params.get(pos) else {
            return self.fail(
                e,
                &format!("passed to helper '{f}' with more arguments than it takes"),
            );
        };
        let p = self.param_use(&args[pos]).expect("found above");
        let call_text = self.text(&e.span).unwrap_or("");
        if !call_text.starts_with(f)
            || !call_text.ends_with(')')
            || self.text(&p.span).map(str::trim) != Some(self.name)
        {
            return self.fail(
                e,
                &format!("passed to helper '{f}' inside a macro expansion"),
            );
        }
        let mut nested = Guarder {
            boxes: self.boxes.clone(),
            name: &hp.name,
            tag: self.tag,
            program: None,
            buffers: self.buffers,
            clones: Vec::new(),
            pointee: pointee_name(&hp.ty),
            elem_size: pointee_size(&hp.ty),
            views: Vec::new(),
            align: 1,
            viewed: false,
            slot: self.slot,
            src: self.src,
            edits: Vec::new(),
            failure: None,
            handled: Vec::new(),
            group: None,
            conds: Vec::new(),
        };
        if nested.pointee != self.pointee {
            return self.fail(
                e,
                &format!("passed to helper '{f}' as a pointer of another type"),
            );
        }
        let hidden = unsupported_texts(&helper.body, self.src);
        if let Some(why) = nested.guard_body(&helper.body, &hidden, &program.file) {
            return self.fail(e, &format!("passed to helper '{f}', where {why}"));
        }
        self.align = lcm(self.align, nested.align);
        self.viewed |= nested.viewed;
        let clone_name = format!("{f}__clpart_{}", self.tag);
        if !self.clones.iter().any(|(n, _)| n == &clone_name) {
            let box_params = self.boxes.as_ref().map_or(String::new(), |b| {
                box_args(self.tag, b, 0)
                    .iter()
                    .map(|(n, _)| format!(", long {n}"))
                    .collect()
            });
            let Some(text) = clone_text(
                self.src,
                helper,
                &clone_name,
                self.tag,
                &box_params,
                nested.edits,
            ) else {
                return self.fail(
                    e,
                    &format!("passed to helper '{f}', whose definition cannot be copied"),
                );
            };
            self.clones.push((clone_name.clone(), text));
        }
        self.handled.push((p.span.start, p.span.end));
        let t = self.tag;
        self.edits.push(Edit {
            at: e.span.start as usize,
            del: f.len(),
            text: clone_name,
            order: depth,
            fast: None,
        });
        self.edits.push(Edit {
            at: e.span.end as usize - 1,
            del: 0,
            text: format!(
                ", __clpart_base_{t}, __clpart_rlo_{t}, __clpart_rhi_{t}, __clpart_wlo_{t}, __clpart_whi_{t}, __clpart_len_{t}, &__clpart_bad{}",
                self.boxes.as_ref().map_or(String::new(), |b| box_args(t, b, 0).iter().map(|(n, _)| format!(", {n}")).collect())
            ),
            order: 1000 - depth,
            fast: None,
        });
        for (i, a) in args.iter().enumerate() {
            if i != pos {
                self.expr(a, Access::Read, depth + 1);
            }
        }
    }
}

/// The text of helper `h` renamed to `name`, with `edits` (absolute source
/// positions inside its span) applied and the guard's parameters for `tag`
/// appended.
fn clone_text(
    src: &str,
    h: &Function,
    name: &str,
    tag: &str,
    box_params: &str,
    mut edits: Vec<Edit>,
) -> Option<String> {
    let (start, end) = (h.span.start as usize, h.span.end as usize);
    let text = src.get(start..end)?;
    // the function name: its first occurrence followed by '('
    let mut at = None;
    let mut from = 0;
    while let Some(i) = text[from..].find(&h.name) {
        let j = from + i;
        let before_ok = j == 0
            || !(text.as_bytes()[j - 1].is_ascii_alphanumeric() || text.as_bytes()[j - 1] == b'_');
        if before_ok && text[j + h.name.len()..].trim_start().starts_with('(') {
            at = Some(j);
            break;
        }
        from = j + 1;
    }
    let at = start + at?;
    edits.push(Edit {
        at,
        del: h.name.len(),
        text: name.to_string(),
        order: 0,
        fast: None,
    });
    let extra = format!(
        "long __clpart_base_{tag}, long __clpart_rlo_{tag}, long __clpart_rhi_{tag}, long __clpart_wlo_{tag}, long __clpart_whi_{tag}, long __clpart_len_{tag}, ulong *__clpart_badp{box_params}"
    );
    let last = h.params.last()?;
    edits.push(Edit {
        at: last.span.end as usize,
        del: 0,
        text: format!(", {extra}"),
        order: 0,
        fast: None,
    });
    let mut out = text.to_string();
    edits.sort_by(|a, b| {
        b.at.cmp(&a.at)
            .then(b.del.cmp(&a.del))
            .then(b.order.cmp(&a.order))
    });
    for e in &edits {
        if e.at < start || e.at + e.del > end {
            return None;
        }
        let (a, d) = (e.at - start, e.del);
        out.replace_range(a..a + d, &e.text);
    }
    Some(out)
}

/// The spans of the `return` statements of a body.
fn collect_returns(body: &[Stmt], out: &mut Vec<Span>) {
    for s in body {
        match s {
            Stmt::Return(_, sp) => out.push(sp.clone()),
            Stmt::If { then, els, .. } => {
                collect_returns(then, out);
                if let Some(e) = els {
                    collect_returns(e, out);
                }
            }
            Stmt::For { body, .. } | Stmt::While { body, .. } | Stmt::Block(body) => {
                collect_returns(body, out)
            }
            _ => {}
        }
    }
}

fn pointee_name(t: &Type) -> Option<String> {
    match t {
        Type::Pointer { pointee, .. } => Some(pointee.name()),
        _ => None,
    }
}

fn pointee_size(t: &Type) -> Option<u32> {
    match t {
        Type::Pointer { pointee, .. } => pointee.size(),
        _ => None,
    }
}

/// Variable `name` is assigned, stepped or has its address taken in `body`.
fn changed_or_addressed(body: &[Stmt], name: &str) -> bool {
    let is = |x: &Expr| matches!(&x.kind, ExprKind::Var(n) if n == name);
    let mut found = false;
    visit_exprs(body, &mut |e| {
        found |= match &e.kind {
            ExprKind::Assign(_, l, _) => is(l),
            ExprKind::Unary(
                UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec | UnOp::AddrOf,
                x,
            ) => is(x),
            _ => false,
        }
    });
    found
}

/// A declaration in `f`'s body of a variable named like one of its
/// parameters (in an inner scope: C forbids it in the outermost one).
fn shadowing(f: &Function) -> Option<&VarDecl> {
    let mut all = Vec::new();
    decls(&f.body, &mut all);
    all.into_iter()
        .find(|d| f.params.iter().any(|p| p.name == d.name))
}

/// Every variable declaration in `body`, nested ones included.
fn decls<'b>(body: &'b [Stmt], out: &mut Vec<&'b VarDecl>) {
    visit_decls(body, 0, &mut |d, _| out.push(d));
}

/// The source texts of the constructs the IR does not model (unsupported
/// expressions and statements), with their spans.
fn unsupported_texts(body: &[Stmt], src: &str) -> Vec<(String, Span)> {
    let mut out = Vec::new();
    let mut add = |sp: &Span| {
        let t = src
            .get(sp.start as usize..sp.end as usize)
            .unwrap_or("")
            .to_string();
        // A span that does not cover the text (macro expansions) hides everything.
        out.push((
            if sp.end <= sp.start {
                String::from("*")
            } else {
                t
            },
            sp.clone(),
        ));
    };
    fn stmts(body: &[Stmt], add: &mut dyn FnMut(&Span)) {
        for s in body {
            match s {
                Stmt::Unsupported(_, sp) => add(sp),
                Stmt::If { then, els, .. } => {
                    stmts(then, add);
                    if let Some(e) = els {
                        stmts(e, add);
                    }
                }
                Stmt::For { init, body, .. } => {
                    if let Some(i) = init {
                        stmts(std::slice::from_ref(&**i), add);
                    }
                    stmts(body, add);
                }
                Stmt::While { body, .. } => stmts(body, add),
                Stmt::Block(b) => stmts(b, add),
                _ => {}
            }
        }
    }
    stmts(body, &mut add);
    visit_exprs(body, &mut |e| {
        if matches!(e.kind, ExprKind::Unsupported(_)) {
            add(&e.span)
        }
    });
    out
}

/// Whether `text` mentions identifier `name` (or is the wildcard `*`).
fn mentions(text: &str, name: &str) -> bool {
    if text == "*" {
        return true;
    }
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(i) = text[from..].find(name) {
        let at = from + i;
        let before = at == 0 || !(b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_');
        let end = at + name.len();
        let after = end >= b.len() || !(b[end].is_ascii_alphanumeric() || b[end] == b'_');
        if before && after {
            return true;
        }
        from = at + 1;
    }
    false
}

fn uses_in_macro(body: &[Stmt], w: WorkItemFn, src: &str) -> bool {
    let mut found = false;
    visit_exprs(body, &mut |e| {
        if let ExprKind::WorkItem(x, _) = &e.kind {
            if *x == w
                && !src
                    .get(e.span.start as usize..e.span.end as usize)
                    .unwrap_or("")
                    .starts_with(w.name())
            {
                found = true;
            }
        }
    });
    found
}

fn text_is(src: &str, span: &Span, name: &str) -> bool {
    src.get(span.start as usize..span.end as usize)
        .is_some_and(|t| t.trim() == name)
}

/// The C type of a pointer parameter, with its address space, for the prologue.
fn param_c_type(t: &Type) -> String {
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

/// The last whole-word mention of `name` in `span`'s text.
fn find_name_in_span(src: &str, span: &Span, name: &str) -> Option<usize> {
    let text = src.get(span.start as usize..span.end as usize)?;
    let bytes = text.as_bytes();
    let mut best = None;
    let mut from = 0;
    while let Some(i) = text[from..].find(name) {
        let at = from + i;
        let before_ok =
            at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        let after = at + name.len();
        let after_ok =
            after >= bytes.len() || !(bytes[after].is_ascii_alphanumeric() || bytes[after] == b'_');
        if before_ok && after_ok {
            best = Some(span.start as usize + at);
        }
        from = at + 1;
    }
    best
}

/// A subscript's pointer and index have texts of their own, in either order
/// (`a[i]`, or `i[a]`, which C reads the same).
fn apart(pointer: &Span, index: &Span) -> bool {
    pointer.end <= index.start || index.end <= pointer.start
}

/// Where a statement's text starts.
fn stmt_start(s: &Stmt) -> Option<u32> {
    match s {
        Stmt::Decl(d) => Some(d.span.start),
        Stmt::Expr(e) => Some(e.span.start),
        Stmt::If { span, .. } | Stmt::For { span, .. } | Stmt::While { span, .. } => {
            Some(span.start)
        }
        Stmt::Block(b) => b.first().and_then(stmt_start),
        Stmt::Barrier(span)
        | Stmt::Return(_, span)
        | Stmt::Break(span)
        | Stmt::Continue(span)
        | Stmt::Unsupported(_, span) => Some(span.start),
    }
}

/// Just past the `(` of `k`'s parameter list: after the last mention of
/// its name before its first parameter (or its first statement, or its
/// end), so that the name mentioned again in the body does not count.
fn open_paren_after_name(src: &str, k: &Function) -> Option<usize> {
    let text = src.get(k.span.start as usize..k.span.end as usize)?;
    let inside = |&at: &u32| at > k.span.start && at < k.span.end;
    let limit = k
        .params
        .first()
        .map(|p| p.span.start)
        .filter(inside)
        .or_else(|| k.body.first().and_then(stmt_start).filter(inside))
        .unwrap_or(k.span.end);
    let head = Span {
        end: limit,
        ..k.span.clone()
    };
    let at = find_name_in_span(src, &head, &k.name)? - k.span.start as usize;
    text[at..]
        .find('(')
        .map(|i| k.span.start as usize + at + i + 1)
}

fn body_open_brace(src: &str, k: &Function) -> Option<usize> {
    // libclang's start of the body, where the text there is its `{`
    let at = k.body_at? as usize;
    (at > k.span.start as usize && src.as_bytes().get(at) == Some(&b'{')).then_some(at)
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

fn span_inside(inner: &Span, outer: &Span) -> bool {
    inner.start >= outer.start && inner.end <= outer.end
}
