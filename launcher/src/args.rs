//! Kernel arguments: [`KernelArgs`], the values of one kernel's arguments
//! checked against its argument list, made from values or from named items
//! ([`KernelArgs::from_named`]: the `NAME=SPEC` language of the `host-data`
//! crate is one such maker; host buffers are `buffer.rs`).

use ranges_format::{ArgInfo, ArgKind};

use crate::buffer::{ArgValue, HostBuffer};
use crate::error::{LaunchError, Result};

/// The arguments of one kernel, in argument order, checked against the
/// kernel's argument list.
#[derive(Clone, Debug)]
pub struct KernelArgs {
    kernel: String,
    infos: Vec<ArgInfo>,
    values: Vec<ArgValue>,
}

/// Why an image or a sampler argument gets no value here: a handle made of
/// bytes would reach the driver as a pointer.
const NO_IMAGES: &str =
    "images and samplers are made by the kernel's own host program; run it with `clpart exec`";

/// An image or a sampler argument (the range file names its type plainly:
/// `image2d_t`, `sampler_t`).
fn is_image_or_sampler(info: &ArgInfo) -> bool {
    let t = info.elem_type.as_str();
    t == "sampler_t" || (t.starts_with("image") && t.ends_with("_t"))
}

impl LaunchError {
    /// [`LaunchError::MistypedArg`] for argument `info`, its kind and type
    /// written as C declares them (`__global float*`).
    pub fn mistyped(info: &ArgInfo, message: impl Into<String>) -> LaunchError {
        LaunchError::MistypedArg {
            name: info.name.clone(),
            ty: describe(info),
            message: message.into(),
        }
    }
}

fn describe(info: &ArgInfo) -> String {
    match info.kind {
        ArgKind::Scalar => info.elem_type.clone(),
        ArgKind::GlobalBuffer => format!("__global {}*", info.elem_type),
        ArgKind::ConstantBuffer => format!("__constant {}*", info.elem_type),
        ArgKind::LocalBuffer => format!("__local {}*", info.elem_type),
    }
}

impl KernelArgs {
    /// Builds the arguments of `kernel` (whose arguments are `infos`) from
    /// named items, each made into its argument's value by `make` (the
    /// `host-data` crate's `NAME=SPEC` specs are such items). Every argument
    /// must be given exactly once; images and samplers get no value.
    pub fn from_named<T>(
        kernel: &str,
        infos: &[ArgInfo],
        items: &[(String, T)],
        mut make: impl FnMut(&ArgInfo, &T) -> Result<ArgValue>,
    ) -> Result<KernelArgs> {
        let infos = sorted_infos(kernel, infos)?;
        let mut values: Vec<Option<ArgValue>> = vec![None; infos.len()];
        for (name, item) in items {
            let Some(pos) = infos.iter().position(|i| &i.name == name) else {
                return Err(LaunchError::UnknownArg {
                    name: name.clone(),
                    kernel: kernel.to_string(),
                    valid: names(&infos),
                });
            };
            if values[pos].is_some() {
                return Err(LaunchError::DuplicateArg { name: name.clone() });
            }
            if is_image_or_sampler(&infos[pos]) {
                return Err(LaunchError::mistyped(&infos[pos], NO_IMAGES));
            }
            values[pos] = Some(make(&infos[pos], item)?);
        }
        let values = values
            .into_iter()
            .zip(&infos)
            .map(|(v, info)| {
                v.ok_or_else(|| LaunchError::MissingArg {
                    name: info.name.clone(),
                    kernel: kernel.to_string(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(KernelArgs {
            kernel: kernel.to_string(),
            infos,
            values,
        })
    }

    /// Builds the arguments from values (for hosts that already hold the
    /// data, such as the C API). `values[i]` belongs to the argument with
    /// index `i`; kinds and sizes are checked.
    pub fn from_values(
        kernel: &str,
        infos: &[ArgInfo],
        values: Vec<ArgValue>,
    ) -> Result<KernelArgs> {
        let infos = sorted_infos(kernel, infos)?;
        if values.len() < infos.len() {
            return Err(LaunchError::MissingArg {
                name: infos[values.len()].name.clone(),
                kernel: kernel.to_string(),
            });
        }
        if values.len() > infos.len() {
            return Err(LaunchError::UnknownArg {
                name: format!("#{}", infos.len()),
                kernel: kernel.to_string(),
                valid: names(&infos),
            });
        }
        for (info, value) in infos.iter().zip(&values) {
            let mistyped = |message: &str| LaunchError::mistyped(info, message);
            if is_image_or_sampler(info) {
                return Err(mistyped(NO_IMAGES));
            }
            match (info.kind, value) {
                (ArgKind::Scalar, ArgValue::Scalar { bytes, .. }) => {
                    if info.elem_size != 0 && bytes.len() != info.elem_size as usize {
                        return Err(mistyped(&format!(
                            "the value has {} bytes, the argument {}",
                            bytes.len(),
                            info.elem_size
                        )));
                    }
                }
                (ArgKind::GlobalBuffer | ArgKind::ConstantBuffer, ArgValue::Buffer(b)) => {
                    if b.is_empty() {
                        return Err(mistyped("the buffer is empty"));
                    }
                }
                (ArgKind::LocalBuffer, ArgValue::Local { .. }) => {}
                _ => return Err(mistyped("the value's kind does not match the argument")),
            }
        }
        Ok(KernelArgs {
            kernel: kernel.to_string(),
            infos,
            values,
        })
    }

    /// The kernel these arguments belong to.
    pub fn kernel(&self) -> &str {
        &self.kernel
    }

    /// The argument descriptions, by index.
    pub fn infos(&self) -> &[ArgInfo] {
        &self.infos
    }

    /// The values, by argument index.
    pub fn values(&self) -> &[ArgValue] {
        &self.values
    }

    /// The value of argument `index`.
    pub fn value(&self, index: u32) -> Option<&ArgValue> {
        self.values.get(index as usize)
    }

    /// The buffer argument called `name`.
    pub fn buffer(&self, name: &str) -> Option<&HostBuffer> {
        let pos = self.infos.iter().position(|i| i.name == name)?;
        match &self.values[pos] {
            ArgValue::Buffer(b) => Some(b),
            _ => None,
        }
    }

    /// The buffer argument with index `index`.
    pub fn buffer_at(&self, index: u32) -> Option<&HostBuffer> {
        match self.values.get(index as usize)? {
            ArgValue::Buffer(b) => Some(b),
            _ => None,
        }
    }

    pub fn buffer_at_mut(&mut self, index: u32) -> Option<&mut HostBuffer> {
        match self.values.get_mut(index as usize)? {
            ArgValue::Buffer(b) => Some(b),
            _ => None,
        }
    }

    /// The `__global` buffers (the kernel's possible outputs) with their names.
    pub fn global_buffers(&self) -> impl Iterator<Item = (&str, &HostBuffer)> {
        self.infos
            .iter()
            .zip(&self.values)
            .filter_map(|(info, v)| match (info.kind, v) {
                (ArgKind::GlobalBuffer, ArgValue::Buffer(b)) => Some((info.name.as_str(), b)),
                _ => None,
            })
    }
}

fn names(infos: &[ArgInfo]) -> String {
    infos
        .iter()
        .map(|i| i.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn sorted_infos(kernel: &str, infos: &[ArgInfo]) -> Result<Vec<ArgInfo>> {
    let mut infos = infos.to_vec();
    infos.sort_by_key(|i| i.index);
    for (pos, info) in infos.iter().enumerate() {
        if info.index as usize != pos {
            return Err(LaunchError::RangeFile {
                kernel: kernel.to_string(),
                message: format!(
                    "argument indices are not 0..{} (argument '{}' has index {})",
                    infos.len(),
                    info.name,
                    info.index
                ),
            });
        }
    }
    Ok(infos)
}
