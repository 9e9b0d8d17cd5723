//! The human report of `clpart analyze`: per kernel the verdict, per array its
//! mode, status, total and per-slice ranges, counts and write verdict (the
//! thesis's tables 4.3 and 4.4).

use ranges_format::{ArrayStatus, KernelRanges, ParamSource};
use std::fmt::Write;


/// The human-readable report of one kernel.
pub fn human(k: &KernelRanges) -> String {
    let mut s = String::new();
    writeln!(s, "kernel {} (work_dim {})", k.name, k.work_dim).unwrap();
    match (&k.reason, k.split_dim) {
        (None, Some(d)) => writeln!(s, "  splittable: yes, along dimension {d}").unwrap(),
        (Some(r), _) => writeln!(s, "  splittable: no: {r}").unwrap(),
        (None, None) => writeln!(s, "  splittable: no").unwrap(),
    }
    let slice: Vec<String> = k
        .params
        .iter()
        .filter_map(|p| match p.source {
            ParamSource::SliceLoItem => Some(format!("{} = first work-item of the slice", p.name)),
            ParamSource::SliceHiItem => Some(format!("{} = one past its last", p.name)),
            _ => None,
        })
        .collect();
    if !slice.is_empty() {
        writeln!(s, "  slice: {} (along dimension {}, relative to the global offset)", slice.join(", "), k.split_dim.unwrap_or(0)).unwrap();
    }
    for a in &k.arrays {
        writeln!(s, "  array {} ({} {}), mode {}", a.name, a.elem_type, if a.elem_size > 0 { format!("{} bytes", a.elem_size) } else { String::new() }, a.mode.as_str()).unwrap();
        match &a.status {
            ArrayStatus::Bounded => writeln!(s, "    status: bounded").unwrap(),
            ArrayStatus::Whole { reason } => {
                writeln!(s, "    status: whole: {reason}").unwrap();
                continue;
            }
        }
        if let Some(r) = &a.total {
            writeln!(s, "    total range: [{}, {}]", r.lower, r.upper).unwrap();
        }
        if let Some(r) = &a.slice {
            writeln!(s, "    slice range: [{}, {}]", r.lower, r.upper).unwrap();
        }
        if let Some(c) = &a.count_total {
            for (i, t) in c.terms.iter().enumerate() {
                for ch in t {
                    writeln!(s, "    count total{}: {} if {}", if c.terms.len() > 1 { format!(" (term {i})") } else { String::new() }, ch.value, ch.domain).unwrap();
                }
            }
        }
        if let Some(c) = &a.count_slice {
            for (i, t) in c.terms.iter().enumerate() {
                for ch in t {
                    writeln!(s, "    count slice{}: {} if {}", if c.terms.len() > 1 { format!(" (term {i})") } else { String::new() }, ch.value, ch.domain).unwrap();
                }
            }
        }
        if let Some(w) = &a.write {
            writeln!(
                s,
                "    writes: {}, {}",
                if w.disjoint_across_slices { "disjoint across slices" } else { "may overlap across slices" },
                if w.fills_hull { "fill the slice range" } else { "do not fill the slice range (merged element-wise)" }
            )
            .unwrap();
        }
    }
    for a in &k.assumptions {
        writeln!(s, "  assumption checked at launch: {} ({})", a.description, a.condition).unwrap();
    }
    for d in &k.diagnostics {
        writeln!(s, "  note: {d}").unwrap();
    }
    s
}

/// The thesis's tables at concrete values: per array the total range and, for
/// `n_slices` equal slices of work-groups along the split dimension, each
/// slice's range, hull length, distinct-element count and the waste ratio
/// (hull / count). `given` holds parameter values by name (NDRange sizes
/// `gs<d>`, `ls<d>`, scalar arguments); offsets default to 0 and `ng<d>` to
/// `gs<d> / ls<d>`. Returns an error naming the first missing parameter.
pub fn table_at(k: &KernelRanges, given: &std::collections::BTreeMap<String, i64>, n_slices: u32) -> Result<String, String> {
    let d = k.split_dim.unwrap_or(0);
    let get = |n: &str| given.get(n).copied();
    let ls = get(&format!("ls{d}")).ok_or_else(|| format!("--at needs ls{d} (the work-group size of the split dimension)"))?;
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
                    get(&format!("gs{dd}")).unwrap_or(1) / get(&format!("ls{dd}")).unwrap_or(1).max(1)
                })),
                _ => get(&p.name).ok_or_else(|| format!("--at needs a value for parameter '{}'", p.name)),
            })
            .collect()
    };
    let mut s = String::new();
    writeln!(s, "kernel {}: {} slices of {} work-groups along dimension {d}", k.name, n_slices, n_groups).unwrap();
    writeln!(s, "  {:<12} {:<8} {:>24} {:>10} {:>10} {:>6}", "array", "slice", "range", "hull", "count", "waste").unwrap();
    let eval_range = |r: &Option<ranges_format::Range>, v: &[i64]| -> Option<(i64, i64)> { r.as_ref()?.bind(&names).ok()?.eval(v).ok()? };
    let eval_cnt = |c: &Option<ranges_format::Count>, v: &[i64]| -> Option<i64> { ranges_format::eval_count(c.as_ref()?, &names, v).ok() };
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
            let (r, c) = if label == "total" { (eval_range(&a.total, &v), eval_cnt(&a.count_total, &v)) } else { (eval_range(&a.slice, &v), eval_cnt(&a.count_slice, &v)) };
            let (range, hull) = match r {
                Some((l, u)) => (format!("[{l}, {u}]"), (u - l + 1).to_string()),
                None => ("-".into(), "0".into()),
            };
            let (count, waste) = match (c, r) {
                (Some(c), Some((l, u))) if c > 0 => (c.to_string(), format!("{:.2}", (u - l + 1) as f64 / c as f64)),
                (Some(c), _) => (c.to_string(), "-".into()),
                (None, _) => ("-".into(), "-".into()),
            };
            writeln!(s, "  {:<12} {:<8} {:>24} {:>10} {:>10} {:>6}", a.name, label, range, hull, count, waste).unwrap();
        }
    }
    Ok(s)
}
