//! Symbolic integer values: polynomials over domain dimensions and parameters,
//! and conditions over them, rendered to isl text.
//!
//! Polynomials may have terms of any degree while they are being built
//! (`y * width` is a legitimate intermediate); whether a polynomial is affine is
//! decided where it is used (a guard, a bound, a subscript). Floor divisions by
//! constants are atoms ([`Atom::Div`]) whose numerator is affine, which isl reads
//! as `floor((e)/d)`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Why a value could not be modeled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Why {
    pub kind: WhyKind,
    /// End-user text: what made the value unknown (with a location where useful).
    pub msg: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WhyKind {
    /// The value was loaded from memory (indirect subscript).
    Indirect,
    /// A pointer escaped into a function the analysis cannot see into.
    Escape,
    /// Anything else (non-affine arithmetic, loop-carried, floating point, ...).
    Other,
}

impl Why {
    pub fn other(msg: impl Into<String>) -> Why {
        Why {
            kind: WhyKind::Other,
            msg: msg.into(),
        }
    }
    pub fn indirect(msg: impl Into<String>) -> Why {
        Why {
            kind: WhyKind::Indirect,
            msg: msg.into(),
        }
    }
}

/// An indivisible factor of a monomial.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Atom {
    /// A dimension of the iteration domain (`x0`, `l0`, `g0`, loop iterators, lanes).
    Dim(String),
    /// An isl parameter (NDRange builtin or integer scalar argument), by isl name.
    Param(String),
    /// `floor(num / den)` with `num` affine and `den >= 2`.
    Div(Box<Poly>, i128),
}

/// A polynomial with integer coefficients: monomial (sorted atoms, repeated for
/// powers; empty = constant) to non-zero coefficient.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub(crate) struct Poly {
    pub terms: BTreeMap<Vec<Atom>, i128>,
}

/// A rewriting rule `monomial -> replacement` applied after multiplications,
/// e.g. `g0*ls0 -> x0 - go0 - l0` (exact identities of the NDRange).
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    pub pattern: Vec<Atom>,
    pub replacement: Poly,
}

impl Poly {
    pub fn konst(c: i128) -> Poly {
        let mut p = Poly::default();
        if c != 0 {
            p.terms.insert(Vec::new(), c);
        }
        p
    }

    pub fn atom(a: Atom) -> Poly {
        let mut p = Poly::default();
        p.terms.insert(vec![a], 1);
        p
    }

    pub fn dim(name: &str) -> Poly {
        Poly::atom(Atom::Dim(name.to_string()))
    }

    pub fn param(name: &str) -> Poly {
        Poly::atom(Atom::Param(name.to_string()))
    }

    pub fn as_const(&self) -> Option<i128> {
        match self.terms.len() {
            0 => Some(0),
            1 => self.terms.get(&Vec::new()).copied(),
            _ => None,
        }
    }

    fn add_term(&mut self, mono: Vec<Atom>, c: i128) -> Option<()> {
        if c == 0 {
            return Some(());
        }
        let e = self.terms.entry(mono).or_insert(0);
        *e = e.checked_add(c)?;
        if *e == 0 {
            self.terms.retain(|_, v| *v != 0);
        }
        Some(())
    }

    pub fn add(&self, o: &Poly) -> Option<Poly> {
        let mut r = self.clone();
        for (m, c) in &o.terms {
            r.add_term(m.clone(), *c)?;
        }
        Some(r)
    }

    pub fn sub(&self, o: &Poly) -> Option<Poly> {
        self.add(&o.scale(-1)?)
    }

    pub fn scale(&self, k: i128) -> Option<Poly> {
        let mut r = Poly::default();
        for (m, c) in &self.terms {
            r.add_term(m.clone(), c.checked_mul(k)?)?;
        }
        Some(r)
    }

    pub fn add_const(&self, k: i128) -> Option<Poly> {
        self.add(&Poly::konst(k))
    }

    /// Product, then the rewriting `rules` to a fixed point.
    pub fn mul(&self, o: &Poly, rules: &[Rule]) -> Option<Poly> {
        let mut r = Poly::default();
        for (m1, c1) in &self.terms {
            for (m2, c2) in &o.terms {
                let mut m = m1.clone();
                m.extend(m2.iter().cloned());
                m.sort();
                r.add_term(m, c1.checked_mul(*c2)?)?;
            }
        }
        r.rewrite(rules)
    }

    /// Applies `rules` until none matches (bounded number of rounds).
    pub fn rewrite(&self, rules: &[Rule]) -> Option<Poly> {
        let mut cur = self.clone();
        for _ in 0..16 {
            let mut changed = false;
            let mut next = Poly::default();
            for (m, c) in &cur.terms {
                let mut hit = None;
                for rule in rules {
                    if let Some(rest) = remove_submultiset(m, &rule.pattern) {
                        hit = Some((rest, &rule.replacement));
                        break;
                    }
                }
                match hit {
                    Some((rest, rep)) => {
                        changed = true;
                        let mut restp = Poly::default();
                        restp.terms.insert(rest, *c);
                        // No rules here: the outer loop re-applies them.
                        let prod = restp.mul(rep, &[])?;
                        next = next.add(&prod)?;
                    }
                    None => next.add_term(m.clone(), *c)?,
                }
            }
            cur = next;
            if !changed {
                return Some(cur);
            }
        }
        Some(cur)
    }

    /// Total degree (0 for constants).
    pub fn degree(&self) -> usize {
        self.terms.keys().map(|m| m.len()).max().unwrap_or(0)
    }

    pub fn is_affine(&self) -> bool {
        self.degree() <= 1
    }

    /// All atoms (recursively inside divisions).
    pub fn atoms(&self, out: &mut Vec<Atom>) {
        for m in self.terms.keys() {
            for a in m {
                if let Atom::Div(p, _) = a {
                    p.atoms(out);
                }
                if !out.contains(a) {
                    out.push(a.clone());
                }
            }
        }
    }

    /// Whether the polynomial mentions the dimension `name` (also inside divisions).
    pub fn mentions_dim(&self, name: &str) -> bool {
        let mut v = Vec::new();
        self.atoms(&mut v);
        v.iter().any(|a| matches!(a, Atom::Dim(d) if d == name))
    }

    /// Coefficient of the (degree-1) dimension `name` in an affine polynomial.
    pub fn coeff_of_dim(&self, name: &str) -> i128 {
        self.terms
            .get(&vec![Atom::Dim(name.to_string())])
            .copied()
            .unwrap_or(0)
    }

    /// Substitutes constant values for parameters (also inside divisions).
    pub fn subst(&self, values: &BTreeMap<String, i128>) -> Option<Poly> {
        if values.is_empty() {
            return Some(self.clone());
        }
        self.replace_atoms(&|a| match a {
            Atom::Param(n) => values.get(n).map(|v| Poly::konst(*v)),
            _ => None,
        })
    }

    /// Substitutes `by` for the dimension `name` (also inside divisions,
    /// which are normalized again: `floor((4*t)/4)` becomes `t`).
    pub fn subst_dim(&self, name: &str, by: &Poly) -> Option<Poly> {
        self.replace_atoms(&|a| match a {
            Atom::Dim(n) if n == name => Some(by.clone()),
            _ => None,
        })
    }

    /// Each atom `with` gives a polynomial for replaced by it, divisions
    /// rebuilt over their replaced numerators; `None` on overflow or a
    /// numerator that is no longer affine.
    fn replace_atoms(&self, with: &dyn Fn(&Atom) -> Option<Poly>) -> Option<Poly> {
        let mut r = Poly::default();
        for (m, c) in &self.terms {
            let mut term = Poly::konst(*c);
            for a in m {
                let f = match (with(a), a) {
                    (Some(p), _) => p,
                    (None, Atom::Div(p, d)) => Poly::floor_div(&p.replace_atoms(with)?, *d)?,
                    (None, _) => Poly::atom(a.clone()),
                };
                term = term.mul(&f, &[])?;
            }
            r = r.add(&term)?;
        }
        Some(r)
    }

    /// `floor(self / d)` for `d >= 1`, normalized: `floor((d*A + B)/d) = A + floor(B/d)`
    /// with the coefficients of `B` in `[0, d)`. `None` when `self` is not affine.
    pub fn floor_div(&self, d: i128) -> Option<Poly> {
        if d <= 0 || !self.is_affine() {
            return None;
        }
        if d == 1 {
            return Some(self.clone());
        }
        let mut a = Poly::default();
        let mut b = Poly::default();
        for (m, c) in &self.terms {
            a.add_term(m.clone(), c.div_euclid(d))?;
            b.add_term(m.clone(), c.rem_euclid(d))?;
        }
        if let Some(k) = b.as_const() {
            return a.add_const(k.div_euclid(d));
        }
        a.add(&Poly::atom(Atom::Div(Box::new(b), d)))
    }

    /// The polynomial without its terms whose coefficient is a multiple of
    /// `m`: the same value modulo `m` (every term is an integer). A value
    /// converted to an integer type of `2^n` values keeps nothing of a wider
    /// type's wrap-around (`(int)(x + (size_t)k)`: the `2^64` multiples).
    pub fn without_multiples_of(&self, m: i128) -> Poly {
        let mut r = self.clone();
        r.terms.retain(|_, c| *c % m != 0);
        r
    }

    /// Whether the value is non-negative by construction: every term is a
    /// non-negative multiple of atoms known to be non-negative (`nonneg`
    /// decides for dimensions and parameters) and the constant is non-negative.
    pub fn syntactically_nonneg(&self, nonneg: &dyn Fn(&Atom) -> bool) -> bool {
        self.terms.iter().all(|(m, c)| {
            *c >= 0
                && m.iter().all(|a| match a {
                    Atom::Div(p, _) => p.syntactically_nonneg(nonneg),
                    other => nonneg(other),
                })
        })
    }

    /// isl text of an affine polynomial (`None` if not affine).
    pub fn to_isl(&self) -> Option<String> {
        if !self.is_affine() {
            return None;
        }
        let mut s = String::new();
        // Variable terms first, constant last, for readability.
        let mut items: Vec<(&Vec<Atom>, &i128)> =
            self.terms.iter().filter(|(m, _)| !m.is_empty()).collect();
        items.extend(self.terms.iter().filter(|(m, _)| m.is_empty()));
        for (m, c) in items {
            let body = match m.first() {
                None => String::new(),
                Some(Atom::Dim(n)) | Some(Atom::Param(n)) => n.clone(),
                Some(Atom::Div(p, d)) => format!("floor(({})/{})", p.to_isl()?, d),
            };
            let (neg, mag) = (*c < 0, c.unsigned_abs());
            if s.is_empty() {
                if neg {
                    s.push('-');
                }
            } else {
                s.push_str(if neg { " - " } else { " + " });
            }
            if body.is_empty() {
                let _ = write!(s, "{mag}");
            } else if mag == 1 {
                s.push_str(&body);
            } else {
                let _ = write!(s, "{mag}*{body}");
            }
        }
        if s.is_empty() {
            s.push('0');
        }
        Some(s)
    }

    /// A human-readable rendering of any polynomial (for messages).
    pub fn describe(&self) -> String {
        let mut s = String::new();
        for (m, c) in &self.terms {
            let body: Vec<String> = m
                .iter()
                .map(|a| match a {
                    Atom::Dim(n) | Atom::Param(n) => n.clone(),
                    Atom::Div(p, d) => format!("floor(({})/{})", p.describe(), d),
                })
                .collect();
            if !s.is_empty() {
                s.push_str(if *c < 0 { " - " } else { " + " });
            } else if *c < 0 {
                s.push('-');
            }
            let mag = c.unsigned_abs();
            if body.is_empty() {
                let _ = write!(s, "{mag}");
            } else if mag == 1 {
                s.push_str(&body.join("*"));
            } else {
                let _ = write!(s, "{mag}*{}", body.join("*"));
            }
        }
        if s.is_empty() {
            s.push('0');
        }
        s
    }
}

/// `m` minus the multiset `pat`, if `pat` is contained in `m`.
fn remove_submultiset(m: &[Atom], pat: &[Atom]) -> Option<Vec<Atom>> {
    let mut rest = m.to_vec();
    for a in pat {
        let pos = rest.iter().position(|b| b == a)?;
        rest.remove(pos);
    }
    Some(rest)
}

/// A condition over domain dimensions and parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cond {
    True,
    False,
    /// `p >= 0`.
    Ge(Poly),
    /// `p = 0`.
    Eq(Poly),
    And(Vec<Cond>),
    Or(Vec<Cond>),
    Not(Box<Cond>),
    /// A condition that cannot be modeled.
    Unknown(Why),
}

impl Cond {
    pub fn and(a: Cond, b: Cond) -> Cond {
        match (a, b) {
            (Cond::False, _) | (_, Cond::False) => Cond::False,
            (Cond::True, x) | (x, Cond::True) => x,
            (Cond::And(mut v), Cond::And(w)) => {
                v.extend(w);
                Cond::And(v)
            }
            (Cond::And(mut v), x) | (x, Cond::And(mut v)) => {
                v.push(x);
                Cond::And(v)
            }
            (x, y) => Cond::And(vec![x, y]),
        }
    }

    pub fn or(a: Cond, b: Cond) -> Cond {
        match (a, b) {
            (Cond::True, _) | (_, Cond::True) => Cond::True,
            (Cond::False, x) | (x, Cond::False) => x,
            (Cond::Or(mut v), Cond::Or(w)) => {
                v.extend(w);
                Cond::Or(v)
            }
            (Cond::Or(mut v), x) | (x, Cond::Or(mut v)) => {
                v.push(x);
                Cond::Or(v)
            }
            (x, y) => Cond::Or(vec![x, y]),
        }
    }

    #[allow(clippy::should_implement_trait)]
    pub fn not(a: Cond) -> Cond {
        match a {
            Cond::True => Cond::False,
            Cond::False => Cond::True,
            Cond::Not(x) => *x,
            x => Cond::Not(Box::new(x)),
        }
    }

    /// `a >= b`
    pub fn ge(a: &Poly, b: &Poly) -> Option<Cond> {
        Some(Cond::cmp_const(a.sub(b)?, |c| c >= 0, Cond::Ge))
    }

    /// `a = b`
    pub fn eq(a: &Poly, b: &Poly) -> Option<Cond> {
        Some(Cond::cmp_const(a.sub(b)?, |c| c == 0, Cond::Eq))
    }

    fn cmp_const(d: Poly, f: impl Fn(i128) -> bool, mk: impl Fn(Poly) -> Cond) -> Cond {
        match d.as_const() {
            Some(c) => {
                if f(c) {
                    Cond::True
                } else {
                    Cond::False
                }
            }
            None => mk(d),
        }
    }

    /// The first unknown part, if any.
    pub fn unknown(&self) -> Option<&Why> {
        match self {
            Cond::Unknown(w) => Some(w),
            Cond::And(v) | Cond::Or(v) => v.iter().find_map(|c| c.unknown()),
            Cond::Not(c) => c.unknown(),
            _ => None,
        }
    }

    pub fn atoms(&self, out: &mut Vec<Atom>) {
        match self {
            Cond::Ge(p) | Cond::Eq(p) => p.atoms(out),
            Cond::And(v) | Cond::Or(v) => v.iter().for_each(|c| c.atoms(out)),
            Cond::Not(c) => c.atoms(out),
            _ => {}
        }
    }

    /// Applies the parameter substitution and the rewriting rules.
    pub fn map_polys(&self, f: &dyn Fn(&Poly) -> Option<Poly>) -> Cond {
        let conv = |p: &Poly, mk: fn(Poly) -> Cond| match f(p) {
            Some(q) => mk(q),
            None => Cond::Unknown(Why::other("arithmetic overflow")),
        };
        match self {
            Cond::Ge(p) => conv(p, Cond::Ge),
            Cond::Eq(p) => conv(p, Cond::Eq),
            Cond::And(v) => Cond::And(v.iter().map(|c| c.map_polys(f)).collect()),
            Cond::Or(v) => Cond::Or(v.iter().map(|c| c.map_polys(f)).collect()),
            Cond::Not(c) => Cond::Not(Box::new(c.map_polys(f))),
            other => other.clone(),
        }
    }

    /// isl text of the condition. Parts that cannot be expressed (unknown or
    /// non-affine) are replaced by `true` when `over` (the result contains the
    /// real set) and by `false` otherwise (the result is contained in it).
    /// Returns the text and whether it is exact.
    pub fn to_isl(&self, over: bool) -> (String, bool) {
        let inexact = |over: bool| {
            (
                if over {
                    "true".to_string()
                } else {
                    "false".to_string()
                },
                false,
            )
        };
        match self {
            Cond::True => ("true".into(), true),
            Cond::False => ("false".into(), true),
            Cond::Ge(p) => match p.to_isl() {
                Some(t) => (format!("{t} >= 0"), true),
                None => inexact(over),
            },
            Cond::Eq(p) => match p.to_isl() {
                Some(t) => (format!("{t} = 0"), true),
                None => inexact(over),
            },
            Cond::And(v) | Cond::Or(v) => {
                let sep = if matches!(self, Cond::And(_)) {
                    " and "
                } else {
                    " or "
                };
                let mut exact = true;
                let parts: Vec<String> = v
                    .iter()
                    .map(|c| {
                        let (t, e) = c.to_isl(over);
                        exact &= e;
                        format!("({t})")
                    })
                    .collect();
                (parts.join(sep), exact)
            }
            Cond::Not(c) => {
                let (t, e) = c.to_isl(!over);
                (format!("not ({t})"), e)
            }
            Cond::Unknown(_) => inexact(over),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiples_of_the_modulus_are_dropped() {
        // x0 + k + 1 - 2^64 * floor((k + 1) / 2^64), modulo 2^32
        let k1 = Poly::param("k").add_const(1).unwrap();
        let wrap = k1.floor_div(1 << 64).unwrap().scale(-(1 << 64)).unwrap();
        let v = Poly::dim("x0").add(&k1).unwrap().add(&wrap).unwrap();
        let want = Poly::dim("x0").add(&k1).unwrap();
        assert_eq!(v.without_multiples_of(1 << 32), want);
        // a coefficient that is no multiple stays
        let odd = Poly::param("k").scale(3 << 31).unwrap();
        assert_eq!(odd.without_multiples_of(1 << 32), odd);
        assert_eq!(
            Poly::konst(1 << 32).without_multiples_of(1 << 32),
            Poly::default()
        );
    }

    #[test]
    fn floor_div_normalizes() {
        let x = Poly::dim("x0");
        let p = x.scale(4).unwrap().add_const(5).unwrap();
        // floor((4x + 5)/4) = x + 1
        assert_eq!(p.floor_div(4).unwrap(), x.add_const(1).unwrap());
        let q = x.floor_div(4).unwrap();
        assert_eq!(q.to_isl().unwrap(), "floor((x0)/4)");
        let neg = x.scale(-1).unwrap().floor_div(2).unwrap();
        // floor(-x/2) = -x + floor(x/2)
        assert_eq!(neg.to_isl().unwrap(), "-x0 + floor((x0)/2)");
    }

    #[test]
    fn rewriting_rule_removes_group_times_local_size() {
        let rule = Rule {
            pattern: vec![Atom::Dim("g0".into()), Atom::Param("ls0".into())],
            replacement: Poly::dim("x0")
                .sub(&Poly::param("go0"))
                .unwrap()
                .sub(&Poly::dim("l0"))
                .unwrap(),
        };
        let p = Poly::dim("g0").mul(&Poly::param("ls0"), &[rule]).unwrap();
        assert_eq!(p.to_isl().unwrap(), "-l0 + x0 - go0");
    }

    #[test]
    fn conditions_render_with_approximation() {
        let c = Cond::and(Cond::Ge(Poly::dim("x0")), Cond::Unknown(Why::other("data")));
        assert_eq!(c.to_isl(true), ("(x0 >= 0) and (true)".to_string(), false));
        let n = Cond::not(c);
        assert_eq!(n.to_isl(true).0, "not ((x0 >= 0) and (false))");
    }
}
