//! Split launches across MPI ranks (`mpirun -n N clpart exec -- ./app`,
//! the layer built with its feature `mpi`).
//!
//! Rank 0's `clpart exec` leaves MPI to the application it runs: the
//! layer, inside the application, starts MPI when the loader first calls
//! it ([`start`], from `clInitLayer`; `CLPART_LAYER_RANKS` says how many
//! ranks the job has), and every other rank's `clpart exec` serves it
//! (`mpi_ranks::serve`). A split launch then runs through one
//! `mpi_ranks::Coordinator` ([`launch`]): the work-groups of the split
//! dimension divide among the ranks by the rank shares
//! (`CLPART_LAYER_RANK_SPLIT`, or measured ones under `auto`), each rank
//! is sent only the elements it lacks, and what a rank writes stays there.
//!
//! Rank 0's copy of an application buffer is the layer's resident copy
//! ([`crate::resident::Resident`]), lent to the coordinator's buffer set for
//! each call. What rank 0 lacks of it is gathered before the layer reads
//! it for the application ([`gather`]); what the application writes into
//! it makes the other ranks' copies of those elements out of date
//! ([`host_wrote`]).
//!
//! A rank that fails or does not answer within `CLPART_LAYER_RANK_TIMEOUT`
//! seconds is named in the report and on stderr; from then on every split
//! launch and every read of an element only the ranks held fails with an
//! OpenCL error, and at exit rank 0 stops the job (`MPI_Abort`) rather
//! than wait for a rank that may never answer.
//!
//! Without the feature `mpi` the layer has no ranks: [`active`] is false
//! and a job under `mpirun` runs each rank's application on its own.

#[cfg(feature = "mpi")]
pub(crate) use with_mpi::*;
#[cfg(not(feature = "mpi"))]
pub(crate) use without_mpi::*;

/// The number of ranks the job has, as `clpart exec` tells the layer.
const RANKS_VAR: &str = "CLPART_LAYER_RANKS";

/// What a launch across ranks did, for the report.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub(crate) struct RankPart {
    pub(crate) rank: i32,
    /// Work-groups `[lo, hi)` of the split dimension.
    pub(crate) window: (u64, u64),
    pub(crate) work_groups: u64,
    pub(crate) devices: usize,
    pub(crate) bytes_to_rank: u64,
    pub(crate) bytes_from_rank: u64,
    pub(crate) bytes_to_peers: u64,
    /// The rank's run of its window, ms.
    pub(crate) wall_ms: f64,
}

/// What went wrong in a launch across ranks.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) enum Failure {
    /// A rank failed or stopped answering: the elements it held are lost
    /// to the application (the reason).
    Rank(String),
    /// The launch did not run, and nothing was lost (the reason).
    Launch(String),
}

#[cfg(not(feature = "mpi"))]
mod without_mpi {
    use super::*;
    use crate::resident::Resident;
    use launcher::{KernelArgs, NdRange, Plan, RunReport};

    /// Without MPI: a job under `mpirun` is N applications on their own.
    pub(crate) fn start() {
        if std::env::var_os(RANKS_VAR).is_some() {
            eprintln!("clpart: error: the layer was built without the feature `mpi`: every rank runs the application on its own (build it with `cargo build -p layer --features mpi`)");
        }
    }
    pub(crate) fn active() -> bool {
        false
    }
    pub(crate) fn launch(
        _: &mut Plan,
        _: &NdRange,
        _: &mut KernelArgs,
        _: &mut [(u32, usize, &mut Resident)],
        _: &str,
    ) -> Result<(RunReport, Vec<RankPart>, u64), Failure> {
        Err(Failure::Launch("no ranks".into()))
    }
    pub(crate) fn gather(_: usize, _: &mut Resident) -> Result<u64, String> {
        Ok(0)
    }
    pub(crate) fn host_wrote(_: usize, _: Option<&[(usize, usize)]>) {}
    pub(crate) fn forget(_: usize) {}
    pub(crate) fn summary() -> Option<serde_json::Value> {
        None
    }
    pub(crate) fn finish() {}
}

#[cfg(feature = "mpi")]
mod with_mpi {
    use super::*;
    use crate::resident::Resident;
    use launcher::{
        BufferId, BufferSet, DeviceBuffer, ElemType, HostBuffer, KernelArgs, LaunchOptions,
        NdRange, Plan, RunReport, Runs,
    };
    use mpi_ranks::{Coordinator, RanksError, World};
    use std::collections::HashMap;
    use std::sync::Mutex;
    use std::time::Duration;

    /// The rank shares (`IDX:SHARE,...` naming ranks, or `auto`).
    const SPLIT_VAR: &str = "CLPART_LAYER_RANK_SPLIT";
    /// Seconds rank 0 waits for one answer of a rank.
    const TIMEOUT_VAR: &str = "CLPART_LAYER_RANK_TIMEOUT";
    /// A file the layer makes once MPI started (`clpart exec` on rank 0
    /// stops the other ranks itself when the application never did).
    const STARTED_VAR: &str = "CLPART_LAYER_RANKS_STARTED";

    /// One application buffer known to the coordinator.
    struct Known {
        id: BufferId,
        idx: usize,
        elem: ElemType,
        len: u64,
    }

    struct Ranks {
        world: &'static World,
        coord: Coordinator<'static>,
        set: BufferSet,
        known: HashMap<usize, Known>,
        /// The rank shares when fixed; under `auto`, the starting ones.
        shares: Vec<f64>,
        auto: bool,
        /// Under `auto`, per balancer key, the shares measured so far.
        measured: HashMap<String, Vec<f64>>,
        /// Set once a rank failed: the reason.
        failed: Option<String>,
        /// Per rank: work-groups run, most devices used.
        work_groups: Vec<u64>,
        devices: Vec<usize>,
        launches_divided: u64,
        launches: u64,
        bytes_whole_buffers: u64,
    }

    // SAFETY: MPI was started for calls from any thread, one at a time
    // (`MPI_THREAD_SERIALIZED`, `World::from_env_serialized`), and every
    // use of the world and the coordinator is under [`RANKS`]'s lock.
    unsafe impl Send for Ranks {}

    static RANKS: Mutex<Option<Ranks>> = Mutex::new(None);
    /// Why the ranks could not start (reported; launches stay on rank 0).
    static START_FAILED: Mutex<Option<String>> = Mutex::new(None);

    fn lock() -> std::sync::MutexGuard<'static, Option<Ranks>> {
        RANKS.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts MPI in the application when `clpart exec` runs it as rank 0
    /// of a job (once; from `clInitLayer`).
    pub(crate) fn start() {
        let Some(n) = std::env::var(RANKS_VAR).ok() else {
            return;
        };
        let mut g = lock();
        if g.is_some() {
            return;
        }
        let fail = |why: String| {
            eprintln!("clpart: error: {why}");
            *START_FAILED.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
        };
        let Some(world) = World::from_env_serialized() else {
            return fail(format!("{RANKS_VAR}={n}, but this process is not one of several MPI ranks that can take calls from any thread: launches run on rank 0 only"));
        };
        let world: &'static World = Box::leak(Box::new(world));
        if let Some(p) = std::env::var_os(STARTED_VAR).filter(|p| !p.is_empty()) {
            let _ = std::fs::write(p, b"started\n");
        }
        let n_ranks = world.size() as usize;
        let split = std::env::var(SPLIT_VAR)
            .ok()
            .filter(|s| !s.trim().is_empty());
        let (shares, auto) = match mpi_ranks::rank_shares(split.as_deref(), n_ranks) {
            Ok(s) => s,
            Err(e) => {
                fail(format!("{SPLIT_VAR}: {e}; shares even over the ranks"));
                (vec![1.0 / n_ranks as f64; n_ranks], false)
            }
        };
        let mut coord = Coordinator::new(world);
        if let Some(s) = std::env::var(TIMEOUT_VAR)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
        {
            coord.timeout = Duration::from_secs(s.max(1));
        }
        *g = Some(Ranks {
            world,
            coord,
            set: BufferSet::new(),
            known: HashMap::new(),
            shares,
            auto,
            measured: HashMap::new(),
            failed: None,
            work_groups: vec![0; n_ranks],
            devices: vec![0; n_ranks],
            launches_divided: 0,
            launches: 0,
            bytes_whole_buffers: 0,
        });
    }

    /// Whether launches split across ranks.
    pub(crate) fn active() -> bool {
        lock().is_some()
    }

    /// A placeholder left in a resident copy while the set holds its buffer.
    fn placeholder(elem: &ElemType) -> DeviceBuffer {
        DeviceBuffer::new(HostBuffer::from_bytes(elem.clone(), Vec::new()))
    }

    impl Ranks {
        /// Lends `r`'s buffer to the set as the application's buffer `mem`
        /// (registered with the coordinator the first time, or afresh when
        /// its elements changed); returns its coordinator index.
        fn lend(&mut self, mem: usize, r: &mut Resident) -> usize {
            let elem = r.buf.elem().clone();
            let len = r.buf.len();
            if let Some(k) = self.known.get(&mem) {
                if k.elem != elem || k.len != len {
                    self.forget(mem);
                }
            }
            let buf = std::mem::replace(&mut r.buf, placeholder(&elem));
            match self.known.get(&mem) {
                Some(k) => {
                    // (an id the set gave: never refused)
                    self.set.put(k.id, buf).expect("an id the set gave");
                    k.idx
                }
                None => {
                    let id = self.set.add(buf);
                    let idx = self.coord.add(&self.set, id);
                    self.known.insert(mem, Known { id, idx, elem, len });
                    idx
                }
            }
        }

        /// Takes `mem`'s buffer back from the set into `r`.
        fn take_back(&mut self, mem: usize, r: &mut Resident) {
            if let Some(b) = self.known.get(&mem).and_then(|k| self.set.remove(k.id)) {
                r.buf = b;
            }
        }

        fn forget(&mut self, mem: usize) {
            if let Some(k) = self.known.remove(&mem) {
                if self.failed.is_none() {
                    self.coord.forget(k.idx);
                }
                self.set.remove(k.id);
            }
        }

        /// A rank failed: remembered, said once.
        fn fail(&mut self, e: &RanksError) -> String {
            let why = format!("across ranks: {e}");
            if self.failed.is_none() {
                eprintln!("clpart: error: {why}; the application's next calls that need what the ranks held fail");
                self.failed = Some(why.clone());
            }
            why
        }
    }

    /// Runs `plan`'s kernel over `nd` across the ranks, with the buffer
    /// arguments `bound` (`(argument index, application buffer, rank 0's
    /// copy)`); `args` holds placeholders there. Returns rank 0's report
    /// (the launch as a whole where rank 0 ran no window), each rank's part,
    /// and the element bytes over MPI.
    pub(crate) fn launch(
        plan: &mut Plan,
        nd: &NdRange,
        args: &mut KernelArgs,
        bound: &mut [(u32, usize, &mut Resident)],
        key: &str,
    ) -> Result<(RunReport, Vec<RankPart>, u64), Failure> {
        let mut g = lock();
        let Some(ranks) = g.as_mut() else {
            return Err(Failure::Launch("no ranks".into()));
        };
        if let Some(why) = &ranks.failed {
            return Err(Failure::Rank(why.clone()));
        }
        let mut bindings = Vec::with_capacity(bound.len());
        for (arg, mem, r) in bound.iter_mut() {
            bindings.push((*arg, ranks.lend(*mem, r)));
        }
        let shares = match ranks.auto {
            true => ranks
                .measured
                .get(key)
                .cloned()
                .unwrap_or_else(|| ranks.shares.clone()),
            false => ranks.shares.clone(),
        };
        // the layer's report has no exact footprint: no counts
        let options = LaunchOptions {
            exact_bytes: false,
            ..Default::default()
        };
        let out = ranks.coord.launch(
            &mut ranks.set,
            plan,
            nd,
            args,
            &bindings,
            &shares,
            None,
            &options,
        );
        for (_, mem, r) in bound.iter_mut() {
            ranks.take_back(*mem, r);
        }
        let out = match out {
            Ok(o) => o,
            // rank 0's own launcher failed, and no other rank ran a window
            // (the coordinator calls that a rank failure): nothing is lost
            // beyond what the launcher says
            Err(RanksError::Launch(e)) => return Err(Failure::Launch(e.to_string())),
            Err(e) => return Err(Failure::Rank(ranks.fail(&e))),
        };
        if ranks.auto && out.divided {
            let mut s = shares;
            mpi_ranks::rebalance(&mut s, &out.ranks);
            ranks.measured.insert(key.to_string(), s);
        }
        ranks.launches += 1;
        ranks.launches_divided += u64::from(out.divided);
        ranks.bytes_whole_buffers += out.bytes_whole_buffers;
        let parts: Vec<RankPart> = out
            .ranks
            .iter()
            .map(|r| RankPart {
                rank: r.rank,
                window: r.window,
                work_groups: r.work_groups,
                devices: r.n_devices,
                bytes_to_rank: r.bytes_to_rank,
                bytes_from_rank: r.bytes_from_rank,
                bytes_to_peers: r.bytes_to_peers,
                wall_ms: r.wall_ms,
            })
            .collect();
        for p in &parts {
            let i = p.rank as usize;
            ranks.work_groups[i] += p.work_groups;
            ranks.devices[i] = ranks.devices[i].max(p.devices);
        }
        let mut report = out.rank0.clone().unwrap_or_else(|| RunReport {
            wall_ms: out.wall_ms,
            ..RunReport::nothing_ran(&plan.kernel().name, nd, plan.kernel().split_dim)
        });
        if out.divided {
            report.split = true;
            report.reason = None;
        } else {
            // whole on rank 0: split only where rank 0's own devices shared it
            let shared = report.devices.iter().filter(|d| d.work_groups > 0).count() > 1;
            report.split &= shared;
            if !shared {
                report.reason = out.reason.clone().or(report.reason.take());
            }
        }
        report.bytes_whole_buffers += out.bytes_whole_buffers;
        Ok((report, parts, out.bytes_mpi))
    }

    /// Makes rank 0's copy `r` of the application's buffer `mem` hold
    /// every element, fetching what only other ranks hold; returns the
    /// bytes moved.
    pub(crate) fn gather(mem: usize, r: &mut Resident) -> Result<u64, String> {
        let mut g = lock();
        let Some(ranks) = g.as_mut() else {
            return Ok(0);
        };
        let Some(idx) = ranks.known.get(&mem).map(|k| k.idx) else {
            return Ok(0);
        };
        if ranks.coord.on_host(idx) {
            return Ok(0);
        }
        if let Some(why) = &ranks.failed {
            return Err(why.clone());
        }
        ranks.lend(mem, r);
        let moved = ranks.coord.gather(&mut ranks.set, idx);
        ranks.take_back(mem, r);
        moved.map_err(|e| ranks.fail(&e))
    }

    /// Rank 0's copy of `mem` was written by the application: at these
    /// element runs `[lo, hi)`, or (`None`) whole.
    pub(crate) fn host_wrote(mem: usize, runs: Option<&[(usize, usize)]>) {
        let mut g = lock();
        let Some(ranks) = g.as_mut() else { return };
        let Some(idx) = ranks.known.get(&mem).map(|k| k.idx) else {
            return;
        };
        match runs {
            None => ranks.coord.host_wrote_all(idx),
            Some(runs) => {
                let elems = Runs::from_intervals(
                    runs.iter()
                        .filter(|(lo, hi)| hi > lo)
                        .map(|&(lo, hi)| (lo as i64, hi as i64 - 1))
                        .collect(),
                );
                ranks.coord.host_wrote(idx, &elems);
            }
        }
    }

    /// The application released `mem`: the ranks forget it.
    pub(crate) fn forget(mem: usize) {
        if let Some(ranks) = lock().as_mut() {
            ranks.forget(mem);
        }
    }

    /// The report's part: bytes over MPI and per rank.
    pub(crate) fn summary() -> Option<serde_json::Value> {
        if let Some(why) = START_FAILED
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        {
            return Some(serde_json::json!({ "ranks_error": why }));
        }
        let g = lock();
        let ranks = g.as_ref()?;
        let totals = ranks.coord.totals();
        let bytes_mpi: u64 = totals
            .iter()
            .map(|t| t.bytes_to_rank + t.bytes_from_rank)
            .sum();
        let per_rank: Vec<serde_json::Value> = totals
            .iter()
            .enumerate()
            .map(|(i, t)| {
                serde_json::json!({
                    "rank": t.rank,
                    "devices": ranks.devices[i],
                    "work_groups": ranks.work_groups[i],
                    "bytes_to_rank": t.bytes_to_rank,
                    "bytes_from_rank": t.bytes_from_rank,
                    "bytes_to_peers": t.bytes_to_peers,
                    "launches": t.launches,
                })
            })
            .collect();
        Some(serde_json::json!({
            "n_ranks": totals.len(),
            "bytes_mpi": bytes_mpi,
            "bytes_mpi_whole_buffers": ranks.bytes_whole_buffers,
            "rank_launches": ranks.launches,
            "rank_launches_divided": ranks.launches_divided,
            "ranks": per_rank,
            "ranks_error": ranks.failed,
        }))
    }

    /// At exit: the other ranks are told to finish and MPI ends; after a
    /// rank failed, the job is stopped instead (a rank that does not answer
    /// would hold `MPI_Finalize` for good).
    pub(crate) fn finish() {
        let Some(mut ranks) = lock().take() else {
            return;
        };
        if let Some(why) = &ranks.failed {
            eprintln!("clpart: error: {why}: stopping the job");
            ranks.world.abort(2);
        }
        ranks.coord.finish();
        let world = ranks.world;
        drop(ranks);
        // SAFETY: leaked in `start`; the coordinator that borrowed it is
        // gone, and nothing else holds it: MPI ends here.
        drop(unsafe { Box::from_raw(world as *const World as *mut World) });
    }
}
