//! Reading and writing `.npy` files (numpy format 1.0-3.0, C order) for
//! buffer arguments and outputs, through the `npyz` crate.
//!
//! A file's shape is the buffer's shape and back; its dtype is the element
//! type's ([`dtype`]): a scalar or vector type's lane type, a struct's
//! structured dtype. What a file may claim is bounded before it is
//! believed: the header to [`MAX_HEADER_BYTES`], the data to the file's
//! length and [`input::data_file`].

mod dtype;
#[cfg(test)]
mod tests;

use std::io::{Read as _, Write as _};
use std::path::Path;

use launcher::{ElemType, HostBuffer, LaunchError, Result};
use ranges_format::input;

const MAGIC: &[u8] = b"\x93NUMPY";

fn npy_err(path: &Path, message: impl Into<String>) -> LaunchError {
    LaunchError::Npy {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// Reads a `.npy` file as a buffer of `elem`, in the file's shape (less a
/// trailing dimension of a vector type's lanes).
///
/// The dtype must be the element type's lane type (`<f8` for `double` and
/// `double4`, `|u1` for `uchar`, `<f2` for `half`); a struct type accepts a
/// structured dtype of its size, `|V<size>`, or raw bytes (`|u1`). Big-endian
/// integers and floats (`>f4`) are converted to the buffer's little-endian;
/// other big-endian types are refused. The file must be in C order (Fortran
/// order only where it is the same, one dimension past 1) and hold a whole
/// number of elements (`N*storage_lanes` scalars for vector types).
pub fn read_npy(path: &Path, elem: &ElemType) -> Result<HostBuffer> {
    let io = |source| LaunchError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = input::open_regular(path).map_err(io)?;
    let file_len = file.metadata().map_err(io)?.len();
    let head = read_head(path, &mut file)?;
    let text_start = if head[6] == 1 { 10 } else { 12 };
    let depth = nesting(&head[text_start..]);
    if depth > MAX_HEADER_NESTING {
        return Err(npy_err(
            path,
            format!(
                "header nests {depth} brackets deep, more than the {MAX_HEADER_NESTING} a .npy header may"
            ),
        ));
    }
    refuse_overflowing_shape(path, &head[text_start..])?;
    let header = npyz::NpyHeader::from_reader(head.as_slice()).map_err(|e| {
        npy_err(
            path,
            format!("malformed header: {}", one_line(&e.to_string())),
        )
    })?;
    let layout = dtype::file_layout(&header.dtype(), elem).map_err(|m| npy_err(path, m))?;
    if header.order() == npyz::Order::Fortran
        && header.shape().iter().filter(|&&d| d > 1).count() > 1
    {
        return Err(npy_err(
            path,
            "fortran-order arrays are not supported (save with C order)",
        ));
    }
    let limit = input::data_file();
    let n_bytes = header
        .len()
        .checked_mul(layout.item_size)
        .filter(|&b| b <= limit.bytes)
        .ok_or_else(|| too_large(path, header.shape()))?;
    let n_items = header.len();
    let data_start = head.len() as u64;
    let on_disk = file_len.saturating_sub(data_start);
    let truncated = |found: u64| {
        npy_err(
            path,
            format!("file is truncated: shape needs {n_bytes} bytes of data, found {found}"),
        )
    };
    if on_disk < n_bytes {
        return Err(truncated(on_disk));
    }
    if n_bytes % elem.size.max(1) as u64 != 0 {
        return Err(npy_err(
            path,
            format!(
                "{n_items} values are not a whole number of '{}' elements ({} values each)",
                elem.name,
                elem.size as u64 / layout.item_size
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
    if !layout.swaps.is_empty() {
        for item in data.chunks_exact_mut(layout.item_size as usize) {
            for &(at, len) in &layout.swaps {
                item[at..at + len].reverse();
            }
        }
    }
    // the elements' shape: the file's, less a trailing dimension of a
    // vector type's lanes (Fortran order was refused above where it matters)
    let lanes = (elem.size as u64)
        .checked_div(layout.item_size)
        .unwrap_or(1);
    let mut shape = header.shape().to_vec();
    if lanes > 1 && shape.last() == Some(&lanes) {
        shape.pop();
    }
    Ok(HostBuffer::from_bytes(elem.clone(), data).with_shape(&shape))
}

fn too_large(path: &Path, shape: &[u64]) -> LaunchError {
    let limit = input::data_file();
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    npy_err(
        path,
        format!(
            "shape ({}) is too large: its data would be larger than {}, the most {} may have",
            dims.join(", "),
            input::human_bytes(limit.bytes),
            limit.what
        ),
    )
}

/// The first line of a message, its spaces collapsed.
fn one_line(message: &str) -> String {
    let first = message.lines().next().unwrap_or_default();
    first.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The most bytes a `.npy` header may have: numpy writes a few hundred
/// (a struct of a thousand fields takes about 20 KiB) and reads at most
/// 10000 unless told otherwise; the header's parser takes about a second
/// for 64 KiB nested [`MAX_HEADER_NESTING`] deep.
const MAX_HEADER_BYTES: u64 = 64 << 10;

/// The most brackets a header may nest. numpy nests 3 (a dict, the list of
/// a structured dtype, a field's tuple), 2 more for each struct in a
/// struct and 1 for a field's array shape; the header's parser backtracks
/// exponentially in the depth (20 nested lists take seconds).
const MAX_HEADER_NESTING: usize = 9;

/// How deep brackets nest in a header's text, outside quoted strings.
fn nesting(text: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut quote = None;
    let mut escaped = false;
    for &b in text {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == q {
                quote = None;
            }
            continue;
        }
        match b {
            b'\'' | b'"' => quote = Some(b),
            b'[' | b'(' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b')' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// The magic, version, header length and header of a `.npy` file: at most
/// [`MAX_HEADER_BYTES`] of header, all there.
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
    let len = match (head[6], head[7]) {
        (1, 0) => u16::from_le_bytes([head[8], head[9]]) as u64,
        (2 | 3, 0) => {
            file.take(2).read_to_end(&mut head).map_err(io)?;
            if head.len() < 12 {
                return Err(npy_err(path, "truncated header"));
            }
            u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as u64
        }
        (major, minor) => {
            return Err(npy_err(
                path,
                format!("unsupported .npy version {major}.{minor} (valid: 1.0, 2.0, 3.0)"),
            ))
        }
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
    let before = head.len() as u64;
    file.take(len).read_to_end(&mut head).map_err(io)?;
    if (head.len() as u64) < before + len {
        return Err(npy_err(path, "truncated header"));
    }
    Ok(head)
}

/// Refuses a header whose shape's dimensions multiply past 64 bits, before
/// `npyz` multiplies them (unchecked). Every `shape` key is checked (`npyz`
/// takes the last); headers that are not a dict with a list of integers for
/// `shape` are left to `npyz` to refuse.
fn refuse_overflowing_shape(path: &Path, text: &[u8]) -> Result<()> {
    use py_literal::Value;
    let Some(text) = std::str::from_utf8(text).ok() else {
        return Ok(());
    };
    let Ok(Value::Dict(entries)) = text.trim_end().parse::<Value>() else {
        return Ok(());
    };
    for (key, value) in &entries {
        if key.as_string().is_none_or(|k| k != "shape") {
            continue;
        }
        let (Value::Tuple(dims) | Value::List(dims)) = value else {
            continue;
        };
        let shape: Option<Vec<u64>> = dims
            .iter()
            .map(|d| match d {
                Value::Integer(n) => u64::try_from(n).ok(),
                _ => None,
            })
            .collect();
        let Some(shape) = shape else {
            continue;
        };
        // with the zeros left out no product of some dimensions is larger
        let fits = shape
            .iter()
            .filter(|&&d| d != 0)
            .try_fold(1u64, |n, &d| n.checked_mul(d))
            .is_some();
        if !fits {
            return Err(too_large(path, &shape));
        }
    }
    Ok(())
}

/// Writes a buffer as a `.npy` file atomically: the data goes to a new
/// temporary file in the same folder (exclusive create, no symlink followed,
/// unpredictable name), which is then renamed over `path`; a device or FIFO
/// target is written in place (see [`ranges_format::output::write_file`]).
/// The file has the buffer's shape; a vector type's lanes are a last
/// dimension (`(N, storage_lanes)`); a struct is a structured dtype when its
/// layout is known, else `|V<size>`.
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
    let (dtype, per_elem) = dtype::write_dtype(elem);
    let mut shape = buffer.shape();
    if per_elem > 1 {
        shape.push(per_elem as u64);
    }
    let item_size = (elem.size / per_elem).max(1) as usize;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, f);
    use npyz::WriterBuilder as _;
    let mut npy = npyz::WriteOptions::<Item<'_>>::new()
        .dtype(dtype)
        .shape(&shape)
        .writer(&mut out)
        .begin_nd()?;
    for item in buffer.as_bytes().chunks_exact(item_size) {
        npy.push(&Item(item))?;
    }
    npy.finish()?;
    out.flush()
}

/// One item of a file's dtype: its bytes as the buffer holds them, which
/// are already the dtype's (little-endian, the struct's layout).
struct Item<'a>(&'a [u8]);

struct ItemWriter<'a>(std::marker::PhantomData<Item<'a>>);

impl<'a> npyz::Serialize for Item<'a> {
    type TypeWriter = ItemWriter<'a>;

    fn writer(_: &npyz::DType) -> std::result::Result<ItemWriter<'a>, npyz::DTypeError> {
        Ok(ItemWriter(std::marker::PhantomData))
    }
}

impl<'a> npyz::TypeWrite for ItemWriter<'a> {
    type Value = Item<'a>;

    fn write_one<W: std::io::Write>(&self, mut w: W, item: &Item<'a>) -> std::io::Result<()> {
        w.write_all(item.0)
    }
}
