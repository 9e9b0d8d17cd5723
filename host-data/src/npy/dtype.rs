//! The numpy dtype of an element type ([`write_dtype`]), and how a file's
//! dtype lays out an element type's bytes ([`file_layout`]).
//!
//! A scalar or vector type is its lane type (`<f8` for `double` and
//! `double2`); a struct of known layout is a structured dtype whose padding
//! is written as numpy writes it, as fields named `''` of type `|V<n>`
//! (`[('x', '<f4'), ('', '|V4'), ('y', '<f8')]`), so the itemsize is the
//! struct's size; a struct of unknown layout is `|V<size>`.

use npyz::{DType, Endianness, Field, TypeChar, TypeStr};

use launcher::{ElemType, ScalarKind};

/// The dtype a buffer of `elem` is written with, and how many of its items
/// make one element (a vector type's storage lanes, which become the last
/// dimension; 1 for scalars and structs).
pub(super) fn write_dtype(elem: &ElemType) -> (DType, u32) {
    match elem.scalar {
        Some(kind) => (DType::Plain(kind_type(kind)), elem.storage_lanes()),
        None => (struct_dtype(elem), 1),
    }
}

fn kind_type(kind: ScalarKind) -> TypeStr {
    kind.npy_descr()
        .parse()
        .expect("every npy_descr is a valid type string")
}

fn void_type(size: u32) -> TypeStr {
    format!("|V{size}")
        .parse()
        .expect("|V<n> is a valid type string")
}

/// A struct's structured dtype, or `|V<size>` when its fields are not
/// known or cannot be listed in offset order (overlapping, past the end).
fn struct_dtype(elem: &ElemType) -> DType {
    record_fields(elem)
        .map(DType::Record)
        .unwrap_or_else(|| DType::Plain(void_type(elem.size)))
}

fn record_fields(elem: &ElemType) -> Option<Vec<Field>> {
    if elem.fields.is_empty() {
        return None;
    }
    let padding = |n: u32| Field {
        name: String::new(),
        dtype: DType::Plain(void_type(n)),
    };
    let mut fields = Vec::new();
    let mut at = 0u32;
    for f in &elem.fields {
        if f.offset < at {
            return None;
        }
        if f.offset > at {
            fields.push(padding(f.offset - at));
        }
        let dtype = match f.elem.scalar {
            Some(kind) if f.elem.storage_lanes() > 1 => DType::Array(
                f.elem.storage_lanes() as u64,
                Box::new(DType::Plain(kind_type(kind))),
            ),
            Some(kind) => DType::Plain(kind_type(kind)),
            None => struct_dtype(&f.elem),
        };
        fields.push(Field {
            name: f.name.clone(),
            dtype,
        });
        at = f.offset.checked_add(f.elem.size)?;
    }
    if at > elem.size {
        return None;
    }
    if at < elem.size {
        fields.push(padding(elem.size - at));
    }
    Some(fields)
}

/// How a file's items hold an element type's bytes.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Layout {
    /// Bytes of one item of the file's dtype.
    pub item_size: u64,
    /// The byte ranges (offset, length) in an item that are big-endian
    /// numbers, to be reversed into the buffer's little-endian.
    pub swaps: Vec<(usize, usize)>,
}

/// How a file of `dtype` holds elements of `elem`, or why it cannot: a
/// scalar or vector type reads its own lane type in either byte order; a
/// struct reads `|u1`/`|i1` (raw bytes), `|V<size>` or any structured dtype
/// of its size (its fields are not compared: the bytes are the struct's).
pub(super) fn file_layout(dtype: &DType, elem: &ElemType) -> Result<Layout, String> {
    let mismatch = || {
        format!(
            "dtype '{}' does not match element type '{}' (expected '{}')",
            dtype_text(dtype),
            elem.name,
            dtype_text(&write_dtype(elem).0)
        )
    };
    let mut swaps = Vec::new();
    let item_size = match (elem.scalar, dtype) {
        (Some(kind), DType::Plain(ts)) => {
            if !is_kind(ts, kind) {
                return Err(mismatch());
            }
            number_swaps(ts, 0, &mut swaps)?;
            kind.size() as u64
        }
        (None, DType::Plain(ts)) => {
            let raw_bytes =
                matches!(ts.type_char(), TypeChar::Int | TypeChar::Uint) && ts.size_field() == 1;
            let whole = ts.type_char() == TypeChar::RawData && ts.size_field() == elem.size as u64;
            if !raw_bytes && !whole {
                return Err(mismatch());
            }
            ts.size_field()
        }
        (None, DType::Record(_)) => {
            if dtype.num_bytes() != Some(elem.size as usize) {
                return Err(mismatch());
            }
            collect_swaps(dtype, 0, &mut swaps)?;
            elem.size as u64
        }
        _ => return Err(mismatch()),
    };
    Ok(Layout { item_size, swaps })
}

fn is_kind(ts: &TypeStr, kind: ScalarKind) -> bool {
    let char_ok = match ts.type_char() {
        TypeChar::Int => kind.is_integer() && kind.is_signed(),
        TypeChar::Uint => kind.is_integer() && !kind.is_signed(),
        TypeChar::Float => !kind.is_integer(),
        _ => false,
    };
    char_ok && ts.size_field() == kind.size() as u64
}

/// The big-endian numbers of a (field's) dtype at `offset`, nested
/// records and arrays included.
fn collect_swaps(
    dtype: &DType,
    offset: usize,
    swaps: &mut Vec<(usize, usize)>,
) -> Result<(), String> {
    match dtype {
        DType::Plain(ts) => number_swaps(ts, offset, swaps),
        DType::Array(n, inner) => {
            let size = inner.num_bytes().unwrap_or(0);
            let before = swaps.len();
            collect_swaps(inner, offset, swaps)?;
            if swaps.len() > before {
                // the record's size is the element's: `n` is bounded by it
                let one: Vec<_> = swaps[before..].to_vec();
                for i in 1..*n as usize {
                    swaps.extend(one.iter().map(|&(o, l)| (o + i * size, l)));
                }
            }
            Ok(())
        }
        DType::Record(fields) => {
            let mut at = offset;
            for f in fields {
                collect_swaps(&f.dtype, at, swaps)?;
                at += f.dtype.num_bytes().unwrap_or(0);
            }
            Ok(())
        }
    }
}

/// A big-endian integer or float at `offset` is reversed; other big-endian
/// types (complex, dates, strings) are refused rather than misread.
fn number_swaps(
    ts: &TypeStr,
    offset: usize,
    swaps: &mut Vec<(usize, usize)>,
) -> Result<(), String> {
    let size = ts.size_field() as usize;
    if ts.endianness() != Endianness::Big || size <= 1 {
        return Ok(());
    }
    match ts.type_char() {
        TypeChar::Int | TypeChar::Uint | TypeChar::Float => {
            swaps.push((offset, size));
            Ok(())
        }
        _ => Err(format!(
            "big-endian '{ts}' values are not supported (save them little-endian)"
        )),
    }
}

/// A dtype as numpy writes it in a header, on one line: `<f4`,
/// `[('x', '<f4'), ('v', '<f4', (4,))]`.
pub(super) fn dtype_text(dtype: &DType) -> String {
    match dtype {
        DType::Plain(ts) => ts.to_string(),
        DType::Array(..) => field_type_text(dtype),
        DType::Record(fields) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|f| {
                    format!(
                        "('{}', {})",
                        f.name.escape_debug(),
                        field_type_text(&f.dtype)
                    )
                })
                .collect();
            format!("[{}]", fields.join(", "))
        }
    }
}

fn field_type_text(dtype: &DType) -> String {
    let mut dims = Vec::new();
    let mut inner = dtype;
    while let DType::Array(n, i) = inner {
        dims.push(n.to_string());
        inner = i;
    }
    let ty = match inner {
        DType::Plain(ts) => format!("'{ts}'"),
        other => dtype_text(other),
    };
    match dims.as_slice() {
        [] => ty,
        [one] => format!("{ty}, ({one},)"),
        _ => format!("{ty}, ({})", dims.join(", ")),
    }
}
