//! The analysis of one kernel ([`analyze_kernel`]): the helpers it reaches,
//! the NDRange model, its integer scalars as parameters (and the values
//! they are specialized to), its buffers; then the walk of a work-item
//! (`eval`) and the rendering of each buffer's accesses as isl relations
//! (`render`).

use crate::eval::{
    int_range, is_isl_keyword, nd_name, IntVal, Ndr, PtrTarget, Rec, Val, Walker, MAX_STEPS,
};
use crate::isl::{IslOk, IslResult};
use crate::poly::{Atom, Poly};
use crate::render::{Buffer, Renderer};
use crate::{AnalysisError, AnalysisOptions, KernelAccesses, ParamInfo, ParamSource};
use coarsen::ir::{AddrSpace, ExprKind, Function, Program, Type, WorkItemFn};
use std::collections::{BTreeMap, BTreeSet, HashMap};

const ND_KINDS: [&str; 4] = ["gs", "ls", "go", "ng"];

/// The kernel's note when group and local ids are over-approximated
/// because the local size is not known.
pub const LOCAL_SIZE_UNKNOWN_NOTE: &str =
    "get_local_id/get_group_id are over-approximated: the local size is not known (pass it for exact results)";

/// Analyzes the accesses of kernel `kernel` of `program`.
pub fn analyze_kernel(
    program: &Program,
    kernel: &str,
    options: &AnalysisOptions,
) -> Result<KernelAccesses, AnalysisError> {
    let deadline =
        std::time::Instant::now() + std::time::Duration::from_millis(options.time_budget_ms);
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
    analyze_kernel_in(program, kernel, options, deadline).map(|(acc, _)| acc)
}

/// [`analyze_kernel_until`], and the isl context the analysis worked in
/// (armed with the same deadline, with every relation, domain and context
/// of the result kept with its text): the partitioner goes on in it
/// (`partitioner::partition_kernel_in`) and reads those texts back without
/// parsing them.
pub fn analyze_kernel_in(
    program: &Program,
    kernel: &str,
    options: &AnalysisOptions,
    deadline: std::time::Instant,
) -> Result<(KernelAccesses, crate::isl::Isl), AnalysisError> {
    let k = program
        .kernel(Some(kernel))
        .map_err(|_| AnalysisError::UnknownKernel {
            file: program.file.clone(),
            name: kernel.to_string(),
            available: program
                .kernels()
                .map(|k| k.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
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
    let (mut work_dim, lg_used, odd_dims) = scan_work_items(&funcs);
    if let Some(w) = options.work_dim {
        work_dim = work_dim.min(w.max(1));
    }
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
            if taken.iter().any(|t| t.eq_ignore_ascii_case(&name))
                || is_isl_keyword(&name)
                || name == "W"
            {
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
        } else if ["gs", "go", "ng"]
            .iter()
            .any(|kind| (0..3).any(|d| *key == nd_name(kind, d)))
        {
            key.clone()
        } else {
            let mut valid: Vec<String> = k
                .params
                .iter()
                .filter(|p| is_int_type(&p.ty))
                .map(|p| p.name.clone())
                .collect();
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
            Type::Pointer {
                pointee,
                space: space @ (AddrSpace::Global | AddrSpace::Constant),
                is_const,
            } => {
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
                Val::Ptr(vec![PtrTarget::start_of(i as u32)])
            }
            t if is_int_type(t) => Val::Int(IntVal::poly(Poly::param(&scalar_isl[&p.name].0))),
            _ => Val::Other,
        };
        env.insert(p.name.clone(), v);
    }

    let unsupported = program.unsupported_in(&k.name);
    let mut reason = unsupported
        .first()
        .map(|d| format!("{} ({}:{}:{})", d.message, d.file, d.span.line, d.span.col));

    if reason.is_none() {
        reason = coarsen::driver_conditional(&program.source).map(|(line, text)| {
            format!(
                "its code depends on what the driver decides, the OpenCL C version or the device's features ('{text}' at {}:{line}): the analysis cannot know which branch the driver compiles",
                program.file
            )
        });
    }

    let mut walker = Walker::new(program, &ndr, &spec, taken, k);
    walker.buf_names = buf_names;
    walker.buf_args = buf_args;
    walker.buf_elem_sizes = buffers.iter().map(|b| (b.arg_index, b.elem_size)).collect();
    for (i, p) in k.params.iter().enumerate() {
        if matches!(p.ty, Type::Struct { .. }) && !crate::eval::may_change(&k.body, &p.name) {
            walker.struct_args.insert(p.name.clone(), i as u32);
        }
        if let (Some((isl_name, _)), Some((lo, hi, _, _))) =
            (scalar_isl.get(&p.name), int_range(&p.ty))
        {
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
            MAX_STEPS,
            program.file,
            k.span.line,
            k.span.col
        ));
    }

    let mut notes = Vec::new();
    if odd_dims {
        notes.push(
            "a work-item builtin has a non-constant dimension; all three dimensions are modeled"
                .to_string(),
        );
    }
    if options.local_size.is_none() && (0..work_dim).any(|d| ndr.relaxed(d)) {
        notes.push(LOCAL_SIZE_UNKNOWN_NOTE.to_string());
    }
    if let Some(ls) = options.local_size {
        notes.push(format!(
            "local size specialized to [{}, {}, {}]",
            ls[0], ls[1], ls[2]
        ));
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
            params.push(ParamInfo {
                name,
                source: mk(d),
            });
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
            params.push(ParamInfo {
                name: n.clone(),
                source: ParamSource::ScalarArg { arg_index: i },
            });
        }
    }
    // Then the members of struct arguments that appear.
    for m in &walker.member_params {
        if used.contains(&m.name) {
            params.push(ParamInfo {
                name: m.name.clone(),
                source: ParamSource::StructMember {
                    arg_index: m.arg_index,
                    offset: m.offset,
                    size: m.size,
                    signed: m.signed,
                },
            });
        }
    }

    let mut r = Renderer::new(&ndr, &spec, &params, options, &program.file);
    if options.time_budget_ms > 0 {
        r.isl.arm(deadline, options.time_budget_ms);
    }
    let context = r.context_text();
    let domain_raw = r.x_domain_text();
    let (context_s, domain_s) = {
        let pretty = |t: &str, gist: bool| -> IslResult<String> {
            r.isl.reset();
            let s = r.isl.set(t)?;
            let s = if gist {
                s.gist_params(r.isl.set(&context)?).ok_in(&r.isl)?
            } else {
                s
            };
            r.isl.set_str(&s)
        };
        (
            pretty(&context, false).unwrap_or_else(|_| context.clone()),
            pretty(&domain_raw, true).unwrap_or(domain_raw.clone()),
        )
    };

    let global_bufs: Vec<(u32, &str)> = buffers
        .iter()
        .filter(|b| !b.is_constant_space)
        .map(|b| (b.arg_index, b.elem_type.as_str()))
        .collect();
    let (reductions, global_atomics) = crate::reduction::reductions(
        &walker.atomic_uses,
        &walker.recs,
        &global_bufs,
        &walker.buf_names,
        &program.file,
    );
    let mut arrays = Vec::new();
    for b in &buffers {
        let recs: Vec<&Rec> = walker
            .recs
            .iter()
            .filter(|rec| rec.buf == b.arg_index)
            .collect();
        let mut a = r.array(b, &recs, &context);
        if reason.is_none() {
            a.reduction = reductions.get(&b.arg_index).copied();
        }
        if let Some(why) = &reason {
            r.force_whole(
                &mut a,
                b,
                &format!("kernel is not analyzable: {why}"),
                &context,
            );
        }
        arrays.push(a);
    }

    let acc = KernelAccesses {
        kernel: k.name.clone(),
        file: program.file.clone(),
        work_dim,
        params,
        context: context_s,
        domain: domain_s,
        arrays,
        analyzable: reason.is_none(),
        reason,
        global_atomics,
        notes,
        assumptions: r.no_wrap_assumptions(&walker.no_wrap.borrow(), &context),
    };
    Ok((acc, r.isl))
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
