//! Warming a driver's compiles for a later run ([`Plan::warm_launches`]).
//!
//! PoCL compiles a kernel's work-group function at its first launch per
//! work-group size and per whether the global offset is zero (and keeps
//! it in its cache on disk): hundreds of milliseconds per device, paid by
//! the first split launch of each run that has not seen them. A process
//! that makes an analysis for a later run launches the guarded subkernel
//! once per device at offset zero and once beside it, over one
//! work-group of the size the application's launches use; the run then
//! finds the compiled functions in the driver's cache.
//!
//! The launch computes nothing anyone reads: every guard window is empty
//! and every extent zero, so each access of a global or `__local` array
//! either lies in a work-group the per-group test proved touches nothing,
//! or goes to the sink (a scratch buffer of [`GUARD_SINK`] elements
//! past its zero extent); integer scalars are zero. Only a subkernel with
//! the guard on is warmed (never one whose accesses go unchecked). The
//! kernel's own private arithmetic on those zeros may still fault (an
//! integer division by a zero scalar): only ever do this in a process of
//! its own whose work is done, as `clpart analyze-request` does.

use opencl3::kernel::Kernel;
use opencl3::memory::ClMem;
use ranges_format::ArgKind;

use super::guard::{GUARD_SINK, NO_WINDOW};
use super::Plan;
use crate::error::{cl_err, LaunchError, Result};
use crate::exec::{self, SetArg};
use crate::ndrange::NdRange;

/// Bytes of each `__local` argument of a warming launch (before its sink).
const LOCAL_BYTES: usize = 4096;

impl Plan {
    /// Launches the guarded subkernel on each of `devices` over one
    /// work-group of `local` (which must have the kernel's number of
    /// dimensions), at offset zero and one work-group beside it in the
    /// split dimension, and waits for both (module doc). An error where
    /// the kernel has no guarded subkernel, or an argument whose size is
    /// unknown.
    pub fn warm_launches(&mut self, devices: &[usize], local: &[u64]) -> Result<()> {
        let refuse = |message: &str| LaunchError::RangeFile {
            kernel: self.kernel.name.clone(),
            message: format!("cannot warm the driver: {message}"),
        };
        if self.unsplit_reason.is_some() || self.guard.is_err() {
            return Err(refuse("the kernel has no guarded subkernel"));
        }
        let Some(sub) = self.kernel.subkernel.clone() else {
            return Err(refuse("no subkernel"));
        };
        if local.is_empty() || local.contains(&0) {
            return Err(refuse("no work-group size"));
        }
        let args = self.kernel.args.clone();
        if args
            .iter()
            .any(|a| a.kind == ArgKind::Scalar && a.elem_size == 0)
        {
            return Err(refuse("an argument of unknown size"));
        }
        let split_dim = (self.kernel.split_dim.unwrap_or(0) as usize).min(local.len() - 1);
        // one work-group, then two of which the second runs
        let mut beside = local.to_vec();
        beside[split_dim] *= 2;
        // (each: the extra arguments, and the offset at which it runs)
        let locals: Vec<usize> = local.iter().map(|&l| l as usize).collect();
        let mut launches = Vec::new();
        for (global, lo) in [(local, 0u64), (&beside[..], 1)] {
            let nd = NdRange::with_offset(global, local, &vec![0; local.len()])?;
            let extras = self.extra_values(&nd, split_dim as u32, lo, |_| &NO_WINDOW);
            let mut offset = vec![0usize; local.len()];
            offset[split_dim] = lo as usize * locals[split_dim];
            launches.push((extras, offset));
        }
        let widest = args.iter().map(|a| a.elem_size as usize).max().unwrap_or(1);
        let zeros: Vec<Vec<u8>> = args
            .iter()
            .map(|a| vec![0u8; a.elem_size as usize])
            .collect();
        for &d in devices {
            let ctx = self.runtime.ctx(d)?;
            let program = self
                .runtime
                .program(d, &sub.name, &sub.source, &self.build_options)?;
            let label = ctx.info.label();
            let kernel = Kernel::create(&program, &sub.name)
                .map_err(|e| cl_err("clCreateKernel", Some(label.clone()))(e))?;
            let scratch = exec::alloc(&ctx, GUARD_SINK as usize * widest.max(16))?;
            let flags = exec::zero_flags(&ctx, crate::launch::GUARD_FLAG_BYTES)?;
            for (extras, offset) in &launches {
                let mut set: Vec<(&str, SetArg<'_>)> = args
                    .iter()
                    .zip(&zeros)
                    .map(|(a, z)| {
                        (
                            a.name.as_str(),
                            match a.kind {
                                ArgKind::Scalar => SetArg::Bytes(z),
                                ArgKind::GlobalBuffer | ArgKind::ConstantBuffer => {
                                    SetArg::Mem(scratch.get())
                                }
                                ArgKind::LocalBuffer => SetArg::Local(
                                    LOCAL_BYTES
                                        + crate::launch::local_sink_bytes(a.elem_size) as usize,
                                ),
                            },
                        )
                    })
                    .collect();
                crate::launch::push_extra_args(&mut set, &self.extra_names, extras, Some(&flags));
                exec::set_args(&ctx, &kernel, &set)?;
                // one work-group each
                exec::release(exec::run_kernel(&ctx, &kernel, offset, &locals, &locals)?);
                exec::finish_queue(&ctx)?;
            }
            exec::release(flags);
            exec::release(scratch);
        }
        Ok(())
    }
}
