//! launcher: runs one OpenCL kernel split across several devices.
//!
//! The only crate of clpart that talks to OpenCL (through opencl3 over the
//! ICD loader). It takes a kernel's range file entry ([`ranges_format`]),
//! evaluates each array's ranges for every device's slice of the NDRange,
//! moves to each device only those ranges, runs the rewritten subkernel
//! there, and glues the outputs back bit-for-bit ([`launch`]). It also runs
//! kernels whole ([`run_whole`]) for verification and unsplittable kernels,
//! lists devices ([`devices`]) and checks kernel arguments against the
//! kernel's argument list ([`KernelArgs`]; `NAME=SPEC` strings and `.npy`
//! files are the `host-data` crate's).
//!
//! Main types: [`Runtime`] (devices, per-device context and queue, program
//! cache), [`Plan`] (a kernel with expressions bound once and programs
//! built per device), [`KernelArgs`], [`NdRange`], [`RunReport`].
//! Resident buffers' bookkeeping, pure (no OpenCL): [`Runs`] (sets of
//! element indices and the [`Rect`] transfers that move them) and
//! [`Coherence`] (which holder holds valid values of which elements).
//!
//! PoCL picks its devices from `POCL_DEVICES` when the ICD loader first
//! loads it: set the variable before the first OpenCL call of the process.

mod args;
mod balance;
mod binaries;
mod buffer;
mod coherence;
mod conflict;
mod elem;
mod error;
mod exec;
mod launch;
mod ndrange;
mod plan;
mod pool;
mod ranks;
mod reduce;
mod resident;
mod rounds;
mod runs;
mod runtime;

pub use args::KernelArgs;
pub use balance::{launch_key, Balancer, Choice, MIN_KERNEL_MS};
pub use binaries::{cache_root, CacheRoot};
pub use buffer::{ArgValue, HostBuffer};
pub use coherence::{Coherence, Holder, Lost, NeedPlan};
pub use elem::{int_arg_value, ElemType, ScalarKind, StructField};
pub use error::{LaunchError, Result};
pub use launch::{launch, run_whole, DeviceReport, LaunchOptions, Mismatch, RunReport, WholeRun};
pub use ndrange::{check_shares, parse_shares, split_groups, NdRange};
pub use plan::Plan;
pub use pool::PoolCounts;
pub use ranks::{RankSlices, SliceSets};
pub use resident::{launch_resident, BufferId, BufferSet, DeviceBuffer};
pub use rounds::{launch_in_rounds, launch_resident_in_rounds, probe_window};
pub use runs::{CostModel, Rect, Runs, COMMAND_COST_BYTES, COST_MODEL, MAX_EXTRA_PERCENT};
pub use runtime::{devices, DeviceInfo, DeviceType, Runtime};
