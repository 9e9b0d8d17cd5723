//! Which analysis serves a launch, and the analyses made off the
//! application's thread.
//!
//! A kernel (source, name, build options) is analyzed once for all its
//! launches, not once per launch: the analysis is parametric in the
//! NDRange's sizes and the scalar arguments, and a launch evaluates its
//! ranges at its own values (the launcher's plan binds them per launch and
//! checks the launch-time assumptions). What an analysis depends on is
//! its [`session::LaunchConfig::depends_on`]: the number of dimensions, the
//! work-group size (none for a launch with a NULL local size: parametric in
//! it too) and the values it was specialized on. The candidates for a
//! launch, in order:
//!
//! 1. with a NULL local size, parametric in the work-group size;
//! 2. with the launch's work-group size;
//! 3. when 2 could not prove the writes disjoint
//!    ([`session::writes_unproved`]) or its launch-time assumptions failed
//!    at a launch (which then ran unsplit), specialized on the values that have
//!    stayed the same over the kernel's launches so far (the global size
//!    while it has not changed, integer scalars such as `n` or a width),
//!    parametric in those that changed (`k`, `t`, a plane index, a
//!    shrinking NDRange).
//!
//! The first candidate that splits serves the launch. Each analysis runs
//! on a worker thread (in a `clpart analyze-request` process under
//! `clpart exec`, which also builds the subkernels and keeps their
//! binaries); the worker leaves the programs of this process to the
//! kernel's next launch, which loads them on the application's thread
//! ([`Verdict::Unbuilt`]: no driver compile on a thread of clpart's beside
//! the application's own). Until it is ready, the kernel's launches go to
//! the application's device unchanged, so the application never waits for
//! an analysis (`CLPART_LAYER_WAIT=1`: the launch waits instead, for
//! tests that count split launches). An analysis the persistent cache
//! holds is read at once instead (no parse, no analysis: a warm run splits
//! a kernel from its first launch). A kernel gets at most
//! [`MAX_ANALYSES`] analyses; past them its launches stay unsplit with the
//! reason. The report counts them per kernel (`analyses`) and in all
//! (`n_analyses`), beside the programs built (`n_builds`).
//!
//! **At exit.** The worker thread may be inside libclang or a driver's
//! compiler when the application exits. An `atexit` handler, registered
//! when the worker starts (so it runs before the destructors of libclang
//! and the driver, loaded before the first launch), calls [`stop`]: the job
//! in progress may finish, up to `EXIT_WAIT` for an analysis (so that it
//! reaches the persistent cache for the next run) and to its end for a
//! build in the driver (whose compiler's static objects the exit would
//! destroy under it), and no other job starts.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use launcher::{NdRange, Plan, Runtime};
use ranges_format::ArgInfo;
use session::LaunchConfig;

use crate::config::config;
use crate::report;
use crate::state::Inside;

/// Most analyses per kernel: the three candidates (a launch stream whose
/// values defeat reuse falls back to unsplit after these).
pub(crate) const MAX_ANALYSES: u32 = 3;

/// How long the process's exit waits for an analysis or a build in
/// progress before it goes on without it.
const EXIT_WAIT: Duration = Duration::from_secs(3);

/// Longest a launch waits for its kernel's analysis in progress when
/// passing it through would move buffers back to the application's
/// device (see [`KernelAnalyses::choose`]).
const PENDING_WAIT: Duration = Duration::from_secs(10);

/// Longest a launch waits for its analysis with `CLPART_LAYER_WAIT` (a
/// bound, never met by an analysis within its budget, so that a launch of
/// one thread cannot wait forever on a worker stopped by another's exit).
const WAITED_ANALYSIS_LIMIT: Duration = Duration::from_secs(600);

/// A kernel's argument list depends on its source, name and build options.
pub(crate) type KernelKey = (usize, String, Vec<String>);

/// What an analysis found.
pub(crate) enum Verdict {
    Split(Box<Plan>),
    /// A plan whose programs are not built yet: the worker thread leaves
    /// the builds to the kernel's next launch, on the application's
    /// thread ([`KernelAnalyses::choose`]). The driver's compiler then
    /// never runs on a thread of clpart's beside the application's own
    /// compiles: PoCL 3.1 read memory before an LLVM object's block when
    /// it did (valgrind, a worker build beside an application launching
    /// on the same device), and from kept binaries (what the analysis'
    /// process leaves) a build is a load of milliseconds.
    Unbuilt(Box<Plan>),
    Whole {
        why: String,
        /// Specializing on the launch's values may prove what this did not.
        may_help: bool,
        /// What runs the kernel unsplit on clpart's devices, where its
        /// buffers are kept ([`KernelAnalyses::in_place`]): the analysis
        /// found the kernel but it does not split.
        in_place: Option<InPlace>,
    },
}

/// A kernel's unsplit launches on clpart's devices: its range file until
/// a launch needs them, then the plan (programs built at that launch).
pub(crate) enum InPlace {
    File(Box<ranges_format::RangeFile>),
    Plan(Box<Plan>),
}

enum Entry {
    Pending,
    Ready(Verdict),
}

/// The values a kernel's launches have had: which stayed the same.
#[derive(Default)]
struct Stream {
    global: Option<Vec<u64>>,
    global_varies: bool,
    /// Integer scalars by argument index: the first value and whether a
    /// later launch had another.
    scalars: BTreeMap<u32, (Option<i64>, bool)>,
}

impl Stream {
    fn see(&mut self, global: &[u64], ints: &[(u32, String, Option<i64>)]) {
        match &self.global {
            None => self.global = Some(global.to_vec()),
            Some(g) if g.as_slice() != global => self.global_varies = true,
            Some(_) => {}
        }
        for (idx, _, v) in ints {
            let e = self.scalars.entry(*idx).or_insert((*v, false));
            if e.0 != *v {
                e.1 = true;
            }
        }
    }

    /// The values of this launch that have not changed over the kernel's
    /// launches, by the names the analysis specializes on.
    fn constants(
        &self,
        nd: &NdRange,
        ints: &[(u32, String, Option<i64>)],
    ) -> BTreeMap<String, i64> {
        let mut out = BTreeMap::new();
        if !self.global_varies {
            for (d, &g) in nd.global.iter().enumerate().take(3) {
                out.insert(format!("gs{d}"), g as i64);
                if let Some(&l) = nd.local.get(d).filter(|&&l| l > 0 && g % l == 0) {
                    out.insert(format!("ng{d}"), (g / l) as i64);
                }
            }
        }
        for (idx, name, v) in ints {
            let (Some(v), Some((_, false))) = (v, self.scalars.get(idx)) else {
                continue;
            };
            out.insert(name.clone(), *v);
        }
        out
    }
}

/// One kernel's analyses and what its launches have shown.
#[derive(Default)]
pub(crate) struct KernelAnalyses {
    /// The argument list, once an analysis (or the cache) gave it.
    pub(crate) infos: Option<Result<Arc<Vec<ArgInfo>>, String>>,
    stream: Stream,
    entries: HashMap<LaunchConfig, Entry>,
    /// Analyses that split, but whose launch-time assumptions failed at a
    /// launch (which then ran unsplit): the next candidate serves the
    /// kernel's launches if it splits.
    failed_at_launch: Vec<LaunchConfig>,
    n_analyses: u32,
}

/// What serves a launch.
pub(crate) enum Choice {
    /// The analysis that splits it ([`KernelAnalyses::plan`]).
    Split(LaunchConfig),
    /// Unsplit: why, whether no later launch of the kernel can split
    /// (every analysis it may have was made), and the analysis that can run
    /// it unsplit on clpart's devices ([`KernelAnalyses::in_place`]).
    Whole(String, bool, Option<LaunchConfig>),
    /// Unsplit while its analysis is made in the background ([`PENDING`]).
    Pending,
}

/// Why a launch whose analysis is in progress runs unsplit.
pub(crate) const PENDING: &str = "its analysis is running in the background";

/// Jobs the worker has finished so far: a launch passed through while its
/// analysis was in progress lets the kernel's next launches through at
/// once until this changes.
static FINISHED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The number of jobs the worker has finished ([`FINISHED`]).
pub(crate) fn finished_jobs() -> u64 {
    FINISHED.load(Ordering::SeqCst)
}

/// One analysis to make.
pub(crate) struct Job {
    pub(crate) kernel_key: KernelKey,
    pub(crate) kernel: String,
    pub(crate) source: Arc<str>,
    pub(crate) options: Vec<String>,
    pub(crate) config: LaunchConfig,
    /// The work-group size of the launch that asked for it.
    pub(crate) launch_local: Vec<u64>,
}

impl Job {
    /// A session over the kernel's source (parsed when first needed).
    fn session(&self) -> session::Session {
        session::Session::from_source_lazy(
            &format!("{}.cl", self.kernel),
            &self.source,
            &self.options,
        )
    }
}

struct Done {
    kernel_key: KernelKey,
    config: LaunchConfig,
    infos: Result<Arc<Vec<ArgInfo>>, String>,
    verdict: Verdict,
}

impl KernelAnalyses {
    /// The analysis that serves this launch: one that splits, or why not.
    /// An analysis the launch needs and nobody asked for yet is made from
    /// `job` (by the worker, or at once when the cache holds it or in the
    /// waiting mode).
    /// `ints` are the integer scalar arguments (index, name, value); empty
    /// before the argument list is known. `wait_pending`: how long the
    /// launch waits for an analysis in progress (at most [`PENDING_WAIT`])
    /// rather than pass through, as when clpart holds some of its buffers
    /// newer than the application does (zero: not at all).
    pub(crate) fn choose(
        &mut self,
        job: impl Fn(LaunchConfig) -> Job,
        nd: &NdRange,
        local_given: bool,
        ints: &[(u32, String, Option<i64>)],
        wait_pending: Duration,
    ) -> Choice {
        self.stream.see(&nd.global, ints);
        let dims = nd.global.len();
        let mut keys = Vec::with_capacity(3);
        if !local_given {
            keys.push(LaunchConfig::any_launch(dims, None, BTreeMap::new()));
        }
        keys.push(LaunchConfig::any_launch(
            dims,
            Some(&nd.local),
            BTreeMap::new(),
        ));
        let only = self.stream.constants(nd, ints);
        if !only.is_empty() && self.infos.is_some() {
            keys.push(LaunchConfig::any_launch(dims, Some(&nd.local), only));
        }
        let mut why = String::from("no analysis");
        let mut i = 0;
        while i < keys.len() {
            let key = &keys[i];
            self.build(key);
            match self.entries.get(key) {
                // (an analysis whose assumptions failed at a launch: the
                // next candidate, specialized on the values that stay, may
                // need none)
                // (`build` above leaves no `Unbuilt`)
                Some(Entry::Ready(Verdict::Split(_) | Verdict::Unbuilt(_)))
                    if i + 1 < keys.len() && self.failed_at_launch.contains(key) =>
                {
                    i += 1
                }
                Some(Entry::Ready(Verdict::Split(_) | Verdict::Unbuilt(_))) => {
                    return Choice::Split(keys.swap_remove(i))
                }
                Some(Entry::Ready(Verdict::Whole {
                    why: w,
                    may_help,
                    in_place,
                })) => {
                    why = w.clone();
                    // the next candidate: the launch's own work-group
                    // size after a parametric one, then specialized values
                    let next_may_help =
                        i + 1 < keys.len() && (keys[i].local.is_empty() || *may_help);
                    if !next_may_help {
                        let in_place = in_place.is_some().then(|| keys.swap_remove(i));
                        return Choice::Whole(why, self.n_analyses >= MAX_ANALYSES, in_place);
                    }
                    i += 1;
                }
                Some(Entry::Pending) => {
                    // passing through would move the buffers clpart holds
                    // newer back to the application's device, and the
                    // next split launch would move them again
                    // (`CLPART_LAYER_WAIT`: as long as the analysis takes)
                    let limit = if config().wait_for_analysis {
                        WAITED_ANALYSIS_LIMIT
                    } else {
                        wait_pending.min(PENDING_WAIT)
                    };
                    let done = (!limit.is_zero())
                        .then(|| worker().wait_for(&job(key.clone()).kernel_key, key, limit))
                        .flatten();
                    match done {
                        Some(done) => self.take(done),
                        None => return Choice::Pending,
                    }
                }
                None if self.n_analyses >= MAX_ANALYSES => {
                    return Choice::Whole(
                        format!(
                        "{why} (not analyzed again: {MAX_ANALYSES} analyses of this kernel made)"
                    ),
                        true,
                        None,
                    )
                }
                None => {
                    self.n_analyses += 1;
                    let made = job(key.clone());
                    report::analyzed(&made.kernel);
                    // what the persistent cache holds is read and built at
                    // once (no parse, no analysis; programs loaded from
                    // the binaries an earlier run kept), so that a kernel
                    // launched once splits in a warm run
                    let cached = || {
                        local_sessions()
                            .entry(made.kernel_key.clone())
                            .or_insert_with(|| made.session())
                            .in_cache(&made.kernel, &made.config)
                    };
                    // (a launch that waits for its analysis waits for
                    // the worker's, below: the path of every other launch)
                    let here = if cached() {
                        Some(made)
                    } else {
                        self.submit(key, made)
                    };
                    if let Some(made) = here {
                        match run(&mut local_sessions(), made, None) {
                            Some(done) => self.take(done),
                            None => {
                                return Choice::Whole("the process is exiting".into(), true, None)
                            }
                        }
                    }
                    // looked at again: ready when made here
                }
            }
        }
        // (not reached: a candidate is followed only where a next one is)
        Choice::Whole(why, false, None)
    }

    /// Records that the analysis `key` split but its launch-time
    /// assumptions did not hold at a launch.
    pub(crate) fn failed_at_launch(&mut self, key: &LaunchConfig) {
        if !self.failed_at_launch.contains(key) {
            self.failed_at_launch.push(key.clone());
        }
    }

    /// Builds the programs of the analysis `key` where the worker left
    /// them ([`Verdict::Unbuilt`]); one that fails to build makes the
    /// kernel unsplit at these values, with the reason.
    fn build(&mut self, key: &LaunchConfig) {
        let Some(Entry::Ready(Verdict::Unbuilt(_))) = self.entries.get(key) else {
            return;
        };
        let Some(Entry::Ready(Verdict::Unbuilt(plan))) = self.entries.remove(key) else {
            return;
        };
        self.entries.insert(key.clone(), Entry::Ready(built(plan)));
    }

    /// The plan of an analysis that splits.
    pub(crate) fn plan(&mut self, key: &LaunchConfig) -> Option<&mut Plan> {
        match self.entries.get_mut(key) {
            Some(Entry::Ready(Verdict::Split(plan))) => Some(plan),
            _ => None,
        }
    }

    /// The plan that runs the kernel of an analysis that does not split
    /// unsplit on clpart's devices, made from its range file at the first
    /// launch that asks (clpart's devices are open then: it holds some of
    /// the kernel's buffers); `None` where it cannot be made (the reason
    /// goes to the verbose log once).
    pub(crate) fn in_place(&mut self, key: &LaunchConfig) -> Option<&mut Plan> {
        let Some(Entry::Ready(Verdict::Whole { in_place, .. })) = self.entries.get_mut(key) else {
            return None;
        };
        if let Some(InPlace::File(file)) = in_place {
            let kernel = file.kernels.first().map(|k| k.name.clone());
            let made = kernel.ok_or_else(|| "no kernel".to_string()).and_then(|k| {
                let rt = runtime()?;
                Plan::new(&rt, file, &k).map_err(|e| e.to_string())
            });
            *in_place = match made {
                Ok(plan) => Some(InPlace::Plan(Box::new(plan))),
                Err(why) => {
                    if config().verbose {
                        eprintln!(
                            "clpart: the kernel cannot run unsplit on clpart's devices: {why}"
                        );
                    }
                    None
                }
            };
        }
        match in_place {
            Some(InPlace::Plan(plan)) => Some(plan),
            _ => None,
        }
    }

    fn take(&mut self, done: Done) {
        if self.infos.as_ref().is_none_or(|i| i.is_err()) {
            self.infos = Some(done.infos);
        }
        self.entries.insert(done.config, Entry::Ready(done.verdict));
    }

    /// Hands the analysis of `key` to the worker (pending until it is
    /// done); gives the job back where there is no worker thread.
    fn submit(&mut self, key: &LaunchConfig, job: Job) -> Option<Job> {
        self.entries.insert(key.clone(), Entry::Pending);
        let back = worker().submit(job);
        if back.is_some() {
            self.entries.remove(key);
        }
        back
    }
}

/// The layer's analyses, per kernel.
#[derive(Default)]
pub(crate) struct Analyses {
    pub(crate) kernels: HashMap<KernelKey, KernelAnalyses>,
}

impl Analyses {
    /// Takes in what the worker finished since the last call.
    pub(crate) fn collect(&mut self) {
        let Some(w) = WORKER.get() else { return };
        let done: Vec<Done> =
            std::mem::take(&mut *w.done.lock().unwrap_or_else(|p| p.into_inner()));
        for d in done {
            if let Some(k) = self.kernels.get_mut(&d.kernel_key) {
                k.take(d);
            }
        }
    }
}

/// clpart's runtime, shared by the worker (which builds) and the launches
/// (which run): opened for the first kernel that splits.
pub(crate) fn runtime() -> Result<Runtime, String> {
    RUNTIME
        .get_or_init(|| {
            let _inside = Inside::enter();
            Runtime::new().map_err(|e| format!("clpart's runtime: {e}"))
        })
        .clone()
}

static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();

/// Programs built so far by clpart's runtime (0 before it is opened).
pub(crate) fn n_builds() -> u64 {
    RUNTIME
        .get()
        .and_then(|r| r.as_ref().ok())
        .map_or(0, Runtime::n_builds)
}

/// Sessions (a parsed source each) of analyses made on the application's
/// thread.
fn local_sessions() -> std::sync::MutexGuard<'static, HashMap<KernelKey, session::Session>> {
    static LOCAL: OnceLock<Mutex<HashMap<KernelKey, session::Session>>> = OnceLock::new();
    LOCAL
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// Makes one analysis, and builds its plan's programs on the devices.
/// `busy`, on the worker thread, is held while the job parses and
/// analyzes, then while it builds: the process's exit waits for the
/// analysis in progress to reach the persistent cache (the next run reads
/// it) and for no libclang call to be cut short, then builds nothing more.
/// `None` when the process exits first.
fn run(
    sessions: &mut HashMap<KernelKey, session::Session>,
    job: Job,
    busy: Option<&Mutex<()>>,
) -> Option<Done> {
    let _inside = Inside::enter();
    let started = Instant::now();
    let hold = || {
        let guard = busy.map(|b| b.lock().unwrap_or_else(|p| p.into_inner()));
        (!EXITING.load(Ordering::SeqCst)).then_some(guard)
    };
    let session = sessions
        .entry(job.kernel_key.clone())
        .or_insert_with(|| job.session());
    // a kernel the cache lacks is parsed and analyzed (by a clpart process
    // under `clpart exec`, on the worker)
    let parse = !session.in_cache(&job.kernel, &job.config);
    let child = std::env::var_os("CLPART_EXE").filter(|e| parse && !e.is_empty());
    let (infos, ranges) = match child {
        // parsed and analyzed in a process of its own: no libclang here
        Some(exe) => match analyze_in_child(&exe, &job) {
            Ok(file) => match file.kernels.first() {
                Some(k) => (Ok(Arc::new(k.args.clone())), Ok((file, false))),
                None => (
                    Err("the analysis found no kernel".to_string()),
                    Ok((file, false)),
                ),
            },
            Err(why) => (Err(why.clone()), Err(why)),
        },
        None => {
            let _analyzing = hold()?;
            if parse {
                // without `clpart exec` (the layer named in OPENCL_LAYERS
                // by hand) the parse runs here: libclang is loaded first
                // and the exit handler registered after its constructors,
                // so the exit waits for this job before their destructors
                // (not before those of objects libclang makes during the
                // parse: `clpart exec` avoids the parse here altogether)
                session::load_libraries();
                register_exit_handler();
            }
            // the argument list first: read from the cache, or parsed for
            // and then kept in the cache
            let infos = session
                .arg_infos(&job.kernel)
                .map(Arc::new)
                .map_err(|e| format!("the kernel cannot be parsed: {e}"));
            let ranges = session
                .load_or_parse(&job.kernel, &job.config)
                .and_then(|()| session.take_ranges(&job.kernel, &job.config))
                .map_err(|e| format!("the analysis failed: {e}"));
            (infos, ranges)
        }
    };
    let verdict = match (&infos, &ranges) {
        (Err(why), _) | (_, Err(why)) => Verdict::Whole {
            why: why.clone(),
            may_help: false,
            in_place: None,
        },
        (_, Ok((file, cached))) => {
            if *cached && config().verbose {
                eprintln!(
                    "clpart: ranges of kernel '{}' read from the analysis cache",
                    job.kernel
                );
            }
            // (on the worker, the programs are built at the kernel's next
            // launch: see `Verdict::Unbuilt`)
            let _building = hold()?;
            plan(file, &job.kernel, busy.is_none())
        }
    };
    if config().verbose {
        let what = match &verdict {
            Verdict::Split(p) => format!(
                "splits along dimension {}",
                p.kernel().split_dim.map_or("?".into(), |d| d.to_string())
            ),
            Verdict::Unbuilt(p) => format!(
                "splits along dimension {} (built at its next launch)",
                p.kernel().split_dim.map_or("?".into(), |d| d.to_string())
            ),
            Verdict::Whole { why, .. } => {
                format!("runs unsplit on the application's device: {why}")
            }
        };
        eprintln!(
            "clpart: kernel '{}' ({} dimensions, work-group size {}{}): {what} ({:.0} ms)",
            job.kernel,
            job.config.global.len(),
            if job.config.local.is_empty() {
                "any".to_string()
            } else {
                format!("{:?}", job.config.local)
            },
            match &job.config.only {
                Some(o) if !o.is_empty() => format!(", specialized on {o:?}"),
                _ => String::new(),
            },
            started.elapsed().as_secs_f64() * 1e3
        );
    }
    Some(Done {
        kernel_key: job.kernel_key,
        config: job.config,
        infos,
        verdict,
    })
}

/// Starts `clpart` (`CLPART_EXE`) with `args` and `input` on its standard
/// input, and waits for nothing: a process that outlives this one (reaped
/// by a thread of its own, by init once the application exits). `false`
/// where there is no clpart to ask or it cannot start.
fn ahead(args: &[&str], input: &str) -> bool {
    use std::io::Write;
    use std::process::Stdio;
    let Some(exe) = std::env::var_os("CLPART_EXE").filter(|e| !e.is_empty()) else {
        return false;
    };
    let mut command = clpart_command(&exe, args);
    command.stdout(Stdio::null()).stderr(Stdio::null());
    let Ok(mut child) = spawn_in_background(&mut command) else {
        return false;
    };
    let sent = child
        .stdin
        .take()
        .is_some_and(|mut stdin| stdin.write_all(input.as_bytes()).is_ok());
    let _ = std::thread::Builder::new()
        .name("clpart-ahead".into())
        .spawn(move || child.wait());
    sent
}

/// One analysis made by `clpart analyze-request` (`CLPART_EXE`, which
/// `clpart exec` sets) in a process of its own: libclang then never runs in
/// the application's process, whose exit would destroy its static objects
/// under a parse in progress; an analysis unfinished at the application's
/// exit still reaches the persistent cache for the next run.
fn analyze_in_child(exe: &std::ffi::OsStr, job: &Job) -> Result<ranges_format::RangeFile, String> {
    let text = request(job).to_text()?;
    // (at the lowest priority unless the application waits for it)
    let out = ask_clpart(
        exe,
        &["analyze-request"],
        text.as_bytes(),
        !config().wait_for_analysis,
    )
    .map_err(|why| format!("the analysis failed: {why}"))?;
    let text = String::from_utf8_lossy(&out);
    ranges_format::RangeFile::from_ron_str(&text).map_err(|e| format!("the analysis' ranges: {e}"))
}

/// What `clpart analyze-request` is asked for `job`.
fn request(job: &Job) -> ranges_format::AnalysisRequest {
    ranges_format::AnalysisRequest {
        file: format!("{}.cl", job.kernel),
        source: job.source.to_string(),
        build_options: job.options.clone(),
        kernel: job.kernel.clone(),
        work_dim: job.config.global.len() as u32,
        local: job.config.local.clone(),
        only: job.config.only.clone().unwrap_or_default(),
        launch_local: job.launch_local.clone(),
    }
}

/// `exe` (clpart) with `args`, without the layer, its input piped.
fn clpart_command<S: AsRef<std::ffi::OsStr>>(
    exe: &std::ffi::OsStr,
    args: &[S],
) -> std::process::Command {
    let mut command = std::process::Command::new(exe);
    command
        .args(args)
        .env_remove("OPENCL_LAYERS")
        .stdin(std::process::Stdio::piped());
    command
}

/// Runs `exe` (clpart) with `args` in a process of its own, in this
/// process's working directory and without the layer, `input` on its
/// standard input: its standard output, or its last line of error (or why
/// it could not run). `background`: the process runs at the lowest
/// priority ([`spawn_in_background`]). The answer is taken once both
/// outputs end: a process that closes them after answering and goes on
/// (`clpart analyze-request` warming the driver for the next run) is not
/// waited for, but reaped by a thread of its own.
pub(crate) fn ask_clpart<S: AsRef<std::ffi::OsStr>>(
    exe: &std::ffi::OsStr,
    args: &[S],
    input: &[u8],
    background: bool,
) -> Result<Vec<u8>, String> {
    use std::io::{Read, Write};
    use std::process::Stdio;
    let cannot =
        |e: std::io::Error| format!("cannot run '{}': {e}", std::path::Path::new(exe).display());
    let mut command = clpart_command(exe, args);
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = if background {
        spawn_in_background(&mut command)
    } else {
        command.spawn()
    }
    .map_err(cannot)?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input).map_err(cannot)?;
    }
    let mut stderr = child.stderr.take();
    let errors = std::thread::Builder::new()
        .name("clpart-ask".into())
        .spawn(move || {
            let mut text = Vec::new();
            if let Some(e) = stderr.as_mut() {
                let _ = e.read_to_end(&mut text);
            }
            text
        })
        .map_err(cannot)?;
    let mut out = Vec::new();
    if let Some(mut stdout) = child.stdout.take() {
        stdout.read_to_end(&mut out).map_err(cannot)?;
    }
    let err = errors.join().unwrap_or_default();
    let status = match child.try_wait().map_err(cannot)? {
        Some(status) => status,
        // outputs closed, still running: an answer given, work going on
        None if !out.is_empty() => {
            let _ = std::thread::Builder::new()
                .name("clpart-reap".into())
                .spawn(move || child.wait());
            return Ok(out);
        }
        None => child.wait().map_err(cannot)?,
    };
    if !status.success() {
        let err = String::from_utf8_lossy(&err);
        let line = err.lines().last().unwrap_or("");
        return Err(line.trim_start_matches("clpart: error: ").to_string());
    }
    Ok(out)
}

/// The verdict of a range file: a plan with its programs built on the
/// devices the launches use, or why the kernel stays unsplit.
fn plan(file: &ranges_format::RangeFile, kernel: &str, build: bool) -> Verdict {
    let Some(k) = file.kernels.first() else {
        return Verdict::Whole {
            why: "the analysis found no kernel".into(),
            may_help: false,
            in_place: None,
        };
    };
    if !k.splittable {
        return Verdict::Whole {
            why: k
                .reason
                .clone()
                .unwrap_or_else(|| "the kernel is not splittable".into()),
            may_help: session::writes_unproved(k),
            in_place: Some(InPlace::File(Box::new(file.clone()))),
        };
    }
    // clpart's own devices are opened for the first kernel that splits, so
    // a program none of whose kernels split never pays for them.
    let runtime = match runtime() {
        Ok(r) => r,
        Err(why) => {
            return Verdict::Whole {
                why,
                may_help: false,
                in_place: None,
            }
        }
    };
    let plan = match Plan::new(&runtime, file, kernel) {
        Ok(p) => p,
        Err(e) => {
            return Verdict::Whole {
                why: format!("clpart cannot prepare the kernel: {e}"),
                may_help: false,
                in_place: None,
            }
        }
    };
    // The layer always runs the guard: a kernel it cannot check would run
    // unsplit on one of clpart's devices, its buffers moved there whole at
    // every launch; on the application's device nothing moves.
    if let Err(why) = plan.guard_status() {
        return Verdict::Whole {
            why: why.to_string(),
            may_help: false,
            in_place: Some(InPlace::File(Box::new(file.clone()))),
        };
    }
    let plan = Box::new(plan);
    if build {
        built(plan)
    } else {
        Verdict::Unbuilt(plan)
    }
}

/// The verdict of `plan` once its programs are built for the devices the
/// fixed shares name, else for every device of clpart's: split, or why
/// the kernel stays unsplit.
fn built(mut plan: Box<Plan>) -> Verdict {
    let devices: Vec<usize> = match &config().shares {
        Some(Ok(s)) => s.iter().map(|&(d, _)| d).collect(),
        _ => (0..plan.runtime().devices().len()).collect(),
    };
    let _in_driver = InDriver::enter();
    match plan.prepare_split(&devices) {
        Ok(()) => Verdict::Split(plan),
        Err(e) => Verdict::Whole {
            why: format!("clpart cannot build the kernel: {e}"),
            may_help: false,
            in_place: None,
        },
    }
}

/// The worker thread: analyses in the order asked, one at a time.
struct Worker {
    jobs: Mutex<Option<Sender<(u64, Job)>>>,
    /// The jobs handed to the thread and not started, by number: at exit
    /// they go to a `clpart analyze-request --ahead` ([`stop`]).
    queued: Mutex<Vec<(u64, ranges_format::AnalysisRequest)>>,
    done: Mutex<Vec<Done>>,
    /// Signalled when a job is done.
    finished: std::sync::Condvar,
    /// Held while the job in progress analyzes or builds; taken for good
    /// at exit.
    busy: Mutex<()>,
}

static WORKER: OnceLock<Worker> = OnceLock::new();
static EXITING: AtomicBool = AtomicBool::new(false);

/// Set while the worker builds subkernels in the driver ([`InDriver`]).
static IN_DRIVER: AtomicBool = AtomicBool::new(false);

/// The worker is inside the driver's compiler (PoCL runs LLVM in this
/// process): the process's exit waits for it however long it takes
/// ([`stop`]), since the static objects the exit destroys next (LLVM's
/// pass registry) are the ones the build is using.
struct InDriver;

impl InDriver {
    /// Also registers the exit handler again: the exit runs handlers in
    /// the reverse order of their registration, and the driver's compiler
    /// registers the destructors of its static objects when it first uses
    /// them (the application's own compiles after the worker started
    /// made some), which would otherwise run before [`stop`] waits.
    fn enter() -> InDriver {
        IN_DRIVER.store(true, Ordering::SeqCst);
        register_exit_handler();
        InDriver
    }
}

impl Drop for InDriver {
    fn drop(&mut self) {
        IN_DRIVER.store(false, Ordering::SeqCst);
    }
}

extern "C" {
    fn atexit(f: extern "C" fn()) -> std::ffi::c_int;
    fn setpriority(which: std::ffi::c_int, who: u32, prio: std::ffi::c_int) -> std::ffi::c_int;
}

/// Runs `command` at the lowest priority (`nice` 19): an analysis or a
/// build the application does not wait for, during its run or after it
/// exits, takes only the time its processors would leave idle, never the
/// application's or its next run's. The priority is set on the started
/// process (not between fork and exec, which would make the standard
/// library fork the whole application instead of spawning: milliseconds
/// of page tables copied per analysis).
fn spawn_in_background(
    command: &mut std::process::Command,
) -> std::io::Result<std::process::Child> {
    let child = command.spawn()?;
    // SAFETY: a system call on the child's process id; its failure leaves
    // the priority as it was.
    unsafe { setpriority(PRIO_PROCESS, child.id(), 19) };
    Ok(child)
}

/// `setpriority`'s `which` for one process.
const PRIO_PROCESS: std::ffi::c_int = 0;

extern "C" fn stop_at_exit() {
    let _ = std::panic::catch_unwind(stop);
}

/// Registers [`stop`] to run at exit. Handlers run in the reverse order of
/// their registration (glibc runs those registered while it exits too):
/// this one before the static destructors of every library loaded so far
/// (the driver, loaded before the first launch; libclang, loaded by the
/// worker), while the layer's own `.fini_array` entry runs after them.
/// [`stop`] runs once however often it is registered.
fn register_exit_handler() {
    // SAFETY: registers a function that never unwinds.
    unsafe { atexit(stop_at_exit) };
}

fn worker() -> &'static Worker {
    WORKER.get_or_init(|| {
        register_exit_handler();
        let (tx, rx) = channel::<(u64, Job)>();
        let spawned = std::thread::Builder::new()
            .name("clpart-analysis".into())
            .spawn(move || {
                // clpart's own OpenCL calls on this thread are not the
                // application's
                let _inside = Inside::enter();
                let mut sessions = HashMap::new();
                while let Ok((number, job)) = rx.recv() {
                    let Some(w) = WORKER.get() else { break };
                    if EXITING.load(Ordering::SeqCst) {
                        break;
                    }
                    w.queued
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .retain(|(n, _)| *n != number);
                    let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        run(&mut sessions, job, Some(&w.busy))
                    }));
                    if let Ok(Some(done)) = done {
                        w.done.lock().unwrap_or_else(|p| p.into_inner()).push(done);
                    }
                    FINISHED.fetch_add(1, Ordering::SeqCst);
                    w.finished.notify_all();
                }
            });
        Worker {
            jobs: Mutex::new(spawned.ok().map(|_| tx)),
            queued: Mutex::default(),
            done: Mutex::default(),
            finished: std::sync::Condvar::new(),
            busy: Mutex::default(),
        }
    })
}

impl Worker {
    /// Waits (at most `limit`, and [`PENDING_WAIT`]) for the job of `key`
    /// and takes it out of the finished ones; `None` when it did not
    /// finish in time.
    fn wait_for(&self, kernel: &KernelKey, key: &LaunchConfig, limit: Duration) -> Option<Done> {
        let until = Instant::now() + limit;
        let mut done = self.done.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(i) = done
                .iter()
                .position(|d| &d.kernel_key == kernel && &d.config == key)
            {
                return Some(done.swap_remove(i));
            }
            let left = until.checked_duration_since(Instant::now())?;
            done = self
                .finished
                .wait_timeout(done, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Hands a job to the thread; gives it back when there is none.
    fn submit(&self, job: Job) -> Option<Job> {
        static NUMBER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        let Some(tx) = jobs.as_ref() else {
            return Some(job);
        };
        let number = NUMBER.fetch_add(1, Ordering::Relaxed);
        let mut queued = self.queued.lock().unwrap_or_else(|p| p.into_inner());
        queued.push((number, request(&job)));
        match tx.send((number, job)) {
            Ok(()) => None,
            Err(e) => {
                queued.retain(|(n, _)| *n != number);
                Some(e.0 .1)
            }
        }
    }
}

/// At exit: lets an analysis or build in progress end (up to
/// [`EXIT_WAIT`]) and starts no other, so no clpart thread is inside the
/// driver or libclang while the process tears them down.
pub(crate) fn stop() {
    if EXITING.swap(true, Ordering::SeqCst) {
        return;
    }
    let Some(w) = WORKER.get() else { return };
    // what the thread did not start: analyzed and built by a process that
    // outlives this one, for the next run
    let queued = std::mem::take(&mut *w.queued.lock().unwrap_or_else(|p| p.into_inner()));
    let requests: Vec<_> = queued.into_iter().map(|(_, r)| r).collect();
    if !requests.is_empty() {
        if let Ok(text) = ranges_format::AnalysisRequest::list_to_text(&requests) {
            ahead(&["analyze-request", "--ahead"], &text);
        }
    }
    let until = Instant::now() + EXIT_WAIT;
    loop {
        match w.busy.try_lock() {
            Ok(g) => {
                std::mem::forget(g);
                return;
            }
            Err(std::sync::TryLockError::Poisoned(p)) => {
                std::mem::forget(p.into_inner());
                return;
            }
            // an analysis waits at most `EXIT_WAIT`; a build in the
            // driver to its end: exiting under it frees what it reads (a
            // 128-column correlation under valgrind crashed at exit)
            Err(std::sync::TryLockError::WouldBlock)
                if Instant::now() < until || IN_DRIVER.load(Ordering::SeqCst) =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nd(global: &[u64], local: &[u64]) -> NdRange {
        NdRange::new(global, local).unwrap()
    }

    /// Values that change between launches are not specialized on; those
    /// that stay are.
    #[test]
    fn only_values_that_stay_are_specialized_on() {
        let mut s = Stream::default();
        let ints = |k: i64| {
            vec![
                (1u32, "k".to_string(), Some(k)),
                (2, "n".to_string(), Some(64)),
            ]
        };
        s.see(&[64], &ints(0));
        let c = s.constants(&nd(&[64], &[16]), &ints(0));
        assert_eq!(c.get("k"), Some(&0));
        assert_eq!(c.get("n"), Some(&64));
        assert_eq!(c.get("gs0"), Some(&64));
        assert_eq!(c.get("ng0"), Some(&4));
        s.see(&[32], &ints(1));
        let c = s.constants(&nd(&[32], &[16]), &ints(1));
        assert_eq!(c.get("k"), None);
        assert_eq!(c.get("gs0"), None);
        assert_eq!(c.get("n"), Some(&64));
    }
}
