//! Per-slice ranges, counts and verdicts (thesis 4.1 listing 4.2, tables
//! 4.3/4.4), from the access relations of `access-analysis`.
//!
//! A slice of work-groups `[lo, hi)` of the split dimension `d` is, in the
//! analysis's global-id domain, `go_d + sx_lo <= x_d < go_d + sx_hi` with the
//! parameters `sx_lo = lo*ls_d` and `sx_hi = hi*ls_d`
//! ([`ParamSource::SliceLoItem`]/[`ParamSource::SliceHiItem`]). The slice is a
//! parameter, not a ratio: one analysis serves every split.
//!
//! Per array and slice the footprint is `range(access ∩ slice)`; its bounds
//! per array dimension are isl `dim_min`/`dim_max` (piecewise quasi-affine in
//! the parameters). Delinearized arrays (`c[y][x]` with strides `[w, 1]`) get
//! the linear bounds `sum_k stride_k * bound_k` — exact for the lexicographic
//! corners of box-shaped footprints and sound in general, given the launch-time
//! assumption `0 <= x < w`. Counts of distinct elements are Ehrhart
//! quasi-polynomials from barvinok, or PolyLib without it ([`counting`]),
//! made for the chosen split dimension only.
//!
//! **Work shared.** Arrays accessed alike (the same mode, strides, element
//! type and relations but for the array's name: `ArrayShape`) are analyzed
//! once per split dimension, and equal count inputs are counted once
//! (`distinct_by`). Each dimension's bounds get `EXACT_BOUND_OPS` isl
//! operations; past them the bounds of the footprint without its
//! existentials (a superset) are used, with a note on the array.
//!
//! **Boxes and read parts.** Over literal strides the 1-D range is the exact
//! least and greatest linear index (`literal_linear`). Arrays of two or more
//! dimensions also keep the slice's read and write boxes (`ranges_and_box`),
//! with `write_exact` when isl proves that the must-writes, and no may-write,
//! fill the write box (`writes_fill_box`), and the read parts (`box_parts`):
//! one box per group of read accesses, groups merging where their intervals
//! overlap or touch in every dimension, so that a pivot row read beside the
//! slice's own rows is a part of its own; the parts' union must cover the
//! read footprint (checked with isl). A 1-D array that is only read gets its
//! maximal runs as parts when it has two to four (`runs_1d`). Writes have no
//! parts: the write box is the hull of every write.
//!
//! **The split dimension** is the splittable one with the smallest footprint
//! at sample values (`estimated_cost`, concrete bounds), so that only the
//! chosen dimension's parametric bounds and counts are made.
//!
//! **Counts** ([`Counts`]): which are made depends on the caller. Those of
//! the first candidate dimension may be made ahead (`Ahead`, `count_ahead`)
//! by children at low priority while this process finds the ranges; only
//! barvinok's successes are kept from them, so which engine counted never
//! depends on timing. A launch's own values ([`PartitionOptions::count_at`])
//! give counts in the slice's bounds alone (`point_input`,
//! `counts_at_points`) where no parametric count was made; such a count
//! carries the values it holds at, and evaluated anywhere else it is an
//! error (`ExprError::OutsidePoint`), never 0. They serve only the report:
//! the written counts that gluing needs stay parametric.

mod ahead;
mod bounds;
mod count_input;
mod counts;
mod launch_point;
mod ranges;
mod read_parts;
mod slice;
mod split_dim;
mod verdicts;
mod vertices;

pub use launch_point::LaunchPoint;
pub use split_dim::sample_values;

use access_analysis::isl::Isl;
use access_analysis::{AccessKind, AnalysisOptions, ArrayAccesses, KernelAccesses};
use coarsen::ir::Program;
use ranges_format::{ArrayRanges, CutShort, KernelRanges, Mode, Param, ParamSource, Range};

use ahead::{count_ahead, Ahead};
use counts::{add_counts, ahead_inputs};
use ranges::partition_along;
use split_dim::{estimated_cost, slice_cost};
use vertices::vertex_limit;

/// Options of the partitioner.
#[derive(Debug, Clone, Default)]
pub struct PartitionOptions {
    /// Split along this dimension instead of choosing.
    pub split_dim: Option<u32>,
    /// Options passed to the access analysis (specialization, isl limit).
    pub analysis: AnalysisOptions,
    /// Which Ehrhart counts to make (the slow part of the analysis).
    pub counts: Counts,
    /// The launch being analyzed for, when there is one: slice counts are
    /// made at its values where no parametric one can be had, and for
    /// [`Counts::AtLaunch`] ([`LaunchPoint`]).
    pub count_at: Option<LaunchPoint>,
}

/// Which Ehrhart counts the partitioner makes ([`PartitionOptions::counts`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Counts {
    /// Every count: the elements the whole NDRange and a slice touch per
    /// array, and the elements a slice writes where the writes are not
    /// proved to fill their range (`clpart analyze`, range files, reports
    /// with `bytes_exact`).
    #[default]
    All,
    /// What a launch's report needs, made for the launch alone: the written
    /// counts gluing needs (parametric: they are evaluated per slice), and
    /// each array's slice count with every parameter but the slice's bounds
    /// fixed at the launch's values ([`PartitionOptions::count_at`],
    /// [`LaunchPoint`]; no count without them): faster than
    /// [`Counts::All`], with no total counts and no vertices (`clpart run`).
    AtLaunch,
    /// Only what a launch needs to be glued right: the written counts of
    /// arrays whose writes are not proved to fill their range (the OpenCL
    /// layer and the C API launch with these; `bytes_exact` is then absent).
    Written,
    /// None.
    None,
}

/// Errors of the partitioner (analysis failures are verdicts, not errors).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartitionError {
    #[error(transparent)]
    Analysis(#[from] access_analysis::AnalysisError),
    #[error("kernel '{kernel}': --split-dim {dim} is out of range (work_dim is {work_dim})")]
    BadSplitDim {
        kernel: String,
        dim: u32,
        work_dim: u32,
    },
}

const SX_LO: &str = "sx_lo";

const SX_HI: &str = "sx_hi";

/// The analysis state of one kernel for the partitioner.
struct Ctx<'a> {
    acc: &'a KernelAccesses,
    isl: Isl,
    /// Params of the analysis plus the slice bounds.
    param_names: Vec<String>,
    local_size: Option<[i64; 3]>,
    specialize: std::collections::BTreeMap<String, i64>,
    /// The kernel's wall-clock deadline ([`access_analysis::AnalysisOptions::time_budget_ms`]).
    deadline: Option<std::time::Instant>,
    /// When the parametric counts and vertex bounds, which come last and
    /// only inform, stop ([`COUNTS_SHARE_PERCENT`] of the budget from the
    /// start of the kernel's analysis).
    counts_deadline: Option<std::time::Instant>,
    budget_ms: u64,
    /// Per array (by argument index), its total range and whether its total
    /// footprint is empty: they do not depend on the split dimension, so
    /// the candidates after the first reuse them.
    totals: std::cell::RefCell<std::collections::BTreeMap<u32, (Option<Range>, bool)>>,
    /// [`PartitionOptions::count_at`].
    point: Option<LaunchPoint>,
    /// Per split dimension and array shape ([`ArrayShape`]), the ranges an
    /// array of that shape got ([`array_ranges`](ranges::array_ranges)) and the reasons it gave,
    /// with its name as [`NAME_SLOT`]: arrays accessed alike (the five atom
    /// arrays of `mdh`, the two inputs of `vadd`) are analyzed once.
    same_shape: std::cell::RefCell<std::collections::HashMap<(u32, ArrayShape), ShapeRanges>>,
    /// Set by [`dim_bounds`](bounds::dim_bounds) when it used looser bounds than the exact
    /// ones; [`partition_along`] clears it before each array and notes it.
    loosened: std::cell::Cell<bool>,
    /// What cut the analysis short so far ([`KernelRanges::cut_short`]).
    cut: Cut,
}

/// What cut a kernel's analysis short, each once: recorded where a time
/// limit is met or a counting process fails, read into
/// [`KernelRanges::cut_short`] at the end.
#[derive(Default)]
struct Cut(std::cell::RefCell<std::collections::BTreeSet<CutShort>>);

impl Cut {
    fn saw(&self, c: CutShort) {
        self.0.borrow_mut().insert(c);
    }

    /// Records what an engine's error says of the count: a time limit
    /// met, or a process that failed.
    fn saw_error(&self, e: &counting::EhrhartError) {
        if let Some(c) = e.cut_short() {
            self.saw(c);
        }
    }

    fn list(&self) -> Vec<CutShort> {
        self.0.borrow().iter().copied().collect()
    }
}

/// The ranges an array of one shape got, the reasons it gave (with
/// [`NAME_SLOT`] for its name) and whether some of its bounds are looser
/// than exact ([`Ctx::loosened`]): [`Ctx::same_shape`].
type ShapeRanges = (ArrayRanges, Vec<String>, bool);

/// What [`array_ranges`](ranges::array_ranges) reads of an array but its name and argument index:
/// its mode, its whole-array reason, its strides, its element type and size,
/// and its access relations (their unions and each access's own, in order:
/// the read parts group the accesses) with the array's name taken out.
#[derive(Clone, PartialEq, Eq, Hash)]
struct ArrayShape {
    mode: Mode,
    whole: Option<String>,
    strides: Vec<String>,
    elem_type: String,
    elem_size: u32,
    relations: [String; 3],
    accesses: Vec<(AccessKind, String)>,
}

/// Stands for an array's name in the memo of [`Ctx::same_shape`].
const NAME_SLOT: &str = "\u{0}";

impl ArrayShape {
    fn of(a: &ArrayAccesses) -> ArrayShape {
        // the array's name is the relations' range tuple: `-> name[o0]`
        let tuple = format!("-> {}[", a.name);
        let strip = |t: &str| t.replace(&tuple, "-> A[");
        ArrayShape {
            mode: a.mode,
            whole: a.whole.clone(),
            strides: a.strides.clone(),
            elem_type: a.elem_type.clone(),
            elem_size: a.elem_size,
            relations: [strip(&a.reads), strip(&a.must_writes), strip(&a.may_writes)],
            accesses: a.accesses.iter().map(|x| (x.kind, strip(&x.map))).collect(),
        }
    }
}

/// `text` with the array name in `array 'from'` replaced by `to`.
fn renamed(text: &str, from: &str, to: &str) -> String {
    text.replace(&format!("array '{from}'"), &format!("array '{to}'"))
}

/// The share of a kernel's time budget after which its parametric counts
/// and vertex bounds (the Ehrhart engines, in child processes) stop: 60 %,
/// and at most [`COUNTS_TIME_MS`]. They come after the ranges and
/// verdicts, inform the report only (a launch counts at its own values,
/// which are not cut), and on the slowest kernels a single count can take
/// seconds (`matmul_tiled` without its local size: one never ends; a
/// clamped 2-D stencil's whole-NDRange count has 799 chambers), so the
/// kernel's analysis ends within about 1 s. What is cut says so: "no count
/// ...: the counting time is spent".
pub const COUNTS_SHARE_PERCENT: u64 = 60;

/// The counts' wall-clock limit from the start of a kernel's analysis in
/// optimized builds (0.9 s: 60 % of the 1.5 s the whole analysis once
/// had); in debug builds, whose goldens hold counts, the share of their
/// 120 s budget.
pub const COUNTS_TIME_MS: u64 = if cfg!(debug_assertions) { 72_000 } else { 900 };

/// The wall-clock deadline of a kernel's analysis started at `start`
/// ([`AnalysisOptions::time_budget_ms`]; `None` without a budget). The access
/// analysis and [`partition_kernel`] share it.
pub fn deadline(
    options: &AnalysisOptions,
    start: std::time::Instant,
) -> Option<std::time::Instant> {
    (options.time_budget_ms > 0)
        .then(|| start + std::time::Duration::from_millis(options.time_budget_ms))
}

/// Partitions one kernel from its access analysis `acc` (made with
/// `options.analysis`): ranges, counts and verdicts for the best (or
/// requested) split dimension, and the subkernel. isl work still running at
/// `deadline` (see [`deadline`]) is abandoned: the arrays concerned are whole.
pub fn partition_kernel(
    program: &Program,
    acc: &KernelAccesses,
    options: &PartitionOptions,
    deadline: Option<std::time::Instant>,
) -> Result<KernelRanges, PartitionError> {
    let isl = Isl::with_deadline(
        options.analysis.max_operations,
        deadline,
        options.analysis.time_budget_ms,
    );
    partition_kernel_in(program, acc, isl, options, deadline)
}

/// [`partition_kernel`] in `isl`, the context the access analysis made
/// `acc` in (`access_analysis::analyze_kernel_in`, with the same options
/// and deadline): the relations, domains and contexts `acc` holds as text
/// are read back from its cache, not parsed again.
pub fn partition_kernel_in(
    program: &Program,
    acc: &KernelAccesses,
    isl: Isl,
    options: &PartitionOptions,
    deadline: Option<std::time::Instant>,
) -> Result<KernelRanges, PartitionError> {
    let budget_ms = options.analysis.time_budget_ms;
    let kernel = acc.kernel.as_str();
    let func = program.kernel(Some(kernel)).map_err(|_| {
        PartitionError::Analysis(access_analysis::AnalysisError::UnknownKernel {
            file: program.file.clone(),
            name: kernel.to_string(),
            available: program
                .kernels()
                .map(|k| k.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
    })?;
    let args = crate::args::arg_infos(func);
    if let Some(d) = options.split_dim {
        if d >= acc.work_dim {
            return Err(PartitionError::BadSplitDim {
                kernel: kernel.into(),
                dim: d,
                work_dim: acc.work_dim,
            });
        }
    }
    let mut param_names: Vec<String> = acc.params.iter().map(|p| p.name.clone()).collect();
    param_names.push(SX_LO.into());
    param_names.push(SX_HI.into());
    let cx = Ctx {
        acc,
        isl,
        deadline,
        counts_deadline: deadline.map(|d| {
            let share = budget_ms * COUNTS_SHARE_PERCENT / 100;
            d - std::time::Duration::from_millis(budget_ms - share.min(COUNTS_TIME_MS))
        }),
        budget_ms,
        param_names,
        local_size: options.analysis.local_size,
        specialize: options.analysis.specialize.clone(),
        totals: Default::default(),
        same_shape: Default::default(),
        loosened: Default::default(),
        point: options.count_at.clone(),
        cut: Cut::default(),
    };
    let mut params: Vec<Param> = acc
        .params
        .iter()
        .map(|p| Param {
            name: p.name.clone(),
            source: p.source,
        })
        .collect();
    params.push(Param {
        name: SX_LO.into(),
        source: ParamSource::SliceLoItem,
    });
    params.push(Param {
        name: SX_HI.into(),
        source: ParamSource::SliceHiItem,
    });

    let dims: Vec<u32> = match options.split_dim {
        Some(d) => vec![d],
        None => (0..acc.work_dim).rev().collect(),
    };
    // The choice needs ranges only: counts (the slow part) are made for the
    // chosen dimension alone, once it is chosen.
    // Candidates are tried from the smallest slice footprint (estimated from
    // the slice ranges alone) up, and the first splittable one ends the
    // search: the others could only have larger footprints.
    let mut order: Vec<(i64, u32)> = dims
        .iter()
        .map(|&d| {
            (
                if dims.len() > 1 {
                    estimated_cost(&cx, &params, d)
                } else {
                    0
                },
                d,
            )
        })
        .collect();
    order.sort_by_key(|&(c, _)| c);
    let (best, ahead) = std::thread::scope(|s| {
        // With every count wanted, those of the first candidate (the one
        // chosen unless it cannot be split) are made while its ranges are.
        let pending = (options.counts == Counts::All)
            .then(|| order[0].1)
            .and_then(|d| {
                let inputs = ahead_inputs(&cx, d);
                if inputs.is_empty() {
                    return None;
                }
                let list = inputs
                    .iter()
                    .map(|(&(_, slot), i)| (slot, i.clone()))
                    .collect();
                let (deadline, limit) = (cx.counts_deadline, vertex_limit(&cx));
                let max_ops = cx.isl.max_ops();
                let counting = s.spawn(move || count_ahead(list, deadline, limit, max_ops));
                Some((d, inputs, counting))
            });
        let mut best: Option<(i64, bool, KernelRanges)> = None;
        for &(_, d) in &order {
            let k = partition_along(&cx, program, func, &args, &params, d);
            let ok = k.splittable;
            let cost = slice_cost(&k, d, options.analysis.local_size);
            let better = match &best {
                None => true,
                Some((c, bok, _)) => (ok && !bok) || (ok == *bok && cost < *c),
            };
            if better {
                best = Some((cost, ok, k));
            }
            if ok {
                break;
            }
        }
        let ahead = pending.and_then(|(d, inputs, counting)| {
            let (counts, vertices) = counting.join().ok()?;
            Some(Ahead {
                d,
                inputs,
                counts,
                vertices,
            })
        });
        (best, ahead)
    });
    let (_, _, mut k) = best.expect("at least one dimension");
    if options.counts != Counts::None {
        if let Some(d) = k.split_dim {
            add_counts(
                &cx,
                d,
                &mut k,
                options.counts,
                ahead.as_ref().filter(|h| h.d == d),
            );
        }
    }
    if cx.isl.expired() {
        cx.cut.saw(CutShort::Budget);
    }
    k.cut_short = cx.cut.list();
    if dims.len() > 1 {
        k.diagnostics.insert(
            0,
            format!(
                "split dimension {} chosen (smallest slice footprint{})",
                k.split_dim.unwrap_or(0),
                if k.splittable {
                    ""
                } else {
                    "; no dimension is splittable"
                }
            ),
        );
    }
    Ok(k)
}
