//! The kernel's argument list as the range file records it.

use coarsen::ir::{AddrSpace, Function, Type};
use ranges_format::{ArgInfo, ArgKind, FieldInfo};

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
                        fields: Vec::new(),
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
                fields: field_infos(&elem),
            }
        })
        .collect()
}

/// A struct type's fields as the range file records them (none for other
/// types, or where a field's type has no known size).
fn field_infos(ty: &Type) -> Vec<FieldInfo> {
    let Type::Struct { fields, .. } = ty else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for f in fields {
        // a fixed-size array field: its innermost element, counted
        let (mut elem, mut count) = (&f.ty, 1u32);
        while let Type::Array { elem: e, len } = elem {
            count = count.saturating_mul(u32::try_from(*len).unwrap_or(u32::MAX));
            elem = e;
        }
        let Some(size) = elem.size().filter(|&n| n > 0) else {
            return Vec::new();
        };
        out.push(FieldInfo {
            name: f.name.clone(),
            offset: f.offset,
            elem_type: elem.name(),
            elem_size: size,
            count,
            fields: field_infos(elem),
        });
    }
    out
}
