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

mod boxes;
mod declarations;
mod edit;
mod group;
mod guard;
mod guard_header;
mod rebase;
mod source_spans;
mod versioned;
mod views;

use std::cell::RefCell;

use coarsen::ir::*;
use ranges_format::{ExtraArg, ExtraArgMeaning, Subkernel};

use boxes::{box_args, extent_names, BoxSpec};
use declarations::{param_c_type, pointee_name, pointee_size, shadowing};
use edit::{apply, Edit};
use guard::{helper_clones, Guarder, HelperCall};
use guard_header::{box_header, BOX_BIN, GUARD_HEADER, VIEW_FNS};
use rebase::rebase_uses;
use source_spans::{
    body_open_brace, collect_returns, find_name_in_span, open_paren_after_name, unsupported_texts,
    uses_in_macro,
};
use versioned::versioned;

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
    /// A helper taking guarded buffers whose guarded clone cannot be made
    /// (each buffer's part could).
    #[error("the run-time guard's clone of {0}")]
    HelperClone(String),
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
    let mut helper_calls: Vec<HelperCall> = Vec::new();
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
        let make = |both: Vec<(u32, u32)>| Guarder {
            helper_calls: Vec::new(),
            boxes: boxes.clone(),
            name: &p.name,
            tag: &p.name,
            program: Some(program),
            buffers: &buffer_names,
            pointee: pointee_name(&p.ty),
            elem_size: pointee_size(&p.ty),
            views: Vec::new(),
            aliases: Vec::new(),
            stepped: false,
            align: 1,
            viewed: false,
            slot,
            src,
            edits: Vec::new(),
            failure: None,
            handled: Vec::new(),
            group: Some(&group),
            conds: Vec::new(),
            seen: Vec::new(),
            both,
            met_both: Vec::new(),
        };
        let mut g = make(Vec::new());
        let before = group.borrow().snapshot();
        let mut failure = g.guard_body(&k.body, &hidden, &program.file);
        // a macro argument read by one expansion and written by another:
        // walked again, each such argument guarded once as both (a walk
        // stops at the first it meets)
        while failure.is_some() && !g.met_both.is_empty() {
            group.borrow_mut().restore(before.clone());
            let mut both = std::mem::take(&mut g.both);
            both.append(&mut g.met_both);
            g = make(both);
            failure = g.guard_body(&k.body, &hidden, &program.file);
        }
        match failure {
            None => {
                guarded.push(idx);
                guard_edits.append(&mut g.edits);
                helper_calls.append(&mut g.helper_calls);
                if g.align > 1 {
                    aligned.push((idx, g.align));
                }
                viewed |= g.viewed;
                let n = &p.name;
                if g.stepped {
                    // the stepped parameter's value at the start (see
                    // `guard::aliases`)
                    let ty = param_c_type(&p.ty);
                    prologue.push_str(&format!("    {ty} const __clpart_orig_{n} = {n};\n"));
                }
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
    // helpers taking guarded buffers: one clone per helper and set of
    // buffers guards them all
    let (clones, mut calls) =
        helper_clones(src, program, helper_calls).map_err(SubkernelError::HelperClone)?;
    edits.append(&mut calls);
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
    // A macro argument expanded twice (`MIN(get_global_id(0), n)`) gives
    // two nodes with one span, and their edits twice: applied once.
    let mut once: Vec<Edit> = Vec::with_capacity(edits.len());
    for e in edits {
        if !once
            .iter()
            .rev()
            .take_while(|k| k.at == e.at)
            .any(|k| (k.del, k.order, &k.text, &k.fast) == (e.del, e.order, &e.text, &e.fast))
        {
            once.push(e);
        }
    }
    let mut edits = once;
    let group = group.borrow();
    // Helper clones called in a kernel with barriers: only the checked
    // copy. In two copies, each a region between barriers under the
    // prologue's (uniform) branch, a call passing a private's address
    // (the guard's accumulator) to a helper was miscompiled by PoCL 3.1:
    // a blocked alignment kernel wrote wrong scores with no flag raised,
    // and a reduced kernel crashed its compiler.
    let barriers = contains_barrier(&k.body)
        || program
            .functions
            .iter()
            .any(|f| !f.is_kernel && contains_barrier(&f.body));
    let versions = if barriers && !clones.is_empty() {
        None
    } else {
        versioned(src, k, &mut edits, &group)
    };
    let out = match versions {
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
