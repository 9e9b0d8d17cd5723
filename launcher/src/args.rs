//! Kernel arguments: `NAME=SPEC` parsing, deterministic generators, host
//! buffers.
//!
//! Spec kinds (see [`ArgSpec`]):
//! - a literal (`1024`, `-3`, `0.5`, `0x10`; `1,2,3,4` for vector scalars),
//!   typed by the argument's element type;
//! - `rand:N[:SEED]`: N elements, floats uniform in [0, 1), integers uniform
//!   in [0, min(N, type max + 1)); splitmix64 seeded with SEED (default 0),
//!   one draw per lane, so the same spec gives the same bytes everywhere;
//! - `zeros:N`; `seq:N` (element i, lane l holds i*lanes + l, integers wrap);
//! - `file:PATH.npy`;
//! - `local:N` for `__local` pointers: N elements of the pointee type.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use ranges_format::{ArgInfo, ArgKind};

use crate::elem::{ElemType, ScalarKind};
use crate::error::{LaunchError, Result};

/// The spec kinds, for error messages.
pub const SPEC_KINDS: &str = "a literal, rand:N[:SEED], zeros:N, seq:N, file:PATH.npy, local:N";

/// One parsed argument spec (the part after `NAME=`).
#[derive(Clone, Debug, PartialEq)]
pub enum ArgSpec {
    /// A scalar literal, typed when it meets its argument.
    Literal(String),
    /// `rand:N[:SEED]`.
    Rand {
        /// Elements.
        n: u64,
        /// splitmix64 seed.
        seed: u64,
    },
    /// `zeros:N`.
    Zeros(u64),
    /// `seq:N`.
    Seq(u64),
    /// `file:PATH.npy`.
    File(PathBuf),
    /// `local:N` (elements of the pointee type).
    Local(u64),
}

impl FromStr for ArgSpec {
    type Err = LaunchError;

    fn from_str(spec: &str) -> Result<ArgSpec> {
        let bad = |message: String| LaunchError::BadSpec {
            spec: spec.to_string(),
            message,
        };
        let Some((kind, rest)) = spec.split_once(':') else {
            if spec.trim().is_empty() {
                return Err(bad(format!("empty spec (valid kinds: {SPEC_KINDS})")));
            }
            return Ok(ArgSpec::Literal(spec.trim().to_string()));
        };
        let count = |text: &str| -> Result<u64> {
            let n: u64 = text
                .trim()
                .replace('_', "")
                .parse()
                .map_err(|_| bad(format!("'{text}' is not an element count")))?;
            if n == 0 {
                return Err(bad("the element count must be at least 1".into()));
            }
            Ok(n)
        };
        match kind {
            "rand" => {
                let (n, seed) = match rest.split_once(':') {
                    Some((n, seed)) => (
                        count(n)?,
                        seed.trim().parse().map_err(|_| {
                            bad(format!("'{seed}' is not a seed (an unsigned integer)"))
                        })?,
                    ),
                    None => (count(rest)?, 0),
                };
                Ok(ArgSpec::Rand { n, seed })
            }
            "zeros" => Ok(ArgSpec::Zeros(count(rest)?)),
            "seq" => Ok(ArgSpec::Seq(count(rest)?)),
            "local" => Ok(ArgSpec::Local(count(rest)?)),
            "file" => {
                if rest.is_empty() {
                    return Err(bad("file: needs a path".into()));
                }
                Ok(ArgSpec::File(PathBuf::from(rest)))
            }
            other => Err(bad(format!(
                "unknown spec kind '{other}' (valid kinds: {SPEC_KINDS})"
            ))),
        }
    }
}

impl fmt::Display for ArgSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgSpec::Literal(s) => f.write_str(s),
            ArgSpec::Rand { n, seed } => write!(f, "rand:{n}:{seed}"),
            ArgSpec::Zeros(n) => write!(f, "zeros:{n}"),
            ArgSpec::Seq(n) => write!(f, "seq:{n}"),
            ArgSpec::File(p) => write!(f, "file:{}", p.display()),
            ArgSpec::Local(n) => write!(f, "local:{n}"),
        }
    }
}

/// Splits `NAME=SPEC` and parses the spec.
pub fn parse_assignment(text: &str) -> Result<(String, ArgSpec)> {
    let Some((name, spec)) = text.split_once('=') else {
        return Err(LaunchError::BadSpec {
            spec: text.to_string(),
            message: "expected NAME=SPEC".into(),
        });
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(LaunchError::BadSpec {
            spec: text.to_string(),
            message: "the argument name is empty (expected NAME=SPEC)".into(),
        });
    }
    Ok((name.to_string(), spec.parse()?))
}

/// A host-side buffer: an element type and its bytes (a whole number of
/// elements, little-endian, as the device sees them).
#[derive(Clone, Debug, PartialEq)]
pub struct HostBuffer {
    elem: ElemType,
    bytes: Vec<u8>,
}

impl HostBuffer {
    /// A buffer of `n` zero elements; an error (not an abort) when the
    /// memory cannot be had.
    pub fn zeros(elem: ElemType, n: u64) -> Result<HostBuffer, String> {
        let len = (n as usize).saturating_mul(elem.size as usize);
        if len == 0 {
            return Ok(HostBuffer { elem, bytes: Vec::new() });
        }
        let layout = std::alloc::Layout::array::<u8>(len).map_err(|e| e.to_string())?;
        // SAFETY: `layout` has a nonzero size. Zeroed pages from the
        // allocator are not touched here, as with `vec![0; len]`, but a
        // failed allocation is an error instead of an abort.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(format!("cannot allocate {len} bytes"));
        }
        // SAFETY: `ptr` was allocated by the global allocator with the layout
        // of `len` bytes, all initialized (zero).
        let bytes = unsafe { Vec::from_raw_parts(ptr, len, len) };
        Ok(HostBuffer { elem, bytes })
    }

    /// Wraps bytes; the length is rounded down to whole elements.
    pub fn from_bytes(elem: ElemType, mut bytes: Vec<u8>) -> HostBuffer {
        let whole = bytes.len() - bytes.len() % elem.size.max(1) as usize;
        bytes.truncate(whole);
        HostBuffer { elem, bytes }
    }

    /// The element type.
    pub fn elem(&self) -> &ElemType {
        &self.elem
    }

    /// Number of elements.
    pub fn len(&self) -> u64 {
        (self.bytes.len() / self.elem.size.max(1) as usize) as u64
    }

    /// True when the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The raw bytes, mutable.
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        &mut self.bytes
    }

    /// Consumes the buffer, returning its bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// The elements as `f32` (only for `float` buffers).
    pub fn to_f32(&self) -> Option<Vec<f32>> {
        (self.elem.scalar == Some(ScalarKind::F32)).then(|| {
            self.bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        })
    }

    /// The elements as `i32` (only for `int` buffers).
    pub fn to_i32(&self) -> Option<Vec<i32>> {
        (self.elem.scalar == Some(ScalarKind::I32)).then(|| {
            self.bytes
                .chunks_exact(4)
                .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        })
    }
}

/// The value of one kernel argument.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgValue {
    /// A by-value argument: its bytes, and its value when it is an integer
    /// scalar (the range file's parameters may refer to it).
    Scalar {
        /// Little-endian bytes, the argument's size.
        bytes: Vec<u8>,
        /// The value of an integer scalar, `None` otherwise (or when it does
        /// not fit an `i64`).
        int: Option<i64>,
    },
    /// A `__global` or `__constant` buffer.
    Buffer(HostBuffer),
    /// A `__local` buffer of this many bytes.
    Local {
        /// Size in bytes.
        bytes: u64,
    },
}

/// The arguments of one kernel, in argument order, checked against the
/// kernel's argument list.
#[derive(Clone, Debug)]
pub struct KernelArgs {
    kernel: String,
    infos: Vec<ArgInfo>,
    values: Vec<ArgValue>,
}

fn describe(info: &ArgInfo) -> String {
    match info.kind {
        ArgKind::Scalar => info.elem_type.clone(),
        ArgKind::GlobalBuffer => format!("__global {}*", info.elem_type),
        ArgKind::ConstantBuffer => format!("__constant {}*", info.elem_type),
        ArgKind::LocalBuffer => format!("__local {}*", info.elem_type),
    }
}

impl KernelArgs {
    /// Builds the arguments of `kernel` (whose arguments are `infos`) from
    /// `NAME=SPEC` strings. Every argument must be given exactly once.
    pub fn from_specs<S: AsRef<str>>(
        kernel: &str,
        infos: &[ArgInfo],
        specs: &[S],
    ) -> Result<KernelArgs> {
        let parsed = specs
            .iter()
            .map(|s| parse_assignment(s.as_ref()))
            .collect::<Result<Vec<_>>>()?;
        KernelArgs::from_parsed(kernel, infos, &parsed)
    }

    /// Builds the arguments from already parsed specs.
    pub fn from_parsed(
        kernel: &str,
        infos: &[ArgInfo],
        specs: &[(String, ArgSpec)],
    ) -> Result<KernelArgs> {
        let infos = sorted_infos(kernel, infos)?;
        let mut values: Vec<Option<ArgValue>> = vec![None; infos.len()];
        for (name, spec) in specs {
            let Some(pos) = infos.iter().position(|i| &i.name == name) else {
                return Err(LaunchError::UnknownArg {
                    name: name.clone(),
                    kernel: kernel.to_string(),
                    valid: names(&infos),
                });
            };
            if values[pos].is_some() {
                return Err(LaunchError::DuplicateArg { name: name.clone() });
            }
            values[pos] = Some(make_value(&infos[pos], spec)?);
        }
        let values = values
            .into_iter()
            .zip(&infos)
            .map(|(v, info)| {
                v.ok_or_else(|| LaunchError::MissingArg {
                    name: info.name.clone(),
                    kernel: kernel.to_string(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(KernelArgs {
            kernel: kernel.to_string(),
            infos,
            values,
        })
    }

    /// Builds the arguments from values (for hosts that already hold the
    /// data, such as the C API). `values[i]` belongs to the argument with
    /// index `i`; kinds and sizes are checked.
    pub fn from_values(
        kernel: &str,
        infos: &[ArgInfo],
        values: Vec<ArgValue>,
    ) -> Result<KernelArgs> {
        let infos = sorted_infos(kernel, infos)?;
        if values.len() < infos.len() {
            return Err(LaunchError::MissingArg {
                name: infos[values.len()].name.clone(),
                kernel: kernel.to_string(),
            });
        }
        if values.len() > infos.len() {
            return Err(LaunchError::UnknownArg {
                name: format!("#{}", infos.len()),
                kernel: kernel.to_string(),
                valid: names(&infos),
            });
        }
        for (info, value) in infos.iter().zip(&values) {
            let mistyped = |message: &str| LaunchError::MistypedArg {
                name: info.name.clone(),
                ty: describe(info),
                message: message.to_string(),
            };
            match (info.kind, value) {
                (ArgKind::Scalar, ArgValue::Scalar { bytes, .. }) => {
                    if info.elem_size != 0 && bytes.len() != info.elem_size as usize {
                        return Err(mistyped(&format!(
                            "the value has {} bytes, the argument {}",
                            bytes.len(),
                            info.elem_size
                        )));
                    }
                }
                (ArgKind::GlobalBuffer | ArgKind::ConstantBuffer, ArgValue::Buffer(b)) => {
                    if b.is_empty() {
                        return Err(mistyped("the buffer is empty"));
                    }
                }
                (ArgKind::LocalBuffer, ArgValue::Local { .. }) => {}
                _ => return Err(mistyped("the value's kind does not match the argument")),
            }
        }
        Ok(KernelArgs {
            kernel: kernel.to_string(),
            infos,
            values,
        })
    }

    /// The kernel these arguments belong to.
    pub fn kernel(&self) -> &str {
        &self.kernel
    }

    /// The argument descriptions, by index.
    pub fn infos(&self) -> &[ArgInfo] {
        &self.infos
    }

    /// The values, by argument index.
    pub fn values(&self) -> &[ArgValue] {
        &self.values
    }

    /// The value of argument `index`.
    pub fn value(&self, index: u32) -> Option<&ArgValue> {
        self.values.get(index as usize)
    }

    /// The buffer argument called `name`.
    pub fn buffer(&self, name: &str) -> Option<&HostBuffer> {
        let pos = self.infos.iter().position(|i| i.name == name)?;
        match &self.values[pos] {
            ArgValue::Buffer(b) => Some(b),
            _ => None,
        }
    }

    /// The buffer argument with index `index`.
    pub fn buffer_at(&self, index: u32) -> Option<&HostBuffer> {
        match self.values.get(index as usize)? {
            ArgValue::Buffer(b) => Some(b),
            _ => None,
        }
    }

    pub fn buffer_at_mut(&mut self, index: u32) -> Option<&mut HostBuffer> {
        match self.values.get_mut(index as usize)? {
            ArgValue::Buffer(b) => Some(b),
            _ => None,
        }
    }

    /// The `__global` buffers (the kernel's possible outputs) with their names.
    pub fn global_buffers(&self) -> impl Iterator<Item = (&str, &HostBuffer)> {
        self.infos
            .iter()
            .zip(&self.values)
            .filter_map(|(info, v)| match (info.kind, v) {
                (ArgKind::GlobalBuffer, ArgValue::Buffer(b)) => Some((info.name.as_str(), b)),
                _ => None,
            })
    }
}

fn names(infos: &[ArgInfo]) -> String {
    infos
        .iter()
        .map(|i| i.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn sorted_infos(kernel: &str, infos: &[ArgInfo]) -> Result<Vec<ArgInfo>> {
    let mut infos = infos.to_vec();
    infos.sort_by_key(|i| i.index);
    for (pos, info) in infos.iter().enumerate() {
        if info.index as usize != pos {
            return Err(LaunchError::RangeFile {
                kernel: kernel.to_string(),
                message: format!(
                    "argument indices are not 0..{} (argument '{}' has index {})",
                    infos.len(),
                    info.name,
                    info.index
                ),
            });
        }
    }
    Ok(infos)
}

fn make_value(info: &ArgInfo, spec: &ArgSpec) -> Result<ArgValue> {
    let elem = ElemType::parse(&info.elem_type, info.elem_size);
    let mistyped = |message: String| LaunchError::MistypedArg {
        name: info.name.clone(),
        ty: describe(info),
        message,
    };
    match (info.kind, spec) {
        (ArgKind::Scalar, ArgSpec::Literal(text)) => scalar_literal(&elem, text).map_err(mistyped),
        (ArgKind::Scalar, other) => Err(mistyped(format!(
            "'{other}' makes a buffer but this is a scalar argument; give a literal such as 1024 or 0.5"
        ))),
        (ArgKind::LocalBuffer, ArgSpec::Local(n)) => Ok(ArgValue::Local {
            bytes: n
                .checked_mul(elem.size as u64)
                .ok_or_else(|| mistyped(format!("{n} elements are too many")))?,
        }),
        (ArgKind::LocalBuffer, other) => Err(mistyped(format!(
            "'{other}' does not fit a __local pointer; give local:N (N elements)"
        ))),
        (_, ArgSpec::Local(_)) => Err(mistyped(
            "local:N is for __local pointers; use rand:N, zeros:N, seq:N or file:PATH.npy".into(),
        )),
        (_, ArgSpec::Literal(text)) => Err(mistyped(format!(
            "the literal '{text}' is for scalar arguments; use rand:N, zeros:N, seq:N or file:PATH.npy"
        ))),
        (_, ArgSpec::Zeros(n)) => {
            if n.checked_mul(elem.size as u64).is_none_or(|b| b > isize::MAX as u64) {
                return Err(mistyped(format!("{n} elements are too many")));
            }
            HostBuffer::zeros(elem, *n)
                .map(ArgValue::Buffer)
                .map_err(|_| LaunchError::Alloc { name: info.name.clone(), bytes: n.saturating_mul(info.elem_size as u64) })
        }
        (_, ArgSpec::Seq(n)) => seq(&elem, *n).map(ArgValue::Buffer).map_err(mistyped),
        (_, ArgSpec::Rand { n, seed }) => rand(&elem, *n, *seed).map(ArgValue::Buffer).map_err(mistyped),
        (_, ArgSpec::File(path)) => read_file(path, &elem).map(ArgValue::Buffer),
    }
}

fn read_file(path: &Path, elem: &ElemType) -> Result<HostBuffer> {
    let buf = crate::npy::read_npy(path, elem)?;
    if buf.is_empty() {
        return Err(LaunchError::Npy {
            path: path.to_path_buf(),
            message: "the array is empty".into(),
        });
    }
    Ok(buf)
}

/// Parses a literal for a scalar (or by-value vector) argument.
fn scalar_literal(elem: &ElemType, text: &str) -> Result<ArgValue, String> {
    let Some(kind) = elem.scalar else {
        return Err(format!(
            "literals are not supported for type '{}'",
            elem.name
        ));
    };
    if kind == ScalarKind::F16 {
        return Err("literals are not supported for half".into());
    }
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() != 1 && parts.len() != elem.lanes as usize {
        return Err(format!(
            "'{text}' has {} values; give 1 or {}",
            parts.len(),
            elem.lanes
        ));
    }
    let mut bytes = Vec::with_capacity(elem.size as usize);
    let mut int = None;
    for lane in 0..elem.storage_lanes() as usize {
        if lane >= elem.lanes as usize {
            if kind.is_integer() {
                kind.put_int(0, &mut bytes);
            } else {
                kind.put_float(0.0, &mut bytes);
            }
            continue;
        }
        let part = parts[if parts.len() == 1 { 0 } else { lane }];
        if kind.is_integer() {
            let v = parse_int(part).ok_or_else(|| {
                if part.parse::<f64>().is_ok() {
                    format!("'{part}' is not an integer")
                } else {
                    format!("'{part}' is not a number")
                }
            })?;
            let (lo, hi) = kind.int_bounds();
            if v < lo || v > hi {
                return Err(format!(
                    "{part} is out of range for {} ({lo}..={hi})",
                    elem.name
                ));
            }
            kind.put_int(v, &mut bytes);
            if elem.lanes == 1 {
                int = i64::try_from(v).ok();
            }
        } else {
            let v: f64 = part
                .parse()
                .map_err(|_| format!("'{part}' is not a number"))?;
            kind.put_float(v, &mut bytes);
        }
    }
    Ok(ArgValue::Scalar { bytes, int })
}

fn parse_int(text: &str) -> Option<i128> {
    let (neg, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let body = body.replace('_', "");
    let v = if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        i128::from_str_radix(hex, 16).ok()?
    } else {
        body.parse::<i128>().ok()?
    };
    Some(if neg { -v } else { v })
}

/// splitmix64: the generator behind `rand:`.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// Seeds the generator.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

fn generated_kind(elem: &ElemType, what: &str) -> Result<ScalarKind, String> {
    match elem.scalar {
        Some(ScalarKind::F16) | None => Err(format!(
            "{what}: is not supported for type '{}'; use zeros:N or file:PATH.npy",
            elem.name
        )),
        Some(k) => Ok(k),
    }
}

fn fill(
    elem: &ElemType,
    n: u64,
    mut lane_value: impl FnMut(ScalarKind, u64, u32, &mut Vec<u8>),
) -> Result<HostBuffer, String> {
    let kind = generated_kind(elem, "")?;
    let total = n
        .checked_mul(elem.size as u64)
        .filter(|&b| b <= isize::MAX as u64)
        .ok_or_else(|| format!("{n} elements are too many"))?;
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(total as usize)
        .map_err(|_| format!("cannot allocate {total} bytes of host memory"))?;
    for i in 0..n {
        for lane in 0..elem.storage_lanes() {
            if lane >= elem.lanes {
                bytes.extend(std::iter::repeat_n(0u8, kind.size() as usize));
            } else {
                lane_value(kind, i, lane, &mut bytes);
            }
        }
    }
    Ok(HostBuffer::from_bytes(elem.clone(), bytes))
}

fn seq(elem: &ElemType, n: u64) -> Result<HostBuffer, String> {
    generated_kind(elem, "seq")?;
    let lanes = elem.lanes as u64;
    fill(elem, n, |kind, i, lane, out| {
        let v = i * lanes + lane as u64;
        if kind.is_integer() {
            kind.put_int(v as i128, out); // wraps by truncation
        } else {
            kind.put_float(v as f64, out);
        }
    })
}

fn rand(elem: &ElemType, n: u64, seed: u64) -> Result<HostBuffer, String> {
    let kind = generated_kind(elem, "rand")?;
    let mut rng = SplitMix64::new(seed);
    let bound = if kind.is_integer() {
        (n as u128).min(kind.int_bounds().1 as u128 + 1)
    } else {
        0
    };
    fill(elem, n, |kind, _, _, out| {
        let x = rng.next();
        match kind {
            ScalarKind::F32 => out.extend_from_slice(
                &(((x >> 40) as f32) * (1.0 / (1u64 << 24) as f32)).to_le_bytes(),
            ),
            ScalarKind::F64 => out.extend_from_slice(
                &(((x >> 11) as f64) * (1.0 / (1u64 << 53) as f64)).to_le_bytes(),
            ),
            _ => kind.put_int(((x as u128 * bound) >> 64) as i128, out),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(index: u32, name: &str, kind: ArgKind, ty: &str, size: u32) -> ArgInfo {
        ArgInfo {
            index,
            name: name.into(),
            kind,
            elem_type: ty.into(),
            elem_size: size,
        }
    }

    fn infos() -> Vec<ArgInfo> {
        vec![
            info(0, "a", ArgKind::GlobalBuffer, "float", 4),
            info(1, "v", ArgKind::GlobalBuffer, "float4", 16),
            info(2, "n", ArgKind::Scalar, "int", 4),
            info(3, "tmp", ArgKind::LocalBuffer, "float", 4),
            info(4, "idx", ArgKind::ConstantBuffer, "uchar", 1),
        ]
    }

    #[test]
    fn builds_every_kind() {
        let args = KernelArgs::from_specs(
            "k",
            &infos(),
            &[
                "a=rand:5:7",
                "v=seq:3",
                "n=-3",
                "tmp=local:16",
                "idx=rand:1000",
            ],
        )
        .unwrap();
        let a = args.buffer("a").unwrap().to_f32().unwrap();
        assert_eq!(a.len(), 5);
        assert!(a.iter().all(|&x| (0.0..1.0).contains(&x)));
        let again = KernelArgs::from_specs(
            "k",
            &infos(),
            &[
                "a=rand:5:7",
                "v=zeros:1",
                "n=1",
                "tmp=local:1",
                "idx=zeros:1",
            ],
        )
        .unwrap();
        assert_eq!(args.buffer("a"), again.buffer("a"), "rand is deterministic");
        let v = args.buffer("v").unwrap();
        let floats: Vec<f32> = v
            .as_bytes()
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(floats, (0..12).map(|x| x as f32).collect::<Vec<_>>());
        assert_eq!(
            args.value(2),
            Some(&ArgValue::Scalar {
                bytes: (-3i32).to_le_bytes().to_vec(),
                int: Some(-3)
            })
        );
        assert_eq!(args.value(3), Some(&ArgValue::Local { bytes: 64 }));
        assert_eq!(args.buffer("idx").unwrap().len(), 1000);
    }

    #[test]
    fn splitmix_reference_values() {
        // reference values of splitmix64 seeded with 0
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next(), 0x6E78_9E6A_A1B9_65F4);
    }

    fn err(specs: &[&str]) -> String {
        KernelArgs::from_specs("k", &infos(), specs)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn errors_name_the_argument() {
        let base = ["v=seq:1", "n=1", "tmp=local:1", "idx=zeros:1"];
        let with = |extra: &str| {
            let mut s: Vec<&str> = base.to_vec();
            s.push(extra);
            s.into_iter().map(String::from).collect::<Vec<_>>()
        };
        let e = KernelArgs::from_specs("k", &infos(), &with("zz=seq:1"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "unknown argument 'zz' for kernel 'k' (valid arguments: a, v, n, tmp, idx)"
        );
        assert_eq!(
            err(&base),
            "missing argument 'a' for kernel 'k' (give it as a=SPEC)"
        );
        let e = err(&[
            "a=seq:1",
            "v=seq:1",
            "n=rand:3",
            "tmp=local:1",
            "idx=zeros:1",
        ]);
        assert!(
            e.starts_with("argument 'n' (int): 'rand:3:0' makes a buffer"),
            "{e}"
        );
        let e = err(&["a=seq:1", "v=seq:1", "n=0.5", "tmp=local:1", "idx=zeros:1"]);
        assert_eq!(e, "argument 'n' (int): '0.5' is not an integer");
        let e = KernelArgs::from_specs("k", &infos(), &with("a=bogus:3"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "invalid argument spec 'bogus:3': unknown spec kind 'bogus' (valid kinds: a literal, rand:N[:SEED], zeros:N, seq:N, file:PATH.npy, local:N)"
        );
        let e = err(&["a=1", "v=seq:1", "n=1", "tmp=local:1", "idx=zeros:1"]);
        assert!(
            e.contains("argument 'a' (__global float*): the literal '1' is for scalar"),
            "{e}"
        );
        let e = err(&[
            "a=seq:1",
            "v=seq:1",
            "n=4294967296",
            "tmp=local:1",
            "idx=zeros:1",
        ]);
        assert!(e.contains("out of range"), "{e}");
    }

    #[test]
    fn npy_round_trip() {
        let dir = std::env::temp_dir().join(format!("launcher-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (ty, size, spec) in [
            ("float", 4, "rand:10:3"),
            ("float4", 16, "seq:5"),
            ("uchar", 1, "rand:300"),
            ("long", 8, "seq:9"),
        ] {
            let infos = vec![info(0, "x", ArgKind::GlobalBuffer, ty, size)];
            let args = KernelArgs::from_specs("k", &infos, &[format!("x={spec}")]).unwrap();
            let path = dir.join(format!("{ty}.npy"));
            crate::npy::write_npy(&path, args.buffer("x").unwrap()).unwrap();
            let back = KernelArgs::from_specs("k", &infos, &[format!("x=file:{}", path.display())])
                .unwrap();
            assert_eq!(args.buffer("x"), back.buffer("x"), "{ty}");
        }
        let infos = vec![info(0, "x", ArgKind::GlobalBuffer, "int", 4)];
        let e = KernelArgs::from_specs(
            "k",
            &infos,
            &[format!("x=file:{}", dir.join("float.npy").display())],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.ends_with(
                "float.npy: dtype '<f4' does not match element type 'int' (expected '<i4')"
            ),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
