//! `mpirun -n N clpart run|steps ...` (feature `mpi`): rank 0
//! runs the command over an `mpi_ranks::Coordinator`; every other rank
//! serves it (`mpi_ranks::serve`) and reads nothing of the command line
//! but what rank 0 sends.
//!
//! Under mpirun every share names a rank (`--split 0:0.5,1:0.5`, or
//! `auto`: in proportion to each rank's measured work-groups per ms);
//! `--local-split` gives the shares among each rank's own devices
//! (default: even).

use std::time::Duration;

use anyhow::{bail, Context, Result};
use host_data::PlanArgs;
use launcher::{BufferSet, DeviceBuffer, KernelArgs, LaunchOptions, NdRange, Runtime};
use mpi_ranks::{Coordinator, RankLaunch, RanksError, World};
use serde::Serialize;
use session::{Counts, LaunchConfig};

use crate::run::RunArgs;

/// Runs `body` as rank 0 over the world, or serves rank 0 on the other
/// ranks. A rank that did not answer in time stops the job (`MPI_Abort`)
/// after the error is printed; otherwise every rank is told to finish.
pub fn over_ranks(
    world: World,
    timeout_s: u64,
    body: impl FnOnce(&mut Coordinator) -> Result<u8>,
) -> Result<u8> {
    if world.rank() != 0 {
        let code = mpi_ranks::serve(&world);
        return Ok(code as u8);
    }
    let mut coord = Coordinator::new(&world);
    coord.timeout = Duration::from_secs(timeout_s.max(1));
    let result = body(&mut coord);
    if let Err(e) = &result {
        if let Some(RanksError::Timeout { .. }) = e.downcast_ref::<RanksError>() {
            crate::terminal::error(&crate::one_line_pub(e));
            world.abort(2);
        }
    }
    coord.finish();
    drop(coord);
    result
}

/// The rank shares: `--split` over ranks, `auto` (even at first), or even.
pub fn rank_shares(split: Option<&str>, n_ranks: usize) -> Result<(Vec<f64>, bool)> {
    mpi_ranks::rank_shares(split, n_ranks).map_err(anyhow::Error::msg)
}

pub use mpi_ranks::rebalance;

/// Version of the report below (`clpart run --json` under mpirun); a
/// change that adds, removes or retypes a field bumps it.
const SCHEMA_VERSION: u32 = 1;

/// The report of `clpart run` across ranks.
#[derive(Serialize)]
struct Report {
    /// [`SCHEMA_VERSION`].
    schema_version: u32,
    kernel: String,
    ndrange: NdRange,
    n_ranks: usize,
    /// Whether the work-groups were divided across ranks.
    divided: bool,
    reason: Option<String>,
    rank_shares: Vec<f64>,
    ranks: Vec<RankLaunch>,
    /// Element bytes over MPI in the last launch, both ways, including the
    /// written ranges brought back to rank 0.
    bytes_mpi: u64,
    /// What sending each rank whole buffers (and getting them back) would move.
    bytes_whole_buffers: u64,
    /// Bytes of the JSON headers (commands, replies, range file entries).
    header_bytes: u64,
    wall_ms: f64,
    wall_ms_all: Vec<f64>,
    verified: Option<bool>,
    mismatch: Option<(String, u64)>,
}

/// `clpart run` as rank 0.
pub fn run(args: RunArgs, coord: &mut Coordinator) -> Result<u8> {
    let global = NdRange::parse_sizes(&args.global)
        .with_context(|| format!("--global '{}'", args.global))?;
    let local = match &args.local {
        Some(l) => NdRange::parse_sizes(l).with_context(|| format!("--local '{l}'"))?,
        None => NdRange::default_local(&global),
    };
    let nd = NdRange::new(&global, &local)?;
    let mut session = crate::run::session(&args)?;
    let kernel = session.kernel_name(args.kernel.as_deref())?;
    let config = LaunchConfig {
        split_dim: args.split_dim,
        counts: Counts::None,
        ..LaunchConfig::new(&global, &local)
    }
    .with_specs(&args.args);
    let runtime = Runtime::new()?;
    if runtime.devices().is_empty() {
        bail!("no OpenCL device found");
    }
    let n_ranks = coord.n_ranks();
    let (mut shares, auto) = rank_shares(args.split.as_deref(), n_ranks)?;
    let local_shares = match &args.local_split {
        Some(s) => Some(crate::run::parse_shares(s).map_err(|e| anyhow::anyhow!("--local-{e}"))?),
        None => None,
    };
    let (plan, _) = session.plan(&runtime, &kernel, &config)?;
    let pristine: KernelArgs = plan.args_from_specs(&args.args)?;
    // every output reserved before the launches, all replaced at the end
    // or none (as `clpart run` does)
    let mut files = crate::output_files::OutputFiles::default();
    let mut outs = Vec::new();
    for o in &args.outs {
        let (name, path) = o
            .split_once('=')
            .with_context(|| format!("--out '{o}' must be NAME=FILE.npy"))?;
        if pristine.buffer(name).is_none() {
            let valid: Vec<&str> = pristine.global_buffers().map(|(n, _)| n).collect();
            bail!(
                "--out '{o}': '{name}' is not a buffer argument (buffers: {})",
                valid.join(", ")
            );
        }
        let id = files.reserve(std::path::Path::new(path), &format!("--out '{o}'"))?;
        outs.push((name.to_string(), id));
    }
    let options = LaunchOptions {
        mem_cap_bytes: args.device_mem_cap,
        unchecked: args.unchecked,
        exact_bytes: false,
        ..Default::default()
    };
    let mut walls = Vec::new();
    let mut last = None;
    let mut result = pristine.clone();
    let mut header_before = 0;
    for i in 0..args.repeat.max(1) {
        if i > 0 {
            coord.clear();
        }
        header_before = coord.totals().iter().map(|t| t.header_bytes).sum::<u64>();
        let mut kargs = pristine.clone();
        let mut set = BufferSet::new();
        let mut bindings = Vec::new();
        let mut ids = Vec::new();
        for info in pristine.infos() {
            if let Some(b) = kargs.buffer_at_mut(info.index) {
                let host = std::mem::replace(
                    b,
                    launcher::HostBuffer::zeros(b.elem().clone(), 1).map_err(anyhow::Error::msg)?,
                );
                let id = set.add(DeviceBuffer::new(host));
                let idx = coord.add(&set, id);
                bindings.push((info.index, idx));
                ids.push((info.index, id, idx));
            }
        }
        let t0 = std::time::Instant::now();
        let mut out = coord.launch(
            &mut set,
            plan,
            &nd,
            &mut kargs,
            &bindings,
            &shares,
            local_shares.as_deref(),
            &options,
        )?;
        // the written ranges come back to rank 0
        let bufs: Vec<usize> = ids.iter().map(|x| x.2).collect();
        out.bytes_mpi += coord.gather_into(&mut set, &bufs, &mut out.ranks)?;
        for &(a, id, _) in &ids {
            let host = set.remove(id).expect("added above").into_host()?;
            *kargs.buffer_at_mut(a).expect("a buffer argument") = host;
        }
        let wall = t0.elapsed().as_secs_f64() * 1e3;
        walls.push(wall);
        out.wall_ms = wall;
        if auto {
            rebalance(&mut shares, &out.ranks);
        }
        result = kargs;
        last = Some(out);
    }
    let out = last.expect("at least one launch");
    let mut verified = None;
    let mut mismatch = None;
    if args.verify {
        let mut reference = pristine.clone();
        plan.run_whole(0, &nd, &mut reference)?;
        for ((name, got), (_, want)) in result.global_buffers().zip(reference.global_buffers()) {
            let es = got.elem().size.max(1) as usize;
            if let Some(p) = got
                .as_bytes()
                .iter()
                .zip(want.as_bytes())
                .position(|(a, b)| a != b)
            {
                mismatch = Some((name.to_string(), (p / es) as u64));
                break;
            }
        }
        verified = Some(mismatch.is_none());
    }
    if mismatch.is_none() || args.out_on_mismatch {
        for (name, id) in &outs {
            let b = result.buffer(name).expect("checked above");
            files.write(*id, |w| host_data::write_npy_to(w, b))?;
        }
    } else if !outs.is_empty() {
        crate::terminal::note(
            "verification failed, so no --out file was written (--out-on-mismatch writes them)",
        );
    }
    files.commit()?;
    let header_bytes = coord.totals().iter().map(|t| t.header_bytes).sum::<u64>() - header_before;
    let report = Report {
        schema_version: SCHEMA_VERSION,
        kernel: kernel.clone(),
        ndrange: nd.clone(),
        n_ranks,
        divided: out.divided,
        reason: out.reason.clone(),
        rank_shares: shares.clone(),
        ranks: out.ranks.clone(),
        bytes_mpi: out.bytes_mpi,
        bytes_whole_buffers: out.bytes_whole_buffers,
        header_bytes,
        wall_ms: out.wall_ms,
        wall_ms_all: walls.clone(),
        verified,
        mismatch: mismatch.clone(),
    };
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_text(&report);
    }
    if let Some((a, i)) = mismatch {
        crate::terminal::error(&format!(
            "verification failed: array '{a}' differs first at element {i}"
        ));
        return Ok(1);
    }
    Ok(0)
}

fn print_text(r: &Report) {
    match &r.reason {
        None => outln!(
            "kernel '{}', {}, across {} ranks",
            r.kernel,
            r.ndrange,
            r.n_ranks
        ),
        Some(why) => outln!(
            "kernel '{}', {}, whole on rank 0 of {}: {why}",
            r.kernel,
            r.ndrange,
            r.n_ranks
        ),
    }
    for k in &r.ranks {
        outln!(
            "  rank {}: {} work-groups [{}, {}) on {} devices, {} B sent to it, {} B back, wall {:.3} ms (whole buffers: {} B)",
            k.rank, k.work_groups, k.window.0, k.window.1, k.n_devices, k.bytes_to_rank, k.bytes_from_rank, k.wall_ms, k.bytes_whole_buffers
        );
    }
    outln!(
        "  bytes over mpi {}, whole buffers {}, headers {} B",
        r.bytes_mpi,
        r.bytes_whole_buffers,
        r.header_bytes
    );
    out!("  wall {:.3} ms", r.wall_ms);
    match r.verified {
        Some(true) => outln!(", verified"),
        Some(false) => outln!(", verification failed"),
        None => outln!(),
    }
    if r.wall_ms_all.len() > 1 {
        let mut w = r.wall_ms_all.clone();
        w.sort_by(|a, b| a.total_cmp(b));
        outln!(
            "  {} launches: median wall {:.3} ms, min {:.3} ms",
            w.len(),
            w[w.len() / 2],
            w[0]
        );
    }
}

/// `clpart steps` across ranks: shares name ranks; each rank's devices
/// share its window evenly (the rank's `POCL_DEVICES`).
impl crate::steps::Ranks for Coordinator<'_> {
    fn n_ranks(&self) -> usize {
        Coordinator::n_ranks(self)
    }

    fn add(&mut self, set: &BufferSet, id: launcher::BufferId) -> usize {
        Coordinator::add(self, set, id)
    }

    fn launch(
        &mut self,
        set: &mut BufferSet,
        plan: &mut launcher::Plan,
        nd: &NdRange,
        args: &mut KernelArgs,
        bindings: &[(u32, usize)],
        shares: &[(usize, f64)],
        options: &LaunchOptions,
    ) -> Result<(Option<launcher::RunReport>, crate::steps::RanksLine)> {
        let mut weights = vec![0.0; Coordinator::n_ranks(self)];
        for &(r, s) in shares {
            weights[r] += s;
        }
        let options = LaunchOptions {
            exact_bytes: false,
            ..options.clone()
        };
        let out = Coordinator::launch(
            self, set, plan, nd, args, bindings, &weights, None, &options,
        )?;
        let line = crate::steps::RanksLine {
            divided: out.divided,
            reason: out.reason.clone(),
            ranks: serde_json::to_value(&out.ranks)?,
            bytes_mpi: out.bytes_mpi,
            bytes_whole_buffers: out.bytes_whole_buffers,
            per_rank: out
                .ranks
                .iter()
                .map(|r| (r.bytes_to_rank, r.bytes_from_rank))
                .collect(),
            wall_ms: out.wall_ms,
        };
        Ok((out.rank0, line))
    }

    fn gather(&mut self, set: &mut BufferSet, b: usize) -> Result<u64> {
        Ok(Coordinator::gather(self, set, b)?)
    }
}
