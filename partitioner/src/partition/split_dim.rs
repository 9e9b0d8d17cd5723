//! The choice of the split dimension: the slice cost of a dimension at
//! sample values ([`sample_values`], [`slice_cost`]), estimated from the
//! slice footprints alone to order the candidates ([`estimated_cost`]).

use ranges_format::{ArrayRanges, ArrayStatus, KernelRanges, Param, ParamSource};

use super::bounds::{dim_bounds, linear_of};
use super::Ctx;

/// Sample values of `params` (in their order) for a split along `d`: 64
/// work-groups of `ls` (16 where not given) per dimension, offset 0,
/// scalars 1024, the slice half the range. They order the split dimensions
/// and pick the local size `clpart analyze` tries (`session`).
pub fn sample_values(params: &[Param], d: u32, ls: Option<[i64; 3]>) -> Vec<i64> {
    let l = |dd: u32| ls.map(|x| x[dd as usize]).unwrap_or(16);
    let gs = |dd: u32| l(dd) * 64;
    params
        .iter()
        .map(|p| match p.source {
            ParamSource::GlobalSize(dd) => gs(dd),
            ParamSource::LocalSize(dd) => l(dd),
            ParamSource::NumGroups(dd) => gs(dd) / l(dd),
            ParamSource::GlobalOffset(_) => 0,
            ParamSource::ScalarArg { .. } | ParamSource::StructMember { .. } => 1024,
            ParamSource::SliceLo | ParamSource::SliceLoItem => 0,
            ParamSource::SliceHi => 32,
            ParamSource::SliceHiItem => gs(d) / 2,
        })
        .collect()
}

pub(super) fn slice_cost(k: &KernelRanges, d: u32, ls: Option<[i64; 3]>) -> i64 {
    let names = k.param_names();
    let vals = sample_values(&k.params, d, ls);
    let mut cost = 0i64;
    for a in &k.arrays {
        if let Some(r) = &a.slice {
            if let Ok(b) = r.bind(&names) {
                if let Ok(Some((lo, hi))) = b.eval(&vals) {
                    cost += (hi - lo + 1).max(0) * a.elem_size as i64;
                }
            }
        }
    }
    cost
}

/// The slice cost ([`slice_cost`]) of splitting along `d`, from the slice
/// footprints' linear ranges alone (no verdicts): orders the candidates.
pub(super) fn estimated_cost(cx: &Ctx, params: &[Param], d: u32) -> i64 {
    let mut k = KernelRanges {
        name: cx.acc.kernel.clone(),
        work_dim: cx.acc.work_dim,
        params: params.to_vec(),
        args: Vec::new(),
        split_dim: Some(d),
        splittable: true,
        reason: None,
        arrays: Vec::new(),
        assumptions: Vec::new(),
        subkernel: None,
        diagnostics: Vec::new(),
        group_size_use: None,
        cut_short: Vec::new(),
    };
    // The footprints at the sample values alone (no parametric bounds: the
    // chosen dimension's are made once it is chosen, the others never).
    let vals = sample_values(params, d, cx.local_size);
    let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
    let fixed: Vec<String> = names
        .iter()
        .zip(&vals)
        .map(|(n, v)| format!("{n} = {v}"))
        .collect();
    let point = format!("[{}] -> {{ : {} }}", names.join(", "), fixed.join(" and "));
    let Some(slice) = cx
        .slice(d)
        .and_then(|s| s.intersect_params(cx.isl.set(&point).ok()?).ok())
    else {
        return i64::MAX;
    };
    for a in cx.acc.arrays.iter().filter(|a| a.whole.is_none()) {
        cx.isl.reset();
        let Some(Some(all)) = cx.union_maps(&[&a.reads, &a.must_writes, &a.may_writes]) else {
            continue;
        };
        let Some(fp) = cx.footprint(&all, &slice) else {
            continue;
        };
        let range = dim_bounds(cx, &fp, a.strides.len(), None)
            .and_then(|(l, h)| linear_of(&a.strides, &l, &h));
        k.arrays.push(ArrayRanges {
            arg_index: a.arg_index,
            name: a.name.clone(),
            elem_type: a.elem_type.clone(),
            elem_size: a.elem_size,
            mode: a.mode,
            status: ArrayStatus::Bounded,
            total: None,
            slice: range,
            read_slice: None,
            write_slice: None,
            count_total: None,
            count_slice: None,
            write: None,
            boxes: None,
            vertices_slice: None,
            reduction: None,
            checked: false,
        });
    }
    cx.isl.reset();
    slice_cost(&k, d, cx.local_size)
}
