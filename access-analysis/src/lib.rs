//! `access-analysis`: per-array access relations of an OpenCL kernel, in isl.
//!
//! Input: the kernel IR from [`coarsen`]. Output ([`KernelAccesses`]): for every
//! `__global`/`__constant` buffer argument, its reads, must-writes and
//! may-writes as isl maps from work-items to array elements, with the reason
//! and location when an array cannot be bounded (it is then transferred whole).
//! This is thesis section 4.1 (memory access pattern estimation) with the
//! improvements of `design.md`: run-time widths are delinearized or
//! specialized, slice bounds stay out of the analysis, isl work is bounded.
//!
//! # The domain model
//!
//! Every isl object uses the same parameters: `gs_d` (global size), `ls_d`
//! (local size), `go_d` (global offset), `ng_d` (number of work-groups) for each
//! dimension `d < work_dim`, and the integer scalar kernel arguments that appear
//! in a bound, guard or subscript (by name, or `arg_<name>` when the name clashes
//! with a reserved name or an isl keyword). The context holds the thesis's
//! constraints: sizes `>= 1`, offsets `>= 0`, and the affine consequences of
//! `gs_d = ng_d * ls_d` (`gs_d >= ng_d`, `gs_d >= ls_d`; the equality itself
//! when the local size is known).
//!
//! Work-items are identified by their **global ids**: the exported domain is
//! `W[x0, x1, x2]` with `go_d <= x_d < go_d + gs_d` (and `x_d = 0` for
//! `d >= work_dim`). Global ids keep every `get_global_id` subscript affine.
//! Slice bounds are not part of the analysis: a slice of work-groups
//! `[lo, hi)` of dimension `d` is `lo*ls_d <= x_d - go_d < hi*ls_d`, which the
//! consumer adds with the products `lo*ls_d`, `hi*ls_d` as parameters of their
//! own (or as constants when the local size is known).
//!
//! Kernels that use `get_local_id(d)` or `get_group_id(d)` get the extra
//! internal dimensions `l_d`, `g_d` with `0 <= l_d < ls_d`, `0 <= g_d < ng_d`.
//! Their link `x_d = go_d + ls_d*g_d + l_d` is a product of a parameter and a
//! variable, so:
//! - when the local size is known ([`AnalysisOptions::local_size`]) it is a
//!   constant and the link is exact;
//! - otherwise the link is replaced by affine consequences of it
//!   (`l_d <= x_d - go_d`, `g_d <= x_d - go_d - l_d <= gs_d - ls_d`): a sound
//!   over-approximation. Accesses that depend on `l_d`/`g_d` are then larger
//!   than real and writes among them become may-writes; the array notes say so.
//!
//! Products that the NDRange makes affine are rewritten exactly before that:
//! `g_d*ls_d` becomes `x_d - go_d - l_d` and `ng_d*ls_d` becomes `gs_d`.
//!
//! **Soundness** (footprint ⊇ real accesses) is the invariant: every
//! approximation made (dropped guards, dropped loop strides, relaxed links,
//! unknown values) enlarges the modeled sets; a set is reported as a
//! must-write only when it is exact. Values that cannot be modeled at all make
//! the array whole. Signed arithmetic is mathematical (its overflow is
//! undefined); integer conversions and unsigned arithmetic wrap around
//! (`mod 2^n` terms), except a conversion of a value of the NDRange alone
//! that stays in range on ordinary NDRanges (`int base = get_group_id(0) *
//! 16`): it is kept whole under the kernel's launch-time assumption that no
//! work-item's value leaves the type's range ([`KernelAccesses::assumptions`],
//! checked at every launch, every array whole where it fails), exact
//! wherever the assumption holds; likewise an integer scalar argument
//! converted to an unsigned type (`get_global_id(1) * width` with `int
//! width`), assumed not negative, and a sum of products of such values with
//! positive coefficients converted to `int`, assumed in range at the
//! NDRange's largest ids (where such a sum is largest). Negative subscripts
//! are not excluded (the thesis's `index >= 0` is not injected), so
//! footprints hold even for kernels that index below a pointer they
//! advanced.
//!
//! # Linearized subscripts
//!
//! A subscript like `y*width + x` is not affine. It is written as
//! `width·(y) + 1·(x)` and the array is seen as `c[y][x]` with strides
//! `["width", "1"]` ([`Linearization::Delinearized`]); the element index is
//! `sum_k out_k * strides[k]`. The map is exact whatever the values; the
//! assumption `0 <= x < width` (checked at launch, [`Assumption`]) makes the
//! mapping from `[y][x]` to elements injective, which disjointness proofs and
//! exact counts rely on. With the concrete value in
//! [`AnalysisOptions::specialize`] the subscript is affine instead
//! ([`Linearization::Specialized`]).
//!
//! Affine subscripts with literal widths (`b[k*1000 + j]`, `a[2*i + 1]`) are
//! split the same way by their constant strides (boxes for the
//! launcher), when the coefficients above 1 of the domain dimensions nest
//! (each divides the next larger): strides `["1000", "1"]`, with the same
//! assumptions `0 <= c_k < strides[k-1]/strides[k]`. Each term goes to the
//! largest stride dividing its coefficient. The split is kept only when
//! every assumption it needs can hold for some parameter values (a
//! `4*i + j` with `0 <= j < 8` cannot: it stays one-dimensional, as does an
//! array whose model fails with the split).
//!
//! # Minimization
//!
//! As in the thesis, only the essential dimensions are kept: the exported maps
//! project out everything but the global ids (isl `project_out`), then
//! `coalesce` and `remove_redundancies`, and are simplified against the context
//! (`gist_params`): intersect them with [`KernelAccesses::context`] before use.
//!
//! The crate is pure: no I/O, no environment, no printing.

mod analyze;
mod budget;
mod eval;
pub mod isl;
mod poly;
mod reduction;
mod render;

use std::collections::BTreeMap;
use std::fmt;

pub use analyze::{
    analyze_kernel, analyze_kernel_in, analyze_kernel_until, LOCAL_SIZE_UNKNOWN_NOTE,
};
pub use budget::Watchdog;
/// The shared vocabulary, defined once in `ranges-format` (the lowest crate
/// every stage depends on): where a parameter comes from, how an array is
/// accessed, a launch-time assumption (here: what delinearization needs).
pub use ranges_format::{Assumption, Mode, ParamSource};

/// Options of the analysis (hashable: results can be cached by options).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AnalysisOptions {
    /// isl operation limit per array (`isl_ctx_set_max_operations`); hitting it
    /// makes the array whole with a reason. 0 means no limit.
    pub max_operations: u64,
    /// Concrete values to substitute, by scalar argument name (or NDRange
    /// parameter name such as `gs0`). Specialized values are no parameters.
    pub specialize: BTreeMap<String, i64>,
    /// The local (work-group) size, when known: makes `get_local_id`,
    /// `get_group_id` and `get_local_size` exact.
    pub local_size: Option<[i64; 3]>,
    /// Delinearize non-affine linearized subscripts (`y*width + x`).
    pub delinearize: bool,
    /// Wall-clock budget of one kernel's analysis in milliseconds (the
    /// partitioner's work included when it drives the analysis); isl work
    /// still running when it expires is abandoned and the arrays concerned
    /// are whole with the reason. 0 means no budget. The operation limit
    /// stays the deterministic bound; this one catches operations whose
    /// single steps are slow (huge coefficients). The default is
    /// [`DEFAULT_TIME_BUDGET_MS`].
    pub time_budget_ms: u64,
    /// The launch's `work_dim`, when the analysis is for a launch: a kernel
    /// that uses more dimensions is analyzed with as many as the launch has,
    /// the others being OpenCL's values past `get_work_dim()` (one
    /// work-item, at id and offset 0), so that the launch fits its ranges.
    pub work_dim: Option<u32>,
}

/// The default [`AnalysisOptions::time_budget_ms`], a last resort: what
/// bounds an analysis is isl's operation limit
/// ([`AnalysisOptions::max_operations`], per stage), the same on every
/// machine and under any load, so that whether a kernel splits never
/// depends on either. The wall clock only stops a single slow step (huge
/// coefficients), and says so in the reasons ("analysis time budget
/// exceeded"): 10 s in optimized builds, several times what the slowest
/// kernels take on a loaded machine; 120 s in debug builds, which run the
/// same analysis 5-10x slower. The parametric counts and vertex bounds,
/// which only inform, keep a short wall-clock limit of their own (the
/// partitioner's `COUNTS_TIME_MS`).
pub const DEFAULT_TIME_BUDGET_MS: u64 = if cfg!(debug_assertions) {
    120_000
} else {
    10_000
};

impl Default for AnalysisOptions {
    fn default() -> Self {
        AnalysisOptions {
            max_operations: 2_000_000,
            specialize: BTreeMap::new(),
            local_size: None,
            delinearize: true,
            time_budget_ms: DEFAULT_TIME_BUDGET_MS,
            work_dim: None,
        }
    }
}

/// Errors of the analysis (an unanalyzable kernel is not an error: see
/// [`KernelAccesses::analyzable`] and [`ArrayAccesses::whole`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnalysisError {
    #[error("{file}: no kernel named '{name}' (kernels: {available})")]
    UnknownKernel {
        file: String,
        name: String,
        available: String,
    },
    #[error("{file}: kernel '{kernel}': cannot specialize '{name}': not an integer scalar argument or NDRange parameter (valid: {valid})")]
    UnknownParameter {
        file: String,
        kernel: String,
        name: String,
        valid: String,
    },
    #[error("{file}: kernel '{kernel}': invalid local size {value:?}: sizes must be >= 1")]
    InvalidLocalSize {
        file: String,
        kernel: String,
        value: [i64; 3],
    },
}

/// An isl parameter of the kernel's relations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamInfo {
    /// The isl name (`gs0`, `width`, `arg_min`, ...).
    pub name: String,
    pub source: ParamSource,
}

/// How the array's element index was made affine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Linearization {
    /// All subscripts are affine as written; strides `["1"]`.
    Affine,
    /// Linearized subscripts were split into dimensions (see [`ArrayAccesses::strides`]).
    Delinearized,
    /// Subscripts became affine by substituting [`AnalysisOptions::specialize`] values
    /// (and may then be split by constant strides, see [`ArrayAccesses::strides`]).
    Specialized,
}

/// Kind of one access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AccessKind {
    Read,
    /// A write that happens exactly as modeled.
    MustWrite,
    /// A write under conditions that could not be modeled (or over-approximated).
    MayWrite,
}

/// One access of the source, before minimization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    pub kind: AccessKind,
    /// The full relation from the internal domain (global ids, then local and
    /// group ids where used, loop iterators, vector lanes) to the element
    /// (not intersected with the context); for an access that could not be
    /// modeled, the relation from the exported domain to any element.
    pub map: String,
    pub span: coarsen::ir::Span,
    /// Source text of the access, e.g. `c[y * width + x]`.
    pub text: String,
}

/// The accesses of one buffer argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayAccesses {
    pub arg_index: u32,
    /// The argument name; also the tuple name of the isl relations, except
    /// for names that isl reserves (`min`, `mod`, ...) and `W`, which become
    /// `arr_<name>`.
    pub name: String,
    /// Element type as written (`float`, `float4`, `uchar`).
    pub elem_type: String,
    /// Element size in bytes.
    pub elem_size: u32,
    pub is_constant_space: bool,
    pub mode: Mode,
    /// `None` when bounded; otherwise why the whole array must be transferred,
    /// with the source location.
    pub whole: Option<String>,
    /// Element index = `sum_k out_k * strides[k]`; `["1"]` for plain 1-D.
    /// Run-time widths give parameter strides (`["w", "1"]`), literal ones
    /// constant strides (`["1000", "1"]`).
    pub strides: Vec<String>,
    pub linearization: Linearization,
    /// `[params] -> { W[x0, x1, x2] -> name[...] : ... }`, valid within the
    /// kernel context. When the array is whole and some read could not be
    /// modeled, this relates every work-item to every element.
    pub reads: String,
    /// Writes that certainly happen (an under-approximation; exact parts only).
    pub must_writes: String,
    /// All writes that may happen, must-writes included. When the array is
    /// whole and some write could not be modeled, every element.
    pub may_writes: String,
    pub accesses: Vec<Access>,
    pub assumptions: Vec<Assumption>,
    pub notes: Vec<String>,
    /// How devices' copies merge, for an array the kernel updates only
    /// through atomics of one family whose returned values are unused
    /// (see `reduction.rs`); `None` otherwise.
    pub reduction: Option<ranges_format::Reduction>,
}

/// The analysis result of one kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelAccesses {
    pub kernel: String,
    pub file: String,
    /// 1 + the highest constant dimension given to a work-item builtin (min 1).
    pub work_dim: u32,
    pub params: Vec<ParamInfo>,
    /// isl parameter set: the NDRange context constraints.
    pub context: String,
    /// isl set of the exported work-item domain `W[x0, x1, x2]`.
    pub domain: String,
    /// Buffer arguments in argument order.
    pub arrays: Vec<ArrayAccesses>,
    /// False when the kernel uses constructs outside the supported subset
    /// (every array is then whole).
    pub analyzable: bool,
    /// Why the kernel is not analyzable, with `file:line:col`.
    pub reason: Option<String>,
    /// Global atomic operations, e.g. `atomic_inc on 'bins' (histogram.cl:14:9)`.
    pub global_atomics: Vec<String>,
    pub notes: Vec<String>,
    /// Launch-time assumptions of the whole kernel (`array` is `None`):
    /// integer conversions modelled without wrapping around (see the crate
    /// doc). One that fails at a launch sends every array whole.
    pub assumptions: Vec<Assumption>,
}

impl KernelAccesses {
    /// The array named `name`.
    pub fn array(&self, name: &str) -> Option<&ArrayAccesses> {
        self.arrays.iter().find(|a| a.name == name)
    }
}

impl fmt::Display for Linearization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Linearization::Affine => "affine",
            Linearization::Delinearized => "delinearized",
            Linearization::Specialized => "specialized",
        })
    }
}

impl fmt::Display for AccessKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AccessKind::Read => "read",
            AccessKind::MustWrite => "must-write",
            AccessKind::MayWrite => "may-write",
        })
    }
}

impl fmt::Display for KernelAccesses {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "kernel {} ({})", self.kernel, self.file)?;
        writeln!(f, "work_dim {}", self.work_dim)?;
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| format!("{} = {}", p.name, p.source))
            .collect();
        writeln!(
            f,
            "params {}",
            if params.is_empty() {
                "(none)".to_string()
            } else {
                params.join(", ")
            }
        )?;
        writeln!(f, "context {}", self.context)?;
        writeln!(f, "domain {}", self.domain)?;
        match &self.reason {
            None => writeln!(f, "analyzable yes")?,
            Some(r) => writeln!(f, "analyzable no: {r}")?,
        }
        for a in &self.global_atomics {
            writeln!(f, "global atomic {a}")?;
        }
        for n in &self.notes {
            writeln!(f, "note {n}")?;
        }
        for a in &self.assumptions {
            writeln!(f, "assumption {}: {}", a.description, a.condition)?;
        }
        for a in &self.arrays {
            writeln!(f)?;
            let space = if a.is_constant_space {
                "__constant"
            } else {
                "__global"
            };
            writeln!(
                f,
                "array {} (arg {}, {} {}, {} bytes) mode {}",
                a.name, a.arg_index, space, a.elem_type, a.elem_size, a.mode
            )?;
            match &a.whole {
                None => writeln!(f, "  status bounded")?,
                Some(r) => writeln!(f, "  status whole: {r}")?,
            }
            if let Some(r) = &a.reduction {
                writeln!(
                    f,
                    "  reduction {} ({})",
                    r.op,
                    if r.signed { "signed" } else { "unsigned" }
                )?;
            }
            writeln!(f, "  strides [{}]", a.strides.join(", "))?;
            writeln!(f, "  linearization {}", a.linearization)?;
            writeln!(f, "  reads {}", a.reads)?;
            writeln!(f, "  must_writes {}", a.must_writes)?;
            writeln!(f, "  may_writes {}", a.may_writes)?;
            for s in &a.assumptions {
                writeln!(f, "  assumption {}: {}", s.description, s.condition)?;
            }
            for n in &a.notes {
                writeln!(f, "  note {n}")?;
            }
            for acc in &a.accesses {
                writeln!(
                    f,
                    "  access {} '{}' at {}:{}: {}",
                    acc.kind, acc.text, acc.span.line, acc.span.col, acc.map
                )?;
            }
        }
        Ok(())
    }
}
