//! Golden human reports of the corpus
//! (`kernels/golden/<kernel>.report.txt`), made by
//! `partitioner::report::human` from the golden range files
//! (`kernels/golden/<kernel>.ranges.ron`, themselves checked against the
//! analysis by `tests/tests/ranges_golden.rs`): text in, text out, with no
//! analysis and no count that depends on the machine's load. Re-blessed
//! with `CLPART_BLESS=1`; a mismatch prints a diff and the bless hint.

use clpart_tests::{check_golden, corpus, workspace_root};
use ranges_format::RangeFile;

#[test]
fn human_reports_match_golden_files() {
    let mut failures = Vec::new();
    let mut n = 0;
    for k in corpus() {
        let ranges = workspace_root().join(format!("kernels/golden/{}.ranges.ron", k.name));
        let rf = RangeFile::read(&ranges).unwrap_or_else(|e| panic!("{}: {e}", ranges.display()));
        let text: String = rf.kernels.iter().map(partitioner::report::human).collect();
        if let Err(e) = check_golden(&format!("kernels/golden/{}.report.txt", k.name), &text) {
            failures.push(e);
        }
        n += 1;
    }
    assert!(n > 20, "the corpus");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The report speaks in named quantities, with a legend, per dimension for
/// delinearized arrays, counts with their domains, refusals with locations.
#[test]
fn reports_name_their_quantities() {
    let read = |name: &str| {
        let rf =
            RangeFile::read(workspace_root().join(format!("kernels/golden/{name}.ranges.ron")))
                .unwrap();
        partitioner::report::human(&rf.kernels[0])
    };
    let m = read("matmul");
    for needle in [
        "legend:",
        "sx_lo ",
        "width ",
        "kernel argument",
        "c[go1 + sx_lo .. go1 + sx_hi - 1][go0 .. gs0 + go0 - 1]",
        "elements, slice: ",
        "   if ",
        "writes: disjoint across slices",
    ] {
        assert!(m.contains(needle), "'{needle}' missing from:\n{m}");
    }
    let s = read("bitonic_merge");
    assert!(
        s.contains("not splittable")
            && s.contains("refused: ")
            && s.contains("(kernels/linearized/bitonic_merge.cl:15:13)"),
        "{s}"
    );
}

/// Histogram reads `data[i]` for the work-items `i < n`: the upper bound
/// is the lesser of the NDRange's last work-item and `n - 1`, and the report
/// says `min`, never `max` (at gs0=1024, n=100 it is 99).
#[test]
fn histogram_states_its_upper_bound_as_a_min() {
    let rf = RangeFile::read(workspace_root().join("kernels/golden/histogram.ranges.ron")).unwrap();
    let text = partitioner::report::human(&rf.kernels[0]);
    assert!(
        text.contains("whole NDRange: data[go0 .. min(gs0 + go0 - 1, n - 1)]"),
        "{text}"
    );
    assert!(!text.contains("max("), "{text}");
}

/// Every bound of every golden range file, as the report writes it, has
/// the value of the range file's bound at sample points: a `min(..)` or
/// `max(..)` evaluates to the bound's value wherever it is defined, and so
/// does the value of the case whose condition holds.
#[test]
fn printed_min_max_and_cases_have_the_bounds_values() {
    use partitioner::report::{bound_form, BoundForm};
    use ranges_format::{Condition, PwExpr, Range};
    // a small linear congruential generator: the same points every run
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |lo: i64, hi: i64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        lo + ((seed >> 33) % (hi - lo + 1) as u64) as i64
    };
    // parsed and bound once per text: the check evaluates many points
    let bind = |text: &str, names: &[&str]| {
        PwExpr::parse(text)
            .and_then(|e| e.bind(names))
            .unwrap_or_else(|e| panic!("'{text}': {e}"))
    };
    let eval = |e: &ranges_format::BoundExpr, values: &[i64]| -> Option<i64> {
        e.eval(values).unwrap_or_else(|err| panic!("{e:?}: {err}"))
    };
    let (mut n_extremes, mut n_cases, mut n_points) = (0, 0, 0);
    let mut failures = Vec::new();
    for k in corpus() {
        let path = workspace_root().join(format!("kernels/golden/{}.ranges.ron", k.name));
        let rf = RangeFile::read(&path).unwrap();
        for kr in &rf.kernels {
            let mut ranges: Vec<&Range> = Vec::new();
            for a in &kr.arrays {
                ranges.extend(
                    [&a.total, &a.slice, &a.read_slice, &a.write_slice]
                        .into_iter()
                        .flatten(),
                );
                if let Some(b) = &a.boxes {
                    ranges.extend(b.read.iter().flatten());
                    ranges.extend(b.write.iter().flatten());
                    ranges.extend(b.read_parts.iter().flatten());
                }
            }
            for (text, upper) in ranges
                .iter()
                .flat_map(|r| [(&r.lower, false), (&r.upper, true)])
            {
                let form = bound_form(text, upper);
                match &form {
                    BoundForm::Min(_) | BoundForm::Max(_) => n_extremes += 1,
                    BoundForm::Cases(_) => n_cases += 1,
                    _ => continue,
                }
                let e = PwExpr::parse(text).unwrap();
                let names: Vec<&str> = e.params().iter().map(String::as_str).collect();
                let bound = bind(text, &names);
                let (values_of, conditions): (Vec<_>, Vec<_>) = match &form {
                    BoundForm::Min(vs) | BoundForm::Max(vs) => {
                        (vs.iter().map(|v| bind(v, &names)).collect(), Vec::new())
                    }
                    BoundForm::Cases(cs) => cs
                        .iter()
                        .map(|(v, c)| {
                            let c = (!c.is_empty()).then(|| {
                                Condition::parse(c)
                                    .and_then(|c| c.bind(&names))
                                    .unwrap_or_else(|err| panic!("'{c}': {err}"))
                            });
                            (bind(v, &names), c)
                        })
                        .unzip(),
                    _ => unreachable!(),
                };
                for _ in 0..200 {
                    let values: Vec<i64> = names.iter().map(|_| next(-3, 70)).collect();
                    let Some(want) = eval(&bound, &values) else {
                        continue;
                    };
                    n_points += 1;
                    let each = values_of.iter().filter_map(|v| eval(v, &values));
                    let got = match &form {
                        BoundForm::Min(_) => each.min(),
                        BoundForm::Max(_) => each.max(),
                        _ => values_of
                            .iter()
                            .zip(&conditions)
                            .find(|(_, c)| c.as_ref().is_none_or(|c| c.eval(&values).unwrap()))
                            .and_then(|(v, _)| eval(v, &values)),
                    };
                    if got != Some(want) {
                        let at: Vec<String> = names
                            .iter()
                            .zip(&values)
                            .map(|(n, v)| format!("{n}={v}"))
                            .collect();
                        failures.push(format!(
                            "{}: '{form}' is {got:?} at {} where the bound '{text}' is {want}",
                            k.name,
                            at.join(",")
                        ));
                        break;
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        n_extremes > 20 && n_points > 1000,
        "{n_extremes} min/max bounds, {n_points} points"
    );
    eprintln!("{n_extremes} min/max bounds, {n_cases} by cases, {n_points} points checked");
}
