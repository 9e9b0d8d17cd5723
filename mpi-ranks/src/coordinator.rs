//! Rank 0: the buffers' owners, the sets each rank lacks, the messages.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use launcher::{
    ArgValue, BufferId, BufferSet, Coherence, Holder, KernelArgs, LaunchOptions, NdRange, Plan,
    RankSlices, RunReport, Runs,
};
use mpi::traits::*;
use ranges_format::{ArgKind, Mode};
use serde::Serialize;

use crate::wire::{
    Cmd, LaunchCmd, LaunchedReply, Reply, WireArg, TAG_CMD, TAG_CMD_DATA, TAG_REPLY, TAG_REPLY_DATA,
};
use crate::{RanksError, Result, World};

/// Per rank, what crossed between it and rank 0 since the coordinator
/// started (rank 0's own entry counts nothing sent).
#[derive(Clone, Debug, Default, Serialize)]
pub struct RankTotals {
    pub rank: i32,
    /// Element bytes this rank received (from rank 0 or another rank).
    pub bytes_to_rank: u64,
    /// Element bytes this rank sent to rank 0.
    pub bytes_from_rank: u64,
    /// Element bytes this rank sent straight to other ranks (counted in
    /// their `bytes_to_rank` too).
    pub bytes_to_peers: u64,
    /// Bytes of the JSON headers both ways (commands, replies, range file entries).
    pub header_bytes: u64,
    /// Messages both ways.
    pub messages: u64,
    /// Launches this rank ran a window of.
    pub launches: u64,
}

/// One rank's part of one launch.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RankLaunch {
    pub rank: i32,
    /// Work-groups `[lo, hi)` of the split dimension.
    pub window: (u64, u64),
    /// The work-groups of the window in all (every dimension), as
    /// `clpart run` counts a device's: the window's length times the
    /// work-groups of the other dimensions.
    pub work_groups: u64,
    /// Element bytes sent to the rank for this launch (what it lacked of
    /// its sets), and their elements per array (`name`, intervals).
    pub bytes_to_rank: u64,
    /// Element bytes fetched from the rank into rank 0 during this launch
    /// (what rank 0 needed, or another rank before it could go straight).
    pub bytes_from_rank: u64,
    /// Element bytes the rank sent straight to other ranks (their halos;
    /// counted in their `bytes_to_rank` too).
    pub bytes_to_peers: u64,
    /// Elements sent, per array: `(name, inclusive intervals)`.
    pub sent: Vec<(String, Vec<(i64, i64)>)>,
    /// Elements the window writes, per array (they stay on the rank).
    pub written: Vec<(String, Vec<(i64, i64)>)>,
    /// Bytes a whole-buffer approach would send this rank and get back:
    /// every array it reads, whole, and every array it writes, whole.
    pub bytes_whole_buffers: u64,
    /// The rank's launch: its wall time (ms), devices used, bytes to and
    /// from its devices.
    pub wall_ms: f64,
    pub n_devices: usize,
    pub bytes_to_devices: u64,
    pub bytes_from_devices: u64,
}

/// A launch across ranks.
#[derive(Clone, Debug, Serialize)]
pub struct LaunchOutcome {
    /// Rank 0's own launch report (its window, or the whole kernel when it
    /// did not divide).
    #[serde(skip)]
    pub rank0: Option<RunReport>,
    /// Whether the launch divided across ranks.
    pub divided: bool,
    /// Why not, when it did not.
    pub reason: Option<String>,
    /// Per rank (every rank, in order).
    pub ranks: Vec<RankLaunch>,
    /// Element bytes over MPI in this launch (both ways).
    pub bytes_mpi: u64,
    /// What a whole-buffer approach would have sent (both ways).
    pub bytes_whole_buffers: u64,
    pub wall_ms: f64,
}

/// One buffer: rank 0's copy is in the caller's [`BufferSet`].
struct Buf {
    id: BufferId,
    elem_size: u64,
    len: u64,
    /// Which rank holds which valid elements: `Host` is rank 0, `Device(r)` rank r.
    coh: Coherence,
    /// Whether each rank has allocated it.
    allocated: Vec<bool>,
}

/// Rank 0 of a job ([`crate`]): keeps, per buffer, which rank holds what,
/// and runs launches across the ranks.
pub struct Coordinator<'w> {
    world: &'w World,
    /// Longest wait for one reply.
    pub timeout: Duration,
    bufs: Vec<Buf>,
    /// Plans sent, by a hash of their range file entry and source.
    plans: HashMap<u64, u32>,
    /// `(plan key, rank)` pairs already sent.
    plans_sent: std::collections::HashSet<(u64, usize)>,
    /// Plan keys by `Plan::uid`.
    plan_keys: HashMap<u64, u64>,
    totals: Vec<RankTotals>,
}

/// Longest sleep between two looks for a reply: a reply waits at most
/// this long to be seen (a launch's windows take a few ms), while a rank
/// 0 that waits long costs little of the core it shares.
const MAX_PAUSE: Duration = Duration::from_micros(100);

fn holder(rank: usize) -> Holder {
    if rank == 0 {
        Holder::Host
    } else {
        Holder::Device(rank)
    }
}

fn intervals(r: &Runs) -> Vec<(i64, i64)> {
    r.intervals().to_vec()
}

/// The items (buffer index, elements) that move some element.
fn non_empty(items: Vec<(usize, Runs)>) -> Vec<(usize, Runs)> {
    items.into_iter().filter(|(_, r)| !r.is_empty()).collect()
}

/// The items as a command names them.
fn on_wire(items: &[(usize, Runs)]) -> Vec<(u32, Vec<(i64, i64)>)> {
    items
        .iter()
        .map(|(b, r)| (*b as u32, intervals(r)))
        .collect()
}

impl<'w> Coordinator<'w> {
    /// Rank 0's coordinator over `world` (this process must be rank 0).
    pub fn new(world: &'w World) -> Coordinator<'w> {
        let n = world.size() as usize;
        Coordinator {
            world,
            timeout: Duration::from_secs(120),
            bufs: Vec::new(),
            plans: HashMap::new(),
            plans_sent: Default::default(),
            plan_keys: HashMap::new(),
            totals: (0..n)
                .map(|r| RankTotals {
                    rank: r as i32,
                    ..Default::default()
                })
                .collect(),
        }
    }

    /// Number of ranks.
    pub fn n_ranks(&self) -> usize {
        self.totals.len()
    }

    /// What crossed per rank so far.
    pub fn totals(&self) -> &[RankTotals] {
        &self.totals
    }

    /// Registers buffer `id` of `set` (valid on rank 0 only); returns its
    /// index for [`Coordinator::launch`] bindings.
    pub fn add(&mut self, set: &BufferSet, id: BufferId) -> usize {
        let b = set.get(id).expect("a buffer of the set");
        let n = self.n_ranks();
        self.bufs.push(Buf {
            id,
            elem_size: b.elem().size.max(1) as u64,
            len: b.len(),
            coh: Coherence::host_valid(b.len()),
            allocated: vec![false; n],
        });
        self.bufs.len() - 1
    }

    fn send(&mut self, rank: usize, cmd: &Cmd, data: Option<&[u8]>) {
        let text = serde_json::to_vec(cmd).expect("commands serialize");
        let p = self.world.world.process_at_rank(rank as i32);
        p.send_with_tag(&text[..], TAG_CMD);
        let t = &mut self.totals[rank];
        t.header_bytes += text.len() as u64;
        t.messages += 1;
        if let Some(d) = data.filter(|d| !d.is_empty()) {
            p.send_with_tag(d, TAG_CMD_DATA);
            t.bytes_to_rank += d.len() as u64;
            t.messages += 1;
        }
    }

    /// Waits (at most `timeout`) for one message with `tag` from `rank`.
    fn receive(&mut self, rank: usize, tag: i32, waiting_for: &str) -> Result<Vec<u8>> {
        let p = self.world.world.process_at_rank(rank as i32);
        let t0 = Instant::now();
        let mut pause = Duration::from_micros(20);
        loop {
            if let Some(probed) = p.immediate_matched_probe_with_tag(tag) {
                let (v, _) = probed.matched_receive_vec::<u8>();
                self.totals[rank].messages += 1;
                return Ok(v);
            }
            if t0.elapsed() > self.timeout {
                return Err(RanksError::Timeout {
                    rank: rank as i32,
                    secs: self.timeout.as_secs(),
                    waiting_for: waiting_for.to_string(),
                });
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(MAX_PAUSE);
        }
    }

    fn reply(&mut self, rank: usize, waiting_for: &str) -> Result<Reply> {
        let text = self.receive(rank, TAG_REPLY, waiting_for)?;
        self.totals[rank].header_bytes += text.len() as u64;
        let r: Reply = serde_json::from_slice(&text).map_err(|e| RanksError::Protocol {
            rank: rank as i32,
            message: e.to_string(),
        })?;
        match r {
            Reply::Failed(why) => Err(RanksError::RankFailed {
                rank: rank as i32,
                why,
            }),
            r => Ok(r),
        }
    }

    fn ensure_alloc(&mut self, set: &BufferSet, rank: usize, b: usize) {
        if self.bufs[b].allocated[rank] {
            return;
        }
        let db = set.get(self.bufs[b].id).expect("a buffer of the set");
        let cmd = Cmd::Alloc {
            id: b as u32,
            elem_type: db.elem().name.clone(),
            elem_size: db.elem().size,
            len: db.len(),
        };
        self.send(rank, &cmd, None);
        self.bufs[b].allocated[rank] = true;
    }

    /// Copies `items` (buffer index, elements) from `rank` into rank 0's
    /// copies and records it; returns the bytes moved.
    fn fetch(
        &mut self,
        set: &mut BufferSet,
        rank: usize,
        items: Vec<(usize, Runs)>,
    ) -> Result<u64> {
        let items = non_empty(items);
        if items.is_empty() {
            return Ok(0);
        }
        let wire = on_wire(&items);
        self.send(rank, &Cmd::Get { items: wire }, None);
        let Reply::Data { bytes } = self.reply(rank, "elements asked for")? else {
            return Err(RanksError::Protocol {
                rank: rank as i32,
                message: "expected data".into(),
            });
        };
        let data = if bytes > 0 {
            self.receive(rank, TAG_REPLY_DATA, "elements asked for")?
        } else {
            Vec::new()
        };
        let want: u64 = items
            .iter()
            .map(|(b, r)| r.n_elems() * self.bufs[*b].elem_size)
            .sum();
        if data.len() as u64 != want {
            return Err(RanksError::Protocol {
                rank: rank as i32,
                message: format!("sent {} bytes, {want} were asked for", data.len()),
            });
        }
        self.totals[rank].bytes_from_rank += want;
        let mut at = 0usize;
        for (b, runs) in &items {
            let es = self.bufs[*b].elem_size as usize;
            let db = set.get_mut(self.bufs[*b].id).expect("a buffer of the set");
            for &(l, h) in runs.intervals() {
                let n = (h - l + 1) as usize * es;
                db.write(l as u64, &data[at..at + n])?;
                at += n;
            }
            self.bufs[*b].coh.copied(Holder::Host, runs);
        }
        Ok(want)
    }

    /// Sends `items` (buffer index, elements, valid on rank 0) to `rank`
    /// and records it; returns the bytes moved.
    fn store(
        &mut self,
        set: &mut BufferSet,
        rank: usize,
        items: Vec<(usize, Runs)>,
    ) -> Result<u64> {
        let items = non_empty(items);
        if items.is_empty() {
            return Ok(0);
        }
        let mut data = Vec::new();
        for (b, runs) in &items {
            self.ensure_alloc(set, rank, *b);
            let db = set.get_mut(self.bufs[*b].id).expect("a buffer of the set");
            for &(l, h) in runs.intervals() {
                data.extend_from_slice(db.read(l as u64, (h - l + 1) as u64)?);
            }
        }
        let wire = on_wire(&items);
        self.send(
            rank,
            &Cmd::Put {
                items: wire,
                bytes: data.len() as u64,
            },
            Some(&data),
        );
        for (b, runs) in &items {
            self.bufs[*b].coh.copied(holder(rank), runs);
        }
        Ok(data.len() as u64)
    }

    /// Rank 0's copy of buffer `b` was written at `elems` (by its owner):
    /// the other ranks' copies of them are out of date.
    pub fn host_wrote(&mut self, b: usize, elems: &Runs) {
        self.bufs[b].coh.written(Holder::Host, elems);
    }

    /// Rank 0's copy of buffer `b` was written whole.
    pub fn host_wrote_all(&mut self, b: usize) {
        let all = self.bufs[b].coh.all();
        self.host_wrote(b, &all);
    }

    /// Whether rank 0 holds every element of buffer `b` (nothing to gather).
    pub fn on_host(&self, b: usize) -> bool {
        let c = &self.bufs[b].coh;
        c.valid(Holder::Host).n_elems() == c.len()
    }

    /// Forgets buffer `b` on every rank that allocated it (its owner
    /// released it); its index is not reused.
    pub fn forget(&mut self, b: usize) {
        for r in 1..self.n_ranks() {
            if std::mem::take(&mut self.bufs[b].allocated[r]) {
                self.send(r, &Cmd::Free { id: b as u32 }, None);
            }
        }
        self.bufs[b].coh = Coherence::host_valid(0);
        self.bufs[b].len = 0;
    }

    /// Sends `items` (buffer index, elements valid on rank `from`) from
    /// rank `from` straight to rank `to` and records it; returns the bytes
    /// moved. Nothing waits here: both ranks take their command in the
    /// order rank 0 issued it.
    fn peer(&mut self, set: &BufferSet, from: usize, to: usize, items: Vec<(usize, Runs)>) -> u64 {
        let items = non_empty(items);
        if items.is_empty() {
            return 0;
        }
        for (b, _) in &items {
            self.ensure_alloc(set, to, *b);
        }
        let bytes: u64 = items
            .iter()
            .map(|(b, r)| r.n_elems() * self.bufs[*b].elem_size)
            .sum();
        let wire = on_wire(&items);
        self.send(
            from,
            &Cmd::SendTo {
                to: to as i32,
                items: wire.clone(),
            },
            None,
        );
        self.send(
            to,
            &Cmd::RecvFrom {
                from: from as i32,
                items: wire,
                bytes,
            },
            None,
        );
        self.totals[from].bytes_to_peers += bytes;
        self.totals[to].bytes_to_rank += bytes;
        for (b, runs) in &items {
            self.bufs[*b].coh.copied(holder(to), runs);
        }
        bytes
    }

    /// Makes rank 0 hold every element of buffer `b`, fetching from the
    /// ranks only what it lacks; returns the bytes moved.
    pub fn gather(&mut self, set: &mut BufferSet, b: usize) -> Result<u64> {
        let all = self.bufs[b].coh.all();
        self.gather_runs(set, &[(b, all)])
    }

    fn gather_runs(&mut self, set: &mut BufferSet, want: &[(usize, Runs)]) -> Result<u64> {
        let mut per_rank: Vec<Vec<(usize, Runs)>> = vec![Vec::new(); self.n_ranks()];
        for (b, runs) in want {
            let plan = self.bufs[*b]
                .coh
                .plan_host(runs)
                .map_err(|lost| RanksError::Protocol {
                    rank: 0,
                    message: format!("buffer {b}: {lost}"),
                })?;
            for (r, rr) in plan {
                per_rank[r].push((*b, rr));
            }
        }
        let mut moved = 0;
        for (r, items) in per_rank.into_iter().enumerate() {
            moved += self.fetch(set, r, items)?;
        }
        Ok(moved)
    }

    /// Sends a plan to `rank` once.
    fn plan_idx(&mut self, plan: &Plan, rank: usize) -> Result<u32> {
        // (a plan's entry never changes: its text is made once)
        let (key, ron) = match self.plan_keys.get(&plan.uid()) {
            Some(&k) if self.plans_sent.contains(&(k, rank)) => return Ok(self.plans[&k]),
            _ => {
                let ron = ron::to_string(plan.kernel()).map_err(|e| RanksError::Protocol {
                    rank: 0,
                    message: format!("range file entry: {e}"),
                })?;
                let mut h = std::collections::hash_map::DefaultHasher::new();
                std::hash::Hash::hash(&(&ron, plan.source(), plan.build_options()), &mut h);
                let key = std::hash::Hasher::finish(&h);
                self.plan_keys.insert(plan.uid(), key);
                (key, ron)
            }
        };
        let n = self.plans.len() as u32;
        let idx = *self.plans.entry(key).or_insert(n);
        if self.plans_sent.insert((key, rank)) {
            let cmd = Cmd::Plan {
                idx,
                kernel_ron: ron,
                source: plan.source().to_string(),
                build_options: plan.build_options().to_vec(),
            };
            self.send(rank, &cmd, None);
        }
        Ok(idx)
    }

    /// Runs `plan`'s kernel over `nd` across the ranks: work-groups of the
    /// split dimension by `rank_shares` (one weight per rank), each rank's
    /// window among its own devices by `local_shares` (`None`: even). Every
    /// buffer argument must be bound (`(argument index, buffer index)`, see
    /// [`Coordinator::add`]); `args` holds placeholders there. What each
    /// rank writes stays there ([`Coordinator::gather`] brings it back).
    /// A launch that cannot divide runs whole on rank 0 after gathering.
    #[allow(clippy::too_many_arguments)]
    pub fn launch(
        &mut self,
        set: &mut BufferSet,
        plan: &mut Plan,
        nd: &NdRange,
        args: &mut KernelArgs,
        bindings: &[(u32, usize)],
        rank_shares: &[f64],
        local_shares: Option<&[(usize, f64)]>,
        options: &LaunchOptions,
    ) -> Result<LaunchOutcome> {
        let t0 = Instant::now();
        let n = self.n_ranks();
        let kname = plan.kernel().name.clone();
        for info in args.infos() {
            if matches!(info.kind, ArgKind::GlobalBuffer | ArgKind::ConstantBuffer)
                && !bindings.iter().any(|b| b.0 == info.index)
            {
                return Err(RanksError::Protocol {
                    rank: 0,
                    message: format!(
                        "kernel '{kname}': argument '{}' is not bound to a buffer",
                        info.name
                    ),
                });
            }
        }
        let set_bindings: Vec<(u32, BufferId)> = bindings
            .iter()
            .map(|&(a, b)| (a, self.bufs[b].id))
            .collect();
        let split_dim = plan
            .kernel()
            .split_dim
            .unwrap_or(0)
            .min(nd.work_dim().max(1) - 1);
        let windows = launcher::split_groups(nd.n_groups(split_dim), rank_shares);
        // work-groups per step of the split dimension
        let across = nd.n_groups_total() / nd.n_groups(split_dim).max(1);
        let local: Vec<(usize, f64)> = match local_shares {
            Some(s) => s.to_vec(),
            None => {
                let nd_ = plan.runtime().devices().len().max(1);
                (0..nd_).map(|d| (d, 1.0 / nd_ as f64)).collect()
            }
        };
        // the schedule sees rank 0's copies (their lengths; it reads no
        // element)
        let slices = set
            .with_shapes(args, &set_bindings, |shape| {
                plan.rank_slices(nd, shape, &windows, options.unchecked)
            })
            .and_then(|r| r)?;
        let mut ranks: Vec<RankLaunch> = (0..n)
            .map(|r| RankLaunch {
                rank: r as i32,
                window: windows[r],
                work_groups: (windows[r].1 - windows[r].0) * across,
                ..Default::default()
            })
            .collect();
        let sets = match slices {
            RankSlices::Unsplit(reason) => {
                // whole on rank 0, after gathering every bound buffer
                let want: Vec<(usize, Runs)> = bindings
                    .iter()
                    .map(|&(_, b)| (b, self.bufs[b].coh.all()))
                    .collect();
                let moved = self.gather_runs(set, &want)?;
                let r = set.launch(plan, nd, args, &set_bindings, &local, options)?;
                for &(a, b) in bindings {
                    if written_arg(plan, a) {
                        let all = self.bufs[b].coh.all();
                        self.bufs[b].coh.written(Holder::Host, &all);
                    }
                }
                for rl in ranks.iter_mut() {
                    rl.window = (0, 0);
                    rl.work_groups = 0;
                }
                ranks[0].window = (0, nd.n_groups(split_dim));
                ranks[0].work_groups = nd.n_groups_total();
                ranks[0].wall_ms = r.wall_ms;
                return Ok(LaunchOutcome {
                    rank0: Some(r),
                    divided: false,
                    reason: Some(reason),
                    ranks,
                    bytes_mpi: moved,
                    bytes_whole_buffers: 0,
                    wall_ms: t0.elapsed().as_secs_f64() * 1e3,
                });
            }
            RankSlices::Split(s) => s,
        };
        let buf_of = |arg: u32| {
            bindings
                .iter()
                .find(|b| b.0 == arg)
                .map(|b| b.1)
                .expect("checked above")
        };
        // 1. what each rank lacks: what only another rank holds straight
        // from it (halos between neighbours), then from rank 0, which
        // first fetches what it lacks itself
        let mut bytes_mpi = 0;
        for r in 1..n {
            if ranks[r].work_groups == 0 {
                continue;
            }
            let mut from: Vec<Vec<(usize, Runs)>> = vec![Vec::new(); n];
            for s in &sets[r] {
                let b = buf_of(s.arg_index);
                let need =
                    self.bufs[b]
                        .coh
                        .plan_need(r, &s.need)
                        .map_err(|l| RanksError::Protocol {
                            rank: 0,
                            message: format!("array '{}': {l}", s.name),
                        })?;
                for (src, runs) in need.to_host {
                    from[src].push((b, runs));
                }
            }
            for (src, items) in from.into_iter().enumerate() {
                let sent: Vec<(String, Vec<(i64, i64)>)> = items
                    .iter()
                    .filter(|(_, x)| !x.is_empty())
                    .map(|(b, x)| (name_of(&sets[r], bindings, *b), intervals(x)))
                    .collect();
                let m = self.peer(set, src, r, items);
                ranks[src].bytes_to_peers += m;
                ranks[r].bytes_to_rank += m;
                ranks[r].sent.extend(sent);
                bytes_mpi += m;
            }
        }
        for r in 0..n {
            if ranks[r].work_groups == 0 {
                continue;
            }
            let mut to_rank: Vec<(usize, Runs)> = Vec::new();
            let mut from: Vec<Vec<(usize, Runs)>> = vec![Vec::new(); n];
            for s in &sets[r] {
                let b = buf_of(s.arg_index);
                let lost = |l: launcher::Lost| RanksError::Protocol {
                    rank: 0,
                    message: format!("array '{}': {l}", s.name),
                };
                if r == 0 {
                    for (src, runs) in self.bufs[b].coh.plan_host(&s.need).map_err(lost)? {
                        from[src].push((b, runs));
                    }
                } else {
                    let need = self.bufs[b].coh.plan_need(r, &s.need).map_err(lost)?;
                    for (src, runs) in need.to_host {
                        from[src].push((b, runs));
                    }
                    to_rank.push((b, need.to_device));
                }
            }
            for (src, items) in from.into_iter().enumerate() {
                let m = self.fetch(set, src, items)?;
                ranks[src].bytes_from_rank += m;
                bytes_mpi += m;
            }
            if r > 0 {
                let from_peers = std::mem::take(&mut ranks[r].sent);
                ranks[r].sent = from_peers
                    .into_iter()
                    .chain(
                        to_rank
                            .iter()
                            .filter(|(_, x)| !x.is_empty())
                            .map(|(b, x)| (name_of(&sets[r], bindings, *b), intervals(x))),
                    )
                    .collect();
                let m = self.store(set, r, to_rank)?;
                ranks[r].bytes_to_rank += m;
                bytes_mpi += m;
            }
        }
        // 2. the windows: the other ranks first, then rank 0's own
        for (r, rk) in ranks.iter().enumerate().skip(1) {
            if rk.work_groups == 0 {
                continue;
            }
            for &(_, b) in bindings {
                self.ensure_alloc(set, r, b);
            }
            let idx = self.plan_idx(plan, r)?;
            let wire_args = args
                .values()
                .iter()
                .map(|v| match v {
                    ArgValue::Scalar { bytes, .. } => WireArg::Scalar(bytes.clone()),
                    ArgValue::Buffer(_) => WireArg::Buffer,
                    ArgValue::Local { bytes } => WireArg::Local(*bytes),
                })
                .collect();
            let cmd = Cmd::Launch(LaunchCmd {
                plan: idx,
                global: nd.global.clone(),
                local: nd.local.clone(),
                offset: nd.offset.clone(),
                args: wire_args,
                bindings: bindings.iter().map(|&(a, b)| (a, b as u32)).collect(),
                window: rk.window,
                shares: local_shares.map(<[_]>::to_vec),
                unchecked: options.unchecked,
                mem_cap_bytes: options.mem_cap_bytes,
            });
            self.send(r, &cmd, None);
            self.totals[r].launches += 1;
        }
        let mut rank0 = None;
        if ranks[0].work_groups > 0 {
            plan.set_group_window(Some(ranks[0].window));
            let r = set.launch(plan, nd, args, &set_bindings, &local, options);
            plan.set_group_window(None);
            // the other ranks run their windows meanwhile: a launch that
            // stops here leaves their writes unrecorded, so what they hold
            // can no longer be trusted (a rank failure, never a launch to
            // try again)
            let others_ran = ranks.iter().skip(1).any(|rk| rk.work_groups > 0);
            let r = match r {
                Ok(r) => r,
                Err(e) if others_ran => {
                    return Err(RanksError::RankFailed {
                        rank: 0,
                        why: format!("its window failed while the other ranks ran theirs: {e}"),
                    })
                }
                Err(e) => return Err(e.into()),
            };
            if r.guard_fired {
                return Err(RanksError::RankFailed { rank: 0, why: "the run-time guard caught an access outside the analyzed ranges (an analysis defect)".into() });
            }
            ranks[0].wall_ms = r.wall_ms;
            ranks[0].n_devices = r.devices.iter().filter(|d| d.work_groups > 0).count();
            ranks[0].bytes_to_devices = r.devices.iter().map(|d| d.bytes_to_device).sum();
            ranks[0].bytes_from_devices = r.devices.iter().map(|d| d.bytes_from_device).sum();
            self.totals[0].launches += 1;
            rank0 = Some(r);
        }
        for (r, rk) in ranks.iter_mut().enumerate().skip(1) {
            if rk.work_groups == 0 {
                continue;
            }
            let rep: LaunchedReply =
                match self.reply(r, &format!("its launch of kernel '{kname}'"))? {
                    Reply::Launched(l) => l,
                    _ => {
                        return Err(RanksError::Protocol {
                            rank: r as i32,
                            message: "expected a launch reply".into(),
                        })
                    }
                };
            rk.wall_ms = rep.wall_ms;
            rk.n_devices = rep.n_devices;
            rk.bytes_to_devices = rep.bytes_to_devices;
            rk.bytes_from_devices = rep.bytes_from_devices;
        }
        // 3. what each window wrote is valid there only
        let mut whole_total = 0;
        for r in 0..n {
            let mut whole = 0;
            for s in &sets[r] {
                let b = buf_of(s.arg_index);
                self.bufs[b].coh.written(holder(r), &s.write);
                if ranks[r].work_groups > 0 && !s.write.is_empty() {
                    ranks[r].written.push((s.name.clone(), intervals(&s.write)));
                }
                let bytes = self.bufs[b].len * self.bufs[b].elem_size;
                if ranks[r].work_groups > 0 && r > 0 {
                    whole +=
                        bytes * (u64::from(!s.need.is_empty()) + u64::from(!s.write.is_empty()));
                }
            }
            ranks[r].bytes_whole_buffers = whole;
            whole_total += whole;
        }
        Ok(LaunchOutcome {
            rank0,
            divided: true,
            reason: None,
            ranks,
            bytes_mpi,
            bytes_whole_buffers: whole_total,
            wall_ms: t0.elapsed().as_secs_f64() * 1e3,
        })
    }

    /// Brings back every buffer's written elements and the ranks' fetches
    /// are counted into `outcome` (rank by rank, `bytes_from_rank`).
    pub fn gather_into(
        &mut self,
        set: &mut BufferSet,
        bufs: &[usize],
        ranks: &mut [RankLaunch],
    ) -> Result<u64> {
        let before: Vec<u64> = self.totals.iter().map(|t| t.bytes_from_rank).collect();
        let mut moved = 0;
        for &b in bufs {
            moved += self.gather(set, b)?;
        }
        for (r, rl) in ranks.iter_mut().enumerate() {
            rl.bytes_from_rank += self.totals[r].bytes_from_rank - before[r];
        }
        Ok(moved)
    }

    /// Tells every other rank to leave its command loop.
    pub fn finish(&mut self) {
        for r in 1..self.n_ranks() {
            self.send(r, &Cmd::Quit, None);
        }
    }

    /// Tells every other rank to forget its buffers and plans (a fresh
    /// start, e.g. between repetitions of `clpart run`), and forgets them here.
    pub fn clear(&mut self) {
        for r in 1..self.n_ranks() {
            self.send(r, &Cmd::Clear, None);
        }
        self.bufs.clear();
        self.plans.clear();
        self.plans_sent.clear();
        self.plan_keys.clear();
    }
}

/// The name of the array of buffer `b` in a rank's sets.
fn name_of(sets: &[launcher::SliceSets], bindings: &[(u32, usize)], b: usize) -> String {
    let arg = bindings.iter().find(|x| x.1 == b).map(|x| x.0);
    sets.iter()
        .find(|s| Some(s.arg_index) == arg)
        .map_or_else(|| format!("buffer {b}"), |s| s.name.clone())
}

/// Whether the kernel may write argument `arg` (its array's mode, or any
/// global buffer without ranges).
fn written_arg(plan: &Plan, arg: u32) -> bool {
    let k = plan.kernel();
    match k.arrays.iter().find(|a| a.arg_index == arg) {
        Some(a) => matches!(a.mode, Mode::W | Mode::RW),
        None => k
            .args
            .iter()
            .any(|a| a.index == arg && a.kind == ArgKind::GlobalBuffer),
    }
}
