//! The read parts of a slice (`Boxes::read_parts`): one box per group of
//! read accesses of an array of two or more dimensions ([`box_parts`]), or
//! the maximal runs of a 1-D array that is only read ([`runs_1d`]).

use access_analysis::isl::Order;
use access_analysis::{AccessKind, ArrayAccesses};
use isl_rs::{DimType, Set};
use ranges_format::Range;

use super::bounds::{dim_bounds, ranges_of};
use super::slice::interval_of;
use super::Ctx;

/// The read footprint `fp` of a slice as a union of boxes (issues 12 and
/// 13, `Boxes::read_parts`): one box per group of read accesses. The rule:
/// two groups merge when, in every delinearized dimension, their intervals
/// overlap or touch for all parameter values of `context` (the hull of the
/// two then adds only corners, never a row, column or plane lying between
/// them: a stencil's shifted reads are one group, a pivot row read beside
/// the slice's own rows is a group of its own); all reads are one group at
/// once when that holds of all their intervals together. Merging is greedy,
/// first mergeable pair first, until no pair merges. `None`, or an empty
/// list, when the reads form one group (the read box is the union), there
/// are more than `MAX_READ_PARTS` groups, the parts do not cover `fp`, or
/// isl fails.
pub(super) fn box_parts(
    cx: &Ctx,
    a: &ArrayAccesses,
    slice: &Set,
    fp: &Set,
    context: Option<&Set>,
) -> Option<Vec<Vec<Range>>> {
    let n = a.strides.len();
    if n < 2 {
        return None;
    }
    // Per access: its footprint and, per dimension, its interval hull.
    let mut groups: Vec<(Set, Vec<Set>)> = Vec::new();
    for f in cx.access_footprints(a, &[AccessKind::Read], slice)? {
        if f.is_empty().ok()? {
            continue;
        }
        let ivs = dim_intervals(cx, &f, n)?;
        groups.push((f, ivs));
    }
    if groups.len() < 2 {
        return None;
    }
    // one group at once: no dimension has a gap in the union of all intervals
    let mut all_touch = true;
    for k in 0..n {
        let ivs: Vec<&Set> = groups.iter().map(|g| &g.1[k]).collect();
        if gap_free(cx, &ivs, context)?.is_none() {
            all_touch = false;
            break;
        }
    }
    if all_touch {
        return None;
    }
    'merge: loop {
        for i in 0..groups.len() {
            for j in i + 1..groups.len() {
                let mut hulls = Vec::with_capacity(n);
                for k in 0..n {
                    match gap_free(cx, &[&groups[i].1[k], &groups[j].1[k]], context)? {
                        Some(h) => hulls.push(h),
                        None => break,
                    }
                }
                if hulls.len() == n {
                    let (fj, _) = groups.remove(j);
                    let fi = groups[i].0.copy().ok()?;
                    groups[i] = (fi.union(fj).ok()?.coalesce().ok()?, hulls);
                    continue 'merge;
                }
            }
        }
        break;
    }
    if groups.len() < 2 || groups.len() > ranges_format::MAX_READ_PARTS {
        return None;
    }
    // the parts must cover the footprint (soundness does not rest on the
    // access list matching the union relation)
    let mut union: Option<Set> = None;
    for (f, _) in &groups {
        let f = f.copy().ok()?;
        union = Some(match union {
            None => f,
            Some(u) => u.union(f).ok()?,
        });
    }
    if !fp.copy().ok()?.is_subset(&union?).ok()? {
        return None;
    }
    let mut out = Vec::with_capacity(groups.len());
    for (f, _) in &groups {
        let (lows, highs) = dim_bounds(cx, f, n, context)?;
        out.push(ranges_of(&lows, &highs));
    }
    Some(out)
}

/// At most this many isl operations find the runs of a 1-D footprint
/// ([`runs_1d`]).
const RUNS_MAX_OPS: u64 = 50_000;

/// The read footprint `fp` of a slice of a 1-D array as its maximal runs,
/// first to last (`b[(ushort)(i + 65530)]` reads the end and the
/// start of `b`, whose hull is all of it; `a[i]` and `a[i + half]` read two
/// bands): each step takes the elements up to the first run's end (the
/// least element whose successor is not in the rest) and keeps the rest.
/// Every run is one part of [`Boxes::read_parts`](ranges_format::Boxes::read_parts) over the one dimension.
/// `None` when the footprint is one run for every parameter value, has
/// more than `MAX_READ_PARTS` runs for some, or isl fails.
pub(super) fn runs_1d(cx: &Ctx, fp: &Set, context: Option<&Set>) -> Option<Vec<Vec<Range>>> {
    let before = cx.isl.order(Order::Predecessor).ok()?;
    let above = cx.isl.order(Order::Above).ok()?;
    // bounded: a footprint with quasi-affine pieces (`i % 3` cases) can
    // cost more than the rest of the array's analysis, for no runs
    let runs = cx.isl.optional(
        RUNS_MAX_OPS,
        || -> Result<Option<Vec<Set>>, isl_rs::LibISLError> {
            let mut rest = fp.copy()?.reset_tuple_id()?;
            if let Some(c) = context {
                rest = rest.intersect_params(c.copy()?)?;
            }
            let mut runs = Vec::new();
            while !rest.is_empty()? {
                if runs.len() == ranges_format::MAX_READ_PARTS {
                    return Ok(None);
                }
                let preds = rest.copy()?.apply(before.copy()?)?;
                let ends = rest.copy()?.subtract(preds)?;
                let later = ends.apply(above.copy()?)?;
                runs.push(rest.copy()?.subtract(later.copy()?)?.coalesce()?);
                rest = rest.intersect(later)?.coalesce()?;
            }
            Ok(Some(runs))
        },
    )??;
    if runs.len() < 2 {
        return None;
    }
    let mut out = Vec::with_capacity(runs.len());
    for r in &runs {
        let (lo, hi) = dim_bounds(cx, r, 1, context)?;
        out.push(ranges_of(&lo, &hi));
    }
    Some(out)
}

/// The interval hull of a footprint's projection onto each of its `n`
/// dimensions (1-D sets, tuple ids reset).
fn dim_intervals(cx: &Ctx, f: &Set, n: usize) -> Option<Vec<Set>> {
    if f.dim(DimType::Set).ok()? as usize != n {
        return None;
    }
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        let p = f
            .copy()
            .ok()?
            .project_out(DimType::Set, (k + 1) as u32, (n - k - 1) as u32)
            .ok()?
            .project_out(DimType::Set, 0, k as u32)
            .ok()?;
        out.push(interval_of(cx, p)?);
    }
    Some(out)
}

/// The interval hull of the union of the intervals `ivs` when it has no
/// gap, i.e. lies inside their union, for all parameter values of
/// `context`: `Some(Some(hull))`; `Some(None)` when it may have a gap;
/// `None` when isl fails.
fn gap_free(cx: &Ctx, ivs: &[&Set], context: Option<&Set>) -> Option<Option<Set>> {
    let mut union: Option<Set> = None;
    for iv in ivs {
        let iv = iv.copy().ok()?;
        union = Some(match union {
            None => iv,
            Some(u) => u.union(iv).ok()?,
        });
    }
    let union = union?;
    let hull = interval_of(cx, union.copy().ok()?)?;
    let mut gap = hull.copy().ok()?.subtract(union).ok()?;
    if let Some(c) = context {
        gap = gap.intersect_params(c.copy().ok()?).ok()?;
    }
    Some(gap.is_empty().ok()?.then_some(hull))
}
