//! The PolyLib session for one input: per piece, `Polyhedron_Enumerate` and
//! `Polyhedron2Param_Vertices`, copied out into plain Rust data. Runs in the
//! sandboxed child process.

use std::ffi::CString;

use super::evalue::QPoly;
use super::ffi;
use super::isl_input::{Input, Piece};
use super::EhrhartError;

/// Rows `[eq(0)/ineq(1), param coefs..., constant]` of a conjunction over the parameters.
pub(crate) type Rows = Vec<Vec<i64>>;

/// What PolyLib gives for one piece.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawPiece {
    /// Per chamber: its domain rows and its quasi-polynomial.
    pub chambers: Vec<(Rows, QPoly)>,
    /// Per vertex: rows `[param coefs..., constant, denominator]`, one per
    /// coordinate, and the domain rows.
    pub vertices: Vec<(Vec<Vec<i64>>, Rows)>,
}

/// Counts every piece of `input`.
pub(crate) fn count_pieces(input: &Input) -> Result<Vec<RawPiece>, EhrhartError> {
    pieces(input, true)
}

/// The vertices of every piece of `input`, without its count
/// (`Polyhedron2Param_Vertices` alone: no chambers).
pub(crate) fn vertices_of_pieces(input: &Input) -> Result<Vec<RawPiece>, EhrhartError> {
    pieces(input, false)
}

fn pieces(input: &Input, count: bool) -> Result<Vec<RawPiece>, EhrhartError> {
    let names: Vec<CString> = input
        .params
        .iter()
        .map(|p| CString::new(p.as_str()).unwrap_or_else(|_| CString::from(c"?")))
        .collect();
    input
        .pieces
        .iter()
        .map(|piece| {
            count_piece(
                piece,
                input.context.as_deref(),
                input.params.len(),
                &names,
                count,
            )
        })
        .collect()
}

/// The row `1 >= 0` of the given width: keeps every matrix non-empty.
fn trivial_row(n_cols: usize) -> Vec<i64> {
    let mut row = vec![0i64; n_cols];
    row[0] = 1;
    row[n_cols - 1] = 1;
    row
}

fn count_piece(
    piece: &Piece,
    context: Option<&[Vec<i64>]>,
    n_params: usize,
    names: &[CString],
    count: bool,
) -> Result<RawPiece, EhrhartError> {
    ensure_bounded(piece)?;

    let n_cols = piece.n_vars + n_params + 2;
    let mut rows = piece.rows.clone();
    rows.push(trivial_row(n_cols));
    let p = ffi::OwnedPolyhedron::from_constraints(&ffi::OwnedMatrix::from_rows(&rows, n_cols)?)?;
    let c = match context {
        Some(ctx_rows) => {
            let mut ctx_rows = ctx_rows.to_vec();
            ctx_rows.push(trivial_row(n_params + 2));
            ffi::OwnedPolyhedron::from_constraints(&ffi::OwnedMatrix::from_rows(
                &ctx_rows,
                n_params + 2,
            )?)?
        }
        None => ffi::OwnedPolyhedron::universe(n_params)?,
    };

    let mut chambers = Vec::new();
    if !count {
        let vertices = ffi::OwnedParamPolyhedron::vertices_of(&p, &c)?.vertices();
        return Ok(RawPiece { chambers, vertices });
    }
    let en = ffi::OwnedEnumeration::enumerate(&p, &c, names)?;
    for node in en.nodes() {
        // SAFETY: node is a valid list node; its ValidityDomain is a list of
        // polyhedra over the parameters and EP an evalue tree.
        unsafe {
            let poly = QPoly::from_polylib(std::ptr::addr_of!((*node).EP), n_params)?;
            let mut d = (*node).ValidityDomain as *const ffi::Polyhedron;
            if d.is_null() {
                return Err(EhrhartError::PolyLib {
                    detail: "Polyhedron_Enumerate gave a chamber without domain".into(),
                });
            }
            while !d.is_null() {
                if (*d).Dimension as usize != n_params {
                    return Err(EhrhartError::PolyLib {
                        detail: format!(
                            "Polyhedron_Enumerate gave a domain of dimension {} for {n_params} parameters",
                            (*d).Dimension
                        ),
                    });
                }
                chambers.push((ffi::polyhedron_constraints(d), poly.clone()));
                d = (*d).next;
            }
        }
    }
    drop(en);

    let vertices = ffi::OwnedParamPolyhedron::vertices_of(&p, &c)?.vertices();
    Ok(RawPiece { chambers, vertices })
}

/// Refuses a piece whose points are unbounded for fixed parameters: the
/// recession cone of the piece restricted to its set dimensions,
/// `{ x : A x >= 0, E x = 0 }`, must be `{0}`.
fn ensure_bounded(piece: &Piece) -> Result<(), EhrhartError> {
    let n = piece.n_vars;
    if n == 0 {
        return Ok(());
    }
    let mut cone: Vec<Vec<i64>> = piece
        .rows
        .iter()
        .map(|r| {
            let mut row = r[..=n].to_vec();
            row.push(0);
            row
        })
        .collect();
    cone.push(trivial_row(n + 2));
    let p = ffi::OwnedPolyhedron::from_constraints(&ffi::OwnedMatrix::from_rows(&cone, n + 2)?)?;
    let (dim, rays) = p.rays();
    // A ray or line has a 0 in its last column; the origin (a vertex) has 1.
    if rays
        .iter()
        .any(|r| r[dim + 1] == 0 && r[1..=dim].iter().any(|&v| v != 0))
    {
        return Err(EhrhartError::Unsupported {
            reason: "the set is unbounded for fixed parameters".into(),
        });
    }
    Ok(())
}
