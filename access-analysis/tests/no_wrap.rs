//! Integer conversions of NDRange values that could wrap around only on
//! huge launches (`int base = get_group_id(0) * 16`), and of affine values
//! that add integer scalar arguments to them (`int j = get_global_id(0) + (k
//! + 1)`), are modelled without the wrap-around under a launch-time
//! assumption of the kernel; one that wraps on ordinary launches (`i +
//! 4294967295u`) keeps its wrap-around.

mod common;

use access_analysis::AnalysisOptions;
use common::{inline, set, Launch};
use isl_rs::Context;

const GROUP_TILE: &str = "__kernel void k(__global const float *in, __global float *out) { \
     int base = get_group_id(0) * 16; int lid = get_local_id(0); \
     out[base + lid] = in[base + lid]; }";

fn with_local(ls: i64) -> AnalysisOptions {
    AnalysisOptions {
        local_size: Some([ls, 1, 1]),
        ..Default::default()
    }
}

/// Whether the kernel's assumption `cond` holds at the launch `l`.
fn holds(ctx: &Context, ka: &access_analysis::KernelAccesses, cond: &str, l: &Launch) -> bool {
    let c = set(ctx, cond);
    let at = set(ctx, &l.fix(ka));
    !c.intersect(at).unwrap().is_empty().unwrap()
}

#[test]
fn a_group_base_in_int_is_exact_under_a_launch_time_assumption() {
    let ka = inline(GROUP_TILE, &with_local(16));
    let out = ka.array("out").unwrap();
    assert!(
        !out.must_writes.contains("mod") && !out.must_writes.contains("4294967296"),
        "the write keeps a wrap-around: {}",
        out.must_writes
    );
    assert_eq!(ka.assumptions.len(), 1, "{:?}", ka.assumptions);
    let a = &ka.assumptions[0];
    assert!(a.array.is_none());
    assert!(
        a.description.contains("get_group_id(0) * 16") && a.description.contains("'int'"),
        "{}",
        a.description
    );
    // 16 * (gs0/16 - 1) fits in int exactly up to gs0 = 2^31
    let ctx = Context::alloc();
    for (gs, ok) in [
        (256, true),
        (1 << 30, true),
        (1i64 << 31, true),
        ((1i64 << 31) + 16, false),
    ] {
        let l = Launch::new([gs, 1, 1], [16, 1, 1]);
        assert_eq!(
            holds(&ctx, &ka, &a.condition, &l),
            ok,
            "gs0 = {gs}: {}",
            a.condition
        );
    }
    // also with an offset: the group id does not depend on it
    let l = Launch::new([256, 1, 1], [16, 1, 1]).offset([1 << 20, 0, 0]);
    assert!(holds(&ctx, &ka, &a.condition, &l));
}

#[test]
fn a_value_that_wraps_on_ordinary_launches_keeps_its_wrap_around() {
    let ka = inline(
        "__kernel void k(__global int *a) { uint i = get_global_id(0); uint j = i + 4294967295u; \
         if (i > 0) a[j] = 1; }",
        &AnalysisOptions::default(),
    );
    assert!(ka.assumptions.is_empty(), "{:?}", ka.assumptions);
    let a = ka.array("a").unwrap();
    assert!(a.must_writes.contains("4294967296"), "{}", a.must_writes);
}

#[test]
fn an_unknown_local_size_gives_the_assumption_over_the_group_count() {
    let ka = inline(GROUP_TILE, &AnalysisOptions::default());
    assert_eq!(ka.assumptions.len(), 1, "{:?}", ka.assumptions);
    let ctx = Context::alloc();
    let cond = &ka.assumptions[0].condition;
    // 2^27 groups of 16 fit (16 * (2^27 - 1) < 2^31); 2^28 groups of 8 do not
    let fits = Launch::new([1 << 31, 1, 1], [16, 1, 1]);
    let wraps = Launch::new([1 << 31, 1, 1], [8, 1, 1]);
    assert!(holds(&ctx, &ka, cond, &fits), "{cond}");
    assert!(!holds(&ctx, &ka, cond, &wraps), "{cond}");
}

/// The assumption of `ka` whose description contains `what`, after
/// checking that `out` is bounded as a `[..][width]` array.
fn width_assumption<'a>(
    ka: &'a access_analysis::KernelAccesses,
    what: &str,
) -> &'a access_analysis::Assumption {
    let out = ka.array("out").unwrap();
    assert!(out.whole.is_none(), "{:?}", out.whole);
    assert_eq!(out.strides, ["width", "1"]);
    ka.assumptions
        .iter()
        .find(|a| a.description.contains(what))
        .unwrap_or_else(|| panic!("no '{what}' in {:?}", ka.assumptions))
}

const SIZE_T_TIMES_INT: &str = "__kernel void k(__global float *out, int width) { \
     out[get_global_id(1) * width + get_global_id(0)] = 1.0f; }";

#[test]
fn an_int_scalar_converted_to_size_t_is_assumed_not_negative() {
    let ka = inline(SIZE_T_TIMES_INT, &AnalysisOptions::default());
    let a = width_assumption(&ka, "'width' converted to 'ulong' is not negative");
    assert!(a.array.is_none());
    let ctx = Context::alloc();
    let at = |w: i64| Launch::new([64, 16, 1], [8, 4, 1]).arg("width", w);
    assert!(holds(&ctx, &ka, &a.condition, &at(64)));
    assert!(holds(&ctx, &ka, &a.condition, &at(0)));
    assert!(!holds(&ctx, &ka, &a.condition, &at(-1)), "{}", a.condition);
}

#[test]
fn a_converted_scalar_that_reaches_no_access_assumes_nothing() {
    // `n` only shapes the stored value: no parameter, nothing to check
    let ka = inline(
        "__kernel void k(__global int *a, int n) { size_t i = get_global_id(0); \
         ulong m = n; a[i] = (int)(m & 1); }",
        &AnalysisOptions::default(),
    );
    assert!(ka.assumptions.is_empty(), "{:?}", ka.assumptions);
    assert!(ka.params.iter().all(|p| p.name != "n"));
}

/// Whether the condition `text` (a range file's syntax) holds with these
/// values of the kernel's parameters (the launcher's evaluation).
fn evaluates(ka: &access_analysis::KernelAccesses, text: &str, l: &Launch) -> bool {
    let names: Vec<&str> = ka.params.iter().map(|p| p.name.as_str()).collect();
    let values: Vec<i64> = names.iter().map(|n| l.value(ka, n)).collect();
    ranges_format::Condition::parse(text)
        .unwrap()
        .bind(&names)
        .unwrap()
        .eval(&values)
        .unwrap()
}

#[test]
fn an_int_index_from_ids_and_a_width_stays_within_int_at_the_largest_ids() {
    let ka = inline(
        "__kernel void k(__global float *out, int width) { \
         int idx = get_global_id(1) * width + get_global_id(0); out[idx] = 1.0f; }",
        &AnalysisOptions::default(),
    );
    let a = width_assumption(&ka, "stays within 'int'");
    // (gs1 - 1) * width + gs0 - 1 <= 2^31 - 1
    let at = |gs: [i64; 2], w: i64| Launch::new([gs[0], gs[1], 1], [8, 4, 1]).arg("width", w);
    assert!(evaluates(&ka, &a.condition, &at([64, 16], 64)));
    // 32767 * 2^16 + 63 fits; 32768 * 2^16 + 63 does not
    assert!(
        evaluates(&ka, &a.condition, &at([64, 32768], 1 << 16)),
        "{}",
        a.condition
    );
    assert!(
        !evaluates(&ka, &a.condition, &at([64, 32769], 1 << 16)),
        "{}",
        a.condition
    );
    // and with an offset, the largest id moves
    let off = Launch::new([64, 32767, 1], [8, 4, 1])
        .arg("width", 1 << 16)
        .offset([0, 1, 0]);
    assert!(evaluates(&ka, &a.condition, &off));
    let off = Launch::new([64, 32767, 1], [8, 4, 1])
        .arg("width", 1 << 16)
        .offset([0, 2, 0]);
    assert!(!evaluates(&ka, &a.condition, &off), "{}", a.condition);
}

/// LU's scale step as public suites write it: `get_global_id(0) + (k + 1)`
/// is computed in `size_t` (`k + 1` converted to it), then converted to
/// `int`.
const SCALAR_OFFSET: &str = "__kernel void k(__global float *a, int k, int n) { \
     int j = get_global_id(0) + (k + 1); \
     if (j < n) a[k * n + j] = a[k * n + j] / a[k * n + k]; }";

/// The kernel assumption of `ka` whose description contains `what`.
fn kernel_assumption<'a>(
    ka: &'a access_analysis::KernelAccesses,
    what: &str,
) -> &'a access_analysis::Assumption {
    ka.assumptions
        .iter()
        .find(|a| a.array.is_none() && a.description.contains(what))
        .unwrap_or_else(|| panic!("no '{what}' in {:?}", ka.assumptions))
}

#[test]
fn an_int_offset_by_a_scalar_is_exact_under_a_launch_time_assumption() {
    let ka = inline(SCALAR_OFFSET, &AnalysisOptions::default());
    let a = ka.array("a").unwrap();
    assert!(a.whole.is_none(), "{:?}", a.whole);
    for w in [&a.must_writes, &a.reads] {
        assert!(
            !w.contains("mod") && !w.contains("floor") && !w.contains("4294967296"),
            "an access keeps a wrap-around: {w}"
        );
    }
    // column k + 1 + x0 of row k, parametric in k
    assert!(
        a.must_writes.contains("a[k, 1 + k + x0]"),
        "{}",
        a.must_writes
    );
    let ctx = Context::alloc();
    let at = |gs: i64, go: i64, k: i64| {
        Launch::new([gs, 1, 1], [8, 1, 1])
            .offset([go, 0, 0])
            .arg("k", k)
            .arg("n", 64)
    };
    // the sum converted to int: x0 + k + 1 <= 2^31 - 1 at the largest id
    let int = kernel_assumption(&ka, "'get_global_id(0) + (k + 1)' stays within 'int'");
    for (l, ok) in [
        (at(64, 0, 3), true),
        (at(64, 0, 0), true),
        (at(64, 0, i32::MAX as i64 - 64), true),
        (at(64, 0, i32::MAX as i64 - 63), false),
        (at(64, 8, i32::MAX as i64 - 64), false),
    ] {
        assert_eq!(
            holds(&ctx, &ka, &int.condition, &l),
            ok,
            "{l:?}: {}",
            int.condition
        );
    }
    // `k + 1` converted to size_t
    let k1 = kernel_assumption(&ka, "'(k + 1)' converted to 'ulong' is not negative");
    assert!(holds(&ctx, &ka, &k1.condition, &at(64, 0, -1)));
    assert!(
        !holds(&ctx, &ka, &k1.condition, &at(64, 0, -2)),
        "{}",
        k1.condition
    );
    // the size_t sum not negative follows from `k + 1` not negative: these
    // two are all the kernel assumes
    let kernel = ka.assumptions.iter().filter(|a| a.array.is_none());
    assert_eq!(kernel.count(), 2, "{:?}", ka.assumptions);
}

#[test]
fn specialized_on_a_k_that_wraps_the_wrap_around_is_modelled() {
    // near INT_MAX the sum wraps on the launch's own work-items: specialized
    // on it, the conversion keeps its wrap-around and assumes nothing
    let k = i32::MAX as i64 - 10;
    let options = AnalysisOptions {
        specialize: [("k".to_string(), k), ("gs0".to_string(), 64)].into(),
        ..Default::default()
    };
    let ka = inline(SCALAR_OFFSET, &options);
    assert!(
        ka.assumptions
            .iter()
            .all(|a| !a.description.contains("stays within 'int'")),
        "{:?}",
        ka.assumptions
    );
    let a = ka.array("a").unwrap();
    assert!(a.whole.is_none(), "{:?}", a.whole);
    assert!(
        a.must_writes.contains("mod 4294967296"),
        "the write of a wrapped column is modelled without its wrap-around: {}",
        a.must_writes
    );
}

#[test]
fn a_scalar_offset_that_wraps_on_ordinary_launches_keeps_its_wrap_around() {
    // `x0 + m + 4294967295u` passes UINT_MAX on every ordinary launch (it
    // is `x0 + m - 1` wrapped around): the conversion keeps its wrap-around
    // instead of an assumption that such launches fail
    let ka = inline(
        "__kernel void k(__global int *a, uint m) { uint j = get_global_id(0) + m + 4294967295u; \
         if (j < 64) a[j] = 1; }",
        &AnalysisOptions::default(),
    );
    assert!(
        ka.assumptions
            .iter()
            .all(|a| !a.description.contains("stays within")),
        "{:?}",
        ka.assumptions
    );
}

#[test]
fn an_assumption_that_another_implies_is_not_checked_again() {
    // `g0 * 16` within int implies `g0 * 8` within int: only the first is
    // checked at launch
    let ka = inline(
        "__kernel void k(__global const float *in, __global float *out) { \
         int pair = get_group_id(0) * 8; int base = get_group_id(0) * 16; \
         int lid = get_local_id(0); out[base + lid] = in[pair + lid]; }",
        &with_local(16),
    );
    let kernel: Vec<&str> = ka
        .assumptions
        .iter()
        .filter(|a| a.array.is_none())
        .map(|a| a.description.as_str())
        .collect();
    assert_eq!(kernel.len(), 1, "{kernel:?}");
    assert!(kernel[0].contains("get_group_id(0) * 16"), "{kernel:?}");
}
