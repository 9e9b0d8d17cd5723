//! OpenCL C element types as the launcher sees them: a scalar kind, a number of
//! lanes and a size in bytes.

use std::fmt;

/// The scalar kind of an OpenCL C type (the lane type of a vector type).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarKind {
    /// `char`
    I8,
    /// `uchar`, `bool`
    U8,
    /// `short`
    I16,
    /// `ushort`
    U16,
    /// `int`
    I32,
    /// `uint`
    U32,
    /// `long`
    I64,
    /// `ulong`
    U64,
    /// `half` (storage only: no literals, `rand:` or `seq:`)
    F16,
    /// `float`
    F32,
    /// `double`
    F64,
}

impl ScalarKind {
    /// Size in bytes.
    pub fn size(self) -> u32 {
        match self {
            ScalarKind::I8 | ScalarKind::U8 => 1,
            ScalarKind::I16 | ScalarKind::U16 | ScalarKind::F16 => 2,
            ScalarKind::I32 | ScalarKind::U32 | ScalarKind::F32 => 4,
            ScalarKind::I64 | ScalarKind::U64 | ScalarKind::F64 => 8,
        }
    }

    /// True for the integer kinds.
    pub fn is_integer(self) -> bool {
        !matches!(self, ScalarKind::F16 | ScalarKind::F32 | ScalarKind::F64)
    }

    /// True for the signed integer kinds.
    pub fn is_signed(self) -> bool {
        matches!(
            self,
            ScalarKind::I8 | ScalarKind::I16 | ScalarKind::I32 | ScalarKind::I64
        )
    }

    /// The numpy dtype string (`<f4`, `|u1`, ...).
    pub fn npy_descr(self) -> &'static str {
        match self {
            ScalarKind::I8 => "|i1",
            ScalarKind::U8 => "|u1",
            ScalarKind::I16 => "<i2",
            ScalarKind::U16 => "<u2",
            ScalarKind::I32 => "<i4",
            ScalarKind::U32 => "<u4",
            ScalarKind::I64 => "<i8",
            ScalarKind::U64 => "<u8",
            ScalarKind::F16 => "<f2",
            ScalarKind::F32 => "<f4",
            ScalarKind::F64 => "<f8",
        }
    }

    /// Smallest and largest value of an integer kind (as i128).
    pub fn int_bounds(self) -> (i128, i128) {
        match self {
            ScalarKind::I8 => (i8::MIN as i128, i8::MAX as i128),
            ScalarKind::U8 => (0, u8::MAX as i128),
            ScalarKind::I16 => (i16::MIN as i128, i16::MAX as i128),
            ScalarKind::U16 => (0, u16::MAX as i128),
            ScalarKind::I32 => (i32::MIN as i128, i32::MAX as i128),
            ScalarKind::U32 => (0, u32::MAX as i128),
            ScalarKind::I64 => (i64::MIN as i128, i64::MAX as i128),
            ScalarKind::U64 => (0, u64::MAX as i128),
            _ => (0, 0),
        }
    }

    /// Writes an integer value (already range-checked) in little-endian.
    pub fn put_int(self, v: i128, out: &mut Vec<u8>) {
        let bytes = (v as u128).to_le_bytes();
        out.extend_from_slice(&bytes[..self.size() as usize]);
    }

    /// Writes a float value in little-endian (`F32` or `F64`).
    pub fn put_float(self, v: f64, out: &mut Vec<u8>) {
        match self {
            ScalarKind::F32 => out.extend_from_slice(&(v as f32).to_le_bytes()),
            ScalarKind::F64 => out.extend_from_slice(&v.to_le_bytes()),
            _ => unreachable!("put_float on an integer or half kind"),
        }
    }

    fn from_name(name: &str) -> Option<ScalarKind> {
        Some(match name {
            "char" | "signed char" | "int8_t" => ScalarKind::I8,
            "uchar" | "unsigned char" | "uint8_t" | "bool" => ScalarKind::U8,
            "short" | "int16_t" => ScalarKind::I16,
            "ushort" | "unsigned short" | "uint16_t" => ScalarKind::U16,
            "int" | "int32_t" => ScalarKind::I32,
            "uint" | "unsigned int" | "unsigned" | "uint32_t" => ScalarKind::U32,
            "long" | "int64_t" => ScalarKind::I64,
            "ulong" | "unsigned long" | "uint64_t" => ScalarKind::U64,
            "half" => ScalarKind::F16,
            "float" => ScalarKind::F32,
            "double" => ScalarKind::F64,
            _ => return None,
        })
    }
}

/// An element type: the OpenCL C name, its scalar kind (if it is a scalar or
/// vector of a known scalar), its lanes and its size in bytes.
///
/// `float3` has 3 lanes but the size of 4 (`storage_lanes` is 4); the padding
/// lane is written as zero. Types the launcher does not know (structs) keep
/// `scalar == None` and are handled as opaque bytes; a struct whose layout is
/// known carries its `fields`, which only a `.npy` file's dtype uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElemType {
    /// The OpenCL C name, e.g. `float4`.
    pub name: String,
    /// The lane type, `None` for unknown types.
    pub scalar: Option<ScalarKind>,
    /// Lanes of the vector type, 1 for scalars.
    pub lanes: u32,
    /// Size of one element in bytes.
    pub size: u32,
    /// The fields of a struct type in the order of their offsets, when its
    /// layout is known ([`ElemType::with_fields`]); empty for scalars,
    /// vectors and structs of unknown layout.
    pub fields: Vec<StructField>,
}

/// A field of a struct element type, as C lays it out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructField {
    /// The field's name.
    pub name: String,
    /// Its offset in the struct in bytes.
    pub offset: u32,
    /// Its type (a scalar, a vector or a struct).
    pub elem: ElemType,
}

impl ElemType {
    /// Interprets an OpenCL C type name. `size` is the element size from the
    /// range file; 0 means "compute it from the name".
    pub fn parse(name: &str, size: u32) -> ElemType {
        let clean = name
            .trim()
            .trim_start_matches("const ")
            .trim_start_matches("__global ")
            .trim();
        let (base, lanes) = split_vector_suffix(clean);
        match ScalarKind::from_name(base) {
            Some(kind) => {
                let storage = if lanes == 3 { 4 } else { lanes };
                let natural = kind.size() * storage;
                ElemType {
                    name: clean.to_string(),
                    scalar: Some(kind),
                    lanes,
                    size: if size == 0 { natural } else { size },
                    fields: Vec::new(),
                }
            }
            None => ElemType {
                name: clean.to_string(),
                scalar: None,
                lanes: 1,
                size: size.max(1),
                fields: Vec::new(),
            },
        }
    }

    /// The same struct type with its field layout (sorted by offset), which
    /// a `.npy` file writes as a structured dtype. Ignored for scalar and
    /// vector types.
    pub fn with_fields(mut self, mut fields: Vec<StructField>) -> ElemType {
        if self.scalar.is_none() {
            fields.sort_by_key(|f| f.offset);
            self.fields = fields;
        }
        self
    }

    /// Scalars stored per element (lanes plus padding).
    pub fn storage_lanes(&self) -> u32 {
        match self.scalar {
            Some(k) => (self.size / k.size()).max(1),
            None => self.size,
        }
    }

    /// True when the type is an integer scalar (not a vector).
    pub fn is_integer_scalar(&self) -> bool {
        self.lanes == 1 && self.scalar.is_some_and(ScalarKind::is_integer)
    }

    /// The value of an integer scalar of this type stored little-endian in
    /// `bytes` (sign-extended for signed types); `None` for other types and
    /// for unsigned values beyond `i64`.
    pub fn int_from_le_bytes(&self, bytes: &[u8]) -> Option<i64> {
        if !self.is_integer_scalar() {
            return None;
        }
        let kind = self.scalar?;
        let mut raw = [0u8; 8];
        let n = bytes.len().min(8);
        raw[..n].copy_from_slice(&bytes[..n]);
        let unsigned = u64::from_le_bytes(raw);
        let bits = 8 * n as u32;
        if kind.is_signed() && bits > 0 && bits < 64 {
            let shift = 64 - bits;
            Some(((unsigned << shift) as i64) >> shift)
        } else if kind.is_signed() {
            Some(unsigned as i64)
        } else {
            i64::try_from(unsigned).ok()
        }
    }
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

fn split_vector_suffix(name: &str) -> (&str, u32) {
    for lanes in [16u32, 8, 4, 3, 2] {
        let suffix = lanes.to_string();
        if let Some(base) = name.strip_suffix(suffix.as_str()) {
            if ScalarKind::from_name(base).is_some() {
                return (base, lanes);
            }
        }
    }
    (name, 1)
}

impl ElemType {
    /// The element type of a kernel argument as the range file records
    /// it, a struct's with its field layout ([`ElemType::with_fields`]).
    pub fn of_arg(info: &ranges_format::ArgInfo) -> ElemType {
        ElemType::parse(&info.elem_type, info.elem_size).with_fields(struct_fields(&info.fields))
    }
}

/// The range file's fields as [`StructField`]s; a fixed-size array field
/// (`float w[3]`) is its bytes, a type of its own without fields.
fn struct_fields(fields: &[ranges_format::FieldInfo]) -> Vec<StructField> {
    fields
        .iter()
        .map(|f| {
            let elem = if f.count > 1 {
                ElemType::parse(
                    &format!("{}[{}]", f.elem_type, f.count),
                    f.elem_size.saturating_mul(f.count),
                )
            } else {
                ElemType::parse(&f.elem_type, f.elem_size).with_fields(struct_fields(&f.fields))
            };
            StructField {
                name: f.name.clone(),
                offset: f.offset,
                elem,
            }
        })
        .collect()
}

/// The integer value of a scalar kernel argument's bytes (as the
/// application or the user set them), when the argument's type is an
/// integer scalar and the value fits an `i64`.
pub fn int_arg_value(info: &ranges_format::ArgInfo, bytes: &[u8]) -> Option<i64> {
    ElemType::parse(&info.elem_type, info.elem_size).int_from_le_bytes(bytes)
}

#[cfg(test)]
mod tests {
    /// A struct argument's fields from the range file: nested structs keep
    /// theirs, an array field is its bytes.
    #[test]
    fn an_arguments_struct_layout_comes_from_the_range_file() {
        let field = |name: &str, offset, ty: &str, size, count, fields| ranges_format::FieldInfo {
            name: name.into(),
            offset,
            elem_type: ty.into(),
            elem_size: size,
            count,
            fields,
        };
        let info = ranges_format::ArgInfo {
            index: 0,
            name: "p".into(),
            kind: ranges_format::ArgKind::GlobalBuffer,
            elem_type: "particle".into(),
            elem_size: 28,
            fields: vec![
                field("w", 0, "float", 4, 3, vec![]),
                field(
                    "at",
                    12,
                    "point",
                    8,
                    1,
                    vec![
                        field("x", 0, "int", 4, 1, vec![]),
                        field("y", 4, "int", 4, 1, vec![]),
                    ],
                ),
                field("id", 20, "long", 8, 1, vec![]),
            ],
        };
        let e = ElemType::of_arg(&info);
        assert_eq!(e.size, 28);
        let names: Vec<(&str, u32, u32)> = e
            .fields
            .iter()
            .map(|f| (f.name.as_str(), f.offset, f.elem.size))
            .collect();
        assert_eq!(names, [("w", 0, 12), ("at", 12, 8), ("id", 20, 8)]);
        assert!(e.fields[0].elem.scalar.is_none() && e.fields[0].elem.fields.is_empty());
        assert_eq!(e.fields[1].elem.fields.len(), 2);
        assert_eq!(e.fields[2].elem.scalar, Some(ScalarKind::I64));
        // a scalar argument keeps no fields
        let float = ranges_format::ArgInfo {
            elem_type: "float".into(),
            elem_size: 4,
            ..info
        };
        assert!(ElemType::of_arg(&float).fields.is_empty());
    }

    use super::*;

    #[test]
    fn vector_and_scalar_types() {
        let f4 = ElemType::parse("float4", 16);
        assert_eq!(
            (f4.scalar, f4.lanes, f4.storage_lanes()),
            (Some(ScalarKind::F32), 4, 4)
        );
        let f3 = ElemType::parse("float3", 0);
        assert_eq!((f3.lanes, f3.size, f3.storage_lanes()), (3, 16, 4));
        let u = ElemType::parse("uint", 4);
        assert!(u.is_integer_scalar());
        let s = ElemType::parse("struct point", 12);
        assert_eq!((s.scalar, s.size), (None, 12));
        assert_eq!(ElemType::parse("int16", 0).size, 64);
    }

    #[test]
    fn integer_arguments_are_sign_extended_by_type() {
        let info = |ty: &str, size: u32| ranges_format::ArgInfo {
            index: 0,
            name: "n".into(),
            kind: ranges_format::ArgKind::Scalar,
            elem_type: ty.into(),
            elem_size: size,
            fields: Vec::new(),
        };
        let v = |ty, size, bytes: &[u8]| int_arg_value(&info(ty, size), bytes);
        assert_eq!(v("int", 4, &(-3i32).to_le_bytes()), Some(-3));
        assert_eq!(v("uint", 4, &u32::MAX.to_le_bytes()), Some(u32::MAX as i64));
        assert_eq!(v("char", 1, &[0xff]), Some(-1));
        assert_eq!(v("ulong", 8, &u64::MAX.to_le_bytes()), None);
        assert_eq!(v("long", 8, &i64::MIN.to_le_bytes()), Some(i64::MIN));
        assert_eq!(v("float", 4, &1.0f32.to_le_bytes()), None);
    }
}
