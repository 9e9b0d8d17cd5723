//! `partitioner`: the third stage of clpart.
//!
//! From the access relations of `access-analysis` it computes, per array and
//! per slice of the NDRange, the element ranges (piecewise quasi-affine in the
//! parameters, slice bounds included), Ehrhart counts (crate `counting`), write
//! verdicts, the kernel verdict, and the rewritten subkernel; the result is a
//! [`ranges_format::KernelRanges`] per kernel. [`partition_kernel`] takes the
//! access analysis's result; the `session` crate strings the stages together.

pub mod args;
pub mod partition;
pub mod report;
pub mod subkernel;

/// The count engines (crate `counting`), under the name other crates and
/// tests reach them by: `partitioner::ehrhart::barvinok_available`.
pub use counting as ehrhart;

pub use partition::{
    deadline, partition_kernel, partition_kernel_in, sample_values, Counts, LaunchPoint,
    PartitionError, PartitionOptions,
};
