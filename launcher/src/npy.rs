//! Reading and writing `.npy` files (numpy format 1.0-3.0, little-endian,
//! C order) for buffer arguments and outputs.

use std::io::Read as _;
use std::path::Path;

use ranges_format::input;

use crate::buffer::HostBuffer;
use crate::elem::ElemType;
use crate::error::{LaunchError, Result};

const MAGIC: &[u8] = b"\x93NUMPY";

fn npy_err(path: &Path, message: impl Into<String>) -> LaunchError {
    LaunchError::Npy {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// Parsed `.npy` header.
struct Header {
    descr: String,
    fortran_order: bool,
    shape: Vec<u64>,
}

/// Reads a `.npy` file as a buffer of `elem`. The dtype must be the element
/// type's lane type (`<f4` for `float` and `float4`, `|u1` for `uchar`; types
/// the launcher does not know accept `|u1` or `|V<size>`), and the file must
/// hold a whole number of elements (`N*storage_lanes` scalars for vector types).
pub fn read_npy(path: &Path, elem: &ElemType) -> Result<HostBuffer> {
    let io = |source| LaunchError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = input::open_regular(path).map_err(io)?;
    let file_len = file.metadata().map_err(io)?.len();
    let head = read_head(path, &mut file)?;
    let (header, data_start) = parse_header(path, &head)?;
    let expected = expected_descr(elem);
    if !descr_matches(&header.descr, &expected, elem) {
        return Err(npy_err(
            path,
            format!(
                "dtype '{}' does not match element type '{}' (expected '{}')",
                header.descr, elem.name, expected
            ),
        ));
    }
    let scalar_size = descr_item_size(&header.descr).unwrap_or(1);
    if header.fortran_order && header.shape.iter().filter(|&&d| d > 1).count() > 1 {
        return Err(npy_err(
            path,
            "fortran-order arrays are not supported (save with C order)",
        ));
    }
    let shape_text = || {
        let dims: Vec<String> = header.shape.iter().map(u64::to_string).collect();
        format!("({})", dims.join(", "))
    };
    let limit = input::data_file();
    let n_bytes = header
        .shape
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d))
        .and_then(|n| n.checked_mul(scalar_size))
        .filter(|&b| b <= limit.bytes)
        .ok_or_else(|| {
            npy_err(
                path,
                format!(
                    "shape {} is too large: its data would be larger than {}, the most {} may have",
                    shape_text(),
                    input::human_bytes(limit.bytes),
                    limit.what
                ),
            )
        })?;
    let n_scalars = n_bytes / scalar_size.max(1);
    let on_disk = file_len.saturating_sub(data_start as u64);
    let truncated = |found: u64| {
        npy_err(
            path,
            format!("file is truncated: shape needs {n_bytes} bytes of data, found {found}"),
        )
    };
    if on_disk < n_bytes {
        return Err(truncated(on_disk));
    }
    if n_bytes % elem.size as u64 != 0 {
        return Err(npy_err(
            path,
            format!(
                "{n_scalars} values are not a whole number of '{}' elements ({} values each)",
                elem.name,
                elem.size as u64 / scalar_size
            ),
        ));
    }
    let mut data = Vec::new();
    (&mut file)
        .take(n_bytes)
        .read_to_end(&mut data)
        .map_err(io)?;
    if (data.len() as u64) < n_bytes {
        // the file shrank while it was read
        return Err(truncated(data.len() as u64));
    }
    // the elements' shape: the file's, less a trailing dimension of a
    // vector type's lanes (Fortran order was refused above where it matters)
    let lanes = (elem.size as u64).checked_div(scalar_size).unwrap_or(1);
    let mut shape = header.shape.clone();
    if lanes > 1 && shape.last() == Some(&lanes) {
        shape.pop();
    }
    Ok(HostBuffer::from_bytes(elem.clone(), data).with_shape(&shape))
}

/// The most bytes a `.npy` header may have (numpy writes a few hundred).
const MAX_HEADER_BYTES: u64 = 1 << 20;

/// The magic, version, header length and header of a `.npy` file: at most
/// [`MAX_HEADER_BYTES`] of header.
fn read_head(path: &Path, file: &mut std::fs::File) -> Result<Vec<u8>> {
    let io = |source| LaunchError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut head = Vec::new();
    (&mut *file).take(10).read_to_end(&mut head).map_err(io)?;
    if head.len() < 10 || &head[..6] != MAGIC {
        return Err(npy_err(path, "not a .npy file (bad magic)"));
    }
    let len = match head[6] {
        1 => u16::from_le_bytes([head[8], head[9]]) as u64,
        2 | 3 => {
            file.take(2).read_to_end(&mut head).map_err(io)?;
            if head.len() < 12 {
                return Err(npy_err(path, "truncated header"));
            }
            u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as u64
        }
        v => return Err(npy_err(path, format!("unsupported .npy version {v}"))),
    };
    if len > MAX_HEADER_BYTES {
        return Err(npy_err(
            path,
            format!(
                "header of {len} bytes is larger than {}, the most a .npy header may have",
                input::human_bytes(MAX_HEADER_BYTES)
            ),
        ));
    }
    file.take(len).read_to_end(&mut head).map_err(io)?;
    Ok(head)
}

/// Writes a buffer as a `.npy` file atomically: the data goes to a new
/// temporary file in the same folder (exclusive create, no symlink followed,
/// unpredictable name), which is then renamed over `path`; a device or FIFO
/// target is written in place (see [`ranges_format::output::write_file`]). Vector types
/// are written with shape `(N, storage_lanes)`, unknown types as `|V<size>`.
pub fn write_npy(path: &Path, buffer: &HostBuffer) -> Result<()> {
    ranges_format::output::write_file(path, |f| write_npy_to(f, buffer)).map_err(|source| {
        LaunchError::Io {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// Writes a buffer in the `.npy` format to `f` (what [`write_npy`] writes;
/// for a file of a [`ranges_format::output::Outputs`] set).
pub fn write_npy_to(f: &mut dyn std::io::Write, buffer: &HostBuffer) -> std::io::Result<()> {
    let elem = buffer.elem();
    // the elements' shape, and a vector type's lanes last
    let mut dims = buffer.shape();
    let descr = match elem.scalar {
        Some(k) if elem.storage_lanes() > 1 => {
            dims.push(elem.storage_lanes() as u64);
            k.npy_descr().to_string()
        }
        Some(k) => k.npy_descr().to_string(),
        None => format!("|V{}", elem.size),
    };
    let shape = match dims.as_slice() {
        [one] => format!("({one},)"),
        _ => {
            let d: Vec<String> = dims.iter().map(u64::to_string).collect();
            format!("({})", d.join(", "))
        }
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // magic(6) + version(2) + len(2) + header + '\n' aligned to 64
    let unpadded = 10 + header.len() + 1;
    let pad = (64 - unpadded % 64) % 64;
    header.push_str(&" ".repeat(pad));
    header.push('\n');
    f.write_all(MAGIC)?;
    f.write_all(&[1, 0])?;
    f.write_all(&(header.len() as u16).to_le_bytes())?;
    f.write_all(header.as_bytes())?;
    f.write_all(buffer.as_bytes())
}

fn expected_descr(elem: &ElemType) -> String {
    match elem.scalar {
        Some(k) => k.npy_descr().to_string(),
        None => format!("|V{}", elem.size),
    }
}

fn descr_matches(descr: &str, expected: &str, elem: &ElemType) -> bool {
    let norm = |d: &str| -> String {
        let (order, rest) = d.split_at(d.len().min(1));
        match order {
            "<" | "|" | "=" => rest.to_string(),
            ">" if rest.ends_with('1') => rest.to_string(),
            _ => d.to_string(),
        }
    };
    if norm(descr) == norm(expected) {
        return true;
    }
    // opaque types can also be given as raw bytes
    elem.scalar.is_none() && matches!(descr, "|u1" | "<u1" | "|i1" | "<i1")
}

fn descr_item_size(descr: &str) -> Option<u64> {
    let digits: String = descr.chars().filter(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

fn parse_header(path: &Path, bytes: &[u8]) -> Result<(Header, usize)> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err(npy_err(path, "not a .npy file (bad magic)"));
    }
    let major = bytes[6];
    let (len, start) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10usize),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err(npy_err(path, "truncated header"));
            }
            (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            )
        }
        v => return Err(npy_err(path, format!("unsupported .npy version {v}"))),
    };
    let end = start
        .checked_add(len)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| npy_err(path, "truncated header"))?;
    let text =
        std::str::from_utf8(&bytes[start..end]).map_err(|_| npy_err(path, "header is not text"))?;
    let descr = dict_value(text, "descr")
        .and_then(quoted)
        .ok_or_else(|| npy_err(path, "header has no 'descr'"))?;
    let fortran_order = dict_value(text, "fortran_order")
        .map(|v| v.trim_start().starts_with("True"))
        .unwrap_or(false);
    let shape_text =
        dict_value(text, "shape").ok_or_else(|| npy_err(path, "header has no 'shape'"))?;
    let shape_text = shape_text.trim_start();
    let close = shape_text
        .find(')')
        .ok_or_else(|| npy_err(path, "malformed 'shape'"))?;
    let inner = shape_text
        .get(1..close)
        .ok_or_else(|| npy_err(path, "malformed 'shape'"))?;
    let mut shape = Vec::new();
    for part in inner.split(',') {
        let p = part.trim().trim_end_matches('L');
        if p.is_empty() {
            continue;
        }
        shape.push(
            p.parse::<u64>()
                .map_err(|_| npy_err(path, format!("malformed 'shape' entry '{p}'")))?,
        );
    }
    Ok((
        Header {
            descr,
            fortran_order,
            shape,
        },
        end,
    ))
}

fn dict_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    for q in ['\'', '"'] {
        let pat = format!("{q}{key}{q}");
        if let Some(pos) = text.find(&pat) {
            let rest = &text[pos + pat.len()..];
            let colon = rest.find(':')?;
            return Some(&rest[colon + 1..]);
        }
    }
    None
}

fn quoted(v: &str) -> Option<String> {
    let v = v.trim_start();
    let q = v.chars().next()?;
    if q != '\'' && q != '"' {
        return None;
    }
    let rest = &v[1..];
    let end = rest.find(q)?;
    Some(rest[..end].to_string())
}
