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

use crate::common::{launch_halves, LaunchSpec};

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
