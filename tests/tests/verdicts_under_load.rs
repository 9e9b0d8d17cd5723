//! Whether a kernel splits never depends on the machine's load: the
//! analysis is bounded by isl's operation limit, the same everywhere, and
//! the wall clock only stops a single slow step as a last resort
//! (`access_analysis::DEFAULT_TIME_BUDGET_MS`); the counts, which only
//! inform, keep a wall-clock limit of their own. The corpus kernels whose
//! analysis takes longest are analyzed at their first `@run` on an idle
//! machine, then pinned to one core beside two processes spinning on it
//! (about a third of a core each): the verdicts, reasons, ranges, boxes,
//! assumptions and subkernels must be the same. Counts and what cut them
//! short are left out of the comparison.

use clpart_tests::{corpus, slow_corpus, CorpusKernel};
use std::process::{Child, Command};

/// The kernels whose analysis is slowest (by `clpart analyze` in an
/// optimized build: 0.4-1 s each), and the slow set.
const HEAVY: &[&str] = &[
    "helper_block_score",
    "stencil7_interior",
    "stencil3d",
    "matmul_tiled",
    "conv3d_plane",
    "macro_subscript_stencil",
    "stencil3d_zmarch",
    "heat3d_plane",
];

/// What decides a launch of `k`: everything of its analysis at its first
/// `@run` but the counts.
fn verdicts(k: &CorpusKernel) -> String {
    let file = k.file();
    let mut session = session::Session::from_source(&file, &k.source, &k.build)
        .unwrap_or_else(|e| panic!("{}: {e}", k.name));
    let rf = session
        .ranges_for_launch(&k.name, &k.launch_config(0))
        .unwrap_or_else(|e| panic!("{}: {e}", k.name));
    let mut out = String::new();
    for kr in &rf.kernels {
        out += &format!(
            "{}: splittable {} along {:?}, reason {:?}\nassumptions {:?}\nsubkernel {:?}\n",
            kr.name, kr.splittable, kr.split_dim, kr.reason, kr.assumptions, kr.subkernel
        );
        for a in &kr.arrays {
            out += &format!(
                "  {} {:?} {:?} total {:?} slice {:?} read {:?} write {:?} verdict {:?} boxes {:?} reduction {:?} checked {}\n",
                a.name,
                a.mode,
                a.status,
                a.total,
                a.slice,
                a.read_slice,
                a.write_slice,
                a.write,
                a.boxes,
                a.reduction,
                a.checked
            );
        }
    }
    out
}

/// Processes spinning on core 0, killed when dropped.
struct Hogs(Vec<Child>);

impl Drop for Hogs {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Pins process `pid` to the cores `cpus` (`taskset` from util-linux).
fn pin(pid: u32, cpus: &str) {
    let s = Command::new("taskset")
        .args(["-a", "-p", "-c", cpus, &pid.to_string()])
        .output()
        .expect("taskset (util-linux) runs");
    assert!(s.status.success(), "taskset: {s:?}");
}

#[test]
fn verdicts_do_not_depend_on_the_machines_load() {
    let all: Vec<CorpusKernel> = corpus().into_iter().chain(slow_corpus()).collect();
    let kernels: Vec<&CorpusKernel> = all
        .iter()
        .filter(|k| HEAVY.contains(&k.name.as_str()) || k.path.to_string_lossy().contains("slow"))
        .collect();
    assert_eq!(kernels.len(), HEAVY.len() + slow_corpus().len());
    // no analysis cache: each is analyzed here, both times
    let cache = tempfile::tempdir().unwrap();
    std::env::set_var("CLPART_CACHE_DIR", cache.path());
    std::env::set_var("CLPART_CACHE", "0");
    let idle: Vec<String> = kernels.iter().map(|k| verdicts(k)).collect();
    let cpus = std::fs::read_to_string("/sys/fs/cgroup/cpuset.cpus.effective")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| format!("0-{}", num_cpus() - 1));
    let hogs = Hogs(
        (0..2)
            .map(|_| {
                Command::new("taskset")
                    .args(["-c", "0", "sh", "-c", "while :; do :; done"])
                    .spawn()
                    .expect("a spinning process")
            })
            .collect(),
    );
    pin(std::process::id(), "0");
    let loaded: Vec<String> = kernels.iter().map(|k| verdicts(k)).collect();
    pin(std::process::id(), &cpus);
    drop(hogs);
    for ((k, a), b) in kernels.iter().zip(&idle).zip(&loaded) {
        assert_eq!(a, b, "{}: the verdicts differ under load", k.name);
    }
}

fn num_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
