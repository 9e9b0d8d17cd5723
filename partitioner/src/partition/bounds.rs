//! The bounds of a footprint: per delinearized dimension (`dim_min`/
//! `dim_max`, looser past [`EXACT_BOUND_OPS`]), their linear range
//! `sum_k stride_k * bound_k` (exact over literal strides), and the box of
//! an array of two or more dimensions.

use isl_rs::{DimType, Set};
use ranges_format::{PwExpr, Range};

use super::Ctx;

/// Per-dimension lower and upper bounds of a footprint ([`dim_bounds`]).
type Bounds = (Vec<PwExpr>, Vec<PwExpr>);

/// isl operations the exact bounds of one dimension of a footprint
/// ([`dim_bounds`]) may take before its looser bounds are used instead. The
/// corpus's exact bounds take at most about 100,000 (a 3-D stencil's
/// slice); `convolution_rows` without its local size (a halo loop over a
/// work-group's row, with the link of group and global ids relaxed) ran
/// into the per-array limit (2,000,000, 1.2 s) and lost its split. An
/// operation count, not a time, so that the same kernel gets the same
/// ranges on any machine.
pub(super) const EXACT_BOUND_OPS: u64 = 120_000;

/// The bounds of a footprint per delinearized dimension (`dim_min`/`dim_max`
/// of each), simplified against `context` (the parameters' context with the
/// slice constraints), which removes existentials isl cannot eliminate by
/// itself. Where the exact bounds of a dimension take more than
/// [`EXACT_BOUND_OPS`], they are those of the footprint without its
/// existentially quantified variables and the constraints on them
/// (`isl_set_remove_divs`: a superset, so the bounds stay sound, if looser)
/// and [`Ctx::loosened`] is set. `None` when the footprint is empty, its
/// dimensions are not `n_dims`, or isl fails.
pub(super) fn dim_bounds(
    cx: &Ctx,
    fp: &Set,
    n_dims: usize,
    context: Option<&Set>,
) -> Option<Bounds> {
    let isl = &cx.isl;
    if fp.is_empty().ok()? {
        return None;
    }
    let n = fp.dim(DimType::Set).ok()? as usize;
    if n != n_dims || n == 0 {
        return None;
    }
    let mut lows = Vec::new();
    let mut highs = Vec::new();
    for k in 0..n {
        let k = k as i32;
        let exact = isl.optional(EXACT_BOUND_OPS, || {
            Ok((fp.copy()?.dim_min(k)?, fp.copy()?.dim_max(k)?))
        });
        let (mut lo, mut hi) = match exact {
            Some(bounds) => bounds,
            None if !isl.expired() => {
                let loose = fp.copy().ok()?.remove_divs().ok()?;
                cx.loosened.set(true);
                (loose.copy().ok()?.dim_min(k).ok()?, loose.dim_max(k).ok()?)
            }
            None => return None,
        };
        if let Some(c) = context {
            lo = lo.gist_params(c.copy().ok()?).ok()?;
            hi = hi.gist_params(c.copy().ok()?).ok()?;
        }
        lows.push(isl.pw_expr(&lo).ok()?);
        highs.push(isl.pw_expr(&hi).ok()?);
    }
    Some((lows, highs))
}

/// Per dimension, the range between its bounds.
pub(super) fn ranges_of(lows: &[PwExpr], highs: &[PwExpr]) -> Vec<Range> {
    lows.iter()
        .zip(highs)
        .map(|(l, h)| Range {
            lower: l.to_string(),
            upper: h.to_string(),
        })
        .collect()
}

/// The linear bounds `sum_k strides[k] * bound_k` of per-dimension bounds.
pub(super) fn linear_of(strides: &[String], lows: &[PwExpr], highs: &[PwExpr]) -> Option<Range> {
    let combine = |bounds: &[PwExpr]| -> Option<PwExpr> {
        if bounds.len() == 1 {
            return Some(bounds[0].clone());
        }
        let terms: Vec<(&str, &PwExpr)> = strides
            .iter()
            .map(|s| s.as_str())
            .zip(bounds.iter())
            .collect();
        PwExpr::linear_combination(&terms).ok()
    };
    Some(Range {
        lower: combine(lows)?.to_string(),
        upper: combine(highs)?.to_string(),
    })
}

/// The linear bounds `[lower, upper]` of a footprint with `strides` (see
/// [`dim_bounds`]).
pub(super) fn linear_range(
    cx: &Ctx,
    fp: &Set,
    strides: &[String],
    context: Option<&Set>,
) -> Option<Range> {
    if let Some(r) = literal_linear(cx, fp, strides, context) {
        return Some(r);
    }
    let (lows, highs) = dim_bounds(cx, fp, strides.len(), context)?;
    linear_of(strides, &lows, &highs)
}

/// The exact linear bounds of a footprint over literal strides (`[256, 1]`):
/// the least and greatest `sum_k strides[k] * c_k` over its elements, where
/// the box's linear hull can reach past the last element (a grid-stride
/// loop's last row is partial: `y[0 .. 3][lo .. hi]` over 1000 elements
/// ends at 999, not at `3*256 + hi`). `None` for fewer than two dimensions,
/// strides that are not all literals, or when isl fails; the launcher
/// intersects the boxes with these ranges.
pub(super) fn literal_linear(
    cx: &Ctx,
    fp: &Set,
    strides: &[String],
    context: Option<&Set>,
) -> Option<Range> {
    if strides.len() < 2 {
        return None;
    }
    let lits: Vec<i64> = strides
        .iter()
        .map(|s| s.trim().parse().ok())
        .collect::<Option<_>>()?;
    let ins: Vec<String> = (0..lits.len()).map(|k| format!("c{k}")).collect();
    let sum: Vec<String> = ins
        .iter()
        .zip(&lits)
        .map(|(c, s)| format!("{s}*{c}"))
        .collect();
    let map = cx
        .isl
        .map(&format!(
            "{{ [{}] -> [{}] }}",
            ins.join(", "),
            sum.join(" + ")
        ))
        .ok()?;
    let lin = fp.copy().ok()?.reset_tuple_id().ok()?.apply(map).ok()?;
    let (lo, hi) = dim_bounds(cx, &lin, 1, context)?;
    ranges_of(&lo, &hi).pop()
}

/// The linear bounds of a footprint and, for an array of at least two
/// delinearized dimensions, its box: the bounds of each dimension (issue
/// 12). The linear bounds are the box's linear hull, except over literal
/// strides, where they are exact ([`literal_linear`], as in
/// [`linear_range`]).
pub(super) fn ranges_and_box(
    cx: &Ctx,
    fp: &Set,
    strides: &[String],
    context: Option<&Set>,
) -> (Option<Range>, Option<Vec<Range>>) {
    let (linear, boxed) =
        range_and_box_of(strides, dim_bounds(cx, fp, strides.len(), context).as_ref());
    (literal_linear(cx, fp, strides, context).or(linear), boxed)
}

/// [`ranges_and_box`] from bounds already made by [`dim_bounds`].
pub(super) fn range_and_box_of(
    strides: &[String],
    bounds: Option<&(Vec<PwExpr>, Vec<PwExpr>)>,
) -> (Option<Range>, Option<Vec<Range>>) {
    let Some((lows, highs)) = bounds else {
        return (None, None);
    };
    let linear = linear_of(strides, lows, highs);
    let boxed = (strides.len() >= 2 && linear.is_some()).then(|| ranges_of(lows, highs));
    (linear, boxed)
}
