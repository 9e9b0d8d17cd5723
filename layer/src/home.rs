//! Whether a launch runs on clpart's devices or at home: on the
//! application's own device, unchanged (automatic shares only).
//!
//! A launch too small to pay for splitting — thousands of tiny steps of a
//! 1-D stencil, the late steps of an LU whose NDRange shrinks — costs more
//! on clpart's devices than on the application's: a launch there is
//! synchronous (the application's queue finished, its buffers brought in,
//! each device's commands waited for), while the driver queues a launch
//! at home and returns at once. The clpart side (split, or on the
//! balancer's fastest device alone) is measured as the whole wall of the
//! layer's launch (bringing in what the application
//! changed included). The home side is measured by a probe: one launch
//! passed to the driver between two `clFinish`es, after the syncs that
//! make the application's copies current. Those are left out: once every
//! kernel touching a buffer runs at home they are not made again, while a
//! kernel that stays with clpart pays for bringing its buffers back in its
//! own walls, so a program whose launches are all small ends up at home
//! whole, and one whose large kernel splits well keeps it split.
//!
//! [`Home::next`] then takes the lesser median wall. At home, the kernel's
//! launches of that size pass through at once for a stretch
//! ([`crate::state::Unsplit::left`]), after which one launch runs on
//! clpart's devices to measure them again; on clpart's devices, home is
//! probed again after a stretch of launches. A stretch grows fourfold each
//! time the choice stays (from [`FIRST_STRETCH`] to [`MAX_STRETCH`]), so a
//! steady program pays for the other side's measurement ever more rarely,
//! and starts again short when the choice changes. The choice is made
//! before the launch's analysis is looked at, so a configuration at home
//! costs no analysis and no build; the first launch of a configuration
//! starts from the walls an earlier run of the program measured
//! ([`crate::history`], [`Home::remembered`]), and measuring clpart's
//! devices counts the first launch there in this run (which loads the
//! subkernels) among its costs.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use crate::history::Walls;

/// The first stretch (launches) before the other side is measured again.
pub(crate) const FIRST_STRETCH: u32 = 16;

/// The longest stretch.
pub(crate) const MAX_STRETCH: u32 = 4096;

/// The longest stretch of launches passed through at once while their
/// analysis is made ([`Home::pending_began`]), before the layer looks
/// again.
pub(crate) const MAX_PENDING_STRETCH: u32 = 1024;

/// Home walls kept; compared by their median.
const WALLS_KEPT: usize = 3;

/// A configuration whose first launch on clpart's devices would move more
/// than this (the buffers it brings in from the application's device and
/// those it may write, which go back) is measured at home first.
pub(crate) const FIRST_SWITCH_BYTES: u64 = 32 << 20;

/// Measuring the other side is worth its round trip of buffers when that
/// costs at most this share of the time the stretch just spent.
const MEASURE_SHARE: f64 = 0.1;

/// [`MEASURE_SHARE`] for a configuration whose walls an earlier run
/// measured ([`Home::remembered`]): they hold across runs (the same kernel,
/// work-group size and work-groups to a power of two on the same devices),
/// so measuring them again, for a change in this run, is worth a smaller
/// share (a 500-step stencil whose three kernels stay home lost 15 % to
/// measuring clpart's devices once each at a tenth).
const REMEMBERED_SHARE: f64 = 0.02;

/// Home, probed before the balancer has settled, is taken at once when a
/// launch there takes at most this share of the measured one on clpart's
/// devices: a better split cannot gain that much (each device runs part
/// of a launch, and shares only move work between them).
const CLEAR_WIN: f64 = 4.0;

/// A measured launch on clpart's devices shorter than this (ms) has home
/// probed before the balancer settles: where launches are this short,
/// the balancer's settling takes many of them, and a probe costs little.
const EARLY_PROBE_MS: f64 = 5.0;

/// A probe (one launch between two `clFinish`) shorter than this (ms)
/// measures mostly the two waits: where clpart's devices measure faster,
/// one stretch at home is timed before it is believed.
const STREAM_PROBE_MS: f64 = 1.0;

/// A configuration of which an earlier run measured only home, in a stream
/// ([`Home::remembered_home`]), starts at home where a launch there took
/// less than this (ms): splitting it would save at most half of it, less
/// than what a launch on clpart's devices costs beyond its kernel (the
/// application's queue finished, each device's commands waited for: 0.3 to
/// 0.5 ms on PoCL's CPU devices). A longer one starts on clpart's devices,
/// as if unmeasured (a product of large matrices launched once).
pub(crate) const REMEMBERED_HOME_MS: f64 = 1.0;

/// A configuration of which an earlier run measured only clpart's devices
/// ([`Home::remembered_clpart`]) is probed at home first where that launch
/// took less than this (ms): a probe that loses costs at most that much,
/// once, and four small kernels launched once each (a correlation's means,
/// deviations and centring) cost three times as much split as at home.
pub(crate) const PROBED_FIRST_MS: f64 = 20.0;

/// Until a first launch on clpart's devices was measured: what it costs
/// (loading the subkernels, allocating buffers) beyond a measured launch.
const DEFAULT_WARMUP_MS: f64 = 10.0;

/// Until syncs were measured: milliseconds per byte moved between the
/// application's device and clpart's copy (1 GB/s).
const DEFAULT_MS_PER_BYTE: f64 = 1e-6;

/// Syncs smaller than this do not feed the rate (their fixed costs would
/// dominate).
const MIN_RATE_BYTES: u64 = 256 << 10;

/// The reason recorded for a launch that runs at home.
pub(crate) const AT_HOME: &str =
    "runs on the application's device: measured faster there than on clpart's devices (a launch too small to pay for splitting)";

/// Bytes and milliseconds of the syncs measured so far.
static SYNC_RATE: Mutex<(u64, f64)> = Mutex::new((0, 0.0));

/// A sync of `bytes` between the application's device and clpart's copy
/// took `took`.
pub(crate) fn sync_observed(bytes: u64, took: Duration) {
    if bytes < MIN_RATE_BYTES {
        return;
    }
    let mut r = SYNC_RATE.lock().unwrap_or_else(|p| p.into_inner());
    r.0 += bytes;
    r.1 += took.as_secs_f64() * 1e3;
}

/// The estimated time (ms) to move `bytes` between the application's
/// device and clpart's copy, at the rate the run's syncs showed.
pub(crate) fn sync_ms(bytes: u64) -> f64 {
    let (b, ms) = *SYNC_RATE.lock().unwrap_or_else(|p| p.into_inner());
    let rate = if b >= 4 * MIN_RATE_BYTES {
        ms / b as f64
    } else {
        DEFAULT_MS_PER_BYTE
    };
    bytes as f64 * rate
}

/// What measuring the other side would move, as a round trip: there and,
/// should it lose, back.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Switch {
    /// Bytes moved to run the next launch on clpart's devices (what the
    /// application's device holds newer) and back later (what the launch
    /// may write).
    pub(crate) to_clpart: u64,
    /// Bytes moved to run the next launch at home (what clpart's devices
    /// hold newer) and back later (what the launch may write).
    pub(crate) to_home: u64,
}

/// What the next launch of a configuration does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Choice {
    /// Runs on clpart's devices (the balancer's plan).
    Clpart,
    /// Runs at home, timed ([`Home::observe`]).
    Probe,
    /// Runs at home, with this many launches of the same size after it.
    Stay(u32),
}

/// One launch configuration's home measurements and stretch.
#[derive(Clone, Debug, Default)]
pub(crate) struct Home {
    walls: VecDeque<f64>,
    /// Walls of the last launches on clpart's devices, as the application
    /// waited for them.
    clpart: VecDeque<f64>,
    /// Launches on clpart's devices since home was last probed.
    since: u32,
    stretch: u32,
    /// The launches of the stretch at home that ends when `after_stay` is
    /// set: planned, then (once it ended) made.
    stayed: u32,
    /// The launches the stretch that began at `stay_began_ms` made, once
    /// it ended ([`Home::stretch_done`]); `None` while it goes on, or where
    /// it was cut short (a launch of another kernel object or size came
    /// first), when it is not valued.
    done: Option<u32>,
    /// The last choice between the two (`Some(true)`: home).
    at_home: Option<bool>,
    /// A stretch at home just ended: clpart's devices are measured next.
    after_stay: bool,
    /// Started from a neighbouring configuration's measurements.
    inherited: bool,
    /// The wall (ms) of the first launch on clpart's devices, here or in an
    /// earlier run, which is left out of `clpart` (it loads the subkernels
    /// and allocates the buffers).
    warmup: Option<f64>,
    /// clpart's devices are being measured again after a stretch at home,
    /// and their first launch was the warm-up: the next launch measures.
    remeasure: bool,
    /// Launches on clpart's devices in this run (a neighbour's, where
    /// inherited), the warm-up included.
    clpart_launches: u32,
    /// When (ms on the caller's clock) the stretch at home that ends when
    /// `after_stay` is set began.
    stay_began_ms: Option<f64>,
    /// A stretch at home was timed in this run (or the earlier run it was
    /// remembered from): home's wall is what its launches cost in a
    /// stream, not only what probes measured.
    streamed: bool,
    /// Started from an earlier run's measurements ([`REMEMBERED_SHARE`]).
    remembered: bool,
    /// The next stretch passed through while the analysis is made.
    pending_stretch: u32,
}

fn median(v: &VecDeque<f64>) -> Option<f64> {
    let mut s: Vec<f64> = v.iter().copied().collect();
    s.sort_by(f64::total_cmp);
    s.get(s.len() / 2).copied()
}

/// Whether measuring the other side, a round trip of `bytes` and one
/// launch `extra_ms` slower there than on this side (as last measured),
/// costs at most `share` of `n` launches of `wall_ms` each.
fn pays(share: f64, bytes: u64, extra_ms: f64, n: u32, wall_ms: f64) -> bool {
    sync_ms(bytes) + extra_ms.max(0.0) <= share * n as f64 * wall_ms
}

impl Home {
    /// A new configuration of the same kernel (its NDRange grew or shrank
    /// past a power of two of work-groups) starting from this one's
    /// measurements and choice, instead of measuring clpart's devices again
    /// before it may go home.
    pub(crate) fn inherited(&self) -> Home {
        Home {
            inherited: true,
            since: 0,
            after_stay: false,
            stay_began_ms: None,
            ..self.clone()
        }
    }

    /// A configuration starting from the walls an earlier run measured
    /// ([`crate::history`]): compared at once, as if measured in this run;
    /// the first launch on clpart's devices still loads the subkernels and
    /// is left out.
    pub(crate) fn remembered(w: Walls) -> Home {
        Home {
            walls: VecDeque::from([w.home_ms]),
            clpart: VecDeque::from([w.clpart_ms]),
            warmup: w.warmup_ms,
            inherited: true,
            remembered: true,
            ..Home::default()
        }
    }

    /// A configuration of which an earlier run measured only home, in a
    /// stream (its launches passed through while their analysis was made,
    /// [`Home::pending_began`]): home's wall `home_ms` is known, clpart's
    /// devices not. It stays at home from its first launch, and clpart's
    /// devices are measured once a stretch at home pays for their first
    /// launch, as after a probe; the caller takes it only for launches
    /// short enough that splitting cannot gain ([`REMEMBERED_HOME_MS`]).
    pub(crate) fn remembered_home(home_ms: f64) -> Home {
        Home {
            walls: VecDeque::from([home_ms]),
            streamed: true,
            inherited: true,
            remembered: true,
            ..Home::default()
        }
    }

    /// The launches of this configuration pass through at once from now
    /// (ms on the caller's clock, as [`Home::next`]'s `now_ms`) while their
    /// analysis is made: a stretch at home that [`Home::stretch_done`]
    /// ends and the next choice times, so that home's wall in a stream is
    /// known before clpart's devices are first tried.
    /// Returns the stretch's length: from [`FIRST_STRETCH`], fourfold
    /// each time up to [`MAX_PENDING_STRETCH`], so that a program whose
    /// analyses outlast it has home timed early.
    pub(crate) fn pending_began(&mut self, now_ms: f64) -> u32 {
        self.stay_began_ms = Some(now_ms);
        self.done = None;
        let n = self.pending_stretch.max(FIRST_STRETCH);
        self.pending_stretch = n.saturating_mul(4).min(MAX_PENDING_STRETCH);
        n
    }

    /// The stretch at home ([`Choice::Stay`], or [`Home::pending_began`]'s)
    /// ended after `passed` launches besides the first (its length, or the
    /// worker finished a job): the next choice values home by its time and
    /// measures clpart's devices only where that stretch pays for it.
    pub(crate) fn stretch_done(&mut self, passed: u32) {
        if self.stay_began_ms.is_some() {
            self.done = Some(passed.saturating_add(1));
            self.after_stay = true;
        }
    }

    /// Home's wall where clpart's devices were not measured (a probe, or
    /// a stretch passed through while the analysis was made): what
    /// [`Home::remembered_home`] starts from in the next run.
    pub(crate) fn home_alone(&self) -> Option<f64> {
        if self.clpart.is_empty() && self.warmup.is_none() {
            median(&self.walls)
        } else {
            None
        }
    }

    /// The wall of clpart's devices where home was not measured (a kernel
    /// launched once: its first launch, the warm-up, is all there is).
    pub(crate) fn clpart_alone(&self) -> Option<f64> {
        if self.walls.is_empty() {
            median(&self.clpart).or(self.warmup)
        } else {
            None
        }
    }

    /// Whether neither side was measured yet.
    pub(crate) fn unmeasured(&self) -> bool {
        self.walls.is_empty() && self.clpart.is_empty() && self.warmup.is_none()
    }

    /// A configuration of which an earlier run measured only clpart's
    /// devices, `clpart_ms` (a kernel launched once a run, on clpart's
    /// devices since its analysis was ready): short enough
    /// ([`PROBED_FIRST_MS`]) that home may be faster, its first launch is
    /// a probe at home, and the run after knows both sides.
    pub(crate) fn remembered_clpart(clpart_ms: f64) -> Home {
        Home {
            clpart: VecDeque::from([clpart_ms]),
            inherited: true,
            remembered: true,
            ..Home::default()
        }
    }

    /// Whether a stretch at home has just ended: the next choice values it
    /// by the time it took ([`Home::next`]'s `now_ms`, which the caller
    /// takes once the stretch's launches are done).
    pub(crate) fn stretch_ended(&self) -> bool {
        self.stay_began_ms.is_some() && self.done.is_some()
    }

    /// Whether the first launch on clpart's devices (the warm-up) was made.
    fn warmed(&self) -> bool {
        self.clpart_launches > 0
    }

    /// Whether clpart's devices ran a launch of this configuration after
    /// its first in this run: the devices' rates measured then are theirs,
    /// not those of a first launch (whose driver may compile at enqueue,
    /// PoCL's way: a device measured a thousand times too slow).
    pub(crate) fn rates_measured(&self) -> bool {
        self.clpart_launches >= 2
    }

    /// Both sides' median walls, once each was measured.
    pub(crate) fn walls(&self) -> Option<Walls> {
        Some(Walls {
            home_ms: median(&self.walls)?,
            clpart_ms: median(&self.clpart)?,
            warmup_ms: self.warmup,
        })
    }

    /// What measuring clpart's devices costs beyond their launches: their
    /// first launch in this run loads the subkernels.
    fn warmup_ms(&self) -> f64 {
        if self.warmed() {
            0.0
        } else {
            self.warmup.unwrap_or(DEFAULT_WARMUP_MS)
        }
    }

    /// A stretch of launches at home, after which clpart's devices may be
    /// measured.
    fn stay(&mut self, now_ms: Option<f64>) -> Choice {
        self.after_stay = true;
        self.stay_began_ms = now_ms;
        self.done = None;
        let n = self.stretch;
        self.stayed = n;
        self.stretch = self.stretch.saturating_mul(4).min(MAX_STRETCH);
        Choice::Stay(n)
    }

    /// The next launch's choice. clpart's devices run first; after their
    /// first measured launch (the first, which loads the subkernels, left
    /// out), if short ([`EARLY_PROBE_MS`]), home is probed, and taken at
    /// once where far faster ([`CLEAR_WIN`]); else clpart's devices run
    /// until the balancer has `settled`, unless the measurements were
    /// inherited. Measuring the other side moves buffers
    /// (`switch`) and runs one launch on the slower side, so it is done only
    /// where the time spent since pays for it: a configuration whose first
    /// launch would move more than [`FIRST_SWITCH_BYTES`] is measured at
    /// home first, and a side is measured again only after a stretch whose
    /// time makes the round trip and the slower launch
    /// cost at most [`MEASURE_SHARE`] of it ([`REMEMBERED_SHARE`] where an
    /// earlier run measured the walls).
    ///
    /// `now_ms` is the time on a clock of the caller's, taken when the
    /// launches of a stretch that ended are done: a stretch at home is
    /// valued at the lesser of the probe's wall and the time the stretch
    /// took per launch (a probe waits for the device twice, a launch in a
    /// stream does not: 20,000 launches of a tiny kernel take 2 us each,
    /// a probe 50 us). `None`: not timed.
    pub(crate) fn next(&mut self, settled: bool, switch: Switch, now_ms: Option<f64>) -> Choice {
        if self.stretch == 0 {
            self.stretch = FIRST_STRETCH;
        }
        // what a launch of the stretch that ended cost the application:
        // less than a probe measures (streamed behind the others, not timed
        // between two clFinish), it is home's wall from now on, so home's
        // median below is never above it
        let began = self.stay_began_ms.take();
        let done = self.done.take();
        if began.is_some() {
            // (0: cut short, its launches unknown)
            self.stayed = done.unwrap_or(0);
        }
        if let (Some(now), Some(began), Some(n)) = (now_ms, began, done) {
            let per = (now - began).max(0.0) / n as f64;
            self.streamed = true;
            if median(&self.walls).is_none_or(|h| per < h) {
                self.walls.retain(|&w| w <= per);
                keep(&mut self.walls, per);
            }
        }
        let share = if self.remembered {
            REMEMBERED_SHARE
        } else {
            MEASURE_SHARE
        };
        if self.remeasure && self.warmed() {
            self.remeasure = false;
            return Choice::Clpart;
        }
        let home = median(&self.walls);
        let measured = median(&self.clpart);
        let Some(clpart) = measured.filter(|_| settled || self.inherited) else {
            if let (Some(c), Some(h)) = (measured, home) {
                // home, probed while the balancer measures, far faster
                // than clpart's devices: no share can close that gap
                if h * CLEAR_WIN <= c {
                    self.at_home = Some(true);
                    return self.stay(now_ms);
                }
            }
            if measured.is_some_and(|c| c < EARLY_PROBE_MS) && home.is_none() {
                // once clpart's devices ran a short measured launch, home
                // is probed, before the balancer settles over more of them
                // (a long launch's probe costs a launch on one device:
                // three products of large matrices would run one of three
                // at home)
                return Choice::Probe;
            }
            if measured.is_some() || self.warmed() {
                // the balancer is still measuring clpart's devices
                return Choice::Clpart;
            }
            return match home {
                None if switch.to_clpart > FIRST_SWITCH_BYTES => Choice::Probe,
                None => Choice::Clpart,
                // measured at home first: clpart's devices once the stretch
                // at home that ended, or before any the next, pays for
                // moving the buffers and the first launch there
                Some(h) => {
                    let n = if self.after_stay {
                        self.stayed
                    } else {
                        self.stretch
                    };
                    if pays(share, switch.to_clpart, self.warmup_ms(), n, h) {
                        self.after_stay = false;
                        Choice::Clpart
                    } else {
                        self.at_home = Some(true);
                        self.stay(now_ms)
                    }
                }
            };
        };
        let Some(home) = home else {
            return Choice::Probe;
        };
        let home_better = home < clpart;
        if self.at_home.is_some_and(|h| h != home_better) {
            self.stretch = FIRST_STRETCH;
            self.since = 0;
        }
        self.at_home = Some(home_better);
        if home_better {
            let extra = clpart - home + self.warmup_ms();
            if self.after_stay && pays(share, switch.to_clpart, extra, self.stayed, home) {
                self.after_stay = false;
                self.remeasure = !self.warmed();
                return Choice::Clpart;
            }
            self.stay(now_ms)
        } else if !self.streamed && home < STREAM_PROBE_MS && now_ms.is_some() {
            // a probe of so short a launch measures mostly its two
            // clFinish: one stretch at home shows what a launch costs there
            self.stay(now_ms)
        } else {
            self.since += 1;
            if self.since >= self.stretch {
                let since = std::mem::take(&mut self.since);
                self.stretch = self.stretch.saturating_mul(4).min(MAX_STRETCH);
                if pays(share, switch.to_home, home - clpart, since, clpart) {
                    return Choice::Probe;
                }
            }
            Choice::Clpart
        }
    }

    /// A probe's wall (ms).
    pub(crate) fn observe(&mut self, wall_ms: f64) {
        keep(&mut self.walls, wall_ms);
    }

    /// The wall (ms) of a launch on clpart's devices.
    pub(crate) fn observe_clpart(&mut self, wall_ms: f64) {
        // (a configuration inherited from a neighbour that ran on clpart's
        // devices finds its subkernels loaded)
        let first = !self.warmed();
        self.clpart_launches = self.clpart_launches.saturating_add(1);
        if first {
            self.warmup = Some(wall_ms);
            return;
        }
        keep(&mut self.clpart, wall_ms);
    }
}

fn keep(v: &mut VecDeque<f64>, wall_ms: f64) {
    if wall_ms.is_finite() && wall_ms >= 0.0 {
        v.push_back(wall_ms);
        while v.len() > WALLS_KEPT {
            v.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clpart_runs_until_measured_then_home_is_probed() {
        let mut h = Home::default();
        assert_eq!(h.next(false, Switch::default(), None), Choice::Clpart);
        // the first launch loads the subkernels: left out
        h.observe_clpart(20.0);
        assert_eq!(h.next(true, Switch::default(), None), Choice::Clpart);
        h.observe_clpart(1.0);
        // once measured, home is probed, the balancer settled or not
        assert_eq!(h.next(false, Switch::default(), None), Choice::Probe);
        // not far faster: clpart's devices until the balancer settles
        h.observe(0.5);
        assert_eq!(h.next(false, Switch::default(), None), Choice::Clpart);
        h.observe_clpart(1.0);
        assert_eq!(h.next(true, Switch::default(), None), Choice::Stay(16));
    }

    /// Three long launches (products of large matrices): the third is not
    /// run at home to probe it before the balancer settles.
    #[test]
    fn a_long_launch_is_not_probed_before_the_balancer_settles() {
        let mut h = Home::default();
        h.observe_clpart(400.0);
        h.observe_clpart(150.0);
        assert_eq!(h.next(false, Switch::default(), None), Choice::Clpart);
    }

    /// Thousands of tiny launches: home, probed after the first measured
    /// launch on clpart's devices, is far faster and taken before the
    /// balancer settles (each launch on clpart's devices costs a hundred
    /// at home).
    #[test]
    fn a_far_faster_home_ends_the_balancing_at_once() {
        let mut h = Home::default();
        h.observe_clpart(250.0);
        h.observe_clpart(0.45);
        assert_eq!(h.next(false, Switch::default(), None), Choice::Probe);
        h.observe(0.05);
        assert_eq!(h.next(false, Switch::default(), None), Choice::Stay(16));
    }

    #[test]
    fn a_faster_home_keeps_launches_in_growing_stretches() {
        let mut h = Home::default();
        h.observe_clpart(20.0);
        h.observe_clpart(1.0);
        assert_eq!(h.next(true, Switch::default(), None), Choice::Probe);
        // (a measurement of clpart's devices costs 0.1 ms more than a
        // launch at home: a tenth of every stretch pays for it)
        h.observe(0.9);
        let mut stays = Vec::new();
        for _ in 0..5 {
            match h.next(true, Switch::default(), None) {
                Choice::Stay(n) => stays.push(n),
                c => panic!("{c:?}"),
            }
            // the stretch ends with one launch on clpart's devices
            assert_eq!(h.next(true, Switch::default(), None), Choice::Clpart);
        }
        assert_eq!(stays, [16, 64, 256, 1024, 4096]);
    }

    #[test]
    fn a_new_size_of_a_kernel_at_home_starts_at_home() {
        let mut h = Home::default();
        h.observe_clpart(20.0);
        h.observe_clpart(1.0);
        assert_eq!(h.next(true, Switch::default(), None), Choice::Probe);
        h.observe(0.1);
        assert_eq!(h.next(true, Switch::default(), None), Choice::Stay(16));
        // before the balancer has settled on the new size
        let mut smaller = h.inherited();
        assert_eq!(
            smaller.next(false, Switch::default(), None),
            Choice::Stay(64)
        );
        assert_eq!(
            Home::default()
                .inherited()
                .next(false, Switch::default(), None),
            Choice::Clpart
        );
    }

    #[test]
    fn a_slower_home_is_probed_ever_more_rarely_and_a_change_restarts() {
        let mut h = Home::default();
        h.observe_clpart(20.0);
        h.observe_clpart(1.0);
        assert_eq!(h.next(true, Switch::default(), None), Choice::Probe);
        h.observe(1.1);
        let mut gaps = Vec::new();
        let mut n = 0;
        while gaps.len() < 3 {
            n += 1;
            if h.next(true, Switch::default(), None) == Choice::Probe {
                gaps.push(n);
                n = 0;
            }
        }
        assert_eq!(gaps, [16, 64, 256]);
        // home became faster (three probes to move the median)
        for _ in 0..3 {
            h.observe(0.1);
        }
        assert_eq!(
            h.next(true, Switch::default(), None),
            Choice::Stay(FIRST_STRETCH)
        );
    }

    /// A launch at home ten times faster than on clpart's devices: a
    /// measurement there costs 0.9 ms more, so it waits for a stretch of
    /// which that is a tenth.
    #[test]
    fn a_costly_launch_on_clparts_devices_is_measured_only_when_it_pays() {
        let mut h = Home::default();
        h.observe_clpart(20.0);
        h.observe_clpart(1.0);
        assert_eq!(h.next(true, Switch::default(), None), Choice::Probe);
        h.observe(0.1);
        assert_eq!(h.next(true, Switch::default(), None), Choice::Stay(16));
        assert_eq!(h.next(true, Switch::default(), None), Choice::Stay(64));
        assert_eq!(h.next(true, Switch::default(), None), Choice::Stay(256));
        assert_eq!(h.next(true, Switch::default(), None), Choice::Clpart);
    }

    /// Launches passed through while their analysis was made are timed as
    /// a stretch at home: 1,000 of 2 us each do not pay for a first launch
    /// on clpart's devices, which waits for a stretch of which it is a
    /// tenth; what is kept for the next run starts it at home.
    #[test]
    fn a_stretch_passed_through_while_analyzed_values_home() {
        let mut h = Home::default();
        assert_eq!(h.next(false, Switch::default(), Some(0.0)), Choice::Clpart);
        assert_eq!(h.pending_began(10.0), 16);
        // not ended: nothing to time
        assert!(!h.stretch_ended());
        h.stretch_done(999);
        assert!(h.stretch_ended());
        assert_eq!(
            h.next(false, Switch::default(), Some(12.0)),
            Choice::Stay(16)
        );
        assert_eq!(h.home_alone(), Some(0.002));
        let mut next = Home::remembered_home(0.002);
        assert_eq!(
            next.next(false, Switch::default(), Some(0.0)),
            Choice::Stay(16)
        );
        // 100 launches of 5 ms: clpart's devices are tried
        let mut long = Home::default();
        long.pending_began(0.0);
        long.stretch_done(99);
        assert_eq!(
            long.next(false, Switch::default(), Some(500.0)),
            Choice::Clpart
        );
        long.observe_clpart(50.0);
        long.observe_clpart(2.0);
        assert_eq!(long.home_alone(), None);
        assert_eq!(long.clpart_alone(), None);
        // the stretches grow
        let mut h = Home::default();
        let lengths: Vec<u32> = (0..5).map(|_| h.pending_began(0.0)).collect();
        assert_eq!(lengths, [16, 64, 256, 1024, 1024]);
    }

    /// A kernel launched once a run: probed at home while its analysis is
    /// made, measured on clpart's devices in a later run; the two make its
    /// walls. One whose earlier run measured only clpart's devices, and
    /// briefly, is probed at home first.
    #[test]
    fn single_launches_are_measured_on_both_sides_across_runs() {
        let mut pending = Home::default();
        assert!(pending.unmeasured());
        pending.observe(1.5);
        assert_eq!(pending.home_alone(), Some(1.5));
        assert_eq!(pending.clpart_alone(), None);
        let mut split = Home::default();
        assert_eq!(split.next(false, Switch::default(), None), Choice::Clpart);
        split.observe_clpart(6.4);
        assert_eq!(split.clpart_alone(), Some(6.4));
        assert_eq!(split.home_alone(), None);
        let mut next = Home::remembered_clpart(6.4);
        assert_eq!(next.next(false, Switch::default(), None), Choice::Probe);
        next.observe(1.5);
        assert_eq!(
            next.walls().map(|w| (w.home_ms, w.clpart_ms)),
            Some((1.5, 6.4))
        );
    }

    /// A stretch cut short (a launch of another kernel object of the same
    /// name and size came first, the products of a 3mm) is not valued:
    /// its launches are unknown, and one launch of 250 ms taken for
    /// sixteen would make home 16 ms.
    #[test]
    fn a_stretch_cut_short_is_not_valued() {
        let mut h = Home::default();
        h.observe(250.0);
        h.pending_began(0.0);
        assert!(!h.stretch_ended());
        assert_eq!(
            h.next(false, Switch::default(), Some(250.0)),
            Choice::Clpart
        );
        assert_eq!(h.home_alone(), Some(250.0));
    }

    /// Walls an earlier run measured decide the first launch: a faster
    /// home stays home at once, and clpart's devices, whose first launch
    /// in this run loads the subkernels (9 ms then), are measured again
    /// only when a stretch pays for that too, in two launches (the first
    /// left out).
    #[test]
    fn remembered_walls_decide_the_first_launch() {
        let w = Walls {
            home_ms: 0.2,
            clpart_ms: 1.0,
            warmup_ms: Some(9.0),
        };
        let mut h = Home::remembered(w);
        assert_eq!(h.walls(), Some(w));
        let mut stays = Vec::new();
        loop {
            match h.next(false, Switch::default(), None) {
                Choice::Stay(n) => stays.push(n),
                Choice::Clpart => break,
                c => panic!("{c:?}"),
            }
        }
        // 9.8 ms against a fiftieth of 16, 64, 256, 1024 launches of 0.2 ms
        // (remembered walls: a tenth would have paid at 1024)
        assert_eq!(stays, [16, 64, 256, 1024, 4096]);
        h.observe_clpart(9.0);
        assert_eq!(h.next(false, Switch::default(), None), Choice::Clpart);
        h.observe_clpart(0.1);
        h.observe_clpart(0.1);
        assert_eq!(h.walls().map(|w| w.clpart_ms), Some(0.1));
        // a faster clpart remembered: no probe at home first
        let mut h = Home::remembered(Walls {
            home_ms: 2.0,
            clpart_ms: 1.0,
            warmup_ms: None,
        });
        assert_eq!(h.next(false, Switch::default(), None), Choice::Clpart);
    }

    /// A stream of launches at home costs far less a launch than a probe
    /// (which waits for the device twice): a stretch is valued at what its
    /// launches cost, so clpart's devices are not measured again for a
    /// saving the stretch could not have made.
    #[test]
    fn a_stretch_is_valued_at_what_its_launches_cost() {
        let w = Walls {
            home_ms: 0.05,
            clpart_ms: 0.5,
            warmup_ms: Some(10.0),
        };
        // probes alone: 10.45 ms would pay after a stretch of 4096
        // launches at a tenth, never at the share of remembered walls
        let mut probed = Home::remembered(w);
        let mut stays = Vec::new();
        for _ in 0..7 {
            match probed.next(false, Switch::default(), None) {
                Choice::Stay(n) => stays.push(n),
                c => panic!("{c:?} after {stays:?}"),
            }
        }
        assert_eq!(stays, [16, 64, 256, 1024, 4096, 4096, 4096]);
        // the stretches took 2 us a launch: 4096 of them save 0.8 ms
        let mut timed = Home::remembered(w);
        let mut now = 0.0;
        for _ in 0..20 {
            let Choice::Stay(n) = timed.next(false, Switch::default(), Some(now)) else {
                panic!("clpart's devices measured again for a tiny saving");
            };
            // the launch that chose and `n` after it
            timed.stretch_done(n);
            now += (n + 1) as f64 * 0.002;
        }
        // and 2 us is home's wall now, for the comparison and the history
        let home = timed.walls().unwrap().home_ms;
        assert!((home - 0.002).abs() < 1e-9, "{home}");
    }

    /// A probe between two clFinish measured home at 0.06 ms, no better
    /// than clpart's devices; the stretch then showed 3 us a launch: home
    /// stays home however clpart's devices measure next.
    #[test]
    fn home_is_valued_at_its_stretch_not_its_probe() {
        let mut h = Home::default();
        h.observe_clpart(5.0);
        h.observe_clpart(0.05);
        assert_eq!(h.next(true, Switch::default(), Some(0.0)), Choice::Probe);
        h.observe(0.06);
        // 0.06 against 0.05: clpart's devices, then home probed again
        let mut now = 0.0;
        let (mut n_clpart, mut n_home) = (0u32, 0u32);
        while n_clpart + n_home < 20_000 {
            match h.next(true, Switch::default(), Some(now)) {
                Choice::Clpart => {
                    n_clpart += 1;
                    h.observe_clpart(0.05);
                    now += 0.05;
                }
                Choice::Probe => {
                    n_home += 1;
                    h.observe(0.06);
                    now += 0.06;
                }
                Choice::Stay(n) => {
                    h.stretch_done(n);
                    n_home += n + 1;
                    now += (n + 1) as f64 * 0.003;
                }
            }
        }
        assert!(n_clpart < 20, "{n_clpart} launches on clpart's devices");
        assert!(h.walls().unwrap().home_ms < 0.01, "{:?}", h.walls());
    }

    /// Buffers too large to bring in before the home is known: home is
    /// measured first, and clpart's devices only once a stretch at home
    /// is long enough for their round trip to cost a tenth of it.
    #[test]
    fn large_buffers_are_measured_at_home_first_and_moved_only_when_it_pays() {
        let big = Switch {
            to_clpart: 64 << 20,
            to_home: 0,
        };
        let mut h = Home::default();
        assert_eq!(h.next(true, big, None), Choice::Probe);
        h.observe(1.0);
        // 64 MiB at the default 1 GB/s: 67 ms, a tenth of 1024 launches
        // of 1 ms would not pay, of 4096 would
        let mut stays = Vec::new();
        loop {
            match h.next(true, big, None) {
                Choice::Stay(n) => stays.push(n),
                Choice::Clpart => break,
                c => panic!("{c:?}"),
            }
        }
        assert_eq!(stays, [16, 64, 256, 1024]);
        // the same with small buffers goes to clpart's devices at once
        let mut h = Home::default();
        assert_eq!(h.next(true, Switch::default(), None), Choice::Clpart);
    }

    /// A faster home whose other side costs a large round trip keeps its
    /// launches at home instead of measuring clpart's devices after each
    /// stretch.
    #[test]
    fn a_costly_round_trip_is_not_made_for_a_short_stretch() {
        let big = Switch {
            to_clpart: 16 << 20,
            to_home: 16 << 20,
        };
        let mut h = Home::default();
        assert_eq!(h.next(true, big, None), Choice::Clpart);
        h.observe_clpart(20.0);
        h.observe_clpart(2.0);
        assert_eq!(h.next(true, big, None), Choice::Probe);
        h.observe(1.0);
        // 16.8 ms against a tenth of 16, 64, 256 launches of 1 ms
        assert_eq!(h.next(true, big, None), Choice::Stay(16));
        assert_eq!(h.next(true, big, None), Choice::Stay(64));
        assert_eq!(h.next(true, big, None), Choice::Stay(256));
        assert_eq!(h.next(true, big, None), Choice::Clpart);
        // a slower home is probed only when a stretch on clpart's devices
        // pays for the round trip
        let mut h = Home::default();
        h.observe_clpart(20.0);
        h.observe_clpart(1.0);
        assert_eq!(h.next(true, big, None), Choice::Probe);
        h.observe(5.0);
        let mut n = 0;
        while h.next(true, big, None) != Choice::Probe {
            n += 1;
        }
        // stretches of 16 and 64 launches of 1 ms pass unprobed; after
        // 256, 16.8 ms is a tenth of their time
        assert_eq!(n, 16 + 64 + 256 - 1);
    }
}
