//! `session`: clpart's one driver. It is the only place that strings the
//! stages together:
//!
//! ```text
//! source ──coarsen (libclang, once per session)──▶ Program
//!        ──access-analysis──▶ KernelAccesses
//!        ──partitioner (takes the accesses)──▶ KernelRanges / RangeFile
//!        ──launcher──▶ Plan (expressions bound once, programs built per device)
//! ```
//!
//! A [`Session`] is made from kernel source ([`Session::from_source`]: parsed
//! once, here; [`Session::from_source_lazy`]: parsed when first needed, which
//! with the persistent cache may be never) or from a range file
//! ([`Session::from_range_file`]: the analysis is already done).
//! [`Session::analyze`] is what `clpart analyze` prints;
//! [`Session::ranges_for_launch`] and [`Session::plan`] serve a launch and
//! are cached per [`LaunchConfig`] (kernel, global and local size, the
//! integer scalar arguments the analysis may specialize on, the split
//! dimension). The CLI (`analyze`, `run`), the C API, the OpenCL layer, the
//! bench and the tests all go through it.
//!
//! A launch's analysis is one of two kinds. By default
//! ([`LaunchConfig::only`] unset) it is made for the launch: with its local
//! size and number of dimensions known, and again specialized on its sizes
//! and integer scalars where the parametric result could not prove the
//! writes disjoint or bound a written array ([`writes_unproved`]), or where
//! a launch-time assumption is false at its values; the specialized result
//! is taken when it splits. With [`LaunchConfig::only`] set
//! ([`LaunchConfig::any_launch`]) it is one analysis for every launch of the
//! kernel, parametric in the NDRange (and the work-group size, when none is
//! given) and in every scalar but the values named, and keyed by
//! [`LaunchConfig::depends_on`]: the OpenCL layer's kind, which analyzes a
//! kernel once for all its launches. For callers that must know when
//! libclang runs (the layer's worker thread),
//! [`Session::load_or_parse`] makes ready what a launch needs without
//! analyzing, and [`Session::in_cache`] says whether the cache already holds
//! it.
//!
//! Every front end launches through a [`Door`] ([`door`]): the launch's
//! shares (fixed, or measured by a `launcher::Balancer`), whether a first
//! automatic launch runs in rounds, and what the balancer observes.
//!
//! The session's one I/O is the persistent analysis cache ([`cache`]): a
//! launch's ranges analyzed from source, and the argument list a lazy
//! session parsed for, are kept on disk and read back by the next process
//! (`CLPART_CACHE=0` turns it off). Otherwise it takes
//! text and values and returns values (the range file reader is the
//! caller's).

pub mod cache;
pub mod door;

pub use door::{Buffers, Door, Launched, Shares};

use std::collections::BTreeMap;
use std::sync::OnceLock;

use access_analysis::{AnalysisOptions, KernelAccesses};
use coarsen::ir::Program;
pub use partitioner::Counts;
use partitioner::{PartitionError, PartitionOptions};
use ranges_format::{ArgInfo, ArgKind, KernelRanges, RangeFile};

/// Most launch configurations a session keeps (ranges and plans); the
/// oldest goes first.
pub const MAX_CACHED: usize = 16;

pub use partitioner::report::LOCAL_SIZE_NOTE;

/// The note a kernel's diagnostics carry when its ranges were specialized on
/// the launch's values.
pub const SPECIALIZED_NOTE: &str =
    "ranges specialized on this launch's NDRange sizes and scalar arguments";

/// Errors of a session.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The source does not parse, or names no such kernel.
    #[error(transparent)]
    Coarsen(#[from] coarsen::CoarsenError),
    /// The access analysis or the partitioner refused its options.
    #[error(transparent)]
    Partition(#[from] PartitionError),
    /// Binding the ranges or building the programs failed.
    #[error(transparent)]
    Launch(#[from] launcher::LaunchError),
    /// The session was made from a range file and the operation needs source.
    #[error("{file}: {what} needs the kernel source, and this is a range file")]
    NotSource { file: String, what: &'static str },
    /// A kernel name the range file does not hold.
    #[error("kernel '{name}': no such kernel in the range file (valid kernels: {available})")]
    UnknownKernel {
        file: String,
        name: String,
        available: String,
    },
    /// A range file without kernels.
    #[error("{file}: the range file holds no kernel")]
    NoKernel { file: String },
}

impl From<access_analysis::AnalysisError> for SessionError {
    fn from(e: access_analysis::AnalysisError) -> Self {
        SessionError::Partition(PartitionError::Analysis(e))
    }
}

/// Result of session operations.
pub type Result<T> = std::result::Result<T, SessionError>;

/// What one launch's analysis depends on: the cache key of
/// [`Session::ranges_for_launch`] and [`Session::plan`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// The NDRange's global size per dimension.
    pub global: Vec<u64>,
    /// The work-group size per dimension.
    pub local: Vec<u64>,
    /// Integer scalar arguments by name (the analysis specializes on them
    /// when the parametric ranges cannot prove the writes disjoint).
    pub scalars: BTreeMap<String, i64>,
    /// Split along this dimension instead of choosing.
    pub split_dim: Option<u32>,
    /// Which Ehrhart counts the analysis makes. The default,
    /// [`Counts::Written`], is what gluing needs (the OpenCL layer, the C
    /// API): a launch's `bytes_exact` then stays absent. Callers whose
    /// report shows `bytes_exact` (`clpart run`, the bench, the tests) ask
    /// for [`Counts::All`].
    pub counts: Counts,
    /// `None`: analyze for this launch (parametric first, then specialized
    /// on every NDRange size and integer scalar where that may prove the
    /// writes disjoint). `Some(values)`: one analysis, parametric in every
    /// NDRange size and scalar argument except the names given (`gs0`,
    /// `ng0`, a scalar argument's name), which hold these values; its
    /// ranges serve any launch of the kernel with this work-group size (an
    /// empty `local`: any work-group size too) and these values. The
    /// global size's values and the scalars are then not part of the key
    /// ([`LaunchConfig::depends_on`]).
    pub only: Option<BTreeMap<String, i64>>,
}

impl Default for LaunchConfig {
    fn default() -> LaunchConfig {
        LaunchConfig {
            global: Vec::new(),
            local: Vec::new(),
            scalars: BTreeMap::new(),
            split_dim: None,
            counts: Counts::Written,
            only: None,
        }
    }
}

impl LaunchConfig {
    /// The same configuration, analyzed with these counts.
    pub fn with_counts(mut self, counts: Counts) -> LaunchConfig {
        self.counts = counts;
        self
    }

    /// A configuration with no scalar values and the split dimension chosen.
    pub fn new(global: &[u64], local: &[u64]) -> LaunchConfig {
        LaunchConfig {
            global: global.to_vec(),
            local: local.to_vec(),
            ..Default::default()
        }
    }

    /// A configuration whose ranges hold for every launch of `work_dim`
    /// dimensions with this work-group size (`None`: any) and the values
    /// `only` of the names it specializes on (see [`LaunchConfig::only`]).
    pub fn any_launch(
        work_dim: usize,
        local: Option<&[u64]>,
        only: BTreeMap<String, i64>,
    ) -> LaunchConfig {
        LaunchConfig {
            global: vec![0; work_dim],
            local: local.map(<[u64]>::to_vec).unwrap_or_default(),
            only: Some(only),
            ..Default::default()
        }
    }

    /// What the analysis of this configuration depends on (the cache key):
    /// for [`LaunchConfig::only`], the number of dimensions but not the
    /// global size's values, and no scalar values but those specialized on.
    pub fn depends_on(&self) -> LaunchConfig {
        match &self.only {
            None => self.clone(),
            Some(_) => LaunchConfig {
                global: vec![0; self.global.len()],
                scalars: BTreeMap::new(),
                ..self.clone()
            },
        }
    }

    /// Adds the integer values of `NAME=VALUE` argument specs (as `clpart run
    /// --arg` takes them); buffer specs and non-integers are skipped.
    pub fn with_specs<S: AsRef<str>>(mut self, specs: &[S]) -> LaunchConfig {
        for spec in specs {
            if let Some((name, v)) = spec.as_ref().split_once('=') {
                if let Ok(v) = v.trim().parse::<i64>() {
                    self.scalars.insert(name.trim().to_string(), v);
                }
            }
        }
        self
    }
}

/// Where the session's ranges come from.
enum Origin {
    /// Kernel source, parsed at most once.
    Source(Source),
    /// A range file (already validated by its reader).
    RangeFile(RangeFile),
}

/// Kernel source, its clang options and, once parsed, its program.
struct Source {
    file: String,
    source: String,
    build_options: Vec<String>,
    program: OnceLock<Program>,
}

impl Source {
    /// The program, parsed now if it was not (a source that does not parse
    /// is tried again, and fails again, at each need).
    fn program(&self) -> Result<&Program> {
        if let Some(p) = self.program.get() {
            return Ok(p);
        }
        let parse = coarsen::ParseOptions {
            clang_args: self.build_options.clone(),
        };
        let program = coarsen::parse_program(&self.file, &self.source, &parse)?;
        Ok(self.program.get_or_init(|| program))
    }

    /// The argument list from the persistent cache, or from the program
    /// (parsed now if it was not); stored in the cache when it had to be
    /// parsed for it.
    fn arg_infos(&self, kernel: &str) -> Result<Vec<ArgInfo>> {
        let parsed = self.program.get().is_some();
        let cacheable = !parsed && cache::cacheable(&self.source);
        let entry = cacheable.then(cache::dir).flatten().map(|dir| {
            let key = cache::args_key(&self.file, &self.source, &self.build_options, kernel);
            cache::args_entry_path(&dir, &key)
        });
        let cached = entry.as_deref().and_then(|path| {
            cache::load_args(path, &self.file, &self.source, &self.build_options, kernel)
        });
        if let Some(infos) = cached {
            return Ok(infos);
        }
        let mut infos = partitioner::args::arg_infos(self.program()?.kernel(Some(kernel))?);
        infos.sort_by_key(|a| a.index);
        if let Some(path) = &entry {
            cache::store_args(
                path,
                &self.file,
                &self.source,
                &self.build_options,
                kernel,
                &infos,
            );
        }
        Ok(infos)
    }
}

/// One cached launch configuration: its ranges, and its plan once asked for.
struct Launch {
    kernel: String,
    config: LaunchConfig,
    file: RangeFile,
    plan: Option<launcher::Plan>,
    /// The ranges came from the persistent analysis cache.
    from_cache: bool,
}

/// One analysis session over one program (see the crate documentation).
pub struct Session {
    origin: Origin,
    launches: Vec<Launch>,
    fallback_unsplit: bool,
    /// An analysis reaches the persistent cache only when the caller says
    /// ([`answer_then`]), not as it is made.
    store_later: bool,
}

impl Session {
    /// Parses `source` (named `file` in messages) with the clang options
    /// `build_options` (`-D`, `-I`): the only libclang parse of the session.
    pub fn from_source(file: &str, source: &str, build_options: &[String]) -> Result<Session> {
        let parse = coarsen::ParseOptions {
            clang_args: build_options.to_vec(),
        };
        let program = coarsen::parse_program(file, source, &parse)?;
        Ok(Session::from_program(program, build_options))
    }

    /// A session over a program `coarsen::parse_program` already parsed with
    /// the clang options `build_options`: [`Session::from_source`] without a
    /// second parse. The options must be those of the parse: they name the
    /// program's range files and cache entries.
    pub fn from_program(program: Program, build_options: &[String]) -> Session {
        Session::over(Source {
            file: program.file.clone(),
            source: program.source.clone(),
            build_options: build_options.to_vec(),
            program: OnceLock::from(program),
        })
    }

    /// A session over `source` (named `file`) with the clang options
    /// `build_options` that parses it only when something needs the program
    /// (the OpenCL layer: a warm process never loads libclang).
    /// [`Session::arg_infos`] reads the argument list from the persistent
    /// cache ([`cache::args_key`]) and [`Session::ranges_for_launch`] the
    /// launch's ranges ([`cache::key`]); a miss parses. Whether the kernel
    /// exists is then said by the cache entry (which names it) or by the
    /// parse. A source that does not parse gives the same
    /// [`SessionError::Coarsen`] as [`Session::from_source`] would have,
    /// from the first call that needed the program.
    pub fn from_source_lazy(file: &str, source: &str, build_options: &[String]) -> Session {
        Session::over(Source {
            file: file.to_string(),
            source: source.to_string(),
            build_options: build_options.to_vec(),
            program: OnceLock::new(),
        })
    }

    fn over(source: Source) -> Session {
        Session {
            origin: Origin::Source(source),
            launches: Vec::new(),
            fallback_unsplit: false,
            store_later: false,
        }
    }

    /// A session over an analyzed range file: launches use its ranges as they are.
    pub fn from_range_file(file: RangeFile) -> Session {
        Session {
            origin: Origin::RangeFile(file),
            launches: Vec::new(),
            fallback_unsplit: false,
            store_later: false,
        }
    }

    /// When the analysis of a launch fails (a limit of the analysis, not a
    /// parse error or a kernel the source lacks), run the kernel whole with
    /// the reason in its report instead of failing. The C API does; the CLI
    /// reports the error.
    pub fn set_fallback_unsplit(&mut self, on: bool) {
        self.fallback_unsplit = on;
    }

    /// The parsed program: always for sessions made by
    /// [`Session::from_source`] or [`Session::from_program`]; for one made by
    /// [`Session::from_source_lazy`], once something needed it; never for a
    /// range file.
    pub fn program(&self) -> Option<&Program> {
        match &self.origin {
            Origin::Source(s) => s.program.get(),
            Origin::RangeFile(_) => None,
        }
    }

    /// The source file's name as messages use it.
    pub fn file_name(&self) -> &str {
        match &self.origin {
            Origin::Source(s) => &s.file,
            Origin::RangeFile(rf) => &rf.source_name,
        }
    }

    /// The program (parsed now if it was not), or what `what` needs it for
    /// when the session is over a range file.
    fn source_program(&self, what: &'static str) -> Result<&Program> {
        match &self.origin {
            Origin::Source(s) => s.program(),
            Origin::RangeFile(rf) => Err(SessionError::NotSource {
                file: rf.source_name.clone(),
                what,
            }),
        }
    }

    /// The kernel `name`, or the first kernel: its name.
    pub fn kernel_name(&self, name: Option<&str>) -> Result<String> {
        match &self.origin {
            Origin::Source(s) => Ok(s.program()?.kernel(name)?.name.clone()),
            Origin::RangeFile(rf) => Ok(range_file_kernel(rf, name)?.name.clone()),
        }
    }

    /// The kernel's arguments in order (kind, element type and size). A
    /// session made by [`Session::from_source_lazy`] that has not parsed its
    /// source reads them from the persistent cache, or parses and stores
    /// them there.
    pub fn arg_infos(&self, kernel: &str) -> Result<Vec<ArgInfo>> {
        match &self.origin {
            Origin::Source(s) => s.arg_infos(kernel),
            Origin::RangeFile(rf) => {
                let mut infos = range_file_kernel(rf, Some(kernel))?.args.clone();
                infos.sort_by_key(|a| a.index);
                Ok(infos)
            }
        }
    }

    /// The access relations of `kernel` (`clpart analyze --emit access`).
    pub fn accesses(&self, kernel: &str, options: &AnalysisOptions) -> Result<KernelAccesses> {
        let program = self.source_program("the access analysis")?;
        Ok(access_analysis::analyze_kernel(program, kernel, options)?)
    }

    /// The ranges of one kernel: the access analysis, then the partitioner on
    /// its result, within one time budget ([`AnalysisOptions::time_budget_ms`]).
    pub fn analyze_kernel(&self, kernel: &str, options: &PartitionOptions) -> Result<KernelRanges> {
        analyze_one(self.source_program("the analysis")?, kernel, options)
    }

    /// The range file of `kernel`, or of every kernel (`clpart analyze`).
    pub fn analyze(&self, kernel: Option<&str>, options: &PartitionOptions) -> Result<RangeFile> {
        let program = self.source_program("the analysis")?;
        let Origin::Source(src) = &self.origin else {
            unreachable!("source_program checked the origin")
        };
        let names: Vec<String> = match kernel {
            Some(k) => vec![program.kernel(Some(k))?.name.clone()],
            None => {
                program.kernel(None)?;
                program.kernels().map(|k| k.name.clone()).collect()
            }
        };
        let mut rf = RangeFile::new(&program.file, &program.source);
        rf.build_options = build_options_of(&src.build_options, program);
        rf.kernels = analyze_kernels(program, &names, options)?;
        Ok(rf)
    }

    /// For kernels of `rf` that do not split while the local size is
    /// unknown (group and local ids over-approximated, as in
    /// `out[get_group_id(0)]`), whether they split once it is known: each is
    /// analyzed again with a local size its launch-time assumptions allow
    /// ([`probe_local_size`]: 64 work-items where they all do, `16x4` and
    /// `4x4x4` in 2-D and 3-D; within a third of the time budget; not a
    /// kernel that ran out of its budget) and, where that splits, gets the note
    /// [`LOCAL_SIZE_NOTE`] naming the size tried and the dimension. `clpart
    /// run`, the C API and the OpenCL layer analyze each launch with its
    /// own local size, so this is what they will see for such a size.
    pub fn note_local_size_needed(&self, rf: &mut RangeFile, options: &PartitionOptions) {
        if options.analysis.local_size.is_some() {
            return;
        }
        for k in rf.kernels.iter_mut() {
            let over = k
                .diagnostics
                .iter()
                .any(|d| d.contains(access_analysis::LOCAL_SIZE_UNKNOWN_NOTE));
            // a kernel that ran out of its time budget is not analyzed again
            let spent = k.cut_short.contains(&ranges_format::CutShort::Budget);
            if k.splittable || !over || spent {
                continue;
            }
            let probe = probe_local_size(k);
            let text = probe[..k.work_dim.clamp(1, 3) as usize]
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join("x");
            let mut po = options.clone();
            po.analysis.local_size = Some(probe);
            po.counts = partitioner::Counts::None;
            // a third of the budget, so that both analyses end within it
            // and a third (2 s in optimized builds)
            let budget = options.analysis.time_budget_ms;
            if budget > 0 {
                po.analysis.time_budget_ms = (budget / 3).max(1);
            }
            let Ok(probed) = self.analyze_kernel(&k.name, &po) else {
                continue;
            };
            if let (true, Some(d)) = (probed.splittable, probed.split_dim) {
                k.diagnostics.push(format!(
                    "{LOCAL_SIZE_NOTE}: with --local {text} it splits along dimension {d} (clpart run, the C API and the OpenCL layer analyze each launch with its local size)"
                ));
            }
        }
    }
}

/// The local size [`Session::note_local_size_needed`] tries for `k`: the
/// first of 64, 32, 16, 8, 4 work-items (`16x4`, `8x8`, `8x4`, `4x4`, `2x2`
/// in 2-D; `4x4x4`, `2x2x2` in 3-D) under which every launch-time
/// assumption of `k` holds on a sample launch of 64 work-groups (a kernel
/// whose subscripts need `ls0 <= 16`, a tile of 16, gets 16), else the
/// first.
fn probe_local_size(k: &ranges_format::KernelRanges) -> [i64; 3] {
    let candidates: &[[i64; 3]] = match k.work_dim {
        2 => &[[16, 4, 1], [8, 8, 1], [8, 4, 1], [4, 4, 1], [2, 2, 1]],
        3 => &[[4, 4, 4], [2, 2, 2]],
        _ => &[[64, 1, 1], [32, 1, 1], [16, 1, 1], [8, 1, 1], [4, 1, 1]],
    };
    let Ok(bound) = k.validate_and_bind() else {
        return candidates[0];
    };
    let split = k.split_dim.unwrap_or(0);
    let holds = |ls: &[i64; 3]| {
        let values = partitioner::sample_values(&k.params, split, Some(*ls));
        bound
            .assumptions
            .iter()
            .all(|a| a.eval(&values).unwrap_or(false))
    };
    candidates
        .iter()
        .find(|c| holds(c))
        .copied()
        .unwrap_or(candidates[0])
}

impl Session {
    /// The ranges of one launch of `kernel`, cached per configuration. From
    /// source: analyzed with the local size known (group and local ids become
    /// exact); when that cannot prove the writes of different slices
    /// disjoint, analyzed again specialized on the launch's NDRange sizes and
    /// integer scalars (the kernel's diagnostics then say so). From a range
    /// file: the file.
    pub fn ranges_for_launch(&mut self, kernel: &str, config: &LaunchConfig) -> Result<&RangeFile> {
        let idx = self.launch_idx(kernel, config)?.0;
        Ok(&self.launches[idx].file)
    }

    /// The launcher plan of one launch of `kernel` (ranges bound once,
    /// programs built per device on first use), cached per configuration;
    /// also says whether the analysis ran for this call.
    pub fn plan(
        &mut self,
        runtime: &launcher::Runtime,
        kernel: &str,
        config: &LaunchConfig,
    ) -> Result<(&mut launcher::Plan, bool)> {
        let (idx, analyzed) = self.launch_idx(kernel, config)?;
        let launch = &mut self.launches[idx];
        if launch.plan.is_none() {
            launch.plan = Some(launcher::Plan::new(runtime, &launch.file, kernel)?);
        }
        Ok((launch.plan.as_mut().expect("made above"), analyzed))
    }

    /// The ranges and the plan of one launch, taken out of the session (for
    /// callers that keep them, such as the bench and the tests).
    pub fn into_launch(
        mut self,
        runtime: &launcher::Runtime,
        kernel: &str,
        config: &LaunchConfig,
    ) -> Result<(RangeFile, launcher::Plan)> {
        self.plan(runtime, kernel, config)?;
        let idx = self.launch_idx(kernel, config)?.0;
        let launch = self.launches.swap_remove(idx);
        Ok((launch.file, launch.plan.expect("made by plan()")))
    }

    /// The ranges of one launch, taken out of the session (not kept in it),
    /// and whether they were read from the persistent analysis cache: for
    /// callers that keep their own verdicts (the OpenCL layer).
    pub fn take_ranges(
        &mut self,
        kernel: &str,
        config: &LaunchConfig,
    ) -> Result<(RangeFile, bool)> {
        let idx = self.launch_idx(kernel, config)?.0;
        let launch = self.launches.swap_remove(idx);
        Ok((launch.file, launch.from_cache))
    }

    /// The ranges and the plan of a cached launch (after [`Session::plan`]).
    pub fn launch_parts(
        &mut self,
        kernel: &str,
        config: &LaunchConfig,
    ) -> Option<(&RangeFile, &mut launcher::Plan)> {
        let config = self.key(config);
        let l = self
            .launches
            .iter_mut()
            .find(|l| l.kernel == kernel && l.config == config)?;
        Some((&l.file, l.plan.as_mut()?))
    }

    /// Whether the ranges of a launch the session holds were read from the
    /// persistent analysis cache ([`cache`]) rather than analyzed.
    pub fn from_cache(&self, kernel: &str, config: &LaunchConfig) -> bool {
        let config = self.key(config);
        self.launches
            .iter()
            .any(|l| l.kernel == kernel && l.config == config && l.from_cache)
    }

    /// The cache key: a range file's ranges do not depend on the launch.
    fn key(&self, config: &LaunchConfig) -> LaunchConfig {
        match self.origin {
            Origin::Source(_) => config.depends_on(),
            Origin::RangeFile(_) => LaunchConfig::default(),
        }
    }

    /// The index of the cached launch, analyzing it when new.
    /// Makes ready what [`Session::take_ranges`] needs for this launch
    /// without analyzing: its ranges read from the persistent cache into
    /// the session, or else the source parsed. For callers that must know
    /// when libclang runs (the layer's worker thread, which must not be
    /// inside libclang when the process exits).
    pub fn load_or_parse(&mut self, kernel: &str, config: &LaunchConfig) -> Result<()> {
        let key = self.key(config);
        if self
            .launches
            .iter()
            .any(|l| l.kernel == kernel && l.config == key)
        {
            return Ok(());
        }
        let Origin::Source(src) = &self.origin else {
            return Ok(());
        };
        if src.program.get().is_some() {
            return Ok(());
        }
        match self.cached(kernel, &key) {
            Some(file) => {
                self.keep(kernel, key, file, true);
                Ok(())
            }
            None => self.source_program("the analysis").map(|_| ()),
        }
    }

    /// Whether the persistent cache holds this launch's ranges and the
    /// kernel's argument list: [`Session::take_ranges`] then reads them
    /// without parsing or analyzing (a look at two files' existence).
    pub fn in_cache(&self, kernel: &str, config: &LaunchConfig) -> bool {
        let Origin::Source(src) = &self.origin else {
            return false;
        };
        let Some(dir) = cache::cacheable(&src.source).then(cache::dir).flatten() else {
            return false;
        };
        let args = cache::args_key(&src.file, &src.source, &src.build_options, kernel);
        self.cache_entry(kernel, &self.key(config))
            .is_some_and(|p| p.is_file())
            && cache::args_entry_path(&dir, &args).is_file()
    }

    /// A launch's ranges from the persistent cache, when it holds them.
    fn cached(&self, kernel: &str, key: &LaunchConfig) -> Option<RangeFile> {
        let Origin::Source(src) = &self.origin else {
            return None;
        };
        let path = self.cache_entry(kernel, key)?;
        cache::load(&path, &src.file, &src.source, &src.build_options, kernel)
    }

    /// Where a launch's ranges are kept in the persistent cache.
    fn cache_entry(&self, kernel: &str, key: &LaunchConfig) -> Option<std::path::PathBuf> {
        let Origin::Source(src) = &self.origin else {
            return None;
        };
        let dir = cache::cacheable(&src.source).then(cache::dir).flatten()?;
        let key = cache::key(&src.file, &src.source, &src.build_options, kernel, key);
        Some(cache::entry_path(&dir, &key))
    }

    /// Keeps a launch's ranges (the oldest goes past [`MAX_CACHED`]).
    fn keep(&mut self, kernel: &str, key: LaunchConfig, file: RangeFile, from_cache: bool) {
        if self.launches.len() >= MAX_CACHED {
            self.launches.remove(0);
        }
        self.launches.push(Launch {
            kernel: kernel.to_string(),
            config: key,
            file,
            plan: None,
            from_cache,
        });
    }

    fn launch_idx(&mut self, kernel: &str, config: &LaunchConfig) -> Result<(usize, bool)> {
        let key = self.key(config);
        if let Some(i) = self
            .launches
            .iter()
            .position(|l| l.kernel == kernel && l.config == key)
        {
            return Ok((i, false));
        }
        let mut from_cache = false;
        let file = match &self.origin {
            Origin::RangeFile(rf) => {
                range_file_kernel(rf, Some(kernel))?;
                rf.clone()
            }
            Origin::Source(src) => {
                // A kernel a parsed source lacks is an error before any cache
                // look-up; an unparsed one's is the cache entry's (it names the
                // kernel) or the parse's on a miss.
                if let Some(program) = src.program.get() {
                    program.kernel(Some(kernel))?;
                }
                let entry = self.cache_entry(kernel, &key);
                let cached = self.cached(kernel, &key);
                match cached {
                    Some(f) => {
                        from_cache = true;
                        f
                    }
                    None => match self.analyze_for_launch(kernel, config) {
                        Ok(f) => {
                            if let Some(path) = entry.as_ref().filter(|_| !self.store_later) {
                                cache::store(path, &f);
                            }
                            f
                        }
                        Err(e)
                            if self.fallback_unsplit && !matches!(e, SessionError::Coarsen(_)) =>
                        {
                            self.unsplit_file(kernel, config, &e.to_string())?
                        }
                        Err(e) => return Err(e),
                    },
                }
            }
        };
        self.keep(kernel, key, file, from_cache);
        Ok((self.launches.len() - 1, true))
    }

    fn analyze_for_launch(&self, kernel: &str, config: &LaunchConfig) -> Result<RangeFile> {
        if let Some(only) = &config.only {
            return self.analyze_for_any_launch(kernel, config, only);
        }
        let mut po = PartitionOptions {
            split_dim: config.split_dim,
            counts: config.counts,
            // where a slice's footprint gets no parametric count, isl counts
            // it at this launch's values (a launch's `bytes_exact`)
            count_at: Some(partitioner::LaunchPoint {
                global: config.global.clone(),
                local: config.local.clone(),
                scalars: config.scalars.clone(),
            }),
            ..Default::default()
        };
        let mut ls = [1i64; 3];
        for (i, l) in config.local.iter().take(3).enumerate() {
            ls[i] = *l as i64;
        }
        po.analysis.local_size = Some(ls);
        // dimensions past the launch's are one work-item (`get_global_id(1)`
        // in a kernel launched 1-D is 0)
        po.analysis.work_dim = u32::try_from(config.global.len())
            .ok()
            .filter(|&w| (1..=3).contains(&w));
        let mut rf = self.analyze(Some(kernel), &po)?;
        let Some(k) = rf.kernels.first() else {
            return Ok(rf);
        };
        // The dimension the analysis chose has one work-group at this launch
        // (a 1-D kernel launched as 2-D with a trailing 1 that reads
        // `get_global_id(1)`): the one with the most work-groups, if it
        // splits, serves this launch instead.
        let groups = |d: usize| -> u64 {
            let g = config.global.get(d).copied().unwrap_or(1);
            match config.local.get(d) {
                Some(&l) if l > 0 => g / l,
                _ => g,
            }
        };
        if let (None, Some(d)) = (config.split_dim, k.split_dim) {
            let best = (0..(k.work_dim as usize).min(config.global.len()))
                .max_by_key(|&e| (groups(e), std::cmp::Reverse(e)));
            if let Some(e) = best.filter(|&e| groups(d as usize) < 2 && groups(e) >= 2) {
                let other = PartitionOptions {
                    split_dim: Some(e as u32),
                    ..po.clone()
                };
                let alt = self.analyze(Some(kernel), &other)?;
                if alt.kernels.first().is_some_and(|a| a.splittable) {
                    rf = alt;
                }
            }
        }
        let Some(k) = rf.kernels.first() else {
            return Ok(rf);
        };
        // Specialization may help where writes were not proved disjoint, or a
        // written array could not be bounded (a subscript dividing by a
        // scalar, `i / stride`, becomes quasi-affine with the value known),
        // or a launch-time assumption fails at this launch's values (the
        // delinearization it came from is not needed with them known).
        // (a kernel split with checked merges only may do better: each
        // such array moves whole)
        let fails = assumption_fails(k, po.count_at.as_ref());
        let may_help = fails || writes_unproved(k);
        let n_checked = n_checked_merges(k);
        if (k.splittable && !fails && n_checked == 0) || !may_help {
            return Ok(rf);
        }
        let parametric_splits = k.splittable && !fails;
        for (d, g) in config.global.iter().take(3).enumerate() {
            po.analysis.specialize.insert(format!("gs{d}"), *g as i64);
            // and the number of work-groups: a loop over groups with the
            // step `get_num_groups(d)` then has a constant step
            if let Some(&l) = config.local.get(d).filter(|&&l| l > 0 && g % l == 0) {
                po.analysis
                    .specialize
                    .insert(format!("ng{d}"), (*g / l) as i64);
            }
        }
        for (name, v) in &config.scalars {
            let is_int_scalar = k.args.iter().any(|a| {
                &a.name == name
                    && a.kind == ArgKind::Scalar
                    && [
                        "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                    ]
                    .contains(&a.elem_type.as_str())
            });
            if is_int_scalar {
                po.analysis.specialize.insert(name.clone(), *v);
            }
        }
        let mut special = self.analyze(Some(kernel), &po)?;
        if special.kernels.first().is_some_and(|s| {
            s.splittable
                && !assumption_fails(s, po.count_at.as_ref())
                && (!parametric_splits || n_checked_merges(s) < n_checked)
        }) {
            special.kernels[0].diagnostics.push(SPECIALIZED_NOTE.into());
            return Ok(special);
        }
        Ok(rf)
    }

    /// One analysis for every launch of [`LaunchConfig::only`]'s kind:
    /// parametric in the NDRange (and in the work-group size when `local`
    /// is empty) and in the scalar arguments but those of `only`.
    fn analyze_for_any_launch(
        &self,
        kernel: &str,
        config: &LaunchConfig,
        only: &BTreeMap<String, i64>,
    ) -> Result<RangeFile> {
        let mut po = PartitionOptions {
            split_dim: config.split_dim,
            counts: config.counts,
            ..Default::default()
        };
        if !config.local.is_empty() {
            let mut ls = [1i64; 3];
            for (i, l) in config.local.iter().take(3).enumerate() {
                ls[i] = *l as i64;
            }
            po.analysis.local_size = Some(ls);
        }
        po.analysis.work_dim = u32::try_from(config.global.len())
            .ok()
            .filter(|&w| (1..=3).contains(&w));
        po.analysis.specialize = only.clone();
        let mut rf = self.analyze(Some(kernel), &po)?;
        if !only.is_empty() {
            if let Some(k) = rf.kernels.first_mut() {
                k.diagnostics.push(SPECIALIZED_NOTE.into());
            }
        }
        Ok(rf)
    }

    /// A range file that runs the kernel whole, for a kernel the analysis
    /// could not handle.
    fn unsplit_file(&self, kernel: &str, config: &LaunchConfig, why: &str) -> Result<RangeFile> {
        let program = self.source_program("the analysis")?;
        let Origin::Source(src) = &self.origin else {
            unreachable!("source_program checked the origin")
        };
        let mut file = RangeFile::new(&program.file, &program.source);
        file.build_options = build_options_of(&src.build_options, program);
        file.kernels.push(KernelRanges {
            name: kernel.to_string(),
            work_dim: config.global.len().clamp(1, 3) as u32,
            params: Vec::new(),
            args: self.arg_infos(kernel)?,
            split_dim: None,
            splittable: false,
            reason: Some(format!("the analysis failed: {why}")),
            arrays: Vec::new(),
            assumptions: Vec::new(),
            subkernel: None,
            diagnostics: Vec::new(),
            group_size_use: None,
            cut_short: Vec::new(),
        });
        Ok(file)
    }
}

/// Answers an analysis another process asked for (`clpart
/// analyze-request`, for the OpenCL layer): the ranges of
/// [`LaunchConfig::any_launch`] with the request's work-group size and
/// values, through the persistent cache like any launch's.
pub fn answer(request: &ranges_format::AnalysisRequest) -> Result<RangeFile> {
    answer_then(request, |_| {})
}

/// [`answer`], with `before_store` run on the ranges before they reach the
/// persistent cache (where they were not read from it): what a reader of
/// the cache may count on having been done, as the layer counts on the
/// subkernels' binaries being kept once the cache holds their analysis.
pub fn answer_then(
    request: &ranges_format::AnalysisRequest,
    before_store: impl FnOnce(&RangeFile),
) -> Result<RangeFile> {
    let mut session =
        Session::from_source_lazy(&request.file, &request.source, &request.build_options);
    session.store_later = true;
    let local = (!request.local.is_empty()).then_some(&request.local[..]);
    let config = LaunchConfig::any_launch(request.work_dim as usize, local, request.only.clone());
    // one process at a time makes an entry: another run's analysis of the
    // same launch, in progress, is waited for and read from the cache
    let entry = session.cache_entry(&request.kernel, &session.key(&config));
    let _making = entry
        .as_ref()
        .and_then(|entry| cache::hold(&cache::lock_path(entry)));
    // kept in the cache with the ranges: [`Session::in_cache`] wants both
    session.arg_infos(&request.kernel)?;
    let (file, from_cache) = session.take_ranges(&request.kernel, &config)?;
    before_store(&file);
    if let Some(path) = entry.filter(|_| !from_cache) {
        cache::store(&path, &file);
    }
    Ok(file)
}

/// Loads the libraries an analysis from source uses (libclang into the
/// calling thread, barvinok for counts) now rather than at their first use,
/// for a caller that must know when their static constructors have run
/// (the OpenCL layer orders its exit handler after them).
pub fn load_libraries() {
    let _ = coarsen::load_libclang();
    let _ = partitioner::ehrhart::barvinok_available();
}

/// Whether `k` has a written array that is sent whole or whose writes were
/// not proved disjoint across slices: what specializing on a launch's
/// values (a division by a scalar becomes quasi-affine, a delinearization
/// needs no assumption) may prove.
/// How many arrays of `k` merge with the run-time conflict check
/// ([`ranges_format::ArrayRanges::checked`]).
fn n_checked_merges(k: &KernelRanges) -> usize {
    k.arrays.iter().filter(|a| a.checked).count()
}

pub fn writes_unproved(k: &KernelRanges) -> bool {
    k.arrays.iter().any(|a| {
        let written = matches!(a.mode, ranges_format::Mode::W | ranges_format::Mode::RW);
        (written && matches!(a.status, ranges_format::ArrayStatus::Whole { .. }))
            || a.write.as_ref().is_some_and(|w| !w.disjoint_across_slices)
    })
}

/// Whether a launch-time assumption of `k` is false at the launch `point`
/// (at offset 0, the whole NDRange as one slice): the launcher would send
/// its array whole, or run the kernel unsplit, where the analysis
/// specialized on the launch's values may need no such assumption.
fn assumption_fails(k: &KernelRanges, point: Option<&partitioner::LaunchPoint>) -> bool {
    point.is_some_and(|p| !assumptions_failing(k, p).is_empty())
}

/// The descriptions of `k`'s launch-time assumptions that do not hold at
/// the launch `point` (at offset 0, the whole NDRange as one slice); none
/// where a parameter's value is unknown there.
pub fn assumptions_failing<'k>(
    k: &'k KernelRanges,
    point: &partitioner::LaunchPoint,
) -> Vec<&'k str> {
    let values = point.values(&k.params, &k.args, Some(k.split_dim.unwrap_or(0)));
    let Some(vals) = k
        .params
        .iter()
        .map(|p| values.get(&p.name).copied())
        .collect::<Option<Vec<i64>>>()
    else {
        return Vec::new();
    };
    // bound as a range file's reader binds them
    let Ok(bound) = k.validate_and_bind() else {
        return Vec::new();
    };
    bound
        .assumptions
        .iter()
        .zip(&k.assumptions)
        .filter(|(c, _)| c.eval(&vals).is_ok_and(|holds| !holds))
        .map(|(_, a)| a.description.as_str())
        .collect()
}

/// The build options of a range file of `program`: the user's, then those
/// the parse added ([`coarsen::ir::Program::added_options`]).
fn build_options_of(user: &[String], program: &Program) -> Vec<String> {
    let mut out = user.to_vec();
    out.extend(program.added_options.iter().cloned());
    out
}

/// [`Session::analyze_kernel`] on a parsed program.
fn analyze_one(
    program: &Program,
    kernel: &str,
    options: &PartitionOptions,
) -> Result<KernelRanges> {
    let start = std::time::Instant::now();
    if options.counts != partitioner::Counts::None {
        partitioner::ehrhart::preload_barvinok();
    }
    let deadline = partitioner::deadline(&options.analysis, start);
    let (acc, isl) = access_analysis::analyze_kernel_in(
        program,
        kernel,
        &options.analysis,
        deadline.unwrap_or(start),
    )?;
    Ok(partitioner::partition_kernel_in(
        program, &acc, isl, options, deadline,
    )?)
}

/// Stack of a thread that analyzes a kernel: the access analysis recurses
/// over the kernel's statements and the helpers it inlines, as it does on a
/// main thread (8 MiB).
const ANALYSIS_STACK_BYTES: usize = 32 << 20;

/// The ranges of the kernels `names`, in that order, each within its own
/// budget. Several kernels are analyzed at once, one per core (the analyses
/// share nothing but the parsed program; each has its own isl context, and
/// the Ehrhart engines run in child processes); the first error in the
/// kernels' order is the result's.
fn analyze_kernels(
    program: &Program,
    names: &[String],
    options: &PartitionOptions,
) -> Result<Vec<KernelRanges>> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(names.len());
    if workers <= 1 {
        return names
            .iter()
            .map(|n| analyze_one(program, n, options))
            .collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<Option<Result<KernelRanges>>> = (0..names.len()).map(|_| None).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                std::thread::Builder::new()
                    .name("clpart-analysis".into())
                    .stack_size(ANALYSIS_STACK_BYTES)
                    .spawn_scoped(s, || {
                        let mut mine = Vec::new();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(name) = names.get(i) else {
                                return mine;
                            };
                            mine.push((i, analyze_one(program, name, options)));
                        }
                    })
            })
            .collect();
        for h in handles {
            // A thread that could not start leaves its kernels to the loop below.
            let Ok(h) = h else { continue };
            match h.join() {
                Ok(mine) => {
                    for (i, k) in mine {
                        done[i] = Some(k);
                    }
                }
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    });
    names
        .iter()
        .zip(done)
        .map(|(n, k)| k.unwrap_or_else(|| analyze_one(program, n, options)))
        .collect()
}

fn range_file_kernel<'a>(rf: &'a RangeFile, name: Option<&str>) -> Result<&'a KernelRanges> {
    match name {
        None => rf.kernels.first().ok_or_else(|| SessionError::NoKernel {
            file: rf.source_name.clone(),
        }),
        Some(n) => {
            rf.kernels
                .iter()
                .find(|k| k.name == n)
                .ok_or_else(|| SessionError::UnknownKernel {
                    file: rf.source_name.clone(),
                    name: n.to_string(),
                    available: rf
                        .kernels
                        .iter()
                        .map(|k| k.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kernels analyzed side by side give the range file that analyzing
    /// each alone, in the source's order, gives.
    #[test]
    fn kernels_analyzed_at_once_match_one_by_one() {
        let source = "__kernel void add(__global float *a, __global const float *b) {
    int i = get_global_id(0);
    a[i] += b[i];
}
__kernel void shift(__global float *out, __global const float *in, int n) {
    int i = get_global_id(0);
    if (i + 1 < n) out[i] = in[i + 1];
}
__kernel void rows(__global float *m, int w) {
    int x = get_global_id(0), y = get_global_id(1);
    m[y * w + x] *= 2.0f;
}
";
        let s = Session::from_source("three.cl", source, &[]).unwrap();
        let options = PartitionOptions {
            counts: partitioner::Counts::Written,
            ..Default::default()
        };
        let all = s.analyze(None, &options).unwrap();
        let names: Vec<&str> = all.kernels.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["add", "shift", "rows"]);
        for k in &all.kernels {
            let alone = s.analyze_kernel(&k.name, &options).unwrap();
            assert_eq!(
                ron::to_string(k).unwrap(),
                ron::to_string(&alone).unwrap(),
                "kernel {}",
                k.name
            );
        }
    }
}
