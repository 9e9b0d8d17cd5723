//! The launch-time assumptions of the conversions modelled without
//! wrapping around ([`Renderer::no_wrap_assumptions`],
//! [`crate::eval::NoWrap`]): per conversion, the parameter values for which
//! no work-item has the value outside the type's range.

use super::Renderer;
use crate::isl::{IslFail, IslOk, IslResult, Piece};
use crate::poly::{Atom, Cond, Poly};
use crate::Assumption;

impl<'a> Renderer<'a> {
    /// The launch-time assumptions of the conversions modelled without
    /// wrapping around ([`crate::eval::NoWrap`]): per conversion, the
    /// parameter values for which no work-item of the NDRange (its global,
    /// local and group ids) has the value outside the type's range; none
    /// where every launch meets it. Where isl cannot make the condition, it
    /// is `false` (every launch fails it: arrays whole, never a wrong range).
    pub(crate) fn no_wrap_assumptions(
        &self,
        conversions: &[crate::eval::NoWrap],
        context: &str,
    ) -> Vec<Assumption> {
        let mut out: Vec<Assumption> = Vec::new();
        for nw in conversions {
            let condition = self
                .no_wrap_condition(nw, context)
                .unwrap_or_else(|_| Some(format!("{}{{ : false }}", self.header)));
            let Some(condition) = condition else { continue };
            match out.iter_mut().find(|a| a.condition == condition) {
                Some(a) => {
                    a.description.push_str("; ");
                    a.description.push_str(&nw.what);
                }
                None => out.push(Assumption {
                    description: nw.what.clone(),
                    condition,
                    array: None,
                }),
            }
        }
        self.without_implied(out, context)
    }

    /// `out` without each assumption that the others kept imply within
    /// `context`: checking it at launch could change nothing (`(size_t)(k +
    /// 1)` not negative implies `get_global_id(0) + (k + 1)`, computed in
    /// `size_t`, not negative, the global offset being at least 0). Taken in
    /// order, each against those still kept, so that of two equal ones the
    /// later goes; all kept where isl cannot tell.
    fn without_implied(&self, out: Vec<Assumption>, context: &str) -> Vec<Assumption> {
        if out.len() < 2 {
            return out;
        }
        let isl = &self.isl;
        let implied = |i: usize, kept: &[bool]| -> IslResult<bool> {
            let mut others = isl.set(context)?;
            for (j, a) in out.iter().enumerate() {
                if j != i && kept[j] {
                    others = others.intersect(isl.set(&a.condition)?).ok_in(isl)?;
                }
            }
            others.is_subset(&isl.set(&out[i].condition)?).ok_in(isl)
        };
        let mut kept = vec![true; out.len()];
        for i in 0..out.len() {
            self.isl.reset();
            if implied(i, &kept).unwrap_or(false) {
                kept[i] = false;
            }
        }
        out.into_iter()
            .zip(kept)
            .filter_map(|(a, k)| k.then_some(a))
            .collect()
    }

    /// [`Renderer::no_wrap_assumptions`] of one conversion: `None` when
    /// every launch meets it.
    fn no_wrap_condition(
        &self,
        nw: &crate::eval::NoWrap,
        context: &str,
    ) -> IslResult<Option<String>> {
        let fail = || IslFail::Error("no text".into());
        let value = self.subst(&nw.value).ok_or_else(fail)?;
        // A scalar that is no parameter of the kernel's relations reaches no
        // access and no condition of one: whether it wraps changes nothing
        // recorded, and there is nothing to assume.
        let mut atoms = Vec::new();
        value.atoms(&mut atoms);
        if atoms
            .iter()
            .any(|a| matches!(a, Atom::Param(n) if !self.param_names.contains(n)))
        {
            return Ok(None);
        }
        if !value.is_affine() {
            // a monotone sum (`eval` checked it): no isl, its largest value
            return self
                .monotone_condition(nw, &value)
                .ok_or_else(fail)
                .map(Some);
        }
        let mut dims: Vec<String> = vec!["x0".into(), "x1".into(), "x2".into()];
        dims.extend(self.lg_dims.iter().cloned());
        // value < lo, or value > hi
        let below = Cond::Ge(
            value
                .scale(-1)
                .and_then(|p| p.add_const(nw.lo - 1))
                .ok_or_else(fail)?,
        );
        let outside = if nw.above {
            let above = Cond::Ge(value.add_const(-nw.hi - 1).ok_or_else(fail)?);
            Cond::Or(vec![below, above])
        } else {
            below
        };
        let piece = Piece {
            dims,
            cond: Cond::And(vec![self.dom.clone(), outside]),
            outs: Vec::new(),
        };
        self.isl.reset();
        let points = self.isl.piece_sets(&self.param_names, &[piece], false)?;
        self.avoiding(points, context)
    }

    /// The condition that the monotone sum `value` (positive coefficients
    /// over non-negative ids, sizes and scalars) stays at most `nw.hi`: its
    /// value with every global id at `gs + go - 1`, local id at `ls - 1` and
    /// group id at `ng - 1`, which isl cannot express (a product of
    /// parameters) and the launcher evaluates; `None` for another form.
    fn monotone_condition(&self, nw: &crate::eval::NoWrap, value: &Poly) -> Option<String> {
        let mut max = Poly::default();
        for (m, c) in &value.terms {
            if *c < 0 {
                return None;
            }
            let mut t = Poly::konst(*c);
            for a in m {
                let largest = match a {
                    // a loop iterator, at its loop's bound
                    Atom::Dim(d) if nw.maxima.iter().any(|(n, _)| n == d) => {
                        let (_, m) = nw.maxima.iter().find(|(n, _)| n == d)?;
                        self.subst(m)?
                    }
                    Atom::Dim(d) => {
                        let (k, rest) = d.split_at(1);
                        let dd: u32 = rest.parse().ok()?;
                        match k {
                            // ids of dimensions past the NDRange's are 0
                            "x" | "l" | "g" if dd >= self.ndr.work_dim => Poly::konst(0),
                            "x" => self.nd("gs", dd).add(&self.nd("go", dd))?.add_const(-1)?,
                            "l" => self.nd("ls", dd).add_const(-1)?,
                            "g" => self.nd("ng", dd).add_const(-1)?,
                            _ => return None,
                        }
                    }
                    Atom::Param(n) => Poly::param(n),
                    Atom::Div(..) => return None,
                };
                t = t.mul(&largest, &[])?;
            }
            max = max.add(&t)?;
        }
        Some(format!(
            "{}{{ : {} <= {} }}",
            self.header,
            max.describe(),
            nw.hi
        ))
    }
}
