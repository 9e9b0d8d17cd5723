//! Exact rationals over `i128`, with checked arithmetic.

use std::fmt;

/// A reduced fraction `num / den` with `den > 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rational {
    num: i128,
    den: i128,
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    a = a.abs();
    b = b.abs();
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

impl Rational {
    pub(crate) const ZERO: Rational = Rational { num: 0, den: 1 };
    pub(crate) const ONE: Rational = Rational { num: 1, den: 1 };

    /// `num / den`, reduced; `None` when `den == 0` or on overflow.
    pub(crate) fn new(num: i128, den: i128) -> Option<Rational> {
        if den == 0 {
            return None;
        }
        let g = gcd(num, den).max(1);
        let (mut num, mut den) = (num / g, den / g);
        if den < 0 {
            num = num.checked_neg()?;
            den = den.checked_neg()?;
        }
        Some(Rational { num, den })
    }

    pub(crate) fn int(n: i128) -> Rational {
        Rational { num: n, den: 1 }
    }

    pub(crate) fn num(self) -> i128 {
        self.num
    }

    pub(crate) fn den(self) -> i128 {
        self.den
    }

    pub(crate) fn is_zero(self) -> bool {
        self.num == 0
    }

    pub(crate) fn is_negative(self) -> bool {
        self.num < 0
    }

    pub(crate) fn abs(self) -> Rational {
        Rational {
            num: self.num.abs(),
            den: self.den,
        }
    }

    pub(crate) fn checked_add(self, o: Rational) -> Option<Rational> {
        let g = gcd(self.den, o.den).max(1);
        let l = self.den / g;
        let r = o.den / g;
        let num = self
            .num
            .checked_mul(r)?
            .checked_add(o.num.checked_mul(l)?)?;
        let den = self.den.checked_mul(r)?;
        Rational::new(num, den)
    }

    pub(crate) fn checked_mul(self, o: Rational) -> Option<Rational> {
        let g1 = gcd(self.num, o.den).max(1);
        let g2 = gcd(o.num, self.den).max(1);
        let num = (self.num / g1).checked_mul(o.num / g2)?;
        let den = (self.den / g2).checked_mul(o.den / g1)?;
        Rational::new(num, den)
    }
}

impl fmt::Display for Rational {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den == 1 {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}/{}", self.num, self.den)
        }
    }
}
