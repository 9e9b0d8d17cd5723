//! Which holder holds valid values of which elements of a resident buffer.
//!
//! A resident buffer lives across launches on the host and on several
//! devices. [`Coherence`] records, per holder, the elements whose copy there
//! is current, and plans the copies a launch or a host read needs: a device
//! gets only the elements of its footprint it lacks, through the host, each
//! taken from the host when the host holds it and otherwise from the
//! lowest-index device that does. It moves no data itself: the caller does
//! the copies a plan says and records them ([`Coherence::copied`]), and
//! records what each holder wrote ([`Coherence::written`]).
//!
//! Invariants (checked by [`Coherence::is_consistent`]): every element of
//! `[0, len)` is valid on at least one holder or is lost (its last writer
//! failed, or the last valid copy was invalidated), never both; all valid
//! copies of an element are equal (the caller's part). Every set given to a
//! method is clipped to `[0, len)` first.

use std::collections::BTreeMap;
use std::fmt;

use crate::runs::Runs;

/// Where a copy of a buffer lives: the host, or a device (index as in
/// `clpart devices`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Holder {
    /// The host's copy (the application's array).
    Host,
    /// The copy on the device of this index.
    Device(usize),
}

impl fmt::Display for Holder {
    /// `host` or `device N`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Holder::Host => write!(f, "host"),
            Holder::Device(d) => write!(f, "device {d}"),
        }
    }
}

/// Elements valid nowhere: their last writer failed, or the last valid copy
/// was invalidated. Returned where such elements were needed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lost(pub Runs);

impl fmt::Display for Lost {
    /// `elements {..} are lost (their last writer failed)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "elements {} are lost (their last writer failed)", self.0)
    }
}

impl std::error::Error for Lost {}

/// How to make a set of elements valid on a device: first the `to_host`
/// copies, then the `to_device` copy.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NeedPlan {
    /// Device -> host copies, as (source device, elements): the needed
    /// elements neither the device nor the host holds, each element once,
    /// from the lowest-index device holding it; in increasing device order,
    /// pairwise disjoint, none empty.
    pub to_host: Vec<(usize, Runs)>,
    /// Host -> device copy: every needed element the device lacks (including
    /// those `to_host` brings to the host).
    pub to_device: Runs,
}

impl NeedPlan {
    /// Whether nothing moves.
    pub fn is_empty(&self) -> bool {
        self.to_host.is_empty() && self.to_device.is_empty()
    }
}

/// Per buffer of `len` elements, which holders hold valid values of which
/// elements, and which elements are lost (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coherence {
    /// Number of elements of the buffer.
    len: u64,
    /// Elements valid on the host.
    host: Runs,
    /// Elements valid on each device; no empty entry.
    devices: BTreeMap<usize, Runs>,
    /// Elements valid nowhere.
    lost: Runs,
}

impl Coherence {
    /// A buffer of `len` elements, every one valid on the host only.
    pub fn host_valid(len: u64) -> Coherence {
        let c = Coherence {
            len,
            host: Runs::new(),
            devices: BTreeMap::new(),
            lost: Runs::new(),
        };
        Coherence { host: c.all(), ..c }
    }

    /// Number of elements of the buffer.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the buffer has no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every element: `[0, len)`.
    pub fn all(&self) -> Runs {
        Runs::interval(0, self.len.min(i64::MAX as u64) as i64 - 1)
    }

    /// Whether every element is valid on the host and on no device, as
    /// [`Coherence::host_valid`] makes it (no allocation: O(1)).
    pub fn is_host_only(&self) -> bool {
        let all_on_host = match (self.host.intervals(), self.len) {
            ([], 0) => true,
            (&[(0, hi)], len) => hi as u64 == len - 1,
            _ => false,
        };
        all_on_host && self.devices.is_empty() && self.lost.is_empty()
    }

    /// The elements valid on `h` (empty for a device never seen).
    pub fn valid(&self, h: Holder) -> Runs {
        self.valid_ref(h).cloned().unwrap_or_default()
    }

    /// The elements valid nowhere.
    pub fn lost(&self) -> &Runs {
        &self.lost
    }

    /// The devices holding some valid element, in increasing order.
    pub fn devices(&self) -> Vec<usize> {
        self.devices
            .iter()
            .filter(|(_, r)| !r.is_empty())
            .map(|(&d, _)| d)
            .collect()
    }

    /// What must move so that device `dev` holds every element of `need`:
    /// see [`NeedPlan`]. `Err` with the needed elements that are lost when
    /// there are some; then nothing can make them valid but a write.
    pub fn plan_need(&self, dev: usize, need: &Runs) -> Result<NeedPlan, Lost> {
        let need = self.clip(need);
        self.check_not_lost(&need)?;
        let to_device = match self.devices.get(&dev) {
            Some(held) => need.subtract(held),
            None => need,
        };
        let missing = to_device.subtract(&self.host);
        let to_host = self.gather(missing, Some(dev));
        Ok(NeedPlan { to_host, to_device })
    }

    /// The device -> host copies that make the host hold every element of
    /// `want`, as (source device, elements): each element the host lacks
    /// once, from the lowest-index device holding it; in increasing device
    /// order, pairwise disjoint, none empty. `Err` with the wanted elements
    /// that are lost when there are some.
    pub fn plan_host(&self, want: &Runs) -> Result<Vec<(usize, Runs)>, Lost> {
        // Held by the host already (so none lost): nothing moves.
        if self.host.contains(want) {
            return Ok(Vec::new());
        }
        let want = self.clip(want);
        self.check_not_lost(&want)?;
        Ok(self.gather(want.subtract(&self.host), None))
    }

    /// Records completed copies: `to` now also holds `elems`. The copies'
    /// sources must have held them valid (so they must not be lost).
    pub fn copied(&mut self, to: Holder, elems: &Runs) {
        let elems = self.clip(elems);
        debug_assert!(
            !elems.overlaps(&self.lost),
            "copied lost elements {}",
            elems.intersect(&self.lost)
        );
        self.set_valid(to, |v| v.union(&elems));
    }

    /// Records that `h` wrote `elems`: they are valid on `h` only (and no
    /// longer lost).
    pub fn written(&mut self, h: Holder, elems: &Runs) {
        let elems = self.clip(elems);
        if elems.is_empty() {
            return;
        }
        for other in self.holders() {
            if other != h {
                self.set_valid(other, |v| v.subtract(&elems));
            }
        }
        self.set_valid(h, |v| v.union(&elems));
        self.lost = self.lost.subtract(&elems);
    }

    /// Records that `h`'s copy of `elems` can no longer be trusted (its
    /// memory was reallocated or evicted, or overwritten by a failed or
    /// discarded run): they are no longer valid on `h`, and those then valid
    /// nowhere become lost.
    pub fn invalidate(&mut self, h: Holder, elems: &Runs) {
        let elems = self.clip(elems);
        if elems.is_empty() {
            return;
        }
        self.set_valid(h, |v| v.subtract(&elems));
        let mut nowhere = elems.subtract(&self.host);
        for held in self.devices.values() {
            nowhere = nowhere.subtract(held);
        }
        self.lost = self.lost.union(&nowhere);
    }

    /// Records that `elems` are lost (their writer failed): valid nowhere.
    pub fn lose(&mut self, elems: &Runs) {
        let elems = self.clip(elems);
        if elems.is_empty() {
            return;
        }
        for h in self.holders() {
            self.set_valid(h, |v| v.subtract(&elems));
        }
        self.lost = self.lost.union(&elems);
    }

    /// The elements valid on `h` and on no other holder: what would be lost
    /// if `h` went away.
    pub fn exclusive(&self, h: Holder) -> Runs {
        let Some(mut only) = self.valid_ref(h).cloned() else {
            return Runs::new();
        };
        for other in self.holders() {
            if other != h && !only.is_empty() {
                only = only.subtract(self.valid_ref(other).expect("listed holder"));
            }
        }
        only
    }

    /// [`Coherence::exclusive`] within `window`: clipped first, so that a
    /// holder of many runs (the rows a device wrote over many launches)
    /// costs only those in the window.
    pub fn exclusive_within(&self, h: Holder, window: &Runs) -> Runs {
        let Some(valid) = self.valid_ref(h) else {
            return Runs::new();
        };
        let mut only = window.intersect(valid);
        for other in self.holders() {
            if other != h && !only.is_empty() {
                let theirs = only.intersect(self.valid_ref(other).expect("listed holder"));
                only = only.subtract(&theirs);
            }
        }
        only
    }

    /// Forgets device `dev` entirely. `Err` with the elements only it holds,
    /// and nothing changes, when there are some: the caller copies them to
    /// the host first (and records it with [`Coherence::copied`]).
    pub fn drop_device(&mut self, dev: usize) -> Result<(), Lost> {
        let only = self.exclusive(Holder::Device(dev));
        if !only.is_empty() {
            return Err(Lost(only));
        }
        self.devices.remove(&dev);
        Ok(())
    }

    /// The same buffer seen as elements of `to` bytes instead of `from`
    /// bytes (a kernel that sees a `float` buffer as `float4`), the host
    /// holding [`Coherence::retype_needs`] first: per holder, the new
    /// elements all of whose bytes it holds, for a device only within its
    /// `room` (the elements its allocation will hold; a device not in
    /// `room` holds none); a new element with a lost byte is lost. The
    /// buffer's bytes must be a whole number of both sizes.
    pub fn retyped(&self, from: u64, to: u64, room: &BTreeMap<usize, Runs>) -> Coherence {
        let (from, to) = (from.max(1), to.max(1));
        let lost = self.lost.to_bytes(from).touched_elems(to);
        let c = Coherence {
            len: self.len * from / to,
            host: self.host.to_bytes(from).whole_elems(to).subtract(&lost),
            devices: self.devices_retyped(from, to, room, &lost),
            lost,
        };
        debug_assert!(c.is_consistent(), "retyped coherence {c:?}");
        c
    }

    /// The elements (of `from` bytes) the host must hold before
    /// [`Coherence::retyped`]: those with a byte that, seen in elements of
    /// `to` bytes, would be valid nowhere though not lost (an element
    /// whose bytes are split between holders, or held by a device outside
    /// its `room`).
    pub fn retype_needs(&self, from: u64, to: u64, room: &BTreeMap<usize, Runs>) -> Runs {
        let (from, to) = (from.max(1), to.max(1));
        let lost = self.lost.to_bytes(from).touched_elems(to);
        let mut covered = lost.to_bytes(to);
        for held in self.devices_retyped(from, to, room, &lost).values() {
            covered = covered.union(&held.to_bytes(to));
        }
        self.all()
            .to_bytes(from)
            .subtract(&covered)
            .touched_elems(from)
            .subtract(&self.host)
            .subtract(&self.lost)
    }

    /// Per device with a `room`, the elements of `to` bytes it holds whole
    /// there and that are not `lost` (see [`Coherence::retyped`]).
    fn devices_retyped(
        &self,
        from: u64,
        to: u64,
        room: &BTreeMap<usize, Runs>,
        lost: &Runs,
    ) -> BTreeMap<usize, Runs> {
        self.devices
            .iter()
            .filter_map(|(d, held)| {
                let kept = held
                    .to_bytes(from)
                    .whole_elems(to)
                    .intersect(room.get(d)?)
                    .subtract(lost);
                (!kept.is_empty()).then_some((*d, kept))
            })
            .collect()
    }

    /// Whether the invariants hold: every set inside `[0, len)`; every
    /// element valid somewhere or lost, never both. Linear in the number of
    /// runs; for debug assertions and tests.
    pub fn is_consistent(&self) -> bool {
        let all = self.all();
        let mut somewhere = self.host.clone();
        for held in self.devices.values() {
            if held.is_empty() || !all.contains(held) {
                return false;
            }
            somewhere = somewhere.union(held);
        }
        all.contains(&self.host)
            && all.contains(&self.lost)
            && !somewhere.overlaps(&self.lost)
            && somewhere.union(&self.lost) == all
    }

    /// `r` clipped to `[0, len)`.
    fn clip(&self, r: &Runs) -> Runs {
        match (r.hull(), self.len) {
            (None, _) | (_, 0) => Runs::new(),
            (Some((lo, hi)), len) if lo >= 0 && (hi as u64) < len => r.clone(),
            _ => r.intersect(&self.all()),
        }
    }

    /// `Err` with the part of `r` that is lost, if any.
    fn check_not_lost(&self, r: &Runs) -> Result<(), Lost> {
        if r.overlaps(&self.lost) {
            return Err(Lost(r.intersect(&self.lost)));
        }
        Ok(())
    }

    /// Splits `missing` (valid somewhere, not on the host) among the devices
    /// holding it, lowest index first, skipping `except`.
    fn gather(&self, mut missing: Runs, except: Option<usize>) -> Vec<(usize, Runs)> {
        let mut out = Vec::new();
        for (&d, held) in &self.devices {
            if missing.is_empty() {
                break;
            }
            if Some(d) == except {
                continue;
            }
            let take = missing.intersect(held);
            if !take.is_empty() {
                missing = missing.subtract(&take);
                out.push((d, take));
            }
        }
        debug_assert!(
            missing.is_empty(),
            "elements {missing} valid nowhere and not lost"
        );
        out
    }

    /// The holders with some valid element: the host, then the devices.
    fn holders(&self) -> Vec<Holder> {
        std::iter::once(Holder::Host)
            .chain(self.devices.keys().map(|&d| Holder::Device(d)))
            .collect()
    }

    /// The valid set of `h`, if it has an entry.
    fn valid_ref(&self, h: Holder) -> Option<&Runs> {
        match h {
            Holder::Host => Some(&self.host),
            Holder::Device(d) => self.devices.get(&d),
        }
    }

    /// Replaces the valid set of `h` by `f` of it, dropping a device whose
    /// set becomes empty.
    fn set_valid(&mut self, h: Holder, f: impl FnOnce(&Runs) -> Runs) {
        match h {
            Holder::Host => self.host = f(&self.host),
            Holder::Device(d) => {
                let new = f(self.devices.get(&d).unwrap_or(&Runs::new()));
                if new.is_empty() {
                    self.devices.remove(&d);
                } else {
                    self.devices.insert(d, new);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
