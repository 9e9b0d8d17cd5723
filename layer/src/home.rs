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
//! and starts again short when the choice changes.

use std::collections::VecDeque;

/// The first stretch (launches) before the other side is measured again.
pub(crate) const FIRST_STRETCH: u32 = 16;

/// The longest stretch.
pub(crate) const MAX_STRETCH: u32 = 4096;

/// Home walls kept; compared by their median.
const WALLS_KEPT: usize = 3;

/// The reason recorded for a launch that runs at home.
pub(crate) const AT_HOME: &str =
    "runs on the application's device: measured faster there than on clpart's devices (a launch too small to pay for splitting)";

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
    /// The last choice between the two (`Some(true)`: home).
    at_home: Option<bool>,
    /// A stretch at home just ended: clpart's devices are measured next.
    after_stay: bool,
    /// Started from a neighbouring configuration's measurements.
    inherited: bool,
}

fn median(v: &VecDeque<f64>) -> Option<f64> {
    let mut s: Vec<f64> = v.iter().copied().collect();
    s.sort_by(f64::total_cmp);
    s.get(s.len() / 2).copied()
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
            ..self.clone()
        }
    }

    /// The next launch's choice; clpart's devices run while the balancer
    /// has not `settled` (split launches measured), unless the measurements
    /// were inherited.
    pub(crate) fn next(&mut self, settled: bool) -> Choice {
        let Some(clpart) = median(&self.clpart).filter(|_| settled || self.inherited) else {
            return Choice::Clpart;
        };
        if self.stretch == 0 {
            self.stretch = FIRST_STRETCH;
        }
        let Some(home) = median(&self.walls) else {
            return Choice::Probe;
        };
        let home_better = home < clpart;
        if self.at_home.is_some_and(|h| h != home_better) {
            self.stretch = FIRST_STRETCH;
            self.since = 0;
        }
        self.at_home = Some(home_better);
        // measuring the other side costs moving buffers there (a whole
        // array brought back to clpart's devices after a stretch at home):
        // four times fewer each time the choice stays
        let grow = |s: u32| s.saturating_mul(4).min(MAX_STRETCH);
        if home_better {
            if self.after_stay {
                self.after_stay = false;
                return Choice::Clpart;
            }
            self.after_stay = true;
            let n = self.stretch;
            self.stretch = grow(n);
            Choice::Stay(n)
        } else {
            self.since += 1;
            if self.since >= self.stretch {
                self.since = 0;
                self.stretch = grow(self.stretch);
                return Choice::Probe;
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
        assert_eq!(h.next(false), Choice::Clpart);
        h.observe_clpart(1.0);
        assert_eq!(h.next(false), Choice::Clpart);
        assert_eq!(h.next(true), Choice::Probe);
    }

    #[test]
    fn a_faster_home_keeps_launches_in_growing_stretches() {
        let mut h = Home::default();
        h.observe_clpart(1.0);
        assert_eq!(h.next(true), Choice::Probe);
        h.observe(0.1);
        let mut stays = Vec::new();
        for _ in 0..5 {
            match h.next(true) {
                Choice::Stay(n) => stays.push(n),
                c => panic!("{c:?}"),
            }
            // the stretch ends with one launch on clpart's devices
            assert_eq!(h.next(true), Choice::Clpart);
        }
        assert_eq!(stays, [16, 64, 256, 1024, 4096]);
    }

    #[test]
    fn a_new_size_of_a_kernel_at_home_starts_at_home() {
        let mut h = Home::default();
        h.observe_clpart(1.0);
        assert_eq!(h.next(true), Choice::Probe);
        h.observe(0.1);
        assert_eq!(h.next(true), Choice::Stay(16));
        // before the balancer has settled on the new size
        let mut smaller = h.inherited();
        assert_eq!(smaller.next(false), Choice::Stay(64));
        assert_eq!(Home::default().inherited().next(false), Choice::Clpart);
    }

    #[test]
    fn a_slower_home_is_probed_ever_more_rarely_and_a_change_restarts() {
        let mut h = Home::default();
        h.observe_clpart(1.0);
        assert_eq!(h.next(true), Choice::Probe);
        h.observe(5.0);
        let mut gaps = Vec::new();
        let mut n = 0;
        while gaps.len() < 3 {
            n += 1;
            if h.next(true) == Choice::Probe {
                gaps.push(n);
                n = 0;
            }
        }
        assert_eq!(gaps, [16, 64, 256]);
        // home became faster (three probes to move the median)
        for _ in 0..3 {
            h.observe(0.1);
        }
        assert_eq!(h.next(true), Choice::Stay(FIRST_STRETCH));
    }
}
