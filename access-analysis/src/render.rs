//! From recorded accesses to isl relations: per array ([`Renderer::array`])
//! the delinearized subscripts (`delinearize`), the relations minimized
//! (project out, coalesce), the launch assumptions; the parameters, context
//! and domain they share.
//!
//! This file holds the [`Renderer`] (parameters, context, domain) and the
//! per-array driver; its submodules the rest: `delinearize`, `relations`
//! (the isl relations of the modeled accesses), `assumptions` (the
//! launch-time assumptions of constant strides), `no_wrap` (those of the
//! conversions modelled without wrapping around).

use crate::eval::{nd_name, Ndr, Rec};
use crate::isl::{Isl, IslFail, IslOk, IslResult, Piece};
use crate::poly::{Cond, Poly, WhyKind};
use crate::{Access, AccessKind, AnalysisOptions, ArrayAccesses, Linearization, Mode, ParamInfo};
use std::collections::BTreeMap;

mod assumptions;
mod delinearize;
mod no_wrap;
mod relations;

use delinearize::{delinearize, delinearize_const, delinearize_planes, Tuples};

/// A `__global` or `__constant` buffer argument of the kernel.
pub(crate) struct Buffer {
    pub(crate) arg_index: u32,
    pub(crate) name: String,
    /// The isl tuple name: `name`, or `arr_<name>` for isl keywords and `W`.
    pub(crate) tuple: String,
    pub(crate) elem_type: String,
    pub(crate) elem_size: u32,
    pub(crate) is_constant_space: bool,
    pub(crate) read_only: bool,
}

pub(crate) struct Renderer<'a> {
    pub(crate) isl: Isl,
    ndr: &'a Ndr,
    spec: &'a BTreeMap<String, i128>,
    options: &'a AnalysisOptions,
    file: String,
    /// `[p1, p2] -> `
    pub(crate) header: String,
    /// Domain constraints over x, l, g dims.
    dom: Cond,
    /// Domain constraints over x dims only.
    x_cond: Cond,
    lg_dims: Vec<String>,
    param_names: Vec<String>,
    /// The parameters that are scalar kernel arguments.
    arg_params: Vec<String>,
}

impl<'a> Renderer<'a> {
    pub(crate) fn new(
        ndr: &'a Ndr,
        spec: &'a BTreeMap<String, i128>,
        params: &[ParamInfo],
        options: &'a AnalysisOptions,
        file: &str,
    ) -> Self {
        let header = format!(
            "[{}] -> ",
            params
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        let mut r = Renderer {
            isl: Isl::new(options.max_operations),
            ndr,
            spec,
            options,
            file: file.to_string(),
            header,
            dom: Cond::True,
            x_cond: Cond::True,
            lg_dims: Vec::new(),
            param_names: params.iter().map(|p| p.name.clone()).collect(),
            arg_params: params
                .iter()
                .filter(|p| {
                    matches!(
                        p.source,
                        crate::ParamSource::ScalarArg { .. }
                            | crate::ParamSource::StructMember { .. }
                    )
                })
                .map(|p| p.name.clone())
                .collect(),
        };
        let mut xc = Cond::True;
        let mut lgc = Cond::True;
        for d in 0..3u32 {
            let x = Poly::dim(&nd_name("x", d));
            if d >= ndr.work_dim {
                xc = Cond::and(xc, Cond::Eq(x));
                continue;
            }
            let go = r.nd("go", d);
            let gs = r.nd("gs", d);
            let xr = x.sub(&go).unwrap_or_default();
            xc = Cond::and(xc, Cond::Ge(xr.clone()));
            xc = Cond::and(
                xc,
                Cond::Ge(
                    gs.sub(&xr)
                        .and_then(|p| p.add_const(-1))
                        .unwrap_or_default(),
                ),
            );
            if ndr.lg_used[d as usize] {
                let (l, g) = (nd_name("l", d), nd_name("g", d));
                r.lg_dims.push(l.clone());
                r.lg_dims.push(g.clone());
                let (lp, gp) = (Poly::dim(&l), Poly::dim(&g));
                let ls = r.nd("ls", d);
                let ng = r.nd("ng", d);
                let lt = |a: &Poly, b: &Poly| {
                    Cond::Ge(b.sub(a).and_then(|p| p.add_const(-1)).unwrap_or_default())
                };
                lgc = Cond::and(lgc, Cond::Ge(lp.clone()));
                lgc = Cond::and(lgc, lt(&lp, &ls));
                lgc = Cond::and(lgc, Cond::Ge(gp.clone()));
                lgc = Cond::and(lgc, lt(&gp, &ng));
                let rest = xr.sub(&lp).unwrap_or_default(); // x - go - l = ls * g
                match ndr.local_size {
                    Some(size) => {
                        let lsg = gp.scale(size[d as usize] as i128).unwrap_or_default();
                        lgc = Cond::and(lgc, Cond::Eq(rest.sub(&lsg).unwrap_or_default()));
                    }
                    None => {
                        // Affine consequences of x - go - l = ls*g, ls >= 1, g < ng.
                        lgc = Cond::and(lgc, Cond::Ge(rest.sub(&gp).unwrap_or_default()));
                        lgc = Cond::and(
                            lgc,
                            Cond::Ge(gs.sub(&ls).and_then(|p| p.sub(&rest)).unwrap_or_default()),
                        );
                    }
                }
            }
        }
        r.x_cond = xc.clone();
        r.dom = Cond::and(xc, lgc);
        r
    }

    /// An NDRange parameter as a polynomial (a constant when specialized/known).
    fn nd(&self, kind: &str, d: u32) -> Poly {
        if kind == "ls" {
            if let Some(ls) = self.ndr.local_size {
                return Poly::konst(ls[d as usize] as i128);
            }
        }
        let n = nd_name(kind, d);
        match self.spec.get(&n) {
            Some(v) => Poly::konst(*v),
            None => Poly::param(&n),
        }
    }

    /// The launch context: the conditions every NDRange meets (sizes and
    /// offsets), as isl text. The set is built, and the parse cache keeps it
    /// under that text, which the stages read many times.
    pub(crate) fn context_text(&self) -> String {
        let cond = self.context_cond();
        let text = format!("{}{{ : {} }}", self.header, cond.to_isl(true).0);
        if let Ok(set) = self.isl.params_set(&self.param_names, &cond) {
            self.isl.keep_set(&text, &set);
        }
        text
    }

    /// The NDRange's domain over the global ids, as isl text (kept built
    /// as [`Renderer::context_text`]).
    pub(crate) fn x_domain_text(&self) -> String {
        let text = format!(
            "{}{{ W[x0, x1, x2] : {} }}",
            self.header,
            self.x_cond.to_isl(true).0
        );
        let piece = Piece {
            dims: vec!["x0".into(), "x1".into(), "x2".into()],
            cond: self.x_cond.clone(),
            outs: Vec::new(),
        };
        if let Ok(set) = self.isl.piece_sets(&self.param_names, &[piece], false) {
            self.isl.keep_set(&text, &set);
        }
        text
    }

    fn context_cond(&self) -> Cond {
        let mut c = Cond::True;
        for d in 0..self.ndr.work_dim {
            let (gs, ls, go, ng) = (
                self.nd("gs", d),
                self.nd("ls", d),
                self.nd("go", d),
                self.nd("ng", d),
            );
            let ge = |a: &Poly, k: i128| Cond::Ge(a.add_const(-k).unwrap_or_default());
            c = Cond::and(c, ge(&gs, 1));
            c = Cond::and(c, ge(&ls, 1));
            c = Cond::and(c, ge(&ng, 1));
            c = Cond::and(c, ge(&go, 0));
            match self.ndr.local_size {
                Some(size) => {
                    let prod = ng.scale(size[d as usize] as i128).unwrap_or_default();
                    c = Cond::and(c, Cond::Eq(gs.sub(&prod).unwrap_or_default()));
                }
                None => {
                    c = Cond::and(c, Cond::Ge(gs.sub(&ng).unwrap_or_default()));
                    c = Cond::and(c, Cond::Ge(gs.sub(&ls).unwrap_or_default()));
                }
            }
        }
        c
    }

    fn loc(&self, r: &Rec) -> String {
        format!("{}:{}:{}", self.file, r.span.line, r.span.col)
    }

    fn out_tuple(name: &str, n: usize) -> String {
        let dims: Vec<String> = (0..n).map(|i| format!("o{i}")).collect();
        format!("{name}[{}]", dims.join(", "))
    }

    /// The empty relation's text (the relation itself is kept under it).
    fn empty_map(&self, name: &str, n: usize) -> String {
        self.isl.empty_relation_text(&self.param_names, name, n)
    }

    fn universe_map(&self, name: &str, n: usize, context: &str) -> String {
        let raw = format!(
            "{}{{ W[x0, x1, x2] -> {} : {} }}",
            self.header,
            Self::out_tuple(name, n),
            self.x_cond.to_isl(true).0
        );
        let pretty = || -> IslResult<String> {
            self.isl.reset();
            let m = self
                .isl
                .map(&raw)?
                .gist_params(self.isl.set(context)?)
                .ok_in(&self.isl)?;
            self.isl.map_str(&m)
        };
        pretty().unwrap_or(raw)
    }

    /// Makes the array whole for `reason` (used for unanalyzable kernels):
    /// every work-item may read (and, unless read-only, write) every element.
    pub(crate) fn force_whole(
        &self,
        a: &mut ArrayAccesses,
        b: &Buffer,
        reason: &str,
        context: &str,
    ) {
        a.whole = Some(reason.to_string());
        a.mode = if b.read_only { Mode::R } else { Mode::RW };
        a.strides = vec!["1".into()];
        a.linearization = Linearization::Affine;
        a.assumptions.clear();
        let universe = self.universe_map(&b.tuple, 1, context);
        a.reads = universe.clone();
        a.must_writes = self.empty_map(&b.tuple, 1);
        a.may_writes = if b.read_only {
            self.empty_map(&b.tuple, 1)
        } else {
            universe.clone()
        };
        for acc in &mut a.accesses {
            acc.map = universe.clone();
            if acc.kind == AccessKind::MustWrite {
                acc.kind = AccessKind::MayWrite;
            }
        }
    }

    fn subst(&self, p: &Poly) -> Option<Poly> {
        p.rewrite(&self.ndr.rules)?.subst(self.spec)
    }

    /// Analyzes one array from its records.
    pub(crate) fn array(&self, b: &Buffer, recs: &[&Rec], context: &str) -> ArrayAccesses {
        let mut a = ArrayAccesses {
            arg_index: b.arg_index,
            name: b.name.clone(),
            elem_type: b.elem_type.clone(),
            elem_size: b.elem_size,
            is_constant_space: b.is_constant_space,
            mode: mode_of(recs),
            whole: None,
            strides: vec!["1".into()],
            linearization: Linearization::Affine,
            reads: String::new(),
            must_writes: String::new(),
            may_writes: String::new(),
            accesses: Vec::new(),
            assumptions: Vec::new(),
            notes: Vec::new(),
            reduction: None,
        };
        if recs.is_empty() {
            a.notes.push("not accessed".into());
        }
        let mut notes: Vec<String> = Vec::new();
        for r in recs {
            if let Some(n) = &r.note {
                push_unique(&mut notes, n.clone());
            }
        }
        // Unmodeled accesses.
        let mut whole: Option<String> = None;
        let mut unmodeled_read = false;
        let mut unmodeled_write = false;
        for r in recs {
            if let Err(w) = &r.sub {
                let reason = match w.kind {
                    WhyKind::Indirect => {
                        format!("subscript '{}' is indirect ({})", r.text, self.loc(r))
                    }
                    WhyKind::Escape => format!("'{}' {} ({})", b.name, w.msg, self.loc(r)),
                    WhyKind::Other => format!(
                        "subscript '{}' is not affine: {} ({})",
                        r.text,
                        w.msg,
                        self.loc(r)
                    ),
                };
                whole.get_or_insert(reason);
                if r.kind == AccessKind::Read {
                    unmodeled_read = true;
                } else {
                    unmodeled_write = true;
                }
            }
        }
        let modeled: Vec<&Rec> = recs.iter().copied().filter(|r| r.sub.is_ok()).collect();

        // Subscripts after specialization; linearization.
        let mut shaped: Vec<(&Rec, Vec<(Cond, Poly)>)> = Vec::new();
        let mut any_nonaffine = false;
        let mut any_specialized = false;
        for r in &modeled {
            let Ok(pieces) = &r.sub else { continue };
            let mut ps = Vec::new();
            for (c, p) in pieces {
                let c2 = c.map_polys(&|q| self.subst(q));
                let Some(p2) = self.subst(p) else {
                    whole.get_or_insert(format!(
                        "subscript '{}' overflows ({})",
                        r.text,
                        self.loc(r)
                    ));
                    continue;
                };
                if !p2.is_affine() {
                    any_nonaffine = true;
                } else if !p.rewrite(&self.ndr.rules).is_some_and(|q| q.is_affine()) {
                    any_specialized = true;
                }
                ps.push((c2, p2));
            }
            shaped.push((r, ps));
        }
        let mut global_failure = false;
        let mut konst: Vec<(Vec<String>, Vec<String>, Tuples)> = Vec::new();
        // Whether the strides of `konst` are kept only where the kernel's
        // own guards make every inner subscript lie in `[0, extent)` (no
        // launch-time assumption), since the 1-D model of such an array is
        // exact and never needs one: planes of a run-time size
        // (`in[min(i + 1, n - 1)]` is not a plane of `n`).
        let mut strict = false;
        let mut tuples: Tuples = Vec::new();
        let mut extents: Vec<String> = Vec::new();
        if any_nonaffine {
            if !self.options.delinearize {
                let r = shaped
                    .iter()
                    .find(|(_, ps)| ps.iter().any(|(_, p)| !p.is_affine()))
                    .map(|(r, _)| *r);
                if let Some(r) = r {
                    whole.get_or_insert(format!(
                        "subscript '{}' is not affine and delinearization is disabled ({})",
                        r.text,
                        self.loc(r)
                    ));
                }
                global_failure = true;
            } else {
                match delinearize(&shaped, 0, false) {
                    Ok((strides, ext, t, n_choices, borrowable)) => {
                        a.strides = strides;
                        extents = ext;
                        tuples = t;
                        a.linearization = Linearization::Delinearized;
                        // A product of parameters with no variable stride to
                        // match (`a[k*n + j]`: stride k or n?): each choice is
                        // tried below, the first is the default; then, where
                        // a stride stands alone (`b[i*n + n - 1]`), the same
                        // with it kept in the innermost subscript.
                        if n_choices > 1 || borrowable {
                            let borrows: &[bool] =
                                if borrowable { &[false, true] } else { &[false] };
                            konst = borrows
                                .iter()
                                .flat_map(|&borrow| (0..n_choices).map(move |pick| (pick, borrow)))
                                .filter_map(|(pick, borrow)| {
                                    delinearize(&shaped, pick, borrow)
                                        .ok()
                                        .map(|(s, e, t, _, _)| (s, e, t))
                                })
                                .collect();
                        }
                    }
                    Err((r, msg)) => {
                        let reason = match r {
                            Some(r) => format!(
                                "subscript '{}' is not affine: {} ({})",
                                r.text,
                                msg,
                                self.loc(r)
                            ),
                            None => msg,
                        };
                        whole.get_or_insert(reason);
                        global_failure = true;
                    }
                }
            }
        } else {
            // Constant strides (`b[k*1000 + j]`, `a[2*i + 1]`), tried first.
            if self.options.delinearize {
                konst = [false, true]
                    .iter()
                    .filter_map(|&nearest| delinearize_const(&shaped, nearest))
                    .collect();
                // Planes of a run-time size (`rf[(q-1)*n + gid]`).
                if konst.is_empty() {
                    konst =
                        delinearize_planes(&shaped, &|n| self.arg_params.iter().any(|a| a == n));
                    strict = true;
                }
            }
            tuples = shaped
                .into_iter()
                .map(|(r, ps)| (r, ps.into_iter().map(|(c, p)| (c, vec![p])).collect()))
                .collect();
            if any_specialized {
                a.linearization = Linearization::Specialized;
            }
        }

        // isl work.
        let mut exported: Option<(String, String, String)> = None;
        if !global_failure {
            // The constant strides are kept when the model succeeds and every
            // launch-time assumption they need can hold (constants split into
            // digits in [0, extent), else nearest to zero); else the array is
            // modeled in one dimension, as if they had not been tried. So
            // are the choices of an ambiguous parameter stride, else the
            // first is modeled as it is.
            // A choice whose dimensions nest by the kernel's own guards (no
            // launch-time assumption: `b[i*nj*nk + j*nk + k]` as plane `i`
            // of `nj` rows) is kept over an earlier one that needs one
            // (as row `nj` of `i`-row planes, `0 <= j < i`); among those
            // that need some, the first with the fewest (fewer ways for a
            // launch to fall back).
            // (the array, its notes and its exported relations)
            type Kept = (ArrayAccesses, Vec<String>, (String, String, String));
            let mut kept: Option<Kept> = None;
            for (strides, ext, t) in konst {
                let mut tried = a.clone();
                tried.strides = strides;
                tried.linearization = if any_specialized && !any_nonaffine {
                    Linearization::Specialized
                } else {
                    Linearization::Delinearized
                };
                let (mut notes_k, mut whole_k) = (notes.clone(), whole.clone());
                self.isl.reset();
                let res = self.model(b, &t, &ext, context, &mut tried, &mut notes_k, &mut whole_k);
                if let Ok(ex) = res {
                    if whole_k.is_none()
                        && (!strict || tried.assumptions.is_empty())
                        && self.assumptions_can_hold(&tried.assumptions, &t, context)
                        && kept
                            .as_ref()
                            .is_none_or(|k| tried.assumptions.len() < k.0.assumptions.len())
                    {
                        let done = tried.assumptions.is_empty();
                        kept = Some((tried, notes_k, ex));
                        if done {
                            break;
                        }
                    }
                }
            }
            if let Some((tried, notes_k, ex)) = kept {
                a = tried;
                notes = notes_k;
                exported = Some(ex);
            }
        }
        let n_out = a.strides.len();
        if !global_failure && exported.is_none() {
            self.isl.reset();
            let res = self.model(
                b, &tuples, &extents, context, &mut a, &mut notes, &mut whole,
            );
            match res {
                Ok(t) => exported = Some(t),
                Err(f) => {
                    let reason = match f {
                        IslFail::Limit(n) => format!(
                            "isl operation limit ({n}) exceeded while analyzing '{}'",
                            b.name
                        ),
                        IslFail::Error(m) => format!(
                            "internal error: isl failed while analyzing '{}': {m}",
                            b.name
                        ),
                        IslFail::Deadline(ms) => format!(
                            "analysis time budget ({ms} ms) exceeded while analyzing '{}'",
                            b.name
                        ),
                    };
                    whole = Some(whole.map_or(reason.clone(), |w| w));
                    a.assumptions.clear();
                    global_failure = true;
                    if whole.as_deref() != Some(reason.as_str()) {
                        notes.push(reason);
                    }
                }
            }
        }
        a.notes.extend(notes);
        let has_read = recs.iter().any(|r| r.kind == AccessKind::Read);
        let has_write = recs.iter().any(|r| r.kind != AccessKind::Read);
        match (&whole, exported) {
            (None, Some((rd, mw, yw))) => {
                a.reads = rd;
                a.must_writes = mw;
                a.may_writes = yw;
            }
            (w, ex) => {
                a.whole = w
                    .clone()
                    .or(Some(format!("'{}' could not be modeled", b.name)));
                let (rd, mw, yw) = ex.unwrap_or_else(|| {
                    (
                        self.empty_map(&b.tuple, n_out),
                        self.empty_map(&b.tuple, n_out),
                        self.empty_map(&b.tuple, n_out),
                    )
                });
                let all = global_failure;
                a.reads = if has_read && (all || unmodeled_read) {
                    self.universe_map(&b.tuple, n_out, context)
                } else {
                    rd
                };
                a.must_writes = if all {
                    self.empty_map(&b.tuple, n_out)
                } else {
                    mw
                };
                a.may_writes = if has_write && (all || unmodeled_write) {
                    self.universe_map(&b.tuple, n_out, context)
                } else {
                    yw
                };
                if all {
                    a.assumptions.clear();
                }
            }
        }
        // Accesses that could not be modeled are listed with a universe map.
        for r in recs.iter().filter(|r| r.sub.is_err() || global_failure) {
            if a.accesses
                .iter()
                .any(|x| x.span == r.span && x.kind == r.kind)
            {
                continue;
            }
            a.accesses.push(Access {
                kind: if r.kind == AccessKind::MustWrite {
                    AccessKind::MayWrite
                } else {
                    r.kind
                },
                map: self.universe_map(&b.tuple, n_out, context),
                span: r.span.clone(),
                text: r.text.clone(),
            });
        }
        a.accesses.sort_by_key(|x| (x.span.start, x.kind));
        a
    }
}

fn push_unique(v: &mut Vec<String>, s: String) {
    if !v.contains(&s) {
        v.push(s);
    }
}

fn mode_of(recs: &[&Rec]) -> Mode {
    let r = recs.iter().any(|r| r.kind == AccessKind::Read);
    let w = recs.iter().any(|r| r.kind != AccessKind::Read);
    match (r, w) {
        (_, false) => Mode::R,
        (false, true) => Mode::W,
        (true, true) => Mode::RW,
    }
}
