//! Ehrhart quasi-polynomials: PolyLib's `evalue` trees copied into Rust,
//! their text form, and their exact evaluation.

use super::ffi;
use super::EhrhartError;
use ranges_format::Rat;

/// Deepest `evalue` nesting accepted from PolyLib (one level per parameter
/// and periodic; the dimension limit keeps real trees far shallower).
const MAX_DEPTH: usize = 64;

/// A quasi-polynomial in the parameters, as PolyLib builds it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum QPoly {
    /// A rational constant.
    Const(Rat),
    /// `sum(coeffs[k] * p^k)` for the parameter of index `param`.
    Poly { param: usize, coeffs: Vec<QPoly> },
    /// `elems[p mod elems.len()]` for the parameter of index `param`.
    Periodic { param: usize, elems: Vec<QPoly> },
}

impl QPoly {
    /// Copies a PolyLib `evalue` tree.
    ///
    /// # Safety
    /// `e` must point to a valid `evalue` whose enodes are valid.
    pub(crate) unsafe fn from_polylib(
        e: *const ffi::evalue,
        n_params: usize,
    ) -> Result<QPoly, EhrhartError> {
        Self::from_polylib_at(e, n_params, 0)
    }

    unsafe fn from_polylib_at(
        e: *const ffi::evalue,
        n_params: usize,
        depth: usize,
    ) -> Result<QPoly, EhrhartError> {
        let bad = |detail: String| EhrhartError::PolyLib {
            detail: format!("Polyhedron_Enumerate gave {detail}"),
        };
        if depth > MAX_DEPTH {
            return Err(bad(format!("an evalue nested deeper than {MAX_DEPTH}")));
        }
        let e = &*e;
        if e.d != 0 {
            let n = e.x.n;
            return Rat::new(n as i128, e.d as i128)
                .map(QPoly::Const)
                .map_err(|_| bad(format!("the invalid rational {n}/{}", e.d)));
        }
        let node = e.x.p;
        if node.is_null() {
            return Err(bad("a null enode".into()));
        }
        let size = (*node).size;
        let pos = (*node).pos;
        if size < 1 {
            return Err(bad(format!("an enode of size {size}")));
        }
        let arr = std::ptr::addr_of!((*node).arr) as *const ffi::evalue;
        if size == 1 && (*node).type_ != ffi::enode_type_evector {
            // A polynomial of degree 0 or a periodic of period 1 is its only
            // element (PolyLib writes the count of a parameterless set so, with pos 0).
            return Self::from_polylib_at(arr, n_params, depth + 1);
        }
        if pos < 1 || pos as usize > n_params {
            return Err(bad(format!("an enode on parameter {pos} of {n_params}")));
        }
        let children = (0..size as usize)
            .map(|k| Self::from_polylib_at(arr.add(k), n_params, depth + 1))
            .collect::<Result<Vec<_>, _>>()?;
        let param = pos as usize - 1;
        match (*node).type_ {
            ffi::enode_type_polynomial => Ok(QPoly::Poly {
                param,
                coeffs: children,
            }),
            ffi::enode_type_periodic => Ok(QPoly::Periodic {
                param,
                elems: children,
            }),
            other => Err(bad(format!("an enode of unknown type {other}"))),
        }
    }

    /// Whether every parameter index is below `n_params` and every periodic
    /// has at least one element.
    pub(crate) fn is_over(&self, n_params: usize) -> bool {
        match self {
            QPoly::Const(_) => true,
            QPoly::Poly {
                param,
                coeffs: children,
            }
            | QPoly::Periodic {
                param,
                elems: children,
            } => {
                *param < n_params
                    && !children.is_empty()
                    && children.iter().all(|c| c.is_over(n_params))
            }
        }
    }

    /// The exact value at the given parameter values (`values[k]` for parameter `k`);
    /// `None` on overflow.
    pub(crate) fn eval(&self, values: &[i64]) -> Option<Rat> {
        match self {
            QPoly::Const(r) => Some(*r),
            QPoly::Poly { param, coeffs } => {
                let x = Rat::int(*values.get(*param)? as i128);
                let mut acc = Rat::ZERO;
                for c in coeffs.iter().rev() {
                    acc = acc.mul(x).ok()?.add(c.eval(values)?).ok()?;
                }
                Some(acc)
            }
            QPoly::Periodic { param, elems } => {
                let v = *values.get(*param)? as i128;
                let idx = v.rem_euclid(elems.len() as i128) as usize;
                elems[idx].eval(values)
            }
        }
    }

    /// The text form: a sum of monomials with rational coefficients, highest
    /// degree first, e.g. `1/2 * N^2 + 3/2 * N + 1`; a periodic coefficient is
    /// written `[ a, b ]_N` (element `N mod 2`), e.g. `1/2 * N + [ 0, 1/2 ]_N`.
    pub(crate) fn to_text(&self, names: &[String]) -> String {
        let mut terms = Vec::new();
        self.expand(&mut vec![0; names.len()], &mut terms);
        // Merge the rational terms of equal monomials, drop zeros.
        let mut merged: Vec<Term<'_>> = Vec::new();
        for t in terms {
            if let Coef::Rat(r) = t.coef {
                if let Some(m) = merged
                    .iter_mut()
                    .find(|m| m.exps == t.exps && matches!(m.coef, Coef::Rat(_)))
                {
                    if let Coef::Rat(acc) = &mut m.coef {
                        // Overflow here is impossible for PolyLib's 64-bit values
                        // in practice; keep the terms apart if it happens.
                        match acc.add(r) {
                            Ok(s) => *acc = s,
                            Err(_) => merged.push(Term {
                                coef: Coef::Rat(r),
                                exps: t.exps,
                            }),
                        }
                    }
                    continue;
                }
            }
            merged.push(t);
        }
        merged.retain(|t| !matches!(t.coef, Coef::Rat(r) if r.is_zero()));
        // Highest total degree first, then by exponents in parameter order.
        merged.sort_by(|a, b| {
            let da: u32 = a.exps.iter().sum();
            let db: u32 = b.exps.iter().sum();
            db.cmp(&da).then_with(|| b.exps.cmp(&a.exps))
        });
        if merged.is_empty() {
            return "0".to_string();
        }
        let mut out = String::new();
        for t in &merged {
            let mono: Vec<String> = t
                .exps
                .iter()
                .zip(names)
                .filter(|(e, _)| **e > 0)
                .map(|(e, n)| {
                    if *e == 1 {
                        n.clone()
                    } else {
                        format!("{n}^{e}")
                    }
                })
                .collect();
            let mono = mono.join(" * ");
            let (neg, body) = match &t.coef {
                Coef::Rat(r) => {
                    let body = if mono.is_empty() {
                        r.abs_text()
                    } else if r.is_unit() {
                        mono
                    } else {
                        format!("{} * {mono}", r.abs_text())
                    };
                    (r.is_negative(), body)
                }
                Coef::Per(p) => {
                    let per = p.periodic_text(names);
                    (
                        false,
                        if mono.is_empty() {
                            per
                        } else {
                            format!("{per} * {mono}")
                        },
                    )
                }
            };
            if out.is_empty() {
                if neg {
                    out.push('-');
                }
            } else {
                out.push_str(if neg { " - " } else { " + " });
            }
            out.push_str(&body);
        }
        out
    }

    fn periodic_text(&self, names: &[String]) -> String {
        match self {
            QPoly::Periodic { param, elems } => {
                let parts: Vec<String> = elems.iter().map(|e| e.to_text(names)).collect();
                format!("[ {} ]_{}", parts.join(", "), names[*param])
            }
            other => other.to_text(names),
        }
    }

    fn expand<'a>(&'a self, exps: &mut Vec<u32>, out: &mut Vec<Term<'a>>) {
        match self {
            QPoly::Const(r) => out.push(Term {
                coef: Coef::Rat(*r),
                exps: exps.clone(),
            }),
            QPoly::Periodic { .. } => out.push(Term {
                coef: Coef::Per(self),
                exps: exps.clone(),
            }),
            QPoly::Poly { param, coeffs } => {
                for (k, c) in coeffs.iter().enumerate() {
                    exps[*param] += k as u32;
                    c.expand(exps, out);
                    exps[*param] -= k as u32;
                }
            }
        }
    }
}

enum Coef<'a> {
    Rat(Rat),
    Per(&'a QPoly),
}

struct Term<'a> {
    coef: Coef<'a>,
    exps: Vec<u32>,
}
