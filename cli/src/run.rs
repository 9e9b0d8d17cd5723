//! `clpart run` and `clpart devices`.

use crate::analyze::{parse_size3, read_source};
use anyhow::{bail, Context, Result};
use clap::Args;
use host_data::PlanArgs;
use launcher::{KernelArgs, LaunchOptions, NdRange, RunReport, Runtime};
use ranges_format::RangeFile;
use session::{Counts, LaunchConfig, Session};
use std::path::{Path, PathBuf};

/// Version of `clpart run --json`'s report (the launcher's `RunReport` and
/// the fields added here); a change that adds, removes or retypes a
/// top-level field bumps it (`cli/tests/json_documents.rs` declares them).
const RUN_SCHEMA_VERSION: u32 = 1;

/// Version of `clpart devices --json` (`schema_version` and `devices`, the
/// launcher's `DeviceInfo` list); bumped as [`RUN_SCHEMA_VERSION`] is.
const DEVICES_SCHEMA_VERSION: u32 = 1;

#[derive(Args)]
pub struct RunArgs {
    /// The OpenCL C source, or a range file made by `clpart analyze -o` (`*.ron`).
    pub file: PathBuf,
    /// The kernel to run (default: the first).
    #[arg(long)]
    pub kernel: Option<String>,
    /// Global NDRange size.
    #[arg(long, value_name = "X[,Y[,Z]]")]
    pub global: String,
    /// Work-group size, as 16x16 or 16,16 (default: the largest divisor of the global size up to 64
    /// in dimension 0, 1 in the others; the split unit is the work-group).
    #[arg(long, value_name = "X[,Y[,Z]]")]
    pub local: Option<String>,
    /// Kernel argument: NAME=VALUE for scalars, NAME=rand:N[:SEED] | zeros:N | seq:N | file:PATH.npy for
    /// buffers (N elements), NAME=local:N for __local pointers. Repeatable.
    #[arg(long = "arg", value_name = "NAME=SPEC")]
    pub args: Vec<String>,
    /// Device shares: IDX:SHARE,IDX:SHARE,... summing to 1, or `auto`: every device, in
    /// proportion to its measured speed on the kernel (even at first, refined launch
    /// after launch over --repeat) (default: even over all devices).
    #[arg(long, value_name = "IDX:SHARE,...")]
    pub split: Option<String>,
    /// Split along this dimension (source files only; default: chosen by the analysis).
    #[arg(long)]
    pub split_dim: Option<u32>,
    /// Also run unsplit on one device and compare every output byte (exit 1 on a mismatch).
    #[arg(long)]
    pub verify: bool,
    /// With --verify: write the --out files even when verification fails
    /// (by default a failed verification writes no output).
    #[arg(long, requires = "verify")]
    pub out_on_mismatch: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Draw each array and each device's read and written ranges of the last launch
    /// (waste hatched) to this SVG file (atomically).
    #[arg(long, value_name = "OUT.svg")]
    pub svg: Option<PathBuf>,
    /// Write an output buffer as .npy (repeatable): NAME=FILE.npy.
    #[arg(long = "out", value_name = "NAME=FILE.npy")]
    pub outs: Vec<String>,
    /// Launch this many times (the report is the last launch's; wall times are listed).
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
    /// Launch this many times first, unreported and unmeasured (programs
    /// built, buffers and drivers warm), with the shares given (even for
    /// `auto`); their outputs are discarded.
    #[arg(long, default_value_t = 0)]
    pub warmup: u32,
    /// Most bytes of buffers one device may hold for its slice.
    #[arg(long, value_name = "BYTES")]
    pub device_mem_cap: Option<u64>,
    /// Turn the run-time guard off: subkernels do not check their accesses against their ranges
    /// (faster; a defect of the analysis could then corrupt memory or change results).
    #[arg(long)]
    pub unchecked: bool,
    /// Preprocessor options passed to clang and the OpenCL compiler (`-DNAME=VALUE`); repeatable.
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    pub defines: Vec<String>,
    /// Under mpirun (feature `mpi`): each rank's shares among its own devices, IDX:SHARE,...
    /// (default: even); --split then names ranks.
    #[arg(long, value_name = "IDX:SHARE,...")]
    pub local_split: Option<String>,
    /// Under mpirun (feature `mpi`): seconds rank 0 waits for a rank's answer before it names
    /// the rank and stops the job.
    #[arg(long, value_name = "SECONDS", default_value_t = 120)]
    pub rank_timeout: u64,
}

fn parse_sizes(text: &str, what: &str) -> Result<Vec<u64>> {
    NdRange::parse_sizes(text).with_context(|| format!("{what} '{text}'"))
}

/// Parses `IDX:SHARE,...` (`launcher::parse_shares`) for `--split`.
pub fn parse_shares(text: &str) -> Result<Vec<(usize, f64)>> {
    launcher::parse_shares(text).map_err(|e| anyhow::anyhow!("--split {e}"))
}

fn is_range_file(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "ron")
}

/// The session of this run: over the range file, or over the source (parsed once).
pub(crate) fn session(args: &RunArgs) -> Result<Session> {
    if is_range_file(&args.file) {
        // A range file is untrusted input (it also carries kernel code):
        // RangeFile::read validates every field and verifies the checksums.
        let rf = RangeFile::read(&args.file)
            .with_context(|| format!("cannot load range file '{}'", args.file.display()))?;
        return Ok(Session::from_range_file(rf));
    }
    let source = read_source(&args.file)?;
    let file = args.file.display().to_string();
    let mut build: Vec<String> = args.defines.iter().map(|d| format!("-D{d}")).collect();
    // `#include "x.h"` beside the kernel: libclang finds it from the file's
    // path, the device's compiler from the current directory
    if source.contains("#include") {
        if let Some(dir) = args.file.parent().filter(|d| !d.as_os_str().is_empty()) {
            build.push(format!("-I{}", dir.display()));
        }
    }
    Ok(Session::from_source(&file, &source, &build)?)
}

pub fn run(args: RunArgs) -> Result<u8> {
    #[cfg(feature = "mpi")]
    if let Some(world) = mpi_ranks::World::from_env() {
        let timeout = args.rank_timeout;
        return crate::ranks::over_ranks(world, timeout, |coord| crate::ranks::run(args, coord));
    }
    let global = parse_sizes(&args.global, "--global")?;
    let local = match &args.local {
        Some(l) => parse_sizes(l, "--local")?,
        None => NdRange::default_local(&global),
    };
    if let Some(l) = &args.local {
        parse_size3(l, "--local")?;
    }
    let nd = NdRange::new(&global, &local)?;
    // Every output is reserved before anything runs: one that cannot be
    // written stops the command now, and none is replaced unless all are.
    let mut files = crate::output_files::OutputFiles::default();
    let mut outs = Vec::new();
    for o in &args.outs {
        let (name, path) = o
            .split_once('=')
            .with_context(|| format!("--out '{o}' must be NAME=FILE.npy"))?;
        let id = files.reserve(Path::new(path), &format!("--out '{o}'"))?;
        outs.push((name.to_string(), id));
    }
    let svg_id = match &args.svg {
        Some(path) => Some(files.reserve(path, "--svg")?),
        None => None,
    };
    let mut session = session(&args)?;
    let kernel = session.kernel_name(args.kernel.as_deref())?;
    // The report shows `bytes_exact`: the slice counts, made at this
    // launch's values (no parametric counts, no vertices: `clpart analyze`
    // has those).
    let config = LaunchConfig {
        split_dim: args.split_dim,
        counts: Counts::AtLaunch,
        ..LaunchConfig::new(&global, &local)
    }
    .with_specs(&args.args);
    let runtime = Runtime::new()?;
    let n_devices = runtime.devices().len();
    if n_devices == 0 {
        bail!("no OpenCL device found");
    }
    let auto = args.split.as_deref().map(str::trim) == Some("auto");
    let shares = match &args.split {
        Some(_) if auto => session::Shares::Auto((0..n_devices).collect()),
        Some(s) => session::Shares::Fixed(parse_shares(s)?),
        None => session::Shares::Fixed(
            (0..n_devices)
                .map(|i| (i, 1.0 / n_devices as f64))
                .collect(),
        ),
    };
    // the launches' shares, the rounds of a first `auto` launch, what is
    // measured (session::Door)
    let mut door = session::Door::new();
    let key = launcher::launch_key(&kernel, &nd);
    let progress =
        crate::progress::Progress::start(format!("analyzing and building kernel '{kernel}'"));
    let t_analysis = std::time::Instant::now();
    let (plan, _) = session.plan(&runtime, &kernel, &config)?;
    let analysis_ms = t_analysis.elapsed().as_secs_f64() * 1e3;
    let mut kargs: KernelArgs = plan.args_from_specs(&args.args)?;
    // Check --out names before running anything.
    for (o, (name, _)) in args.outs.iter().zip(&outs) {
        if kargs.buffer(name).is_none() {
            let valid: Vec<&str> = kargs.global_buffers().map(|(n, _)| n).collect();
            bail!(
                "--out '{o}': '{name}' is not a buffer argument (buffers: {})",
                valid.join(", ")
            );
        }
    }
    let options = LaunchOptions {
        verify: args.verify,
        verify_device: None,
        mem_cap_bytes: args.device_mem_cap,
        unchecked: args.unchecked,
        ..Default::default()
    };
    let mut walls = Vec::new();
    let mut report: Option<RunReport> = None;
    let mut failed_launch = None;
    let mut used = Vec::new();
    let pristine = if args.repeat > 1 || args.warmup > 0 {
        Some(kargs.clone())
    } else {
        None
    };
    for _ in 0..args.warmup {
        // unmeasured, so past the door's launch: the shares given, even
        // for `auto` (nothing is measured yet)
        let warm_shares = door.shares(&shares, &key);
        launcher::launch(plan, &nd, &mut kargs, &warm_shares, &options)?;
        if let Some(p) = &pristine {
            kargs = p.clone();
        }
    }
    for i in 0..args.repeat.max(1) {
        if i > 0 {
            if let Some(p) = &pristine {
                kargs = p.clone();
            }
        }
        progress.set_message(format!("launch {} of {}", i + 1, args.repeat.max(1)));
        let launched = door.launch(
            plan,
            &nd,
            &mut kargs,
            session::Buffers::Host,
            &shares,
            &key,
            &options,
        )?;
        let r = launched.report;
        walls.push(r.wall_ms);
        used = launched.shares;
        // a launch that fails verification is the one reported, and the last
        let failed = r.verified == Some(false);
        report = Some(r);
        if failed {
            failed_launch = Some(i + 1);
            break;
        }
    }
    drop(progress);
    let mut report = report.expect("at least one launch");
    if args.warmup == 0 && args.repeat <= 1 {
        report.notes.push(FIRST_LAUNCH_NOTE.to_string());
    }
    let cached = session.from_cache(&kernel, &config);
    if let Some(svg_id) = svg_id {
        // the launch's values: sizes, integer scalars, each device's slice
        let mut given = std::collections::BTreeMap::new();
        for (d, (g, l)) in global.iter().zip(&local).enumerate() {
            given.insert(format!("gs{d}"), *g as i64);
            given.insert(format!("ls{d}"), *l as i64);
        }
        for spec in &args.args {
            if let Some((n, v)) = spec.split_once('=') {
                if let Ok(v) = v.trim().parse::<i64>() {
                    given.insert(n.trim().to_string(), v);
                }
            }
        }
        let rf = session.ranges_for_launch(&kernel, &config)?;
        let k = rf
            .kernel(&kernel)
            .with_context(|| format!("no ranges for kernel '{kernel}'"))?;
        // every array drawn at its buffer's size (`__constant` ones too)
        let extents: std::collections::BTreeMap<String, u64> = k
            .arrays
            .iter()
            .filter_map(|a| Some((a.name.clone(), kargs.buffer(&a.name)?.len())))
            .collect();
        let d = k.split_dim.unwrap_or(0) as usize;
        let n_groups = (global.get(d).copied().unwrap_or(1)
            / local.get(d).copied().unwrap_or(1).max(1)) as i64;
        let slices: Vec<clpart_cli::svg::Slice> = if report.split {
            report
                .devices
                .iter()
                .filter(|r| r.work_groups > 0)
                .map(|r| clpart_cli::svg::Slice {
                    device: r.index,
                    lo: r.slice.0 as i64,
                    hi: r.slice.1 as i64,
                    run: true,
                })
                .collect()
        } else {
            vec![clpart_cli::svg::Slice {
                device: report.devices.first().map_or(0, |r| r.index),
                lo: 0,
                hi: n_groups,
                run: true,
            }]
        };
        let svg = clpart_cli::svg::picture(k, &given, &slices, &extents)
            .map_err(|e| anyhow::anyhow!("--svg: kernel '{kernel}': {e}"))?;
        files.write(svg_id, |w| w.write_all(svg.as_bytes()))?;
    }
    let mismatch = report.verified == Some(false);
    if !mismatch || args.out_on_mismatch {
        for (name, id) in &outs {
            let b = kargs.buffer(name).expect("checked above");
            files.write(*id, |w| host_data::write_npy_to(w, b))?;
        }
    } else if !outs.is_empty() {
        crate::terminal::note(
            "verification failed, so no --out file was written (--out-on-mismatch writes them)",
        );
    }
    files.commit()?;
    if args.json {
        let mut v = serde_json::to_value(&report)?;
        v["schema_version"] = serde_json::json!(RUN_SCHEMA_VERSION);
        // Analysis (or cache read) and program builds, before the first launch.
        v["analysis_ms"] = serde_json::json!(analysis_ms);
        v["ranges_cached"] = serde_json::json!(cached);
        if args.repeat > 1 {
            v["wall_ms_all"] = serde_json::json!(walls);
        }
        if auto {
            v["shares"] = serde_json::json!(used
                .iter()
                .map(|(d, s)| serde_json::json!({"device": d, "share": s}))
                .collect::<Vec<_>>());
        }
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        outln!("{report}");
        outln!(
            "  analysis and build {analysis_ms:.1} ms{}",
            if cached {
                " (ranges from the analysis cache)"
            } else {
                ""
            }
        );
        if auto {
            let s: Vec<String> = used.iter().map(|(d, s)| format!("{d}:{s:.3}")).collect();
            let rates: Vec<String> = door
                .balancer()
                .map(|b| b.rates(&key))
                .unwrap_or_default()
                .iter()
                .map(|(d, r)| {
                    format!(
                        "{d}: {}",
                        r.map_or("not measured".to_string(), |r| format!(
                            "{r:.1} work-groups per ms busy"
                        ))
                    )
                })
                .collect();
            let alone = if used.len() == 1 && n_devices > 1 {
                " (the device alone: its measured wall beat the split's)"
            } else {
                ""
            };
            outln!(
                "  shares (auto) of the last launch {}{alone}; measured rates {}",
                s.join(","),
                rates.join(", ")
            );
        }
        if args.repeat > 1 {
            let mut w = walls.clone();
            w.sort_by(|a, b| a.partial_cmp(b).unwrap());
            outln!(
                "  {} launches: median wall {:.3} ms, min {:.3} ms",
                w.len(),
                w[w.len() / 2],
                w[0]
            );
        }
    }
    if report.verified == Some(false) {
        let m = report
            .mismatch
            .as_ref()
            .map(|m| {
                format!(
                    ": array '{}' differs first at element {}",
                    m.array, m.elem_idx
                )
            })
            .unwrap_or_default();
        let at = match failed_launch {
            Some(i) if args.repeat > 1 => format!(" in launch {i} of {}", args.repeat),
            _ => String::new(),
        };
        crate::terminal::error(&format!("verification failed{at}{m}"));
        return Ok(1);
    }
    Ok(0)
}

/// The note on a report of the process's first launch: a driver may
/// compile the kernel when it first launches it (PoCL does: 230 ms for
/// matmul on a cold cache, against 0.8 ms warm), inside the kernel time.
pub const FIRST_LAUNCH_NOTE: &str = "the process's first launch: a device's kernel time may include its driver compiling the kernel (PoCL compiles at the first launch); --warmup 1 leaves that out";

#[derive(Args)]
pub struct DevicesArgs {
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn devices(args: DevicesArgs) -> Result<u8> {
    let devs = launcher::devices()?;
    if args.json {
        let v = serde_json::json!({
            "schema_version": DEVICES_SCHEMA_VERSION,
            "devices": devs,
        });
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else if devs.is_empty() {
        outln!("no OpenCL devices");
    } else {
        for d in &devs {
            outln!("{d}");
        }
    }
    Ok(0)
}
