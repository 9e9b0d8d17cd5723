//! A launch too large for a conversion the analysis assumed not to wrap
//! around (`int base = get_group_id(0) * 16`): its ranges are made
//! again specialized on the launch's sizes, where the wrap-around is
//! modelled; where that does not split, the launch gets the ranges whose
//! assumption fails, and the launcher runs it whole. Never a split under
//! the failed assumption.

use session::{LaunchConfig, Session};

const TILE: &str = "__kernel void tile(__global const float *in, __global float *out)\n{\n    \
    int base = get_group_id(0) * 16;\n    int lid = get_local_id(0);\n    \
    out[base + lid] = 2.0f * in[base + lid];\n}\n";

fn launch(global: u64) -> ranges_format::KernelRanges {
    let mut s = Session::from_source("tile.cl", TILE, &[]).unwrap();
    let config = LaunchConfig {
        global: vec![global],
        local: vec![16],
        ..Default::default()
    };
    s.ranges_for_launch("tile", &config).unwrap().kernels[0].clone()
}

/// Whether every assumption of `k` holds with `gs0` = `global` (local 16).
fn assumptions_hold(k: &ranges_format::KernelRanges, global: i64) -> bool {
    let bound = k.validate_and_bind().unwrap();
    let values: Vec<i64> = k
        .params
        .iter()
        .map(|p| match p.source {
            ranges_format::ParamSource::GlobalSize(_) => global,
            ranges_format::ParamSource::LocalSize(_) => 16,
            ranges_format::ParamSource::NumGroups(_) => global / 16,
            ranges_format::ParamSource::SliceHiItem => global / 2,
            _ => 0,
        })
        .collect();
    bound.assumptions.iter().all(|a| a.eval(&values).unwrap())
}

/// Whether `k` has the kernel's no-wrap assumption.
fn has_no_wrap(k: &ranges_format::KernelRanges) -> bool {
    k.assumptions
        .iter()
        .any(|a| a.array.is_none() && a.description.contains("stays within 'int'"))
}

#[test]
fn an_ordinary_launch_keeps_the_assumption_and_splits() {
    let k = launch(4096);
    assert!(k.splittable, "{:?}", k.reason);
    assert!(has_no_wrap(&k), "{:?}", k.assumptions);
    assert!(assumptions_hold(&k, 4096));
}

#[test]
fn a_launch_past_2_31_work_items_never_splits_under_the_failed_assumption() {
    let global = (1u64 << 31) + 4096;
    let k = launch(global);
    let specialized = k.diagnostics.iter().any(|d| d == session::SPECIALIZED_NOTE);
    if specialized {
        // the sizes are values: the wrap-around is modelled, and what the
        // ranges assume holds at this launch
        assert!(assumptions_hold(&k, global as i64), "{:?}", k.assumptions);
    } else {
        // the parametric ranges, whose assumption fails here: run whole
        assert!(has_no_wrap(&k), "{:?}", k.assumptions);
        assert!(!assumptions_hold(&k, global as i64), "{:?}", k.assumptions);
    }
}
