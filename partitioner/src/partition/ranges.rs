//! A kernel's ranges along one split dimension ([`partition_along`]): per
//! array its total and slice ranges, read and write ranges, boxes, read
//! parts and write verdict ([`array_ranges`]), the kernel's verdict, its
//! launch-time assumptions and its subkernel.

use access_analysis::ArrayAccesses;
use coarsen::ir::Program;
use isl_rs::Set;
use ranges_format::{
    ArgKind, ArrayRanges, ArrayStatus, Assumption, Boxes, KernelRanges, Mode, Param, Reduction,
    WriteVerdict,
};

use super::bounds::{
    dim_bounds, linear_of, linear_range, literal_linear, range_and_box_of, ranges_and_box,
    EXACT_BOUND_OPS,
};
use super::read_parts::{box_parts, runs_1d};
use super::verdicts::{fills_hull, has_may_writes, writes_fill_box, writes_may_overlap};
use super::{renamed, ArrayShape, Ctx, NAME_SLOT};

pub(super) fn partition_along(
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
        if let Some(red) = a.reduction {
            arrays.push(reduction_ranges(a, red));
            continue;
        }
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

/// An array updated only by atomics that merge as a reduction: whole on
/// every device, each copy starting from the original values, merged by
/// the launcher (`ReduceOp`).
fn reduction_ranges(a: &ArrayAccesses, red: Reduction) -> ArrayRanges {
    ArrayRanges {
        arg_index: a.arg_index,
        name: a.name.clone(),
        elem_type: a.elem_type.clone(),
        elem_size: a.elem_size,
        mode: a.mode,
        status: ArrayStatus::Whole {
            reason: format!(
                "updated only by atomics whose values are unused: each device updates a whole copy; the copies merge by {}",
                red.op
            ),
        },
        total: None,
        slice: None,
        read_slice: None,
        write_slice: None,
        count_total: None,
        count_slice: None,
        write: None,
        boxes: None,
        vertices_slice: None,
        reduction: Some(red),
        checked: false,
    }
}

/// Whether the values of a range expression (`[params] -> { [(v)] : c;
/// ... }`, the pieces' `v`, not their conditions) name a slice bound
/// (`sx_lo`, `sx_hi`).
fn names_slice(expr: &str) -> bool {
    expr.split("[(").skip(1).any(|piece| {
        let value = piece.split(")]").next().unwrap_or(piece);
        value
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|t| t == super::SX_LO || t == super::SX_HI)
    })
}

/// Why an array written where slices may write the same elements is not
/// split: its reads may see another slice's writes.
const RACE: &str =
    "it is also read where another slice may write it (a race), and the reads could not be bounded";

/// The read range of a slice of an array whose writes cannot be bounded
/// or may overlap between slices: `None` when the kernel does not read it;
/// the launcher checks that no other device changes an element of it.
/// Reads that cannot be bounded may read what another slice writes: a
/// race, the reason not to split.
fn checked_reads(
    cx: &Ctx,
    a: &ArrayAccesses,
    slice: Option<&Set>,
    ctx_slice: Option<&Set>,
) -> Result<Option<ranges_format::Range>, String> {
    if !matches!(a.mode, Mode::R | Mode::RW) {
        return Ok(None);
    }
    cx.isl.reset();
    let reads = match (cx.union_maps(&[&a.reads]), slice) {
        (Some(Some(r)), Some(s)) => cx.footprint(&r, s),
        (Some(None), _) => return Ok(None),
        _ => None,
    };
    let range = reads.and_then(|f| super::bounds::linear_range(cx, &f, &a.strides, ctx_slice));
    range.map(Some).ok_or_else(|| RACE.to_string())
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
        reduction: None,
        checked: false,
    };
    let written = matches!(m, Mode::W | Mode::RW);
    if let Some(r) = &a.whole {
        out.status = ArrayStatus::Whole { reason: r.clone() };
        if written {
            // whole on every device that writes it, merged element by
            // element with the run-time conflict check
            match checked_reads(cx, a, slice, ctx_slice) {
                Ok(read) => {
                    out.checked = true;
                    out.read_slice = read;
                }
                Err(race) => reasons.push(format!(
                    "array '{}' is written but cannot be bounded: {r}, and {race}",
                    a.name
                )),
            }
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
        // Writes that may overlap merge with the run-time conflict check
        // when the reads are bounded (see `checked_reads`).
        let race = reads.is_some() && out.read_slice.is_none();
        // Where the overlap may come from the unknown work-group size
        // (`out[get_group_id(0)]`), the analysis at the launch's size
        // decides: its writes may well be disjoint.
        let sized = !cx
            .acc
            .notes
            .iter()
            .any(|n| n == access_analysis::LOCAL_SIZE_UNKNOWN_NOTE);
        // Only writes whose range is every slice's (`flag[0]`): where it
        // moves with the slice, the overlap may be the analysis' (a
        // grid-stride loop before its global size is known), and the
        // analysis at the launch's values, which such a verdict would
        // pre-empt, may prove the writes disjoint. An analysis at the
        // launch's global size is that analysis: its overlap stays.
        let shared = out
            .write_slice
            .as_ref()
            .is_some_and(|r| !names_slice(&r.lower) && !names_slice(&r.upper));
        let at_launch_size = cx.specialize.contains_key(&format!("gs{d}"));
        out.checked = !disjoint && !race && sized && (shared || at_launch_size);
        if !disjoint && !out.checked {
            reasons.push(format!(
                "array '{}': work-groups in different slices along dimension {d} may write the same elements{}{}",
                a.name,
                if overlap.is_some() {
                    String::new()
                } else if cx.isl.expired() {
                    format!(" (analysis time budget of {} ms exceeded)", cx.budget_ms)
                } else {
                    " (isl could not decide)".to_string()
                },
                if race { format!(", and {RACE}") } else { String::new() },
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
