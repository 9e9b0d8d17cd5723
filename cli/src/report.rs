//! The machine-readable report of `clpart analyze --json`: typed structs,
//! serialized with serde (never built as strings), made from the analysis's
//! typed result (`ranges_format::RangeFile`) and the parser's diagnostics.
//!
//! The fields and their types are documented on the structs and checked for
//! every corpus kernel by `cli/tests/report_json.rs`. A change that removes
//! or retypes a field bumps [`SCHEMA_VERSION`].
//!
//! The analysis's reasons are end-user strings with their location written
//! last, in parentheses; [`location_of`] takes a diagnostic's file, line and
//! column from there. It is the one place a text form is read back; typed
//! locations in `KernelRanges` would remove it.

use coarsen::ir::{DiagKind, Program};
use ranges_format::{ArrayStatus, Count, KernelRanges, ParamSource, Range, RangeFile};
use serde::{Deserialize, Serialize};

/// Version of the JSON layout below; 1 is the first typed report.
pub const SCHEMA_VERSION: u32 = 1;

/// The whole report: one entry per analyzed kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Report {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The source file as given on the command line.
    pub file: String,
    /// The kernels, in the order of the source.
    pub kernels: Vec<KernelReport>,
}

/// One kernel's analysis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelReport {
    /// Kernel function name.
    pub name: String,
    /// NDRange dimensions the analysis assumed.
    pub work_dim: u32,
    /// Whether the kernel may run split across devices.
    pub splittable: bool,
    /// Why not, when `splittable` is false.
    pub reason: Option<String>,
    /// The NDRange dimension split into slices.
    pub split_dim: Option<u32>,
    /// The named quantities of every range and count, with their meaning.
    pub params: Vec<ParamReport>,
    /// One entry per `__global`/`__constant` buffer argument.
    pub arrays: Vec<ArrayReport>,
    /// Conditions checked at launch before the ranges are trusted.
    pub assumptions: Vec<AssumptionReport>,
    /// Refusals, fallbacks and notes, each with its source location when it has one.
    pub diagnostics: Vec<Diagnostic>,
    /// The analysis's notes as plain messages (the same texts as the `note`
    /// diagnostics; kept for readers of the earlier, untyped report).
    pub notes: Vec<String>,
}

/// A named quantity of the expressions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParamReport {
    /// The name used in ranges and counts (`gs0`, `sx_lo`, `width`).
    pub name: String,
    /// Where its value comes from (`get_global_size(0)`, `arg 3`, ...).
    pub source: String,
}

/// One buffer argument's footprint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArrayReport {
    pub name: String,
    pub arg_index: u32,
    /// `r`, `w` or `rw`.
    pub mode: String,
    /// `bounded` or `whole`.
    pub status: String,
    /// Why the array is transferred whole.
    pub reason: Option<String>,
    pub elem_type: String,
    /// Element size in bytes (0 when unknown).
    pub elem_size: u32,
    /// Footprint of the whole NDRange (element indices, inclusive).
    pub total: Option<RangeReport>,
    /// Footprint of the slice `[sx_lo, sx_hi)`.
    pub slice: Option<RangeReport>,
    /// The read part of the slice's footprint.
    pub read_slice: Option<RangeReport>,
    /// The written part of the slice's footprint.
    pub write_slice: Option<RangeReport>,
    /// Per delinearized dimension, for arrays of two or more.
    pub boxes: Option<BoxesReport>,
    /// Distinct elements the whole NDRange touches.
    pub count_total: Option<CountReport>,
    /// Distinct elements a slice touches.
    pub count_slice: Option<CountReport>,
    /// The parametric vertices of a slice's footprint (PolyLib), per dimension.
    pub vertices_slice: Option<Vec<VertexReport>>,
    /// The write verdict, for written arrays.
    pub write: Option<WriteReport>,
}

/// Inclusive bounds: each as the range file holds it (a piecewise
/// quasi-affine expression in isl syntax, `lower`, `upper`) and as typed
/// fields in plain arithmetic (`lower_bound`, `upper_bound`), what the
/// human report prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RangeReport {
    pub lower: String,
    pub upper: String,
    pub lower_bound: BoundReport,
    pub upper_bound: BoundReport,
}

/// One bound as typed fields, its values arithmetic over the parameters
/// (`gs0 + go0 - 1`), without isl's syntax.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoundReport {
    /// How the bound is taken from `values`: `value` (the one value),
    /// `min` or `max` (the least or the greatest of them, wherever the
    /// bound is defined: proved, never guessed), `cases` (each value where
    /// its condition in `conditions` holds), `empty` (defined nowhere) or
    /// `text` (a bound clpart does not read: see `lower`/`upper`).
    pub form: String,
    pub values: Vec<String>,
    /// For `cases`, the condition of each value, in order (empty: always);
    /// else empty.
    pub conditions: Vec<String>,
}

impl BoundReport {
    fn of(text: &str, upper: bool) -> BoundReport {
        use partitioner::report::BoundForm;
        let (form, values, conditions) = match partitioner::report::bound_form(text, upper) {
            BoundForm::Text(_) => ("text", Vec::new(), Vec::new()),
            BoundForm::Empty => ("empty", Vec::new(), Vec::new()),
            BoundForm::Value(v) => ("value", vec![v], Vec::new()),
            BoundForm::Min(vs) => ("min", vs, Vec::new()),
            BoundForm::Max(vs) => ("max", vs, Vec::new()),
            BoundForm::Cases(cs) => {
                let (vs, conds) = cs.into_iter().unzip();
                ("cases", vs, conds)
            }
        };
        BoundReport {
            form: form.to_string(),
            values,
            conditions,
        }
    }
}

/// A slice's footprint per delinearized dimension, outermost first (for a
/// 1-D array only read, its one dimension with the runs as `read_parts`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoxesReport {
    /// Stride of each dimension (expression text); the last is `1`.
    pub strides: Vec<String>,
    pub read: Option<Vec<RangeReport>>,
    pub write: Option<Vec<RangeReport>>,
    /// The writes fill the write box.
    pub write_exact: bool,
    /// The read footprint as a union of boxes, each per
    /// dimension like `read`; empty when `read` is the one part.
    pub read_parts: Vec<Vec<RangeReport>>,
}

/// An Ehrhart count: the sum over `terms` of the value of the first chamber
/// whose domain holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CountReport {
    pub terms: Vec<Vec<ChamberReport>>,
}

/// A parametric vertex: its coordinates (affine in the parameters, rational
/// coefficients) and where it exists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VertexReport {
    pub coords: Vec<String>,
    pub domain: String,
}

/// A quasi-polynomial and its validity domain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChamberReport {
    pub domain: String,
    pub value: String,
}

/// What the analysis proved about an array's writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteReport {
    pub disjoint_across_slices: bool,
    pub fills_hull: bool,
}

/// A launch-time assumption.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssumptionReport {
    pub description: String,
    /// isl condition text over the parameters.
    pub condition: String,
}

/// What a diagnostic is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiagnosticKind {
    /// The kernel is not split: one of the reasons.
    NotSplittable,
    /// An array falls back to being transferred whole.
    WholeArray,
    /// A write is a may-write: merged element-wise, or the kernel not split.
    MayWrite,
    /// An access is over-approximated (the range is larger than needed).
    OverApproximated,
    /// An Ehrhart count is missing.
    NoCount,
    /// Any other note of the analysis.
    Note,
    /// A construct clpart does not support (from the parser).
    Unsupported,
    /// A clang error.
    Error,
    /// A clang warning.
    Warning,
}

/// One refusal, fallback or note with its location.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Diagnostic {
    pub kind: DiagnosticKind,
    /// End-user message (one line).
    pub message: String,
    /// The array it is about, if any.
    pub array: Option<String>,
    /// Source location (1-based line and column), when the message has one.
    pub file: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
}

impl From<&Range> for RangeReport {
    fn from(r: &Range) -> Self {
        RangeReport {
            lower: r.lower.clone(),
            upper: r.upper.clone(),
            lower_bound: BoundReport::of(&r.lower, false),
            upper_bound: BoundReport::of(&r.upper, true),
        }
    }
}

impl From<&Count> for CountReport {
    fn from(c: &Count) -> Self {
        CountReport {
            terms: c
                .terms
                .iter()
                .map(|t| {
                    t.iter()
                        .map(|ch| ChamberReport {
                            domain: ch.domain.clone(),
                            value: ch.value.clone(),
                        })
                        .collect()
                })
                .collect(),
        }
    }
}

/// What a parameter stands for, in words (the report's legend uses the same).
pub fn param_meaning(k: &KernelRanges, source: ParamSource) -> String {
    match source {
        ParamSource::ScalarArg { arg_index } => {
            match k.args.iter().find(|a| a.index == arg_index) {
                Some(a) => format!(
                    "kernel argument {} '{}' ({})",
                    arg_index, a.name, a.elem_type
                ),
                None => format!("kernel argument {arg_index}"),
            }
        }
        ParamSource::StructMember { .. } => {
            partitioner::report::member_meaning(k, source).unwrap_or_default()
        }
        other => other.to_string(),
    }
}

/// The source location a message names: the last `(FILE:LINE:COL)` in it,
/// else the last bare `FILE:LINE:COL` (the analysis writes the access's own
/// location last, in parentheses, after any location it cites).
pub fn location_of(message: &str) -> Option<(String, u32, u32)> {
    let b = message.as_bytes();
    let mut found: Vec<(String, u32, u32, bool)> = Vec::new();
    let digits = |mut i: usize| {
        let s = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        (i > s).then(|| (message[s..i].parse::<u32>().ok(), i))
    };
    for (i, _) in message.match_indices(':') {
        let Some((Some(line), j)) = digits(i + 1) else {
            continue;
        };
        if j >= b.len() || b[j] != b':' {
            continue;
        }
        let Some((Some(col), end)) = digits(j + 1) else {
            continue;
        };
        let start = message[..i]
            .rfind([' ', '(', '\'', '"'])
            .map_or(0, |p| p + 1);
        let file = &message[start..i];
        if file.is_empty() || file.contains(':') {
            continue;
        }
        let paren = start > 0 && b[start - 1] == b'(' && end < b.len() && b[end] == b')';
        found.push((file.to_string(), line, col, paren));
    }
    let pick = found.iter().rev().find(|f| f.3).or(found.last())?;
    Some((pick.0.clone(), pick.1, pick.2))
}

/// The array a message is about: `array 'NAME'` at its start.
fn array_of(message: &str) -> Option<String> {
    let rest = message.strip_prefix("array '")?;
    Some(rest[..rest.find('\'')?].to_string())
}

fn diagnostic(kind: DiagnosticKind, message: String, array: Option<String>) -> Diagnostic {
    let loc = location_of(&message);
    Diagnostic {
        kind,
        array,
        file: loc.as_ref().map(|l| l.0.clone()),
        line: loc.as_ref().map(|l| l.1),
        column: loc.as_ref().map(|l| l.2),
        message,
    }
}

/// The kind of one of the analysis's notes.
fn note_kind(note: &str) -> DiagnosticKind {
    if note.contains("is a may-write") {
        DiagnosticKind::MayWrite
    } else if note.contains("no count of") {
        DiagnosticKind::NoCount
    } else if note.contains("over-approximated") {
        DiagnosticKind::OverApproximated
    } else {
        DiagnosticKind::Note
    }
}

/// The diagnostics of one kernel: the parser's for its function, the
/// reasons it is not split, the arrays transferred whole, the notes.
pub fn diagnostics(k: &KernelRanges, program: Option<&Program>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if let Some(p) = program {
        for d in p
            .diagnostics
            .iter()
            .filter(|d| d.function.as_deref().is_none_or(|f| f == k.name))
        {
            let kind = match d.kind {
                DiagKind::Error => DiagnosticKind::Error,
                DiagKind::Warning => DiagnosticKind::Warning,
                DiagKind::Unsupported => DiagnosticKind::Unsupported,
            };
            out.push(Diagnostic {
                kind,
                message: d.message.clone(),
                array: None,
                file: Some(d.file.clone()),
                line: Some(d.span.line),
                column: Some(d.span.col),
            });
        }
    }
    if let Some(r) = &k.reason {
        for part in r.split("; ") {
            out.push(diagnostic(
                DiagnosticKind::NotSplittable,
                part.to_string(),
                array_of(part),
            ));
        }
    }
    for a in &k.arrays {
        if let ArrayStatus::Whole { reason } = &a.status {
            out.push(diagnostic(
                DiagnosticKind::WholeArray,
                format!("array '{}': {reason}; whole array is transferred", a.name),
                Some(a.name.clone()),
            ));
        }
    }
    for n in &k.diagnostics {
        out.push(diagnostic(note_kind(n), n.clone(), array_of(n)));
    }
    out
}

/// One kernel's report.
pub fn kernel_report(k: &KernelRanges, program: Option<&Program>) -> KernelReport {
    KernelReport {
        name: k.name.clone(),
        work_dim: k.work_dim,
        splittable: k.splittable,
        reason: k.reason.clone(),
        split_dim: k.split_dim,
        params: k
            .params
            .iter()
            .map(|p| ParamReport {
                name: p.name.clone(),
                source: param_meaning(k, p.source),
            })
            .collect(),
        arrays: k
            .arrays
            .iter()
            .map(|a| {
                let (status, reason) = match &a.status {
                    ArrayStatus::Bounded => ("bounded", None),
                    ArrayStatus::Whole { reason } => ("whole", Some(reason.clone())),
                };
                ArrayReport {
                    name: a.name.clone(),
                    arg_index: a.arg_index,
                    mode: a.mode.as_str().to_string(),
                    status: status.to_string(),
                    reason,
                    elem_type: a.elem_type.clone(),
                    elem_size: a.elem_size,
                    total: a.total.as_ref().map(Into::into),
                    slice: a.slice.as_ref().map(Into::into),
                    read_slice: a.read_slice.as_ref().map(Into::into),
                    write_slice: a.write_slice.as_ref().map(Into::into),
                    boxes: a.boxes.as_ref().map(|b| BoxesReport {
                        strides: b.strides.clone(),
                        read: b.read.as_ref().map(|v| v.iter().map(Into::into).collect()),
                        write: b.write.as_ref().map(|v| v.iter().map(Into::into).collect()),
                        write_exact: b.write_exact,
                        read_parts: b
                            .read_parts
                            .iter()
                            .map(|p| p.iter().map(Into::into).collect())
                            .collect(),
                    }),
                    count_total: a.count_total.as_ref().map(Into::into),
                    count_slice: a.count_slice.as_ref().map(Into::into),
                    vertices_slice: a.vertices_slice.as_ref().map(|vs| {
                        vs.iter()
                            .map(|v| VertexReport {
                                coords: v.coords.clone(),
                                domain: v.domain.clone(),
                            })
                            .collect()
                    }),
                    write: a.write.as_ref().map(|w| WriteReport {
                        disjoint_across_slices: w.disjoint_across_slices,
                        fills_hull: w.fills_hull,
                    }),
                }
            })
            .collect(),
        assumptions: k
            .assumptions
            .iter()
            .map(|a| AssumptionReport {
                description: a.description.clone(),
                condition: a.condition.clone(),
            })
            .collect(),
        diagnostics: diagnostics(k, program),
        notes: k.diagnostics.clone(),
    }
}

/// The report of a range file (`file` as the user named it).
pub fn report(file: &str, rf: &RangeFile, program: Option<&Program>) -> Report {
    Report {
        schema_version: SCHEMA_VERSION,
        file: file.to_string(),
        kernels: rf
            .kernels
            .iter()
            .map(|k| kernel_report(k, program))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_prefer_the_access_in_parentheses() {
        let m = "subscript 'b[i + j]' is not affine: 'j' is modified in the loop at kernels/x.cl:13:5 (kernels/x.cl:14:14)";
        assert_eq!(location_of(m), Some(("kernels/x.cl".into(), 14, 14)));
        let m = "array 'label': write 'label[i]' (k.cl:14:13) is a may-write: condition 'x < lo' at k.cl:13:13 is not an integer comparison";
        assert_eq!(location_of(m), Some(("k.cl".into(), 14, 13)));
        assert_eq!(
            location_of("array 'a': work-groups in different slices may write the same elements"),
            None
        );
        assert_eq!(
            location_of("condition at k.cl:3:7 is odd"),
            Some(("k.cl".into(), 3, 7))
        );
    }
}
