//! The slice's geometry in isl: the bounds `0 <= sx_lo < sx_hi <= gs` of a
//! slice along a dimension, its work-items, the whole NDRange's domain,
//! the parameters' context with the slice's bounds, and the footprints of
//! access relations within them.

use access_analysis::isl::{Affine, Constraint, Isl, Order};
use access_analysis::{AccessKind, ArrayAccesses};
use isl_rs::{DimType, Map, Set};

use super::{Ctx, SX_HI, SX_LO};

impl<'a> Ctx<'a> {
    /// `gs<d>` as isl text: the parameter, or its specialized value.
    fn gs(&self, d: u32) -> String {
        let name = format!("gs{d}");
        if self.acc.params.iter().any(|p| p.name == name) {
            return name;
        }
        self.specialize
            .get(&name)
            .map(|v| v.to_string())
            .unwrap_or(name)
    }

    /// [`Ctx::gs`] as an affine expression.
    fn gs_affine(&self, d: u32) -> Affine {
        let gs = self.gs(d);
        match gs.parse::<i64>() {
            Ok(k) => Affine::konst(k),
            Err(_) => Affine::var(&gs),
        }
    }

    /// The slice's bounds along `d`: `0 <= sx_lo < sx_hi <= gs`, multiples
    /// of a known local size ([`Ctx::aligned`]).
    fn slice_bounds(&self, d: u32) -> Vec<Constraint> {
        let (lo, hi) = (Affine::var(SX_LO), Affine::var(SX_HI));
        let mut cs = vec![
            Constraint::AtLeastZero(lo.clone()),
            // sx_hi - sx_lo - 1 >= 0
            Constraint::AtLeastZero(hi.clone().plus(-1, &lo).offset(-1)),
            Constraint::AtLeastZero(self.gs_affine(d).plus(-1, &hi)),
        ];
        if let Some(ls) = self.local_size {
            let l = ls[d as usize];
            if l > 1 {
                cs.push(Constraint::MultipleOf(lo, l as u32));
                cs.push(Constraint::MultipleOf(hi, l as u32));
            }
        }
        cs
    }

    fn params_header(&self) -> String {
        format!("[{}]", self.param_names.join(", "))
    }

    /// With a known local size, slice bounds are multiples of it (whole work-groups).
    fn aligned(&self, d: u32) -> String {
        match self.local_size {
            Some(ls) if ls[d as usize] > 1 => {
                let l = ls[d as usize];
                format!(" and exists (k_lo, k_hi : {SX_LO} = {l}k_lo and {SX_HI} = {l}k_hi)")
            }
            _ => String::new(),
        }
    }

    /// The work-items of the slice along `d`, within the NDRange.
    pub(super) fn slice(&self, d: u32) -> Option<Set> {
        self.slice_in(&self.isl, d)
    }

    /// [`Ctx::slice`] made in `isl`'s context (one that may live on after
    /// the kernel's own has run out of time).
    pub(super) fn slice_in(&self, isl: &Isl, d: u32) -> Option<Set> {
        let go = if self.acc.params.iter().any(|p| p.name == format!("go{d}")) {
            format!("go{d} + ")
        } else {
            String::new()
        };
        let gs = self.gs(d);
        let text = format!(
            "{} -> {{ W[x0, x1, x2] : {go}{SX_LO} <= x{d} < {go}{SX_HI} and 0 <= {SX_LO} < {SX_HI} <= {gs}{} }}",
            self.params_header(),
            self.aligned(d)
        );
        // x_d - go - sx_lo >= 0 and go + sx_hi - x_d - 1 >= 0
        let mut x = Affine::var(&format!("x{d}"));
        if !go.is_empty() {
            x = x.plus(-1, &Affine::var(&format!("go{d}")));
        }
        let mut cs = vec![
            Constraint::AtLeastZero(x.clone().plus(-1, &Affine::var(SX_LO))),
            Constraint::AtLeastZero(Affine::var(SX_HI).plus(-1, &x).offset(-1)),
        ];
        cs.extend(self.slice_bounds(d));
        let dims = ["x0", "x1", "x2"].map(String::from);
        let s = isl
            .constrained_set(&self.param_names, &dims, &cs, &text)
            .ok()?;
        let dom = isl.set(&self.acc.domain).ok()?;
        let ctx = isl.set(&self.acc.context).ok()?;
        s.intersect(dom).ok()?.intersect_params(ctx).ok()
    }

    pub(super) fn whole_domain(&self) -> Option<Set> {
        let dom = self.isl.set(&self.acc.domain).ok()?;
        let ctx = self.isl.set(&self.acc.context).ok()?;
        dom.intersect_params(ctx).ok()
    }

    pub(super) fn context_with_slice(&self, d: u32) -> Option<Set> {
        let base = self.isl.set(&self.acc.context).ok()?;
        let text = format!(
            "{} -> {{ : 0 <= {SX_LO} < {SX_HI} <= {}{} }}",
            self.params_header(),
            self.gs(d),
            self.aligned(d)
        );
        let s = self
            .isl
            .constrained_set(&self.param_names, &[], &self.slice_bounds(d), &text)
            .ok()?;
        base.intersect(s).ok()
    }

    /// The union of the relations `texts`: `Some(None)` when they are all
    /// empty, `None` when isl failed (never to be mistaken for "not accessed").
    pub(super) fn union_maps(&self, texts: &[&String]) -> Option<Option<Map>> {
        let mut out: Option<Map> = None;
        for t in texts {
            if t.is_empty() {
                continue;
            }
            let m = self.isl.map(t).ok()?;
            if m.is_empty().ok()? {
                continue;
            }
            out = Some(match out {
                None => m,
                Some(o) => o.union(m).ok()?,
            });
        }
        Some(out)
    }

    pub(super) fn footprint(&self, map: &Map, dom: &Set) -> Option<Set> {
        let m = map.copy().ok()?.intersect_domain(dom.copy().ok()?).ok()?;
        m.range().ok()?.coalesce().ok()
    }

    /// The footprints in `dom` of the accesses of `a` of the given kinds, in
    /// the order of the accesses: their union is [`Ctx::footprint`] of
    /// the union of their relations.
    pub(super) fn access_footprints(
        &self,
        a: &ArrayAccesses,
        kinds: &[AccessKind],
        dom: &Set,
    ) -> Option<Vec<Set>> {
        access_footprints_in(&self.isl, a, kinds, dom)
    }
}

/// [`Ctx::access_footprints`] made in `isl`'s context.
pub(super) fn access_footprints_in(
    isl: &Isl,
    a: &ArrayAccesses,
    kinds: &[AccessKind],
    dom: &Set,
) -> Option<Vec<Set>> {
    let mut out = Vec::new();
    for acc in a.accesses.iter().filter(|x| kinds.contains(&x.kind)) {
        let m = isl.map(&acc.map).ok()?;
        // The exported relations keep the global ids only (as `access-analysis` does).
        let n_in = m.dim(DimType::In).ok()? as u32;
        let m = m
            .project_out(DimType::In, 3, n_in.checked_sub(3)?)
            .ok()?
            .set_tuple_name(DimType::In, "W")
            .ok()?;
        out.push(m.intersect_domain(dom.copy().ok()?).ok()?.range().ok()?);
    }
    Some(out)
}

/// The integers between the least and the greatest element of a 1-D set
/// (parametric; unnamed tuple): its hull, without a polyhedral hull.
pub(super) fn interval_of(cx: &Ctx, p: Set) -> Option<Set> {
    let p = p.reset_tuple_id().ok()?;
    let up = cx.isl.order(Order::AtLeast).ok()?;
    let down = cx.isl.order(Order::AtMost).ok()?;
    let above = p.copy().ok()?.apply(up).ok()?;
    let below = p.apply(down).ok()?;
    above.intersect(below).ok()?.coalesce().ok()
}
