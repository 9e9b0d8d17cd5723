//! What a split launch leaves, once the guard has let it through: the
//! record of what each device now holds, the staged reads (merged arrays'
//! write ranges and the early reads) with the early reads taken by the
//! host, and the merge on the host.

use crate::args::KernelArgs;
use crate::coherence::Holder;
use crate::error::{LaunchError, Result};
use crate::launch::schedule::{DevWork, Glue};
use crate::plan::Plan;
use crate::resident::Residency;
use crate::runs::Runs;

/// Records what each device wrote, now, before anything else can fail:
/// resident where the written sets are disjoint; where they are merged on
/// the host, the devices' copies are distrusted (the host held every
/// element of them before the launch, phase 0). A `replay`ed array's
/// record is set at the end of the launch.
pub(super) fn record(
    plan: &Plan,
    res: &mut [Option<&mut Residency>],
    works: &[DevWork],
    glue: &[Glue],
    replay: &[bool],
) {
    for (ai, a) in plan.arrays.iter().enumerate() {
        if !a.writes || replay[ai] {
            continue;
        }
        let r = res[a.arg_index as usize]
            .as_deref_mut()
            .expect("checked above");
        for w in works {
            let da = &w.arrays[ai];
            if glue[ai].on_host() {
                r.coh.invalidate(Holder::Device(w.device), &da.write_set);
            } else {
                r.coh.written(Holder::Device(w.device), &da.write_set);
            }
        }
    }
}

/// A device-to-host read that phase 1 enqueues right after a device's
/// kernel and flags, into a staging buffer: elements `[lo, hi]` of array
/// `array`. Its bytes are trusted only after the guard's verdict: merged
/// arrays' write ranges (the merge compares them with the host's
/// original), and, for a buffer that comes back to the host after the
/// launch (`Residency::gather_after`), a written set of one run, which
/// [`take_early_reads`] then copies to the host: the read the gather after
/// the launch would make (the same bytes, one command), without a second
/// round of commands.
pub(super) struct StagedRead {
    pub(super) array: usize,
    pub(super) staging: usize,
    pub(super) lo: i64,
    pub(super) hi: i64,
    /// Copied to the host by [`take_early_reads`] (else merged).
    early: bool,
}

/// The staged reads of each device (work); the staging vectors' lengths
/// get the early reads' after the merged arrays'.
pub(super) fn staged_reads(
    plan: &Plan,
    res: &[Option<&mut Residency>],
    works: &[DevWork],
    glue: &[Glue],
    lens: &mut Vec<usize>,
) -> Vec<Vec<StagedRead>> {
    let mut out = Vec::with_capacity(works.len());
    for w in works {
        let mut reads = Vec::new();
        for (ai, (da, a)) in w.arrays.iter().zip(&plan.arrays).enumerate() {
            if let (Some((lo, hi)), Some(staging)) = (da.write_r, da.staging) {
                reads.push(StagedRead {
                    array: ai,
                    staging,
                    lo,
                    hi,
                    early: false,
                });
                continue;
            }
            let r = res[a.arg_index as usize].as_deref().expect("checked above");
            if !(a.writes && glue[ai] == Glue::Direct && r.gather_after) {
                continue;
            }
            let &[(lo, hi)] = da.write_set.intervals() else {
                continue;
            };
            reads.push(StagedRead {
                array: ai,
                staging: lens.len(),
                lo,
                hi,
                early: true,
            });
            lens.push(((hi - lo + 1) as u64 * a.elem_size) as usize);
        }
        out.push(reads);
    }
    out
}

/// After the guard's verdict and [`record`]: the early reads' bytes go to
/// the host copies, which then hold those elements (recorded at the end
/// for a `replay`ed array).
pub(super) fn take_early_reads(
    plan: &Plan,
    args: &mut KernelArgs,
    res: &mut [Option<&mut Residency>],
    staged: &[Vec<StagedRead>],
    staging: &[Vec<u8>],
    replay: &[bool],
) -> Result<()> {
    for sr in staged.iter().flatten().filter(|sr| sr.early) {
        let a = &plan.arrays[sr.array];
        let es = a.elem_size as usize;
        let out = args
            .buffer_at_mut(a.arg_index)
            .expect("checked: array arguments are buffers")
            .as_bytes_mut();
        let len = out.len();
        let Some(dst) = out.get_mut(sr.lo as usize * es..(sr.hi as usize + 1) * es) else {
            return Err(LaunchError::CopyOutOfBounds {
                op: "staging-to-host copy",
                what: "host",
                offset: sr.lo as u64,
                len: (sr.hi - sr.lo + 1) as u64,
                size: len as u64,
                device: None,
            });
        };
        dst.copy_from_slice(&staging[sr.staging]);
        if replay[sr.array] {
            continue;
        }
        res[a.arg_index as usize]
            .as_deref_mut()
            .expect("checked above")
            .coh
            .copied(Holder::Host, &Runs::interval(sr.lo, sr.hi));
    }
    Ok(())
}

/// Before anything reaches the host: the first conflict between the
/// devices' copies of an array merged with the conflict check
/// ([`crate::conflict`]), compared with the host's original; `None` when
/// every such array merges exactly.
pub(super) fn conflict(
    plan: &Plan,
    args: &KernelArgs,
    works: &[DevWork],
    glue: &[Glue],
    staging: &[Vec<u8>],
) -> Option<String> {
    for (ai, a) in plan.arrays.iter().enumerate() {
        if glue[ai] != Glue::Checked {
            continue;
        }
        let es = a.elem_size as usize;
        let host = args
            .buffer_at(a.arg_index)
            .expect("checked: array arguments are buffers")
            .as_bytes();
        let parts: Vec<crate::conflict::CopyPart<'_>> = works
            .iter()
            .filter_map(|w| {
                let da = &w.arrays[ai];
                let (l, u) = da.write_r?;
                Some(crate::conflict::CopyPart {
                    device: w.device,
                    lo: l,
                    staged: &staging[da.staging?],
                    written: da.write_set.intersect(&Runs::interval(l, u)),
                    read: da.checked_read.clone(),
                })
            })
            .collect();
        let Some(gl) = parts.iter().map(|p| p.lo).min() else {
            continue;
        };
        let gu = works
            .iter()
            .filter_map(|w| w.arrays[ai].write_r.map(|r| r.1))
            .max()
            .unwrap_or(gl);
        let original = &host[gl as usize * es..(gu as usize + 1) * es];
        if let Some(c) = crate::conflict::first_conflict(&a.name, es, gl, original, &parts) {
            return Some(c);
        }
    }
    None
}

/// Merges on the host what each device wrote of a diff-merged array: an
/// element a device changed (its staged value differs from the host's
/// original) takes that value; of a reduced one, each element folds in
/// every device's copy ([`crate::reduce::fold`]). Recorded at the end for
/// a `replay`ed array.
pub(super) fn merge(
    plan: &Plan,
    args: &mut KernelArgs,
    res: &mut [Option<&mut Residency>],
    works: &[DevWork],
    glue: &[Glue],
    staging: &[Vec<u8>],
    replay: &[bool],
) {
    for (ai, a) in plan.arrays.iter().enumerate() {
        if !a.writes {
            continue;
        }
        let r = res[a.arg_index as usize]
            .as_deref_mut()
            .expect("checked above");
        if !glue[ai].on_host() {
            continue;
        }
        let es = a.elem_size as usize;
        let out = args
            .buffer_at_mut(a.arg_index)
            .expect("checked: array arguments are buffers")
            .as_bytes_mut();
        let parts: Vec<((i64, i64), usize, &Runs)> = works
            .iter()
            .filter_map(|w| {
                let da = &w.arrays[ai];
                Some((da.write_r?, da.staging?, &da.write_set))
            })
            .collect();
        let Some(gl) = parts.iter().map(|p| p.0 .0).min() else {
            continue;
        };
        let gu = parts.iter().map(|p| p.0 .1).max().unwrap_or(gl);
        let original = out[gl as usize * es..(gu as usize + 1) * es].to_vec();
        let mut merged = Runs::new();
        for ((l, u), si, write_set) in parts {
            // Only the write set's elements: the device holds the host's
            // values there (its prefill) unless it wrote them. Between a
            // box's runs it holds nothing sent (another slice's writes,
            // which the guard keeps this one from making).
            let set = write_set.intersect(&Runs::interval(l, u));
            for &(rl, ru) in set.intervals() {
                let orig = &original[(rl - gl) as usize * es..(ru - gl + 1) as usize * es];
                let dst = &mut out[rl as usize * es..(ru as usize + 1) * es];
                let src = &staging[si][(rl - l) as usize * es..(ru - l + 1) as usize * es];
                let elems = dst
                    .chunks_exact_mut(es)
                    .zip(src.chunks_exact(es))
                    .zip(orig.chunks_exact(es));
                match glue[ai] {
                    // `out` holds the original folded with the devices so far
                    Glue::Reduce(red) => {
                        for ((d, s), o) in elems {
                            crate::reduce::fold(red, d, s, o);
                        }
                    }
                    _ => {
                        for ((d, s), o) in elems {
                            if s != o {
                                d.copy_from_slice(s);
                            }
                        }
                    }
                }
            }
            merged = merged.union(&set);
        }
        if !replay[ai] {
            r.coh.written(Holder::Host, &merged);
        }
    }
}
