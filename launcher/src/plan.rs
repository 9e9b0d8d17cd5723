//! [`Plan`]: a kernel's ranges with every expression parsed and bound once,
//! plus the built programs and kernel objects per device.
//!
//! A plan is made from a range file entry, which is untrusted: it is
//! validated and bound once (`KernelRanges::validate_and_bind`), and the
//! launcher evaluates what was bound, never the text again. Its launch-time
//! assumptions are checked at every schedule, at the unsplit NDRange and at
//! each participant's slice (`launch/schedule.rs`): one that names its array
//! and fails sends that array whole when the kernel only reads it and runs
//! the kernel unsplit when it writes it; one that names no array sends every
//! array whole. A launch may have more dimensions than the kernel was
//! analyzed for when the extra trailing ones hold one work-item at offset 0
//! (`NdRange::fits_work_dim`).
//!
//! Programs are built per device through the [`Runtime`]'s cache:
//! [`Plan::prepare`] builds the subkernel and the original kernel on each
//! device, [`Plan::prepare_split`] only what a split launch runs (the
//! subkernel; the original too where the kernel never splits), the devices'
//! builds side by side. For MPI ranks, [`Plan::set_group_window`] restricts
//! launches to a window of the split dimension's work-groups and
//! [`Plan::rank_slices`] says what each window needs; no MPI here.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use opencl3::kernel::Kernel;
use ranges_format::{
    ArgKind, ArrayStatus, BoundBoxes, BoundCondition, BoundCount, BoundRange, ExprError,
    ExtraArgMeaning, KernelRanges, Mode, ParamSource, RangeFile, WriteVerdict,
};

use crate::args::KernelArgs;
use crate::buffer::ArgValue;
use crate::elem::ElemType;
use crate::error::{cl_err, LaunchError, Result};
use crate::exec::ArgMemo;
use crate::launch::Schedules;
use crate::ndrange::NdRange;
use crate::runtime::{DeviceCtx, Runtime};

/// Positions in the parameter vector that take a slice bound, each with its
/// multiplier (1 for work-groups, the local size for work-items).
pub(crate) type SlicePositions = Vec<(usize, i64)>;

/// One array of the kernel with its bound expressions.
pub(crate) struct ArrayPlan {
    pub(crate) arg_index: u32,
    pub(crate) name: String,
    pub(crate) elem_size: u64,
    pub(crate) reads: bool,
    pub(crate) writes: bool,
    /// `Some(reason)` for arrays the analysis could not bound.
    pub(crate) whole_reason: Option<String>,
    pub(crate) total: Option<BoundRange>,
    pub(crate) slice: Option<BoundRange>,
    pub(crate) read: Option<BoundRange>,
    pub(crate) write: Option<BoundRange>,
    pub(crate) count_slice: Option<BoundCount>,
    /// Count of the elements a slice writes (all must-writes), see
    /// [`WriteVerdict::written_count`].
    pub(crate) written_count: Option<BoundCount>,
    pub(crate) verdict: Option<WriteVerdict>,
    /// The slice's per-dimension boxes of a delinearized array
    /// ([`ranges_format::Boxes`]).
    pub(crate) boxes: Option<BoundBoxes>,
    /// Every stride of the boxes is an integer literal (`["1000", "1"]`:
    /// a literal width, whose box the subkernel's per-group test cannot
    /// prove; see [`BoxWindow::spans_inner_dims`]).
    pub(crate) literal_strides: bool,
    /// The device buffer's first element is a multiple of this: the kernel
    /// views the array through elements this many times wider
    /// ([`ranges_format::Subkernel::aligned`]); 1 otherwise.
    pub(crate) align: u64,
}

impl ArrayPlan {
    /// The array's boxes for one slice (`params`), given the slice's 1-D read
    /// and write ranges (`read_r`, `write_r`, inclusive): `None` when the
    /// array has none, or when they cannot serve the guard's box check in
    /// this launch (a stride that is not positive or does not divide the one
    /// before it, a box missing for a direction the array uses, a component
    /// outside `[0, extent)`, a box whose linear hull leaves the 1-D range).
    /// The guard then checks the 1-D windows only, and transfers must cover
    /// the hull.
    pub(crate) fn slice_boxes(
        &self,
        params: &[i64],
        read_r: Option<(i64, i64)>,
        write_r: Option<(i64, i64)>,
    ) -> std::result::Result<Option<BoxWindow>, ExprError> {
        let Some(b) = &self.boxes else {
            return Ok(None);
        };
        let mut strides = Vec::with_capacity(b.strides.len());
        for s in &b.strides {
            match s.eval(params)? {
                Some(v) if v > 0 => strides.push(v),
                _ => return Ok(None),
            }
        }
        // (one stride: the read runs of a 1-D array)
        if strides.is_empty() || strides.last() != Some(&1) {
            return Ok(None);
        }
        let mut extents = vec![0i64; strides.len()];
        for k in 1..strides.len() {
            if strides[k - 1] % strides[k] != 0 {
                return Ok(None);
            }
            extents[k] = strides[k - 1] / strides[k];
        }
        let read = match eval_box(&b.read, read_r, params, &strides, &extents)? {
            BoxEval::Off => return Ok(None),
            BoxEval::Unused => None,
            BoxEval::Box(bx) => Some(bx),
        };
        let write = match eval_box(&b.write, write_r, params, &strides, &extents)? {
            BoxEval::Off => return Ok(None),
            BoxEval::Unused => None,
            BoxEval::Box(bx) => Some(bx),
        };
        let read_parts = match &read {
            Some(hull) => eval_parts(&b.read_parts, hull, params, &extents)?,
            None => Vec::new(),
        };
        Ok(Some(BoxWindow {
            strides,
            extents,
            read,
            write,
            write_exact: b.write_exact,
            read_parts,
        }))
    }
}

/// The read parts of a slice inside its read box `hull`: the
/// parts that are not empty in this launch (a part whose bounds no piece
/// defines, or lower above upper, holds no read); none at all (the read
/// box serves as the one part) when a part leaves the read box or
/// `[0, extent)`, or when no part is left.
fn eval_parts(
    parts: &[Vec<BoundRange>],
    hull: &BoxBounds,
    params: &[i64],
    extents: &[i64],
) -> std::result::Result<Vec<BoxBounds>, ExprError> {
    let mut out = Vec::with_capacity(parts.len());
    'part: for p in parts {
        if p.len() != hull.len() {
            return Ok(Vec::new());
        }
        let mut bx = Vec::with_capacity(p.len());
        for (k, r) in p.iter().enumerate() {
            match r.eval(params)? {
                Some((lo, hi)) if lo <= hi => {
                    let (hl, hh) = hull[k];
                    if lo < hl || hi > hh || (k > 0 && (lo < 0 || hi >= extents[k])) {
                        return Ok(Vec::new());
                    }
                    bx.push((lo, hi));
                }
                _ => continue 'part,
            }
        }
        out.push(bx);
    }
    Ok(out)
}

/// An inclusive element or component range.
pub(crate) type Interval = (i64, i64);

/// Inclusive bounds, per dimension, of one box.
pub(crate) type BoxBounds = Vec<(i64, i64)>;

/// One box of a slice (see [`ArrayPlan::slice_boxes`]).
enum BoxEval {
    /// The slice does not access the array this way.
    Unused,
    /// The box cannot serve the check: no box check in this launch.
    Off,
    Box(BoxBounds),
}

/// A box for a slice with 1-D range `range` (inclusive): every dimension's
/// bounds defined and non-empty, dimensions `k >= 1` inside `[0,
/// extents[k])`, the linear hull inside `range`.
fn eval_box(
    bx: &Option<Vec<BoundRange>>,
    range: Option<(i64, i64)>,
    params: &[i64],
    strides: &[i64],
    extents: &[i64],
) -> std::result::Result<BoxEval, ExprError> {
    let Some((l, u)) = range else {
        return Ok(BoxEval::Unused);
    };
    let Some(bx) = bx.as_ref().filter(|b| b.len() == strides.len()) else {
        return Ok(BoxEval::Off);
    };
    let mut out = Vec::with_capacity(bx.len());
    for (k, r) in bx.iter().enumerate() {
        match r.eval(params)? {
            Some((lo, hi)) if lo <= hi && (k == 0 || (lo >= 0 && hi < extents[k])) => {
                out.push((lo, hi))
            }
            _ => return Ok(BoxEval::Off),
        }
    }
    // The box and the 1-D range both hold the footprint; what moves is
    // their intersection. Over literal strides the range is the tighter one
    // at the ends (a partial last row), so the box may reach past it.
    Ok(match box_hull(strides, &out) {
        Some((hl, hu)) if hl <= u && hu >= l => BoxEval::Box(out),
        _ => BoxEval::Off,
    })
}

/// The linear hull `(sum_k strides[k] * lo_k, sum_k strides[k] * hi_k)` of a
/// box; `None` on overflow.
pub(crate) fn box_hull(strides: &[i64], bx: &[(i64, i64)]) -> Option<(i64, i64)> {
    let mut lo = 0i64;
    let mut hi = 0i64;
    for (s, (l, h)) in strides.iter().zip(bx) {
        lo = lo.checked_add(s.checked_mul(*l)?)?;
        hi = hi.checked_add(s.checked_mul(*h)?)?;
    }
    Some((lo, hi))
}

/// The guard's read and write windows for a slice's 1-D ranges (inclusive):
/// the ranges themselves, or with boxes each box's linear hull inside its
/// range.
pub(crate) fn guard_windows(
    boxes: Option<&BoxWindow>,
    read_r: Option<Interval>,
    write_r: Option<Interval>,
) -> [Option<Interval>; 2] {
    let hull = |r: Option<Interval>, bx: Option<&BoxBounds>| match (r, bx, boxes) {
        (Some((l, u)), Some(bx), Some(b)) => box_hull(&b.strides, bx)
            .map(|(bl, bu)| (l.max(bl), u.min(bu)))
            .filter(|(l, u)| l <= u),
        (r, _, _) => r,
    };
    [
        hull(read_r, boxes.and_then(|b| b.read.as_ref())),
        hull(write_r, boxes.and_then(|b| b.write.as_ref())),
    ]
}

/// An array's boxes for one slice: per delinearized dimension,
/// absolute inclusive component bounds; element `i` lies in a box when,
/// for every dimension `k >= 1`, `(i / strides[k]) % extents[k]` lies in
/// its bounds and `i` lies in the box's linear hull ([`box_hull`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BoxWindow {
    /// The stride of each dimension (the last is 1).
    pub(crate) strides: Vec<i64>,
    /// `strides[k - 1] / strides[k]` for `k >= 1`; `extents[0]` is 0.
    pub(crate) extents: Vec<i64>,
    /// Per dimension, the components the slice may read; `None` when it
    /// reads nothing.
    pub(crate) read: Option<BoxBounds>,
    /// Per dimension, the components the slice may write; `None` when it
    /// writes nothing.
    pub(crate) write: Option<BoxBounds>,
    /// The slice writes every element of its write box
    /// ([`ranges_format::Boxes::write_exact`]).
    pub(crate) write_exact: bool,
    /// The read parts that are not empty in this slice
    /// ([`ranges_format::Boxes::read_parts`]), each inside `read`: the slice
    /// reads only their union. Empty: `read` is the one part.
    pub(crate) read_parts: Vec<BoxBounds>,
}

impl BoxWindow {
    /// Whether each box present spans every dimension `k >= 1` whole
    /// (`[0, extent_k)`): its elements are then its linear hull, the same
    /// as a 1-D window's.
    pub(crate) fn spans_inner_dims(&self) -> bool {
        let whole = |bx: &BoxBounds| {
            bx.iter()
                .enumerate()
                .skip(1)
                .all(|(k, &(l, h))| l == 0 && h == self.extents[k] - 1)
        };
        self.read.as_ref().is_none_or(whole) && self.write.as_ref().is_none_or(whole)
    }
}

/// The kernel objects of one device.
pub(crate) struct DeviceKernels {
    pub(crate) ctx: Arc<DeviceCtx>,
    /// The subkernel with the run-time guard.
    pub(crate) sub: Option<Kernel>,
    /// The subkernel built with `-DCLPART_UNCHECKED` (guard compiled out).
    pub(crate) sub_unchecked: Option<Kernel>,
    pub(crate) whole: Option<Kernel>,
    /// The arguments last set on `sub`, `sub_unchecked` and `whole`
    /// (`exec::set_args_memo`).
    pub(crate) sub_args: Mutex<ArgMemo>,
    pub(crate) sub_unchecked_args: Mutex<ArgMemo>,
    pub(crate) whole_args: Mutex<ArgMemo>,
}

/// Elements in the sink past each guarded device buffer (and `__local`
/// argument): where a refused access goes. 16 covers `vstore16`.
pub(crate) const GUARD_SINK: u64 = 16;

/// The guard window of one buffer argument for one run, in elements of
/// its device buffer (see `partitioner::subkernel`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Window {
    /// First element index of the host array the device buffer holds.
    pub(crate) base: i64,
    pub(crate) read: (i64, i64),
    pub(crate) write: (i64, i64),
    /// Elements of the device buffer before the sink.
    pub(crate) extent: i64,
    /// The box check, absolute components; `None`: no box
    /// check in this run (the `Box*` arguments are 0).
    pub(crate) boxes: Option<BoxWindow>,
}

/// The window of an argument that has none (neither a buffer nor a
/// `__local` argument): empty.
pub(crate) const NO_WINDOW: Window = Window {
    base: 0,
    read: (0, 0),
    write: (0, 0),
    extent: 0,
    boxes: None,
};

/// One extra subkernel argument's value.
pub(crate) enum ExtraValue {
    Long(i64),
    /// The guard's flag buffer.
    GuardFlags,
}

/// A kernel ready to launch: its range file entry with every expression
/// parsed and bound to the parameter order once, the static reasons it
/// cannot split (if any), and the subkernel and original kernel built per
/// device (programs come from the [`Runtime`]'s cache).
pub struct Plan {
    pub(crate) runtime: Runtime,
    pub(crate) kernel: KernelRanges,
    pub(crate) source: String,
    pub(crate) build_options: Vec<String>,
    pub(crate) arrays: Vec<ArrayPlan>,
    /// Per launch-time assumption: its description, condition text, bound
    /// condition, and the argument index of the array it is for, if one.
    pub(crate) assumptions: Vec<(String, String, BoundCondition, Option<u32>)>,
    /// `Some(reason)` when the kernel never runs split.
    pub(crate) unsplit_reason: Option<String>,
    /// `Ok(guarded argument indices)` when the subkernel checks every buffer
    /// argument (the run-time guard), `Err(why)` when it cannot.
    pub(crate) guard: std::result::Result<Vec<u32>, String>,
    pub(crate) kernels: HashMap<usize, DeviceKernels>,
    /// The last few launches' schedules, by what they depend on
    /// (`launch::Schedules`): a repeated launch evaluates no range.
    pub(crate) schedules: Schedules,
    /// The names of the subkernel's extra arguments, in order.
    extra_names: Vec<String>,
    /// Per argument (by index): its array's position in `arrays`, if any.
    pub(crate) array_of_arg: Vec<Option<usize>>,
    /// `Some((lo, hi))`: launches run only work-groups `[lo, hi)` of the
    /// split dimension (an MPI rank's slice), divided among the
    /// devices by the shares; see [`Plan::set_group_window`].
    pub(crate) group_window: Option<(u64, u64)>,
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan")
            .field("kernel", &self.kernel.name)
            .field("unsplit_reason", &self.unsplit_reason)
            .field("devices_built", &self.kernels.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Plan {
    /// The plan for kernel `kernel` of a range file.
    pub fn new(runtime: &Runtime, file: &RangeFile, kernel: &str) -> Result<Plan> {
        let Some(k) = file.kernel(kernel) else {
            return Err(LaunchError::RangeFile {
                kernel: kernel.to_string(),
                message: format!(
                    "no such kernel in the range file (valid kernels: {})",
                    file.kernels
                        .iter()
                        .map(|k| k.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        };
        Plan::from_kernel(runtime, k.clone(), &file.source, &file.build_options)
    }

    /// The plan for one kernel's ranges, `source` being the original program
    /// (built for unsplit runs and verification). The entry is untrusted:
    /// it is validated in full ([`KernelRanges::validate`]) before anything
    /// is bound, and element sizes must be the arguments' (every host copy's
    /// length is computed from them).
    pub fn from_kernel(
        runtime: &Runtime,
        kernel: KernelRanges,
        source: &str,
        build_options: &[String],
    ) -> Result<Plan> {
        let kname = kernel.name.clone();
        let rf = |message: String| LaunchError::RangeFile {
            kernel: kname.clone(),
            message,
        };
        // Validation parses and binds every expression once; the plan keeps them.
        let bound = kernel.validate_and_bind()?;
        let arg = |index: u32| kernel.args.iter().find(|a| a.index == index);

        for p in &kernel.params {
            match p.source {
                ParamSource::ScalarArg { arg_index } => {
                    let a = arg(arg_index).ok_or_else(|| {
                        rf(format!(
                            "parameter '{}' refers to argument {arg_index}, which does not exist",
                            p.name
                        ))
                    })?;
                    let elem = ElemType::parse(&a.elem_type, a.elem_size);
                    if a.kind != ArgKind::Scalar || !elem.is_integer_scalar() {
                        return Err(rf(format!(
                            "parameter '{}' refers to argument '{}', which is not an integer scalar",
                            p.name, a.name
                        )));
                    }
                }
                ParamSource::GlobalSize(d)
                | ParamSource::LocalSize(d)
                | ParamSource::GlobalOffset(d)
                | ParamSource::NumGroups(d)
                    if d > 2 =>
                {
                    return Err(rf(format!(
                        "parameter '{}' refers to dimension {d}",
                        p.name
                    )));
                }
                _ => {}
            }
        }

        let mut arrays = Vec::new();
        for (a, b) in kernel.arrays.iter().zip(bound.arrays) {
            let info = arg(a.arg_index).ok_or_else(|| {
                rf(format!(
                    "array '{}' refers to argument {}, which does not exist",
                    a.name, a.arg_index
                ))
            })?;
            if !matches!(info.kind, ArgKind::GlobalBuffer | ArgKind::ConstantBuffer) {
                return Err(rf(format!(
                    "array '{}' is not a global or constant buffer argument",
                    a.name
                )));
            }
            // `validate` checked both against the element type; a copy's
            // length comes from this size, so it must be the argument's.
            if a.elem_size == 0 || a.elem_size != info.elem_size {
                return Err(rf(format!(
                    "array '{}': elem_size {} differs from the argument's elem_size {}",
                    a.name, a.elem_size, info.elem_size
                )));
            }
            let elem_size = a.elem_size;
            arrays.push(ArrayPlan {
                arg_index: a.arg_index,
                name: a.name.clone(),
                elem_size: elem_size as u64,
                reads: matches!(a.mode, Mode::R | Mode::RW),
                writes: matches!(a.mode, Mode::W | Mode::RW),
                whole_reason: match &a.status {
                    ArrayStatus::Bounded => None,
                    ArrayStatus::Whole { reason } => Some(reason.clone()),
                },
                total: b.total,
                slice: b.slice,
                read: b.read_slice,
                write: b.write_slice,
                count_slice: b.count_slice,
                written_count: b.written_count,
                verdict: a.write.clone(),
                boxes: b.boxes,
                literal_strides: a.boxes.as_ref().is_some_and(|x| {
                    x.strides.iter().all(|s| {
                        !s.trim().is_empty() && s.trim().chars().all(|c| c.is_ascii_digit())
                    })
                }),
                align: kernel
                    .subkernel
                    .as_ref()
                    .and_then(|s| s.aligned.iter().find(|(g, _)| *g == a.arg_index))
                    .map_or(1, |&(_, m)| u64::from(m.max(1))),
            });
        }

        let assumptions = kernel
            .assumptions
            .iter()
            .zip(bound.assumptions)
            .map(|(a, b)| (a.description.clone(), a.condition.clone(), b, a.array))
            .collect();

        // Boxes only where the subkernel checks them (every dimension's
        // box-check arguments present): transfers may rely on them.
        for a in &mut arrays {
            let dims = a.boxes.as_ref().map_or(0, |b| b.strides.len());
            if dims > 0 && !box_checked(&kernel, a.arg_index, dims) {
                a.boxes = None;
            }
            // Read parts only where the subkernel checks every one of them
            // (else the read box, which it checks, is what moves).
            if let Some(b) = &mut a.boxes {
                if !parts_checked(&kernel, a.arg_index, dims, b.read_parts.len()) {
                    b.read_parts.clear();
                }
            }
        }
        let unsplit_reason = static_unsplit_reason(&kernel, &arrays).map_err(rf)?;
        let guard = guard_status(&kernel);
        let extra_names = kernel
            .subkernel
            .as_ref()
            .map(|s| s.extra_args.iter().map(|e| e.name.clone()).collect())
            .unwrap_or_default();
        let array_of_arg = kernel
            .args
            .iter()
            .map(|info| arrays.iter().position(|a| a.arg_index == info.index))
            .collect();
        Ok(Plan {
            runtime: runtime.clone(),
            array_of_arg,
            kernel,
            source: source.to_string(),
            build_options: build_options.to_vec(),
            arrays,
            assumptions,
            unsplit_reason,
            guard,
            kernels: HashMap::new(),
            schedules: Schedules::default(),
            extra_names,
            group_window: None,
        })
    }

    /// The kernel's range file entry.
    pub fn kernel(&self) -> &KernelRanges {
        &self.kernel
    }

    /// The runtime this plan builds on.
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// The original program's source (what unsplit runs build).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The build options of the programs.
    pub fn build_options(&self) -> &[String] {
        &self.build_options
    }

    /// Restricts later launches to work-groups `[lo, hi)` of the split
    /// dimension (`None`: every work-group, the default). The shares then
    /// divide the window among the devices; the other work-groups run
    /// nowhere and their elements are neither sent nor written. This is an
    /// MPI rank's part of a launch split across ranks: the
    /// window must come from the same plan's [`Plan::rank_slices`], and a
    /// launch that would run unsplit is an error rather than a whole run.
    pub fn set_group_window(&mut self, window: Option<(u64, u64)>) {
        if self.group_window != window {
            self.group_window = window;
            // schedules are keyed without the window
            self.schedules = Schedules::default();
        }
    }

    /// Why this kernel never runs split (`None` when it can).
    pub fn unsplit_reason(&self) -> Option<&str> {
        self.unsplit_reason.as_deref()
    }

    /// Builds the arguments of this kernel from `NAME=SPEC` strings.
    pub fn args_from_specs<S: AsRef<str>>(&self, specs: &[S]) -> Result<KernelArgs> {
        KernelArgs::from_specs(&self.kernel.name, &self.kernel.args, specs)
    }

    /// Builds the subkernel (when the kernel can split) and the original
    /// kernel for these devices, ahead of the first launch. Launches do this
    /// themselves for devices not prepared yet; built programs are cached.
    pub fn prepare(&mut self, devices: &[usize]) -> Result<()> {
        self.prepare_some(devices, true)
    }

    /// [`Plan::prepare`] without the original kernel where the subkernel
    /// serves (a split launch runs only the subkernel; a launch that runs
    /// the kernel whole builds it then): half the builds of a kernel's
    /// first launch.
    pub fn prepare_split(&mut self, devices: &[usize]) -> Result<()> {
        self.prepare_some(devices, self.unsplit_reason.is_some())
    }

    fn prepare_some(&mut self, devices: &[usize], whole: bool) -> Result<()> {
        self.build_concurrently(devices, whole);
        for &d in devices {
            if self.unsplit_reason.is_none() {
                // what a launch with the guard on runs: the guarded subkernel,
                // or the unchecked one when the guard cannot check it
                let unchecked = self.guard.is_err();
                self.sub_kernel(d, unchecked)?;
            }
            if whole {
                self.whole_kernel(d)?;
            }
        }
        Ok(())
    }

    /// Builds the programs [`Plan::prepare`] needs on each device at once,
    /// one thread per device (the driver's compiler is the cost); errors are
    /// left for `prepare`, which finds the programs built or builds again
    /// and reports.
    fn build_concurrently(&self, devices: &[usize], whole: bool) {
        if devices.len() < 2 {
            return;
        }
        let sources = self.sources(whole);
        std::thread::scope(|scope| {
            for &d in devices {
                let sources = &sources;
                let runtime = self.runtime.clone();
                scope.spawn(move || {
                    for (name, source, options) in sources {
                        let _ = runtime.program(d, name, source, options);
                    }
                });
            }
        });
    }

    /// The programs (name, source, options) a device needs: the subkernel
    /// (when the kernel can split) and, with `whole`, the original kernel.
    fn sources(&self, whole: bool) -> Vec<(&str, &str, Vec<String>)> {
        let mut sources: Vec<(&str, &str, Vec<String>)> = Vec::new();
        if self.unsplit_reason.is_none() {
            if let Some(sub) = &self.kernel.subkernel {
                let mut options = self.build_options.clone();
                if self.guard.is_err() {
                    options.push("-DCLPART_UNCHECKED".into());
                }
                sources.push((&sub.name, &sub.source, options));
            }
        }
        if whole {
            sources.push((&self.kernel.name, &self.source, self.build_options.clone()));
        }
        sources
    }

    /// Whether [`Plan::prepare_split`] on `devices` has nothing better to
    /// wait for ([`Runtime::build_ready`]): no program it builds from source
    /// would have its binary kept by a build made ahead.
    pub fn split_builds_ready(&self, devices: &[usize]) -> bool {
        let sources = self.sources(self.unsplit_reason.is_some());
        devices.iter().all(|&d| {
            sources
                .iter()
                .all(|(_, source, options)| self.runtime.build_ready(d, source, options))
        })
    }

    fn slot(&mut self, device: usize) -> Result<&mut DeviceKernels> {
        if !self.kernels.contains_key(&device) {
            let ctx = self.runtime.ctx(device)?;
            self.kernels.insert(
                device,
                DeviceKernels {
                    ctx,
                    sub: None,
                    sub_unchecked: None,
                    whole: None,
                    sub_args: Mutex::default(),
                    sub_unchecked_args: Mutex::default(),
                    whole_args: Mutex::default(),
                },
            );
        }
        Ok(self.kernels.get_mut(&device).expect("inserted above"))
    }

    /// Builds (once) the subkernel for a device, with the run-time guard or
    /// (`unchecked`) with the guard compiled out.
    pub(crate) fn sub_kernel(&mut self, device: usize, unchecked: bool) -> Result<()> {
        let slot = self.slot(device)?;
        if (if unchecked {
            &slot.sub_unchecked
        } else {
            &slot.sub
        })
        .is_some()
        {
            return Ok(());
        }
        let sub = self
            .kernel
            .subkernel
            .as_ref()
            .ok_or_else(|| LaunchError::RangeFile {
                kernel: self.kernel.name.clone(),
                message: "no subkernel".into(),
            })?;
        let mut options = self.build_options.clone();
        if unchecked {
            options.push("-DCLPART_UNCHECKED".into());
        }
        let program = self
            .runtime
            .program(device, &sub.name, &sub.source, &options)?;
        let info = self.runtime.device(device)?;
        let k = Kernel::create(&program, &sub.name)
            .map_err(|e| cl_err("clCreateKernel", Some(info.label()))(e))?;
        let slot = self.slot(device)?;
        if unchecked {
            slot.sub_unchecked = Some(k);
        } else {
            slot.sub = Some(k);
        }
        Ok(())
    }

    /// Whether the run-time guard checks every buffer of this kernel's
    /// subkernel (`Err(why)` when it cannot).
    pub fn guard_status(&self) -> std::result::Result<&[u32], &str> {
        self.guard.as_deref().map_err(String::as_str)
    }

    /// The names of the subkernel's extra arguments, in order.
    pub(crate) fn extra_names(&self) -> &[String] {
        &self.extra_names
    }

    /// Builds (once) the original kernel for a device.
    pub(crate) fn whole_kernel(&mut self, device: usize) -> Result<()> {
        if self.slot(device)?.whole.is_some() {
            return Ok(());
        }
        let program =
            self.runtime
                .program(device, &self.kernel.name, &self.source, &self.build_options)?;
        let info = self.runtime.device(device)?;
        let k = Kernel::create(&program, &self.kernel.name)
            .map_err(|e| cl_err("clCreateKernel", Some(info.label()))(e))?;
        self.slot(device)?.whole = Some(k);
        Ok(())
    }

    /// Checks that `args` are this kernel's arguments.
    pub(crate) fn check_args(&self, args: &KernelArgs) -> Result<()> {
        // In index order: validation (`Plan::from_kernel`) checked that
        // each argument's index is its position.
        let want = &self.kernel.args;
        for (info, have) in want.iter().zip(args.infos()) {
            if info.name != have.name || info.kind != have.kind || info.elem_size != have.elem_size
            {
                return Err(LaunchError::MistypedArg {
                    name: have.name.clone(),
                    ty: have.elem_type.clone(),
                    message: format!(
                        "the arguments were made for another kernel (kernel '{}' expects '{}' here)",
                        self.kernel.name, info.name
                    ),
                });
            }
        }
        if want.len() > args.infos().len() {
            return Err(LaunchError::MissingArg {
                name: want[args.infos().len()].name.clone(),
                kernel: self.kernel.name.clone(),
            });
        }
        if want.len() < args.infos().len() {
            return Err(LaunchError::UnknownArg {
                name: args.infos()[want.len()].name.clone(),
                kernel: self.kernel.name.clone(),
                valid: want
                    .iter()
                    .map(|a| a.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        Ok(())
    }

    /// The parameter vector of the unsplit NDRange, with the slice
    /// `[0, n_groups)`, and the positions of the slice parameters with their
    /// multipliers (1 for `SliceLo`/`SliceHi`, the local size for the `*Item` forms).
    pub(crate) fn base_params(
        &self,
        nd: &NdRange,
        args: &KernelArgs,
        split_dim: u32,
    ) -> Result<(Vec<i64>, SlicePositions, SlicePositions)> {
        let mut vals = Vec::with_capacity(self.kernel.params.len());
        let mut lo_pos = Vec::new();
        let mut hi_pos = Vec::new();
        for (i, p) in self.kernel.params.iter().enumerate() {
            let v: i64 = match p.source {
                ParamSource::ScalarArg { arg_index }
                | ParamSource::StructMember { arg_index, .. } => {
                    let value = match (p.source, args.value(arg_index)) {
                        (
                            ParamSource::ScalarArg { .. },
                            Some(ArgValue::Scalar { int: Some(v), .. }),
                        ) => Some(*v),
                        (
                            ParamSource::StructMember { .. },
                            Some(ArgValue::Scalar { bytes, .. }),
                        ) => p.source.member_value(bytes),
                        _ => None,
                    };
                    match value {
                        Some(v) => v,
                        None => {
                            let name = args
                                .infos()
                                .get(arg_index as usize)
                                .map_or_else(|| format!("#{arg_index}"), |a| a.name.clone());
                            let lacks = match p.source {
                                ParamSource::ScalarArg { .. } => {
                                    "no integer value that fits a long".to_string()
                                }
                                _ => format!(
                                    "no bytes for its member ({}) or a value that does not fit a long",
                                    p.source
                                ),
                            };
                            return Err(LaunchError::Eval {
                                kernel: self.kernel.name.clone(),
                                what: format!("parameter '{}'", p.name),
                                message: format!("argument '{name}' has {lacks}"),
                            });
                        }
                    }
                }
                ParamSource::GlobalSize(d) => nd.global_size(d) as i64,
                ParamSource::LocalSize(d) => nd.local_size(d) as i64,
                ParamSource::GlobalOffset(d) => nd.global_offset(d) as i64,
                ParamSource::NumGroups(d) => nd.n_groups(d) as i64,
                ParamSource::SliceLo => {
                    lo_pos.push((i, 1));
                    0
                }
                ParamSource::SliceHi => {
                    hi_pos.push((i, 1));
                    nd.n_groups(split_dim) as i64
                }
                ParamSource::SliceLoItem => {
                    lo_pos.push((i, nd.local_size(split_dim) as i64));
                    0
                }
                ParamSource::SliceHiItem => {
                    hi_pos.push((i, nd.local_size(split_dim) as i64));
                    nd.global_size(split_dim) as i64
                }
            };
            vals.push(v);
        }
        Ok((vals, lo_pos, hi_pos))
    }

    /// The value of each extra argument of the subkernel for one slice
    /// starting at work-group `lo`; `window_of(arg_index)` gives each buffer
    /// argument's base and guard window.
    pub(crate) fn extra_values<'w>(
        &self,
        nd: &NdRange,
        split_dim: u32,
        lo: u64,
        window_of: impl Fn(u32) -> &'w Window,
    ) -> Vec<ExtraValue> {
        let Some(sub) = &self.kernel.subkernel else {
            return Vec::new();
        };
        sub.extra_args
            .iter()
            .map(|e| {
                ExtraValue::Long(match e.meaning {
                    ExtraArgMeaning::ArrayBase { arg_index } => window_of(arg_index).base,
                    ExtraArgMeaning::ReadLo { arg_index } => window_of(arg_index).read.0,
                    ExtraArgMeaning::ReadHi { arg_index } => window_of(arg_index).read.1,
                    ExtraArgMeaning::WriteLo { arg_index } => window_of(arg_index).write.0,
                    ExtraArgMeaning::WriteHi { arg_index } => window_of(arg_index).write.1,
                    ExtraArgMeaning::Extent { arg_index } => window_of(arg_index).extent,
                    ExtraArgMeaning::GuardFlags => return ExtraValue::GuardFlags,
                    // A box check's arguments: all 0 (the check off) without a box.
                    ExtraArgMeaning::BoxStride { arg_index, dim } => {
                        box_value(window_of(arg_index), dim, |b, k| b.strides.get(k).copied())
                    }
                    ExtraArgMeaning::BoxExtent { arg_index, dim } => {
                        box_value(window_of(arg_index), dim, |b, k| b.extents.get(k).copied())
                    }
                    ExtraArgMeaning::BoxReadLo { arg_index, dim } => {
                        box_value(window_of(arg_index), dim, |b, k| bound(&b.read, k, true))
                    }
                    ExtraArgMeaning::BoxReadHi { arg_index, dim } => {
                        box_value(window_of(arg_index), dim, |b, k| bound(&b.read, k, false))
                    }
                    ExtraArgMeaning::BoxWriteLo { arg_index, dim } => {
                        box_value(window_of(arg_index), dim, |b, k| bound(&b.write, k, true))
                    }
                    ExtraArgMeaning::BoxWriteHi { arg_index, dim } => {
                        box_value(window_of(arg_index), dim, |b, k| bound(&b.write, k, false))
                    }
                    ExtraArgMeaning::BoxPartLo {
                        arg_index,
                        part,
                        dim,
                    } => part_value(window_of(arg_index), part, dim, true),
                    ExtraArgMeaning::BoxPartHi {
                        arg_index,
                        part,
                        dim,
                    } => part_value(window_of(arg_index), part, dim, false),
                    ExtraArgMeaning::GroupIdBase(k) => {
                        if k == split_dim {
                            lo as i64
                        } else {
                            0
                        }
                    }
                    ExtraArgMeaning::GlobalSize(k) => nd.global_size(k) as i64,
                    ExtraArgMeaning::NumGroups(k) => nd.n_groups(k) as i64,
                    ExtraArgMeaning::GlobalOffset(k) => nd.global_offset(k) as i64,
                })
            })
            .collect()
    }
}

/// Whether the subkernel takes every read-part argument of array
/// `arg_index` with `dims` delinearized dimensions and `parts` read parts.
fn parts_checked(kernel: &KernelRanges, arg_index: u32, dims: usize, parts: usize) -> bool {
    let Some(sub) = &kernel.subkernel else {
        return false;
    };
    let has = |m: ExtraArgMeaning| sub.extra_args.iter().any(|e| e.meaning == m);
    (0..parts as u32).all(|part| {
        (0..dims as u32).all(|dim| {
            has(ExtraArgMeaning::BoxPartLo {
                arg_index,
                part,
                dim,
            }) && has(ExtraArgMeaning::BoxPartHi {
                arg_index,
                part,
                dim,
            })
        })
    })
}

/// Whether the subkernel takes every box-check argument of array
/// `arg_index` with `dims` delinearized dimensions.
fn box_checked(kernel: &KernelRanges, arg_index: u32, dims: usize) -> bool {
    let Some(sub) = &kernel.subkernel else {
        return false;
    };
    (1..dims as u32).all(|dim| {
        let has = |m: ExtraArgMeaning| sub.extra_args.iter().any(|e| e.meaning == m);
        has(ExtraArgMeaning::BoxStride { arg_index, dim })
            && has(ExtraArgMeaning::BoxExtent { arg_index, dim })
            && has(ExtraArgMeaning::BoxReadLo { arg_index, dim })
            && has(ExtraArgMeaning::BoxReadHi { arg_index, dim })
            && has(ExtraArgMeaning::BoxWriteLo { arg_index, dim })
            && has(ExtraArgMeaning::BoxWriteHi { arg_index, dim })
    })
}

/// A box-check argument's value for dimension `dim` of a window: `f` of its
/// box, or 0 (no box check) when it has none.
fn box_value(w: &Window, dim: u32, f: impl Fn(&BoxWindow, usize) -> Option<i64>) -> i64 {
    match &w.boxes {
        Some(b) => f(b, dim as usize).unwrap_or(0),
        None => 0,
    }
}

/// A read-part argument's value: part `part`'s lower (`lo`) or
/// upper bound in dimension `dim`, for dimension 0 its linear window
/// `[lo, hi)` relative to the device buffer. Without read parts the read
/// box is part 0; a part the slice does not have admits nothing, and
/// without a box check every value is 0 (the check is off).
fn part_value(w: &Window, part: u32, dim: u32, lo: bool) -> i64 {
    let Some(b) = &w.boxes else {
        return 0;
    };
    let bx = if b.read_parts.is_empty() {
        b.read.as_ref().filter(|_| part == 0)
    } else {
        b.read_parts.get(part as usize)
    };
    let k = dim as usize;
    match bx {
        Some(bx) if k == 0 => match box_hull(&b.strides, bx) {
            Some((l, u)) => {
                if lo {
                    l - w.base
                } else {
                    u - w.base + 1
                }
            }
            None => 0,
        },
        Some(bx) => bx.get(k).map_or(0, |&(l, h)| if lo { l } else { h }),
        // nothing: [0, 0) and [0, -1]
        None => -i64::from(!lo && k > 0),
    }
}

/// The lower (`lo`) or upper bound of dimension `k` of a box; a direction
/// with no box admits nothing (`[0, -1]`).
fn bound(bx: &Option<BoxBounds>, k: usize, lo: bool) -> Option<i64> {
    match bx {
        Some(b) => b.get(k).map(|&(l, h)| if lo { l } else { h }),
        None => Some(if lo { 0 } else { -1 }),
    }
}

/// Whether the subkernel guards every buffer argument: `Ok(guarded)` or
/// `Err(why not)`.
fn guard_status(kernel: &KernelRanges) -> std::result::Result<Vec<u32>, String> {
    let Some(sub) = &kernel.subkernel else {
        return Err("the range file has no subkernel".into());
    };
    if let Some((i, why)) = sub.unguarded.first() {
        let name = kernel
            .args
            .iter()
            .find(|a| a.index == *i)
            .map_or("?", |a| a.name.as_str());
        return Err(format!(
            "the run-time guard cannot check argument '{name}': {why}"
        ));
    }
    if !sub
        .extra_args
        .iter()
        .any(|e| e.meaning == ExtraArgMeaning::GuardFlags)
        && !sub.guarded.is_empty()
    {
        return Err("the subkernel has no guard flag argument".into());
    }
    for a in &kernel.args {
        if a.kind != ArgKind::Scalar && !sub.guarded.contains(&a.index) {
            return Err(format!(
                "the subkernel does not guard argument '{}'",
                a.name
            ));
        }
    }
    Ok(sub.guarded.clone())
}

/// Why a kernel can never run split, from the range file alone; an error for
/// a range file that contradicts itself.
fn static_unsplit_reason(
    kernel: &KernelRanges,
    arrays: &[ArrayPlan],
) -> Result<Option<String>, String> {
    if !kernel.splittable {
        return Ok(Some(kernel.reason.clone().unwrap_or_else(|| {
            "the analysis marks the kernel as not splittable".into()
        })));
    }
    let Some(d) = kernel.split_dim else {
        return Ok(Some("the range file names no split dimension".into()));
    };
    if d >= kernel.work_dim.max(1) {
        return Err(format!(
            "split dimension {d} is not below work_dim {}",
            kernel.work_dim
        ));
    }
    let Some(sub) = &kernel.subkernel else {
        return Ok(Some("the range file has no subkernel".into()));
    };
    for e in &sub.extra_args {
        if let ExtraArgMeaning::ArrayBase { arg_index } = e.meaning {
            let local = kernel
                .args
                .iter()
                .any(|a| a.index == arg_index && a.kind == ArgKind::LocalBuffer);
            if !local && !arrays.iter().any(|a| a.arg_index == arg_index) {
                return Err(format!(
                    "subkernel argument '{}' is the base of argument {arg_index}, which has no ranges",
                    e.name
                ));
            }
        }
    }
    for a in &kernel.args {
        if matches!(a.kind, ArgKind::GlobalBuffer | ArgKind::ConstantBuffer)
            && !arrays.iter().any(|r| r.arg_index == a.index)
        {
            return Ok(Some(format!(
                "argument '{}' has no ranges in the range file",
                a.name
            )));
        }
    }
    for a in arrays.iter().filter(|a| a.writes) {
        match &a.verdict {
            None => {
                return Ok(Some(format!(
                    "array '{}' is written but has no write verdict",
                    a.name
                )))
            }
            Some(v) if !v.disjoint_across_slices => {
                return Ok(Some(format!(
                    "array '{}': different slices may write the same element",
                    a.name
                )))
            }
            _ => {}
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: [&str; 3] = ["w", "lo", "hi"];

    /// A range's bounds, bound by `ranges-format` (the only reader of
    /// expression text).
    fn r(lo: &str, hi: &str) -> BoundRange {
        ranges_format::Range {
            lower: lo.into(),
            upper: hi.into(),
        }
        .bind(&NAMES)
        .unwrap()
    }

    fn e(t: &str) -> ranges_format::BoundExpr {
        r(t, t).lower
    }

    /// A column band: rows 0..=7, columns [lo, hi) of a w-wide array.
    fn array(strides: [&str; 2]) -> ArrayPlan {
        ArrayPlan {
            arg_index: 0,
            name: "a".into(),
            elem_size: 4,
            reads: true,
            writes: false,
            whole_reason: None,
            total: None,
            slice: None,
            read: None,
            write: None,
            count_slice: None,
            written_count: None,
            verdict: None,
            literal_strides: false,
            align: 1,
            boxes: Some(BoundBoxes {
                strides: strides.iter().map(|s| e(s)).collect(),
                read: Some(vec![r("0", "7"), r("lo", "hi - 1")]),
                write: None,
                write_exact: false,
                read_parts: vec![],
            }),
        }
    }

    #[test]
    fn slice_boxes_evaluate_or_turn_the_check_off() {
        let a = array(["w", "1"]);
        // w = 100, columns [16, 32): the 1-D read range is the box's hull
        let vals = [100, 16, 32];
        let hull = Some((16, 7 * 100 + 31));
        let b = a.slice_boxes(&vals, hull, None).unwrap().expect("a box");
        assert_eq!(b.strides, vec![100, 1]);
        assert_eq!(b.extents, vec![0, 100]);
        assert_eq!(b.read, Some(vec![(0, 7), (16, 31)]));
        assert_eq!(b.write, None);
        assert_eq!(box_hull(&b.strides, b.read.as_ref().unwrap()), hull);
        // a box whose hull reaches past the 1-D range is kept (both hold
        // the footprint; what moves is their intersection)
        let past = a.slice_boxes(&vals, Some((17, 700)), None).unwrap();
        assert_eq!(past.and_then(|b| b.read), Some(vec![(0, 7), (16, 31)]));
        // a box that misses the 1-D range: off
        assert_eq!(a.slice_boxes(&vals, Some((800, 900)), None).unwrap(), None);
        // a read box missing for a range the slice reads: off
        let mut no_read = array(["w", "1"]);
        no_read.boxes.as_mut().unwrap().read = None;
        assert_eq!(no_read.slice_boxes(&vals, hull, None).unwrap(), None);
        // a component outside [0, extent): off
        assert_eq!(
            a.slice_boxes(&[20, 16, 32], Some((16, 171)), None).unwrap(),
            None
        );
        // strides that are not positive, or do not nest: off
        assert_eq!(a.slice_boxes(&[0, 16, 32], hull, None).unwrap(), None);
        assert_eq!(
            array(["w", "3"]).slice_boxes(&vals, hull, None).unwrap(),
            None
        );
        assert_eq!(
            array(["w", "2"])
                .slice_boxes(&[101, 0, 1], Some((0, 0)), None)
                .unwrap(),
            None
        );
        // an array that reads nothing in this slice has no read box
        let b = a.slice_boxes(&vals, None, None).unwrap().expect("a box");
        assert_eq!(b.read, None);
    }

    #[test]
    fn a_box_spans_its_inner_dimensions_when_it_holds_whole_rows() {
        let a = array(["w", "1"]);
        // columns [16, 32) of 100: a band
        let b = a
            .slice_boxes(&[100, 16, 32], Some((16, 731)), None)
            .unwrap()
            .expect("a box");
        assert!(!b.spans_inner_dims());
        // columns [0, 100): whole rows, the elements of the linear hull
        let b = a
            .slice_boxes(&[100, 0, 100], Some((0, 799)), None)
            .unwrap()
            .expect("a box");
        assert!(b.spans_inner_dims());
    }

    #[test]
    fn box_arguments_are_zero_without_a_box() {
        let w = Window::default();
        assert_eq!(box_value(&w, 1, |b, k| b.strides.get(k).copied()), 0);
        let b = array(["w", "1"])
            .slice_boxes(&[100, 16, 32], Some((16, 731)), None)
            .unwrap();
        let w = Window {
            boxes: b,
            ..Default::default()
        };
        assert_eq!(box_value(&w, 1, |b, k| b.strides.get(k).copied()), 1);
        assert_eq!(box_value(&w, 1, |b, k| b.extents.get(k).copied()), 100);
        assert_eq!(box_value(&w, 1, |b, k| bound(&b.read, k, true)), 16);
        assert_eq!(box_value(&w, 1, |b, k| bound(&b.read, k, false)), 31);
        // not written: no element may be written ([0, -1])
        assert_eq!(box_value(&w, 1, |b, k| bound(&b.write, k, true)), 0);
        assert_eq!(box_value(&w, 1, |b, k| bound(&b.write, k, false)), -1);
        // a dimension the box does not have: off
        assert_eq!(box_value(&w, 5, |b, k| b.strides.get(k).copied()), 0);
    }
}
