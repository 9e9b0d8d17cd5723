//! The run-time guard's side of a plan: whether the subkernel guards every
//! buffer argument ([`guard_status`]) and takes every box check
//! ([`box_checked`], [`parts_checked`]), the guard windows of a slice
//! ([`guard_windows`], [`Window`]), and the values of the box-check
//! arguments ([`box_value`], [`part_value`]) that `Plan::extra_values`
//! passes.

use ranges_format::{ArgKind, ExtraArgMeaning, KernelRanges};

use super::array::{box_hull, BoxBounds, BoxWindow, Interval};

/// The guard's read and write windows for a slice's 1-D ranges (inclusive):
/// the ranges themselves, or with boxes each box's linear hull inside its
/// range.
pub(crate) fn guard_windows(
    boxes: Option<&BoxWindow>,
    read_r: Option<Interval>,
    write_r: Option<Interval>,
) -> [Option<Interval>; 2] {
    let hull = |r: Option<Interval>, bx: Option<&BoxBounds>| match (r, bx, boxes) {
        (Some((l, u)), Some(bx), Some(b)) => box_hull(&b.strides, bx)
            .map(|(bl, bu)| (l.max(bl), u.min(bu)))
            .filter(|(l, u)| l <= u),
        (r, _, _) => r,
    };
    [
        hull(read_r, boxes.and_then(|b| b.read.as_ref())),
        hull(write_r, boxes.and_then(|b| b.write.as_ref())),
    ]
}

/// Elements in the sink past each guarded device buffer (and `__local`
/// argument): where a refused access goes. 16 covers `vstore16`.
pub(crate) const GUARD_SINK: u64 = 16;

/// The guard window of one buffer argument for one run, in elements of
/// its device buffer (see `partitioner::subkernel`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Window {
    /// First element index of the host array the device buffer holds.
    pub(crate) base: i64,
    pub(crate) read: (i64, i64),
    pub(crate) write: (i64, i64),
    /// Elements of the device buffer before the sink.
    pub(crate) extent: i64,
    /// The box check, absolute components; `None`: no box
    /// check in this run (the `Box*` arguments are 0).
    pub(crate) boxes: Option<BoxWindow>,
}

/// The window of an argument that has none (neither a buffer nor a
/// `__local` argument): empty.
pub(crate) const NO_WINDOW: Window = Window {
    base: 0,
    read: (0, 0),
    write: (0, 0),
    extent: 0,
    boxes: None,
};

/// One extra subkernel argument's value.
pub(crate) enum ExtraValue {
    Long(i64),
    /// The guard's flag buffer.
    GuardFlags,
}

/// Whether the subkernel takes every read-part argument of array
/// `arg_index` with `dims` delinearized dimensions and `parts` read parts.
pub(super) fn parts_checked(
    kernel: &KernelRanges,
    arg_index: u32,
    dims: usize,
    parts: usize,
) -> bool {
    let Some(sub) = &kernel.subkernel else {
        return false;
    };
    let has = |m: ExtraArgMeaning| sub.extra_args.iter().any(|e| e.meaning == m);
    (0..parts as u32).all(|part| {
        (0..dims as u32).all(|dim| {
            has(ExtraArgMeaning::BoxPartLo {
                arg_index,
                part,
                dim,
            }) && has(ExtraArgMeaning::BoxPartHi {
                arg_index,
                part,
                dim,
            })
        })
    })
}

/// Whether the subkernel takes every box-check argument of array
/// `arg_index` with `dims` delinearized dimensions.
pub(super) fn box_checked(kernel: &KernelRanges, arg_index: u32, dims: usize) -> bool {
    let Some(sub) = &kernel.subkernel else {
        return false;
    };
    (1..dims as u32).all(|dim| {
        let has = |m: ExtraArgMeaning| sub.extra_args.iter().any(|e| e.meaning == m);
        has(ExtraArgMeaning::BoxStride { arg_index, dim })
            && has(ExtraArgMeaning::BoxExtent { arg_index, dim })
            && has(ExtraArgMeaning::BoxReadLo { arg_index, dim })
            && has(ExtraArgMeaning::BoxReadHi { arg_index, dim })
            && has(ExtraArgMeaning::BoxWriteLo { arg_index, dim })
            && has(ExtraArgMeaning::BoxWriteHi { arg_index, dim })
    })
}

/// A box-check argument's value for dimension `dim` of a window: `f` of its
/// box, or 0 (no box check) when it has none.
pub(super) fn box_value(w: &Window, dim: u32, f: impl Fn(&BoxWindow, usize) -> Option<i64>) -> i64 {
    match &w.boxes {
        Some(b) => f(b, dim as usize).unwrap_or(0),
        None => 0,
    }
}

/// A read-part argument's value: part `part`'s lower (`lo`) or
/// upper bound in dimension `dim`, for dimension 0 its linear window
/// `[lo, hi)` relative to the device buffer. Without read parts the read
/// box is part 0; a part the slice does not have admits nothing, and
/// without a box check every value is 0 (the check is off).
pub(super) fn part_value(w: &Window, part: u32, dim: u32, lo: bool) -> i64 {
    let Some(b) = &w.boxes else {
        return 0;
    };
    let bx = if b.read_parts.is_empty() {
        b.read.as_ref().filter(|_| part == 0)
    } else {
        b.read_parts.get(part as usize)
    };
    let k = dim as usize;
    match bx {
        Some(bx) if k == 0 => match box_hull(&b.strides, bx) {
            Some((l, u)) => {
                if lo {
                    l - w.base
                } else {
                    u - w.base + 1
                }
            }
            None => 0,
        },
        Some(bx) => bx.get(k).map_or(0, |&(l, h)| if lo { l } else { h }),
        // nothing: [0, 0) and [0, -1]
        None => -i64::from(!lo && k > 0),
    }
}

/// The lower (`lo`) or upper bound of dimension `k` of a box; a direction
/// with no box admits nothing (`[0, -1]`).
pub(super) fn bound(bx: &Option<BoxBounds>, k: usize, lo: bool) -> Option<i64> {
    match bx {
        Some(b) => b.get(k).map(|&(l, h)| if lo { l } else { h }),
        None => Some(if lo { 0 } else { -1 }),
    }
}

/// Whether the subkernel guards every buffer argument: `Ok(guarded)` or
/// `Err(why not)`.
pub(super) fn guard_status(kernel: &KernelRanges) -> std::result::Result<Vec<u32>, String> {
    let Some(sub) = &kernel.subkernel else {
        return Err("the range file has no subkernel".into());
    };
    if let Some((i, why)) = sub.unguarded.first() {
        let name = kernel
            .args
            .iter()
            .find(|a| a.index == *i)
            .map_or("?", |a| a.name.as_str());
        return Err(format!(
            "the run-time guard cannot check argument '{name}': {why}"
        ));
    }
    if !sub
        .extra_args
        .iter()
        .any(|e| e.meaning == ExtraArgMeaning::GuardFlags)
        && !sub.guarded.is_empty()
    {
        return Err("the subkernel has no guard flag argument".into());
    }
    for a in &kernel.args {
        if a.kind != ArgKind::Scalar && !sub.guarded.contains(&a.index) {
            return Err(format!(
                "the subkernel does not guard argument '{}'",
                a.name
            ));
        }
    }
    Ok(sub.guarded.clone())
}

#[cfg(test)]
mod tests {
    use super::super::array::tests::array;
    use super::*;

    #[test]
    fn box_arguments_are_zero_without_a_box() {
        let w = Window::default();
        assert_eq!(box_value(&w, 1, |b, k| b.strides.get(k).copied()), 0);
        let b = array(["w", "1"])
            .slice_boxes(&[100, 16, 32], Some((16, 731)), None)
            .unwrap();
        let w = Window {
            boxes: b,
            ..Default::default()
        };
        assert_eq!(box_value(&w, 1, |b, k| b.strides.get(k).copied()), 1);
        assert_eq!(box_value(&w, 1, |b, k| b.extents.get(k).copied()), 100);
        assert_eq!(box_value(&w, 1, |b, k| bound(&b.read, k, true)), 16);
        assert_eq!(box_value(&w, 1, |b, k| bound(&b.read, k, false)), 31);
        // not written: no element may be written ([0, -1])
        assert_eq!(box_value(&w, 1, |b, k| bound(&b.write, k, true)), 0);
        assert_eq!(box_value(&w, 1, |b, k| bound(&b.write, k, false)), -1);
        // a dimension the box does not have: off
        assert_eq!(box_value(&w, 5, |b, k| b.strides.get(k).copied()), 0);
    }
}
