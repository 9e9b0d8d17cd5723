//! One door for a launch's policy: which shares a launch runs at, whether
//! it runs in rounds, and what the measurements learn from it. `clpart
//! run`, `clpart steps`, the C API and the OpenCL layer all launch through
//! a [`Door`], so the policy has one home.
//!
//! **Shares.** A launch's shares are [`Shares::Fixed`] (the user's, or even
//! ones) or [`Shares::Auto`]: every device of a list in proportion to its
//! measured speed on the launch's configuration (the key,
//! [`launcher::launch_key`] or the layer's coarser one), from the door's
//! [`launcher::Balancer`] (even while nothing is measured).
//!
//! **Rounds.** The first automatic launch of a configuration, on devices
//! of unknown speed ([`launcher::Balancer::unmeasured`]), runs through
//! [`launcher::launch_in_rounds`] (or its resident form): a probe window at
//! even shares measures the devices, the rest runs at the measured shares,
//! where [`launcher::probe_window`] says that pays. The rounds feed the
//! balancer themselves.
//!
//! **Measurements.** Every other automatic launch is observed
//! ([`launcher::Balancer::observe`]). A launch at fixed shares is not: the
//! balancer's measurements assume the launch ran at its own shares.
//!
//! The door holds one balancer over the device list of the last automatic
//! launch; another list starts it afresh (the C API's shares pick the
//! devices of each launch; the other front ends keep one list for good).

use launcher::{
    Balancer, DeviceBuffer, KernelArgs, LaunchError, LaunchOptions, NdRange, Plan, RunReport,
};

/// The shares a front end asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Shares {
    /// These devices at these shares (summing to 1).
    Fixed(Vec<(usize, f64)>),
    /// These devices in proportion to their measured speed on the launch's
    /// configuration, refined launch after launch (even at first).
    Auto(Vec<usize>),
}

/// Where a launch's buffer arguments are held.
pub enum Buffers<'a, 'b> {
    /// In the kernel arguments' host copies ([`launcher::launch`]).
    Host,
    /// These arguments on the devices, the others in their host copies
    /// ([`launcher::launch_resident`]; the list may be empty).
    Resident(&'a mut [(u32, &'b mut DeviceBuffer)]),
}

/// What one launch through the door did.
#[derive(Debug)]
pub struct Launched {
    pub report: RunReport,
    /// The shares it ran at; after rounds, the balancer's split shares as
    /// the rounds measured them.
    pub shares: Vec<(usize, f64)>,
    /// 2 where it ran in a probe round and a round of the rest, else 1.
    pub rounds: u32,
}

/// A front end's launch policy (see the module doc), kept across its
/// launches.
#[derive(Clone, Debug)]
pub struct Door {
    /// Made by the first automatic launch, over its devices.
    balancer: Option<Balancer>,
    /// Whether a first automatic launch over resident buffers runs in
    /// rounds too (launches over host copies always may).
    resident_rounds: bool,
}

impl Default for Door {
    fn default() -> Door {
        Door::new()
    }
}

impl Door {
    /// A door with nothing measured.
    pub fn new() -> Door {
        Door {
            balancer: None,
            resident_rounds: true,
        }
    }

    /// A door whose first automatic launches over resident buffers run in
    /// one launch at even shares: the C API's promise (`clpart.h`,
    /// `clpart_plan_set_auto_split`), where only launches over the
    /// application's host arrays run in rounds.
    pub fn without_resident_rounds(self) -> Door {
        Door {
            resident_rounds: false,
            ..self
        }
    }

    /// The balancer of the automatic launches, once one ran (or
    /// [`Door::balancer_over`] made it).
    pub fn balancer(&self) -> Option<&Balancer> {
        self.balancer.as_ref()
    }

    /// The balancer over `devices`: made where there is none, made afresh
    /// where the last one balanced other devices.
    pub fn balancer_over(&mut self, devices: &[usize]) -> &mut Balancer {
        let b = self.balancer.get_or_insert_with(|| Balancer::new(devices));
        if b.devices() != devices {
            *b = Balancer::new(devices);
        }
        b
    }

    /// The shares the next launch of `key` runs at (where it does not run
    /// in rounds): the fixed ones, or the balancer's.
    pub fn shares(&mut self, shares: &Shares, key: &str) -> Vec<(usize, f64)> {
        match shares {
            Shares::Fixed(s) => s.clone(),
            Shares::Auto(devices) => self.balancer_over(devices).shares(key),
        }
    }

    /// Whether the next launch of `key` would run through the rounds:
    /// automatic, nothing measured for `key`, and (over resident buffers)
    /// allowed by [`Door::without_resident_rounds`].
    pub fn in_rounds(&mut self, shares: &Shares, key: &str, resident: bool) -> bool {
        self.rounds_balancer(shares, key, resident).is_some()
    }

    /// The balancer that runs the next launch of `key` in rounds, if any.
    fn rounds_balancer(
        &mut self,
        shares: &Shares,
        key: &str,
        resident: bool,
    ) -> Option<&mut Balancer> {
        let Shares::Auto(devices) = shares else {
            return None;
        };
        if resident && !self.resident_rounds {
            return None;
        }
        Some(self.balancer_over(devices)).filter(|b| b.unmeasured(key))
    }

    /// One launch of `plan` over `nd`: at the shares (fixed, or the
    /// balancer's), in rounds where it is the first automatic launch of
    /// `key`, observed afterwards where automatic.
    #[allow(clippy::too_many_arguments)]
    pub fn launch(
        &mut self,
        plan: &mut Plan,
        nd: &NdRange,
        args: &mut KernelArgs,
        buffers: Buffers<'_, '_>,
        shares: &Shares,
        key: &str,
        options: &LaunchOptions,
    ) -> Result<Launched, LaunchError> {
        let resident = matches!(buffers, Buffers::Resident(_));
        if let Some(b) = self.rounds_balancer(shares, key, resident) {
            // the condition `launch_resident_in_rounds` takes rounds on
            let n_resident = match &buffers {
                Buffers::Host => 0,
                Buffers::Resident(bufs) => bufs.len(),
            };
            let window = launcher::probe_window(plan, nd, b.devices())
                .filter(|_| n_resident == 0 || !options.verify);
            let report = match buffers {
                Buffers::Host => launcher::launch_in_rounds(plan, nd, args, b, key, options)?,
                Buffers::Resident(bufs) => {
                    launcher::launch_resident_in_rounds(plan, nd, args, bufs, b, key, options)?
                }
            };
            return Ok(Launched {
                report,
                shares: b.split_shares(key),
                rounds: if window.is_some() { 2 } else { 1 },
            });
        }
        let (report, shares) = self.launch_with(
            shares,
            key,
            |s| match buffers {
                Buffers::Host => launcher::launch(plan, nd, args, s, options),
                Buffers::Resident(bufs) => {
                    launcher::launch_resident(plan, nd, args, bufs, s, options)
                }
            },
            |r| Some(r),
        )?;
        Ok(Launched {
            report,
            shares,
            rounds: 1,
        })
    }

    /// One launch the caller runs itself (`launch`, given the shares: over
    /// a `launcher::BufferSet`, or across ranks), never in rounds; where
    /// automatic, the report `measured` finds in its result is observed
    /// (`None`: nothing to learn from, a launch spread over ranks). Returns
    /// the result and the shares it ran at.
    pub fn launch_with<R, E>(
        &mut self,
        shares: &Shares,
        key: &str,
        launch: impl FnOnce(&[(usize, f64)]) -> Result<R, E>,
        measured: impl FnOnce(&R) -> Option<&RunReport>,
    ) -> Result<(R, Vec<(usize, f64)>), E> {
        let chosen = self.shares(shares, key);
        let r = launch(&chosen)?;
        if let (Shares::Auto(_), Some(b), Some(report)) =
            (shares, self.balancer.as_mut(), measured(&r))
        {
            b.observe(key, report);
        }
        Ok((r, chosen))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A split launch over `devices` where device `i` ran `groups[i]`
    /// work-groups busy for `busy_ms[i]`.
    fn report(groups: &[u64], busy_ms: &[f64]) -> RunReport {
        let devices = groups
            .iter()
            .zip(busy_ms)
            .enumerate()
            .map(|(i, (&g, &ms))| launcher::DeviceReport {
                index: i,
                work_groups: g,
                kernel_ms: ms,
                ..Default::default()
            })
            .collect();
        RunReport {
            split: true,
            devices,
            wall_ms: busy_ms.iter().copied().fold(0.0, f64::max),
            ..RunReport::nothing_ran("k", &NdRange::new(&[1024], &[64]).unwrap(), Some(0))
        }
    }

    fn ran(door: &mut Door, shares: &Shares, key: &str, r: RunReport) -> Vec<(usize, f64)> {
        let (_, s) = door
            .launch_with(shares, key, |_| Ok::<_, ()>(r), |r| Some(r))
            .unwrap();
        s
    }

    #[test]
    fn fixed_shares_are_taken_as_given_and_teach_nothing() {
        let mut door = Door::new();
        let fixed = Shares::Fixed(vec![(0, 0.7), (1, 0.3)]);
        let s = ran(&mut door, &fixed, "k", report(&[70, 30], &[1.0, 9.0]));
        assert_eq!(s, vec![(0, 0.7), (1, 0.3)]);
        assert!(door.balancer().is_none(), "no automatic launch ran");
        assert!(!door.in_rounds(&fixed, "k", false));
    }

    #[test]
    fn the_first_automatic_launch_is_even_and_in_rounds() {
        let mut door = Door::new();
        let auto = Shares::Auto(vec![0, 1]);
        assert!(door.in_rounds(&auto, "k", false));
        assert!(door.in_rounds(&auto, "k", true));
        assert_eq!(door.shares(&auto, "k"), vec![(0, 0.5), (1, 0.5)]);
    }

    #[test]
    fn automatic_shares_follow_what_was_observed() {
        let mut door = Door::new();
        let auto = Shares::Auto(vec![0, 1]);
        // device 0 three times as fast: the same work-groups in a third of the time
        let s = ran(&mut door, &auto, "k", report(&[50, 50], &[1.0, 3.0]));
        assert_eq!(s, vec![(0, 0.5), (1, 0.5)]);
        assert!(!door.in_rounds(&auto, "k", false), "measured now");
        let next = door.shares(&auto, "k");
        assert!(next[0].1 > 0.7 && next[1].1 < 0.3, "{next:?}");
        // another configuration knows nothing yet
        assert!(door.in_rounds(&auto, "other", false));
    }

    #[test]
    fn a_launch_the_caller_cannot_measure_teaches_nothing() {
        let mut door = Door::new();
        let auto = Shares::Auto(vec![0, 1]);
        door.launch_with(
            &auto,
            "k",
            |_| Ok::<_, ()>(report(&[50, 50], &[1.0, 3.0])),
            |_| None,
        )
        .unwrap();
        assert!(door.in_rounds(&auto, "k", false));
    }

    #[test]
    fn other_devices_start_the_measurements_afresh() {
        let mut door = Door::new();
        ran(
            &mut door,
            &Shares::Auto(vec![0, 1]),
            "k",
            report(&[50, 50], &[1.0, 3.0]),
        );
        let other = Shares::Auto(vec![0, 2]);
        assert!(door.in_rounds(&other, "k", false));
        assert_eq!(door.balancer().unwrap().devices(), &[0, 2]);
    }

    #[test]
    fn without_resident_rounds_only_host_launches_run_in_rounds() {
        let mut door = Door::new().without_resident_rounds();
        let auto = Shares::Auto(vec![0, 1]);
        assert!(door.in_rounds(&auto, "k", false));
        assert!(!door.in_rounds(&auto, "k", true));
    }
}
