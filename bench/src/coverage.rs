//! Item 10: the corpus split at its launches' values. Every
//! corpus kernel is launched at every one of its `@run`s, 50/50 on two
//! devices, as `clpart run` launches it (analyzed for that launch: sizes
//! and integer scalars, launch-time assumptions checked, re-analyzed
//! specialized where one fails); what counts is whether the launch ran
//! split and, where not, the launcher's reason. Kernels whose header says
//! `@expect not-splittable` are the corpus's right refusals (data-dependent
//! or atomic writes, every work-item writing one element, ...); every other
//! kernel should split at every launch.

use anyhow::{Context, Result};
use launcher::Runtime;
use serde::{Deserialize, Serialize};

use crate::common::{launch_halves, spawn_worker, LaunchSpec};
use crate::run::{Report, Settings};
use crate::table::{detail, Row};

/// One launch of a corpus kernel to try.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Case {
    pub spec: LaunchSpec,
    /// Which `@run` of the kernel (0-based).
    pub run: usize,
    /// The kernel's `@expect`: splittable or not.
    pub expect_splittable: bool,
}

/// What one launch did.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Outcome {
    pub kernel: String,
    pub run: usize,
    pub ndrange: String,
    pub expect_splittable: bool,
    pub split: bool,
    /// Why it ran unsplit, when it did.
    pub reason: Option<String>,
}

/// The worker (run with two devices): one 50/50 launch per case.
pub fn worker(cases: &[Case]) -> Result<Vec<Outcome>> {
    let rt = Runtime::new()?;
    let mut out = Vec::with_capacity(cases.len());
    for c in cases {
        let (_, _, rep) = launch_halves(&rt, &c.spec)
            .with_context(|| format!("@run {} of {}", c.run + 1, c.spec.kernel))?;
        out.push(Outcome {
            kernel: c.spec.kernel.clone(),
            run: c.run,
            ndrange: c.spec.ndrange_text(),
            expect_splittable: c.expect_splittable,
            split: rep.split,
            reason: rep.reason.clone(),
        });
    }
    Ok(out)
}

/// Per kernel (in the order of `outcomes`): its name, whether its header
/// expects it to split, and how many of its launches ran split of how many.
pub fn per_kernel(outcomes: &[Outcome]) -> Vec<(String, bool, usize, usize)> {
    let mut out: Vec<(String, bool, usize, usize)> = Vec::new();
    for o in outcomes {
        match out.iter_mut().find(|(k, ..)| *k == o.kernel) {
            Some((_, _, split, n)) => {
                *split += usize::from(o.split);
                *n += 1;
            }
            None => out.push((
                o.kernel.clone(),
                o.expect_splittable,
                usize::from(o.split),
                1,
            )),
        }
    }
    out
}

/// Item 10, the corpus split at its launches' values: measures it and adds
/// its rows, detail table and JSON to `out`.
pub(crate) fn report(s: &Settings, out: &mut Report) -> Result<()> {
    let Settings { root, corpus, .. } = s;
    let Report {
        rows,
        details,
        results,
    } = out;
    let cases: Vec<Case> = corpus
        .iter()
        .flat_map(|k| {
            (0..k.runs.len()).map(move |run| Case {
                spec: LaunchSpec::corpus(k, run),
                run,
                expect_splittable: k.expect.splittable,
            })
        })
        .collect();
    eprintln!(
        "== 10. the corpus split at its launches' values ({} kernels, {} launches, 50/50)",
        corpus.len(),
        cases.len()
    );
    // In a few workers: the cases (sources included) go on a command line.
    let mut o: Vec<Outcome> = Vec::new();
    for chunk in cases.chunks(40) {
        let part: Vec<Outcome> = spawn_worker(
            "coverage",
            &chunk,
            &[("POCL_DEVICES", "pthread pthread")],
            root,
        )?;
        o.extend(part);
    }
    let kernels = per_kernel(&o);
    let all_split = |k: &(String, bool, usize, usize)| k.2 == k.3;
    let expected: Vec<_> = kernels.iter().filter(|k| k.1).collect();
    let refused: Vec<_> = kernels.iter().filter(|k| !k.1).collect();
    let expected_split = expected.iter().filter(|k| all_split(k)).count();
    rows.push(Row::target(
            10,
            format!(
                "corpus kernels not marked `@expect not-splittable` split at every @run's launch ({} launches)",
                o.iter().filter(|x| x.expect_splittable).count()
            ),
            format!("{expected_split} of {}", expected.len()),
            "all",
            expected_split == expected.len(),
        ));
    rows.push(Row::info(
        10,
        "corpus kernels split at every @run's launch, of all (the rest: the corpus's refusals)",
        format!(
            "{} of {} ({:.0} %)",
            kernels.iter().filter(|k| all_split(k)).count(),
            kernels.len(),
            100.0 * kernels.iter().filter(|k| all_split(k)).count() as f64
                / kernels.len().max(1) as f64
        ),
    ));
    rows.push(Row::info(
        10,
        "launches split, of all corpus launches",
        format!("{} of {}", o.iter().filter(|x| x.split).count(), o.len()),
    ));
    let cells: Vec<Vec<String>> = o
        .iter()
        .filter(|x| !x.split)
        .map(|x| {
            vec![
                x.kernel.clone(),
                format!("{}", x.run + 1),
                x.ndrange.clone(),
                if x.expect_splittable {
                    "splittable"
                } else {
                    "not-splittable"
                }
                .into(),
                x.reason.clone().unwrap_or_default(),
            ]
        })
        .collect();
    details.push_str(&format!(
            "\nCorpus launches that ran unsplit (50/50 on two devices; {} kernels marked `@expect not-splittable`: {})\n\n{}",
            refused.len(),
            refused.iter().map(|k| k.0.as_str()).collect::<Vec<_>>().join(", "),
            detail(&["kernel", "@run", "global / local", "@expect", "why it ran unsplit"], &cells)
        ));
    results.insert("coverage".into(), serde_json::to_value(&o)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_count_their_split_launches() {
        let o = |kernel: &str, run, split| Outcome {
            kernel: kernel.into(),
            run,
            ndrange: String::new(),
            expect_splittable: kernel != "scatter",
            split,
            reason: None,
        };
        let got = per_kernel(&[
            o("vadd", 0, true),
            o("vadd", 1, true),
            o("scatter", 0, false),
            o("bicg", 0, true),
            o("bicg", 1, false),
        ]);
        assert_eq!(
            got,
            vec![
                ("vadd".to_string(), true, 2, 2),
                ("scatter".to_string(), false, 0, 1),
                ("bicg".to_string(), true, 1, 2),
            ]
        );
    }
}
