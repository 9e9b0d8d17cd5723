//! The pure part of a launch, no OpenCL: the shares checked, the NDRange
//! sliced by work-groups, the parameters, the launch-time assumptions, why
//! the launch runs unsplit, each device's ranges, read, write and prefill
//! sets, how each written array is glued, and the footprint counts of the
//! report. A [`Schedule`] is a function of the plan and its [`Key`] (NDRange,
//! shares, integer scalars, buffer and `__local` lengths, and the options
//! that change it), so the plan keeps the last few ([`Schedules`]) and a
//! launch repeated with the same key evaluates nothing.

use std::sync::Arc;

use ranges_format::{ArgKind, BoundRange, Reduction};

use super::options::LaunchOptions;
use super::setargs::local_sink_bytes;
use crate::args::KernelArgs;
use crate::buffer::ArgValue;
use crate::error::{LaunchError, Result};
use crate::ndrange::{split_groups, NdRange};
use crate::plan::{guard_windows, ArrayPlan, BoxWindow, Plan};
use crate::ranks::{RankSlices, SliceSets};
use crate::runs::Runs;
use crate::runtime::Runtime;

/// Schedules a plan keeps ([`Schedules`]): launches that alternate between
/// a few configurations (a solver's steps, the two halves of a ping-pong)
/// all hit.
const MAX_SCHEDULES: usize = 4;

/// What a launch's schedule depends on besides the plan. Compared in
/// place against a launch's inputs ([`Key::matches`]): a hit allocates
/// nothing.
#[derive(Debug, PartialEq)]
struct Key {
    nd: NdRange,
    /// `(device, share as bits)`: the same floats give the same slices.
    shares: Vec<(usize, u64)>,
    args: Vec<KeyArg>,
    unchecked: bool,
    exact_bytes: bool,
    test_underapproximate: Option<String>,
    test_shrink_box: Option<String>,
    test_shrink_part: Option<String>,
}

/// What of one argument's value a schedule depends on.
#[derive(Clone, Copy, Debug, PartialEq)]
enum KeyArg {
    /// A scalar: its integer value (`None` for other scalars, whose value
    /// takes no part in any range).
    Scalar(Option<i64>),
    /// A buffer: elements and bytes.
    Buffer(u64, usize),
    /// A `__local` argument: bytes.
    Local(u64),
}

fn key_arg(v: &ArgValue) -> KeyArg {
    match v {
        ArgValue::Scalar { int, .. } => KeyArg::Scalar(*int),
        ArgValue::Buffer(b) => KeyArg::Buffer(b.len(), b.as_bytes().len()),
        ArgValue::Local { bytes } => KeyArg::Local(*bytes),
    }
}

impl Key {
    fn new(
        nd: &NdRange,
        args: &KernelArgs,
        shares: &[(usize, f64)],
        options: &LaunchOptions,
    ) -> Key {
        Key {
            nd: nd.clone(),
            shares: shares.iter().map(|&(d, s)| (d, s.to_bits())).collect(),
            args: args.values().iter().map(key_arg).collect(),
            unchecked: options.unchecked,
            exact_bytes: options.exact_bytes,
            test_underapproximate: options.test_underapproximate.clone(),
            test_shrink_box: options.test_shrink_box.clone(),
            test_shrink_part: options.test_shrink_part.clone(),
        }
    }

    /// Whether a launch with these inputs has this key.
    fn matches(
        &self,
        nd: &NdRange,
        args: &KernelArgs,
        shares: &[(usize, f64)],
        options: &LaunchOptions,
    ) -> bool {
        self.nd == *nd
            && self.shares.len() == shares.len()
            && self
                .shares
                .iter()
                .zip(shares)
                .all(|(&(d, s), &(e, t))| d == e && s == t.to_bits())
            && self.args.len() == args.values().len()
            && self
                .args
                .iter()
                .zip(args.values())
                .all(|(k, v)| *k == key_arg(v))
            && self.unchecked == options.unchecked
            && self.exact_bytes == options.exact_bytes
            && self.test_underapproximate == options.test_underapproximate
            && self.test_shrink_box == options.test_shrink_box
            && self.test_shrink_part == options.test_shrink_part
    }
}

/// The last few schedules of a plan, the most recent first.
#[derive(Default)]
pub(crate) struct Schedules {
    entries: Vec<(Key, Arc<Schedule>)>,
}

impl Schedules {
    /// The schedule of a launch: the cached one when the launch's key was
    /// seen, else made (and kept when it succeeds). `args` must have been
    /// checked against the plan (`Plan::check_args`).
    pub(crate) fn get(
        plan: &mut Plan,
        nd: &NdRange,
        args: &KernelArgs,
        shares: &[(usize, f64)],
        options: &LaunchOptions,
    ) -> Result<Arc<Schedule>> {
        let entries = &mut plan.schedules.entries;
        if let Some(i) = entries
            .iter()
            .position(|(k, _)| k.matches(nd, args, shares, options))
        {
            entries[..=i].rotate_right(1);
            return Ok(entries[0].1.clone());
        }
        let s = Arc::new(make(plan, nd, args, shares, options)?);
        let entries = &mut plan.schedules.entries;
        entries.truncate(MAX_SCHEDULES - 1);
        entries.insert(0, (Key::new(nd, args, shares, options), s.clone()));
        Ok(s)
    }
}

/// Bytes a whole-buffer approach would move and the exact footprint (see
/// [`crate::RunReport::bytes_exact`]), with the remarks their counts made.
#[derive(Clone, Debug, Default)]
pub(crate) struct Footprint {
    pub(crate) whole_bytes: u64,
    pub(crate) exact: Option<u64>,
    pub(crate) notes: Vec<String>,
}

impl Footprint {
    /// The footprint of one run over `params` (see [`whole_and_exact`]).
    pub(crate) fn of(plan: &Plan, args: &KernelArgs, params: &[i64], counts: bool) -> Footprint {
        let mut notes = Vec::new();
        let (whole_bytes, exact) = whole_and_exact(plan, args, params, counts, &mut notes);
        Footprint {
            whole_bytes,
            exact,
            notes,
        }
    }
}

/// Everything about a launch that does not depend on where the buffers'
/// elements are.
pub(crate) struct Schedule {
    /// The dimension split (also the one an unsplit run reports).
    pub(crate) split_dim: u32,
    /// Work-groups along `split_dim`.
    pub(crate) n_groups: u64,
    /// The device with the largest share: an unsplit run's device.
    pub(crate) main_device: usize,
    /// The parameters of the unsplit NDRange.
    pub(crate) base: Vec<i64>,
    /// Remarks that come first in the report (devices left without work,
    /// failed assumptions).
    pub(crate) notes: Vec<String>,
    pub(crate) run: Run,
}

/// How the launch runs.
pub(crate) enum Run {
    /// Whole on `Schedule::main_device`, for this reason.
    Unsplit {
        reason: String,
        footprint: Footprint,
        /// A launch-time assumption does not hold at this launch.
        assumption_failed: bool,
    },
    Split(Split),
}

/// A split launch: each participating device's part and the glue.
pub(crate) struct Split {
    pub(crate) works: Vec<DevWork>,
    /// Per array of the plan: how its written elements come back.
    pub(crate) glue: Vec<Glue>,
    /// Bytes of each staging buffer (`DevArray::staging` indexes it).
    pub(crate) staging_len: Vec<usize>,
    /// Summed over the devices, with the notes on whole and diff-merged
    /// arrays after the counts' remarks.
    pub(crate) footprint: Footprint,
    /// The subkernel's extra arguments per device, for the allocations'
    /// places (`(base, extent)` per device and array) they were made for
    /// (`Split::extras` in `split.rs`).
    #[allow(clippy::type_complexity)]
    pub(crate) extras:
        std::sync::Mutex<Option<(Vec<Vec<(i64, u64)>>, Arc<Vec<Vec<crate::plan::ExtraValue>>>)>>,
    /// What the schedule's launches keep for the next: staging buffers,
    /// and what a launch does to buffers that start fresh (`Kept` in
    /// `split.rs`).
    pub(crate) kept: std::sync::Mutex<super::split::Kept>,
}

/// Makes the schedule of a launch (see [`Schedules::get`]). Every check
/// here fails the same way whenever the key is the same.
fn make(
    plan: &Plan,
    nd: &NdRange,
    args: &KernelArgs,
    shares: &[(usize, f64)],
    options: &LaunchOptions,
) -> Result<Schedule> {
    check_shares(&plan.runtime, shares)?;

    let split_dim = plan.kernel.split_dim.unwrap_or(0).min(nd.work_dim() - 1);
    let n_groups = nd.n_groups(split_dim);
    // the work-groups this process runs: all, or a rank's window
    let (w_lo, w_hi) = match plan.group_window {
        None => (0, n_groups),
        Some((lo, hi)) if lo <= hi && hi <= n_groups => (lo, hi),
        Some((lo, hi)) => {
            return Err(LaunchError::Window {
                kernel: plan.kernel.name.clone(),
                lo,
                hi,
                reason: format!(
                    "the ndrange has {n_groups} work-groups along dimension {split_dim}"
                ),
            })
        }
    };
    let fractions: Vec<f64> = shares.iter().map(|s| s.1).collect();
    let slices: Vec<(u64, u64)> = split_groups(w_hi - w_lo, &fractions)
        .into_iter()
        .map(|(l, h)| (l + w_lo, h + w_lo))
        .collect();
    let mut notes = Vec::new();
    let mut participants = Vec::new();
    for (&(device, share), &(lo, hi)) in shares.iter().zip(&slices) {
        if hi > lo {
            participants.push((device, lo, hi));
        } else if share > 0.0 {
            notes.push(format!(
                "device {device} gets no work-group (share {share} of {n_groups})"
            ));
        }
    }
    let main_device = shares
        .iter()
        .fold(None::<(usize, f64)>, |best, &(d, s)| match best {
            Some((_, bs)) if bs >= s => best,
            _ => Some((d, s)),
        })
        .map(|(d, _)| d)
        .unwrap_or(0);

    check_locals(plan, args, shares)?;
    let (base, run, more) = schedule_run(plan, nd, args, split_dim, &participants, options)?;
    notes.extend(more);
    if let (Some((lo, hi)), Run::Unsplit { reason, .. }) = (plan.group_window, &run) {
        return Err(LaunchError::Window {
            kernel: plan.kernel.name.clone(),
            lo,
            hi,
            reason: reason.clone(),
        });
    }
    Ok(Schedule {
        split_dim,
        n_groups,
        main_device,
        base,
        notes,
        run,
    })
}

/// The parameters of the unsplit NDRange, how the launch runs, and the
/// notes on failed assumptions, for the slices `participants` (`(label, lo,
/// hi)`: a device, or an MPI rank in [`Plan::rank_slices`]).
fn schedule_run(
    plan: &Plan,
    nd: &NdRange,
    args: &KernelArgs,
    split_dim: u32,
    participants: &[(usize, u64, u64)],
    options: &LaunchOptions,
) -> Result<(Vec<i64>, Run, Vec<String>)> {
    let mut notes = Vec::new();
    let (base, lo_pos, hi_pos) = plan.base_params(nd, args, split_dim)?;
    // A total range past its buffer: without the guard (off, or unable to
    // check the kernel), the buffer is too small (nothing else would catch
    // an access past it); with it, the range may be the analysis'
    // over-approximation (a guard it could not model), so the array goes
    // whole like one whose assumption fails, and the guard catches an
    // access that does leave the buffer.
    let beyond = totals_beyond(plan, &base, args)?;
    if let (false, Some(first)) = (guarded(plan, options), beyond.first()) {
        return Err(first.too_small());
    }
    let slice_params = |lo: u64, hi: u64| {
        let mut p = base.clone();
        lo_pos.iter().for_each(|&(i, m)| p[i] = lo as i64 * m);
        hi_pos.iter().for_each(|&(i, m)| p[i] = hi as i64 * m);
        p
    };

    // A range past its buffer (with the guard, see above) sends that array
    // whole, merged element by element where written, as a slice's range
    // past it does (`device_work`): the other arrays' ranges still hold.
    // Launch-time assumptions: one that fails sends its array whole (every
    // array where it names none); a written array's runs the kernel unsplit.
    let mut all_whole = false;
    let mut whole_arrays: Vec<u32> = Vec::new();
    let mut failed = None;
    let mut assumption_failed = false;
    for b in beyond {
        let a = b.array;
        notes.push(format!(
            "the analyzed range of array '{}', {}..={}, passes its {} elements; it is transferred whole{}",
            a.name,
            b.lower,
            b.upper,
            b.len,
            if a.writes { " and merged element by element" } else { "" }
        ));
        whole_arrays.push(a.arg_index);
    }
    for (desc, text, cond, array) in &plan.assumptions {
        let mut holds = true;
        let points = std::iter::once(base.clone())
            .chain(participants.iter().map(|&(_, lo, hi)| slice_params(lo, hi)));
        for p in points {
            holds &= cond.eval(&p).map_err(|e| LaunchError::Eval {
                kernel: plan.kernel.name.clone(),
                what: format!("assumption '{desc}'"),
                message: e.to_string(),
            })?;
        }
        if !holds {
            assumption_failed = true;
            let read_only =
                array.and_then(|i| plan.arrays.iter().find(|a| a.arg_index == i && !a.writes));
            match read_only {
                Some(a) => {
                    notes.push(format!(
                        "assumption does not hold: {desc} ({text}); array '{}' is transferred whole",
                        a.name
                    ));
                    whole_arrays.push(a.arg_index);
                }
                None => {
                    notes.push(format!(
                        "assumption does not hold: {desc} ({text}); every array is transferred whole"
                    ));
                    all_whole = true;
                    failed.get_or_insert_with(|| {
                        format!("a launch-time assumption does not hold: {desc}")
                    });
                }
            }
        }
    }
    let mut reason = plan.unsplit_reason.clone();
    if reason.is_none() && !options.unchecked {
        if let Err(why) = &plan.guard {
            reason = Some(format!(
                "{why}; it runs unsplit (`clpart run --unchecked` splits it without the guard)"
            ));
        }
    }
    if reason.is_none() && all_whole && plan.arrays.iter().any(|a| a.writes) {
        reason = failed;
    }

    let run = match reason {
        Some(reason) => Run::Unsplit {
            reason,
            footprint: Footprint::of(plan, args, &base, options.exact_bytes),
            assumption_failed,
        },
        None => {
            let works = participants
                .iter()
                .map(|&(device, lo, hi)| {
                    device_work(
                        plan,
                        args,
                        device,
                        lo,
                        hi,
                        slice_params(lo, hi),
                        Whole {
                            all: all_whole,
                            arrays: &whole_arrays,
                        },
                        options,
                    )
                })
                .collect::<Result<Vec<_>>>()?;
            Run::Split(split(plan, args, works, options))
        }
    };
    Ok((base, run, notes))
}

impl Plan {
    /// The sets of each work-group window `windows` (`[lo, hi)` along the
    /// split dimension; disjoint, empty ones allowed) of a launch, as the
    /// launcher would send them to devices with those slices: an MPI rank
    /// is a holder like a device. `Unsplit` when the launch
    /// would not split (the plan's reasons, the guard, a failed
    /// launch-time assumption with writes) or when a written array would
    /// need a diff-merge (written sets that overlap, or a whole array):
    /// ranks glue only disjoint written sets. `unchecked`: the guard is off
    /// (see [`LaunchOptions::unchecked`]).
    pub fn rank_slices(
        &self,
        nd: &NdRange,
        args: &KernelArgs,
        windows: &[(u64, u64)],
        unchecked: bool,
    ) -> Result<RankSlices> {
        nd.validate()?;
        self.check_args(args)?;
        let split_dim = self.kernel.split_dim.unwrap_or(0).min(nd.work_dim() - 1);
        let n_groups = nd.n_groups(split_dim);
        let mut participants = Vec::new();
        for (i, &(lo, hi)) in windows.iter().enumerate() {
            if lo > hi || hi > n_groups {
                return Err(LaunchError::Window {
                    kernel: self.kernel.name.clone(),
                    lo,
                    hi,
                    reason: format!(
                        "the ndrange has {n_groups} work-groups along dimension {split_dim}"
                    ),
                });
            }
            if hi > lo {
                participants.push((i, lo, hi));
            }
        }
        let options = LaunchOptions {
            unchecked,
            exact_bytes: false,
            ..LaunchOptions::default()
        };
        let (_, run, _) = schedule_run(self, nd, args, split_dim, &participants, &options)?;
        let split = match run {
            Run::Unsplit { reason, .. } => return Ok(RankSlices::Unsplit(reason)),
            Run::Split(s) => s,
        };
        if let Some(ai) = split.glue.iter().position(|g| g.on_host()) {
            return Ok(RankSlices::Unsplit(format!(
                "array '{}' would be glued element by element ({}), which ranks do not do",
                self.arrays[ai].name,
                match split.glue[ai] {
                    Glue::Reduce(r) => format!("a {} of the copies", r.op),
                    Glue::Checked => "checked for conflicting writes".to_string(),
                    _ => "diff-merge".to_string(),
                }
            )));
        }
        let empty = || {
            self.arrays
                .iter()
                .map(|a| SliceSets {
                    arg_index: a.arg_index,
                    name: a.name.clone(),
                    elem_size: a.elem_size,
                    need: Runs::new(),
                    write: Runs::new(),
                })
                .collect::<Vec<_>>()
        };
        let mut out: Vec<Vec<SliceSets>> = windows.iter().map(|_| empty()).collect();
        for w in &split.works {
            for (s, da) in out[w.device].iter_mut().zip(&w.arrays) {
                s.need = da.read_set.union(&da.prefill);
                s.write = da.write_set.clone();
            }
        }
        Ok(RankSlices::Split(out))
    }
}

/// The glue of a split: each written array is left on the devices when
/// their written sets are disjoint, else merged on the host through
/// staging (every element of the write ranges then prefilled); and the
/// footprint with the report's notes.
fn split(
    plan: &Plan,
    args: &KernelArgs,
    mut works: Vec<DevWork>,
    options: &LaunchOptions,
) -> Split {
    let mut glue = vec![Glue::Direct; plan.arrays.len()];
    let mut staging_len = Vec::new();
    for (ai, a) in plan.arrays.iter().enumerate() {
        if !a.writes {
            continue;
        }
        let any_whole = works.iter().any(|w| w.arrays[ai].whole);
        let mut seen = Runs::new();
        let mut disjoint = true;
        for w in &works {
            let ws = &w.arrays[ai].write_set;
            disjoint &= !seen.overlaps(ws);
            seen = seen.union(ws);
        }
        if let Some(r) = a.reduction {
            glue[ai] = Glue::Reduce(r);
        } else if (any_whole || !disjoint) && a.checked {
            glue[ai] = Glue::Checked;
        } else if any_whole || !disjoint {
            glue[ai] = Glue::DiffMerge;
        }
        if glue[ai].on_host() {
            for w in works.iter_mut() {
                let da = &mut w.arrays[ai];
                if let Some((l, u)) = da.write_r {
                    da.staging = Some(staging_len.len());
                    staging_len.push(((u - l + 1) as u64 * a.elem_size) as usize);
                    // The merge compares the write set's elements with the
                    // host's original (`split::outputs::merge`), each of which the
                    // device holds first.
                    da.prefill = da.write_set.clone();
                }
            }
        }
    }
    let mut footprint = Footprint {
        whole_bytes: 0,
        exact: Some(0),
        notes: Vec::new(),
    };
    for w in &works {
        let (wb, ex) = whole_and_exact(
            plan,
            args,
            &w.params,
            options.exact_bytes,
            &mut footprint.notes,
        );
        footprint.whole_bytes += wb;
        footprint.exact = footprint.exact.zip(ex).map(|(a, b)| a + b);
    }
    for (ai, a) in plan.arrays.iter().enumerate() {
        if let Some(r) = &a.whole_reason {
            footprint
                .notes
                .push(format!("array '{}' is transferred whole: {r}", a.name));
        }
        match glue[ai] {
            Glue::DiffMerge if a.writes => footprint.notes.push(format!(
                "array '{}' is glued element by element (diff-merge)",
                a.name
            )),
            Glue::Reduce(r) => footprint.notes.push(format!(
                "array '{}' is glued as the {} of the devices' copies (atomics)",
                a.name, r.op
            )),
            Glue::Checked => footprint.notes.push(format!(
                "array '{}' is glued element by element, checked for conflicting writes",
                a.name
            )),
            _ => {}
        }
    }
    Split {
        works,
        glue,
        staging_len,
        footprint,
        extras: std::sync::Mutex::new(None),
        kept: std::sync::Mutex::default(),
    }
}

/// Checks the shares: non-empty, each in [0, 1], summing to 1 within 1e-6,
/// known devices, none twice.
fn check_shares(runtime: &Runtime, shares: &[(usize, f64)]) -> Result<()> {
    let text = shares
        .iter()
        .map(|(d, s)| format!("{d}:{s}"))
        .collect::<Vec<_>>()
        .join(",");
    let err = |message: String| LaunchError::Shares { message };
    if shares.is_empty() {
        return Err(err("no shares given (write them as 0:0.86,1:0.14)".into()));
    }
    for &(d, s) in shares {
        runtime.device(d)?;
        if !s.is_finite() || !(0.0..=1.0 + 1e-6).contains(&s) {
            return Err(err(format!(
                "share '{s}' of device {d} is not between 0 and 1"
            )));
        }
    }
    crate::ndrange::check_shares(shares, "device").map_err(|e| err(format!("'{text}': {e}")))
}

/// Evaluates a range; `None` when it is empty.
fn eval_range(
    plan: &Plan,
    r: &BoundRange,
    what: &str,
    array: &str,
    params: &[i64],
) -> Result<Option<(i64, i64)>> {
    let v = r.eval(params).map_err(|e| LaunchError::Eval {
        kernel: plan.kernel.name.clone(),
        what: format!("{what} of array '{array}'"),
        message: e.to_string(),
    })?;
    Ok(v.filter(|(l, u)| l <= u))
}

/// Most runs a box's element set may have before the launcher uses its
/// linear hull instead.
const MAX_BOX_RUNS: usize = 1 << 20;

/// The elements of an inclusive range (none for `None`).
pub(crate) fn range_runs(r: Option<(i64, i64)>) -> Runs {
    r.map_or_else(Runs::new, |(l, u)| Runs::interval(l, u))
}

/// One array on one device.
pub(crate) struct DevArray {
    /// Inclusive element range the device buffer must hold (`None`: the
    /// slice does not touch the array).
    pub(crate) cover: Option<(i64, i64)>,
    /// Whether the whole array is on the device.
    pub(crate) whole: bool,
    /// Inclusive element range the slice reads (the guard's read window;
    /// with boxes, the read box's linear hull, inside the 1-D read range).
    pub(crate) read_r: Option<(i64, i64)>,
    /// Inclusive element range the slice may write (the guard's write
    /// window; with boxes, the write box's linear hull).
    pub(crate) write_r: Option<(i64, i64)>,
    /// The elements the slice reads: they must be valid on the device.
    pub(crate) read_set: Runs,
    /// The elements the device holds as written after the launch.
    pub(crate) write_set: Runs,
    /// Elements of `write_set` that must hold their current values before
    /// the kernel runs (writes that may not happen).
    pub(crate) prefill: Runs,
    /// Index into the staging buffers, when the range comes back through one.
    pub(crate) staging: Option<usize>,
    /// The slice's boxes (`ArrayPlan::slice_boxes`), absolute
    /// components: present only where the subkernel checks them, and the
    /// guard does (`split_window`); the read and write sets are then the
    /// boxes' runs.
    pub(crate) boxes: Option<BoxWindow>,
    /// For an array merged with the conflict check ([`Glue::Checked`]):
    /// the elements the slice may read, which no other device may change.
    pub(crate) checked_read: Runs,
}

/// One device's part of a split launch.
pub(crate) struct DevWork {
    pub(crate) device: usize,
    pub(crate) lo: u64,
    pub(crate) hi: u64,
    pub(crate) params: Vec<i64>,
    pub(crate) arrays: Vec<DevArray>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Glue {
    /// Left on the devices that wrote it (their written sets are disjoint).
    Direct,
    /// Through staging, elements that differ from the original.
    DiffMerge,
    /// Through staging, whole copies that each device updated from the
    /// original by atomics, merged by the reduction ([`crate::reduce`]).
    Reduce(Reduction),
    /// Through staging, elements that differ from the original, after the
    /// run-time conflict check ([`crate::conflict`]).
    Checked,
}

impl Glue {
    /// Merged on the host from staged copies (the devices' copies are
    /// then distrusted).
    pub(crate) fn on_host(self) -> bool {
        self != Glue::Direct
    }
}

/// Whether the launch's runs check their accesses (the guard is on and can
/// check this kernel).
fn guarded(plan: &Plan, options: &LaunchOptions) -> bool {
    !options.unchecked && plan.guard.is_ok()
}

/// A bounded array whose analyzed range does not lie inside its host buffer.
struct Beyond<'p> {
    array: &'p ArrayPlan,
    lower: i64,
    upper: i64,
    len: u64,
}

impl Beyond<'_> {
    /// The error of a launch that no guard checks.
    fn too_small(&self) -> LaunchError {
        LaunchError::BufferTooSmall {
            array: self.array.name.clone(),
            lower: self.lower,
            upper: self.upper,
            len: self.len,
        }
    }
}

/// The bounded arrays whose total range does not lie inside the host buffer.
fn totals_beyond<'p>(plan: &'p Plan, base: &[i64], args: &KernelArgs) -> Result<Vec<Beyond<'p>>> {
    let mut out = Vec::new();
    for a in &plan.arrays {
        let (Some(total), None) = (&a.total, &a.whole_reason) else {
            continue;
        };
        let len = args.buffer_at(a.arg_index).map_or(0, |b| b.len());
        if let Some((l, u)) = eval_range(plan, total, "the total range", &a.name, base)? {
            if l < 0 || u as i128 >= len as i128 {
                out.push(Beyond {
                    array: a,
                    lower: l,
                    upper: u,
                    len,
                });
            }
        }
    }
    Ok(out)
}

/// The arrays a launch sends whole because a launch-time assumption failed:
/// all, or these (argument indices).
#[derive(Clone, Copy)]
struct Whole<'w> {
    all: bool,
    arrays: &'w [u32],
}

/// The ranges of every array for one device's slice.
#[allow(clippy::too_many_arguments)]
fn device_work(
    plan: &Plan,
    args: &KernelArgs,
    device: usize,
    lo: u64,
    hi: u64,
    params: Vec<i64>,
    whole_at_launch: Whole<'_>,
    options: &LaunchOptions,
) -> Result<DevWork> {
    let mut arrays = Vec::with_capacity(plan.arrays.len());
    for a in &plan.arrays {
        let len = args.buffer_at(a.arg_index).map_or(0, |b| b.len()) as i64;
        let whole_range = (0, len - 1);
        let mut whole = whole_at_launch.all
            || whole_at_launch.arrays.contains(&a.arg_index)
            || a.whole_reason.is_some();
        // A bounded array without a slice range: no slice touches it (the
        // guard checks that), so nothing moves and no memory is held.
        let untouched = !whole && a.slice.is_none();
        let (cover, read_r, write_r) = if untouched {
            (None, None, None)
        } else if whole {
            (
                (len > 0).then_some(whole_range),
                a.reads.then_some(whole_range),
                a.writes.then_some(whole_range),
            )
        } else {
            let slice = a.slice.as_ref().expect("checked above");
            let hull = eval_range(plan, slice, "the slice range", &a.name, &params)?;
            let part =
                |r: &Option<BoundRange>, used: bool, what: &str| -> Result<Option<(i64, i64)>> {
                    if !used {
                        return Ok(None);
                    }
                    match r {
                        Some(r) => eval_range(plan, r, what, &a.name, &params),
                        None => Ok(hull),
                    }
                };
            let read_r = part(&a.read, a.reads, "the read range")?;
            let write_r = part(&a.write, a.writes, "the write range")?;
            // the buffer covers the hull and, defensively, the read and write ranges
            let cover = [hull, read_r, write_r]
                .into_iter()
                .flatten()
                .reduce(|x, y| (x.0.min(y.0), x.1.max(y.1)));
            match cover {
                // past the buffer without the guard: too small
                Some((l, u)) if (l < 0 || u >= len) && !guarded(plan, options) => {
                    let beyond = Beyond {
                        array: a,
                        lower: l,
                        upper: u,
                        len: len as u64,
                    };
                    return Err(beyond.too_small());
                }
                // with it, the slice's ranges may be the analysis'
                // over-approximation: the array is whole on this device
                // (merged element by element where written) and the guard
                // catches an access that does leave the buffer
                Some((l, u)) if l < 0 || u >= len => {
                    whole = true;
                    (
                        (len > 0).then_some(whole_range),
                        a.reads.then_some(whole_range),
                        a.writes.then_some(whole_range),
                    )
                }
                _ => (cover, read_r, write_r),
            }
        };
        // The writes fill the write range when proved for all parameters, or
        // when the slice's written-element count equals the range's length.
        let fills = a.verdict.as_ref().is_some_and(|v| v.fills_hull)
            || match (&a.written_count, write_r) {
                (Some(c), Some((l, u))) => c.eval(&params).is_ok_and(|n| n == u - l + 1),
                _ => false,
            };
        let mut boxes = if whole {
            None
        } else {
            a.slice_boxes(&params, read_r, write_r)
                .map_err(|e| LaunchError::Eval {
                    kernel: plan.kernel.name.clone(),
                    what: format!("the boxes of array '{}'", a.name),
                    message: e.to_string(),
                })?
        };
        // A box over literal strides spanning every dimension k >= 1 whole
        // (`a[2*i]` and `a[2*i + 1]`: rows of 2) holds the elements of its
        // 1-D window: without it the subkernel checks no box (its
        // per-group test proves literal-extent boxes, but only subscripts
        // that split by the extent). Kept where it is what proves the
        // writes exact.
        if a.literal_strides
            && boxes.as_ref().is_some_and(|b| {
                b.strides.len() > 1
                    && b.spans_inner_dims()
                    && (b.write.is_none() || fills || !b.write_exact)
            })
        {
            boxes = None;
        }
        let read_r = match (read_r, &options.test_underapproximate) {
            (Some((l, u)), Some(n)) if *n == a.name && u > l => Some((l, u - 1)),
            (r, _) => r,
        };
        let [read_w, write_w] = guard_windows(boxes.as_ref(), read_r, write_r);
        // (after the windows: only the box check can catch it)
        if let (Some(b), Some(n)) = (&mut boxes, &options.test_shrink_box) {
            if let Some((l, u)) = b
                .read
                .as_mut()
                .and_then(|r| r.last_mut())
                .filter(|_| *n == a.name)
            {
                *u -= i64::from(*u > *l);
            }
        }
        // One read part one row short (after the windows and the read box:
        // only the part check can catch it).
        if let (Some(b), Some(n)) = (&mut boxes, &options.test_shrink_part) {
            if *n == a.name {
                if let Some(p) = b.read_parts.iter_mut().max_by_key(|p| p[0].1 - p[0].0) {
                    p[0].1 -= i64::from(p[0].1 > p[0].0);
                }
            }
        }
        // The sets: a box's runs (the guard checks the box), else the window.
        let box_runs = |bx: Option<&Vec<(i64, i64)>>, window: Option<(i64, i64)>| -> Option<Runs> {
            match (&boxes, bx) {
                (Some(b), Some(bx)) => Some(
                    Runs::from_box(0, bx, &b.strides, MAX_BOX_RUNS)?.intersect(&range_runs(window)),
                ),
                _ => None,
            }
        };
        // With read parts, the union of their runs.
        let parts_runs = || -> Option<Runs> {
            let b = boxes.as_ref()?;
            let mut out: Option<Runs> = None;
            for p in &b.read_parts {
                let r = box_runs(Some(p), read_w)?;
                out = Some(match out {
                    None => r,
                    Some(o) => o.union(&r),
                });
            }
            out
        };
        let read_set = parts_runs()
            .or_else(|| box_runs(boxes.as_ref().and_then(|b| b.read.as_ref()), read_w))
            .unwrap_or_else(|| range_runs(read_w));
        let write_box = box_runs(boxes.as_ref().and_then(|b| b.write.as_ref()), write_w);
        // Written exactly: the 1-D window filled, or the box (when its runs
        // are the write set) proved filled, for all parameter values or in
        // this launch: the slice's written-element count (every write a
        // must-write) equals the box's element count, and the writes lie in
        // the box (aos_to_soa's four rows, at any global offset).
        let box_filled = |wb: &Runs| match &a.written_count {
            Some(c) => c
                .eval(&params)
                .is_ok_and(|n| n >= 0 && n as u64 == wb.n_elems()),
            None => false,
        };
        let exact = fills
            || write_box
                .as_ref()
                .is_some_and(|wb| boxes.as_ref().is_some_and(|b| b.write_exact) || box_filled(wb));
        let write_set = write_box.unwrap_or_else(|| range_runs(write_w));
        let prefill = if whole || !exact {
            write_set.clone()
        } else {
            Runs::new()
        };
        // What the conflict check compares with the other devices' changes:
        // the slice's analyzed reads, also where the array is whole here.
        let checked_read = match (a.checked && a.reads, whole, &a.read) {
            (false, ..) => Runs::new(),
            (true, false, _) => read_set.clone(),
            (true, true, Some(r)) => {
                range_runs(eval_range(plan, r, "the read range", &a.name, &params)?)
            }
            (true, true, None) => range_runs((len > 0).then_some(whole_range)),
        };
        arrays.push(DevArray {
            cover,
            whole,
            read_r: read_w,
            write_r: write_w,
            read_set,
            write_set,
            prefill,
            staging: None,
            boxes,
            checked_read,
        });
    }
    Ok(DevWork {
        device,
        lo,
        hi,
        params,
        arrays,
    })
}

/// Bytes a whole-buffer approach moves for one device, and (when `counts`)
/// the exact bytes of its slice (None when a count is missing or not asked
/// for).
fn whole_and_exact(
    plan: &Plan,
    args: &KernelArgs,
    params: &[i64],
    counts: bool,
    notes: &mut Vec<String>,
) -> (u64, Option<u64>) {
    let mut whole = 0u64;
    let mut exact = counts.then_some(0u64);
    for info in args.infos() {
        let Some(b) = args.buffer_at(info.index) else {
            continue;
        };
        let bytes = b.as_bytes().len() as u64;
        match plan.arrays.iter().find(|a| a.arg_index == info.index) {
            Some(a) => {
                let dirs = a.reads as u64 + a.writes as u64;
                whole += bytes * dirs;
                exact = match (&a.count_slice, exact) {
                    (Some(c), Some(acc)) => match c.eval(params) {
                        Ok(n) => {
                            // A read-write array whose writes are all
                            // must-writes moves its footprint in and its
                            // written elements back: counted as the
                            // footprint (at least the reads) plus the
                            // written count, not the footprint twice.
                            let written = match (a.reads && a.writes, &a.written_count) {
                                (true, Some(w)) => w.eval(params).ok(),
                                _ => None,
                            };
                            Some(
                                acc + match written {
                                    Some(w) => (n.max(0) + w.max(0)) as u64 * a.elem_size,
                                    None => n.max(0) as u64 * a.elem_size * dirs,
                                },
                            )
                        }
                        Err(e) => {
                            notes.push(format!(
                                "count of array '{}' cannot be evaluated: {e}",
                                a.name
                            ));
                            None
                        }
                    },
                    _ => None,
                };
            }
            None => {
                whole += bytes
                    * if info.kind == ArgKind::GlobalBuffer {
                        2
                    } else {
                        1
                    };
                exact = None;
            }
        }
    }
    (whole, exact)
}

/// `__local` arguments must fit every device's local memory (with the
/// guard's sink).
fn check_locals(plan: &Plan, args: &KernelArgs, shares: &[(usize, f64)]) -> Result<()> {
    for (info, v) in args.infos().iter().zip(args.values()) {
        let ArgValue::Local { bytes } = v else {
            continue;
        };
        let need = *bytes + local_sink_bytes(info.elem_size);
        for &(d, _) in shares {
            let dev = plan.runtime.device(d)?;
            if dev.local_mem_bytes > 0 && need > dev.local_mem_bytes {
                return Err(LaunchError::LocalTooLarge {
                    name: info.name.clone(),
                    bytes: *bytes,
                    device: dev.label(),
                    limit: dev.local_mem_bytes,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::HostBuffer;
    use crate::elem::ElemType;
    use ranges_format::ArgInfo;

    fn info(index: u32, name: &str, kind: ArgKind, ty: &str, size: u32) -> ArgInfo {
        ArgInfo {
            index,
            name: name.into(),
            kind,
            elem_type: ty.into(),
            elem_size: size,
            fields: Vec::new(),
        }
    }

    fn args(n_elems: u64, n: i32, local: u64) -> KernelArgs {
        let infos = [
            info(0, "a", ArgKind::GlobalBuffer, "float", 4),
            info(1, "n", ArgKind::Scalar, "int", 4),
            info(2, "x", ArgKind::Scalar, "float", 4),
            info(3, "t", ArgKind::LocalBuffer, "float", 4),
        ];
        let a = HostBuffer::zeros(ElemType::parse("float", 4), n_elems).unwrap();
        let values = vec![
            ArgValue::Buffer(a),
            ArgValue::Scalar {
                bytes: n.to_le_bytes().to_vec(),
                int: Some(n as i64),
            },
            ArgValue::Scalar {
                bytes: 1.5f32.to_le_bytes().to_vec(),
                int: None,
            },
            ArgValue::Local { bytes: local },
        ];
        KernelArgs::from_values("k", &infos, values).unwrap()
    }

    #[test]
    fn a_key_matches_exactly_the_launches_it_was_made_for() {
        let nd = NdRange::new(&[64], &[8]).unwrap();
        let shares = [(0, 0.5), (1, 0.5)];
        let opts = LaunchOptions::default();
        let key = Key::new(&nd, &args(64, 64, 32), &shares, &opts);
        assert!(key.matches(&nd, &args(64, 64, 32), &shares, &opts));
        // the buffers' contents and non-integer scalars take no part
        let mut other_data = args(64, 64, 32);
        other_data.buffer_at_mut(0).unwrap().as_bytes_mut()[0] = 7;
        assert!(key.matches(&nd, &other_data, &shares, &opts));
        // everything a schedule depends on does
        assert!(!key.matches(
            &NdRange::new(&[64], &[16]).unwrap(),
            &args(64, 64, 32),
            &shares,
            &opts
        ));
        assert!(!key.matches(
            &NdRange::with_offset(&[64], &[8], &[8]).unwrap(),
            &args(64, 64, 32),
            &shares,
            &opts
        ));
        assert!(!key.matches(&nd, &args(65, 64, 32), &shares, &opts));
        assert!(!key.matches(&nd, &args(64, 63, 32), &shares, &opts));
        assert!(!key.matches(&nd, &args(64, 64, 64), &shares, &opts));
        assert!(!key.matches(&nd, &args(64, 64, 32), &[(0, 0.5), (1, 0.5000001)], &opts));
        assert!(!key.matches(&nd, &args(64, 64, 32), &[(1, 0.5), (0, 0.5)], &opts));
        assert!(!key.matches(&nd, &args(64, 64, 32), &[(0, 1.0)], &opts));
        for changed in [
            LaunchOptions {
                unchecked: true,
                ..Default::default()
            },
            LaunchOptions {
                exact_bytes: false,
                ..Default::default()
            },
            LaunchOptions {
                test_underapproximate: Some("a".into()),
                ..Default::default()
            },
            LaunchOptions {
                test_shrink_box: Some("a".into()),
                ..Default::default()
            },
        ] {
            assert!(
                !key.matches(&nd, &args(64, 64, 32), &shares, &changed),
                "{changed:?}"
            );
        }
        // options that the schedule does not depend on
        let same = LaunchOptions {
            verify: true,
            verify_device: Some(1),
            mem_cap_bytes: Some(1),
            ..Default::default()
        };
        assert!(key.matches(&nd, &args(64, 64, 32), &shares, &same));
    }
}
