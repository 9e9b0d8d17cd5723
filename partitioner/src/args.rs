//! The kernel's argument list as the range file records it.

use coarsen::ir::{AddrSpace, Function, Type};
use ranges_format::{ArgInfo, ArgKind};

/// The size of an image's or a sampler's handle as `clSetKernelArg` takes
/// it (`cl_mem`, `cl_sampler`).
const HANDLE_BYTES: u32 = 8;

/// Every argument of `kernel` in order: kind, element type and size (an
/// image or a sampler: a scalar of its type's plain name, the size of its
/// handle).
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
                // an image or a sampler: its handle (`cl_mem`, `cl_sampler`)
                other if other.is_image_or_sampler() => {
                    let name = other.name();
                    let plain = name.split_whitespace().last().unwrap_or_default();
                    return ArgInfo {
                        index: i as u32,
                        name: p.name.clone(),
                        kind: ArgKind::Scalar,
                        elem_type: plain.to_string(),
                        elem_size: HANDLE_BYTES,
                    };
                }
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
