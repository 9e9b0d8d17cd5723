//! Sets of element indices as runs, and the transfer commands that move them.
//!
//! A [`Runs`] is a set of element indices of one array, kept as sorted,
//! disjoint, non-adjacent inclusive intervals. Its set operations are linear
//! merges over the intervals, never loops over elements: a resident buffer
//! may hold 10^9 elements in 10^5 runs. [`Runs::from_box`] turns a
//! delinearized box (a range of a row-major array) into runs.
//!
//! A [`Rect`] is one `clEnqueue{Read,Write}BufferRect`-shaped command in
//! element units. [`Runs::rects`] covers a set exactly with few commands by
//! grouping equal runs at equal spacing into 2-D rects and equal 2-D rects at
//! equal spacing into 3-D ones; [`Runs::transfers`] also moves small gaps,
//! or pads the rows of a staircase to one rect, when that saves more than it
//! moves (the cost model of [`CostModel`]: [`COMMAND_COST_BYTES`] a command,
//! at most [`MAX_EXTRA_PERCENT`] more bytes than the set).

use std::fmt;

/// The fixed cost of one transfer command, in bytes moved: moving a gap of
/// fewer bytes than this along with its neighbours is cheaper than a command
/// of its own. Measured in the bench.
pub const COMMAND_COST_BYTES: u64 = 16 * 1024;

/// The most bytes [`Runs::transfers`] moves beyond a set to save commands,
/// in percent of the set's bytes: transfers stay within 5 % of what a
/// device needs, however small the set and however costly a command.
pub const MAX_EXTRA_PERCENT: u64 = 5;

/// The cost model of [`Runs::transfers`]: a command costs `command_bytes`
/// bytes moved, and a plan moves at most `max_extra_percent` % more
/// elements than the set it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CostModel {
    pub command_bytes: u64,
    pub max_extra_percent: u64,
}

/// clpart's cost model: [`COMMAND_COST_BYTES`] and [`MAX_EXTRA_PERCENT`].
pub const COST_MODEL: CostModel = CostModel {
    command_bytes: COMMAND_COST_BYTES,
    max_extra_percent: MAX_EXTRA_PERCENT,
};

impl CostModel {
    /// The most elements a plan for `elems` elements may move beyond them.
    fn extra_budget(&self, elems: u64) -> u128 {
        elems as u128 * self.max_extra_percent as u128 / 100
    }
}

/// A set of element indices: sorted, disjoint, non-adjacent inclusive
/// intervals (`lo <= hi`, and each interval starts at least two past the end
/// of the previous one).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Runs(Vec<(i64, i64)>);

/// Number of elements of the inclusive interval `[lo, hi]` (`lo <= hi`).
fn width(lo: i64, hi: i64) -> u64 {
    (hi as i128 - lo as i128 + 1) as u64
}

/// Appends `[lo, hi]` to normalized intervals whose last one starts at or
/// before `lo`, merging it with the last one when they overlap or touch.
fn push_merge(v: &mut Vec<(i64, i64)>, lo: i64, hi: i64) {
    if let Some(last) = v.last_mut() {
        if lo <= last.1.saturating_add(1) {
            if hi > last.1 {
                last.1 = hi;
            }
            return;
        }
    }
    v.push((lo, hi));
}

/// Whether `small` has so few intervals beside `large` that an operation
/// is best driven by `small`, searching `large` and copying its untouched
/// stretches whole (a launch's few written runs against a resident
/// buffer's thousands: the cost then grows with the small set, and the
/// copies, not with a loop over every run).
fn sparse(small: &[(i64, i64)], large: &[(i64, i64)]) -> bool {
    small.len().saturating_mul(8) < large.len()
}

/// [`Runs::subtract`] of a few intervals `b` from many `a` ([`sparse`]).
fn subtract_sparse(a: &[(i64, i64)], b: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let mut i = 0;
    // the first interval of `a` not yet written out, perhaps trimmed
    let mut carry: Option<(i64, i64)> = None;
    for &(lo, hi) in b {
        if carry.is_some_and(|(_, ch)| ch < lo) {
            out.extend(carry.take());
        }
        if carry.is_none() {
            let k = i + a[i..].partition_point(|&(_, h)| h < lo);
            out.extend_from_slice(&a[i..k]);
            i = k;
            let Some(&next) = a.get(i) else { break };
            carry = Some(next);
            i += 1;
        }
        // the carried interval ends at or after `lo`
        while let Some((cl, ch)) = carry {
            if cl > hi {
                break;
            }
            if cl < lo {
                out.push((cl, lo - 1));
            }
            if ch > hi {
                carry = Some((hi + 1, ch));
                break;
            }
            carry = a.get(i).copied();
            i += 1;
        }
        if carry.is_none() {
            break;
        }
    }
    out.extend(carry);
    out.extend_from_slice(&a[i.min(a.len())..]);
    out
}

/// [`Runs::union`] of many intervals `a` with a few `b` ([`sparse`]).
fn union_sparse(a: &[(i64, i64)], b: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let mut i = 0;
    for &(lo, hi) in b {
        // intervals of `a` ending before `lo - 1` cannot merge with it
        let k = i + a[i..].partition_point(|&(_, h)| h.saturating_add(1) < lo);
        if k > i {
            push_merge(&mut out, a[i].0, a[i].1);
            out.extend_from_slice(&a[i + 1..k]);
        }
        i = k;
        let (mut cl, mut ch) = (lo, hi);
        while i < a.len() && a[i].0 <= ch.saturating_add(1) {
            cl = cl.min(a[i].0);
            ch = ch.max(a[i].1);
            i += 1;
        }
        push_merge(&mut out, cl, ch);
    }
    if i < a.len() {
        push_merge(&mut out, a[i].0, a[i].1);
        out.extend_from_slice(&a[i + 1..]);
    }
    out
}

impl Runs {
    /// The empty set.
    pub fn new() -> Runs {
        Runs(Vec::new())
    }

    /// The elements `lo..=hi`; empty when `lo > hi`.
    pub fn interval(lo: i64, hi: i64) -> Runs {
        if lo > hi {
            Runs::new()
        } else {
            Runs(vec![(lo, hi)])
        }
    }

    /// The union of inclusive intervals given in any order, overlapping or
    /// touching; intervals with `lo > hi` are dropped.
    pub fn from_intervals(mut v: Vec<(i64, i64)>) -> Runs {
        v.retain(|&(lo, hi)| lo <= hi);
        if !v.windows(2).all(|w| w[0].0 <= w[1].0) {
            v.sort_unstable();
        }
        let mut out: Vec<(i64, i64)> = Vec::with_capacity(v.len());
        for (lo, hi) in v {
            push_merge(&mut out, lo, hi);
        }
        Runs(out)
    }

    /// The elements of a box of a row-major array: `dims[k]` is the
    /// inclusive index range `(lo, hi)` of delinearized dimension `k` and
    /// `strides[k]` its stride in elements; element `(i_0, .., i_n)` is
    /// `offset + sum(i_k * strides[k])`. A dimension with `lo > hi` gives
    /// the empty set; no dimension at all gives `{offset}`.
    ///
    /// Any strides work (zero, negative, not row-major, a last stride other
    /// than 1): dimensions are taken innermost first by increasing stride,
    /// and consecutive ones collapse into one run while they are contiguous.
    /// Returns `None` when the box takes more than `max_runs` runs (callers
    /// then use the hull) or when an index overflows `i64`. The runs are
    /// counted before merging runs that overlap or touch, which only differ
    /// from the result's count for boxes wider than the array's extents.
    pub fn from_box(
        offset: i64,
        dims: &[(i64, i64)],
        strides: &[i64],
        max_runs: usize,
    ) -> Option<Runs> {
        debug_assert_eq!(dims.len(), strides.len(), "one stride per dimension");
        if dims.iter().any(|&(lo, hi)| lo > hi) {
            return Some(Runs::new());
        }
        // Each dimension as (positive stride, extent); its first index goes
        // into `base`. Dimensions of one index or stride 0 only move `base`.
        let mut base = offset as i128;
        let mut outer: Vec<(i128, i128)> = Vec::with_capacity(dims.len());
        for (&(lo, hi), &s) in dims.iter().zip(strides) {
            let (lo, hi, s) = (lo as i128, hi as i128, s as i128);
            let extent = hi - lo + 1;
            if s == 0 || extent == 1 {
                base = base.saturating_add(lo.saturating_mul(s));
            } else if s > 0 {
                base = base.saturating_add(lo.saturating_mul(s));
                outer.push((s, extent));
            } else {
                base = base.saturating_add(hi.saturating_mul(s));
                outer.push((-s, extent));
            }
        }
        // Innermost (smallest stride) last; collapse while contiguous: runs
        // of `len` elements at spacing `s <= len` make one run.
        outer.sort_by_key(|&(s, _)| std::cmp::Reverse(s));
        let mut len: i128 = 1;
        while let Some(&(s, extent)) = outer.last() {
            if s > len {
                break;
            }
            len = len.saturating_add((extent - 1).saturating_mul(s));
            outer.pop();
        }
        let mut n_runs: u128 = 1;
        for &(_, extent) in &outer {
            n_runs = n_runs.saturating_mul(extent as u128);
        }
        if n_runs > max_runs as u128 {
            return None;
        }
        let fits = |x: i128| x >= i64::MIN as i128 && x <= i64::MAX as i128;
        let last = outer
            .iter()
            .fold(base.saturating_add(len - 1), |acc, &(s, e)| {
                acc.saturating_add(s.saturating_mul(e - 1))
            });
        if !fits(base) || !fits(last) {
            return None;
        }
        // Odometer over the outer dimensions, outermost first.
        let mut v = Vec::with_capacity(n_runs as usize);
        let mut idx = vec![0i128; outer.len()];
        loop {
            let start = base
                + idx
                    .iter()
                    .zip(&outer)
                    .map(|(&i, &(s, _))| i * s)
                    .sum::<i128>();
            v.push((start as i64, (start + len - 1) as i64));
            let mut k = outer.len();
            loop {
                if k == 0 {
                    return Some(Runs::from_intervals(v));
                }
                k -= 1;
                idx[k] += 1;
                if idx[k] < outer[k].1 {
                    break;
                }
                idx[k] = 0;
            }
        }
    }

    /// Whether the set has no element.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Number of elements (saturating at `u64::MAX`).
    pub fn n_elems(&self) -> u64 {
        let n: u128 = self.0.iter().map(|&(lo, hi)| width(lo, hi) as u128).sum();
        n.min(u64::MAX as u128) as u64
    }

    /// Number of runs (maximal intervals).
    pub fn n_runs(&self) -> usize {
        self.0.len()
    }

    /// The runs: sorted, disjoint, non-adjacent inclusive intervals.
    pub fn intervals(&self) -> &[(i64, i64)] {
        &self.0
    }

    /// The bytes of these elements, each of `es` bytes (element `i` is
    /// bytes `[i*es, (i+1)*es)`); elements must not be negative.
    pub fn to_bytes(&self, es: u64) -> Runs {
        let es = es.max(1) as i64;
        Runs::from_intervals(
            self.0
                .iter()
                .map(|&(lo, hi)| (lo * es, (hi + 1) * es - 1))
                .collect(),
        )
    }

    /// Of these bytes, the elements of `es` bytes each whose every byte is
    /// in the set (the runs being maximal, an element is in one run).
    pub fn whole_elems(&self, es: u64) -> Runs {
        let es = es.max(1) as i64;
        Runs::from_intervals(
            self.0
                .iter()
                .map(|&(lo, hi)| {
                    (
                        lo.div_euclid(es) + (lo.rem_euclid(es) != 0) as i64,
                        (hi + 1).div_euclid(es) - 1,
                    )
                })
                .collect(),
        )
    }

    /// Of these bytes, the elements of `es` bytes each with some byte in
    /// the set.
    pub fn touched_elems(&self, es: u64) -> Runs {
        let es = es.max(1) as i64;
        Runs::from_intervals(
            self.0
                .iter()
                .map(|&(lo, hi)| (lo.div_euclid(es), hi.div_euclid(es)))
                .collect(),
        )
    }

    /// The smallest interval holding every element; `None` when empty.
    pub fn hull(&self) -> Option<(i64, i64)> {
        Some((self.0.first()?.0, self.0.last()?.1))
    }

    /// Elements in `self` or in `other`.
    pub fn union(&self, other: &Runs) -> Runs {
        if sparse(&other.0, &self.0) {
            return Runs(union_sparse(&self.0, &other.0));
        }
        if sparse(&self.0, &other.0) {
            return Runs(union_sparse(&other.0, &self.0));
        }
        let (a, b) = (&self.0, &other.0);
        let mut out = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            let take_a = j == b.len() || (i < a.len() && a[i].0 <= b[j].0);
            let (lo, hi) = if take_a {
                i += 1;
                a[i - 1]
            } else {
                j += 1;
                b[j - 1]
            };
            push_merge(&mut out, lo, hi);
        }
        Runs(out)
    }

    /// Elements in `self` and not in `other`.
    pub fn subtract(&self, other: &Runs) -> Runs {
        let b = &other.0;
        let mut out = Vec::with_capacity(self.0.len());
        let mut j = 0;
        if sparse(b, &self.0) {
            return Runs(subtract_sparse(&self.0, b));
        }
        for &(lo, hi) in &self.0 {
            // Intervals of `other` wholly before this one are before every
            // later one too.
            while j < b.len() && b[j].1 < lo {
                j += 1;
            }
            let mut cur = lo;
            let mut k = j;
            let mut covered = false;
            while k < b.len() && b[k].0 <= hi {
                if b[k].0 > cur {
                    out.push((cur, b[k].0 - 1));
                }
                if b[k].1 >= hi {
                    covered = true;
                    break;
                }
                cur = b[k].1 + 1;
                k += 1;
            }
            if !covered {
                out.push((cur, hi));
            }
        }
        Runs(out)
    }

    /// Elements in both `self` and `other`.
    pub fn intersect(&self, other: &Runs) -> Runs {
        // the smaller set drives; the larger is searched (a slice's few
        // runs against a resident buffer's many)
        let (a, b) = if self.0.len() <= other.0.len() {
            (&self.0, &other.0)
        } else {
            (&other.0, &self.0)
        };
        let mut out = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            if b[j].1 < a[i].0 {
                j += b[j..].partition_point(|&(_, h)| h < a[i].0);
                continue;
            }
            let lo = a[i].0.max(b[j].0);
            let hi = a[i].1.min(b[j].1);
            if lo <= hi {
                out.push((lo, hi));
            }
            if a[i].1 < b[j].1 {
                i += 1;
            } else {
                j += 1;
            }
        }
        Runs(out)
    }

    /// Whether every element of `other` is in `self` (`other ⊆ self`).
    pub fn contains(&self, other: &Runs) -> bool {
        let a = &self.0;
        let mut i = 0;
        let skip = sparse(&other.0, a);
        for &(lo, hi) in &other.0 {
            if skip {
                i += a[i..].partition_point(|&(_, h)| h < lo);
            }
            while i < a.len() && a[i].1 < lo {
                i += 1;
            }
            // Runs are maximal: one run of `self` must hold all of [lo, hi].
            if i == a.len() || a[i].0 > lo || a[i].1 < hi {
                return false;
            }
        }
        true
    }

    /// Whether `self` and `other` have an element in common.
    pub fn overlaps(&self, other: &Runs) -> bool {
        let (a, b) = if self.0.len() <= other.0.len() {
            (&self.0, &other.0)
        } else {
            (&other.0, &self.0)
        };
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            if b[j].1 < a[i].0 {
                j += b[j..].partition_point(|&(_, h)| h < a[i].0);
                continue;
            }
            if a[i].0.max(b[j].0) <= a[i].1.min(b[j].1) {
                return true;
            }
            if a[i].1 < b[j].1 {
                i += 1;
            } else {
                j += 1;
            }
        }
        false
    }

    /// Whether element `i` is in the set.
    pub fn contains_elem(&self, i: i64) -> bool {
        let k = self.0.partition_point(|&(_, hi)| hi < i);
        k < self.0.len() && self.0[k].0 <= i
    }

    /// The transfer commands that move exactly `self` (no element outside
    /// it): runs of equal length at equal spacing become one 2-D rect, equal
    /// 2-D rects at equal spacing one 3-D rect (greedy, left to right). The
    /// rects are pairwise disjoint, their union is `self`, and each is a
    /// consecutive stretch of `self`'s runs, in order.
    pub fn rects(&self) -> Vec<Rect> {
        group_planes(group_rows(&self.0))
    }

    /// The transfer commands that move `self`, at the cost model's best
    /// (fewest `bytes moved + commands * cost.command_bytes`, among two
    /// plans; the first on a tie), each moving at most
    /// `cost.max_extra_percent` % more elements than `self`:
    /// - bridged: like [`Runs::rects`], but where two consecutive rects are
    ///   single runs and the gap between them lies inside `fill` (elements
    ///   that may harmlessly be moved too) and moves fewer bytes than one
    ///   command (`gap_elems * elem_size < cost.command_bytes`), they become
    ///   one run, smallest gaps first while the budget lasts. Gaps next to a
    ///   rect of several rows are kept: bridging there would break the rect
    ///   up and save no command.
    /// - padded: consecutive runs of different lengths whose starts or ends
    ///   are at equal spacing (a staircase: the rows of a triangle of a
    ///   row-major matrix) become one 2-D rect whose rows are padded from
    ///   `fill` to a common width, where that costs less than their
    ///   commands and fits the budget (`padded_rows`); then grouped and
    ///   bridged as above with what is left of the budget.
    ///
    /// The union of the rects holds `self` and lies inside `self ∪ fill`;
    /// the rects are pairwise disjoint.
    pub fn transfers(&self, fill: &Runs, elem_size: u64, cost: CostModel) -> Vec<Rect> {
        // One run (or none) is one command (or none) of exactly its
        // elements: no plan moves fewer bytes in fewer commands.
        if let [] | [_] = self.0.as_slice() {
            return self.rects();
        }
        self.planned_transfers(fill, elem_size, cost)
    }

    /// [`Runs::transfers`] by the cost model's two plans, whatever the
    /// number of runs.
    fn planned_transfers(&self, fill: &Runs, elem_size: u64, cost: CostModel) -> Vec<Rect> {
        let n = self.n_elems();
        let budget = cost.extra_budget(n);
        let cmd = cost.command_bytes;
        let bridged = bridge(self.rects(), fill, elem_size, cmd, budget);
        let padded = group_planes(padded_rows(&self.0, fill, elem_size, cmd, budget));
        let padding = elems_of(&padded) - n as u128;
        let padded = bridge(padded, fill, elem_size, cmd, budget - padding);
        let cost_of = |rects: &[Rect]| -> u128 {
            elems_of(rects) * elem_size as u128 + rects.len() as u128 * cmd as u128
        };
        if cost_of(&padded) < cost_of(&bridged) {
            padded
        } else {
            bridged
        }
    }

    /// The interval of `self` that holds `i`, if any.
    fn interval_of(&self, i: i64) -> Option<(i64, i64)> {
        let k = self.0.partition_point(|&(_, hi)| hi < i);
        (k < self.0.len() && self.0[k].0 <= i).then(|| self.0[k])
    }
}

/// The elements of `rects` (pairwise disjoint), summed.
fn elems_of(rects: &[Rect]) -> u128 {
    rects.iter().map(|r| r.n_elems() as u128).sum()
}

/// [`Runs::transfers`]'s bridging: consecutive single runs whose gap lies
/// inside `fill` and costs less than a command become one run, smallest
/// gaps first (the most commands saved for the fewest bytes) while their
/// elements add up to at most `budget`.
fn bridge(
    rects: Vec<Rect>,
    fill: &Runs,
    elem_size: u64,
    command_cost_bytes: u64,
    budget: u128,
) -> Vec<Rect> {
    // The gaps that may be bridged: (elements, index of the rect after it).
    let f = &fill.0;
    let mut fj = 0;
    let mut gaps: Vec<(u128, usize)> = Vec::new();
    for (k, pair) in rects.windows(2).enumerate() {
        let (last, r) = (&pair[0], &pair[1]);
        if !(last.is_run() && r.is_run()) {
            continue;
        }
        let (gap_lo, gap_hi) = (last.end(), r.start - 1);
        let gap = width(gap_lo, gap_hi) as u128;
        if gap * elem_size as u128 >= command_cost_bytes as u128 || gap > budget {
            continue;
        }
        // Gaps come in increasing order: `fj` only moves on.
        while fj < f.len() && f[fj].1 < gap_lo {
            fj += 1;
        }
        if fj < f.len() && f[fj].0 <= gap_lo && f[fj].1 >= gap_hi {
            gaps.push((gap, k + 1));
        }
    }
    gaps.sort_unstable();
    let mut bridged = vec![false; rects.len()];
    let mut left = budget;
    for (gap, k) in gaps {
        if gap > left {
            break;
        }
        left -= gap;
        bridged[k] = true;
    }
    let mut out: Vec<Rect> = Vec::with_capacity(rects.len());
    for (k, r) in rects.into_iter().enumerate() {
        if bridged[k] {
            let last = out.last_mut().expect("a bridged gap follows a rect");
            let run = width(last.start, r.start + r.run as i64 - 1);
            *last = Rect::run(last.start, run);
            continue;
        }
        out.push(r);
    }
    out
}

/// Rows of a padded rect: consecutive runs `k = 0..m` at pitch `p` lie in
/// the rows `[S + k p, S + k p + W)` of one 2-D rect, each padded on both
/// sides from `fill`. In coordinates relative to the row (`x - k p`), run
/// `k` is `[a_k, b_k]` and `fill` lets its row reach from `lo_k` to `hi_k`;
/// the rect is `S = min a_k`, `E = max b_k`, valid while `S >= max lo_k`,
/// `E <= min hi_k` and `W = E - S + 1 < p` (rows must not touch).
struct PadRows {
    pitch: i128,
    s: i128,
    e: i128,
    lo: i128,
    hi: i128,
    /// Elements of the runs taken.
    elems: u128,
}

impl PadRows {
    /// The rect's width when run `k` is taken too, if it still fits.
    fn extend(&self, k: i128, run: (i64, i64), reach: (i128, i128)) -> Option<PadRows> {
        let shift = k * self.pitch;
        let (a, b) = (run.0 as i128 - shift, run.1 as i128 - shift);
        let next = PadRows {
            pitch: self.pitch,
            s: self.s.min(a),
            e: self.e.max(b),
            lo: self.lo.max(reach.0 - shift),
            hi: self.hi.min(reach.1 - shift),
            elems: self.elems + width(run.0, run.1) as u128,
        };
        (next.s >= next.lo && next.e <= next.hi && next.e - next.s + 1 < next.pitch).then_some(next)
    }
}

/// How many rows [`padded_rows`] takes past the best stretch so far before
/// it stops looking (a stretch that fits but never pays would otherwise
/// make it quadratic in the runs).
const PAD_LOOKAHEAD: usize = 64;

/// Groups consecutive runs into 2-D rects whose rows are padded from `fill`
/// (greedy, left to right): from each run, for the pitch of the next run's
/// start and that of its end, the longest stretch that fits ([`PadRows`]),
/// cut where it saves most (`runs' bytes + m commands - rect's bytes - one
/// command`) among the cuts whose padding fits what is left of `budget`
/// (elements), looking at most [`PAD_LOOKAHEAD`] rows past the best; a run
/// no stretch saves anything for stays a run. Runs of
/// equal length at equal spacing are the case with no padding ([`group_rows`]).
fn padded_rows(
    runs: &[(i64, i64)],
    fill: &Runs,
    elem_size: u64,
    command_cost_bytes: u64,
    budget: u128,
) -> Vec<Rect> {
    let mut budget_left = budget;
    // How far `fill` lets each run grow on either side, never up to its
    // neighbours.
    let reach: Vec<(i128, i128)> = runs
        .iter()
        .enumerate()
        .map(|(k, &(lo, hi))| {
            let (lo, hi) = (lo as i128, hi as i128);
            let (mut left, mut right) = (lo, hi);
            if let Some(f) = (lo > i64::MIN as i128)
                .then(|| fill.interval_of((lo - 1) as i64))
                .flatten()
            {
                left = f.0 as i128;
            }
            if let Some(f) = (hi < i64::MAX as i128)
                .then(|| fill.interval_of((hi + 1) as i64))
                .flatten()
            {
                right = f.1 as i128;
            }
            if k > 0 {
                left = left.max(runs[k - 1].1 as i128 + 1);
            }
            if k + 1 < runs.len() {
                right = right.min(runs[k + 1].0 as i128 - 1);
            }
            (left, right)
        })
        .collect();
    let (es, cmd) = (elem_size as i128, command_cost_bytes as i128);
    let mut out: Vec<Rect> = Vec::new();
    let mut i = 0;
    while i < runs.len() {
        // The first row starts after the last rect (whose last row may
        // have been padded into the gap before run i).
        let after = out.last().map_or(i128::MIN, |r| r.end() as i128);
        // (saving, rows, S, W, pitch) of the best stretch from run i
        let mut best: Option<(i128, usize, i128, i128, i128)> = None;
        if i + 1 < runs.len() {
            let starts = runs[i + 1].0 as i128 - runs[i].0 as i128;
            let ends = runs[i + 1].1 as i128 - runs[i].1 as i128;
            let pitches: &[i128] = if starts == ends {
                &[starts]
            } else {
                &[starts, ends]
            };
            for &pitch in pitches {
                let (lo, hi) = runs[i];
                let mut g = PadRows {
                    pitch,
                    s: lo as i128,
                    e: hi as i128,
                    lo: reach[i].0.max(after),
                    hi: reach[i].1,
                    elems: width(lo, hi) as u128,
                };
                let (mut m, mut since_best) = (1, 0);
                while i + m < runs.len() && since_best < PAD_LOOKAHEAD {
                    let Some(next) = g.extend(m as i128, runs[i + m], reach[i + m]) else {
                        break;
                    };
                    g = next;
                    m += 1;
                    let w = g.e - g.s + 1;
                    let saving =
                        g.elems as i128 * es + m as i128 * cmd - (w * m as i128 * es + cmd);
                    let padding = (w * m as i128) as u128 - g.elems;
                    since_best += 1;
                    if saving > 0 && padding <= budget_left && best.is_none_or(|b| saving > b.0) {
                        best = Some((saving, m, g.s, w, pitch));
                        since_best = 0;
                    }
                }
            }
        }
        match best {
            Some((_, rows, s, w, pitch)) => {
                let taken: u128 = runs[i..i + rows]
                    .iter()
                    .map(|&(lo, hi)| width(lo, hi) as u128)
                    .sum();
                budget_left -= (w * rows as i128) as u128 - taken;
                out.push(Rect {
                    start: s as i64,
                    run: w as u64,
                    rows: rows as u64,
                    row_pitch: pitch as u64,
                    planes: 1,
                    plane_pitch: pitch as u64 * rows as u64,
                });
                i += rows;
            }
            None => {
                out.push(Rect::run(runs[i].0, width(runs[i].0, runs[i].1)));
                i += 1;
            }
        }
    }
    out
}

impl fmt::Display for Runs {
    /// `{0..=3, 8..=11}`; `{}` when empty.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{")?;
        for (k, &(lo, hi)) in self.0.iter().enumerate() {
            let sep = if k == 0 { "" } else { ", " };
            write!(f, "{sep}{lo}..={hi}")?;
        }
        write!(f, "}}")
    }
}

/// One `clEnqueue{Read,Write}BufferRect`-shaped transfer in element units,
/// with the same layout on both sides (the host array and the device buffer
/// are both linear in the array's element index; the device buffer is just
/// offset by a base). Elements: `start + p * plane_pitch + r * row_pitch + c`
/// for `p < planes`, `r < rows`, `c < run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rect {
    /// First element.
    pub start: i64,
    /// Elements per row (contiguous), at least 1.
    pub run: u64,
    /// Rows per plane, at least 1.
    pub rows: u64,
    /// Elements between the starts of consecutive rows: `> run` when
    /// `rows > 1`, `== run` when `rows == 1`.
    pub row_pitch: u64,
    /// Planes, at least 1.
    pub planes: u64,
    /// Elements between plane starts: when `planes > 1`, at least
    /// `row_pitch * rows` and a multiple of `row_pitch` (OpenCL
    /// implementations such as PoCL reject other slice pitches); when
    /// `planes == 1`, `row_pitch * rows`.
    pub plane_pitch: u64,
}

impl Rect {
    /// The elements a list of commands moves.
    pub fn union_of(rects: &[Rect]) -> Runs {
        Runs::from_intervals(
            rects
                .iter()
                .flat_map(|r| r.runs().intervals().to_vec())
                .collect(),
        )
    }

    /// The contiguous elements `start..start + run`.
    pub fn run(start: i64, run: u64) -> Rect {
        Rect {
            start,
            run,
            rows: 1,
            row_pitch: run,
            planes: 1,
            plane_pitch: run,
        }
    }

    /// Number of elements moved.
    pub fn n_elems(&self) -> u64 {
        self.run * self.rows * self.planes
    }

    /// Whether it is a single contiguous run (one row, one plane).
    pub fn is_run(&self) -> bool {
        self.rows == 1 && self.planes == 1
    }

    /// One past the last element: the buffer (relative to the array's
    /// element 0) must reach at least this far.
    pub fn end(&self) -> i64 {
        self.start
            + ((self.planes - 1) * self.plane_pitch + (self.rows - 1) * self.row_pitch + self.run)
                as i64
    }

    /// Whether the fields obey the constraints documented on each of them.
    pub fn is_well_formed(&self) -> bool {
        let rows_ok = if self.rows == 1 {
            self.row_pitch == self.run
        } else {
            self.row_pitch > self.run
        };
        let row_bytes = self.row_pitch.checked_mul(self.rows);
        let planes_ok = match row_bytes {
            None => false,
            Some(plane) if self.planes == 1 => self.plane_pitch == plane,
            Some(plane) => {
                self.plane_pitch >= plane && self.plane_pitch.is_multiple_of(self.row_pitch)
            }
        };
        self.run >= 1 && self.rows >= 1 && self.planes >= 1 && rows_ok && planes_ok
    }

    /// The elements moved.
    pub fn runs(&self) -> Runs {
        let mut v = Vec::with_capacity((self.rows * self.planes) as usize);
        for p in 0..self.planes {
            for r in 0..self.rows {
                let lo = self.start + (p * self.plane_pitch + r * self.row_pitch) as i64;
                push_merge(&mut v, lo, lo + self.run as i64 - 1);
            }
        }
        Runs(v)
    }
}

impl fmt::Display for Rect {
    /// `start+run` for a run, `start+run x rows/row_pitch` for a 2-D rect,
    /// `start+run x rows/row_pitch x planes/plane_pitch` for a 3-D one.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}+{}", self.start, self.run)?;
        if self.rows > 1 || self.planes > 1 {
            write!(f, " x {}/{}", self.rows, self.row_pitch)?;
        }
        if self.planes > 1 {
            write!(f, " x {}/{}", self.planes, self.plane_pitch)?;
        }
        Ok(())
    }
}

/// Groups consecutive runs of equal length at equal spacing into 2-D rects
/// (greedy, left to right).
fn group_rows(runs: &[(i64, i64)]) -> Vec<Rect> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < runs.len() {
        let (lo, hi) = runs[i];
        let run = width(lo, hi);
        let mut rect = Rect::run(lo, run);
        if i + 1 < runs.len() && width(runs[i + 1].0, runs[i + 1].1) == run {
            let pitch = (runs[i + 1].0 as i128 - lo as i128) as u64;
            let mut rows = 2;
            while i + rows < runs.len() {
                let (l, h) = runs[i + rows];
                if width(l, h) != run || (l as i128 - runs[i + rows - 1].0 as i128) as u64 != pitch
                {
                    break;
                }
                rows += 1;
            }
            rect.rows = rows as u64;
            rect.row_pitch = pitch;
            rect.plane_pitch = pitch * rows as u64;
        }
        i += rect.rows as usize;
        out.push(rect);
    }
    out
}

/// Groups consecutive equal 2-D rects at equal spacing into 3-D rects
/// (greedy, left to right), where the spacing is a valid plane pitch.
fn group_planes(rects: Vec<Rect>) -> Vec<Rect> {
    let same = |a: &Rect, b: &Rect| {
        a.rows > 1 && a.run == b.run && a.rows == b.rows && a.row_pitch == b.row_pitch
    };
    let spacing = |a: &Rect, b: &Rect| (b.start as i128 - a.start as i128) as u64;
    let mut out = Vec::with_capacity(rects.len());
    let mut i = 0;
    while i < rects.len() {
        let mut rect = rects[i];
        if i + 1 < rects.len() && same(&rect, &rects[i + 1]) {
            let pitch = spacing(&rect, &rects[i + 1]);
            if pitch >= rect.row_pitch * rect.rows && pitch.is_multiple_of(rect.row_pitch) {
                let mut planes = 2;
                while i + planes < rects.len()
                    && same(&rect, &rects[i + planes])
                    && spacing(&rects[i + planes - 1], &rects[i + planes]) == pitch
                {
                    planes += 1;
                }
                rect.planes = planes as u64;
                rect.plane_pitch = pitch;
            }
        }
        i += rect.planes as usize;
        out.push(rect);
    }
    out
}

#[cfg(test)]
mod tests;
