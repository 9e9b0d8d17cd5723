//! The argument spec language: `NAME=SPEC` ([`ArgSpec`], [`parse_assignment`]),
//! literals, and the deterministic generators behind `rand:` and `seq:`.
//!
//! Spec kinds (see [`ArgSpec`]):
//! - a literal (`1024`, `-3`, `0.5`, `0x10`; `1,2,3,4` for vector scalars),
//!   typed by the argument's element type;
//! - `rand:N[:SEED]`: N elements (N as a count, `4096`, or a shape,
//!   `64x64`, which a `.npy` output of the buffer keeps), floats uniform in [0, 1), integers uniform
//!   in [0, min(N, type max + 1)); splitmix64 seeded with SEED (default 0),
//!   one draw per lane, so the same spec gives the same bytes everywhere;
//! - `zeros:N`; `seq:N` (element i, lane l holds i*lanes + l, integers wrap);
//! - `file:PATH.npy`;
//! - `local:N` for `__local` pointers: N elements of the pointee type.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use launcher::{ArgValue, ElemType, HostBuffer, LaunchError, Result, ScalarKind};

/// The spec kinds, for error messages.
pub const SPEC_KINDS: &str =
    "a literal, bytes:HEX, rand:N[:SEED], zeros:N, seq:N, file:PATH.npy, local:N";

/// An element count as written: `4096`, or the shape `64x64` (4096
/// elements, C order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape(pub Vec<u64>);

impl Shape {
    /// One dimension of `n` elements.
    pub fn of(n: u64) -> Shape {
        Shape(vec![n])
    }

    /// The number of elements (checked not to overflow when parsed).
    pub fn n(&self) -> u64 {
        self.0.iter().product()
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self.0.iter().map(u64::to_string).collect();
        f.write_str(&dims.join("x"))
    }
}

/// One parsed argument spec (the part after `NAME=`).
#[derive(Clone, Debug, PartialEq)]
pub enum ArgSpec {
    /// A scalar literal, typed when it meets its argument.
    Literal(String),
    /// `rand:N[:SEED]`.
    Rand {
        /// Elements.
        n: Shape,
        /// splitmix64 seed.
        seed: u64,
    },
    /// `zeros:N`.
    Zeros(Shape),
    /// `seq:N`.
    Seq(Shape),
    /// `file:PATH.npy`.
    File(PathBuf),
    /// `local:N` (elements of the pointee type).
    Local(u64),
    /// `bytes:HEX`: a scalar argument's bytes as they are in memory (two
    /// hex digits per byte, first byte first), for any by-value type, a
    /// struct's included.
    Bytes(Vec<u8>),
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
        let shape = |text: &str| -> Result<Shape> {
            let dims = text.split('x').map(&count).collect::<Result<Vec<u64>>>()?;
            if dims.len() > 8 {
                return Err(bad(format!("'{text}' has more than 8 dimensions")));
            }
            dims.iter()
                .try_fold(1u64, |n, &d| n.checked_mul(d))
                .ok_or_else(|| bad(format!("'{text}' has too many elements")))?;
            Ok(Shape(dims))
        };
        match kind {
            "rand" => {
                let (n, seed) = match rest.split_once(':') {
                    Some((n, seed)) => (
                        shape(n)?,
                        seed.trim().parse().map_err(|_| {
                            bad(format!("'{seed}' is not a seed (an unsigned integer)"))
                        })?,
                    ),
                    None => (shape(rest)?, 0),
                };
                Ok(ArgSpec::Rand { n, seed })
            }
            "zeros" => Ok(ArgSpec::Zeros(shape(rest)?)),
            "seq" => Ok(ArgSpec::Seq(shape(rest)?)),
            "local" => Ok(ArgSpec::Local(count(rest)?)),
            "bytes" => {
                let hex: String = rest.chars().filter(|c| !matches!(c, '_' | ' ')).collect();
                if hex.is_empty() || !hex.len().is_multiple_of(2) {
                    return Err(bad(
                        "bytes: needs two hex digits per byte, first byte first".into(),
                    ));
                }
                (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16))
                    .collect::<std::result::Result<Vec<u8>, _>>()
                    .map(ArgSpec::Bytes)
                    .map_err(|_| bad(format!("'{rest}' is not hex (two digits per byte)")))
            }
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
            ArgSpec::Bytes(b) => {
                f.write_str("bytes:")?;
                b.iter().try_for_each(|x| write!(f, "{x:02x}"))
            }
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

/// Parses a literal for a scalar (or by-value vector) argument.
pub(crate) fn scalar_literal(elem: &ElemType, text: &str) -> Result<ArgValue, String> {
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
        return Err(if elem.lanes == 1 {
            format!(
                "'{text}' has {} values; a '{}' takes one",
                parts.len(),
                elem.name
            )
        } else {
            format!(
                "'{text}' has {} values; a '{}' takes 1 (for every lane) or {}",
                parts.len(),
                elem.name,
                elem.lanes
            )
        });
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

pub(crate) fn seq(elem: &ElemType, n: u64) -> Result<HostBuffer, String> {
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

pub(crate) fn rand(elem: &ElemType, n: u64, seed: u64) -> Result<HostBuffer, String> {
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

    #[test]
    fn a_literal_with_the_wrong_number_of_values_says_how_many_the_type_takes() {
        let float = ElemType::parse("float", 4);
        assert_eq!(
            scalar_literal(&float, "1,2,3,4").err().as_deref(),
            Some("'1,2,3,4' has 4 values; a 'float' takes one")
        );
        let float4 = ElemType::parse("float4", 16);
        assert_eq!(
            scalar_literal(&float4, "1,2").err().as_deref(),
            Some("'1,2' has 2 values; a 'float4' takes 1 (for every lane) or 4")
        );
        assert!(scalar_literal(&float4, "1,2,3,4").is_ok());
        assert!(scalar_literal(&float4, "7").is_ok());
    }
}
