//! From libclang's AST to the kernel IR ([`crate::ir`]).
//!
//! Clang errors fail the parse; constructs outside the subset become
//! diagnostics of kind `Unsupported` on the function, with their location,
//! and the parse still succeeds. Every node keeps its byte span, which the
//! subkernel rewrite later edits by; a function's body is found where
//! libclang says its compound statement starts (`Function::body_at`), not
//! at the first `{` of the text.
//!
//! Some constructs are lowered as they are read, so that later stages see
//! fewer forms: `do B while (c);` becomes `while (1) { B if (!c) break; }`,
//! and a `switch` with no case falling through becomes a block that holds
//! the condition in a temporary (`clpart_switch_N`) and an `if`/`else if`
//! chain over the cases (otherwise it is unsupported). A subscript puts its
//! pointer first whatever the order (`i[a]` is `a[i]`).
//!
//! A struct passed by value is a parameter like a scalar (`Type::Struct`,
//! with its size in OpenCL C's layout); a member expression
//! (`ExprKind::Member`) carries the member's byte offset from libclang, none
//! for a bit-field, so that the analysis can read an integer member as a
//! parameter and the launcher its value from the argument's bytes. Casts
//! between global pointers are accepted when the pointee sizes divide each
//! other (`element_cast`). When clang finds `mul24`/`mad24` ambiguous, the
//! file is parsed again with both as macros (see [`parse_program`]).
#![allow(non_upper_case_globals)]

use crate::clang::{ClangType, Cursor, EvalValue, TranslationUnit};
use crate::ir::*;
use crate::spans::{expr_span, span_of};
use crate::{CoarsenError, ParseOptions};
use clang_sys::*;

/// Parses OpenCL C source into a [`Program`].
///
/// Clang errors fail the parse (the first one is returned with its location);
/// clang warnings and unsupported constructs are recorded as diagnostics.
///
/// `mul24`/`mad24` are declared for 32-bit integers only, so clang calls
/// them ambiguous on `size_t` (`mul24(get_group_id(0), get_local_size(0))`,
/// which other vendors' compilers accept). A file that fails on that alone
/// is parsed again with both defined as the plain arithmetic they stand for
/// ([`INT24_OPTIONS`]: equal wherever `mul24` is defined, on operands of 24
/// bits); the options are kept in [`Program::added_options`], and the
/// device builds of its subkernels get them too.
pub fn parse_program(
    file: &str,
    source: &str,
    options: &ParseOptions,
) -> Result<Program, CoarsenError> {
    match parse_with(file, source, options, &[]) {
        Err(CoarsenError::Clang { message, .. })
            if INT24_BUILTINS
                .iter()
                .any(|f| message == format!("call to '{f}' is ambiguous")) =>
        {
            let added: Vec<String> = INT24_OPTIONS.iter().map(|o| o.to_string()).collect();
            parse_with(file, source, options, &added)
        }
        r => r,
    }
}

/// The builtins [`parse_program`] defines as macros where clang finds their
/// calls ambiguous.
const INT24_BUILTINS: [&str; 2] = ["mul24", "mad24"];

/// `mul24` and `mad24` as macros (see [`parse_program`]), as clang and
/// OpenCL build options (no spaces: drivers split options on them).
pub const INT24_OPTIONS: [&str; 2] = ["-Dmul24(a,b)=((a)*(b))", "-Dmad24(a,b,c)=((a)*(b)+(c))"];

/// libclang's arguments for a program: OpenCL C 1.2 with its default
/// header, then the user's options, then `added`.
pub(crate) fn clang_args(options: &ParseOptions, added: &[String]) -> Vec<String> {
    let mut args: Vec<String> = [
        "-x",
        "cl",
        "-cl-std=CL1.2",
        "-Xclang",
        "-finclude-default-header",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(options.clang_args.iter().cloned());
    args.extend(added.iter().cloned());
    args
}

/// [`parse_program`] with the clang options `added` after the user's.
fn parse_with(
    file: &str,
    source: &str,
    options: &ParseOptions,
    added: &[String],
) -> Result<Program, CoarsenError> {
    if source.trim().is_empty() {
        return Err(CoarsenError::Empty {
            file: file.to_string(),
        });
    }
    let tu = TranslationUnit::parse(file, source, &clang_args(options, added)).map_err(|f| CoarsenError::Clang {
        file: file.to_string(),
        line: 0,
        col: 0,
        message: match f {
            crate::clang::ParseFailure::NoLibclang(why) => {
                format!("libclang could not be loaded ({why}); install libclang (Debian: libclang-19-dev) or set LIBCLANG_PATH to its folder")
            }
            crate::clang::ParseFailure::Failed => "libclang could not parse the file".into(),
        },
    })?;
    let mut diagnostics = Vec::new();
    for d in tu.diagnostics() {
        let dfile = if d.file.is_empty() {
            file.to_string()
        } else {
            d.file.clone()
        };
        if d.is_error {
            return Err(CoarsenError::Clang {
                file: dfile,
                line: d.line,
                col: d.col,
                message: d.message,
            });
        }
        if d.is_warning {
            diagnostics.push(Diagnostic {
                kind: DiagKind::Warning,
                file: dfile,
                span: Span {
                    line: d.line,
                    col: d.col,
                    start: 0,
                    end: 0,
                },
                message: d.message,
                function: None,
            });
        }
    }
    let mut cx = Cx {
        source,
        file: file.to_string(),
        diags: diagnostics,
        function: String::new(),
        switches: 0,
    };
    let mut functions = Vec::new();
    let mut type_decls = Vec::new();
    for c in tu.root().children() {
        let e = c.extent();
        if !e.in_main_file {
            continue;
        }
        match c.kind() {
            CXCursor_FunctionDecl if c.is_definition() => functions.push(cx.function(&c)),
            CXCursor_StructDecl | CXCursor_UnionDecl | CXCursor_TypedefDecl => {
                let is_record = c.kind() != CXCursor_TypedefDecl
                    || matches!(c.ty().canonical().kind(), CXType_Record);
                if let (true, Some(text)) =
                    (is_record, source.get(e.start as usize..e.end as usize))
                {
                    // a typedef's extent includes its struct; the struct's
                    // own cursor then repeats it: keep the outer one
                    if !type_decls.iter().any(|t: &String| t.contains(text)) {
                        type_decls.retain(|t: &String| !text.contains(t.trim_end_matches(';')));
                        type_decls.push(format!("{text};"));
                    }
                }
            }
            _ => {}
        }
    }
    // Recursion is outside the subset.
    for f in &functions {
        if called_functions(&functions, &f.name).contains(&f.name) {
            cx.function = f.name.clone();
            cx.unsupported(&f.span, format!("function '{}' is recursive", f.name));
        }
    }
    Ok(Program {
        file: file.to_string(),
        source: source.to_string(),
        functions,
        diagnostics: cx.diags,
        type_decls,
        added_options: added.to_vec(),
    })
}

struct Cx<'s> {
    /// The main file's text.
    source: &'s str,
    file: String,
    diags: Vec<Diagnostic>,
    function: String,
    /// `switch` statements lowered so far (names their temporaries).
    switches: u32,
}

/// Address space named in a type spelling such as `const __global float`.
fn space_of_spelling(s: &str) -> AddrSpace {
    for w in s.split(|c: char| !c.is_alphanumeric() && c != '_') {
        match w {
            "__global" | "global" => return AddrSpace::Global,
            "__constant" | "constant" => return AddrSpace::Constant,
            "__local" | "local" => return AddrSpace::Local,
            _ => {}
        }
    }
    AddrSpace::Private
}

fn scalar_of_kind(k: CXTypeKind) -> Option<Scalar> {
    Some(match k {
        CXType_Bool => Scalar::Bool,
        CXType_Char_S | CXType_SChar => Scalar::Char,
        CXType_Char_U | CXType_UChar => Scalar::UChar,
        CXType_Short => Scalar::Short,
        CXType_UShort => Scalar::UShort,
        CXType_Int => Scalar::Int,
        CXType_UInt => Scalar::UInt,
        CXType_Long | CXType_LongLong => Scalar::Long,
        CXType_ULong | CXType_ULongLong => Scalar::ULong,
        CXType_Half | CXType_Float16 => Scalar::Half,
        CXType_Float => Scalar::Float,
        CXType_Double => Scalar::Double,
        _ => return None,
    })
}

/// Converts a clang type to the IR's.
/// A type spelling without address-space and cv qualifiers.
fn unqualified(spelling: &str) -> String {
    let mut s = spelling.trim();
    loop {
        let before = s;
        for q in [
            "__global ",
            "global ",
            "__constant ",
            "constant ",
            "__local ",
            "local ",
            "__private ",
            "private ",
            "const ",
            "volatile ",
        ] {
            s = s.strip_prefix(q).unwrap_or(s).trim_start();
        }
        if s == before {
            return s.to_string();
        }
    }
}

pub(crate) fn convert_type(t: ClangType) -> Type {
    let spelling = t.spelling();
    let c = t.canonical();
    if let Some(s) = scalar_of_kind(c.kind()) {
        return Type::Scalar(s);
    }
    match c.kind() {
        CXType_Void => Type::Void,
        CXType_Vector | CXType_ExtVector => match scalar_of_kind(c.element().canonical().kind()) {
            Some(s) => Type::Vector(s, c.num_elements() as u8),
            None => Type::Other(spelling),
        },
        CXType_Pointer => {
            let p = t.pointee();
            Type::Pointer {
                pointee: Box::new(convert_type(p)),
                space: space_of_spelling(&p.spelling()),
                is_const: p.is_const(),
            }
        }
        CXType_ConstantArray => Type::Array {
            elem: Box::new(convert_type(c.element())),
            len: c.num_elements().max(0) as u64,
        },
        CXType_Record => match c.size_of().and_then(|s| u32::try_from(s).ok()) {
            Some(size) => Type::Struct {
                name: unqualified(&spelling),
                size,
                fields: struct_fields(c),
            },
            None => Type::Other(spelling),
        },
        _ => Type::Other(spelling),
    }
}

/// A record's fields as laid out, or none when one has no byte offset (a
/// bit-field): the layout is then not one a `.npy` dtype can say.
fn struct_fields(record: ClangType) -> Vec<crate::ir::StructField> {
    let mut out = Vec::new();
    for (name, offset, ty) in record.fields() {
        let Some(offset) = offset else {
            return Vec::new();
        };
        // a pointer field is its bytes (and a struct may point to its own
        // type: its pointee is never followed)
        let ty = if ty.canonical().kind() == CXType_Pointer {
            Type::Other(ty.spelling())
        } else {
            convert_type(ty)
        };
        out.push(crate::ir::StructField { name, offset, ty });
    }
    out
}

fn is_expr_kind(k: CXCursorKind) -> bool {
    unsafe { clang_isExpression(k) != 0 }
}

/// A `continue` in `body` that belongs to the enclosing loop (not to a loop
/// nested in it).
fn has_own_continue(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Continue(_) => true,
        Stmt::If { then, els, .. } => {
            has_own_continue(then) || els.as_deref().is_some_and(has_own_continue)
        }
        Stmt::Block(b) => has_own_continue(b),
        _ => false,
    })
}

/// Whether a case's statements end in `break` (taken off: the case ends
/// there anyway) or `return`, also as the last statement of a final block
/// (`case 1: { ...; break; }`).
fn ends_case(stmts: &mut Vec<Stmt>) -> bool {
    match stmts.last_mut() {
        Some(Stmt::Break(_)) => {
            stmts.pop();
            true
        }
        // `continue` leaves the switch for the enclosing loop's next
        // iteration, as it does from the `if` chain it becomes
        Some(Stmt::Return(..) | Stmt::Continue(_)) => true,
        Some(Stmt::Block(inner)) => ends_case(inner),
        _ => false,
    }
}

/// Whether `body` has a `break` of its own: one not inside a loop of its
/// own (in a `switch` lowered to `if`s it would leave the enclosing loop).
fn has_own_break(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Break(_) => true,
        Stmt::If { then, els, .. } => {
            has_own_break(then) || els.as_deref().is_some_and(has_own_break)
        }
        Stmt::Block(b) => has_own_break(b),
        _ => false,
    })
}

fn is_stmt_kind(k: CXCursorKind) -> bool {
    unsafe { clang_isStatement(k) != 0 }
}

/// An unexposed statement that is a loop with a hint in front
/// (`#pragma unroll [N]`, `__attribute__((opencl_unroll_hint))`): one child
/// statement, a loop, and the hint's tokens before it.
fn is_loop_hint(c: &Cursor) -> bool {
    let ch = c.children();
    let stmts: Vec<_> = ch.iter().filter(|x| is_stmt_kind(x.kind())).collect();
    if stmts.len() != 1
        || !matches!(
            stmts[0].kind(),
            CXCursor_ForStmt | CXCursor_WhileStmt | CXCursor_DoStmt
        )
    {
        return false;
    }
    let toks = c.tokens();
    let head: Vec<&str> = toks
        .iter()
        .take_while(|t| !matches!(t.as_str(), "for" | "while" | "do"))
        .map(String::as_str)
        .collect();
    head.is_empty()
        || head
            .iter()
            .any(|t| *t == "unroll" || *t == "opencl_unroll_hint" || *t == "nounroll")
}

impl Cx<'_> {
    fn unsupported(&mut self, span: &Span, message: String) {
        self.diags.push(Diagnostic {
            kind: DiagKind::Unsupported,
            file: self.file.clone(),
            span: span.clone(),
            message,
            function: Some(self.function.clone()),
        });
    }

    fn function(&mut self, c: &Cursor) -> Function {
        let name = c.spelling();
        self.function = name.clone();
        let span = span_of(c);
        let toks = c.tokens();
        let name_pos = toks.iter().position(|t| *t == name).unwrap_or(0);
        let is_kernel = toks[..name_pos]
            .iter()
            .any(|t| t == "__kernel" || t == "kernel");
        let mut params = Vec::new();
        let mut body = Vec::new();
        let mut body_at = None;
        for ch in c.children() {
            match ch.kind() {
                CXCursor_ParmDecl => {
                    let ty = convert_type(ch.ty());
                    let pspan = span_of(&ch);
                    // images and samplers are parameters of their own kind:
                    // such a kernel is analyzed and runs unsplit
                    if let (Type::Other(s), false) = (&ty, ty.is_image_or_sampler()) {
                        self.unsupported(
                            &pspan,
                            format!("parameter '{}' has unsupported type '{}'", ch.spelling(), s),
                        );
                    }
                    params.push(Param {
                        name: ch.spelling(),
                        ty,
                        span: pspan,
                    });
                }
                CXCursor_CompoundStmt => {
                    body_at = Some(span_of(&ch).start);
                    body = self.block(&ch);
                }
                _ => {}
            }
        }
        Function {
            name,
            is_kernel,
            ret: convert_type(c.result_type()),
            params,
            body,
            span,
            body_at,
        }
    }

    fn block(&mut self, c: &Cursor) -> Vec<Stmt> {
        let mut out = Vec::new();
        for ch in c.children() {
            self.stmt_into(&ch, &mut out);
        }
        out
    }

    /// Converts a statement; declarations of several variables expand to several statements.
    fn stmt_into(&mut self, c: &Cursor, out: &mut Vec<Stmt>) {
        let span = span_of(c);
        match c.kind() {
            CXCursor_CompoundStmt => out.push(Stmt::Block(self.block(c))),
            CXCursor_DeclStmt => {
                for d in c.children() {
                    if d.kind() == CXCursor_VarDecl {
                        out.push(Stmt::Decl(self.var_decl(&d)));
                    }
                }
            }
            CXCursor_NullStmt => {}
            CXCursor_IfStmt => {
                let ch = c.children();
                if ch.len() < 2 {
                    self.unsupported(&span, "malformed 'if' statement".into());
                    out.push(Stmt::Unsupported("if".into(), span));
                    return;
                }
                let cond = self.expr(&ch[0]);
                let then = self.stmt_list(&ch[1]);
                let els = ch.get(2).map(|e| self.stmt_list(e));
                out.push(Stmt::If {
                    cond,
                    then,
                    els,
                    span,
                });
            }
            CXCursor_ForStmt => out.push(self.for_stmt(c, span)),
            CXCursor_WhileStmt => {
                let ch = c.children();
                if ch.len() != 2 {
                    self.unsupported(
                        &span,
                        "'while' with a declaration in its condition is not supported".into(),
                    );
                    out.push(Stmt::Unsupported("while".into(), span));
                    return;
                }
                let cond = self.expr(&ch[0]);
                let body = self.stmt_list(&ch[1]);
                out.push(Stmt::While { cond, body, span });
            }
            CXCursor_ReturnStmt => {
                let ch = c.children();
                out.push(Stmt::Return(ch.first().map(|e| self.expr(e)), span));
            }
            CXCursor_BreakStmt => out.push(Stmt::Break(span)),
            CXCursor_ContinueStmt => out.push(Stmt::Continue(span)),
            CXCursor_GotoStmt | CXCursor_LabelStmt | CXCursor_IndirectGotoStmt => {
                self.unsupported(&span, "'goto' and labels are not supported".into());
                out.push(Stmt::Unsupported("goto".into(), span));
            }
            CXCursor_SwitchStmt => match self.switch_stmt(c, &span) {
                Ok(stmt) => out.push(stmt),
                Err(why) => {
                    self.unsupported(&span, format!("'switch' {why} is not supported"));
                    out.push(Stmt::Unsupported("switch".into(), span));
                }
            },
            CXCursor_DoStmt => {
                // `do B while (c);` is `while (1) { B if (!c) break; }` when B
                // has no `continue` of its own (which would skip the test)
                let ch = c.children();
                let (Some(b), Some(cond)) = (ch.first(), ch.get(1)) else {
                    self.unsupported(&span, "malformed 'do ... while'".into());
                    out.push(Stmt::Unsupported("do".into(), span));
                    return;
                };
                let mut body = self.stmt_list(b);
                if has_own_continue(&body) {
                    self.unsupported(
                        &span,
                        "'do ... while' with 'continue' is not supported".into(),
                    );
                    out.push(Stmt::Unsupported("do".into(), span));
                    return;
                }
                let cond = self.expr(cond);
                let int = Type::Scalar(Scalar::Int);
                let not = Expr {
                    kind: ExprKind::Unary(UnOp::Not, Box::new(cond.clone())),
                    ty: int.clone(),
                    span: cond.span.clone(),
                };
                body.push(Stmt::If {
                    cond: not,
                    then: vec![Stmt::Break(cond.span.clone())],
                    els: None,
                    span: cond.span.clone(),
                });
                let one = Expr {
                    kind: ExprKind::IntLit(1),
                    ty: int,
                    span: span.clone(),
                };
                out.push(Stmt::While {
                    cond: one,
                    body,
                    span,
                });
            }
            // `#pragma unroll` / `__attribute__((opencl_unroll_hint))`: an
            // attributed statement (unexposed by libclang) around the loop;
            // the hint does not change what the loop does.
            CXCursor_UnexposedStmt if is_loop_hint(c) => {
                let inner: Vec<_> = c
                    .children()
                    .into_iter()
                    .filter(|x| is_stmt_kind(x.kind()))
                    .collect();
                self.stmt_into(&inner[0], out);
            }
            k if is_expr_kind(k) => {
                let e = self.expr(c);
                match &e.kind {
                    ExprKind::Call(name, _)
                        if name == "barrier" || name == "work_group_barrier" =>
                    {
                        out.push(Stmt::Barrier(span))
                    }
                    _ => out.push(Stmt::Expr(e)),
                }
            }
            _ => {
                let what = c.kind_name();
                self.unsupported(&span, format!("statement '{}' is not supported", what));
                out.push(Stmt::Unsupported(what, span));
            }
        }
    }

    /// `switch (c) { case ...: ... break; ... default: ... }` as a block:
    /// the condition's value in a temporary, then an `if`/`else if` chain
    /// over the cases, the `default` case (if any) last. This is the
    /// statement's meaning when no case falls through into the next, which
    /// is what is accepted: every case but the last ends in `break`,
    /// `continue` or `return`, no other `break` leaves the switch, and no declaration
    /// stands directly in a case (its scope would be the whole switch).
    /// Otherwise the reason, for the diagnostic.
    fn switch_stmt(&mut self, c: &Cursor, span: &Span) -> Result<Stmt, &'static str> {
        let ch = c.children();
        let [cond, body] = ch.as_slice() else {
            return Err("with a declaration in its condition");
        };
        let cond = self.expr(cond);
        let items = if body.kind() == CXCursor_CompoundStmt {
            body.children()
        } else {
            vec![*body]
        };
        // Per case: its labels (`None`: default) and statements.
        let mut cases: Vec<(Vec<Option<Expr>>, Vec<Stmt>)> = Vec::new();
        for item in &items {
            let mut cur = *item;
            let mut labels = Vec::new();
            loop {
                let cc = cur.children();
                match (cur.kind(), cc.as_slice()) {
                    (CXCursor_CaseStmt, [value, sub]) => {
                        labels.push(Some(self.expr(value)));
                        cur = *sub;
                    }
                    (CXCursor_CaseStmt, _) => return Err("with a case range"),
                    (CXCursor_DefaultStmt, [sub]) => {
                        labels.push(None);
                        cur = *sub;
                    }
                    _ => break,
                }
            }
            if !labels.is_empty() {
                cases.push((labels, Vec::new()));
            }
            let Some((_, stmts)) = cases.last_mut() else {
                return Err("with statements before its first case");
            };
            self.stmt_into(&cur, stmts);
        }
        let n = cases.len();
        let mut default = None;
        let mut chain: Vec<(Expr, Vec<Stmt>)> = Vec::new();
        for (k, (labels, mut stmts)) in cases.into_iter().enumerate() {
            if !ends_case(&mut stmts) && k + 1 < n {
                return Err("with a case that falls through into the next");
            }
            if stmts.iter().any(|s| matches!(s, Stmt::Decl(_))) {
                return Err("with a declaration directly in a case (put the case in braces)");
            }
            if has_own_break(&stmts) {
                return Err("with a 'break' before the end of a case");
            }
            if labels.iter().any(Option::is_none) {
                default = Some(stmts);
                continue;
            }
            let int = Type::Scalar(Scalar::Int);
            let tested = |value: Expr| Expr {
                kind: ExprKind::Binary(
                    BinOp::Eq,
                    Box::new(Expr {
                        kind: ExprKind::Var(format!("clpart_switch_{}", self.switches)),
                        ty: cond.ty.clone(),
                        span: cond.span.clone(),
                    }),
                    Box::new(value),
                ),
                ty: int.clone(),
                span: span.clone(),
            };
            let mut test: Option<Expr> = None;
            for value in labels.into_iter().flatten() {
                let t = tested(value);
                test = Some(match test {
                    None => t,
                    Some(before) => Expr {
                        kind: ExprKind::Binary(BinOp::LogOr, Box::new(before), Box::new(t)),
                        ty: int.clone(),
                        span: span.clone(),
                    },
                });
            }
            chain.push((test.expect("a case has a label"), stmts));
        }
        let mut rest = default;
        for (test, then) in chain.into_iter().rev() {
            rest = Some(vec![Stmt::If {
                cond: test,
                then,
                els: rest,
                span: span.clone(),
            }]);
        }
        let temp = VarDecl {
            name: format!("clpart_switch_{}", self.switches),
            ty: cond.ty.clone(),
            space: AddrSpace::Private,
            init: Some(cond),
            span: span.clone(),
        };
        self.switches += 1;
        let mut block = vec![Stmt::Decl(temp)];
        block.extend(rest.unwrap_or_default());
        Ok(Stmt::Block(block))
    }

    fn stmt_list(&mut self, c: &Cursor) -> Vec<Stmt> {
        if c.kind() == CXCursor_CompoundStmt {
            return self.block(c);
        }
        let mut out = Vec::new();
        self.stmt_into(c, &mut out);
        out
    }

    fn var_decl(&mut self, d: &Cursor) -> VarDecl {
        let span = span_of(d);
        let ty = convert_type(d.ty());
        let space = space_of_spelling(&d.ty().spelling());
        let toks = d.tokens();
        let has_init = toks.iter().any(|t| t == "=");
        let init = if has_init {
            d.children()
                .iter()
                .rev()
                .find(|ch| is_expr_kind(ch.kind()))
                .map(|e| self.expr(e))
        } else {
            None
        };
        if let (Type::Other(s), false) = (&ty, ty.is_image_or_sampler()) {
            self.unsupported(
                &span,
                format!("variable '{}' has unsupported type '{}'", d.spelling(), s),
            );
        }
        if let Some(Expr {
            kind: ExprKind::Unsupported(_),
            ..
        }) = &init
        {
            // already reported
        } else if matches!(init.as_ref().map(|e| &e.kind), Some(ExprKind::VectorLit(_)))
            || init.is_none()
        {
        }
        VarDecl {
            name: d.spelling(),
            ty,
            space,
            init,
            span,
        }
    }

    fn for_stmt(&mut self, c: &Cursor, span: Span) -> Stmt {
        // libclang omits absent parts of the header: find which are present from tokens.
        let toks = c.tokens();
        let mut depth = 0i32;
        let mut semis = Vec::new();
        for (i, t) in toks.iter().enumerate() {
            match t.as_str() {
                "(" => depth += 1,
                ")" => {
                    depth -= 1;
                    if depth == 0 {
                        semis.push(i);
                        break;
                    }
                }
                ";" if depth == 1 => semis.push(i),
                _ => {}
            }
        }
        if semis.len() != 3 {
            self.unsupported(&span, "unrecognized 'for' header".into());
            return Stmt::Unsupported("for".into(), span);
        }
        let has_init = semis[0] > 2;
        let has_cond = semis[1] > semis[0] + 1;
        let has_step = semis[2] > semis[1] + 1;
        let mut ch = c.children().into_iter();
        let init = if has_init {
            ch.next().map(|i| {
                let mut v = Vec::new();
                self.stmt_into(&i, &mut v);
                Box::new(if v.len() == 1 {
                    v.pop().unwrap()
                } else {
                    Stmt::Block(v)
                })
            })
        } else {
            None
        };
        let cond = if has_cond {
            ch.next().map(|e| self.expr(&e))
        } else {
            None
        };
        let step = if has_step {
            ch.next().map(|e| self.expr(&e))
        } else {
            None
        };
        let body = ch.next().map(|b| self.stmt_list(&b)).unwrap_or_default();
        Stmt::For {
            init,
            cond,
            step,
            body,
            span,
        }
    }

    fn bad(&mut self, span: Span, ty: Type, message: String) -> Expr {
        self.unsupported(&span, message.clone());
        Expr {
            kind: ExprKind::Unsupported(message),
            ty,
            span,
        }
    }

    fn expr(&mut self, c: &Cursor) -> Expr {
        let span = expr_span(c, self.source);
        let ty = convert_type(c.ty());
        let ch = c.children();
        let mk = |kind: ExprKind, ty: Type, span: Span| Expr { kind, ty, span };
        match c.kind() {
            CXCursor_ParenExpr if ch.len() == 1 => self.expr(&ch[0]),
            CXCursor_IntegerLiteral | CXCursor_CharacterLiteral => match c.evaluate() {
                Some(EvalValue::Int(v)) => mk(ExprKind::IntLit(v), ty, span),
                _ => self.bad(span, ty, "integer literal could not be evaluated".into()),
            },
            CXCursor_FloatingLiteral => {
                let text = c.tokens().first().cloned().unwrap_or_default();
                match c.evaluate() {
                    Some(EvalValue::Float(v)) => mk(ExprKind::FloatLit(v, text), ty, span),
                    _ => self.bad(span, ty, "floating literal could not be evaluated".into()),
                }
            }
            CXCursor_DeclRefExpr => {
                // Enumerators and macros already expanded; constants referenced by name stay vars.
                if let Some(r) = c.referenced() {
                    if r.kind() == CXCursor_EnumConstantDecl {
                        if let Some(EvalValue::Int(v)) = c.evaluate() {
                            return mk(ExprKind::IntLit(v), ty, span);
                        }
                    }
                }
                mk(ExprKind::Var(c.spelling()), ty, span)
            }
            CXCursor_BinaryOperator | CXCursor_CompoundAssignOperator if ch.len() == 2 => {
                let l = Box::new(self.expr(&ch[0]));
                let r = Box::new(self.expr(&ch[1]));
                let op = c.binary_op();
                let bin = match op {
                    CXBinaryOperator_Mul | CXBinaryOperator_MulAssign => Some(BinOp::Mul),
                    CXBinaryOperator_Div | CXBinaryOperator_DivAssign => Some(BinOp::Div),
                    CXBinaryOperator_Rem | CXBinaryOperator_RemAssign => Some(BinOp::Rem),
                    CXBinaryOperator_Add | CXBinaryOperator_AddAssign => Some(BinOp::Add),
                    CXBinaryOperator_Sub | CXBinaryOperator_SubAssign => Some(BinOp::Sub),
                    CXBinaryOperator_Shl | CXBinaryOperator_ShlAssign => Some(BinOp::Shl),
                    CXBinaryOperator_Shr | CXBinaryOperator_ShrAssign => Some(BinOp::Shr),
                    CXBinaryOperator_LT => Some(BinOp::Lt),
                    CXBinaryOperator_GT => Some(BinOp::Gt),
                    CXBinaryOperator_LE => Some(BinOp::Le),
                    CXBinaryOperator_GE => Some(BinOp::Ge),
                    CXBinaryOperator_EQ => Some(BinOp::Eq),
                    CXBinaryOperator_NE => Some(BinOp::Ne),
                    CXBinaryOperator_And | CXBinaryOperator_AndAssign => Some(BinOp::BitAnd),
                    CXBinaryOperator_Xor | CXBinaryOperator_XorAssign => Some(BinOp::BitXor),
                    CXBinaryOperator_Or | CXBinaryOperator_OrAssign => Some(BinOp::BitOr),
                    CXBinaryOperator_LAnd => Some(BinOp::LogAnd),
                    CXBinaryOperator_LOr => Some(BinOp::LogOr),
                    CXBinaryOperator_Comma => Some(BinOp::Comma),
                    CXBinaryOperator_Assign => None,
                    _ => return self.bad(span, ty, "unsupported binary operator".into()),
                };
                let is_assign = (CXBinaryOperator_Assign..=CXBinaryOperator_OrAssign).contains(&op);
                if is_assign {
                    mk(ExprKind::Assign(bin, l, r), ty, span)
                } else {
                    mk(ExprKind::Binary(bin.unwrap(), l, r), ty, span)
                }
            }
            CXCursor_UnaryOperator if ch.len() == 1 => {
                let op = match c.unary_op() {
                    CXUnaryOperator_PostInc => UnOp::PostInc,
                    CXUnaryOperator_PostDec => UnOp::PostDec,
                    CXUnaryOperator_PreInc => UnOp::PreInc,
                    CXUnaryOperator_PreDec => UnOp::PreDec,
                    CXUnaryOperator_AddrOf => UnOp::AddrOf,
                    CXUnaryOperator_Deref => UnOp::Deref,
                    CXUnaryOperator_Plus => UnOp::Plus,
                    CXUnaryOperator_Minus => UnOp::Neg,
                    CXUnaryOperator_Not => UnOp::BitNot,
                    CXUnaryOperator_LNot => UnOp::Not,
                    _ => return self.bad(span, ty, "unsupported unary operator".into()),
                };
                let a = self.expr(&ch[0]);
                mk(ExprKind::Unary(op, Box::new(a)), ty, span)
            }
            CXCursor_UnaryExpr => match c.evaluate() {
                // sizeof / alignof / vec_step
                Some(EvalValue::Int(v)) => mk(ExprKind::IntLit(v), ty, span),
                _ => self.bad(span, ty, "non-constant 'sizeof'-like expression".into()),
            },
            CXCursor_ArraySubscriptExpr if ch.len() == 2 => {
                let b = self.expr(&ch[0]);
                let i = self.expr(&ch[1]);
                // `i[a]` is `a[i]` in C: the pointer first, whatever the order
                let (b, i) = match (&b.ty, &i.ty) {
                    (Type::Pointer { .. } | Type::Array { .. }, _) => (b, i),
                    (_, Type::Pointer { .. } | Type::Array { .. }) => (i, b),
                    _ => (b, i),
                };
                mk(ExprKind::Index(Box::new(b), Box::new(i)), ty, span)
            }
            CXCursor_ConditionalOperator if ch.len() == 3 => {
                let a = self.expr(&ch[0]);
                let b = self.expr(&ch[1]);
                let d = self.expr(&ch[2]);
                mk(
                    ExprKind::Cond(Box::new(a), Box::new(b), Box::new(d)),
                    ty,
                    span,
                )
            }
            CXCursor_CallExpr => self.call(c, span, ty),
            CXCursor_CStyleCastExpr => {
                let inner = ch.iter().rev().find(|x| is_expr_kind(x.kind()));
                let Some(inner) = inner else {
                    return self.bad(span, ty, "malformed cast".into());
                };
                if inner.kind() == CXCursor_InitListExpr
                    || (inner.kind() == CXCursor_ParenExpr && matches!(ty, Type::Vector(..)))
                {
                    let parts: Vec<Expr> = self.vector_parts(inner);
                    return mk(ExprKind::VectorLit(parts), ty, span);
                }
                let e = self.expr(inner);
                if let (Type::Pointer { pointee: a, .. }, Type::Pointer { pointee: b, .. }) =
                    (&ty, &e.ty)
                {
                    if a != b && !element_cast(&ty, &e.ty) {
                        return self.bad(
                            span,
                            ty.clone(),
                            format!(
                                "pointer cast from '{}' to '{}' is not supported",
                                e.ty.name(),
                                ty.name()
                            ),
                        );
                    }
                }
                mk(ExprKind::Cast(Box::new(e)), ty, span)
            }
            CXCursor_InitListExpr => {
                let parts = ch.iter().map(|x| self.expr(x)).collect();
                mk(ExprKind::VectorLit(parts), ty, span)
            }
            // `(float4)(a, b, c, d)` as clang sometimes represents it
            CXCursor_CompoundLiteralExpr
                if matches!(ty, Type::Vector(..))
                    && ch.last().is_some_and(|x| x.kind() == CXCursor_InitListExpr) =>
            {
                let parts: Vec<Expr> = ch.last().map(|x| self.vector_parts(x)).unwrap_or_default();
                mk(ExprKind::VectorLit(parts), ty, span)
            }
            CXCursor_MemberRefExpr | CXCursor_UnexposedExpr if ch.len() == 1 => {
                let inner_ext = ch[0].extent();
                let ext = c.extent();
                let inner_ty = convert_type(ch[0].ty());
                // inside a macro argument every token's expansion is the
                // macro's: the ends compared, and the component read, are
                // where the argument wrote them (`MIN(v.x, v.y)`); a
                // component in a macro's body is not seen (a conversion, as
                // before: never an integer the analysis uses)
                let written = match (inner_ext.written, ext.written) {
                    (Some(i), Some(o)) if inner_ext.end >= ext.end => {
                        let comp = self
                            .source
                            .get(o.2 as usize..o.3 as usize)
                            .and_then(|t| t.rsplit_once('.'))
                            .map(|(_, c)| c.trim().to_string())
                            .filter(|c| swizzle_lanes(c).is_some());
                        Some((i.3 < o.3, comp))
                    }
                    _ => None,
                };
                let is_swizzle = matches!(inner_ty, Type::Vector(..))
                    && match &written {
                        Some((shorter, comp)) => *shorter && comp.is_some(),
                        None => inner_ext.end < ext.end,
                    };
                if is_swizzle {
                    let comp = match written {
                        Some((_, Some(comp))) => comp,
                        _ => c.tokens().last().cloned().unwrap_or_default(),
                    };
                    let base = self.expr(&ch[0]);
                    match swizzle_lanes(&comp) {
                        Some(l) => return mk(ExprKind::Swizzle(Box::new(base), l), ty, span),
                        None => {
                            return self.bad(
                                span,
                                ty,
                                format!("unsupported vector component '.{comp}'"),
                            )
                        }
                    }
                }
                if c.kind() == CXCursor_MemberRefExpr {
                    // `p[i].m` / `p->m`: an access to part of the element
                    // (`p[i].m[k]` too, `m` an array). Members that are
                    // pointers would be bases of further accesses the
                    // analysis cannot follow.
                    if matches!(ty, Type::Pointer { .. } | Type::Other(_)) {
                        self.unsupported(
                            &span,
                            format!(
                                "struct member '{}' of type '{}' is not supported",
                                c.spelling(),
                                ty.name()
                            ),
                        );
                    }
                    let base = self.expr(&ch[0]);
                    let offset = c.referenced().and_then(|f| f.field_offset());
                    return mk(
                        ExprKind::Member(Box::new(base), c.spelling(), offset),
                        ty,
                        span,
                    );
                }
                let e = self.expr(&ch[0]);
                if e.ty == ty || matches!(ty, Type::Other(_) | Type::Struct { .. }) {
                    e
                } else {
                    if let (Type::Pointer { pointee: a, .. }, Type::Pointer { pointee: b, .. }) =
                        (&ty, &e.ty)
                    {
                        if a.name() != b.name() {
                            return self.bad(
                                span,
                                ty.clone(),
                                format!(
                                    "pointer cast from '{}' to '{}' is not supported",
                                    e.ty.name(),
                                    ty.name()
                                ),
                            );
                        }
                        return e;
                    }
                    if matches!(e.ty, Type::Array { .. }) {
                        return e; // array-to-pointer decay
                    }
                    mk(ExprKind::Cast(Box::new(e)), ty, span)
                }
            }
            _ => {
                if let Some(v) = c.evaluate() {
                    return match v {
                        EvalValue::Int(i) => mk(ExprKind::IntLit(i), ty, span),
                        EvalValue::Float(f) => {
                            mk(ExprKind::FloatLit(f, format!("{f:?}")), ty, span)
                        }
                    };
                }
                let what = c.kind_name();
                self.bad(span, ty, format!("expression '{}' is not supported", what))
            }
        }
    }

    fn vector_parts(&mut self, c: &Cursor) -> Vec<Expr> {
        match c.kind() {
            CXCursor_ParenExpr => {
                let ch = c.children();
                if ch.len() == 1 {
                    return self.vector_parts(&ch[0]);
                }
                ch.iter().map(|x| self.expr(x)).collect()
            }
            CXCursor_InitListExpr => c.children().iter().map(|x| self.expr(x)).collect(),
            CXCursor_BinaryOperator if c.binary_op() == CXBinaryOperator_Comma => {
                let ch = c.children();
                let mut v = self.vector_parts(&ch[0]);
                v.push(self.expr(&ch[1]));
                v
            }
            _ => vec![self.expr(c)],
        }
    }

    fn call(&mut self, c: &Cursor, span: Span, ty: Type) -> Expr {
        let name = c.spelling();
        let n = c.num_arguments().max(0) as u32;
        let args: Vec<Expr> = (0..n).map(|i| self.expr(&c.argument(i))).collect();
        if let Some(w) = WorkItemFn::from_name(&name) {
            let dim = args.into_iter().next().unwrap_or(Expr {
                kind: ExprKind::IntLit(0),
                ty: Type::Scalar(Scalar::UInt),
                span: span.clone(),
            });
            return Expr {
                kind: ExprKind::WorkItem(w, Box::new(dim)),
                ty,
                span,
            };
        }
        if name.is_empty() {
            return self.bad(span, ty, "indirect call is not supported".into());
        }
        Expr {
            kind: ExprKind::Call(name, args),
            ty,
            span,
        }
    }
}

/// Lane indices of a vector component selector (`x`, `xy`, `s01`, `hi`, `even` ...).
pub(crate) fn swizzle_lanes(comp: &str) -> Option<Vec<u8>> {
    let xyzw = |c: char| "xyzw".find(c).map(|i| i as u8);
    if let Some(rest) = comp.strip_prefix('s').or_else(|| comp.strip_prefix('S')) {
        if !rest.is_empty() && rest.chars().all(|c| c.is_ascii_hexdigit()) {
            return Some(
                rest.chars()
                    .map(|c| c.to_digit(16).unwrap() as u8)
                    .collect(),
            );
        }
    }
    if !comp.is_empty() && comp.chars().all(|c| xyzw(c).is_some()) {
        return Some(comp.chars().map(|c| xyzw(c).unwrap()).collect());
    }
    None
}

/// Whether a cast from pointer type `from` to `to` is one the analysis
/// follows: the same address space, and pointees of known sizes one of
/// which divides the other (`(__global float4 *)p` on a `float` buffer,
/// `(__global uint *)q` on a `uint2` one): an element of one is a whole
/// number of elements of the other.
fn element_cast(to: &Type, from: &Type) -> bool {
    let (
        Type::Pointer {
            pointee: a,
            space: sa,
            ..
        },
        Type::Pointer {
            pointee: b,
            space: sb,
            ..
        },
    ) = (to, from)
    else {
        return false;
    };
    let sized = |t: &Type| match t {
        Type::Scalar(_) | Type::Vector(..) | Type::Struct { .. } => t.size().filter(|&n| n > 0),
        _ => None,
    };
    match (sized(a), sized(b)) {
        (Some(x), Some(y)) => sa == sb && (x % y == 0 || y % x == 0),
        _ => false,
    }
}
