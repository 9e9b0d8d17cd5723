//! Phase 0 of a split launch, on the host: what each device is sent. The
//! elements it needs that only other devices hold are gathered, its
//! allocation placed (`ensure_alloc`), the host-to-device commands made
//! ([`ArraySends`], kept for buffers that start fresh: [`Fresh`]) and, with
//! the guard, what only it holds in its write window backed up.

use std::sync::Arc;

use super::guard::Backup;
use crate::args::KernelArgs;
use crate::coherence::{Coherence, Holder};
use crate::error::Result;
use crate::exec;
use crate::launch::schedule::{range_runs, DevWork, Glue};
use crate::plan::{Plan, GUARD_SINK};
use crate::resident::{DevAlloc, Residency};
use crate::runs::{Rect, Runs, COST_MODEL};
use crate::runtime::DeviceCtx;

/// What phase 0 leaves for phase 1.
pub(super) struct Phase0 {
    /// Per device (work) and array: the first element and the elements of
    /// its allocation (`DevAlloc::base`, `DevAlloc::extent`).
    pub(super) placed: Vec<Vec<(i64, u64)>>,
    /// Per array: what it sends each device.
    pub(super) sends: Vec<Arc<ArraySends>>,
    /// With the guard, copies of what only the device holds in its write
    /// window.
    pub(super) backups: Vec<Backup>,
}

/// What a split launch sends one array, per device (work).
pub(super) struct ArraySends {
    /// The elements the device lacks, as the commands send them (gaps
    /// bridged included).
    pub(super) to_device: Vec<Runs>,
    /// The host-to-device commands.
    pub(super) rects: Vec<Vec<Rect>>,
}

/// What a split launch does to an array whose buffer starts fresh
/// ([`Residency::is_fresh`]: valid on the host only, no allocation; the
/// host-array form's buffers). From that start the bookkeeping (the
/// gathers' plans, the commands' cost model, what each holder holds
/// afterwards) depends on the schedule alone: the first launch's is kept
/// and the next ones replay it instead of computing it again. A fresh
/// buffer has nothing to gather and nothing only a device holds (no
/// backup); its allocations are made anew at every launch.
#[derive(Clone, Default)]
pub(super) struct Fresh {
    /// Phase 0's commands.
    pub(super) sends: Option<Arc<ArraySends>>,
    /// The coherence after a launch that the guard let through.
    pub(super) after: Option<Arc<Coherence>>,
}

/// Phase 0 (host): gathers on the host what the devices need and only
/// other devices hold, and what a merge compares against; allocates; makes
/// the commands; with the guard, backs up what only a device holds in its
/// write window. `gathered` gets the device-to-host bytes. A fresh array
/// takes its commands from `fresh` (kept by an earlier launch), or leaves
/// them there.
#[allow(clippy::too_many_arguments)]
pub(super) fn phase0(
    plan: &Plan,
    args: &mut KernelArgs,
    res: &mut [Option<&mut Residency>],
    works: &[DevWork],
    glue: &[Glue],
    ctx_of: &[Arc<DeviceCtx>],
    grow: bool,
    guarded: bool,
    gathered: &mut Vec<(usize, u64, u64)>,
    fresh: &mut [Option<Fresh>],
) -> Result<Phase0> {
    let n_arrays = plan.arrays.len();
    let mut placed: Vec<Vec<(i64, u64)>> = vec![vec![(0, 0); n_arrays]; works.len()];
    let mut sends: Vec<Arc<ArraySends>> = Vec::with_capacity(n_arrays);
    for ai in 0..n_arrays {
        let a = &plan.arrays[ai];
        let r = res[a.arg_index as usize]
            .as_deref_mut()
            .expect("checked above");
        let host = args
            .buffer_at_mut(a.arg_index)
            .expect("checked: array arguments are buffers");
        let es = a.elem_size;
        let kept = fresh[ai].as_ref().and_then(|f| f.sends.clone());
        let mut to_device: Vec<Runs> = Vec::new();
        if kept.is_none() {
            let mut want = Runs::new();
            for w in works {
                let da = &w.arrays[ai];
                let need = da.read_set.union(&da.prefill);
                let missing = need.subtract(&r.coh.valid(Holder::Device(w.device)));
                want = want.union(&missing);
                to_device.push(missing);
            }
            if glue[ai].on_host() {
                for w in works {
                    want = want.union(&w.arrays[ai].write_set);
                }
            }
            gathered.extend(r.gather(host.as_bytes_mut(), es, &want)?);
        }
        for (wi, w) in works.iter().enumerate() {
            let da = &w.arrays[ai];
            match da.cover {
                Some(cover) => gathered.extend(ensure_alloc(
                    r,
                    &ctx_of[wi],
                    host.as_bytes_mut(),
                    (es, a.align as i64),
                    cover,
                    grow,
                )?),
                // untouched: any allocation will do (a placeholder when none)
                None if r.allocs.contains_key(&w.device) => {}
                None => gathered.extend(ensure_alloc(
                    r,
                    &ctx_of[wi],
                    host.as_bytes_mut(),
                    (es, 1),
                    (0, 0),
                    false,
                )?),
            }
            // (an allocation keeps at least `cover`, which holds what the
            // device needs: `to_device` stays as computed above)
            let alloc = &r.allocs[&w.device];
            placed[wi][ai] = (alloc.base, alloc.extent);
        }
        // The commands: what each device lacks, gaps bridged where the host
        // holds them and a gap costs less than a command (`Runs::transfers`).
        let s = match kept {
            Some(s) => s,
            None => {
                let mut rects = Vec::with_capacity(works.len());
                for (w, to) in works.iter().zip(to_device.iter_mut()) {
                    let fill = r
                        .coh
                        .valid(Holder::Host)
                        .intersect(&range_runs(w.arrays[ai].cover));
                    let rs = to.transfers(&fill, es, COST_MODEL);
                    *to = Rect::union_of(&rs);
                    rects.push(rs);
                }
                let s = Arc::new(ArraySends { to_device, rects });
                if let Some(f) = &mut fresh[ai] {
                    f.sends = Some(s.clone());
                }
                s
            }
        };
        sends.push(s);
    }

    // Backups of what only the device holds in its write window.
    let mut backups: Vec<Backup> = Vec::new();
    if guarded {
        for (wi, w) in works.iter().enumerate() {
            for (ai, a) in plan.arrays.iter().enumerate() {
                let Some((l, u)) = w.arrays[ai].write_r else {
                    continue;
                };
                let arg = a.arg_index as usize;
                let r = res[arg].as_deref().expect("checked above");
                let kept = r
                    .coh
                    .exclusive_within(Holder::Device(w.device), &Runs::interval(l, u));
                let Some((kl, ku)) = kept.hull() else {
                    continue;
                };
                let alloc = &r.allocs[&w.device];
                let len = ((ku - kl + 1) as u64 * a.elem_size) as usize;
                let mem = exec::alloc(&ctx_of[wi], len)?;
                exec::release(exec::copy(
                    &ctx_of[wi],
                    &alloc.mem,
                    ((kl - alloc.base) as u64 * a.elem_size) as usize,
                    &mem,
                    0,
                    len,
                )?);
                backups.push(Backup {
                    work: wi,
                    array: ai,
                    lo: kl,
                    kept,
                    mem,
                });
            }
        }
    }
    Ok(Phase0 {
        placed,
        sends,
        backups,
    })
}

/// An array of at most this fraction of a device's global memory is
/// allocated whole on its first use there (see [`ensure_alloc`]).
const WHOLE_ALLOC_FRACTION: u64 = 16;

/// Makes `res`'s allocation on the device of `ctx` hold elements
/// `[lo, hi]` (and the guard's sink) from a first element that is a
/// multiple of `align`: kept when it does, otherwise replaced by one over
/// `[lo, hi]` (its start rounded down to that multiple) and, when `grow`,
/// the elements the device already holds, with as much again of slack
/// towards the growth. Valid elements the new allocation keeps are copied on the device;
/// those it drops that no other holder has are gathered to the host first.
/// With `grow`, an array small beside the device's memory
/// ([`WHOLE_ALLOC_FRACTION`]) is allocated whole.
pub(in crate::launch) fn ensure_alloc(
    res: &mut Residency,
    ctx: &std::sync::Arc<DeviceCtx>,
    host: &mut [u8],
    (es, align): (u64, i64),
    (lo, hi): (i64, i64),
    grow: bool,
) -> Result<Vec<(usize, u64, u64)>> {
    let dev = ctx.info.index;
    let aligned = |l: i64| l - l.rem_euclid(align.max(1));
    if res
        .allocs
        .get(&dev)
        .is_some_and(|a| a.covers(lo, hi) && a.base == aligned(a.base))
    {
        return Ok(Vec::new());
    }
    let valid = res.coh.valid(Holder::Device(dev));
    let (lo, hi) = match (grow, valid.hull()) {
        (true, Some((vl, vu))) => (lo.min(vl), hi.max(vu)),
        _ => (lo, hi),
    };
    // Growing past an allocation: by its own size again towards the
    // growth (within the array), so that a window moving one step per
    // launch (a plane of a 3-D grid, a column of LU) is reallocated and
    // copied O(log n) times, not at every launch (O(n^2) bytes copied).
    let n = (host.len() as u64 / es.max(1)) as i64;
    // An array small beside the device's memory is allocated whole at
    // once: untouched memory costs a CPU device nothing, and a window
    // moving one step per launch is then never reallocated nor copied.
    let whole_bytes = (n as u64 + GUARD_SINK) * es;
    let (lo, hi) = if grow
        && n > 0
        && whole_bytes <= ctx.info.global_mem_bytes / WHOLE_ALLOC_FRACTION
        && whole_bytes <= ctx.info.max_alloc_bytes
    {
        (0, n - 1)
    } else {
        (lo, hi)
    };
    let (lo, hi) = match (grow, res.allocs.get(&dev)) {
        (true, Some(old)) => {
            let (old_lo, old_hi) = (old.base, old.base + old.extent as i64 - 1);
            let slack = old.extent as i64;
            let lo = if lo < old_lo {
                (lo - slack).max(0).min(lo)
            } else {
                lo
            };
            let hi = if hi > old_hi {
                (hi + slack).min(n - 1).max(hi)
            } else {
                hi
            };
            (lo, hi)
        }
        _ => (lo, hi),
    };
    // a kernel viewing the array through wider elements needs them whole
    let lo = aligned(lo);
    let keep = Runs::interval(lo, hi);
    let dropped = valid.subtract(&keep);
    let mut gathered = Vec::new();
    if !dropped.is_empty() {
        let only_here = dropped.intersect(&res.coh.exclusive(Holder::Device(dev)));
        if !only_here.is_empty() {
            gathered = res.gather(host, es, &only_here)?;
        }
        res.coh.invalidate(Holder::Device(dev), &dropped);
    }
    let extent = (hi - lo + 1) as u64;
    let bytes = ((extent + GUARD_SINK) * es) as usize;
    let mem = exec::take(ctx, bytes)?;
    if let (Some(old), Some((kl, ku))) = (res.allocs.get(&dev), valid.intersect(&keep).hull()) {
        let len = ((ku - kl + 1) as u64 * es) as usize;
        exec::release(exec::copy(
            ctx,
            &old.mem,
            ((kl - old.base) as u64 * es) as usize,
            &mem,
            ((kl - lo) as u64 * es) as usize,
            len,
        )?);
    }
    res.allocs.insert(
        dev,
        DevAlloc {
            ctx: ctx.clone(),
            base: lo,
            extent,
            bytes,
            mem: std::mem::ManuallyDrop::new(mem),
        },
    );
    Ok(gathered)
}
