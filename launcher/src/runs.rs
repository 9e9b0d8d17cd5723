//! Sets of element indices as runs ([`Runs`]) and the transfer commands
//! that move them ([`Rect`]).

/// The fixed cost of one transfer command, counted in bytes moved: the
/// cost model bridges a gap between two runs when moving the gap costs
/// less than a command of its own.
pub const COMMAND_COST_BYTES: u64 = 16 * 1024;

/// A set of element indices: sorted, disjoint, non-adjacent inclusive
/// intervals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Runs(Vec<(i64, i64)>);

impl Runs {
    /// The empty set.
    pub fn new() -> Runs {
        Runs(Vec::new())
    }

    /// The elements `[lo, hi]`; empty when `lo > hi`.
    pub fn interval(lo: i64, hi: i64) -> Runs {
        if lo > hi {
            Runs::new()
        } else {
            Runs(vec![(lo, hi)])
        }
    }

    /// The union of inclusive intervals given in any order.
    pub fn from_intervals(mut v: Vec<(i64, i64)>) -> Runs {
        v.retain(|&(l, u)| l <= u);
        v.sort_unstable();
        let mut out: Vec<(i64, i64)> = Vec::with_capacity(v.len());
        for (l, u) in v {
            match out.last_mut() {
                Some(last) if l <= last.1.saturating_add(1) => last.1 = last.1.max(u),
                _ => out.push((l, u)),
            }
        }
        Runs(out)
    }

    /// The elements of a row-major box: `dims[k]` is the inclusive index
    /// range of delinearized dimension `k`, `strides[k]` its stride in
    /// elements, `offset` is added to every index. `None` when the set
    /// would need more than `max_runs` intervals (callers use the hull).
    pub fn from_box(offset: i64, dims: &[(i64, i64)], strides: &[i64], max_runs: usize) -> Option<Runs> {
        if dims.is_empty() || dims.len() != strides.len() {
            return None;
        }
        if dims.iter().any(|&(l, u)| l > u) {
            return Some(Runs::new());
        }
        let n = dims.len();
        let (last_lo, last_hi) = dims[n - 1];
        let contiguous = strides[n - 1] == 1;
        let outer: &[(i64, i64)] = if contiguous { &dims[..n - 1] } else { dims };
        let mut count: u128 = 1;
        for &(l, u) in outer {
            count = count.saturating_mul((u - l + 1) as u128);
        }
        if count > max_runs as u128 {
            return None;
        }
        let mut v = Vec::with_capacity(count as usize);
        let mut idx: Vec<i64> = outer.iter().map(|d| d.0).collect();
        loop {
            let mut at = offset;
            for (k, &i) in idx.iter().enumerate() {
                at = at.checked_add(i.checked_mul(strides[k])?)?;
            }
            if contiguous {
                v.push((at.checked_add(last_lo)?, at.checked_add(last_hi)?));
            } else {
                v.push((at, at));
            }
            // next index tuple, last dimension fastest
            let mut k = idx.len();
            loop {
                if k == 0 {
                    return Some(Runs::from_intervals(v));
                }
                k -= 1;
                if idx[k] < outer[k].1 {
                    idx[k] += 1;
                    break;
                }
                idx[k] = outer[k].0;
            }
        }
    }

    /// True when the set has no element.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The number of elements.
    pub fn n_elems(&self) -> u64 {
        self.0.iter().map(|&(l, u)| (u - l + 1) as u64).sum()
    }

    /// The number of intervals.
    pub fn n_runs(&self) -> usize {
        self.0.len()
    }

    /// The intervals, sorted.
    pub fn intervals(&self) -> &[(i64, i64)] {
        &self.0
    }

    /// The least and greatest element.
    pub fn hull(&self) -> Option<(i64, i64)> {
        Some((self.0.first()?.0, self.0.last()?.1))
    }

    /// `self ∪ other`.
    pub fn union(&self, other: &Runs) -> Runs {
        if other.is_empty() {
            return self.clone();
        }
        if self.is_empty() {
            return other.clone();
        }
        let mut v: Vec<(i64, i64)> = Vec::with_capacity(self.0.len() + other.0.len());
        let (mut i, mut j) = (0, 0);
        while i < self.0.len() || j < other.0.len() {
            let take_self = j >= other.0.len() || (i < self.0.len() && self.0[i] <= other.0[j]);
            let r = if take_self {
                i += 1;
                self.0[i - 1]
            } else {
                j += 1;
                other.0[j - 1]
            };
            match v.last_mut() {
                Some(last) if r.0 <= last.1.saturating_add(1) => last.1 = last.1.max(r.1),
                _ => v.push(r),
            }
        }
        Runs(v)
    }

    /// `self ∩ other`.
    pub fn intersect(&self, other: &Runs) -> Runs {
        let mut v = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < self.0.len() && j < other.0.len() {
            let (a, b) = (self.0[i], other.0[j]);
            let (l, u) = (a.0.max(b.0), a.1.min(b.1));
            if l <= u {
                v.push((l, u));
            }
            if a.1 < b.1 {
                i += 1;
            } else {
                j += 1;
            }
        }
        Runs(v)
    }

    /// `self − other`.
    pub fn subtract(&self, other: &Runs) -> Runs {
        if other.is_empty() || self.is_empty() {
            return self.clone();
        }
        let mut v = Vec::new();
        let mut j = 0;
        for &(l, u) in &self.0 {
            let mut lo = l;
            while j < other.0.len() && other.0[j].1 < lo {
                j += 1;
            }
            let mut k = j;
            while k < other.0.len() && other.0[k].0 <= u {
                let (ol, ou) = other.0[k];
                if ol > lo {
                    v.push((lo, ol - 1));
                }
                lo = lo.max(ou.saturating_add(1));
                if ou >= u {
                    break;
                }
                k += 1;
            }
            if lo <= u {
                v.push((lo, u));
            }
        }
        Runs(v)
    }

    /// Whether `other ⊆ self`.
    pub fn contains(&self, other: &Runs) -> bool {
        other.subtract(self).is_empty()
    }

    /// Whether the sets share an element.
    pub fn overlaps(&self, other: &Runs) -> bool {
        !self.intersect(other).is_empty()
    }

    /// Whether element `i` is in the set.
    pub fn contains_elem(&self, i: i64) -> bool {
        let p = self.0.partition_point(|&(_, u)| u < i);
        p < self.0.len() && self.0[p].0 <= i
    }

    /// The transfer commands that move exactly this set: runs of equal
    /// length at equal spacing become one 2-D rect, equal 2-D rects at
    /// equal spacing one 3-D rect (greedy, left to right).
    pub fn rects(&self) -> Vec<Rect> {
        let rows = rows_of(&self.0);
        planes_of(rows)
    }

    /// The cost model: like [`Runs::rects`], after bridging each gap between
    /// consecutive runs that lies inside `fill` (elements that may be moved
    /// too) and costs fewer bytes than a command, when the two runs would
    /// otherwise go in different commands.
    pub fn transfers(&self, fill: &Runs, elem_size: u64, command_cost_bytes: u64) -> Vec<Rect> {
        let rects = self.rects();
        if rects.len() <= 1 {
            return rects;
        }
        let mut bridged = self.0.clone();
        let mut out: Vec<(i64, i64)> = Vec::with_capacity(bridged.len());
        let owner = |i: i64| rects.iter().position(|r| r.contains_start(i));
        for r in bridged.drain(..) {
            if let Some(last) = out.last_mut() {
                let gap = Runs::interval(last.1 + 1, r.0 - 1);
                let small = (gap.n_elems()).saturating_mul(elem_size) < command_cost_bytes;
                if small && fill.contains(&gap) && owner(last.0) != owner(r.0) {
                    last.1 = r.1;
                    continue;
                }
            }
            out.push(r);
        }
        Runs(out).rects()
    }
}

/// One transfer command in element units, the same layout on both sides
/// (the host array and a device buffer holding a window of it):
/// `planes` planes `plane_pitch` apart, each `rows` rows `row_pitch`
/// apart, each `run` contiguous elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rect {
    /// First element.
    pub start: i64,
    /// Elements per row.
    pub run: u64,
    /// Rows per plane (at least 1).
    pub rows: u64,
    /// Elements between the starts of consecutive rows.
    pub row_pitch: u64,
    /// Planes (at least 1).
    pub planes: u64,
    /// Elements between the starts of consecutive planes.
    pub plane_pitch: u64,
}

impl Rect {
    /// The number of elements moved.
    pub fn n_elems(&self) -> u64 {
        self.run * self.rows * self.planes
    }

    /// The elements moved.
    pub fn runs(&self) -> Runs {
        let mut v = Vec::with_capacity((self.rows * self.planes) as usize);
        for p in 0..self.planes {
            for r in 0..self.rows {
                let s = self.start + (p * self.plane_pitch + r * self.row_pitch) as i64;
                v.push((s, s + self.run as i64 - 1));
            }
        }
        Runs::from_intervals(v)
    }

    fn contains_start(&self, i: i64) -> bool {
        let off = i - self.start;
        if off < 0 {
            return false;
        }
        let off = off as u64;
        let (p, rem) = (off / self.plane_pitch.max(1), off % self.plane_pitch.max(1));
        p < self.planes && rem % self.row_pitch.max(1) == 0 && rem / self.row_pitch.max(1) < self.rows
    }
}

/// Groups runs of equal length at equal spacing into 2-D rects.
fn rows_of(runs: &[(i64, i64)]) -> Vec<Rect> {
    let mut out: Vec<Rect> = Vec::new();
    for &(l, u) in runs {
        let len = (u - l + 1) as u64;
        if let Some(r) = out.last_mut() {
            if r.planes == 1 && r.run == len {
                let pitch = (l - r.start) as u64;
                if r.rows == 1 && pitch > len {
                    r.rows = 2;
                    r.row_pitch = pitch;
                    r.plane_pitch = pitch * 2;
                    continue;
                }
                if r.rows > 1 && l == r.start + (r.rows * r.row_pitch) as i64 {
                    r.rows += 1;
                    r.plane_pitch = r.rows * r.row_pitch;
                    continue;
                }
            }
        }
        out.push(Rect { start: l, run: len, rows: 1, row_pitch: len, planes: 1, plane_pitch: len });
    }
    out
}

/// Groups equal 2-D rects at equal spacing into 3-D rects.
fn planes_of(rows: Vec<Rect>) -> Vec<Rect> {
    let mut out: Vec<Rect> = Vec::new();
    for r in rows {
        if let Some(p) = out.last_mut() {
            let same = p.run == r.run && p.rows == r.rows && p.row_pitch == r.row_pitch && r.rows > 1;
            if same {
                let pitch = (r.start - p.start) as u64;
                let span = (p.rows - 1) * p.row_pitch + p.run;
                if p.planes == 1 && pitch >= span {
                    p.planes = 2;
                    p.plane_pitch = pitch;
                    continue;
                }
                if p.planes > 1 && r.start == p.start + (p.planes * p.plane_pitch) as i64 {
                    p.planes += 1;
                    continue;
                }
            }
        }
        out.push(r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations() {
        let a = Runs::from_intervals(vec![(5, 9), (0, 2), (3, 3), (20, 25)]);
        assert_eq!(a.intervals(), &[(0, 3), (5, 9), (20, 25)]);
        let b = Runs::from_intervals(vec![(2, 6), (22, 30)]);
        assert_eq!(a.union(&b).intervals(), &[(0, 9), (20, 30)]);
        assert_eq!(a.intersect(&b).intervals(), &[(2, 3), (5, 6), (22, 25)]);
        assert_eq!(a.subtract(&b).intervals(), &[(0, 1), (7, 9), (20, 21)]);
        assert!(a.contains(&Runs::interval(6, 8)));
        assert!(!a.contains(&Runs::interval(3, 5)));
        assert_eq!(a.n_elems(), 4 + 5 + 6);
    }

    #[test]
    fn a_column_walk_is_one_rect() {
        // A[i*n + j], i in [0, 4096), j in [100, 163]
        let r = Runs::from_box(0, &[(0, 4095), (100, 163)], &[1000, 1], 1 << 20).unwrap();
        let rects = r.rects();
        assert_eq!(rects.len(), 1);
        assert_eq!(rects[0], Rect { start: 100, run: 64, rows: 4096, row_pitch: 1000, planes: 1, plane_pitch: 4096 * 1000 });
        assert_eq!(rects[0].runs(), r);
    }

    #[test]
    fn a_3d_box_is_one_rect() {
        let r = Runs::from_box(0, &[(1, 6), (1, 6), (1, 6)], &[64, 8, 1], 1 << 20).unwrap();
        let rects = r.rects();
        assert_eq!(rects.len(), 1, "{rects:?}");
        assert_eq!(rects[0].runs(), r);
    }
}
