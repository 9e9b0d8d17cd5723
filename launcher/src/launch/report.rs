//! The report of a launch: what each device did ([`DeviceReport`]), the
//! whole launch ([`RunReport`], with its text form), the first mismatch of a
//! verification ([`Mismatch`]) and an unsplit run ([`WholeRun`]).

use std::fmt;

use serde::Serialize;

use crate::ndrange::NdRange;

/// What one device did in a launch.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DeviceReport {
    /// Device index.
    pub index: usize,
    /// Device name.
    pub name: String,
    /// Work-groups the device ran.
    pub work_groups: u64,
    /// Its slice `[lo, hi)` of work-groups along the split dimension (for
    /// a launch in rounds, `crate::launch_in_rounds`, the hull of its
    /// rounds' slices: `work_groups` is what it ran).
    pub slice: (u64, u64),
    /// Bytes copied host → device.
    pub bytes_to_device: u64,
    /// Bytes copied device → host.
    pub bytes_from_device: u64,
    /// Transfer commands (host → device and device → host, each rect one).
    pub commands: u64,
    /// Kernel execution time (profiling events), milliseconds.
    pub kernel_ms: f64,
    /// The device's part of the launch, milliseconds: its transfers, kernel
    /// and read-backs, from the first command's start to the last one's end
    /// (profiling events), or the host's time enqueueing them where that is
    /// longer (a driver that copies or runs commands while they are
    /// enqueued). 0 where not measured (an unsplit run). What balancing
    /// equalizes ([`crate::Balancer`]).
    pub busy_ms: f64,
}

/// The first output element that differs between the split and the unsplit
/// run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    /// The array argument.
    pub array: String,
    /// The element index.
    pub elem_idx: u64,
}

/// The result of [`launch`](crate::launch()).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunReport {
    /// The kernel.
    pub kernel: String,
    /// The NDRange of the launch.
    pub ndrange: NdRange,
    /// Whether the kernel ran split (subkernels on several slices) rather
    /// than whole on one device.
    pub split: bool,
    /// Whether the range file marks the kernel splittable.
    pub splittable: bool,
    /// The split dimension.
    pub split_dim: Option<u32>,
    /// Why the kernel ran whole, when it did.
    pub reason: Option<String>,
    /// Per participating device.
    pub devices: Vec<DeviceReport>,
    /// Bytes moved in both directions, all devices.
    pub bytes_total: u64,
    /// Bytes a whole-buffer approach would move: every buffer the kernel
    /// reads to each participating device, every buffer it writes back from
    /// each.
    pub bytes_whole_buffers: u64,
    /// Bytes of the distinct elements each slice touches (Ehrhart counts),
    /// once for reads and once for writes (a read-write array whose writes
    /// are all must-writes: its footprint, then its written elements);
    /// `None` when a count is missing
    /// or the launch did not ask for it ([`LaunchOptions::exact_bytes`](crate::LaunchOptions::exact_bytes)).
    pub bytes_exact: Option<u64>,
    /// Wall time of the launch (validation, transfers, kernels, gluing;
    /// for the host-array form [`crate::launch`] also its buffers made and
    /// gathered back), milliseconds; verification not included.
    pub wall_ms: f64,
    /// Host time clpart adds to the launch, microseconds: `wall_ms` minus
    /// the time spent inside OpenCL calls (buffer creation and release,
    /// transfers, argument setting, enqueues, waits, program builds). What
    /// remains is checks, range evaluation, slicing, bookkeeping and gluing.
    pub host_us: f64,
    /// `Some(true)` when verification ran and every output byte matched.
    pub verified: Option<bool>,
    /// The first differing element when verification failed.
    pub mismatch: Option<Mismatch>,
    /// Remarks: failed assumptions, devices left without work, ...
    pub notes: Vec<String>,
    /// Whether the run-time guard caught an access outside a slice's range
    /// (the launch then re-ran unsplit; see `reason`), or, unsplit, a write
    /// to an array the analysis says is only read (the original kernel
    /// re-ran; see `notes`): the analysis's modes are then not to be
    /// trusted for this launch.
    pub guard_fired: bool,
    /// Whether the kernel ran whole because a launch-time assumption of
    /// its analysis did not hold at this launch's values (an analysis
    /// specialized on them may need none). Not in the JSON report: its
    /// `reason` says so.
    #[serde(skip)]
    pub assumption_failed: bool,
}

impl RunReport {
    /// The report of a launch of `kernel` over `nd` of which this process's
    /// devices ran nothing (every count zero, no device, not split): the
    /// start of a report a caller fills with what it knows (a launch whose
    /// windows all ran on other MPI ranks; a simulated launch).
    pub fn nothing_ran(kernel: &str, nd: &NdRange, split_dim: Option<u32>) -> RunReport {
        RunReport {
            kernel: kernel.to_string(),
            ndrange: nd.clone(),
            split: false,
            splittable: true,
            split_dim,
            reason: None,
            devices: Vec::new(),
            bytes_total: 0,
            bytes_whole_buffers: 0,
            bytes_exact: None,
            wall_ms: 0.0,
            host_us: 0.0,
            verified: None,
            mismatch: None,
            notes: Vec::new(),
            guard_fired: false,
            assumption_failed: false,
        }
    }
}

impl fmt::Display for RunReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kernel '{}', {}", self.kernel, self.ndrange)?;
        match (&self.reason, self.split_dim) {
            (Some(r), _) => writeln!(f, ", ran whole: {r}")?,
            (None, Some(d)) => writeln!(f, ", split along dimension {d}")?,
            (None, None) => writeln!(f)?,
        }
        for d in &self.devices {
            writeln!(
                f,
                "  device {} '{}': {} work-groups [{}, {}), {} B to device, {} B from device, kernel {:.3} ms",
                d.index, d.name, d.work_groups, d.slice.0, d.slice.1, d.bytes_to_device, d.bytes_from_device, d.kernel_ms
            )?;
        }
        write!(
            f,
            "  bytes moved {} in {} transfer commands, whole buffers {}",
            self.bytes_total,
            self.devices.iter().map(|d| d.commands).sum::<u64>(),
            self.bytes_whole_buffers
        )?;
        match self.bytes_exact {
            Some(b) => writeln!(f, ", exact footprint {b}")?,
            None => writeln!(f)?,
        }
        write!(f, "  wall {:.3} ms", self.wall_ms)?;
        match (self.verified, &self.mismatch) {
            (Some(true), _) => write!(f, ", verified")?,
            (Some(false), Some(m)) => {
                write!(f, ", verification failed at '{}'[{}]", m.array, m.elem_idx)?
            }
            (Some(false), None) => write!(f, ", verification failed")?,
            (None, _) => {}
        }
        for n in &self.notes {
            write!(f, "\n  note: {n}")?;
        }
        Ok(())
    }
}

/// The outcome of an unsplit run ([`run_whole`](crate::run_whole()), [`Plan::run_whole`](crate::Plan::run_whole)).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WholeRun {
    /// The device.
    pub device: usize,
    /// Kernel execution time, milliseconds.
    pub kernel_ms: f64,
    /// Bytes copied host → device.
    pub bytes_to_device: u64,
    /// Bytes copied device → host.
    pub bytes_from_device: u64,
}

/// Adds device → host bytes to the report, per source device.
pub(crate) fn add_gathered(report: &mut RunReport, gathered: &[(usize, u64, u64)]) {
    for &(dev, n, commands) in gathered {
        if n == 0 {
            continue;
        }
        match report.devices.iter_mut().find(|d| d.index == dev) {
            Some(d) => {
                d.bytes_from_device += n;
                d.commands += commands;
            }
            None => report.devices.push(DeviceReport {
                index: dev,
                name: format!("device {dev}"),
                bytes_from_device: n,
                commands,
                ..DeviceReport::default()
            }),
        }
        report.bytes_total += n;
    }
}
