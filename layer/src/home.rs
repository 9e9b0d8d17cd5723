//! Whether a launch runs on clpart's devices or at home: on the
//! application's own device, unchanged (automatic shares only).
//!
//! A launch too small to pay for splitting — thousands of tiny steps of a
//! 1-D stencil, the late steps of an LU whose NDRange shrinks — costs more
//! on clpart's devices than on the application's: a launch there is
//! synchronous (the application's queue finished, its buffers brought in,
//! each device's commands waited for), while the driver queues a launch
//! at home and returns at once. The balancer ([`launcher::Balancer`])
//! measures the clpart side, split or on its fastest device alone, as the
//! whole wall of the layer's launch. The home side is measured by a probe:
//! one launch passed to the driver between two `clFinish`es, its wall
//! including the syncs that made the application's copies current (so a
//! kernel among split ones, whose buffers clpart holds newer, pays there
//! for moving them back, and stays with clpart).
//!
//! [`Home::next`] then takes the lesser median wall. At home, the kernel's
//! launches of that size pass through at once for a stretch
//! ([`crate::state::Unsplit::left`]), after which one launch runs on
//! clpart's devices to measure them again; on clpart's devices, home is
//! probed again after a stretch of launches. A stretch doubles each time
//! the choice stays (from [`FIRST_STRETCH`] to [`MAX_STRETCH`]), so a
//! steady program pays for the other side's measurement ever more rarely,
//! and starts again short when the choice changes.

use std::collections::VecDeque;

/// The first stretch (launches) before the other side is measured again.
pub(crate) const FIRST_STRETCH: u32 = 16;

/// The longest stretch.
pub(crate) const MAX_STRETCH: u32 = 1024;

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
    /// Launches on clpart's devices since home was last probed.
    since: u32,
    stretch: u32,
    /// The last choice between the two (`Some(true)`: home).
    at_home: Option<bool>,
    /// A stretch at home just ended: clpart's devices are measured next.
    after_stay: bool,
}

fn median(v: &VecDeque<f64>) -> Option<f64> {
    let mut s: Vec<f64> = v.iter().copied().collect();
    s.sort_by(f64::total_cmp);
    s.get(s.len() / 2).copied()
}

impl Home {
    /// The next launch's choice, given the clpart side's best median wall
    /// (`None` while the balancer has not settled: clpart's devices run).
    pub(crate) fn next(&mut self, clpart: Option<f64>) -> Choice {
        let Some(clpart) = clpart else {
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
        let grow = |s: u32| s.saturating_mul(2).min(MAX_STRETCH);
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
        if wall_ms.is_finite() && wall_ms >= 0.0 {
            self.walls.push_back(wall_ms);
            while self.walls.len() > WALLS_KEPT {
                self.walls.pop_front();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clpart_runs_until_measured_then_home_is_probed() {
        let mut h = Home::default();
        assert_eq!(h.next(None), Choice::Clpart);
        assert_eq!(h.next(Some(1.0)), Choice::Probe);
    }

    #[test]
    fn a_faster_home_keeps_launches_in_growing_stretches() {
        let mut h = Home::default();
        assert_eq!(h.next(Some(1.0)), Choice::Probe);
        h.observe(0.1);
        let mut stays = Vec::new();
        for _ in 0..5 {
            match h.next(Some(1.0)) {
                Choice::Stay(n) => stays.push(n),
                c => panic!("{c:?}"),
            }
            // the stretch ends with one launch on clpart's devices
            assert_eq!(h.next(Some(1.0)), Choice::Clpart);
        }
        assert_eq!(stays, [16, 32, 64, 128, 256]);
    }

    #[test]
    fn a_slower_home_is_probed_ever_more_rarely_and_a_change_restarts() {
        let mut h = Home::default();
        assert_eq!(h.next(Some(1.0)), Choice::Probe);
        h.observe(5.0);
        let mut gaps = Vec::new();
        let mut n = 0;
        while gaps.len() < 3 {
            n += 1;
            if h.next(Some(1.0)) == Choice::Probe {
                gaps.push(n);
                n = 0;
            }
        }
        assert_eq!(gaps, [16, 32, 64]);
        // home became faster (three probes to move the median)
        for _ in 0..3 {
            h.observe(0.1);
        }
        assert_eq!(h.next(Some(1.0)), Choice::Stay(FIRST_STRETCH));
    }
}
