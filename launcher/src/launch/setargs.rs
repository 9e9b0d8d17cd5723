//! How a launch sets a kernel's arguments: the by-value arguments copied
//! out of [`KernelArgs`], `__local` arguments with the guard's sink, the
//! subkernel's extra arguments, the guard's flag bits and the window of a
//! `__local` argument.

use opencl3::memory::{Buffer, ClMem};

use crate::args::KernelArgs;
use crate::buffer::ArgValue;
use crate::exec::SetArg;
use crate::plan::{ExtraValue, Window, GUARD_SINK};

/// A by-value argument copied out of `KernelArgs`, so that no reference into
/// the arguments is alive while transfers use raw pointers into them.
pub(super) enum ScalarArg {
    Bytes(Vec<u8>),
    Local(usize),
    Buffer,
}

pub(super) fn scalar_values(args: &KernelArgs) -> Vec<ScalarArg> {
    args.values()
        .iter()
        .map(|v| match v {
            ArgValue::Scalar { bytes, .. } => ScalarArg::Bytes(bytes.clone()),
            ArgValue::Local { bytes } => ScalarArg::Local(*bytes as usize),
            ArgValue::Buffer(_) => ScalarArg::Buffer,
        })
        .collect()
}

pub(super) fn arg_value(s: &ScalarArg, mem: Option<opencl3::types::cl_mem>) -> SetArg<'_> {
    match (s, mem) {
        (ScalarArg::Bytes(b), _) => SetArg::Bytes(b),
        (ScalarArg::Local(n), _) => SetArg::Local(*n),
        (ScalarArg::Buffer, Some(m)) => SetArg::Mem(m),
        (ScalarArg::Buffer, None) => SetArg::Mem(std::ptr::null_mut()),
    }
}

/// Appends the subkernel's extra arguments; the guard's flag buffer is
/// `flags` (NULL when the guard is compiled out and never touches it).
pub(crate) fn push_extra_args<'a>(
    set: &mut Vec<(&'a str, SetArg<'a>)>,
    names: &'a [String],
    values: &[ExtraValue],
    flags: Option<&Buffer<u8>>,
) {
    for (name, v) in names.iter().zip(values) {
        set.push((
            name.as_str(),
            match v {
                ExtraValue::Long(v) => SetArg::Long(*v),
                ExtraValue::GuardFlags => {
                    SetArg::Mem(flags.map_or(std::ptr::null_mut(), |b| b.get()))
                }
            },
        ));
    }
}

/// Bytes of the guard's flag buffer: two `int`s, two bits per guarded
/// argument (see `partitioner::subkernel`).
pub(crate) const GUARD_FLAG_BYTES: usize = 8;

/// The guard's two bits for flag slot `slot` (1: an access outside the
/// buffer, 2: inside it but outside the window).
pub(super) fn guard_bits(flags: &[u8], slot: usize) -> i32 {
    let lo = u32::from_ne_bytes(flags[0..4].try_into().expect("4 bytes")) as u64;
    let hi = u32::from_ne_bytes(flags[4..8].try_into().expect("4 bytes")) as u64;
    (((hi << 32 | lo) >> (2 * slot)) & 3) as i32
}

/// The guard window of a `__local` argument: all of it.
pub(super) fn local_window(args: &KernelArgs, arg_index: u32) -> Window {
    let es = args
        .infos()
        .get(arg_index as usize)
        .map_or(1, |i| i.elem_size.max(1)) as i64;
    match args.value(arg_index) {
        Some(ArgValue::Local { bytes }) => {
            let n = *bytes as i64 / es;
            Window {
                base: 0,
                read: (0, n),
                write: (0, n),
                extent: n,
                boxes: None,
            }
        }
        _ => Window::default(),
    }
}

/// An argument as the guarded subkernel takes it: `__local` arguments get
/// the guard's sink after their elements.
pub(super) fn guarded_arg(
    s: &ScalarArg,
    mem: Option<opencl3::types::cl_mem>,
    sink: u64,
    elem_size: u32,
) -> SetArg<'_> {
    match s {
        ScalarArg::Local(n) if sink > 0 => SetArg::Local(*n + local_sink_bytes(elem_size) as usize),
        _ => arg_value(s, mem),
    }
}

/// Bytes of the guard's sink after a `__local` argument of elements of
/// `elem_size` bytes (an element type of unknown size gets a generous one).
pub(crate) fn local_sink_bytes(elem_size: u32) -> u64 {
    GUARD_SINK
        * if elem_size == 0 {
            256
        } else {
            elem_size as u64
        }
}
