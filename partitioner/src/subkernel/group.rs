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

use std::collections::HashMap;

use coarsen::ir::*;

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

/// How a for-loop moves its counter.
#[derive(Clone, Copy)]
struct LoopShape<'a> {
    init: &'a Expr,
    /// The other side of the condition `k OP bound` (normalized so that `k`
    /// is on the left).
    bound: &'a Expr,
    op: BinOp,
    /// The step's magnitude (`1` for `++`/`--`).
    step: Option<&'a Expr>,
    up: bool,
    /// The type the condition compares in.
    cmp_ty: &'a Type,
}

/// What a variable name can be bounded by.
#[derive(Clone, Copy)]
enum Fact<'a> {
    /// An integer scalar argument never assigned: one value.
    Uniform(&'a Type),
    /// A local assigned only by its declaration.
    Def(&'a Expr, &'a Type),
    /// A for-loop counter.
    Loop(LoopShape<'a>, &'a Type),
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

/// One term of a subscript split into a sum of products (see
/// [`GroupCheck::box_proof`]): `±` the product of `factors` (1 when empty).
#[derive(Clone)]
struct Term {
    neg: bool,
    factors: Vec<Expr>,
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

    /// The box part of an access's test, once its window is
    /// proven (so that the subscript is computed exactly, without
    /// wrap-around, and is not negative). With the box check on (nonzero
    /// strides), an access is proven only when its subscript splits, from
    /// the innermost dimension out, as
    /// `C_m + E_m * (C_{m-1} + E_{m-1} * (... + E_1 * Q))` with each `E_k`
    /// the scalar argument that is dimension `k`'s extent (over literal
    /// strides, the integer literal that is the strides' ratio, the launch's
    /// extent argument required to equal it) and
    /// `0 <= C_k < E_k`: then `C_k` is the component the
    /// checked copy computes as `(i / stride_k) % extent_k`, and each must lie
    /// in the box. Every other access of a boxed array leaves the fast copy
    /// to launches that check no box. No division.
    ///
    /// With read parts, the access must also lie inside one part for the
    /// whole group: its rebased interval `sub` inside the part's linear
    /// window and each `C_k` inside the part's bounds (then every element
    /// it takes has its components inside the part, dimension 0 included,
    /// as the linear window bounds the outermost component once the others
    /// are bounded).
    fn box_test(&mut self, index: &Index<'_>, w: &Window<'_>, b: &GroupBox, sub: (&str, &str)) {
        let off = b
            .strides
            .iter()
            .map(|st| format!("({st} == 0)"))
            .collect::<Vec<_>>()
            .join(" & ");
        let off = if b.strides.len() > 1 {
            format!("({off})")
        } else if b.strides.is_empty() {
            // the read runs of a 1-D array: off when part 0 is empty
            b.parts
                .first()
                .map_or("1".to_string(), |((_, hi), _)| format!("({hi} == 0)"))
        } else {
            off
        };
        let (code_len, next, memo) = (self.code.len(), self.next, self.memo.clone());
        match self.box_proof(index, w, b, sub) {
            Some(p) => self
                .code
                .push_str(&format!("    {FAST} &= {off} | ({p});\n")),
            None => {
                self.code.truncate(code_len);
                self.next = next;
                self.memo = memo;
                self.code.push_str(&format!("    {FAST} &= {off};\n"));
            }
        }
    }

    /// The condition that proves an access inside its box (see
    /// [`Self::box_test`]); `None` when the subscript does not split.
    fn box_proof(
        &mut self,
        index: &Index<'_>,
        w: &Window<'_>,
        b: &GroupBox,
        sub: (&str, &str),
    ) -> Option<String> {
        let names = b.extent_names.as_ref()?;
        let m = names.len();
        if m == 0
            || b.strides.len() != m
            || b.extents.len() != m
            || b.bounds.len() != m
            || b.parts.iter().any(|(_, dims)| dims.len() != m)
        {
            return None;
        }
        if !names.iter().all(|n| {
            literal_extent(n).is_some()
                || matches!(self.facts.get(n.as_str()), Some(Fact::Uniform(_)))
        }) {
            return None;
        }
        let mut sum: Vec<Term> = Vec::new();
        match index {
            Index::Expr(e) => self.terms(e, None, names, false, &mut sum, 0)?,
            Index::Chain(e) => self.terms(e, Some(w.ptr), names, false, &mut sum, 0)?,
            Index::Zero => {}
            Index::Scaled(..) => return None,
        }
        // the launch's strides nest: stride_k = stride_{k+1} * extent_{k+1}
        let mut parts = vec![format!("({} == 1L)", b.strides[m - 1])];
        for k in 0..m - 1 {
            let p = self.tmp(format!(
                "__clpart_gmul({}, {}, &{FAST})",
                b.strides[k + 1],
                b.extents[k + 1]
            ));
            parts.push(format!("({} == {p})", b.strides[k]));
        }
        // per part, the conditions that put the access inside it
        let mut in_part: Vec<Vec<String>> = b
            .parts
            .iter()
            .map(|((plo, phi), _)| {
                vec![
                    format!("({} >= {plo})", sub.0),
                    format!("({} <= {phi} - {})", sub.1, w.n),
                ]
            })
            .collect();
        for k in (0..m).rev() {
            let ev = match literal_extent(&names[k]) {
                Some(e) => Iv::point(lit_text(e)),
                None => self.var(&names[k])?,
            };
            if !ev.is_point() {
                return None;
            }
            parts.push(format!("({} == {})", ev.lo, b.extents[k]));
            let (quotient, rest, fixed) = self.divide(sum, &names[k])?;
            // a specialized argument read as its value: the launch's
            // value must be it
            for (n, v) in fixed {
                parts.push(format!("((long){n} == {v}L)"));
            }
            let c = self.sum_iv(&rest)?;
            // the vector's elements after the first lie in the innermost dimension
            let last = if k == m - 1 && w.n > 1 {
                self.tmp(format!("__clpart_gadd({}, {}L, &{FAST})", c.hi, w.n - 1))
            } else {
                c.hi.clone()
            };
            match lit(&c.lo) {
                Some(v) if v >= 0 => {}
                Some(_) => return None,
                None => parts.push(format!("({} >= 0L)", c.lo)),
            }
            parts.push(format!("({last} < {})", ev.lo));
            for (lo, hi) in &b.bounds[k] {
                parts.push(format!("({} >= {lo})", c.lo));
                parts.push(format!("({last} <= {hi})"));
            }
            for (conds, (_, dims)) in in_part.iter_mut().zip(&b.parts) {
                let (lo, hi) = &dims[k];
                conds.push(format!("({} >= {lo})", c.lo));
                conds.push(format!("({last} <= {hi})"));
            }
            sum = quotient;
        }
        if !in_part.is_empty() {
            let any = in_part
                .iter()
                .map(|c| format!("({})", c.join(" & ")))
                .collect::<Vec<_>>()
                .join(" | ");
            parts.push(format!("({any})"));
        }
        Some(parts.join(" & "))
    }

    /// The interval of a sum of products.
    fn sum_iv(&mut self, terms: &[Term]) -> Option<Iv> {
        let mut acc: Option<Iv> = None;
        for t in terms {
            let mut p: Option<Iv> = None;
            for f in &t.factors {
                let iv = self.iv(f, None)?;
                p = Some(match p {
                    None => iv,
                    Some(p) => self.mul(&p, &iv)?,
                });
            }
            let p = p.unwrap_or_else(|| Iv::point("1L".into()));
            acc = Some(match (acc, t.neg) {
                (None, false) => p,
                (None, true) => self.sub(&Iv::point("0L".into()), &p),
                (Some(a), false) => self.add(&a, &p),
                (Some(a), true) => self.sub(&a, &p),
            });
        }
        Some(acc.unwrap_or_else(|| Iv::point("0L".into())))
    }

    /// Splits a sum of products into the quotients of its multiples of
    /// `name` (one factor `name` removed) and the other terms; a factor that
    /// is a sum mentioning `name` is distributed first. `None` past a size
    /// limit. Over a literal extent (literal strides, or strides the
    /// analysis specialized), a factor that is a specialized argument counts
    /// as its value; the third list names those used, with their values.
    #[allow(clippy::type_complexity)]
    fn divide(
        &self,
        terms: Vec<Term>,
        name: &str,
    ) -> Option<(Vec<Term>, Vec<Term>, Vec<(String, i64)>)> {
        if let Some(e) = literal_extent(name) {
            return Some(self.divide_literal(terms, e));
        }
        let mut work = terms;
        let (mut quotient, mut rest) = (Vec::new(), Vec::new());
        let mut steps = 0;
        while let Some(mut t) = work.pop() {
            steps += 1;
            if steps > 256 {
                return None;
            }
            if let Some(at) = t.factors.iter().position(|f| is_var(f, name)) {
                t.factors.remove(at);
                quotient.push(t);
            } else if let Some(at) = t
                .factors
                .iter()
                .position(|f| self.is_sum(f) && self.mentions_deep(f, name, 0))
            {
                let f = t.factors.remove(at);
                let mut parts = Vec::new();
                self.terms(&f, None, &[name.to_string()], false, &mut parts, 0)?;
                for p in parts {
                    let mut factors = p.factors;
                    factors.extend(t.factors.iter().cloned());
                    work.push(Term {
                        neg: t.neg ^ p.neg,
                        factors,
                    });
                }
            } else {
                rest.push(t);
            }
        }
        Some((quotient, rest, Vec::new()))
    }

    /// The literal value of a factor: an integer literal, or an integer
    /// scalar argument never assigned that the analysis specialized (with
    /// its name).
    fn literal_factor(&self, f: &Expr) -> Option<(i128, Option<String>)> {
        match &strip_casts(f).kind {
            ExprKind::IntLit(v) => Some((*v, None)),
            ExprKind::Var(n) if matches!(self.facts.get(n.as_str()), Some(Fact::Uniform(_))) => {
                let v = *self.specialized.get(n)?;
                Some((i128::from(v), Some(n.clone())))
            }
            _ => None,
        }
    }

    /// Splits a sum of products into the quotients of its terms with a
    /// literal factor ([`Self::literal_factor`]) that is a multiple of `e`
    /// (that factor divided by `e`) and the other terms; with the
    /// specialized arguments so read.
    fn divide_literal(
        &self,
        terms: Vec<Term>,
        e: i64,
    ) -> (Vec<Term>, Vec<Term>, Vec<(String, i64)>) {
        let (mut quotient, mut rest, mut fixed) = (Vec::new(), Vec::new(), Vec::new());
        for mut t in terms {
            let at = t.factors.iter().enumerate().find_map(|(i, f)| {
                let (v, n) = self.literal_factor(f)?;
                (v % i128::from(e) == 0).then_some((i, v, n))
            });
            match at {
                Some((at, v, n)) => {
                    let q = v / i128::from(e);
                    if let Some(n) = n {
                        if !fixed.iter().any(|(m, _)| *m == n) {
                            fixed.push((n, v as i64));
                        }
                    }
                    if q == 1 {
                        t.factors.remove(at);
                    } else {
                        let f = strip_casts(&t.factors[at]).clone();
                        t.factors[at] = Expr {
                            kind: ExprKind::IntLit(q),
                            ..f
                        };
                    }
                    quotient.push(t);
                }
                None => rest.push(t),
            }
        }
        (quotient, rest, fixed)
    }

    /// `e` is a sum (or a local standing for one) that [`Self::terms`] splits.
    fn is_sum(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Cast(x) if e.ty.is_integer() && x.ty.is_integer() => self.is_sum(x),
            ExprKind::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul, ..)
            | ExprKind::Unary(UnOp::Plus | UnOp::Neg, _) => true,
            ExprKind::Var(n) => matches!(self.facts.get(n.as_str()), Some(Fact::Def(..))),
            _ => false,
        }
    }

    /// `e` mentions `name`, through the initializers of single-assignment
    /// locals.
    fn mentions_deep(&self, e: &Expr, name: &str, depth: u32) -> bool {
        if depth > 8 {
            return false;
        }
        let mut found = false;
        visit_expr(e, &mut |x| {
            if let ExprKind::Var(v) = &x.kind {
                found |= v == name
                    || matches!(self.facts.get(v.as_str()), Some(Fact::Def(init, _)) if self.mentions_deep(init, name, depth + 1));
            }
        });
        found
    }

    /// The sum `e` (negated with `neg`) as terms, each a product of factors;
    /// pointer `ptr` counts as 0 (pointer chains) and a local assigned only by
    /// its declaration whose initializer mentions one of `names` stands for
    /// it. Conversions between integer types are looked through: the
    /// access's window test has proven that no sub-expression changes value
    /// in them (the subscript is computed exactly), so the terms sum to it.
    fn terms(
        &self,
        e: &Expr,
        ptr: Option<&str>,
        names: &[String],
        neg: bool,
        out: &mut Vec<Term>,
        depth: u32,
    ) -> Option<()> {
        if depth > 32 || out.len() > 64 {
            return None;
        }
        if let Some(p) = ptr {
            if param_through_casts(e, p).is_some() {
                return Some(());
            }
        }
        let pointer = matches!(e.ty, Type::Pointer { .. });
        match &e.kind {
            ExprKind::Cast(x) if e.ty.is_integer() && x.ty.is_integer() => {
                self.terms(x, ptr, names, neg, out, depth + 1)
            }
            ExprKind::Binary(BinOp::Add, l, r) => {
                self.terms(l, ptr, names, neg, out, depth + 1)?;
                self.terms(r, ptr, names, neg, out, depth + 1)
            }
            ExprKind::Binary(BinOp::Sub, l, r) if !matches!(r.ty, Type::Pointer { .. }) => {
                self.terms(l, ptr, names, neg, out, depth + 1)?;
                self.terms(r, ptr, names, !neg, out, depth + 1)
            }
            ExprKind::Unary(UnOp::Plus, x) => self.terms(x, ptr, names, neg, out, depth + 1),
            ExprKind::Unary(UnOp::Neg, x) => self.terms(x, ptr, names, !neg, out, depth + 1),
            _ if pointer => None,
            ExprKind::Var(n) => match self.facts.get(n.as_str()) {
                // looked through only when it holds a multiple (otherwise
                // its own interval, narrowed by the conditions, is tighter)
                Some(Fact::Def(init, _))
                    if names.iter().any(|m| self.mentions_deep(init, m, 0)) =>
                {
                    self.terms(init, None, names, neg, out, depth + 1)
                }
                _ => {
                    out.push(Term {
                        neg,
                        factors: vec![e.clone()],
                    });
                    Some(())
                }
            },
            ExprKind::Binary(BinOp::Mul, ..) => {
                let mut t = Term {
                    neg,
                    factors: Vec::new(),
                };
                flatten_product(e, &mut t);
                out.push(t);
                Some(())
            }
            _ => {
                out.push(Term {
                    neg,
                    factors: vec![e.clone()],
                });
                Some(())
            }
        }
    }

    fn tmp(&mut self, value: String) -> String {
        let n = format!("__clpart_g{}", self.next);
        self.next += 1;
        self.code.push_str(&format!("    long {n} = {value};\n"));
        n
    }

    fn require(&mut self, cond: String) {
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
    fn fits(&mut self, iv: &Iv, ty: &Type) -> bool {
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

    fn add(&mut self, a: &Iv, b: &Iv) -> Iv {
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

    fn sub(&mut self, a: &Iv, b: &Iv) -> Iv {
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
    fn corners(
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

    fn mul(&mut self, a: &Iv, b: &Iv) -> Option<Iv> {
        Some(self.corners(a, b, i64::checked_mul, &|x, y| {
            format!("__clpart_gmul({x}, {y}, &{FAST})")
        }))
    }

    /// The interval of `e` over the work-group; `ptr` counts as 0 (pointer
    /// chains). `None` when the expression is outside what the test models.
    fn iv(&mut self, e: &Expr, ptr: Option<&str>) -> Option<Iv> {
        if let Some(p) = ptr {
            if param_through_casts(e, p).is_some() {
                return Some(Iv::point("0L".into()));
            }
            if matches!(e.ty, Type::Pointer { .. }) {
                return match &e.kind {
                    ExprKind::Binary(BinOp::Add, l, r) => {
                        let (pl, il) = if matches!(l.ty, Type::Pointer { .. }) {
                            (l, r)
                        } else {
                            (r, l)
                        };
                        let a = self.iv(pl, ptr)?;
                        let b = self.iv(il, None)?;
                        Some(self.add(&a, &b))
                    }
                    ExprKind::Binary(BinOp::Sub, l, r) if !matches!(r.ty, Type::Pointer { .. }) => {
                        let a = self.iv(l, ptr)?;
                        let b = self.iv(r, None)?;
                        Some(self.sub(&a, &b))
                    }
                    _ => None,
                };
            }
        }
        let out = match &e.kind {
            ExprKind::IntLit(v) => {
                if v.unsigned_abs() >= 1u128 << 62 {
                    return None;
                }
                Iv::point(format!("{v}L"))
            }
            ExprKind::Var(n) => self.var(n)?,
            ExprKind::Cast(x) => {
                if !x.ty.is_integer() {
                    return None;
                }
                self.iv(x, None)?
            }
            ExprKind::WorkItem(w, d) => {
                let d = d.const_int().filter(|d| (0..3).contains(d))? as u32;
                self.work_item(*w, d)
            }
            ExprKind::Unary(UnOp::Plus, x) => self.iv(x, None)?,
            ExprKind::Unary(UnOp::Neg, x) => {
                let a = self.iv(x, None)?;
                self.sub(&Iv::point("0L".into()), &a)
            }
            ExprKind::Unary(UnOp::Not, _) => Iv {
                lo: "0L".into(),
                hi: "1L".into(),
            },
            ExprKind::Binary(op, l, r) => {
                use BinOp::*;
                if matches!(op, Lt | Gt | Le | Ge | Eq | Ne | LogAnd | LogOr) {
                    Iv {
                        lo: "0L".into(),
                        hi: "1L".into(),
                    }
                } else {
                    let a = self.iv(l, None)?;
                    let b = self.iv(r, None)?;
                    // the operands as the operation sees them
                    if !self.fits(&a, &e.ty) || !self.fits(&b, &e.ty) {
                        return None;
                    }
                    match op {
                        Add => self.add(&a, &b),
                        Sub => self.sub(&a, &b),
                        Mul => self.mul(&a, &b)?,
                        Div => {
                            self.require(format!("({} >= 1L)", b.lo));
                            self.corners(
                                &a,
                                &b,
                                |x, y| if y >= 1 { x.checked_div(y) } else { None },
                                &|x, y| format!("({x} / {y})"),
                            )
                        }
                        Rem => {
                            self.require(format!("({} >= 1L)", b.lo));
                            let lo = self
                                .tmp(format!("({0} >= 0L ? 0L : max({0}, 1L - {1}))", a.lo, b.hi));
                            let hi = self
                                .tmp(format!("({0} <= 0L ? 0L : min({0}, {1} - 1L))", a.hi, b.hi));
                            Iv { lo, hi }
                        }
                        Shl | Shr => {
                            let bits = (e.ty.size()? * 8).min(62);
                            self.require(format!("({} >= 0L) & ({} < {bits}L)", b.lo, b.hi));
                            if *op == Shl {
                                self.corners(
                                    &a,
                                    &b,
                                    |x, y| {
                                        if (0..62).contains(&y) {
                                            x.checked_mul(1 << y)
                                        } else {
                                            None
                                        }
                                    },
                                    &|x, y| format!("__clpart_gmul({x}, 1L << {y}, &{FAST})"),
                                )
                            } else {
                                self.corners(
                                    &a,
                                    &b,
                                    |x, y| {
                                        if (0..62).contains(&y) {
                                            Some(x >> y)
                                        } else {
                                            None
                                        }
                                    },
                                    &|x, y| format!("({x} >> {y})"),
                                )
                            }
                        }
                        BitAnd => {
                            // with a non-negative side, the result lies in [0, that side]
                            let lo = "0L".to_string();
                            let hi = self.tmp(format!(
                                "({0} >= 0L && {1} >= 0L) ? min({2}, {3}) : {0} >= 0L ? {2} : {3}",
                                a.lo, b.lo, a.hi, b.hi
                            ));
                            self.require(format!("(({} >= 0L) | ({} >= 0L))", a.lo, b.lo));
                            Iv { lo, hi }
                        }
                        _ => return None,
                    }
                }
            }
            ExprKind::Cond(_, t, f) => {
                let a = self.iv(t, None)?;
                let b = self.iv(f, None)?;
                let lo = self.tmp(format!("min({}, {})", a.lo, b.lo));
                let hi = self.tmp(format!("max({}, {})", a.hi, b.hi));
                Iv { lo, hi }
            }
            ExprKind::Call(f, args) => self.call(f, args, &e.ty)?,
            _ => return None,
        };
        if !self.fits(&out, &e.ty) {
            return None;
        }
        Some(out)
    }

    fn call(&mut self, f: &str, args: &[Expr], ty: &Type) -> Option<Iv> {
        if !ty.is_integer() {
            return None;
        }
        let ivs: Vec<Iv> = args
            .iter()
            .map(|a| self.iv(a, None))
            .collect::<Option<_>>()?;
        for a in &ivs {
            if !self.fits(a, ty) {
                return None;
            }
        }
        Some(match (f, ivs.as_slice()) {
            ("min", [a, b]) => {
                let lo = self.tmp(format!("min({}, {})", a.lo, b.lo));
                let hi = self.tmp(format!("min({}, {})", a.hi, b.hi));
                Iv { lo, hi }
            }
            ("max", [a, b]) => {
                let lo = self.tmp(format!("max({}, {})", a.lo, b.lo));
                let hi = self.tmp(format!("max({}, {})", a.hi, b.hi));
                Iv { lo, hi }
            }
            ("clamp", [x, a, b]) => {
                // defined only for a <= b
                self.require(format!("({} <= {})", a.hi, b.lo));
                let lo = self.tmp(format!("min(max({}, {}), {})", x.lo, a.lo, b.lo));
                let hi = self.tmp(format!("min(max({}, {}), {})", x.hi, a.hi, b.hi));
                Iv { lo, hi }
            }
            ("mul24" | "mad24", [a, b, rest @ ..]) if rest.len() == usize::from(f == "mad24") => {
                // exact only for 24-bit operands
                let (m, n) = if matches!(ty, Type::Scalar(s) if s.is_signed()) {
                    (-(1i64 << 23), (1i64 << 23) - 1)
                } else {
                    (0, (1i64 << 24) - 1)
                };
                for x in [a, b] {
                    self.require(format!("({} >= {m}L) & ({} <= {n}L)", x.lo, x.hi));
                }
                let p = self.mul(a, b)?;
                match rest.first() {
                    Some(c) => self.add(&p, c),
                    None => p,
                }
            }
            _ => return None,
        })
    }

    fn work_item(&mut self, w: WorkItemFn, d: u32) -> Iv {
        match w {
            WorkItemFn::GlobalId => {
                let lo = self.tmp(format!(
                    "(long)get_global_id({d}) - (long)get_local_id({d})"
                ));
                let hi = self.tmp(format!("{lo} + (long)get_local_size({d}) - 1L"));
                Iv { lo, hi }
            }
            WorkItemFn::LocalId => Iv {
                lo: "0L".into(),
                hi: format!("((long)get_local_size({d}) - 1L)"),
            },
            WorkItemFn::LocalSize => Iv::point(format!("(long)get_local_size({d})")),
            WorkItemFn::WorkDim => Iv::point("(long)get_work_dim()".into()),
            // the rewritten builtins: the unsplit NDRange's values (see `rewrite`)
            _ if self.macro_use => Iv::point(format!("(long){}({d})", w.name())),
            WorkItemFn::GroupId => Iv::point(format!(
                "((long)get_group_id({d}) + __clpart_group_base{d})"
            )),
            WorkItemFn::GlobalSize => Iv::point(format!("__clpart_global_size{d}")),
            WorkItemFn::NumGroups => Iv::point(format!("__clpart_num_groups{d}")),
            WorkItemFn::GlobalOffset => Iv::point(format!("__clpart_global_offset{d}")),
        }
    }

    fn var(&mut self, n: &str) -> Option<Iv> {
        let key = format!("{}|{n}", self.ctx);
        if let Some(iv) = self.memo.get(&key) {
            return Some(iv.clone());
        }
        if self.busy.iter().any(|b| b == n) {
            return None;
        }
        let fact = *self.facts.get(n)?;
        self.busy.push(n.to_string());
        let iv = match fact {
            // one value: nothing to narrow
            Fact::Uniform(_) => self.fact(n, fact),
            _ => self.fact(n, fact).and_then(|iv| self.refine(n, iv)),
        };
        self.busy.pop();
        let iv = iv?;
        self.memo.insert(key, iv.clone());
        Some(iv)
    }

    /// Narrows `n`'s interval by the comparisons known to hold. Each holds
    /// at the access: its variables never change while it is in force
    /// (arguments and single-assignment locals never change; a loop counter
    /// changes only at its loop's step, outside any condition tested in
    /// its body).
    fn refine(&mut self, n: &str, mut iv: Iv) -> Option<Iv> {
        let known: Vec<(BinOp, Expr)> = self
            .known
            .iter()
            .filter(|(v, ..)| v == n)
            .map(|(_, op, e)| (*op, e.clone()))
            .collect();
        for (op, e) in known {
            // the comparison's operands are converted to its type: both
            // must keep their values
            let Some(b) = self.iv(&e, None) else { continue };
            let cmp_ty = e.ty.clone();
            if !self.fits(&iv, &cmp_ty) {
                continue;
            }
            use BinOp::*;
            let one = Iv::point("1L".into());
            let (lo, hi) = match op {
                Lt => (None, Some(self.sub(&Iv::point(b.hi.clone()), &one).lo)),
                Le => (None, Some(b.hi.clone())),
                Gt => (Some(self.add(&Iv::point(b.lo.clone()), &one).lo), None),
                Ge => (Some(b.lo.clone()), None),
                Eq => (Some(b.lo.clone()), Some(b.hi.clone())),
                _ => continue,
            };
            if let Some(l) = lo {
                iv.lo = self.tmp(format!("max({}, {l})", iv.lo));
            }
            if let Some(h) = hi {
                iv.hi = self.tmp(format!("min({}, {h})", iv.hi));
            }
        }
        Some(iv)
    }

    fn fact(&mut self, n: &str, fact: Fact<'_>) -> Option<Iv> {
        match fact {
            Fact::Uniform(ty) => {
                let iv = Iv::point(format!("(long){n}"));
                // an unsigned long argument above LONG_MAX does not fit
                self.fits(&iv, ty).then_some(iv)
            }
            Fact::Def(init, ty) => {
                let iv = self.iv(init, None)?;
                self.fits(&iv, ty).then_some(iv)
            }
            Fact::Loop(l, ty) => {
                let init = self.iv(l.init, None)?;
                let bound = self.iv(l.bound, None)?;
                let step = match l.step {
                    Some(s) => self.iv(s, None)?,
                    None => Iv::point("1L".into()),
                };
                self.require(format!("({} >= 1L)", step.lo));
                use BinOp::*;
                // the counter's values in the body, and the furthest value
                // it takes (after the last step): no wrap-around allowed
                let (lo, hi) = match (l.up, l.op) {
                    (true, Lt) => (
                        init.lo.clone(),
                        self.tmp(format!("__clpart_gsub({}, 1L, &{FAST})", bound.hi)),
                    ),
                    (true, Le) => (init.lo.clone(), bound.hi.clone()),
                    (false, Gt) => (
                        self.tmp(format!("__clpart_gadd({}, 1L, &{FAST})", bound.lo)),
                        init.hi.clone(),
                    ),
                    (false, Ge) => (bound.lo.clone(), init.hi.clone()),
                    _ => return None,
                };
                let reach = if l.up {
                    let top = self.tmp(format!("max({}, {})", init.hi, hi));
                    let t = self.tmp(format!("__clpart_gadd({top}, {}, &{FAST})", step.hi));
                    Iv {
                        lo: init.lo.clone(),
                        hi: t,
                    }
                } else {
                    let bottom = self.tmp(format!("min({}, {})", init.lo, lo));
                    let t = self.tmp(format!("__clpart_gsub({bottom}, {}, &{FAST})", step.hi));
                    Iv {
                        lo: t,
                        hi: init.hi.clone(),
                    }
                };
                // every value the counter takes (up to one step past the
                // bound) fits its type and the comparison's type
                if !self.fits(&reach, ty)
                    || !self.fits(&reach, l.cmp_ty)
                    || !self.fits(&bound, l.cmp_ty)
                {
                    return None;
                }
                Some(Iv { lo, hi })
            }
        }
    }
}

/// Collects the comparisons `var OP expr` that `c` implies when it
/// evaluates to `holds` (through `&&`, `||`, `!` and conversions; the
/// expression side converted to the comparison's type).
fn known_comparisons(c: &Expr, holds: bool, out: &mut Vec<(String, BinOp, Expr)>) {
    use BinOp::*;
    match &c.kind {
        ExprKind::Binary(LogAnd, a, b) if holds => {
            known_comparisons(a, true, out);
            known_comparisons(b, true, out);
        }
        ExprKind::Binary(LogOr, a, b) if !holds => {
            known_comparisons(a, false, out);
            known_comparisons(b, false, out);
        }
        ExprKind::Unary(UnOp::Not, a) => known_comparisons(a, !holds, out),
        ExprKind::Cast(a) if c.ty.is_integer() || matches!(c.ty, Type::Scalar(Scalar::Bool)) => {
            known_comparisons(a, holds, out)
        }
        ExprKind::Binary(op @ (Lt | Le | Gt | Ge | Eq | Ne), l, r) => {
            let op = if holds {
                *op
            } else {
                match op {
                    Lt => Ge,
                    Le => Gt,
                    Gt => Le,
                    Ge => Lt,
                    Eq => Ne,
                    _ => Eq,
                }
            };
            let flip = |op: BinOp| match op {
                Lt => Gt,
                Gt => Lt,
                Le => Ge,
                Ge => Le,
                o => o,
            };
            // the variable side must be the variable itself, converted
            // at most to the comparison's type
            if let ExprKind::Var(n) = &strip_casts(l).kind {
                if !mentions(r, n) && l.ty == r.ty {
                    out.push((n.clone(), op, (**r).clone()));
                }
            }
            if let ExprKind::Var(n) = &strip_casts(r).kind {
                if !mentions(l, n) && l.ty == r.ty {
                    out.push((n.clone(), flip(op), (**l).clone()));
                }
            }
        }
        _ => {}
    }
}

/// An extent that is an integer literal (literal strides, `a[y*1000 + x]`:
/// `"1000"`), at least 1.
fn literal_extent(name: &str) -> Option<i64> {
    name.parse().ok().filter(|&e: &i64| e >= 1)
}

/// `e` is `p` itself (through conversions).
fn param_through_casts<'e>(e: &'e Expr, p: &str) -> Option<&'e Expr> {
    match &e.kind {
        ExprKind::Var(n) if n == p => Some(e),
        ExprKind::Cast(x) if matches!(e.ty, Type::Pointer { .. }) => param_through_casts(x, p),
        _ => None,
    }
}

/// The factors of a product (through integer conversions; a negation
/// flips the term's sign).
fn flatten_product(e: &Expr, t: &mut Term) {
    match &e.kind {
        ExprKind::Cast(x) if e.ty.is_integer() && x.ty.is_integer() => flatten_product(x, t),
        ExprKind::Unary(UnOp::Neg, x) => {
            t.neg = !t.neg;
            flatten_product(x, t)
        }
        ExprKind::Unary(UnOp::Plus, x) => flatten_product(x, t),
        ExprKind::Binary(BinOp::Mul, l, r) => {
            flatten_product(l, t);
            flatten_product(r, t)
        }
        _ => t.factors.push(e.clone()),
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

fn mentions(e: &Expr, n: &str) -> bool {
    let mut found = false;
    visit_expr(e, &mut |x| {
        found |= matches!(&x.kind, ExprKind::Var(v) if v == n)
    });
    found
}

/// The names the prologue may bound, with how.
fn facts(k: &Function) -> HashMap<&str, Fact<'_>> {
    let mut decls: HashMap<&str, usize> = HashMap::new();
    let mut assigned: HashMap<String, usize> = HashMap::new();
    let mut addr: Vec<String> = Vec::new();
    let mut loops: HashMap<&str, LoopShape<'_>> = HashMap::new();
    let mut defs: HashMap<&str, (&VarDecl, bool)> = HashMap::new();
    let mut outer: HashMap<&str, Vec<(&Stmt, LoopShape<'_>)>> = HashMap::new();
    walk(&k.body, &mut decls, &mut defs, &mut loops, &mut outer);
    visit_exprs(&k.body, &mut |e| match &e.kind {
        ExprKind::Assign(_, l, _)
        | ExprKind::Unary(UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec, l) => {
            if let ExprKind::Var(n) = &strip_casts(l).kind {
                *assigned.entry(n.clone()).or_default() += 1;
            }
        }
        ExprKind::Unary(UnOp::AddrOf, x) => {
            let mut b = &**x;
            while let ExprKind::Index(base, _) = &b.kind {
                b = base;
            }
            if let ExprKind::Var(n) = &strip_casts(b).kind {
                addr.push(n.clone());
            }
        }
        _ => {}
    });
    // a name declared once, never address-taken
    let clean = |n: &str, extra_decls: usize| {
        decls.get(n).copied().unwrap_or(0) + extra_decls == 1 && !addr.iter().any(|a| a == n)
    };
    let mut out = HashMap::new();
    for p in &k.params {
        if p.ty.is_integer() && clean(&p.name, 1) && !assigned.contains_key(&p.name) {
            out.insert(p.name.as_str(), Fact::Uniform(&p.ty));
        }
    }
    for (n, (d, in_for)) in &defs {
        if !d.ty.is_integer() || !clean(n, 0) || k.params.iter().any(|p| p.name == *n) {
            continue;
        }
        let writes = assigned.get(*n).copied().unwrap_or(0);
        if *in_for {
            if let Some(l) = loops.get(n) {
                // the step is the one assignment
                if writes == 1 {
                    out.insert(*n, Fact::Loop(*l, &d.ty));
                }
                continue;
            }
        }
        if writes == 0 {
            if let Some(init) = &d.init {
                out.insert(*n, Fact::Def(init, &d.ty));
            }
        }
        // a counter declared before its one loop (`int k; for (k = 0;
        // ...)`): assigned by the loop's initialization and step alone and
        // read only inside the loop, it takes the values of a counter the
        // loop declares (a private one: a `__local` counter is shared by
        // the work-items, which may step it under each other)
        if let Some([(lp, l)]) = outer.get(n).map(Vec::as_slice) {
            if writes == 2 && d.space == AddrSpace::Private && !mentioned_outside(&k.body, n, lp) {
                out.insert(*n, Fact::Loop(*l, &d.ty));
            }
        }
    }
    out
}

/// `name` occurs in `body` outside the statement `lp`.
fn mentioned_outside(body: &[Stmt], name: &str, lp: &Stmt) -> bool {
    let mut found = false;
    for s in body {
        if std::ptr::eq(s, lp) {
            continue;
        }
        match s {
            Stmt::If {
                cond, then, els, ..
            } => {
                found |= mentions(cond, name)
                    || mentioned_outside(then, name, lp)
                    || els.as_ref().is_some_and(|e| mentioned_outside(e, name, lp));
            }
            Stmt::For {
                init,
                cond,
                step,
                body,
                ..
            } => {
                found |= init
                    .as_ref()
                    .is_some_and(|i| mentioned_outside(std::slice::from_ref(&**i), name, lp))
                    || cond.as_ref().is_some_and(|c| mentions(c, name))
                    || step.as_ref().is_some_and(|c| mentions(c, name))
                    || mentioned_outside(body, name, lp);
            }
            Stmt::While { cond, body, .. } => {
                found |= mentions(cond, name) || mentioned_outside(body, name, lp);
            }
            Stmt::Block(b) => found |= mentioned_outside(b, name, lp),
            other => visit_exprs(std::slice::from_ref(other), &mut |e| {
                found |= matches!(&e.kind, ExprKind::Var(v) if v == name)
            }),
        }
        if found {
            return true;
        }
    }
    false
}

/// The loops of a body, by counter: `loops` for counters the loop
/// declares, `outer` for counters declared before it (`for (k = 0; ...)`).
fn walk<'a>(
    body: &'a [Stmt],
    decls: &mut HashMap<&'a str, usize>,
    defs: &mut HashMap<&'a str, (&'a VarDecl, bool)>,
    loops: &mut HashMap<&'a str, LoopShape<'a>>,
    outer: &mut HashMap<&'a str, Vec<(&'a Stmt, LoopShape<'a>)>>,
) {
    for s in body {
        match s {
            Stmt::Decl(d) => {
                *decls.entry(d.name.as_str()).or_default() += 1;
                defs.insert(d.name.as_str(), (d, false));
            }
            Stmt::If { then, els, .. } => {
                walk(then, decls, defs, loops, outer);
                if let Some(e) = els {
                    walk(e, decls, defs, loops, outer);
                }
            }
            Stmt::For {
                init,
                cond,
                step,
                body,
                ..
            } => {
                if let Some(init) = init {
                    if let Stmt::Decl(d) = &**init {
                        *decls.entry(d.name.as_str()).or_default() += 1;
                        defs.insert(d.name.as_str(), (d, true));
                        let shape = d
                            .init
                            .as_ref()
                            .and_then(|i| loop_shape(&d.name, i, cond.as_ref(), step.as_ref()));
                        if let Some(l) = shape {
                            loops.insert(d.name.as_str(), l);
                        }
                    } else {
                        if let Stmt::Expr(Expr {
                            kind: ExprKind::Assign(None, k, i),
                            ..
                        }) = &**init
                        {
                            if let ExprKind::Var(n) = &k.kind {
                                if let Some(l) = loop_shape(n, i, cond.as_ref(), step.as_ref()) {
                                    outer.entry(n.as_str()).or_default().push((s, l));
                                }
                            }
                        }
                        walk(std::slice::from_ref(&**init), decls, defs, loops, outer);
                    }
                }
                walk(body, decls, defs, loops, outer);
            }
            Stmt::While { body, .. } | Stmt::Block(body) => walk(body, decls, defs, loops, outer),
            _ => {}
        }
    }
}

/// `for (T k = e0; k OP e1; k STEP)` (or `for (k = e0; ...)`) in one of
/// the shapes the prologue bounds.
fn loop_shape<'a>(
    k: &str,
    init: &'a Expr,
    cond: Option<&'a Expr>,
    step: Option<&'a Expr>,
) -> Option<LoopShape<'a>> {
    if mentions(init, k) {
        return None;
    }
    let (op, l, r) = match &cond?.kind {
        ExprKind::Binary(op, l, r) => (*op, &**l, &**r),
        _ => return None,
    };
    use BinOp::*;
    let (op, bound, cmp_ty) = if is_var(l, k) && !mentions(r, k) {
        (op, r, &l.ty)
    } else if is_var(r, k) && !mentions(l, k) {
        let flipped = match op {
            Lt => Gt,
            Gt => Lt,
            Le => Ge,
            Ge => Le,
            _ => return None,
        };
        (flipped, l, &r.ty)
    } else {
        return None;
    };
    let (up, step) = match &step?.kind {
        ExprKind::Unary(UnOp::PreInc | UnOp::PostInc, x) if is_var(x, k) => (true, None),
        ExprKind::Unary(UnOp::PreDec | UnOp::PostDec, x) if is_var(x, k) => (false, None),
        ExprKind::Assign(Some(Add), x, s) if is_var(x, k) && !mentions(s, k) => (true, Some(&**s)),
        ExprKind::Assign(Some(Sub), x, s) if is_var(x, k) && !mentions(s, k) => (false, Some(&**s)),
        ExprKind::Assign(None, x, v) if is_var(x, k) => match &strip_casts(v).kind {
            ExprKind::Binary(Add, a, s) if is_var(a, k) && !mentions(s, k) => (true, Some(&**s)),
            ExprKind::Binary(Sub, a, s) if is_var(a, k) && !mentions(s, k) => (false, Some(&**s)),
            _ => return None,
        },
        _ => return None,
    };
    if !matches!((up, op), (true, Lt | Le) | (false, Gt | Ge)) {
        return None;
    }
    Some(LoopShape {
        init,
        bound,
        op,
        step,
        up,
        cmp_ty,
    })
}
