//! The run-time guard's rewrite of one buffer parameter ([`Guarder`]):
//! every access of it, or of a view of it, wrapped in its check, or the
//! reason it cannot be guarded.

mod aliases;
mod expr;
mod helper;

pub(super) use helper::{helper_clones, HelperCall};

use std::cell::RefCell;

use coarsen::ir::*;

use super::boxes::BoxSpec;
use super::declarations::{changed_or_addressed, decls};
use super::edit::Edit;
use super::group;
use super::guard_header::cat;
use super::source_spans::{apart, mentions};
use super::views::{lcm, scale_of, Scale, View};

/// How an access uses the element.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Access {
    Read,
    Write,
    ReadWrite,
}

/// Rewrites every access of one buffer parameter into a guarded one, or
/// records why it cannot.
pub(super) struct Guarder<'a> {
    /// The array's box check, when it has one.
    pub(super) boxes: Option<BoxSpec>,
    /// The pointer's name in the code walked (the kernel parameter, or the
    /// helper parameter it is passed to).
    pub(super) name: &'a str,
    /// The kernel parameter's name: the suffix of the extra arguments.
    pub(super) tag: &'a str,
    /// The program, when helpers taking the pointer may be cloned (not
    /// inside a clone).
    pub(super) program: Option<&'a Program>,
    /// Every buffer parameter of the kernel.
    pub(super) buffers: &'a [String],
    /// Calls of helpers taking the buffer: what this buffer's guard adds
    /// to their clones.
    pub(super) helper_calls: Vec<helper::HelperCall>,
    /// The parameter's element type spelling (implicit pointer conversions
    /// to the same element type are looked through).
    pub(super) pointee: Option<String>,
    /// The parameter's element size in bytes.
    pub(super) elem_size: Option<u32>,
    /// Local pointers that view the parameter's buffer through a cast
    /// (`__global float4 *x4 = (__global float4 *)x;`), found by
    /// [`Guarder::find_views`] when the walk starts.
    pub(super) views: Vec<View>,
    /// Local pointers into the parameter's buffer at an offset
    /// (`row = a + r * n`), found by [`Guarder::find_aliases`].
    pub(super) aliases: Vec<String>,
    /// The kernel steps the parameter itself ([`Guarder::param_stepped`]):
    /// its accesses are checked against its value at the start, which the
    /// prologue keeps.
    pub(super) stepped: bool,
    /// The multiple of elements the device buffer must start at: the
    /// least common multiple of the wider views' scales (1 without one).
    pub(super) align: u32,
    /// An access through a view was rewritten (here or in a helper's clone).
    pub(super) viewed: bool,
    pub(super) slot: usize,
    pub(super) src: &'a str,
    pub(super) edits: Vec<Edit>,
    pub(super) failure: Option<String>,
    /// Spans of the uses of the parameter that were rewritten.
    pub(super) handled: Vec<(u32, u32)>,
    /// The per-work-group test (in the kernel, not in helper clones).
    pub(super) group: Option<&'a RefCell<group::GroupCheck<'a>>>,
    /// Conditions known to hold (true) or not (false) where the walk is.
    pub(super) conds: Vec<(bool, &'a Expr)>,
    /// The accesses and calls visited, by span and use: a macro argument
    /// (`MIN(a[i], a[j])`) expands to several nodes with one span, which
    /// one edit of the argument's text guards.
    pub(super) seen: Vec<(u32, u32, Access)>,
    /// Macro arguments one expansion reads and another writes
    /// (`#define INC(x) x = x + 1`), by span: guarded once as read and
    /// written ([`Guarder::macro_both`]).
    pub(super) both: Vec<(u32, u32)>,
    /// Such arguments met by this walk (guarded as one use only, the walk
    /// fails; a second walk given them in `both` succeeds).
    pub(super) met_both: Vec<(u32, u32)>,
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
    /// a construct the IR does not model (`hidden`, from [`unsupported_texts`](super::source_spans::unsupported_texts)).
    pub(super) fn guard_body(
        &mut self,
        body: &'a [Stmt],
        hidden: &[(String, Span)],
        file: &str,
    ) -> Option<String> {
        self.views = self.find_views(body);
        self.aliases = self.find_aliases(body);
        self.stepped = self.param_stepped(body);
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
                } else if self.aliases.contains(n) {
                    other = Some(format!(
                        "'{n}', a pointer into '{}', is used other than by subscript at {file}:{}:{}",
                        self.name, e.span.line, e.span.col
                    ));
                }
            }
        });
        other.or_else(|| {
            let names = std::iter::once(self.name)
                .chain(self.views.iter().map(|v| v.name.as_str()))
                .chain(self.aliases.iter().map(String::as_str));
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
            if self.param_through_casts(init).is_none() || !self.fixed_local(&all, d, body) {
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

    /// `d` (of the declarations `all` of `body`) is a local of its own:
    /// not the parameter or another buffer, declared once, never assigned,
    /// stepped or addressed (views and aliases must be).
    pub(super) fn fixed_local(&self, all: &[&VarDecl], d: &VarDecl, body: &[Stmt]) -> bool {
        d.name != self.name
            && !self.buffers.contains(&d.name)
            && all.iter().filter(|o| o.name == d.name).count() == 1
            && !changed_or_addressed(body, &d.name)
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

    /// [`Self::wrap_index`] for a subscript that is one macro's whole
    /// expansion `e` (index `i`): `name[check(&(EXPANSION) - name)]`, the
    /// expansion left as written (its own subscript only takes an address).
    fn wrap_expansion(&mut self, e: &Expr, i: &Expr, access: Access, depth: u32) {
        let c = self.check_call(access, None, group::Index::Expr(i));
        self.wrap_address(e, self.name, &c, depth);
    }

    /// Checks the access `e` by its address: `base[check(&(e) - base)]`,
    /// `e`'s text left as written (it only takes the address), `base` the
    /// buffer's start.
    fn wrap_address(&mut self, e: &Expr, base: &str, c: &Check, depth: u32) {
        let (fh, ft) = c.fast_parts();
        self.edits.push(Edit {
            at: e.span.start as usize,
            del: 0,
            text: format!("{base}[{}(&(", c.head),
            order: depth,
            fast: fh.map(|h| format!("{base}[{h}(&(")),
        });
        self.edits.push(Edit {
            at: e.span.end as usize,
            del: 0,
            text: format!(") - {base}){}]", c.tail),
            order: 1000 - depth,
            fast: ft.map(|t| format!(") - {base}){t}]")),
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
                // an alias's declaration: an offset into the buffer
                Some(e) if self.aliases.contains(&d.name) => self.alias_decl(e, depth),
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
}
