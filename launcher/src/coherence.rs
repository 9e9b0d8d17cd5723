//! Which holder (the host, each device) holds valid values of which
//! elements of one buffer ([`Coherence`]), and the copies that make an
//! element valid where it is needed ([`NeedPlan`]).
//!
//! Invariants: every element of `[0, len)` is valid on at least one holder
//! or is lost (its last writer failed); all valid copies of an element are
//! equal (the caller performs the copies the plans list before recording
//! them with [`Coherence::copied`]).

use std::collections::BTreeMap;

use crate::runs::Runs;

/// A holder of buffer elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Holder {
    /// The host copy.
    Host,
    /// The allocation on device `n`.
    Device(usize),
}

/// Elements whose last writer failed: valid nowhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lost(pub Runs);

/// How to make a set of elements valid on a device.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NeedPlan {
    /// First, device → host copies of what the host lacks: (source device,
    /// elements), each element from the lowest-index device holding it.
    pub to_host: Vec<(usize, Runs)>,
    /// Then the host → device copy: the needed elements the device lacks.
    pub to_device: Runs,
}

/// The valid sets of one buffer's holders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coherence {
    len: u64,
    host: Runs,
    devices: BTreeMap<usize, Runs>,
    lost: Runs,
}

impl Coherence {
    /// A buffer of `len` elements, valid on the host only.
    pub fn host_valid(len: u64) -> Coherence {
        Coherence {
            len,
            host: Runs::interval(0, len as i64 - 1),
            devices: BTreeMap::new(),
            lost: Runs::new(),
        }
    }

    fn all(&self) -> Runs {
        Runs::interval(0, self.len as i64 - 1)
    }

    fn clip(&self, r: &Runs) -> Runs {
        r.intersect(&self.all())
    }

    /// Number of elements.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The elements valid on `h` (empty for a device never used).
    pub fn valid(&self, h: Holder) -> Runs {
        match h {
            Holder::Host => self.host.clone(),
            Holder::Device(d) => self.devices.get(&d).cloned().unwrap_or_default(),
        }
    }

    /// The lost elements.
    pub fn lost(&self) -> &Runs {
        &self.lost
    }

    /// The devices holding a valid copy of some element.
    pub fn devices(&self) -> Vec<usize> {
        self.devices.iter().filter(|(_, r)| !r.is_empty()).map(|(&d, _)| d).collect()
    }

    /// The copies that make device `dev` hold every element of `need`;
    /// `Err` with the lost part of `need` when some needed element is lost.
    pub fn plan_need(&self, dev: usize, need: &Runs) -> Result<NeedPlan, Lost> {
        let missing = self.clip(need).subtract(&self.valid(Holder::Device(dev)));
        let to_host = self.plan_host(&missing)?;
        Ok(NeedPlan { to_host, to_device: missing })
    }

    /// The device → host copies that make the host hold `want`: (device,
    /// elements), each element from the lowest-index device holding it;
    /// `Err` with the lost part of `want` when some of it is lost.
    pub fn plan_host(&self, want: &Runs) -> Result<Vec<(usize, Runs)>, Lost> {
        let want = self.clip(want);
        let lost = want.intersect(&self.lost);
        if !lost.is_empty() {
            return Err(Lost(lost));
        }
        let mut rest = want.subtract(&self.host);
        let mut out = Vec::new();
        for (&d, v) in &self.devices {
            if rest.is_empty() {
                break;
            }
            let here = rest.intersect(v);
            if !here.is_empty() {
                rest = rest.subtract(&here);
                out.push((d, here));
            }
        }
        debug_assert!(rest.is_empty(), "an element valid nowhere and not lost");
        Ok(out)
    }

    fn set_mut(&mut self, h: Holder) -> &mut Runs {
        match h {
            Holder::Host => &mut self.host,
            Holder::Device(d) => self.devices.entry(d).or_default(),
        }
    }

    /// Records completed copies: `to` now also holds `elems`.
    pub fn copied(&mut self, to: Holder, elems: &Runs) {
        let elems = self.clip(elems);
        debug_assert!(!elems.overlaps(&self.lost), "a copy of lost elements");
        let s = self.set_mut(to);
        *s = s.union(&elems);
    }

    /// `h` wrote `elems`: they are valid on `h` only.
    pub fn written(&mut self, h: Holder, elems: &Runs) {
        let elems = self.clip(elems);
        if elems.is_empty() {
            return;
        }
        self.host = self.host.subtract(&elems);
        for v in self.devices.values_mut() {
            *v = v.subtract(&elems);
        }
        self.lost = self.lost.subtract(&elems);
        let s = self.set_mut(h);
        *s = s.union(&elems);
    }

    /// `h`'s copy of `elems` can no longer be trusted: removed from `h`;
    /// elements then valid nowhere become lost.
    pub fn invalidate(&mut self, h: Holder, elems: &Runs) {
        let elems = self.clip(elems);
        let only = elems.intersect(&self.exclusive(h));
        let s = self.set_mut(h);
        *s = s.subtract(&elems);
        self.lost = self.lost.union(&only);
    }

    /// `elems` are lost (their writer failed): valid nowhere.
    pub fn lose(&mut self, elems: &Runs) {
        let elems = self.clip(elems);
        self.host = self.host.subtract(&elems);
        for v in self.devices.values_mut() {
            *v = v.subtract(&elems);
        }
        self.lost = self.lost.union(&elems);
    }

    /// Elements valid on `h` and on no other holder.
    pub fn exclusive(&self, h: Holder) -> Runs {
        let mut only = self.valid(h);
        if h != Holder::Host {
            only = only.subtract(&self.host);
        }
        for (&d, v) in &self.devices {
            if Holder::Device(d) != h {
                only = only.subtract(v);
            }
        }
        only
    }

    /// Forgets device `dev`; `Err` with the elements only it holds (and
    /// nothing changes) when there are any.
    pub fn drop_device(&mut self, dev: usize) -> Result<(), Lost> {
        let only = self.exclusive(Holder::Device(dev));
        if !only.is_empty() {
            return Err(Lost(only));
        }
        self.devices.remove(&dev);
        Ok(())
    }
}
