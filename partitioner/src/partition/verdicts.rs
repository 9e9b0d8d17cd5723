//! Write verdicts: whether slices may write the same elements
//! ([`writes_may_overlap`]), whether a slice's writes fill the hull read
//! back ([`fills_hull`]) or its write box ([`writes_fill_box`]), and
//! whether an array has writes that are not must-writes.

use isl_rs::{DimType, Map, Set};

use super::slice::interval_of;
use super::Ctx;

/// Whether a slice writes every element of the box of what it writes, for
/// every parameter value of `context` (`must`: the must-writes, the only
/// writes). The box is built exactly: per dimension, the integers between
/// the least and the greatest component the footprint has.
pub(super) fn writes_fill_box(
    cx: &Ctx,
    must: &Map,
    slice: &Set,
    n_dims: usize,
    context: Option<&Set>,
) -> Option<bool> {
    let w = cx.footprint(must, slice)?;
    if w.is_empty().ok()? {
        return Some(true);
    }
    if w.dim(DimType::Set).ok()? as usize != n_dims {
        return None;
    }
    let name = w
        .get_tuple_name()
        .ok()
        .map(|s| s.to_string())
        .unwrap_or_default();
    let mut bx: Option<Set> = None;
    for k in 0..n_dims {
        let p = w
            .copy()
            .ok()?
            .project_out(DimType::Set, (k + 1) as u32, (n_dims - k - 1) as u32)
            .ok()?;
        let p = p.project_out(DimType::Set, 0, k as u32).ok()?;
        let interval = interval_of(cx, p)?;
        bx = Some(match bx {
            None => interval,
            Some(b) => b.flat_product(interval).ok()?,
        });
    }
    let bx = bx?.set_tuple_name(&name).ok()?;
    let mut gap = bx.subtract(w).ok()?;
    if let Some(c) = context {
        gap = gap.intersect_params(c.copy().ok()?).ok()?;
    }
    gap.is_empty().ok()
}

/// Whether two work-items in different slices along `d` may write the same element.
pub(super) fn writes_may_overlap(cx: &Ctx, w: &Map, d: u32) -> Option<bool> {
    let dom = cx.whole_domain()?;
    let w = w.copy().ok()?.intersect_domain(dom).ok()?;
    let same = w.copy().ok()?.apply_range(w.reverse().ok()?).ok()?;
    let go = if cx.acc.params.iter().any(|p| p.name == format!("go{d}")) {
        format!("go{d}")
    } else {
        "0".into()
    };
    let differ = match cx.local_size {
        Some(ls) => format!(
            "floor((x{d} - {go})/{l}) < floor((y{d} - {go})/{l})",
            l = ls[d as usize].max(1)
        ),
        None => format!("x{d} < y{d}"),
    };
    let params: Vec<&str> = cx.acc.params.iter().map(|p| p.name.as_str()).collect();
    let rel = cx
        .isl
        .map(&format!(
            "[{}] -> {{ W[x0, x1, x2] -> W[y0, y1, y2] : {differ} }}",
            params.join(", ")
        ))
        .ok()?;
    Some(!same.intersect(rel).ok()?.is_empty().ok()?)
}

/// Whether the written elements of a slice fill the hull that is read back.
/// The hull of a 1-D footprint is the interval between its least and its
/// greatest element (its rows' interval in the 2-D case; with constant
/// strides, also the interval of the linearized elements).
pub(super) fn fills_hull(cx: &Ctx, must: &Map, slice: &Set, strides: &[String]) -> Option<bool> {
    let w = cx.footprint(must, slice)?;
    if w.is_empty().ok()? {
        return Some(true);
    }
    let n = strides.len();
    let params = w.copy().ok()?.params().ok()?;
    let name = w
        .get_tuple_name()
        .ok()
        .map(|s| s.to_string())
        .unwrap_or_default();
    if n == 1 {
        let hull = interval_of(cx, w.copy().ok()?)?
            .set_tuple_name(&name)
            .ok()?;
        return hull
            .subtract(w)
            .ok()?
            .intersect_params(params)
            .ok()?
            .is_empty()
            .ok();
    }
    // 2-D row-major with a plain width: rows hull × [0, width).
    if n == 2 && strides[1] == "1" && strides[0].chars().all(|c| c.is_alphanumeric() || c == '_') {
        let rows = interval_of(cx, w.copy().ok()?.project_out(DimType::Set, 1, 1).ok()?)?;
        let name = w
            .get_tuple_name()
            .ok()
            .map(|s| s.to_string())
            .unwrap_or_default();
        let width = &strides[0];
        // a constant width (`b[k*1000 + j]`) is no parameter
        let header = if width.chars().all(|c| c.is_ascii_digit()) {
            String::new()
        } else {
            format!("[{width}] -> ")
        };
        let cols = cx
            .isl
            .set(&format!("{header}{{ [x] : 0 <= x < {width} }}"))
            .ok()?;
        let bx = rows.flat_product(cols).ok()?;
        let bx = bx.set_tuple_name(&name).ok()?;
        if bx
            .subtract(w.copy().ok()?)
            .ok()?
            .intersect_params(params.copy().ok()?)
            .ok()?
            .is_empty()
            .ok()?
        {
            return Some(true);
        }
    }
    // Constant strides: the linear elements fill their interval
    // (`c[x + y*1000]` with 1000 work-items per row, at any offset).
    if strides
        .iter()
        .all(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()))
    {
        let ins: Vec<String> = (0..n).map(|k| format!("o{k}")).collect();
        let sum: Vec<String> = strides
            .iter()
            .zip(&ins)
            .map(|(s, o)| format!("{s}*{o}"))
            .collect();
        let lin = cx
            .isl
            .map(&format!(
                "{{ {name}[{}] -> {name}[{}] }}",
                ins.join(", "),
                sum.join(" + ")
            ))
            .ok()?;
        let w1 = w.apply(lin).ok()?;
        let hull = interval_of(cx, w1.copy().ok()?)?
            .set_tuple_name(&name)
            .ok()?;
        return hull
            .subtract(w1)
            .ok()?
            .intersect_params(params)
            .ok()?
            .is_empty()
            .ok();
    }
    Some(false)
}

/// Whether some write is not a must-write (the may-write map may repeat the
/// must-writes).
pub(super) fn has_may_writes(may: Option<Map>, must: &Option<Map>) -> bool {
    match (may, must) {
        (None, _) => false,
        (Some(may), None) => !may.is_empty().unwrap_or(false),
        (Some(may), Some(mw)) => may
            .subtract(mw.copy().expect("isl copy"))
            .map(|d| !d.is_empty().unwrap_or(true))
            .unwrap_or(true),
    }
}
