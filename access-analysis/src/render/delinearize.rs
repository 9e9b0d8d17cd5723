//! Delinearization: the subscripts of one array split into dimensions, by
//! the parameters multiplying them (`c[y*w + x]` -> `c[y][x]`, strides
//! `[w, 1]`; [`delinearize`]) or by constant strides (`b[k*1000 + j]` ->
//! `b[k][j]`, strides `[1000, 1]`; [`delinearize_const`]) or by a scalar
//! argument standing alone as a plane size (`rf[(q-1)*n + gid]` ->
//! `rf[q-1][gid]`, strides `[n, 1]`; [`delinearize_planes`]).

use crate::eval::Rec;
use crate::poly::{Atom, Cond, Poly};
use std::collections::{BTreeMap, BTreeSet};

/// The output tuples of one access, per piece: (condition, subscript per dimension).
pub(super) type Tuple = Vec<(Cond, Vec<Poly>)>;
pub(super) type Tuples<'r> = Vec<(&'r Rec, Tuple)>;

/// Splits the subscripts of one array into dimensions by their parameter
/// monomials: `y*width + x` -> `width·(y) + 1·(x)`. Returns the strides, the
/// extents of dimensions 1.. (each a single parameter), the tuples, and the
/// number of choices of stride for a product of parameters that matches no
/// stride of a variable (`k*n` in `a[k*n + j]`: `k` or `n`; 1 when there is
/// none): `pick` selects one, 0 leaving out the last parameter by name.
///
/// A term that is a stride alone (`n` in `b[i*n + n - 1]`) counts one step
/// of its dimension (`b[i + 1][-1]`); with `borrow` it stays in the
/// innermost subscript instead (`b[i][n - 1]`), which is the choice whose
/// launch-time assumption can hold (`0 <= n - 1 < n`, where `0 <= -1 < n`
/// never does). The last result says whether the subscripts have such a
/// term (whether `borrow` makes a difference).
#[allow(clippy::type_complexity)]
pub(super) fn delinearize<'r>(
    shaped: &[(&'r Rec, Vec<(Cond, Poly)>)],
    pick: usize,
    borrow: bool,
) -> Result<(Vec<String>, Vec<String>, Tuples<'r>, usize, bool), (Option<&'r Rec>, String)> {
    let mut n_choices = 1;
    let mut borrowable = false;
    // Strides multiplying a variable, over the whole array.
    let mut var_strides: BTreeSet<Vec<String>> = BTreeSet::new();
    for (r, ps) in shaped {
        for (_, p) in ps {
            for m in p.terms.keys() {
                let (params, vars) = split_mono(m);
                if vars.len() > 1 {
                    let names: Vec<String> = m.iter().map(atom_name).collect();
                    return Err((Some(r), format!("non-affine term {}", names.join("*"))));
                }
                if vars.len() == 1 && !params.is_empty() {
                    var_strides.insert(params);
                }
            }
        }
    }
    // The stride each product of parameters that matches no stride of a
    // variable is given (`nj*nk` for `i*nj*nk`, `i` left out; `pick`
    // selects among the choices): a product that is one of them alone
    // (`-nj*nk` in `(i - 1)*(nk*nj)`) is a step of that stride, not rows
    // of the one below.
    let mut chosen: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
    for (_, ps) in shaped {
        for (_, p) in ps {
            for m in p.terms.keys() {
                let (params, vars) = split_mono(m);
                if vars.is_empty()
                    && params.len() > 1
                    && !var_strides.contains(&params)
                    && var_stride_under(&params, &var_strides).is_none()
                {
                    let left_out = &left_out_order(&params, &var_strides)[pick % params.len()];
                    let stride = multiset_minus(&params, std::slice::from_ref(left_out));
                    chosen.insert(params, stride);
                }
            }
        }
    }
    let product_strides: BTreeSet<&Vec<String>> = chosen.values().collect();
    let mut grouped: Vec<(&Rec, Vec<(Cond, BTreeMap<Vec<String>, Poly>)>)> = Vec::new();
    let mut all: BTreeSet<Vec<String>> = BTreeSet::new();
    for (r, ps) in shaped {
        let mut out = Vec::new();
        for (c, p) in ps {
            let mut groups: BTreeMap<Vec<String>, Poly> = BTreeMap::new();
            for (m, coef) in &p.terms {
                let (params, vars) = split_mono(m);
                let (key, term) = if params.is_empty() {
                    (Vec::new(), mono_poly(m, *coef))
                } else if !vars.is_empty() {
                    (params, mono_poly(&vars, *coef))
                } else if var_strides.contains(&params) {
                    borrowable = true;
                    if borrow && params.len() == 1 {
                        (Vec::new(), mono_poly(m, *coef))
                    } else {
                        (params, Poly::konst(*coef))
                    }
                } else if params.len() == 1 {
                    (Vec::new(), mono_poly(m, *coef))
                } else if product_strides.contains(&params) {
                    (params, Poly::konst(*coef))
                } else {
                    // A parameter-only product: factor out the largest stride.
                    let s = match var_stride_under(&params, &var_strides) {
                        Some(s) => s.clone(),
                        None => {
                            n_choices = n_choices.max(params.len());
                            chosen[&params].clone()
                        }
                    };
                    let rest = multiset_minus(&params, &s);
                    (s, Poly::param(&rest[0]).scale(*coef).unwrap_or_default())
                };
                let e = groups.entry(key).or_default();
                *e = e
                    .add(&term)
                    .ok_or((Some(*r), "arithmetic overflow".to_string()))?;
            }
            for k in groups.keys() {
                if !k.is_empty() {
                    all.insert(k.clone());
                }
            }
            out.push((c.clone(), groups));
        }
        grouped.push((r, out));
    }
    // Strides from the outermost: degree descending, then by name.
    let mut strides: Vec<Vec<String>> = all.into_iter().collect();
    strides.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    let mut extents = Vec::new();
    for i in 0..strides.len() {
        let inner: Vec<String> = strides.get(i + 1).cloned().unwrap_or_default();
        if !is_sub_multiset(&inner, &strides[i]) || strides[i].len() != inner.len() + 1 {
            let shown: Vec<String> = strides.iter().map(|s| s.join("*")).collect();
            let first = shaped.first().map(|(r, _)| *r);
            return Err((
                None,
                format!(
                    "inconsistent linearization: the subscripts use strides [{}, 1], which do not nest{}",
                    shown.join(", "),
                    first.map(|r| format!(" ('{}' at {}:{})", r.text, r.span.line, r.span.col)).unwrap_or_default()
                ),
            ));
        }
        extents.push(multiset_minus(&strides[i], &inner)[0].clone());
    }
    let mut tuples: Tuples = Vec::new();
    for (r, out) in grouped {
        let mut pieces = Vec::new();
        for (c, groups) in out {
            let mut t: Vec<Poly> = strides
                .iter()
                .map(|s| groups.get(s).cloned().unwrap_or_default())
                .collect();
            t.push(groups.get(&Vec::new()).cloned().unwrap_or_default());
            if t.iter().any(|p| !p.is_affine()) {
                return Err((Some(r), "a coefficient is not affine".into()));
            }
            pieces.push((c, t));
        }
        tuples.push((r, pieces));
    }
    let mut names: Vec<String> = strides.iter().map(|s| s.join("*")).collect();
    names.push("1".into());
    Ok((names, extents, tuples, n_choices, borrowable))
}

/// The constant strides of an array whose subscripts are affine (issue
/// 12): the absolute coefficients above 1 of the domain dimensions, largest
/// first, when each divides the one before; empty when there are none or
/// they do not nest, or when a `floor` term has a coefficient above 1.
fn const_strides(shaped: &[(&Rec, Vec<(Cond, Poly)>)]) -> Vec<i128> {
    let mut found: BTreeSet<i128> = BTreeSet::new();
    for (_, ps) in shaped {
        for (_, p) in ps {
            for (m, coef) in &p.terms {
                let (params, vars) = split_mono(m);
                if !params.is_empty() || vars.is_empty() || coef.abs() <= 1 {
                    continue;
                }
                if vars.len() != 1 || !matches!(vars[0], Atom::Dim(_)) {
                    return Vec::new();
                }
                found.insert(coef.abs());
            }
        }
    }
    let chain: Vec<i128> = found.into_iter().rev().collect();
    if chain.windows(2).all(|w| w[0] % w[1] == 0) {
        chain
    } else {
        Vec::new()
    }
}

/// Splits affine subscripts into dimensions by their constant strides
/// (`b[k*1000 + j]` -> `b[k][j]`, strides `[1000, 1]`; `a[2*i + 1]` ->
/// `a[i][1]`, strides `[2, 1]`): each term goes to the largest stride that
/// divides its coefficient, the rest (constants, parameters, coefficients
/// of 1) to the innermost. Returns the strides, the extents of dimensions
/// 1.. (`strides[k-1] / strides[k]`) and the tuples (constant terms split
/// into digits, see `nearest` below); `None` without
/// constant strides (see [`const_strides`]). The decomposition is unique
/// only under the launch-time assumptions `0 <= c_k < extent_k`, which the
/// model generates like those of run-time widths.
#[allow(clippy::type_complexity)]
pub(super) fn delinearize_const<'r>(
    shaped: &[(&'r Rec, Vec<(Cond, Poly)>)],
    nearest: bool,
) -> Option<(Vec<String>, Vec<String>, Tuples<'r>)> {
    let mut strides = const_strides(shaped);
    if strides.is_empty() {
        return None;
    }
    strides.push(1);
    let mut tuples: Tuples = Vec::new();
    for (r, ps) in shaped {
        let mut pieces = Vec::new();
        for (c, p) in ps {
            if !p.is_affine() {
                return None;
            }
            let mut t = vec![Poly::default(); strides.len()];
            for (m, coef) in &p.terms {
                if m.is_empty() {
                    // a constant: digits in [0, extent) (`4*i + 3` -> `[i][3]`,
                    // `(dy+1)*3 + (dx+1)` -> `[dy + 1][dx + 1]`), or with
                    // `nearest` nearest to zero, ties nonnegative (`x - 1` ->
                    // `[..][x - 1]`), outermost first
                    let mut rest = *coef;
                    for (k, s) in strides.iter().enumerate() {
                        let mut q = rest.div_euclid(*s);
                        if nearest && rest.rem_euclid(*s) > s / 2 {
                            q += 1;
                        }
                        t[k] = t[k].add_const(q)?;
                        rest -= q * s;
                    }
                    continue;
                }
                let k = strides.iter().position(|s| coef % s == 0)?;
                t[k] = t[k].add(&mono_poly(m, coef / strides[k]))?;
            }
            pieces.push((c.clone(), t));
        }
        tuples.push((*r, pieces));
    }
    let extents = strides
        .windows(2)
        .map(|w| (w[0] / w[1]).to_string())
        .collect();
    Some((
        strides.iter().map(|s| s.to_string()).collect(),
        extents,
        tuples,
    ))
}

/// Splits affine subscripts into planes of a run-time size (the
/// chemistry-style `rf[(q-1)*n + gid]` -> `rf[q-1][gid]`, strides `[n, 1]`):
/// one candidate per scalar argument (`is_arg`) that appears on its own,
/// never inside a division, with at least two different coefficients over
/// the array's subscripts (a subscript without it counting as 0). Its
/// coefficient becomes the outer dimension, every other term the inner
/// one. The 1-D model of such an array is exact but its hull spans every
/// plane between the first and the last; boxes move only the slice's
/// columns of each. The decomposition is unique under the launch-time
/// assumption `0 <= inner < n`, made like those of [`delinearize`].
#[allow(clippy::type_complexity)]
pub(super) fn delinearize_planes<'r>(
    shaped: &[(&'r Rec, Vec<(Cond, Poly)>)],
    is_arg: &dyn Fn(&str) -> bool,
) -> Vec<(Vec<String>, Vec<String>, Tuples<'r>)> {
    let pieces = || shaped.iter().flat_map(|(_, ps)| ps.iter().map(|(_, p)| p));
    if pieces().any(|p| !p.is_affine()) {
        return Vec::new();
    }
    let mut names: BTreeSet<String> = BTreeSet::new();
    for p in pieces() {
        for m in p.terms.keys() {
            if let [Atom::Param(n)] = m.as_slice() {
                if is_arg(n) {
                    names.insert(n.clone());
                }
            }
        }
    }
    let mut out = Vec::new();
    for name in names {
        let key = vec![Atom::Param(name.clone())];
        let in_div = pieces().any(|p| {
            let mut atoms = Vec::new();
            p.atoms(&mut atoms);
            atoms.iter().any(|a| match a {
                Atom::Div(q, _) => {
                    let mut inner = Vec::new();
                    q.atoms(&mut inner);
                    inner.contains(&key[0])
                }
                _ => false,
            })
        });
        let coefs: BTreeSet<i128> = pieces()
            .map(|p| p.terms.get(&key).copied().unwrap_or(0))
            .collect();
        if in_div || coefs.len() < 2 {
            continue;
        }
        let tuples: Tuples = shaped
            .iter()
            .map(|(r, ps)| {
                let pieces = ps
                    .iter()
                    .map(|(c, p)| {
                        let mut inner = p.clone();
                        let outer = inner.terms.remove(&key).unwrap_or(0);
                        (c.clone(), vec![Poly::konst(outer), inner])
                    })
                    .collect();
                (*r, pieces)
            })
            .collect();
        out.push((vec![name.clone(), "1".to_string()], vec![name], tuples));
    }
    out
}

fn atom_name(a: &Atom) -> String {
    match a {
        Atom::Dim(n) | Atom::Param(n) => n.clone(),
        Atom::Div(p, d) => format!("floor(({})/{d})", p.describe()),
    }
}

/// (parameter names, other atoms) of a monomial.
fn split_mono(m: &[Atom]) -> (Vec<String>, Vec<Atom>) {
    let mut params = Vec::new();
    let mut vars = Vec::new();
    for a in m {
        match a {
            Atom::Param(n) => params.push(n.clone()),
            other => vars.push(other.clone()),
        }
    }
    params.sort();
    (params, vars)
}

fn mono_poly(m: &[Atom], c: i128) -> Poly {
    let mut p = Poly::default();
    if c != 0 {
        let mut mm = m.to_vec();
        mm.sort();
        p.terms.insert(mm, c);
    }
    p
}

fn is_sub_multiset(small: &[String], big: &[String]) -> bool {
    let mut rest = big.to_vec();
    for s in small {
        match rest.iter().position(|b| b == s) {
            Some(i) => {
                rest.remove(i);
            }
            None => return false,
        }
    }
    true
}

fn multiset_minus(big: &[String], small: &[String]) -> Vec<String> {
    let mut rest = big.to_vec();
    for s in small {
        if let Some(i) = rest.iter().position(|b| b == s) {
            rest.remove(i);
        }
    }
    rest
}

/// The parameters of a parameter-only product (`i*nj*nk`, sorted by name)
/// in the order they are tried as its coordinate (the stride being the
/// product of the others): first those whose stride sits directly on a
/// stride of a variable (`nj*nk` over `nk` in `b[i*nj*nk + j*nk + k]`, so
/// the strides nest and `i` is the plane), then the rest, the last by name
/// first.
fn left_out_order(params: &[String], var_strides: &BTreeSet<Vec<String>>) -> Vec<String> {
    let mut order: Vec<String> = params.iter().rev().cloned().collect();
    let nests = |left_out: &String| {
        var_stride_under(
            &multiset_minus(params, std::slice::from_ref(left_out)),
            var_strides,
        )
        .is_some()
    };
    // (a stable sort: among equals, the order by name stays)
    order.sort_by_key(|p| !nests(p));
    order
}

/// The stride of a variable that `product` (of parameters) is one
/// parameter above (`nk` under `nj*nk`), the largest when several.
fn var_stride_under<'v>(
    product: &[String],
    var_strides: &'v BTreeSet<Vec<String>>,
) -> Option<&'v Vec<String>> {
    var_strides
        .iter()
        .filter(|s| s.len() + 1 == product.len() && is_sub_multiset(s, product))
        .max_by_key(|s| s.len())
}
