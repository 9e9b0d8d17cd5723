//! Coarsened C emission (SOpenCL style).
//!
//! A kernel becomes `void NAME(params..., const clpart_wg *__wg)` that executes
//! one work-group: the body is wrapped in loops over the local ids
//! `__lid0..__lid2` (the work-item loop). A barrier splits the work-item loop in
//! two (loop fission); control statements that contain a barrier (`for`,
//! `while`, `if` with work-group-uniform conditions, as OpenCL requires) are
//! emitted once, outside the work-item loops, and their bodies are fissioned
//! recursively. Scalars declared in one work-item region and used in another are
//! privatized into arrays indexed by the flat local id `__wi`. `__local` arrays
//! become work-group arrays declared once at the top of the function.
//!
//! The output is C11 (with GCC extensions: vector types, statement
//! expressions) and compiles against [`C_HEADER`].

use crate::ir::*;
use crate::CoarsenError;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// The small header the coarsened C includes (`clpart_coarsen.h`): the
/// work-group descriptor, OpenCL scalar and vector types, and builtins.
pub const C_HEADER: &str = include_str!("clpart_coarsen.h");

/// Emits the coarsened C of `kernel` (and of the helper functions it calls) as
/// one C translation unit that includes `clpart_coarsen.h`.
pub fn emit_c(program: &Program, kernel: &str) -> Result<String, CoarsenError> {
    emit_c_with(program, kernel, &EmitOptions::default())
}

/// Options of [`emit_c_with`].
#[derive(Debug, Clone, Default)]
pub struct EmitOptions {
    /// Wrap every subscript of a global/constant pointer in `CLPART_T(...)`,
    /// which reports the access when the C is compiled with `-DCLPART_TRACE`.
    pub trace: bool,
}

/// [`emit_c`] with options.
pub fn emit_c_with(
    program: &Program,
    kernel: &str,
    options: &EmitOptions,
) -> Result<String, CoarsenError> {
    let k = program.kernel(Some(kernel))?;
    if let Some(d) = program.unsupported_in(kernel).first() {
        return Err(unsupported(program, kernel, &d.span, &d.message));
    }
    let mut out = String::new();
    writeln!(
        out,
        "/* coarsened by clpart from {}: kernel '{}' */",
        program.file, k.name
    )
    .unwrap();
    writeln!(out, "#include \"clpart_coarsen.h\"\n").unwrap();
    // the program's struct and union types, as written
    for t in &program.type_decls {
        writeln!(out, "{t}\n").unwrap();
    }
    // Helpers the kernel reaches, in source order.
    let reach = reachable_helpers(program, kernel);
    for f in program
        .functions
        .iter()
        .filter(|f| !f.is_kernel && reach.contains(&f.name))
    {
        if contains_barrier(&f.body) {
            return Err(unsupported(
                program,
                kernel,
                &f.span,
                &format!("helper function '{}' contains a barrier", f.name),
            ));
        }
        let helpers: BTreeSet<String> = reach.clone();
        let mut e = Emitter::new(program, kernel, helpers, BTreeMap::new());
        e.trace = options.trace;
        e.helper(f)?;
        out.push_str(&e.out);
        out.push('\n');
    }
    let mut e = Emitter::new(program, kernel, reach, BTreeMap::new());
    e.trace = options.trace;
    e.kernel(k)?;
    out.push_str(&e.out);
    Ok(out)
}

fn unsupported(program: &Program, kernel: &str, span: &Span, message: &str) -> CoarsenError {
    CoarsenError::Unsupported {
        file: program.file.clone(),
        kernel: kernel.to_string(),
        line: span.line,
        col: span.col,
        message: message.to_string(),
    }
}

fn reachable_helpers(program: &Program, kernel: &str) -> BTreeSet<String> {
    called_functions(&program.functions, kernel)
        .into_iter()
        .filter(|n| program.function(n).is_some_and(|f| !f.is_kernel))
        .collect()
}

/// C spelling of a type (address spaces dropped).
fn c_type(t: &Type) -> String {
    match t {
        Type::Scalar(Scalar::Bool) => "_Bool".into(),
        Type::Pointer {
            pointee, is_const, ..
        } => {
            format!(
                "{}{} *",
                if *is_const { "const " } else { "" },
                c_type(pointee)
            )
        }
        Type::Array { elem, .. } => c_type(elem),
        _ => t.name(),
    }
}

/// `T name[d0][d1]` for arrays, `T name` otherwise.
fn c_decl(t: &Type, name: &str, extra_dims: &str) -> String {
    let mut dims = String::new();
    let mut cur = t;
    while let Type::Array { elem, len } = cur {
        write!(dims, "[{len}]").unwrap();
        cur = elem;
    }
    format!("{} {}{}{}", c_type(cur), name, extra_dims, dims)
}

const MATH1: &[&str] = &[
    "sqrt", "rsqrt", "exp", "exp2", "exp10", "log", "log2", "log10", "sin", "cos", "tan", "asin",
    "acos", "atan", "sinh", "cosh", "tanh", "fabs", "floor", "ceil", "round", "trunc", "cbrt",
    "erf", "erfc", "expm1", "log1p", "rint",
];
const MATH2: &[&str] = &[
    "pow", "fmin", "fmax", "fmod", "atan2", "hypot", "copysign", "fdim", "powr",
];
const GENERIC: &[&str] = &[
    "min",
    "max",
    "clamp",
    "abs",
    "mad",
    "fma",
    "mix",
    "sign",
    "select",
    "mul24",
    "mad24",
    "hadd",
    "rotate",
    "popcount",
    "step",
    "smoothstep",
    "degrees",
    "radians",
    "atomic_inc",
    "atomic_dec",
    "atomic_add",
    "atomic_sub",
    "atomic_xchg",
    "atomic_min",
    "atomic_max",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "atomic_cmpxchg",
    "atom_inc",
    "atom_add",
    "mem_fence",
    "read_mem_fence",
    "write_mem_fence",
    "dot",
    "length",
    "distance",
    "normalize",
    "cross",
    "isnan",
    "isinf",
    "isfinite",
];

struct Emitter<'p> {
    program: &'p Program,
    kernel: String,
    helpers: BTreeSet<String>,
    /// Privatized variables (name → its declared type).
    private: BTreeMap<String, Type>,
    /// Whether we emit work-group-uniform code (outside work-item loops).
    uniform: bool,
    /// Label that `return` jumps to inside the current work-item loop.
    return_label: Option<String>,
    n_regions: usize,
    indent: usize,
    out: String,
    in_kernel: bool,
    /// The kernel's parameters its body assigns (`A += c`): each work-item
    /// starts from the argument's value, kept under another name.
    stepped: Vec<(String, Type)>,
    trace: bool,
    /// Access mode of the subscript being emitted: 0 read, 1 write, 2 read-write.
    lvalue: u8,
}

impl<'p> Emitter<'p> {
    fn new(
        program: &'p Program,
        kernel: &str,
        helpers: BTreeSet<String>,
        private: BTreeMap<String, Type>,
    ) -> Self {
        Emitter {
            program,
            kernel: kernel.to_string(),
            helpers,
            private,
            uniform: false,
            return_label: None,
            n_regions: 0,
            indent: 0,
            out: String::new(),
            in_kernel: false,
            stepped: Vec::new(),
            trace: false,
            lvalue: 0,
        }
    }

    fn err(&self, span: &Span, message: &str) -> CoarsenError {
        unsupported(self.program, &self.kernel, span, message)
    }

    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn params(&self, f: &Function) -> String {
        f.params
            .iter()
            .map(|p| c_decl(&p.ty, &p.name, ""))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn helper(&mut self, f: &Function) -> Result<(), CoarsenError> {
        let ps = self.params(f);
        let sep = if ps.is_empty() { "" } else { ", " };
        self.line(&format!(
            "static {} {}(const clpart_wg *__wg, size_t __lid0, size_t __lid1, size_t __lid2{sep}{ps})",
            c_type(&f.ret),
            f.name
        ));
        self.line("{");
        self.indent += 1;
        self.line("(void)__wg; (void)__lid0; (void)__lid1; (void)__lid2;");
        self.stmts(&f.body)?;
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    fn kernel(&mut self, k: &Function) -> Result<(), CoarsenError> {
        self.in_kernel = true;
        self.stepped = k
            .params
            .iter()
            .filter(|p| assigns(&k.body, &p.name))
            .map(|p| (p.name.clone(), p.ty.clone()))
            .collect();
        if !self.stepped.is_empty() && contains_barrier(&k.body) {
            return Err(self.err(
                &k.span,
                "a parameter assigned in a kernel with barriers (its value per work-item across barriers)",
            ));
        }
        let ps = k
            .params
            .iter()
            .map(|p| {
                let stepped = self.stepped.iter().any(|(n, _)| *n == p.name);
                let name = if stepped {
                    format!("__clpart_param_{}", p.name)
                } else {
                    p.name.clone()
                };
                c_decl(&p.ty, &name, "")
            })
            .collect::<Vec<_>>()
            .join(", ");
        let sep = if ps.is_empty() { "" } else { ", " };
        self.line(&format!("void {}({ps}{sep}const clpart_wg *__wg)", k.name));
        self.line("{");
        self.indent += 1;
        self.line("size_t __lid0, __lid1, __lid2, __wi;");
        self.line("const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];");
        self.line("(void)__n_wi; (void)__wi;");
        // __local arrays: one per work-group.
        let mut locals = Vec::new();
        collect_local_decls(&k.body, &mut locals);
        for d in &locals {
            self.line(&format!("{};", c_decl(&d.ty, &d.name, "")));
        }
        // Privatization: variables declared in work-item code and used in more than one region.
        if contains_barrier(&k.body) {
            let mut regions = Regions::default();
            regions.seq(&k.body, false);
            for (name, ty) in regions.privatized() {
                self.line(&format!("{};", c_decl(&ty, &name, "[__n_wi]")));
                self.private.insert(name, ty);
            }
        }
        self.seq(&k.body)?;
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    /// Emits a statement list of kernel code, fissioning at barriers.
    fn seq(&mut self, body: &[Stmt]) -> Result<(), CoarsenError> {
        let mut pending: Vec<&Stmt> = Vec::new();
        for s in body {
            if !stmt_contains_barrier(s) {
                pending.push(s);
                continue;
            }
            self.region(&pending)?;
            pending.clear();
            self.uniform = true;
            match s {
                Stmt::Barrier(_) => self.line("/* barrier */"),
                Stmt::Block(b) => {
                    self.line("{");
                    self.indent += 1;
                    self.seq(b)?;
                    self.indent -= 1;
                    self.line("}");
                }
                Stmt::If {
                    cond, then, els, ..
                } => {
                    let c = self.expr(cond)?;
                    self.line(&format!("if ({}) {{ /* work-group uniform */", strip(&c)));
                    self.indent += 1;
                    self.seq(then)?;
                    self.indent -= 1;
                    if let Some(e) = els {
                        self.line("} else {");
                        self.indent += 1;
                        self.seq(e)?;
                        self.indent -= 1;
                    }
                    self.line("}");
                }
                Stmt::For {
                    init,
                    cond,
                    step,
                    body,
                    ..
                } => {
                    let i = match init.as_deref() {
                        None => String::new(),
                        Some(Stmt::Decl(d)) => self.decl_text(d)?,
                        Some(Stmt::Expr(e)) => strip(&self.expr(e)?),
                        Some(other) => {
                            return Err(self.err(&stmt_span(other), "unsupported 'for' initializer"))
                        }
                    };
                    let c = self.opt_expr(cond.as_ref())?;
                    let st = self.opt_expr(step.as_ref())?;
                    self.line(&format!("for ({i}; {c}; {st}) {{ /* work-group uniform */"));
                    self.indent += 1;
                    self.seq(body)?;
                    self.indent -= 1;
                    self.line("}");
                }
                Stmt::While { cond, body, .. } => {
                    let c = self.expr(cond)?;
                    self.line(&format!(
                        "while ({}) {{ /* work-group uniform */",
                        strip(&c)
                    ));
                    self.indent += 1;
                    self.seq(body)?;
                    self.indent -= 1;
                    self.line("}");
                }
                other => {
                    return Err(self.err(&stmt_span(other), "barrier in an unsupported position"))
                }
            }
            self.uniform = false;
        }
        self.region(&pending)
    }

    /// Emits one work-item loop around barrier-free statements.
    fn region(&mut self, stmts: &[&Stmt]) -> Result<(), CoarsenError> {
        if stmts.is_empty() {
            return Ok(());
        }
        let label = format!("__clpart_next_wi_{}", self.n_regions);
        self.n_regions += 1;
        self.line("for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)");
        self.line("for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)");
        self.line("for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {");
        self.indent += 1;
        self.line("__wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;");
        for (n, ty) in &self.stepped.clone() {
            self.line(&format!("{} = __clpart_param_{n};", c_decl(ty, n, "")));
        }
        let old = self.return_label.replace(label.clone());
        let was_uniform = std::mem::replace(&mut self.uniform, false);
        for s in stmts {
            self.stmt(s)?;
        }
        self.uniform = was_uniform;
        self.return_label = old;
        self.line(&format!("{label}: ;"));
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    fn stmts(&mut self, body: &[Stmt]) -> Result<(), CoarsenError> {
        for s in body {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn decl_text(&mut self, d: &VarDecl) -> Result<String, CoarsenError> {
        if d.space == AddrSpace::Local {
            return Ok(String::new()); // hoisted
        }
        let init = d
            .init
            .as_ref()
            .map(|e| self.init_expr(e, &d.ty))
            .transpose()?;
        if self.private.contains_key(&d.name) && !self.uniform {
            return Ok(match init {
                Some(i) => format!("{}[__wi] = {}", d.name, strip(&i)),
                None => String::new(),
            });
        }
        Ok(match init {
            Some(i) => format!("{} = {}", c_decl(&d.ty, &d.name, ""), strip(&i)),
            None => c_decl(&d.ty, &d.name, ""),
        })
    }

    /// An initializer: array initializers `{a, b}` are brace lists; a
    /// pointer initialized with an element's address (`p = &a[k]`) takes
    /// the address, which the trace does not count as an access (the
    /// accesses through `p` are traced).
    fn init_expr(&mut self, e: &Expr, ty: &Type) -> Result<String, CoarsenError> {
        if let (Type::Pointer { .. }, ExprKind::Unary(UnOp::AddrOf, x)) = (ty, &e.kind) {
            if let ExprKind::Index(b, i) = &x.kind {
                if self.trace && is_traced_ptr(&b.ty) {
                    let (b, i) = (self.expr(b)?, self.expr(i)?);
                    return Ok(format!("({b} + ({}))", strip(&i)));
                }
            }
        }
        if let (Type::Array { .. }, ExprKind::VectorLit(parts)) = (ty, &e.kind) {
            let ps = parts
                .iter()
                .map(|p| self.expr(p))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(format!("{{{}}}", ps.join(", ")));
        }
        self.expr(e)
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), CoarsenError> {
        match s {
            Stmt::Decl(d) => {
                let t = self.decl_text(d)?;
                if !t.is_empty() {
                    self.line(&format!("{t};"));
                }
            }
            Stmt::Expr(e) => {
                let t = self.expr(e)?;
                self.line(&format!("{};", strip(&t)));
            }
            Stmt::If {
                cond, then, els, ..
            } => {
                let c = self.expr(cond)?;
                self.line(&format!("if ({}) {{", strip(&c)));
                self.indent += 1;
                self.stmts(then)?;
                self.indent -= 1;
                if let Some(e) = els {
                    self.line("} else {");
                    self.indent += 1;
                    self.stmts(e)?;
                    self.indent -= 1;
                }
                self.line("}");
            }
            Stmt::For {
                init,
                cond,
                step,
                body,
                span,
            } => {
                let i = match init.as_deref() {
                    None => String::new(),
                    Some(Stmt::Decl(d)) => self.decl_text(d)?,
                    Some(Stmt::Expr(e)) => strip(&self.expr(e)?),
                    Some(_) => return Err(self.err(span, "unsupported 'for' initializer")),
                };
                let c = self.opt_expr(cond.as_ref())?;
                let st = self.opt_expr(step.as_ref())?;
                self.line(&format!("for ({i}; {c}; {st}) {{"));
                self.indent += 1;
                self.stmts(body)?;
                self.indent -= 1;
                self.line("}");
            }
            Stmt::While { cond, body, .. } => {
                let c = self.expr(cond)?;
                self.line(&format!("while ({}) {{", strip(&c)));
                self.indent += 1;
                self.stmts(body)?;
                self.indent -= 1;
                self.line("}");
            }
            Stmt::Block(b) => {
                self.line("{");
                self.indent += 1;
                self.stmts(b)?;
                self.indent -= 1;
                self.line("}");
            }
            Stmt::Barrier(span) => return Err(self.err(span, "barrier in an unsupported position")),
            Stmt::Return(e, span) => {
                if self.in_kernel {
                    if e.is_some() {
                        return Err(self.err(span, "kernel returns a value"));
                    }
                    let l = self.return_label.clone().unwrap_or_default();
                    self.line(&format!("goto {l};"));
                } else {
                    match e {
                        Some(e) => {
                            let t = self.expr(e)?;
                            self.line(&format!("return {};", strip(&t)));
                        }
                        None => self.line("return;"),
                    }
                }
            }
            Stmt::Break(_) => self.line("break;"),
            Stmt::Continue(_) => self.line("continue;"),
            Stmt::Unsupported(what, span) => {
                return Err(self.err(span, &format!("unsupported statement '{what}'")))
            }
        }
        Ok(())
    }

    fn lid(&self, d: u32) -> String {
        if self.uniform {
            "0".into()
        } else {
            format!("__lid{d}")
        }
    }

    fn work_item(&mut self, w: WorkItemFn, dim: &Expr) -> Result<String, CoarsenError> {
        let d = dim
            .const_int()
            .filter(|v| (0..3).contains(v))
            .map(|v| v as u32);
        let Some(d) = d else {
            let e = self.expr(dim)?;
            let lids = if self.uniform {
                "0, 0, 0".to_string()
            } else {
                "__lid0, __lid1, __lid2".to_string()
            };
            return Ok(format!("clpart_{}(__wg, {}, {lids})", w.name(), strip(&e)));
        };
        Ok(match w {
            WorkItemFn::GlobalId => format!(
                "(__wg->group_id[{d}] * __wg->local_size[{d}] + {} + __wg->global_offset[{d}])",
                self.lid(d)
            ),
            WorkItemFn::LocalId => self.lid(d),
            WorkItemFn::GroupId => format!("__wg->group_id[{d}]"),
            WorkItemFn::GlobalSize => format!("__wg->global_size[{d}]"),
            WorkItemFn::LocalSize => format!("__wg->local_size[{d}]"),
            WorkItemFn::NumGroups => format!("__wg->num_groups[{d}]"),
            WorkItemFn::GlobalOffset => format!("__wg->global_offset[{d}]"),
            WorkItemFn::WorkDim => "__wg->work_dim".into(),
        })
    }

    /// A `for` header's condition or step without its outer parentheses;
    /// empty when absent.
    fn opt_expr(&mut self, e: Option<&Expr>) -> Result<String, CoarsenError> {
        Ok(e.map(|e| self.expr(e))
            .transpose()?
            .map(|e| strip(&e))
            .unwrap_or_default())
    }

    fn expr(&mut self, e: &Expr) -> Result<String, CoarsenError> {
        let mode = std::mem::take(&mut self.lvalue);
        Ok(match &e.kind {
            ExprKind::IntLit(v) => {
                let unsigned = matches!(e.ty, Type::Scalar(s) if !s.is_signed());
                let long = matches!(e.ty, Type::Scalar(Scalar::Long | Scalar::ULong))
                    || *v > i32::MAX as i128;
                format!(
                    "{v}{}{}",
                    if unsigned { "u" } else { "" },
                    if long { "l" } else { "" }
                )
            }
            ExprKind::FloatLit(v, text) => {
                if matches!(e.ty, Type::Scalar(Scalar::Float)) {
                    let t = text.trim_end_matches(['f', 'F']);
                    if t.parse::<f64>().is_ok() {
                        format!("{t}f")
                    } else {
                        format!("{v:?}f")
                    }
                } else {
                    let t = text.trim_end_matches(['f', 'F']);
                    if t.parse::<f64>().is_ok() {
                        t.to_string()
                    } else {
                        format!("{v:?}")
                    }
                }
            }
            ExprKind::Var(n) => {
                if self.private.contains_key(n) {
                    if self.uniform {
                        format!("{n}[0]")
                    } else {
                        format!("{n}[__wi]")
                    }
                } else {
                    n.clone()
                }
            }
            ExprKind::Unary(op, a) => {
                if matches!(
                    op,
                    UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec | UnOp::AddrOf
                ) {
                    self.lvalue = 2;
                } else if *op == UnOp::Deref {
                    self.lvalue = mode;
                }
                let is_traced_deref = *op == UnOp::Deref && self.trace && is_traced_ptr(&a.ty);
                let a = self.expr(a)?;
                if is_traced_deref {
                    return Ok(format!("(*({a} + CLPART_T({a}, 0, {mode})))"));
                }
                match op {
                    UnOp::Neg => format!("(-{a})"),
                    UnOp::Plus => format!("(+{a})"),
                    UnOp::Not => format!("(!{a})"),
                    UnOp::BitNot => format!("(~{a})"),
                    UnOp::PreInc => format!("(++{a})"),
                    UnOp::PreDec => format!("(--{a})"),
                    UnOp::PostInc => format!("({a}++)"),
                    UnOp::PostDec => format!("({a}--)"),
                    UnOp::Deref => format!("(*{a})"),
                    UnOp::AddrOf => format!("(&{a})"),
                }
            }
            ExprKind::Binary(op, a, b) => {
                let (a, b) = (self.expr(a)?, self.expr(b)?);
                format!("({a} {} {b})", op.symbol())
            }
            ExprKind::Assign(op, a, b) => {
                if let ExprKind::Swizzle(_, lanes) = &a.kind {
                    if lanes.len() > 1 {
                        return Err(
                            self.err(&e.span, "assignment to a multi-component vector swizzle")
                        );
                    }
                }
                self.lvalue = if op.is_some() { 2 } else { 1 };
                let a = self.expr(a)?;
                let b = self.expr(b)?;
                format!("({a} {}= {b})", op.map(|o| o.symbol()).unwrap_or(""))
            }
            ExprKind::Index(a, b) => {
                let traced = self.trace && is_traced_ptr(&a.ty);
                if !traced {
                    self.lvalue = mode; // e.g. a[i][j] on arrays: the outer subscript is the access
                }
                let (a, b) = (self.expr(a)?, self.expr(b)?);
                if traced {
                    format!("{a}[CLPART_T({a}, {}, {mode})]", strip(&b))
                } else {
                    format!("{a}[{}]", strip(&b))
                }
            }
            ExprKind::Cond(a, b, c) => {
                let (a, b, c) = (self.expr(a)?, self.expr(b)?, self.expr(c)?);
                format!("({a} ? {b} : {c})")
            }
            ExprKind::WorkItem(w, d) => self.work_item(*w, d)?,
            ExprKind::Cast(a) => {
                let inner = self.expr(a)?;
                match (&e.ty, &a.ty) {
                    (Type::Vector(_, n), Type::Scalar(_)) => {
                        let lanes = vec!["__s"; if *n == 3 { 4 } else { *n as usize }].join(", ");
                        format!(
                            "({{ {} __s = {}; ({}){{{lanes}}}; }})",
                            c_type(&vector_elem(&e.ty)),
                            inner,
                            c_type(&e.ty)
                        )
                    }
                    // integer to pointer (an implicit conversion is an
                    // error), or a pointer (or an array, decayed) to
                    // elements of another type (see `parse::element_cast`):
                    // C needs the cast
                    (Type::Pointer { pointee: to, .. }, t)
                        if t.is_integer()
                            || matches!(t, Type::Pointer { pointee: from, .. } | Type::Array { elem: from, .. } if from != to) =>
                    {
                        format!("(({}){})", c_type(&e.ty), inner)
                    }
                    (Type::Pointer { .. }, _) | (Type::Other(_) | Type::Struct { .. }, _) => inner,
                    _ => format!("(({}){})", c_type(&e.ty), inner),
                }
            }
            ExprKind::Swizzle(a, lanes) => {
                self.lvalue = mode;
                let base = self.expr(a)?;
                if lanes.len() == 1 {
                    format!("{base}[{}]", lanes[0])
                } else {
                    let parts: Vec<String> = lanes.iter().map(|l| format!("__v[{l}]")).collect();
                    format!(
                        "({{ {} __v = {base}; ({}){{{}}}; }})",
                        c_type(&a.ty),
                        c_type(&e.ty),
                        parts.join(", ")
                    )
                }
            }
            ExprKind::VectorLit(parts) => {
                let mut lanes = Vec::new();
                for p in parts {
                    let t = self.expr(p)?;
                    match &p.ty {
                        Type::Vector(_, n) => {
                            for i in 0..*n {
                                lanes.push(format!("({t})[{i}]"));
                            }
                        }
                        _ => lanes.push(t),
                    }
                }
                if let Type::Vector(_, n) = e.ty {
                    if lanes.len() == 1 && n > 1 {
                        let l = lanes[0].clone();
                        lanes = vec![l; n as usize];
                    }
                }
                format!("(({}){{{}}})", c_type(&e.ty), lanes.join(", "))
            }
            ExprKind::Call(name, args) => self.call(e, name, args)?,
            ExprKind::Unsupported(m) => return Err(self.err(&e.span, m)),
            ExprKind::Member(a, m, _) => {
                // the access is the element's (`p[i]` of `p[i].m`)
                self.lvalue = mode;
                let base = self.expr(a)?;
                if matches!(a.ty, Type::Pointer { .. }) {
                    format!("({base})->{m}")
                } else {
                    format!("({base}).{m}")
                }
            }
        })
    }

    fn call(&mut self, e: &Expr, name: &str, args: &[Expr]) -> Result<String, CoarsenError> {
        let mut a = Vec::new();
        for x in args {
            a.push(strip(&self.expr(x)?));
        }
        if self.helpers.contains(name) {
            let lids = if self.uniform {
                "0, 0, 0"
            } else {
                "__lid0, __lid1, __lid2"
            };
            let sep = if a.is_empty() { "" } else { ", " };
            return Ok(format!("{name}(__wg, {lids}{sep}{})", a.join(", ")));
        }
        let base = name
            .strip_prefix("native_")
            .or_else(|| name.strip_prefix("half_"))
            .unwrap_or(name);
        let is_float = |t: &Type| {
            matches!(
                t,
                Type::Scalar(Scalar::Float) | Type::Vector(Scalar::Float, _)
            )
        };
        if MATH1.contains(&base) || MATH2.contains(&base) {
            if !matches!(e.ty, Type::Scalar(_)) {
                return Err(self.err(
                    &e.span,
                    &format!("vector math builtin '{name}' is not supported"),
                ));
            }
            let suffix = if is_float(&e.ty) { "f" } else { "" };
            let fname = match base {
                "rsqrt" => format!("clpart_rsqrt{suffix}"),
                "exp10" => format!("clpart_exp10{suffix}"),
                "powr" => format!("pow{suffix}"),
                _ => format!("{base}{suffix}"),
            };
            return Ok(format!("{fname}({})", a.join(", ")));
        }
        if GENERIC.contains(&base) {
            return Ok(format!("clpart_{base}({})", a.join(", ")));
        }
        if let Some(n) = name.strip_prefix("vload") {
            if let Ok(n) = n.parse::<u32>() {
                return Ok(format!(
                    "CLPART_VLOAD({}, {n}, {})",
                    c_type(&e.ty),
                    a.join(", ")
                ));
            }
        }
        if let Some(n) = name.strip_prefix("vstore") {
            if let Ok(n) = n.parse::<u32>() {
                return Ok(format!("CLPART_VSTORE({n}, {})", a.join(", ")));
            }
        }
        if let Some(t) = name.strip_prefix("convert_") {
            if Scalar::from_name(t).is_some() && a.len() == 1 {
                return Ok(format!("(({}){})", t, a[0]));
            }
            if let Type::Vector(..) = e.ty {
                if !t.contains('_') {
                    return Ok(format!(
                        "__builtin_convertvector({}, {})",
                        a[0],
                        c_type(&e.ty)
                    ));
                }
            }
        }
        if let Some(t) = name.strip_prefix("as_") {
            if a.len() == 1 {
                return Ok(format!("CLPART_AS({t}, {})", a[0]));
            }
        }
        Err(self.err(
            &e.span,
            &format!("builtin '{name}' is not supported by the coarsener"),
        ))
    }
}

/// Whether accesses through a value of type `t` are traced: global/constant pointers.
fn is_traced_ptr(t: &Type) -> bool {
    matches!(
        t,
        Type::Pointer {
            space: AddrSpace::Global | AddrSpace::Constant,
            ..
        }
    )
}

fn vector_elem(t: &Type) -> Type {
    match t {
        Type::Vector(s, _) => Type::Scalar(*s),
        other => other.clone(),
    }
}

/// Removes one pair of outer parentheses if they enclose the whole string.
fn strip(s: &str) -> String {
    let b = s.as_bytes();
    // a statement expression `({ ... })` keeps its parentheses: without
    // them it is a brace list
    if s.starts_with("({") {
        return s.to_string();
    }
    if b.len() >= 2 && b[0] == b'(' && b[b.len() - 1] == b')' {
        let mut depth = 0;
        for (i, c) in b.iter().enumerate() {
            match c {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 && i != b.len() - 1 {
                        return s.to_string();
                    }
                }
                _ => {}
            }
        }
        return s[1..s.len() - 1].to_string();
    }
    s.to_string()
}

fn stmt_span(s: &Stmt) -> Span {
    match s {
        Stmt::Decl(d) => d.span.clone(),
        Stmt::Expr(e) => e.span.clone(),
        Stmt::If { span, .. } | Stmt::For { span, .. } | Stmt::While { span, .. } => span.clone(),
        Stmt::Barrier(s)
        | Stmt::Return(_, s)
        | Stmt::Break(s)
        | Stmt::Continue(s)
        | Stmt::Unsupported(_, s) => s.clone(),
        Stmt::Block(b) => b.first().map(stmt_span).unwrap_or_default(),
    }
}

fn collect_local_decls(body: &[Stmt], out: &mut Vec<VarDecl>) {
    for s in body {
        match s {
            Stmt::Decl(d) if d.space == AddrSpace::Local => out.push(d.clone()),
            Stmt::If { then, els, .. } => {
                collect_local_decls(then, out);
                if let Some(e) = els {
                    collect_local_decls(e, out);
                }
            }
            Stmt::For { init, body, .. } => {
                if let Some(i) = init {
                    collect_local_decls(std::slice::from_ref(i), out);
                }
                collect_local_decls(body, out);
            }
            Stmt::While { body, .. } | Stmt::Block(body) => collect_local_decls(body, out),
            _ => {}
        }
    }
}

/// Which work-item region each private variable is declared and used in.
#[derive(Default)]
struct Regions {
    n: usize,
    decls: BTreeMap<String, Type>,
    uniform_decls: BTreeSet<String>,
    uses: BTreeMap<String, BTreeSet<usize>>,
}

impl Regions {
    fn seq(&mut self, body: &[Stmt], _uniform: bool) {
        let mut open = false;
        for s in body {
            if !stmt_contains_barrier(s) {
                if !open {
                    self.n += 1;
                    open = true;
                }
                self.record(s, self.n);
                continue;
            }
            open = false;
            match s {
                Stmt::Block(b) => self.seq(b, true),
                Stmt::If {
                    cond, then, els, ..
                } => {
                    self.uses_in_expr(cond, 0);
                    self.seq(then, true);
                    if let Some(e) = els {
                        self.seq(e, true);
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
                        if let Stmt::Decl(d) = i.as_ref() {
                            self.uniform_decls.insert(d.name.clone());
                        }
                        self.record(i, 0);
                    }
                    if let Some(c) = cond {
                        self.uses_in_expr(c, 0);
                    }
                    if let Some(c) = step {
                        self.uses_in_expr(c, 0);
                    }
                    self.seq(body, true);
                }
                Stmt::While { cond, body, .. } => {
                    self.uses_in_expr(cond, 0);
                    self.seq(body, true);
                }
                _ => {}
            }
        }
    }

    fn uses_in_expr(&mut self, e: &Expr, region: usize) {
        visit_expr(e, &mut |x| {
            if let ExprKind::Var(n) = &x.kind {
                self.uses.entry(n.clone()).or_default().insert(region);
            }
        });
    }

    fn record(&mut self, s: &Stmt, region: usize) {
        let mut decls = Vec::new();
        collect_decls(std::slice::from_ref(s), &mut decls);
        for d in decls {
            if d.space != AddrSpace::Local && region != 0 {
                self.decls.insert(d.name.clone(), d.ty.clone());
                self.uses.entry(d.name.clone()).or_default().insert(region);
            }
        }
        visit_exprs(std::slice::from_ref(s), &mut |x| {
            if let ExprKind::Var(n) = &x.kind {
                self.uses.entry(n.clone()).or_default().insert(region);
            }
        });
    }

    fn privatized(&self) -> Vec<(String, Type)> {
        self.decls
            .iter()
            .filter(|(n, _)| {
                !self.uniform_decls.contains(*n) && self.uses.get(*n).is_some_and(|r| r.len() > 1)
            })
            .map(|(n, t)| (n.clone(), t.clone()))
            .collect()
    }
}

fn collect_decls(body: &[Stmt], out: &mut Vec<VarDecl>) {
    for s in body {
        match s {
            Stmt::Decl(d) => out.push(d.clone()),
            Stmt::If { then, els, .. } => {
                collect_decls(then, out);
                if let Some(e) = els {
                    collect_decls(e, out);
                }
            }
            Stmt::For { init, body, .. } => {
                if let Some(i) = init {
                    collect_decls(std::slice::from_ref(i), out);
                }
                collect_decls(body, out);
            }
            Stmt::While { body, .. } | Stmt::Block(body) => collect_decls(body, out),
            _ => {}
        }
    }
}
