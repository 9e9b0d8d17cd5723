//! What earlier runs of a program measured: per launch configuration, the
//! wall of a launch at home and on clpart's devices ([`Walls`]) and the
//! rate of each of clpart's devices ([`Record::rates`]), kept in clpart's
//! cache folder (`history/`, one file per program and set of devices) so
//! that a later run starts from them.
//!
//! A configuration an earlier run found faster at home then stays at home
//! from its first launch: its analysis is not read and its subkernels are
//! not built (in the launch, that is what a small kernel's launches would
//! otherwise pay for before their first measurement), and clpart's devices
//! are measured again only when a stretch at home pays for it
//! ([`crate::home`]), as within one run. One found faster on clpart's
//! devices starts there without a probe at home, and at the shares its
//! devices' rates give (no probe round: a kernel launched once splits as
//! well as it did after its rounds). All of it is only a starting point:
//! the run measures again and stores its own.
//!
//! A file is keyed by the program's source and build options, the devices
//! clpart sees (name, type, compute units, memory, platform) and the
//! application's device; it holds at most [`MAX_CONFIGS`] configurations.
//! Unreadable or foreign files are ignored (the run measures afresh);
//! writes are atomic. `CLPART_CACHE=0` keeps no history.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use opencl_sys::{cl_command_queue, cl_device_id, CL_QUEUE_DEVICE, CL_SUCCESS};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::target;

/// The format of a history file.
const VERSION: u32 = 2;

/// Most configurations one file keeps.
pub(crate) const MAX_CONFIGS: usize = 256;

/// One configuration's walls (ms): a launch at home (the application's
/// device, probed between two `clFinish`es) and on clpart's devices (as
/// the application waited for it), each the median of the last measured.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
pub(crate) struct Walls {
    pub(crate) home_ms: f64,
    pub(crate) clpart_ms: f64,
    /// The first launch on clpart's devices (loading the subkernels).
    #[serde(default)]
    pub(crate) warmup_ms: Option<f64>,
}

impl Walls {
    fn valid(&self) -> bool {
        [self.home_ms, self.clpart_ms]
            .iter()
            .chain(self.warmup_ms.iter())
            .all(|w| w.is_finite() && *w >= 0.0)
    }
}

/// What a run measured of one configuration.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub(crate) struct Record {
    /// Both sides' walls, where both were measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) walls: Option<Walls>,
    /// Home's wall (ms) where clpart's devices were not measured (the
    /// launches passed through while their analysis was made).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) home_ms: Option<f64>,
    /// clpart's wall (ms) where home was not measured (a kernel launched
    /// once a run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) clpart_ms: Option<f64>,
    /// Each measured device's rate (device index, work-groups per ms), as
    /// the balancer measured it ([`launcher::Balancer::rates`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) rates: Vec<(usize, f64)>,
}

impl Record {
    /// Both sides' walls: as measured together, else as two runs measured
    /// each side alone (a kernel launched once a run: at home while its
    /// analysis was made, then on clpart's devices).
    pub(crate) fn both(&self) -> Option<Walls> {
        self.walls.or_else(|| {
            Some(Walls {
                home_ms: self.home_ms?,
                clpart_ms: self.clpart_ms?,
                warmup_ms: None,
            })
        })
    }

    /// This run's record `new` merged into an earlier one: the lesser wall
    /// of each side and the greater rate of each device. What inflates a
    /// measurement (a driver's compile at a launch, a wait for an analysis,
    /// a busy machine) only ever makes a wall longer or a rate lower, so
    /// one unlucky run cannot keep a configuration from the side that was
    /// faster; the run itself measures on from there.
    fn merged(&self, new: &Record) -> Record {
        let walls = match (self.walls, new.walls) {
            (Some(a), Some(b)) => Some(Walls {
                home_ms: a.home_ms.min(b.home_ms),
                clpart_ms: a.clpart_ms.min(b.clpart_ms),
                warmup_ms: b.warmup_ms.or(a.warmup_ms),
            }),
            (a, b) => b.or(a),
        };
        let mut rates = self.rates.clone();
        for &(d, r) in &new.rates {
            match rates.iter_mut().find(|x| x.0 == d) {
                Some(x) => x.1 = x.1.max(r),
                None => rates.push((d, r)),
            }
        }
        rates.sort_by_key(|x| x.0);
        let least = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => b.or(a),
        };
        Record {
            walls,
            home_ms: least(self.home_ms, new.home_ms),
            clpart_ms: least(self.clpart_ms, new.clpart_ms),
            rates,
        }
    }

    fn valid(&self) -> bool {
        self.walls.as_ref().is_none_or(Walls::valid)
            && [self.home_ms, self.clpart_ms]
                .iter()
                .flatten()
                .all(|w| w.is_finite() && *w >= 0.0)
            && self.rates.iter().all(|&(_, r)| r.is_finite() && r > 0.0)
    }
}

#[derive(Serialize, Deserialize, Default)]
struct File {
    version: u32,
    /// By the configuration's balancer key (kernel, work-group size,
    /// work-groups to a power of two).
    configs: BTreeMap<String, Record>,
}

/// The history files of this process's programs.
#[derive(Default)]
pub(crate) struct History {
    /// Read (or found missing) files, by file name.
    files: HashMap<String, BTreeMap<String, Record>>,
    /// The file of each configuration seen (by balancer key).
    file_of: HashMap<String, String>,
}

impl History {
    /// What an earlier run measured of configuration `key` of a kernel of
    /// the program (`source`, `options`) launched on `queue`. Remembers
    /// which file the configuration's record goes to at exit.
    pub(crate) fn recall(
        &mut self,
        queue: cl_command_queue,
        source: &str,
        options: &[String],
        key: &str,
    ) -> Option<Record> {
        let dir = dir()?;
        let name = file_name(queue, source, options)?;
        let configs = self
            .files
            .entry(name.clone())
            .or_insert_with(|| read(&dir.join(&name)).unwrap_or_default());
        let record = configs.get(key).cloned();
        self.file_of.insert(key.to_string(), name);
        record
    }

    /// Stores what this run measured (`measured`, by balancer key) into
    /// the files of their configurations; a file whose records did not
    /// change is not written. Failures are ignored (the next run measures
    /// afresh).
    pub(crate) fn save(&mut self, measured: impl IntoIterator<Item = (String, Record)>) {
        let Some(dir) = dir() else { return };
        let mut changed: Vec<String> = Vec::new();
        for (key, record) in measured {
            let Some(name) = self.file_of.get(&key) else {
                continue;
            };
            let Some(configs) = self.files.get_mut(name) else {
                continue;
            };
            let record = match configs.get(&key) {
                Some(old) => old.merged(&record),
                None => record,
            };
            if record.valid() && configs.get(&key) != Some(&record) {
                if configs.len() >= MAX_CONFIGS && !configs.contains_key(&key) {
                    continue;
                }
                configs.insert(key, record);
                if !changed.contains(name) {
                    changed.push(name.clone());
                }
            }
        }
        for name in changed {
            let file = File {
                version: VERSION,
                configs: self.files[&name].clone(),
            };
            let Ok(text) = ron::to_string(&file) else {
                continue;
            };
            if std::fs::create_dir_all(&dir).is_err() {
                return;
            }
            let _ = ranges_format::output::write_file(&dir.join(&name), |w| {
                w.write_all(text.as_bytes())
            });
        }
    }
}

/// The history folder, or `None` when clpart keeps no cache.
fn dir() -> Option<PathBuf> {
    match launcher::cache_root()? {
        launcher::CacheRoot::Given(d) | launcher::CacheRoot::Default(d) => Some(d.join("history")),
    }
}

/// The configurations of a history file; `None` when it is missing,
/// unreadable, of another format or holds a wall that is not one.
fn read(path: &std::path::Path) -> Option<BTreeMap<String, Record>> {
    let text = std::fs::read_to_string(path).ok()?;
    let file: File = ron::from_str(&text).ok()?;
    (file.version == VERSION
        && file.configs.len() <= MAX_CONFIGS
        && file.configs.values().all(Record::valid))
    .then_some(file.configs)
}

/// The file of a program launched on `queue`: a hash of its source and
/// options, clpart's devices and the application's device among them.
fn file_name(queue: cl_command_queue, source: &str, options: &[String]) -> Option<String> {
    let runtime = crate::analyses::runtime().ok()?;
    let app = app_device(queue).and_then(|d| runtime.device_index_of(d as *mut _));
    let mut h = Sha256::new();
    h.update(format!("clpart history {VERSION}\n"));
    for d in runtime.devices() {
        h.update(format!("device {d}\n"));
    }
    h.update(format!("application's device {app:?}\n"));
    for o in options {
        h.update(format!("option {} {o}\n", o.len()));
    }
    h.update(source.as_bytes());
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Some(format!("{}.ron", &hex[..32]))
}

/// The device of the application's queue.
fn app_device(queue: cl_command_queue) -> Option<cl_device_id> {
    let info = target().clGetCommandQueueInfo?;
    let mut device: cl_device_id = std::ptr::null_mut();
    // SAFETY: a `cl_device_id` answer into `device`.
    let r = unsafe {
        info(
            queue,
            CL_QUEUE_DEVICE,
            std::mem::size_of::<cl_device_id>(),
            &mut device as *mut cl_device_id as *mut std::ffi::c_void,
            std::ptr::null_mut(),
        )
    };
    (r == CL_SUCCESS && !device.is_null()).then_some(device)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_reads_back_and_bad_ones_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.ron");
        let mut configs = BTreeMap::new();
        configs.insert(
            "k local 16 groups ~2^5".to_string(),
            Record {
                walls: Some(Walls {
                    home_ms: 0.25,
                    clpart_ms: 1.5,
                    warmup_ms: Some(9.0),
                }),
                home_ms: None,
                clpart_ms: None,
                rates: vec![(0, 2.5), (1, 0.5)],
            },
        );
        let text = ron::to_string(&File {
            version: VERSION,
            configs: configs.clone(),
        })
        .unwrap();
        std::fs::write(&path, &text).unwrap();
        assert_eq!(read(&path), Some(configs));
        for bad in [
            text.replace("version:2", "version:9"),
            text.replace("0.25", "-1.0"),
            text.replace("0.5)", "0.0)"),
            text.replace("rates:", "home_ms:Some(-2.0),rates:"),
            "(version: 2, configs: {\"k\": (walls: Some((home_ms: 1.0)))})".to_string(),
            "garbage".to_string(),
        ] {
            std::fs::write(&path, bad).unwrap();
            assert_eq!(read(&path), None);
        }
        assert_eq!(read(&dir.path().join("missing.ron")), None);
    }

    /// Runs merge by the lesser walls and the greater rates: an inflated
    /// measurement does not displace a better one.
    #[test]
    fn records_merge_by_the_best_measurements() {
        let walls = |h, c| {
            Some(Walls {
                home_ms: h,
                clpart_ms: c,
                warmup_ms: None,
            })
        };
        let old = Record {
            walls: walls(5.0, 1.2),
            home_ms: Some(0.5),
            clpart_ms: None,
            rates: vec![(0, 2.0), (1, 3.0)],
        };
        let new = Record {
            walls: walls(4.0, 9.0),
            home_ms: Some(0.25),
            clpart_ms: Some(3.0),
            rates: vec![(1, 1.0), (2, 4.0)],
        };
        assert_eq!(
            old.merged(&new),
            Record {
                walls: walls(4.0, 1.2),
                home_ms: Some(0.25),
                clpart_ms: Some(3.0),
                rates: vec![(0, 2.0), (1, 3.0), (2, 4.0)],
            }
        );
        // each side alone, in two runs
        let home = Record {
            home_ms: Some(1.5),
            ..Record::default()
        };
        let clpart = Record {
            clpart_ms: Some(6.4),
            ..Record::default()
        };
        assert_eq!(home.both(), None);
        assert_eq!(home.merged(&clpart).both(), walls(1.5, 6.4));
        let none = Record::default();
        assert_eq!(none.merged(&new), new);
        assert_eq!(old.merged(&none), old);
    }
}
