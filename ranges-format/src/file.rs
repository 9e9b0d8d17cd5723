//! The range file types, their RON form, validation and atomic I/O.

use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::checksum::{self, SectionChecksum};
use crate::expr::{BoundCondition, BoundExpr, Condition, PwExpr};
use crate::rational::Rat;
use crate::{ExprError, RangesError};

/// The range file format version this crate writes and the newest it reads.
/// Bump it on any change that an older reader would misread.
///
/// Version 2 added the per-section checksums; version 1 files are refused
/// (regenerate them with `clpart analyze -o`). Version 3 added
/// [`ArrayRanges::boxes`] (per-dimension footprints of delinearized arrays);
/// version 2 files, which have none, still load.
pub const FORMAT_VERSION: u32 = 3;

/// The oldest version this crate reads.
pub const OLDEST_FORMAT_VERSION: u32 = 2;

/// A range file: the analysis of every kernel of one OpenCL program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RangeFile {
    /// [`FORMAT_VERSION`] of the writer.
    pub format_version: u32,
    /// File name of the kernel source, as given to the analysis.
    pub source_name: String,
    /// Lower-case hex SHA-256 of `source` (see [`source_hash`]).
    pub source_hash: String,
    /// The original kernel source text.
    pub source: String,
    /// OpenCL build options the analysis assumed (`-D N=...`).
    pub build_options: Vec<String>,
    /// One entry per analyzed kernel.
    pub kernels: Vec<KernelRanges>,
}

/// The analysis of one kernel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelRanges {
    /// Kernel function name.
    pub name: String,
    /// Number of NDRange dimensions the analysis assumed.
    pub work_dim: u32,
    /// Every parameter that appears in any expression of this kernel.
    pub params: Vec<Param>,
    /// Every kernel argument, in order.
    pub args: Vec<ArgInfo>,
    /// The NDRange dimension split into slices; `None` if not splittable.
    pub split_dim: Option<u32>,
    /// Whether the kernel may run split across devices.
    pub splittable: bool,
    /// Why not, when `splittable` is false (end-user message).
    pub reason: Option<String>,
    /// One entry per global or constant buffer argument.
    pub arrays: Vec<ArrayRanges>,
    /// Conditions to check at launch before trusting the ranges.
    pub assumptions: Vec<Assumption>,
    /// The rewritten kernel that runs one slice.
    pub subkernel: Option<Subkernel>,
    /// Analysis diagnostics (end-user messages with locations).
    pub diagnostics: Vec<String>,
    /// The first construct through which the kernel's results may depend
    /// on its work-group size (a local or group id, a work-group size or
    /// count, a barrier, `__local` memory, a work-group function), with
    /// its location; `None` when there is none. A launch that leaves the
    /// work-group size to the driver (a NULL local size) splits only
    /// without one, since its slices run with sizes clpart chooses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_size_use: Option<String>,
    /// What cut the analysis short, each once: its result may differ when
    /// the kernel is analyzed again (on a less loaded machine, say), so it
    /// is not kept in a cache. Empty when the analysis ran to its end.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cut_short: Vec<CutShort>,
}

/// What cut an analysis short ([`KernelRanges::cut_short`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum CutShort {
    /// The kernel's analysis time budget ran out: what was still being
    /// worked out fell back (an array whole, writes not proved disjoint).
    Budget,
    /// A count or a vertex bound ran past its time limit, or the time for
    /// counts was spent before it began: it is left out.
    CountTime,
    /// A counting process (PolyLib's or barvinok's sandbox) died or failed:
    /// the count is left out.
    CountProcess,
}

/// A named parameter of the expressions and where its value comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Param {
    /// Name as used in the expressions.
    pub name: String,
    /// Source of the value at launch.
    pub source: ParamSource,
}

/// Where a parameter's value comes from at launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ParamSource {
    /// The value of scalar kernel argument `arg_index`.
    ScalarArg {
        /// Argument position.
        arg_index: u32,
    },
    /// An integer member of a struct passed by value as kernel argument
    /// `arg_index`: the `size` bytes at byte `offset` of the
    /// argument's bytes, little-endian, signed or not.
    StructMember {
        /// Argument position.
        arg_index: u32,
        /// Byte offset of the member in the struct.
        offset: u32,
        /// Size of the member in bytes (1, 2, 4 or 8).
        size: u32,
        /// Whether the member's type is signed.
        signed: bool,
    },
    /// `get_global_size(d)`.
    GlobalSize(u32),
    /// `get_local_size(d)`.
    LocalSize(u32),
    /// `get_global_offset(d)`.
    GlobalOffset(u32),
    /// `get_num_groups(d)`.
    NumGroups(u32),
    /// First work-group index of the slice along `split_dim`.
    SliceLo,
    /// One past the last work-group index of the slice along `split_dim`.
    SliceHi,
    /// The slice's first work-item along `split_dim`, relative to the global
    /// offset: `SliceLo * get_local_size(split_dim)`. Footprints are affine in
    /// global ids, so the analysis bounds slices with these.
    SliceLoItem,
    /// One past the slice's last work-item along `split_dim`, relative to the
    /// global offset: `SliceHi * get_local_size(split_dim)`.
    SliceHiItem,
}

/// One kernel argument.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArgInfo {
    /// Argument position.
    pub index: u32,
    /// Parameter name in the source.
    pub name: String,
    /// Scalar or kind of buffer.
    pub kind: ArgKind,
    /// OpenCL element (or scalar) type name, e.g. `float`, `float4`, `uint`.
    pub elem_type: String,
    /// Size of one element in bytes.
    pub elem_size: u32,
    /// A struct element's fields as OpenCL C lays them out, when known
    /// (for a `.npy` file's structured dtype); empty for other types.
    /// Absent from the file when empty, so older files load and keep
    /// their checksums.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<FieldInfo>,
}

/// A field of a struct element type ([`ArgInfo::fields`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldInfo {
    /// The field's name in the source.
    pub name: String,
    /// Its byte offset in the struct.
    pub offset: u32,
    /// Its type name (`float`, `int4`, a struct's name); a fixed-size
    /// array field is its element type with `count` elements.
    pub elem_type: String,
    /// The size of one element of it in bytes.
    pub elem_size: u32,
    /// Elements of a fixed-size array field (1 otherwise).
    pub count: u32,
    /// A struct field's own fields.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<FieldInfo>,
}

/// The kind of a kernel argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ArgKind {
    /// Passed by value.
    Scalar,
    /// `__global` pointer.
    GlobalBuffer,
    /// `__constant` pointer.
    ConstantBuffer,
    /// `__local` pointer (size given at launch).
    LocalBuffer,
}

/// How a kernel uses an array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Mode {
    /// Read only.
    R,
    /// Written only.
    W,
    /// Read and written.
    RW,
}

impl Mode {
    /// `r`, `w` or `rw`, as reports print it.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::R => "r",
            Mode::W => "w",
            Mode::RW => "rw",
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ParamSource {
    /// The value of a [`ParamSource::StructMember`] in the bytes of its
    /// argument; `None` for another source, bytes too short, or an unsigned
    /// 8-byte value past `i64::MAX`.
    pub fn member_value(&self, bytes: &[u8]) -> Option<i64> {
        let ParamSource::StructMember {
            offset,
            size,
            signed,
            ..
        } = *self
        else {
            return None;
        };
        let start = offset as usize;
        let raw = bytes.get(start..start.checked_add(size as usize)?)?;
        let mut le = [0u8; 8];
        le[..raw.len()].copy_from_slice(raw);
        let v = u64::from_le_bytes(le);
        let bits = 8 * size;
        if signed && bits < 64 && v >> (bits - 1) & 1 == 1 {
            // sign-extended
            Some((v | !0u64 << bits) as i64)
        } else {
            i64::try_from(v).ok()
        }
    }
}

impl std::fmt::Display for ParamSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamSource::ScalarArg { arg_index } => write!(f, "arg {arg_index}"),
            ParamSource::StructMember {
                arg_index,
                offset,
                size,
                signed,
            } => write!(
                f,
                "arg {arg_index}, {} {size}-byte member at byte {offset}",
                if *signed { "signed" } else { "unsigned" }
            ),
            ParamSource::GlobalSize(d) => write!(f, "get_global_size({d})"),
            ParamSource::LocalSize(d) => write!(f, "get_local_size({d})"),
            ParamSource::GlobalOffset(d) => write!(f, "get_global_offset({d})"),
            ParamSource::NumGroups(d) => write!(f, "get_num_groups({d})"),
            ParamSource::SliceLo => f.write_str("slice lo (work-group)"),
            ParamSource::SliceHi => f.write_str("slice hi (work-group)"),
            ParamSource::SliceLoItem => f.write_str("slice lo (work-item)"),
            ParamSource::SliceHiItem => f.write_str("slice hi (work-item)"),
        }
    }
}

/// Whether an array's footprint is bounded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ArrayStatus {
    /// The ranges below hold.
    Bounded,
    /// The whole array is transferred.
    Whole {
        /// End-user reason with location.
        reason: String,
    },
}

/// Inclusive element-index bounds, each a piecewise quasi-affine expression
/// text (see [`PwExpr`]) over the kernel's parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Range {
    /// Least element index touched.
    pub lower: String,
    /// Greatest element index touched.
    pub upper: String,
}

/// The footprint of one global or constant buffer argument.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArrayRanges {
    /// Argument position.
    pub arg_index: u32,
    /// Argument name.
    pub name: String,
    /// OpenCL element type name.
    pub elem_type: String,
    /// Element size in bytes.
    pub elem_size: u32,
    /// Read, written or both.
    pub mode: Mode,
    /// Bounded, or whole with the reason.
    pub status: ArrayStatus,
    /// Footprint of the whole NDRange.
    pub total: Option<Range>,
    /// Footprint of the slice `[SliceLo, SliceHi)`.
    pub slice: Option<Range>,
    /// The read part of the slice's footprint.
    pub read_slice: Option<Range>,
    /// The written part of the slice's footprint.
    pub write_slice: Option<Range>,
    /// Distinct elements touched by the whole NDRange (Ehrhart).
    pub count_total: Option<Count>,
    /// Distinct elements touched by a slice (Ehrhart).
    pub count_slice: Option<Count>,
    /// Write-overlap verdict, for written arrays.
    pub write: Option<WriteVerdict>,
    /// The slice's footprint per delinearized dimension, for arrays with at
    /// least two (`c[y*w + x]` seen as `c[y][x]`), and for a 1-D array only
    /// read whose slice reads a few runs apart (as read parts of
    /// one dimension); `None` for other 1-D arrays, arrays transferred
    /// whole, and files of format version 2. Absent from
    /// the file when `None`, so a version 2 array section keeps its checksum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boxes: Option<Boxes>,
    /// The parametric vertices of a slice's footprint (thesis 4.1: PolyLib's
    /// `Polyhedron2Param_Vertices`), coordinates per dimension of the array
    /// (delinearized where the array has [`Boxes`]); `None` where they were
    /// not made (the range file of a launch, a footprint PolyLib does not
    /// take, files written before vertices were recorded). Absent from the
    /// file when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vertices_slice: Option<Vec<Vertex>>,
    /// For an array that the kernel only updates through global atomics of
    /// one family whose returned values are unused: how the devices'
    /// copies merge (each device updates a whole copy that starts from the
    /// original values). Such an array is transferred whole. Absent from
    /// the file when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduction: Option<Reduction>,
    /// Written where slices' writes cannot be proved disjoint (an indirect
    /// subscript, one element written by every slice), and read, if at
    /// all, only within [`ArrayRanges::read_slice`]: the launcher merges
    /// the devices' copies element by element and checks at run time that
    /// no two devices wrote different values to one element and that no
    /// device changed an element another one read; else it discards the
    /// launch's results and runs it unsplit. Absent from the file when
    /// false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub checked: bool,
}

/// How the copies of an array updated only by atomics merge: the result
/// is what one device gives, whatever the order of the updates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Reduction {
    /// The atomics' family.
    pub op: ReduceOp,
    /// Whether the elements are signed integers (`int`, `long`): min and
    /// max compare them as such.
    pub signed: bool,
}

/// A family of atomic updates that merge as a reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ReduceOp {
    /// `atomic_add`, `atomic_sub`, `atomic_inc`, `atomic_dec`: the
    /// original plus each device's change, wrapping.
    Sum,
    /// `atomic_min`: the least of the devices' copies.
    Min,
    /// `atomic_max`: the greatest of the devices' copies.
    Max,
    /// `atomic_and`: the AND of the devices' copies.
    And,
    /// `atomic_or`: the OR of the devices' copies.
    Or,
    /// `atomic_xor`: the original XOR each device's change.
    Xor,
}

impl ReduceOp {
    /// The family of an atomic builtin (`atomic_inc`, `atom_add`), `None`
    /// for one that does not merge as a reduction (`atomic_xchg`,
    /// `atomic_cmpxchg`) or is no atomic.
    pub fn of_builtin(name: &str) -> Option<ReduceOp> {
        let op = name
            .strip_prefix("atomic_")
            .or_else(|| name.strip_prefix("atom_"))?;
        Some(match op {
            "add" | "sub" | "inc" | "dec" => ReduceOp::Sum,
            "min" => ReduceOp::Min,
            "max" => ReduceOp::Max,
            "and" => ReduceOp::And,
            "or" => ReduceOp::Or,
            "xor" => ReduceOp::Xor,
            _ => return None,
        })
    }

    /// How reports name the merge: `sum`, `min`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
            ReduceOp::And => "and",
            ReduceOp::Or => "or",
            ReduceOp::Xor => "xor",
        }
    }
}

impl std::fmt::Display for ReduceOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One parametric vertex of a footprint: where it is, as expressions of the
/// parameters, and where it exists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vertex {
    /// Per dimension, an affine expression of the parameters with rational
    /// coefficients (`go1 + sx_lo`, `1/2 * n - 1/2`).
    pub coords: Vec<String>,
    /// Where the vertex exists, as for [`Chamber::domain`] (`true` when always).
    pub domain: String,
}

/// The footprint of a slice as a box per delinearized dimension: element
/// `sum_k c_k * strides[k]` with `c_k` in `[lower_k, upper_k]` for every `k`.
/// The linear hull of a box (`sum_k strides[k] * lower_k` to
/// `sum_k strides[k] * upper_k`) is the array's 1-D range of the same
/// footprint ([`ArrayRanges::read_slice`], [`ArrayRanges::write_slice`]);
/// the box is contained in it, and can be much smaller (a column walk reads
/// one column of every row, not every element between the first and the
/// last). The launch-time assumptions of the array (`0 <= c_k < strides[k-1] /
/// strides[k]` for `k >= 1`) make the decomposition of an element index into
/// its `c_k` unique.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Boxes {
    /// The stride of each delinearized dimension, outermost first, as
    /// expression text over the kernel's parameters (see [`PwExpr`]), e.g.
    /// `["nx*ny", "nx", "1"]`, or integer literals for literal widths
    /// (`["1000", "1"]`); the last is `"1"`. At least two, except for a
    /// 1-D array only read that has [`Boxes::read_parts`] (its runs):
    /// `["1"]`.
    pub strides: Vec<String>,
    /// Per dimension, the inclusive bounds of the components of the
    /// elements a slice reads (`[SliceLo, SliceHi)`); `None` when the array
    /// is not read or the bounds could not be had.
    pub read: Option<Vec<Range>>,
    /// Per dimension, the inclusive bounds of the components of the
    /// elements a slice writes; `None` when the array is not written or the
    /// bounds could not be had.
    pub write: Option<Vec<Range>>,
    /// Every write is a must-write and a slice writes every element of its
    /// write box, proved for all parameter values: copying the write box
    /// back from a device never overwrites an element it did not write.
    pub write_exact: bool,
    /// The read footprint as a union of boxes (issues 12 and 13), each in
    /// the form of [`Boxes::read`] and inside it: one box per group of read
    /// accesses, where two accesses' boxes share a group when, in every
    /// dimension, their intervals overlap or touch for all parameter values
    /// (their hull then adds no row, column or plane lying between them,
    /// only corners). Empty when the reads form one group (the read box is
    /// then the union) or the parts could not be had. A slice needs only the
    /// union of the parts, and the guard checks every read against it.
    /// Absent from the file when empty, so older files load and keep their
    /// checksums.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_parts: Vec<Vec<Range>>,
}

/// An Ehrhart count: the sum over `terms` of the value of the first chamber
/// whose domain holds; a term with no matching chamber contributes 0.
///
/// A count made with some parameters fixed at a launch's values (where no
/// parametric count could be had, or for `clpart run`'s report) names them
/// in `at`: it holds where they have those values only, and evaluating it
/// anywhere else is an error ([`ExprError::OutsidePoint`]), never 0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Count {
    /// Terms of the sum, each a list of chambers.
    pub terms: Vec<Vec<Chamber>>,
    /// The parameters fixed when the count was made, with their values;
    /// empty for a parametric count. Absent from the file when empty, so
    /// older files load and keep their checksums.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub at: Vec<(String, i64)>,
}

impl Count {
    /// A parametric count of these terms.
    pub fn parametric(terms: Vec<Vec<Chamber>>) -> Count {
        Count {
            terms,
            at: Vec::new(),
        }
    }
}

/// One validity domain of a quasi-polynomial.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chamber {
    /// Condition text over the parameters (see [`Condition`]).
    pub domain: String,
    /// Quasi-polynomial text (see [`PwExpr`]).
    pub value: String,
}

/// What the analysis proved about an array's writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteVerdict {
    /// No element is written by two disjoint slices.
    pub disjoint_across_slices: bool,
    /// A slice writes every element of its write hull.
    pub fills_hull: bool,
    /// The written elements as runs (free text), when not the whole hull.
    pub runs: Option<String>,
    /// Distinct elements a slice writes (Ehrhart count), when every write is
    /// a must-write: at launch, a count equal to the write range's length
    /// means the writes fill it even where `fills_hull` could not be proved
    /// for all parameter values.
    #[serde(default)]
    pub written_count: Option<Count>,
}

/// A condition the launcher checks before trusting the ranges.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assumption {
    /// End-user description.
    pub description: String,
    /// Condition text over the parameters (see [`Condition`]).
    pub condition: String,
    /// The argument index of the array whose model needs it (its
    /// delinearization), when one array's does: where it fails at launch,
    /// that array alone is transferred whole (a written one runs the kernel
    /// unsplit). Absent from the file when `None` (a failure then sends
    /// every array whole), so older files load and keep their checksums.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array: Option<u32>,
}

/// The rewritten kernel that runs one slice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subkernel {
    /// Kernel function name.
    pub name: String,
    /// OpenCL C source.
    pub source: String,
    /// Arguments appended after the original ones, in order.
    pub extra_args: Vec<ExtraArg>,
    /// The run-time guard: the buffer arguments whose every access the
    /// subkernel checks against its window, in flag-slot order (slot `i` of
    /// the [`ExtraArgMeaning::GuardFlags`] buffer belongs to `guarded[i]`).
    #[serde(default)]
    pub guarded: Vec<u32>,
    /// Buffer arguments the guard cannot check (a use of the pointer other
    /// than a subscript, `*p`, `*(p + k)`, `vloadN`/`vstoreN`, a helper
    /// call it clones or a subscript of a view through a cast), each with
    /// the reason and location. With the guard on, such a kernel runs unsplit.
    #[serde(default)]
    pub unguarded: Vec<(u32, String)>,
    /// Guarded buffer arguments that the kernel views through elements `m`
    /// times wider (`(__global float4 *)x` over a `float` buffer), as
    /// `(argument, m)`: the device buffer of such an argument must start at
    /// a host element that is a multiple of `m`, or the guard refuses every
    /// access through the view. Absent from the file when empty, so older
    /// files load and keep their checksums.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aligned: Vec<(u32, u32)>,
}

/// An argument the subkernel takes in addition to the original ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtraArg {
    /// Parameter name in the subkernel source.
    pub name: String,
    /// What value to pass.
    pub meaning: ExtraArgMeaning,
}

/// The value of an [`ExtraArg`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExtraArgMeaning {
    /// First element index of the device buffer of argument `arg_index`.
    ArrayBase {
        /// Argument position of the array.
        arg_index: u32,
    },
    /// First work-group index of the slice in dimension `d`.
    GroupIdBase(u32),
    /// The unsplit `get_global_size(d)`.
    GlobalSize(u32),
    /// The unsplit `get_num_groups(d)`.
    NumGroups(u32),
    /// The unsplit `get_global_offset(d)`.
    GlobalOffset(u32),
    /// Guard window: first element index (relative to the device buffer)
    /// the subkernel may read from argument `arg_index`.
    ReadLo {
        /// Argument position of the array.
        arg_index: u32,
    },
    /// Guard window: one past the last element index it may read.
    ReadHi {
        /// Argument position of the array.
        arg_index: u32,
    },
    /// Guard window: first element index it may write.
    WriteLo {
        /// Argument position of the array.
        arg_index: u32,
    },
    /// Guard window: one past the last element index it may write.
    WriteHi {
        /// Argument position of the array.
        arg_index: u32,
    },
    /// Elements of the device buffer of `arg_index` before its sink (the
    /// guard redirects a refused access to the sink, past this extent).
    Extent {
        /// Argument position of the array.
        arg_index: u32,
    },
    /// The guard's flag buffer (`__global int *`, one `int` per entry of
    /// [`Subkernel::guarded`]); not a `long`.
    GuardFlags,
    /// Box check of argument `arg_index` (an array with
    /// [`ArrayRanges::boxes`]), delinearized dimension `dim >= 1`: the value
    /// of that dimension's stride, or 0 when the launch checks no box for
    /// this array (then only the 1-D window is checked, and every `Box*`
    /// value of the array is ignored). Dimension 0 has no box arguments: the
    /// 1-D window, set to the linear hull of the box, bounds it.
    BoxStride {
        /// Argument position of the array.
        arg_index: u32,
        /// Delinearized dimension, at least 1.
        dim: u32,
    },
    /// Box check: the extent of dimension `dim`, `stride[dim - 1] /
    /// stride[dim]`; the component of absolute element index `i` in that
    /// dimension is `(i / stride[dim]) % extent`.
    BoxExtent {
        /// Argument position of the array.
        arg_index: u32,
        /// Delinearized dimension, at least 1.
        dim: u32,
    },
    /// Box check: the smallest component in dimension `dim` the subkernel
    /// may read.
    BoxReadLo {
        /// Argument position of the array.
        arg_index: u32,
        /// Delinearized dimension, at least 1.
        dim: u32,
    },
    /// Box check: the largest component (inclusive) in dimension `dim` the
    /// subkernel may read.
    BoxReadHi {
        /// Argument position of the array.
        arg_index: u32,
        /// Delinearized dimension, at least 1.
        dim: u32,
    },
    /// Box check: the smallest component in dimension `dim` the subkernel
    /// may write.
    BoxWriteLo {
        /// Argument position of the array.
        arg_index: u32,
        /// Delinearized dimension, at least 1.
        dim: u32,
    },
    /// Box check: the largest component (inclusive) in dimension `dim` the
    /// subkernel may write.
    BoxWriteHi {
        /// Argument position of the array.
        arg_index: u32,
        /// Delinearized dimension, at least 1.
        dim: u32,
    },
    /// Read-part check of argument `arg_index` (an array with
    /// [`Boxes::read_parts`]), part `part`: for `dim` 0 the first element
    /// index of the part's linear hull, relative to the device buffer (as
    /// [`ExtraArgMeaning::ReadLo`]); for `dim >= 1` the smallest component
    /// in that dimension. A read must lie in some part (when the launch
    /// checks boxes); a part no read of the launch may use admits nothing.
    BoxPartLo {
        /// Argument position of the array.
        arg_index: u32,
        /// Index into [`Boxes::read_parts`].
        part: u32,
        /// Delinearized dimension.
        dim: u32,
    },
    /// Read-part check: for `dim` 0 one past the last element index of the
    /// part's linear hull, relative to the device buffer (as
    /// [`ExtraArgMeaning::ReadHi`]); for `dim >= 1` the largest component
    /// (inclusive).
    BoxPartHi {
        /// Argument position of the array.
        arg_index: u32,
        /// Index into [`Boxes::read_parts`].
        part: u32,
        /// Delinearized dimension.
        dim: u32,
    },
}

impl ExtraArgMeaning {
    /// `(arg_index, dim)` of a box-check argument (`Box*`), `None` for the
    /// others.
    pub fn box_arg(&self) -> Option<(u32, u32)> {
        match *self {
            ExtraArgMeaning::BoxStride { arg_index, dim }
            | ExtraArgMeaning::BoxExtent { arg_index, dim }
            | ExtraArgMeaning::BoxReadLo { arg_index, dim }
            | ExtraArgMeaning::BoxReadHi { arg_index, dim }
            | ExtraArgMeaning::BoxWriteLo { arg_index, dim }
            | ExtraArgMeaning::BoxWriteHi { arg_index, dim } => Some((arg_index, dim)),
            _ => None,
        }
    }

    /// `(arg_index, part, dim)` of a read-part argument (`BoxPart*`),
    /// `None` for the others.
    pub fn part_arg(&self) -> Option<(u32, u32, u32)> {
        match *self {
            ExtraArgMeaning::BoxPartLo {
                arg_index,
                part,
                dim,
            }
            | ExtraArgMeaning::BoxPartHi {
                arg_index,
                part,
                dim,
            } => Some((arg_index, part, dim)),
            _ => None,
        }
    }
}

/// Lower-case hex SHA-256 of a kernel source, as stored in
/// [`RangeFile::source_hash`].
pub fn source_hash(source: &str) -> String {
    let digest = Sha256::digest(source.as_bytes());
    let mut s = String::with_capacity(64);
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Only the version, read before the rest so that a newer file is reported
/// as newer rather than as corrupt.
#[derive(Deserialize)]
#[serde(rename = "RangeFile")]
struct VersionPeek {
    #[serde(default, deserialize_with = "some_u32")]
    format_version: Option<u32>,
}

fn some_u32<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    u32::deserialize(d).map(Some)
}

/// The file as written: the fields of [`RangeFile`] plus the checksums,
/// last.
#[derive(Serialize)]
#[serde(rename = "RangeFile")]
struct OnDiskRef<'a> {
    format_version: u32,
    source_name: &'a str,
    source_hash: &'a str,
    source: &'a str,
    build_options: &'a [String],
    kernels: &'a [KernelRanges],
    checksums: Vec<SectionChecksum>,
}

/// The file as read (see [`OnDiskRef`]).
#[derive(Deserialize)]
#[serde(rename = "RangeFile")]
struct OnDisk {
    format_version: u32,
    source_name: String,
    source_hash: String,
    source: String,
    build_options: Vec<String>,
    kernels: Vec<KernelRanges>,
    #[serde(default)]
    checksums: Vec<SectionChecksum>,
}

impl RangeFile {
    /// An empty range file of the current version for `source`.
    pub fn new(source_name: impl Into<String>, source: impl Into<String>) -> RangeFile {
        let source = source.into();
        RangeFile {
            format_version: FORMAT_VERSION,
            source_name: source_name.into(),
            source_hash: source_hash(&source),
            source,
            build_options: Vec::new(),
            kernels: Vec::new(),
        }
    }

    /// The kernel entry named `name`.
    pub fn kernel(&self, name: &str) -> Option<&KernelRanges> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// Pretty RON text, with struct names and unescaped (multi-line)
    /// strings, and the checksum of every section last.
    pub fn to_ron_string(&self) -> Result<String, RangesError> {
        let config = ron::ser::PrettyConfig::new()
            .struct_names(true)
            .escape_strings(false);
        let disk = OnDiskRef {
            format_version: self.format_version,
            source_name: &self.source_name,
            source_hash: &self.source_hash,
            source: &self.source,
            build_options: &self.build_options,
            kernels: &self.kernels,
            checksums: checksum::sections(self)?,
        };
        let mut text =
            ron::ser::to_string_pretty(&disk, config).map_err(|e| RangesError::Serialize {
                message: lower_first(&e.to_string()),
            })?;
        text.push('\n');
        Ok(text)
    }

    /// Parses, validates and verifies a range file text: version first,
    /// then structure, then consistency and every expression (see
    /// [`RangeFile::validate`]), then the checksum of every section.
    pub fn from_ron_str(text: &str) -> Result<RangeFile, RangesError> {
        let (file, checksums) = RangeFile::parse(text)?;
        file.validate()?;
        checksum::verify(&file, &checksums)?;
        Ok(file)
    }

    /// Parses a range file text and verifies its version, structure and
    /// checksums, but not its consistency: for tools that inspect or repair
    /// files. Never launch from the result; use [`RangeFile::from_ron_str`].
    pub fn from_ron_str_unvalidated(text: &str) -> Result<RangeFile, RangesError> {
        let (file, checksums) = RangeFile::parse(text)?;
        checksum::verify(&file, &checksums)?;
        Ok(file)
    }

    fn parse(text: &str) -> Result<(RangeFile, Vec<SectionChecksum>), RangesError> {
        let peek: VersionPeek = ron::from_str(text).map_err(corrupt)?;
        match peek.format_version {
            None => {
                return Err(RangesError::Corrupt {
                    line: 1,
                    col: 1,
                    message: "missing field 'format_version'".into(),
                })
            }
            Some(0) => {
                return Err(RangesError::Corrupt {
                    line: 1,
                    col: 1,
                    message: "format_version 0 is not a valid version".into(),
                })
            }
            Some(v) if v > FORMAT_VERSION => {
                return Err(RangesError::NewerVersion {
                    found: v,
                    supported: FORMAT_VERSION,
                })
            }
            Some(v) if v < OLDEST_FORMAT_VERSION => {
                return Err(RangesError::OlderVersion { found: v })
            }
            Some(_) => {}
        }
        let d: OnDisk = ron::from_str(text).map_err(corrupt)?;
        let file = RangeFile {
            format_version: d.format_version,
            source_name: d.source_name,
            source_hash: d.source_hash,
            source: d.source,
            build_options: d.build_options,
            kernels: d.kernels,
        };
        Ok((file, d.checksums))
    }

    /// Reads and validates the range file at `path`.
    pub fn read(path: impl AsRef<Path>) -> Result<RangeFile, RangesError> {
        let path = path.as_ref();
        let bytes = crate::input::read(path, crate::input::RANGE_FILE).map_err(|error| {
            RangesError::Io {
                op: "read",
                path: path.to_path_buf(),
                error,
            }
        })?;
        let text = std::str::from_utf8(&bytes).map_err(|e| {
            let (line, col) = line_col(&bytes[..e.valid_up_to()]);
            RangesError::Corrupt {
                line,
                col,
                message: "text is not valid utf-8".into(),
            }
        })?;
        RangeFile::from_ron_str(text)
    }

    /// Validates, then writes to a temporary file in the same folder and
    /// renames it over `path`, so that readers see the old file or the new
    /// one, never a partial one (see [`crate::output::write_file`]).
    pub fn write_atomic(&self, path: impl AsRef<Path>) -> Result<(), RangesError> {
        self.validate()?;
        let text = self.to_ron_string()?;
        let path = path.as_ref();
        let io_err = |error: std::io::Error| RangesError::Io {
            op: "write",
            path: path.to_path_buf(),
            error,
        };
        crate::output::write_file(path, |w| w.write_all(text.as_bytes())).map_err(io_err)?;
        Ok(())
    }
}

impl KernelRanges {
    /// The parameter names, in order: the `names` to bind expressions to.
    pub fn param_names(&self) -> Vec<&str> {
        self.params.iter().map(|p| p.name.as_str()).collect()
    }
}

/// A [`Range`] parsed and bound to a value-vector order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundRange {
    /// The bound lower bound.
    pub lower: BoundExpr,
    /// The bound upper bound.
    pub upper: BoundExpr,
}

impl Range {
    /// Parses both bounds and binds them to `names` (see [`PwExpr::bind`]).
    pub fn bind(&self, names: &[&str]) -> Result<BoundRange, ExprError> {
        Ok(BoundRange {
            lower: PwExpr::parse(&self.lower)?.bind(names)?,
            upper: PwExpr::parse(&self.upper)?.bind(names)?,
        })
    }
}

impl BoundRange {
    /// `(lower, upper)`, inclusive; `None` when either bound is undefined
    /// for these values (the footprint is empty). `lower > upper` also means
    /// empty.
    pub fn eval(&self, values: &[i64]) -> Result<Option<(i64, i64)>, ExprError> {
        match (self.lower.eval(values)?, self.upper.eval(values)?) {
            (Some(l), Some(u)) => Ok(Some((l, u))),
            _ => Ok(None),
        }
    }
}

/// A [`Count`] parsed and bound to a value-vector order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundCount {
    terms: Vec<Vec<(BoundCondition, BoundExpr)>>,
    /// [`Count::at`]: the position of each parameter in the value vector,
    /// its name and the value the count was made at.
    at: Vec<(usize, String, i64)>,
}

impl Count {
    /// Parses every chamber and binds it to `names` (see [`PwExpr::bind`]).
    pub fn bind(&self, names: &[&str]) -> Result<BoundCount, ExprError> {
        let terms = self
            .terms
            .iter()
            .map(|term| {
                term.iter()
                    .map(|ch| {
                        Ok((
                            Condition::parse(&ch.domain)?.bind(names)?,
                            PwExpr::parse(&ch.value)?.bind(names)?,
                        ))
                    })
                    .collect::<Result<Vec<_>, ExprError>>()
            })
            .collect::<Result<Vec<_>, ExprError>>()?;
        Ok(BoundCount {
            terms,
            at: bind_point(&self.at, names)?,
        })
    }
}

/// The positions in `names` of a count's point ([`Count::at`]).
pub(crate) fn bind_point(
    at: &[(String, i64)],
    names: &[&str],
) -> Result<Vec<(usize, String, i64)>, ExprError> {
    at.iter()
        .map(|(name, v)| match names.iter().position(|n| n == name) {
            Some(i) => Ok((i, name.clone(), *v)),
            None => Err(ExprError::Unbound {
                name: name.clone(),
                names: names.join(", "),
            }),
        })
        .collect()
}

impl BoundCount {
    /// A count from its bound chambers, per term.
    pub(crate) fn from_terms(
        terms: Vec<Vec<(BoundCondition, BoundExpr)>>,
        at: Vec<(usize, String, i64)>,
    ) -> BoundCount {
        BoundCount { terms, at }
    }

    /// The count for `values`: per term, the value of the first chamber
    /// whose domain holds (a chamber value with no defined piece, or a term
    /// with no matching chamber, contributes 0); the exact sum must be an
    /// integer. A count made at one point is an error anywhere else.
    pub fn eval(&self, values: &[i64]) -> Result<i64, ExprError> {
        for (i, name, at) in &self.at {
            let value = *values.get(*i).ok_or(ExprError::TooFewValues {
                needed: i + 1,
                got: values.len(),
            })?;
            if value != *at {
                return Err(ExprError::OutsidePoint {
                    name: name.clone(),
                    at: *at,
                    value,
                });
            }
        }
        let mut total = Rat::ZERO;
        for term in &self.terms {
            for (domain, value) in term {
                if domain.eval(values)? {
                    if let Some(v) = value.eval_exact(values)? {
                        total = total.add(v)?;
                    }
                    break;
                }
            }
        }
        total.to_i64()
    }
}

/// Evaluates an Ehrhart count with `values[i]` the value of `names[i]`
/// (parses on every call; bind once with [`Count::bind`] to evaluate often).
pub fn eval_count(count: &Count, names: &[&str], values: &[i64]) -> Result<i64, ExprError> {
    count.bind(names)?.eval(values)
}

fn corrupt(e: ron::error::SpannedError) -> RangesError {
    RangesError::Corrupt {
        line: e.span.start.line,
        col: e.span.start.col,
        message: lower_first(&e.code.to_string()),
    }
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f
            .to_lowercase()
            .chain(c)
            .collect::<String>()
            .trim_end_matches('.')
            .to_string(),
        None => String::new(),
    }
}

fn line_col(prefix: &[u8]) -> (usize, usize) {
    let line = 1 + prefix.iter().filter(|&&b| b == b'\n').count();
    let col = 1 + prefix.iter().rev().take_while(|&&b| b != b'\n').count();
    (line, col)
}
