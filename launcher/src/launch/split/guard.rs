//! The run-time guard's side of a split launch: the verdict read from each
//! device's flags, and, when it fired, the restore of what only a device
//! held from the backups phase 0 took.

use std::sync::Arc;

use opencl3::memory::Buffer;

use crate::coherence::Holder;
use crate::error::Result;
use crate::exec::{self, Finisher};
use crate::launch::schedule::DevWork;
use crate::launch::setargs::{guard_bits, GUARD_FLAG_BYTES};
use crate::plan::Plan;
use crate::resident::Residency;
use crate::runs::Runs;
use crate::runtime::DeviceCtx;

/// The guard's verdict, from each device's flags: the accesses it caught
/// (none: the outputs can be trusted).
pub(super) fn guard_verdict(
    plan: &Plan,
    works: &[DevWork],
    flags: &[[u8; GUARD_FLAG_BYTES]],
) -> Vec<String> {
    let infos = &plan.kernel.args;
    let mut fired = Vec::new();
    for (wi, w) in works.iter().enumerate() {
        for (slot, arg_index) in plan
            .guard
            .as_ref()
            .map(|g| g.as_slice())
            .unwrap_or(&[])
            .iter()
            .enumerate()
        {
            let f = guard_bits(&flags[wi], slot);
            if f != 0 {
                let name = infos
                    .get(*arg_index as usize)
                    .map_or("?", |i| i.name.as_str());
                let what = if f & 1 != 0 {
                    "outside its device buffer"
                } else {
                    "outside its analyzed range"
                };
                fired.push(format!(
                    "an access of '{name}' {what} on device {}",
                    w.device
                ));
            }
        }
    }
    fired
}

/// After the guard fired: restores what only a device held (`backups`);
/// the rest of each write window is no longer trusted on that device.
pub(super) fn restore(
    plan: &Plan,
    res: &mut [Option<&mut Residency>],
    works: &[DevWork],
    ctx_of: &[Arc<DeviceCtx>],
    backups: &[Backup],
) -> Result<()> {
    let mut fin = Finisher::new();
    for b in backups {
        let a = &plan.arrays[b.array];
        let r = res[a.arg_index as usize].as_deref().expect("checked above");
        let alloc = &r.allocs[&works[b.work].device];
        fin.add(&ctx_of[b.work]);
        let len = b
            .kept
            .hull()
            .map_or(0, |(l, u)| (u - l + 1) as u64 * a.elem_size) as usize;
        exec::release(exec::copy(
            &ctx_of[b.work],
            &b.mem,
            0,
            &alloc.mem,
            ((b.lo - alloc.base) as u64 * a.elem_size) as usize,
            len,
        )?);
    }
    fin.finish()?;
    for (wi, w) in works.iter().enumerate() {
        for (ai, a) in plan.arrays.iter().enumerate() {
            let Some((l, u)) = w.arrays[ai].write_r else {
                continue;
            };
            let kept = backups
                .iter()
                .find(|b| b.work == wi && b.array == ai)
                .map_or_else(Runs::new, |b| b.kept.clone());
            let r = res[a.arg_index as usize]
                .as_deref_mut()
                .expect("checked above");
            r.coh.invalidate(
                Holder::Device(w.device),
                &Runs::interval(l, u).subtract(&kept),
            );
        }
    }
    Ok(())
}

/// A copy, on one device, of the elements of a written array that only
/// that device holds, taken before its kernel runs: restored when the guard
/// discards the launch, so that nothing is lost.
pub(super) struct Backup {
    pub(super) work: usize,
    pub(super) array: usize,
    pub(super) lo: i64,
    pub(super) kept: Runs,
    pub(super) mem: Buffer<u8>,
}
