//! One array of a [`Plan`](super::Plan): its bound expressions
//! ([`ArrayPlan`]) and its boxes for one slice ([`ArrayPlan::slice_boxes`]
//! → [`BoxWindow`]), evaluated at a launch's parameters.

use ranges_format::{BoundBoxes, BoundCount, BoundRange, ExprError, Reduction, WriteVerdict};

/// One array of the kernel with its bound expressions.
pub(crate) struct ArrayPlan {
    pub(crate) arg_index: u32,
    pub(crate) name: String,
    pub(crate) elem_size: u64,
    pub(crate) reads: bool,
    pub(crate) writes: bool,
    /// `Some(reason)` for arrays the analysis could not bound.
    pub(crate) whole_reason: Option<String>,
    pub(crate) total: Option<BoundRange>,
    pub(crate) slice: Option<BoundRange>,
    pub(crate) read: Option<BoundRange>,
    pub(crate) write: Option<BoundRange>,
    pub(crate) count_slice: Option<BoundCount>,
    /// Count of the elements a slice writes (all must-writes), see
    /// [`WriteVerdict::written_count`].
    pub(crate) written_count: Option<BoundCount>,
    pub(crate) verdict: Option<WriteVerdict>,
    /// The slice's per-dimension boxes of a delinearized array
    /// ([`ranges_format::Boxes`]).
    pub(crate) boxes: Option<BoundBoxes>,
    /// Every stride of the boxes is an integer literal (`["1000", "1"]`:
    /// a literal width, whose box the subkernel's per-group test cannot
    /// prove; see [`BoxWindow::spans_inner_dims`]).
    pub(crate) literal_strides: bool,
    /// The device buffer's first element is a multiple of this: the kernel
    /// views the array through elements this many times wider
    /// ([`ranges_format::Subkernel::aligned`]); 1 otherwise.
    pub(crate) align: u64,
    /// How the devices' copies merge, for an array updated only by atomics
    /// ([`ranges_format::ArrayRanges::reduction`]): whole on every device.
    pub(crate) reduction: Option<Reduction>,
    /// Writes that may overlap between slices, merged element by element
    /// with the run-time conflict check ([`ranges_format::ArrayRanges::checked`]).
    pub(crate) checked: bool,
}

impl ArrayPlan {
    /// The array's boxes for one slice (`params`), given the slice's 1-D read
    /// and write ranges (`read_r`, `write_r`, inclusive): `None` when the
    /// array has none, or when they cannot serve the guard's box check in
    /// this launch (a stride that is not positive or does not divide the one
    /// before it, a box missing for a direction the array uses, a component
    /// outside `[0, extent)`, a box whose linear hull leaves the 1-D range).
    /// The guard then checks the 1-D windows only, and transfers must cover
    /// the hull.
    pub(crate) fn slice_boxes(
        &self,
        params: &[i64],
        read_r: Option<(i64, i64)>,
        write_r: Option<(i64, i64)>,
    ) -> std::result::Result<Option<BoxWindow>, ExprError> {
        let Some(b) = &self.boxes else {
            return Ok(None);
        };
        let mut strides = Vec::with_capacity(b.strides.len());
        for s in &b.strides {
            match s.eval(params)? {
                Some(v) if v > 0 => strides.push(v),
                _ => return Ok(None),
            }
        }
        // (one stride: the read runs of a 1-D array)
        if strides.is_empty() || strides.last() != Some(&1) {
            return Ok(None);
        }
        let mut extents = vec![0i64; strides.len()];
        for k in 1..strides.len() {
            if strides[k - 1] % strides[k] != 0 {
                return Ok(None);
            }
            extents[k] = strides[k - 1] / strides[k];
        }
        let read = match eval_box(&b.read, read_r, params, &strides, &extents)? {
            BoxEval::Off => return Ok(None),
            BoxEval::Unused => None,
            BoxEval::Box(bx) => Some(bx),
        };
        let write = match eval_box(&b.write, write_r, params, &strides, &extents)? {
            BoxEval::Off => return Ok(None),
            BoxEval::Unused => None,
            BoxEval::Box(bx) => Some(bx),
        };
        let read_parts = match &read {
            Some(hull) => eval_parts(&b.read_parts, hull, params, &extents)?,
            None => Vec::new(),
        };
        Ok(Some(BoxWindow {
            strides,
            extents,
            read,
            write,
            write_exact: b.write_exact,
            read_parts,
        }))
    }
}

/// The read parts of a slice inside its read box `hull`: the
/// parts that are not empty in this launch (a part whose bounds no piece
/// defines, or lower above upper, holds no read); none at all (the read
/// box serves as the one part) when a part leaves the read box or
/// `[0, extent)`, or when no part is left.
fn eval_parts(
    parts: &[Vec<BoundRange>],
    hull: &BoxBounds,
    params: &[i64],
    extents: &[i64],
) -> std::result::Result<Vec<BoxBounds>, ExprError> {
    let mut out = Vec::with_capacity(parts.len());
    'part: for p in parts {
        if p.len() != hull.len() {
            return Ok(Vec::new());
        }
        let mut bx = Vec::with_capacity(p.len());
        for (k, r) in p.iter().enumerate() {
            match r.eval(params)? {
                Some((lo, hi)) if lo <= hi => {
                    let (hl, hh) = hull[k];
                    if lo < hl || hi > hh || (k > 0 && (lo < 0 || hi >= extents[k])) {
                        return Ok(Vec::new());
                    }
                    bx.push((lo, hi));
                }
                _ => continue 'part,
            }
        }
        out.push(bx);
    }
    Ok(out)
}

/// An inclusive element or component range.
pub(crate) type Interval = (i64, i64);

/// Inclusive bounds, per dimension, of one box.
pub(crate) type BoxBounds = Vec<(i64, i64)>;

/// One box of a slice (see [`ArrayPlan::slice_boxes`]).
enum BoxEval {
    /// The slice does not access the array this way.
    Unused,
    /// The box cannot serve the check: no box check in this launch.
    Off,
    Box(BoxBounds),
}

/// A box for a slice with 1-D range `range` (inclusive): every dimension's
/// bounds defined and non-empty, dimensions `k >= 1` inside `[0,
/// extents[k])`, the linear hull inside `range`.
fn eval_box(
    bx: &Option<Vec<BoundRange>>,
    range: Option<(i64, i64)>,
    params: &[i64],
    strides: &[i64],
    extents: &[i64],
) -> std::result::Result<BoxEval, ExprError> {
    let Some((l, u)) = range else {
        return Ok(BoxEval::Unused);
    };
    let Some(bx) = bx.as_ref().filter(|b| b.len() == strides.len()) else {
        return Ok(BoxEval::Off);
    };
    let mut out = Vec::with_capacity(bx.len());
    for (k, r) in bx.iter().enumerate() {
        match r.eval(params)? {
            Some((lo, hi)) if lo <= hi && (k == 0 || (lo >= 0 && hi < extents[k])) => {
                out.push((lo, hi))
            }
            _ => return Ok(BoxEval::Off),
        }
    }
    // The box and the 1-D range both hold the footprint; what moves is
    // their intersection. Over literal strides the range is the tighter one
    // at the ends (a partial last row), so the box may reach past it.
    Ok(match box_hull(strides, &out) {
        Some((hl, hu)) if hl <= u && hu >= l => BoxEval::Box(out),
        _ => BoxEval::Off,
    })
}

/// The linear hull `(sum_k strides[k] * lo_k, sum_k strides[k] * hi_k)` of a
/// box; `None` on overflow.
pub(crate) fn box_hull(strides: &[i64], bx: &[(i64, i64)]) -> Option<(i64, i64)> {
    let mut lo = 0i64;
    let mut hi = 0i64;
    for (s, (l, h)) in strides.iter().zip(bx) {
        lo = lo.checked_add(s.checked_mul(*l)?)?;
        hi = hi.checked_add(s.checked_mul(*h)?)?;
    }
    Some((lo, hi))
}

/// An array's boxes for one slice: per delinearized dimension,
/// absolute inclusive component bounds; element `i` lies in a box when,
/// for every dimension `k >= 1`, `(i / strides[k]) % extents[k]` lies in
/// its bounds and `i` lies in the box's linear hull ([`box_hull`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BoxWindow {
    /// The stride of each dimension (the last is 1).
    pub(crate) strides: Vec<i64>,
    /// `strides[k - 1] / strides[k]` for `k >= 1`; `extents[0]` is 0.
    pub(crate) extents: Vec<i64>,
    /// Per dimension, the components the slice may read; `None` when it
    /// reads nothing.
    pub(crate) read: Option<BoxBounds>,
    /// Per dimension, the components the slice may write; `None` when it
    /// writes nothing.
    pub(crate) write: Option<BoxBounds>,
    /// The slice writes every element of its write box
    /// ([`ranges_format::Boxes::write_exact`]).
    pub(crate) write_exact: bool,
    /// The read parts that are not empty in this slice
    /// ([`ranges_format::Boxes::read_parts`]), each inside `read`: the slice
    /// reads only their union. Empty: `read` is the one part.
    pub(crate) read_parts: Vec<BoxBounds>,
}

impl BoxWindow {
    /// Whether each box present spans every dimension `k >= 1` whole
    /// (`[0, extent_k)`): its elements are then its linear hull, the same
    /// as a 1-D window's.
    pub(crate) fn spans_inner_dims(&self) -> bool {
        let whole = |bx: &BoxBounds| {
            bx.iter()
                .enumerate()
                .skip(1)
                .all(|(k, &(l, h))| l == 0 && h == self.extents[k] - 1)
        };
        self.read.as_ref().is_none_or(whole) && self.write.as_ref().is_none_or(whole)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    const NAMES: [&str; 3] = ["w", "lo", "hi"];

    /// A range's bounds, bound by `ranges-format` (the only reader of
    /// expression text).
    fn r(lo: &str, hi: &str) -> BoundRange {
        ranges_format::Range {
            lower: lo.into(),
            upper: hi.into(),
        }
        .bind(&NAMES)
        .unwrap()
    }

    fn e(t: &str) -> ranges_format::BoundExpr {
        r(t, t).lower
    }

    /// A column band: rows 0..=7, columns [lo, hi) of a w-wide array.
    pub(in crate::plan) fn array(strides: [&str; 2]) -> ArrayPlan {
        ArrayPlan {
            arg_index: 0,
            name: "a".into(),
            elem_size: 4,
            reads: true,
            writes: false,
            whole_reason: None,
            total: None,
            slice: None,
            read: None,
            write: None,
            count_slice: None,
            written_count: None,
            verdict: None,
            literal_strides: false,
            align: 1,
            reduction: None,
            checked: false,
            boxes: Some(BoundBoxes {
                strides: strides.iter().map(|s| e(s)).collect(),
                read: Some(vec![r("0", "7"), r("lo", "hi - 1")]),
                write: None,
                write_exact: false,
                read_parts: vec![],
            }),
        }
    }

    #[test]
    fn slice_boxes_evaluate_or_turn_the_check_off() {
        let a = array(["w", "1"]);
        // w = 100, columns [16, 32): the 1-D read range is the box's hull
        let vals = [100, 16, 32];
        let hull = Some((16, 7 * 100 + 31));
        let b = a.slice_boxes(&vals, hull, None).unwrap().expect("a box");
        assert_eq!(b.strides, vec![100, 1]);
        assert_eq!(b.extents, vec![0, 100]);
        assert_eq!(b.read, Some(vec![(0, 7), (16, 31)]));
        assert_eq!(b.write, None);
        assert_eq!(box_hull(&b.strides, b.read.as_ref().unwrap()), hull);
        // a box whose hull reaches past the 1-D range is kept (both hold
        // the footprint; what moves is their intersection)
        let past = a.slice_boxes(&vals, Some((17, 700)), None).unwrap();
        assert_eq!(past.and_then(|b| b.read), Some(vec![(0, 7), (16, 31)]));
        // a box that misses the 1-D range: off
        assert_eq!(a.slice_boxes(&vals, Some((800, 900)), None).unwrap(), None);
        // a read box missing for a range the slice reads: off
        let mut no_read = array(["w", "1"]);
        no_read.boxes.as_mut().unwrap().read = None;
        assert_eq!(no_read.slice_boxes(&vals, hull, None).unwrap(), None);
        // a component outside [0, extent): off
        assert_eq!(
            a.slice_boxes(&[20, 16, 32], Some((16, 171)), None).unwrap(),
            None
        );
        // strides that are not positive, or do not nest: off
        assert_eq!(a.slice_boxes(&[0, 16, 32], hull, None).unwrap(), None);
        assert_eq!(
            array(["w", "3"]).slice_boxes(&vals, hull, None).unwrap(),
            None
        );
        assert_eq!(
            array(["w", "2"])
                .slice_boxes(&[101, 0, 1], Some((0, 0)), None)
                .unwrap(),
            None
        );
        // an array that reads nothing in this slice has no read box
        let b = a.slice_boxes(&vals, None, None).unwrap().expect("a box");
        assert_eq!(b.read, None);
    }

    #[test]
    fn a_box_spans_its_inner_dimensions_when_it_holds_whole_rows() {
        let a = array(["w", "1"]);
        // columns [16, 32) of 100: a band
        let b = a
            .slice_boxes(&[100, 16, 32], Some((16, 731)), None)
            .unwrap()
            .expect("a box");
        assert!(!b.spans_inner_dims());
        // columns [0, 100): whole rows, the elements of the linear hull
        let b = a
            .slice_boxes(&[100, 0, 100], Some((0, 799)), None)
            .unwrap()
            .expect("a box");
        assert!(b.spans_inner_dims());
    }
}
