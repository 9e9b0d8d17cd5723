//! The value domain of the walker: piecewise integer values ([`IntVal`]),
//! pointers into buffer arguments ([`PtrTarget`], [`Val`]), the recorded
//! accesses ([`Rec`]), the NDRange model ([`Ndr`]), the integer types' ranges
//! and the arithmetic on piecewise values (sums, scaling, min/max, C
//! division, comparisons).

use super::MAX_PIECES;
use crate::poly::{Atom, Cond, Poly, Rule, Why};
use crate::AccessKind;
use coarsen::ir::{BinOp, Scalar, Span, Type};

/// Pieces of a piecewise value: (condition, value).
pub(crate) type Pieces = Vec<(Cond, Poly)>;
/// A piece-wise operation on two polynomials.
type PieceOp<'f> = dyn Fn(&Poly, &Poly) -> Result<Pieces, Why> + 'f;
/// A piece-wise operation on one polynomial.
type PieceFn<'f> = dyn Fn(&Poly) -> Result<Pieces, Why> + 'f;

/// A piecewise integer value, or why it is unknown.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum IntVal {
    Known(Vec<(Cond, Poly)>),
    Unknown(Why),
}

impl IntVal {
    pub fn poly(p: Poly) -> IntVal {
        IntVal::Known(vec![(Cond::True, p)])
    }

    pub fn konst(c: i128) -> IntVal {
        IntVal::poly(Poly::konst(c))
    }

    pub fn unknown(msg: impl Into<String>) -> IntVal {
        IntVal::Unknown(Why::other(msg))
    }

    /// `[(c, 1), (not c, 0)]`.
    pub fn from_cond(c: Cond) -> IntVal {
        if let Some(w) = c.unknown() {
            return IntVal::Unknown(w.clone());
        }
        IntVal::Known(vec![
            (c.clone(), Poly::konst(1)),
            (Cond::not(c), Poly::konst(0)),
        ])
    }

    /// The single polynomial of a one-piece value.
    pub fn single(&self) -> Option<&Poly> {
        match self {
            IntVal::Known(v) if v.len() == 1 && v[0].0 == Cond::True => Some(&v[0].1),
            _ => None,
        }
    }

    /// Applies a piece-wise function to two values (cartesian product of pieces).
    pub(super) fn lift2(&self, o: &IntVal, f: &PieceOp) -> IntVal {
        let (a, b) = match (self, o) {
            (IntVal::Unknown(w), _) | (_, IntVal::Unknown(w)) => return IntVal::Unknown(w.clone()),
            (IntVal::Known(a), IntVal::Known(b)) => (a, b),
        };
        let mut out = Vec::new();
        for (ca, pa) in a {
            for (cb, pb) in b {
                match f(pa, pb) {
                    Ok(pieces) => {
                        for (c, p) in pieces {
                            let cond = Cond::and(Cond::and(ca.clone(), cb.clone()), c);
                            if cond != Cond::False {
                                out.push((cond, p));
                            }
                        }
                    }
                    Err(w) => return IntVal::Unknown(w),
                }
                if out.len() > MAX_PIECES {
                    return IntVal::unknown("too many cases (min/max/?:/division)");
                }
            }
        }
        IntVal::Known(out)
    }

    pub(super) fn lift1(&self, f: &PieceFn) -> IntVal {
        self.lift2(&IntVal::konst(0), &|a, _| f(a))
    }

    /// Merges two values for `c ? self : o`.
    pub(super) fn select(c: &Cond, a: IntVal, b: IntVal) -> IntVal {
        if a == b {
            return a;
        }
        match (a, b) {
            (IntVal::Unknown(w), _) | (_, IntVal::Unknown(w)) => IntVal::Unknown(w),
            (IntVal::Known(x), IntVal::Known(y)) => {
                let mut out: Vec<(Cond, Poly)> = Vec::new();
                for (pc, p) in x {
                    out.push((Cond::and(c.clone(), pc), p));
                }
                for (pc, p) in y {
                    out.push((Cond::and(Cond::not(c.clone()), pc), p));
                }
                out.retain(|(c, _)| *c != Cond::False);
                if out.len() > MAX_PIECES {
                    IntVal::unknown("too many cases (min/max/?:/division)")
                } else {
                    IntVal::Known(out)
                }
            }
        }
    }
}

/// What a pointer may point to: a buffer argument and an offset. A
/// pointer of the buffer's own element type (`step == narrow == 1`)
/// counts its offset in the buffer's elements. One cast to a type `step`
/// times as large (`(__global float4 *)` on a `float` buffer) keeps it in
/// the buffer's elements, each of its own elements spanning `step` of
/// them; one cast to a type `narrow` times as small (`(__global uint *)` on
/// a `uint2` buffer) counts it in its own elements, `narrow` to a buffer
/// element. Never both above 1.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PtrTarget {
    pub buf: u32,
    pub off: IntVal,
    pub step: i128,
    pub narrow: i128,
}

impl PtrTarget {
    /// A pointer to element 0 of buffer argument `buf`, of its element type.
    pub fn start_of(buf: u32) -> PtrTarget {
        PtrTarget {
            buf,
            off: IntVal::konst(0),
            step: 1,
            narrow: 1,
        }
    }

    /// `self` moved by `i` of its own elements.
    pub fn moved(&self, i: &IntVal) -> PtrTarget {
        PtrTarget {
            off: add_int(&self.off, &scale_int(i, self.step)),
            ..self.clone()
        }
    }

    /// Whether an access through the pointer covers only part of a buffer
    /// element (a pointer to parts of the buffer's elements).
    pub fn partial(&self) -> bool {
        self.narrow > 1
    }

    /// The buffer elements an access of `lanes` of the pointer's elements
    /// touches: the first (or why it is unknown) and how many.
    pub fn elements(&self, lanes: u32) -> (IntVal, u32) {
        if self.partial() {
            if lanes != 1 {
                return (
                    IntVal::unknown(
                        "a vector access through a pointer to parts of the buffer's elements",
                    ),
                    lanes,
                );
            }
            let n = self.narrow;
            let first = self.off.lift1(&|p| {
                p.floor_div(n)
                    .map(|q| vec![(Cond::True, q)])
                    .ok_or_else(overflow)
            });
            return (first, 1);
        }
        (self.off.clone(), lanes * self.step as u32)
    }

    /// `self` as a pointer to elements of `to` bytes, the buffer's being
    /// `es` bytes (see [`PtrTarget`]); `None` where the sizes do not
    /// divide each other, or a pointer to parts of elements is cast to a
    /// larger type at an offset not provably on a buffer element.
    pub fn cast(&self, es: u32, to: u32) -> Option<PtrTarget> {
        let (es, to) = (es.max(1) as i128, to.max(1) as i128);
        if self.narrow == 1 {
            if to % es == 0 {
                return Some(PtrTarget {
                    step: to / es,
                    ..self.clone()
                });
            }
            if es % to == 0 {
                let n = es / to;
                return Some(PtrTarget {
                    off: scale_int(&self.off, n),
                    step: 1,
                    narrow: n,
                    ..self.clone()
                });
            }
            return None;
        }
        let unit = es / self.narrow;
        if to == unit {
            return Some(self.clone());
        }
        if to % es == 0 {
            let off = exact_div(&self.off, self.narrow)?;
            return Some(PtrTarget {
                off,
                step: to / es,
                narrow: 1,
                ..self.clone()
            });
        }
        None
    }
}

/// `v / k` where every piece of `v` is a multiple of `k` term by term.
fn exact_div(v: &IntVal, k: i128) -> Option<IntVal> {
    let IntVal::Known(pieces) = v else {
        return None;
    };
    let mut out = Vec::with_capacity(pieces.len());
    for (c, p) in pieces {
        if p.terms.values().any(|coef| coef % k != 0) {
            return None;
        }
        out.push((c.clone(), p.floor_div(k)?));
    }
    Some(IntVal::Known(out))
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val {
    Int(IntVal),
    /// A pointer into one of these buffers (several after a merge of branches).
    Ptr(Vec<PtrTarget>),
    /// Anything else (floating point, vectors, private/local arrays).
    Other,
}

/// One recorded access to a buffer argument.
#[derive(Debug, Clone)]
pub(crate) struct Rec {
    pub buf: u32,
    pub kind: AccessKind,
    /// Element index in units of the buffer's element type, or why unknown.
    pub sub: Result<Vec<(Cond, Poly)>, Why>,
    /// Number of consecutive elements accessed from `sub` (vloadN/vstoreN).
    pub lanes: u32,
    /// Conditions under which the access executes (conjunction).
    pub path: Vec<Cond>,
    /// False when the real set of executions is only contained in the modeled one.
    pub exact: bool,
    /// Loop iterator dimensions in scope, outermost first.
    pub iters: Vec<String>,
    pub span: Span,
    pub text: String,
    /// Extra note for the array (e.g. over-approximation reasons).
    pub note: Option<String>,
    /// Made by an atomic builtin.
    pub atomic: bool,
}

/// Names of the NDRange parameters and dimensions for dimension `d`.
pub(crate) fn nd_name(kind: &str, d: u32) -> String {
    format!("{kind}{d}")
}

/// The NDRange model shared by the walker and the renderer.
#[derive(Debug, Clone)]
pub(crate) struct Ndr {
    pub work_dim: u32,
    pub local_size: Option<[i64; 3]>,
    /// Whether dimension d has local/group id dimensions.
    pub lg_used: [bool; 3],
    pub rules: Vec<Rule>,
}

impl Ndr {
    pub fn new(work_dim: u32, local_size: Option<[i64; 3]>, lg_used: [bool; 3]) -> Ndr {
        let mut rules = Vec::new();
        if local_size.is_none() {
            for d in 0..work_dim {
                let ls = Atom::Param(nd_name("ls", d));
                // g_d * ls_d = x_d - go_d - l_d and ng_d * ls_d = gs_d (exact).
                let mut pat = vec![Atom::Dim(nd_name("g", d)), ls.clone()];
                pat.sort();
                let rep = Poly::dim(&nd_name("x", d))
                    .sub(&Poly::param(&nd_name("go", d)))
                    .and_then(|p| p.sub(&Poly::dim(&nd_name("l", d))))
                    .unwrap_or_default();
                rules.push(Rule {
                    pattern: pat,
                    replacement: rep,
                });
                let mut pat = vec![Atom::Param(nd_name("ng", d)), ls];
                pat.sort();
                rules.push(Rule {
                    pattern: pat,
                    replacement: Poly::param(&nd_name("gs", d)),
                });
            }
        }
        Ndr {
            work_dim,
            local_size,
            lg_used,
            rules,
        }
    }

    /// Whether the link between x_d and (g_d, l_d) is only approximated.
    pub fn relaxed(&self, d: u32) -> bool {
        self.local_size.is_none() && d < self.work_dim && self.lg_used[d as usize]
    }
}

pub(super) fn is_int(t: &Type) -> bool {
    matches!(t, Type::Scalar(s) if !s.is_float())
}

pub(super) fn is_unsigned(t: &Type) -> bool {
    matches!(
        t,
        Type::Scalar(Scalar::UChar | Scalar::UShort | Scalar::UInt | Scalar::ULong | Scalar::Bool)
    )
}

/// The value range of an integer type (`None` for non-integers).
pub(crate) fn int_range(t: &Type) -> Option<(i128, i128, u32, bool)> {
    let Type::Scalar(s) = t else { return None };
    if s.is_float() {
        return None;
    }
    if *s == Scalar::Bool {
        return Some((0, 1, 1, false));
    }
    let bits = s.size() * 8;
    let signed = s.is_signed();
    Some(if signed {
        (
            -(1i128 << (bits - 1)),
            (1i128 << (bits - 1)) - 1,
            bits,
            true,
        )
    } else {
        (0, (1i128 << bits) - 1, bits, false)
    })
}

/// Whether `t` is a pointer into a buffer argument's address space.
/// (The IR takes a pointer's space from its pointee's spelling, so a private
/// `__global float **` reads as a global pointer: pointers to pointers are
/// not buffer pointers.)
pub(super) fn is_buffer_ptr(t: &Type) -> bool {
    match t {
        Type::Pointer {
            space: coarsen::ir::AddrSpace::Global | coarsen::ir::AddrSpace::Constant,
            pointee,
            ..
        } => !matches!(**pointee, Type::Pointer { .. }),
        _ => false,
    }
}

/// `Some(t)` for signed types of 32 bits or more, whose arithmetic cannot
/// wrap without undefined behaviour (narrower ones are promoted to `int` and
/// truncated on the store).
pub(super) fn no_ub(t: &Type) -> Option<&Type> {
    match int_range(t) {
        Some((_, _, bits, true)) if bits >= 32 => Some(t),
        _ => None,
    }
}

/// Interval product.
pub(super) fn imul(a: (i128, i128), b: (i128, i128)) -> Option<(i128, i128)> {
    let c = [
        a.0.checked_mul(b.0)?,
        a.0.checked_mul(b.1)?,
        a.1.checked_mul(b.0)?,
        a.1.checked_mul(b.1)?,
    ];
    Some((*c.iter().min()?, *c.iter().max()?))
}

pub(super) fn overflow() -> Why {
    Why::other("arithmetic overflow in a subscript")
}

/// Whether `n` is the parameter of a global offset (`go0` .. `go2`).
pub(crate) fn is_ndrange_offset(n: &str) -> bool {
    (0..3).any(|d| n == nd_name("go", d))
}

pub(crate) fn is_ndrange_size(n: &str) -> bool {
    ["gs", "ls", "ng"]
        .iter()
        .any(|k| (0..3).any(|d| n == nd_name(k, d)))
}

pub(super) fn add_int(x: &IntVal, y: &IntVal) -> IntVal {
    x.lift2(y, &|a, b| {
        a.add(b).map(|q| vec![(Cond::True, q)]).ok_or_else(overflow)
    })
}

pub(super) fn scale_int(x: &IntVal, k: i128) -> IntVal {
    if k == 1 {
        return x.clone();
    }
    x.lift1(&|a| {
        a.scale(k)
            .map(|q| vec![(Cond::True, q)])
            .ok_or_else(overflow)
    })
}

pub(super) fn offset_targets(ts: &[PtrTarget], i: &IntVal, _rules: &[Rule]) -> Vec<PtrTarget> {
    ts.iter().map(|t| t.moved(i)).collect()
}

pub(super) fn min_max(a: &IntVal, b: &IntVal, is_min: bool) -> IntVal {
    a.lift2(b, &|x, y| {
        // min(x, y): x where x <= y, else y.
        let le = Cond::ge(y, x).ok_or_else(overflow)?;
        if is_min {
            Ok(vec![(le.clone(), x.clone()), (Cond::not(le), y.clone())])
        } else {
            Ok(vec![(le.clone(), y.clone()), (Cond::not(le), x.clone())])
        }
    })
}

/// C division (truncating toward zero) or remainder by the constant `d`.
pub(super) fn trunc_div(
    a: &Poly,
    d: i128,
    rem: bool,
    nonneg: bool,
) -> Result<Vec<(Cond, Poly)>, Why> {
    let not_affine = || Why::other(format!("'{}' is divided but is not affine", a.describe()));
    let (m, sign) = (d.abs(), d.signum());
    // floor(a/m) for a >= 0, -floor(-a/m) for a < 0.
    let pos = a.floor_div(m).ok_or_else(not_affine)?;
    let neg = a
        .scale(-1)
        .and_then(|n| n.floor_div(m))
        .and_then(|q| q.scale(-1))
        .ok_or_else(not_affine)?;
    let mk = |q: Poly| -> Result<Poly, Why> {
        if rem {
            // a % d = a - d*trunc(a/d) = a - m*trunc(a/m)
            q.scale(m).and_then(|qm| a.sub(&qm)).ok_or_else(overflow)
        } else {
            q.scale(sign).ok_or_else(overflow)
        }
    };
    if nonneg {
        return Ok(vec![(Cond::True, mk(pos)?)]);
    }
    let ge0 = Cond::Ge(a.clone());
    Ok(vec![(ge0.clone(), mk(pos)?), (Cond::not(ge0), mk(neg)?)])
}

/// Comparison of two integer values as a condition.
pub(super) fn cmp(op: BinOp, x: &IntVal, y: &IntVal) -> Cond {
    let (a, b) = match (x, y) {
        (IntVal::Unknown(w), _) | (_, IntVal::Unknown(w)) => return Cond::Unknown(w.clone()),
        (IntVal::Known(a), IntVal::Known(b)) => (a, b),
    };
    let mut out = Cond::False;
    for (ca, pa) in a {
        for (cb, pb) in b {
            let one = Poly::konst(1);
            let c = match op {
                BinOp::Lt => pb
                    .sub(pa)
                    .and_then(|d| d.sub(&one))
                    .map(|d| Cond::ge(&d, &Poly::default())),
                BinOp::Le => Some(Cond::ge(pb, pa)),
                BinOp::Gt => pa
                    .sub(pb)
                    .and_then(|d| d.sub(&one))
                    .map(|d| Cond::ge(&d, &Poly::default())),
                BinOp::Ge => Some(Cond::ge(pa, pb)),
                BinOp::Eq => Some(Cond::eq(pa, pb)),
                BinOp::Ne => Some(Cond::eq(pa, pb).map(Cond::not)),
                _ => None,
            }
            .flatten()
            .unwrap_or(Cond::Unknown(overflow()));
            out = Cond::or(out, Cond::and(Cond::and(ca.clone(), cb.clone()), c));
        }
    }
    out
}
