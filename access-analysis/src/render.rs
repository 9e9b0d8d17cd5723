//! From recorded accesses to isl relations: per array ([`Renderer::array`])
//! the delinearized subscripts (`delinearize`), the relations minimized
//! (project out, coalesce), the launch assumptions; the parameters, context
//! and domain they share.

use crate::eval::{nd_name, Ndr, Rec};
use crate::isl::{Isl, IslFail, IslOk, IslResult, Piece};
use crate::poly::{Atom, Cond, Poly, WhyKind};
use crate::{
    Access, AccessKind, AnalysisOptions, ArrayAccesses, Assumption, Linearization, Mode, ParamInfo,
};
use isl_rs::{DimType, Map, Set};
use std::collections::BTreeMap;

mod delinearize;

use delinearize::{delinearize, delinearize_const, delinearize_planes, Tuple, Tuples};

/// isl operations an access relation's final gist may take
/// ([`Isl::optional`]); beyond, the relation stays as it is.
const GIST_MAX_OPS: u64 = 100_000;

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

/// One modeled access, ready to be printed.
struct Prepared<'r> {
    rec: &'r Rec,
    /// (piece condition, output tuple).
    pieces: Tuple,
    kind: AccessKind,
    /// Why a write became a may-write.
    downgrade: Option<String>,
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

    /// The launch-time assumptions of the conversions modelled without
    /// wrapping around ([`crate::eval::NoWrap`]): per conversion, the
    /// parameter values for which no work-item of the NDRange (its global,
    /// local and group ids) has the value outside the type's range; none
    /// where every launch meets it. Where isl cannot make the condition, it
    /// is `false` (every launch fails it: arrays whole, never a wrong range).
    pub(crate) fn no_wrap_assumptions(
        &self,
        conversions: &[crate::eval::NoWrap],
        context: &str,
    ) -> Vec<Assumption> {
        let mut out: Vec<Assumption> = Vec::new();
        for nw in conversions {
            let condition = self
                .no_wrap_condition(nw, context)
                .unwrap_or_else(|_| Some(format!("{}{{ : false }}", self.header)));
            let Some(condition) = condition else { continue };
            match out.iter_mut().find(|a| a.condition == condition) {
                Some(a) => {
                    a.description.push_str("; ");
                    a.description.push_str(&nw.what);
                }
                None => out.push(Assumption {
                    description: nw.what.clone(),
                    condition,
                    array: None,
                }),
            }
        }
        self.without_implied(out, context)
    }

    /// `out` without each assumption that the others kept imply within
    /// `context`: checking it at launch could change nothing (`(size_t)(k +
    /// 1)` not negative implies `get_global_id(0) + (k + 1)`, computed in
    /// `size_t`, not negative, the global offset being at least 0). Taken in
    /// order, each against those still kept, so that of two equal ones the
    /// later goes; all kept where isl cannot tell.
    fn without_implied(&self, out: Vec<Assumption>, context: &str) -> Vec<Assumption> {
        if out.len() < 2 {
            return out;
        }
        let isl = &self.isl;
        let implied = |i: usize, kept: &[bool]| -> IslResult<bool> {
            let mut others = isl.set(context)?;
            for (j, a) in out.iter().enumerate() {
                if j != i && kept[j] {
                    others = others.intersect(isl.set(&a.condition)?).ok_in(isl)?;
                }
            }
            others.is_subset(&isl.set(&out[i].condition)?).ok_in(isl)
        };
        let mut kept = vec![true; out.len()];
        for i in 0..out.len() {
            self.isl.reset();
            if implied(i, &kept).unwrap_or(false) {
                kept[i] = false;
            }
        }
        out.into_iter()
            .zip(kept)
            .filter_map(|(a, k)| k.then_some(a))
            .collect()
    }

    /// [`Renderer::no_wrap_assumptions`] of one conversion: `None` when
    /// every launch meets it.
    fn no_wrap_condition(
        &self,
        nw: &crate::eval::NoWrap,
        context: &str,
    ) -> IslResult<Option<String>> {
        let fail = || IslFail::Error("no text".into());
        let value = self.subst(&nw.value).ok_or_else(fail)?;
        // A scalar that is no parameter of the kernel's relations reaches no
        // access and no condition of one: whether it wraps changes nothing
        // recorded, and there is nothing to assume.
        let mut atoms = Vec::new();
        value.atoms(&mut atoms);
        if atoms
            .iter()
            .any(|a| matches!(a, Atom::Param(n) if !self.param_names.contains(n)))
        {
            return Ok(None);
        }
        if !value.is_affine() {
            // a monotone sum (`eval` checked it): no isl, its largest value
            return self
                .monotone_condition(nw, &value)
                .ok_or_else(fail)
                .map(Some);
        }
        let mut dims: Vec<String> = vec!["x0".into(), "x1".into(), "x2".into()];
        dims.extend(self.lg_dims.iter().cloned());
        // value < lo, or value > hi
        let below = Cond::Ge(
            value
                .scale(-1)
                .and_then(|p| p.add_const(nw.lo - 1))
                .ok_or_else(fail)?,
        );
        let outside = if nw.above {
            let above = Cond::Ge(value.add_const(-nw.hi - 1).ok_or_else(fail)?);
            Cond::Or(vec![below, above])
        } else {
            below
        };
        let piece = Piece {
            dims,
            cond: Cond::And(vec![self.dom.clone(), outside]),
            outs: Vec::new(),
        };
        self.isl.reset();
        let points = self.isl.piece_sets(&self.param_names, &[piece], false)?;
        self.avoiding(points, context)
    }

    /// The launch-time condition that no point of `violations` (a set whose
    /// points break an assumption) exists: the parameter values of
    /// `context` outside its projection, simplified against the context
    /// (isl text); `None` when no parameter value has one.
    fn avoiding(&self, violations: Set, context: &str) -> IslResult<Option<String>> {
        let isl = &self.isl;
        let ctx = isl.set(context)?;
        let viol = violations
            .params()
            .ok_in(isl)?
            .intersect(ctx.copy().ok_in(isl)?)
            .ok_in(isl)?;
        if viol.is_empty().ok_in(isl)? {
            return Ok(None);
        }
        let cond = ctx
            .copy()
            .ok_in(isl)?
            .subtract(viol)
            .ok_in(isl)?
            .gist_params(ctx)
            .ok_in(isl)?
            .coalesce()
            .ok_in(isl)?;
        Ok(Some(isl.set_str(&cond)?))
    }

    /// The condition that the monotone sum `value` (positive coefficients
    /// over non-negative ids, sizes and scalars) stays at most `nw.hi`: its
    /// value with every global id at `gs + go - 1`, local id at `ls - 1` and
    /// group id at `ng - 1`, which isl cannot express (a product of
    /// parameters) and the launcher evaluates; `None` for another form.
    fn monotone_condition(&self, nw: &crate::eval::NoWrap, value: &Poly) -> Option<String> {
        let mut max = Poly::default();
        for (m, c) in &value.terms {
            if *c < 0 {
                return None;
            }
            let mut t = Poly::konst(*c);
            for a in m {
                let largest = match a {
                    Atom::Dim(d) => {
                        let (k, rest) = d.split_at(1);
                        let dd: u32 = rest.parse().ok()?;
                        match k {
                            // ids of dimensions past the NDRange's are 0
                            "x" | "l" | "g" if dd >= self.ndr.work_dim => Poly::konst(0),
                            "x" => self.nd("gs", dd).add(&self.nd("go", dd))?.add_const(-1)?,
                            "l" => self.nd("ls", dd).add_const(-1)?,
                            "g" => self.nd("ng", dd).add_const(-1)?,
                            _ => return None,
                        }
                    }
                    Atom::Param(n) => Poly::param(n),
                    Atom::Div(..) => return None,
                };
                t = t.mul(&largest, &[])?;
            }
            max = max.add(&t)?;
        }
        Some(format!(
            "{}{{ : {} <= {} }}",
            self.header,
            max.describe(),
            nw.hi
        ))
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
            for (strides, ext, t) in konst {
                if exported.is_some() {
                    break;
                }
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
                    {
                        a = tried;
                        notes = notes_k;
                        exported = Some(ex);
                    }
                }
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

    /// Builds the isl relations of the modeled accesses; returns the exported
    /// reads, must-writes and may-writes texts.
    #[allow(clippy::too_many_arguments)]
    fn model(
        &self,
        b: &Buffer,
        tuples: &[(&Rec, Tuple)],
        extents: &[String],
        context: &str,
        a: &mut ArrayAccesses,
        notes: &mut Vec<String>,
        whole: &mut Option<String>,
    ) -> IslResult<(String, String, String)> {
        let isl = &self.isl;
        let n_out = a.strides.len();
        let mut prepared: Vec<Prepared> = Vec::new();
        for (r, pieces) in tuples {
            if pieces.is_empty() {
                continue;
            }
            // Exactness of the relation.
            let path = r
                .path
                .iter()
                .cloned()
                .fold(Cond::True, Cond::and)
                .map_polys(&|q| self.subst(q));
            let mut downgrade = None;
            if r.kind != AccessKind::Read {
                let (_, path_exact) = path.to_isl(true);
                let pieces_exact = pieces.iter().all(|(c, _)| c.to_isl(true).1);
                let mut atoms = Vec::new();
                path.atoms(&mut atoms);
                for (c, t) in pieces {
                    c.atoms(&mut atoms);
                    t.iter().for_each(|p| p.atoms(&mut atoms));
                }
                let relaxed = atoms.iter().any(|at| match at {
                    Atom::Dim(dn) => (0..self.ndr.work_dim).any(|d| {
                        self.ndr.relaxed(d) && (*dn == nd_name("l", d) || *dn == nd_name("g", d))
                    }),
                    _ => false,
                });
                if !path_exact || !pieces_exact {
                    let why = path
                        .unknown()
                        .map(|w| w.msg.clone())
                        .unwrap_or_else(|| "its condition is not affine".into());
                    downgrade = Some(format!(
                        "it executes under a condition that is not modeled: {why}"
                    ));
                } else if !r.exact {
                    downgrade =
                        Some("it is in a loop or branch that is not modeled exactly".into());
                } else if relaxed {
                    downgrade = Some(
                        "it depends on get_local_id/get_group_id and the local size is not known"
                            .into(),
                    );
                }
            }
            let kind = if r.kind == AccessKind::MustWrite && downgrade.is_some() {
                AccessKind::MayWrite
            } else {
                r.kind
            };
            if r.kind == AccessKind::MustWrite {
                if let Some(d) = &downgrade {
                    push_unique(
                        notes,
                        format!("write '{}' ({}) is a may-write: {d}", r.text, self.loc(r)),
                    );
                }
            }
            let _ = &downgrade;
            prepared.push(Prepared {
                rec: r,
                pieces: pieces.clone(),
                kind,
                downgrade,
            });
        }

        let mut reads: Option<Map> = None;
        let mut must: Option<Map> = None;
        let mut may: Option<Map> = None;
        for p in &prepared {
            let r = p.rec;
            let pieces = self.pieces(r, &p.pieces, None);
            // The context is not intersected here: it only restricts the
            // parameters, and the exported unions are simplified against it.
            let m = isl
                .relation(&self.param_names, &b.tuple, &pieces)?
                .coalesce()
                .ok_in(isl)?;
            a.accesses.push(Access {
                kind: p.kind,
                map: isl.map_str(&m)?,
                span: r.span.clone(),
                text: r.text.clone(),
            });
            // Minimize: keep the global ids only.
            let n_in = m.dim(DimType::In).ok_in(isl)? as u32;
            let e = m
                .project_out(DimType::In, 3, n_in - 3)
                .ok_in(isl)?
                .set_tuple_name(DimType::In, "W")
                .ok_in(isl)?;
            let e = e.coalesce().ok_in(isl)?;
            if !self.bounded(
                &e.copy()
                    .ok_in(isl)?
                    .intersect_params(isl.set(context)?)
                    .ok_in(isl)?,
            )? {
                let why = r
                    .note
                    .clone()
                    .unwrap_or_else(|| "a loop bound or guard is not affine".into());
                whole.get_or_insert(format!(
                    "footprint of '{}' ({}) is unbounded: {why}",
                    r.text,
                    self.loc(r)
                ));
            }
            let slot = match p.kind {
                AccessKind::Read => &mut reads,
                AccessKind::MustWrite => &mut must,
                AccessKind::MayWrite => &mut may,
            };
            *slot = Some(match slot.take() {
                None => e.copy().ok_in(isl)?,
                Some(acc) => acc.union(e.copy().ok_in(isl)?).ok_in(isl)?,
            });
            if p.kind == AccessKind::MustWrite {
                may = Some(match may.take() {
                    None => e,
                    Some(acc) => acc.union(e).ok_in(isl)?,
                });
            }
            let _ = &p.downgrade;
        }

        // Launch assumptions of delinearized subscripts.
        if !extents.is_empty() && self.may_violate(&prepared, extents, context)? {
            for p in &prepared {
                self.assumptions(p, extents, context, a)?;
            }
        }

        let finish = |m: Option<Map>| -> IslResult<String> {
            match m {
                None => Ok(self.empty_map(&b.tuple, n_out)),
                Some(m) => {
                    let m = m.coalesce().ok_in(isl)?.remove_redundancies().ok_in(isl)?;
                    // The gist only shortens the text (the partitioner
                    // intersects with the context again): skipped when it
                    // costs more than the rest of the array's analysis.
                    let ctx = isl.set(context)?;
                    let m = match isl.optional(GIST_MAX_OPS, || m.copy()?.gist_params(ctx)) {
                        Some(g) => g,
                        None => m,
                    };
                    let m = m.coalesce().ok_in(isl)?;
                    if m.is_empty().ok_in(isl)? {
                        Ok(self.empty_map(&b.tuple, n_out))
                    } else {
                        isl.map_str(&m)
                    }
                }
            }
        };
        Ok((finish(reads)?, finish(must)?, finish(may)?))
    }

    /// The disjuncts of an access relation `W[dims] -> name[outs] : cond`
    /// (with `violation`, of the set of domain points `W[dims] : cond`
    /// violating it).
    fn pieces(
        &self,
        r: &Rec,
        pieces: &[(Cond, Vec<Poly>)],
        violation: Option<&Violation>,
    ) -> Vec<Piece> {
        let mut dims: Vec<String> = vec!["x0".into(), "x1".into(), "x2".into()];
        dims.extend(self.lg_dims.iter().cloned());
        dims.extend(r.iters.iter().cloned());
        let lane = if r.lanes > 1 {
            let mut l = "lane".to_string();
            while dims.contains(&l) || self.param_names.contains(&l) {
                l.push('_');
            }
            dims.push(l.clone());
            Some(l)
        } else {
            None
        };
        let path = r
            .path
            .iter()
            .cloned()
            .fold(Cond::True, Cond::and)
            .map_polys(&|q| self.subst(q));
        let mut parts = Vec::new();
        for (c, tuple) in pieces {
            let mut outs: Vec<Poly> = tuple.clone();
            let mut cond = Cond::And(vec![self.dom.clone(), path.clone(), c.clone()]);
            if let Some(l) = &lane {
                let l = Poly::dim(l);
                if let Some(last) = outs.last_mut() {
                    *last = last.add(&l).unwrap_or_default();
                }
                // 0 <= lane < lanes
                cond = Cond::and(cond, Cond::Ge(l.clone()));
                cond = Cond::and(
                    cond,
                    Cond::Ge(
                        l.scale(-1)
                            .unwrap_or_default()
                            .add_const(r.lanes as i128 - 1)
                            .unwrap_or_default(),
                    ),
                );
            }
            if let Some(f) = violation {
                cond = Cond::and(cond, f(&outs));
                outs.clear();
            }
            parts.push(Piece {
                dims: dims.clone(),
                cond,
                outs,
            });
        }
        parts
    }

    /// Whether the assumptions of constant strides can all hold at once in a
    /// launch that does work: some access of `tuples` executes, every
    /// global size is at least 16 and every unknown local size at least 2.
    /// An assumption that holds only for empty or degenerate launches
    /// (`ls0 = 1 and gs0 <= 2`, `n <= go0`) would run real launches
    /// unsplit, where the one-dimensional model splits them. isl failures
    /// count as "no".
    fn assumptions_can_hold(
        &self,
        assumptions: &[Assumption],
        tuples: &Tuples,
        context: &str,
    ) -> bool {
        if assumptions.is_empty() {
            return true;
        }
        let isl = &self.isl;
        let mut sizes = Vec::new();
        for d in 0..self.ndr.work_dim {
            for (kind, least) in [("gs", 16), ("ls", 2)] {
                let n = nd_name(kind, d);
                if self.param_names.contains(&n) && !self.spec.contains_key(&n) {
                    sizes.push(Cond::Ge(
                        Poly::param(&n).add_const(-least).unwrap_or_default(),
                    ));
                }
            }
        }
        let executes = |_: &[Poly]| Cond::True;
        let mut runs = Vec::new();
        for (r, pieces) in tuples {
            runs.extend(self.pieces(r, pieces, Some(&executes)));
        }
        if runs.is_empty() {
            return true;
        }
        let can = || -> IslResult<bool> {
            let mut s = isl.set(context)?;
            s = s
                .intersect(isl.params_set(
                    &self.param_names,
                    &sizes.iter().cloned().fold(Cond::True, Cond::and),
                )?)
                .ok_in(isl)?;
            s = s
                .intersect(isl.piece_sets(&self.param_names, &runs, true)?)
                .ok_in(isl)?;
            for x in assumptions {
                s = s.intersect(isl.set(&x.condition)?).ok_in(isl)?;
            }
            Ok(!s.is_empty().ok_in(isl)?)
        };
        can().unwrap_or(false)
    }

    /// Whether the footprint is bounded for every parameter value (isl's
    /// recession-cone test on the range, `isl_set_is_bounded`).
    fn bounded(&self, m: &Map) -> IslResult<bool> {
        let isl = &self.isl;
        m.copy()
            .ok_in(isl)?
            .range()
            .ok_in(isl)?
            .is_bounded()
            .ok_in(isl)
    }

    /// Whether some access may violate `0 <= out_k < extent_k` for some
    /// parameter values (one parameter set for all accesses: the fast path).
    fn may_violate(
        &self,
        prepared: &[Prepared],
        extents: &[String],
        context: &str,
    ) -> IslResult<bool> {
        let isl = &self.isl;
        for (k, ext) in extents.iter().enumerate() {
            let viol = violation(k + 1, ext);
            let mut parts = Vec::new();
            for p in prepared {
                parts.extend(self.pieces(p.rec, &p.pieces, Some(&viol)));
            }
            if parts.is_empty() {
                continue;
            }
            if !isl
                .piece_sets(&self.param_names, &parts, true)?
                .intersect(isl.set(context)?)
                .ok_in(isl)?
                .is_empty()
                .ok_in(isl)?
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Adds the assumptions `0 <= out_k < extent_k` (k >= 1) of one access.
    fn assumptions(
        &self,
        p: &Prepared,
        extents: &[String],
        context: &str,
        a: &mut ArrayAccesses,
    ) -> IslResult<()> {
        for (k, ext) in extents.iter().enumerate() {
            let dim = k + 1;
            let viol = violation(dim, ext);
            let points = self.isl.piece_sets(
                &self.param_names,
                &self.pieces(p.rec, &p.pieces, Some(&viol)),
                false,
            )?;
            let Some(cond_s) = self.avoiding(points, context)? else {
                continue;
            };
            // Describe with the outputs of the first piece.
            let shown: Vec<String> = p
                .pieces
                .iter()
                .map(|(_, o)| o[dim].to_isl().unwrap_or_default())
                .collect();
            let mut uniq: Vec<String> = Vec::new();
            for s in shown {
                push_unique(&mut uniq, s);
            }
            let description = format!(
                "0 <= {} < {ext} in {} ({}:{}:{})",
                uniq.join(" | "),
                p.rec.text,
                self.file,
                p.rec.span.line,
                p.rec.span.col
            );
            if let Some(existing) = a.assumptions.iter_mut().find(|x| x.condition == cond_s) {
                if !existing.description.contains(&p.rec.text) {
                    existing.description.push_str(&format!("; {description}"));
                }
            } else {
                a.assumptions.push(Assumption {
                    description,
                    condition: cond_s,
                    array: None,
                });
            }
        }
        Ok(())
    }
}

/// The condition that output `dim` leaves `[0, ext)` (`ext` a parameter's
/// name or a number, as delinearization gives it).
fn violation(dim: usize, ext: &str) -> impl Fn(&[Poly]) -> Cond + '_ {
    move |outs: &[Poly]| {
        let t = outs.get(dim).cloned().unwrap_or_default();
        let ext = match ext.parse::<i128>() {
            Ok(k) => Poly::konst(k),
            Err(_) => Poly::param(ext),
        };
        // t < 0, or t >= ext
        let below = t.scale(-1).and_then(|p| p.add_const(-1));
        let above = t.sub(&ext);
        match (below, above) {
            (Some(b), Some(a)) => Cond::Or(vec![Cond::Ge(b), Cond::Ge(a)]),
            _ => Cond::Unknown(crate::poly::Why::other("arithmetic overflow")),
        }
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

/// The condition under which an output tuple violates an assumption.
type Violation<'f> = dyn Fn(&[Poly]) -> Cond + 'f;
