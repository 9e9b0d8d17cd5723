//! `partitioner`: the third stage of clpart.
//!
//! From the access relations of `access-analysis` it computes, per array and
//! per slice of the NDRange, the element ranges (piecewise quasi-affine in the
//! parameters, slice bounds included), Ehrhart counts (PolyLib), write
//! verdicts, the kernel verdict, and the rewritten subkernel; the result is a
//! [`ranges_format::KernelRanges`] per kernel.

pub mod args;
pub mod ehrhart;
pub mod partition;
pub mod report;
pub mod subkernel;

pub use partition::{partition_kernel, PartitionError, PartitionOptions};

use ranges_format::RangeFile;

/// Errors of [`analyze_source`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnalyzeError {
    #[error(transparent)]
    Coarsen(#[from] coarsen::CoarsenError),
    #[error(transparent)]
    Partition(#[from] PartitionError),
}

/// Parses `source` and partitions `kernel` (or every kernel) into a range file.
pub fn analyze_source(
    file: &str,
    source: &str,
    build_options: &[String],
    kernel: Option<&str>,
    options: &PartitionOptions,
) -> Result<(coarsen::ir::Program, RangeFile), AnalyzeError> {
    let parse = coarsen::ParseOptions { clang_args: build_options.to_vec() };
    let program = coarsen::parse_program(file, source, &parse)?;
    let names: Vec<String> = match kernel {
        Some(k) => vec![program.kernel(Some(k))?.name.clone()],
        None => {
            program.kernel(None)?;
            program.kernels().map(|k| k.name.clone()).collect()
        }
    };
    let mut rf = RangeFile::new(file, source);
    rf.build_options = build_options.to_vec();
    for n in &names {
        rf.kernels.push(partition_kernel(&program, n, options)?);
    }
    Ok((program, rf))
}
