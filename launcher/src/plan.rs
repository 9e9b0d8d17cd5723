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
//!
//! What a plan is made of lives in submodules: `array` (each array's bound
//! expressions and its boxes for a slice), `build` (the programs and kernel
//! objects per device), `guard` (the run-time guard: whether the subkernel
//! guards every buffer, its windows and box-check arguments for a slice),
//! `warm` (launches that fill a driver's cache of compiled work-group
//! functions for a later run).

mod array;
mod build;
mod guard;
mod warm;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use opencl3::kernel::Kernel;

use ranges_format::{
    ArgKind, ArrayStatus, BoundCondition, ExtraArgMeaning, KernelRanges, Mode, ParamSource,
    RangeFile,
};

use crate::args::KernelArgs;
use crate::buffer::ArgValue;
use crate::elem::ElemType;
use crate::error::{LaunchError, Result};
use crate::exec::ArgMemo;
use crate::launch::Schedules;
use crate::ndrange::NdRange;
use crate::runtime::{DeviceCtx, Runtime};
use guard::{bound, box_checked, box_value, guard_status, part_value, parts_checked};

pub(crate) use array::{ArrayPlan, BoxWindow};
pub(crate) use guard::{guard_windows, ExtraValue, Window, GUARD_SINK, NO_WINDOW};

/// Positions in the parameter vector that take a slice bound, each with its
/// multiplier (1 for work-groups, the local size for work-items).
pub(crate) type SlicePositions = Vec<(usize, i64)>;

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
    /// This plan among the process's plans ([`Plan::uid`]).
    uid: u64,
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
    /// A number no other plan of this process has: a plan's kernel entry,
    /// source and build options never change, so what was derived from
    /// them (the MPI ranks' copy of the plan) can be keyed by it.
    pub fn uid(&self) -> u64 {
        self.uid
    }

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
                reduction: a.reduction,
                checked: a.checked,
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
            uid: {
                static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
                NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            },
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

    /// Whether the run-time guard checks every buffer of this kernel's
    /// subkernel (`Err(why)` when it cannot).
    pub fn guard_status(&self) -> std::result::Result<&[u32], &str> {
        self.guard.as_deref().map_err(String::as_str)
    }

    /// The names of the subkernel's extra arguments, in order.
    pub(crate) fn extra_names(&self) -> &[String] {
        &self.extra_names
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
    // (an array merged as a reduction or with the conflict check needs no
    // verdict: the merge does not rely on disjoint writes)
    for a in arrays
        .iter()
        .filter(|a| a.writes && a.reduction.is_none() && !a.checked)
    {
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
