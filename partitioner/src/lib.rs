//! `partitioner`: the third stage of clpart.
//!
//! From the access relations of `access-analysis` it computes, per array and
//! per slice of the NDRange, the element ranges (piecewise quasi-affine in the
//! parameters, slice bounds included), Ehrhart counts (barvinok, or PolyLib), write
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

/// What a launch knows that the parametric analysis does not.
#[derive(Debug, Clone, Default)]
pub struct LaunchValues {
    /// The NDRange's global size per dimension.
    pub global: Vec<u64>,
    /// The work-group size per dimension.
    pub local: Vec<u64>,
    /// Integer scalar arguments by name.
    pub scalars: std::collections::BTreeMap<String, i64>,
}

/// The range file for one launch of a kernel from source: analyzed with the
/// local size known (group and local ids become exact); when that cannot prove
/// the writes of different slices disjoint, analyzed again specialized on the
/// launch's NDRange sizes and integer scalars (the note in the kernel's
/// diagnostics says so). Callers cache the result per distinct values.
pub fn analyze_for_launch(
    file: &str,
    source: &str,
    build_options: &[String],
    kernel: Option<&str>,
    split_dim: Option<u32>,
    launch: &LaunchValues,
) -> Result<RangeFile, AnalyzeError> {
    let mut po = PartitionOptions { split_dim, ..Default::default() };
    let mut ls = [1i64; 3];
    for (i, l) in launch.local.iter().take(3).enumerate() {
        ls[i] = *l as i64;
    }
    po.analysis.local_size = Some(ls);
    let (_, rf) = analyze_source(file, source, build_options, kernel, &po)?;
    let Some(k) = rf.kernels.first() else { return Ok(rf) };
    if k.splittable || k.arrays.iter().all(|a| a.write.as_ref().is_none_or(|w| w.disjoint_across_slices)) {
        return Ok(rf);
    }
    for (d, g) in launch.global.iter().take(3).enumerate() {
        po.analysis.specialize.insert(format!("gs{d}"), *g as i64);
    }
    for (name, v) in &launch.scalars {
        let is_int_scalar = k.args.iter().any(|a| {
            &a.name == name
                && a.kind == ranges_format::ArgKind::Scalar
                && ["char", "uchar", "short", "ushort", "int", "uint", "long", "ulong"].contains(&a.elem_type.as_str())
        });
        if is_int_scalar {
            po.analysis.specialize.insert(name.clone(), *v);
        }
    }
    let (_, mut special) = analyze_source(file, source, build_options, kernel, &po)?;
    if special.kernels.first().is_some_and(|s| s.splittable) {
        special.kernels[0].diagnostics.push("ranges specialized on this launch's NDRange sizes and scalar arguments".into());
        return Ok(special);
    }
    Ok(rf)
}
