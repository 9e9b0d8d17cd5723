//! Integer quotients computed in floating point ([`FloatQuotient`]:
//! `ceil((float)n / 16)`, `(int)((float)a / c)`): recognized without
//! evaluating anything, and their integer value under a launch-time
//! assumption that the conversion is exact.

use crate::eval::domain::{is_int, overflow, trunc_div, IntVal};
use crate::eval::{NoWrap, Walker};
use crate::poly::{Cond, Poly};
use coarsen::ir::{BinOp, Expr, ExprKind, Scalar, Type};

/// How [`FloatQuotient`] rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Round {
    Ceil,
    Floor,
    /// Toward zero (a conversion to an integer type).
    Trunc,
}

/// `ceil(X)` or `floor(X)` with `X = (float)a / c`, an integer converted to
/// a floating type divided by a positive integer constant (`x <
/// ceil((float)width / TILE)`, a tile count): an integer, exactly
/// `ceil(a / c)` (`floor(a / c)`), wherever `|a|` is below `2^p` (`p` the
/// type's significand bits: 24 for `float`, 53 for `double`): `(float)a`
/// is then exact, and `a / c`, at least `1/c` from an integer unless it is
/// one, cannot round across one (half an ulp is at most `|a/c| 2^-p <
/// 1/c`). Compared with an integer `x`, converted, the result is the
/// integer comparison: exact where `|x| <= 2^p`, and where not, `(float)x`
/// is past `2^p` on the same side as `x`, beyond the quotient's value.
#[derive(Debug)]
pub(super) struct FloatQuotient<'e> {
    round: Round,
    /// The integer operand, before its conversion.
    num: &'e Expr,
    /// The divisor: an integer expression (converted) or an integral
    /// floating literal.
    den: Den<'e>,
    /// `2^p` of the floating type.
    exact_below: i128,
}

#[derive(Debug)]
enum Den<'e> {
    Int(&'e Expr),
    Lit(i128),
}

/// The [`FloatQuotient`] `e` is, if it is one (nothing evaluated).
pub(super) fn float_quotient(e: &Expr) -> Option<FloatQuotient<'_>> {
    let e = strip_float_casts(e);
    let ExprKind::Call(name, args) = &e.kind else {
        return None;
    };
    let round = match name.as_str() {
        "ceil" => Round::Ceil,
        "floor" => Round::Floor,
        _ => return None,
    };
    let [x] = args.as_slice() else {
        return None;
    };
    float_division(x, round)
}

/// `x = (float)a / c` (see [`FloatQuotient`]), to be rounded by `round`:
/// inside `ceil` or `floor`, or bare, rounded as what is done with it makes
/// it (a conversion to an integer truncates, [`Round::Trunc`]; a comparison
/// with one rounds as [`comparison_rounding`] says).
pub(super) fn float_division(x: &Expr, round: Round) -> Option<FloatQuotient<'_>> {
    let x = strip_float_casts(x);
    let ExprKind::Binary(BinOp::Div, num, den) = &x.kind else {
        return None;
    };
    let exact_below = exact_integers_below(&x.ty)?;
    // The integer's own conversion may be to a narrower type than the
    // division's (`(float)n / 16.0` divides in double a float): the
    // narrower one bounds it.
    let converted = strip_float_casts(num);
    let (num, exact_below) = match &converted.kind {
        ExprKind::Cast(a) if is_int(&a.ty) => {
            (&**a, exact_below.min(exact_integers_below(&converted.ty)?))
        }
        _ => return None,
    };
    let den_converted = strip_float_casts(den);
    let (den, exact_below) = match &den_converted.kind {
        ExprKind::Cast(d) if is_int(&d.ty) => (
            Den::Int(d),
            exact_below.min(exact_integers_below(&den_converted.ty)?),
        ),
        ExprKind::FloatLit(f, _) if f.fract() == 0.0 && *f >= 1.0 && *f < exact_below as f64 => {
            (Den::Lit(*f as i128), exact_below)
        }
        _ => return None,
    };
    Some(FloatQuotient {
        round,
        num,
        den,
        exact_below,
    })
}

/// The rounding that makes `int OP q` (the integer on the left when
/// `int_left`) the same comparison with an integer, for a real `q`: `t <
/// q` is `t < ceil(q)`, `t <= q` is `t <= floor(q)`, `t > q` is `t >
/// floor(q)`, `t >= q` is `t >= ceil(q)` (and mirrored with `q` on the
/// left); none for `==` and `!=`.
pub(super) fn comparison_rounding(op: BinOp, int_left: bool) -> Option<Round> {
    let op = if int_left {
        op
    } else {
        match op {
            BinOp::Lt => BinOp::Gt,
            BinOp::Gt => BinOp::Lt,
            BinOp::Le => BinOp::Ge,
            BinOp::Ge => BinOp::Le,
            other => other,
        }
    };
    match op {
        BinOp::Lt | BinOp::Ge => Some(Round::Ceil),
        BinOp::Le | BinOp::Gt => Some(Round::Floor),
        _ => None,
    }
}

/// `2^p` for a floating type of `p` significand bits: every integer of a
/// smaller magnitude converts to it exactly.
fn exact_integers_below(t: &Type) -> Option<i128> {
    match t {
        Type::Scalar(Scalar::Float) => Some(1 << 24),
        Type::Scalar(Scalar::Double) => Some(1 << 53),
        _ => None,
    }
}

/// `e` without conversions between floating types around it.
fn strip_float_casts(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Cast(a)
            if matches!(e.ty, Type::Scalar(s) if s.is_float())
                && matches!(a.ty, Type::Scalar(s) if s.is_float()) =>
        {
            strip_float_casts(a)
        }
        _ => e,
    }
}

/// The integer operand of a comparison with a [`FloatQuotient`]: an
/// integer, or one converted to a floating type.
pub(super) fn int_operand(e: &Expr) -> Option<&Expr> {
    match &e.kind {
        _ if is_int(&e.ty) => Some(e),
        ExprKind::Cast(a) if is_int(&a.ty) => Some(a),
        _ => None,
    }
}

impl<'a> Walker<'a> {
    /// The integer a [`FloatQuotient`] (the expression `e`) is: its
    /// numerator evaluated (its accesses recorded), under the launch-time
    /// assumption that the numerator's magnitude stays below `2^p` (a
    /// [`NoWrap`]); unknown where the numerator is not an affine
    /// value of the NDRange and the scalar arguments, or the divisor not a
    /// constant.
    pub(super) fn quotient_value(&mut self, q: &FloatQuotient, e: &Expr) -> IntVal {
        let num = self.eval_int(q.num);
        let den = match q.den {
            Den::Lit(c) => Some(c),
            Den::Int(d) => self.eval_int(d).single().and_then(Poly::as_const),
        };
        let text = self.text(&e.span);
        let unknown =
            |why: &str| IntVal::unknown(format!("'{text}' at {}: {why}", self.loc(&e.span)));
        let Some(c) = den.filter(|&c| c >= 1 && c < q.exact_below) else {
            return unknown("the divisor is not a positive integer constant");
        };
        let IntVal::Known(pieces) = &num else {
            return num;
        };
        if !pieces.iter().all(|(_, p)| self.of_launch_values(p)) {
            return unknown(
                "the dividend is not an affine value of the NDRange and the scalar arguments",
            );
        }
        let float = if q.exact_below == 1 << 24 {
            "float"
        } else {
            "double"
        };
        for (_, p) in pieces {
            self.assume_no_wrap(NoWrap {
                value: p.clone(),
                lo: 1 - q.exact_below,
                hi: q.exact_below - 1,
                above: true,
                what: format!(
                    "'{}' converted to '{float}' is exact, and so is '{text}' ({})",
                    self.text(&q.num.span),
                    self.loc(&e.span)
                ),
                maxima: Vec::new(),
            });
        }
        let single = |v: Option<Poly>| v.map(|v| vec![(Cond::True, v)]).ok_or_else(overflow);
        match q.round {
            Round::Ceil => num.lift1(&|p| single(p.add_const(c - 1).and_then(|x| x.floor_div(c)))),
            Round::Floor => num.lift1(&|p| single(p.floor_div(c))),
            // toward zero: C's integer division
            Round::Trunc => num.lift1(&|p| {
                trunc_div(
                    p,
                    c,
                    false,
                    p.syntactically_nonneg(&|a| self.nonneg_atom(a)),
                )
            }),
        }
    }
}
