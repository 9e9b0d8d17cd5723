//! Host-side values: [`HostBuffer`] (an element type and its bytes) and
//! [`ArgValue`] (the value of one kernel argument).

use crate::elem::{ElemType, ScalarKind};

/// A host-side buffer: an element type and its bytes (a whole number of
/// elements, little-endian, as the device sees them), and the shape its
/// elements were given in (`zeros:64x64`, a 2-D `.npy` file), which a
/// `.npy` output keeps. Buffers compare by type and bytes.
#[derive(Clone, Debug)]
pub struct HostBuffer {
    elem: ElemType,
    bytes: Vec<u8>,
    shape: Option<Vec<u64>>,
}

impl PartialEq for HostBuffer {
    fn eq(&self, other: &HostBuffer) -> bool {
        self.elem == other.elem && self.bytes == other.bytes
    }
}

impl HostBuffer {
    /// A buffer of `n` zero elements; an error (not an abort) when the
    /// memory cannot be had.
    pub fn zeros(elem: ElemType, n: u64) -> Result<HostBuffer, String> {
        let len = (n as usize).saturating_mul(elem.size as usize);
        if len == 0 {
            return Ok(HostBuffer {
                elem,
                bytes: Vec::new(),
                shape: None,
            });
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
        Ok(HostBuffer {
            elem,
            bytes,
            shape: None,
        })
    }

    /// Wraps bytes; the length is rounded down to whole elements.
    pub fn from_bytes(elem: ElemType, mut bytes: Vec<u8>) -> HostBuffer {
        let whole = bytes.len() - bytes.len() % elem.size.max(1) as usize;
        bytes.truncate(whole);
        HostBuffer {
            elem,
            bytes,
            shape: None,
        }
    }

    /// The same buffer with its elements in this shape (C order, the last
    /// dimension fastest); ignored unless the dimensions' product is the
    /// number of elements.
    pub fn with_shape(mut self, shape: &[u64]) -> HostBuffer {
        let n = shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d));
        self.shape = (n == Some(self.len()) && !shape.is_empty()).then(|| shape.to_vec());
        self
    }

    /// The shape of the elements: as given ([`HostBuffer::with_shape`]),
    /// else one dimension of every element.
    pub fn shape(&self) -> Vec<u64> {
        self.shape.clone().unwrap_or_else(|| vec![self.len()])
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
