//! From recorded accesses to isl relations: parameters and context, the
//! domain, per-array delinearization, minimization and launch assumptions.

use crate::eval::{is_isl_keyword, nd_name, IntVal, Ndr, PtrTarget, Rec, Val, Walker};
use crate::isl::{Isl, IslFail, IslOk, IslResult};
use crate::poly::{Atom, Cond, Poly, WhyKind};
use crate::{
    Access, AccessKind, AnalysisError, AnalysisOptions, ArrayAccesses, Assumption, KernelAccesses, Linearization, Mode,
    ParamInfo, ParamSource,
};
use coarsen::ir::{AddrSpace, ExprKind, Function, Program, Type, WorkItemFn};
use isl_rs::{DimType, Map};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// isl operations an access relation's final gist may take
/// ([`Isl::optional`]); beyond, the relation stays as it is.
const GIST_MAX_OPS: u64 = 100_000;

const ND_KINDS: [&str; 4] = ["gs", "ls", "go", "ng"];

/// Analyzes the accesses of kernel `kernel` of `program`.
pub fn analyze_kernel(
    program: &Program,
    kernel: &str,
    options: &AnalysisOptions,
) -> Result<KernelAccesses, AnalysisError> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(options.time_budget_ms);
    analyze_kernel_until(program, kernel, options, deadline)
}

/// [`analyze_kernel`] with an explicit deadline (the caller's per-kernel
/// budget): isl work still running at `deadline` is abandoned and the arrays
/// it was for are whole. With `time_budget_ms == 0` there is no deadline.
pub fn analyze_kernel_until(
    program: &Program,
    kernel: &str,
    options: &AnalysisOptions,
    deadline: std::time::Instant,
) -> Result<KernelAccesses, AnalysisError> {
    let k = program.kernel(Some(kernel)).map_err(|_| AnalysisError::UnknownKernel {
        file: program.file.clone(),
        name: kernel.to_string(),
        available: program.kernels().map(|k| k.name.as_str()).collect::<Vec<_>>().join(", "),
    })?;
    if let Some(ls) = options.local_size {
        if ls.iter().any(|v| *v < 1) {
            return Err(AnalysisError::InvalidLocalSize {
                file: program.file.clone(),
                kernel: k.name.clone(),
                value: ls,
            });
        }
    }
    let funcs = reachable(program, k);
    let (work_dim, lg_used, odd_dims) = scan_work_items(&funcs);
    let ndr = Ndr::new(work_dim, options.local_size, lg_used);

    // Reserved names: NDRange parameters and domain dimensions.
    let mut reserved: Vec<String> = Vec::new();
    for d in 0..3 {
        for kind in ND_KINDS.iter().chain(["x", "l", "g"].iter()) {
            reserved.push(nd_name(kind, d));
        }
    }
    // Integer scalar arguments become parameters.
    let mut scalar_isl: HashMap<String, (String, u32)> = HashMap::new();
    let mut taken = reserved.clone();
    for (i, p) in k.params.iter().enumerate() {
        if is_int_type(&p.ty) {
            let mut name = p.name.clone();
            if taken.iter().any(|t| t.eq_ignore_ascii_case(&name)) || is_isl_keyword(&name) || name == "W" {
                name = format!("arg_{}", p.name);
                while taken.iter().any(|t| t.eq_ignore_ascii_case(&name)) {
                    name.push('_');
                }
            }
            taken.push(name.clone());
            scalar_isl.insert(p.name.clone(), (name, i as u32));
        } else {
            taken.push(p.name.clone());
        }
    }
    taken.push("W".into());
    taken.push("lane".into());

    // Specialized values, keyed by isl name.
    let mut spec: BTreeMap<String, i128> = BTreeMap::new();
    for (key, v) in &options.specialize {
        let isl_name = if let Some((n, _)) = scalar_isl.get(key) {
            n.clone()
        } else if ["gs", "go", "ng"].iter().any(|kind| (0..3).any(|d| *key == nd_name(kind, d))) {
            key.clone()
        } else {
            let mut valid: Vec<String> =
                k.params.iter().filter(|p| is_int_type(&p.ty)).map(|p| p.name.clone()).collect();
            for d in 0..work_dim {
                for kind in ["gs", "go", "ng"] {
                    valid.push(nd_name(kind, d));
                }
            }
            return Err(AnalysisError::UnknownParameter {
                file: program.file.clone(),
                kernel: k.name.clone(),
                name: key.clone(),
                valid: valid.join(", "),
            });
        };
        spec.insert(isl_name, *v as i128);
    }

    // Buffers and the kernel's initial environment.
    let mut env: HashMap<String, Val> = HashMap::new();
    let mut buffers = Vec::new();
    let mut buf_names = Vec::new();
    let mut buf_args: Vec<u32> = Vec::new();
    for (i, p) in k.params.iter().enumerate() {
        buf_names.push(p.name.clone());
        let v = match &p.ty {
            Type::Pointer { pointee, space: space @ (AddrSpace::Global | AddrSpace::Constant), is_const } => {
                buffers.push(Buffer {
                    arg_index: i as u32,
                    name: p.name.clone(),
                    tuple: if is_isl_keyword(&p.name) || p.name == "W" {
                        format!("arr_{}", p.name)
                    } else {
                        p.name.clone()
                    },
                    elem_type: pointee.name(),
                    elem_size: pointee.size().unwrap_or(1),
                    is_constant_space: *space == AddrSpace::Constant,
                    read_only: *is_const || *space == AddrSpace::Constant,
                });
                buf_args.push(i as u32);
                Val::Ptr(vec![PtrTarget { buf: i as u32, off: IntVal::konst(0) }])
            }
            t if is_int_type(t) => Val::Int(IntVal::poly(Poly::param(&scalar_isl[&p.name].0))),
            _ => Val::Other,
        };
        env.insert(p.name.clone(), v);
    }

    let unsupported = program.unsupported_in(&k.name);
    let mut reason = unsupported.first().map(|d| format!("{} ({}:{}:{})", d.message, d.file, d.span.line, d.span.col));

    let mut walker = Walker::new(program, &ndr, &spec, taken);
    walker.buf_names = buf_names;
    walker.buf_args = buf_args;
    for p in &k.params {
        if let (Some((isl_name, _)), Some((lo, hi, _, _))) = (scalar_isl.get(&p.name), crate::eval::int_range(&p.ty)) {
            walker.param_bounds.insert(isl_name.clone(), (lo, hi));
        }
        if let Type::Scalar(sc) = &p.ty {
            walker.var_types_insert(&p.name, *sc);
        }
    }
    walker.run(k, env);
    if walker.exhausted() && reason.is_none() {
        reason = Some(format!(
            "the kernel is too large to analyze: more than {} statements after inlining helpers ({}:{}:{})",
            crate::eval::MAX_STEPS,
            program.file,
            k.span.line,
            k.span.col
        ));
    }

    let mut notes = Vec::new();
    if odd_dims {
        notes.push("a work-item builtin has a non-constant dimension; all three dimensions are modeled".to_string());
    }
    if options.local_size.is_none() && (0..work_dim).any(|d| ndr.relaxed(d)) {
        notes.push(
            "get_local_id/get_group_id are over-approximated: the local size is not known (pass it for exact results)"
                .to_string(),
        );
    }
    if let Some(ls) = options.local_size {
        notes.push(format!("local size specialized to [{}, {}, {}]", ls[0], ls[1], ls[2]));
    }
    for (n, v) in &options.specialize {
        notes.push(format!("specialized {n} = {v}"));
    }
    notes.extend(walker.notes.iter().cloned());

    // Parameters: the NDRange ones, then the scalar arguments that appear.
    let mut params: Vec<ParamInfo> = Vec::new();
    for (kind, mk) in [
        ("gs", ParamSource::GlobalSize as fn(u32) -> ParamSource),
        ("ls", ParamSource::LocalSize),
        ("go", ParamSource::GlobalOffset),
        ("ng", ParamSource::NumGroups),
    ] {
        for d in 0..work_dim {
            let name = nd_name(kind, d);
            if (kind == "ls" && options.local_size.is_some()) || spec.contains_key(&name) {
                continue;
            }
            params.push(ParamInfo { name, source: mk(d) });
        }
    }
    let mut used: BTreeSet<String> = BTreeSet::new();
    for r in &walker.recs {
        let mut atoms = Vec::new();
        if let Ok(pieces) = &r.sub {
            for (c, p) in pieces {
                c.atoms(&mut atoms);
                p.atoms(&mut atoms);
            }
        }
        for c in &r.path {
            c.atoms(&mut atoms);
        }
        for a in atoms {
            if let Atom::Param(n) = a {
                used.insert(n);
            }
        }
    }
    let mut scalars: Vec<(&String, u32)> = scalar_isl.values().map(|(n, i)| (n, *i)).collect();
    scalars.sort_by_key(|(_, i)| *i);
    for (n, i) in scalars {
        if used.contains(n) && !spec.contains_key(n) {
            params.push(ParamInfo { name: n.clone(), source: ParamSource::ScalarArg { arg_index: i } });
        }
    }

    let mut r = Renderer::new(&ndr, &spec, &params, options, &program.file);
    if options.time_budget_ms > 0 {
        r.isl.arm(deadline, options.time_budget_ms);
    }
    let context = r.context_text();
    let domain_raw = format!("{}{{ W[x0, x1, x2] : {} }}", r.header, r.x_domain);
    let (context_s, domain_s) = {
        let pretty = |t: &str, gist: bool| -> IslResult<String> {
            r.isl.reset();
            let s = r.isl.set(t)?;
            let s = if gist { s.gist_params(r.isl.set(&context)?).ok_in(&r.isl)? } else { s };
            r.isl.set_str(&s)
        };
        (
            pretty(&context, false).unwrap_or_else(|_| context.clone()),
            pretty(&domain_raw, true).unwrap_or(domain_raw.clone()),
        )
    };

    let mut arrays = Vec::new();
    for b in &buffers {
        let recs: Vec<&Rec> = walker.recs.iter().filter(|rec| rec.buf == b.arg_index).collect();
        let mut a = r.array(b, &recs, &context);
        if let Some(why) = &reason {
            r.force_whole(&mut a, b, &format!("kernel is not analyzable: {why}"), &context);
        }
        arrays.push(a);
    }

    Ok(KernelAccesses {
        kernel: k.name.clone(),
        file: program.file.clone(),
        work_dim,
        params,
        context: context_s,
        domain: domain_s,
        arrays,
        analyzable: reason.is_none(),
        reason,
        global_atomics: walker.atomics.clone(),
        notes,
    })
}

fn is_int_type(t: &Type) -> bool {
    matches!(t, Type::Scalar(s) if !s.is_float())
}

/// The kernel and the helpers it calls (transitively), kernel first.
fn reachable<'p>(program: &'p Program, k: &'p Function) -> Vec<&'p Function> {
    let mut out = vec![k];
    let mut i = 0;
    while i < out.len() {
        for c in coarsen::ir::callees(&out[i].body) {
            if let Some(f) = program.function(&c) {
                if !out.iter().any(|g| g.name == f.name) {
                    out.push(f);
                }
            }
        }
        i += 1;
    }
    out
}

/// work_dim, which dimensions use local/group ids, and whether some builtin
/// has a non-constant dimension.
fn scan_work_items(funcs: &[&Function]) -> (u32, [bool; 3], bool) {
    let mut max_dim = 0u32;
    let mut lg = [false; 3];
    let mut odd = false;
    for f in funcs {
        coarsen::ir::visit_exprs(&f.body, &mut |e| {
            if let ExprKind::WorkItem(w, d) = &e.kind {
                if *w == WorkItemFn::WorkDim {
                    return;
                }
                match d.const_int() {
                    Some(v) if (0..3).contains(&v) => {
                        max_dim = max_dim.max(v as u32 + 1);
                        if matches!(w, WorkItemFn::LocalId | WorkItemFn::GroupId) {
                            lg[v as usize] = true;
                        }
                    }
                    Some(_) => {}
                    None => odd = true,
                }
            }
        });
    }
    let wd = if odd { 3 } else { max_dim.max(1) };
    (wd, lg, odd)
}

struct Buffer {
    arg_index: u32,
    name: String,
    /// The isl tuple name: `name`, or `arr_<name>` for isl keywords and `W`.
    tuple: String,
    elem_type: String,
    elem_size: u32,
    is_constant_space: bool,
    read_only: bool,
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

struct Renderer<'a> {
    isl: Isl,
    ndr: &'a Ndr,
    spec: &'a BTreeMap<String, i128>,
    options: &'a AnalysisOptions,
    file: String,
    /// `[p1, p2] -> `
    header: String,
    /// Domain constraints over x, l, g dims.
    dom: String,
    /// Domain constraints over x dims only.
    x_domain: String,
    lg_dims: Vec<String>,
    param_names: Vec<String>,
}

impl<'a> Renderer<'a> {
    fn new(
        ndr: &'a Ndr,
        spec: &'a BTreeMap<String, i128>,
        params: &[ParamInfo],
        options: &'a AnalysisOptions,
        file: &str,
    ) -> Self {
        let header = format!("[{}] -> ", params.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", "));
        let mut r = Renderer {
            isl: Isl::new(options.max_operations),
            ndr,
            spec,
            options,
            file: file.to_string(),
            header,
            dom: String::new(),
            x_domain: String::new(),
            lg_dims: Vec::new(),
            param_names: params.iter().map(|p| p.name.clone()).collect(),
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
            xc = Cond::and(xc, Cond::Ge(gs.sub(&xr).and_then(|p| p.add_const(-1)).unwrap_or_default()));
            if ndr.lg_used[d as usize] {
                let (l, g) = (nd_name("l", d), nd_name("g", d));
                r.lg_dims.push(l.clone());
                r.lg_dims.push(g.clone());
                let (lp, gp) = (Poly::dim(&l), Poly::dim(&g));
                let ls = r.nd("ls", d);
                let ng = r.nd("ng", d);
                let lt = |a: &Poly, b: &Poly| Cond::Ge(b.sub(a).and_then(|p| p.add_const(-1)).unwrap_or_default());
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
                        lgc = Cond::and(lgc, Cond::Ge(gs.sub(&ls).and_then(|p| p.sub(&rest)).unwrap_or_default()));
                    }
                }
            }
        }
        r.x_domain = xc.to_isl(true).0;
        r.dom = Cond::and(xc, lgc).to_isl(true).0;
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

    fn context_text(&self) -> String {
        let mut c = Cond::True;
        for d in 0..self.ndr.work_dim {
            let (gs, ls, go, ng) = (self.nd("gs", d), self.nd("ls", d), self.nd("go", d), self.nd("ng", d));
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
        let c = c.map_polys(&|p| Some(p.clone()));
        format!("{}{{ : {} }}", self.header, c.to_isl(true).0)
    }

    fn loc(&self, r: &Rec) -> String {
        format!("{}:{}:{}", self.file, r.span.line, r.span.col)
    }

    fn out_tuple(name: &str, n: usize) -> String {
        let dims: Vec<String> = (0..n).map(|i| format!("o{i}")).collect();
        format!("{name}[{}]", dims.join(", "))
    }

    fn empty_map(&self, name: &str, n: usize) -> String {
        format!("{}{{ W[x0, x1, x2] -> {} : false }}", self.header, Self::out_tuple(name, n))
    }

    fn universe_map(&self, name: &str, n: usize, context: &str) -> String {
        let raw = format!("{}{{ W[x0, x1, x2] -> {} : {} }}", self.header, Self::out_tuple(name, n), self.x_domain);
        let pretty = || -> IslResult<String> {
            self.isl.reset();
            let m = self.isl.map(&raw)?.gist_params(self.isl.set(context)?).ok_in(&self.isl)?;
            self.isl.map_str(&m)
        };
        pretty().unwrap_or(raw)
    }

    /// Makes the array whole for `reason` (used for unanalyzable kernels):
    /// every work-item may read (and, unless read-only, write) every element.
    fn force_whole(&self, a: &mut ArrayAccesses, b: &Buffer, reason: &str, context: &str) {
        a.whole = Some(reason.to_string());
        a.mode = if b.read_only { Mode::R } else { Mode::RW };
        a.strides = vec!["1".into()];
        a.linearization = Linearization::Affine;
        a.assumptions.clear();
        let universe = self.universe_map(&b.tuple, 1, context);
        a.reads = universe.clone();
        a.must_writes = self.empty_map(&b.tuple, 1);
        a.may_writes = if b.read_only { self.empty_map(&b.tuple, 1) } else { universe.clone() };
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
    fn array(&self, b: &Buffer, recs: &[&Rec], context: &str) -> ArrayAccesses {
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
                    WhyKind::Indirect => format!("subscript '{}' is indirect ({})", r.text, self.loc(r)),
                    WhyKind::Escape => format!("'{}' {} ({})", b.name, w.msg, self.loc(r)),
                    WhyKind::Other => format!("subscript '{}' is not affine: {} ({})", r.text, w.msg, self.loc(r)),
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
                    whole.get_or_insert(format!("subscript '{}' overflows ({})", r.text, self.loc(r)));
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
        let mut tuples: Tuples = Vec::new();
        let mut extents: Vec<String> = Vec::new();
        if any_nonaffine {
            if !self.options.delinearize {
                let r = shaped.iter().find(|(_, ps)| ps.iter().any(|(_, p)| !p.is_affine())).map(|(r, _)| *r);
                if let Some(r) = r {
                    whole.get_or_insert(format!(
                        "subscript '{}' is not affine and delinearization is disabled ({})",
                        r.text,
                        self.loc(r)
                    ));
                }
                global_failure = true;
            } else {
                match delinearize(&shaped, 0) {
                    Ok((strides, ext, t, n_choices)) => {
                        a.strides = strides;
                        extents = ext;
                        tuples = t;
                        a.linearization = Linearization::Delinearized;
                        // A product of parameters with no variable stride to
                        // match (`a[k*n + j]`: stride k or n?): each choice is
                        // tried below, the first is the default.
                        if n_choices > 1 {
                            konst = (0..n_choices)
                                .filter_map(|pick| delinearize(&shaped, pick).ok().map(|(s, e, t, _)| (s, e, t)))
                                .collect();
                        }
                    }
                    Err((r, msg)) => {
                        let reason = match r {
                            Some(r) => format!("subscript '{}' is not affine: {} ({})", r.text, msg, self.loc(r)),
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
                konst = [false, true].iter().filter_map(|&nearest| delinearize_const(&shaped, nearest)).collect();
            }
            tuples =
                shaped.into_iter().map(|(r, ps)| (r, ps.into_iter().map(|(c, p)| (c, vec![p])).collect())).collect();
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
                    if whole_k.is_none() && self.assumptions_can_hold(&tried.assumptions, &t, context) {
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
            let res = self.model(b, &tuples, &extents, context, &mut a, &mut notes, &mut whole);
            match res {
                Ok(t) => exported = Some(t),
                Err(f) => {
                    let reason = match f {
                        IslFail::Limit(n) => format!("isl operation limit ({n}) exceeded while analyzing '{}'", b.name),
                        IslFail::Error(m) => format!("internal error: isl failed while analyzing '{}': {m}", b.name),
                        IslFail::Deadline(ms) => format!("analysis time budget ({ms} ms) exceeded while analyzing '{}'", b.name),
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
                a.whole = w.clone().or(Some(format!("'{}' could not be modeled", b.name)));
                let (rd, mw, yw) = ex.unwrap_or_else(|| {
                    (self.empty_map(&b.tuple, n_out), self.empty_map(&b.tuple, n_out), self.empty_map(&b.tuple, n_out))
                });
                let all = global_failure;
                a.reads =
                    if has_read && (all || unmodeled_read) { self.universe_map(&b.tuple, n_out, context) } else { rd };
                a.must_writes = if all { self.empty_map(&b.tuple, n_out) } else { mw };
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
            if a.accesses.iter().any(|x| x.span == r.span && x.kind == r.kind) {
                continue;
            }
            a.accesses.push(Access {
                kind: if r.kind == AccessKind::MustWrite { AccessKind::MayWrite } else { r.kind },
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
            let path = r.path.iter().cloned().fold(Cond::True, Cond::and).map_polys(&|q| self.subst(q));
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
                    Atom::Dim(dn) => (0..self.ndr.work_dim)
                        .any(|d| self.ndr.relaxed(d) && (*dn == nd_name("l", d) || *dn == nd_name("g", d))),
                    _ => false,
                });
                if !path_exact || !pieces_exact {
                    let why =
                        path.unknown().map(|w| w.msg.clone()).unwrap_or_else(|| "its condition is not affine".into());
                    downgrade = Some(format!("it executes under a condition that is not modeled: {why}"));
                } else if !r.exact {
                    downgrade = Some("it is in a loop or branch that is not modeled exactly".into());
                } else if relaxed {
                    downgrade = Some("it depends on get_local_id/get_group_id and the local size is not known".into());
                }
            }
            let kind =
                if r.kind == AccessKind::MustWrite && downgrade.is_some() { AccessKind::MayWrite } else { r.kind };
            if r.kind == AccessKind::MustWrite {
                if let Some(d) = &downgrade {
                    push_unique(notes, format!("write '{}' ({}) is a may-write: {d}", r.text, self.loc(r)));
                }
            }
            let _ = &downgrade;
            prepared.push(Prepared { rec: r, pieces: pieces.clone(), kind, downgrade });
        }

        let mut reads: Option<Map> = None;
        let mut must: Option<Map> = None;
        let mut may: Option<Map> = None;
        for p in &prepared {
            let r = p.rec;
            let text = self.full_map_text(r, &p.pieces, &b.tuple, None);
            // The context is not intersected here: it only restricts the
            // parameters, and the exported unions are simplified against it.
            let m = isl.map(&text)?.coalesce().ok_in(isl)?;
            a.accesses.push(Access { kind: p.kind, map: isl.map_str(&m)?, span: r.span.clone(), text: r.text.clone() });
            // Minimize: keep the global ids only.
            let n_in = m.dim(DimType::In).ok_in(isl)? as u32;
            let e = m.project_out(DimType::In, 3, n_in - 3).ok_in(isl)?.set_tuple_name(DimType::In, "W").ok_in(isl)?;
            let e = e.coalesce().ok_in(isl)?;
            if !self.bounded(&e.copy().ok_in(isl)?.intersect_params(isl.set(context)?).ok_in(isl)?)? {
                let why = r.note.clone().unwrap_or_else(|| "a loop bound or guard is not affine".into());
                whole.get_or_insert(format!("footprint of '{}' ({}) is unbounded: {why}", r.text, self.loc(r)));
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

    /// The full relation of one access as isl text. With `violation`, the set
    /// of domain points where the given constraint text fails instead.
    fn full_map_text(
        &self,
        r: &Rec,
        pieces: &[(Cond, Vec<Poly>)],
        name: &str,
        violation: Option<&Violation>,
    ) -> String {
        let parts = self.pieces_text(r, pieces, name, violation, false);
        format!("{}{{ {} }}", self.header, parts.join("; "))
    }

    /// The disjuncts of an access relation (or, with `violation`, of the set
    /// of domain points violating it; as parameter-set disjuncts `exists
    /// (dims : ...)` when `params_only`).
    fn pieces_text(
        &self,
        r: &Rec,
        pieces: &[(Cond, Vec<Poly>)],
        name: &str,
        violation: Option<&Violation>,
        params_only: bool,
    ) -> Vec<String> {
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
        let path = r.path.iter().cloned().fold(Cond::True, Cond::and).map_polys(&|q| self.subst(q));
        let (path_t, _) = path.to_isl(true);
        let mut parts = Vec::new();
        for (c, tuple) in pieces {
            let (ct, _) = c.to_isl(true);
            let mut outs: Vec<Poly> = tuple.clone();
            let mut lane_c = String::new();
            if let Some(l) = &lane {
                if let Some(last) = outs.last_mut() {
                    *last = last.add(&Poly::dim(l)).unwrap_or_default();
                }
                lane_c = format!(" and 0 <= {l} < {}", r.lanes);
            }
            let conds = format!("({}) and ({}) and ({}){}", self.dom, path_t, ct, lane_c);
            match violation {
                None => {
                    let outs_t: Vec<String> = outs.iter().map(|p| p.to_isl().unwrap_or_else(|| "0".into())).collect();
                    parts.push(format!("W[{}] -> {}[{}] : {}", dims.join(", "), name, outs_t.join(", "), conds));
                }
                Some(f) if params_only => {
                    parts.push(format!("exists ({} : {} and ({}))", dims.join(", "), conds, f(&outs)))
                }
                Some(f) => parts.push(format!("W[{}] : {} and ({})", dims.join(", "), conds, f(&outs))),
            }
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
    fn assumptions_can_hold(&self, assumptions: &[Assumption], tuples: &Tuples, context: &str) -> bool {
        if assumptions.is_empty() {
            return true;
        }
        let isl = &self.isl;
        let mut sizes = Vec::new();
        for d in 0..self.ndr.work_dim {
            for (kind, least) in [("gs", 16), ("ls", 2)] {
                let n = nd_name(kind, d);
                if self.param_names.contains(&n) && !self.spec.contains_key(&n) {
                    sizes.push(format!("{n} >= {least}"));
                }
            }
        }
        let sizes = if sizes.is_empty() { "true".to_string() } else { sizes.join(" and ") };
        let executes = |_: &[Poly]| "true".to_string();
        let mut runs = Vec::new();
        for (r, pieces) in tuples {
            runs.extend(self.pieces_text(r, pieces, "A", Some(&executes), true));
        }
        if runs.is_empty() {
            return true;
        }
        let can = || -> IslResult<bool> {
            let mut s = isl.set(context)?;
            s = s.intersect(isl.set(&format!("{}{{ : {sizes} }}", self.header))?).ok_in(isl)?;
            s = s.intersect(isl.set(&format!("{}{{ : {} }}", self.header, runs.join(" or ")))?).ok_in(isl)?;
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
        m.copy().ok_in(isl)?.range().ok_in(isl)?.is_bounded().ok_in(isl)
    }

    /// Whether some access may violate `0 <= out_k < extent_k` for some
    /// parameter values (one parameter set for all accesses: the fast path).
    fn may_violate(&self, prepared: &[Prepared], extents: &[String], context: &str) -> IslResult<bool> {
        let isl = &self.isl;
        for (k, ext) in extents.iter().enumerate() {
            let viol = violation_text(k + 1, ext);
            let mut parts = Vec::new();
            for p in prepared {
                parts.extend(self.pieces_text(p.rec, &p.pieces, "A", Some(&viol), true));
            }
            if parts.is_empty() {
                continue;
            }
            let text = format!("{}{{ : {} }}", self.header, parts.join(" or "));
            if !isl.set(&text)?.intersect(isl.set(context)?).ok_in(isl)?.is_empty().ok_in(isl)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Adds the assumptions `0 <= out_k < extent_k` (k >= 1) of one access.
    fn assumptions(&self, p: &Prepared, extents: &[String], context: &str, a: &mut ArrayAccesses) -> IslResult<()> {
        let isl = &self.isl;
        for (k, ext) in extents.iter().enumerate() {
            let dim = k + 1;
            let viol = violation_text(dim, ext);
            let text = self.full_map_text(p.rec, &p.pieces, "A", Some(&viol));
            let v = isl.set(&text)?.params().ok_in(isl)?.intersect(isl.set(context)?).ok_in(isl)?;
            if v.is_empty().ok_in(isl)? {
                continue;
            }
            let cond = isl
                .set(context)?
                .subtract(v)
                .ok_in(isl)?
                .gist_params(isl.set(context)?)
                .ok_in(isl)?
                .coalesce()
                .ok_in(isl)?;
            let cond_s = isl.set_str(&cond)?;
            // Describe with the outputs of the first piece.
            let shown: Vec<String> = p.pieces.iter().map(|(_, o)| o[dim].to_isl().unwrap_or_default()).collect();
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
                a.assumptions.push(Assumption { description, condition: cond_s });
            }
        }
        Ok(())
    }
}

/// The constraint violated when output `dim` leaves `[0, ext)`.
fn violation_text(dim: usize, ext: &str) -> impl Fn(&[Poly]) -> String + '_ {
    move |outs: &[Poly]| {
        let t = outs.get(dim).and_then(|p| p.to_isl()).unwrap_or_else(|| "0".into());
        format!("{t} < 0 or {t} >= {ext}")
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

/// The output tuples of one access, per piece: (condition, subscript per dimension).
type Tuple = Vec<(Cond, Vec<Poly>)>;
type Tuples<'r> = Vec<(&'r Rec, Tuple)>;
/// Renders the constraint violated by an output tuple.
type Violation<'f> = dyn Fn(&[Poly]) -> String + 'f;

/// Splits the subscripts of one array into dimensions by their parameter
/// monomials: `y*width + x` -> `width·(y) + 1·(x)`. Returns the strides, the
/// extents of dimensions 1.. (each a single parameter), the tuples, and the
/// number of choices of stride for a product of parameters that matches no
/// stride of a variable (`k*n` in `a[k*n + j]`: `k` or `n`; 1 when there is
/// none): `pick` selects one, 0 leaving out the last parameter by name.
#[allow(clippy::type_complexity)]
fn delinearize<'r>(
    shaped: &[(&'r Rec, Vec<(Cond, Poly)>)],
    pick: usize,
) -> Result<(Vec<String>, Vec<String>, Tuples<'r>, usize), (Option<&'r Rec>, String)> {
    let mut n_choices = 1;
    // Strides multiplying a variable, over the whole array.
    let mut var_strides: BTreeSet<Vec<String>> = BTreeSet::new();
    for (r, ps) in shaped {
        for (_, p) in ps {
            for m in p.terms.keys() {
                let (params, vars) = split_mono(m);
                if vars.len() > 1 {
                    let names: Vec<String> = m.iter().map(atom_name).collect();
                    return Err((Some(r), format!("non-affine term {}", names.join("*"))));
                }
                if vars.len() == 1 && !params.is_empty() {
                    var_strides.insert(params);
                }
            }
        }
    }
    let mut grouped: Vec<(&Rec, Vec<(Cond, BTreeMap<Vec<String>, Poly>)>)> = Vec::new();
    let mut all: BTreeSet<Vec<String>> = BTreeSet::new();
    for (r, ps) in shaped {
        let mut out = Vec::new();
        for (c, p) in ps {
            let mut groups: BTreeMap<Vec<String>, Poly> = BTreeMap::new();
            for (m, coef) in &p.terms {
                let (params, vars) = split_mono(m);
                let (key, term) = if params.is_empty() {
                    (Vec::new(), mono_poly(m, *coef))
                } else if !vars.is_empty() {
                    (params, mono_poly(&vars, *coef))
                } else if var_strides.contains(&params) {
                    (params, Poly::konst(*coef))
                } else if params.len() == 1 {
                    (Vec::new(), mono_poly(m, *coef))
                } else {
                    // A parameter-only product: factor out the largest stride.
                    let best = var_strides
                        .iter()
                        .filter(|s| s.len() + 1 == params.len() && is_sub_multiset(s, &params))
                        .max_by_key(|s| s.len())
                        .cloned();
                    let s = best.unwrap_or_else(|| {
                        n_choices = n_choices.max(params.len());
                        let left_out = &params[params.len() - 1 - pick % params.len()];
                        multiset_minus(&params, std::slice::from_ref(left_out))
                    });
                    let rest = multiset_minus(&params, &s);
                    (s, Poly::param(&rest[0]).scale(*coef).unwrap_or_default())
                };
                let e = groups.entry(key).or_default();
                *e = e.add(&term).ok_or((Some(*r), "arithmetic overflow".to_string()))?;
            }
            for k in groups.keys() {
                if !k.is_empty() {
                    all.insert(k.clone());
                }
            }
            out.push((c.clone(), groups));
        }
        grouped.push((r, out));
    }
    // Strides from the outermost: degree descending, then by name.
    let mut strides: Vec<Vec<String>> = all.into_iter().collect();
    strides.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    let mut extents = Vec::new();
    for i in 0..strides.len() {
        let inner: Vec<String> = strides.get(i + 1).cloned().unwrap_or_default();
        if !is_sub_multiset(&inner, &strides[i]) || strides[i].len() != inner.len() + 1 {
            let shown: Vec<String> = strides.iter().map(|s| s.join("*")).collect();
            let first = shaped.first().map(|(r, _)| *r);
            return Err((
                None,
                format!(
                    "inconsistent linearization: the subscripts use strides [{}, 1], which do not nest{}",
                    shown.join(", "),
                    first.map(|r| format!(" ('{}' at {}:{})", r.text, r.span.line, r.span.col)).unwrap_or_default()
                ),
            ));
        }
        extents.push(multiset_minus(&strides[i], &inner)[0].clone());
    }
    let mut tuples: Tuples = Vec::new();
    for (r, out) in grouped {
        let mut pieces = Vec::new();
        for (c, groups) in out {
            let mut t: Vec<Poly> = strides.iter().map(|s| groups.get(s).cloned().unwrap_or_default()).collect();
            t.push(groups.get(&Vec::new()).cloned().unwrap_or_default());
            if t.iter().any(|p| !p.is_affine()) {
                return Err((Some(r), "a coefficient is not affine".into()));
            }
            pieces.push((c, t));
        }
        tuples.push((r, pieces));
    }
    let mut names: Vec<String> = strides.iter().map(|s| s.join("*")).collect();
    names.push("1".into());
    Ok((names, extents, tuples, n_choices))
}

/// The constant strides of an array whose subscripts are affine (issue
/// 12): the absolute coefficients above 1 of the domain dimensions, largest
/// first, when each divides the one before; empty when there are none or
/// they do not nest, or when a `floor` term has a coefficient above 1.
fn const_strides(shaped: &[(&Rec, Vec<(Cond, Poly)>)]) -> Vec<i128> {
    let mut found: BTreeSet<i128> = BTreeSet::new();
    for (_, ps) in shaped {
        for (_, p) in ps {
            for (m, coef) in &p.terms {
                let (params, vars) = split_mono(m);
                if !params.is_empty() || vars.is_empty() || coef.abs() <= 1 {
                    continue;
                }
                if vars.len() != 1 || !matches!(vars[0], Atom::Dim(_)) {
                    return Vec::new();
                }
                found.insert(coef.abs());
            }
        }
    }
    let chain: Vec<i128> = found.into_iter().rev().collect();
    if chain.windows(2).all(|w| w[0] % w[1] == 0) {
        chain
    } else {
        Vec::new()
    }
}

/// Splits affine subscripts into dimensions by their constant strides
/// (`b[k*1000 + j]` -> `b[k][j]`, strides `[1000, 1]`; `a[2*i + 1]` ->
/// `a[i][1]`, strides `[2, 1]`): each term goes to the largest stride that
/// divides its coefficient, the rest (constants, parameters, coefficients
/// of 1) to the innermost. Returns the strides, the extents of dimensions
/// 1.. (`strides[k-1] / strides[k]`) and the tuples (constant terms split
/// into digits, see `nearest` below); `None` without
/// constant strides (see [`const_strides`]). The decomposition is unique
/// only under the launch-time assumptions `0 <= c_k < extent_k`, which the
/// model generates like those of run-time widths.
#[allow(clippy::type_complexity)]
fn delinearize_const<'r>(
    shaped: &[(&'r Rec, Vec<(Cond, Poly)>)],
    nearest: bool,
) -> Option<(Vec<String>, Vec<String>, Tuples<'r>)> {
    let mut strides = const_strides(shaped);
    if strides.is_empty() {
        return None;
    }
    strides.push(1);
    let mut tuples: Tuples = Vec::new();
    for (r, ps) in shaped {
        let mut pieces = Vec::new();
        for (c, p) in ps {
            if !p.is_affine() {
                return None;
            }
            let mut t = vec![Poly::default(); strides.len()];
            for (m, coef) in &p.terms {
                if m.is_empty() {
                    // a constant: digits in [0, extent) (`4*i + 3` -> `[i][3]`,
                    // `(dy+1)*3 + (dx+1)` -> `[dy + 1][dx + 1]`), or with
                    // `nearest` nearest to zero, ties nonnegative (`x - 1` ->
                    // `[..][x - 1]`), outermost first
                    let mut rest = *coef;
                    for (k, s) in strides.iter().enumerate() {
                        let mut q = rest.div_euclid(*s);
                        if nearest && rest.rem_euclid(*s) > s / 2 {
                            q += 1;
                        }
                        t[k] = t[k].add_const(q)?;
                        rest -= q * s;
                    }
                    continue;
                }
                let k = strides.iter().position(|s| coef % s == 0)?;
                t[k] = t[k].add(&mono_poly(m, coef / strides[k]))?;
            }
            pieces.push((c.clone(), t));
        }
        tuples.push((*r, pieces));
    }
    let extents = strides.windows(2).map(|w| (w[0] / w[1]).to_string()).collect();
    Some((strides.iter().map(|s| s.to_string()).collect(), extents, tuples))
}

fn atom_name(a: &Atom) -> String {
    match a {
        Atom::Dim(n) | Atom::Param(n) => n.clone(),
        Atom::Div(p, d) => format!("floor(({})/{d})", p.describe()),
    }
}

/// (parameter names, other atoms) of a monomial.
fn split_mono(m: &[Atom]) -> (Vec<String>, Vec<Atom>) {
    let mut params = Vec::new();
    let mut vars = Vec::new();
    for a in m {
        match a {
            Atom::Param(n) => params.push(n.clone()),
            other => vars.push(other.clone()),
        }
    }
    params.sort();
    (params, vars)
}

fn mono_poly(m: &[Atom], c: i128) -> Poly {
    let mut p = Poly::default();
    if c != 0 {
        let mut mm = m.to_vec();
        mm.sort();
        p.terms.insert(mm, c);
    }
    p
}

fn is_sub_multiset(small: &[String], big: &[String]) -> bool {
    let mut rest = big.to_vec();
    for s in small {
        match rest.iter().position(|b| b == s) {
            Some(i) => {
                rest.remove(i);
            }
            None => return false,
        }
    }
    true
}

fn multiset_minus(big: &[String], small: &[String]) -> Vec<String> {
    let mut rest = big.to_vec();
    for s in small {
        if let Some(i) = rest.iter().position(|b| b == s) {
            rest.remove(i);
        }
    }
    rest
}
