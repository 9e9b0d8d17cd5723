//! Which counts a kernel gets along its split dimension and where they go
//! ([`add_counts`]): per array the steps (a count to make, or a note), their
//! inputs made and counted in one batch, counts at the launch's values
//! where no parametric one was had, and the vertices beside them.

use access_analysis::{AccessKind, ArrayAccesses};
use counting::{counts_of, distinct_by, CountInput, Fallback};
use isl_rs::Set;
use ranges_format::{ArrayStatus, Count, KernelRanges};

use super::ahead::{fill_known, split_known, Ahead};
use super::count_input::{count_input, CountSlot};
use super::launch_point::{counts_at_points, point_input, PointInput};
use super::verdicts::has_may_writes;
use super::vertices::{add_vertices, vertex_limit, VertexResults};
use super::{renamed, ArrayShape, Counts, Ctx};

/// Most time the inputs made ahead may take: the ranges wait for them.
const AHEAD_INPUTS_LIMIT: std::time::Duration = std::time::Duration::from_millis(50);

/// The inputs of every count [`add_counts`] may make along `d` with every
/// count wanted (per array shape, its first array; the written count
/// wherever the writes are must-writes), made within
/// [`AHEAD_INPUTS_LIMIT`]; those that fail are left out, and all are when
/// the limit passed.
pub(super) fn ahead_inputs(
    cx: &Ctx,
    d: u32,
) -> std::collections::HashMap<(usize, CountSlot), CountInput> {
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
pub(super) fn add_counts(
    cx: &Ctx,
    d: u32,
    k: &mut KernelRanges,
    which: Counts,
    ahead: Option<&Ahead>,
) {
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
    // ([`counting::preload_barvinok`]): the counts wait for them anyway.
    let _ = counting::barvinok_available();
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
                let found = counting::vertices_many(&distinct, deadline);
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
            counts_of(&missing, deadline, Fallback::PolyLib, &|c| cx.cut.saw(c)),
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
        if let Err(why) = counting::barvinok_available() {
            notes.push(format!(
                "counts from polylib (barvinok is unavailable: {why})"
            ));
        }
    }
    k.diagnostics.extend(notes);
}

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
