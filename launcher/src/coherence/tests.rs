//! Unit tests of [`Coherence`], and a property test that runs random
//! sequences of launches, host reads and writes, evictions and failures
//! against a reference model of the copies' contents.

use proptest::prelude::*;

use super::*;

fn iv(lo: i64, hi: i64) -> Runs {
    Runs::interval(lo, hi)
}

fn runs(v: &[(i64, i64)]) -> Runs {
    Runs::from_intervals(v.to_vec())
}

// ---- unit tests ----

#[test]
fn starts_valid_on_the_host_only() {
    let c = Coherence::host_valid(10);
    assert_eq!(c.len(), 10);
    assert_eq!(c.valid(Holder::Host), iv(0, 9));
    assert_eq!(c.valid(Holder::Device(3)), Runs::new());
    assert_eq!(c.lost(), &Runs::new());
    assert!(c.devices().is_empty());
    assert!(c.is_consistent());
    assert!(Coherence::host_valid(0).is_consistent());
}

/// `is_host_only` tells exactly the state `host_valid` makes,
/// which a split launch replays (`launch/split.rs`).
#[test]
fn host_only_is_the_state_host_valid_makes() {
    for len in [0, 1, 10] {
        assert!(Coherence::host_valid(len).is_host_only(), "{len}");
    }
    let mut c = Coherence::host_valid(10);
    c.copied(Holder::Device(1), &iv(0, 4));
    assert!(!c.is_host_only(), "a device holds some");
    c.drop_device(1).unwrap();
    assert!(c.is_host_only() && c == Coherence::host_valid(10));
    c.written(Holder::Device(0), &iv(9, 9));
    assert!(!c.is_host_only(), "the host lacks one");
    let mut c = Coherence::host_valid(10);
    c.invalidate(Holder::Host, &iv(0, 0));
    assert!(!c.is_host_only(), "one is lost");
    let mut c = Coherence::host_valid(10);
    c.written(Holder::Host, &iv(3, 5));
    assert!(
        c.is_host_only(),
        "the host wrote some: still all on the host"
    );
}

#[test]
fn need_from_host_then_from_devices() {
    let mut c = Coherence::host_valid(100);
    // Device 0 writes 0..=49, device 1 writes 50..=99 (after reading all).
    c.copied(Holder::Device(0), &iv(0, 99));
    c.copied(Holder::Device(1), &iv(0, 99));
    c.written(Holder::Device(0), &iv(0, 49));
    c.written(Holder::Device(1), &iv(50, 99));
    assert_eq!(c.valid(Holder::Host), Runs::new());
    assert_eq!(c.exclusive(Holder::Device(0)), iv(0, 49));
    // Device 0 needs a halo of 4 on its right: from device 1, via the host.
    let plan = c.plan_need(0, &iv(0, 53)).unwrap();
    assert_eq!(
        plan,
        NeedPlan {
            to_host: vec![(1, iv(50, 53))],
            to_device: iv(50, 53)
        }
    );
    // A device that holds nothing gets everything; each element from the
    // lowest-index device holding it.
    c.copied(Holder::Device(2), &iv(40, 59));
    let plan = c.plan_need(3, &iv(30, 69)).unwrap();
    assert_eq!(plan.to_host, vec![(0, iv(30, 49)), (1, iv(50, 69))]);
    assert_eq!(plan.to_device, iv(30, 69));
    // Once the host holds part, that part comes from the host.
    c.copied(Holder::Host, &iv(30, 59));
    let plan = c.plan_need(3, &iv(30, 69)).unwrap();
    assert_eq!(plan.to_host, vec![(1, iv(60, 69))]);
    assert_eq!(plan.to_device, iv(30, 69));
    // Nothing to move.
    assert!(c.plan_need(0, &iv(0, 49)).unwrap().is_empty());
    assert!(c.is_consistent());
}

#[test]
fn plan_host_gathers_what_the_host_lacks() {
    let mut c = Coherence::host_valid(20);
    c.copied(Holder::Device(1), &iv(0, 19));
    c.written(Holder::Device(1), &runs(&[(2, 4), (10, 12)]));
    c.copied(Holder::Device(0), &iv(11, 12));
    assert_eq!(
        c.plan_host(&iv(0, 19)).unwrap(),
        vec![(0, iv(11, 12)), (1, runs(&[(2, 4), (10, 10)]))]
    );
    assert_eq!(c.plan_host(&iv(5, 9)).unwrap(), vec![]);
}

#[test]
fn inputs_are_clipped() {
    let mut c = Coherence::host_valid(10);
    c.written(Holder::Device(0), &iv(-5, 2));
    assert_eq!(c.valid(Holder::Device(0)), iv(0, 2));
    assert_eq!(c.plan_need(1, &iv(8, 20)).unwrap().to_device, iv(8, 9));
    assert_eq!(c.plan_host(&iv(-3, 1)).unwrap(), vec![(0, iv(0, 1))]);
    c.lose(&iv(9, 1000));
    assert_eq!(c.lost(), &iv(9, 9));
    assert!(c.is_consistent());
}

#[test]
fn lost_elements_are_refused_until_written() {
    let mut c = Coherence::host_valid(10);
    c.copied(Holder::Device(0), &iv(0, 9));
    c.lose(&iv(3, 5));
    assert_eq!(c.valid(Holder::Host), runs(&[(0, 2), (6, 9)]));
    assert_eq!(c.valid(Holder::Device(0)), runs(&[(0, 2), (6, 9)]));
    assert_eq!(c.plan_host(&iv(0, 3)), Err(Lost(iv(3, 3))));
    assert_eq!(c.plan_need(1, &iv(5, 9)), Err(Lost(iv(5, 5))));
    assert_eq!(
        Lost(iv(3, 3)).to_string(),
        "elements {3..=3} are lost (their last writer failed)"
    );
    c.written(Holder::Host, &iv(3, 4));
    assert_eq!(c.lost(), &iv(5, 5));
    c.written(Holder::Device(2), &iv(5, 5));
    assert_eq!(c.lost(), &Runs::new());
    assert_eq!(c.plan_host(&iv(0, 9)).unwrap(), vec![(2, iv(5, 5))]);
    assert!(c.is_consistent());
}

#[test]
fn invalidate_loses_only_the_last_copy() {
    let mut c = Coherence::host_valid(10);
    c.copied(Holder::Device(0), &iv(0, 4));
    c.written(Holder::Device(0), &iv(0, 1));
    c.invalidate(Holder::Device(0), &iv(0, 9));
    assert_eq!(c.lost(), &iv(0, 1));
    assert_eq!(c.valid(Holder::Host), iv(2, 9));
    assert!(c.devices().is_empty());
    c.invalidate(Holder::Host, &iv(9, 9));
    assert_eq!(c.lost(), &runs(&[(0, 1), (9, 9)]));
    assert!(c.is_consistent());
}

#[test]
fn drop_device_refuses_exclusive_elements() {
    let mut c = Coherence::host_valid(10);
    c.copied(Holder::Device(0), &iv(0, 9));
    c.written(Holder::Device(0), &iv(4, 5));
    let before = c.clone();
    assert_eq!(c.drop_device(0), Err(Lost(iv(4, 5))));
    assert_eq!(c, before);
    let back = c.plan_host(&c.exclusive(Holder::Device(0))).unwrap();
    assert_eq!(back, vec![(0, iv(4, 5))]);
    c.copied(Holder::Host, &iv(4, 5));
    assert_eq!(c.drop_device(0), Ok(()));
    assert_eq!(c.valid(Holder::Device(0)), Runs::new());
    assert_eq!(c.valid(Holder::Host), iv(0, 9));
    assert_eq!(c.drop_device(7), Ok(()));
}

#[test]
fn share_change_moves_only_what_changes_owner() {
    // 0..=99 split 50/50, then 30/70: device 1 needs 30..=49 from device 0.
    let mut c = Coherence::host_valid(100);
    for (d, w) in [(0, iv(0, 49)), (1, iv(50, 99))] {
        let plan = c.plan_need(d, &w).unwrap();
        assert!(plan.to_host.is_empty());
        c.copied(Holder::Device(d), &plan.to_device);
    }
    c.written(Holder::Device(0), &iv(0, 49));
    c.written(Holder::Device(1), &iv(50, 99));
    assert!(c.plan_need(0, &iv(0, 29)).unwrap().is_empty());
    let plan = c.plan_need(1, &iv(30, 99)).unwrap();
    assert_eq!(
        plan,
        NeedPlan {
            to_host: vec![(0, iv(30, 49))],
            to_device: iv(30, 49)
        }
    );
}

// ---- property test against a reference model ----

/// Devices of the model.
const N_DEVICES: usize = 4;

fn holders() -> impl Iterator<Item = Holder> {
    std::iter::once(Holder::Host).chain((0..N_DEVICES).map(Holder::Device))
}

fn slot(h: Holder) -> usize {
    match h {
        Holder::Host => 0,
        Holder::Device(d) => d + 1,
    }
}

/// What the copies really contain: per element, the version of the latest
/// write (`truth`) and the version each holder's memory has (`None`:
/// garbage). Versions are never reused, so a holder's copy is current iff
/// its version is the truth. An element is lost iff no holder has it current.
#[derive(Clone, Debug)]
struct Model {
    truth: Vec<u64>,
    mem: Vec<Vec<Option<u64>>>,
    next_version: u64,
}

impl Model {
    fn new(len: usize) -> Model {
        let mut mem = vec![vec![None; len]; N_DEVICES + 1];
        mem[0] = vec![Some(0); len];
        Model {
            truth: vec![0; len],
            mem,
            next_version: 1,
        }
    }

    fn len(&self) -> usize {
        self.truth.len()
    }

    fn elems(&self, r: &Runs) -> Vec<usize> {
        r.intervals()
            .iter()
            .flat_map(|&(lo, hi)| lo.max(0)..=hi.min(self.len() as i64 - 1))
            .map(|i| i as usize)
            .collect()
    }

    fn current(&self, h: Holder, i: usize) -> bool {
        self.mem[slot(h)][i] == Some(self.truth[i])
    }

    fn set_where(&self, f: impl Fn(usize) -> bool) -> Runs {
        Runs::from_intervals(
            (0..self.len())
                .filter(|&i| f(i))
                .map(|i| (i as i64, i as i64))
                .collect(),
        )
    }

    fn valid(&self, h: Holder) -> Runs {
        self.set_where(|i| self.current(h, i))
    }

    fn lost(&self) -> Runs {
        self.set_where(|i| holders().all(|h| !self.current(h, i)))
    }

    fn exclusive(&self, h: Holder) -> Runs {
        self.set_where(|i| {
            self.current(h, i) && holders().filter(|&o| o != h).all(|o| !self.current(o, i))
        })
    }

    fn copy(&mut self, from: Holder, to: Holder, r: &Runs) {
        for i in self.elems(r) {
            self.mem[slot(to)][i] = self.mem[slot(from)][i];
        }
    }

    /// `h` writes `r` (or, failing, leaves garbage and no current copy).
    fn write(&mut self, h: Holder, r: &Runs, fails: bool) {
        for i in self.elems(r) {
            self.truth[i] = self.next_version;
            self.next_version += 1;
            self.mem[slot(h)][i] = if fails { None } else { Some(self.truth[i]) };
        }
    }

    fn trash(&mut self, h: Holder, r: &Runs) {
        for i in self.elems(r) {
            self.mem[slot(h)][i] = None;
        }
    }
}

/// One device's part of a launch: it reads `read`, prefills `prefill`
/// (part of its writes: may-writes whose old values must be there), and
/// writes `write`.
#[derive(Clone, Debug)]
struct Part {
    dev: usize,
    read: Runs,
    write: Runs,
    prefill: Runs,
}

#[derive(Clone, Debug)]
enum Op {
    /// A launch; the part of index `fail`, if any, fails.
    Launch {
        parts: Vec<Part>,
        fail: Option<usize>,
    },
    HostRead(Runs),
    HostWrite(Runs),
    /// Copy the device's exclusive elements to the host, then drop it.
    Evict(usize),
    /// Drop the device without copying anything first.
    Drop(usize),
    Invalidate(Holder, Runs),
}

/// Buffers up to 48 elements, seen as up to 6 rows of 8.
const MAX_LEN: usize = 48;

/// Random element sets over the buffer, some past its ends, some boxes.
fn arb_set() -> impl Strategy<Value = Runs> {
    prop_oneof![
        3 => prop::collection::vec((-2i64..50, 1i64..12), 0..4)
            .prop_map(|v| Runs::from_intervals(v.into_iter().map(|(lo, n)| (lo, lo + n - 1)).collect())),
        2 => (0i64..6, 0i64..6, 0i64..8, 0i64..8)
            .prop_map(|(r0, r1, c0, c1)| Runs::from_box(0, &[(r0, r1), (c0, c1)], &[8, 1], 100).unwrap()),
        1 => (0i64..8).prop_map(|c| Runs::from_box(c, &[(0, 5)], &[8], 100).unwrap()),
        1 => Just(Runs::interval(0, MAX_LEN as i64 - 1)),
    ]
}

fn arb_holder() -> impl Strategy<Value = Holder> {
    prop_oneof![Just(Holder::Host), (0..N_DEVICES).prop_map(Holder::Device)]
}

/// A launch with random sets per device; writes made disjoint.
fn arb_random_launch() -> impl Strategy<Value = Op> {
    let devs =
        prop::sample::subsequence((0..N_DEVICES).collect::<Vec<_>>(), 1..=N_DEVICES).prop_shuffle();
    (
        devs,
        prop::collection::vec((arb_set(), arb_set(), arb_set()), N_DEVICES),
        prop::option::weighted(0.2, 0..N_DEVICES),
    )
        .prop_map(|(devs, sets, fail)| {
            let mut written = Runs::new();
            let parts: Vec<Part> = devs
                .iter()
                .zip(sets)
                .map(|(&dev, (read, write, prefill))| {
                    let write = write.subtract(&written);
                    written = written.union(&write);
                    Part {
                        dev,
                        read,
                        prefill: prefill.intersect(&write),
                        write,
                    }
                })
                .collect();
            let fail = fail.filter(|&f| f < parts.len());
            Op::Launch { parts, fail }
        })
}

/// A launch that splits the buffer into consecutive slices, one per device,
/// each reading its slice plus a halo and writing its slice (the way a
/// stencil is split); consecutive such launches change the shares.
fn arb_split_launch() -> impl Strategy<Value = Op> {
    let devs =
        prop::sample::subsequence((0..N_DEVICES).collect::<Vec<_>>(), 1..=N_DEVICES).prop_shuffle();
    (
        devs,
        prop::collection::vec(0i64..=MAX_LEN as i64, N_DEVICES),
        0i64..4,
        any::<bool>(),
        prop::option::weighted(0.2, 0..N_DEVICES),
    )
        .prop_map(|(devs, mut cuts, halo, prefill, fail)| {
            cuts.truncate(devs.len() - 1);
            cuts.push(0);
            cuts.push(MAX_LEN as i64);
            cuts.sort();
            let parts: Vec<Part> = devs
                .iter()
                .enumerate()
                .map(|(k, &dev)| {
                    let write = Runs::interval(cuts[k], cuts[k + 1] - 1);
                    let read = Runs::interval(cuts[k] - halo, cuts[k + 1] - 1 + halo);
                    let prefill = if prefill { write.clone() } else { Runs::new() };
                    Part {
                        dev,
                        read,
                        write,
                        prefill,
                    }
                })
                .collect();
            let fail = fail.filter(|&f| f < parts.len());
            Op::Launch { parts, fail }
        })
}

fn arb_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => arb_random_launch(),
        4 => arb_split_launch(),
        3 => arb_set().prop_map(Op::HostRead),
        2 => arb_set().prop_map(Op::HostWrite),
        1 => (0..N_DEVICES).prop_map(Op::Evict),
        1 => (0..N_DEVICES).prop_map(Op::Drop),
        1 => (arb_holder(), arb_set()).prop_map(|(h, r)| Op::Invalidate(h, r)),
    ]
}

/// The state checks after every step: the invariant, no stale copy marked
/// valid and no current copy forgotten, lost exactly where no copy is
/// current (so no write is lost unless its writer failed).
fn check_state(c: &Coherence, m: &Model) -> Result<(), TestCaseError> {
    prop_assert!(c.is_consistent(), "{:?}", c);
    for h in holders() {
        prop_assert_eq!(c.valid(h), m.valid(h), "valid on {}", h);
        prop_assert_eq!(c.exclusive(h), m.exclusive(h), "exclusive to {}", h);
        let window = Runs::interval(3, 40);
        prop_assert_eq!(
            c.exclusive_within(h, &window),
            m.exclusive(h).intersect(&window),
            "exclusive to {} within {:?}",
            h,
            window
        );
    }
    prop_assert_eq!(c.lost(), &m.lost());
    let devices: Vec<usize> = (0..N_DEVICES)
        .filter(|&d| !m.valid(Holder::Device(d)).is_empty())
        .collect();
    prop_assert_eq!(c.devices(), devices);
    Ok(())
}

/// Checks device -> host copies planned for `want` (clipped) on the host's
/// behalf, `except` being the device the plan is for: each element the host
/// lacks once, from the lowest-index device (other than `except`) that has
/// it current.
fn check_to_host(
    m: &Model,
    plan: &[(usize, Runs)],
    want: &Runs,
    except: Option<usize>,
) -> Result<(), TestCaseError> {
    let mut covered = Runs::new();
    let mut last_dev = None;
    for (src, e) in plan {
        prop_assert!(!e.is_empty());
        prop_assert!(last_dev < Some(*src), "devices in increasing order");
        prop_assert!(Some(*src) != except);
        last_dev = Some(*src);
        prop_assert!(!covered.overlaps(e));
        prop_assert!(
            m.valid(Holder::Device(*src)).contains(e),
            "copy from a stale device {}",
            src
        );
        for lower in (0..*src).filter(|&d| Some(d) != except) {
            prop_assert!(
                !m.valid(Holder::Device(lower)).overlaps(e),
                "device {} has it too",
                lower
            );
        }
        covered = covered.union(e);
    }
    prop_assert_eq!(covered, want.subtract(&m.valid(Holder::Host)));
    Ok(())
}

/// Runs one step on both the bookkeeping and the model, checking the plans.
fn step(c: &mut Coherence, m: &mut Model, op: &Op) -> Result<(), TestCaseError> {
    let all = c.all();
    match op {
        Op::Launch { parts, fail } => {
            for p in parts {
                let need = p.read.union(&p.prefill).intersect(&all);
                let lost = need.intersect(&m.lost());
                match c.plan_need(p.dev, &p.read.union(&p.prefill)) {
                    Err(Lost(x)) => {
                        // The launch is refused before any kernel runs.
                        prop_assert_eq!(x, lost);
                        return Ok(());
                    }
                    Ok(plan) => {
                        prop_assert!(lost.is_empty(), "lost {} not reported", lost);
                        let dev = Holder::Device(p.dev);
                        let lacking = need.subtract(&m.valid(dev));
                        prop_assert_eq!(&plan.to_device, &lacking);
                        check_to_host(m, &plan.to_host, &lacking, Some(p.dev))?;
                        for (src, e) in &plan.to_host {
                            m.copy(Holder::Device(*src), Holder::Host, e);
                            c.copied(Holder::Host, e);
                        }
                        m.copy(Holder::Host, dev, &plan.to_device);
                        c.copied(dev, &plan.to_device);
                        // The kernel reads current values only.
                        for i in m.elems(&need) {
                            prop_assert!(
                                m.current(dev, i),
                                "device {} reads a stale element {}",
                                p.dev,
                                i
                            );
                        }
                    }
                }
            }
            for (k, p) in parts.iter().enumerate() {
                let dev = Holder::Device(p.dev);
                if Some(k) == *fail {
                    m.write(dev, &p.write, true);
                    c.lose(&p.write);
                } else {
                    m.write(dev, &p.write, false);
                    c.written(dev, &p.write);
                }
            }
        }
        Op::HostRead(r) => {
            let want = r.intersect(&all);
            let lost = want.intersect(&m.lost());
            match c.plan_host(r) {
                Err(Lost(x)) => prop_assert_eq!(x, lost),
                Ok(plan) => {
                    prop_assert!(lost.is_empty(), "lost {} not reported", lost);
                    check_to_host(m, &plan, &want, None)?;
                    for (src, e) in &plan {
                        m.copy(Holder::Device(*src), Holder::Host, e);
                        c.copied(Holder::Host, e);
                    }
                    for i in m.elems(&want) {
                        prop_assert!(m.current(Holder::Host, i), "stale read of element {}", i);
                    }
                }
            }
        }
        Op::HostWrite(r) => {
            m.write(Holder::Host, r, false);
            c.written(Holder::Host, r);
        }
        Op::Evict(d) => {
            let dev = Holder::Device(*d);
            let lost_before = m.lost();
            let only = c.exclusive(dev);
            m.copy(dev, Holder::Host, &only);
            c.copied(Holder::Host, &only);
            prop_assert_eq!(c.drop_device(*d), Ok(()));
            m.trash(dev, &all);
            prop_assert_eq!(m.lost(), lost_before, "eviction lost elements");
        }
        Op::Drop(d) => {
            let dev = Holder::Device(*d);
            let only = m.exclusive(dev);
            let before = c.clone();
            if only.is_empty() {
                prop_assert_eq!(c.drop_device(*d), Ok(()));
                m.trash(dev, &all);
            } else {
                prop_assert_eq!(c.drop_device(*d), Err(Lost(only)));
                prop_assert_eq!(&*c, &before);
            }
        }
        Op::Invalidate(h, r) => {
            m.trash(*h, r);
            c.invalidate(*h, r);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn matches_reference_model(len in 1usize..=MAX_LEN, ops in prop::collection::vec(arb_op(), 1..40)) {
        let mut c = Coherence::host_valid(len as u64);
        let mut m = Model::new(len);
        check_state(&c, &m)?;
        for op in &ops {
            step(&mut c, &mut m, op)?;
            check_state(&c, &m)?;
        }
    }

    /// A failed launch's writes are refused to every reader until a write
    /// covers them.
    #[test]
    fn failed_writes_stay_lost_until_rewritten(
        len in 8usize..=MAX_LEN,
        failed in arb_set(),
        readers in prop::collection::vec((arb_holder(), arb_set()), 1..8),
        rewrite in arb_set(),
    ) {
        let mut c = Coherence::host_valid(len as u64);
        c.copied(Holder::Device(0), &c.all());
        c.lose(&failed);
        let lost = failed.intersect(&c.all());
        prop_assert_eq!(c.lost(), &lost);
        for (h, r) in &readers {
            let expect = r.intersect(&lost);
            let got = match h {
                Holder::Host => c.plan_host(r).err(),
                Holder::Device(d) => c.plan_need(*d, r).err(),
            };
            prop_assert_eq!(got, if expect.is_empty() { None } else { Some(Lost(expect)) });
        }
        c.written(Holder::Host, &rewrite);
        let still = lost.subtract(&rewrite);
        prop_assert_eq!(c.lost(), &still);
        prop_assert_eq!(c.plan_host(&c.all()).err(), if still.is_empty() { None } else { Some(Lost(still)) });
    }
}

// ---- seeing the buffer with elements of another size ----

/// A `float` buffer written half by each device, seen as
/// `float4`: each device keeps the `float4`s it holds whole, nothing is
/// gathered; with the halves cut inside a `float4`, the host gathers that
/// one `float4`'s four floats first.
#[test]
fn retyped_keeps_whole_elements_and_gathers_split_ones() {
    let room: BTreeMap<usize, Runs> = [(0, iv(0, 3)), (1, iv(2, 5))].into_iter().collect();
    let mut c = Coherence::host_valid(24);
    c.written(Holder::Device(0), &iv(0, 11));
    c.written(Holder::Device(1), &iv(12, 23));
    assert_eq!(c.retype_needs(4, 16, &room), Runs::new());
    let r = c.retyped(4, 16, &room);
    assert_eq!(r.len(), 6);
    assert_eq!(r.valid(Holder::Device(0)), iv(0, 2));
    assert_eq!(r.valid(Holder::Device(1)), iv(3, 5));
    assert_eq!(r.valid(Holder::Host), Runs::new());

    let mut c = Coherence::host_valid(24);
    c.written(Holder::Device(0), &iv(0, 9));
    c.written(Holder::Device(1), &iv(10, 23));
    let needs = c.retype_needs(4, 16, &room);
    assert_eq!(needs, iv(8, 11), "the float4 the halves split");
    c.copied(Holder::Host, &needs);
    let r = c.retyped(4, 16, &room);
    assert_eq!(r.valid(Holder::Host), iv(2, 2));
    assert_eq!(r.valid(Holder::Device(0)), iv(0, 1));
    assert_eq!(r.valid(Holder::Device(1)), iv(3, 5));
    assert!(r.is_consistent());

    // back to floats: every float of a held float4 is held
    let back = r.retyped(
        16,
        4,
        &[(0, iv(0, 23)), (1, iv(0, 23))].into_iter().collect(),
    );
    assert_eq!(back.valid(Holder::Device(0)), iv(0, 7));
    assert_eq!(back.valid(Holder::Device(1)), iv(12, 23));
    assert_eq!(back.valid(Holder::Host), iv(8, 11));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Whatever the state and the sizes, once the host holds what
    /// `retype_needs` names, the retyped state is consistent and each
    /// holder holds a new element only where it held every one of its
    /// bytes; a new element is lost exactly where one of its bytes was.
    #[test]
    fn retyped_holds_only_bytes_that_were_held(
        sizes in prop::sample::select(vec![(4u64, 16u64), (16, 4), (4, 8), (8, 4), (8, 16), (4, 4)]),
        writes in prop::collection::vec((arb_holder(), arb_set()), 0..8),
        lost in prop::option::of(arb_set()),
        rooms in prop::collection::vec(prop::option::of((0i64..24, 0i64..24)), N_DEVICES),
    ) {
        let (from, to) = sizes;
        let n_bytes = 96u64;
        let mut c = Coherence::host_valid(n_bytes / from);
        for (h, w) in &writes {
            c.written(*h, w);
        }
        if let Some(l) = &lost {
            c.lose(l);
        }
        let room: BTreeMap<usize, Runs> = rooms
            .iter()
            .enumerate()
            .filter_map(|(d, r)| r.map(|(a, n)| (d, iv(a, a + n))))
            .collect();
        let needs = c.retype_needs(from, to, &room);
        prop_assert!(!needs.overlaps(c.lost()));
        c.copied(Holder::Host, &needs);
        let r = c.retyped(from, to, &room);
        prop_assert!(r.is_consistent(), "{:?}", r);
        prop_assert_eq!(r.len(), n_bytes / to);
        let mut holders = vec![Holder::Host];
        holders.extend((0..N_DEVICES).map(Holder::Device));
        for h in holders {
            let before = c.valid(h).to_bytes(from);
            prop_assert!(before.contains(&r.valid(h).to_bytes(to)), "{:?}", h);
            if let Holder::Device(d) = h {
                let inside = room.get(&d).cloned().unwrap_or_default();
                prop_assert!(inside.contains(&r.valid(h)));
            }
        }
        prop_assert_eq!(r.lost(), &c.lost().to_bytes(from).touched_elems(to));
    }
}
