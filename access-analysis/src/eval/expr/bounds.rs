//! Interval bounds of a value: of an atom and a polynomial (see the module
//! doc of `eval/expr.rs` for the NDRange premise), over ordinary launches,
//! and the syntactic facts about NDRange names they rest on.

use crate::eval::domain::{imul, is_ndrange_size, nd_name};
use crate::eval::Walker;
use crate::poly::{Atom, Poly};

/// Name prefix of the `x_d - go_d` dimensions used only inside range checks.
const OFFSET_DIM: &str = "u";

impl<'a> Walker<'a> {
    /// Bounds of an atom (see the module doc for the NDRange premise).
    pub(super) fn atom_range(&self, a: &Atom) -> Option<(i128, i128)> {
        // Everything of the NDRange fits in `int`: values up to 2^31 - 1.
        const NDR: i128 = (1 << 31) - 1;
        match a {
            Atom::Dim(d) => {
                if let Some(b) = self.dim_bounds.get(d) {
                    return Some(*b);
                }
                let (k, rest) = d.split_at(1);
                let nd = (k == "x" || k == "l" || k == "g" || k == OFFSET_DIM)
                    && rest.len() == 1
                    && rest.chars().all(|c| c.is_ascii_digit());
                nd.then_some((0, NDR))
            }
            Atom::Param(p) => {
                if let Some(v) = self.spec.get(p) {
                    return Some((*v, *v));
                }
                if is_ndrange_size(p) {
                    return Some((1, NDR));
                }
                if self.is_nd_param(p) {
                    return Some((0, NDR)); // go_d
                }
                let b = self.param_bounds.get(p).copied();
                if self.assumed_nonneg.borrow().contains(p) {
                    return b.map(|(lo, hi)| (lo.max(0), hi));
                }
                b
            }
            Atom::Div(num, d) => {
                let (lo, hi) = self.poly_range(num)?;
                Some((lo.div_euclid(*d), hi.div_euclid(*d)))
            }
        }
    }

    /// Interval bounds of a polynomial, `None` when some atom is unbounded.
    /// Both the polynomial as written and with each global id `x_d` written
    /// as `go_d + u_d` (`0 <= u_d < gs_d`) are bounded, and the tighter bounds
    /// of the two kept (`x0 - go0` is non-negative only in the second form).
    pub(in crate::eval) fn poly_range(&self, p: &Poly) -> Option<(i128, i128)> {
        let direct = self.poly_range_raw(p);
        let mut sub = Poly::default();
        let mut changed = false;
        for (m, c) in &p.terms {
            let mut t = Poly::konst(*c);
            for a in m {
                let f = match a {
                    Atom::Dim(d)
                        if d.len() == 2
                            && d.starts_with('x')
                            && d[1..].chars().all(|c| c.is_ascii_digit()) =>
                    {
                        changed = true;
                        Poly::param(&format!("go{}", &d[1..]))
                            .add(&Poly::dim(&format!("{OFFSET_DIM}{}", &d[1..])))?
                    }
                    _ => Poly::atom(a.clone()),
                };
                t = t.mul(&f, &[])?;
            }
            sub = sub.add(&t)?;
        }
        let shifted = if changed {
            self.poly_range_raw(&sub)
        } else {
            None
        };
        match (direct, shifted) {
            (Some(a), Some(b)) => Some((a.0.max(b.0), a.1.min(b.1))),
            (a, b) => a.or(b),
        }
    }

    fn poly_range_raw(&self, p: &Poly) -> Option<(i128, i128)> {
        let mut acc = (0i128, 0i128);
        for (m, c) in &p.terms {
            let mut t = (*c, *c);
            for a in m {
                t = imul(t, self.atom_range(a)?)?;
            }
            acc = (acc.0.checked_add(t.0)?, acc.1.checked_add(t.1)?);
        }
        Some(acc)
    }

    /// Interval bounds of `p` over ordinary launches: local and group ids
    /// below 2^24, global ids below 2^25, sizes, offsets and scalar
    /// arguments in [0, 2^24] (specialized values exact); see `wrap`.
    pub(super) fn ordinary_range(&self, p: &Poly) -> Option<(i128, i128)> {
        const CAP: i128 = 1 << 24;
        let mut acc = (0i128, 0i128);
        for (m, c) in &p.terms {
            let mut t = (*c, *c);
            for a in m {
                let r = match a {
                    Atom::Param(n) => match self.spec.get(n) {
                        Some(v) => (*v, *v),
                        None => (0, CAP),
                    },
                    // a global id includes the offset
                    Atom::Dim(d) if d.starts_with('x') => (0, 2 * CAP - 1),
                    Atom::Dim(_) => (0, CAP - 1),
                    Atom::Div(num, d) => {
                        let (lo, hi) = self.ordinary_range(num)?;
                        (lo.div_euclid(*d), hi.div_euclid(*d))
                    }
                };
                t = imul(t, r)?;
            }
            acc = (acc.0.checked_add(t.0)?, acc.1.checked_add(t.1)?);
        }
        Some(acc)
    }

    pub(super) fn nonneg_atom(&self, a: &Atom) -> bool {
        match a {
            Atom::Dim(d) => is_id_dim(d),
            Atom::Param(p) => {
                is_ndrange_size(p) || p.starts_with("go") && p.len() == 3 && self.is_nd_param(p)
            }
            Atom::Div(..) => false,
        }
    }

    pub(super) fn is_nd_param(&self, p: &str) -> bool {
        ["gs", "ls", "go", "ng"]
            .iter()
            .any(|k| (0..3).any(|d| p == nd_name(k, d)))
    }
}

/// Whether `d` is a work-item id dimension: a global (`x0`), local (`l1`)
/// or group (`g2`) id.
pub(super) fn is_id_dim(d: &str) -> bool {
    let (k, rest) = d.split_at(1);
    (k == "x" || k == "l" || k == "g")
        && rest.len() == 1
        && rest.chars().all(|c| c.is_ascii_digit())
}
