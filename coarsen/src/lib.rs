//! `coarsen`: the first stage of clpart.
//!
//! OpenCL C 1.2 source is parsed with libclang ([`parse_program`]) into the typed
//! kernel IR ([`ir`]); [`emit_c`] turns a kernel into coarsened C in the SOpenCL
//! style: one C function executing one work-group as loops over local ids, with
//! barriers removed by loop fission.
//!
//! The crate is pure: it takes text and options and returns values.

mod clang;
mod driver_macros;
pub mod emit;
mod group_size;
pub mod ir;
mod parse;
mod snapshot;
mod spans;

pub use driver_macros::driver_conditional;
pub use emit::{emit_c, emit_c_with, EmitOptions, C_HEADER};
pub use group_size::group_size_use;
pub use parse::{parse_program, INT24_OPTIONS};
pub use snapshot::{has_include, with_includes_written_in};

/// Options for parsing.
#[derive(Debug, Clone, Default)]
pub struct ParseOptions {
    /// Extra clang arguments from the user (`-D`, `-I`, ...).
    pub clang_args: Vec<String>,
}

/// Errors of the coarsening stage.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum CoarsenError {
    #[error("{file}:{line}:{col}: {message}")]
    Clang {
        file: String,
        line: u32,
        col: u32,
        message: String,
    },
    #[error("{file}: empty file, no kernel to analyze")]
    Empty { file: String },
    #[error("{file}: no kernel named '{name}' (kernels: {available})")]
    UnknownKernel {
        file: String,
        name: String,
        available: String,
    },
    #[error("{file}: no __kernel function found")]
    NoKernel { file: String },
    #[error("{file}:{line}:{col}: kernel '{kernel}' cannot be coarsened: {message}")]
    Unsupported {
        file: String,
        kernel: String,
        line: u32,
        col: u32,
        message: String,
    },
}

impl ir::Program {
    /// Finds the kernel `name`, or the only/first kernel when `name` is `None`.
    pub fn kernel(&self, name: Option<&str>) -> Result<&ir::Function, CoarsenError> {
        let kernels: Vec<&ir::Function> = self.kernels().collect();
        if kernels.is_empty() {
            return Err(CoarsenError::NoKernel {
                file: self.file.clone(),
            });
        }
        match name {
            None => Ok(kernels[0]),
            Some(n) => kernels
                .iter()
                .copied()
                .find(|k| k.name == n)
                .ok_or_else(|| CoarsenError::UnknownKernel {
                    file: self.file.clone(),
                    name: n.to_string(),
                    available: kernels
                        .iter()
                        .map(|k| k.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                }),
        }
    }
}

/// The folder of the libclang clpart was built with: `LIBCLANG_PATH` when it
/// was built, else Debian's `/usr/lib/llvm-19/lib`; `None` when that folder
/// is not there. A program that sets `LIBCLANG_PATH` to it before its first
/// parse (the `clpart` command does, when the variable is unset) spares
/// clang-sys its search of the system's folders (tens of milliseconds: it
/// runs `llvm-config` and reads every folder that could hold a libclang).
pub fn default_libclang_dir() -> Option<&'static str> {
    let dir = option_env!("LIBCLANG_PATH")
        .filter(|d| !d.is_empty())
        .unwrap_or("/usr/lib/llvm-19/lib");
    std::path::Path::new(dir).exists().then_some(dir)
}

/// Loads libclang into the calling thread now, as the first parse would
/// (once per process; each thread then only binds it). For a caller that
/// must know when the library's static constructors run: the OpenCL
/// layer's worker thread orders its exit handler after them. `Err` says why
/// libclang cannot be loaded (the parse then fails with the same reason).
pub fn load_libclang() -> Result<(), String> {
    clang::load_libclang().map_err(|e| match e {
        clang::ParseFailure::NoLibclang(why) => why,
        clang::ParseFailure::Failed => "libclang failed".into(),
    })
}
