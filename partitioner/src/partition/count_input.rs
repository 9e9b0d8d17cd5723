//! The Ehrhart input of a footprint ([`count_input`]): its isl text
//! simplified against the context, how barvinok counts it (whole, by
//! disjoint parts, or decomposed: [`CountForm`]) and the time left to it.

use counting::{out_of_time, CountForm, CountInput};
use isl_rs::{DimType, Set};
use ranges_format::CutShort;

use super::Ctx;

/// Footprints with at least this many basic sets, or one basic set with
/// more constraints than [`PARTS_MAX_CONSTRAINTS`], are counted by parts
/// ([`count_input`]). The rule is structural (not a time limit), so the same
/// kernel gets the same form of count on any machine.
const PARTS_MIN_BASIC_SETS: usize = 5;

/// See [`PARTS_MIN_BASIC_SETS`].
const PARTS_MAX_CONSTRAINTS: usize = 40;

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
pub(super) fn count_input(
    cx: &Ctx,
    fp: &Set,
    uncoalesced: impl FnOnce() -> Option<Vec<Set>>,
    context: Option<&Set>,
) -> Result<CountInput, String> {
    // Counts are optional and come last (after the ranges and verdicts of
    // the chosen dimension): their inputs are made with at most the
    // engines' limit each and what is left of the kernel's budget.
    let now = std::time::Instant::now();
    let mut limit = counting::POLYLIB_TIME_LIMIT;
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
    // footprint text, counted once ([`counts_of`](counting::counts_of)).
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
pub(super) fn basic_sets(s: &Set) -> Option<Vec<Set>> {
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

/// The basic sets of `s` when there are at most [`counting::MAX_PARTS`]
/// and no two meet within `context` (a union of bands); `None` otherwise.
fn disjoint_basic_sets(s: &Set, context: Option<&Set>) -> Option<Vec<Set>> {
    let pieces = basic_sets(s)?;
    if pieces.len() < 2 || pieces.len() > counting::MAX_PARTS {
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

/// Which count of an array ([`ArrayRanges`](ranges_format::ArrayRanges)) a prepared count fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum CountSlot {
    /// `write.written_count`: what a slice writes.
    Written,
    /// `count_total`: what the whole NDRange touches.
    Total,
    /// `count_slice`: what a slice touches.
    Slice,
}
