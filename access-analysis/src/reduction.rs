//! Arrays that merge as reductions: a `__global` array that the kernel
//! updates only through atomics of one family (`atomic_add`, `_sub`,
//! `_inc`, `_dec` together; `atomic_min`; `atomic_max`; `atomic_and`;
//! `atomic_or`; `atomic_xor`, or their `atom_` spellings) on 32- or 64-bit
//! integers, none of whose returned values is used, and that it neither
//! reads nor writes otherwise. Each device can then update a whole copy
//! that starts from the original values, and the copies merge exactly
//! (`ranges_format::ReduceOp`): the result is what one device gives,
//! whatever the order of the updates.
//!
//! Every other atomic stays a reason not to split, with why it does not
//! merge.

use std::collections::BTreeMap;

use coarsen::ir::Scalar;
use ranges_format::{ReduceOp, Reduction};

use crate::eval::{AtomicUse, Rec};

/// The arrays that merge as reductions, by argument index, of the
/// `__global` `buffers` (argument index, element type), and the
/// atomics that keep the kernel unsplit, each with why
/// (`atomic_inc on 'count' (k.cl:3:9): its returned value is used`).
pub(crate) fn reductions(
    uses: &[AtomicUse],
    recs: &[Rec],
    buffers: &[(u32, &str)],
    names: &[String],
    file: &str,
) -> (BTreeMap<u32, Reduction>, Vec<String>) {
    let name = |b: u32| {
        names
            .get(b as usize)
            .cloned()
            .unwrap_or_else(|| format!("arg{b}"))
    };
    // Why each buffer updated by atomics does not merge (first reason).
    let mut why: BTreeMap<u32, String> = BTreeMap::new();
    let mut found: BTreeMap<u32, Reduction> = BTreeMap::new();
    for u in uses {
        for &b in &u.bufs {
            if why.contains_key(&b) {
                continue;
            }
            let op = ReduceOp::of_builtin(&u.name);
            let signed = match u.elem {
                Some(Scalar::Int | Scalar::Long) => Some(true),
                Some(Scalar::UInt | Scalar::ULong) => Some(false),
                _ => None,
            };
            let elem_type = buffers.iter().find(|x| x.0 == b).map(|x| x.1);
            let reason = if elem_type.is_none() {
                Some("not a __global buffer argument".to_string())
            } else if u.bufs.len() > 1 {
                Some("the pointer may point into several buffers".to_string())
            } else if u.used {
                Some("its returned value is used".to_string())
            } else if op.is_none() {
                Some(format!("{} does not merge as a reduction", u.name))
            } else if signed.is_none() || u.elem.map(Scalar::name) != elem_type {
                Some(format!(
                    "it does not update the {}s of '{}' as 32- or 64-bit integers",
                    elem_type.unwrap_or("element"),
                    name(b)
                ))
            } else {
                recs.iter().find(|r| r.buf == b && !r.atomic).map(|r| {
                    format!(
                        "'{}' is also accessed other than by atomics ('{}', {file}:{}:{})",
                        name(b),
                        r.text,
                        r.span.line,
                        r.span.col
                    )
                })
            };
            let red = Reduction {
                op: op.unwrap_or(ReduceOp::Sum),
                signed: signed.unwrap_or(false),
            };
            match (reason, found.get(&b)) {
                (Some(r), _) => {
                    why.insert(b, r);
                }
                (None, Some(prev)) if *prev != red => {
                    why.insert(
                        b,
                        format!(
                            "'{}' is updated by atomics of more than one family ({} and {})",
                            name(b),
                            prev.op,
                            red.op
                        ),
                    );
                }
                (None, _) => {
                    found.insert(b, red);
                }
            }
        }
    }
    for b in why.keys() {
        found.remove(b);
    }
    let refused = uses
        .iter()
        .filter(|u| u.bufs.iter().any(|b| !found.contains_key(b)))
        .map(|u| {
            let bufs: Vec<String> = u.bufs.iter().map(|&b| name(b)).collect();
            let reason = u
                .bufs
                .iter()
                .find_map(|b| why.get(b))
                .map_or(String::new(), |w| format!(": {w}"));
            format!("{} on '{}' ({}){reason}", u.name, bufs.join("', '"), u.loc)
        })
        .collect();
    (found, refused)
}
