//! The clpart range file and the evaluator of the expressions it stores.
//!
//! The partitioner writes one [`RangeFile`] per program: for each kernel the
//! parameters and where each comes from, the arguments, and for each array
//! its footprint (lower and upper element index) over the whole NDRange and
//! over a slice `[lo, hi)` of work-groups, as piecewise quasi-affine
//! expressions in isl's text syntax, with Ehrhart counts, write verdicts,
//! launch-time assumptions and the rewritten subkernel. The launcher reads the
//! file and evaluates the expressions with the concrete values of a launch,
//! without re-running the analysis.
//!
//! The file is RON with a [`FORMAT_VERSION`]. Loading checks the version
//! first (a newer file is [`RangesError::NewerVersion`]), then the structure
//! ([`RangesError::Corrupt`] with a line and column), then every field
//! against the others and the kernel's signature ([`RangesError::Invalid`]),
//! then that every expression parses and binds to the kernel's parameters
//! ([`RangesError::BadExpression`]), then the per-section checksums
//! ([`RangesError::Checksum`], naming the section that changed). A range
//! file is untrusted input; it also carries kernel code, so it is trusted
//! like a program: the checksums detect edits, not forgery.
//!
//! Expressions: [`PwExpr`] (piecewise values), [`Condition`] (chamber domains
//! and assumptions), [`Count`] (Ehrhart counts). Each is parsed once, bound
//! once to the order of a value vector ([`PwExpr::bind`]) and then evaluated
//! exactly and quickly ([`BoundExpr::eval`]).
//!
//! # Expression syntax
//!
//! What isl prints for piecewise quasi-affine expressions and parameter sets,
//! plus the quasi-polynomial forms of PolyLib's Ehrhart output (rational
//! coefficients, powers, products, periodic numbers `[a, b]_N` = element
//! `N mod 2` of the list). Whitespace between tokens is free.
//!
//! ```text
//! pw       := [header] '{' [piece (';' piece)*] '}' | sum
//! header   := '[' [ident (',' ident)*] ']' '->'
//! piece    := ['[' ']' '->'] '[' sum ']' [':' cond]
//! condtext := [header] '{' ':' [cond] '}' | cond | <empty, meaning true>
//! cond     := conj ('or' conj)*
//! conj     := catom ('and' catom)*
//! catom    := 'true' | 'false' | exists | chain | '(' cond ')'
//! exists   := 'exists' '(' evar (',' evar)* ':' cond ')'
//! evar     := ident ['=' sum]
//! chain    := sum (cmp sum)+      cmp := '<=' | '<' | '>=' | '>' | '=' | '==' | '!='
//! sum      := term (('+' | '-') term)*
//! term     := unary (('*' unary) | ('/' uint) | <after an integer literal:> power)*
//! unary    := '-'* power
//! power    := postfix ['^' uint]
//! postfix  := atom (('mod' | '%') uint)*
//! atom     := '(' sum ')' | 'floor' '(' sum ')' | 'ceil' '(' sum ')'
//!           | 'floord' '(' sum ',' uint ')' | 'ceild' '(' sum ',' uint ')'
//!           | ('min' | 'max') '(' sum (',' sum)* ')'
//!           | '[' sum (',' sum)* ']' '_' ident | uint | ident
//! ```
//!
//! `16hi` is `16 * hi`; `(x) mod 16` binds to the factor before it, as in
//! isl's reader, and lies in `[0, 16)`; `floor` rounds toward minus
//! infinity; `/` divides exactly (rationals), so `(N)/2` is an integer only
//! for even `N`. An existential variable must be defined (`e0 =
//! floor(...)`) or fixed by an equality among the top-level conjuncts of its
//! body (`2e0 = N`); anything else is [`ExprError::Unsupported`].
//!
//! # Cost
//!
//! Binding resolves names once; evaluation then walks the bound tree with no
//! allocation (except when it returns an error) and no name lookup, in exact
//! `i128` rational arithmetic checked for overflow. A few pieces of
//! quasi-affine expressions take 50 to 150 ns on a slow 2-core machine
//! (`cargo run --release -p ranges-format --example eval_cost` prints a
//! table).
//!
//! The run file of `clpart steps` ([`RunFile`], module [`run_file`]), a
//! hand-written sequence of launches over named buffers, is parsed and
//! checked here too: the other file clpart reads. The signature file
//! ([`SignatureFile`]), one kernel's argument list, is what the analysis
//! cache keeps beside its range files.
//!
//! This crate does no I/O except [`RangeFile::read`],
//! [`RangeFile::write_atomic`], [`SignatureFile::read`],
//! [`SignatureFile::write_atomic`], [`output`] (the safe output files every
//! clpart output uses) and [`input`] (the bounded reads every input file
//! clpart is given goes through).

#![warn(missing_docs)]

mod ast;
mod checksum;
mod expr;
mod file;
pub mod input;
pub mod output;
mod parse;
mod rational;
mod request;
pub mod run_file;
mod signature;
mod validate;

pub use expr::{BoundCondition, BoundExpr, Condition, PwExpr};
pub use file::{
    eval_count, source_hash, ArgInfo, ArgKind, ArrayRanges, ArrayStatus, Assumption, BoundCount,
    BoundRange, Boxes, Chamber, Count, CutShort, ExtraArg, ExtraArgMeaning, FieldInfo,
    KernelRanges, Mode, Param, ParamSource, Range, RangeFile, ReduceOp, Reduction, Subkernel,
    Vertex, WriteVerdict, FORMAT_VERSION, OLDEST_FORMAT_VERSION,
};
pub use rational::Rat;
pub use request::AnalysisRequest;
pub use run_file::{BufferDecl, RunFile, RunFileError, Step, StepArg};
pub use signature::{SignatureFile, SIGNATURE_VERSION};
pub use validate::{opencl_type, BoundArray, BoundBoxes, BoundKernel, TypeInfo, MAX_READ_PARTS};

use std::path::PathBuf;

/// Errors of parsing, binding or evaluating an expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExprError {
    /// The text does not follow the grammar; `col` is the 1-based byte
    /// column in the expression text.
    #[error("column {col}: {message}")]
    Parse {
        /// 1-based byte column of the error in the expression text.
        col: usize,
        /// What was expected, and the text found there.
        message: String,
    },
    /// A name that is neither in the `[...] ->` header nor an existential.
    #[error("unknown parameter '{name}' (parameters: {known})")]
    UnknownParam {
        /// The offending name.
        name: String,
        /// The header's parameters, comma separated.
        known: String,
    },
    /// A parameter of the expression is missing from the names given to
    /// `bind`.
    #[error("parameter '{name}' has no value (bound names: {names})")]
    Unbound {
        /// The parameter with no value.
        name: String,
        /// The names given to `bind`, comma separated.
        names: String,
    },
    /// A construct the evaluator does not handle (an existential variable
    /// not fixed by an equality, isl's NaN, ...).
    #[error("unsupported expression: {0}")]
    Unsupported(String),
    /// The value vector is shorter than the bound names require.
    #[error("expected at least {needed} values, got {got}")]
    TooFewValues {
        /// Least length needed.
        needed: usize,
        /// Length given.
        got: usize,
    },
    /// An intermediate or final value does not fit (`i128` inside, `i64`
    /// for results).
    #[error("arithmetic overflow while evaluating an expression")]
    Overflow,
    /// Division by zero while solving an existential variable.
    #[error("division by zero while evaluating an expression")]
    DivisionByZero,
    /// A count made with some parameters fixed ([`Count::at`]) asked for
    /// at other values of them.
    #[error("the count holds only where {name} = {at} (here {name} = {value})")]
    OutsidePoint {
        /// The parameter whose value differs.
        name: String,
        /// Its value where the count was made.
        at: i64,
        /// Its value here.
        value: i64,
    },
    /// The value is a non-integer rational.
    #[error("expression value {value} is not an integer")]
    NotInteger {
        /// The value, as `n/d`.
        value: String,
    },
}

/// Errors of loading, validating or saving a range file.
#[derive(Debug, thiserror::Error)]
pub enum RangesError {
    /// The file was written by a newer clpart.
    #[error("range file has format_version {found}, this clpart reads up to {supported}")]
    NewerVersion {
        /// Version in the file.
        found: u32,
        /// [`FORMAT_VERSION`].
        supported: u32,
    },
    /// The file was written by an older clpart whose format this one no
    /// longer reads.
    #[error("range file has format_version {found}, which this clpart no longer reads: regenerate it with 'clpart analyze -o'")]
    OlderVersion {
        /// Version in the file.
        found: u32,
    },
    /// The text is not a well-formed range file (syntax, missing or
    /// mistyped field, truncated); `line` and `col` are 1-based.
    #[error("corrupt range file at line {line}, column {col}: {message}")]
    Corrupt {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What is wrong, lower case.
        message: String,
    },
    /// An expression string does not parse, or uses a name that is not one
    /// of the kernel's parameters. `array` is empty for kernel-level
    /// expressions (assumptions); `field` names the place, e.g.
    /// `slice.upper` or `count_total[0][1].domain`.
    #[error("kernel '{kernel}'{}: bad expression in {field}: {message}", array_part(.array))]
    BadExpression {
        /// Kernel name.
        kernel: String,
        /// Array name, empty for kernel-level expressions.
        array: String,
        /// Field path inside the array or kernel entry.
        field: String,
        /// The expression error.
        message: String,
    },
    /// A kernel entry is inconsistent (e.g. a parameter listed twice).
    #[error("kernel '{kernel}': {message}")]
    Invalid {
        /// Kernel name.
        kernel: String,
        /// What is wrong.
        message: String,
    },
    /// A file-level field is inconsistent (`source_hash`, `build_options`).
    #[error("{field}: {message}")]
    File {
        /// The field.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A section's stored checksum does not match its content, is missing
    /// or names no section: the file was edited or damaged after it was
    /// written.
    #[error("{section}: {message}; regenerate the file with 'clpart analyze -o'")]
    Checksum {
        /// The section, e.g. `kernel 'vadd': subkernel`.
        section: String,
        /// What is wrong.
        message: String,
    },
    /// Reading or writing the file failed.
    #[error("cannot {op} range file '{}': {error}", .path.display())]
    Io {
        /// `read` or `write`.
        op: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        error: std::io::Error,
    },
    /// Serialization failed (not expected for well-formed values).
    #[error("cannot serialize range file: {message}")]
    Serialize {
        /// The serializer's message.
        message: String,
    },
}

fn array_part(array: &str) -> String {
    if array.is_empty() {
        String::new()
    } else {
        format!(", array '{array}'")
    }
}
