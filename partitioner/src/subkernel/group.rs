//! The guard's fast path: one check per work-group instead of one per access.
//!
//! A per-access check turns an index that is consecutive across work-items
//! (`a[i - base]`) into a `select`, which OpenCL compilers can no longer
//! vectorize (PoCL: 3-5x slower streaming kernels). Most subscripts are simple
//! functions of the work-item ids, loop counters and scalar arguments, so the
//! subkernel bounds every value such a subscript can take in the whole
//! work-group before the body runs, by interval arithmetic over the group:
//! - `get_global_id(d)` lies in `[gid - lid, gid - lid + lsize - 1]` (the same
//!   for every work-item of the group), `get_local_id(d)` in `[0, lsize - 1]`;
//! - scalar arguments and the other work-item builtins are one value;
//! - a local integer assigned only by its declaration has its initializer's
//!   interval; the counter of a `for (T k = e0; k < e1; k += s)` loop (any of
//!   `<`, `<=`, `>`, `>=`, `++`, `--`, `+=`, `-=`), declared by the loop and
//!   assigned only by its step, lies between the bounds' extremes; so does
//!   one declared before its loop (`int k; for (k = e0; ...)`, as
//!   PolyBench/GPU writes its loops) when that loop's initialization and
//!   step are its only assignments and nothing outside the loop reads it;
//! - `+ - *`, division, remainder and shifts by positive amounts, `&` with a
//!   non-negative side, `min`/`max`/`clamp`/`mul24`/`mad24`, conversions and
//!   `?:` combine intervals; comparisons give `[0, 1]`.
//!
//! The intervals are computed exactly, in `long` with overflow detection, and
//! every sub-expression's interval must fit its C type, so that no operation
//! of the kernel can wrap anywhere in the group: the kernel then computes
//! exactly the mathematical value, which lies inside the interval. If every
//! such subscript's interval lies inside its window, the group runs a copy
//! of the body whose proven accesses use their plain rebased index (the
//! others keep their checks); otherwise the fully checked copy runs. The test
//! uses only values that are the same for the whole work-group, so both
//! copies may hold barriers. Anything the intervals do not model (loads,
//! calls, variables assigned more than once, floating point) leaves the
//! access checked per access.

mod arithmetic;
mod box_proof;
mod facts;
mod intervals;

use std::collections::HashMap;

use coarsen::ir::*;

use facts::{facts, known_comparisons, Fact};

/// An interval of `long` values in the prologue: two C expressions (names of
/// prologue temporaries or literals).
#[derive(Clone, Debug)]
pub(super) struct Iv {
    lo: String,
    hi: String,
}

impl Iv {
    fn point(v: String) -> Iv {
        Iv {
            lo: v.clone(),
            hi: v,
        }
    }

    fn is_point(&self) -> bool {
        self.lo == self.hi
    }
}

/// The value of a literal the prologue wrote (`-12L`).
fn lit(s: &str) -> Option<i64> {
    s.strip_suffix('L')?.parse().ok()
}

fn lit_text(v: i64) -> String {
    format!("{v}L")
}

/// Where a checked access's element index comes from.
pub(super) enum Index<'e> {
    /// `a[e]`: the index is `e`.
    Expr(&'e Expr),
    /// `*(a + k1 - k2 ...)`: the pointer expression, `a` counting as 0.
    Chain(&'e Expr),
    /// `*a`.
    Zero,
    /// `vloadN(o, a)`: the index is `N * o`.
    Scaled(&'e Expr, u32),
}

/// The window an access must stay in, as the prologue names it.
pub(super) struct Window<'s> {
    pub base: String,
    /// `[lo, hi)` windows the access must lie in (one, or two for a
    /// read-modify-write).
    pub bounds: Vec<(String, String)>,
    /// Elements accessed from the index (vloadN: N).
    pub n: u32,
    pub ptr: &'s str,
    /// The array's box check, when it has one.
    pub boxes: Option<GroupBox>,
}

/// The box check an access of a boxed array must also pass (see
/// [`GroupCheck::access`]), as the prologue names its arguments.
pub(super) struct GroupBox {
    /// Per checked dimension `k = 1..`, the extent's text `E_k` (a scalar
    /// argument's name) when the strides' texts nest as products of names
    /// (`["nx*ny", "nx", "1"]`: `["ny", "nx"]`); `None`: no access is proven.
    pub extent_names: Option<Vec<String>>,
    /// The stride argument of each checked dimension (0: no box check).
    pub strides: Vec<String>,
    /// The extent argument of each checked dimension.
    pub extents: Vec<String>,
    /// Per checked dimension, the inclusive `[lo, hi]` bound arguments the
    /// access must lie in (one pair, or two for a read-modify-write).
    pub bounds: Vec<Vec<(String, String)>>,
    /// The read parts a read must also lie in one of (empty for a
    /// write or an array without parts): per part, its linear window
    /// `[lo, hi)` relative to the device buffer, and per checked dimension
    /// its inclusive bounds.
    pub parts: Vec<((String, String), Vec<(String, String)>)>,
}

/// Builds the prologue that decides, once per work-group, whether the fast
/// copy of the body may run.
pub(super) struct GroupCheck<'a> {
    facts: HashMap<&'a str, Fact<'a>>,
    /// Whether the rewritten work-item builtins are `#define`d (then the
    /// prologue calls them by name).
    macro_use: bool,
    code: String,
    next: usize,
    memo: HashMap<String, Iv>,
    busy: Vec<String>,
    /// Comparisons `var OP expr` known to hold at the access being proven.
    known: Vec<(String, BinOp, Expr)>,
    /// A key naming `known` (memoized intervals depend on it).
    ctx: String,
    /// Accesses proven by the prologue.
    pub proven: usize,
    /// The integer scalar arguments the analysis was specialized on, with
    /// their values (see [`Self::divide`]).
    specialized: std::collections::BTreeMap<String, i64>,
}

const FAST: &str = "__clpart_fast";

impl<'a> GroupCheck<'a> {
    pub fn new(
        k: &'a Function,
        macro_use: bool,
        specialized: &std::collections::BTreeMap<String, i64>,
    ) -> GroupCheck<'a> {
        GroupCheck {
            specialized: specialized.clone(),
            facts: facts(k),
            macro_use,
            code: String::new(),
            next: 0,
            memo: HashMap::new(),
            busy: Vec::new(),
            known: Vec::new(),
            ctx: String::new(),
            proven: 0,
        }
    }

    /// The state to go back to when a buffer turns out unguardable.
    pub fn snapshot(&self) -> (usize, usize, HashMap<String, Iv>, usize) {
        (self.code.len(), self.next, self.memo.clone(), self.proven)
    }

    pub fn restore(
        &mut self,
        (code, next, memo, proven): (usize, usize, HashMap<String, Iv>, usize),
    ) {
        self.code.truncate(code);
        self.next = next;
        self.memo = memo;
        self.proven = proven;
    }

    /// The prologue: declarations of the test's temporaries and the flag
    /// `__clpart_fast`, true when every proven access stays in its window in
    /// the whole work-group.
    pub fn prologue(&self) -> String {
        format!("    int {FAST} = 1;\n{}", self.code)
    }

    /// Tries to prove the access once per work-group; true when the
    /// prologue now tests it (the fast copy may use the plain index).
    pub fn access(&mut self, index: Index<'_>, w: &Window<'_>, conds: &[(bool, &Expr)]) -> bool {
        let (code_len, next, memo) = (self.code.len(), self.next, self.memo.clone());
        // the comparisons known to hold at the access bound variables further
        self.known = Vec::new();
        for (holds, c) in conds {
            known_comparisons(c, *holds, &mut self.known);
        }
        self.ctx = self
            .known
            .iter()
            .map(|(n, op, e)| format!("{n}{}{}-{};", op.symbol(), e.span.start, e.span.end))
            .collect();
        let iv = match index {
            Index::Expr(e) => self.iv(e, None),
            Index::Chain(e) => self.iv(e, Some(w.ptr)),
            Index::Zero => Some(Iv::point("0L".into())),
            Index::Scaled(e, n) => self
                .iv(e, None)
                .and_then(|o| self.mul(&o, &Iv::point(format!("{n}L")))),
        };
        let Some(iv) = iv else {
            // roll back what the failed attempt emitted
            self.code.truncate(code_len);
            self.next = next;
            self.memo = memo;
            return false;
        };
        let lo = self.tmp(format!("__clpart_gsub({}, {}, &{FAST})", iv.lo, w.base));
        let hi = self.tmp(format!("__clpart_gsub({}, {}, &{FAST})", iv.hi, w.base));
        for (wlo, whi) in &w.bounds {
            self.code.push_str(&format!(
                "    {FAST} &= ({lo} >= {wlo}) & ({hi} <= {whi} - {});\n",
                w.n
            ));
        }
        if let Some(b) = &w.boxes {
            self.box_test(&index, w, b, (&lo, &hi));
        }
        self.proven += 1;
        true
    }
}

/// `e` is `p` itself (through conversions).
fn param_through_casts<'e>(e: &'e Expr, p: &str) -> Option<&'e Expr> {
    match &e.kind {
        ExprKind::Var(n) if n == p => Some(e),
        ExprKind::Cast(x) if matches!(e.ty, Type::Pointer { .. }) => param_through_casts(x, p),
        _ => None,
    }
}

fn strip_casts(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Cast(x) => strip_casts(x),
        _ => e,
    }
}

fn is_var(e: &Expr, n: &str) -> bool {
    matches!(&strip_casts(e).kind, ExprKind::Var(v) if v == n)
}
