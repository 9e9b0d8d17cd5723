//! The isl relations of an array's modeled accesses ([`Prepared`]): reads,
//! must-writes and may-writes, each the union of its accesses' disjuncts,
//! minimized and exported as text.

use super::delinearize::Tuple;
use super::{push_unique, Buffer, Renderer};
use crate::eval::{nd_name, Rec};
use crate::isl::{IslOk, IslResult, Piece};
use crate::poly::{Atom, Cond, Poly};
use crate::{Access, AccessKind, ArrayAccesses};
use isl_rs::{DimType, Map};

/// isl operations an access relation's final gist may take
/// ([`Isl::optional`](crate::isl::Isl::optional)); beyond, the relation stays as it is.
const GIST_MAX_OPS: u64 = 100_000;

/// One modeled access, ready to be printed.
pub(super) struct Prepared<'r> {
    pub(super) rec: &'r Rec,
    /// (piece condition, output tuple).
    pub(super) pieces: Tuple,
    kind: AccessKind,
    /// Why a write became a may-write.
    downgrade: Option<String>,
}

impl<'a> Renderer<'a> {
    /// Builds the isl relations of the modeled accesses; returns the exported
    /// reads, must-writes and may-writes texts.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn model(
        &self,
        b: &Buffer,
        tuples: &[(&Rec, Tuple)],
        extents: &[String],
        context: &str,
        a: &mut ArrayAccesses,
        notes: &mut Vec<String>,
        whole: &mut Option<String>,
    ) -> IslResult<(String, String, String)> {
        let isl = &self.isl;
        let n_out = a.strides.len();
        let mut prepared: Vec<Prepared> = Vec::new();
        for (r, pieces) in tuples {
            if pieces.is_empty() {
                continue;
            }
            // Exactness of the relation.
            let path = r
                .path
                .iter()
                .cloned()
                .fold(Cond::True, Cond::and)
                .map_polys(&|q| self.subst(q));
            let mut downgrade = None;
            if r.kind != AccessKind::Read {
                let (_, path_exact) = path.to_isl(true);
                let pieces_exact = pieces.iter().all(|(c, _)| c.to_isl(true).1);
                let mut atoms = Vec::new();
                path.atoms(&mut atoms);
                for (c, t) in pieces {
                    c.atoms(&mut atoms);
                    t.iter().for_each(|p| p.atoms(&mut atoms));
                }
                let relaxed = atoms.iter().any(|at| match at {
                    Atom::Dim(dn) => (0..self.ndr.work_dim).any(|d| {
                        self.ndr.relaxed(d) && (*dn == nd_name("l", d) || *dn == nd_name("g", d))
                    }),
                    _ => false,
                });
                if !path_exact || !pieces_exact {
                    let why = path
                        .unknown()
                        .map(|w| w.msg.clone())
                        .unwrap_or_else(|| "its condition is not affine".into());
                    downgrade = Some(format!(
                        "it executes under a condition that is not modeled: {why}"
                    ));
                } else if !r.exact {
                    downgrade =
                        Some("it is in a loop or branch that is not modeled exactly".into());
                } else if relaxed {
                    downgrade = Some(
                        "it depends on get_local_id/get_group_id and the local size is not known"
                            .into(),
                    );
                }
            }
            let kind = if r.kind == AccessKind::MustWrite && downgrade.is_some() {
                AccessKind::MayWrite
            } else {
                r.kind
            };
            if r.kind == AccessKind::MustWrite {
                if let Some(d) = &downgrade {
                    push_unique(
                        notes,
                        format!("write '{}' ({}) is a may-write: {d}", r.text, self.loc(r)),
                    );
                }
            }
            let _ = &downgrade;
            prepared.push(Prepared {
                rec: r,
                pieces: pieces.clone(),
                kind,
                downgrade,
            });
        }

        let mut reads: Option<Map> = None;
        let mut must: Option<Map> = None;
        let mut may: Option<Map> = None;
        for p in &prepared {
            let r = p.rec;
            let pieces = self.pieces(r, &p.pieces, None);
            // The context is not intersected here: it only restricts the
            // parameters, and the exported unions are simplified against it.
            let m = isl
                .relation(&self.param_names, &b.tuple, &pieces)?
                .coalesce()
                .ok_in(isl)?;
            a.accesses.push(Access {
                kind: p.kind,
                map: isl.map_str(&m)?,
                span: r.span.clone(),
                text: r.text.clone(),
            });
            // Minimize: keep the global ids only.
            let n_in = m.dim(DimType::In).ok_in(isl)? as u32;
            let e = m
                .project_out(DimType::In, 3, n_in - 3)
                .ok_in(isl)?
                .set_tuple_name(DimType::In, "W")
                .ok_in(isl)?;
            let e = e.coalesce().ok_in(isl)?;
            if !self.bounded(
                &e.copy()
                    .ok_in(isl)?
                    .intersect_params(isl.set(context)?)
                    .ok_in(isl)?,
            )? {
                let why = r
                    .note
                    .clone()
                    .unwrap_or_else(|| "a loop bound or guard is not affine".into());
                whole.get_or_insert(format!(
                    "footprint of '{}' ({}) is unbounded: {why}",
                    r.text,
                    self.loc(r)
                ));
            }
            let slot = match p.kind {
                AccessKind::Read => &mut reads,
                AccessKind::MustWrite => &mut must,
                AccessKind::MayWrite => &mut may,
            };
            *slot = Some(match slot.take() {
                None => e.copy().ok_in(isl)?,
                Some(acc) => acc.union(e.copy().ok_in(isl)?).ok_in(isl)?,
            });
            if p.kind == AccessKind::MustWrite {
                may = Some(match may.take() {
                    None => e,
                    Some(acc) => acc.union(e).ok_in(isl)?,
                });
            }
            let _ = &p.downgrade;
        }

        // Launch assumptions of delinearized subscripts.
        if !extents.is_empty() && self.may_violate(&prepared, extents, context)? {
            for p in &prepared {
                self.assumptions(p, extents, context, a)?;
            }
        }

        let finish = |m: Option<Map>| -> IslResult<String> {
            match m {
                None => Ok(self.empty_map(&b.tuple, n_out)),
                Some(m) => {
                    let m = m.coalesce().ok_in(isl)?.remove_redundancies().ok_in(isl)?;
                    // The gist only shortens the text (the partitioner
                    // intersects with the context again): skipped when it
                    // costs more than the rest of the array's analysis.
                    let ctx = isl.set(context)?;
                    let m = match isl.optional(GIST_MAX_OPS, || m.copy()?.gist_params(ctx)) {
                        Some(g) => g,
                        None => m,
                    };
                    let m = m.coalesce().ok_in(isl)?;
                    if m.is_empty().ok_in(isl)? {
                        Ok(self.empty_map(&b.tuple, n_out))
                    } else {
                        isl.map_str(&m)
                    }
                }
            }
        };
        Ok((finish(reads)?, finish(must)?, finish(may)?))
    }

    /// The disjuncts of an access relation `W[dims] -> name[outs] : cond`
    /// (with `violation`, of the set of domain points `W[dims] : cond`
    /// violating it).
    pub(super) fn pieces(
        &self,
        r: &Rec,
        pieces: &[(Cond, Vec<Poly>)],
        violation: Option<&Violation>,
    ) -> Vec<Piece> {
        let mut dims: Vec<String> = vec!["x0".into(), "x1".into(), "x2".into()];
        dims.extend(self.lg_dims.iter().cloned());
        dims.extend(r.iters.iter().cloned());
        let lane = if r.lanes > 1 {
            let mut l = "lane".to_string();
            while dims.contains(&l) || self.param_names.contains(&l) {
                l.push('_');
            }
            dims.push(l.clone());
            Some(l)
        } else {
            None
        };
        let path = r
            .path
            .iter()
            .cloned()
            .fold(Cond::True, Cond::and)
            .map_polys(&|q| self.subst(q));
        let mut parts = Vec::new();
        for (c, tuple) in pieces {
            let mut outs: Vec<Poly> = tuple.clone();
            let mut cond = Cond::And(vec![self.dom.clone(), path.clone(), c.clone()]);
            if let Some(l) = &lane {
                let l = Poly::dim(l);
                if let Some(last) = outs.last_mut() {
                    *last = last.add(&l).unwrap_or_default();
                }
                // 0 <= lane < lanes
                cond = Cond::and(cond, Cond::Ge(l.clone()));
                cond = Cond::and(
                    cond,
                    Cond::Ge(
                        l.scale(-1)
                            .unwrap_or_default()
                            .add_const(r.lanes as i128 - 1)
                            .unwrap_or_default(),
                    ),
                );
            }
            if let Some(f) = violation {
                cond = Cond::and(cond, f(&outs));
                outs.clear();
            }
            parts.push(Piece {
                dims: dims.clone(),
                cond,
                outs,
            });
        }
        parts
    }
}

/// The condition under which an output tuple violates an assumption.
pub(super) type Violation<'f> = dyn Fn(&[Poly]) -> Cond + 'f;
