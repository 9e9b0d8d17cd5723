//! Symbolic execution of one work-item of a kernel over the kernel IR.
//!
//! The walker follows the statements in order, keeping for every local integer
//! variable its value as a piecewise polynomial over domain dimensions and
//! parameters ([`IntVal`]), and for every pointer variable the buffer argument
//! it points into plus an element offset ([`PtrTarget`]). Helper functions are
//! inlined. Every access to a `__global`/`__constant` buffer is recorded as a
//! [`Rec`]: its subscript (or why it cannot be modeled), the path condition,
//! the loop iterators in scope and whether the recorded set is exact.
//!
//! Integer arithmetic follows C: signed overflow is undefined behaviour, so
//! signed arithmetic is taken as mathematical; unsigned arithmetic (`uint`,
//! `ulong`) and every integer conversion (explicit casts, the implicit ones
//! clang records, stores to narrower variables) wrap. A wrapping operation is
//! modelled exactly when interval bounds show its value stays in the target
//! type's range; otherwise, for an affine value, exactly as a quasi-affine
//! remainder (`(uchar)e` = `e mod 256`, signed targets with the
//! two's-complement shift `((e + 2^(n-1)) mod 2^n) - 2^(n-1)`); otherwise the
//! value is unknown (the array whole, with the location). The bounds come from
//! the C types of parameters and loop iterators, and for the NDRange builtins
//! from the premise that global ids, sizes and offsets fit in `int`
//! (`go_d + gs_d <= 2^31`), which OpenCL C kernels that store
//! `get_global_id` in an `int` rely on too.

use crate::poly::{Atom, Cond, Poly, Rule, Why, WhyKind};
use crate::AccessKind;
use coarsen::ir::{BinOp, Expr, ExprKind, Function, Program, Scalar, Span, Stmt, Type, UnOp, WorkItemFn};
use std::collections::{BTreeMap, HashMap};

/// At most this many pieces in a piecewise value before giving up on it.
const MAX_PIECES: usize = 16;
/// Maximum depth of helper inlining.
const MAX_INLINE_DEPTH: usize = 16;
/// Maximum number of statements walked (helpers are inlined at every call).
pub(crate) const MAX_STEPS: usize = 200_000;

/// Pieces of a piecewise value: (condition, value).
pub(crate) type Pieces = Vec<(Cond, Poly)>;
/// A piece-wise operation on two polynomials.
type PieceOp<'f> = dyn Fn(&Poly, &Poly) -> Result<Pieces, Why> + 'f;
/// A piece-wise operation on one polynomial.
type PieceFn<'f> = dyn Fn(&Poly) -> Result<Pieces, Why> + 'f;
/// Returned values of the inlined calls: (path length at entry, (local path, value)).
type Returns = Vec<(usize, Vec<(Vec<Cond>, Val)>)>;

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
        IntVal::Known(vec![(c.clone(), Poly::konst(1)), (Cond::not(c), Poly::konst(0))])
    }

    /// The single polynomial of a one-piece value.
    pub fn single(&self) -> Option<&Poly> {
        match self {
            IntVal::Known(v) if v.len() == 1 && v[0].0 == Cond::True => Some(&v[0].1),
            _ => None,
        }
    }

    /// Applies a piece-wise function to two values (cartesian product of pieces).
    fn lift2(&self, o: &IntVal, f: &PieceOp) -> IntVal {
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

    fn lift1(&self, f: &PieceFn) -> IntVal {
        self.lift2(&IntVal::konst(0), &|a, _| f(a))
    }

    /// Merges two values for `c ? self : o`.
    fn select(c: &Cond, a: IntVal, b: IntVal) -> IntVal {
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

/// What a pointer may point to: a buffer argument and an element offset.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PtrTarget {
    pub buf: u32,
    pub off: IntVal,
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
                rules.push(Rule { pattern: pat, replacement: rep });
                let mut pat = vec![Atom::Param(nd_name("ng", d)), ls];
                pat.sort();
                rules.push(Rule { pattern: pat, replacement: Poly::param(&nd_name("gs", d)) });
            }
        }
        Ndr { work_dim, local_size, lg_used, rules }
    }

    /// Whether the link between x_d and (g_d, l_d) is only approximated.
    pub fn relaxed(&self, d: u32) -> bool {
        self.local_size.is_none() && d < self.work_dim && self.lg_used[d as usize]
    }
}

/// Exit status of a statement: the condition (given that it was reached)
/// under which it leaves the enclosing block early (return/break/continue).
type Exit = Cond;

pub(crate) struct Walker<'a> {
    pub program: &'a Program,
    pub ndr: &'a Ndr,
    /// Specialized parameter values, by isl name.
    pub spec: &'a BTreeMap<String, i128>,
    /// Names not to be used for new dimensions (parameters, reserved words).
    pub taken: Vec<String>,
    scopes: Vec<HashMap<String, Val>>,
    frames: Vec<usize>,
    path: Vec<Cond>,
    exact: bool,
    iters: Vec<String>,
    /// (path length at call entry, returned values with their local path).
    returns: Returns,
    pub recs: Vec<Rec>,
    pub atomics: Vec<String>,
    pub notes: Vec<String>,
    /// Pending note attached to the next records (e.g. loop approximations).
    loop_notes: Vec<String>,
    /// Kernel parameter names by argument index (for messages).
    pub buf_names: Vec<String>,
    /// Statements walked so far (see [`MAX_STEPS`]).
    steps: usize,
    /// Value ranges of integer scalar parameters, by isl name (from their C type).
    pub param_bounds: HashMap<String, (i128, i128)>,
    /// Value ranges of loop-iterator dimensions (from the iterator's type and start).
    dim_bounds: HashMap<String, (i128, i128)>,
    /// Declared integer types of variables (innermost declaration wins).
    var_types: HashMap<String, Scalar>,
    /// Argument indices of the `__global`/`__constant` buffer arguments: the
    /// candidates of a pointer whose targets cannot be tracked.
    pub buf_args: Vec<u32>,
}

fn is_int(t: &Type) -> bool {
    matches!(t, Type::Scalar(s) if !s.is_float())
}

fn is_unsigned(t: &Type) -> bool {
    matches!(t, Type::Scalar(Scalar::UChar | Scalar::UShort | Scalar::UInt | Scalar::ULong | Scalar::Bool))
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
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1, bits, true)
    } else {
        (0, (1i128 << bits) - 1, bits, false)
    })
}

/// Whether `t` is a pointer into a buffer argument's address space.
/// (The IR takes a pointer's space from its pointee's spelling, so a private
/// `__global float **` reads as a global pointer: pointers to pointers are
/// not buffer pointers.)
fn is_buffer_ptr(t: &Type) -> bool {
    match t {
        Type::Pointer { space: coarsen::ir::AddrSpace::Global | coarsen::ir::AddrSpace::Constant, pointee, .. } => {
            !matches!(**pointee, Type::Pointer { .. })
        }
        _ => false,
    }
}

/// Name prefix of the `x_d - go_d` dimensions used only inside range checks.
const OFFSET_DIM: &str = "u";

/// `Some(t)` for signed types of 32 bits or more, whose arithmetic cannot
/// wrap without undefined behaviour (narrower ones are promoted to `int` and
/// truncated on the store).
fn no_ub(t: &Type) -> Option<&Type> {
    match int_range(t) {
        Some((_, _, bits, true)) if bits >= 32 => Some(t),
        _ => None,
    }
}

/// Interval product.
fn imul(a: (i128, i128), b: (i128, i128)) -> Option<(i128, i128)> {
    let c = [a.0.checked_mul(b.0)?, a.0.checked_mul(b.1)?, a.1.checked_mul(b.0)?, a.1.checked_mul(b.1)?];
    Some((*c.iter().min()?, *c.iter().max()?))
}

/// Strips casts around an expression.
fn strip(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Cast(a) => strip(a),
        _ => e,
    }
}

fn var_name(e: &Expr) -> Option<&str> {
    match &strip(e).kind {
        ExprKind::Var(n) => Some(n),
        _ => None,
    }
}

/// Names assigned (`=`, `op=`, `++`, `--`) anywhere in `body`.
pub(crate) fn assigned_names(body: &[Stmt], extra: &[&Expr]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut f = |e: &Expr| {
        let target = match &e.kind {
            ExprKind::Assign(_, l, _) => var_name(l),
            ExprKind::Unary(UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec, a) => var_name(a),
            _ => None,
        };
        if let Some(n) = target {
            if !out.iter().any(|o| o == n) {
                out.push(n.to_string());
            }
        }
    };
    coarsen::ir::visit_exprs(body, &mut f);
    for e in extra {
        coarsen::ir::visit_expr(e, &mut f);
    }
    out
}

/// Whether `body` contains a `break` leaving this loop or a `return`.
fn has_break_or_return(body: &[Stmt], in_nested_loop: bool) -> bool {
    body.iter().any(|s| match s {
        Stmt::Break(_) => !in_nested_loop,
        Stmt::Return(..) => true,
        Stmt::If { then, els, .. } => {
            has_break_or_return(then, in_nested_loop)
                || els.as_deref().is_some_and(|e| has_break_or_return(e, in_nested_loop))
        }
        Stmt::Block(b) => has_break_or_return(b, in_nested_loop),
        Stmt::For { body, .. } | Stmt::While { body, .. } => has_break_or_return(body, true),
        _ => false,
    })
}

fn has_return(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Return(..) => true,
        Stmt::If { then, els, .. } => has_return(then) || els.as_deref().is_some_and(has_return),
        Stmt::Block(b) | Stmt::For { body: b, .. } | Stmt::While { body: b, .. } => has_return(b),
        _ => false,
    })
}

/// isl keywords (matched case-insensitively by isl's lexer).
pub(crate) const ISL_KEYWORDS: &[&str] = &[
    "exists", "and", "or", "implies", "not", "infty", "infinity", "nan", "min", "max", "rat", "true", "false", "ceild",
    "floord", "mod", "ceil", "floor",
];

pub(crate) fn is_isl_keyword(n: &str) -> bool {
    ISL_KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(n))
}

impl<'a> Walker<'a> {
    pub fn new(program: &'a Program, ndr: &'a Ndr, spec: &'a BTreeMap<String, i128>, taken: Vec<String>) -> Walker<'a> {
        Walker {
            program,
            ndr,
            spec,
            taken,
            scopes: Vec::new(),
            frames: Vec::new(),
            path: Vec::new(),
            exact: true,
            iters: Vec::new(),
            returns: Vec::new(),
            recs: Vec::new(),
            atomics: Vec::new(),
            notes: Vec::new(),
            loop_notes: Vec::new(),
            buf_names: Vec::new(),
            steps: 0,
            param_bounds: HashMap::new(),
            dim_bounds: HashMap::new(),
            var_types: HashMap::new(),
            buf_args: Vec::new(),
        }
    }

    fn loc(&self, s: &Span) -> String {
        format!("{}:{}:{}", self.program.file, s.line, s.col)
    }

    /// Source text of a node, on one line.
    pub fn text(&self, s: &Span) -> String {
        let src = &self.program.source;
        let (a, b) = (s.start as usize, s.end as usize);
        if a < b && b <= src.len() && src.is_char_boundary(a) && src.is_char_boundary(b) {
            src[a..b].split_whitespace().collect::<Vec<_>>().join(" ")
        } else {
            "<expression>".into()
        }
    }

    /// Runs the kernel body with `params` bound.
    pub fn run(&mut self, kernel: &Function, params: HashMap<String, Val>) {
        self.frames.push(0);
        self.scopes.push(params);
        let _ = self.stmts(&kernel.body);
        self.scopes.pop();
        self.frames.pop();
    }

    // ---------------------------------------------------------------- env

    fn frame_base(&self) -> usize {
        self.frames.last().copied().unwrap_or(0)
    }

    fn lookup(&self, name: &str) -> Option<&Val> {
        let base = self.frame_base();
        self.scopes[base..].iter().rev().find_map(|s| s.get(name))
    }

    fn declare(&mut self, name: &str, v: Val) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), v);
        }
    }

    fn store(&mut self, name: &str, v: Val) {
        let base = self.frame_base();
        for s in self.scopes[base..].iter_mut().rev() {
            if let Some(slot) = s.get_mut(name) {
                *slot = v;
                return;
            }
        }
    }

    /// Forgets the values of `names` (loop-carried or conditionally assigned).
    fn havoc(&mut self, names: &[String], why: &str) {
        for n in names {
            let v = match self.lookup(n) {
                Some(Val::Int(_)) => Val::Int(IntVal::Unknown(Why::other(format!("'{n}' {why}")))),
                // It may take the value of any pointer assigned in the loop
                // (`t = src; src = dst; dst = t;`): any buffer.
                Some(Val::Ptr(_)) => self.any_buffer(format!("pointer '{n}' {why}")),
                _ => continue,
            };
            self.store(n, v);
        }
    }

    /// A fresh, unique domain dimension name derived from `base`.
    fn fresh_dim(&mut self, base: &str) -> String {
        let base = if is_isl_keyword(base) { format!("v_{base}") } else { base.to_string() };
        let mut name = base.clone();
        let mut k = 1;
        while self.taken.iter().any(|t| t.eq_ignore_ascii_case(&name)) {
            name = format!("{base}_{k}");
            k += 1;
        }
        self.taken.push(name.clone());
        name
    }

    /// A pointer whose targets cannot be tracked (loaded from memory, made
    /// from an integer, merged with something else, modified in a loop): it
    /// may point anywhere into any buffer argument.
    fn any_buffer(&self, why: String) -> Val {
        Val::Ptr(
            self.buf_args
                .iter()
                .map(|b| PtrTarget { buf: *b, off: IntVal::Unknown(Why::other(why.clone())) })
                .collect(),
        )
    }

    /// Records the integer type of a kernel parameter.
    pub fn var_types_insert(&mut self, name: &str, sc: Scalar) {
        self.var_types.insert(name.to_string(), sc);
    }

    /// Substitutes specialized parameters and returns the constant, if any.
    fn const_of(&self, v: &IntVal) -> Option<i128> {
        v.single()?.subst(self.spec)?.as_const()
    }

    // ---------------------------------------------------------- statements

    /// Runs a statement list; returns the condition under which it exits early.
    fn stmts(&mut self, body: &[Stmt]) -> Exit {
        let base = self.path.len();
        let mut exit = Cond::False;
        for s in body {
            let e = self.stmt(s);
            match e {
                Cond::False => {}
                Cond::True => {
                    exit = Cond::True;
                    break;
                }
                c => {
                    exit = Cond::or(exit, c.clone());
                    self.path.push(Cond::not(c));
                }
            }
        }
        self.path.truncate(base);
        exit
    }

    fn block(&mut self, body: &[Stmt]) -> Exit {
        self.scopes.push(HashMap::new());
        let e = self.stmts(body);
        self.scopes.pop();
        e
    }

    /// Whether the statement budget ran out (the result is then incomplete).
    pub fn exhausted(&self) -> bool {
        self.steps > MAX_STEPS
    }

    fn stmt(&mut self, s: &Stmt) -> Exit {
        self.steps += 1;
        if self.exhausted() {
            return Cond::False;
        }
        match s {
            Stmt::Decl(d) => {
                let v = match &d.init {
                    Some(e) => self.eval(e),
                    None => match &d.ty {
                        t if is_int(t) => Val::Int(IntVal::unknown(format!("'{}' is not initialized", d.name))),
                        _ => Val::Other,
                    },
                };
                if let Type::Scalar(sc) = &d.ty {
                    self.var_types.insert(d.name.clone(), *sc);
                }
                let v = self.convert(v, d.init.as_ref().map(|e| &e.ty), &d.ty, &d.span);
                self.declare(&d.name, v);
                Cond::False
            }
            Stmt::Expr(e) => {
                self.eval(e);
                Cond::False
            }
            Stmt::Block(b) => self.block(b),
            Stmt::If { cond, then, els, span } => self.if_stmt(cond, then, els.as_deref(), span),
            Stmt::For { init, cond, step, body, span } => {
                self.for_stmt(init.as_deref(), cond.as_ref(), step.as_ref(), body, span)
            }
            Stmt::While { cond, body, span } => self.while_stmt(cond, body, span),
            Stmt::Barrier(_) => Cond::False,
            Stmt::Return(e, _) => {
                let v = e.as_ref().map(|e| self.eval(e));
                if let Some((base, vals)) = self.returns.last_mut() {
                    let local = self.path[*base..].to_vec();
                    if let Some(v) = v {
                        vals.push((local, v));
                    }
                }
                Cond::True
            }
            Stmt::Break(_) | Stmt::Continue(_) => Cond::True,
            Stmt::Unsupported(..) => Cond::False,
        }
    }

    fn if_stmt(&mut self, cond: &Expr, then: &[Stmt], els: Option<&[Stmt]>, span: &Span) -> Exit {
        let c = self.eval_cond(cond);
        let before = self.scopes.clone();
        self.path.push(c.clone());
        let te = self.block(then);
        self.path.pop();
        let after_then = std::mem::replace(&mut self.scopes, before);
        self.path.push(Cond::not(c.clone()));
        let ee = match els {
            Some(e) => self.block(e),
            None => Cond::False,
        };
        self.path.pop();
        let after_else = std::mem::take(&mut self.scopes);
        self.scopes = if te == Cond::True {
            after_else
        } else if ee == Cond::True {
            after_then
        } else {
            self.merge(&c, after_then, after_else, span)
        };
        Cond::or(Cond::and(c.clone(), te), Cond::and(Cond::not(c), ee))
    }

    /// Merges the environments after the two branches of `if (c)`.
    fn merge(
        &self,
        c: &Cond,
        t: Vec<HashMap<String, Val>>,
        e: Vec<HashMap<String, Val>>,
        span: &Span,
    ) -> Vec<HashMap<String, Val>> {
        let mut out = t.clone();
        for (lvl, scope) in out.iter_mut().enumerate() {
            for (name, vt) in scope.iter_mut() {
                let Some(ve) = e.get(lvl).and_then(|s| s.get(name)) else { continue };
                if vt == ve {
                    continue;
                }
                let why = || Why::other(format!("'{name}' is assigned under a condition at {}", self.loc(span)));
                *vt = match (vt.clone(), ve.clone()) {
                    (Val::Int(a), Val::Int(b)) => {
                        if c.unknown().is_some() {
                            Val::Int(IntVal::Unknown(why()))
                        } else {
                            Val::Int(IntVal::select(c, a, b))
                        }
                    }
                    (Val::Ptr(a), Val::Ptr(b)) => {
                        if a.len() == 1 && b.len() == 1 && a[0].buf == b[0].buf && c.unknown().is_none() {
                            Val::Ptr(vec![PtrTarget {
                                buf: a[0].buf,
                                off: IntVal::select(c, a[0].off.clone(), b[0].off.clone()),
                            }])
                        } else {
                            let mut v = a;
                            for t in b {
                                if !v.contains(&t) {
                                    v.push(t);
                                }
                            }
                            Val::Ptr(v)
                        }
                    }
                    (Val::Ptr(_), _) | (_, Val::Ptr(_)) => self.any_buffer(why().msg),
                    _ => Val::Other,
                };
            }
        }
        out
    }

    fn while_stmt(&mut self, cond: &Expr, body: &[Stmt], span: &Span) -> Exit {
        let names = assigned_names(body, &[cond]);
        let why = format!("is modified in the loop at {}", self.loc(span));
        self.havoc(&names, &why);
        let c = self.eval_cond(cond);
        let saved = self.exact;
        self.exact = false;
        self.path.push(c);
        self.scopes.push(HashMap::new());
        let _ = self.stmts(body);
        self.scopes.pop();
        self.path.pop();
        self.exact = saved;
        self.havoc(&names, &why);
        if has_return(body) {
            Cond::Unknown(Why::other(format!("the loop at {} may return", self.loc(span))))
        } else {
            Cond::False
        }
    }

    fn for_stmt(
        &mut self,
        init: Option<&Stmt>,
        cond: Option<&Expr>,
        step: Option<&Expr>,
        body: &[Stmt],
        span: &Span,
    ) -> Exit {
        self.scopes.push(HashMap::new());
        if let Some(i) = init {
            self.stmt(i);
        }
        let loc = self.loc(span);
        let why = format!("is modified in the loop at {loc}");
        let mut extra: Vec<&Expr> = Vec::new();
        extra.extend(cond);
        extra.extend(step);
        let assigned = assigned_names(body, &extra);
        let step_info = step.and_then(parse_step);
        // The iterator: assigned only by the step, an integer variable in scope.
        let iter = step_info.as_ref().and_then(|(name, _, _)| {
            let in_body = assigned_names(body, &[]).contains(name);
            let is_int_var = matches!(self.lookup(name), Some(Val::Int(_)));
            (is_int_var && !in_body).then(|| name.clone())
        });
        let mut loop_exact = !has_break_or_return(body, false);
        let mut notes = Vec::new();
        let saved_exact = self.exact;
        let path_base = self.path.len();
        let mut pushed_iter = false;
        match (&iter, &step_info) {
            (Some(name), Some((_, sign, amount))) => {
                let init_val = match self.lookup(name) {
                    Some(Val::Int(v)) => v.clone(),
                    _ => IntVal::unknown("iterator"),
                };
                let others: Vec<String> = assigned.iter().filter(|n| *n != name).cloned().collect();
                self.havoc(&others, &why);
                // Step amount, evaluated with loop-carried values forgotten.
                let amount_val = match amount {
                    None => IntVal::konst(1),
                    Some(e) => match self.eval(e) {
                        Val::Int(v) => v,
                        _ => IntVal::unknown("step"),
                    },
                };
                let dim = self.fresh_dim(name);
                let it = Poly::dim(&dim);
                self.declare(name, Val::Int(IntVal::poly(it.clone())));
                self.iters.push(dim.clone());
                pushed_iter = true;
                let step_const = self.const_of(&amount_val).map(|c| c * sign);
                let dir = match step_const {
                    Some(c) if c != 0 => c.signum(),
                    Some(_) => 0,
                    None => {
                        // A parameter step known to be positive (NDRange sizes).
                        let positive = amount_val.single().is_some_and(|p| {
                            p.terms.len() == 1
                                && p.terms.iter().all(|(m, c)| {
                                    *c > 0 && m.len() == 1 && matches!(&m[0], Atom::Param(n) if is_ndrange_size(n))
                                })
                        });
                        if positive {
                            *sign
                        } else {
                            0
                        }
                    }
                };
                // Bounds of the iterator for wrap-around checks: its type's
                // range, and its start in the direction of the step (for
                // `int`-sized and wider types; the condition keeps them from
                // wrapping, which narrower iterators promoted to `int` may do).
                if let Some(sc) = self.var_types.get(name.as_str()).copied() {
                    if let Some((mut lo, mut hi, bits, _)) = int_range(&Type::Scalar(sc)) {
                        if let (IntVal::Known(ps), true) = (&init_val, bits >= 32) {
                            let rs: Option<Vec<(i128, i128)>> = ps.iter().map(|(_, p)| self.poly_range(p)).collect();
                            if let Some(rs) = rs.filter(|r| !r.is_empty()) {
                                if dir > 0 {
                                    lo = lo.max(rs.iter().map(|r| r.0).min().unwrap_or(lo));
                                } else if dir < 0 {
                                    hi = hi.min(rs.iter().map(|r| r.1).max().unwrap_or(hi));
                                }
                            }
                        }
                        self.dim_bounds.insert(dim.clone(), (lo, hi));
                    }
                }
                if step_const.is_none() {
                    loop_exact = false;
                    notes.push(format!(
                        "the step of loop '{name}' ({loc}) is not a constant; its stride is over-approximated"
                    ));
                }
                // Start bound and stride.
                match &init_val {
                    IntVal::Known(pieces) if dir != 0 => {
                        let mut start = Cond::False;
                        for (pc, v) in pieces {
                            let bound = if dir > 0 { Cond::ge(&it, v) } else { Cond::ge(v, &it) };
                            let mut c = Cond::and(pc.clone(), bound.unwrap_or(Cond::Unknown(Why::other("overflow"))));
                            if let Some(s) = step_const {
                                if s.abs() > 1 {
                                    let d = it.sub(v).and_then(|x| {
                                        let q = x.floor_div(s.abs())?;
                                        x.sub(&q.scale(s.abs())?)
                                    });
                                    c = Cond::and(c, d.map(Cond::Eq).unwrap_or(Cond::Unknown(Why::other("stride"))));
                                }
                            }
                            start = Cond::or(start, c);
                        }
                        self.path.push(start);
                    }
                    IntVal::Unknown(w) => {
                        loop_exact = false;
                        notes.push(format!("the start of loop '{name}' ({loc}) is not affine: {}", w.msg));
                    }
                    _ => loop_exact = false,
                }
                // The condition; exact when it only bounds the iterator in the
                // direction of the step.
                if let Some(c) = cond {
                    let cv = self.eval_cond(c);
                    if dir == 0 || !monotone(&cv, &dim, dir) {
                        loop_exact = false;
                    }
                    if let Some(w) = cv.unknown() {
                        notes.push(format!("the condition of loop '{name}' ({loc}) is not affine: {}", w.msg));
                    }
                    self.path.push(cv);
                } else {
                    loop_exact = false;
                }
            }
            _ => {
                // Not a counted loop: like a while loop.
                self.havoc(&assigned, &why);
                loop_exact = false;
                if let Some(c) = cond {
                    let cv = self.eval_cond(c);
                    self.path.push(cv);
                }
                notes.push(format!("loop at {loc} is not a counted loop; accesses in it are approximated"));
            }
        }
        self.exact &= loop_exact;
        let n_notes = self.loop_notes.len();
        self.loop_notes.extend(notes);
        self.scopes.push(HashMap::new());
        let _ = self.stmts(body);
        self.scopes.pop();
        // The step may use values from the body; evaluate it for its accesses.
        if iter.is_none() {
            if let Some(s) = step {
                self.eval(s);
            }
        }
        self.loop_notes.truncate(n_notes);
        self.path.truncate(path_base);
        if pushed_iter {
            self.iters.pop();
        }
        self.exact = saved_exact;
        self.scopes.pop();
        let mut after = assigned.clone();
        if let Some(n) = &iter {
            if !after.contains(n) {
                after.push(n.clone());
            }
        }
        self.havoc(&after, &why);
        if has_return(body) {
            Cond::Unknown(Why::other(format!("the loop at {loc} may return")))
        } else {
            Cond::False
        }
    }

    // --------------------------------------------------------- expressions

    /// Converts a value to the declared type of a variable.
    /// `from` is the C type of the stored value (see [`Walker::wrap`]).
    fn convert(&self, v: Val, from: Option<&Type>, ty: &Type, span: &Span) -> Val {
        match ty {
            t if is_int(t) => match v {
                Val::Int(i) => Val::Int(self.wrap(i, from, t, span)),
                _ => Val::Int(IntVal::unknown(format!("value at {} is not an integer expression", self.loc(span)))),
            },
            t if is_buffer_ptr(t) => match v {
                Val::Ptr(p) => Val::Ptr(p),
                _ => self.any_buffer(format!("the target of the pointer at {} cannot be tracked", self.loc(span))),
            },
            _ => Val::Other,
        }
    }

    /// Evaluates a condition (side effects of its operands are recorded).
    pub fn eval_cond(&mut self, e: &Expr) -> Cond {
        match &e.kind {
            ExprKind::Cast(a) if is_int(&e.ty) || matches!(e.ty, Type::Scalar(Scalar::Bool)) => self.eval_cond(a),
            ExprKind::Binary(op @ (BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge | BinOp::Eq | BinOp::Ne), a, b) => {
                let (va, vb) = (self.eval(a), self.eval(b));
                match (va, vb) {
                    (Val::Int(x), Val::Int(y)) if is_int(&a.ty) && is_int(&b.ty) => cmp(*op, &x, &y),
                    _ => Cond::Unknown(Why::other(format!(
                        "condition '{}' at {} is not an integer comparison",
                        self.text(&e.span),
                        self.loc(&e.span)
                    ))),
                }
            }
            ExprKind::Binary(BinOp::LogAnd, a, b) => {
                let ca = self.eval_cond(a);
                self.path.push(ca.clone());
                let cb = self.eval_cond(b);
                self.path.pop();
                Cond::and(ca, cb)
            }
            ExprKind::Binary(BinOp::LogOr, a, b) => {
                let ca = self.eval_cond(a);
                self.path.push(Cond::not(ca.clone()));
                let cb = self.eval_cond(b);
                self.path.pop();
                Cond::or(ca, cb)
            }
            ExprKind::Unary(UnOp::Not, a) => Cond::not(self.eval_cond(a)),
            _ => match self.eval(e) {
                Val::Int(v) => cmp(BinOp::Ne, &v, &IntVal::konst(0)),
                _ => Cond::Unknown(Why::other(format!(
                    "condition '{}' at {} is not an integer expression",
                    self.text(&e.span),
                    self.loc(&e.span)
                ))),
            },
        }
    }

    /// Evaluates an expression, recording its accesses.
    pub fn eval(&mut self, e: &Expr) -> Val {
        let v = self.eval_raw(e);
        if is_buffer_ptr(&e.ty) && !matches!(v, Val::Ptr(_)) {
            return self.any_buffer(format!("the target of pointer '{}' ({}) cannot be tracked", self.text(&e.span), self.loc(&e.span)));
        }
        if is_int(&e.ty) {
            match v {
                Val::Int(_) => v,
                _ => Val::Int(IntVal::unknown(format!("'{}' is not an integer expression", self.text(&e.span)))),
            }
        } else {
            v
        }
    }

    fn eval_int(&mut self, e: &Expr) -> IntVal {
        match self.eval(e) {
            Val::Int(v) => v,
            _ => IntVal::unknown(format!("'{}' is not an integer", self.text(&e.span))),
        }
    }

    fn eval_raw(&mut self, e: &Expr) -> Val {
        match &e.kind {
            ExprKind::IntLit(v) if is_int(&e.ty) => Val::Int(IntVal::konst(*v)),
            ExprKind::IntLit(_) | ExprKind::FloatLit(..) => Val::Other,
            ExprKind::Var(n) => match self.lookup(n) {
                Some(v) => v.clone(),
                None => Val::Int(IntVal::unknown(format!("'{n}' is not a local variable"))),
            },
            ExprKind::Cast(a) => {
                let v = self.eval(a);
                if is_int(&e.ty) {
                    match v {
                        // Integer conversions wrap (see the module doc).
                        Val::Int(i) if is_int(&a.ty) => Val::Int(self.wrap(i, Some(&a.ty), &e.ty, &e.span)),
                        _ if !is_int(&a.ty) => Val::Int(IntVal::unknown(format!(
                            "'{}' is converted from a non-integer value",
                            self.text(&e.span)
                        ))),
                        other => other,
                    }
                } else if matches!(e.ty, Type::Pointer { .. }) {
                    v
                } else {
                    Val::Other
                }
            }
            ExprKind::Unary(op, a) => self.unary(*op, a, e),
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b, e),
            ExprKind::Assign(op, l, r) => self.assign(*op, l, r, e),
            ExprKind::Index(..) => match self.mem_ref(e) {
                Some((targets, partial)) => {
                    let _ = partial;
                    self.record(&targets, AccessKind::Read, 1, e);
                    self.loaded(e)
                }
                None => self.loaded(e),
            },
            ExprKind::Call(name, args) => self.call(name, args, e),
            ExprKind::WorkItem(f, d) => self.work_item(*f, d),
            ExprKind::Cond(c, a, b) => {
                let cv = self.eval_cond(c);
                self.path.push(cv.clone());
                let va = self.eval(a);
                self.path.pop();
                self.path.push(Cond::not(cv.clone()));
                let vb = self.eval(b);
                self.path.pop();
                match (va, vb) {
                    (Val::Int(x), Val::Int(y)) => Val::Int(IntVal::select(&cv, x, y)),
                    (Val::Ptr(mut x), Val::Ptr(y)) => {
                        for t in y {
                            if !x.contains(&t) {
                                x.push(t);
                            }
                        }
                        Val::Ptr(x)
                    }
                    _ => Val::Other,
                }
            }
            ExprKind::Swizzle(a, _) => {
                self.eval(a);
                Val::Other
            }
            ExprKind::VectorLit(parts) => {
                for p in parts {
                    self.eval(p);
                }
                Val::Other
            }
            ExprKind::Unsupported(m) => Val::Int(IntVal::unknown(format!("unsupported expression: {m}"))),
            // a member of a buffer element: a read of (part of) the element
            ExprKind::Member(..) => match self.mem_ref(e) {
                Some((targets, _)) => {
                    self.record(&targets, AccessKind::Read, 1, e);
                    self.loaded(e)
                }
                None => self.loaded(e),
            },
        }
    }

    /// The value read from memory by `e`.
    fn loaded(&self, e: &Expr) -> Val {
        if is_int(&e.ty) {
            Val::Int(IntVal::Unknown(Why::indirect(format!("'{}' is loaded from memory", self.text(&e.span)))))
        } else {
            Val::Other
        }
    }

    /// For a memory lvalue (`p[i]`, `*p`, `p[i].x`): the targets with the
    /// element offset, and whether only part of the element is accessed.
    /// `None` for private/local memory.
    fn mem_ref(&mut self, e: &Expr) -> Option<(Vec<PtrTarget>, bool)> {
        match &e.kind {
            ExprKind::Index(base, idx) => {
                let b = self.eval(base);
                let i = self.eval_int(idx);
                match b {
                    Val::Ptr(ts) => Some((offset_targets(&ts, &i, &self.ndr.rules), false)),
                    _ => None,
                }
            }
            ExprKind::Unary(UnOp::Deref, p) => match self.eval(p) {
                Val::Ptr(ts) => Some((ts, false)),
                _ => None,
            },
            ExprKind::Swizzle(a, _) => self.mem_ref(a).map(|(t, _)| (t, true)),
            // `p->m`: part of the element `p` points at
            ExprKind::Member(a, _) if matches!(a.ty, Type::Pointer { .. }) => match self.eval(a) {
                Val::Ptr(ts) => Some((ts, true)),
                _ => None,
            },
            // `p[i].m`, `p[i].m.n`: part of the element
            ExprKind::Member(a, _) => self.mem_ref(a).map(|(t, _)| (t, true)),
            ExprKind::Cast(a) => self.mem_ref(a),
            _ => None,
        }
    }

    fn record(&mut self, targets: &[PtrTarget], kind: AccessKind, lanes: u32, e: &Expr) {
        let many = targets.len() > 1;
        let text = self.text(&e.span);
        for t in targets {
            let sub = match &t.off {
                IntVal::Known(p) => Ok(p.clone()),
                IntVal::Unknown(w) => Err(w.clone()),
            };
            let note = if many {
                Some(format!("'{text}' ({}) may access one of several buffers", self.loc(&e.span)))
            } else {
                self.loop_notes.last().cloned()
            };
            self.recs.push(Rec {
                buf: t.buf,
                kind,
                sub,
                lanes,
                path: self.path.clone(),
                exact: self.exact && !many,
                iters: self.iters.clone(),
                span: e.span.clone(),
                text: text.clone(),
                note,
            });
        }
    }

    /// Records that the buffers of `targets` escape into something unknown.
    fn escape(&mut self, targets: &[PtrTarget], what: &str, e: &Expr) {
        let msg = format!("is passed to '{what}'");
        for kind in [AccessKind::Read, AccessKind::MayWrite] {
            for t in targets {
                self.recs.push(Rec {
                    buf: t.buf,
                    kind,
                    sub: Err(Why { kind: WhyKind::Escape, msg: msg.clone() }),
                    lanes: 1,
                    path: self.path.clone(),
                    exact: false,
                    iters: self.iters.clone(),
                    span: e.span.clone(),
                    text: self.text(&e.span),
                    note: None,
                });
            }
        }
    }

    fn unary(&mut self, op: UnOp, a: &Expr, e: &Expr) -> Val {
        match op {
            UnOp::Plus => self.eval(a),
            UnOp::Neg => match self.eval(a) {
                Val::Int(v) => {
                    let r = v.lift1(&|p| p.scale(-1).map(|q| vec![(Cond::True, q)]).ok_or_else(overflow));
                    Val::Int(if is_unsigned(&e.ty) { self.wrap(r, None, &e.ty, &e.span) } else { r })
                }
                _ => Val::Other,
            },
            UnOp::BitNot => match self.eval(a) {
                Val::Int(v) => {
                    let r = v.lift1(&|p| {
                        p.scale(-1).and_then(|q| q.add_const(-1)).map(|q| vec![(Cond::True, q)]).ok_or_else(overflow)
                    });
                    Val::Int(if is_unsigned(&e.ty) { self.wrap(r, None, &e.ty, &e.span) } else { r })
                }
                _ => Val::Other,
            },
            UnOp::Not => {
                let c = self.eval_cond(a);
                Val::Int(IntVal::from_cond(Cond::not(c)))
            }
            UnOp::Deref => match self.mem_ref(e) {
                Some((ts, _)) => {
                    self.record(&ts, AccessKind::Read, 1, e);
                    self.loaded(e)
                }
                None => self.loaded(e),
            },
            UnOp::AddrOf => match &strip(a).kind {
                ExprKind::Index(base, idx) => {
                    let b = self.eval(base);
                    let i = self.eval_int(idx);
                    match b {
                        Val::Ptr(ts) => Val::Ptr(offset_targets(&ts, &i, &self.ndr.rules)),
                        _ => Val::Other,
                    }
                }
                ExprKind::Unary(UnOp::Deref, p) => self.eval(p),
                ExprKind::Var(n) => {
                    // The variable may be modified through the pointer.
                    let why = format!("the address of '{n}' is taken at {}", self.loc(&e.span));
                    match self.lookup(n) {
                        Some(Val::Int(_)) => self.store(n, Val::Int(IntVal::unknown(why))),
                        Some(Val::Ptr(_)) => {
                            let v = self.any_buffer(why);
                            self.store(n, v)
                        }
                        _ => {}
                    }
                    Val::Other
                }
                _ => {
                    self.eval(a);
                    Val::Other
                }
            },
            UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec => {
                let delta = if matches!(op, UnOp::PreInc | UnOp::PostInc) { 1 } else { -1 };
                let post = matches!(op, UnOp::PostInc | UnOp::PostDec);
                if let Some(n) = var_name(a) {
                    let old = self.eval(a);
                    let new = match &old {
                        // `c++` on a `uchar` is `c = (uchar)(c + 1)`: wraps like every store.
                        Val::Int(v) => Val::Int(self.wrap(add_int(v, &IntVal::konst(delta)), no_ub(&a.ty), &a.ty, &a.span)),
                        Val::Ptr(ts) => Val::Ptr(offset_targets(ts, &IntVal::konst(delta), &self.ndr.rules)),
                        _ => Val::Other,
                    };
                    self.store(n, new.clone());
                    if post {
                        old
                    } else {
                        new
                    }
                } else {
                    match self.mem_ref(a) {
                        Some((ts, _)) => {
                            self.record(&ts, AccessKind::Read, 1, a);
                            self.record(&ts, AccessKind::MustWrite, 1, a);
                            self.loaded(a)
                        }
                        None => self.loaded(a),
                    }
                }
            }
        }
    }

    fn binary(&mut self, op: BinOp, a: &Expr, b: &Expr, e: &Expr) -> Val {
        match op {
            BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge | BinOp::Eq | BinOp::Ne | BinOp::LogAnd | BinOp::LogOr => {
                let c = self.eval_cond(e);
                Val::Int(IntVal::from_cond(c))
            }
            BinOp::Comma => {
                self.eval(a);
                self.eval(b)
            }
            _ => {
                let va = self.eval(a);
                let vb = self.eval(b);
                self.arith(op, va, vb, e)
            }
        }
    }

    fn arith(&self, op: BinOp, va: Val, vb: Val, e: &Expr) -> Val {
        let rules = &self.ndr.rules;
        match (op, va, vb) {
            (BinOp::Add, Val::Ptr(ts), Val::Int(i)) | (BinOp::Add, Val::Int(i), Val::Ptr(ts)) => {
                Val::Ptr(offset_targets(&ts, &i, rules))
            }
            (BinOp::Sub, Val::Ptr(ts), Val::Int(i)) => {
                let neg = i.lift1(&|p| p.scale(-1).map(|q| vec![(Cond::True, q)]).ok_or_else(overflow));
                Val::Ptr(offset_targets(&ts, &neg, rules))
            }
            (_, Val::Int(x), Val::Int(y)) => {
                let unsigned = is_unsigned(&e.ty);
                let v = self.int_op(op, &x, &y, unsigned, e);
                // Unsigned arithmetic wraps; signed overflow is undefined.
                Val::Int(if unsigned { self.wrap(v, None, &e.ty, &e.span) } else { v })
            }
            _ => Val::Other,
        }
    }

    fn int_op(&self, op: BinOp, x: &IntVal, y: &IntVal, unsigned: bool, e: &Expr) -> IntVal {
        let rules = &self.ndr.rules;
        let text = self.text(&e.span);
        // An unknown operand is the reason, whatever the operation.
        if let IntVal::Unknown(w) = x {
            return IntVal::Unknown(w.clone());
        }
        if let IntVal::Unknown(w) = y {
            return IntVal::Unknown(w.clone());
        }
        match op {
            BinOp::Add => add_int(x, y),
            BinOp::Sub => x.lift2(y, &|a, b| a.sub(b).map(|q| vec![(Cond::True, q)]).ok_or_else(overflow)),
            BinOp::Mul => x.lift2(y, &|a, b| a.mul(b, rules).map(|q| vec![(Cond::True, q)]).ok_or_else(overflow)),
            BinOp::Div | BinOp::Rem => {
                let Some(d) = self.const_of(y) else {
                    return IntVal::unknown(format!("'{text}' divides by a non-constant"));
                };
                if d == 0 {
                    return IntVal::unknown(format!("'{text}' divides by zero"));
                }
                let nonneg = |p: &Poly| unsigned || p.syntactically_nonneg(&|a| self.nonneg_atom(a));
                let rem = op == BinOp::Rem;
                x.lift1(&|a| trunc_div(a, d, rem, nonneg(a)))
            }
            BinOp::Shl => match self.const_of(y) {
                Some(k) if (0..63).contains(&k) => {
                    x.lift1(&|a| a.scale(1i128 << k).map(|q| vec![(Cond::True, q)]).ok_or_else(overflow))
                }
                _ => IntVal::unknown(format!("'{text}' shifts by a non-constant")),
            },
            BinOp::Shr => match self.const_of(y) {
                // Arithmetic shift right is a floor division.
                Some(k) if (0..63).contains(&k) => x.lift1(&|a| {
                    a.floor_div(1i128 << k)
                        .map(|q| vec![(Cond::True, q)])
                        .ok_or_else(|| Why::other(format!("'{text}' is not affine")))
                }),
                _ => IntVal::unknown(format!("'{text}' shifts by a non-constant")),
            },
            BinOp::BitAnd => {
                // x & (2^k - 1) == x mod 2^k in two's complement.
                let (m, v) = match (self.const_of(y), self.const_of(x)) {
                    (Some(m), _) => (m, x),
                    (None, Some(m)) => (m, y),
                    _ => return IntVal::unknown(format!("'{text}' is a bitwise operation")),
                };
                if m >= 0 && (m + 1) & m == 0 {
                    let k = m + 1;
                    v.lift1(&|a| {
                        let q = a.floor_div(k).ok_or_else(|| Why::other(format!("'{text}' is not affine")))?;
                        let r = q.scale(k).and_then(|qk| a.sub(&qk)).ok_or_else(overflow)?;
                        Ok(vec![(Cond::True, r)])
                    })
                } else {
                    IntVal::unknown(format!("'{text}' is a bitwise operation"))
                }
            }
            _ => IntVal::unknown(format!("'{text}' is a bitwise operation")),
        }
    }

    /// Bounds of an atom (see the module doc for the NDRange premise).
    fn atom_range(&self, a: &Atom) -> Option<(i128, i128)> {
        // Everything of the NDRange fits in `int`: values up to 2^31 - 1.
        const NDR: i128 = (1 << 31) - 1;
        match a {
            Atom::Dim(d) => {
                if let Some(b) = self.dim_bounds.get(d) {
                    return Some(*b);
                }
                let (k, rest) = d.split_at(1);
                let nd = (k == "x" || k == "l" || k == "g" || k == OFFSET_DIM)
                    && rest.len() == 1
                    && rest.chars().all(|c| c.is_ascii_digit());
                nd.then_some((0, NDR))
            }
            Atom::Param(p) => {
                if let Some(v) = self.spec.get(p) {
                    return Some((*v, *v));
                }
                if is_ndrange_size(p) {
                    return Some((1, NDR));
                }
                if self.is_nd_param(p) {
                    return Some((0, NDR)); // go_d
                }
                self.param_bounds.get(p).copied()
            }
            Atom::Div(num, d) => {
                let (lo, hi) = self.poly_range(num)?;
                Some((lo.div_euclid(*d), hi.div_euclid(*d)))
            }
        }
    }

    /// Interval bounds of a polynomial, `None` when some atom is unbounded.
    /// Both the polynomial as written and with each global id `x_d` written
    /// as `go_d + u_d` (`0 <= u_d < gs_d`) are bounded, and the tighter bounds
    /// of the two kept (`x0 - go0` is non-negative only in the second form).
    fn poly_range(&self, p: &Poly) -> Option<(i128, i128)> {
        let direct = self.poly_range_raw(p);
        let mut sub = Poly::default();
        let mut changed = false;
        for (m, c) in &p.terms {
            let mut t = Poly::konst(*c);
            for a in m {
                let f = match a {
                    Atom::Dim(d) if d.len() == 2 && d.starts_with('x') && d[1..].chars().all(|c| c.is_ascii_digit()) => {
                        changed = true;
                        Poly::param(&format!("go{}", &d[1..])).add(&Poly::dim(&format!("{OFFSET_DIM}{}", &d[1..])))?
                    }
                    _ => Poly::atom(a.clone()),
                };
                t = t.mul(&f, &[])?;
            }
            sub = sub.add(&t)?;
        }
        let shifted = if changed { self.poly_range_raw(&sub) } else { None };
        match (direct, shifted) {
            (Some(a), Some(b)) => Some((a.0.max(b.0), a.1.min(b.1))),
            (a, b) => a.or(b),
        }
    }

    fn poly_range_raw(&self, p: &Poly) -> Option<(i128, i128)> {
        let mut acc = (0i128, 0i128);
        for (m, c) in &p.terms {
            let mut t = (*c, *c);
            for a in m {
                t = imul(t, self.atom_range(a)?)?;
            }
            acc = (acc.0.checked_add(t.0)?, acc.1.checked_add(t.1)?);
        }
        Some(acc)
    }

    /// The value of `v` converted to the integer type `ty` (C semantics: modulo
    /// 2^n, two's complement for signed targets); see the module doc.
    ///
    /// `from` is the C type the value already has, when it has one: a value of
    /// a type whose range lies within `ty`'s needs no wrapping (values of
    /// signed types are in range because signed overflow is undefined).
    fn wrap(&self, v: IntVal, from: Option<&Type>, ty: &Type, span: &Span) -> IntVal {
        let Some((lo, hi, bits, signed)) = int_range(ty) else { return v };
        if let Some((flo, fhi, _, _)) = from.and_then(int_range) {
            if flo >= lo && fhi <= hi {
                return v;
            }
        }
        let IntVal::Known(pieces) = v else { return v };
        if pieces.iter().all(|(_, p)| self.poly_range(p).is_some_and(|(a, b)| a >= lo && b <= hi)) {
            return IntVal::Known(pieces);
        }
        let text = self.text(span);
        let why = || Why::other(format!("'{text}' may wrap around in '{}' ({})", ty.name(), self.loc(span)));
        if bits == 1 {
            return IntVal::Unknown(why());
        }
        let m = 1i128 << bits;
        let half = if signed { m / 2 } else { 0 };
        let mut out = Vec::new();
        for (c, p) in pieces {
            if self.poly_range(&p).is_some_and(|(a, b)| a >= lo && b <= hi) {
                out.push((c, p));
                continue;
            }
            // r = ((p + half) mod m) - half
            let shifted = match p.add_const(half) {
                Some(q) => q,
                None => return IntVal::Unknown(why()),
            };
            let Some(q) = shifted.floor_div(m) else { return IntVal::Unknown(why()) };
            let Some(r) = q.scale(m).and_then(|qm| shifted.sub(&qm)).and_then(|r| r.add_const(-half)) else {
                return IntVal::Unknown(why());
            };
            out.push((c, r));
        }
        IntVal::Known(out)
    }

    fn nonneg_atom(&self, a: &Atom) -> bool {
        match a {
            Atom::Dim(d) => {
                let (k, rest) = d.split_at(1);
                (k == "x" || k == "l" || k == "g") && rest.len() == 1 && rest.chars().all(|c| c.is_ascii_digit())
            }
            Atom::Param(p) => is_ndrange_size(p) || p.starts_with("go") && p.len() == 3 && self.is_nd_param(p),
            Atom::Div(..) => false,
        }
    }

    fn is_nd_param(&self, p: &str) -> bool {
        ["gs", "ls", "go", "ng"].iter().any(|k| (0..3).any(|d| p == nd_name(k, d)))
    }

    fn assign(&mut self, op: Option<BinOp>, l: &Expr, r: &Expr, e: &Expr) -> Val {
        let rv = self.eval(r);
        if let Some(n) = var_name(l) {
            let (nv, from) = match op {
                None => (rv, Some(&r.ty)),
                Some(o) => {
                    let old = self.eval(l);
                    // Computed in the promoted type: exact for `int` and wider
                    // signed (overflow is undefined), wrapped for unsigned.
                    (self.arith(o, old, rv, e), no_ub(&l.ty).or(if is_unsigned(&l.ty) { Some(&l.ty) } else { None }))
                }
            };
            let nv = self.convert(nv, from, &l.ty, &l.span);
            self.store(n, nv.clone());
            return nv;
        }
        match self.mem_ref(l) {
            Some((ts, partial)) => {
                if op.is_some() || partial {
                    self.record(&ts, AccessKind::Read, 1, l);
                }
                let kind = if partial { AccessKind::MayWrite } else { AccessKind::MustWrite };
                self.record(&ts, kind, 1, l);
                self.loaded(l)
            }
            None => self.loaded(l),
        }
    }

    fn work_item(&mut self, f: WorkItemFn, d: &Expr) -> Val {
        let wd = self.ndr.work_dim;
        if f == WorkItemFn::WorkDim {
            return Val::Int(IntVal::unknown("get_work_dim() is known only at launch"));
        }
        let Some(dim) = d.const_int().filter(|v| (0..3).contains(v)).map(|v| v as u32) else {
            self.eval(d);
            return Val::Int(IntVal::unknown(format!("{}() with a non-constant dimension", f.name())));
        };
        let inside = dim < wd;
        let v = match f {
            WorkItemFn::GlobalId if inside => Poly::dim(&nd_name("x", dim)),
            WorkItemFn::LocalId if inside => Poly::dim(&nd_name("l", dim)),
            WorkItemFn::GroupId if inside => Poly::dim(&nd_name("g", dim)),
            WorkItemFn::GlobalSize if inside => Poly::param(&nd_name("gs", dim)),
            WorkItemFn::LocalSize if inside => match self.ndr.local_size {
                Some(ls) => Poly::konst(ls[dim as usize] as i128),
                None => Poly::param(&nd_name("ls", dim)),
            },
            WorkItemFn::NumGroups if inside => Poly::param(&nd_name("ng", dim)),
            WorkItemFn::GlobalOffset if inside => Poly::param(&nd_name("go", dim)),
            WorkItemFn::GlobalId | WorkItemFn::LocalId | WorkItemFn::GroupId | WorkItemFn::GlobalOffset => {
                Poly::konst(0)
            }
            _ => Poly::konst(1),
        };
        Val::Int(IntVal::poly(v))
    }

    fn call(&mut self, name: &str, args: &[Expr], e: &Expr) -> Val {
        // Helpers are inlined.
        if let Some(f) = self.program.function(name) {
            return self.inline(f, args, e);
        }
        let int_result = is_int(&e.ty);
        // vloadN / vstoreN (and the half variants) on buffer pointers.
        if let Some(n) = vector_width(name, "vload") {
            if args.len() == 2 {
                let off = self.eval_int(&args[0]);
                let p = self.eval(&args[1]);
                if let Val::Ptr(ts) = p {
                    let idx = scale_int(&off, n as i128);
                    let ts = offset_targets(&ts, &idx, &self.ndr.rules);
                    self.record(&ts, AccessKind::Read, n, e);
                }
                return Val::Other;
            }
        }
        if let Some(n) = vector_width(name, "vstore") {
            if args.len() == 3 {
                self.eval(&args[0]);
                let off = self.eval_int(&args[1]);
                let p = self.eval(&args[2]);
                if let Val::Ptr(ts) = p {
                    let idx = scale_int(&off, n as i128);
                    let ts = offset_targets(&ts, &idx, &self.ndr.rules);
                    self.record(&ts, AccessKind::MustWrite, n, e);
                }
                return Val::Other;
            }
        }
        if name.starts_with("atomic_") || name.starts_with("atom_") {
            let vals: Vec<Val> = args.iter().map(|a| self.eval(a)).collect();
            if let Some(Val::Ptr(ts)) = vals.first() {
                let ts = ts.clone();
                let write = if name.ends_with("cmpxchg") { AccessKind::MayWrite } else { AccessKind::MustWrite };
                // The access is named by the element expression (`&bins[k]` -> `bins[k]`).
                let elem = match &strip(&args[0]).kind {
                    ExprKind::Unary(UnOp::AddrOf, inner) => inner.as_ref(),
                    _ => &args[0],
                };
                self.record(&ts, AccessKind::Read, 1, elem);
                self.record(&ts, write, 1, elem);
                let bufs: Vec<String> = ts.iter().map(|t| self.buf_name(t.buf)).collect();
                self.atomics.push(format!("{name} on '{}' ({})", bufs.join("', '"), self.loc(&e.span)));
                for v in &vals[1..] {
                    if let Val::Ptr(o) = v {
                        let o = o.clone();
                        self.escape(&o, name, e);
                    }
                }
            }
            return if int_result {
                Val::Int(IntVal::Unknown(Why::indirect(format!("'{}' is loaded from memory", self.text(&e.span)))))
            } else {
                Val::Other
            };
        }
        let vals: Vec<Val> = args.iter().map(|a| self.eval(a)).collect();
        if int_result && args.iter().all(|a| is_int(&a.ty)) {
            let ints: Vec<IntVal> = vals
                .iter()
                .map(|v| match v {
                    Val::Int(i) => i.clone(),
                    _ => IntVal::unknown("argument"),
                })
                .collect();
            let unsigned = is_unsigned(&e.ty);
            match (name, ints.as_slice()) {
                ("min", [a, b]) => return Val::Int(min_max(a, b, true)),
                ("max", [a, b]) => return Val::Int(min_max(a, b, false)),
                ("clamp", [x, lo, hi]) => return Val::Int(min_max(&min_max(x, lo, false), hi, true)),
                ("abs", [a]) if !unsigned => {
                    let neg = a.lift1(&|p| p.scale(-1).map(|q| vec![(Cond::True, q)]).ok_or_else(overflow));
                    return Val::Int(min_max(a, &neg, false));
                }
                ("abs", [a]) => return Val::Int(a.clone()),
                ("mul24", [a, b]) => return Val::Int(self.int_op(BinOp::Mul, a, b, unsigned, e)),
                ("mad24", [a, b, c]) => {
                    let p = self.int_op(BinOp::Mul, a, b, unsigned, e);
                    return Val::Int(add_int(&p, c));
                }
                _ => {}
            }
            if name.starts_with("convert_") && ints.len() == 1 {
                return Val::Int(ints[0].clone());
            }
        }
        if name == "prefetch" {
            return Val::Other;
        }
        for v in &vals {
            if let Val::Ptr(ts) = v {
                let ts = ts.clone();
                self.escape(&ts, name, e);
            }
        }
        if int_result {
            Val::Int(IntVal::unknown(format!("'{}' is the result of '{name}'", self.text(&e.span))))
        } else {
            Val::Other
        }
    }

    fn buf_name(&self, buf: u32) -> String {
        self.buf_names.get(buf as usize).cloned().unwrap_or_else(|| format!("arg{buf}"))
    }

    fn inline(&mut self, f: &Function, args: &[Expr], e: &Expr) -> Val {
        let vals: Vec<Val> = args.iter().map(|a| self.eval(a)).collect();
        if self.frames.len() > MAX_INLINE_DEPTH {
            for v in &vals {
                if let Val::Ptr(ts) = v {
                    let ts = ts.clone();
                    self.escape(&ts, &f.name, e);
                }
            }
            return if is_int(&e.ty) { Val::Int(IntVal::unknown("inlining too deep")) } else { Val::Other };
        }
        let mut frame = HashMap::new();
        for ((p, v), arg) in f.params.iter().zip(vals).zip(args) {
            if let Type::Scalar(sc) = &p.ty {
                self.var_types.insert(p.name.clone(), *sc);
            }
            let v = self.convert(v, Some(&arg.ty), &p.ty, &p.span);
            frame.insert(p.name.clone(), v);
        }
        self.frames.push(self.scopes.len());
        self.scopes.push(frame);
        self.returns.push((self.path.len(), Vec::new()));
        let _ = self.stmts(&f.body);
        let (_, rets) = self.returns.pop().unwrap_or_default();
        self.scopes.pop();
        self.frames.pop();
        if rets.is_empty() {
            return if is_int(&e.ty) {
                Val::Int(IntVal::unknown(format!("'{}' returns no value", f.name)))
            } else {
                Val::Other
            };
        }
        if rets.iter().all(|(_, v)| matches!(v, Val::Int(_))) {
            let mut pieces = Vec::new();
            for (conds, v) in rets {
                let c = conds.into_iter().fold(Cond::True, Cond::and);
                match v {
                    Val::Int(IntVal::Known(ps)) => {
                        for (pc, p) in ps {
                            pieces.push((Cond::and(c.clone(), pc), p));
                        }
                    }
                    Val::Int(IntVal::Unknown(w)) => return Val::Int(IntVal::Unknown(w)),
                    _ => {}
                }
            }
            if pieces.len() > MAX_PIECES {
                return Val::Int(IntVal::unknown("too many return values"));
            }
            return Val::Int(IntVal::Known(pieces));
        }
        if rets.iter().all(|(_, v)| matches!(v, Val::Ptr(_))) {
            let mut all = Vec::new();
            for (_, v) in rets {
                if let Val::Ptr(ts) = v {
                    for t in ts {
                        if !all.contains(&t) {
                            all.push(t);
                        }
                    }
                }
            }
            return Val::Ptr(all);
        }
        Val::Other
    }
}

fn overflow() -> Why {
    Why::other("arithmetic overflow in a subscript")
}

pub(crate) fn is_ndrange_size(n: &str) -> bool {
    ["gs", "ls", "ng"].iter().any(|k| (0..3).any(|d| n == nd_name(k, d)))
}

fn add_int(x: &IntVal, y: &IntVal) -> IntVal {
    x.lift2(y, &|a, b| a.add(b).map(|q| vec![(Cond::True, q)]).ok_or_else(overflow))
}

fn scale_int(x: &IntVal, k: i128) -> IntVal {
    x.lift1(&|a| a.scale(k).map(|q| vec![(Cond::True, q)]).ok_or_else(overflow))
}

fn offset_targets(ts: &[PtrTarget], i: &IntVal, _rules: &[Rule]) -> Vec<PtrTarget> {
    ts.iter().map(|t| PtrTarget { buf: t.buf, off: add_int(&t.off, i) }).collect()
}

fn min_max(a: &IntVal, b: &IntVal, is_min: bool) -> IntVal {
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
fn trunc_div(a: &Poly, d: i128, rem: bool, nonneg: bool) -> Result<Vec<(Cond, Poly)>, Why> {
    let not_affine = || Why::other(format!("'{}' is divided but is not affine", a.describe()));
    let (m, sign) = (d.abs(), d.signum());
    // floor(a/m) for a >= 0, -floor(-a/m) for a < 0.
    let pos = a.floor_div(m).ok_or_else(not_affine)?;
    let neg = a.scale(-1).and_then(|n| n.floor_div(m)).and_then(|q| q.scale(-1)).ok_or_else(not_affine)?;
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
fn cmp(op: BinOp, x: &IntVal, y: &IntVal) -> Cond {
    let (a, b) = match (x, y) {
        (IntVal::Unknown(w), _) | (_, IntVal::Unknown(w)) => return Cond::Unknown(w.clone()),
        (IntVal::Known(a), IntVal::Known(b)) => (a, b),
    };
    let mut out = Cond::False;
    for (ca, pa) in a {
        for (cb, pb) in b {
            let one = Poly::konst(1);
            let c = match op {
                BinOp::Lt => pb.sub(pa).and_then(|d| d.sub(&one)).map(|d| Cond::ge(&d, &Poly::default())),
                BinOp::Le => Some(Cond::ge(pb, pa)),
                BinOp::Gt => pa.sub(pb).and_then(|d| d.sub(&one)).map(|d| Cond::ge(&d, &Poly::default())),
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

/// Whether `c` only bounds the iterator `it` in the direction `dir` of the
/// step (so that the first iteration failing it ends the loop exactly).
fn monotone(c: &Cond, it: &str, dir: i128) -> bool {
    let mentions = |c: &Cond| {
        let mut v = Vec::new();
        c.atoms(&mut v);
        v.iter().any(|a| match a {
            Atom::Dim(d) => d == it,
            _ => false,
        })
    };
    match c {
        Cond::True | Cond::False => true,
        Cond::Ge(p) => {
            if !p.is_affine() {
                return false;
            }
            let k = p.coeff_of_dim(it);
            // The iterator must not hide in a division.
            let only_linear = {
                let mut q = p.clone();
                q.terms.remove(&vec![Atom::Dim(it.to_string())]);
                !q.mentions_dim(it)
            };
            only_linear && (k == 0 || k.signum() == -dir)
        }
        Cond::Eq(_) => !mentions(c),
        Cond::And(v) => v.iter().all(|c| monotone(c, it, dir)),
        Cond::Or(_) | Cond::Not(_) => !mentions(c) && c.unknown().is_none(),
        Cond::Unknown(_) => false,
    }
}

/// Recognizes `i++`, `++i`, `i--`, `i += e`, `i -= e`, `i = i + e`, `i = i - e`.
fn parse_step(step: &Expr) -> Option<(String, i128, Option<&Expr>)> {
    match &step.kind {
        ExprKind::Unary(UnOp::PostInc | UnOp::PreInc, a) => Some((var_name(a)?.to_string(), 1, None)),
        ExprKind::Unary(UnOp::PostDec | UnOp::PreDec, a) => Some((var_name(a)?.to_string(), -1, None)),
        ExprKind::Assign(Some(BinOp::Add), l, r) => Some((var_name(l)?.to_string(), 1, Some(r))),
        ExprKind::Assign(Some(BinOp::Sub), l, r) => Some((var_name(l)?.to_string(), -1, Some(r))),
        ExprKind::Assign(None, l, r) => {
            let n = var_name(l)?;
            match &strip(r).kind {
                ExprKind::Binary(BinOp::Add, a, b) if var_name(a) == Some(n) => Some((n.to_string(), 1, Some(b))),
                ExprKind::Binary(BinOp::Add, a, b) if var_name(b) == Some(n) => Some((n.to_string(), 1, Some(a))),
                ExprKind::Binary(BinOp::Sub, a, b) if var_name(a) == Some(n) => Some((n.to_string(), -1, Some(b))),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `vload4` -> 4, `vload_half` -> 1, `vload_half4` -> 4 (for `prefix` vload/vstore).
fn vector_width(name: &str, prefix: &str) -> Option<u32> {
    let rest = name.strip_prefix(prefix)?;
    let rest = rest.strip_prefix("_half").unwrap_or(rest);
    if rest.is_empty() {
        return (name != prefix).then_some(1);
    }
    match rest.parse::<u32>() {
        Ok(n @ (2 | 3 | 4 | 8 | 16)) => Some(n),
        _ => None,
    }
}
