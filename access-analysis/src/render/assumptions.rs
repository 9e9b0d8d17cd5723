//! The launch-time assumptions of an array's delinearized accesses: each
//! output `k >= 1` inside `[0, extent_k)`, the parameter values that
//! avoid a violation, whether the assumptions can hold together in a launch
//! that does work, and whether a footprint is bounded.

use super::delinearize::Tuples;
use super::relations::Prepared;
use super::{push_unique, Renderer};
use crate::eval::nd_name;
use crate::isl::{IslOk, IslResult};
use crate::poly::{Cond, Poly};
use crate::{ArrayAccesses, Assumption};
use isl_rs::{Map, Set};

impl<'a> Renderer<'a> {
    /// The launch-time condition that no point of `violations` (a set whose
    /// points break an assumption) exists: the parameter values of
    /// `context` outside its projection, simplified against the context
    /// (isl text); `None` when no parameter value has one.
    pub(super) fn avoiding(&self, violations: Set, context: &str) -> IslResult<Option<String>> {
        let isl = &self.isl;
        let ctx = isl.set(context)?;
        let viol = violations
            .params()
            .ok_in(isl)?
            .intersect(ctx.copy().ok_in(isl)?)
            .ok_in(isl)?;
        if viol.is_empty().ok_in(isl)? {
            return Ok(None);
        }
        let cond = ctx
            .copy()
            .ok_in(isl)?
            .subtract(viol)
            .ok_in(isl)?
            .gist_params(ctx)
            .ok_in(isl)?
            .coalesce()
            .ok_in(isl)?;
        Ok(Some(isl.set_str(&cond)?))
    }

    /// Whether the assumptions of constant strides can all hold at once in a
    /// launch that does work: some access of `tuples` executes, every
    /// global size is at least 16 and every unknown local size at least 2.
    /// An assumption that holds only for empty or degenerate launches
    /// (`ls0 = 1 and gs0 <= 2`, `n <= go0`) would run real launches
    /// unsplit, where the one-dimensional model splits them. isl failures
    /// count as "no".
    pub(super) fn assumptions_can_hold(
        &self,
        assumptions: &[Assumption],
        tuples: &Tuples,
        context: &str,
    ) -> bool {
        if assumptions.is_empty() {
            return true;
        }
        let isl = &self.isl;
        let mut sizes = Vec::new();
        for d in 0..self.ndr.work_dim {
            for (kind, least) in [("gs", 16), ("ls", 2)] {
                let n = nd_name(kind, d);
                if self.param_names.contains(&n) && !self.spec.contains_key(&n) {
                    sizes.push(Cond::Ge(
                        Poly::param(&n).add_const(-least).unwrap_or_default(),
                    ));
                }
            }
        }
        let executes = |_: &[Poly]| Cond::True;
        let mut runs = Vec::new();
        for (r, pieces) in tuples {
            runs.extend(self.pieces(r, pieces, Some(&executes)));
        }
        if runs.is_empty() {
            return true;
        }
        let can = || -> IslResult<bool> {
            let mut s = isl.set(context)?;
            s = s
                .intersect(isl.params_set(
                    &self.param_names,
                    &sizes.iter().cloned().fold(Cond::True, Cond::and),
                )?)
                .ok_in(isl)?;
            s = s
                .intersect(isl.piece_sets(&self.param_names, &runs, true)?)
                .ok_in(isl)?;
            for x in assumptions {
                s = s.intersect(isl.set(&x.condition)?).ok_in(isl)?;
            }
            Ok(!s.is_empty().ok_in(isl)?)
        };
        can().unwrap_or(false)
    }

    /// Whether the footprint is bounded for every parameter value (isl's
    /// recession-cone test on the range, `isl_set_is_bounded`).
    pub(super) fn bounded(&self, m: &Map) -> IslResult<bool> {
        let isl = &self.isl;
        m.copy()
            .ok_in(isl)?
            .range()
            .ok_in(isl)?
            .is_bounded()
            .ok_in(isl)
    }

    /// Whether some access may violate `0 <= out_k < extent_k` for some
    /// parameter values (one parameter set for all accesses: the fast path).
    pub(super) fn may_violate(
        &self,
        prepared: &[Prepared],
        extents: &[String],
        context: &str,
    ) -> IslResult<bool> {
        let isl = &self.isl;
        for (k, ext) in extents.iter().enumerate() {
            let viol = violation(k + 1, ext);
            let mut parts = Vec::new();
            for p in prepared {
                parts.extend(self.pieces(p.rec, &p.pieces, Some(&viol)));
            }
            if parts.is_empty() {
                continue;
            }
            if !isl
                .piece_sets(&self.param_names, &parts, true)?
                .intersect(isl.set(context)?)
                .ok_in(isl)?
                .is_empty()
                .ok_in(isl)?
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Adds the assumptions `0 <= out_k < extent_k` (k >= 1) of one access.
    pub(super) fn assumptions(
        &self,
        p: &Prepared,
        extents: &[String],
        context: &str,
        a: &mut ArrayAccesses,
    ) -> IslResult<()> {
        for (k, ext) in extents.iter().enumerate() {
            let dim = k + 1;
            let viol = violation(dim, ext);
            let points = self.isl.piece_sets(
                &self.param_names,
                &self.pieces(p.rec, &p.pieces, Some(&viol)),
                false,
            )?;
            let Some(cond_s) = self.avoiding(points, context)? else {
                continue;
            };
            // Describe with the outputs of the first piece.
            let shown: Vec<String> = p
                .pieces
                .iter()
                .map(|(_, o)| o[dim].to_isl().unwrap_or_default())
                .collect();
            let mut uniq: Vec<String> = Vec::new();
            for s in shown {
                push_unique(&mut uniq, s);
            }
            let description = format!(
                "0 <= {} < {ext} in {} ({}:{}:{})",
                uniq.join(" | "),
                p.rec.text,
                self.file,
                p.rec.span.line,
                p.rec.span.col
            );
            if let Some(existing) = a.assumptions.iter_mut().find(|x| x.condition == cond_s) {
                if !existing.description.contains(&p.rec.text) {
                    existing.description.push_str(&format!("; {description}"));
                }
            } else {
                a.assumptions.push(Assumption {
                    description,
                    condition: cond_s,
                    array: None,
                });
            }
        }
        Ok(())
    }
}

/// The condition that output `dim` leaves `[0, ext)` (`ext` a parameter's
/// name or a number, as delinearization gives it).
fn violation(dim: usize, ext: &str) -> impl Fn(&[Poly]) -> Cond + '_ {
    move |outs: &[Poly]| {
        let t = outs.get(dim).cloned().unwrap_or_default();
        let ext = match ext.parse::<i128>() {
            Ok(k) => Poly::konst(k),
            Err(_) => Poly::param(ext),
        };
        // t < 0, or t >= ext
        let below = t.scale(-1).and_then(|p| p.add_const(-1));
        let above = t.sub(&ext);
        match (below, above) {
            (Some(b), Some(a)) => Cond::Or(vec![Cond::Ge(b), Cond::Ge(a)]),
            _ => Cond::Unknown(crate::poly::Why::other("arithmetic overflow")),
        }
    }
}
