//! Counting with barvinok (crate `barvinok-sys`), the Ehrhart engine when
//! its libraries are there.
//!
//! The library is loaded once per process (`barvinok_sys::library`,
//! `RTLD_LOCAL | RTLD_DEEPBIND`: its isl never meets isl-rs's). Counts run
//! in a forked child of the sandbox (module `sandbox`), so a count that runs
//! past its time limit is killed and one that aborts costs nothing but the
//! count; [`card_many`] makes many counts in one child. The child sends back,
//! per count, the parameter names and, per piece of barvinok's piecewise
//! quasi-polynomial, the condition and value texts (isl syntax); the parent
//! checks that `ranges-format` parses, binds and can evaluate each, so every
//! count stored in a range file can be read back.

use std::time::{Duration, Instant};

use ranges_format::{Chamber, Condition, Count, PwExpr};

use super::{check_arity, sandbox, wire, EhrhartError};

/// A count from barvinok: one term whose chambers are barvinok's disjoint
/// pieces (so the first chamber whose domain holds is the only one); outside
/// every chamber the count is 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    /// Parameter names, in the set's order (the order of [`Card::eval`]'s values).
    pub params: Vec<String>,
    /// The count in the range file's form (one term).
    pub count: Count,
}

impl Card {
    /// The number of integer points at the given parameter values
    /// (`values[k]` for `params[k]`), evaluated exactly by `ranges-format`.
    pub fn eval(&self, values: &[i64]) -> Result<i64, EhrhartError> {
        check_arity(&self.params, values)?;
        let names: Vec<&str> = self.params.iter().map(String::as_str).collect();
        ranges_format::eval_count(&self.count, &names, values).map_err(|e| EhrhartError::Barvinok {
            detail: format!("cannot evaluate its count at {values:?}: {e}"),
        })
    }
}

/// Whether barvinok can be used in this process, and why not.
pub fn available() -> Result<(), String> {
    barvinok_sys::library()
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Counts the integer points of `set_text` (isl syntax) with barvinok, in
/// the sandbox, within `limit`.
pub fn card_within(set_text: &str, limit: Duration) -> Result<Card, EhrhartError> {
    card_many(&[(set_text, limit)], None)
        .pop()
        .map(|(r, _)| r)
        .unwrap_or_else(|| {
            Err(EhrhartError::Barvinok {
                detail: "no reply".into(),
            })
        })
}

/// Counts the integer points of each set (isl syntax, with its time limit)
/// with barvinok, all in one sandboxed child while the counts succeed (a
/// count that times out or fails costs its child, and a fresh one counts the
/// rest). Gives, per set in order, its count or why there is none, and the
/// time it took. A count gets its own limit, counted from when its turn
/// comes, and no more than what is left until `deadline`; a count whose turn
/// comes after `deadline` gets [`EhrhartError::DeadlinePassed`].
pub fn card_many(
    sets: &[(&str, Duration)],
    deadline: Option<Instant>,
) -> Vec<(Result<Card, EhrhartError>, Duration)> {
    let sets: Vec<(Item<'_>, Duration)> = sets.iter().map(|&(t, l)| (Item::Whole(t), l)).collect();
    card_batch(&sets, deadline)
}

/// What one count of [`card_batch`] counts.
#[derive(Clone, Copy)]
pub(super) enum Item<'a> {
    /// A set, whole.
    Whole(&'a str),
    /// The union of these sets, by parts.
    Parts(&'a [String]),
}

/// At most this many disjoint parts in a count by parts ([`card_parts_many`]).
pub const MAX_PARTS: usize = 64;

/// As [`card_many`], each count that of the union of some sets (isl texts,
/// in the order given), by parts: isl's disjoint decomposition of the union
/// (barvinok's isl), each part counted on its own, the parts' counts the
/// terms of the union's count (`barvinok_sys::Context::card_parts`; at most
/// [`MAX_PARTS`] parts).
pub fn card_parts_many(
    unions: &[(&[String], Duration)],
    deadline: Option<Instant>,
) -> Vec<(Result<Card, EhrhartError>, Duration)> {
    let sets: Vec<(Item<'_>, Duration)> =
        unions.iter().map(|&(t, l)| (Item::Parts(t), l)).collect();
    card_batch(&sets, deadline)
}

/// [`card_many`] and [`card_parts_many`].
fn card_batch(
    sets: &[(Item<'_>, Duration)],
    deadline: Option<Instant>,
) -> Vec<(Result<Card, EhrhartError>, Duration)> {
    if let Err(e) = barvinok_sys::library() {
        return sets
            .iter()
            .map(|_| {
                (
                    Err(EhrhartError::Unavailable {
                        reason: e.to_string(),
                    }),
                    Duration::ZERO,
                )
            })
            .collect();
    }
    let limits: Vec<Duration> = sets.iter().map(|&(_, limit)| limit).collect();
    let jobs: Vec<Vec<i64>> = sets
        .iter()
        .map(|(item, _)| match item {
            Item::Whole(text) => wire::card_job(text),
            Item::Parts(texts) => wire::card_parts_job(texts),
        })
        .collect();
    let replies = sandbox::run_jobs(&super::WARM, &jobs, &limits, deadline);
    replies
        .into_iter()
        .map(|(words, took)| {
            let card = words
                .map_err(|e| match e {
                    EhrhartError::TimedOut { millis } => EhrhartError::BarvinokTimedOut { millis },
                    EhrhartError::PolyLib { detail } => EhrhartError::Barvinok {
                        detail: detail.replace("polylib process", "barvinok process"),
                    },
                    other => other,
                })
                .and_then(|words| card_of(&words));
            (card, took)
        })
        .collect()
}

/// In a child: barvinok's count of `item`, as the words of a reply.
pub(super) fn serve(item: Item<'_>) -> sandbox::Reply {
    let terms = |c: barvinok_sys::Card| {
        c.pieces
            .into_iter()
            .map(|p| (p.domain, p.value))
            .collect::<Vec<_>>()
    };
    let r = barvinok_sys::library()
        .map_err(|e| e.to_string())
        .and_then(|lib| {
            lib.context()
                .and_then(|cx| match item {
                    Item::Whole(text) => {
                        #[cfg(test)]
                        tests::hook(text);
                        let c = cx.card(text)?;
                        Ok((c.params.clone(), vec![terms(c)]))
                    }
                    Item::Parts(texts) => {
                        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
                        let cards = cx.card_parts(&texts, MAX_PARTS)?;
                        let params = cards.first().map(|c| c.params.clone()).unwrap_or_default();
                        Ok((params, cards.into_iter().map(terms).collect()))
                    }
                })
                .map_err(|e| e.to_string())
        });
    // After a failure the next count gets a fresh child.
    let go_on = r.is_ok();
    let words = encode(&r);
    sandbox::Reply { words, go_on }
}

/// The count in a child's reply, checked (see the module comment).
fn card_of(words: &[i64]) -> Result<Card, EhrhartError> {
    let (params, terms) = decode(words)
        .ok_or_else(|| EhrhartError::Barvinok {
            detail: "the barvinok process sent a malformed reply".into(),
        })?
        .map_err(|detail| EhrhartError::Barvinok { detail })?;
    let names: Vec<&str> = params.iter().map(String::as_str).collect();
    let mut out = Vec::with_capacity(terms.len());
    for pieces in terms {
        let mut chambers = Vec::with_capacity(pieces.len());
        for (domain, value) in pieces {
            let domain = if domain.is_empty() {
                "true".to_string()
            } else {
                domain
            };
            let unreadable = |e: ranges_format::ExprError| EhrhartError::Barvinok {
                detail: format!("gave a count clpart cannot read ({value} if {domain}): {e}"),
            };
            Condition::parse(&domain)
                .and_then(|c| c.bind(&names))
                .map_err(unreadable)?;
            PwExpr::parse(&value)
                .and_then(|v| v.bind(&names))
                .map_err(unreadable)?;
            chambers.push(Chamber { domain, value });
        }
        out.push(chambers);
    }
    Ok(Card {
        params,
        count: Count::parametric(out),
    })
}

/// Parameter names and, per term, its pieces (domain, value); or an error.
type Reply = Result<(Vec<String>, Vec<Vec<(String, String)>>), String>;

/// `[0, strings...]` for a count (names, then per term its domain/value pairs), `[1, message]`
/// for an error; a string is its byte length then its bytes, 8 to a word.
fn encode(r: &Reply) -> Vec<i64> {
    fn put(w: &mut Vec<i64>, s: &str) {
        w.push(s.len() as i64);
        for c in s.as_bytes().chunks(8) {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            w.push(i64::from_le_bytes(b));
        }
    }
    let mut w = Vec::new();
    match r {
        Ok((params, terms)) => {
            w.push(0);
            w.push(params.len() as i64);
            for p in params {
                put(&mut w, p);
            }
            w.push(terms.len() as i64);
            for pieces in terms {
                w.push(pieces.len() as i64);
                for (d, v) in pieces {
                    put(&mut w, d);
                    put(&mut w, v);
                }
            }
        }
        Err(m) => {
            w.push(1);
            put(&mut w, m);
        }
    }
    w
}

fn decode(w: &[i64]) -> Option<Reply> {
    struct R<'a>(&'a [i64]);
    impl R<'_> {
        fn word(&mut self) -> Option<i64> {
            let (&x, rest) = self.0.split_first()?;
            self.0 = rest;
            Some(x)
        }
        fn count(&mut self) -> Option<usize> {
            usize::try_from(self.word()?)
                .ok()
                .filter(|&n| n <= self.0.len() * 8)
        }
        fn string(&mut self) -> Option<String> {
            let n = self.count()?;
            let k = n.div_ceil(8);
            if k > self.0.len() {
                return None;
            }
            let bytes: Vec<u8> = self.0[..k]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .take(n)
                .collect();
            self.0 = &self.0[k..];
            String::from_utf8(bytes).ok()
        }
    }
    let mut r = R(w);
    let reply = match r.word()? {
        0 => {
            let n = r.count()?;
            let params = (0..n).map(|_| r.string()).collect::<Option<Vec<_>>>()?;
            let t = r.count()?;
            let mut terms = Vec::with_capacity(t);
            for _ in 0..t {
                let m = r.count()?;
                terms.push(
                    (0..m)
                        .map(|_| Some((r.string()?, r.string()?)))
                        .collect::<Option<Vec<_>>>()?,
                );
            }
            Ok((params, terms))
        }
        1 => Err(r.string()?),
        _ => return None,
    };
    r.0.is_empty().then_some(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A set text that makes the child sleep instead of counting (a count
    /// that runs past its limit).
    const SLOW: &str = "[N] -> { [i] : 0 <= i < N and 0 = 0 }";
    /// A set text that makes the child abort (a child that dies).
    const ABORT: &str = "[N] -> { [i] : 0 <= i < N and 1 = 1 }";

    /// The test hook of the child's work (see [`card_many`]).
    pub(super) fn hook(text: &str) {
        if text == SLOW {
            std::thread::sleep(Duration::from_secs(60));
        }
        if text == ABORT {
            // SAFETY: ends the child, as a crash in barvinok would.
            unsafe { libc::abort() };
        }
    }

    fn barvinok_here() -> bool {
        match available() {
            Ok(()) => true,
            Err(why) => {
                let required = std::env::var("CLPART_REQUIRE_BARVINOK").is_ok_and(|v| v == "1");
                assert!(
                    !required,
                    "barvinok required (CLPART_REQUIRE_BARVINOK=1): {why}"
                );
                false
            }
        }
    }

    const SETS: &[&str] = &[
        "[N] -> { [i] : 0 <= i < N }",
        "[N, lo, hi] -> { [k] : exists (i, j : k = 8i + j and lo <= j < hi and 0 <= i < N and 0 <= j < 8) }",
        "[a, lo, hi] -> { [i, j] : lo <= i < hi and 0 <= j <= i < a }",
        "[N] -> { [i] : i >= N }",
        "[a, lo, hi] -> { [k] : lo <= k < hi and 0 <= k < a and k mod 4 != 3 }",
        "{ [i, j] : 0 <= i < 3 and 0 <= j < 5 }",
    ];

    const LIMIT: Duration = Duration::from_secs(20);

    #[test]
    fn a_batch_counts_as_one_call_per_set() {
        if !barvinok_here() {
            return;
        }
        let batch: Vec<(&str, Duration)> = SETS.iter().map(|&s| (s, LIMIT)).collect();
        let many = card_many(&batch, None);
        assert_eq!(many.len(), SETS.len());
        for (set, (card, _)) in SETS.iter().zip(&many) {
            assert_eq!(card, &card_within(set, LIMIT), "{set}");
        }
        // The unbounded set (an error) does not stop the counts after it.
        assert!(many[3].0.is_err() && many[4].0.is_ok() && many[5].0.is_ok());
        assert_eq!(many[5].0.as_ref().unwrap().eval(&[]).unwrap(), 15);
        assert!(card_many(&[], None).is_empty());
    }

    #[test]
    fn a_count_that_times_out_or_dies_costs_only_itself() {
        if !barvinok_here() {
            return;
        }
        let batch = [
            (SETS[0], LIMIT),
            (SLOW, Duration::from_millis(300)),
            (SETS[1], LIMIT),
            (ABORT, LIMIT),
            (SETS[2], LIMIT),
        ];
        let start = Instant::now();
        let many = card_many(&batch, None);
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the slow count was not stopped"
        );
        let results: Vec<&Result<Card, EhrhartError>> = many.iter().map(|(r, _)| r).collect();
        assert_eq!(
            results[1],
            &Err(EhrhartError::BarvinokTimedOut { millis: 300 })
        );
        let died = results[3].as_ref().unwrap_err().to_string();
        assert!(
            died.contains("the barvinok process died of signal 6"),
            "{died}"
        );
        for k in [0, 2, 4] {
            assert_eq!(
                results[k],
                &card_within(batch[k].0, LIMIT),
                "{}",
                batch[k].0
            );
            assert!(results[k].is_ok());
        }
        assert!(many[1].1 >= Duration::from_millis(300));
    }

    #[test]
    fn counts_after_the_deadline_are_not_attempted() {
        if !barvinok_here() {
            return;
        }
        let batch = [(SETS[0], LIMIT), (SLOW, LIMIT), (SETS[1], LIMIT)];
        let many = card_many(&batch, Some(Instant::now() + Duration::from_millis(1500)));
        assert!(many[0].0.is_ok());
        assert!(
            matches!(many[1].0, Err(EhrhartError::BarvinokTimedOut { .. })),
            "{:?}",
            many[1].0
        );
        assert_eq!(many[2].0, Err(EhrhartError::DeadlinePassed));
    }

    #[test]
    fn replies_round_trip() {
        let ok: Reply = Ok((
            vec!["N".into(), "sx_lo".into()],
            vec![
                vec![
                    ("N > 0".into(), "(N - floor((N)/2))".into()),
                    (String::new(), "10".into()),
                ],
                vec![],
                vec![("N > 1".into(), "N".into())],
            ],
        ));
        assert_eq!(decode(&encode(&ok)), Some(ok));
        let err: Reply = Err("barvinok cannot read \"{\": é".into());
        assert_eq!(decode(&encode(&err)), Some(err));
        let mut bad = encode(&Ok((vec!["N".into()], vec![])));
        bad.push(7);
        assert_eq!(decode(&bad), None);
        assert_eq!(decode(&[0, 99]), None);
    }

    /// A union counted by parts: more than one term, and the sum of the
    /// terms is the union's count counted whole, at every parameter value
    /// tried (overlapping pieces, given in an order that cuts badly).
    #[test]
    fn parts_add_up_to_the_whole() {
        if available().is_err() {
            return;
        }
        let pieces: Vec<String> = [
            "[n, lo, hi] -> { [y, x] : lo <= y < hi and 0 <= y < n and 1 <= x < n }",
            "[n, lo, hi] -> { [y, x] : lo <= y < hi and 0 <= y < n and 0 <= x < n - 1 }",
            "[n, lo, hi] -> { [y, x] : lo - 1 <= y < hi - 1 and 0 <= y < n and 0 <= x < n }",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let whole = "[n, lo, hi] -> { [y, x] : (lo <= y < hi and 0 <= y < n and 1 <= x < n) or (lo <= y < hi and 0 <= y < n and 0 <= x < n - 1) or (lo - 1 <= y < hi - 1 and 0 <= y < n and 0 <= x < n) }";
        let by_parts = card_parts_many(&[(pieces.as_slice(), Duration::from_secs(20))], None)
            .pop()
            .unwrap()
            .0
            .unwrap();
        let at_once = card_within(whole, Duration::from_secs(20)).unwrap();
        assert!(by_parts.count.terms.len() > 1, "{:?}", by_parts.count);
        for n in 0..6 {
            for lo in -2..7 {
                for hi in lo - 1..8 {
                    let v = [n, lo, hi];
                    let brute =
                        (0..n)
                            .flat_map(|y| (0..n).map(move |x| (y, x)))
                            .filter(|&(y, x)| {
                                (lo <= y && y < hi && 1 <= x)
                                    || (lo <= y && y < hi && x < n - 1)
                                    || (lo - 1 <= y && y < hi - 1)
                            });
                    let want = brute.count() as i64;
                    assert_eq!(at_once.eval(&v).unwrap(), want, "whole at {v:?}");
                    assert_eq!(by_parts.eval(&v).unwrap(), want, "parts at {v:?}");
                }
            }
        }
    }
}
