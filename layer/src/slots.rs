//! A launch's arguments as the layer resolves them from its records
//! ([`state`]): scalars with their integer value, buffers with their
//! handle, size and flags, `__local` sizes; and the kernels refused before
//! their analysis is read (SVM, images).

use launcher::ElemType;
use opencl_sys::{CL_MEM_HOST_NO_ACCESS, CL_MEM_HOST_READ_ONLY, CL_MEM_HOST_WRITE_ONLY};
use ranges_format::{ArgInfo, ArgKind};

use crate::state::{self, KernelRec};

/// One argument, resolved.
pub(crate) enum Slot {
    Scalar { bytes: Vec<u8>, int: Option<i64> },
    Buffer { mem: usize, size: usize, flags: u64 },
    Local { bytes: u64 },
}

/// The integer scalar arguments: index, name and value.
pub(crate) fn integer_scalars(
    slots: &[Slot],
    infos: &[ArgInfo],
) -> Vec<(u32, String, Option<i64>)> {
    let mut ints = Vec::new();
    for (slot, info) in slots.iter().zip(infos) {
        if let Slot::Scalar { int, .. } = slot {
            if ElemType::parse(&info.elem_type, info.elem_size).is_integer_scalar() {
                ints.push((info.index, info.name.clone(), *int));
            }
        }
    }
    ints
}

/// The arguments the layer cannot see through, before the kernel is
/// parsed: SVM (a pointer argument or `clSetKernelExecInfo`) and images.
/// Such a kernel never splits; it runs on the application's device after
/// its buffer arguments are synced ([`crate::resident::before_launch`]).
pub(crate) fn refuse_early(rec: &KernelRec) -> Result<(), String> {
    if let Some(why) = &rec.refused {
        return Err(why.to_string());
    }
    if rec.exec_info {
        return Err("clSetKernelExecInfo was called on the kernel (SVM)".into());
    }
    for (i, arg) in rec.args.iter().enumerate() {
        let Some(arg) = arg else { continue };
        if arg.svm {
            return Err(format!(
                "argument {i} is an SVM pointer (clSetKernelArgSVMPointer)"
            ));
        }
        let Some(handle) = arg.handle() else {
            continue;
        };
        let what = state::with(|s| {
            let b = s.buffers.get(&handle)?;
            let root = s.buffers.get(&b.parent.unwrap_or(handle));
            Some((b.image, root.is_some_and(|r| r.pinned)))
        });
        match what {
            Some((true, _)) => return Err(format!("argument {i} is an image")),
            Some((false, true)) => {
                return Err(format!(
                    "argument {i} is a buffer an image was made from (clCreateImage over a buffer)"
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// The kernel's arguments resolved against the layer's records.
pub(crate) fn slots(rec: &KernelRec, infos: &[ArgInfo]) -> Result<Vec<Slot>, String> {
    if rec.exec_info {
        return Err("clSetKernelExecInfo was called on the kernel (SVM)".into());
    }
    let mut slots = Vec::with_capacity(infos.len());
    let mut owners: Vec<(usize, &str)> = Vec::new();
    for info in infos {
        let raw = rec
            .args
            .get(info.index as usize)
            .and_then(|a| a.as_ref())
            .ok_or_else(|| format!("argument {} '{}' is not set", info.index, info.name))?;
        if raw.svm {
            return Err(format!(
                "argument '{}' was set with clSetKernelArgSVMPointer",
                info.name
            ));
        }
        slots.push(match info.kind {
            ArgKind::Scalar if ["image", "sampler", "pipe", "queue_t"]
                .iter()
                .any(|w| info.elem_type.contains(w)) =>
            {
                return Err(format!(
                    "argument '{}' is of type '{}', which the layer cannot see through",
                    info.name, info.elem_type
                ));
            }
            ArgKind::Scalar => {
                let bytes = raw.value.clone().ok_or_else(|| format!("argument '{}' is NULL", info.name))?;
                let int = launcher::int_arg_value(info, &bytes);
                Slot::Scalar { bytes, int }
            }
            ArgKind::LocalBuffer => Slot::Local { bytes: raw.size as u64 },
            ArgKind::GlobalBuffer | ArgKind::ConstantBuffer => {
                let handle = raw.handle().unwrap_or(0);
                if handle == 0 {
                    return Err(format!("buffer argument '{}' is NULL", info.name));
                }
                let buf = state::with(|s| s.buffers.get(&handle).cloned()).ok_or_else(|| {
                    format!("argument '{}' is not a buffer made with clCreateBuffer (an image or another object)", info.name)
                })?;
                if buf.parent.is_some() {
                    return Err(format!("argument '{}' is a sub-buffer", info.name));
                }
                if buf.flags & (CL_MEM_HOST_NO_ACCESS | CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY) != 0 {
                    return Err(format!("buffer argument '{}' cannot be read and written by the host (CL_MEM_HOST_* flags)", info.name));
                }
                if let Some((_, other)) = owners.iter().find(|(h, _)| *h == handle) {
                    return Err(format!("arguments '{other}' and '{}' are the same buffer", info.name));
                }
                owners.push((handle, &info.name));
                Slot::Buffer {
                    mem: handle,
                    size: buf.size,
                    flags: buf.flags,
                }
            }
        });
    }
    if rec.args.len() > infos.len() {
        return Err(format!(
            "the kernel has {} arguments, {} are set",
            infos.len(),
            rec.args.len()
        ));
    }
    Ok(slots)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel_with(args: Vec<Option<crate::state::RawArg>>) -> KernelRec {
        state::with(|s| {
            s.add_kernel(0x7001, 0x7000, "k".into());
            s.kernels.get_mut(&0x7001).unwrap().args = args;
            s.kernels[&0x7001].clone()
        })
    }

    fn handle_arg(h: usize) -> Option<crate::state::RawArg> {
        Some(crate::state::RawArg {
            size: 8,
            value: Some(h.to_ne_bytes().to_vec()),
            svm: false,
        })
    }

    /// What the layer cannot see through is refused before the
    /// kernel is parsed, with the reason.
    #[test]
    fn svm_images_and_buffers_under_images_are_refused() {
        state::with(|s| {
            s.add_buffer(0x7100, 64, 0);
            s.add_buffer(0x7101, 64, 0);
            s.add_image(0x7102, Some(0x7101), 0);
            s.add_image(0x7103, None, 0);
        });
        let plain = kernel_with(vec![
            handle_arg(0x7100),
            Some(crate::state::RawArg {
                size: 4,
                value: Some(vec![0; 4]),
                svm: false,
            }),
        ]);
        assert!(refuse_early(&plain).is_ok());
        let svm = kernel_with(vec![
            handle_arg(0x7100),
            Some(crate::state::RawArg {
                size: 0,
                value: None,
                svm: true,
            }),
        ]);
        assert!(refuse_early(&svm)
            .unwrap_err()
            .contains("argument 1 is an SVM pointer"));
        let mut info = kernel_with(vec![handle_arg(0x7100)]);
        info.exec_info = true;
        assert!(refuse_early(&info)
            .unwrap_err()
            .contains("clSetKernelExecInfo"));
        for image in [0x7102, 0x7103] {
            let k = kernel_with(vec![handle_arg(image)]);
            assert!(refuse_early(&k)
                .unwrap_err()
                .contains("argument 0 is an image"));
        }
        let pinned = kernel_with(vec![handle_arg(0x7100), handle_arg(0x7101)]);
        assert!(refuse_early(&pinned)
            .unwrap_err()
            .contains("argument 1 is a buffer an image was made from"));
        // Image, sampler and pipe types are refused by name too (an object
        // the layer did not see made).
        let infos = vec![ArgInfo {
            index: 0,
            name: "img".into(),
            kind: ArgKind::Scalar,
            elem_type: "__read_only image2d_t".into(),
            elem_size: 8,
            fields: Vec::new(),
        }];
        let k = kernel_with(vec![handle_arg(0x7999)]);
        assert!(slots(&k, &infos).err().unwrap().contains("image2d_t"));
    }
}
