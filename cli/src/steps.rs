//! `clpart steps`: a run file's launches over buffers that stay on the
//! devices (`ranges_format::RunFile`, `launcher::BufferSet`).
//!
//! Everything the file says is checked before the first launch (kernel
//! names, arguments against each kernel's signature, buffer types, NDRanges,
//! shares, `--out` names); the launches then run in order, `repeat` times;
//! outputs are gathered and written at the end, and only when everything
//! succeeded (and verified, with `--verify`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::output_files::OutputFiles;
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use host_data::{ArgSpec, FromSpecs, Shape};
use launcher::{
    BufferId, BufferSet, DeviceBuffer, ElemType, KernelArgs, LaunchOptions, NdRange, RunReport,
    Runtime,
};
use ranges_format::output::OutputId;
use ranges_format::run_file::STEP_COUNTER;
use ranges_format::{ArgInfo, ArgKind, RunFile, StepArg};
use serde::Serialize;
use session::{Counts, LaunchConfig, Session};

#[derive(Args)]
#[command(
    after_help = "Run file (RON; paths relative to it; `step` is the repetition counter 0 .. repeat-1):\n\
  (\n\
      source: \"lu.cl\",\n\
      buffers: [(name: \"A\", type: \"float\", init: \"rand:4096:7\")],   // or size: N (zeros)\n\
      repeat: 63,\n\
      steps: [\n\
          (kernel: \"lu_scale_col\", global: [64], local: [16], args: {\"a\": \"A\", \"k\": \"step\", \"n\": 64}),\n\
          (kernel: \"lu_update\", global: [64, 64], local: [16, 16],\n\
           args: {\"a\": \"A\", \"k\": \"step\", \"n\": 64}, split: \"0:0.7,1:0.3\"),\n\
      ],\n\
  )\n\
A buffer argument takes a buffer name (swap two names between steps for ping-pong), a scalar a\n\
literal or `step`, a __local pointer `local:N`; `split` (optional) sets one step's shares.\n\n\
Exit codes: 0 ok, 1 verification failed, 2 usage or input error.\n\n\
Examples:\n\
  POCL_DEVICES=\"pthread basic\" clpart steps kernels/iterative/jacobi2d.ron --verify\n\
  clpart steps kernels/iterative/lu.ron --split 0:0.7,1:0.3 --out A=lu.npy --json"
)]
pub struct StepsArgs {
    /// The run file (`*.ron`): source, buffers, the launches of one step and how often to repeat them.
    pub file: PathBuf,
    /// Shares of the steps without a `split` of their own: IDX:SHARE,... summing to 1, or `auto`
    /// (every device in proportion to its measured speed, refined launch after launch)
    /// (default: even over all devices).
    #[arg(long, value_name = "IDX:SHARE,...")]
    pub split: Option<String>,
    /// Also run the same launches unsplit on one device (host buffers, the original kernel) and
    /// compare every buffer bit for bit at the end (exit 1 on a difference).
    #[arg(long)]
    pub verify: bool,
    /// The device of the --verify run (default: 0).
    #[arg(long, value_name = "IDX", requires = "verify")]
    pub verify_device: Option<usize>,
    /// Write a buffer's final contents as .npy (repeatable): NAME=FILE.npy. Nothing is written
    /// when a launch fails or verification finds a difference.
    #[arg(long = "out", visible_alias = "save", value_name = "NAME=FILE.npy")]
    pub outs: Vec<String>,
    /// Print the report as JSON: one entry per launch and the totals.
    #[arg(long)]
    pub json: bool,
    /// Most bytes of buffers one device may hold for its slice.
    #[arg(long, value_name = "BYTES")]
    pub device_mem_cap: Option<u64>,
    /// Turn the run-time guard off (see `clpart run --help`).
    #[arg(long)]
    pub unchecked: bool,
    /// Under mpirun (feature `mpi`): seconds rank 0 waits for a rank's answer before it names
    /// the rank and stops the job. Under mpirun, --split and the steps' `split` name ranks.
    #[arg(long, value_name = "SECONDS", default_value_t = 120)]
    pub rank_timeout: u64,
}

/// MPI ranks as holders of the run file's buffers (`crate::ranks`, feature
/// `mpi`): each launch divides across ranks, each rank's buffers stay
/// there between launches, and only what a rank lacks crosses.
pub(crate) trait Ranks {
    /// Number of ranks (the shares name them).
    fn n_ranks(&self) -> usize;
    /// Registers buffer `id` of `set` (valid on rank 0); its index for `launch`.
    fn add(&mut self, set: &BufferSet, id: BufferId) -> usize;
    /// One launch across the ranks by `shares` (rank, share); bindings are
    /// (argument index, index from `add`). Rank 0's own report, if it ran
    /// work-groups, and the ranks' part of the report.
    #[allow(clippy::too_many_arguments)]
    fn launch(
        &mut self,
        set: &mut BufferSet,
        plan: &mut launcher::Plan,
        nd: &NdRange,
        args: &mut KernelArgs,
        bindings: &[(u32, usize)],
        shares: &[(usize, f64)],
        options: &LaunchOptions,
    ) -> Result<(Option<RunReport>, RanksLine)>;
    /// Brings buffer `b` (index from `add`) whole to rank 0; the bytes moved.
    fn gather(&mut self, set: &mut BufferSet, b: usize) -> Result<u64>;
}

/// The ranks' part of one launch in the report.
#[derive(Serialize, Clone, Default)]
pub(crate) struct RanksLine {
    /// Whether the work-groups were divided across ranks.
    pub(crate) divided: bool,
    pub(crate) reason: Option<String>,
    /// Per rank: window, bytes sent to it and fetched from it, elements sent.
    pub(crate) ranks: serde_json::Value,
    /// Element bytes over MPI (both ways).
    pub(crate) bytes_mpi: u64,
    /// What whole buffers to and from each rank would move.
    pub(crate) bytes_whole_buffers: u64,
    /// Per rank (index = rank), element bytes sent to it and fetched from it.
    pub(crate) per_rank: Vec<(u64, u64)>,
    /// The launch across every rank (rank 0's sends, every rank's run, the
    /// replies), ms; the line's `wall_ms` is this one under mpirun.
    pub(crate) wall_ms: f64,
}

/// A step's value for one kernel argument, resolved against the kernel.
#[derive(Clone, Debug)]
enum Bound {
    /// A literal or a `local:N` spec, the same at every repetition.
    Fixed(ArgSpec),
    /// The repetition counter.
    Counter,
    /// A buffer of the run file (index into the declarations).
    Buffer(usize),
}

/// Which analysis a step's launches use.
enum PlanKey {
    /// One for every repetition: the ranges hold for any value of the
    /// scalars (or specializing on them does not help).
    Generic(LaunchConfig),
    /// One per value of the integer scalars: only specialized ranges split.
    PerValue,
}

/// One step of the file, checked against its kernel.
struct Prepared {
    kernel: String,
    nd: NdRange,
    infos: Vec<ArgInfo>,
    /// Per argument, by index.
    values: Vec<Bound>,
    /// Shares of this step (None: the command line's).
    shares: Option<Vec<(usize, f64)>>,
    /// How to ask the session for this step's plan, once decided.
    config: Option<PlanKey>,
}

impl Prepared {
    fn has_int_scalars(&self) -> bool {
        self.infos.iter().zip(&self.values).any(|(i, v)| {
            i.kind == ArgKind::Scalar
                && ElemType::parse(&i.elem_type, i.elem_size).is_integer_scalar()
                && !matches!(v, Bound::Buffer(_))
        })
    }

    /// The argument values at repetition `rep`, with 1-element placeholders
    /// at the bound buffers.
    fn args(&self, rep: u32) -> launcher::Result<KernelArgs> {
        let specs: Vec<(String, ArgSpec)> = self
            .infos
            .iter()
            .zip(&self.values)
            .map(|(info, v)| {
                let spec = match v {
                    Bound::Fixed(s) => s.clone(),
                    Bound::Counter => ArgSpec::Literal(rep.to_string()),
                    Bound::Buffer(_) => ArgSpec::Zeros(Shape::of(1)),
                };
                (info.name.clone(), spec)
            })
            .collect();
        KernelArgs::from_parsed(&self.kernel, &self.infos, &specs)
    }

    /// The launch configuration with the integer scalars of repetition `rep`.
    fn config_with_scalars(&self, rep: u32) -> LaunchConfig {
        // The report shows `bytes_exact`: every count.
        let mut c = LaunchConfig::new(&self.nd.global, &self.nd.local).with_counts(Counts::All);
        for (info, v) in self.infos.iter().zip(&self.values) {
            if info.kind != ArgKind::Scalar
                || !ElemType::parse(&info.elem_type, info.elem_size).is_integer_scalar()
            {
                continue;
            }
            let value = match v {
                Bound::Counter => Some(rep as i64),
                Bound::Fixed(ArgSpec::Literal(t)) => t.trim().parse::<i64>().ok(),
                _ => None,
            };
            if let Some(value) = value {
                c.scalars.insert(info.name.clone(), value);
            }
        }
        c
    }
}

/// One launch in the report.
#[derive(Serialize)]
struct LaunchLine {
    repetition: u32,
    step: usize,
    kernel: String,
    global: Vec<u64>,
    local: Vec<u64>,
    split: bool,
    split_dim: Option<u32>,
    reason: Option<String>,
    shares: Vec<Share>,
    devices: Vec<launcher::DeviceReport>,
    bytes_total: u64,
    bytes_to_devices: u64,
    bytes_from_devices: u64,
    bytes_whole_buffers: u64,
    wall_ms: f64,
    guard_fired: bool,
    notes: Vec<String>,
    /// Under mpirun: the ranks' part.
    #[serde(skip_serializing_if = "Option::is_none")]
    mpi: Option<RanksLine>,
}

#[derive(Serialize)]
struct Share {
    device: usize,
    share: f64,
}

#[derive(Serialize, Default)]
struct Total {
    launches: u64,
    /// Launch transfers plus the final reads.
    bytes_total: u64,
    bytes_to_devices: u64,
    bytes_from_devices: u64,
    /// Device → host bytes of the final reads (`--out`, `--verify`).
    bytes_read_back: u64,
    bytes_whole_buffers: u64,
    /// Launches and final reads; no analysis, no verification run.
    wall_ms: f64,
    analysis_ms: f64,
    /// Under mpirun: element bytes over MPI (launches and final reads).
    #[serde(skip_serializing_if = "Option::is_none")]
    bytes_mpi: Option<u64>,
}

#[derive(Serialize)]
struct MismatchOut {
    buffer: String,
    elem_idx: u64,
}

/// Version of the `--json` report below; a change that adds, removes or
/// retypes a field bumps it (`cli/tests/json_documents.rs` declares the
/// fields).
const SCHEMA_VERSION: u32 = 1;

#[derive(Serialize)]
struct Report {
    /// [`SCHEMA_VERSION`].
    schema_version: u32,
    file: String,
    repeat: u32,
    n_steps: usize,
    launches: Vec<LaunchLine>,
    total: Total,
    verified: Option<bool>,
    mismatch: Option<MismatchOut>,
}

/// A path of the run file, relative to its folder.
fn beside(file: &Path, rel: &str) -> PathBuf {
    let p = Path::new(rel);
    if p.is_absolute() {
        return p.to_path_buf();
    }
    file.parent().map_or_else(|| p.to_path_buf(), |d| d.join(p))
}

pub fn steps(args: StepsArgs) -> Result<u8> {
    #[cfg(feature = "mpi")]
    if let Some(world) = mpi_ranks::World::from_env() {
        let timeout = args.rank_timeout;
        return crate::ranks::over_ranks(world, timeout, |coord| steps_over(args, Some(coord)));
    }
    steps_over(args, None)
}

/// [`steps`], across MPI ranks when `ranks` is given.
pub(crate) fn steps_over(args: StepsArgs, mut ranks: Option<&mut dyn Ranks>) -> Result<u8> {
    let name = args.file.display().to_string();
    let text = crate::analyze::read_source(&args.file)?;
    let file = RunFile::parse(&text).map_err(|e| match e {
        ranges_format::RunFileError::Syntax { .. } => anyhow!("{name}:{e}"),
        ranges_format::RunFileError::Invalid(_) => anyhow!("{name}: {e}"),
    })?;
    let in_file = |m: String| anyhow!("{name}: {m}");

    let source_path = beside(&args.file, &file.source);
    let source = ranges_format::input::read_text(&source_path, ranges_format::input::SOURCE)
        .map_err(|e| {
            in_file(format!(
                "cannot read source '{}': {}",
                source_path.display(),
                e
            ))
        })?;
    let build: Vec<String> = file.build.clone();
    let mut session = Session::from_source(&source_path.display().to_string(), &source, &build)?;

    let runtime = Runtime::new()?;
    let n_devices = runtime.devices().len();
    if n_devices == 0 {
        bail!("no OpenCL device found");
    }
    // the launcher's own checks, made before anything runs; under mpirun
    // the shares name ranks
    let (n_holders, holder) = match &ranks {
        Some(r) => (r.n_ranks(), "rank"),
        None => (n_devices, "device"),
    };
    let check_devices = |shares: &[(usize, f64)], what: &str| -> Result<()> {
        for &(d, _) in shares {
            if d >= n_holders {
                bail!(
                    "{what}: {holder} {d} does not exist ({holder}s: 0 to {})",
                    n_holders - 1
                );
            }
        }
        launcher::check_shares(shares, holder).map_err(|e| anyhow!("{what}: {e}"))
    };
    let auto = args.split.as_deref().map(str::trim) == Some("auto");
    let default_shares: Option<Vec<(usize, f64)>> = match &args.split {
        Some(_) if auto => None,
        Some(s) => {
            let sh = launcher::parse_shares(s).map_err(|e| anyhow!("--split {e}"))?;
            check_devices(&sh, &format!("--split '{s}'"))?;
            Some(sh)
        }
        None => Some(
            (0..n_holders)
                .map(|i| (i, 1.0 / n_holders as f64))
                .collect(),
        ),
    };
    let verify_device = args.verify_device.unwrap_or(0);
    if args.verify && verify_device >= n_devices {
        bail!(
            "--verify-device {verify_device}: no such device (devices: 0 to {})",
            n_devices - 1
        );
    }

    // The buffers.
    let mut set = BufferSet::new();
    let mut ids: Vec<BufferId> = Vec::new();
    let mut reference: Vec<launcher::HostBuffer> = Vec::new();
    for b in &file.buffers {
        let host =
            make_buffer(&args.file, b).map_err(|m| in_file(format!("buffer '{}': {m}", b.name)))?;
        if args.verify {
            reference.push(host.clone());
        }
        ids.push(set.add(DeviceBuffer::new(host)));
    }
    let rank_idx: Vec<usize> = match ranks.as_deref_mut() {
        Some(r) => ids.iter().map(|id| r.add(&set, *id)).collect(),
        None => Vec::new(),
    };
    // The steps, checked against their kernels.
    let mut prepared = Vec::new();
    for (j, s) in file.steps.iter().enumerate() {
        let at = format!("step {} (kernel '{}')", j + 1, s.kernel);
        let kernel = session
            .kernel_name(Some(&s.kernel))
            .map_err(|e| in_file(format!("step {}: {e}", j + 1)))?;
        let infos = session.arg_infos(&kernel)?;
        let local = match &s.local {
            Some(l) => l.clone(),
            None => NdRange::default_local(&s.global),
        };
        let nd = NdRange::new(&s.global, &local).map_err(|e| in_file(format!("{at}: {e}")))?;
        for given in s.args.keys() {
            if !infos.iter().any(|i| &i.name == given) {
                let valid: Vec<&str> = infos.iter().map(|i| i.name.as_str()).collect();
                return Err(in_file(format!(
                    "{at}: '{given}' is not an argument of the kernel (arguments: {})",
                    valid.join(", ")
                )));
            }
        }
        let mut values = Vec::new();
        for info in &infos {
            let Some(v) = s.args.get(&info.name) else {
                return Err(in_file(format!(
                    "{at}: argument '{}' is not given",
                    info.name
                )));
            };
            values.push(
                bind(&file, info, v)
                    .map_err(|m| in_file(format!("{at}: argument '{}': {m}", info.name)))?,
            );
        }
        for (a, va) in values.iter().enumerate() {
            for (b, vb) in values.iter().enumerate().take(a) {
                if let (Bound::Buffer(x), Bound::Buffer(y)) = (va, vb) {
                    if x == y {
                        return Err(in_file(format!(
                            "{at}: buffer '{}' is bound to two arguments ('{}' and '{}'); clpart cannot split aliased buffers",
                            file.buffers[*x].name, infos[b].name, infos[a].name
                        )));
                    }
                }
            }
        }
        let shares = match &s.split {
            None => None,
            Some(t) => {
                let sh =
                    launcher::parse_shares(t).map_err(|e| in_file(format!("{at}: split {e}")))?;
                check_devices(&sh, &format!("{name}: {at}: split '{t}'"))?;
                Some(sh)
            }
        };
        let p = Prepared {
            kernel,
            nd,
            infos,
            values,
            shares,
            config: None,
        };
        // Literals and the counter's range are checked now, before anything runs.
        for rep in [0, file.repeat - 1] {
            p.args(rep).map_err(|e| in_file(format!("{at}: {e}")))?;
        }
        prepared.push(p);
    }

    // Every --out is reserved before anything runs: one that cannot be
    // written stops the command now, and none is replaced unless all are.
    let mut files = crate::output_files::OutputFiles::default();
    let mut outs = Vec::new();
    for o in &args.outs {
        let (n, path) = o
            .split_once('=')
            .with_context(|| format!("--out '{o}' must be NAME=FILE.npy"))?;
        let Some(idx) = file.buffers.iter().position(|b| b.name == n) else {
            bail!(
                "--out '{o}': '{n}' is not a buffer of {name} (buffers: {})",
                file.buffer_names()
            );
        };
        let id = files.reserve(Path::new(path), &format!("--out '{o}'"))?;
        outs.push((idx, id));
    }

    let options = LaunchOptions {
        mem_cap_bytes: args.device_mem_cap,
        unchecked: args.unchecked,
        ..Default::default()
    };
    // the steps' shares and, with `auto`, what the launches measure
    // (session::Door; never in rounds: a BufferSet's or the ranks' launch
    // is the caller's own)
    let mut door = session::Door::new();
    let mut lines = Vec::new();
    let mut total = Total::default();
    for rep in 0..file.repeat {
        for (j, p) in prepared.iter_mut().enumerate() {
            let kname = p.kernel.clone();
            let at = || {
                format!(
                    "{name}: repetition {}, step {} (kernel '{kname}')",
                    rep + 1,
                    j + 1
                )
            };
            let t0 = Instant::now();
            let (plan, analyzed) = plan_for(&mut session, &runtime, p, rep).with_context(at)?;
            if analyzed {
                total.analysis_ms += t0.elapsed().as_secs_f64() * 1e3;
            }
            let mut kargs = p.args(rep).with_context(at)?;
            let bindings: Vec<(u32, BufferId)> = p
                .values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| match v {
                    Bound::Buffer(b) => Some((i as u32, ids[*b])),
                    _ => None,
                })
                .collect();
            let key = launcher::launch_key(&p.kernel, &p.nd);
            let chosen = match (&p.shares, &default_shares) {
                (Some(s), _) | (None, Some(s)) => session::Shares::Fixed(s.clone()),
                (None, None) => session::Shares::Auto((0..n_holders).collect()),
            };
            let ((r, mpi), shares) = door.launch_with(
                &chosen,
                &key,
                |shares| -> Result<_> {
                    Ok(match ranks.as_deref_mut() {
                        Some(rk) => {
                            let by_idx: Vec<(u32, usize)> = bindings
                                .iter()
                                .map(|&(a, id)| (a, rank_idx[id_index(&ids, id)]))
                                .collect();
                            let (r0, line) = rk
                                .launch(
                                    &mut set, plan, &p.nd, &mut kargs, &by_idx, shares, &options,
                                )
                                .with_context(at)?;
                            (r0, Some(line))
                        }
                        None => (
                            Some(
                                set.launch(plan, &p.nd, &mut kargs, &bindings, shares, &options)
                                    .with_context(at)?,
                            ),
                            None,
                        ),
                    })
                },
                // a launch across ranks measures nothing here
                |(r, mpi)| r.as_ref().filter(|_| mpi.is_none()),
            )?;
            if args.verify {
                let mut kref = p.args(rep).with_context(at)?;
                for &(i, id) in &bindings {
                    std::mem::swap(
                        kref.buffer_at_mut(i).expect("a buffer argument"),
                        &mut reference[id_index(&ids, id)],
                    );
                }
                let whole = plan.run_whole(verify_device, &p.nd, &mut kref);
                for &(i, id) in &bindings {
                    std::mem::swap(
                        kref.buffer_at_mut(i).expect("a buffer argument"),
                        &mut reference[id_index(&ids, id)],
                    );
                }
                whole.with_context(|| {
                    format!("{}: the unsplit run on device {verify_device}", at())
                })?;
            }
            let mut l = match &r {
                Some(r) => line(rep, j, r, &shares),
                None => LaunchLine {
                    repetition: rep,
                    step: j,
                    kernel: p.kernel.clone(),
                    global: p.nd.global.clone(),
                    local: p.nd.local.clone(),
                    split: true,
                    split_dim: plan.kernel().split_dim,
                    reason: None,
                    shares: shares
                        .iter()
                        .map(|&(device, share)| Share { device, share })
                        .collect(),
                    devices: Vec::new(),
                    bytes_total: 0,
                    bytes_to_devices: 0,
                    bytes_from_devices: 0,
                    bytes_whole_buffers: 0,
                    wall_ms: 0.0,
                    guard_fired: false,
                    notes: Vec::new(),
                    mpi: None,
                },
            };
            if let Some(m) = mpi {
                l.split = m.divided;
                l.reason = m.reason.clone();
                l.bytes_whole_buffers = m.bytes_whole_buffers;
                l.wall_ms = m.wall_ms;
                l.mpi = Some(m);
            }
            lines.push(l);
        }
    }

    // Final reads: what --verify compares and --out writes.
    let t_read = Instant::now();
    let mut mpi_read_back = 0;
    if let Some(rk) = ranks.as_deref_mut() {
        if args.verify || !outs.is_empty() {
            for (b, idx) in rank_idx.iter().enumerate() {
                if args.verify || outs.iter().any(|o| o.0 == b) {
                    mpi_read_back += rk.gather(&mut set, *idx).with_context(|| {
                        format!(
                            "{name}: gathering buffer '{}' from the ranks",
                            file.buffers[b].name
                        )
                    })?;
                }
            }
        }
    }
    let mut mismatch = None;
    if args.verify {
        for (b, id) in ids.iter().enumerate() {
            let got = set
                .get_mut(*id)
                .expect("added above")
                .read_all()
                .with_context(|| format!("{name}: reading buffer '{}'", file.buffers[b].name))?;
            if let Some(at) = first_difference(
                got.as_bytes(),
                reference[b].as_bytes(),
                got.elem().size.max(1) as usize,
            ) {
                mismatch.get_or_insert(MismatchOut {
                    buffer: file.buffers[b].name.clone(),
                    elem_idx: at,
                });
            }
        }
    }
    for (b, _) in &outs {
        set.get_mut(ids[*b])
            .expect("added above")
            .read_all()
            .with_context(|| format!("{name}: reading buffer '{}'", file.buffers[*b].name))?;
    }
    let read_ms = t_read.elapsed().as_secs_f64() * 1e3;

    for l in &lines {
        total.launches += 1;
        total.bytes_to_devices += l.bytes_to_devices;
        total.bytes_from_devices += l.bytes_from_devices;
        total.bytes_total += l.bytes_total;
        total.bytes_whole_buffers += l.bytes_whole_buffers;
        total.wall_ms += l.wall_ms;
        if let Some(m) = &l.mpi {
            *total.bytes_mpi.get_or_insert(0) += m.bytes_mpi;
        }
    }
    if ranks.is_some() {
        *total.bytes_mpi.get_or_insert(0) += mpi_read_back;
    }
    total.bytes_read_back = ids
        .iter()
        .map(|id| set.get(*id).expect("added above").bytes_gathered())
        .sum();
    total.bytes_total += total.bytes_read_back;
    total.wall_ms += read_ms;

    let verified = args.verify.then_some(mismatch.is_none());
    if mismatch.is_none() {
        write_outs(&mut set, &ids, &outs, &mut files)?;
    } else if !outs.is_empty() {
        crate::terminal::note("verification failed, so no --out file was written");
    }
    files.commit()?;
    let report = Report {
        schema_version: SCHEMA_VERSION,
        file: name.clone(),
        repeat: file.repeat,
        n_steps: file.steps.len(),
        launches: lines,
        total,
        verified,
        mismatch,
    };
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_text(&report, &runtime, verify_device);
    }
    if let Some(m) = &report.mismatch {
        crate::terminal::error(&format!(
            "verification failed: buffer '{}' differs from the unsplit run first at element {}",
            m.buffer, m.elem_idx
        ));
        return Ok(1);
    }
    Ok(0)
}

fn id_index(ids: &[BufferId], id: BufferId) -> usize {
    ids.iter().position(|i| *i == id).expect("one of ours")
}

/// Resolves a step's value for argument `info`.
fn bind(file: &RunFile, info: &ArgInfo, v: &StepArg) -> std::result::Result<Bound, String> {
    let text = v.to_string();
    match info.kind {
        ArgKind::GlobalBuffer | ArgKind::ConstantBuffer => {
            let StepArg::Text(t) = v else {
                return Err(format!("'{text}' is not a buffer name (buffers: {})", file.buffer_names()));
            };
            let Some(idx) = file.buffers.iter().position(|b| &b.name == t) else {
                return Err(format!("'{t}' is not a buffer (buffers: {})", file.buffer_names()));
            };
            let want = ElemType::parse(&info.elem_type, info.elem_size);
            let have = ElemType::parse(&file.buffers[idx].elem_type, 0);
            if want.scalar != have.scalar || want.lanes != have.lanes || want.size != have.size {
                return Err(format!("the argument is a {} pointer and buffer '{t}' holds {}", want.name, have.name));
            }
            Ok(Bound::Buffer(idx))
        }
        ArgKind::Scalar => match v {
            StepArg::Text(t) if t.trim() == STEP_COUNTER => Ok(Bound::Counter),
            StepArg::Text(t) if file.buffer(t.trim()).is_some() => {
                Err(format!("'{t}' is a buffer but the argument is a scalar ({}); give a literal or '{STEP_COUNTER}'", info.elem_type))
            }
            _ => Ok(Bound::Fixed(ArgSpec::Literal(text))),
        },
        ArgKind::LocalBuffer => match text.parse::<ArgSpec>() {
            Ok(s @ ArgSpec::Local(_)) => Ok(Bound::Fixed(s)),
            _ => Err(format!("'{text}' does not fit a __local pointer; give local:N (N elements)")),
        },
    }
}

/// A buffer's initial contents, made by the argument spec language.
fn make_buffer(
    file: &Path,
    b: &ranges_format::BufferDecl,
) -> std::result::Result<launcher::HostBuffer, String> {
    let elem = ElemType::parse(&b.elem_type, 0);
    if elem.scalar.is_none() {
        return Err(format!(
            "type '{}' is not an OpenCL scalar or vector type (e.g. float, int, float4)",
            b.elem_type
        ));
    }
    let spec = match (&b.init, b.size) {
        (Some(t), _) => match t.parse::<ArgSpec>().map_err(|e| e.to_string())? {
            ArgSpec::File(p) if p.is_relative() => ArgSpec::File(beside(file, &p.to_string_lossy())),
            ArgSpec::Literal(_) | ArgSpec::Local(_) => {
                return Err(format!("init '{t}' does not make a buffer; give rand:N[:SEED], zeros:N, seq:N or file:PATH.npy"))
            }
            s => s,
        },
        (None, Some(n)) => ArgSpec::Zeros(Shape::of(n)),
        (None, None) => unreachable!("RunFile::parse checks that a buffer has a size or an init"),
    };
    let info = ArgInfo {
        index: 0,
        name: b.name.clone(),
        kind: ArgKind::GlobalBuffer,
        elem_type: elem.name.clone(),
        elem_size: elem.size,
        fields: Vec::new(),
    };
    let mut args = KernelArgs::from_parsed("buffer", &[info], &[(b.name.clone(), spec)])
        .map_err(|e| e.to_string())?;
    let host = args.buffer_at_mut(0).expect("a buffer argument");
    Ok(std::mem::replace(
        host,
        launcher::HostBuffer::from_bytes(elem, Vec::new()),
    ))
}

/// The plan of one launch: analyzed once per step for any value of its
/// scalars when that splits, else once per value (the ranges then depend on
/// them).
fn plan_for<'s>(
    session: &'s mut Session,
    runtime: &Runtime,
    p: &mut Prepared,
    rep: u32,
) -> Result<(&'s mut launcher::Plan, bool)> {
    let mut analyzed = false;
    if p.config.is_none() {
        let generic = LaunchConfig::new(&p.nd.global, &p.nd.local).with_counts(Counts::All);
        let (plan, a) = session.plan(runtime, &p.kernel, &generic)?;
        analyzed |= a;
        let chosen = if plan.kernel().splittable || !p.has_int_scalars() {
            PlanKey::Generic(generic)
        } else {
            let (plan, a) = session.plan(runtime, &p.kernel, &p.config_with_scalars(rep))?;
            analyzed |= a;
            if plan.kernel().splittable {
                PlanKey::PerValue
            } else {
                PlanKey::Generic(generic)
            }
        };
        p.config = Some(chosen);
    }
    let config = match p.config.as_ref().expect("decided above") {
        PlanKey::Generic(c) => c.clone(),
        PlanKey::PerValue => p.config_with_scalars(rep),
    };
    let (plan, a) = session.plan(runtime, &p.kernel, &config)?;
    Ok((plan, analyzed || a))
}

fn line(rep: u32, step: usize, r: &RunReport, shares: &[(usize, f64)]) -> LaunchLine {
    let to: u64 = r.devices.iter().map(|d| d.bytes_to_device).sum();
    let from: u64 = r.devices.iter().map(|d| d.bytes_from_device).sum();
    LaunchLine {
        repetition: rep,
        step,
        kernel: r.kernel.clone(),
        global: r.ndrange.global.clone(),
        local: r.ndrange.local.clone(),
        split: r.split,
        split_dim: r.split_dim,
        reason: r.reason.clone(),
        shares: shares
            .iter()
            .map(|&(device, share)| Share { device, share })
            .collect(),
        devices: r.devices.clone(),
        bytes_total: r.bytes_total,
        bytes_to_devices: to,
        bytes_from_devices: from,
        bytes_whole_buffers: r.bytes_whole_buffers,
        wall_ms: r.wall_ms,
        guard_fired: r.guard_fired,
        notes: r.notes.clone(),
        mpi: None,
    }
}

/// The index of the first element whose bytes differ.
fn first_difference(a: &[u8], b: &[u8], elem: usize) -> Option<u64> {
    if a.len() != b.len() {
        return Some((a.len().min(b.len()) / elem) as u64);
    }
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .map(|p| (p / elem) as u64)
}

/// Writes the `--out` files to their temporaries; the caller commits them
/// all at once.
fn write_outs(
    set: &mut BufferSet,
    ids: &[BufferId],
    outs: &[(usize, OutputId)],
    files: &mut OutputFiles,
) -> Result<()> {
    for (b, id) in outs {
        // already gathered: nothing moves again
        let host = set.get_mut(ids[*b]).expect("added above").read_all()?;
        files.write(*id, |w| host_data::write_npy_to(w, host))?;
    }
    Ok(())
}

fn print_text(r: &Report, runtime: &Runtime, verify_device: usize) {
    let devices: Vec<String> = runtime.devices().iter().map(|d| d.label()).collect();
    outln!(
        "{}: {} launches ({} steps x {}), devices {}",
        r.file,
        r.launches.len(),
        r.n_steps,
        r.repeat,
        devices.join(", ")
    );
    for l in &r.launches {
        let nd = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
        let how = if l.split {
            let s: Vec<String> = l
                .shares
                .iter()
                .map(|s| format!("{}:{:.3}", s.device, s.share))
                .collect();
            format!(
                "split {} along dimension {}",
                s.join(","),
                l.split_dim.unwrap_or(0)
            )
        } else {
            format!("whole ({})", l.reason.as_deref().unwrap_or("one device"))
        };
        outln!(
            "  {}.{} {} [{}]/[{}] {}: moved {} B (to devices {}, from {}), whole buffers {} B, wall {:.3} ms{}",
            l.repetition + 1,
            l.step + 1,
            l.kernel,
            nd(&l.global),
            nd(&l.local),
            how,
            l.bytes_total,
            l.bytes_to_devices,
            l.bytes_from_devices,
            l.bytes_whole_buffers,
            l.wall_ms,
            if l.guard_fired { ", guard fired" } else { "" }
        );
        if let Some(m) = &l.mpi {
            let per: Vec<String> = m
                .per_rank
                .iter()
                .enumerate()
                .map(|(r, (to, from))| format!("rank {r} {to} B in, {from} B out"))
                .collect();
            outln!(
                "    mpi: {} B ({}), whole buffers {} B",
                m.bytes_mpi,
                per.join("; "),
                m.bytes_whole_buffers
            );
        }
    }
    let t = &r.total;
    if let Some(b) = t.bytes_mpi {
        outln!("over mpi: {b} B of elements in all (launches and final reads)");
    }
    outln!(
        "total: {} launches, moved {} B (to devices {}, from devices {}, read back {}), whole buffers {} B, wall {:.3} ms, analysis {:.3} ms",
        t.launches, t.bytes_total, t.bytes_to_devices, t.bytes_from_devices, t.bytes_read_back, t.bytes_whole_buffers, t.wall_ms, t.analysis_ms
    );
    match r.verified {
        Some(true) => {
            outln!("verified: every buffer equals the unsplit run on device {verify_device}")
        }
        Some(false) => outln!("verification failed"),
        None => {}
    }
}
