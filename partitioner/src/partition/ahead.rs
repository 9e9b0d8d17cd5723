//! Counts made ahead ([`Ahead`]): with every count wanted, the counts and
//! vertices of the first candidate split dimension are made in children,
//! from a thread of their own at a lower priority, while this process finds
//! the ranges; only their successes are kept. What was made ahead and what
//! is made after join per item ([`split_known`], [`fill_known`]).

use counting::{counts_of, distinct_by, CountForm, CountInput, Fallback};
use ranges_format::Count;

use super::count_input::CountSlot;
use super::vertices::DomainGist;

/// Counts made ahead of the ranges ([`partition_kernel_in`](super::partition_kernel_in) with every
/// count wanted): the inputs of the counts along split dimension `d`,
/// made before its ranges, and barvinok's counts and PolyLib's vertices of
/// them, made in children while this process found the ranges (two
/// processors: the ranges here, the counts and vertices beside them, at a
/// lower priority). [`add_counts`](super::counts::add_counts) takes what matches its own inputs. Only
/// successes are kept (and no count by PolyLib where barvinok failed): a
/// count or vertex search that failed or ran out of time ahead (sharing the
/// processors with the ranges) is made again the usual way, so what is
/// kept never depends on the timing.
pub(super) struct Ahead {
    pub(super) d: u32,
    /// The inputs made, per array (the first of its shape) and count.
    pub(super) inputs: std::collections::HashMap<(usize, CountSlot), CountInput>,
    /// barvinok's counts, per input text and form.
    pub(super) counts: std::collections::HashMap<(String, CountForm), Count>,
    /// PolyLib's vertices, per input text and context.
    pub(super) vertices:
        std::collections::HashMap<(String, Option<String>), Vec<Vec<counting::ParamVertex>>>,
}

/// Counts the inputs made ahead and finds the vertices of the slice
/// footprints among them (as [`add_counts`](super::counts::add_counts) does: two children side by
/// side), at a lower priority; the successes, for [`Ahead`].
#[allow(clippy::type_complexity)]
pub(super) fn count_ahead(
    inputs: Vec<(CountSlot, CountInput)>,
    deadline: Option<std::time::Instant>,
    vertex_limit: std::time::Duration,
    max_ops: u64,
) -> (
    std::collections::HashMap<(String, CountForm), Count>,
    std::collections::HashMap<(String, Option<String>), Vec<Vec<counting::ParamVertex>>>,
) {
    counting::at_low_priority(|| {
        let _ = counting::barvinok_available();
        let slices: Vec<(&str, Option<&str>, std::time::Duration)> = inputs
            .iter()
            .filter(|(slot, _)| *slot == CountSlot::Slice)
            .map(|(_, i)| (i.text.as_str(), i.context.as_deref(), vertex_limit))
            .collect();
        let (distinct, _) = distinct_by(&slices, |&(t, c, _)| (t, c));
        let all: Vec<CountInput> = inputs.iter().map(|(_, i)| i.clone()).collect();
        let (counts, vertices) = std::thread::scope(|s| {
            let search = (!distinct.is_empty() && !vertex_limit.is_zero()).then(|| {
                s.spawn(|| {
                    counting::at_low_priority(|| counting::vertices_many(&distinct, deadline))
                })
            });
            // (what fails here is counted again after the ranges: only
            // that second count's failures cut the analysis short)
            let counts = counts_of(&all, deadline, Fallback::No, &|_| {});
            let vertices = search.and_then(|h| h.join().ok()).unwrap_or_default();
            (counts, vertices)
        });
        let counts = all
            .into_iter()
            .zip(counts)
            .filter_map(|(i, c)| Some(((i.text, i.form), c.ok()?)))
            .collect();
        // Their domains simplified here too, as `add_vertices` would (the
        // same isl operation limit), within the counts' deadline.
        let spent = || deadline.is_some_and(|d| std::time::Instant::now() >= d);
        let vertices = distinct
            .iter()
            .zip(vertices)
            .filter_map(|(&(t, c, _), (v, _))| {
                let gist = DomainGist::new(max_ops, c);
                let mut v = v.ok()?;
                for piece in &mut v {
                    for vertex in piece {
                        if spent() {
                            return None;
                        }
                        vertex.domain = gist.of(&vertex.domain);
                    }
                }
                Some(((t.to_string(), c.map(str::to_string)), v))
            })
            .collect();
        (counts, vertices)
    })
}

/// Per item of `items`, what `known` has for it, and the items it has
/// nothing for (in order): those [`fill_known`] takes the results of.
pub(super) fn split_known<T: Clone, R>(
    items: &[T],
    known: impl Fn(&T) -> Option<R>,
) -> (Vec<Option<R>>, Vec<T>) {
    let mut missing = Vec::new();
    let found = items
        .iter()
        .map(|x| {
            let r = known(x);
            if r.is_none() {
                missing.push(x.clone());
            }
            r
        })
        .collect();
    (found, missing)
}

/// The results of [`split_known`]'s items: the known ones, and the others'
/// from `rest` in order.
pub(super) fn fill_known<R>(known: Vec<Option<R>>, rest: Vec<R>) -> Vec<R> {
    let mut rest = rest.into_iter();
    known
        .into_iter()
        .filter_map(|r| r.or_else(|| rest.next()))
        .collect()
}
