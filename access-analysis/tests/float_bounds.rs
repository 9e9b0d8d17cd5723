//! Loop bounds and values computed in floating point from an
//! integer and a constant, `t < ceil((float)n / 16)` (the SDK idiom for a
//! tile count), are the integers they are, under the launch-time
//! assumption that the integer converts exactly (|n| < 2^24 for `float`,
//! 2^53 for `double`); other floating values stay unknown.

mod common;

use access_analysis::{AnalysisOptions, KernelAccesses};
use common::{inline, set, Launch};
use isl_rs::Context;

/// Whether the kernel's assumption `cond` holds at the launch `l`.
fn holds(ctx: &Context, ka: &KernelAccesses, cond: &str, l: &Launch) -> bool {
    let c = set(ctx, cond);
    let at = set(ctx, &l.fix(ka));
    !c.intersect(at).unwrap().is_empty().unwrap()
}

/// Checks that the must-writes of `out` at launch `l` are exactly `want`
/// (work-item, element) pairs.
fn must_writes_are(ka: &KernelAccesses, l: &Launch, want: &[([i64; 3], i64)]) {
    common::assert_relation(ka, "out", "must", l, want);
}

/// `out[t * gs0 + i]` for `t < bound(n)`: the pairs one launch writes.
fn tiles(l_gs: i64, n_tiles: i64) -> Vec<([i64; 3], i64)> {
    let mut v = Vec::new();
    for i in 0..l_gs {
        for t in 0..n_tiles {
            v.push(([i, 0, 0], t * l_gs + i));
        }
    }
    v
}

#[test]
fn a_ceil_of_a_float_quotient_bounds_its_loop_exactly() {
    let ka = inline(
        "__kernel void k(__global float *out, int n) { int i = get_global_id(0); \
         for (int t = 0; t < ceil((float)n / 16); t++) out[t * get_global_size(0) + i] = 1.0f; }",
        &AnalysisOptions::default(),
    );
    for n in [0, 1, 16, 33, 40, 48] {
        let l = Launch::new([8, 1, 1], [4, 1, 1]).arg("n", n);
        must_writes_are(&ka, &l, &tiles(8, (n + 15) / 16));
    }
    let a = ka
        .assumptions
        .iter()
        .find(|a| a.description.contains("converted to 'float' is exact"))
        .unwrap_or_else(|| panic!("{:?}", ka.assumptions));
    let ctx = Context::alloc();
    let at = |n: i64| Launch::new([8, 1, 1], [4, 1, 1]).arg("n", n);
    assert!(holds(&ctx, &ka, &a.condition, &at((1 << 24) - 1)));
    assert!(holds(&ctx, &ka, &a.condition, &at(1 - (1 << 24))));
    assert!(
        !holds(&ctx, &ka, &a.condition, &at(1 << 24)),
        "{}",
        a.condition
    );
}

#[test]
fn floor_double_a_converted_result_and_a_reversed_comparison_are_exact_too() {
    // floor of a double quotient by an integral literal, converted to int
    let ka = inline(
        "__kernel void k(__global float *out, int n) { int i = get_global_id(0); \
         int m = (int)floor((double)n / 3.0); \
         for (int t = 0; m > t; t++) out[t * get_global_size(0) + i] = 1.0f; }",
        &AnalysisOptions::default(),
    );
    for n in [0, 2, 3, 10] {
        let l = Launch::new([4, 1, 1], [2, 1, 1]).arg("n", n);
        must_writes_are(&ka, &l, &tiles(4, n / 3));
    }
    assert!(
        ka.assumptions
            .iter()
            .any(|a| a.description.contains("converted to 'double' is exact")),
        "{:?}",
        ka.assumptions
    );
    // a float divided in double: the float's precision bounds it
    let ka = inline(
        "__kernel void k(__global float *out, int n) { int i = get_global_id(0); \
         for (int t = 0; t < ceil((float)n / 16.0); t++) out[t * get_global_size(0) + i] = 1.0f; }",
        &AnalysisOptions::default(),
    );
    let l = Launch::new([4, 1, 1], [2, 1, 1]).arg("n", 17);
    must_writes_are(&ka, &l, &tiles(4, 2));
    let a = &ka.assumptions[0];
    assert!(
        a.description.contains("converted to 'float' is exact"),
        "{}",
        a.description
    );
    let ctx = Context::alloc();
    let at = |n: i64| Launch::new([4, 1, 1], [2, 1, 1]).arg("n", n);
    assert!(
        !holds(&ctx, &ka, &a.condition, &at(1 << 24)),
        "{}",
        a.condition
    );
    // the quotient on the left of the comparison, the divisor a variable
    // holding a constant
    let ka = inline(
        "__kernel void k(__global float *out, int n) { int i = get_global_id(0); int w = 4; \
         for (int t = 0; ceil((float)n / w) > t; t++) out[t * get_global_size(0) + i] = 1.0f; }",
        &AnalysisOptions::default(),
    );
    for n in [0, 4, 9] {
        let l = Launch::new([4, 1, 1], [2, 1, 1]).arg("n", n);
        must_writes_are(&ka, &l, &tiles(4, (n + 3) / 4));
    }
}

#[test]
fn a_bare_quotient_compares_and_converts_as_the_integer_it_rounds_to() {
    // `t < q` is `t < ceil(q)`, `t <= q` is `t <= floor(q)`, and the
    // quotient on the left mirrors them
    for (cond, count) in [
        ("t < (float)n / 16", &|n: i64| (n + 15).div_euclid(16)),
        ("t <= (float)n / 16", &|n: i64| n.div_euclid(16) + 1),
        ("(float)n / 16 > t", &|n: i64| (n + 15).div_euclid(16)),
        ("(float)n / 16 >= t", &|n: i64| n.div_euclid(16) + 1),
    ] as [(&str, &dyn Fn(i64) -> i64); 4]
    {
        let ka = inline(
            &format!(
                "__kernel void k(__global float *out, int n) {{ int i = get_global_id(0); \
                 for (int t = 0; {cond}; t++) out[t * get_global_size(0) + i] = 1.0f; }}"
            ),
            &AnalysisOptions::default(),
        );
        for n in [0, 15, 16, 17, 40] {
            let l = Launch::new([4, 1, 1], [2, 1, 1]).arg("n", n);
            must_writes_are(&ka, &l, &tiles(4, count(n).max(0)));
        }
    }
    // a conversion truncates toward zero: (int)(-6.0f / 4) is -1, not -2
    let ka = inline(
        "__kernel void k(__global float *out, int n) { int i = get_global_id(0); \
         out[(int)((float)n / 4) + 8 + i] = 1.0f; }",
        &AnalysisOptions::default(),
    );
    for (n, first) in [(-6, 7), (6, 9), (-8, 6), (0, 8)] {
        let l = Launch::new([4, 1, 1], [2, 1, 1]).arg("n", n);
        let want: Vec<_> = (0..4).map(|i| ([i, 0, 0], first + i)).collect();
        must_writes_are(&ka, &l, &want);
    }
}

#[test]
fn other_floating_values_stay_unknown() {
    for (what, body, why) in [
        (
            "a divisor that is no constant",
            "for (int t = 0; t < ceil((float)n / m); t++)",
            "the divisor is not a positive integer constant",
        ),
        (
            "a rounding other than ceil and floor",
            "for (int t = 0; t < round((float)n / 4); t++)",
            "not an integer comparison",
        ),
        (
            "a dividend that is no integer",
            "for (int t = 0; t < ceil(x / 4); t++)",
            "not an integer comparison",
        ),
        (
            "a dividend that depends on a loop iterator",
            "for (int j = 0; j < 2; j++) for (int t = 0; t < ceil((float)(n + j) / 4); t++)",
            "not an affine value of the NDRange and the scalar arguments",
        ),
    ] {
        let ka = inline(
            &format!(
                "__kernel void k(__global float *out, int n, int m, float x) {{ \
                 int i = get_global_id(0); {body} out[t * get_global_size(0) + i] = 1.0f; }}"
            ),
            &AnalysisOptions::default(),
        );
        let out = ka.array("out").unwrap();
        assert!(
            out.whole.as_deref().is_some_and(|w| w.contains(why)),
            "{what}: {:?}",
            out.whole
        );
        assert!(ka.assumptions.is_empty(), "{what}: {:?}", ka.assumptions);
    }
}
