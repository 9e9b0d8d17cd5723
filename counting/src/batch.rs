//! The count engines over a batch of inputs ([`counts_of`]): barvinok
//! first, all whole inputs in one sandboxed child and each input by parts
//! in a child of its own, then PolyLib where barvinok gave no count; equal
//! inputs counted once. What is counted ([`CountInput`]) and how barvinok
//! counts it ([`CountForm`]) is the caller's choice (the partitioner's
//! `count_input`); which engine counts it is this module's.

use ranges_format::{Count, CutShort};

/// Why a count is missing when time ran out, whichever step it was in (the
/// same text whatever the machine's load, so that range files compare).
pub fn out_of_time() -> String {
    format!(
        "counting ran out of time (at most {} s per count)",
        crate::POLYLIB_TIME_LIMIT.as_secs()
    )
}

/// The Ehrhart input of a set (the partitioner's `count_input` makes one
/// per footprint).
#[derive(Debug, Clone)]
pub struct CountInput {
    /// The set, whole (isl text).
    pub text: String,
    /// How barvinok counts it.
    pub form: CountForm,
    /// The context over the set's parameters (isl text), for its
    /// vertices: PolyLib keeps only the vertices valid within it.
    pub context: Option<String>,
    /// The time left to count it.
    pub left: std::time::Duration,
}

/// How barvinok counts a set ([`CountInput::form`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CountForm {
    /// Whole (`CountInput::text`).
    Whole,
    /// As the sum of the counts of these disjoint parts (isl texts).
    Parts(Vec<String>),
    /// The union of these sets (isl texts), cut into disjoint parts by
    /// barvinok's isl and counted part by part ([`crate::card_parts_many`]).
    Decompose(Vec<String>),
}

/// The Ehrhart counts of the inputs (each with the time left to it), or
/// why each is missing; `cut` hears what cut a count short
/// ([`EhrhartError::cut_short`](crate::EhrhartError::cut_short)). barvinok counts first, all inputs
/// counted whole in one sandboxed child (exact for any bounded set,
/// existentials included), then each input counted by parts in a child of
/// its own (its parts' counts are the terms of its count, all within its
/// time); PolyLib counts, also in one child, the whole footprints barvinok
/// could not count (it is unavailable or failed) within what is left of
/// their time.
pub fn counts_of(
    inputs: &[CountInput],
    deadline: Option<std::time::Instant>,
    polylib: Fallback,
    cut: &dyn Fn(CutShort),
) -> Vec<Result<Count, String>> {
    // Equal inputs (arrays accessed alike) are counted once.
    let (distinct, which) = distinct_by(inputs, |i| (i.text.clone(), i.form.clone()));
    let counts = distinct_counts_of(&distinct, deadline, polylib, cut);
    which.into_iter().map(|k| counts[k].clone()).collect()
}

/// The distinct items of `items` by `key` (the first of each) and, per
/// item, the index of its distinct one.
pub fn distinct_by<T: Clone, K: Eq + std::hash::Hash>(
    items: &[T],
    key: impl Fn(&T) -> K,
) -> (Vec<T>, Vec<usize>) {
    let mut seen = std::collections::HashMap::new();
    let mut distinct = Vec::new();
    let which = items
        .iter()
        .map(|x| {
            *seen.entry(key(x)).or_insert_with(|| {
                distinct.push(x.clone());
                distinct.len() - 1
            })
        })
        .collect();
    (distinct, which)
}

/// Whether [`counts_of`] counts with PolyLib where barvinok gave no count
/// (not ahead: which engine counted must not depend on the timing).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Fallback {
    /// PolyLib counts where barvinok gave no count.
    PolyLib,
    /// barvinok's counts alone.
    No,
}

/// [`counts_of`] of distinct inputs.
fn distinct_counts_of(
    inputs: &[CountInput],
    deadline: Option<std::time::Instant>,
    polylib: Fallback,
    cut: &dyn Fn(CutShort),
) -> Vec<Result<Count, String>> {
    use crate::EhrhartError as E;
    let whole: Vec<usize> = (0..inputs.len())
        .filter(|&k| matches!(inputs[k].form, CountForm::Whole))
        .collect();
    let batch: Vec<(&str, std::time::Duration)> = whole
        .iter()
        .map(|&k| (inputs[k].text.as_str(), inputs[k].left))
        .collect();
    // Per input, barvinok's count or error and the time it took.
    let mut cards: Vec<Option<(Result<Count, E>, std::time::Duration)>> = vec![None; inputs.len()];
    for (&k, (card, took)) in whole.iter().zip(crate::card_many(&batch, deadline)) {
        cards[k] = Some((card.map(|c| c.count), took));
    }
    for (k, input) in inputs.iter().enumerate() {
        let start = std::time::Instant::now();
        let card = match &input.form {
            CountForm::Whole => continue,
            CountForm::Decompose(union) => {
                crate::card_parts_many(&[(union.as_slice(), input.left)], deadline)
                    .pop()
                    .map_or(Err(E::DeadlinePassed), |(c, _)| c.map(|c| c.count))
            }
            CountForm::Parts(parts) => {
                let mut until = start + input.left;
                if let Some(d) = deadline {
                    until = until.min(d);
                }
                let parts: Vec<(&str, std::time::Duration)> =
                    parts.iter().map(|p| (p.as_str(), input.left)).collect();
                let mut terms = Vec::new();
                let mut failed = None;
                for (card, _) in crate::card_many(&parts, Some(until)) {
                    match card {
                        Ok(c) => terms.extend(c.count.terms),
                        // A part whose turn came after the count's time: its time ran out.
                        Err(E::DeadlinePassed) if deadline.is_none_or(|d| until < d) => {
                            failed = Some(E::BarvinokTimedOut {
                                millis: input.left.as_millis() as u64,
                            });
                            break;
                        }
                        Err(e) => {
                            failed = Some(e);
                            break;
                        }
                    }
                }
                failed.map_or(Ok(Count::parametric(terms)), Err)
            }
        };
        cards[k] = Some((card, start.elapsed()));
    }
    let mut out: Vec<Result<Count, String>> = Vec::with_capacity(inputs.len());
    // Per input PolyLib counts: its index, its time left, barvinok's reason.
    let mut fallback: Vec<(usize, std::time::Duration, Option<String>)> = Vec::new();
    for (k, card) in cards.into_iter().enumerate() {
        let (card, took) = card.unwrap_or((Err(E::DeadlinePassed), std::time::Duration::ZERO));
        // What is left of the count's time (which the kernel's deadline
        // may have cut short while barvinok counted).
        let mut left = inputs[k].left.saturating_sub(took);
        if let Some(d) = deadline {
            left = left.min(d.saturating_duration_since(std::time::Instant::now()));
        }
        if let Err(e) = &card {
            if let Some(c) = e.cut_short() {
                cut(c);
            }
        }
        let by_barvinok = match card {
            Ok(count) => {
                out.push(Ok(count));
                continue;
            }
            Err(E::Unavailable { .. }) => None,
            Err(E::DeadlinePassed) => {
                out.push(Err("the counting time is spent".into()));
                continue;
            }
            Err(E::BarvinokTimedOut { .. }) => Some(out_of_time()),
            Err(e) => Some(e.to_string()),
        };
        if left.is_zero() || polylib == Fallback::No {
            if by_barvinok.is_none() {
                cut(CutShort::CountTime);
            }
            out.push(Err(by_barvinok.unwrap_or_else(out_of_time)));
            continue;
        }
        // A placeholder until PolyLib's answer.
        out.push(Err(String::new()));
        fallback.push((k, left, by_barvinok));
    }
    let polylib_batch: Vec<(&str, std::time::Duration)> = fallback
        .iter()
        .map(|&(k, left, _)| (inputs[k].text.as_str(), left))
        .collect();
    for ((k, _, by_barvinok), (e, _)) in fallback
        .into_iter()
        .zip(crate::enumerate_many(&polylib_batch, deadline))
    {
        if let Err(e) = &e {
            if let Some(c) = e.cut_short() {
                cut(c);
            }
        }
        out[k] = match e {
            Ok(e) => Ok(Count::parametric(
                e.terms
                    .iter()
                    .map(|t| t.iter().map(|c| c.text.clone()).collect())
                    .collect(),
            )),
            // Its turn came after the budget: as if no time were left.
            Err(E::DeadlinePassed) => Err(by_barvinok.unwrap_or_else(out_of_time)),
            Err(e) => {
                let e = match e {
                    E::TimedOut { .. } => out_of_time(),
                    e => e.to_string(),
                };
                Err(match by_barvinok {
                    Some(b) => format!("{b}; {e}"),
                    None => e,
                })
            }
        };
    }
    out
}
