//! Exact rational numbers on `i128`: the value type of expression evaluation,
//! and of the Ehrhart engines' quasi-polynomials (the one rational type).
//!
//! Every operation is checked: an overflow is an [`ExprError::Overflow`],
//! never a wrap-around or a panic. Integers (denominator 1) take a fast path
//! without any gcd, so quasi-affine expressions cost a few integer operations.

use std::cmp::Ordering;
use std::fmt;

use crate::ExprError;

/// A reduced fraction `n / d` with `d > 0` and `gcd(n, d) == 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rat {
    n: i128,
    d: i128,
}

/// Greatest common divisor; `b` must be positive, so the result fits.
fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    // a <= |b| <= i128::MAX because b is positive.
    a as i128
}

impl Rat {
    /// Zero.
    pub const ZERO: Rat = Rat { n: 0, d: 1 };

    /// One.
    pub const ONE: Rat = Rat { n: 1, d: 1 };

    /// The integer `n`.
    #[inline]
    pub const fn int(n: i128) -> Rat {
        Rat { n, d: 1 }
    }

    /// `n / d`, reduced; `d` must not be zero.
    pub fn new(n: i128, d: i128) -> Result<Rat, ExprError> {
        if d == 0 {
            return Err(ExprError::DivisionByZero);
        }
        let (n, d) = if d < 0 {
            match (n.checked_neg(), d.checked_neg()) {
                (Some(n), Some(d)) => (n, d),
                _ => return Err(ExprError::Overflow),
            }
        } else {
            (n, d)
        };
        if d == 1 {
            return Ok(Rat { n, d });
        }
        let g = gcd(n, d);
        Ok(Rat { n: n / g, d: d / g })
    }

    /// Whether the value is an integer.
    #[inline]
    pub fn is_int(self) -> bool {
        self.d == 1
    }

    /// The numerator (the value itself when it is an integer).
    #[inline]
    pub fn numer(self) -> i128 {
        self.n
    }

    /// The denominator (positive).
    #[inline]
    pub fn denom(self) -> i128 {
        self.d
    }

    /// Whether the value is zero.
    #[inline]
    pub fn is_zero(self) -> bool {
        self.n == 0
    }

    /// Whether the value is below zero.
    #[inline]
    pub fn is_negative(self) -> bool {
        self.n < 0
    }

    /// Whether the value is 1 or -1.
    #[inline]
    pub fn is_unit(self) -> bool {
        self.d == 1 && self.n.unsigned_abs() == 1
    }

    /// The absolute value as text (`3`, `1/2`): exact for every value,
    /// `i128::MIN` included.
    pub fn abs_text(self) -> String {
        if self.d == 1 {
            self.n.unsigned_abs().to_string()
        } else {
            format!("{}/{}", self.n.unsigned_abs(), self.d)
        }
    }

    /// Sum.
    #[inline]
    pub fn add(self, o: Rat) -> Result<Rat, ExprError> {
        if self.d == 1 && o.d == 1 {
            return self
                .n
                .checked_add(o.n)
                .map(Rat::int)
                .ok_or(ExprError::Overflow);
        }
        let n = self
            .n
            .checked_mul(o.d)
            .and_then(|a| o.n.checked_mul(self.d).and_then(|b| a.checked_add(b)))
            .ok_or(ExprError::Overflow)?;
        let d = self.d.checked_mul(o.d).ok_or(ExprError::Overflow)?;
        Rat::new(n, d)
    }

    /// Negation.
    #[inline]
    pub fn neg(self) -> Result<Rat, ExprError> {
        self.n
            .checked_neg()
            .map(|n| Rat { n, d: self.d })
            .ok_or(ExprError::Overflow)
    }

    /// Difference.
    #[inline]
    pub fn sub(self, o: Rat) -> Result<Rat, ExprError> {
        self.add(o.neg()?)
    }

    /// Product.
    #[inline]
    pub fn mul(self, o: Rat) -> Result<Rat, ExprError> {
        if self.d == 1 && o.d == 1 {
            return self
                .n
                .checked_mul(o.n)
                .map(Rat::int)
                .ok_or(ExprError::Overflow);
        }
        // Cross-reduce first to keep the intermediate values small.
        let g1 = gcd(self.n, o.d);
        let g2 = gcd(o.n, self.d);
        let n = (self.n / g1)
            .checked_mul(o.n / g2)
            .ok_or(ExprError::Overflow)?;
        let d = (self.d / g2)
            .checked_mul(o.d / g1)
            .ok_or(ExprError::Overflow)?;
        Rat::new(n, d)
    }

    /// Quotient.
    pub fn div(self, o: Rat) -> Result<Rat, ExprError> {
        if o.n == 0 {
            return Err(ExprError::DivisionByZero);
        }
        self.mul(Rat::new(o.d, o.n)?)
    }

    /// Division by a non-zero integer constant.
    #[inline]
    pub fn div_int(self, k: i128) -> Result<Rat, ExprError> {
        let d = self.d.checked_mul(k).ok_or(ExprError::Overflow)?;
        Rat::new(self.n, d)
    }

    /// The greatest integer not above the value.
    #[inline]
    pub fn floor(self) -> Rat {
        // d > 0, so Euclidean division rounds toward minus infinity.
        Rat::int(self.n.div_euclid(self.d))
    }

    /// The least integer not below the value.
    #[inline]
    pub fn ceil(self) -> Rat {
        let q = self.n.div_euclid(self.d);
        if self.n.rem_euclid(self.d) == 0 {
            Rat::int(q)
        } else {
            Rat::int(q + 1)
        }
    }

    /// `self - m * floor(self / m)` for a positive integer `m`: in `[0, m)`.
    #[inline]
    pub fn modulo(self, m: i128) -> Result<Rat, ExprError> {
        if self.d == 1 {
            return Ok(Rat::int(self.n.rem_euclid(m)));
        }
        let q = self.div_int(m)?.floor();
        self.sub(q.mul(Rat::int(m))?)
    }

    /// Integer power.
    pub fn pow(self, e: u32) -> Result<Rat, ExprError> {
        let mut acc = Rat::int(1);
        for _ in 0..e {
            acc = acc.mul(self)?;
        }
        Ok(acc)
    }

    /// Exact comparison.
    #[inline]
    pub fn cmp(self, o: Rat) -> Result<Ordering, ExprError> {
        if self.d == o.d {
            return Ok(self.n.cmp(&o.n));
        }
        let a = self.n.checked_mul(o.d).ok_or(ExprError::Overflow)?;
        let b = o.n.checked_mul(self.d).ok_or(ExprError::Overflow)?;
        Ok(a.cmp(&b))
    }

    /// The value as an `i64`, if it is an integer in range.
    pub fn to_i64(self) -> Result<i64, ExprError> {
        if self.d != 1 {
            return Err(ExprError::NotInteger {
                value: self.to_string(),
            });
        }
        i64::try_from(self.n).map_err(|_| ExprError::Overflow)
    }
}

impl fmt::Display for Rat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.d == 1 {
            write!(f, "{}", self.n)
        } else {
            write!(f, "{}/{}", self.n, self.d)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_ceil_mod_follow_isl() {
        let r = Rat::new(-7, 2).unwrap();
        assert_eq!(r.floor(), Rat::int(-4));
        assert_eq!(r.ceil(), Rat::int(-3));
        assert_eq!(Rat::int(-7).modulo(4).unwrap(), Rat::int(1));
        assert_eq!(
            Rat::new(7, 2).unwrap().modulo(2).unwrap(),
            Rat::new(3, 2).unwrap()
        );
    }

    #[test]
    fn arithmetic_is_exact_and_checked() {
        let h = Rat::new(1, 2).unwrap();
        assert_eq!(h.add(h).unwrap(), Rat::int(1));
        assert_eq!(h.mul(Rat::int(6)).unwrap(), Rat::int(3));
        assert_eq!(
            Rat::int(i128::MAX).add(Rat::int(1)),
            Err(ExprError::Overflow)
        );
        assert_eq!(
            Rat::int(i128::MIN + 1).sub(Rat::int(2)),
            Err(ExprError::Overflow)
        );
        assert_eq!(Rat::int(3).div(Rat::ZERO), Err(ExprError::DivisionByZero));
    }
}
