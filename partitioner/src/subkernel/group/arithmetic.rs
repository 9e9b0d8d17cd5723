//! The prologue's interval arithmetic: each step exact in `long`, folded
//! when both sides are literals, else a temporary whose overflow clears
//! `__clpart_fast`; an interval required to fit its C type.

use coarsen::ir::*;

use super::{lit, lit_text, GroupCheck, Iv, FAST};

impl<'a> GroupCheck<'a> {
    pub(super) fn tmp(&mut self, value: String) -> String {
        let n = format!("__clpart_g{}", self.next);
        self.next += 1;
        self.code.push_str(&format!("    long {n} = {value};\n"));
        n
    }

    pub(super) fn require(&mut self, cond: String) {
        if cond.ends_with("L >= 1L)") && cond.starts_with('(') {
            // `(K >= 1L)` with a literal K: decided now
            if let Some(v) = lit(cond[1..cond.len() - " >= 1L)".len()].trim()) {
                if v >= 1 {
                    return;
                }
            }
        }
        let line = format!("    {FAST} &= {cond};\n");
        if !self.code.contains(&line) {
            self.code.push_str(&line);
        }
    }

    /// Requires the interval to fit the integer type (no wrap-around, no
    /// value-changing conversion); false for non-integer types.
    pub(super) fn fits(&mut self, iv: &Iv, ty: &Type) -> bool {
        let Type::Scalar(s) = ty else { return false };
        let (min, max): (Option<i128>, Option<i128>) = match s {
            Scalar::Bool => (Some(0), Some(1)),
            Scalar::Char => (Some(-128), Some(127)),
            Scalar::UChar => (Some(0), Some(255)),
            Scalar::Short => (Some(-32768), Some(32767)),
            Scalar::UShort => (Some(0), Some(65535)),
            Scalar::Int => (Some(-(1 << 31)), Some((1 << 31) - 1)),
            Scalar::UInt => (Some(0), Some((1 << 32) - 1)),
            Scalar::Long => (None, None),
            Scalar::ULong => (Some(0), None),
            Scalar::Half | Scalar::Float | Scalar::Double => return false,
        };
        let mut parts = Vec::new();
        if let Some(m) = min {
            match lit(&iv.lo) {
                Some(v) if i128::from(v) >= m => {}
                Some(_) => parts.push("0".to_string()),
                None => parts.push(format!("({} >= {m}L)", iv.lo)),
            }
        }
        if let Some(m) = max {
            match lit(&iv.hi) {
                Some(v) if i128::from(v) <= m => {}
                Some(_) => parts.push("0".to_string()),
                None => parts.push(format!("({} <= {m}L)", iv.hi)),
            }
        }
        if !parts.is_empty() {
            self.require(parts.join(" & "));
        }
        true
    }

    /// One arithmetic step: folded when both sides are literals (and the
    /// result fits), else a temporary.
    fn op(
        &mut self,
        x: &str,
        y: &str,
        fold: fn(i64, i64) -> Option<i64>,
        code: &dyn Fn(&str, &str) -> String,
    ) -> String {
        match (lit(x), lit(y)) {
            (Some(a), Some(b)) if fold(a, b).is_some_and(|v| v.unsigned_abs() < 1 << 62) => {
                lit_text(fold(a, b).unwrap_or(0))
            }
            _ => self.tmp(code(x, y)),
        }
    }

    pub(super) fn add(&mut self, a: &Iv, b: &Iv) -> Iv {
        if lit(&b.lo) == Some(0) && lit(&b.hi) == Some(0) {
            return a.clone();
        }
        let f = |x: &str, y: &str| format!("__clpart_gadd({x}, {y}, &{FAST})");
        let lo = self.op(&a.lo, &b.lo, i64::checked_add, &f);
        let hi = if a.is_point() && b.is_point() {
            lo.clone()
        } else {
            self.op(&a.hi, &b.hi, i64::checked_add, &f)
        };
        Iv { lo, hi }
    }

    pub(super) fn sub(&mut self, a: &Iv, b: &Iv) -> Iv {
        if lit(&b.lo) == Some(0) && lit(&b.hi) == Some(0) {
            return a.clone();
        }
        let f = |x: &str, y: &str| format!("__clpart_gsub({x}, {y}, &{FAST})");
        let lo = self.op(&a.lo, &b.hi, i64::checked_sub, &f);
        let hi = if a.is_point() && b.is_point() {
            lo.clone()
        } else {
            self.op(&a.hi, &b.lo, i64::checked_sub, &f)
        };
        Iv { lo, hi }
    }

    /// The extremes of `f` over the corners of two intervals (`f` monotone
    /// in each argument when the other is fixed).
    pub(super) fn corners(
        &mut self,
        a: &Iv,
        b: &Iv,
        fold: fn(i64, i64) -> Option<i64>,
        f: &dyn Fn(&str, &str) -> String,
    ) -> Iv {
        let xs: Vec<&String> = if a.is_point() {
            vec![&a.lo]
        } else {
            vec![&a.lo, &a.hi]
        };
        let ys: Vec<&String> = if b.is_point() {
            vec![&b.lo]
        } else {
            vec![&b.lo, &b.hi]
        };
        let mut ps = Vec::new();
        for x in &xs {
            for y in &ys {
                ps.push(self.op(x, y, fold, f));
            }
        }
        if ps.len() == 1 {
            return Iv::point(ps.remove(0));
        }
        let lo = self.tmp(
            ps.iter()
                .skip(1)
                .fold(ps[0].clone(), |acc, p| format!("min({acc}, {p})")),
        );
        let hi = self.tmp(
            ps.iter()
                .skip(1)
                .fold(ps[0].clone(), |acc, p| format!("max({acc}, {p})")),
        );
        Iv { lo, hi }
    }

    pub(super) fn mul(&mut self, a: &Iv, b: &Iv) -> Option<Iv> {
        Some(self.corners(a, b, i64::checked_mul, &|x, y| {
            format!("__clpart_gmul({x}, {y}, &{FAST})")
        }))
    }
}
