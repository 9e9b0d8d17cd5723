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
