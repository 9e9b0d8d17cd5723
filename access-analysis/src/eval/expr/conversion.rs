//! The C conversions of a value: to an integer type (modulo `2^n`, as a
//! quasi-affine remainder, or without the wrap under a launch-time
//! assumption, a [`NoWrap`]) and between pointer types.

use super::bounds::is_id_dim;
use crate::eval::domain::{int_range, is_buffer_ptr, is_int, IntVal, PtrTarget, Val};
use crate::eval::{NoWrap, Walker};
use crate::poly::{Atom, Cond, Poly, Why};
use coarsen::ir::{Span, Type};

/// Each loop iterator's largest value, by name.
type LoopMaxima = Vec<(String, Poly)>;

impl<'a> Walker<'a> {
    /// Converts a value to the declared type of a variable.
    /// `from` is the C type of the stored value (see [`Walker::wrap`]).
    pub(in crate::eval) fn convert(
        &self,
        v: Val,
        from: Option<&Type>,
        ty: &Type,
        span: &Span,
    ) -> Val {
        match ty {
            t if is_int(t) => match v {
                Val::Int(i) => Val::Int(self.wrap(i, from, t, span)),
                _ => Val::Int(IntVal::unknown(format!(
                    "value at {} is not an integer expression",
                    self.loc(span)
                ))),
            },
            t if is_buffer_ptr(t) => match v {
                Val::Ptr(p) => Val::Ptr(p),
                _ => self.any_buffer(format!(
                    "the target of the pointer at {} cannot be tracked",
                    self.loc(span)
                )),
            },
            _ => Val::Other,
        }
    }

    /// The value of `v` converted to the integer type `ty` (C semantics: modulo
    /// 2^n, two's complement for signed targets); see the module doc.
    ///
    /// `from` is the C type the value already has, when it has one: a value of
    /// a type whose range lies within `ty`'s needs no wrapping (values of
    /// signed types are in range because signed overflow is undefined).
    pub(super) fn wrap(&self, v: IntVal, from: Option<&Type>, ty: &Type, span: &Span) -> IntVal {
        let Some((lo, hi, bits, signed)) = int_range(ty) else {
            return v;
        };
        if let Some((flo, fhi, _, _)) = from.and_then(int_range) {
            if flo >= lo && fhi <= hi {
                return v;
            }
        }
        let IntVal::Known(pieces) = v else { return v };
        // Terms that are multiples of 2^bits vanish in the conversion: a
        // wider unsigned intermediate's wrap-around (`get_global_id(0) + (k +
        // 1)` is computed in `size_t`, then converted to `int`) leaves the
        // value itself.
        let m = 1i128 << bits;
        let pieces: Vec<(Cond, Poly)> = if bits > 1 {
            pieces
                .into_iter()
                .map(|(c, p)| (c, p.without_multiples_of(m)))
                .collect()
        } else {
            pieces
        };
        if pieces
            .iter()
            .all(|(_, p)| self.poly_range(p).is_some_and(|(a, b)| a >= lo && b <= hi))
        {
            return IntVal::Known(pieces);
        }
        let text = self.text(span);
        let why = || {
            Why::other(format!(
                "'{text}' may wrap around in '{}' ({})",
                ty.name(),
                self.loc(span)
            ))
        };
        if bits == 1 {
            return IntVal::Unknown(why());
        }
        let half = if signed { m / 2 } else { 0 };
        let mut out = Vec::new();
        for (c, p) in pieces {
            if self.poly_range(&p).is_some_and(|(a, b)| a >= lo && b <= hi) {
                out.push((c, p));
                continue;
            }
            // Kept whole under a launch-time assumption that it never wraps
            // (see `NoWrap`): a value of the NDRange alone that stays in
            // range on every NDRange of up to 2^24 work-items and
            // work-groups per dimension (one that wraps on ordinary
            // launches, `i + 4294967295u`, keeps its wrap-around).
            let ordinary = self
                .ordinary_range(&p)
                .is_some_and(|(a, b)| a >= lo && b <= hi);
            if ordinary && self.of_ndrange_alone(&p) {
                self.assume_no_wrap(NoWrap {
                    value: p.clone(),
                    lo,
                    hi,
                    above: true,
                    what: format!("'{text}' stays within '{}' ({})", ty.name(), self.loc(span)),
                    maxima: Vec::new(),
                });
                out.push((c, p));
                continue;
            }
            // A sum of products of non-negative ids, NDRange values, loop
            // iterators (each bounded above by its loop's condition) and
            // integer scalar arguments (`get_global_id(1) * width +
            // get_global_id(0)`; `i * npoints + tid` into a `uint`, `i`
            // counting to `nfeatures`): kept under the assumptions, checked
            // at launch, that the scalars are not negative and that its
            // value with every id and iterator at its largest stays in
            // range.
            if let Some((maxima, scalars)) = self.monotone_in_loops(&p, lo) {
                for n in scalars {
                    self.assume_no_wrap(NoWrap {
                        value: Poly::param(&n),
                        lo: 0,
                        hi,
                        above: false,
                        what: format!("'{n}' is not negative ({})", self.loc(span)),
                        maxima: Vec::new(),
                    });
                    self.assumed_nonneg.borrow_mut().insert(n);
                }
                self.assume_no_wrap(NoWrap {
                    value: p.clone(),
                    lo,
                    hi,
                    above: true,
                    what: format!("'{text}' stays within '{}' ({})", ty.name(), self.loc(span)),
                    maxima,
                });
                out.push((c, p));
                continue;
            }
            // An integer scalar argument converted to an unsigned type
            // (`get_global_id(1) * width` with `int width` converts `width`
            // to `size_t`): kept as it is under the assumption that it is
            // not negative, and taken as such from then on.
            if let Some(n) = self.scalar_param_alone(&p) {
                if lo == 0
                    && self
                        .atom_range(&Atom::Param(n.clone()))
                        .is_some_and(|(_, b)| b <= hi)
                {
                    self.assume_no_wrap(NoWrap {
                        value: p.clone(),
                        lo,
                        hi,
                        above: false,
                        what: format!(
                            "'{text}' converted to '{}' is not negative ({})",
                            ty.name(),
                            self.loc(span)
                        ),
                        maxima: Vec::new(),
                    });
                    self.assumed_nonneg.borrow_mut().insert(n);
                    out.push((c, p));
                    continue;
                }
            }
            // An affine value of the ids, the NDRange's values and integer
            // scalar arguments (`get_global_id(0) + (k + 1)` into an `int`,
            // `k + 1` converted to `size_t`) that stays in range on ordinary
            // launches whose scalars lie in [0, 2^24]: kept as it is under
            // the assumption, over the scalars too, that no work-item's value
            // leaves the range (one that does, `k` near `INT_MAX`, fails it
            // at launch).
            if ordinary && self.of_launch_values(&p) {
                let above = self.poly_range(&p).is_none_or(|(_, b)| b > hi);
                let what = if above || lo < 0 {
                    format!("'{text}' stays within '{}' ({})", ty.name(), self.loc(span))
                } else {
                    format!(
                        "'{text}' converted to '{}' is not negative ({})",
                        ty.name(),
                        self.loc(span)
                    )
                };
                self.assume_no_wrap(NoWrap {
                    value: p.clone(),
                    lo,
                    hi,
                    above,
                    what,
                    maxima: Vec::new(),
                });
                out.push((c, p));
                continue;
            }
            // r = ((p + half) mod m) - half
            let shifted = match p.add_const(half) {
                Some(q) => q,
                None => return IntVal::Unknown(why()),
            };
            let Some(q) = shifted.floor_div(m) else {
                return IntVal::Unknown(why());
            };
            let Some(r) = q
                .scale(m)
                .and_then(|qm| shifted.sub(&qm))
                .and_then(|r| r.add_const(-half))
            else {
                return IntVal::Unknown(why());
            };
            out.push((c, r));
        }
        IntVal::Known(out)
    }

    /// Whether `p` is affine and made of the NDRange's values alone: global,
    /// local and group ids, NDRange sizes and offsets (and floor divisions
    /// of such), so that whether it wraps around depends on the launch's
    /// sizes only, which every launch checks (see `NoWrap`).
    fn of_ndrange_alone(&self, p: &Poly) -> bool {
        affine_in_ids_and(p, |n| self.is_nd_param(n))
    }

    /// Whether `p` is affine in the NDRange's values (ids, sizes, offsets)
    /// and the scalar arguments: a value the launch fixes per work-item,
    /// which a launch-time assumption can bound ([`NoWrap`]).
    pub(super) fn of_launch_values(&self, p: &Poly) -> bool {
        affine_in_ids_and(p, |_| true)
    }

    /// A pointer value `v` of type `from` converted to `to`: where their
    /// pointees differ in size, each target counted in the new elements
    /// ([`PtrTarget::cast`]); a target that cannot be makes the pointer's
    /// targets unknown.
    pub(super) fn cast_pointer(&self, v: Val, from: &Type, to: &Type, span: &Span) -> Val {
        let size = |t: &Type| match t {
            Type::Pointer { pointee, .. } => pointee.size(),
            _ => None,
        };
        let (Val::Ptr(ts), Some(a), Some(b)) = (&v, size(from), size(to)) else {
            return v;
        };
        if a == b {
            return v;
        }
        let cast: Option<Vec<PtrTarget>> = ts
            .iter()
            .map(|t| t.cast(self.buf_elem_sizes.get(&t.buf).copied().unwrap_or(1), b))
            .collect();
        match cast {
            Some(ts) => Val::Ptr(ts),
            None => self.any_buffer(format!(
                "the pointer cast at {} to '{}' is not a whole number of the buffer's elements, or of a part of one",
                self.loc(span),
                to.name()
            )),
        }
    }

    /// For a non-affine sum `p` of products with positive coefficients of
    /// ids, loop iterators that start at 0 or above and are bounded above
    /// by their loop's condition, NDRange values and integer scalar
    /// arguments, and a constant of at least `lo`: each iterator's largest
    /// value, and the scalars not yet known to be non-negative.
    fn monotone_in_loops(&self, p: &Poly, lo: i128) -> Option<(LoopMaxima, Vec<String>)> {
        if p.is_affine() {
            return None;
        }
        let (mut maxima, mut scalars): (Vec<(String, Poly)>, Vec<String>) =
            (Vec::new(), Vec::new());
        for (m, c) in &p.terms {
            if m.is_empty() {
                if *c < lo {
                    return None;
                }
                continue;
            }
            if *c <= 0 {
                return None;
            }
            for a in m {
                match a {
                    Atom::Dim(d) if is_id_dim(d) => {}
                    Atom::Dim(d) => {
                        if self.dim_bounds.get(d).is_none_or(|(low, _)| *low < 0) {
                            return None;
                        }
                        if !maxima.iter().any(|(n, _)| n == d) {
                            maxima.push((d.clone(), self.loop_max(d)?));
                        }
                    }
                    Atom::Param(n) if self.is_nd_param(n) => {}
                    Atom::Param(n) => match self.atom_range(a) {
                        Some((low, _)) if low >= 0 => {}
                        _ if self.spec.contains_key(n) => return None,
                        Some(_) => {
                            if !scalars.contains(n) {
                                scalars.push(n.clone())
                            }
                        }
                        None => return None,
                    },
                    Atom::Div(..) => return None,
                }
            }
        }
        Some((maxima, scalars))
    }

    /// The largest value of loop iterator `d` where the walk is: from a
    /// condition of the path `e - d >= 0` (`d < n`, `d <= n - 1`) whose
    /// `e` holds no dimension.
    fn loop_max(&self, d: &str) -> Option<Poly> {
        fn find(c: &Cond, d: &str) -> Option<Poly> {
            match c {
                Cond::Ge(q) if q.coeff_of_dim(d) == -1 => {
                    let e = q.add(&Poly::dim(d))?;
                    let mut atoms = Vec::new();
                    e.atoms(&mut atoms);
                    (e.is_affine()
                        && !atoms
                            .iter()
                            .any(|a| matches!(a, Atom::Dim(_) | Atom::Div(..))))
                    .then_some(e)
                }
                Cond::And(cs) => cs.iter().find_map(|c| find(c, d)),
                _ => None,
            }
        }
        self.path.iter().find_map(|c| find(c, d))
    }

    /// Records `nw` (each value and range once).
    pub(super) fn assume_no_wrap(&self, nw: NoWrap) {
        let mut seen = self.no_wrap.borrow_mut();
        if !seen
            .iter()
            .any(|x| x.value == nw.value && x.lo == nw.lo && x.hi == nw.hi && x.above == nw.above)
        {
            seen.push(nw);
        }
    }

    /// The name of the integer scalar argument `p` is, alone (coefficient
    /// 1, no constant), if it is one (not an NDRange value).
    fn scalar_param_alone(&self, p: &Poly) -> Option<String> {
        let (m, c) = p.terms.iter().next()?;
        if p.terms.len() != 1 || *c != 1 || m.len() != 1 {
            return None;
        }
        match &m[0] {
            Atom::Param(n) if !self.is_nd_param(n) && !self.spec.contains_key(n) => Some(n.clone()),
            _ => None,
        }
    }
}

/// Whether `p` is affine (and isl can write it) in the work-item ids and
/// the parameters `param` accepts, and floor divisions of such.
fn affine_in_ids_and(p: &Poly, param: impl Fn(&str) -> bool) -> bool {
    let mut atoms = Vec::new();
    p.atoms(&mut atoms);
    p.is_affine()
        && p.to_isl().is_some()
        && atoms.iter().all(|a| match a {
            Atom::Dim(d) => is_id_dim(d),
            Atom::Param(n) => param(n),
            // its numerator's atoms are in the list too
            Atom::Div(..) => true,
        })
}
