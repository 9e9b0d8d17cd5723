//! A thin owning wrapper over libclang (clang-sys): index, translation unit,
//! cursors, types and tokens. All `unsafe` FFI of the crate lives here.
//!
//! libclang is loaded at run time (clang-sys's `runtime` feature) on the
//! first parse, so a process that never parses kernel source (a launch from
//! a range file or the analysis cache, an application under the layer that
//! only passes calls through) never loads libLLVM. It is found and opened
//! once per process (`LIBCLANG`) and handed to each thread that parses,
//! since clang-sys keeps the library per thread. The `clpart` command sets
//! `LIBCLANG_PATH` to the folder clpart was built with
//! ([`crate::default_libclang_dir`]) when it is unset, which spares
//! clang-sys its search of the system's folders.
#![allow(non_upper_case_globals)]

use clang_sys::*;
use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_uint, c_void};
use std::sync::Mutex;

/// libclang's global state is not safe to drive from several threads at once
/// through one index; we serialize parses (they take milliseconds).
static PARSE_LOCK: Mutex<()> = Mutex::new(());

fn cxstring(s: CXString) -> String {
    unsafe {
        let p = clang_getCString(s);
        let out = if p.is_null() {
            String::new()
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        };
        clang_disposeString(s);
        out
    }
}

/// An owned libclang index + translation unit.
pub struct TranslationUnit {
    index: CXIndex,
    tu: CXTranslationUnit,
    /// The main file (null until parsed).
    main: CXFile,
}

impl Drop for TranslationUnit {
    fn drop(&mut self) {
        unsafe {
            if !self.tu.is_null() {
                clang_disposeTranslationUnit(self.tu);
            }
            if !self.index.is_null() {
                clang_disposeIndex(self.index);
            }
        }
    }
}

/// A clang diagnostic in plain data.
pub struct ClangDiag {
    pub is_error: bool,
    /// A fatal error (a file not found): the parse stopped there.
    pub is_fatal: bool,
    pub is_warning: bool,
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub message: String,
}

/// Why [`TranslationUnit::parse`] gave no translation unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseFailure {
    /// The libclang shared library could not be loaded (it is loaded at run
    /// time, on first use in each thread: programs that never parse kernel
    /// source, such as a launch from a range file or an application under
    /// the layer that only passes calls through, never load it).
    NoLibclang(String),
    /// libclang failed outright.
    Failed,
}

/// The libclang of this process: found and opened once (clang-sys's search
/// of the system's folders, when `LIBCLANG_PATH` does not name one, costs
/// tens of milliseconds), then handed to each thread that parses.
static LIBCLANG: std::sync::OnceLock<Result<std::sync::Arc<SharedLibrary>, String>> =
    std::sync::OnceLock::new();

/// Loads libclang into the calling thread (clang-sys keeps the library per
/// thread) unless it is there already.
pub(crate) fn load_libclang() -> Result<(), ParseFailure> {
    if clang_sys::is_loaded() {
        return Ok(());
    }
    let lib = LIBCLANG
        .get_or_init(|| clang_sys::load_manually().map(std::sync::Arc::new))
        .clone()
        .map_err(ParseFailure::NoLibclang)?;
    clang_sys::set_library(Some(lib));
    Ok(())
}

impl TranslationUnit {
    /// Parses `source` as file `file_name` with `args`; `None` when libclang fails outright.
    pub fn parse(
        file_name: &str,
        source: &str,
        args: &[String],
    ) -> Result<TranslationUnit, ParseFailure> {
        let _guard = PARSE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        load_libclang()?;
        let c_name = CString::new(file_name).map_err(|_| ParseFailure::Failed)?;
        let c_src = CString::new(source).map_err(|_| ParseFailure::Failed)?;
        let c_args: Vec<CString> = args
            .iter()
            .filter_map(|a| CString::new(a.as_str()).ok())
            .collect();
        let arg_ptrs: Vec<*const c_char> = c_args.iter().map(|a| a.as_ptr()).collect();
        let mut unsaved = CXUnsavedFile {
            Filename: c_name.as_ptr(),
            Contents: c_src.as_ptr(),
            Length: source.len() as _,
        };
        unsafe {
            let index = clang_createIndex(0, 0);
            let mut tu: CXTranslationUnit = std::ptr::null_mut();
            let err = clang_parseTranslationUnit2(
                index,
                c_name.as_ptr(),
                arg_ptrs.as_ptr(),
                arg_ptrs.len() as i32,
                &mut unsaved,
                1,
                CXTranslationUnit_None,
                &mut tu,
            );
            let mut out = TranslationUnit {
                index,
                tu,
                main: std::ptr::null_mut(),
            };
            if err != CXError_Success || tu.is_null() {
                return Err(ParseFailure::Failed);
            }
            out.main = clang_getFile(tu, c_name.as_ptr());
            Ok(out)
        }
    }

    pub fn diagnostics(&self) -> Vec<ClangDiag> {
        let mut out = Vec::new();
        unsafe {
            let n = clang_getNumDiagnostics(self.tu);
            for i in 0..n {
                let d = clang_getDiagnostic(self.tu, i);
                let sev = clang_getDiagnosticSeverity(d);
                let loc = clang_getDiagnosticLocation(d);
                let (file, line, col) = presumed_location(loc);
                let message = cxstring(clang_getDiagnosticSpelling(d));
                out.push(ClangDiag {
                    is_error: sev >= CXDiagnostic_Error,
                    is_fatal: sev >= CXDiagnostic_Fatal,
                    is_warning: sev == CXDiagnostic_Warning,
                    file,
                    line,
                    col,
                    message,
                });
                clang_disposeDiagnostic(d);
            }
        }
        out
    }

    /// Every file the preprocessor entered for an `#include`, in the order
    /// it entered them, with its contents as libclang read them and where
    /// the directive that included it lies.
    pub fn inclusions(&self) -> Vec<Inclusion> {
        extern "C" fn visit(
            file: CXFile,
            stack: *mut CXSourceLocation,
            depth: c_uint,
            data: CXClientData,
        ) {
            // SAFETY: `data` is the `Visit` passed below, alive for the call.
            let visit = unsafe { &mut *(data as *mut Visit) };
            if depth == 0 || stack.is_null() {
                return; // the main file
            }
            // SAFETY: libclang passes `depth` locations; the first is the
            // directive that included `file`.
            let at = unsafe { *stack };
            let (from, line) = expansion_location(at);
            let mut size: usize = 0;
            // SAFETY: a file of this translation unit.
            let p = unsafe { clang_getFileContents(visit.tu, file, &mut size) };
            let contents = (!p.is_null()).then(|| {
                // SAFETY: libclang's buffer of `size` bytes, alive with the unit.
                unsafe { std::slice::from_raw_parts(p as *const u8, size) }.to_vec()
            });
            visit.out.push(Inclusion {
                // SAFETY: a file of this translation unit.
                file: cxstring(unsafe { clang_getFileName(file) }),
                contents,
                from,
                line,
            });
        }
        struct Visit {
            tu: CXTranslationUnit,
            out: Vec<Inclusion>,
        }
        let mut v = Visit {
            tu: self.tu,
            out: Vec::new(),
        };
        // SAFETY: the visitor only reads through `v` during the call.
        unsafe { clang_getInclusions(self.tu, visit, &mut v as *mut Visit as CXClientData) };
        v.out
    }

    pub fn root(&self) -> Cursor<'_> {
        Cursor {
            raw: unsafe { clang_getTranslationUnitCursor(self.tu) },
            tu: self,
        }
    }
}

/// One file entered for an `#include` ([`TranslationUnit::inclusions`]).
pub struct Inclusion {
    /// The file's name as the preprocessor resolved it.
    pub file: String,
    /// Its bytes as libclang read them (`None` where libclang has none).
    pub contents: Option<Vec<u8>>,
    /// The file holding the `#include` directive, and the directive's line.
    pub from: String,
    pub line: u32,
}

fn expansion_location(loc: CXSourceLocation) -> (String, u32) {
    unsafe {
        let mut file: CXFile = std::ptr::null_mut();
        let mut line: c_uint = 0;
        let mut col: c_uint = 0;
        let mut offset: c_uint = 0;
        clang_getExpansionLocation(loc, &mut file, &mut line, &mut col, &mut offset);
        let name = if file.is_null() {
            String::new()
        } else {
            cxstring(clang_getFileName(file))
        };
        (name, line)
    }
}

/// Where `loc` is as the source says, honouring `#line` directives (a
/// program with its includes written in says where each line came from):
/// file, line and column for messages; offsets stay physical.
fn presumed_location(loc: CXSourceLocation) -> (String, u32, u32) {
    unsafe {
        let mut name: CXString = std::mem::zeroed();
        let mut line: c_uint = 0;
        let mut col: c_uint = 0;
        clang_getPresumedLocation(loc, &mut name, &mut line, &mut col);
        (cxstring(name), line, col)
    }
}

/// A cursor borrowed from its translation unit.
#[derive(Clone, Copy)]
pub struct Cursor<'tu> {
    raw: CXCursor,
    tu: &'tu TranslationUnit,
}

/// Where a cursor lies: file, line, column and byte range (expansion location).
pub struct Extent {
    pub line: u32,
    pub col: u32,
    pub start: u32,
    pub end: u32,
    pub in_main_file: bool,
    /// Where its first and last tokens were written when they come from a
    /// macro's arguments (libclang's file location: for a token of a
    /// macro argument the argument's text, for one of a macro's body the
    /// expansion): `(line, col, start, end)`, both ends in the main file.
    pub written: Option<(u32, u32, u32, u32)>,
}

extern "C" fn collect_children(
    cursor: CXCursor,
    _parent: CXCursor,
    data: CXClientData,
) -> CXChildVisitResult {
    let v = unsafe { &mut *(data as *mut Vec<CXCursor>) };
    v.push(cursor);
    CXChildVisit_Continue
}

impl<'tu> Cursor<'tu> {
    pub fn kind(&self) -> CXCursorKind {
        unsafe { clang_getCursorKind(self.raw) }
    }

    pub fn kind_name(&self) -> String {
        unsafe { cxstring(clang_getCursorKindSpelling(self.kind())) }
    }

    pub fn spelling(&self) -> String {
        unsafe { cxstring(clang_getCursorSpelling(self.raw)) }
    }

    pub fn children(&self) -> Vec<Cursor<'tu>> {
        let mut raw: Vec<CXCursor> = Vec::new();
        unsafe {
            clang_visitChildren(
                self.raw,
                collect_children,
                &mut raw as *mut Vec<CXCursor> as *mut c_void,
            );
        }
        raw.into_iter()
            .map(|raw| Cursor { raw, tu: self.tu })
            .collect()
    }

    pub fn ty(&self) -> ClangType {
        ClangType {
            raw: unsafe { clang_getCursorType(self.raw) },
        }
    }

    pub fn result_type(&self) -> ClangType {
        ClangType {
            raw: unsafe { clang_getCursorResultType(self.raw) },
        }
    }

    pub fn is_definition(&self) -> bool {
        unsafe { clang_isCursorDefinition(self.raw) != 0 }
    }

    pub fn binary_op(&self) -> CXBinaryOperatorKind {
        unsafe { clang_getCursorBinaryOperatorKind(self.raw) }
    }

    pub fn unary_op(&self) -> CXUnaryOperatorKind {
        unsafe { clang_getCursorUnaryOperatorKind(self.raw) }
    }

    /// The byte offset of a field in its struct (`clang_Cursor_getOffsetOfField`
    /// on a field declaration); `None` for a bit-field or where clang
    /// cannot tell.
    pub fn field_offset(&self) -> Option<u32> {
        // A bit-field's bits are not its type's bytes, wherever it starts
        // (OpenCL C has none; C headers parsed with a kernel might).
        if unsafe { clang_Cursor_isBitField(self.raw) } != 0 {
            return None;
        }
        let bits = unsafe { clang_Cursor_getOffsetOfField(self.raw) };
        if bits < 0 || bits % 8 != 0 {
            return None;
        }
        u32::try_from(bits / 8).ok()
    }

    pub fn referenced(&self) -> Option<Cursor<'tu>> {
        let r = unsafe { clang_getCursorReferenced(self.raw) };
        if unsafe { clang_Cursor_isNull(r) } != 0 {
            None
        } else {
            Some(Cursor {
                raw: r,
                tu: self.tu,
            })
        }
    }

    pub fn num_arguments(&self) -> i32 {
        unsafe { clang_Cursor_getNumArguments(self.raw) }
    }

    pub fn argument(&self, i: u32) -> Cursor<'tu> {
        Cursor {
            raw: unsafe { clang_Cursor_getArgument(self.raw, i) },
            tu: self.tu,
        }
    }

    /// Evaluates a constant expression: integer or floating value.
    pub fn evaluate(&self) -> Option<EvalValue> {
        unsafe {
            let r = clang_Cursor_Evaluate(self.raw);
            if r.is_null() {
                return None;
            }
            let out = match clang_EvalResult_getKind(r) {
                CXEval_Int => {
                    if clang_EvalResult_isUnsignedInt(r) != 0 {
                        Some(EvalValue::Int(clang_EvalResult_getAsUnsigned(r) as i128))
                    } else {
                        Some(EvalValue::Int(clang_EvalResult_getAsLongLong(r) as i128))
                    }
                }
                CXEval_Float => Some(EvalValue::Float(clang_EvalResult_getAsDouble(r))),
                _ => None,
            };
            clang_EvalResult_dispose(r);
            out
        }
    }

    pub fn extent(&self) -> Extent {
        unsafe {
            let range = clang_getCursorExtent(self.raw);
            let start = clang_getRangeStart(range);
            let end = clang_getRangeEnd(range);
            let mut file: CXFile = std::ptr::null_mut();
            let (mut line, mut col, mut off): (c_uint, c_uint, c_uint) = (0, 0, 0);
            clang_getExpansionLocation(start, &mut file, &mut line, &mut col, &mut off);
            let mut efile: CXFile = std::ptr::null_mut();
            let (mut el, mut ec, mut eoff): (c_uint, c_uint, c_uint) = (0, 0, 0);
            clang_getExpansionLocation(end, &mut efile, &mut el, &mut ec, &mut eoff);
            let in_main = clang_Location_isFromMainFile(start) != 0;
            let (mut wfile, mut wline, mut wcol, mut woff): (CXFile, c_uint, c_uint, c_uint) =
                (std::ptr::null_mut(), 0, 0, 0);
            clang_getFileLocation(start, &mut wfile, &mut wline, &mut wcol, &mut woff);
            let mut wefile: CXFile = std::ptr::null_mut();
            let (mut wel, mut wec, mut weoff): (c_uint, c_uint, c_uint) = (0, 0, 0);
            clang_getFileLocation(end, &mut wefile, &mut wel, &mut wec, &mut weoff);
            let main = self.tu.main;
            let main_file =
                !wfile.is_null() && !main.is_null() && clang_File_isEqual(wfile, main) != 0;
            // the line a message names: as `#line` says (a column is a
            // column); a macro argument's text is in the same stretch of
            // lines as its expansion
            let (_, pline, _) = presumed_location(start);
            let shift = |l: c_uint| match pline {
                0 => l,
                p => (l as i64 + p as i64 - line as i64).max(1) as c_uint,
            };
            let written = (main_file && clang_File_isEqual(wfile, wefile) != 0 && woff < weoff)
                .then_some((shift(wline), wcol, woff, weoff));
            let line = shift(line);
            Extent {
                line,
                col,
                start: off,
                end: eoff.max(off),
                in_main_file: in_main,
                written,
            }
        }
    }

    /// The spellings of the tokens covering this cursor.
    pub fn tokens(&self) -> Vec<String> {
        let mut out = Vec::new();
        unsafe {
            let range = clang_getCursorExtent(self.raw);
            let mut toks: *mut CXToken = std::ptr::null_mut();
            let mut n: c_uint = 0;
            clang_tokenize(self.tu.tu, range, &mut toks, &mut n);
            if !toks.is_null() {
                for i in 0..n as usize {
                    out.push(cxstring(clang_getTokenSpelling(self.tu.tu, *toks.add(i))));
                }
                clang_disposeTokens(self.tu.tu, toks, n);
            }
        }
        out
    }
}

/// A constant value from `clang_Cursor_Evaluate`.
pub enum EvalValue {
    Int(i128),
    Float(f64),
}

/// A clang type.
#[derive(Clone, Copy)]
pub struct ClangType {
    raw: CXType,
}

impl ClangType {
    pub fn kind(&self) -> CXTypeKind {
        self.raw.kind
    }

    pub fn spelling(&self) -> String {
        unsafe { cxstring(clang_getTypeSpelling(self.raw)) }
    }

    pub fn canonical(&self) -> ClangType {
        ClangType {
            raw: unsafe { clang_getCanonicalType(self.raw) },
        }
    }

    pub fn pointee(&self) -> ClangType {
        ClangType {
            raw: unsafe { clang_getPointeeType(self.raw) },
        }
    }

    pub fn element(&self) -> ClangType {
        ClangType {
            raw: unsafe { clang_getElementType(self.raw) },
        }
    }

    pub fn num_elements(&self) -> i64 {
        unsafe { clang_getNumElements(self.raw) }
    }

    pub fn is_const(&self) -> bool {
        unsafe { clang_isConstQualifiedType(self.raw) != 0 }
    }

    /// Size in bytes for the parse target (OpenCL C layout), if complete.
    pub fn size_of(&self) -> Option<u64> {
        let s = unsafe { clang_Type_getSizeOf(self.raw) };
        (s > 0).then_some(s as u64)
    }

    /// A struct's or union's fields in declaration order: name, byte
    /// offset (`None` for a bit-field or where clang cannot tell) and
    /// type; empty for any other type.
    pub fn fields(&self) -> Vec<(String, Option<u32>, ClangType)> {
        // SAFETY: the declaration of a type of a live translation unit; its
        // children are collected while it lives.
        let decl = unsafe { clang_getTypeDeclaration(self.raw) };
        if unsafe { clang_Cursor_isNull(decl) } != 0 {
            return Vec::new();
        }
        let mut raw: Vec<CXCursor> = Vec::new();
        unsafe {
            clang_visitChildren(
                decl,
                collect_children,
                &mut raw as *mut Vec<CXCursor> as *mut c_void,
            );
        }
        raw.into_iter()
            .filter(|c| unsafe { clang_getCursorKind(*c) } == CXCursor_FieldDecl)
            .map(|c| {
                let offset = if unsafe { clang_Cursor_isBitField(c) } != 0 {
                    None
                } else {
                    let bits = unsafe { clang_Cursor_getOffsetOfField(c) };
                    (bits >= 0 && bits % 8 == 0)
                        .then(|| u32::try_from(bits / 8).ok())
                        .flatten()
                };
                (
                    unsafe { cxstring(clang_getCursorSpelling(c)) },
                    offset,
                    ClangType {
                        raw: unsafe { clang_getCursorType(c) },
                    },
                )
            })
            .collect()
    }
}
