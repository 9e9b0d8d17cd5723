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
//!
//! The submodules: `domain` (the values and the arithmetic on them), `stmt`
//! (statements and loops), `expr` (expressions, accesses, integer
//! conversions), `builtins` (work-item functions and OpenCL builtins) and
//! `inline` (helper functions).

use crate::poly::{Cond, Why};
use coarsen::ir::{Expr, ExprKind, Function, Program, Scalar, Span, Type};
use std::collections::{BTreeMap, HashMap};

mod builtins;
mod domain;
mod expr;
mod inline;
mod stmt;

pub(crate) use domain::{int_range, nd_name, IntVal, Ndr, PtrTarget, Rec, Val};

/// At most this many pieces in a piecewise value before giving up on it.
const MAX_PIECES: usize = 16;
/// Maximum number of statements walked (helpers are inlined at every call).
pub(crate) const MAX_STEPS: usize = 200_000;

/// Returned values of the inlined calls: (path length at entry, (local path, value)).
type Returns = Vec<(usize, Vec<(Vec<Cond>, Val)>)>;

pub(crate) struct Walker<'a> {
    pub program: &'a Program,
    pub ndr: &'a Ndr,
    /// Specialized parameter values, by isl name.
    pub spec: &'a BTreeMap<String, i128>,
    /// Names not to be used for new dimensions (parameters, reserved words).
    pub taken: Vec<String>,
    /// Variables whose address is taken anywhere in the program (`&j`),
    /// by name, with the first place: a store through the pointer may
    /// change them at any time, so a read of one is an unknown value.
    escaped: HashMap<String, coarsen::ir::Span>,
    scopes: Vec<HashMap<String, Val>>,
    frames: Vec<usize>,
    path: Vec<Cond>,
    exact: bool,
    iters: Vec<String>,
    /// (path length at call entry, returned values with their local path).
    returns: Returns,
    pub recs: Vec<Rec>,
    /// Every atomic update of a buffer, in the order met (see
    /// `crate::reduction`).
    pub atomic_uses: Vec<AtomicUse>,
    /// The call of the expression statement being walked (`atomic_inc(&c[k]);`):
    /// its value is discarded.
    pub(crate) discarded: Option<coarsen::ir::Span>,
    /// True while the accesses of an atomic are recorded.
    pub(crate) in_atomic: bool,
    pub notes: Vec<String>,
    /// Pending note attached to the next records (e.g. loop approximations).
    loop_notes: Vec<String>,
    /// Kernel parameter names by argument index (for messages).
    pub buf_names: Vec<String>,
    /// Statements walked so far (see [`MAX_STEPS`]).
    steps: usize,
    /// Value ranges of integer scalar parameters, by isl name (from their C type).
    pub param_bounds: HashMap<String, (i128, i128)>,
    /// Structs passed by value that the kernel never assigns nor takes
    /// the address of, by name: their argument index. Their
    /// integer members read in the kernel's own body are parameters.
    pub struct_args: HashMap<String, u32>,
    /// The parameters made of such members, in the order first read.
    pub member_params: Vec<MemberParam>,
    /// Value ranges of loop-iterator dimensions (from the iterator's type and start).
    dim_bounds: HashMap<String, (i128, i128)>,
    /// Loop-iterator dimensions of counted loops with a constant step `s`
    /// (`|s| > 1`) from one affine start `v`: `i = v + s*t` for a count
    /// `t >= 0`. Recorded accesses are written in `t` (see `record`), so
    /// that the step shows as a coefficient of the subscript (a box:
    /// `y[i]` in a grid-stride loop, specialized, is `y[t][j]` with stride
    /// `s`).
    pub(crate) strided: HashMap<String, (crate::poly::Poly, i128)>,
    /// Declared integer types of variables (innermost declaration wins).
    var_types: HashMap<String, Scalar>,
    /// Argument indices of the `__global`/`__constant` buffer arguments: the
    /// candidates of a pointer whose targets cannot be tracked.
    pub buf_args: Vec<u32>,
    /// Element size in bytes of each buffer argument, by argument index.
    pub buf_elem_sizes: BTreeMap<u32, u32>,
    /// Integer conversions assumed not to wrap around ([`NoWrap`]), in the
    /// order met, each once.
    pub no_wrap: std::cell::RefCell<Vec<NoWrap>>,
    /// Integer scalar parameters assumed not negative (their conversion to
    /// an unsigned type is a [`NoWrap`] assumption): their values are at
    /// least 0 from then on.
    pub assumed_nonneg: std::cell::RefCell<std::collections::BTreeSet<String>>,
}

/// One atomic update of buffers (`atomic_inc(&bins[k])`), as
/// `crate::reduction` decides whether its array merges as a reduction.
#[derive(Debug, Clone)]
pub(crate) struct AtomicUse {
    /// The builtin's name (`atomic_inc`, `atom_add`).
    pub name: String,
    /// The buffers (argument indices) the pointer may point into.
    pub bufs: Vec<u32>,
    /// The element type the atomic updates (the pointer's pointee).
    pub elem: Option<coarsen::ir::Scalar>,
    /// Whether the returned value is used (not the whole of an expression
    /// statement).
    pub used: bool,
    /// The source location, `file:line:col`.
    pub loc: String,
}

/// An integer member of a struct argument read as a parameter
/// ([`Walker::member_param`]).
#[derive(Debug, Clone)]
pub(crate) struct MemberParam {
    /// The isl parameter's name.
    pub name: String,
    pub arg_index: u32,
    /// Byte offset of the member in the struct.
    pub offset: u32,
    /// Size of the member in bytes.
    pub size: u32,
    pub signed: bool,
}

/// The variable an lvalue is part of: `s` of `s`, `s.m`, `v.x`, `(T)s`,
/// and of `s.a[k]` and `p[k]` too where `through_index` (an element is part
/// of a struct value's array member; a pointer's element is not part of the
/// pointer).
fn root_var(e: &Expr, through_index: bool) -> Option<&str> {
    match &e.kind {
        ExprKind::Var(n) => Some(n),
        ExprKind::Member(a, ..) | ExprKind::Swizzle(a, _) | ExprKind::Cast(a) => {
            root_var(a, through_index)
        }
        ExprKind::Index(a, _) if through_index => root_var(a, through_index),
        _ => None,
    }
}

/// The variables whose address some function of `program` takes (`&j`,
/// `&s.m`, `&v.x`: the variable at the root; not `&p[k]`, an element's
/// address, which leaves the pointer or array `p` as it is), each with its first place
/// in `kernel`, else in the first other function that takes it (by name:
/// conservative across scopes and functions).
fn escaped_names(
    program: &Program,
    kernel: &coarsen::ir::Function,
) -> HashMap<String, coarsen::ir::Span> {
    use coarsen::ir::UnOp;
    let mut out: HashMap<String, coarsen::ir::Span> = HashMap::new();
    let others = program
        .functions
        .iter()
        .filter(|f| !std::ptr::eq(*f, kernel));
    for f in std::iter::once(kernel).chain(others) {
        coarsen::ir::visit_exprs(&f.body, &mut |e: &Expr| {
            if let ExprKind::Unary(UnOp::AddrOf, a) = &e.kind {
                if let Some(n) = root_var(a, false) {
                    out.entry(n.to_string()).or_insert_with(|| e.span.clone());
                }
            }
        });
    }
    out
}

/// Whether the kernel `body` may change struct argument `name`: an
/// assignment to it or to a part of it (`p = q`, `p.m += 1`, `p.m++`), its
/// address or a part's taken (`&p`, `&p.m`), or a local of the same name
/// anywhere (conservative: no scope is reasoned about).
pub(crate) fn may_change(body: &[coarsen::ir::Stmt], name: &str) -> bool {
    use coarsen::ir::UnOp;
    let mut changed = false;
    coarsen::ir::visit_exprs(body, &mut |e: &Expr| {
        changed |= match &e.kind {
            ExprKind::Assign(_, l, _) => root_var(l, true) == Some(name),
            ExprKind::Unary(
                UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec | UnOp::AddrOf,
                a,
            ) => root_var(a, true) == Some(name),
            _ => false,
        };
    });
    changed || stmt::declares(body, name)
}

/// An integer conversion that wraps around for some launch and is modelled
/// without the wrap-around under a launch-time assumption that no
/// work-item's value leaves `[lo, hi]`: a value of the NDRange alone (`int
/// x0 = get_group_id(0) * 16`: 2^31 work-groups make it wrap), an integer
/// scalar argument converted to an unsigned type (assumed not negative), an
/// affine value of the ids, the NDRange's values and integer scalar
/// arguments (`int j = get_global_id(0) + (k + 1)`: `k` near `INT_MAX`
/// makes it wrap), or a monotone sum of products of such values
/// (`get_global_id(1) * width + get_global_id(0)` into an `int`). The renderer turns it into a condition
/// on the parameters (`Renderer::no_wrap_assumptions`), checked at every
/// launch; where it fails, every array is whole. Modelled with the
/// wrap-around (`mod 2^32` terms), such subscripts made isl's bounds take
/// seconds, or were refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NoWrap {
    /// The value, unwrapped.
    pub value: crate::poly::Poly,
    /// The range of the target type.
    pub lo: i128,
    pub hi: i128,
    /// Whether the value can exceed `hi` at all (not for a scalar argument
    /// converted to a type that holds every value of its own).
    pub above: bool,
    /// What is assumed, for messages (`'x * 16' stays within int (k.cl:3:9)`).
    pub what: String,
    /// The largest value of each loop iterator of `value` (from its
    /// loop's condition), for a monotone value's largest value.
    pub maxima: Vec<(String, crate::poly::Poly)>,
}

/// isl keywords (matched case-insensitively by isl's lexer).
pub(crate) const ISL_KEYWORDS: &[&str] = &[
    "exists", "and", "or", "implies", "not", "infty", "infinity", "nan", "min", "max", "rat",
    "true", "false", "ceild", "floord", "mod", "ceil", "floor",
];

pub(crate) fn is_isl_keyword(n: &str) -> bool {
    ISL_KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(n))
}

impl<'a> Walker<'a> {
    pub fn new(
        program: &'a Program,
        ndr: &'a Ndr,
        spec: &'a BTreeMap<String, i128>,
        taken: Vec<String>,
        kernel: &coarsen::ir::Function,
    ) -> Walker<'a> {
        Walker {
            program,
            ndr,
            spec,
            taken,
            escaped: escaped_names(program, kernel),
            scopes: Vec::new(),
            frames: Vec::new(),
            path: Vec::new(),
            exact: true,
            iters: Vec::new(),
            returns: Vec::new(),
            recs: Vec::new(),
            atomic_uses: Vec::new(),
            discarded: None,
            in_atomic: false,
            notes: Vec::new(),
            loop_notes: Vec::new(),
            buf_names: Vec::new(),
            steps: 0,
            param_bounds: HashMap::new(),
            struct_args: HashMap::new(),
            member_params: Vec::new(),
            dim_bounds: HashMap::new(),
            strided: HashMap::new(),
            var_types: HashMap::new(),
            buf_args: Vec::new(),
            buf_elem_sizes: BTreeMap::new(),
            no_wrap: Default::default(),
            assumed_nonneg: Default::default(),
        }
    }

    /// The isl parameter of `e`, a read of an integer member of a struct
    /// argument in [`Walker::struct_args`] in the kernel's own body (not in
    /// an inlined helper, not under a local of the same name): made (with
    /// the bounds of its type) on its first read. Members of a union that
    /// share bytes are one parameter only when they also share their size
    /// and signedness.
    fn member_param(&mut self, e: &Expr) -> Option<String> {
        let ExprKind::Member(base, member, Some(offset)) = &e.kind else {
            return None;
        };
        let ExprKind::Var(p) = &base.kind else {
            return None;
        };
        let &arg_index = self.struct_args.get(p)?;
        let Type::Scalar(sc) = e.ty else { return None };
        let (lo, hi, bits, signed) = domain::int_range(&e.ty)?;
        let kernel_scope = self.frames.len() == 1
            && self.scopes.iter().rposition(|s| s.contains_key(p)) == Some(0);
        if !kernel_scope || sc == coarsen::ir::Scalar::Bool {
            return None;
        }
        let size = bits / 8;
        if let Some(m) = self.member_params.iter().find(|m| {
            (m.arg_index, m.offset, m.size, m.signed) == (arg_index, *offset, size, signed)
        }) {
            return Some(m.name.clone());
        }
        let mut name: String = format!("{p}_{member}")
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        while self.taken.iter().any(|t| t.eq_ignore_ascii_case(&name)) || is_isl_keyword(&name) {
            name.push('_');
        }
        self.taken.push(name.clone());
        self.param_bounds.insert(name.clone(), (lo, hi));
        self.member_params.push(MemberParam {
            name: name.clone(),
            arg_index,
            offset: *offset,
            size,
            signed,
        });
        Some(name)
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
        let base = if is_isl_keyword(base) {
            format!("v_{base}")
        } else {
            base.to_string()
        };
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
                .map(|b| PtrTarget {
                    off: IntVal::Unknown(Why::other(why.clone())),
                    ..PtrTarget::start_of(*b)
                })
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

    /// Whether the statement budget ran out (the result is then incomplete).
    pub fn exhausted(&self) -> bool {
        self.steps > MAX_STEPS
    }
}
