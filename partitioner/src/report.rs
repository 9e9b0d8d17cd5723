//! The human report of `clpart analyze`: per kernel the verdict, a legend of
//! the named quantities (NDRange sizes, offsets, the slice, scalar
//! arguments), per array its mode, status, whole-NDRange and per-slice ranges
//! as arithmetic over them, counts with their validity domains and write
//! verdict (the thesis's tables 4.3 and 4.4). It reads the range file's
//! expressions with `ranges_format::PwExpr` (the range-file reader).

use ranges_format::{ArrayStatus, Count, KernelRanges, ParamSource, Range};
use std::fmt::Write;

mod bound;
pub use bound::{bound_form, BoundForm};

/// Most chambers of one count term the report lists (the rest are counted;
/// `--json` and `--emit ranges` have them all).
const MAX_CHAMBERS: usize = 6;

/// What a [`ParamSource::StructMember`] parameter stands for, in words
/// (the report's legend and `clpart analyze`'s).
pub fn member_meaning(k: &KernelRanges, source: ParamSource) -> Option<String> {
    let ParamSource::StructMember {
        arg_index,
        offset,
        size,
        signed,
    } = source
    else {
        return None;
    };
    Some(format!(
        "the {}{}-bit member at byte {offset} of kernel argument {arg_index}{}",
        if signed { "" } else { "unsigned " },
        8 * size,
        match k.args.iter().find(|a| a.index == arg_index) {
            Some(a) => format!(" '{}' ({})", a.name, a.elem_type),
            None => String::new(),
        }
    ))
}

/// What a parameter stands for, in the legend.
fn meaning(k: &KernelRanges, p: &ranges_format::Param) -> String {
    let split = k.split_dim.unwrap_or(0);
    match p.source {
        ParamSource::ScalarArg { arg_index } => match k.args.iter().find(|a| a.index == arg_index) {
            Some(a) => format!("kernel argument {arg_index} '{}' ({})", a.name, a.elem_type),
            None => format!("kernel argument {arg_index}"),
        },
        ParamSource::StructMember { .. } => member_meaning(k, p.source).unwrap_or_default(),
        ParamSource::GlobalSize(d) => format!("global size of dimension {d}, get_global_size({d})"),
        ParamSource::LocalSize(d) => format!("work-group size of dimension {d}, get_local_size({d})"),
        ParamSource::GlobalOffset(d) => format!("global offset of dimension {d}, get_global_offset({d})"),
        ParamSource::NumGroups(d) => format!("number of work-groups of dimension {d}, get_num_groups({d})"),
        ParamSource::SliceLo => format!("the slice's first work-group along dimension {split}"),
        ParamSource::SliceHi => format!("one past the slice's last work-group along dimension {split}"),
        ParamSource::SliceLoItem => format!("the slice's first work-item along dimension {split}, relative to go{split} (its first work-group times ls{split})"),
        ParamSource::SliceHiItem => format!("one past the slice's last work-item along dimension {split}, relative to go{split}"),
    }
}

/// Cosmetics on a printed affine value: `-1 + a + b` as `a + b - 1`,
/// `w*0 + x` as `x`, `x + 0` as `x`, `(x)` as `x`. Only rearranges the
/// terms of sums whose parts hold no parentheses; the value is unchanged.
fn tidy(v: &str) -> String {
    // `-K + rest` with K digits and rest free of parentheses: `rest - K`
    fn sum(inner: &str) -> String {
        if let Some(rest) = inner.strip_prefix('-') {
            if let Some((k, tail)) = rest.split_once(" + ") {
                if !k.is_empty()
                    && k.bytes().all(|b| b.is_ascii_digit())
                    && !tail.contains(['(', ')'])
                {
                    return format!("{tail} - {k}");
                }
            }
        }
        inner.to_string()
    }
    fn is_name(w: &str) -> bool {
        !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    }
    // `NAME*0 + ` and ` + 0` terms
    let words: Vec<&str> = v.trim().split(' ').collect();
    let mut kept: Vec<String> = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        let core = w.trim_start_matches('(');
        let opens = &w[..w.len() - core.len()];
        if core.strip_suffix("*0").is_some_and(is_name) && words.get(i + 1) == Some(&"+") {
            // the next word keeps the parentheses this one opened
            if i + 2 < words.len() {
                kept.push(format!("{opens}{}", words[i + 2]));
                i += 3;
                continue;
            }
        }
        let core_end = w.trim_end_matches(')');
        if core_end == "0" && kept.last().is_some_and(|p| p == "+") && kept.len() >= 2 {
            kept.pop();
            let closes = &w[core_end.len()..];
            let last = kept.pop().unwrap();
            kept.push(format!("{last}{closes}"));
            i += 1;
            continue;
        }
        kept.push(w.to_string());
        i += 1;
    }
    let joined = kept.join(" ");
    // innermost parenthesized groups first
    let mut out = String::new();
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for (at, c) in joined.char_indices() {
        match c {
            '(' => {
                stack.push((out.len(), at));
                out.push(c);
            }
            ')' => match stack.pop() {
                Some((open, open_at)) => {
                    let t = sum(&out[open + 1..]);
                    let whole = open_at == 0 && at + 1 == joined.len();
                    out.truncate(open);
                    if whole || (!t.contains([' ', '*', '/', '+']) && !t.starts_with('-')) {
                        out.push_str(&t);
                    } else {
                        write!(out, "({t})").unwrap();
                    }
                }
                None => out.push(c),
            },
            _ => out.push(c),
        }
    }
    let s = sum(&out);
    if s.is_empty() {
        "0".into()
    } else {
        s
    }
}

/// An assumption's condition as people read it (`w > 0`), without isl's
/// parameter list and braces; a text clpart cannot read, as it is.
fn condition_text(condition: &str) -> String {
    match ranges_format::Condition::parse(condition) {
        Ok(c) => c.text(),
        Err(_) => condition.to_string(),
    }
}

/// `lo .. hi`, each bound as the whole report writes it, or as the short
/// one does ([`BoundForm::brief`]: bounds by case as the values they take).
fn range_text(r: &Range, brief: bool) -> String {
    let (lo, hi) = (bound_form(&r.lower, false), bound_form(&r.upper, true));
    if brief {
        format!("{} .. {}", lo.brief(), hi.brief())
    } else {
        format!("{lo} .. {hi}")
    }
}

/// `name[lo .. hi]`, or per dimension `name[lo1 .. hi1][lo0 .. hi0]`.
fn indexed(name: &str, dims: &[&Range]) -> String {
    indexed_as(name, dims, false)
}

/// [`indexed`] as the short report writes it.
fn indexed_brief(name: &str, dims: &[&Range]) -> String {
    indexed_as(name, dims, true)
}

fn indexed_as(name: &str, dims: &[&Range], brief: bool) -> String {
    let mut s = name.to_string();
    for r in dims {
        write!(s, "[{}]", range_text(r, brief)).unwrap();
    }
    s
}

fn count_lines(s: &mut String, label: &str, c: &Count) {
    for (i, t) in c.terms.iter().enumerate() {
        let term = if c.terms.len() > 1 {
            format!(" (term {} of {}, summed)", i + 1, c.terms.len())
        } else {
            String::new()
        };
        if t.is_empty() {
            writeln!(s, "    {label}{term}: 0").unwrap();
        }
        for ch in t.iter().take(MAX_CHAMBERS) {
            let dom = if ch.domain.trim().is_empty() {
                "always".to_string()
            } else {
                format!("if {}", ch.domain)
            };
            writeln!(s, "    {label}{term}: {}   {dom}", tidy(&ch.value)).unwrap();
        }
        if t.len() > MAX_CHAMBERS {
            writeln!(
                s,
                "    {label}{term}: ... and {} more cases (all in --json)",
                t.len() - MAX_CHAMBERS
            )
            .unwrap();
        }
    }
}

/// The vertex bounds of a slice's footprint, one line per vertex (at most
/// [`MAX_CHAMBERS`]): `(c1, c0) if domain`.
fn vertex_lines(s: &mut String, vs: &[ranges_format::Vertex]) {
    for v in vs.iter().take(MAX_CHAMBERS) {
        let coords: Vec<String> = v.coords.iter().map(|c| tidy(c)).collect();
        let dom = if v.domain.trim().is_empty() || v.domain.trim() == "true" {
            "always".to_string()
        } else {
            format!("if {}", v.domain)
        };
        writeln!(s, "    vertex, slice: ({})   {dom}", coords.join(", ")).unwrap();
    }
    if vs.len() > MAX_CHAMBERS {
        writeln!(
            s,
            "    vertex, slice: ... and {} more (all in --json)",
            vs.len() - MAX_CHAMBERS
        )
        .unwrap();
    }
}

/// The start of the note of a kernel that splits once its local size is
/// known (`session::Session::note_local_size_needed`), which makes its
/// headline "not splittable without its local size".
pub const LOCAL_SIZE_NOTE: &str = "splittable once the local size is known (pass --local)";

/// The human-readable report of one kernel: its verdict, a legend of the
/// named quantities, per array its ranges as arithmetic over them (per
/// delinearized dimension where the analysis has boxes), its counts as
/// quasi-polynomials with their validity domains, the vertex bounds of a
/// slice's footprint and its write verdict,
/// then refusals, launch-time assumptions and notes, with their locations.
pub fn human(k: &KernelRanges) -> String {
    let mut s = String::new();
    write!(s, "kernel {} (work_dim {}): ", k.name, k.work_dim).unwrap();
    match (k.splittable, k.split_dim) {
        (true, Some(d)) => writeln!(s, "splittable along dimension {d}").unwrap(),
        _ if k.diagnostics.iter().any(|d| d.starts_with(LOCAL_SIZE_NOTE)) => {
            writeln!(s, "not splittable without its local size (pass --local)").unwrap()
        }
        _ => writeln!(s, "not splittable").unwrap(),
    }
    if let Some(r) = &k.reason {
        for part in r.split("; ") {
            writeln!(s, "  refused: {part}").unwrap();
        }
    }
    if !k.params.is_empty() {
        writeln!(s, "  legend:").unwrap();
        let width = k
            .params
            .iter()
            .map(|p| p.name.len())
            .max()
            .unwrap_or(0)
            .max(7);
        for p in &k.params {
            writeln!(s, "    {:<width$}  {}", p.name, meaning(k, p)).unwrap();
        }
        writeln!(s, "    {:<width$}  inclusive index range; [i][j] is element i*stride + j of a delinearized array", "a .. b").unwrap();
        writeln!(
            s,
            "    {:<width$}  the least or greatest of these values, wherever the range is defined",
            "min/max"
        )
        .unwrap();
        writeln!(
            s,
            "    {:<width$}  a bound by case: x where c holds; the cases separated by ';'",
            "x if c"
        )
        .unwrap();
    }
    for a in &k.arrays {
        let size = if a.elem_size > 0 {
            format!(", {} bytes", a.elem_size)
        } else {
            String::new()
        };
        write!(
            s,
            "  array {} ({}{size}), mode {}: ",
            a.name,
            a.elem_type,
            a.mode.as_str()
        )
        .unwrap();
        if let ArrayStatus::Whole { reason } = &a.status {
            writeln!(s, "whole: {reason}{}", checked_note(a)).unwrap();
            continue;
        }
        writeln!(s, "bounded").unwrap();
        if let Some(r) = &a.total {
            writeln!(s, "    whole NDRange: {}", indexed(&a.name, &[r])).unwrap();
        }
        if let Some(r) = &a.slice {
            writeln!(s, "    slice:         {}", indexed(&a.name, &[r])).unwrap();
        }
        let boxes = a.boxes.as_ref();
        if let Some(b) = boxes {
            writeln!(
                s,
                "    strides:       [{}]",
                b.strides
                    .iter()
                    .map(|t| tidy(t))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
            .unwrap();
        }
        let per_dim = |which: Option<&Vec<Range>>, linear: &Option<Range>| -> Option<String> {
            match which {
                Some(dims) => Some(indexed(&a.name, &dims.iter().collect::<Vec<_>>())),
                None => linear.as_ref().map(|r| indexed(&a.name, &[r])),
            }
        };
        // the read and written parts, where they say more than the slice line
        let slice_text = a.slice.as_ref().map(|r| indexed(&a.name, &[r]));
        if a.mode != ranges_format::Mode::W {
            if let Some(t) = per_dim(boxes.and_then(|b| b.read.as_ref()), &a.read_slice)
                .filter(|t| Some(t) != slice_text.as_ref())
            {
                writeln!(s, "    slice reads:   {t}").unwrap();
            }
            // read parts: the union of boxes a slice actually reads
            for (p, part) in boxes
                .map_or(&[][..], |b| &b.read_parts[..])
                .iter()
                .enumerate()
            {
                writeln!(
                    s,
                    "    read part {p}:   {}",
                    indexed(&a.name, &part.iter().collect::<Vec<_>>())
                )
                .unwrap();
            }
        }
        if a.mode != ranges_format::Mode::R {
            if let Some(t) = per_dim(boxes.and_then(|b| b.write.as_ref()), &a.write_slice)
                .filter(|t| Some(t) != slice_text.as_ref())
            {
                writeln!(s, "    slice writes:  {t}").unwrap();
            }
        }
        if let Some(c) = &a.count_total {
            count_lines(&mut s, "elements, whole NDRange", c);
        }
        if let Some(c) = &a.count_slice {
            count_lines(&mut s, "elements, slice", c);
        }
        if let Some(vs) = &a.vertices_slice {
            vertex_lines(&mut s, vs);
        }
        if let Some(w) = &a.write {
            writeln!(
                s,
                "    writes: {}; {}{}",
                if w.disjoint_across_slices {
                    "disjoint across slices"
                } else if a.checked {
                    "may overlap across slices (merged with the run-time conflict check)"
                } else {
                    "may overlap across slices"
                },
                if w.fills_hull {
                    "fill the slice's write range"
                } else {
                    "do not fill the slice's write range (merged element-wise)"
                },
                if boxes.is_some_and(|b| b.write_exact) {
                    "; fill the write box"
                } else {
                    ""
                }
            )
            .unwrap();
            if let Some(c) = &w.written_count {
                count_lines(&mut s, "elements written, slice", c);
            }
        }
    }
    for a in &k.assumptions {
        writeln!(
            s,
            "  checked at launch: {}: holds if {}",
            a.description,
            condition_text(&a.condition)
        )
        .unwrap();
    }
    for d in &k.diagnostics {
        writeln!(s, "  note: {d}").unwrap();
    }
    s
}

/// The short report of `clpart analyze` (the whole one is [`human`]): per
/// kernel its verdict and what refuses the split, per array what one slice
/// reads and writes (per dimension where the array is delinearized) and
/// whether slices' writes are disjoint, the launch-time checks by what
/// they check, the notes, and a legend of the names those lines use.
pub fn brief(k: &KernelRanges) -> String {
    let mut s = String::new();
    write!(s, "kernel {} (work_dim {}): ", k.name, k.work_dim).unwrap();
    match (k.splittable, k.split_dim) {
        (true, Some(d)) => writeln!(s, "splits along dimension {d}").unwrap(),
        _ if k.diagnostics.iter().any(|d| d.starts_with(LOCAL_SIZE_NOTE)) => {
            writeln!(s, "does not split without its local size (pass --local)").unwrap()
        }
        _ => writeln!(s, "does not split").unwrap(),
    }
    let mut body = String::new();
    if let Some(r) = &k.reason {
        for part in r.split("; ") {
            writeln!(body, "  refused: {part}").unwrap();
        }
    }
    for a in &k.arrays {
        let head = format!(
            "  array {} ({}, {}): ",
            a.name,
            a.elem_type,
            a.mode.as_str()
        );
        if let ArrayStatus::Whole { reason } = &a.status {
            writeln!(body, "{head}whole: {reason}{}", checked_note(a)).unwrap();
            continue;
        }
        let boxes = a.boxes.as_ref();
        let per_dim = |which: Option<&Vec<Range>>, linear: &Option<Range>| -> Option<String> {
            match which {
                Some(dims) => Some(indexed_brief(&a.name, &dims.iter().collect::<Vec<_>>())),
                None => linear
                    .as_ref()
                    .or(a.slice.as_ref())
                    .map(|r| indexed_brief(&a.name, &[r])),
            }
        };
        let mut parts = Vec::new();
        if a.mode != ranges_format::Mode::W {
            if let Some(t) = per_dim(boxes.and_then(|b| b.read.as_ref()), &a.read_slice) {
                parts.push(format!("a slice reads {t}"));
            }
        }
        if a.mode != ranges_format::Mode::R {
            if let Some(t) = per_dim(boxes.and_then(|b| b.write.as_ref()), &a.write_slice) {
                let how = match &a.write {
                    Some(w) if w.disjoint_across_slices => ", disjoint across slices",
                    Some(_) if a.checked => {
                        ", may overlap across slices (merged with the run-time conflict check)"
                    }
                    Some(_) => ", may overlap across slices",
                    None => "",
                };
                parts.push(format!("writes {t}{how}"));
            }
        }
        let indent = " ".repeat(head.len());
        writeln!(body, "{head}{}", parts.join(&format!(";\n{indent}"))).unwrap();
    }
    for a in &k.assumptions {
        writeln!(body, "  checked at launch: {}", a.description).unwrap();
    }
    for d in &k.diagnostics {
        writeln!(body, "  note: {d}").unwrap();
    }
    // the names the lines above use, as the whole report's legend says them
    let used: Vec<&ranges_format::Param> = k
        .params
        .iter()
        .filter(|p| {
            body.match_indices(p.name.as_str()).any(|(i, _)| {
                let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                !word(body[..i].chars().next_back())
                    && !word(body[i + p.name.len()..].chars().next())
            })
        })
        .collect();
    s.push_str(&body);
    let one_of = body.contains(bound::ONE_OF);
    if !used.is_empty() || one_of {
        let mut width = used.iter().map(|p| p.name.len()).max().unwrap_or(0);
        let one_of_name = format!("{}..)", bound::ONE_OF);
        if one_of {
            width = width.max(one_of_name.len());
        }
        writeln!(s, "  where:").unwrap();
        for p in used {
            writeln!(s, "    {:<width$}  {}", p.name, meaning(k, p)).unwrap();
        }
        if one_of {
            writeln!(
                s,
                "    {one_of_name:<width$}  the bound takes one of these values, by case (the cases: --verbose)"
            )
            .unwrap();
        }
    }
    s
}

/// The thesis's tables at concrete values: per array the total range and, for
/// `n_slices` equal slices of work-groups along the split dimension, each
/// slice's range, hull length, distinct-element count and the waste ratio
/// (hull / count). `given` holds parameter values by name (NDRange sizes
/// `gs<d>`, `ls<d>`, scalar arguments); offsets default to 0 and `ng<d>` to
/// `gs<d> / ls<d>`. Returns an error naming the first missing parameter.
pub fn table_at(
    k: &KernelRanges,
    given: &std::collections::BTreeMap<String, i64>,
    n_slices: u32,
) -> Result<String, String> {
    let d = k.split_dim.unwrap_or(0);
    let get = |n: &str| given.get(n).copied();
    let ls = get(&format!("ls{d}"))
        .ok_or_else(|| format!("--at needs ls{d} (the work-group size of the split dimension)"))?;
    let gs = get(&format!("gs{d}")).ok_or_else(|| format!("--at needs gs{d}"))?;
    let n_groups = gs / ls.max(1);
    let names = k.param_names();
    let values = |lo: i64, hi: i64| -> Result<Vec<i64>, String> {
        k.params
            .iter()
            .map(|p| match p.source {
                ParamSource::SliceLo => Ok(lo),
                ParamSource::SliceHi => Ok(hi),
                ParamSource::SliceLoItem => Ok(lo * ls),
                ParamSource::SliceHiItem => Ok(hi * ls),
                ParamSource::GlobalOffset(_) => Ok(get(&p.name).unwrap_or(0)),
                ParamSource::NumGroups(dd) => Ok(get(&p.name).unwrap_or_else(|| {
                    get(&format!("gs{dd}")).unwrap_or(1)
                        / get(&format!("ls{dd}")).unwrap_or(1).max(1)
                })),
                _ => get(&p.name)
                    .ok_or_else(|| format!("--at needs a value for parameter '{}'", p.name)),
            })
            .collect()
    };
    let mut s = String::new();
    writeln!(
        s,
        "kernel {}: {} slices of {} work-groups along dimension {d}",
        k.name, n_slices, n_groups
    )
    .unwrap();
    writeln!(
        s,
        "  {:<12} {:<8} {:>24} {:>10} {:>10} {:>6}",
        "array", "slice", "range", "hull", "count", "waste"
    )
    .unwrap();
    let eval_range = |r: &Option<ranges_format::Range>, v: &[i64]| -> Option<(i64, i64)> {
        r.as_ref()?.bind(&names).ok()?.eval(v).ok()?
    };
    let eval_cnt = |c: &Option<ranges_format::Count>, v: &[i64]| -> Option<i64> {
        ranges_format::eval_count(c.as_ref()?, &names, v).ok()
    };
    for a in &k.arrays {
        if let ArrayStatus::Whole { .. } = a.status {
            writeln!(s, "  {:<12} {:<8} {:>24}", a.name, "all", "whole").unwrap();
            continue;
        }
        let mut rows: Vec<(String, Vec<i64>)> = vec![("total".into(), values(0, n_groups)?)];
        for i in 0..n_slices as i64 {
            let lo = n_groups * i / n_slices as i64;
            let hi = n_groups * (i + 1) / n_slices as i64;
            rows.push((format!("{}", i + 1), values(lo, hi)?));
        }
        for (label, v) in rows {
            let (r, c) = if label == "total" {
                (eval_range(&a.total, &v), eval_cnt(&a.count_total, &v))
            } else {
                (eval_range(&a.slice, &v), eval_cnt(&a.count_slice, &v))
            };
            let (range, hull) = match r {
                Some((l, u)) => (format!("[{l}, {u}]"), (u - l + 1).to_string()),
                None => ("-".into(), "0".into()),
            };
            let (count, waste) = match (c, r) {
                (Some(c), Some((l, u))) if c > 0 => (
                    c.to_string(),
                    format!("{:.2}", (u - l + 1) as f64 / c as f64),
                ),
                (Some(c), _) => (c.to_string(), "-".into()),
                (None, _) => ("-".into(), "-".into()),
            };
            writeln!(
                s,
                "  {:<12} {:<8} {:>24} {:>10} {:>10} {:>6}",
                a.name, label, range, hull, count, waste
            )
            .unwrap();
        }
    }
    Ok(s)
}

/// For an array merged with the run-time conflict check
/// ([`ranges_format::ArrayRanges::checked`]), what the report adds to its
/// whole-array line.
fn checked_note(a: &ranges_format::ArrayRanges) -> &'static str {
    if a.checked {
        "; written copies merged element by element with the run-time conflict check"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::tidy;

    #[test]
    fn tidy_keeps_values_and_reads_better() {
        assert_eq!(
            tidy("width*(go1 + sx_lo) + go0"),
            "width*(go1 + sx_lo) + go0"
        );
        assert_eq!(
            tidy("width*(-1 + go1 + sx_hi) + (-1 + gs0 + go0)"),
            "width*(go1 + sx_hi - 1) + (gs0 + go0 - 1)"
        );
        assert_eq!(tidy("width*0 + go0"), "go0");
        assert_eq!(tidy("width*0 + (-1 + width)"), "width - 1");
        assert_eq!(tidy("width*go1 + 0"), "width*go1");
        assert_eq!(tidy("(go0)"), "go0");
        assert_eq!(tidy("-1 + go0 + sx_hi"), "go0 + sx_hi - 1");
        assert_eq!(tidy("(-go0 + 4 * npoints)"), "-go0 + 4 * npoints");
        assert_eq!(tidy("a*(-go0)"), "a*(-go0)");
        assert_eq!(tidy("floor((w)/16)"), "floor(w/16)");
        assert_eq!(tidy("0"), "0");
        assert_eq!(tidy("(-1 + a) + (b + c)"), "(a - 1) + (b + c)");
        assert_eq!(tidy("(a + (-1 + b))"), "a + (b - 1)");
        assert_eq!(tidy("width*0 + 0"), "0");
    }
}
