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
//! quasi-polynomials from barvinok, or PolyLib without it ([`crate::ehrhart`]),
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

use crate::ehrhart;
use access_analysis::isl::{Affine, Constraint, Isl, Order};
use access_analysis::{AccessKind, AnalysisOptions, ArrayAccesses, KernelAccesses};
use coarsen::ir::Program;
use isl_rs::{DimType, Map, Set};
use ranges_format::{
    ArgKind, ArrayRanges, ArrayStatus, Assumption, Boxes, Count, CutShort, KernelRanges, Mode,
    Param, ParamSource, PwExpr, Range, WriteVerdict,
};

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

/// The values of one launch: its global and local sizes and its integer
/// scalar arguments by name. Where barvinok and PolyLib give no parametric
/// count of a slice's footprint (out of time on a 3-D stencil's cross), and
/// for [`Counts::AtLaunch`], the footprint is counted with every parameter
/// but the slice's bounds fixed at these values (offsets at 0;
/// [`point_input`], [`counts_at_points`]): a count valid at those values
/// only ([`Count::at`]), so that a launch's `bytes_exact` is there for
/// every kernel whose accesses are affine.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct LaunchPoint {
    /// Global size per dimension (a dimension past these is 1).
    pub global: Vec<u64>,
    /// Work-group size per dimension; empty when unknown.
    pub local: Vec<u64>,
    /// Integer scalar arguments by name.
    pub scalars: std::collections::BTreeMap<String, i64>,
}

impl LaunchPoint {
    /// The value of each parameter of `params` that this launch fixes, at
    /// offset 0, by name: all but the slice's bounds, and those too where
    /// `whole` names the split dimension (the whole NDRange as one slice).
    pub fn values(
        &self,
        params: &[Param],
        args: &[ranges_format::ArgInfo],
        whole: Option<u32>,
    ) -> std::collections::BTreeMap<String, i64> {
        let size = |v: &[u64], k: u32| -> Option<i64> {
            if v.is_empty() {
                return None;
            }
            i64::try_from(v.get(k as usize).copied().unwrap_or(1)).ok()
        };
        let groups = |k: u32| -> Option<i64> {
            let (g, l) = (size(&self.global, k)?, size(&self.local, k)?);
            (l > 0 && g % l == 0).then(|| g / l)
        };
        params
            .iter()
            .filter_map(|p| {
                let v = match p.source {
                    ParamSource::ScalarArg { arg_index } => {
                        let name = &args.iter().find(|a| a.index == arg_index)?.name;
                        *self.scalars.get(name)?
                    }
                    // the launch's integer scalars only
                    ParamSource::StructMember { .. } => return None,
                    ParamSource::GlobalSize(k) => size(&self.global, k)?,
                    ParamSource::LocalSize(k) => size(&self.local, k)?,
                    ParamSource::GlobalOffset(_) => 0,
                    ParamSource::NumGroups(k) => groups(k)?,
                    // a count at a launch's values stays one in the slice's bounds
                    ParamSource::SliceLo | ParamSource::SliceLoItem => {
                        whole?;
                        0
                    }
                    ParamSource::SliceHi => groups(whole?)?,
                    ParamSource::SliceHiItem => size(&self.global, whole?)?,
                };
                Some((p.name.clone(), v))
            })
            .collect()
    }
}

/// The time limit of a count at a launch's values ([`LaunchPoint`]): it
/// comes after the kernel's budget, which the parametric counts may have
/// spent.
const POINT_COUNT_TIME_LIMIT: std::time::Duration = std::time::Duration::from_millis(300);

/// The least time all of a kernel's counts at a launch's values get, after
/// the kernel's budget where that is spent.
const POINT_BATCH_TIME: std::time::Duration = std::time::Duration::from_millis(500);

/// The input of the count of array `a`'s elements that a slice along `d`
/// touches, with the parameters other than the slice's bounds
/// fixed at the launch's values `at` ([`LaunchPoint`]): the accesses'
/// footprints so fixed (isl texts, their union to be counted by parts in
/// the slice's bounds, [`counts_at_points`]) and the point (the fixed
/// parameters the footprint involves, with their values: [`Count::at`]).
///
/// The footprints are the accesses' own, not coalesced: a 3-D 7-point
/// stencil's reads coalesce into one basic set whose projection counts
/// slowly, while the seven shifted boxes, their sizes fixed, count at once.
fn point_input(
    cx: &Ctx,
    a: &ArrayAccesses,
    d: u32,
    at: &std::collections::BTreeMap<String, i64>,
) -> Result<PointInput, String> {
    let deadline = std::time::Instant::now() + POINT_COUNT_TIME_LIMIT;
    let sub = Isl::with_deadline(cx.isl.max_ops(), Some(deadline), 0);
    let failed = |what: &str| {
        if sub.expired() {
            cx.cut.saw(CutShort::CountTime);
            out_of_point_time()
        } else {
            format!("isl failed while {what}")
        }
    };
    // the slice made anew here: the kernel's context may have run out of time
    let pieces = cx
        .slice_in(&sub, d)
        .and_then(|dom| {
            access_footprints_in(
                &sub,
                a,
                &[
                    AccessKind::Read,
                    AccessKind::MustWrite,
                    AccessKind::MayWrite,
                ],
                &dom,
            )
        })
        .ok_or_else(|| failed("making the footprint"))?;
    if pieces.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let mut union = pieces
        .into_iter()
        .try_fold(None::<Set>, |u, p| match u {
            None => Ok(Some(p)),
            Some(u) => u.union(p).map(Some),
        })
        .ok()
        .flatten()
        .ok_or_else(|| failed("making the footprint"))?;
    // The parameters the footprint involves, but the slice's bounds, fixed
    // at their values at this launch.
    let used = union
        .copy()
        .and_then(|f| f.drop_unused_params())
        .map_err(|_| failed("making the footprint"))?;
    let n = used
        .dim(DimType::Param)
        .map_err(|_| failed("making the footprint"))?;
    let mut point: Vec<(String, i64)> = Vec::new();
    for k in 0..n.max(0) as u32 {
        let name = used
            .get_dim_name(DimType::Param, k)
            .map_err(|_| failed("making the footprint"))?
            .to_string();
        if name == SX_LO || name == SX_HI {
            continue;
        }
        let v = *at
            .get(&name)
            .ok_or_else(|| format!("the launch gives no value of '{name}'"))?;
        let v32 = i32::try_from(v)
            .map_err(|_| format!("'{name}' = {v} is out of the range isl fixes"))?;
        let pos = union
            .find_dim_by_name(DimType::Param, &name)
            .ok()
            .and_then(|p| u32::try_from(p).ok())
            .ok_or_else(|| failed("fixing the footprint's parameters"))?;
        union = union
            .fix_si(DimType::Param, pos, v32)
            .map_err(|_| failed("fixing the footprint's parameters"))?;
        point.push((name, v));
    }
    // With the sizes fixed, the pieces coalesce cheaply into a few (24
    // planes of a chemistry table into one box), and barvinok counts those
    // basic sets' union by parts.
    let union = union
        .coalesce()
        .and_then(|u| u.drop_unused_params())
        .map_err(|_| failed("fixing the footprint's parameters"))?;
    let texts = basic_sets(&union)
        .filter(|b| b.len() <= ehrhart::MAX_PARTS)
        .ok_or_else(|| failed("cutting the footprint into parts"))?
        .iter()
        .map(|b| sub.set_str(b).map_err(|_| failed("printing the footprint")))
        .collect::<Result<Vec<String>, String>>()?;
    Ok((texts, point))
}

/// [`point_input`]'s result: the fixed footprints' texts and the point.
type PointInput = (Vec<String>, Vec<(String, i64)>);

/// Why a count at a launch's values is missing when it ran out of time.
fn out_of_point_time() -> String {
    format!(
        "the count at the launch's values ran out of its {} ms",
        POINT_COUNT_TIME_LIMIT.as_millis()
    )
}

/// The counts of [`point_input`]s, all in one sandboxed barvinok child
/// (each within [`POINT_COUNT_TIME_LIMIT`] from its turn, all by the
/// kernel's deadline or [`POINT_BATCH_TIME`] from now, whichever is later),
/// each marked with its point; an input with no footprint is an empty sum.
fn counts_at_points(
    inputs: &[&PointInput],
    deadline: Option<std::time::Instant>,
    cut: &Cut,
) -> Vec<Result<Count, String>> {
    let now = std::time::Instant::now();
    let deadline = deadline
        .map_or(now, |d| d.max(now))
        .max(now + POINT_BATCH_TIME);
    let todo: Vec<(&[String], std::time::Duration)> = inputs
        .iter()
        .filter(|(texts, _)| !texts.is_empty())
        .map(|(texts, _)| (texts.as_slice(), POINT_COUNT_TIME_LIMIT))
        .collect();
    let mut cards = ehrhart::card_parts_many(&todo, Some(deadline)).into_iter();
    inputs
        .iter()
        .map(|(texts, point)| {
            if texts.is_empty() {
                return Ok(Count::parametric(Vec::new()));
            }
            let (card, _) = cards
                .next()
                .ok_or_else(|| "no count was made at the launch's values".to_string())?;
            let mut count = card
                .map_err(|e| {
                    cut.saw_error(&e);
                    match e {
                        ehrhart::EhrhartError::BarvinokTimedOut { .. }
                        | ehrhart::EhrhartError::DeadlinePassed => out_of_point_time(),
                        e => format!("no count at the launch's values: {e}"),
                    }
                })?
                .count;
            count.at = point.clone();
            Ok(count)
        })
        .collect()
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
    /// array of that shape got ([`array_ranges`]) and the reasons it gave,
    /// with its name as [`NAME_SLOT`]: arrays accessed alike (the five atom
    /// arrays of `mdh`, the two inputs of `vadd`) are analyzed once.
    same_shape: std::cell::RefCell<std::collections::HashMap<(u32, ArrayShape), ShapeRanges>>,
    /// Set by [`dim_bounds`] when it used looser bounds than the exact
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
    fn saw_error(&self, e: &ehrhart::EhrhartError) {
        use ehrhart::EhrhartError as E;
        match e {
            E::TimedOut { .. } | E::BarvinokTimedOut { .. } | E::DeadlinePassed => {
                self.saw(CutShort::CountTime)
            }
            E::PolyLib { .. } | E::Barvinok { .. } => self.saw(CutShort::CountProcess),
            _ => {}
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

/// What [`array_ranges`] reads of an array but its name and argument index:
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

/// Per-dimension lower and upper bounds of a footprint ([`dim_bounds`]).
type Bounds = (Vec<PwExpr>, Vec<PwExpr>);

impl<'a> Ctx<'a> {
    /// `gs<d>` as isl text: the parameter, or its specialized value.
    fn gs(&self, d: u32) -> String {
        let name = format!("gs{d}");
        if self.acc.params.iter().any(|p| p.name == name) {
            return name;
        }
        self.specialize
            .get(&name)
            .map(|v| v.to_string())
            .unwrap_or(name)
    }

    /// [`Ctx::gs`] as an affine expression.
    fn gs_affine(&self, d: u32) -> Affine {
        let gs = self.gs(d);
        match gs.parse::<i64>() {
            Ok(k) => Affine::konst(k),
            Err(_) => Affine::var(&gs),
        }
    }

    /// The slice's bounds along `d`: `0 <= sx_lo < sx_hi <= gs`, multiples
    /// of a known local size ([`Ctx::aligned`]).
    fn slice_bounds(&self, d: u32) -> Vec<Constraint> {
        let (lo, hi) = (Affine::var(SX_LO), Affine::var(SX_HI));
        let mut cs = vec![
            Constraint::AtLeastZero(lo.clone()),
            // sx_hi - sx_lo - 1 >= 0
            Constraint::AtLeastZero(hi.clone().plus(-1, &lo).offset(-1)),
            Constraint::AtLeastZero(self.gs_affine(d).plus(-1, &hi)),
        ];
        if let Some(ls) = self.local_size {
            let l = ls[d as usize];
            if l > 1 {
                cs.push(Constraint::MultipleOf(lo, l as u32));
                cs.push(Constraint::MultipleOf(hi, l as u32));
            }
        }
        cs
    }

    fn params_header(&self) -> String {
        format!("[{}]", self.param_names.join(", "))
    }

    /// With a known local size, slice bounds are multiples of it (whole work-groups).
    fn aligned(&self, d: u32) -> String {
        match self.local_size {
            Some(ls) if ls[d as usize] > 1 => {
                let l = ls[d as usize];
                format!(" and exists (k_lo, k_hi : {SX_LO} = {l}k_lo and {SX_HI} = {l}k_hi)")
            }
            _ => String::new(),
        }
    }

    /// The work-items of the slice along `d`, within the NDRange.
    fn slice(&self, d: u32) -> Option<Set> {
        self.slice_in(&self.isl, d)
    }

    /// [`Ctx::slice`] made in `isl`'s context (one that may live on after
    /// the kernel's own has run out of time).
    fn slice_in(&self, isl: &Isl, d: u32) -> Option<Set> {
        let go = if self.acc.params.iter().any(|p| p.name == format!("go{d}")) {
            format!("go{d} + ")
        } else {
            String::new()
        };
        let gs = self.gs(d);
        let text = format!(
            "{} -> {{ W[x0, x1, x2] : {go}{SX_LO} <= x{d} < {go}{SX_HI} and 0 <= {SX_LO} < {SX_HI} <= {gs}{} }}",
            self.params_header(),
            self.aligned(d)
        );
        // x_d - go - sx_lo >= 0 and go + sx_hi - x_d - 1 >= 0
        let mut x = Affine::var(&format!("x{d}"));
        if !go.is_empty() {
            x = x.plus(-1, &Affine::var(&format!("go{d}")));
        }
        let mut cs = vec![
            Constraint::AtLeastZero(x.clone().plus(-1, &Affine::var(SX_LO))),
            Constraint::AtLeastZero(Affine::var(SX_HI).plus(-1, &x).offset(-1)),
        ];
        cs.extend(self.slice_bounds(d));
        let dims = ["x0", "x1", "x2"].map(String::from);
        let s = isl
            .constrained_set(&self.param_names, &dims, &cs, &text)
            .ok()?;
        let dom = isl.set(&self.acc.domain).ok()?;
        let ctx = isl.set(&self.acc.context).ok()?;
        s.intersect(dom).ok()?.intersect_params(ctx).ok()
    }

    fn whole_domain(&self) -> Option<Set> {
        let dom = self.isl.set(&self.acc.domain).ok()?;
        let ctx = self.isl.set(&self.acc.context).ok()?;
        dom.intersect_params(ctx).ok()
    }

    fn context_with_slice(&self, d: u32) -> Option<Set> {
        let base = self.isl.set(&self.acc.context).ok()?;
        let text = format!(
            "{} -> {{ : 0 <= {SX_LO} < {SX_HI} <= {}{} }}",
            self.params_header(),
            self.gs(d),
            self.aligned(d)
        );
        let s = self
            .isl
            .constrained_set(&self.param_names, &[], &self.slice_bounds(d), &text)
            .ok()?;
        base.intersect(s).ok()
    }

    /// The union of the relations `texts`: `Some(None)` when they are all
    /// empty, `None` when isl failed (never to be mistaken for "not accessed").
    fn union_maps(&self, texts: &[&String]) -> Option<Option<Map>> {
        let mut out: Option<Map> = None;
        for t in texts {
            if t.is_empty() {
                continue;
            }
            let m = self.isl.map(t).ok()?;
            if m.is_empty().ok()? {
                continue;
            }
            out = Some(match out {
                None => m,
                Some(o) => o.union(m).ok()?,
            });
        }
        Some(out)
    }

    fn footprint(&self, map: &Map, dom: &Set) -> Option<Set> {
        let m = map.copy().ok()?.intersect_domain(dom.copy().ok()?).ok()?;
        m.range().ok()?.coalesce().ok()
    }

    /// The footprints in `dom` of the accesses of `a` of the given kinds, in
    /// the order of the accesses: their union is [`Ctx::footprint`] of
    /// the union of their relations.
    fn access_footprints(
        &self,
        a: &ArrayAccesses,
        kinds: &[AccessKind],
        dom: &Set,
    ) -> Option<Vec<Set>> {
        access_footprints_in(&self.isl, a, kinds, dom)
    }
}

/// [`Ctx::access_footprints`] made in `isl`'s context.
fn access_footprints_in(
    isl: &Isl,
    a: &ArrayAccesses,
    kinds: &[AccessKind],
    dom: &Set,
) -> Option<Vec<Set>> {
    let mut out = Vec::new();
    for acc in a.accesses.iter().filter(|x| kinds.contains(&x.kind)) {
        let m = isl.map(&acc.map).ok()?;
        // The exported relations keep the global ids only (as `access-analysis` does).
        let n_in = m.dim(DimType::In).ok()? as u32;
        let m = m
            .project_out(DimType::In, 3, n_in.checked_sub(3)?)
            .ok()?
            .set_tuple_name(DimType::In, "W")
            .ok()?;
        out.push(m.intersect_domain(dom.copy().ok()?).ok()?.range().ok()?);
    }
    Some(out)
}

/// isl operations the exact bounds of one dimension of a footprint
/// ([`dim_bounds`]) may take before its looser bounds are used instead. The
/// corpus's exact bounds take at most about 100,000 (a 3-D stencil's
/// slice); `convolution_rows` without its local size (a halo loop over a
/// work-group's row, with the link of group and global ids relaxed) ran
/// into the per-array limit (2,000,000, 1.2 s) and lost its split. An
/// operation count, not a time, so that the same kernel gets the same
/// ranges on any machine.
const EXACT_BOUND_OPS: u64 = 120_000;

/// The bounds of a footprint per delinearized dimension (`dim_min`/`dim_max`
/// of each), simplified against `context` (the parameters' context with the
/// slice constraints), which removes existentials isl cannot eliminate by
/// itself. Where the exact bounds of a dimension take more than
/// [`EXACT_BOUND_OPS`], they are those of the footprint without its
/// existentially quantified variables and the constraints on them
/// (`isl_set_remove_divs`: a superset, so the bounds stay sound, if looser)
/// and [`Ctx::loosened`] is set. `None` when the footprint is empty, its
/// dimensions are not `n_dims`, or isl fails.
fn dim_bounds(cx: &Ctx, fp: &Set, n_dims: usize, context: Option<&Set>) -> Option<Bounds> {
    let isl = &cx.isl;
    if fp.is_empty().ok()? {
        return None;
    }
    let n = fp.dim(DimType::Set).ok()? as usize;
    if n != n_dims || n == 0 {
        return None;
    }
    let mut lows = Vec::new();
    let mut highs = Vec::new();
    for k in 0..n {
        let k = k as i32;
        let exact = isl.optional(EXACT_BOUND_OPS, || {
            Ok((fp.copy()?.dim_min(k)?, fp.copy()?.dim_max(k)?))
        });
        let (mut lo, mut hi) = match exact {
            Some(bounds) => bounds,
            None if !isl.expired() => {
                let loose = fp.copy().ok()?.remove_divs().ok()?;
                cx.loosened.set(true);
                (loose.copy().ok()?.dim_min(k).ok()?, loose.dim_max(k).ok()?)
            }
            None => return None,
        };
        if let Some(c) = context {
            lo = lo.gist_params(c.copy().ok()?).ok()?;
            hi = hi.gist_params(c.copy().ok()?).ok()?;
        }
        lows.push(isl.pw_expr(&lo).ok()?);
        highs.push(isl.pw_expr(&hi).ok()?);
    }
    Some((lows, highs))
}

/// Per dimension, the range between its bounds.
fn ranges_of(lows: &[PwExpr], highs: &[PwExpr]) -> Vec<Range> {
    lows.iter()
        .zip(highs)
        .map(|(l, h)| Range {
            lower: l.to_string(),
            upper: h.to_string(),
        })
        .collect()
}

/// The linear bounds `sum_k strides[k] * bound_k` of per-dimension bounds.
fn linear_of(strides: &[String], lows: &[PwExpr], highs: &[PwExpr]) -> Option<Range> {
    let combine = |bounds: &[PwExpr]| -> Option<PwExpr> {
        if bounds.len() == 1 {
            return Some(bounds[0].clone());
        }
        let terms: Vec<(&str, &PwExpr)> = strides
            .iter()
            .map(|s| s.as_str())
            .zip(bounds.iter())
            .collect();
        PwExpr::linear_combination(&terms).ok()
    };
    Some(Range {
        lower: combine(lows)?.to_string(),
        upper: combine(highs)?.to_string(),
    })
}

/// The linear bounds `[lower, upper]` of a footprint with `strides` (see
/// [`dim_bounds`]).
fn linear_range(cx: &Ctx, fp: &Set, strides: &[String], context: Option<&Set>) -> Option<Range> {
    if let Some(r) = literal_linear(cx, fp, strides, context) {
        return Some(r);
    }
    let (lows, highs) = dim_bounds(cx, fp, strides.len(), context)?;
    linear_of(strides, &lows, &highs)
}

/// The exact linear bounds of a footprint over literal strides (`[256, 1]`):
/// the least and greatest `sum_k strides[k] * c_k` over its elements, where
/// the box's linear hull can reach past the last element (a grid-stride
/// loop's last row is partial: `y[0 .. 3][lo .. hi]` over 1000 elements
/// ends at 999, not at `3*256 + hi`). `None` for fewer than two dimensions,
/// strides that are not all literals, or when isl fails; the launcher
/// intersects the boxes with these ranges.
fn literal_linear(cx: &Ctx, fp: &Set, strides: &[String], context: Option<&Set>) -> Option<Range> {
    if strides.len() < 2 {
        return None;
    }
    let lits: Vec<i64> = strides
        .iter()
        .map(|s| s.trim().parse().ok())
        .collect::<Option<_>>()?;
    let ins: Vec<String> = (0..lits.len()).map(|k| format!("c{k}")).collect();
    let sum: Vec<String> = ins
        .iter()
        .zip(&lits)
        .map(|(c, s)| format!("{s}*{c}"))
        .collect();
    let map = cx
        .isl
        .map(&format!(
            "{{ [{}] -> [{}] }}",
            ins.join(", "),
            sum.join(" + ")
        ))
        .ok()?;
    let lin = fp.copy().ok()?.reset_tuple_id().ok()?.apply(map).ok()?;
    let (lo, hi) = dim_bounds(cx, &lin, 1, context)?;
    ranges_of(&lo, &hi).pop()
}

/// The linear bounds of a footprint and, for an array of at least two
/// delinearized dimensions, its box: the bounds of each dimension (issue
/// 12). The linear bounds are the box's linear hull, except over literal
/// strides, where they are exact ([`literal_linear`], as in
/// [`linear_range`]).
fn ranges_and_box(
    cx: &Ctx,
    fp: &Set,
    strides: &[String],
    context: Option<&Set>,
) -> (Option<Range>, Option<Vec<Range>>) {
    let (linear, boxed) =
        range_and_box_of(strides, dim_bounds(cx, fp, strides.len(), context).as_ref());
    (literal_linear(cx, fp, strides, context).or(linear), boxed)
}

/// [`ranges_and_box`] from bounds already made by [`dim_bounds`].
fn range_and_box_of(
    strides: &[String],
    bounds: Option<&(Vec<PwExpr>, Vec<PwExpr>)>,
) -> (Option<Range>, Option<Vec<Range>>) {
    let Some((lows, highs)) = bounds else {
        return (None, None);
    };
    let linear = linear_of(strides, lows, highs);
    let boxed = (strides.len() >= 2 && linear.is_some()).then(|| ranges_of(lows, highs));
    (linear, boxed)
}

/// The read footprint `fp` of a slice as a union of boxes (issues 12 and
/// 13, `Boxes::read_parts`): one box per group of read accesses. The rule:
/// two groups merge when, in every delinearized dimension, their intervals
/// overlap or touch for all parameter values of `context` (the hull of the
/// two then adds only corners, never a row, column or plane lying between
/// them: a stencil's shifted reads are one group, a pivot row read beside
/// the slice's own rows is a group of its own); all reads are one group at
/// once when that holds of all their intervals together. Merging is greedy,
/// first mergeable pair first, until no pair merges. `None`, or an empty
/// list, when the reads form one group (the read box is the union), there
/// are more than `MAX_READ_PARTS` groups, the parts do not cover `fp`, or
/// isl fails.
fn box_parts(
    cx: &Ctx,
    a: &ArrayAccesses,
    slice: &Set,
    fp: &Set,
    context: Option<&Set>,
) -> Option<Vec<Vec<Range>>> {
    let n = a.strides.len();
    if n < 2 {
        return None;
    }
    // Per access: its footprint and, per dimension, its interval hull.
    let mut groups: Vec<(Set, Vec<Set>)> = Vec::new();
    for f in cx.access_footprints(a, &[AccessKind::Read], slice)? {
        if f.is_empty().ok()? {
            continue;
        }
        let ivs = dim_intervals(cx, &f, n)?;
        groups.push((f, ivs));
    }
    if groups.len() < 2 {
        return None;
    }
    // one group at once: no dimension has a gap in the union of all intervals
    let mut all_touch = true;
    for k in 0..n {
        let ivs: Vec<&Set> = groups.iter().map(|g| &g.1[k]).collect();
        if gap_free(cx, &ivs, context)?.is_none() {
            all_touch = false;
            break;
        }
    }
    if all_touch {
        return None;
    }
    'merge: loop {
        for i in 0..groups.len() {
            for j in i + 1..groups.len() {
                let mut hulls = Vec::with_capacity(n);
                for k in 0..n {
                    match gap_free(cx, &[&groups[i].1[k], &groups[j].1[k]], context)? {
                        Some(h) => hulls.push(h),
                        None => break,
                    }
                }
                if hulls.len() == n {
                    let (fj, _) = groups.remove(j);
                    let fi = groups[i].0.copy().ok()?;
                    groups[i] = (fi.union(fj).ok()?.coalesce().ok()?, hulls);
                    continue 'merge;
                }
            }
        }
        break;
    }
    if groups.len() < 2 || groups.len() > ranges_format::MAX_READ_PARTS {
        return None;
    }
    // the parts must cover the footprint (soundness does not rest on the
    // access list matching the union relation)
    let mut union: Option<Set> = None;
    for (f, _) in &groups {
        let f = f.copy().ok()?;
        union = Some(match union {
            None => f,
            Some(u) => u.union(f).ok()?,
        });
    }
    if !fp.copy().ok()?.is_subset(&union?).ok()? {
        return None;
    }
    let mut out = Vec::with_capacity(groups.len());
    for (f, _) in &groups {
        let (lows, highs) = dim_bounds(cx, f, n, context)?;
        out.push(ranges_of(&lows, &highs));
    }
    Some(out)
}

/// At most this many isl operations find the runs of a 1-D footprint
/// ([`runs_1d`]).
const RUNS_MAX_OPS: u64 = 50_000;

/// The read footprint `fp` of a slice of a 1-D array as its maximal runs,
/// first to last (`b[(ushort)(i + 65530)]` reads the end and the
/// start of `b`, whose hull is all of it; `a[i]` and `a[i + half]` read two
/// bands): each step takes the elements up to the first run's end (the
/// least element whose successor is not in the rest) and keeps the rest.
/// Every run is one part of [`Boxes::read_parts`] over the one dimension.
/// `None` when the footprint is one run for every parameter value, has
/// more than `MAX_READ_PARTS` runs for some, or isl fails.
fn runs_1d(cx: &Ctx, fp: &Set, context: Option<&Set>) -> Option<Vec<Vec<Range>>> {
    let before = cx.isl.order(Order::Predecessor).ok()?;
    let above = cx.isl.order(Order::Above).ok()?;
    // bounded: a footprint with quasi-affine pieces (`i % 3` cases) can
    // cost more than the rest of the array's analysis, for no runs
    let runs = cx.isl.optional(
        RUNS_MAX_OPS,
        || -> Result<Option<Vec<Set>>, isl_rs::LibISLError> {
            let mut rest = fp.copy()?.reset_tuple_id()?;
            if let Some(c) = context {
                rest = rest.intersect_params(c.copy()?)?;
            }
            let mut runs = Vec::new();
            while !rest.is_empty()? {
                if runs.len() == ranges_format::MAX_READ_PARTS {
                    return Ok(None);
                }
                let preds = rest.copy()?.apply(before.copy()?)?;
                let ends = rest.copy()?.subtract(preds)?;
                let later = ends.apply(above.copy()?)?;
                runs.push(rest.copy()?.subtract(later.copy()?)?.coalesce()?);
                rest = rest.intersect(later)?.coalesce()?;
            }
            Ok(Some(runs))
        },
    )??;
    if runs.len() < 2 {
        return None;
    }
    let mut out = Vec::with_capacity(runs.len());
    for r in &runs {
        let (lo, hi) = dim_bounds(cx, r, 1, context)?;
        out.push(ranges_of(&lo, &hi));
    }
    Some(out)
}

/// The interval hull of a footprint's projection onto each of its `n`
/// dimensions (1-D sets, tuple ids reset).
fn dim_intervals(cx: &Ctx, f: &Set, n: usize) -> Option<Vec<Set>> {
    if f.dim(DimType::Set).ok()? as usize != n {
        return None;
    }
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        let p = f
            .copy()
            .ok()?
            .project_out(DimType::Set, (k + 1) as u32, (n - k - 1) as u32)
            .ok()?
            .project_out(DimType::Set, 0, k as u32)
            .ok()?;
        out.push(interval_of(cx, p)?);
    }
    Some(out)
}

/// The interval hull of the union of the intervals `ivs` when it has no
/// gap, i.e. lies inside their union, for all parameter values of
/// `context`: `Some(Some(hull))`; `Some(None)` when it may have a gap;
/// `None` when isl fails.
fn gap_free(cx: &Ctx, ivs: &[&Set], context: Option<&Set>) -> Option<Option<Set>> {
    let mut union: Option<Set> = None;
    for iv in ivs {
        let iv = iv.copy().ok()?;
        union = Some(match union {
            None => iv,
            Some(u) => u.union(iv).ok()?,
        });
    }
    let union = union?;
    let hull = interval_of(cx, union.copy().ok()?)?;
    let mut gap = hull.copy().ok()?.subtract(union).ok()?;
    if let Some(c) = context {
        gap = gap.intersect_params(c.copy().ok()?).ok()?;
    }
    Some(gap.is_empty().ok()?.then_some(hull))
}

/// Whether a slice writes every element of the box of what it writes, for
/// every parameter value of `context` (`must`: the must-writes, the only
/// writes). The box is built exactly: per dimension, the integers between
/// the least and the greatest component the footprint has.
fn writes_fill_box(
    cx: &Ctx,
    must: &Map,
    slice: &Set,
    n_dims: usize,
    context: Option<&Set>,
) -> Option<bool> {
    let w = cx.footprint(must, slice)?;
    if w.is_empty().ok()? {
        return Some(true);
    }
    if w.dim(DimType::Set).ok()? as usize != n_dims {
        return None;
    }
    let name = w
        .get_tuple_name()
        .ok()
        .map(|s| s.to_string())
        .unwrap_or_default();
    let mut bx: Option<Set> = None;
    for k in 0..n_dims {
        let p = w
            .copy()
            .ok()?
            .project_out(DimType::Set, (k + 1) as u32, (n_dims - k - 1) as u32)
            .ok()?;
        let p = p.project_out(DimType::Set, 0, k as u32).ok()?;
        let interval = interval_of(cx, p)?;
        bx = Some(match bx {
            None => interval,
            Some(b) => b.flat_product(interval).ok()?,
        });
    }
    let bx = bx?.set_tuple_name(&name).ok()?;
    let mut gap = bx.subtract(w).ok()?;
    if let Some(c) = context {
        gap = gap.intersect_params(c.copy().ok()?).ok()?;
    }
    gap.is_empty().ok()
}

/// Why a count is missing when time ran out, whichever step it was in (the
/// same text whatever the machine's load, so that range files compare).
fn out_of_time() -> String {
    format!(
        "counting ran out of time (at most {} s per count)",
        ehrhart::POLYLIB_TIME_LIMIT.as_secs()
    )
}

/// Footprints with at least this many basic sets, or one basic set with
/// more constraints than [`PARTS_MAX_CONSTRAINTS`], are counted by parts
/// ([`count_input`]). The rule is structural (not a time limit), so the same
/// kernel gets the same form of count on any machine.
const PARTS_MIN_BASIC_SETS: usize = 5;
/// See [`PARTS_MIN_BASIC_SETS`].
const PARTS_MAX_CONSTRAINTS: usize = 40;

/// The Ehrhart input of a footprint ([`count_input`]).
#[derive(Debug, Clone)]
struct CountInput {
    /// The footprint, whole (isl text).
    text: String,
    /// How barvinok counts it.
    form: CountForm,
    /// The context over the footprint's parameters (isl text), for its
    /// vertices: PolyLib keeps only the vertices valid within it.
    context: Option<String>,
    /// The time left to count it.
    left: std::time::Duration,
}

/// How barvinok counts a footprint ([`count_input`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum CountForm {
    /// Whole (`CountInput::text`).
    Whole,
    /// As the sum of the counts of these disjoint parts (isl texts).
    Parts(Vec<String>),
    /// The union of these sets (isl texts), cut into disjoint parts by
    /// barvinok's isl and counted part by part ([`ehrhart::card_parts_many`]).
    Decompose(Vec<String>),
}

/// The Ehrhart input of a footprint: its isl text, its parts where it is
/// counted by parts, and the time left to count it, or why there is none.
/// The footprint is first simplified against the context and stripped of the
/// parameters it does not involve; chamber domains are then valid within the
/// context. The count's time limit (the engines' limit, at most what is left
/// of the kernel's budget) starts here, so the simplification is part of it.
///
/// A footprint with many basic sets or a basic set with many constraints
/// is slow to count whole: barvinok refines the chambers of every piece
/// against each other, and the result has hundreds of chambers in up to 10
/// parameters. Two such shapes are counted by parts, the parts' counts being
/// the terms of the sum:
/// - many basic sets that no two meet within the context (a union of
///   bands, as in a kernel reading 24 rows of a table: 5 s whole, 30 ms by
///   parts) are the parts ([`CountForm::Parts`]);
/// - one basic set with many constraints (the coalesced cross of a 3-D
///   7-point stencil: 17 s whole) is cut by barvinok's isl into disjoint
///   parts of the union of the accesses' footprints
///   ([`CountForm::Decompose`]: 22 parts, 200 ms).
///
/// Overlapping basic sets are counted whole (barvinok's decomposition did as
/// well on the corpus).
fn count_input(
    cx: &Ctx,
    fp: &Set,
    uncoalesced: impl FnOnce() -> Option<Vec<Set>>,
    context: Option<&Set>,
) -> Result<CountInput, String> {
    // Counts are optional and come last (after the ranges and verdicts of
    // the chosen dimension): their inputs are made with at most the
    // engines' limit each and what is left of the kernel's budget.
    let now = std::time::Instant::now();
    let mut limit = ehrhart::POLYLIB_TIME_LIMIT;
    if let Some(d) = cx.counts_deadline {
        limit = limit.min(
            d.checked_duration_since(now)
                .filter(|l| !l.is_zero())
                .ok_or_else(|| {
                    cx.cut.saw(CutShort::CountTime);
                    "the counting time is spent"
                })?,
        );
    }
    let (made, passed) = cx
        .isl
        .within(now + limit, || count_input_in(cx, fp, uncoalesced, context));
    let (text, form, context) = made.ok_or_else(|| {
        if passed || cx.isl.expired() {
            cx.cut.saw(CutShort::CountTime);
            out_of_time()
        } else {
            "isl failed while simplifying the footprint".to_string()
        }
    })?;
    Ok(CountInput {
        text,
        form,
        context,
        left: limit.saturating_sub(now.elapsed()),
    })
}

/// The work of [`count_input`] in the kernel's context: the footprint
/// simplified (text), how to count it, and the context it is counted in
/// (text); `None` when isl failed.
fn count_input_in(
    cx: &Ctx,
    fp: &Set,
    uncoalesced: impl FnOnce() -> Option<Vec<Set>>,
    context: Option<&Set>,
) -> Option<(String, CountForm, Option<String>)> {
    let isl = &cx.isl;
    let ctx = match context {
        Some(c) => Some(c.copy().ok()?),
        None => None,
    };
    let simplify = |s: Set| -> Option<Set> {
        let s = match &ctx {
            Some(c) => s.gist_params(c.copy().ok()?).ok()?,
            None => s,
        };
        s.drop_unused_params().ok()
    };
    // Without the array's name: arrays accessed alike have the same
    // footprint text, counted once ([`counts_of`]).
    let whole = &fp.copy().ok()?.reset_tuple_id().ok()?;
    let fp = simplify(whole.copy().ok()?)?;
    // The Ehrhart input is isl text (the engines run in a child process).
    let text = isl.set_str(&fp).ok()?;
    let mut form = CountForm::Whole;
    if let Some(shape) = basic_set_shape(whole) {
        let texts = |sets: Vec<Set>, keep: bool| -> Option<Vec<String>> {
            sets.into_iter()
                .map(|x| {
                    // Not simplified against the context for a decomposition:
                    // isl cuts a union into far fewer parts with the
                    // context's constraints in it (22 parts for the 3-D
                    // stencil, 171 after a gist). The parameters the
                    // footprint does not involve are projected out instead.
                    let x = if keep {
                        keep_params(x, &fp)?
                    } else {
                        simplify(x)?
                    };
                    isl.set_str(&x).ok()
                })
                .collect()
        };
        if shape.0 >= PARTS_MIN_BASIC_SETS {
            // Overlapping basic sets are counted whole: barvinok's own
            // decomposition of them was as fast or faster on the corpus.
            if let Some(p) = disjoint_basic_sets(whole, ctx.as_ref()).and_then(|p| texts(p, false))
            {
                form = CountForm::Parts(p);
            }
        } else if shape.0 == 1 && shape.1 > PARTS_MAX_CONSTRAINTS {
            // One basic set: the accesses' footprints, in the order of the accesses.
            form = uncoalesced()
                .and_then(|p| {
                    p.into_iter()
                        .map(|x| x.reset_tuple_id().ok())
                        .collect::<Option<Vec<Set>>>()
                })
                .and_then(|p| texts(p, true))
                .map_or(CountForm::Whole, CountForm::Decompose);
        }
    }
    let context = ctx
        .as_ref()
        .and_then(|c| keep_params(c.copy().ok()?, &fp))
        .and_then(|c| isl.set_str(&c).ok());
    Some((text, form, context))
}

/// `s` with the parameters that `like` lacks projected out.
fn keep_params(s: Set, like: &Set) -> Option<Set> {
    let mut s = s;
    let n = s.dim(DimType::Param).ok()?;
    for k in (0..n).rev() {
        let name = s.get_dim_name(DimType::Param, k as u32).ok()?.to_string();
        if like.find_dim_by_name(DimType::Param, &name).ok()? < 0 {
            s = s.project_out(DimType::Param, k as u32, 1).ok()?;
        }
    }
    Some(s)
}

/// The number of basic sets of `s` and the most constraints of one.
fn basic_set_shape(s: &Set) -> Option<(usize, usize)> {
    let list = s.get_basic_set_list().ok()?;
    let n = list.n_basic_set().ok()?;
    let mut most = 0;
    for k in 0..n {
        most = most.max(list.get_at(k).ok()?.n_constraint().ok()? as usize);
    }
    Some((n as usize, most))
}

/// The basic sets of `s`, each as a set.
fn basic_sets(s: &Set) -> Option<Vec<Set>> {
    let list = s.get_basic_set_list().ok()?;
    let n = list.n_basic_set().ok()?;
    (0..n)
        .map(|k| {
            list.get_at(k)
                .ok()
                .and_then(|b| Set::from_basic_set(b).ok())
        })
        .collect()
}

/// The basic sets of `s` when there are at most [`ehrhart::MAX_PARTS`]
/// and no two meet within `context` (a union of bands); `None` otherwise.
fn disjoint_basic_sets(s: &Set, context: Option<&Set>) -> Option<Vec<Set>> {
    let pieces = basic_sets(s)?;
    if pieces.len() < 2 || pieces.len() > ehrhart::MAX_PARTS {
        return None;
    }
    for (i, a) in pieces.iter().enumerate() {
        for b in &pieces[i + 1..] {
            let mut both = a.copy().ok()?.intersect(b.copy().ok()?).ok()?;
            if let Some(c) = context {
                both = both.intersect_params(c.copy().ok()?).ok()?;
            }
            if !both.is_empty().ok()? {
                return None;
            }
        }
    }
    Some(pieces)
}

/// The Ehrhart counts of the inputs (see [`count_input`]: each with the time
/// left to it), or why each is missing. barvinok counts first, all inputs
/// counted whole in one sandboxed child (exact for any bounded set,
/// existentials included), then each input counted by parts in a child of
/// its own (its parts' counts are the terms of its count, all within its
/// time); PolyLib counts, also in one child, the whole footprints barvinok
/// could not count (it is unavailable or failed) within what is left of
/// their time.
fn counts_of(
    inputs: &[CountInput],
    deadline: Option<std::time::Instant>,
    polylib: Fallback,
    cut: &Cut,
) -> Vec<Result<Count, String>> {
    // Equal inputs (arrays accessed alike) are counted once.
    let (distinct, which) = distinct_by(inputs, |i| (i.text.clone(), i.form.clone()));
    let counts = distinct_counts_of(&distinct, deadline, polylib, cut);
    which.into_iter().map(|k| counts[k].clone()).collect()
}

/// The distinct items of `items` by `key` (the first of each) and, per
/// item, the index of its distinct one.
fn distinct_by<T: Clone, K: Eq + std::hash::Hash>(
    items: &[T],
    key: impl Fn(&T) -> K,
) -> (Vec<T>, Vec<usize>) {
    let mut seen = std::collections::HashMap::new();
    let mut distinct = Vec::new();
    let which = items
        .iter()
        .map(|x| {
            *seen.entry(key(x)).or_insert_with(|| {
                distinct.push(x.clone());
                distinct.len() - 1
            })
        })
        .collect();
    (distinct, which)
}

/// Per item of `items`, what `known` has for it, and the items it has
/// nothing for (in order): those [`fill_known`] takes the results of.
fn split_known<T: Clone, R>(
    items: &[T],
    known: impl Fn(&T) -> Option<R>,
) -> (Vec<Option<R>>, Vec<T>) {
    let mut missing = Vec::new();
    let found = items
        .iter()
        .map(|x| {
            let r = known(x);
            if r.is_none() {
                missing.push(x.clone());
            }
            r
        })
        .collect();
    (found, missing)
}

/// The results of [`split_known`]'s items: the known ones, and the others'
/// from `rest` in order.
fn fill_known<R>(known: Vec<Option<R>>, rest: Vec<R>) -> Vec<R> {
    let mut rest = rest.into_iter();
    known
        .into_iter()
        .filter_map(|r| r.or_else(|| rest.next()))
        .collect()
}

/// Counts made ahead of the ranges ([`partition_kernel_in`] with every
/// count wanted): the inputs of the counts along split dimension `d`,
/// made before its ranges, and barvinok's counts and PolyLib's vertices of
/// them, made in children while this process found the ranges (two
/// processors: the ranges here, the counts and vertices beside them, at a
/// lower priority). [`add_counts`] takes what matches its own inputs. Only
/// successes are kept (and no count by PolyLib where barvinok failed): a
/// count or vertex search that failed or ran out of time ahead (sharing the
/// processors with the ranges) is made again the usual way, so what is
/// kept never depends on the timing.
struct Ahead {
    d: u32,
    /// The inputs made, per array (the first of its shape) and count.
    inputs: std::collections::HashMap<(usize, CountSlot), CountInput>,
    /// barvinok's counts, per input text and form.
    counts: std::collections::HashMap<(String, CountForm), Count>,
    /// PolyLib's vertices, per input text and context.
    vertices: std::collections::HashMap<(String, Option<String>), Vec<Vec<ehrhart::ParamVertex>>>,
}

/// Most time the inputs made ahead may take: the ranges wait for them.
const AHEAD_INPUTS_LIMIT: std::time::Duration = std::time::Duration::from_millis(50);

/// The inputs of every count [`add_counts`] may make along `d` with every
/// count wanted (per array shape, its first array; the written count
/// wherever the writes are must-writes), made within
/// [`AHEAD_INPUTS_LIMIT`]; those that fail are left out, and all are when
/// the limit passed.
fn ahead_inputs(cx: &Ctx, d: u32) -> std::collections::HashMap<(usize, CountSlot), CountInput> {
    let mut steps = Vec::new();
    let now = std::time::Instant::now();
    let ((), passed) = cx.isl.within(now + AHEAD_INPUTS_LIMIT, || {
        let Some(doms) = CountDomains::along(cx, d) else {
            return;
        };
        let mut shapes = std::collections::HashSet::new();
        for (array_idx, a) in cx.acc.arrays.iter().enumerate() {
            if !shapes.insert(ArrayShape::of(a)) {
                continue;
            }
            cx.isl.reset();
            array_counts(cx, a, array_idx, &doms, true, Counts::All, None, &mut steps);
        }
    });
    cx.isl.reset();
    if passed {
        // An input cut short may have taken another form than the usual
        // way would give it (a simplification skipped): none is kept.
        return Default::default();
    }
    steps
        .into_iter()
        .filter_map(|step| match step {
            CountStep::Count {
                array_idx,
                slot,
                input: Ok(i),
                ..
            } => Some(((array_idx, slot), i)),
            _ => None,
        })
        .collect()
}

/// Counts the inputs made ahead and finds the vertices of the slice
/// footprints among them (as [`add_counts`] does: two children side by
/// side), at a lower priority; the successes, for [`Ahead`].
#[allow(clippy::type_complexity)]
fn count_ahead(
    inputs: Vec<(CountSlot, CountInput)>,
    deadline: Option<std::time::Instant>,
    vertex_limit: std::time::Duration,
    max_ops: u64,
) -> (
    std::collections::HashMap<(String, CountForm), Count>,
    std::collections::HashMap<(String, Option<String>), Vec<Vec<ehrhart::ParamVertex>>>,
) {
    ehrhart::at_low_priority(|| {
        let _ = ehrhart::barvinok_available();
        let slices: Vec<(&str, Option<&str>, std::time::Duration)> = inputs
            .iter()
            .filter(|(slot, _)| *slot == CountSlot::Slice)
            .map(|(_, i)| (i.text.as_str(), i.context.as_deref(), vertex_limit))
            .collect();
        let (distinct, _) = distinct_by(&slices, |&(t, c, _)| (t, c));
        let all: Vec<CountInput> = inputs.iter().map(|(_, i)| i.clone()).collect();
        let (counts, vertices) = std::thread::scope(|s| {
            let search = (!distinct.is_empty() && !vertex_limit.is_zero()).then(|| {
                s.spawn(|| ehrhart::at_low_priority(|| ehrhart::vertices_many(&distinct, deadline)))
            });
            // (what fails here is counted again after the ranges: only
            // that second count's failures cut the analysis short)
            let counts = counts_of(&all, deadline, Fallback::No, &Cut::default());
            let vertices = search.and_then(|h| h.join().ok()).unwrap_or_default();
            (counts, vertices)
        });
        let counts = all
            .into_iter()
            .zip(counts)
            .filter_map(|(i, c)| Some(((i.text, i.form), c.ok()?)))
            .collect();
        // Their domains simplified here too, as `add_vertices` would (the
        // same isl operation limit), within the counts' deadline.
        let spent = || deadline.is_some_and(|d| std::time::Instant::now() >= d);
        let vertices = distinct
            .iter()
            .zip(vertices)
            .filter_map(|(&(t, c, _), (v, _))| {
                let gist = DomainGist::new(max_ops, c);
                let mut v = v.ok()?;
                for piece in &mut v {
                    for vertex in piece {
                        if spent() {
                            return None;
                        }
                        vertex.domain = gist.of(&vertex.domain);
                    }
                }
                Some(((t.to_string(), c.map(str::to_string)), v))
            })
            .collect();
        (counts, vertices)
    })
}

/// Whether [`counts_of`] counts with PolyLib where barvinok gave no count
/// (not ahead: which engine counted must not depend on the timing).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fallback {
    PolyLib,
    No,
}

/// [`counts_of`] of distinct inputs.
fn distinct_counts_of(
    inputs: &[CountInput],
    deadline: Option<std::time::Instant>,
    polylib: Fallback,
    cut: &Cut,
) -> Vec<Result<Count, String>> {
    use ehrhart::EhrhartError as E;
    let whole: Vec<usize> = (0..inputs.len())
        .filter(|&k| matches!(inputs[k].form, CountForm::Whole))
        .collect();
    let batch: Vec<(&str, std::time::Duration)> = whole
        .iter()
        .map(|&k| (inputs[k].text.as_str(), inputs[k].left))
        .collect();
    // Per input, barvinok's count or error and the time it took.
    let mut cards: Vec<Option<(Result<Count, E>, std::time::Duration)>> = vec![None; inputs.len()];
    for (&k, (card, took)) in whole.iter().zip(ehrhart::card_many(&batch, deadline)) {
        cards[k] = Some((card.map(|c| c.count), took));
    }
    for (k, input) in inputs.iter().enumerate() {
        let start = std::time::Instant::now();
        let card = match &input.form {
            CountForm::Whole => continue,
            CountForm::Decompose(union) => {
                ehrhart::card_parts_many(&[(union.as_slice(), input.left)], deadline)
                    .pop()
                    .map_or(Err(E::DeadlinePassed), |(c, _)| c.map(|c| c.count))
            }
            CountForm::Parts(parts) => {
                let mut until = start + input.left;
                if let Some(d) = deadline {
                    until = until.min(d);
                }
                let parts: Vec<(&str, std::time::Duration)> =
                    parts.iter().map(|p| (p.as_str(), input.left)).collect();
                let mut terms = Vec::new();
                let mut failed = None;
                for (card, _) in ehrhart::card_many(&parts, Some(until)) {
                    match card {
                        Ok(c) => terms.extend(c.count.terms),
                        // A part whose turn came after the count's time: its time ran out.
                        Err(E::DeadlinePassed) if deadline.is_none_or(|d| until < d) => {
                            failed = Some(E::BarvinokTimedOut {
                                millis: input.left.as_millis() as u64,
                            });
                            break;
                        }
                        Err(e) => {
                            failed = Some(e);
                            break;
                        }
                    }
                }
                failed.map_or(Ok(Count::parametric(terms)), Err)
            }
        };
        cards[k] = Some((card, start.elapsed()));
    }
    let mut out: Vec<Result<Count, String>> = Vec::with_capacity(inputs.len());
    // Per input PolyLib counts: its index, its time left, barvinok's reason.
    let mut fallback: Vec<(usize, std::time::Duration, Option<String>)> = Vec::new();
    for (k, card) in cards.into_iter().enumerate() {
        let (card, took) = card.unwrap_or((Err(E::DeadlinePassed), std::time::Duration::ZERO));
        // What is left of the count's time (which the kernel's deadline
        // may have cut short while barvinok counted).
        let mut left = inputs[k].left.saturating_sub(took);
        if let Some(d) = deadline {
            left = left.min(d.saturating_duration_since(std::time::Instant::now()));
        }
        if let Err(e) = &card {
            cut.saw_error(e);
        }
        let by_barvinok = match card {
            Ok(count) => {
                out.push(Ok(count));
                continue;
            }
            Err(E::Unavailable { .. }) => None,
            Err(E::DeadlinePassed) => {
                out.push(Err("the counting time is spent".into()));
                continue;
            }
            Err(E::BarvinokTimedOut { .. }) => Some(out_of_time()),
            Err(e) => Some(e.to_string()),
        };
        if left.is_zero() || polylib == Fallback::No {
            if by_barvinok.is_none() {
                cut.saw(CutShort::CountTime);
            }
            out.push(Err(by_barvinok.unwrap_or_else(out_of_time)));
            continue;
        }
        // A placeholder until PolyLib's answer.
        out.push(Err(String::new()));
        fallback.push((k, left, by_barvinok));
    }
    let polylib_batch: Vec<(&str, std::time::Duration)> = fallback
        .iter()
        .map(|&(k, left, _)| (inputs[k].text.as_str(), left))
        .collect();
    for ((k, _, by_barvinok), (e, _)) in fallback
        .into_iter()
        .zip(ehrhart::enumerate_many(&polylib_batch, deadline))
    {
        if let Err(e) = &e {
            cut.saw_error(e);
        }
        out[k] = match e {
            Ok(e) => Ok(Count::parametric(
                e.terms
                    .iter()
                    .map(|t| t.iter().map(|c| c.text.clone()).collect())
                    .collect(),
            )),
            // Its turn came after the budget: as if no time were left.
            Err(E::DeadlinePassed) => Err(by_barvinok.unwrap_or_else(out_of_time)),
            Err(e) => {
                let e = match e {
                    E::TimedOut { .. } => out_of_time(),
                    e => e.to_string(),
                };
                Err(match by_barvinok {
                    Some(b) => format!("{b}; {e}"),
                    None => e,
                })
            }
        };
    }
    out
}

/// Which count of an array ([`ArrayRanges`]) a prepared count fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum CountSlot {
    /// `write.written_count`: what a slice writes.
    Written,
    /// `count_total`: what the whole NDRange touches.
    Total,
    /// `count_slice`: what a slice touches.
    Slice,
}

/// A step of [`add_counts`], in the order of its notes: a note, or a count
/// to fill (the array's index in `KernelRanges::arrays`, the slot, the
/// note's words for what is counted, and the count's input or why there is
/// none).
#[derive(Clone)]
enum CountStep {
    Note(String),
    Count {
        array_idx: usize,
        slot: CountSlot,
        what: &'static str,
        input: Result<CountInput, String>,
    },
    /// The slice count of an array, made at the launch's values only
    /// ([`Counts::AtLaunch`]).
    AtLaunch {
        array_idx: usize,
    },
}

/// Adds the Ehrhart counts of the kernel's bounded arrays along `d` (total,
/// per slice, and what a slice writes where the writes may not fill the
/// slice's range); a count that cannot be had is a note with the reason.
/// Every count's input is made first, then all are counted at once
/// ([`counts_of`]: one child process for the lot, not one per count).
/// Inputs and counts made ahead along `d` ([`Ahead`]) are taken where they match.
fn add_counts(cx: &Ctx, d: u32, k: &mut KernelRanges, which: Counts, ahead: Option<&Ahead>) {
    // a fresh operation budget: the ranges may have spent theirs
    cx.isl.reset();
    let Some(doms) = CountDomains::along(cx, d) else {
        k.diagnostics
            .push("no counts: isl could not build the slice domain".into());
        return;
    };
    let mut steps = Vec::new();
    // Per array shape (arrays accessed alike get the same ranges, see
    // `Ctx::same_shape`), the steps its first array gave (with its name)
    // and the counts it filled in directly.
    type Prepared = (String, Vec<CountStep>, Option<Count>, Option<Count>);
    let mut same: std::collections::HashMap<ArrayShape, Prepared> = Default::default();
    for (array_idx, (a, out)) in cx.acc.arrays.iter().zip(k.arrays.iter_mut()).enumerate() {
        if out.status == ArrayStatus::Bounded && a.arg_index == out.arg_index {
            let shape = ArrayShape::of(a);
            if let Some((name, made, total, slice_count)) = same.get(&shape) {
                steps.extend(made.iter().cloned().map(|step| match step {
                    CountStep::Note(n) => CountStep::Note(renamed(&n, name, &a.name)),
                    CountStep::Count {
                        slot, what, input, ..
                    } => CountStep::Count {
                        array_idx,
                        slot,
                        what,
                        input,
                    },
                    CountStep::AtLaunch { .. } => CountStep::AtLaunch { array_idx },
                }));
                out.count_total = total.clone();
                out.count_slice = slice_count.clone();
                continue;
            }
            cx.isl.reset();
            let before = steps.len();
            let written = out.write.as_ref().is_some_and(|w| !w.fills_hull);
            if array_counts(cx, a, array_idx, &doms, written, which, ahead, &mut steps).is_some() {
                // Never accessed: no element, in any slice (an empty sum).
                out.count_total = Some(Count::parametric(Vec::new()));
                out.count_slice = Some(Count::parametric(Vec::new()));
            }
            // isl work cut short by the deadline is not kept
            if !cx.isl.expired() {
                same.insert(
                    shape,
                    (
                        a.name.clone(),
                        steps[before..].to_vec(),
                        out.count_total.clone(),
                        out.count_slice.clone(),
                    ),
                );
            }
        }
    }
    let inputs: Vec<CountInput> = steps
        .iter()
        .filter_map(|s| {
            if let CountStep::Count { input: Ok(i), .. } = s {
                Some(i.clone())
            } else {
                None
            }
        })
        .collect();
    // The vertices (PolyLib, for the report) are found in a child of their
    // own while the counts are made: two processes, side by side.
    let todo = if which == Counts::All {
        vertex_todo(&steps)
    } else {
        Vec::new()
    };
    let limit = vertex_limit(cx);
    // No child is forked while barvinok's libraries are being loaded
    // ([`ehrhart::preload_barvinok`]): the counts wait for them anyway.
    let _ = ehrhart::barvinok_available();
    let (counts, vertices) = std::thread::scope(|s| {
        let deadline = cx.counts_deadline;
        let batch: Vec<(&str, Option<&str>, std::time::Duration)> = todo
            .iter()
            .map(|&(_, i)| (i.text.as_str(), i.context.as_deref(), limit))
            .collect();
        // What was found ahead is not searched for again.
        let (known_vertices, missing) = split_known(&batch, |&(t, c, _)| {
            let found = ahead?
                .vertices
                .get(&(t.to_string(), c.map(str::to_string)))?;
            Some((Ok(found.clone()), true))
        });
        let search = (!missing.is_empty() && !limit.is_zero()).then(|| {
            s.spawn(move || {
                // Equal footprints (arrays accessed alike) are searched once.
                let (distinct, which) = distinct_by(&missing, |&(t, c, _)| (t, c));
                let found = ehrhart::vertices_many(&distinct, deadline);
                which
                    .into_iter()
                    .map(|k| (found[k].0.clone(), false))
                    .collect::<VertexResults>()
            })
        });
        let (known_counts, missing) = split_known(&inputs, |i| {
            let found = ahead?.counts.get(&(i.text.clone(), i.form.clone()))?;
            Some(Ok(found.clone()))
        });
        let counts = fill_known(
            known_counts,
            counts_of(&missing, deadline, Fallback::PolyLib, &cx.cut),
        );
        let vertices = match search {
            Some(h) => Some(h.join().map(|rest| fill_known(known_vertices, rest))),
            None if known_vertices.iter().all(Option::is_some) => {
                Some(Ok(fill_known(known_vertices, Vec::new())))
            }
            None => None,
        };
        (counts, vertices)
    });
    let mut counts = counts.into_iter();
    let mut notes = Vec::new();
    let point = cx
        .point
        .as_ref()
        .map(|p| p.values(&k.params, &k.args, None));
    add_vertices(cx, k, &todo, limit, vertices, &mut notes);
    // Per step in order: a note, or a count with the array, slot and words
    // for it, or a count at the launch's values still to be made (the
    // parametric count's error first, where it fell back).
    enum Made {
        Note(String),
        Count(usize, CountSlot, &'static str, Result<Count, String>),
        AtPoint(
            usize,
            &'static str,
            Option<String>,
            Result<PointInput, String>,
        ),
    }
    let input_at = |array_idx: usize| match &point {
        Some(at) => point_input(cx, &cx.acc.arrays[array_idx], d, at),
        None => Err("the launch's values are unknown".to_string()),
    };
    let mut made = Vec::with_capacity(steps.len());
    for step in steps {
        made.push(match step {
            CountStep::Note(n) => Made::Note(n),
            CountStep::AtLaunch { array_idx } => {
                Made::AtPoint(array_idx, "a slice touches", None, input_at(array_idx))
            }
            CountStep::Count {
                array_idx,
                slot,
                what,
                input,
            } => {
                let c = input.and_then(|_| {
                    counts
                        .next()
                        .unwrap_or_else(|| Err("no count was made".into()))
                });
                match (c, slot) {
                    // No parametric count: the count at the launch's values, if any.
                    (Err(e), CountSlot::Slice) if point.is_some() => {
                        Made::AtPoint(array_idx, what, Some(e), input_at(array_idx))
                    }
                    (c, _) => Made::Count(array_idx, slot, what, c),
                }
            }
        });
    }
    let inputs: Vec<&PointInput> = made
        .iter()
        .filter_map(|m| match m {
            Made::AtPoint(_, _, _, Ok(i)) => Some(i),
            _ => None,
        })
        .collect();
    let mut at_points = if inputs.is_empty() {
        Vec::new()
    } else {
        counts_at_points(&inputs, cx.deadline, &cx.cut)
    }
    .into_iter();
    for m in made {
        let (array_idx, slot, what, c) = match m {
            Made::Note(n) => {
                notes.push(n);
                continue;
            }
            Made::Count(array_idx, slot, what, c) => (array_idx, slot, what, c),
            Made::AtPoint(array_idx, what, parametric, input) => {
                let c = input.and_then(|_| {
                    at_points
                        .next()
                        .unwrap_or_else(|| Err("no count was made".into()))
                });
                let c = match (c, parametric) {
                    (Ok(c), Some(e)) => {
                        notes.push(format!(
                            "array '{}': the elements {what} counted at the launch's values only (no parametric count: {e})",
                            cx.acc.arrays[array_idx].name
                        ));
                        Ok(c)
                    }
                    (Err(why), Some(e)) => Err(format!("{e}; {why}")),
                    (c, None) => c,
                };
                (array_idx, CountSlot::Slice, what, c)
            }
        };
        let out = &mut k.arrays[array_idx];
        let c = c
            .map_err(|e| {
                notes.push(format!(
                    "array '{}': no count of the elements {what}: {e}",
                    cx.acc.arrays[array_idx].name
                ))
            })
            .ok();
        match slot {
            CountSlot::Written => {
                if let Some(w) = &mut out.write {
                    w.written_count = c;
                }
            }
            CountSlot::Total => out.count_total = c,
            CountSlot::Slice => out.count_slice = c,
        }
    }
    if k.arrays.iter().any(|a| a.status == ArrayStatus::Bounded) {
        if let Err(why) = ehrhart::barvinok_available() {
            notes.push(format!(
                "counts from polylib (barvinok is unavailable: {why})"
            ));
        }
    }
    k.diagnostics.extend(notes);
}

/// PolyLib's time limit for the vertices of one footprint ([`add_vertices`]):
/// they are for the report, so they get less than a count.
const VERTEX_TIME_LIMIT: std::time::Duration = std::time::Duration::from_millis(500);

/// The slice footprints whose parametric vertices [`add_vertices`] gives:
/// per bounded array, its index and the input of its slice count.
fn vertex_todo(steps: &[CountStep]) -> Vec<(usize, &CountInput)> {
    steps
        .iter()
        .filter_map(|step| match step {
            CountStep::Count {
                array_idx,
                slot: CountSlot::Slice,
                input: Ok(input),
                ..
            } => Some((*array_idx, input)),
            _ => None,
        })
        .collect()
}

/// The time limit of each vertex search: [`VERTEX_TIME_LIMIT`], at most what
/// is left of the kernel's budget.
fn vertex_limit(cx: &Ctx) -> std::time::Duration {
    match cx.counts_deadline {
        Some(d) => VERTEX_TIME_LIMIT.min(d.saturating_duration_since(std::time::Instant::now())),
        None => VERTEX_TIME_LIMIT,
    }
}

/// PolyLib's vertices of each footprint (`ehrhart::vertices_many`), or why
/// there are none, and whether their domains are simplified already
/// ([`DomainGist`], made ahead: [`count_ahead`]).
type VertexResults = Vec<(
    Result<Vec<Vec<ehrhart::ParamVertex>>, ehrhart::EhrhartError>,
    bool,
)>;

/// The parametric vertices of each bounded array's slice footprint (the
/// input of its slice count, [`vertex_todo`]), from PolyLib
/// (`Polyhedron2Param_Vertices`, as in the thesis), into
/// `ArrayRanges::vertices_slice`; where PolyLib gives none, a note says why.
/// `found` is the batch's outcome (all in one sandboxed child, each within
/// `limit`, [`vertex_limit`]), `None` when no time was left to start it, or
/// the panic of the thread that ran it.
fn add_vertices(
    cx: &Ctx,
    k: &mut KernelRanges,
    todo: &[(usize, &CountInput)],
    limit: std::time::Duration,
    found: Option<std::thread::Result<VertexResults>>,
    notes: &mut Vec<String>,
) {
    if todo.is_empty() {
        return;
    }
    let found = match found {
        Some(Ok(found)) => found,
        Some(Err(_)) => {
            cx.cut.saw(CutShort::CountProcess);
            for &(array_idx, _) in todo {
                notes.push(format!(
                    "array '{}': no vertex bounds of a slice's footprint: the search failed (a panic)",
                    k.arrays[array_idx].name
                ));
            }
            return;
        }
        None => {
            debug_assert!(limit.is_zero());
            cx.cut.saw(CutShort::CountTime);
            for &(array_idx, _) in todo {
                notes.push(format!(
                    "array '{}': no vertex bounds of a slice's footprint: the counting time is spent",
                    k.arrays[array_idx].name
                ));
            }
            return;
        }
    };
    for (&(array_idx, input), (e, simplified)) in todo.iter().zip(found) {
        let a = &mut k.arrays[array_idx];
        let n_dims = cx.acc.arrays[array_idx].strides.len().max(1);
        match e {
            Ok(e) => {
                let mut vs: Vec<ranges_format::Vertex> = Vec::new();
                let gist = (!simplified)
                    .then(|| DomainGist::new(cx.isl.max_ops(), input.context.as_deref()));
                // The domains are simplified within the kernel's budget too:
                // past it, the array gets no vertices (never some of them).
                let spent = || {
                    cx.counts_deadline
                        .is_some_and(|d| std::time::Instant::now() >= d)
                };
                let mut out_of_time = false;
                for v in e.iter().flatten() {
                    if spent() {
                        out_of_time = true;
                        break;
                    }
                    let v = ranges_format::Vertex {
                        coords: v.coords.iter().take(n_dims).cloned().collect(),
                        domain: match &gist {
                            Some(g) => g.of(&v.domain),
                            None => v.domain.clone(),
                        },
                    };
                    if !vs.contains(&v) {
                        vs.push(v);
                    }
                }
                if out_of_time {
                    cx.cut.saw(CutShort::CountTime);
                    notes.push(format!(
                        "array '{}': no vertex bounds of a slice's footprint: simplifying their domains ran out of time (the counting time is spent)",
                        a.name
                    ));
                } else {
                    a.vertices_slice = Some(vs);
                }
            }
            Err(e) => {
                cx.cut.saw_error(&e);
                let why = match e {
                    ehrhart::EhrhartError::TimedOut { .. }
                    | ehrhart::EhrhartError::DeadlinePassed => {
                        format!(
                            "polylib ran out of time (at most {} ms)",
                            VERTEX_TIME_LIMIT.as_millis()
                        )
                    }
                    e => e.to_string(),
                };
                notes.push(format!(
                    "array '{}': no vertex bounds of a slice's footprint: {why}",
                    a.name
                ));
            }
        }
    }
}

/// A vertex's domain without what the context implies (PolyLib repeats the
/// context's constraints in every domain), within isl's operation limit;
/// where isl cannot, the domain as PolyLib gave it. `true` when empty.
struct DomainGist<'a> {
    /// The context's parameters (`[a, b]`) and the context itself (an isl
    /// object of `isl`: declared first, so that it is dropped first).
    context: Option<(&'a str, Set)>,
    isl: Isl,
}

impl<'a> DomainGist<'a> {
    /// Within `max_ops` isl operations per simplification (the kernel's).
    fn new(max_ops: u64, context: Option<&'a str>) -> DomainGist<'a> {
        // The operation limit alone (no wall clock): the same domains
        // whatever the machine's load.
        let isl = Isl::with_deadline(max_ops, None, 0);
        let context = context.and_then(|c| {
            let params = c.split_once(" -> ")?.0;
            Some((params, isl.set(c).ok()?))
        });
        DomainGist { isl, context }
    }

    fn of(&self, domain: &str) -> String {
        let domain = domain.trim();
        if domain.is_empty() {
            return "true".into();
        }
        let gisted = self.context.as_ref().and_then(|(params, c)| {
            let d = self
                .isl
                .set(&format!("{params} -> {{ : {domain} }}"))
                .ok()?;
            let d = d.gist_params(c.copy().ok()?).ok()?;
            let text = self.isl.set_str(&d).ok()?;
            // `[..] -> { : cond }`, or `{ : }` when the context implies it all.
            let body = text.split_once("{")?.1.rsplit_once("}")?.0.trim();
            let cond = body.strip_prefix(':').map(str::trim)?;
            Some(if cond.is_empty() {
                "true".to_string()
            } else {
                cond.to_string()
            })
        });
        gisted.unwrap_or_else(|| domain.to_string())
    }
}

/// The domains and contexts of the counts along a split dimension.
struct CountDomains {
    /// A slice's domain.
    slice: Set,
    /// The whole NDRange's domain.
    whole: Set,
    /// The context with the slice's bounds, and the kernel's.
    ctx_slice: Option<Set>,
    ctx_total: Option<Set>,
}

impl CountDomains {
    /// Along `d`; `None` when isl cannot build the domains.
    fn along(cx: &Ctx, d: u32) -> Option<CountDomains> {
        Some(CountDomains {
            slice: cx.slice(d)?,
            whole: cx.whole_domain()?,
            ctx_slice: cx.context_with_slice(d),
            ctx_total: cx.isl.set(&cx.acc.context).ok(),
        })
    }
}

/// Whether an array is never accessed ([`array_counts`]): it then has no
/// count to make, and none of its elements is counted.
#[derive(PartialEq, Eq)]
struct NeverAccessed;

/// One array's counts to make (see [`add_counts`]), as steps; the written
/// count only when `written` (the writes may not fill the slice's range).
#[allow(clippy::too_many_arguments)]
fn array_counts(
    cx: &Ctx,
    a: &ArrayAccesses,
    array_idx: usize,
    doms: &CountDomains,
    written: bool,
    which: Counts,
    ahead: Option<&Ahead>,
    steps: &mut Vec<CountStep>,
) -> Option<NeverAccessed> {
    let mut count = |slot: CountSlot,
                     what: &'static str,
                     fp: &dyn Fn() -> Option<Set>,
                     dom: &Set,
                     ctx: Option<&Set>| {
        let kinds: &[AccessKind] = match slot {
            CountSlot::Written => &[AccessKind::MustWrite],
            _ => &[
                AccessKind::Read,
                AccessKind::MustWrite,
                AccessKind::MayWrite,
            ],
        };
        let input = match ahead.and_then(|h| h.inputs.get(&(array_idx, slot))) {
            Some(made) => Ok(made.clone()),
            None => fp()
                .ok_or_else(|| "isl failed while computing the footprint".to_string())
                .and_then(|f| count_input(cx, &f, || cx.access_footprints(a, kinds, dom), ctx)),
        };
        steps.push(CountStep::Count {
            array_idx,
            slot,
            what,
            input,
        });
    };
    if written {
        // Only when every write is a must-write (the may-write map may repeat them).
        if let (Some(must), Some(may)) = (
            cx.union_maps(&[&a.must_writes]),
            cx.union_maps(&[&a.may_writes]),
        ) {
            if !has_may_writes(may, &must) {
                if let Some(mw) = &must {
                    count(
                        CountSlot::Written,
                        "a slice writes",
                        &|| cx.footprint(mw, &doms.slice),
                        &doms.slice,
                        doms.ctx_slice.as_ref(),
                    );
                }
            }
        }
    }
    if which == Counts::AtLaunch {
        steps.push(CountStep::AtLaunch { array_idx });
        return None;
    }
    if which != Counts::All {
        return None;
    }
    let all = match cx.union_maps(&[&a.reads, &a.must_writes, &a.may_writes]) {
        None => {
            steps.push(CountStep::Note(format!(
                "array '{}': no counts: isl failed while reading the access relations",
                a.name
            )));
            return None;
        }
        Some(None) => return Some(NeverAccessed),
        Some(Some(all)) => all,
    };
    count(
        CountSlot::Total,
        "the whole NDRange touches",
        &|| cx.footprint(&all, &doms.whole),
        &doms.whole,
        doms.ctx_total.as_ref(),
    );
    count(
        CountSlot::Slice,
        "a slice touches",
        &|| cx.footprint(&all, &doms.slice),
        &doms.slice,
        doms.ctx_slice.as_ref(),
    );
    None
}

/// Whether two work-items in different slices along `d` may write the same element.
fn writes_may_overlap(cx: &Ctx, w: &Map, d: u32) -> Option<bool> {
    let dom = cx.whole_domain()?;
    let w = w.copy().ok()?.intersect_domain(dom).ok()?;
    let same = w.copy().ok()?.apply_range(w.reverse().ok()?).ok()?;
    let go = if cx.acc.params.iter().any(|p| p.name == format!("go{d}")) {
        format!("go{d}")
    } else {
        "0".into()
    };
    let differ = match cx.local_size {
        Some(ls) => format!(
            "floor((x{d} - {go})/{l}) < floor((y{d} - {go})/{l})",
            l = ls[d as usize].max(1)
        ),
        None => format!("x{d} < y{d}"),
    };
    let params: Vec<&str> = cx.acc.params.iter().map(|p| p.name.as_str()).collect();
    let rel = cx
        .isl
        .map(&format!(
            "[{}] -> {{ W[x0, x1, x2] -> W[y0, y1, y2] : {differ} }}",
            params.join(", ")
        ))
        .ok()?;
    Some(!same.intersect(rel).ok()?.is_empty().ok()?)
}

/// The integers between the least and the greatest element of a 1-D set
/// (parametric; unnamed tuple): its hull, without a polyhedral hull.
fn interval_of(cx: &Ctx, p: Set) -> Option<Set> {
    let p = p.reset_tuple_id().ok()?;
    let up = cx.isl.order(Order::AtLeast).ok()?;
    let down = cx.isl.order(Order::AtMost).ok()?;
    let above = p.copy().ok()?.apply(up).ok()?;
    let below = p.apply(down).ok()?;
    above.intersect(below).ok()?.coalesce().ok()
}

/// Whether the written elements of a slice fill the hull that is read back.
/// The hull of a 1-D footprint is the interval between its least and its
/// greatest element (its rows' interval in the 2-D case; with constant
/// strides, also the interval of the linearized elements).
fn fills_hull(cx: &Ctx, must: &Map, slice: &Set, strides: &[String]) -> Option<bool> {
    let w = cx.footprint(must, slice)?;
    if w.is_empty().ok()? {
        return Some(true);
    }
    let n = strides.len();
    let params = w.copy().ok()?.params().ok()?;
    let name = w
        .get_tuple_name()
        .ok()
        .map(|s| s.to_string())
        .unwrap_or_default();
    if n == 1 {
        let hull = interval_of(cx, w.copy().ok()?)?
            .set_tuple_name(&name)
            .ok()?;
        return hull
            .subtract(w)
            .ok()?
            .intersect_params(params)
            .ok()?
            .is_empty()
            .ok();
    }
    // 2-D row-major with a plain width: rows hull × [0, width).
    if n == 2 && strides[1] == "1" && strides[0].chars().all(|c| c.is_alphanumeric() || c == '_') {
        let rows = interval_of(cx, w.copy().ok()?.project_out(DimType::Set, 1, 1).ok()?)?;
        let name = w
            .get_tuple_name()
            .ok()
            .map(|s| s.to_string())
            .unwrap_or_default();
        let width = &strides[0];
        // a constant width (`b[k*1000 + j]`) is no parameter
        let header = if width.chars().all(|c| c.is_ascii_digit()) {
            String::new()
        } else {
            format!("[{width}] -> ")
        };
        let cols = cx
            .isl
            .set(&format!("{header}{{ [x] : 0 <= x < {width} }}"))
            .ok()?;
        let bx = rows.flat_product(cols).ok()?;
        let bx = bx.set_tuple_name(&name).ok()?;
        if bx
            .subtract(w.copy().ok()?)
            .ok()?
            .intersect_params(params.copy().ok()?)
            .ok()?
            .is_empty()
            .ok()?
        {
            return Some(true);
        }
    }
    // Constant strides: the linear elements fill their interval
    // (`c[x + y*1000]` with 1000 work-items per row, at any offset).
    if strides
        .iter()
        .all(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()))
    {
        let ins: Vec<String> = (0..n).map(|k| format!("o{k}")).collect();
        let sum: Vec<String> = strides
            .iter()
            .zip(&ins)
            .map(|(s, o)| format!("{s}*{o}"))
            .collect();
        let lin = cx
            .isl
            .map(&format!(
                "{{ {name}[{}] -> {name}[{}] }}",
                ins.join(", "),
                sum.join(" + ")
            ))
            .ok()?;
        let w1 = w.apply(lin).ok()?;
        let hull = interval_of(cx, w1.copy().ok()?)?
            .set_tuple_name(&name)
            .ok()?;
        return hull
            .subtract(w1)
            .ok()?
            .intersect_params(params)
            .ok()?
            .is_empty()
            .ok();
    }
    Some(false)
}

/// Sample values of `params` (in their order) for a split along `d`: 64
/// work-groups of `ls` (16 where not given) per dimension, offset 0,
/// scalars 1024, the slice half the range. They order the split dimensions
/// and pick the local size `clpart analyze` tries (`session`).
pub fn sample_values(params: &[Param], d: u32, ls: Option<[i64; 3]>) -> Vec<i64> {
    let l = |dd: u32| ls.map(|x| x[dd as usize]).unwrap_or(16);
    let gs = |dd: u32| l(dd) * 64;
    params
        .iter()
        .map(|p| match p.source {
            ParamSource::GlobalSize(dd) => gs(dd),
            ParamSource::LocalSize(dd) => l(dd),
            ParamSource::NumGroups(dd) => gs(dd) / l(dd),
            ParamSource::GlobalOffset(_) => 0,
            ParamSource::ScalarArg { .. } | ParamSource::StructMember { .. } => 1024,
            ParamSource::SliceLo | ParamSource::SliceLoItem => 0,
            ParamSource::SliceHi => 32,
            ParamSource::SliceHiItem => gs(d) / 2,
        })
        .collect()
}

fn slice_cost(k: &KernelRanges, d: u32, ls: Option<[i64; 3]>) -> i64 {
    let names = k.param_names();
    let vals = sample_values(&k.params, d, ls);
    let mut cost = 0i64;
    for a in &k.arrays {
        if let Some(r) = &a.slice {
            if let Ok(b) = r.bind(&names) {
                if let Ok(Some((lo, hi))) = b.eval(&vals) {
                    cost += (hi - lo + 1).max(0) * a.elem_size as i64;
                }
            }
        }
    }
    cost
}

/// The slice cost ([`slice_cost`]) of splitting along `d`, from the slice
/// footprints' linear ranges alone (no verdicts): orders the candidates.
fn estimated_cost(cx: &Ctx, params: &[Param], d: u32) -> i64 {
    let mut k = KernelRanges {
        name: cx.acc.kernel.clone(),
        work_dim: cx.acc.work_dim,
        params: params.to_vec(),
        args: Vec::new(),
        split_dim: Some(d),
        splittable: true,
        reason: None,
        arrays: Vec::new(),
        assumptions: Vec::new(),
        subkernel: None,
        diagnostics: Vec::new(),
        group_size_use: None,
        cut_short: Vec::new(),
    };
    // The footprints at the sample values alone (no parametric bounds: the
    // chosen dimension's are made once it is chosen, the others never).
    let vals = sample_values(params, d, cx.local_size);
    let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
    let fixed: Vec<String> = names
        .iter()
        .zip(&vals)
        .map(|(n, v)| format!("{n} = {v}"))
        .collect();
    let point = format!("[{}] -> {{ : {} }}", names.join(", "), fixed.join(" and "));
    let Some(slice) = cx
        .slice(d)
        .and_then(|s| s.intersect_params(cx.isl.set(&point).ok()?).ok())
    else {
        return i64::MAX;
    };
    for a in cx.acc.arrays.iter().filter(|a| a.whole.is_none()) {
        cx.isl.reset();
        let Some(Some(all)) = cx.union_maps(&[&a.reads, &a.must_writes, &a.may_writes]) else {
            continue;
        };
        let Some(fp) = cx.footprint(&all, &slice) else {
            continue;
        };
        let range = dim_bounds(cx, &fp, a.strides.len(), None)
            .and_then(|(l, h)| linear_of(&a.strides, &l, &h));
        k.arrays.push(ArrayRanges {
            arg_index: a.arg_index,
            name: a.name.clone(),
            elem_type: a.elem_type.clone(),
            elem_size: a.elem_size,
            mode: a.mode,
            status: ArrayStatus::Bounded,
            total: None,
            slice: range,
            read_slice: None,
            write_slice: None,
            count_total: None,
            count_slice: None,
            write: None,
            boxes: None,
            vertices_slice: None,
        });
    }
    cx.isl.reset();
    slice_cost(&k, d, cx.local_size)
}

/// The share of a kernel's time budget after which its parametric counts
/// and vertex bounds (the Ehrhart engines, in child processes) stop: 60 %
/// (0.9 s of the 1.5 s of optimized builds). They come after the ranges and
/// verdicts, inform the report only (a launch counts at its own values,
/// which are not cut), and on the slowest kernels a single count can take
/// seconds (`matmul_tiled` without its local size: one never ends; a
/// clamped 2-D stencil's whole-NDRange count has 799 chambers), so the
/// kernel's analysis ends within about 1 s instead of at the budget. What
/// is cut says so: "no count ...: the counting time is spent".
pub const COUNTS_SHARE_PERCENT: u64 = 60;

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
            d - std::time::Duration::from_millis(budget_ms * (100 - COUNTS_SHARE_PERCENT) / 100)
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

fn partition_along(
    cx: &Ctx,
    program: &Program,
    func: &coarsen::ir::Function,
    args: &[ranges_format::ArgInfo],
    params: &[Param],
    d: u32,
) -> KernelRanges {
    let acc = cx.acc;
    let mut reasons: Vec<String> = Vec::new();
    if let Some(r) = &acc.reason {
        reasons.push(format!("not analyzable: {r}"));
    }
    for a in &acc.global_atomics {
        reasons.push(format!("global atomic {a}"));
    }
    for p in func.params.iter().filter(|p| p.ty.is_image_or_sampler()) {
        reasons.push(format!(
            "argument '{}' is an image or a sampler ({}:{}:{}): a kernel with one runs unsplit",
            p.name, program.file, p.span.line, p.span.col
        ));
    }
    let slice = cx.slice(d);
    let whole_dom = cx.whole_domain();
    let ctx_slice = cx.context_with_slice(d);
    let ctx_total = cx.isl.set(&acc.context).ok();
    let mut arrays = Vec::new();
    let mut assumptions = Vec::new();
    let mut diagnostics: Vec<String> = acc.notes.clone();
    for a in &acc.arrays {
        let shape = (d, ArrayShape::of(a));
        let memo = cx.same_shape.borrow().get(&shape).cloned();
        let (r, loosened) = match memo {
            Some((mut r, why, loosened)) => {
                r.arg_index = a.arg_index;
                r.name = a.name.clone();
                if let ArrayStatus::Whole { reason } = &mut r.status {
                    *reason = renamed(reason, NAME_SLOT, &a.name);
                }
                reasons.extend(why.iter().map(|w| renamed(w, NAME_SLOT, &a.name)));
                (r, loosened)
            }
            None => {
                let before = reasons.len();
                cx.loosened.set(false);
                let r = array_ranges(
                    cx,
                    a,
                    d,
                    slice.as_ref(),
                    whole_dom.as_ref(),
                    ctx_slice.as_ref(),
                    ctx_total.as_ref(),
                    &mut reasons,
                );
                // isl work cut short by the deadline is not kept
                if !cx.isl.expired() {
                    let mut kept = r.clone();
                    if let ArrayStatus::Whole { reason } = &mut kept.status {
                        *reason = renamed(reason, &a.name, NAME_SLOT);
                    }
                    let why = reasons[before..]
                        .iter()
                        .map(|w| renamed(w, &a.name, NAME_SLOT))
                        .collect();
                    let loosened = cx.loosened.get();
                    cx.same_shape
                        .borrow_mut()
                        .insert(shape, (kept, why, loosened));
                }
                (r, cx.loosened.get())
            }
        };
        if loosened && r.status == ArrayStatus::Bounded {
            diagnostics.push(format!(
                "array '{}': some bounds are looser than exact: isl's exact bounds took more than {EXACT_BOUND_OPS} operations, so they are those of the footprint without its divisibility constraints",
                a.name
            ));
        }
        if r.status == ArrayStatus::Bounded {
            for s in &a.assumptions {
                assumptions.push(Assumption {
                    description: format!("array '{}': {}", a.name, s.description),
                    condition: s.condition.clone(),
                    array: Some(a.arg_index),
                });
            }
        }
        for n in &a.notes {
            diagnostics.push(format!("array '{}': {n}", a.name));
        }
        arrays.push(r);
    }
    // the kernel's own (conversions assumed not to wrap): every array
    for s in &acc.assumptions {
        assumptions.push(Assumption {
            description: s.description.clone(),
            condition: s.condition.clone(),
            array: None,
        });
    }
    let rebased: Vec<u32> = arrays
        .iter()
        .filter(|a| a.status == ArrayStatus::Bounded)
        .map(|a| a.arg_index)
        .collect();
    // The guard checks the boxes of the arrays that have them.
    let boxed: Vec<crate::subkernel::BoxedArray> = arrays
        .iter()
        .filter_map(|a| {
            a.boxes.as_ref().map(|b| crate::subkernel::BoxedArray {
                arg_index: a.arg_index,
                strides: &b.strides,
                read_parts: b.read_parts.len(),
            })
        })
        .collect();
    let subkernel = match crate::subkernel::rewrite_with_boxes(
        program,
        &func.name,
        &rebased,
        &boxed,
        cx.acc.work_dim,
        &cx.specialize,
    ) {
        Ok(s) => Some(s),
        Err(e) => {
            reasons.push(e.to_string());
            None
        }
    };
    let _ = args.iter().filter(|a| a.kind == ArgKind::Scalar).count();
    let splittable = reasons.is_empty();
    KernelRanges {
        name: func.name.clone(),
        work_dim: acc.work_dim,
        params: params.to_vec(),
        args: args.to_vec(),
        split_dim: Some(d),
        splittable,
        reason: if splittable {
            None
        } else {
            Some(reasons.join("; "))
        },
        arrays,
        assumptions,
        subkernel,
        diagnostics,
        group_size_use: coarsen::group_size_use(program, &func.name),
        cut_short: Vec::new(),
    }
}

#[allow(clippy::too_many_arguments)]
fn array_ranges(
    cx: &Ctx,
    a: &ArrayAccesses,
    d: u32,
    slice: Option<&Set>,
    whole_dom: Option<&Set>,
    ctx_slice: Option<&Set>,
    ctx_total: Option<&Set>,
    reasons: &mut Vec<String>,
) -> ArrayRanges {
    let m = a.mode;
    let mut out = ArrayRanges {
        arg_index: a.arg_index,
        name: a.name.clone(),
        elem_type: a.elem_type.clone(),
        elem_size: a.elem_size,
        mode: m,
        status: ArrayStatus::Bounded,
        total: None,
        slice: None,
        read_slice: None,
        write_slice: None,
        count_total: None,
        count_slice: None,
        write: None,
        boxes: None,
        vertices_slice: None,
    };
    let written = matches!(m, Mode::W | Mode::RW);
    if let Some(r) = &a.whole {
        out.status = ArrayStatus::Whole { reason: r.clone() };
        if written {
            reasons.push(format!(
                "array '{}' is written but cannot be bounded: {r}",
                a.name
            ));
        }
        return out;
    }
    let fail = |out: &mut ArrayRanges, reasons: &mut Vec<String>, why: &str| {
        let reason = if cx.isl.expired() {
            format!(
                "array '{}': analysis time budget ({} ms) exceeded; whole array is transferred",
                a.name, cx.budget_ms
            )
        } else {
            format!("array '{}': {why}", a.name)
        };
        out.status = ArrayStatus::Whole {
            reason: reason.clone(),
        };
        if written {
            reasons.push(reason);
        }
    };
    cx.isl.reset();
    let (Some(slice), Some(whole_dom)) = (slice, whole_dom) else {
        fail(&mut out, reasons, "isl could not build the slice domain");
        return out;
    };
    let all = cx.union_maps(&[&a.reads, &a.must_writes, &a.may_writes]);
    let reads = cx.union_maps(&[&a.reads]);
    let writes = cx.union_maps(&[&a.must_writes, &a.may_writes]);
    let must = cx.union_maps(&[&a.must_writes]);
    let may = cx.union_maps(&[&a.may_writes]);
    let (Some(all), Some(reads), Some(writes), Some(must), Some(may)) =
        (all, reads, writes, must, may)
    else {
        fail(
            &mut out,
            reasons,
            "isl operation limit reached or isl failed while reading the access relations",
        );
        return out;
    };
    let Some(all) = all else {
        return out; // never accessed
    };
    let (ctx_total_set, ctx_slice_set) = (ctx_total, ctx_slice);
    // The total range is the same along every candidate dimension: made once.
    let memo = cx.totals.borrow().get(&a.arg_index).cloned();
    let total_empty = match memo {
        Some((total, empty)) => {
            out.total = total;
            empty
        }
        None => {
            let Some(fp_total) = cx.footprint(&all, whole_dom) else {
                fail(
                    &mut out,
                    reasons,
                    "isl operation limit reached or isl failed while computing the footprint",
                );
                return out;
            };
            out.total = linear_range(cx, &fp_total, &a.strides, ctx_total_set);
            let empty = fp_total.is_empty().unwrap_or(true);
            cx.totals
                .borrow_mut()
                .insert(a.arg_index, (out.total.clone(), empty));
            empty
        }
    };
    let Some(fp_slice) = cx.footprint(&all, slice) else {
        out.total = None;
        fail(
            &mut out,
            reasons,
            "isl operation limit reached or isl failed while computing the footprint",
        );
        return out;
    };
    // The slice's bounds serve the read (write) footprint too when the array
    // is only read (written): the footprints are the same set.
    let slice_bounds = dim_bounds(cx, &fp_slice, a.strides.len(), ctx_slice_set);
    out.slice = literal_linear(cx, &fp_slice, &a.strides, ctx_slice_set).or_else(|| {
        slice_bounds
            .as_ref()
            .and_then(|(l, h)| linear_of(&a.strides, l, h))
    });
    if (out.total.is_none() && !total_empty)
        || (out.slice.is_none() && !fp_slice.is_empty().unwrap_or(true))
    {
        out.total = None;
        out.slice = None;
        fail(
            &mut out,
            reasons,
            "the footprint bounds could not be expressed (isl limit or an unsupported bound form)",
        );
        return out;
    }
    let mut read_box = None;
    let mut write_box = None;
    let mut write_exact = false;
    let mut read_parts = Vec::new();
    if let Some(r) = &reads {
        let read_fp = if writes.is_none() {
            out.read_slice = out.slice.clone();
            read_box = range_and_box_of(&a.strides, slice_bounds.as_ref()).1;
            Some(fp_slice.copy())
        } else if let Some(f) = cx.footprint(r, slice) {
            (out.read_slice, read_box) = ranges_and_box(cx, &f, &a.strides, ctx_slice_set);
            Some(Ok(f))
        } else {
            None
        };
        match (&read_box, read_fp) {
            (Some(_), Some(Ok(f))) => {
                read_parts = box_parts(cx, a, slice, &f, ctx_slice_set).unwrap_or_default();
            }
            // a 1-D array only read: its runs, when it has a few
            (None, Some(Ok(f))) if a.strides.len() == 1 && writes.is_none() => {
                read_parts = runs_1d(cx, &f, ctx_slice_set).unwrap_or_default();
                if !read_parts.is_empty() {
                    read_box = out.read_slice.clone().map(|r| vec![r]);
                }
            }
            _ => {}
        }
    }
    if let Some(w) = &writes {
        if reads.is_none() {
            out.write_slice = out.slice.clone();
            write_box = range_and_box_of(&a.strides, slice_bounds.as_ref()).1;
        } else if let Some(f) = cx.footprint(w, slice) {
            (out.write_slice, write_box) = ranges_and_box(cx, &f, &a.strides, ctx_slice_set);
        }
        let overlap = writes_may_overlap(cx, w, d);
        // Writes that are not must-writes (the may-write map may repeat the must-writes).
        let has_may = has_may_writes(may, &must);
        if let (Some(mw), false, Some(_)) = (&must, has_may, &write_box) {
            write_exact =
                writes_fill_box(cx, mw, slice, a.strides.len(), ctx_slice_set).unwrap_or(false);
        }
        let fills = match (&must, has_may) {
            (Some(mw), false) => fills_hull(cx, mw, slice, &a.strides).unwrap_or(false),
            _ => false,
        };
        let disjoint = overlap == Some(false);
        if !disjoint {
            reasons.push(format!(
                "array '{}': work-groups in different slices along dimension {d} may write the same elements{}",
                a.name,
                if overlap.is_some() {
                    String::new()
                } else if cx.isl.expired() {
                    format!(" (analysis time budget of {} ms exceeded)", cx.budget_ms)
                } else {
                    " (isl could not decide)".to_string()
                }
            ));
        }
        let runs = if !fills && a.strides.len() == 2 {
            Some(format!("rows of {} elements: each slice writes a rectangle of rows x columns of the row-major [..][{}] array", a.elem_type, a.strides[0]))
        } else {
            None
        };
        out.write = Some(WriteVerdict {
            disjoint_across_slices: disjoint,
            fills_hull: fills,
            runs,
            written_count: None,
        });
    }
    // Boxes, when every footprint that has linear bounds has its box too.
    let complete = (out.read_slice.is_none() || read_box.is_some())
        && (out.write_slice.is_none() || write_box.is_some());
    let one_d_runs = a.strides.len() == 1 && !read_parts.is_empty();
    if (a.strides.len() >= 2 || one_d_runs)
        && complete
        && (read_box.is_some() || write_box.is_some())
    {
        out.boxes = Some(Boxes {
            strides: a.strides.clone(),
            read: read_box,
            write: write_box,
            write_exact,
            read_parts,
        });
    }
    out
}

/// Whether some write is not a must-write (the may-write map may repeat the
/// must-writes).
fn has_may_writes(may: Option<Map>, must: &Option<Map>) -> bool {
    match (may, must) {
        (None, _) => false,
        (Some(may), None) => !may.is_empty().unwrap_or(false),
        (Some(may), Some(mw)) => may
            .subtract(mw.copy().expect("isl copy"))
            .map(|d| !d.is_empty().unwrap_or(true))
            .unwrap_or(true),
    }
}
