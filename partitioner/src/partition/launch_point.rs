//! Counts at one launch's values: [`LaunchPoint`] (a launch's sizes and
//! integer scalars) and the slice counts made with every parameter but the
//! slice's bounds fixed at them (`point_input`, `counts_at_points`), for
//! where no parametric count can be had and for `Counts::AtLaunch`.

use access_analysis::isl::Isl;
use access_analysis::{AccessKind, ArrayAccesses};
use isl_rs::{DimType, Set};
use ranges_format::{Count, CutShort, Param, ParamSource};

use super::count_input::basic_sets;
use super::slice::access_footprints_in;
use super::{Ctx, Cut, SX_HI, SX_LO};

/// The values of one launch: its global and local sizes and its integer
/// scalar arguments by name. Where barvinok and PolyLib give no parametric
/// count of a slice's footprint (out of time on a 3-D stencil's cross), and
/// for [`Counts::AtLaunch`](super::Counts::AtLaunch), the footprint is counted with every parameter
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
pub(super) fn point_input(
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
        .filter(|b| b.len() <= counting::MAX_PARTS)
        .ok_or_else(|| failed("cutting the footprint into parts"))?
        .iter()
        .map(|b| sub.set_str(b).map_err(|_| failed("printing the footprint")))
        .collect::<Result<Vec<String>, String>>()?;
    Ok((texts, point))
}

/// [`point_input`]'s result: the fixed footprints' texts and the point.
pub(super) type PointInput = (Vec<String>, Vec<(String, i64)>);

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
pub(super) fn counts_at_points(
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
    let mut cards = counting::card_parts_many(&todo, Some(deadline)).into_iter();
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
                        counting::EhrhartError::BarvinokTimedOut { .. }
                        | counting::EhrhartError::DeadlinePassed => out_of_point_time(),
                        e => format!("no count at the launch's values: {e}"),
                    }
                })?
                .count;
            count.at = point.clone();
            Ok(count)
        })
        .collect()
}
