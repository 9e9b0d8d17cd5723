//! `counting`: Ehrhart counting, how many integer points a parametric set
//! has, as quasi-polynomials of the parameters.
//!
//! The partitioner's count engines, a crate of their own: they take isl
//! text and give counts in the range file's form ([`ranges_format::Count`]),
//! knowing nothing of kernels, arrays or slices (which counts a kernel gets
//! and where they go is `partitioner::partition`'s). Start with this file
//! (the engines' entry points and limits), `batch.rs` (which engine counts
//! what, a batch at a time), then `sandbox.rs` (the forked children, warm
//! or fresh) and `wire.rs` (the words a child reads and
//! answers, one home for both sides).
//!
//! **Invariant:** an engine runs only in a forked child with its output
//! silenced and a time limit; whatever it does (abort, print, run long) is
//! an [`EhrhartError`] here, never a crash or output of the caller. Warm
//! children are started only by programs of their own
//! ([`start_warm_children`]). **Boundary:** isl text in, [`Card`],
//! [`Enumeration`], [`ParamVertex`] or [`EhrhartError`] out; PolyLib (FFI,
//! `ffi.rs`, built by `build.rs`) and barvinok (`barvinok-sys`) are reached
//! only from here.
//!
//! Two engines. [`card_within`] asks barvinok (module `barvinok`, crate
//! `barvinok-sys`, loaded at run time when its libraries are there): exact
//! for every bounded set, existentials included, as one piecewise
//! quasi-polynomial ([`Card`], in the range file's [`ranges_format::Count`]
//! form, values with `floor`). [`enumerate`] asks PolyLib, described below:
//! chambers of quasi-polynomials with periodic numbers, plus the set's
//! parametric vertices; it is the fallback when barvinok is unavailable.
//! Both run in a forked child with a time limit (module `sandbox`);
//! [`card_many`] and [`enumerate_many`] make many counts in one child.
//!
//! PolyLib:
//! Input is isl text (`"[N, lo, hi] -> { [i] : 16lo <= i < 16hi and 0 <= i < N }"`).
//! isl reads it, makes existentials explicit, splits the set into disjoint
//! basic sets ("terms": the count is the sum of the terms' counts) and lifts
//! integer divisions (from `floor`, `mod`, `exists`) into extra set
//! dimensions, which keeps counts unchanged since each division is a function
//! of the other variables. PolyLib's `Polyhedron_Enumerate` then counts each
//! term and `Polyhedron2Param_Vertices` gives its vertices.
//!
//! PolyLib keeps global state, prints on stdout and stderr by itself, and
//! aborts the process when its 64-bit arithmetic overflows inside
//! `Polyhedron_Enumerate`. So it runs in a forked child process with its
//! output silenced and a time limit (module `sandbox`); its THROWs are also
//! caught in C (`csrc/polylib_shim.c`). Every failure becomes an
//! [`EhrhartError`]; the caller's process and output are never touched.
//!
//! Text forms (all over the parameter names of [`Enumeration::params`]):
//! - [`Chamber::value`](ranges_format::Chamber::value): `1/2 * N^2 + 3/2 * N + 1`; a periodic coefficient is
//!   `[ a, b ]_N`, meaning element `N mod 2` (0-based, always non-negative);
//! - [`Chamber::domain`](ranges_format::Chamber::domain): `N >= 1 and -lo + hi >= 1`, `lo <= 0`, `N = 4`, or `true`;
//!   constraints are affine with integer coefficients, joined by ` and `;
//! - [`ParamVertex::coords`]: affine with rational coefficients, `1/2 * N - 1/2`.

mod barvinok;
mod batch;
mod evalue;
mod ffi;
mod isl_input;
mod polylib;
mod sandbox;
mod text;
mod wire;

use std::fmt;
use std::time::{Duration, Instant};

pub use barvinok::{
    available as barvinok_available, card_many, card_parts_many, card_within, Card, MAX_PARTS,
};
pub use batch::{counts_of, distinct_by, out_of_time, CountForm, CountInput, Fallback};
use evalue::QPoly;
use ranges_format::{Chamber, CutShort, Rat};
pub use sandbox::at_low_priority;

/// Most set dimensions (after lifting integer divisions) plus parameters
/// that [`enumerate`] accepts; beyond it PolyLib's cost explodes.
pub const MAX_DIMENSIONS: usize = 8;

/// Most set dimensions (after lifting integer divisions) plus parameters
/// that [`vertices_many`] accepts: the vertices alone cost far less than a
/// count (`Polyhedron_Enumerate`).
pub const MAX_VERTEX_DIMENSIONS: usize = 16;

/// Most disjoint pieces (terms) that [`enumerate`] accepts.
pub const MAX_PIECES: usize = 32;

/// Wall-clock time PolyLib gets for one [`enumerate`] call, and the
/// partitioner's limit per count (barvinok and PolyLib together). Counts
/// that take longer (strided sets with large coefficients for PolyLib, e.g.
/// `x + 1000y`; footprints over many parameters for barvinok) are left out:
/// the analysis of one kernel must stay interactive.
pub const POLYLIB_TIME_LIMIT: Duration = Duration::from_secs(2);

/// Why an Ehrhart enumeration or evaluation failed. Callers fall back to
/// isl's exact `count_val` at concrete parameter values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EhrhartError {
    /// isl could not read a set or context text.
    #[error("cannot read {text:?}: {message}")]
    Parse {
        /// The offending text.
        text: String,
        /// isl's message.
        message: String,
    },
    /// An isl operation failed (including running out of its operation quota).
    #[error("isl failed while {during}: {message}")]
    Isl {
        /// What was being done.
        during: &'static str,
        /// isl's message.
        message: String,
    },
    /// The set is outside what this engine counts (e.g. unbounded).
    #[error("cannot count with ehrhart polynomials: {reason}")]
    Unsupported {
        /// Why.
        reason: String,
    },
    /// The problem exceeds a size limit ([`MAX_DIMENSIONS`], [`MAX_PIECES`], ...).
    #[error("{what} exceed the limit of {limit}")]
    TooLarge {
        /// What is too large.
        what: String,
        /// The limit.
        limit: usize,
    },
    /// PolyLib failed: threw, aborted (its 64-bit arithmetic overflowed),
    /// crashed, returned nothing, or gave something unexpected.
    #[error("polylib failed: {detail}")]
    PolyLib {
        /// What went wrong, naming the PolyLib function where known.
        detail: String,
    },
    /// PolyLib ran past [`POLYLIB_TIME_LIMIT`] and was stopped.
    #[error("polylib took longer than {millis} ms")]
    TimedOut {
        /// The limit, in milliseconds.
        millis: u64,
    },
    /// barvinok's libraries could not be loaded (see `barvinok_sys::locate`).
    #[error("barvinok is unavailable: {reason}")]
    Unavailable {
        /// Why.
        reason: String,
    },
    /// barvinok failed: could not read or count the set, crashed, or gave
    /// something `ranges-format` cannot read.
    #[error("barvinok failed: {detail}")]
    Barvinok {
        /// What went wrong.
        detail: String,
    },
    /// barvinok ran past its time limit and was stopped.
    #[error("barvinok took longer than {millis} ms")]
    BarvinokTimedOut {
        /// The limit, in milliseconds.
        millis: u64,
    },
    /// A count of a batch ([`card_many`], [`enumerate_many`]) whose turn
    /// came after the batch's deadline: it was not attempted.
    #[error("the time budget was spent before this count began")]
    DeadlinePassed,
    /// [`Enumeration::eval`] got the wrong number of parameter values.
    #[error("expected {expected} parameter values ({names}), got {got}")]
    ParamCount {
        /// Number of parameters.
        expected: usize,
        /// Number of values given.
        got: usize,
        /// The parameter names, comma-separated.
        names: String,
    },
    /// Evaluation overflowed `i128` or did not give a count in `i64`.
    #[error("evaluating the ehrhart quasi-polynomial at {values:?} overflows")]
    Overflow {
        /// The parameter values.
        values: Vec<i64>,
    },
    /// A quasi-polynomial evaluated to a non-integer: PolyLib gave a wrong result.
    #[error("the ehrhart quasi-polynomial {value:?} is not an integer at {values:?}")]
    NotInteger {
        /// The quasi-polynomial text.
        value: String,
        /// The parameter values.
        values: Vec<i64>,
    },
}

impl EhrhartError {
    /// What the error says cut a count short: a time limit met
    /// ([`CutShort::CountTime`]), or a counting process that failed
    /// ([`CutShort::CountProcess`]); `None` for the others.
    pub fn cut_short(&self) -> Option<CutShort> {
        match self {
            EhrhartError::TimedOut { .. }
            | EhrhartError::BarvinokTimedOut { .. }
            | EhrhartError::DeadlinePassed => Some(CutShort::CountTime),
            EhrhartError::PolyLib { .. } | EhrhartError::Barvinok { .. } => {
                Some(CutShort::CountProcess)
            }
            _ => None,
        }
    }
}

/// The Ehrhart counts of a parametric set: per disjoint piece (term), a list
/// of chambers. The number of integer points is the sum over the terms of
/// the value of the first chamber (of that term) whose domain holds, 0 for a
/// term where none does. The set counted is the input set intersected with
/// the context, so counts are exact for every parameter value.
#[derive(Debug, Clone, PartialEq)]
pub struct Enumeration {
    /// Parameter names, in isl's order (the order of [`Enumeration::eval`]'s values).
    pub params: Vec<String>,
    /// Per term, its chambers.
    pub terms: Vec<Vec<ParsedChamber>>,
    /// Per term (same order as `terms`), the parametric vertices of that
    /// piece. Coordinates are over the piece's set dimensions, the set's own
    /// first, then one per lifted integer division.
    pub vertices: Vec<Vec<ParamVertex>>,
}

/// One chamber as PolyLib gave it: the range file's [`Chamber`] (its
/// `domain`, a conjunction of affine constraints on the parameters such as
/// `N >= 1 and -lo + hi >= 1`, `true` when unconstrained; its `value`, a
/// quasi-polynomial such as `1/2 * N^2 + 1/2 * N` or `1/2 * N + [ 0, 1/2 ]_N`)
/// with both parsed, for evaluation without the text parser.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedChamber {
    /// The chamber as text (read through `Deref`: `c.domain`, `c.value`).
    pub text: Chamber,
    /// `domain` as PolyLib rows `[eq(0)/ineq(1), param coefs..., constant]`.
    rows: Vec<Vec<i64>>,
    /// `value` as a tree.
    poly: QPoly,
}

impl std::ops::Deref for ParsedChamber {
    type Target = Chamber;
    fn deref(&self) -> &Chamber {
        &self.text
    }
}

/// One parametric vertex of a term's polyhedron.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamVertex {
    /// Per set dimension, an affine expression of the parameters with
    /// rational coefficients, e.g. `16 * hi - 1` or `1/2 * N - 1/2`.
    pub coords: Vec<String>,
    /// Where the vertex exists, as for [`Chamber::domain`](ranges_format::Chamber::domain).
    pub domain: String,
}

/// `values` has one value per parameter of `params`.
pub(crate) fn check_arity(params: &[String], values: &[i64]) -> Result<(), EhrhartError> {
    if values.len() != params.len() {
        return Err(EhrhartError::ParamCount {
            expected: params.len(),
            got: values.len(),
            names: params.join(", "),
        });
    }
    Ok(())
}

impl Enumeration {
    /// The number of integer points of the set at the given parameter values
    /// (`values[k]` for `params[k]`), from the stored quasi-polynomials with
    /// exact rational arithmetic.
    pub fn eval(&self, values: &[i64]) -> Result<i64, EhrhartError> {
        check_arity(&self.params, values)?;
        let overflow = || EhrhartError::Overflow {
            values: values.to_vec(),
        };
        let mut total = Rat::ZERO;
        for term in &self.terms {
            for chamber in term {
                if !text::holds(&chamber.rows, values).ok_or_else(overflow)? {
                    continue;
                }
                let v = chamber.poly.eval(values).ok_or_else(overflow)?;
                if v.denom() != 1 {
                    return Err(EhrhartError::NotInteger {
                        value: chamber.value.clone(),
                        values: values.to_vec(),
                    });
                }
                total = total.add(v).map_err(|_| overflow())?;
                break;
            }
        }
        i64::try_from(total.numer()).map_err(|_| overflow())
    }
}

impl fmt::Display for Enumeration {
    /// One line per chamber and vertex, e.g.
    /// `term 0: N >= 1 -> N` and `term 0: vertex (N - 1) if N >= 1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "params [{}]", self.params.join(", "))?;
        for (t, chambers) in self.terms.iter().enumerate() {
            for c in chambers {
                writeln!(f, "term {t}: {} -> {}", c.domain, c.value)?;
            }
            for v in self.vertices.get(t).into_iter().flatten() {
                writeln!(
                    f,
                    "term {t}: vertex ({}) if {}",
                    v.coords.join(", "),
                    v.domain
                )?;
            }
        }
        Ok(())
    }
}

/// The warm children of this process ([`start_warm_children`]).
static WARM: sandbox::WarmPool = sandbox::WarmPool {
    serve,
    warm_up,
    before_fork: load_barvinok,
    free: std::sync::Mutex::new(Vec::new()),
};

/// Most warm children [`start_warm_children`] starts: the counts and the
/// vertices of a kernel run side by side.
pub const WARM_CHILDREN: usize = 2;

/// Starts [`WARM_CHILDREN`] warm children for the counts (see the module
/// `sandbox`): each forked now, loads barvinok and counts a small set
/// once, then waits for work. A kernel's counts then cost no fork and no
/// warm-up. For programs of their own only (the `clpart` command, the
/// bench), called first thing in `main` while the process is small and has
/// one thread; never from a library inside an application, whose own
/// `wait` could wait for a child that outlives every count.
pub fn start_warm_children() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| WARM.start(WARM_CHILDREN));
}

/// In a child: the work of one job ([`wire::Job`]).
fn serve(words: &[i64]) -> sandbox::Reply {
    match wire::decode_job(words) {
        Some(wire::Job::Card(text)) => barvinok::serve(barvinok::Item::Whole(&text)),
        Some(wire::Job::CardParts(texts)) => barvinok::serve(barvinok::Item::Parts(&texts)),
        Some(wire::Job::PolyLib { input, count }) => {
            let r = if count {
                polylib::count_pieces(&input)
            } else {
                polylib::vertices_of_pieces(&input)
            };
            // PolyLib keeps global state: after a failure (a caught exception
            // among them), the next set gets a fresh child.
            sandbox::Reply {
                go_on: r.is_ok(),
                words: wire::encode(&r),
            }
        }
        // An empty reply, which every reader takes for a malformed one.
        None => sandbox::Reply {
            words: Vec::new(),
            go_on: false,
        },
    }
}

/// Loads barvinok's libraries here (waiting for [`preload_barvinok`]).
fn load_barvinok() {
    let _ = barvinok_available();
}

/// In a warm child, once: barvinok loaded and its first count made.
fn warm_up() {
    let _ = barvinok::serve(barvinok::Item::Whole("[n] -> { [i] : 0 <= i < n }"));
}

/// Starts loading barvinok's libraries on a thread of their own (once per
/// process), so that the first count does not wait for them: a kernel's
/// access analysis and ranges come before its counts. [`barvinok_available`]
/// and the counts wait for the load to end.
pub fn preload_barvinok() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let _ = std::thread::Builder::new()
            .name("clpart-barvinok".into())
            .spawn(|| {
                let _ = barvinok_available();
            });
    });
}

/// Counts the integer points of a parametric set given in isl text syntax,
/// e.g. `"[N, lo, hi] -> { [i] : 16lo <= i < 16hi and 0 <= i < N }"` (any
/// number of set dimensions and parameters, within [`MAX_DIMENSIONS`]), as
/// Ehrhart quasi-polynomials with their chambers, and gives the parametric
/// vertices of each piece.
///
/// `context_text` is a parameter set such as `"[N] -> { : N >= 1 }"`; the set
/// is intersected with it and PolyLib gets its polyhedral hull as context.
/// Without it the context is the universe.
///
/// Existentials (`exists`, `floor`, `mod`) are lifted into extra set
/// dimensions; an unbounded set, one past the size limits, or a PolyLib
/// failure gives an error, never a panic. Pure: no printing, no files.
pub fn enumerate(set_text: &str, context_text: Option<&str>) -> Result<Enumeration, EhrhartError> {
    enumerate_within(set_text, context_text, POLYLIB_TIME_LIMIT)
}

/// [`enumerate`] with PolyLib's time limit given (the rest of a kernel's budget).
pub fn enumerate_within(
    set_text: &str,
    context_text: Option<&str>,
    limit: Duration,
) -> Result<Enumeration, EhrhartError> {
    let input = isl_input::read(set_text, context_text);
    enumerate_inputs(vec![(input, limit)], None)
        .pop()
        .map(|(r, _)| r)
        .unwrap_or_else(|| {
            Err(EhrhartError::PolyLib {
                detail: "no reply".into(),
            })
        })
}

/// [`enumerate`] for each set (without context, each with its time limit),
/// PolyLib's work all in one sandboxed child while it succeeds (a set that
/// times out or fails costs its child, and a fresh one takes the rest).
/// Gives, per set in order, its enumeration or why there is none, and the
/// time it took; limits and `deadline` as for [`card_many`].
pub fn enumerate_many(
    sets: &[(&str, Duration)],
    deadline: Option<Instant>,
) -> Vec<(Result<Enumeration, EhrhartError>, Duration)> {
    enumerate_inputs(
        sets.iter()
            .map(|&(text, limit)| (isl_input::read(text, None), limit))
            .collect(),
        deadline,
    )
}

/// The parametric vertices of each set's pieces, without a count
/// (`Polyhedron2Param_Vertices` alone, within [`MAX_VERTEX_DIMENSIONS`]),
/// only those valid within each set's context (a parameter set) if it has one:
/// per set in order, its vertices per piece or why there are none, and the
/// time it took; limits, `deadline` and the sandbox as for
/// [`enumerate_many`].
pub fn vertices_many(
    sets: &[(&str, Option<&str>, Duration)],
    deadline: Option<Instant>,
) -> Vec<(Result<Vec<Vec<ParamVertex>>, EhrhartError>, Duration)> {
    polylib_inputs(
        sets.iter()
            .map(|&(text, context, limit)| {
                (
                    isl_input::read_within(text, context, MAX_VERTEX_DIMENSIONS),
                    limit,
                )
            })
            .collect(),
        deadline,
        false,
    )
    .into_iter()
    .map(|(e, took)| (e.map(|e| e.vertices), took))
    .collect()
}

/// PolyLib's enumeration of each input read, in one batch of the sandbox.
fn enumerate_inputs(
    inputs: Vec<(Result<isl_input::Input, EhrhartError>, Duration)>,
    deadline: Option<Instant>,
) -> Vec<(Result<Enumeration, EhrhartError>, Duration)> {
    polylib_inputs(inputs, deadline, true)
}

/// PolyLib's enumeration (with `count`) or vertices alone of each input
/// read, in one batch of the sandbox.
fn polylib_inputs(
    inputs: Vec<(Result<isl_input::Input, EhrhartError>, Duration)>,
    deadline: Option<Instant>,
    count: bool,
) -> Vec<(Result<Enumeration, EhrhartError>, Duration)> {
    // Only inputs with pieces go to PolyLib.
    let todo: Vec<usize> = (0..inputs.len())
        .filter(|&k| inputs[k].0.as_ref().is_ok_and(|i| !i.pieces.is_empty()))
        .collect();
    let limits: Vec<Duration> = todo.iter().map(|&k| inputs[k].1).collect();
    let jobs: Vec<Vec<i64>> = todo
        .iter()
        .filter_map(|&k| inputs[k].0.as_ref().ok())
        .map(|input| wire::polylib_job(input, count))
        .collect();
    let mut replies = sandbox::run_jobs(&WARM, &jobs, &limits, deadline).into_iter();
    inputs
        .into_iter()
        .enumerate()
        .map(|(k, (input, _))| {
            let input = match input {
                Ok(input) => input,
                Err(e) => return (Err(e), Duration::ZERO),
            };
            if !todo.contains(&k) {
                return (enumeration(input, Vec::new()), Duration::ZERO);
            }
            let (reply, took) = replies
                .next()
                .unwrap_or((Err(EhrhartError::DeadlinePassed), Duration::ZERO));
            (
                reply
                    .and_then(|words| wire::decode(&words))
                    .and_then(|pieces| enumeration(input, pieces)),
                took,
            )
        })
        .collect()
}

/// The enumeration of `input` from PolyLib's pieces, checked.
fn enumeration(
    input: isl_input::Input,
    pieces: Vec<polylib::RawPiece>,
) -> Result<Enumeration, EhrhartError> {
    let n = input.params.len();
    let mut terms = Vec::with_capacity(pieces.len());
    let mut vertices = Vec::with_capacity(pieces.len());
    for raw in pieces {
        let well_formed = raw
            .chambers
            .iter()
            .all(|(rows, poly)| rows.iter().all(|r| r.len() == n + 2) && poly.is_over(n));
        if !well_formed {
            return Err(EhrhartError::PolyLib {
                detail: "Polyhedron_Enumerate gave a chamber of the wrong width".into(),
            });
        }
        let chambers = raw
            .chambers
            .into_iter()
            .map(|(rows, poly)| ParsedChamber {
                text: Chamber {
                    domain: text::conjunction(&rows, &input.params),
                    value: poly.to_text(&input.params),
                },
                rows,
                poly,
            })
            .collect();
        let verts = raw
            .vertices
            .into_iter()
            .map(|(coords, domain)| vertex_text(&coords, &domain, &input.params))
            .collect::<Result<Vec<_>, _>>()?;
        terms.push(chambers);
        vertices.push(verts);
    }
    Ok(Enumeration {
        params: input.params,
        terms,
        vertices,
    })
}

fn vertex_text(
    coords: &[Vec<i64>],
    domain: &[Vec<i64>],
    names: &[String],
) -> Result<ParamVertex, EhrhartError> {
    let n = names.len();
    let bad = |detail: String| EhrhartError::PolyLib {
        detail: format!("Polyhedron2Param_Vertices gave {detail}"),
    };
    let mut out = Vec::with_capacity(coords.len());
    for row in coords {
        if row.len() != n + 2 {
            return Err(bad(format!(
                "a vertex row of {} columns for {n} parameters",
                row.len()
            )));
        }
        let den = row[n + 1] as i128;
        let q = |v: i64| {
            Rat::new(v as i128, den).map_err(|_| bad("a vertex with a zero denominator".into()))
        };
        let coefs = row[..n]
            .iter()
            .map(|&v| q(v))
            .collect::<Result<Vec<_>, _>>()?;
        out.push(text::affine(&coefs, q(row[n])?, names));
    }
    if domain.iter().any(|r| r.len() != n + 2) {
        return Err(bad("a vertex domain of the wrong width".into()));
    }
    Ok(ParamVertex {
        coords: out,
        domain: text::conjunction(domain, names),
    })
}
