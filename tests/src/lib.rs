//! Shared helpers for clpart's end-to-end and corpus tests: the kernel corpus
//! (`kernels/<folder>/*.cl` and the directives in their header comments) and
//! golden files (re-blessed with `CLPART_BLESS=1`).

use std::path::{Path, PathBuf};

use host_data::PlanArgs;

mod corpus_files;
pub use corpus_files::{cl_files, corpus_file, corpus_files, NOT_CORPUS};

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// The arguments of `clpart run kernels/basics/vadd.cl` the CLI tests share: a
/// 1000-element vadd in work-groups of 8 over seeded inputs.
pub const VADD_RUN_ARGS: &[&str] = &[
    "--global",
    "1000",
    "--local",
    "8",
    "--arg",
    "a=rand:1000:3",
    "--arg",
    "b=rand:1000:4",
    "--arg",
    "c=zeros:1000",
];

/// A command's standard error as text.
pub fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A `clpart` run that refused its input: exit 2, exactly one
/// `clpart: error:` line, naming `needle`, and no panic.
#[track_caller]
pub fn assert_input_error(o: &std::process::Output, needle: &str) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {e}");
    assert!(!e.contains("panicked"), "{e}");
    let errors: Vec<&str> = e
        .lines()
        .filter(|l| l.starts_with("clpart: error:"))
        .collect();
    assert_eq!(errors.len(), 1, "{e}");
    assert!(errors[0].contains(needle), "expected '{needle}' in: {e}");
}

/// What a corpus kernel's header says the analysis must conclude.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expect {
    pub splittable: bool,
    /// Arrays whose accesses cannot be modeled (transferred whole).
    pub whole: Vec<String>,
}

/// One corpus kernel and its header directives.
#[derive(Debug, Clone)]
pub struct CorpusKernel {
    pub path: PathBuf,
    /// The kernel name (= the file stem).
    pub name: String,
    pub source: String,
    /// `@run` argument lists (as `clpart run` takes them).
    pub runs: Vec<Vec<String>>,
    pub expect: Expect,
    /// `@float`: outputs are floating point.
    pub float: bool,
    /// `@build` options.
    pub build: Vec<String>,
    /// `@uncoarsenable MESSAGE`: the kernel uses a construct the coarsened C
    /// cannot express (it still runs, unsplit); coarsening must fail with
    /// MESSAGE, and the tests that run the coarsened C skip it.
    pub uncoarsenable: Option<String>,
    /// `@order-dependent`: which value an element keeps depends on the
    /// order the driver runs the work-groups in (a write race on purpose),
    /// so only runs on devices that keep one order compare bit for bit; the
    /// coarsened C oracle, whose order is its own, skips the kernel.
    pub order_dependent: bool,
}

impl CorpusKernel {
    /// The file relative to the workspace root (`kernels/basics/vadd.cl`), as messages name it.
    pub fn file(&self) -> String {
        let root = workspace_root();
        self.path
            .strip_prefix(&root)
            .unwrap_or(&self.path)
            .display()
            .to_string()
    }

    /// The value of `--flag` in run `i`.
    pub fn run_flag(&self, i: usize, flag: &str) -> Option<String> {
        let r = &self.runs[i];
        r.iter()
            .position(|a| a == flag)
            .and_then(|p| r.get(p + 1).cloned())
    }

    /// The `--arg NAME=SPEC` pairs of run `i`.
    pub fn run_args(&self, i: usize) -> Vec<(String, String)> {
        let r = &self.runs[i];
        let mut out = Vec::new();
        for (j, a) in r.iter().enumerate() {
            if a == "--arg" {
                if let Some((n, s)) = r.get(j + 1).and_then(|x| x.split_once('=')) {
                    out.push((n.to_string(), s.to_string()));
                }
            }
        }
        out
    }

    /// The session over this kernel's source (its `@build` options).
    pub fn session(&self) -> Result<session::Session, session::SessionError> {
        session::Session::from_source(&self.file(), &self.source, &self.build)
    }

    /// The launch configuration of run `i`: its sizes and integer scalars.
    pub fn launch_config(&self, i: usize) -> session::LaunchConfig {
        let size = |flag| {
            self.run_sizes(i, flag)
                .iter()
                .map(|&x| x as u64)
                .collect::<Vec<u64>>()
        };
        let specs: Vec<String> = self
            .run_args(i)
            .iter()
            .map(|(n, s)| format!("{n}={s}"))
            .collect();
        session::LaunchConfig::new(&size("--global"), &size("--local"))
            .with_specs(&specs)
            .with_counts(session::Counts::All)
    }

    /// A comma-separated size list of run `i` (`--global` / `--local`).
    pub fn run_sizes(&self, i: usize, flag: &str) -> Vec<usize> {
        self.run_flag(i, flag)
            .map(|s| {
                s.split(',')
                    .map(|x| x.trim().parse().expect("size"))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Parses the header of one corpus file.
pub fn parse_corpus_file(path: &Path) -> CorpusKernel {
    let source =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    let mut runs = Vec::new();
    let mut expect = Expect {
        splittable: true,
        whole: Vec::new(),
    };
    let mut float = false;
    let mut build = Vec::new();
    let mut uncoarsenable = None;
    let mut order_dependent = false;
    for line in source.lines() {
        let Some(rest) = line.strip_prefix("//") else {
            break;
        };
        let Some(d) = rest.trim_start().strip_prefix('@') else {
            continue;
        };
        let (key, val) = d.split_once(' ').unwrap_or((d, ""));
        match key {
            "run" => runs.push(val.split_whitespace().map(String::from).collect()),
            "expect" => {
                let mut words = val.split_whitespace();
                expect.splittable = words.next() == Some("splittable");
                for w in words {
                    if let Some(list) = w.strip_prefix("whole=") {
                        expect.whole = list.split(',').map(String::from).collect();
                    }
                }
            }
            "float" => float = true,
            "build" => build = val.split_whitespace().map(String::from).collect(),
            "uncoarsenable" => uncoarsenable = Some(val.trim().to_string()),
            "order-dependent" => order_dependent = true,
            _ => {}
        }
    }
    CorpusKernel {
        path: path.to_path_buf(),
        name,
        source,
        runs,
        expect,
        float,
        build,
        uncoarsenable,
        order_dependent,
    }
}

/// Every corpus kernel (`kernels/<folder>/<name>.cl`, see [`corpus_files`]),
/// sorted by name.
pub fn corpus() -> Vec<CorpusKernel> {
    parse_corpus_files(&corpus_files(&kernels_dir()))
}

/// The slow-kernel set whose analysis still exceeds its time budget
/// (`kernels/slow/*.cl`, same header format): the bench times them; the
/// stage tests leave them out, since what a budget cuts short depends on the
/// machine's load.
pub fn slow_corpus() -> Vec<CorpusKernel> {
    parse_corpus_files(&cl_files(&kernels_dir().join("slow"), &[]))
}

/// The path of corpus kernel `name` (the file stem), in whichever folder of
/// `kernels/` it sits.
pub fn corpus_path(name: &str) -> PathBuf {
    corpus_file(&kernels_dir(), name)
}

/// The `kernels/` folder of the workspace.
fn kernels_dir() -> PathBuf {
    workspace_root().join("kernels")
}

fn parse_corpus_files(files: &[PathBuf]) -> Vec<CorpusKernel> {
    files.iter().map(|p| parse_corpus_file(p)).collect()
}

/// Whether golden files are being re-blessed (`CLPART_BLESS=1`).
pub fn blessing() -> bool {
    std::env::var("CLPART_BLESS").is_ok_and(|v| v == "1")
}

/// Compares `actual` with the golden file at `path` (relative to the workspace
/// root), or rewrites it when blessing. Returns a message on mismatch.
pub fn check_golden(rel: &str, actual: &str) -> Result<(), String> {
    let path = workspace_root().join(rel);
    if blessing() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return Ok(());
    }
    let expected = std::fs::read_to_string(&path)
        .map_err(|_| format!("{rel}: golden file missing; run with CLPART_BLESS=1 to create it"))?;
    if expected == actual {
        return Ok(());
    }
    Err(format!(
        "{rel}: output differs from the golden file (run with CLPART_BLESS=1 to update)\n{}",
        diff(&expected, actual)
    ))
}

/// A small line diff: the first differing lines with context.
pub fn diff(expected: &str, actual: &str) -> String {
    let e: Vec<&str> = expected.lines().collect();
    let a: Vec<&str> = actual.lines().collect();
    let first = e
        .iter()
        .zip(&a)
        .position(|(x, y)| x != y)
        .unwrap_or(e.len().min(a.len()));
    let mut out = String::new();
    for i in first.saturating_sub(2)..(first + 6).min(e.len().max(a.len())) {
        match (e.get(i), a.get(i)) {
            (Some(x), Some(y)) if x == y => out.push_str(&format!("   {x}\n")),
            (x, y) => {
                if let Some(x) = x {
                    out.push_str(&format!(" - {x}\n"));
                }
                if let Some(y) = y {
                    out.push_str(&format!(" + {y}\n"));
                }
            }
        }
    }
    out
}

pub mod cdriver;

/// Selects PoCL devices for this test process (`POCL_DEVICES`), before any
/// OpenCL call. `None` keeps one pthread device. Every test binary is its own
/// process under cargo-nextest; tests in one binary must agree on the value.
pub fn pocl_env(devices: Option<&str>) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    let d = devices.unwrap_or("pthread").to_string();
    ONCE.call_once(|| {
        // SAFETY: called before any thread of this test process touches OpenCL or the environment.
        unsafe { std::env::set_var("POCL_DEVICES", d) };
    });
}

/// One runtime for the whole test binary over the PoCL `devices` of its
/// first call (see [`pocl_env`]): PoCL's initialization is not safe to run
/// in several threads at once.
pub fn shared_runtime(devices: &str) -> launcher::Runtime {
    static RT: std::sync::OnceLock<launcher::Runtime> = std::sync::OnceLock::new();
    RT.get_or_init(|| {
        pocl_env(Some(devices));
        launcher::Runtime::new().unwrap()
    })
    .clone()
}

/// The launch plan of kernel `name` of `source` (file `<name>.cl`) for
/// one launch configuration, through the session (analysis with the local
/// size known, the guarded subkernel).
pub fn plan_from_source(
    rt: &launcher::Runtime,
    name: &str,
    source: &str,
    global: &[u64],
    local: &[u64],
    scalars: &[(&str, i64)],
) -> launcher::Plan {
    let mut config = session::LaunchConfig::new(global, local);
    for (n, v) in scalars {
        config.scalars.insert(n.to_string(), *v);
    }
    let session = session::Session::from_source(&format!("{name}.cl"), source, &[]).unwrap();
    session.into_launch(rt, name, &config).unwrap().1
}

/// What launches of one corpus run start from: the session over the
/// kernel's source (the run's plan made), the run's configuration, its
/// arguments as they are before any launch, and its NDRange.
pub struct RunInputs {
    pub session: session::Session,
    pub config: session::LaunchConfig,
    pub args: launcher::KernelArgs,
    pub nd: launcher::NdRange,
}

/// The [`RunInputs`] of corpus kernel `k`'s run `run`.
pub fn run_inputs(
    rt: &launcher::Runtime,
    k: &CorpusKernel,
    run: usize,
) -> Result<RunInputs, String> {
    let config = k.launch_config(run);
    let mut session = k.session().map_err(|e| e.to_string())?;
    let (plan, _) = session
        .plan(rt, &k.name, &config)
        .map_err(|e| e.to_string())?;
    let specs: Vec<String> = k
        .run_args(run)
        .iter()
        .map(|(n, s)| format!("{n}={s}"))
        .collect();
    let args = plan.args_from_specs(&specs).map_err(|e| e.to_string())?;
    let nd = launcher::NdRange::new(&config.global, &config.local).map_err(|e| e.to_string())?;
    Ok(RunInputs {
        session,
        config,
        args,
        nd,
    })
}

/// Runs corpus kernel `k`'s run `run` split with each of `share_sets`
/// (analysis and program builds done once), returning the reports.
pub fn split_runs(
    rt: &launcher::Runtime,
    k: &CorpusKernel,
    run: usize,
    share_sets: &[&[(usize, f64)]],
    options: &launcher::LaunchOptions,
) -> Result<Vec<launcher::RunReport>, String> {
    let mut inputs = run_inputs(rt, k, run)?;
    let (plan, _) = inputs
        .session
        .plan(rt, &k.name, &inputs.config)
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for shares in share_sets {
        let mut args = inputs.args.clone();
        out.push(
            launcher::launch(plan, &inputs.nd, &mut args, shares, options)
                .map_err(|e| format!("{shares:?}: {e}"))?,
        );
    }
    Ok(out)
}

/// The corpus kernels whose output does not depend on the order the
/// work-groups run in: all but the `@order-dependent` ones, which keep
/// whichever value the last work-group wrote, so that their unsplit runs
/// on a pthread device of several threads differ from one another
/// (`checked_merge.rs` runs them on devices that keep one order).
pub fn corpus_order_independent() -> Vec<CorpusKernel> {
    corpus()
        .into_iter()
        .filter(|k| !k.order_dependent)
        .collect()
}

/// The corpus kernels `names`, in the corpus's order (all of them must
/// exist).
pub fn corpus_named(names: &[&str]) -> Vec<CorpusKernel> {
    let ks: Vec<CorpusKernel> = corpus()
        .into_iter()
        .filter(|k| names.contains(&k.name.as_str()))
        .collect();
    assert_eq!(ks.len(), names.len(), "corpus kernels {names:?}");
    ks
}

/// Runs every `@run` of each of `kernels` split with each of `share_sets`,
/// with the run-time guard on and then off, verified against the unsplit
/// run: each report must be verified with no guard fired, then goes to
/// `each` with the kernel and a label naming the launch.
pub fn check_verified_splits(
    kernels: &[CorpusKernel],
    share_sets: &[&[(usize, f64)]],
    mut each: impl FnMut(&CorpusKernel, &str, &launcher::RunReport),
) {
    let rt = launcher::Runtime::new().unwrap();
    assert_eq!(rt.devices().len(), share_sets[0].len());
    for unchecked in [false, true] {
        let options = launcher::LaunchOptions {
            verify: true,
            unchecked,
            ..Default::default()
        };
        for k in kernels {
            for run in 0..k.runs.len() {
                let reports = split_runs(&rt, k, run, share_sets, &options).unwrap();
                for (r, s) in reports.iter().zip(share_sets) {
                    let at = format!("{} run {run} {s:?} unchecked={unchecked}", k.name);
                    assert_eq!(r.verified, Some(true), "{at}: {:?}", r.mismatch);
                    assert!(!r.guard_fired, "{at}: {r}");
                    each(k, &at, r);
                }
            }
        }
    }
}

/// Checks split runs: verified, and split exactly when the corpus expects it.
pub fn check_split(
    rt: &launcher::Runtime,
    k: &CorpusKernel,
    run: usize,
    share_sets: &[&[(usize, f64)]],
) -> Result<(), String> {
    let opts = launcher::LaunchOptions {
        verify: true,
        ..Default::default()
    };
    let reports = split_runs(rt, k, run, share_sets, &opts)
        .map_err(|e| format!("{} run {run}: {e}", k.name))?;
    for (r, shares) in reports.iter().zip(share_sets) {
        if r.verified != Some(true) {
            return Err(format!(
                "{} run {run} {shares:?}: split output differs from unsplit: {:?}",
                k.name, r.mismatch
            ));
        }
        // The run-time guard is on and never fires on the corpus.
        if r.guard_fired {
            return Err(format!(
                "{} run {run} {shares:?}: the run-time guard fired: {:?}",
                k.name, r.reason
            ));
        }
        let n_active = shares.iter().filter(|s| s.1 > 0.0).count();
        if k.expect.splittable && n_active > 1 && !r.split {
            return Err(format!(
                "{} run {run}: expected to split, ran whole: {:?}",
                k.name, r.reason
            ));
        }
        // (with one device working, a kernel the launch refuses to split
        // at run time, after a write conflict, still runs as one slice)
        if !k.expect.splittable && n_active > 1 && r.split {
            return Err(format!(
                "{} run {run}: expected not splittable, but it ran split",
                k.name
            ));
        }
    }
    Ok(())
}
