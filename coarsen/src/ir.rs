//! The typed kernel IR: what `coarsen` builds from libclang's AST and what every
//! later stage reads.
//!
//! The IR is a structured AST of the OpenCL C subset clpart understands: scalar,
//! vector and pointer types with address spaces, declarations, assignments,
//! `for`/`while`/`if`, calls, work-item builtins, barriers and `__local` arrays.
//! Everything carries a [`Span`] so that diagnostics can name `file:line:col`.
//! Constructs outside the subset do not make parsing fail: they are recorded as
//! [`Diagnostic`]s of kind [`DiagKind::Unsupported`] on the function, and the
//! offending node becomes [`ExprKind::Unsupported`] / [`Stmt::Unsupported`].

use std::fmt;

/// A source position (1-based line and column) plus the byte range of the node.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Span {
    pub line: u32,
    pub col: u32,
    /// Byte offset of the first character of the node in the main file.
    pub start: u32,
    /// Byte offset one past the node's last character.
    pub end: u32,
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// OpenCL address spaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddrSpace {
    Private,
    Global,
    Constant,
    Local,
}

impl AddrSpace {
    /// The OpenCL C qualifier, e.g. `__global`.
    pub fn qualifier(self) -> &'static str {
        match self {
            AddrSpace::Private => "__private",
            AddrSpace::Global => "__global",
            AddrSpace::Constant => "__constant",
            AddrSpace::Local => "__local",
        }
    }
}

/// OpenCL scalar types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scalar {
    Bool,
    Char,
    UChar,
    Short,
    UShort,
    Int,
    UInt,
    Long,
    ULong,
    Half,
    Float,
    Double,
}

impl Scalar {
    /// Size in bytes on the device.
    pub fn size(self) -> u32 {
        match self {
            Scalar::Bool | Scalar::Char | Scalar::UChar => 1,
            Scalar::Short | Scalar::UShort | Scalar::Half => 2,
            Scalar::Int | Scalar::UInt | Scalar::Float => 4,
            Scalar::Long | Scalar::ULong | Scalar::Double => 8,
        }
    }

    /// The OpenCL spelling, e.g. `uint`.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::Char => "char",
            Scalar::UChar => "uchar",
            Scalar::Short => "short",
            Scalar::UShort => "ushort",
            Scalar::Int => "int",
            Scalar::UInt => "uint",
            Scalar::Long => "long",
            Scalar::ULong => "ulong",
            Scalar::Half => "half",
            Scalar::Float => "float",
            Scalar::Double => "double",
        }
    }

    /// Parses an OpenCL scalar spelling (`unsigned int`, `size_t`, ... included).
    pub fn from_name(name: &str) -> Option<Scalar> {
        Some(match name {
            "bool" | "_Bool" => Scalar::Bool,
            "char" | "signed char" => Scalar::Char,
            "uchar" | "unsigned char" => Scalar::UChar,
            "short" => Scalar::Short,
            "ushort" | "unsigned short" => Scalar::UShort,
            "int" => Scalar::Int,
            "uint" | "unsigned int" | "unsigned" => Scalar::UInt,
            "long" => Scalar::Long,
            "ulong" | "unsigned long" | "size_t" | "uintptr_t" => Scalar::ULong,
            "ptrdiff_t" | "intptr_t" => Scalar::Long,
            "half" => Scalar::Half,
            "float" => Scalar::Float,
            "double" => Scalar::Double,
            _ => return None,
        })
    }

    pub fn is_float(self) -> bool {
        matches!(self, Scalar::Half | Scalar::Float | Scalar::Double)
    }

    pub fn is_signed(self) -> bool {
        matches!(
            self,
            Scalar::Char | Scalar::Short | Scalar::Int | Scalar::Long
        ) || self.is_float()
    }
}

/// A type of the subset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Type {
    Void,
    Scalar(Scalar),
    /// `float4` etc.: element type and lane count (2, 3, 4, 8, 16).
    Vector(Scalar, u8),
    Pointer {
        pointee: Box<Type>,
        space: AddrSpace,
        is_const: bool,
    },
    /// A fixed-size array (e.g. a `__local float tile[16][16]`, outer dimension first).
    Array {
        elem: Box<Type>,
        len: u64,
    },
    /// A struct or union: its name, its size in OpenCL C's layout and its
    /// fields as laid out (for the element type of a `.npy` file; member
    /// accesses are not modelled by the analysis).
    Struct {
        name: String,
        size: u32,
        /// The fields in declaration order; empty where one's place is not
        /// known (a bit-field) or the type is incomplete.
        fields: Vec<StructField>,
    },
    /// A type outside the subset (images, structs, ...), with clang's spelling.
    Other(String),
}

/// A field of a [`Type::Struct`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructField {
    pub name: String,
    /// Byte offset in the struct.
    pub offset: u32,
    pub ty: Type,
}

impl Type {
    /// An image (`image2d_t`, `image1d_buffer_t`, ...) or a sampler
    /// (`sampler_t`), whatever its qualifiers: opaque objects the kernel
    /// reaches only through builtins (`read_imagef`, ...), which touch no
    /// buffer.
    pub fn is_image_or_sampler(&self) -> bool {
        match self {
            Type::Other(s) => s
                .split_whitespace()
                .last()
                .is_some_and(|t| t == "sampler_t" || (t.starts_with("image") && t.ends_with("_t"))),
            _ => false,
        }
    }

    /// Size in bytes (vectors of 3 lanes take 4 lanes of space, as in OpenCL).
    pub fn size(&self) -> Option<u32> {
        match self {
            Type::Void | Type::Other(_) => None,
            Type::Struct { size, .. } => Some(*size),
            Type::Scalar(s) => Some(s.size()),
            Type::Vector(s, n) => Some(s.size() * if *n == 3 { 4 } else { *n as u32 }),
            Type::Pointer { .. } => Some(8),
            Type::Array { elem, len } => elem.size().map(|e| e * *len as u32),
        }
    }

    /// The OpenCL spelling of the type without address space.
    pub fn name(&self) -> String {
        match self {
            Type::Void => "void".into(),
            Type::Scalar(s) => s.name().into(),
            Type::Vector(s, n) => format!("{}{}", s.name(), n),
            Type::Pointer { pointee, .. } => format!("{}*", pointee.name()),
            Type::Array { elem, len } => format!("{}[{}]", elem.name(), len),
            Type::Other(s) | Type::Struct { name: s, .. } => s.clone(),
        }
    }

    /// The element type of a pointer or array.
    pub fn pointee(&self) -> Option<&Type> {
        match self {
            Type::Pointer { pointee, .. } => Some(pointee),
            Type::Array { elem, .. } => Some(elem),
            _ => None,
        }
    }

    pub fn is_integer(&self) -> bool {
        matches!(self, Type::Scalar(s) if !s.is_float())
    }

    pub fn is_float(&self) -> bool {
        matches!(self, Type::Scalar(s) if s.is_float())
    }
}

/// Work-item builtin functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WorkItemFn {
    GlobalId,
    LocalId,
    GroupId,
    GlobalSize,
    LocalSize,
    NumGroups,
    GlobalOffset,
    WorkDim,
}

impl WorkItemFn {
    pub fn from_name(name: &str) -> Option<WorkItemFn> {
        Some(match name {
            "get_global_id" => WorkItemFn::GlobalId,
            "get_local_id" => WorkItemFn::LocalId,
            "get_group_id" => WorkItemFn::GroupId,
            "get_global_size" => WorkItemFn::GlobalSize,
            "get_local_size" => WorkItemFn::LocalSize,
            "get_num_groups" => WorkItemFn::NumGroups,
            "get_global_offset" => WorkItemFn::GlobalOffset,
            "get_work_dim" => WorkItemFn::WorkDim,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            WorkItemFn::GlobalId => "get_global_id",
            WorkItemFn::LocalId => "get_local_id",
            WorkItemFn::GroupId => "get_group_id",
            WorkItemFn::GlobalSize => "get_global_size",
            WorkItemFn::LocalSize => "get_local_size",
            WorkItemFn::NumGroups => "get_num_groups",
            WorkItemFn::GlobalOffset => "get_global_offset",
            WorkItemFn::WorkDim => "get_work_dim",
        }
    }
}

/// Binary operators (assignment operators are [`ExprKind::Assign`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitXor,
    BitOr,
    LogAnd,
    LogOr,
    Comma,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Lt => "<",
            BinOp::Gt => ">",
            BinOp::Le => "<=",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::BitAnd => "&",
            BinOp::BitXor => "^",
            BinOp::BitOr => "|",
            BinOp::LogAnd => "&&",
            BinOp::LogOr => "||",
            BinOp::Comma => ",",
        }
    }
}

/// Unary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    Plus,
    Not,
    BitNot,
    PreInc,
    PreDec,
    PostInc,
    PostDec,
    Deref,
    AddrOf,
}

/// An expression with its type and span.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Type,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    IntLit(i128),
    /// A floating literal: its value and its source spelling.
    FloatLit(f64, String),
    /// A reference to a parameter or local variable.
    Var(String),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `lhs = rhs` (op `None`) or a compound assignment `lhs op= rhs`.
    Assign(Option<BinOp>, Box<Expr>, Box<Expr>),
    /// `base[index]`.
    Index(Box<Expr>, Box<Expr>),
    /// A call to a helper function or a builtin other than the work-item ones.
    Call(String, Vec<Expr>),
    /// A work-item builtin with its dimension argument.
    WorkItem(WorkItemFn, Box<Expr>),
    /// `c ? t : e`.
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// An explicit or implicit conversion to `ty`.
    Cast(Box<Expr>),
    /// A vector component access `v.xy` / `v.s0`: the lane indices.
    Swizzle(Box<Expr>, Vec<u8>),
    /// A vector literal `(float4)(a, b, c, d)`.
    VectorLit(Vec<Expr>),
    /// A struct member `s.m` / `p->m`, and the member's byte offset in its
    /// struct where clang gives it (`None` for a bit-field).
    Member(Box<Expr>, String, Option<u32>),
    /// Something outside the subset; a diagnostic was recorded.
    Unsupported(String),
}

/// A variable declaration.
#[derive(Debug, Clone, PartialEq)]
pub struct VarDecl {
    pub name: String,
    pub ty: Type,
    /// `Local` for `__local` arrays declared in the kernel body.
    pub space: AddrSpace,
    pub init: Option<Expr>,
    pub span: Span,
}

/// A statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    Decl(VarDecl),
    Expr(Expr),
    If {
        cond: Expr,
        then: Vec<Stmt>,
        els: Option<Vec<Stmt>>,
        span: Span,
    },
    For {
        init: Option<Box<Stmt>>,
        cond: Option<Expr>,
        step: Option<Expr>,
        body: Vec<Stmt>,
        span: Span,
    },
    While {
        cond: Expr,
        body: Vec<Stmt>,
        span: Span,
    },
    Block(Vec<Stmt>),
    /// `barrier(flags)`.
    Barrier(Span),
    Return(Option<Expr>, Span),
    Break(Span),
    Continue(Span),
    /// A statement outside the subset; a diagnostic was recorded.
    Unsupported(String, Span),
}

/// A function parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    pub ty: Type,
    pub span: Span,
}

impl Param {
    /// The address space of a pointer parameter (`Private` for scalars).
    pub fn space(&self) -> AddrSpace {
        match &self.ty {
            Type::Pointer { space, .. } => *space,
            _ => AddrSpace::Private,
        }
    }
}

/// A kernel or helper function.
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub name: String,
    pub is_kernel: bool,
    pub ret: Type,
    pub params: Vec<Param>,
    pub body: Vec<Stmt>,
    pub span: Span,
    /// Where the body's compound statement starts (its `{`, unless a
    /// macro expansion gives it), as libclang says: not found by reading
    /// the text, where a `{` in a comment or an `#ifdef` would mislead.
    pub body_at: Option<u32>,
}

/// What kind of diagnostic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiagKind {
    /// A clang error.
    Error,
    /// A clang warning.
    Warning,
    /// A construct clpart does not support; the kernel is not analyzable.
    Unsupported,
}

/// A user-facing message with a location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub kind: DiagKind,
    pub file: String,
    pub span: Span,
    pub message: String,
    /// The function the diagnostic belongs to, if any.
    pub function: Option<String>,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            DiagKind::Error => "error",
            DiagKind::Warning => "warning",
            DiagKind::Unsupported => "unsupported",
        };
        write!(
            f,
            "{}:{}:{}: {}: {}",
            self.file, self.span.line, self.span.col, kind, self.message
        )
    }
}

/// A parsed OpenCL program: its functions (kernels and helpers) in source order.
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    /// The file name used in diagnostics.
    pub file: String,
    pub source: String,
    pub functions: Vec<Function>,
    pub diagnostics: Vec<Diagnostic>,
    /// The text of the file's top-level struct, union and typedef
    /// declarations of records, in order (the coarsened C repeats them).
    pub type_decls: Vec<String>,
    /// Build options the parse added to the user's so that clang accepts
    /// the file ([`crate::INT24_OPTIONS`]); every build of the
    /// file's kernels (the subkernels on the devices) takes them as well.
    pub added_options: Vec<String>,
}

impl Program {
    /// The kernels, in source order.
    pub fn kernels(&self) -> impl Iterator<Item = &Function> {
        self.functions.iter().filter(|f| f.is_kernel)
    }

    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }

    /// Unsupported-construct diagnostics of a function and of the helpers it calls.
    pub fn unsupported_in(&self, function: &str) -> Vec<&Diagnostic> {
        let mut names = called_functions(&self.functions, function);
        names.push(function.to_string());
        self.diagnostics
            .iter()
            .filter(|d| {
                d.kind == DiagKind::Unsupported
                    && d.function.as_ref().is_some_and(|f| names.contains(f))
            })
            .collect()
    }
}

/// The functions of `functions` that `from` calls, directly or through other
/// functions of the list; `from` itself is included only when it is recursive.
pub fn called_functions(functions: &[Function], from: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut stack = vec![from.to_string()];
    while let Some(n) = stack.pop() {
        if let Some(f) = functions.iter().find(|f| f.name == n) {
            for c in callees(&f.body) {
                if functions.iter().any(|g| g.name == c) && !found.contains(&c) {
                    found.push(c.clone());
                    stack.push(c);
                }
            }
        }
    }
    found
}

/// Names of all functions called in `body` (helpers and builtins).
pub fn callees(body: &[Stmt]) -> Vec<String> {
    let mut out = Vec::new();
    visit_exprs(body, &mut |e| {
        if let ExprKind::Call(name, _) = &e.kind {
            if !out.contains(name) {
                out.push(name.clone());
            }
        }
    });
    out
}

/// The variable `e` itself assigns (`=`, `op=`, `++`, `--`), through
/// conversions, if any.
pub fn assigned_var(e: &Expr) -> Option<&str> {
    fn var(x: &Expr) -> Option<&str> {
        match &x.kind {
            ExprKind::Cast(a) => var(a),
            ExprKind::Var(n) => Some(n),
            _ => None,
        }
    }
    match &e.kind {
        ExprKind::Assign(_, l, _) => var(l),
        ExprKind::Unary(UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec, a) => var(a),
        _ => None,
    }
}

/// Whether `body` assigns variable `name` anywhere ([`assigned_var`]).
pub fn assigns(body: &[Stmt], name: &str) -> bool {
    let mut found = false;
    visit_exprs(body, &mut |e| found |= assigned_var(e) == Some(name));
    found
}

/// Calls `f` on every expression (pre-order, including sub-expressions) in `body`.
pub fn visit_exprs(body: &[Stmt], f: &mut dyn FnMut(&Expr)) {
    for s in body {
        visit_stmt_exprs(s, f);
    }
}

fn visit_stmt_exprs(s: &Stmt, f: &mut dyn FnMut(&Expr)) {
    match s {
        Stmt::Decl(d) => {
            if let Some(e) = &d.init {
                visit_expr(e, f)
            }
        }
        Stmt::Expr(e) => visit_expr(e, f),
        Stmt::If {
            cond, then, els, ..
        } => {
            visit_expr(cond, f);
            visit_exprs(then, f);
            if let Some(e) = els {
                visit_exprs(e, f);
            }
        }
        Stmt::For {
            init,
            cond,
            step,
            body,
            ..
        } => {
            if let Some(i) = init {
                visit_stmt_exprs(i, f);
            }
            if let Some(c) = cond {
                visit_expr(c, f);
            }
            if let Some(s) = step {
                visit_expr(s, f);
            }
            visit_exprs(body, f);
        }
        Stmt::While { cond, body, .. } => {
            visit_expr(cond, f);
            visit_exprs(body, f);
        }
        Stmt::Block(b) => visit_exprs(b, f),
        Stmt::Return(Some(e), _) => visit_expr(e, f),
        Stmt::Barrier(_)
        | Stmt::Return(None, _)
        | Stmt::Break(_)
        | Stmt::Continue(_)
        | Stmt::Unsupported(..) => {}
    }
}

/// Calls `f` on `e` and all its sub-expressions, pre-order.
pub fn visit_expr(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Unary(_, a)
        | ExprKind::Cast(a)
        | ExprKind::Swizzle(a, _)
        | ExprKind::WorkItem(_, a)
        | ExprKind::Member(a, ..) => visit_expr(a, f),
        ExprKind::Binary(_, a, b) | ExprKind::Assign(_, a, b) | ExprKind::Index(a, b) => {
            visit_expr(a, f);
            visit_expr(b, f);
        }
        ExprKind::Cond(a, b, c) => {
            visit_expr(a, f);
            visit_expr(b, f);
            visit_expr(c, f);
        }
        ExprKind::Call(_, args) | ExprKind::VectorLit(args) => {
            for a in args {
                visit_expr(a, f);
            }
        }
        ExprKind::IntLit(_)
        | ExprKind::FloatLit(..)
        | ExprKind::Var(_)
        | ExprKind::Unsupported(_) => {}
    }
}

/// Whether `body` contains a barrier, directly or nested.
pub fn contains_barrier(body: &[Stmt]) -> bool {
    body.iter().any(stmt_contains_barrier)
}

pub fn stmt_contains_barrier(s: &Stmt) -> bool {
    match s {
        Stmt::Barrier(_) => true,
        Stmt::If { then, els, .. } => {
            contains_barrier(then) || els.as_deref().is_some_and(contains_barrier)
        }
        Stmt::For { body, .. } | Stmt::While { body, .. } | Stmt::Block(body) => {
            contains_barrier(body)
        }
        _ => false,
    }
}

impl Expr {
    /// The value of a constant integer expression (literals, casts, arithmetic).
    pub fn const_int(&self) -> Option<i128> {
        match &self.kind {
            ExprKind::IntLit(v) => Some(*v),
            ExprKind::Cast(a) if self.ty.is_integer() => a.const_int(),
            ExprKind::Unary(UnOp::Neg, a) => a.const_int().map(|v| -v),
            ExprKind::Unary(UnOp::Plus, a) => a.const_int(),
            ExprKind::Binary(op, a, b) => {
                let (a, b) = (a.const_int()?, b.const_int()?);
                Some(match op {
                    BinOp::Add => a + b,
                    BinOp::Sub => a - b,
                    BinOp::Mul => a * b,
                    BinOp::Div if b != 0 => a / b,
                    BinOp::Rem if b != 0 => a % b,
                    BinOp::Shl if (0..64).contains(&b) => a << b,
                    BinOp::Shr if (0..64).contains(&b) => a >> b,
                    _ => return None,
                })
            }
            _ => None,
        }
    }
}
