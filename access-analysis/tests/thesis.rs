//! The thesis's examples (chapter 4), checked by meaning with isl: vector add
//! (listing 4.3), matrix multiplication with width 1000 (listings 4.4/4.5,
//! tables 4.3/4.4, corrected where the thesis is off by one), and the same
//! matrix multiplication with the width as a run-time argument.

mod common;

use access_analysis::{AnalysisOptions, Linearization, Mode};
use common::{concrete, corpus, map, set, Launch};
use isl_rs::{Context, Map, Set};

fn range_in(ctx: &Context, m: &str, ka_context: &str, extra: &str) -> Set {
    map(ctx, m)
        .intersect_params(set(ctx, ka_context))
        .unwrap()
        .intersect_params(set(ctx, extra))
        .unwrap()
        .range()
        .unwrap()
}

fn assert_set_eq(got: &Set, want: &Set, what: &str) {
    assert!(
        got.is_equal(want).unwrap(),
        "{what}: got {} want {}",
        got.to_str().unwrap(),
        want.to_str().unwrap()
    );
}

#[test]
fn vector_add_footprints_are_the_global_id_range() {
    let ka = corpus("vadd.cl", &AnalysisOptions::default());
    let ctx = Context::alloc();
    let header = "[gs0, ls0, go0, ng0] -> ";
    for (name, mode) in [("a", Mode::R), ("b", Mode::R), ("c", Mode::W)] {
        let a = ka.array(name).unwrap();
        assert_eq!(a.whole, None);
        assert_eq!(a.mode, mode);
        assert_eq!(a.linearization, Linearization::Affine);
        let text = if mode == Mode::R {
            &a.reads
        } else {
            &a.must_writes
        };
        // Per work-item: element x0 for the work-item with global id x0.
        let got = map(&ctx, text)
            .intersect_params(set(&ctx, &ka.context))
            .unwrap();
        let want = map(
            &ctx,
            &format!("{header}{{ W[x0, 0, 0] -> {name}[x0] : go0 <= x0 < go0 + gs0 }}"),
        )
        .intersect_params(set(&ctx, &ka.context))
        .unwrap();
        assert!(got.is_equal(&want).unwrap(), "{name}: {text}");
        // The total range: { a[i] : 0 <= i < gs0 } shifted by go0.
        let r = range_in(&ctx, text, &ka.context, "[go0] -> { : }");
        let w = set(
            &ctx,
            &format!("{header}{{ {name}[i] : go0 <= i < go0 + gs0 }}"),
        )
        .intersect_params(set(&ctx, &ka.context))
        .unwrap();
        assert_set_eq(&r, &w, name);
    }
    assert_eq!(
        ka.array("c").unwrap().may_writes,
        ka.array("c").unwrap().must_writes
    );
}

/// Lowest and highest element of a 1-D footprint, as sets over the parameters.
fn bounds(r: &Set) -> (Set, Set) {
    (
        r.copy().unwrap().lexmin().unwrap(),
        r.copy().unwrap().lexmax().unwrap(),
    )
}

#[test]
fn matmul_1000_total_ranges_match_table_4_3_corrected() {
    let ka = corpus("matmul_1000.cl", &AnalysisOptions::default());
    let ctx = Context::alloc();
    let p = "[gs0, gs1, ls0, ls1, go0, go1, ng0, ng1] -> ";
    let zero = "[go0, go1] -> { : go0 = 0 and go1 = 0 }";
    // Thesis table 4.3: a [0, 1000*gs1 + 999], b [0, gs0 + 999000], c [0, gs0 + 1000*gs1]:
    // each upper bound is too large; the exact ones are below.
    let cases = [
        ("a", ka.array("a").unwrap().reads.clone(), "1000gs1 - 1"),
        ("b", ka.array("b").unwrap().reads.clone(), "gs0 + 998999"),
        (
            "c",
            ka.array("c").unwrap().must_writes.clone(),
            "gs0 + 1000gs1 - 1001",
        ),
    ];
    for (name, text, hi) in cases {
        let arr = ka.array(name).unwrap();
        assert_eq!(arr.whole, None, "{name}");
        // the literal width is a constant stride: [k][j], linearized back here
        assert_eq!(arr.linearization, Linearization::Delinearized);
        assert_eq!(arr.strides, ["1000", "1"]);
        let flat = map(
            &ctx,
            &format!("{{ {name}[o0, o1] -> {name}[1000o0 + o1] }}"),
        );
        let text = map(&ctx, &text)
            .apply_range(flat)
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let r = range_in(&ctx, &text, &ka.context, zero);
        let (lo, up) = bounds(&r);
        let within = |t: &str| {
            set(&ctx, &format!("{p}{{ {t} : go0 = 0 and go1 = 0 }}"))
                .intersect_params(set(&ctx, &ka.context))
                .unwrap()
        };
        assert_set_eq(&lo, &within(&format!("{name}[0]")), &format!("{name} low"));
        assert_set_eq(
            &up,
            &within(&format!("{name}[{hi}]")),
            &format!("{name} high"),
        );
    }
    // a does not depend on x, b and c do (thesis: only b and c can be split along x).
    let a_reads: Map = map(&ctx, &ka.array("a").unwrap().reads);
    let shifted = map(&ctx, "{ W[x0, x1, x2] -> W[x0 + 1, x1, x2] }")
        .apply_range(a_reads.copy().unwrap())
        .unwrap();
    let restricted = shifted
        .intersect_domain(a_reads.copy().unwrap().domain().unwrap())
        .unwrap();
    let common_dom = a_reads
        .copy()
        .unwrap()
        .intersect_domain(restricted.copy().unwrap().domain().unwrap())
        .unwrap();
    assert!(restricted.is_equal(&common_dom).unwrap(), "a depends on x0");
}

#[test]
fn matmul_1000_slices_match_table_4_4_corrected() {
    let ka = corpus("matmul_1000.cl", &AnalysisOptions::default());
    let ctx = Context::alloc();
    // The NDRange of the thesis: <1000, height, 1>, here height = 4, two slices.
    let launch = Launch::new([1000, 4, 1], [8, 1, 1]);
    let slice = |name: &str, which: &str, dom: &str| -> (i64, i64) {
        let a = ka.array(name).unwrap();
        let m = concrete(&ctx, &ka, a, which, &launch)
            .intersect_domain(set(&ctx, &format!("{{ W[x0, x1, x2] : {dom} }}")))
            .unwrap();
        let r = m.range().unwrap();
        let lo = r
            .copy()
            .unwrap()
            .dim_min_val(0)
            .unwrap()
            .get_num_si()
            .unwrap();
        let hi = r.dim_max_val(0).unwrap().get_num_si().unwrap();
        (lo, hi)
    };
    // Split along x: thesis b1 [0, gs0/2 + 998999], b2 [gs0/2, gs0 + 998999].
    assert_eq!(slice("b", "reads", "x0 < 500"), (0, 999_499));
    assert_eq!(slice("b", "reads", "x0 >= 500"), (500, 999_999));
    // c1 along x: the thesis's gs0/2 + 1000*gs1 - 1 = 4499 is too large: 499 + 3000.
    assert_eq!(slice("c", "must", "x0 < 500"), (0, 3_499));
    assert_eq!(slice("c", "must", "x0 >= 500"), (500, 3_999));
    // Split along y: a1 [0, 500*gs1 - 1], a2 [500*gs1, 1000*gs1 - 1].
    assert_eq!(slice("a", "reads", "x1 < 2"), (0, 1_999));
    assert_eq!(slice("a", "reads", "x1 >= 2"), (2_000, 3_999));
    // c along y: the thesis's gs0 + 500*gs1 - 1000 = 2000 is one too large.
    assert_eq!(slice("c", "must", "x1 < 2"), (0, 1_999));
    assert_eq!(slice("c", "must", "x1 >= 2"), (2_000, 3_999));
    // Slices along x write disjoint element sets although their hulls overlap.
    let c = ka.array("c").unwrap();
    let part = |dom: &str| {
        concrete(&ctx, &ka, c, "must", &launch)
            .intersect_domain(set(&ctx, &format!("{{ W[x0, x1, x2] : {dom} }}")))
            .unwrap()
            .range()
            .unwrap()
    };
    let (s1, s2) = (part("x0 < 500"), part("x0 >= 500"));
    assert!(s1.is_disjoint(&s2).unwrap());
    assert_eq!(s1.count_val().unwrap().get_num_si().unwrap(), 2_000);
}

#[test]
fn matmul_with_run_time_width_is_delinearized_with_an_assumption() {
    let ka = corpus("matmul.cl", &AnalysisOptions::default());
    let ctx = Context::alloc();
    assert!(ka.params.iter().any(|p| p.name == "width"));
    for name in ["a", "b", "c"] {
        let a = ka.array(name).unwrap();
        assert_eq!(a.whole, None, "{name}");
        assert_eq!(a.linearization, Linearization::Delinearized, "{name}");
        assert_eq!(a.strides, vec!["width".to_string(), "1".to_string()]);
    }
    // c[y*width + x] is c[y][x] provided 0 <= x < width for every work-item.
    let c = ka.array("c").unwrap();
    assert_eq!(c.assumptions.len(), 1, "{:?}", c.assumptions);
    let cond = set(&ctx, &c.assumptions[0].condition)
        .intersect_params(set(&ctx, &ka.context))
        .unwrap();
    let want = set(&ctx, "[gs0, go0, width] -> { : go0 + gs0 <= width }")
        .intersect_params(set(&ctx, &ka.context))
        .unwrap();
    assert_set_eq(&cond, &want, "assumption");
    assert!(c.assumptions[0].description.contains("c[y * width + x]"));
    // a[y*width + i] needs nothing: 0 <= i < width is the loop.
    assert!(ka.array("a").unwrap().assumptions.is_empty());
    // Exact footprints: c[y][x] for the work-item (x, y).
    let got = map(&ctx, &c.must_writes)
        .intersect_params(set(&ctx, &ka.context))
        .unwrap();
    let want = map(
        &ctx,
        "[gs0, gs1, go0, go1] -> { W[x0, x1, 0] -> c[x1, x0] : go0 <= x0 < go0 + gs0 and go1 <= x1 < go1 + gs1 }",
    )
    .intersect_params(set(&ctx, &ka.context))
    .unwrap();
    assert!(got.is_equal(&want).unwrap());
    let b = map(&ctx, &ka.array("b").unwrap().reads)
        .intersect_params(set(&ctx, &ka.context))
        .unwrap();
    let want_b = map(&ctx, "[gs0, gs1, go0, go1, width] -> { W[x0, x1, 0] -> b[i, x0] : go0 <= x0 < go0 + gs0 and go1 <= x1 < go1 + gs1 and 0 <= i < width }")
        .intersect_params(set(&ctx, &ka.context))
        .unwrap();
    assert!(b.is_equal(&want_b).unwrap());
}

#[test]
fn matmul_specialized_on_width_1000_equals_the_hard_coded_kernel() {
    let mut options = AnalysisOptions::default();
    options.specialize.insert("width".into(), 1000);
    let spec = corpus("matmul.cl", &options);
    let fixed = corpus("matmul_1000.cl", &AnalysisOptions::default());
    let ctx = Context::alloc();
    assert!(!spec.params.iter().any(|p| p.name == "width"));
    for (name, which) in [("a", "reads"), ("b", "reads"), ("c", "must")] {
        let s = spec.array(name).unwrap();
        let f = fixed.array(name).unwrap();
        assert_eq!(s.linearization, Linearization::Specialized, "{name}");
        // both split by the constant stride 1000, with the same assumptions
        assert_eq!(s.strides, ["1000", "1"]);
        assert_eq!(f.strides, ["1000", "1"]);
        assert_eq!(s.assumptions.len(), f.assumptions.len(), "{name}");
        let pick = |a: &access_analysis::ArrayAccesses| {
            if which == "reads" {
                a.reads.clone()
            } else {
                a.must_writes.clone()
            }
        };
        let (ms, mf) = (
            map(&ctx, &pick(s))
                .intersect_params(set(&ctx, &spec.context))
                .unwrap(),
            map(&ctx, &pick(f))
                .intersect_params(set(&ctx, &fixed.context))
                .unwrap(),
        );
        assert!(
            ms.is_equal(&mf).unwrap(),
            "{name}: {} vs {}",
            pick(s),
            pick(f)
        );
    }
}

#[test]
fn gather_makes_only_the_indirect_array_whole() {
    let ka = corpus("gather.cl", &AnalysisOptions::default());
    let a = ka.array("a").unwrap();
    let reason = a.whole.as_deref().expect("a is whole");
    assert_eq!(
        reason,
        "subscript 'a[idx[i]]' is indirect (gather.cl:10:12)"
    );
    assert_eq!(a.mode, Mode::R);
    for name in ["idx", "b"] {
        assert_eq!(ka.array(name).unwrap().whole, None, "{name}");
    }
    // The whole array's reads relate every work-item to every element.
    let ctx = Context::alloc();
    let reads = map(&ctx, &a.reads)
        .intersect_params(set(&ctx, &ka.context))
        .unwrap();
    let all = map(
        &ctx,
        "[gs0, go0] -> { W[x0, 0, 0] -> a[i] : go0 <= x0 < go0 + gs0 }",
    )
    .intersect_params(set(&ctx, &ka.context))
    .unwrap();
    assert!(reads.is_equal(&all).unwrap());
}

#[test]
fn operation_limit_makes_arrays_whole_without_hanging() {
    let options = AnalysisOptions {
        max_operations: 1,
        ..AnalysisOptions::default()
    };
    for file in ["matmul.cl", "stencil3d.cl", "vadd.cl"] {
        let ka = corpus(file, &options);
        for a in &ka.arrays {
            let reason = a
                .whole
                .as_deref()
                .unwrap_or_else(|| panic!("{file}: {} is bounded", a.name));
            assert!(
                reason.contains("isl operation limit (1) exceeded"),
                "{file}: {reason}"
            );
        }
        // The texts stay parseable for the consumer.
        let ctx = Context::alloc();
        for a in &ka.arrays {
            map(&ctx, &a.reads);
            map(&ctx, &a.may_writes);
        }
    }
}
