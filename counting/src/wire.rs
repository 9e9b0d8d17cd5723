//! The sandboxed child's reply: a `Result<Vec<RawPiece>, EhrhartError>` as
//! a flat list of `i64` words, and back; and the child's job ([`Job`]), the
//! same way. Decoding checks every length.

use super::evalue::QPoly;
use super::isl_input::{Input, Piece};
use super::polylib::RawPiece;
use super::EhrhartError;
use ranges_format::Rat;

/// Largest length (of a list or string) accepted while decoding.
const MAX_LEN: i64 = 1 << 20;

const OK: i64 = 0;
const ERR_POLYLIB: i64 = 1;
const ERR_UNSUPPORTED: i64 = 2;
const ERR_TOO_LARGE: i64 = 3;
const ERR_OTHER: i64 = 4;

const JOB_CARD: i64 = 0;
const JOB_CARD_PARTS: i64 = 1;
const JOB_POLYLIB: i64 = 2;

/// What a sandboxed child does for one item (`ehrhart::serve`).
pub(crate) enum Job {
    /// barvinok's count of a set (isl text), whole.
    Card(String),
    /// barvinok's count of the union of sets (isl texts), by parts.
    CardParts(Vec<String>),
    /// PolyLib's enumeration of an input (`count`), or its vertices alone.
    PolyLib { input: Input, count: bool },
}

/// The words of [`Job::Card`].
pub(crate) fn card_job(text: &str) -> Vec<i64> {
    let mut w = vec![JOB_CARD];
    put_str(&mut w, text);
    w
}

/// The words of [`Job::CardParts`].
pub(crate) fn card_parts_job(texts: &[String]) -> Vec<i64> {
    let mut w = vec![JOB_CARD_PARTS, texts.len() as i64];
    for t in texts {
        put_str(&mut w, t);
    }
    w
}

/// The words of [`Job::PolyLib`].
pub(crate) fn polylib_job(input: &Input, count: bool) -> Vec<i64> {
    let mut w = vec![JOB_POLYLIB, i64::from(count), input.params.len() as i64];
    for p in &input.params {
        put_str(&mut w, p);
    }
    w.push(input.pieces.len() as i64);
    for p in &input.pieces {
        w.push(p.n_vars as i64);
        put_rows(&mut w, &p.rows);
    }
    match &input.context {
        None => w.push(0),
        Some(rows) => {
            w.push(1);
            put_rows(&mut w, rows);
        }
    }
    w
}

/// The job in `words`; `None` when they are not one.
pub(crate) fn decode_job(words: &[i64]) -> Option<Job> {
    let mut r = Reader { words, pos: 0 };
    let job = match r.word()? {
        JOB_CARD => Job::Card(r.string()?),
        JOB_CARD_PARTS => {
            let n = r.len()?;
            Job::CardParts((0..n).map(|_| r.string()).collect::<Option<_>>()?)
        }
        JOB_POLYLIB => {
            let count = r.word()? == 1;
            let n = r.len()?;
            let params = (0..n).map(|_| r.string()).collect::<Option<_>>()?;
            let n = r.len()?;
            let pieces = (0..n)
                .map(|_| {
                    Some(Piece {
                        n_vars: r.len()?,
                        rows: r.rows()?,
                    })
                })
                .collect::<Option<_>>()?;
            let context = match r.word()? {
                0 => None,
                1 => Some(r.rows()?),
                _ => return None,
            };
            Job::PolyLib {
                input: Input {
                    params,
                    pieces,
                    context,
                },
                count,
            }
        }
        _ => return None,
    };
    (r.pos == words.len()).then_some(job)
}

const Q_CONST: i64 = 0;
const Q_POLY: i64 = 1;
const Q_PERIODIC: i64 = 2;

pub(crate) fn encode(result: &Result<Vec<RawPiece>, EhrhartError>) -> Vec<i64> {
    let mut w = Vec::new();
    match result {
        Ok(pieces) => {
            w.push(OK);
            w.push(pieces.len() as i64);
            for p in pieces {
                w.push(p.chambers.len() as i64);
                for (rows, poly) in &p.chambers {
                    put_rows(&mut w, rows);
                    put_qpoly(&mut w, poly);
                }
                w.push(p.vertices.len() as i64);
                for (coords, domain) in &p.vertices {
                    put_rows(&mut w, coords);
                    put_rows(&mut w, domain);
                }
            }
        }
        Err(EhrhartError::PolyLib { detail }) => {
            w.push(ERR_POLYLIB);
            put_str(&mut w, detail);
        }
        Err(EhrhartError::Unsupported { reason }) => {
            w.push(ERR_UNSUPPORTED);
            put_str(&mut w, reason);
        }
        Err(EhrhartError::TooLarge { what, limit }) => {
            w.push(ERR_TOO_LARGE);
            put_str(&mut w, what);
            w.push(*limit as i64);
        }
        Err(other) => {
            w.push(ERR_OTHER);
            put_str(&mut w, &other.to_string());
        }
    }
    w
}

pub(crate) fn decode(words: &[i64]) -> Result<Vec<RawPiece>, EhrhartError> {
    let mut r = Reader { words, pos: 0 };
    let reply = r.reply();
    match reply {
        Some(result) if r.pos == words.len() => result,
        _ => Err(EhrhartError::PolyLib {
            detail: "the polylib process sent a malformed reply".into(),
        }),
    }
}

fn put_str(w: &mut Vec<i64>, s: &str) {
    w.push(s.len() as i64);
    w.extend(s.bytes().map(i64::from));
}

fn put_rows(w: &mut Vec<i64>, rows: &[Vec<i64>]) {
    w.push(rows.len() as i64);
    for row in rows {
        w.push(row.len() as i64);
        w.extend_from_slice(row);
    }
}

fn put_qpoly(w: &mut Vec<i64>, q: &QPoly) {
    match q {
        QPoly::Const(r) => {
            w.push(Q_CONST);
            // Values come from PolyLib's 64-bit integers, so they fit.
            w.push(r.numer() as i64);
            w.push(r.denom() as i64);
        }
        QPoly::Poly {
            param,
            coeffs: children,
        }
        | QPoly::Periodic {
            param,
            elems: children,
        } => {
            w.push(if matches!(q, QPoly::Poly { .. }) {
                Q_POLY
            } else {
                Q_PERIODIC
            });
            w.push(*param as i64);
            w.push(children.len() as i64);
            for c in children {
                put_qpoly(w, c);
            }
        }
    }
}

struct Reader<'a> {
    words: &'a [i64],
    pos: usize,
}

impl Reader<'_> {
    fn word(&mut self) -> Option<i64> {
        let w = *self.words.get(self.pos)?;
        self.pos += 1;
        Some(w)
    }

    fn len(&mut self) -> Option<usize> {
        let n = self.word()?;
        (0..=MAX_LEN).contains(&n).then_some(n as usize)
    }

    fn string(&mut self) -> Option<String> {
        let n = self.len()?;
        let bytes = (0..n)
            .map(|_| self.word().and_then(|b| u8::try_from(b).ok()))
            .collect::<Option<Vec<u8>>>()?;
        String::from_utf8(bytes).ok()
    }

    fn rows(&mut self) -> Option<Vec<Vec<i64>>> {
        let n = self.len()?;
        (0..n)
            .map(|_| {
                let m = self.len()?;
                (0..m).map(|_| self.word()).collect()
            })
            .collect()
    }

    fn qpoly(&mut self, depth: usize) -> Option<QPoly> {
        if depth > 256 {
            return None;
        }
        match self.word()? {
            Q_CONST => {
                let num = self.word()?;
                let den = self.word()?;
                Some(QPoly::Const(Rat::new(num as i128, den as i128).ok()?))
            }
            tag @ (Q_POLY | Q_PERIODIC) => {
                let param = self.len()?;
                let n = self.len()?;
                let children = (0..n)
                    .map(|_| self.qpoly(depth + 1))
                    .collect::<Option<Vec<_>>>()?;
                if children.is_empty() {
                    return None;
                }
                Some(if tag == Q_POLY {
                    QPoly::Poly {
                        param,
                        coeffs: children,
                    }
                } else {
                    QPoly::Periodic {
                        param,
                        elems: children,
                    }
                })
            }
            _ => None,
        }
    }

    fn reply(&mut self) -> Option<Result<Vec<RawPiece>, EhrhartError>> {
        Some(match self.word()? {
            OK => {
                let n = self.len()?;
                let mut pieces = Vec::with_capacity(n);
                for _ in 0..n {
                    let n_ch = self.len()?;
                    let chambers = (0..n_ch)
                        .map(|_| Some((self.rows()?, self.qpoly(0)?)))
                        .collect::<Option<Vec<_>>>()?;
                    let n_v = self.len()?;
                    let vertices = (0..n_v)
                        .map(|_| Some((self.rows()?, self.rows()?)))
                        .collect::<Option<Vec<_>>>()?;
                    pieces.push(RawPiece { chambers, vertices });
                }
                Ok(pieces)
            }
            ERR_POLYLIB => Err(EhrhartError::PolyLib {
                detail: self.string()?,
            }),
            ERR_UNSUPPORTED => Err(EhrhartError::Unsupported {
                reason: self.string()?,
            }),
            ERR_TOO_LARGE => {
                let what = self.string()?;
                let limit = self.len()?;
                Err(EhrhartError::TooLarge { what, limit })
            }
            ERR_OTHER => Err(EhrhartError::PolyLib {
                detail: self.string()?,
            }),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let poly = QPoly::Poly {
            param: 0,
            coeffs: vec![
                QPoly::Periodic {
                    param: 0,
                    elems: vec![
                        QPoly::Const(Rat::ZERO),
                        QPoly::Const(Rat::new(1, 2).unwrap()),
                    ],
                },
                QPoly::Const(Rat::new(1, 2).unwrap()),
            ],
        };
        let ok = Ok(vec![RawPiece {
            chambers: vec![(vec![vec![1, 1, -1], vec![1, 0, 1]], poly)],
            vertices: vec![(vec![vec![1, -1, 1]], vec![vec![1, 1, -1]])],
        }]);
        assert_eq!(decode(&encode(&ok)), ok);
        for err in [
            EhrhartError::PolyLib {
                detail: "Polyhedron_Enumerate returned null".into(),
            },
            EhrhartError::Unsupported {
                reason: "the set is unbounded for fixed parameters".into(),
            },
            EhrhartError::TooLarge {
                what: "x".into(),
                limit: 8,
            },
        ] {
            assert_eq!(decode(&encode(&Err(err.clone()))), Err(err));
        }
    }

    #[test]
    fn jobs_round_trip() {
        let texts = vec![
            "[n] -> { [i] : 0 <= i < n }".to_string(),
            "{ [i] : i = 0 }".into(),
        ];
        assert!(matches!(decode_job(&card_job(&texts[0])), Some(Job::Card(t)) if t == texts[0]));
        assert!(
            matches!(decode_job(&card_parts_job(&texts)), Some(Job::CardParts(t)) if t == texts)
        );
        let input = Input {
            params: vec!["n".into(), "lo".into()],
            pieces: vec![Piece {
                n_vars: 1,
                rows: vec![vec![1, 1, 0, 0, 0], vec![1, -1, 1, 0, -1]],
            }],
            context: Some(vec![vec![1, 1, 0, -1]]),
        };
        let Some(Job::PolyLib { input: back, count }) = decode_job(&polylib_job(&input, true))
        else {
            panic!("not a PolyLib job");
        };
        assert!(count);
        assert_eq!(back.params, input.params);
        assert_eq!(back.context, input.context);
        assert_eq!(back.pieces.len(), 1);
        assert_eq!(
            (back.pieces[0].n_vars, &back.pieces[0].rows),
            (1, &input.pieces[0].rows)
        );
        let mut cut = card_parts_job(&texts);
        cut.pop();
        assert!(decode_job(&cut).is_none());
        assert!(decode_job(&[7]).is_none());
        assert!(decode_job(&[]).is_none());
    }

    #[test]
    fn garbage_is_an_error() {
        for words in [
            &[][..],
            &[0, 1][..],
            &[0, 1, 5][..],
            &[9][..],
            &[0, 0, 7][..],
            &[1, -3][..],
        ] {
            assert!(
                matches!(decode(words), Err(EhrhartError::PolyLib { .. })),
                "{words:?}"
            );
        }
    }
}
