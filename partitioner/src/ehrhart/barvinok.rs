//! Counting with barvinok (crate `barvinok-sys`), the Ehrhart engine when
//! its libraries are there.
//!
//! The library is loaded once per process (`barvinok_sys::library`,
//! `RTLD_LOCAL | RTLD_DEEPBIND`: its isl never meets isl-rs's). Each count
//! runs in a forked child of the sandbox (module `sandbox`), so a count that
//! runs past its time limit is killed and one that aborts costs nothing but
//! the count. The child sends back the parameter names and, per piece of
//! barvinok's piecewise quasi-polynomial, the condition and value texts
//! (isl syntax); the parent checks that `ranges-format` parses, binds and
//! can evaluate each, so every count stored in a range file can be read back.

use std::time::Duration;

use ranges_format::{Chamber, Condition, Count, PwExpr};

use super::{check_arity, sandbox, EhrhartError};

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
    barvinok_sys::library().map(|_| ()).map_err(|e| e.to_string())
}

/// Counts the integer points of `set_text` (isl syntax) with barvinok, in
/// the sandbox, within `limit`.
pub fn card_within(set_text: &str, limit: Duration) -> Result<Card, EhrhartError> {
    let lib = barvinok_sys::library().map_err(|e| EhrhartError::Unavailable { reason: e.to_string() })?;
    let words = sandbox::run_isolated(
        || {
            let r = lib.context().and_then(|cx| cx.card(set_text));
            encode(&r.map(|c| (c.params, c.pieces.into_iter().map(|p| (p.domain, p.value)).collect())).map_err(|e| e.to_string()))
        },
        limit,
    )
    .map_err(|e| match e {
        EhrhartError::TimedOut { millis } => EhrhartError::BarvinokTimedOut { millis },
        EhrhartError::PolyLib { detail } => EhrhartError::Barvinok { detail: detail.replace("polylib process", "barvinok process") },
        other => other,
    })?;
    let (params, pieces) = decode(&words)
        .ok_or_else(|| EhrhartError::Barvinok { detail: "the barvinok process sent a malformed reply".into() })?
        .map_err(|detail| EhrhartError::Barvinok { detail })?;
    let names: Vec<&str> = params.iter().map(String::as_str).collect();
    let mut chambers = Vec::with_capacity(pieces.len());
    for (domain, value) in pieces {
        let domain = if domain.is_empty() { "true".to_string() } else { domain };
        let unreadable = |e: ranges_format::ExprError| EhrhartError::Barvinok {
            detail: format!("gave a count clpart cannot read ({value} if {domain}): {e}"),
        };
        Condition::parse(&domain).and_then(|c| c.bind(&names)).map_err(unreadable)?;
        PwExpr::parse(&value).and_then(|v| v.bind(&names)).map_err(unreadable)?;
        chambers.push(Chamber { domain, value });
    }
    Ok(Card { params, count: Count { terms: vec![chambers] } })
}

type Reply = Result<(Vec<String>, Vec<(String, String)>), String>;

/// `[0, strings...]` for a count (names, then domain/value pairs), `[1, message]`
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
        Ok((params, pieces)) => {
            w.push(0);
            w.push(params.len() as i64);
            for p in params {
                put(&mut w, p);
            }
            w.push(pieces.len() as i64);
            for (d, v) in pieces {
                put(&mut w, d);
                put(&mut w, v);
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
            usize::try_from(self.word()?).ok().filter(|&n| n <= self.0.len() * 8)
        }
        fn string(&mut self) -> Option<String> {
            let n = self.count()?;
            let k = n.div_ceil(8);
            if k > self.0.len() {
                return None;
            }
            let bytes: Vec<u8> = self.0[..k].iter().flat_map(|x| x.to_le_bytes()).take(n).collect();
            self.0 = &self.0[k..];
            String::from_utf8(bytes).ok()
        }
    }
    let mut r = R(w);
    let reply = match r.word()? {
        0 => {
            let n = r.count()?;
            let params = (0..n).map(|_| r.string()).collect::<Option<Vec<_>>>()?;
            let m = r.count()?;
            let pieces = (0..m).map(|_| Some((r.string()?, r.string()?))).collect::<Option<Vec<_>>>()?;
            Ok((params, pieces))
        }
        1 => Err(r.string()?),
        _ => return None,
    };
    r.0.is_empty().then_some(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_round_trip() {
        let ok: Reply = Ok((vec!["N".into(), "sx_lo".into()], vec![("N > 0".into(), "(N - floor((N)/2))".into()), (String::new(), "10".into())]));
        assert_eq!(decode(&encode(&ok)), Some(ok));
        let err: Reply = Err("barvinok cannot read \"{\": é".into());
        assert_eq!(decode(&encode(&err)), Some(err));
        let mut bad = encode(&Ok((vec!["N".into()], vec![])));
        bad.push(7);
        assert_eq!(decode(&bad), None);
        assert_eq!(decode(&[0, 99]), None);
    }
}
