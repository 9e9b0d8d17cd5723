//! The parametric vertices of each bounded array's slice footprint, from
//! PolyLib ([`add_vertices`]), with their domains simplified against the
//! context ([`DomainGist`]).

use access_analysis::isl::Isl;
use counting::CountInput;
use isl_rs::Set;
use ranges_format::{CutShort, KernelRanges};

use super::Ctx;

/// PolyLib's time limit for the vertices of one footprint ([`add_vertices`]):
/// they are for the report, so they get less than a count.
const VERTEX_TIME_LIMIT: std::time::Duration = std::time::Duration::from_millis(500);

/// The time limit of each vertex search: [`VERTEX_TIME_LIMIT`], at most what
/// is left of the kernel's budget.
pub(super) fn vertex_limit(cx: &Ctx) -> std::time::Duration {
    match cx.counts_deadline {
        Some(d) => VERTEX_TIME_LIMIT.min(d.saturating_duration_since(std::time::Instant::now())),
        None => VERTEX_TIME_LIMIT,
    }
}

/// PolyLib's vertices of each footprint (`counting::vertices_many`), or why
/// there are none, and whether their domains are simplified already
/// ([`DomainGist`], made ahead: [`count_ahead`](super::ahead::count_ahead)).
pub(super) type VertexResults = Vec<(
    Result<Vec<Vec<counting::ParamVertex>>, counting::EhrhartError>,
    bool,
)>;

/// The parametric vertices of each bounded array's slice footprint (the
/// input of its slice count, [`vertex_todo`](super::counts::vertex_todo)), from PolyLib
/// (`Polyhedron2Param_Vertices`, as in the thesis), into
/// `ArrayRanges::vertices_slice`; where PolyLib gives none, a note says why.
/// `found` is the batch's outcome (all in one sandboxed child, each within
/// `limit`, [`vertex_limit`]), `None` when no time was left to start it, or
/// the panic of the thread that ran it.
pub(super) fn add_vertices(
    cx: &Ctx,
    k: &mut KernelRanges,
    todo: &[(usize, &CountInput)],
    limit: std::time::Duration,
    found: Option<std::thread::Result<VertexResults>>,
    notes: &mut Vec<String>,
) {
    if todo.is_empty() {
        return;
    }
    let found = match found {
        Some(Ok(found)) => found,
        Some(Err(_)) => {
            cx.cut.saw(CutShort::CountProcess);
            for &(array_idx, _) in todo {
                notes.push(format!(
                    "array '{}': no vertex bounds of a slice's footprint: the search failed (a panic)",
                    k.arrays[array_idx].name
                ));
            }
            return;
        }
        None => {
            debug_assert!(limit.is_zero());
            cx.cut.saw(CutShort::CountTime);
            for &(array_idx, _) in todo {
                notes.push(format!(
                    "array '{}': no vertex bounds of a slice's footprint: the counting time is spent",
                    k.arrays[array_idx].name
                ));
            }
            return;
        }
    };
    for (&(array_idx, input), (e, simplified)) in todo.iter().zip(found) {
        let a = &mut k.arrays[array_idx];
        let n_dims = cx.acc.arrays[array_idx].strides.len().max(1);
        match e {
            Ok(e) => {
                let mut vs: Vec<ranges_format::Vertex> = Vec::new();
                let gist = (!simplified)
                    .then(|| DomainGist::new(cx.isl.max_ops(), input.context.as_deref()));
                // The domains are simplified within the kernel's budget too:
                // past it, the array gets no vertices (never some of them).
                let spent = || {
                    cx.counts_deadline
                        .is_some_and(|d| std::time::Instant::now() >= d)
                };
                let mut out_of_time = false;
                for v in e.iter().flatten() {
                    if spent() {
                        out_of_time = true;
                        break;
                    }
                    let v = ranges_format::Vertex {
                        coords: v.coords.iter().take(n_dims).cloned().collect(),
                        domain: match &gist {
                            Some(g) => g.of(&v.domain),
                            None => v.domain.clone(),
                        },
                    };
                    if !vs.contains(&v) {
                        vs.push(v);
                    }
                }
                if out_of_time {
                    cx.cut.saw(CutShort::CountTime);
                    notes.push(format!(
                        "array '{}': no vertex bounds of a slice's footprint: simplifying their domains ran out of time (the counting time is spent)",
                        a.name
                    ));
                } else {
                    a.vertices_slice = Some(vs);
                }
            }
            Err(e) => {
                cx.cut.saw_error(&e);
                let why = match e {
                    counting::EhrhartError::TimedOut { .. }
                    | counting::EhrhartError::DeadlinePassed => {
                        format!(
                            "polylib ran out of time (at most {} ms)",
                            VERTEX_TIME_LIMIT.as_millis()
                        )
                    }
                    e => e.to_string(),
                };
                notes.push(format!(
                    "array '{}': no vertex bounds of a slice's footprint: {why}",
                    a.name
                ));
            }
        }
    }
}

/// A vertex's domain without what the context implies (PolyLib repeats the
/// context's constraints in every domain), within isl's operation limit;
/// where isl cannot, the domain as PolyLib gave it. `true` when empty.
pub(super) struct DomainGist<'a> {
    /// The context's parameters (`[a, b]`) and the context itself (an isl
    /// object of `isl`: declared first, so that it is dropped first).
    context: Option<(&'a str, Set)>,
    isl: Isl,
}

impl<'a> DomainGist<'a> {
    /// Within `max_ops` isl operations per simplification (the kernel's).
    pub(super) fn new(max_ops: u64, context: Option<&'a str>) -> DomainGist<'a> {
        // The operation limit alone (no wall clock): the same domains
        // whatever the machine's load.
        let isl = Isl::with_deadline(max_ops, None, 0);
        let context = context.and_then(|c| {
            let params = c.split_once(" -> ")?.0;
            Some((params, isl.set(c).ok()?))
        });
        DomainGist { isl, context }
    }

    pub(super) fn of(&self, domain: &str) -> String {
        let domain = domain.trim();
        if domain.is_empty() {
            return "true".into();
        }
        let gisted = self.context.as_ref().and_then(|(params, c)| {
            let d = self
                .isl
                .set(&format!("{params} -> {{ : {domain} }}"))
                .ok()?;
            let d = d.gist_params(c.copy().ok()?).ok()?;
            let text = self.isl.set_str(&d).ok()?;
            // `[..] -> { : cond }`, or `{ : }` when the context implies it all.
            let body = text.split_once("{")?.1.rsplit_once("}")?.0.trim();
            let cond = body.strip_prefix(':').map(str::trim)?;
            Some(if cond.is_empty() {
                "true".to_string()
            } else {
                cond.to_string()
            })
        });
        gisted.unwrap_or_else(|| domain.to_string())
    }
}
