//! The kernel's argument list as the range file records it.

use coarsen::ir::{AddrSpace, Function, Type};
use ranges_format::{ArgInfo, ArgKind};

/// Every argument of `kernel` in order: kind, element type and size.
pub fn arg_infos(kernel: &Function) -> Vec<ArgInfo> {
    kernel
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let (kind, elem) = match &p.ty {
                Type::Pointer { pointee, space, .. } => (
                    match space {
                        AddrSpace::Global | AddrSpace::Private => ArgKind::GlobalBuffer,
                        AddrSpace::Constant => ArgKind::ConstantBuffer,
                        AddrSpace::Local => ArgKind::LocalBuffer,
                    },
                    pointee.as_ref().clone(),
                ),
                other => (ArgKind::Scalar, other.clone()),
            };
            ArgInfo {
                index: i as u32,
                name: p.name.clone(),
                kind,
                elem_type: elem.name(),
                elem_size: elem.size().unwrap_or(0),
            }
        })
        .collect()
}
