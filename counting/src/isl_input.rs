//! Reads the input set with isl and turns it into PolyLib constraint rows.

use isl_rs::{BasicSet, Context, DimType, LibISLError, Mat, Options, Set};

use super::{EhrhartError, MAX_DIMENSIONS, MAX_PIECES};

/// Largest constraint coefficient handed to PolyLib (64-bit arithmetic;
/// leave head room for its products).
const MAX_COEFFICIENT: i64 = 1 << 31;

/// isl operations allowed per call (isl's own operation counter).
const MAX_ISL_OPERATIONS: u64 = 2_000_000;

/// The counting problem, ready for PolyLib.
pub(crate) struct Input {
    /// Parameter names, in column order.
    pub params: Vec<String>,
    /// Disjoint convex pieces whose counts add up to the set's.
    pub pieces: Vec<Piece>,
    /// Context rows `[eq/ineq, param coefs..., constant]`; `None`: universe.
    pub context: Option<Vec<Vec<i64>>>,
}

/// One convex piece: rows `[eq(0)/ineq(1), var coefs..., param coefs..., constant]`.
pub(crate) struct Piece {
    pub n_vars: usize,
    pub rows: Vec<Vec<i64>>,
}

fn isl_err(during: &'static str) -> impl Fn(LibISLError) -> EhrhartError {
    move |e| EhrhartError::Isl {
        during,
        message: e.to_string(),
    }
}

fn parse(ctx: &Context, text: &str) -> Result<Set, EhrhartError> {
    let parse_error = |message: String| EhrhartError::Parse {
        text: text.to_string(),
        message,
    };
    if text.contains('\0') {
        return Err(parse_error("contains a nul byte".into()));
    }
    let set = Set::read_from_str(ctx, text).map_err(|e| parse_error(e.to_string()))?;
    if set.ptr == 0 {
        return Err(parse_error("isl could not read it".into()));
    }
    Ok(set)
}

/// Parses `set_text` (and the optional params-only `context_text`), intersects
/// them, makes every existential explicit, splits the set into disjoint basic
/// sets and lifts their integer divisions into extra set dimensions (a 1-to-1
/// change of space, since each division is a function of the other variables).
pub(crate) fn read(set_text: &str, context_text: Option<&str>) -> Result<Input, EhrhartError> {
    read_within(set_text, context_text, MAX_DIMENSIONS)
}

/// [`read`] with another limit on set dimensions (integer divisions
/// included) plus parameters than [`MAX_DIMENSIONS`] (the vertices alone,
/// without a count, stay cheap well beyond it).
pub(crate) fn read_within(
    set_text: &str,
    context_text: Option<&str>,
    max_dimensions: usize,
) -> Result<Input, EhrhartError> {
    let ctx = Context::alloc();
    // Errors come back as values; isl must not print them.
    let _ = Options::set_on_error(&ctx, 1 /* ISL_ON_ERROR_CONTINUE */);
    ctx.set_max_operations(MAX_ISL_OPERATIONS);
    // Every isl object lives inside read_in, so all are freed before ctx.
    read_in(&ctx, set_text, context_text, max_dimensions)
}

fn read_in(
    ctx: &Context,
    set_text: &str,
    context_text: Option<&str>,
    max_dimensions: usize,
) -> Result<Input, EhrhartError> {
    let mut set = parse(ctx, set_text)?;
    if set.is_params().map_err(isl_err("reading the set"))? {
        return Err(EhrhartError::Parse {
            text: set_text.to_string(),
            message: "expected a set with set dimensions, got a parameter set".into(),
        });
    }
    let mut context_rows = None;
    if let Some(ct) = context_text {
        let context = parse(ctx, ct)?;
        if !context
            .is_params()
            .map_err(isl_err("reading the context"))?
        {
            return Err(EhrhartError::Parse {
                text: ct.to_string(),
                message: "the context must be a parameter set such as \"[N] -> { : N >= 1 }\""
                    .into(),
            });
        }
        set = set
            .intersect_params(context.copy().map_err(isl_err("copying the context"))?)
            .map_err(isl_err("intersecting the set with the context"))?;
        let space = set
            .get_space()
            .map_err(isl_err("reading the set's space"))?;
        let context = context
            .align_params(space)
            .map_err(isl_err("aligning the context"))?;
        // PolyLib wants one polyhedron: the polyhedral hull contains the context,
        // and the set itself has been intersected with the exact context.
        let hull = context
            .polyhedral_hull()
            .map_err(isl_err("taking the context's hull"))?;
        let rows = basic_set_rows(&hull, 0)?;
        context_rows = Some(rows);
    }

    let n_params = set
        .dim(DimType::Param)
        .map_err(isl_err("reading the parameters"))? as usize;
    let mut params = Vec::with_capacity(n_params);
    for k in 0..n_params as u32 {
        let named = set
            .has_dim_name(DimType::Param, k)
            .map_err(isl_err("reading the parameters"))?;
        params.push(if named {
            set.get_dim_name(DimType::Param, k)
                .map_err(isl_err("reading the parameters"))?
                .to_string()
        } else {
            format!("p{k}")
        });
    }
    let n_dims = set
        .dim(DimType::Set)
        .map_err(isl_err("reading the set dimensions"))? as usize;
    if n_dims + n_params > max_dimensions {
        return Err(EhrhartError::TooLarge {
            what: format!("{n_dims} set dimensions plus {n_params} parameters"),
            limit: max_dimensions,
        });
    }

    let set = set
        .compute_divs()
        .map_err(isl_err("making the existentials explicit"))?
        .make_disjoint()
        .map_err(isl_err("splitting the set into disjoint pieces"))?;
    let n_pieces = set
        .n_basic_set()
        .map_err(isl_err("counting the pieces"))?
        .max(0) as usize;
    if n_pieces > MAX_PIECES {
        return Err(EhrhartError::TooLarge {
            what: format!("{n_pieces} disjoint pieces"),
            limit: MAX_PIECES,
        });
    }
    let list = set
        .get_basic_set_list()
        .map_err(isl_err("listing the pieces"))?;
    let mut pieces = Vec::new();
    for k in 0..n_pieces as i32 {
        let bset = list.get_at(k).map_err(isl_err("listing the pieces"))?;
        if bset
            .is_empty()
            .map_err(isl_err("testing a piece for emptiness"))?
        {
            continue;
        }
        let n_div = bset.dim(DimType::Div).map_err(isl_err("reading a piece"))? as usize;
        let bset = if n_div > 0 {
            for d in 0..n_div as i32 {
                let div = bset
                    .get_div(d)
                    .map_err(isl_err("reading an integer division"))?;
                if div
                    .is_nan()
                    .map_err(isl_err("reading an integer division"))?
                {
                    return Err(EhrhartError::Unsupported {
                        reason: "an existentially quantified variable has no explicit definition"
                            .into(),
                    });
                }
            }
            bset.lift()
                .map_err(isl_err("lifting the integer divisions"))?
        } else {
            bset
        };
        let n_vars = bset.dim(DimType::Set).map_err(isl_err("reading a piece"))? as usize;
        if n_vars + n_params > max_dimensions {
            return Err(EhrhartError::TooLarge {
                what: format!(
                    "{n_dims} set dimensions plus {} integer divisions plus {n_params} parameters",
                    n_vars - n_dims
                ),
                limit: max_dimensions,
            });
        }
        let rows = basic_set_rows(&bset, n_vars)?;
        pieces.push(Piece { n_vars, rows });
    }
    Ok(Input {
        params,
        pieces,
        context: context_rows,
    })
}

/// Rows `[eq(0)/ineq(1), set coefs..., param coefs..., constant]` of a basic
/// set without divisions that has `n_vars` set dimensions.
fn basic_set_rows(bset: &BasicSet, n_vars: usize) -> Result<Vec<Vec<i64>>, EhrhartError> {
    let n_div = bset
        .dim(DimType::Div)
        .map_err(isl_err("reading constraints"))?;
    if n_div != 0 {
        return Err(EhrhartError::Unsupported {
            reason: "the context has existentially quantified variables".into(),
        });
    }
    let n_set = bset
        .dim(DimType::Set)
        .map_err(isl_err("reading constraints"))? as usize;
    debug_assert_eq!(n_set, n_vars);
    let eq = bset
        .equalities_matrix(DimType::Set, DimType::Param, DimType::Cst, DimType::Div)
        .map_err(isl_err("reading equalities"))?;
    let ineq = bset
        .inequalities_matrix(DimType::Set, DimType::Param, DimType::Cst, DimType::Div)
        .map_err(isl_err("reading inequalities"))?;
    let mut rows = Vec::new();
    push_rows(&eq, 0, &mut rows)?;
    push_rows(&ineq, 1, &mut rows)?;
    Ok(rows)
}

fn push_rows(m: &Mat, flag: i64, rows: &mut Vec<Vec<i64>>) -> Result<(), EhrhartError> {
    let n_rows = m.rows().map_err(isl_err("reading constraints"))?;
    let n_cols = m.cols().map_err(isl_err("reading constraints"))?;
    for r in 0..n_rows {
        let mut row = Vec::with_capacity(n_cols as usize + 1);
        row.push(flag);
        for c in 0..n_cols {
            let v = m
                .get_element_val(r, c)
                .map_err(isl_err("reading constraints"))?;
            let too_big = v
                .cmp_si(MAX_COEFFICIENT)
                .map_err(isl_err("reading constraints"))?
                > 0
                || v.cmp_si(-MAX_COEFFICIENT)
                    .map_err(isl_err("reading constraints"))?
                    < 0;
            if too_big {
                return Err(EhrhartError::TooLarge {
                    what: "constraint coefficients".into(),
                    limit: MAX_COEFFICIENT as usize,
                });
            }
            row.push(v.get_num_si().map_err(isl_err("reading constraints"))?);
        }
        rows.push(row);
    }
    Ok(())
}
