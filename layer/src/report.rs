//! What the layer did, per kernel, written at exit as JSON
//! (`CLPART_LAYER_REPORT`) and summed up on stderr (`CLPART_LAYER_VERBOSE`).
//!
//! Fields (kept stable for `clpart exec --report`):
//! - `schema_version`: [`SCHEMA_VERSION`];
//! - `kernels[]` (the entry named `(native kernel)` counts
//!   `clEnqueueNativeKernel` commands, which the layer never splits):
//!   `name`, `launches`, `split_launches`, `reason` (why the last launch
//!   that was not split was not, else absent), `reasons` (every distinct
//!   reason with its count of launches, absent when none),
//!   `bytes_to_devices` and `bytes_from_devices` (what clpart moved to and
//!   from its devices in split launches), `bytes_whole_buffers` (what
//!   sending every buffer the kernel reads to each device and reading back
//!   every buffer it writes from each would move, per launch, summed),
//!   `bytes_app_sync` (what its split launches moved between the
//!   application's device and the host: buffers the application wrote
//!   since clpart last held them, read whole; buffers kept off the
//!   resident path, read whole before and changed bytes written back after);
//!   `analyses` (the analyses made for the kernel: one serves every
//!   launch of a work-group size; see [`crate::analyses`]);
//! - totals `n_analyses` (over every kernel), `n_builds` (the programs
//!   clpart built on its devices), `bytes_total` (to and from clpart's devices in launches),
//!   `bytes_gathered` (from clpart's devices to the host outside launches:
//!   to bring the application's copy of a buffer up to date, or to see a
//!   buffer with other elements),
//!   `bytes_whole_buffers`; `bytes_app_sync_in` and `bytes_app_sync_out`
//!   (what crossed from the application's device to the host and back, in
//!   split launches and before the application's own reads, maps, copies
//!   and launches of resident buffers), `n_app_syncs_in` and
//!   `n_app_syncs_out` (the buffers so moved), `bytes_app_sync` (in plus
//!   out); `app_sync_errors` (why a sync failed and the application's call
//!   got an error, absent when none did); `devices` (`index`, `share`: the
//!   shares given, empty for the default of even shares over every device).
//!
//! With `CLPART_LAYER_LAUNCH_LOG=1` (`clpart exec --report-launches`), the
//! report also holds what a test needs to replay the run's data movement
//! against a model (`cli/tests/exec.rs`):
//! - `programs[]`: `source` (the text given to
//!   `clCreateProgramWithSource`) and `options` (its build options, split
//!   at white space), for the launches to name by index;
//! - `launch_log[]`, in order, each with `event`:
//!   - `"launch"`: a launch clpart ran: `kernel`, `program` (index into
//!     `programs`), `split` (false: whole on one of clpart's devices),
//!     `global`, `local`, `offset` (the NDRange clpart ran: trailing
//!     dimensions of size 1 a kernel does not use dropped), `split_dim`,
//!     `rounds` (2 for a first automatic launch in two rounds, whose
//!     devices' slices are then the hulls of their work-groups in both;
//!     else 1), `wall_us` (the launch's wall as the application waited for
//!     it, its buffers brought in), `devices[]` (`index`, `slice`: its
//!     work-groups `[lo, hi)`
//!     along `split_dim`), `bytes_to_devices` and `bytes_from_devices` (this
//!     launch's part of `bytes_total`), `args[]` by argument index, each
//!     with `kind`: `"buffer"` (`buffer`: the buffer's id, numbered from 0
//!     in the order the application made its buffers, sub-buffers and
//!     images, stable for the run; `bytes`: its size; `elem_size`: the
//!     kernel's element size for it; `resident`: false for a buffer backed
//!     by host memory, read whole before the launch and written back after),
//!     `"scalar"` (`value`: its bytes as the application set them, in hex;
//!     `int`: its value when it is an integer) or `"local"` (`bytes`);
//!   - `"sync_in"`: clpart took the application's contents of resident
//!     buffer `buffer` (`bytes` read from its device) before a launch:
//!     `changed` lists the byte ranges `[lo, hi)` that differed from
//!     clpart's copy (every byte when clpart held no complete copy: the
//!     buffer's first launch, or after the application wrote it whole), which
//!     are now valid on the host only;
//!   - `"sync_out"`: the application's copy of resident buffer `buffer`
//!     was brought up to date (`bytes` written to its device) before an
//!     operation of its own reads it (a read, a map, a copy, a launch that
//!     passes through): the host first gathered `gathered` bytes from
//!     clpart's devices (counted in `bytes_gathered`);
//! - `launch_log_truncated`: true when events were left out past
//!   [`MAX_LOG_EVENTS`].
//!
//! Launcher traffic is `bytes_total` (in launches) plus `bytes_gathered`
//! (to the host outside launches); `bytes_app_sync*` is traffic between the
//! application's device and the host, which no split avoids.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, Mutex};

use launcher::RunReport;
use ranges_format::ArgInfo;
use serde::Serialize;

use crate::config::config;
use crate::slots::Slot;
use crate::state;

#[derive(Clone, Debug, Default, Serialize)]
struct KernelStats {
    name: String,
    launches: u64,
    split_launches: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    /// Every distinct reason of the launches not split, with their count.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    reasons: std::collections::BTreeMap<String, u64>,
    bytes_to_devices: u64,
    bytes_from_devices: u64,
    bytes_whole_buffers: u64,
    bytes_app_sync: u64,
    /// Element bytes over MPI for this kernel's launches (under `mpirun`).
    #[serde(skip_serializing_if = "Option::is_none")]
    bytes_mpi: Option<u64>,
    /// Analyses made for this kernel (the analysis cache's reads count).
    analyses: u64,
}

/// What crossed between the application's buffers and clpart, whichever
/// call made it cross.
#[derive(Clone, Debug, Default, Serialize)]
struct SyncStats {
    bytes_gathered: u64,
    bytes_app_sync_in: u64,
    bytes_app_sync_out: u64,
    n_app_syncs_in: u64,
    n_app_syncs_out: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    app_sync_errors: Vec<String>,
}

/// Version of the report's layout; a change that adds, removes or retypes
/// a top-level field bumps it (`cli/tests/exec.rs` declares the fields).
const SCHEMA_VERSION: u32 = 2;

#[derive(Serialize)]
struct Report<'a> {
    /// [`SCHEMA_VERSION`].
    schema_version: u32,
    kernels: Vec<&'a KernelStats>,
    /// Analyses made, over every kernel.
    n_analyses: u64,
    /// Programs clpart built on its devices (subkernels and the kernels it
    /// runs whole, per device).
    n_builds: u64,
    bytes_total: u64,
    bytes_whole_buffers: u64,
    bytes_app_sync: u64,
    #[serde(flatten)]
    sync: SyncStats,
    devices: Vec<DeviceShare>,
    #[serde(skip_serializing_if = "Option::is_none")]
    programs: Option<Vec<ProgramOut<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    launch_log: Option<&'a [LogEvent]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    launch_log_truncated: Option<bool>,
    /// Under `mpirun`: `n_ranks`, `bytes_mpi`, `bytes_mpi_whole_buffers`,
    /// `ranks` (per rank) and `ranks_error` ([`crate::ranks::summary`]).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    mpi: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Most events the launch log keeps.
pub(crate) const MAX_LOG_EVENTS: usize = 20_000;

/// One entry of the launch log (see the module's doc).
#[derive(Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
enum LogEvent {
    Launch(LoggedLaunch),
    SyncIn {
        buffer: u64,
        bytes: u64,
        changed: Vec<(u64, u64)>,
    },
    SyncOut {
        buffer: u64,
        bytes: u64,
        gathered: u64,
    },
}

#[derive(Serialize)]
struct LoggedLaunch {
    kernel: String,
    program: usize,
    split: bool,
    global: Vec<u64>,
    local: Vec<u64>,
    offset: Vec<u64>,
    split_dim: Option<u32>,
    /// 2 for a launch in two rounds (its devices' slices are then the
    /// hulls of their work-groups in both), else 1.
    rounds: u32,
    /// The launch's wall as the application waited for it (its queue
    /// finished, its buffers brought in), microseconds.
    wall_us: u64,
    devices: Vec<LoggedSlice>,
    bytes_to_devices: u64,
    bytes_from_devices: u64,
    args: Vec<LoggedArg>,
    /// Under `mpirun`: each rank's part and the element bytes over MPI.
    #[serde(skip_serializing_if = "Option::is_none")]
    ranks: Option<Vec<crate::ranks::RankPart>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bytes_mpi: Option<u64>,
}

#[derive(Serialize)]
struct LoggedSlice {
    index: usize,
    slice: (u64, u64),
}

#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum LoggedArg {
    Buffer {
        buffer: u64,
        bytes: u64,
        elem_size: u32,
        resident: bool,
    },
    Scalar {
        value: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        int: Option<i64>,
    },
    Local {
        bytes: u64,
    },
}

#[derive(Serialize)]
struct ProgramOut<'a> {
    source: &'a str,
    options: &'a [String],
}

/// The launch log and the programs its launches name.
#[derive(Default)]
struct Log {
    programs: Vec<(Arc<str>, Vec<String>)>,
    events: Vec<LogEvent>,
    truncated: bool,
}

static LOG: Mutex<Option<Log>> = Mutex::new(None);

/// Whether the launch log is kept (asked for, and a report is written).
pub(crate) fn logging() -> bool {
    let cfg = config();
    cfg.launch_log && cfg.report.is_some()
}

fn log_event(make: impl FnOnce(&mut Log) -> Option<LogEvent>) {
    let mut log = LOG.lock().unwrap_or_else(|p| p.into_inner());
    let log = log.get_or_insert_with(Log::default);
    if log.events.len() >= MAX_LOG_EVENTS {
        log.truncated = true;
        return;
    }
    if let Some(e) = make(log) {
        log.events.push(e);
    }
}

/// The id of the buffer record `handle` (its root's for a sub-buffer).
fn buffer_id(handle: usize) -> Option<u64> {
    state::with(|s| s.buffers.get(&s.root(handle)?).map(|b| b.id))
}

/// How a launch clpart ran went, for its log entry.
pub(crate) struct HowRan<'p> {
    /// 2 for a launch in two rounds, else 1.
    pub(crate) rounds: u32,
    /// As the application waited for it.
    pub(crate) wall: std::time::Duration,
    /// Across MPI ranks: each rank's part and the element bytes over MPI.
    pub(crate) ranks: Option<(&'p [crate::ranks::RankPart], u64)>,
}

/// Logs a launch clpart ran (`slots`, `infos`: its arguments as the kernel
/// declares them), when the log is kept.
pub(crate) fn log_launch(
    kernel: &str,
    (source, options): (&Arc<str>, &[String]),
    slots: &[Slot],
    infos: &[ArgInfo],
    r: &RunReport,
    how: &HowRan,
) {
    if !logging() {
        return;
    }
    let args: Vec<LoggedArg> = slots
        .iter()
        .zip(infos)
        .map(|(slot, info)| match slot {
            Slot::Scalar { bytes, int } => LoggedArg::Scalar {
                value: bytes.iter().map(|b| format!("{b:02x}")).collect(),
                int: *int,
            },
            Slot::Local { bytes } => LoggedArg::Local { bytes: *bytes },
            Slot::Buffer { mem, size, flags } => LoggedArg::Buffer {
                // Every buffer argument has a record (`split::slots`).
                buffer: buffer_id(*mem).unwrap_or(u64::MAX),
                bytes: *size as u64,
                elem_size: info.elem_size,
                resident: crate::resident::eligible(*flags),
            },
        })
        .collect();
    log_event(|log| {
        let program = match log
            .programs
            .iter()
            .position(|(s, o)| **s == **source && o == options)
        {
            Some(i) => i,
            None => {
                log.programs.push((source.clone(), options.to_vec()));
                log.programs.len() - 1
            }
        };
        Some(LogEvent::Launch(LoggedLaunch {
            kernel: kernel.to_string(),
            program,
            split: r.split,
            global: r.ndrange.global.clone(),
            local: r.ndrange.local.clone(),
            offset: r.ndrange.offset.clone(),
            split_dim: r.split_dim,
            rounds: how.rounds,
            wall_us: how.wall.as_micros() as u64,
            devices: r
                .devices
                .iter()
                .map(|d| LoggedSlice {
                    index: d.index,
                    slice: d.slice,
                })
                .collect(),
            bytes_to_devices: r.devices.iter().map(|d| d.bytes_to_device).sum(),
            bytes_from_devices: r.devices.iter().map(|d| d.bytes_from_device).sum(),
            args,
            ranks: how.ranks.map(|(p, _)| p.to_vec()),
            bytes_mpi: how.ranks.map(|(_, b)| b),
        }))
    });
}

/// Logs that clpart took the application's contents of buffer `root`
/// (`bytes`), of which the byte ranges `changed` differed from its copy.
pub(crate) fn log_sync_in(root: usize, bytes: u64, changed: Vec<(u64, u64)>) {
    if !logging() {
        return;
    }
    let Some(buffer) = buffer_id(root) else {
        return;
    };
    log_event(|_| {
        Some(LogEvent::SyncIn {
            buffer,
            bytes,
            changed,
        })
    });
}

/// Logs that the application's copy of buffer `root` was brought up to
/// date (`bytes`), after gathering `gathered` bytes from clpart's devices.
pub(crate) fn log_sync_out(root: usize, bytes: u64, gathered: u64) {
    if !logging() {
        return;
    }
    let Some(buffer) = buffer_id(root) else {
        return;
    };
    log_event(|_| {
        Some(LogEvent::SyncOut {
            buffer,
            bytes,
            gathered,
        })
    });
}

#[derive(Serialize)]
struct DeviceShare {
    index: usize,
    share: f64,
}

static STATS: Mutex<BTreeMap<String, KernelStats>> = Mutex::new(BTreeMap::new());
static SYNCS: Mutex<Option<SyncStats>> = Mutex::new(None);

fn with_syncs(f: impl FnOnce(&mut SyncStats)) {
    let mut s = SYNCS.lock().unwrap_or_else(|p| p.into_inner());
    f(s.get_or_insert_with(SyncStats::default));
}

/// A buffer read from the application's device into clpart's copy.
pub(crate) fn synced_in(bytes: u64, took: std::time::Duration) {
    crate::home::sync_observed(bytes, took);
    with_syncs(|s| {
        s.bytes_app_sync_in += bytes;
        s.n_app_syncs_in += 1;
    });
}

/// A buffer written into the application's copy, after gathering
/// `gathered` bytes of it from clpart's devices.
pub(crate) fn synced_out(bytes: u64, gathered: u64, took: std::time::Duration) {
    crate::home::sync_observed(bytes, took);
    with_syncs(|s| {
        s.bytes_app_sync_out += bytes;
        s.n_app_syncs_out += 1;
        s.bytes_gathered += gathered;
    });
}

/// Bytes gathered from clpart's devices outside launches, for no sync.
pub(crate) fn gathered(bytes: u64) {
    with_syncs(|s| s.bytes_gathered += bytes);
}

/// A sync that failed: the application's call got an error.
pub(crate) fn sync_failed(why: &str) {
    with_syncs(|s| {
        if s.app_sync_errors.len() < 16 {
            s.app_sync_errors.push(why.to_string());
        }
    });
}

fn with_kernel(name: &str, f: impl FnOnce(&mut KernelStats)) {
    let mut stats = STATS.lock().unwrap_or_else(|p| p.into_inner());
    // Looked up first: a launch of a kernel already seen allocates nothing.
    if let Some(k) = stats.get_mut(name) {
        return f(k);
    }
    let k = stats
        .entry(name.to_string())
        .or_insert_with(|| KernelStats {
            name: name.to_string(),
            ..Default::default()
        });
    f(k);
}

impl KernelStats {
    /// A launch not split, and why: the last reason, and the count of each.
    fn not_split(&mut self, why: &str) {
        if self.reason.as_deref() != Some(why) {
            self.reason = Some(why.to_string());
        }
        match self.reasons.get_mut(why) {
            Some(n) => *n += 1,
            None => {
                self.reasons.insert(why.to_string(), 1);
            }
        }
    }
}

/// A launch that went to the driver unchanged, and why.
pub(crate) fn whole(kernel: &str, why: &str) {
    with_kernel(kernel, |k| {
        k.launches += 1;
        k.not_split(why);
    });
}

/// An analysis of the kernel was asked for.
pub(crate) fn analyzed(kernel: &str) {
    with_kernel(kernel, |k| k.analyses += 1);
}

/// A launch that failed after the application's buffers were touched.
pub(crate) fn failed(kernel: &str, why: &str) {
    whole(kernel, why);
}

/// A launch that panicked inside the layer (and then went to the driver).
pub(crate) fn panicked(kernel_handle: usize) {
    with_kernel(&format!("kernel@{kernel_handle:#x}"), |k| {
        k.launches += 1;
        k.not_split("internal error in the layer; the launch went to the driver");
    });
}

/// A launch clpart ran: split, or whole on one of its devices when the
/// launcher decided so (its report says why).
pub(crate) fn launched(kernel: &str, r: &RunReport, app_sync: u64, bytes_mpi: Option<u64>) {
    with_kernel(kernel, |k| {
        if let Some(b) = bytes_mpi {
            *k.bytes_mpi.get_or_insert(0) += b;
        }
        k.launches += 1;
        if r.split {
            k.split_launches += 1;
        } else {
            k.not_split(
                r.reason
                    .as_deref()
                    .unwrap_or("ran whole on one clpart device"),
            );
        }
        k.bytes_to_devices += r.devices.iter().map(|d| d.bytes_to_device).sum::<u64>();
        k.bytes_from_devices += r.devices.iter().map(|d| d.bytes_from_device).sum::<u64>();
        k.bytes_whole_buffers += r.bytes_whole_buffers;
        k.bytes_app_sync += app_sync;
    });
}

/// At exit: the report file and the summary.
pub(crate) fn finish() {
    let cfg = config();
    if cfg.report.is_none() && !cfg.verbose {
        return;
    }
    // A thread still inside a launch at exit holds the lock: no report then,
    // rather than a process that never ends.
    let stats = match STATS.try_lock() {
        Ok(s) => s,
        Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) => {
            eprintln!("clpart: error: no report: a launch was still running at exit");
            return;
        }
    };
    let kernels: Vec<&KernelStats> = stats.values().collect();
    let sync = SYNCS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
        .unwrap_or_default();
    let log = if logging() {
        match LOG.try_lock() {
            Ok(g) => Some(g),
            Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    } else {
        None
    };
    let log = log.as_ref().map(|g| g.as_ref());
    let empty = Log::default();
    let log = log.map(|l| l.unwrap_or(&empty));
    let report = Report {
        schema_version: SCHEMA_VERSION,
        programs: log.map(|l| {
            l.programs
                .iter()
                .map(|(source, options)| ProgramOut { source, options })
                .collect()
        }),
        launch_log: log.map(|l| &l.events[..]),
        launch_log_truncated: log.map(|l| l.truncated),
        bytes_total: kernels
            .iter()
            .map(|k| k.bytes_to_devices + k.bytes_from_devices)
            .sum(),
        bytes_whole_buffers: kernels.iter().map(|k| k.bytes_whole_buffers).sum(),
        n_analyses: kernels.iter().map(|k| k.analyses).sum(),
        n_builds: crate::analyses::n_builds(),
        bytes_app_sync: sync.bytes_app_sync_in + sync.bytes_app_sync_out,
        sync,
        devices: match &cfg.shares {
            Some(Ok(s)) => s
                .iter()
                .map(|&(index, share)| DeviceShare { index, share })
                .collect(),
            _ => Vec::new(),
        },
        kernels,
        mpi: crate::ranks::summary().and_then(|v| match v {
            serde_json::Value::Object(m) => Some(m),
            _ => None,
        }),
    };
    if let Some(path) = &cfg.report {
        let written = ranges_format::output::write_file(path, |w: &mut dyn Write| {
            let text = serde_json::to_string_pretty(&report).map_err(std::io::Error::other)?;
            w.write_all(text.as_bytes())?;
            w.write_all(b"\n")
        });
        if let Err(e) = written {
            eprintln!(
                "clpart: error: cannot write the report '{}': {e}",
                path.display()
            );
        }
    }
    if cfg.verbose {
        for k in &report.kernels {
            let why = k
                .reason
                .as_deref()
                .map(|r| format!(" (not split: {r})"))
                .unwrap_or_default();
            eprintln!(
                "clpart: kernel '{}': {} launches, {} split{why}; {} B to devices, {} B from devices; {} analyses",
                k.name, k.launches, k.split_launches, k.bytes_to_devices, k.bytes_from_devices, k.analyses
            );
        }
        eprintln!(
            "clpart: bytes moved {}, whole buffers {}, gathered for the application {}; application buffer sync {} in ({} buffers), {} out ({} buffers)",
            report.bytes_total,
            report.bytes_whole_buffers,
            report.sync.bytes_gathered,
            report.sync.bytes_app_sync_in,
            report.sync.n_app_syncs_in,
            report.sync.bytes_app_sync_out,
            report.sync.n_app_syncs_out
        );
        for e in &report.sync.app_sync_errors {
            eprintln!("clpart: error: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The launch log keeps at most `MAX_LOG_EVENTS` events and says when
    /// it left some out.
    #[test]
    fn the_launch_log_is_bounded() {
        let sync = || {
            Some(LogEvent::SyncOut {
                buffer: 0,
                bytes: 4,
                gathered: 0,
            })
        };
        for _ in 0..MAX_LOG_EVENTS {
            log_event(|_| sync());
        }
        let held = |f: &dyn Fn(&Log) -> (usize, bool)| {
            f(LOG.lock().unwrap().as_ref().expect("made by log_event"))
        };
        assert_eq!(
            held(&|l| (l.events.len(), l.truncated)),
            (MAX_LOG_EVENTS, false)
        );
        log_event(|_| sync());
        assert_eq!(
            held(&|l| (l.events.len(), l.truncated)),
            (MAX_LOG_EVENTS, true)
        );
    }
}
