//! The box check of a guarded array ([`BoxSpec`]): the extents its
//! per-work-group test proves subscripts against ([`extent_names`]) and its
//! extra arguments ([`box_args`]).

use ranges_format::ExtraArgMeaning;

/// The box check of one guarded array.
#[derive(Clone, Debug)]
pub(super) struct BoxSpec {
    /// Per checked dimension `k = 1..dims`, the name whose value is its
    /// extent, when the strides' texts nest (see [`extent_names`]): what the
    /// per-work-group test proves subscripts against.
    pub(super) extent_names: Option<Vec<String>>,
    /// Delinearized dimensions (at least 2); dimensions `1..dims` are checked.
    pub(super) dims: usize,
    /// Read parts: a read must lie in one of them too.
    pub(super) parts: usize,
}

/// The extent of each dimension `k >= 1` as one name, from stride texts
/// that are products of names (`["nx*ny", "nx", "1"]`: `["ny", "nx"]`), or
/// as an integer literal from literal strides (`["1000", "1"]`:
/// `["1000"]`); `None` when they do not nest that way.
pub(super) fn extent_names(strides: &[String]) -> Option<Vec<String>> {
    // literal strides (`["1000", "1"]`): the extents are their ratios
    let literal: Option<Vec<i64>> = strides.iter().map(|s| s.trim().parse().ok()).collect();
    if let Some(v) = literal {
        return (1..v.len())
            .map(|k| {
                (v[k] >= 1 && v[k - 1] >= v[k] && v[k - 1] % v[k] == 0)
                    .then(|| (v[k - 1] / v[k]).to_string())
            })
            .collect();
    }
    let factors = |s: &str| -> Option<Vec<String>> {
        if s.trim() == "1" {
            return Some(Vec::new());
        }
        let mut f: Vec<String> = s.split('*').map(|x| x.trim().to_string()).collect();
        if f.iter().any(|x| {
            x.is_empty()
                || !x.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                || x.starts_with(|c: char| c.is_ascii_digit())
        }) {
            return None;
        }
        f.sort();
        Some(f)
    };
    let mut out = Vec::new();
    for k in 1..strides.len() {
        let (mut outer, inner) = (factors(&strides[k - 1])?, factors(&strides[k])?);
        for x in &inner {
            let at = outer.iter().position(|y| y == x)?;
            outer.remove(at);
        }
        if outer.len() != 1 {
            return None;
        }
        out.push(outer.remove(0));
    }
    Some(out)
}

/// The box-check arguments of array `n` (argument `idx`) with box check
/// `b`, in order: per dimension `k >= 1`, its stride, extent, read bounds
/// and write bounds; then per read part, per dimension `k >= 0`, its lower
/// and upper bound (dimension 0: the part's linear window).
pub(super) fn box_args(n: &str, b: &BoxSpec, idx: u32) -> Vec<(String, ExtraArgMeaning)> {
    let dims = b.dims;
    let mut out = Vec::new();
    for k in 1..dims {
        let dim = k as u32;
        let a = idx;
        out.push((
            format!("__clpart_bs{k}_{n}"),
            ExtraArgMeaning::BoxStride { arg_index: a, dim },
        ));
        out.push((
            format!("__clpart_be{k}_{n}"),
            ExtraArgMeaning::BoxExtent { arg_index: a, dim },
        ));
        out.push((
            format!("__clpart_brl{k}_{n}"),
            ExtraArgMeaning::BoxReadLo { arg_index: a, dim },
        ));
        out.push((
            format!("__clpart_brh{k}_{n}"),
            ExtraArgMeaning::BoxReadHi { arg_index: a, dim },
        ));
        out.push((
            format!("__clpart_bwl{k}_{n}"),
            ExtraArgMeaning::BoxWriteLo { arg_index: a, dim },
        ));
        out.push((
            format!("__clpart_bwh{k}_{n}"),
            ExtraArgMeaning::BoxWriteHi { arg_index: a, dim },
        ));
    }
    for p in 0..b.parts {
        let part = p as u32;
        for k in 0..dims {
            let dim = k as u32;
            out.push((
                format!("__clpart_ppl{p}_{k}_{n}"),
                ExtraArgMeaning::BoxPartLo {
                    arg_index: idx,
                    part,
                    dim,
                },
            ));
            out.push((
                format!("__clpart_pph{p}_{k}_{n}"),
                ExtraArgMeaning::BoxPartHi {
                    arg_index: idx,
                    part,
                    dim,
                },
            ));
        }
    }
    out
}
