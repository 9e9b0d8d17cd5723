//! `clpart analyze`.

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use partitioner::PartitionOptions;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Emit {
    /// The coarsened C (one work-group as loops over local ids).
    Coarsened,
    /// The access relations (isl syntax) per array.
    Access,
    /// The range file (RON).
    Ranges,
}

#[derive(Args)]
pub struct AnalyzeArgs {
    /// The OpenCL C source file (`-`: standard input).
    pub file: PathBuf,
    /// The kernel to analyze (default: every kernel; for --emit coarsened/access, the first).
    #[arg(long)]
    pub kernel: Option<String>,
    /// Print one stage's output instead of the report (its one text form:
    /// not with --json, which is the report's).
    #[arg(long, value_enum, conflicts_with = "json")]
    pub emit: Option<Emit>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write the range file here (atomically).
    #[arg(short = 'o', long = "output", value_name = "FILE.ranges.ron")]
    pub output: Option<PathBuf>,
    /// Split along this NDRange dimension instead of choosing.
    #[arg(long)]
    pub split_dim: Option<u32>,
    /// Specialize on this work-group size (makes get_group_id/get_local_id exact).
    #[arg(long, value_name = "X[,Y[,Z]]")]
    pub local: Option<String>,
    /// Specialize on a scalar argument's value (repeatable): NAME=VALUE.
    #[arg(long, value_name = "NAME=VALUE")]
    pub specialize: Vec<String>,
    /// Also print the ranges at these values, as in the thesis's tables:
    /// NAME=VALUE,... (gs<d>, ls<d>, scalar arguments).
    #[arg(long, value_name = "NAME=VALUE,...")]
    pub at: Option<String>,
    /// With --at: draw the arrays and each slice's read and written ranges (waste hatched)
    /// to this SVG file (atomically); one kernel (choose it with --kernel).
    #[arg(long, value_name = "OUT.svg", requires = "at")]
    pub svg: Option<PathBuf>,
    /// With --at: the number of equal slices to show.
    #[arg(long, default_value_t = 2)]
    pub slices: u32,
    /// Analyze as `clpart run` and `clpart exec` would for one launch, and
    /// print its verdict and ranges at its values: `gs=X[,Y[,Z]]`, optionally
    /// `ls=X[,Y[,Z]]` (default: as `clpart run` picks) and integer scalar
    /// arguments `NAME=VALUE`, as separate words or as one quoted word; one
    /// kernel (choose it with --kernel).
    #[arg(
        long,
        value_name = "gs=.. [ls=..] [NAME=VALUE..]",
        num_args = 1..,
        conflicts_with_all = ["local", "specialize", "at"]
    )]
    pub launch: Vec<String>,
    /// Skip the Ehrhart counts.
    #[arg(long)]
    pub no_counts: bool,
    /// Wall-clock budget of each kernel's analysis in milliseconds, counts
    /// and vertex bounds included (0: none). What is still running when it
    /// is spent falls back: a count or vertex bound is left out, an array
    /// not yet bounded is whole; each says why. Default: 1500 in optimized
    /// builds.
    #[arg(long, value_name = "MS")]
    pub budget_ms: Option<u64>,
    /// Preprocessor options passed to clang (`-DNAME=VALUE`); repeatable.
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    pub defines: Vec<String>,
    /// Include directories passed to clang; repeatable.
    #[arg(short = 'I', value_name = "DIR")]
    pub includes: Vec<String>,
}

impl AnalyzeArgs {
    pub fn clang_args(&self) -> Vec<String> {
        let mut v: Vec<String> = self.defines.iter().map(|d| format!("-D{d}")).collect();
        v.extend(self.includes.iter().map(|i| format!("-I{i}")));
        v
    }
}

/// Reads a kernel source file (or a run file: the same limit) with a clear
/// error: a regular file of at most [`ranges_format::input::SOURCE`].
pub fn read_source(path: &Path) -> Result<String> {
    ranges_format::input::read_text(path, ranges_format::input::SOURCE)
        .with_context(|| format!("cannot read '{}'", path.display()))
}

/// Parses `X[,Y[,Z]]` into a 3-D size (missing dimensions are 1).
pub fn parse_size3(text: &str, what: &str) -> Result<[i64; 3]> {
    // the same syntax as --global: 16x16 or 16,16
    let parts: Vec<&str> = text.split(['x', ',']).collect();
    if parts.is_empty() || parts.len() > 3 {
        bail!("{what} '{text}' must have 1 to 3 sizes (write them as 16x16)");
    }
    let mut out = [1i64; 3];
    for (i, p) in parts.iter().enumerate() {
        out[i] = p
            .trim()
            .parse::<i64>()
            .ok()
            .filter(|v| *v >= 1)
            .with_context(|| format!("{what} '{text}': '{p}' is not a positive integer"))?;
    }
    Ok(out)
}

pub fn partition_options(args: &AnalyzeArgs) -> Result<PartitionOptions> {
    let mut o = PartitionOptions {
        split_dim: args.split_dim,
        counts: if args.no_counts {
            partitioner::Counts::None
        } else {
            partitioner::Counts::All
        },
        ..Default::default()
    };
    if let Some(ms) = args.budget_ms {
        o.analysis.time_budget_ms = ms;
    }
    if let Some(l) = &args.local {
        o.analysis.local_size = Some(parse_size3(l, "--local")?);
    }
    for s in &args.specialize {
        let (n, v) = s
            .split_once('=')
            .with_context(|| format!("--specialize '{s}' must be NAME=VALUE"))?;
        let v: i64 = v
            .trim()
            .parse()
            .with_context(|| format!("--specialize '{s}': '{v}' is not an integer"))?;
        o.analysis.specialize.insert(n.trim().to_string(), v);
    }
    Ok(o)
}

/// The name reports give a source read from standard input.
const STDIN_NAME: &str = "<stdin>";

/// The kernel source on standard input (`clpart analyze -`), bounded as a
/// file is.
fn read_stdin_source() -> Result<String> {
    let limit = ranges_format::input::SOURCE;
    let bytes = ranges_format::input::read_to_limit(std::io::stdin(), limit)
        .context("cannot read standard input")?;
    String::from_utf8(bytes).context("cannot read standard input: not valid utf-8")
}

/// The `--at` values by name: `NAME=VALUE,...`, each name one the
/// kernels' ranges are written in (their parameters) or an NDRange size
/// of theirs (`gs<d>`, `ls<d>`, `go<d>`, `ng<d>`).
fn at_values(
    text: &str,
    rf: &ranges_format::RangeFile,
) -> Result<std::collections::BTreeMap<String, i64>> {
    let mut known: Vec<String> = Vec::new();
    for k in &rf.kernels {
        let sizes =
            (0..k.work_dim).flat_map(|d| ["gs", "ls", "go", "ng"].map(|p| format!("{p}{d}")));
        for n in k.params.iter().map(|p| p.name.clone()).chain(sizes) {
            if !known.contains(&n) {
                known.push(n);
            }
        }
    }
    let mut m = std::collections::BTreeMap::new();
    for part in text.split(',') {
        let (n, v) = part
            .split_once('=')
            .with_context(|| format!("--at entry '{part}' must be NAME=VALUE"))?;
        let v: i64 = v
            .trim()
            .parse()
            .with_context(|| format!("--at entry '{part}': '{v}' is not an integer"))?;
        let n = n.trim();
        if !known.iter().any(|k| k == n) {
            bail!("--at: unknown name '{n}' (names: {})", known.join(", "));
        }
        m.insert(n.to_string(), v);
    }
    Ok(m)
}

/// A `--launch` list as the launch it names: its configuration and the
/// values its ranges are printed at (`gs<d>`, `ls<d>`, the scalars).
fn launch_config(
    items: &[String],
    split_dim: Option<u32>,
) -> Result<(
    session::LaunchConfig,
    std::collections::BTreeMap<String, i64>,
)> {
    // read as --global and --local are
    let sizes = |v: &str, what: &str| -> Result<Vec<u64>> {
        launcher::NdRange::parse_sizes(v)
            .ok()
            .filter(|s| (1..=3).contains(&s.len()) && s.iter().all(|&n| n > 0))
            .with_context(|| {
                format!("--launch {what}={v}: give 1 to 3 positive integers, comma-separated")
            })
    };
    let (mut global, mut local) = (None, None);
    let mut scalars = std::collections::BTreeMap::new();
    // (the entries may also come as one quoted word: "gs=64,64 ls=8,8")
    for item in items.iter().flat_map(|i| i.split_whitespace()) {
        let (n, v) = item
            .split_once('=')
            .with_context(|| format!("--launch entry '{item}' must be NAME=VALUE"))?;
        match n.trim() {
            "gs" => global = Some(sizes(v, "gs")?),
            "ls" => local = Some(sizes(v, "ls")?),
            n => {
                let v: i64 = v
                    .trim()
                    .parse()
                    .with_context(|| format!("--launch entry '{item}': '{v}' is not an integer"))?;
                scalars.insert(n.to_string(), v);
            }
        }
    }
    let global = global.context("--launch needs the global size: gs=X[,Y[,Z]]")?;
    let local = match local {
        Some(l) if l.len() != global.len() => bail!(
            "--launch: ls has {} dimensions, gs {}",
            l.len(),
            global.len()
        ),
        Some(l) => l,
        None => launcher::NdRange::default_local(&global),
    };
    let nd =
        launcher::NdRange::new(&global, &local).map_err(|e| anyhow::anyhow!("--launch: {e}"))?;
    let mut at = scalars.clone();
    for (d, (&g, &l)) in nd.global.iter().zip(&nd.local).enumerate() {
        at.insert(format!("gs{d}"), g as i64);
        at.insert(format!("ls{d}"), l as i64);
    }
    let config = session::LaunchConfig {
        global: nd.global.clone(),
        local: nd.local.clone(),
        scalars,
        split_dim,
        counts: session::Counts::All,
        only: None,
    };
    Ok((config, at))
}

pub fn run(args: AnalyzeArgs) -> Result<u8> {
    let from_stdin = args.file.as_os_str() == "-";
    let source = if from_stdin {
        read_stdin_source()?
    } else {
        read_source(&args.file)?
    };
    // Every output is reserved before the analysis runs: one that cannot
    // be written stops the command now, and none is replaced unless all are.
    let mut files = crate::output_files::OutputFiles::default();
    let output_id = match &args.output {
        Some(path) => Some(files.reserve(path, "-o")?),
        None => None,
    };
    let svg_id = match &args.svg {
        Some(path) => Some(files.reserve(path, "--svg")?),
        None => None,
    };
    let file = if from_stdin {
        STDIN_NAME.to_string()
    } else {
        args.file.display().to_string()
    };
    let session = session::Session::from_source(&file, &source, &args.clang_args())?;
    let program = session.program().expect("made from source");
    for d in &program.diagnostics {
        crate::terminal::info(&d.to_string());
    }
    let first = session.kernel_name(args.kernel.as_deref())?;
    match args.emit {
        Some(Emit::Coarsened) => {
            out!("{}", coarsen::emit_c(program, &first)?);
            return Ok(0);
        }
        Some(Emit::Access) => {
            let po = partition_options(&args)?;
            out!("{}", session.accesses(&first, &po.analysis)?);
            return Ok(0);
        }
        _ => {}
    }
    let po = partition_options(&args)?;
    let progress = crate::progress::Progress::start(format!("analyzing {file}"));
    let (rf, at) = if args.launch.is_empty() {
        let mut rf = session.analyze(args.kernel.as_deref(), &po)?;
        session.note_local_size_needed(&mut rf, &po);
        // named values checked before any output
        let at = match &args.at {
            Some(t) => Some(at_values(t, &rf)?),
            None => None,
        };
        (rf, at)
    } else {
        // one launch, analyzed as `clpart run` analyzes it
        let (config, at) = launch_config(&args.launch, args.split_dim)?;
        let kernel = match &args.kernel {
            Some(k) => k.clone(),
            None => {
                let names: Vec<String> = program.kernels().map(|f| f.name.clone()).collect();
                let [one] = names.as_slice() else {
                    bail!(
                        "--launch analyzes one kernel: choose it with --kernel (kernels: {})",
                        names.join(", ")
                    );
                };
                one.clone()
            }
        };
        // (a session of its own: the report below borrows this one's parse)
        let mut one = session::Session::from_source(&file, &source, &args.clang_args())?;
        let mut rf = one.ranges_for_launch(&kernel, &config)?.clone();
        // the verdict at this launch's values, as the launcher takes it
        let point = partitioner::LaunchPoint {
            global: config.global.clone(),
            local: config.local.clone(),
            scalars: config.scalars.clone(),
        };
        for k in &mut rf.kernels {
            let failing: Vec<String> = session::assumptions_failing(k, &point)
                .into_iter()
                .map(str::to_string)
                .collect();
            let verdict = match (&k.reason, failing.as_slice()) {
                (Some(why), _) if !k.splittable => format!("this launch runs unsplit: {why}"),
                (_, []) => "this launch splits".to_string(),
                (_, f) => format!(
                    "at this launch a launch-time assumption does not hold ({}): an array it models goes whole, or the launch runs unsplit if that array is written",
                    f.join("; ")
                ),
            };
            k.diagnostics.push(verdict);
        }
        (rf, Some(at))
    };
    drop(progress);
    if let Some(id) = output_id {
        rf.validate()?;
        let text = rf.to_ron_string()?;
        files.write(id, |w| w.write_all(text.as_bytes()))?;
    }
    // exit 1 when no kernel can be split (documented in --help)
    let code = if rf.kernels.iter().any(|k| k.splittable) {
        0
    } else {
        1
    };
    if args.emit == Some(Emit::Ranges) {
        let text = rf.to_ron_string()?;
        files.commit()?;
        out!("{text}");
        return Ok(code);
    }
    if args.json {
        let report = clpart_cli::report::report(&file, &rf, Some(program));
        let text = serde_json::to_string_pretty(&report)?;
        files.commit()?;
        outln!("{text}");
        return Ok(code);
    }
    if let (Some(svg_id), Some(m)) = (svg_id, &at) {
        let names: Vec<&str> = rf.kernels.iter().map(|k| k.name.as_str()).collect();
        let [k] = rf.kernels.as_slice() else {
            bail!(
                "--svg draws one kernel: choose it with --kernel (kernels: {})",
                names.join(", ")
            );
        };
        let slices = clpart_cli::svg::equal_slices(k, m, args.slices)
            .map_err(|e| anyhow::anyhow!("kernel '{}': {e}", k.name))?;
        let svg = clpart_cli::svg::picture(k, m, &slices, &Default::default())
            .map_err(|e| anyhow::anyhow!("kernel '{}': {e}", k.name))?;
        files.write(svg_id, |w| w.write_all(svg.as_bytes()))?;
    }
    // the whole report first: an error in it leaves every output as it was
    let mut text = String::new();
    for k in &rf.kernels {
        // the whole report with --verbose; else what decides the split
        text.push_str(&if crate::terminal::verbose() {
            partitioner::report::human(k)
        } else {
            partitioner::report::brief(k)
        });
        if let Some(m) = &at {
            match partitioner::report::table_at(k, m, args.slices.max(1)) {
                Ok(t) => text.push_str(&t),
                Err(e) => bail!("kernel '{}': {e}", k.name),
            }
        }
    }
    files.commit()?;
    out!("{text}");
    // a hint for a person reading the report, not for a program or file
    // reading it (`clpart analyze k.cl | head -1` then ends in silence)
    if !crate::terminal::verbose() && std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        crate::terminal::info("the whole report (ranges by case, counts, vertices, the launch checks' conditions): add --verbose");
    }
    if let Some(out) = &args.output {
        crate::terminal::info(&format!("wrote {}", out.display()));
    }
    if let Some(out) = &args.svg {
        crate::terminal::info(&format!("wrote {}", out.display()));
    }
    Ok(code)
}
