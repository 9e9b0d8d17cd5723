//! Behaviours of the analysis on small inline kernels: pointer arithmetic,
//! early returns, loops, unknown values, naming, options and bad input.

mod common;

use access_analysis::{
    analyze_kernel, AccessKind, AnalysisError, AnalysisOptions, Linearization, Mode, ParamSource,
};
use common::{corpus, inline, map, set};
use isl_rs::Context;

fn opts() -> AnalysisOptions {
    AnalysisOptions::default()
}

/// Asserts that the isl relation `got` equals `want` within the kernel context.
fn same(ka: &access_analysis::KernelAccesses, got: &str, want: &str) {
    let ctx = Context::alloc();
    let g = map(&ctx, got)
        .intersect_params(set(&ctx, &ka.context))
        .unwrap();
    let w = map(&ctx, want)
        .intersect_params(set(&ctx, &ka.context))
        .unwrap();
    assert!(g.is_equal(&w).unwrap(), "got {got}\nwant {want}");
}

#[test]
fn pointer_arithmetic_on_buffer_parameters_is_followed() {
    let ka = inline(
        "__kernel void k(__global float *a, __global float *b, int off) {
            int i = get_global_id(0);
            a += off;
            __global float *q = b + 2 * i;
            q++;
            a[i] = *q + q[1];
        }",
        &opts(),
    );
    let a = ka.array("a").unwrap();
    assert_eq!(a.whole, None);
    same(
        &ka,
        &a.must_writes,
        "[gs0, go0, off] -> { W[x0, 0, 0] -> a[x0 + off] : go0 <= x0 < go0 + gs0 }",
    );
    let b = ka.array("b").unwrap();
    // b[2i + 1] and b[2i + 2]: the constant stride 2 delinearizes them
    assert_eq!(b.strides, ["2", "1"]);
    same(
        &ka,
        &b.reads,
        "[gs0, go0] -> { W[x0, 0, 0] -> b[x0, 1] : go0 <= x0 < go0 + gs0; W[x0, 0, 0] -> b[x0 + 1, 0] : go0 <= x0 < go0 + gs0 }",
    );
    assert!(ka
        .params
        .iter()
        .any(|p| p.name == "off" && p.source == ParamSource::ScalarArg { arg_index: 2 }));
}

#[test]
fn early_return_guards_the_rest_exactly() {
    let ka = inline(
        "__kernel void k(__global float *a, int n) {
            int i = get_global_id(0);
            if (i >= n) return;
            a[i] = 1.0f;
        }",
        &opts(),
    );
    let a = ka.array("a").unwrap();
    assert!(a.accesses.iter().all(|x| x.kind == AccessKind::MustWrite));
    same(
        &ka,
        &a.must_writes,
        "[gs0, go0, n] -> { W[x0, 0, 0] -> a[x0] : go0 <= x0 < go0 + gs0 and x0 < n }",
    );
}

#[test]
fn data_dependent_guards_make_may_writes() {
    let ka = inline(
        "__kernel void k(__global float *a, __global const float *v) {
            int i = get_global_id(0);
            if (v[i] > 0.5f) a[i] = 1.0f;
        }",
        &opts(),
    );
    let a = ka.array("a").unwrap();
    assert_eq!(a.whole, None);
    assert!(a.must_writes.contains("false"));
    same(
        &ka,
        &a.may_writes,
        "[gs0, go0] -> { W[x0, 0, 0] -> a[x0] : go0 <= x0 < go0 + gs0 }",
    );
    assert!(
        a.notes.iter().any(|n| n.contains("may-write")),
        "{:?}",
        a.notes
    );
}

#[test]
fn loop_carried_subscripts_make_only_their_array_whole() {
    let ka = inline(
        "__kernel void k(__global const int *a, __global float *b, __global float *c, int n) {
            int i = get_global_id(0);
            int j = 0;
            while (a[j] != 0) {
                b[j] = 0.0f;
                c[i] = 1.0f;
                j++;
            }
        }",
        &opts(),
    );
    let b = ka.array("b").unwrap();
    let reason = b.whole.as_deref().expect("b whole");
    assert!(
        reason.starts_with(
            "subscript 'b[j]' is not affine: 'j' is modified in the loop at test.cl:4:13"
        ),
        "{reason}"
    );
    assert!(reason.ends_with("(test.cl:5:17)"), "{reason}");
    // a[j] too (data-dependent loop), c[i] stays bounded but is only a may-write.
    assert!(ka.array("a").unwrap().whole.is_some());
    let c = ka.array("c").unwrap();
    assert_eq!(c.whole, None);
    same(
        &ka,
        &c.may_writes,
        "[gs0, go0] -> { W[x0, 0, 0] -> c[x0] : go0 <= x0 < go0 + gs0 }",
    );
    assert!(c.must_writes.contains("false"));
}

#[test]
fn products_of_ids_make_the_array_whole_with_the_location() {
    let ka = inline(
        "__kernel void k(__global float *a, __global float *b) {
            int x = get_global_id(0);
            int y = get_global_id(1);
            a[x * y] = b[x];
        }",
        &opts(),
    );
    let a = ka.array("a").unwrap();
    let reason = a.whole.as_deref().expect("a whole");
    assert!(
        reason.contains("'a[x * y]'")
            && reason.contains("not affine")
            && reason.contains("(test.cl:4:13)"),
        "{reason}"
    );
    assert_eq!(a.mode, Mode::W);
    assert_eq!(ka.array("b").unwrap().whole, None);
    assert_eq!(ka.work_dim, 2);
}

#[test]
fn loops_with_strides_and_negative_steps() {
    let ka = inline(
        "__kernel void k(__global float *a, __global float *b, int n) {
            int i = get_global_id(0);
            for (int k = n - 1; k >= 0; k -= 3)
                a[k] = b[i + k];
        }",
        &opts(),
    );
    let a = ka.array("a").unwrap();
    same(
        &ka,
        &a.must_writes,
        "[gs0, go0, n] -> { W[x0, 0, 0] -> a[k] : go0 <= x0 < go0 + gs0 and 0 <= k < n and (n - 1 - k) mod 3 = 0 }",
    );
}

#[test]
fn break_makes_loop_writes_may_writes() {
    let ka = inline(
        "__kernel void k(__global float *a, __global const float *v, int n) {
            int i = get_global_id(0);
            for (int k = 0; k < n; k++) {
                if (v[k] < 0.0f) break;
                a[i * 0 + k] = 1.0f;
            }
        }",
        &opts(),
    );
    let a = ka.array("a").unwrap();
    assert!(a.accesses.iter().all(|x| x.kind == AccessKind::MayWrite));
    same(
        &ka,
        &a.may_writes,
        "[gs0, go0, n] -> { W[x0, 0, 0] -> a[k] : go0 <= x0 < go0 + gs0 and 0 <= k < n }",
    );
}

#[test]
fn helper_returns_become_piecewise_values() {
    let ka = inline(
        "int wrap(int i, int n) { if (i >= n) return i - n; return i; }
        __kernel void k(__global float *a, int n) {
            int i = get_global_id(0);
            a[wrap(i + 1, n)] = 0.0f;
        }",
        &opts(),
    );
    let a = ka.array("a").unwrap();
    same(
        &ka,
        &a.must_writes,
        "[gs0, go0, n] -> { W[x0, 0, 0] -> a[x0 + 1 - n] : go0 <= x0 < go0 + gs0 and x0 + 1 >= n; W[x0, 0, 0] -> a[x0 + 1] : go0 <= x0 < go0 + gs0 and x0 + 1 < n }",
    );
}

#[test]
fn isl_keywords_and_reserved_names_are_renamed() {
    let ka = inline(
        "__kernel void k(__global float *a, int min, int gs0, int x0) {
            int i = get_global_id(0);
            a[i + min + gs0 + x0] = 0.0f;
        }",
        &opts(),
    );
    let names: Vec<&str> = ka.params.iter().map(|p| p.name.as_str()).collect();
    assert!(
        names.contains(&"arg_min") && names.contains(&"arg_gs0") && names.contains(&"arg_x0"),
        "{names:?}"
    );
    let ctx = Context::alloc();
    map(&ctx, &ka.array("a").unwrap().must_writes);
}

#[test]
fn buffers_named_like_isl_keywords_get_valid_tuples() {
    let ka = inline(
        "__kernel void k(__global float *min, __global float *W, __global float *mod) {
            int i = get_global_id(0);
            min[i] = W[i] + mod[i];
        }",
        &opts(),
    );
    assert!(ka.arrays.iter().all(|a| a.whole.is_none()), "{ka}");
    same(
        &ka,
        &ka.array("min").unwrap().must_writes,
        "[gs0, go0] -> { W[x0, 0, 0] -> arr_min[x0] : go0 <= x0 < go0 + gs0 }",
    );
    same(
        &ka,
        &ka.array("W").unwrap().reads,
        "[gs0, go0] -> { W[x0, 0, 0] -> arr_W[x0] : go0 <= x0 < go0 + gs0 }",
    );
}

#[test]
fn inconsistent_linearization_is_reported() {
    let ka = inline(
        "__kernel void k(__global float *a, int w, int h) {
            int x = get_global_id(0);
            int y = get_global_id(1);
            a[y * w + x] = a[x * h + y];
        }",
        &opts(),
    );
    let a = ka.array("a").unwrap();
    let reason = a.whole.as_deref().expect("a whole");
    assert!(reason.contains("inconsistent linearization"), "{reason}");
    assert_eq!(a.mode, Mode::RW);
}

/// A plane given as a scalar argument, written as a product of parameters
/// with no variable beside it (`i*nj*nk`, or `(i - 1)*(nk*nj)` with its
/// `nj*nk` alone): the plane is `i` over `nj` rows of `nk`, the choice the
/// kernel's own guards make hold (no launch-time assumption), not row `nj`
/// of `i`-row planes.
#[test]
fn a_plane_index_argument_is_the_outer_dimension() {
    let ka = inline(
        "__kernel void k(__global const float *a, __global float *b, int ni, int nj, int nk, int i) {
            int x = get_global_id(0);
            int y = get_global_id(1);
            if (i > 0 && i < ni - 1 && y > 0 && y < nj - 1 && x > 0 && x < nk - 1)
                b[i * nj * nk + y * nk + x] = a[(i - 1) * (nk * nj) + y * nk + x];
        }",
        &opts(),
    );
    for name in ["a", "b"] {
        let a = ka.array(name).unwrap();
        assert!(a.whole.is_none(), "{ka}");
        assert_eq!(a.strides, ["nj*nk", "nk", "1"], "{name}: {ka}");
        assert!(a.assumptions.is_empty(), "{name}: {:?}", a.assumptions);
    }
}

#[test]
fn delinearization_can_be_disabled() {
    let options = AnalysisOptions {
        delinearize: false,
        ..opts()
    };
    let ka = corpus("matmul.cl", &options);
    for a in &ka.arrays {
        let reason = a.whole.as_deref().expect("whole");
        assert!(reason.contains("delinearization is disabled"), "{reason}");
    }
}

#[test]
fn atomics_are_recorded_and_make_the_array_read_write() {
    // unused results: the arrays merge as reductions, no atomic is a reason
    let ka = corpus("histogram.cl", &opts());
    assert!(ka.global_atomics.is_empty(), "{:?}", ka.global_atomics);
    let bins = ka.array("bins").unwrap();
    assert_eq!(bins.mode, Mode::RW);
    assert!(bins.reduction.is_some());
    assert_eq!(
        bins.whole.as_deref(),
        Some("subscript 'bins[data[i] % nbins]' is indirect (histogram.cl:14:21)")
    );
    let ka = inline(
        "__kernel void k(__global int *c) { atomic_add(&c[get_global_id(0) % 4], 1); }",
        &opts(),
    );
    let c = ka.array("c").unwrap();
    assert_eq!(c.whole, None);
    assert_eq!(c.mode, Mode::RW);
    assert!(ka.global_atomics.is_empty());
    assert!(c.reduction.is_some());
    // a used result: recorded as a reason
    let ka = corpus("atomic_ticket.cl", &opts());
    assert_eq!(
        ka.global_atomics,
        vec![
            "atomic_inc on 'count' (atomic_ticket.cl:14:18): its returned value is used"
                .to_string()
        ]
    );
    assert_eq!(ka.array("count").unwrap().mode, Mode::RW);
}

#[test]
fn pointers_escaping_to_unknown_functions_make_the_array_whole() {
    let ka = inline(
        "float external(__global float *p);
        __kernel void k(__global float *a, __global float *b) {
            b[get_global_id(0)] = external(a + get_group_id(0) * 16);
        }",
        &opts(),
    );
    let a = ka.array("a").unwrap();
    let reason = a.whole.as_deref().expect("a whole");
    assert_eq!(reason, "'a' is passed to 'external' (test.cl:3:35)");
    assert_eq!(ka.array("b").unwrap().whole, None);
    assert_eq!(a.mode, Mode::RW);
}

#[test]
fn local_size_specialization_makes_group_ids_exact() {
    let options = AnalysisOptions {
        local_size: Some([64, 1, 1]),
        ..opts()
    };
    let ka = corpus("reduce_sum.cl", &options);
    assert!(!ka.params.iter().any(|p| p.name == "ls0"));
    let out = ka.array("out").unwrap();
    assert!(out.accesses.iter().all(|x| x.kind == AccessKind::MustWrite));
    same(
        &ka,
        &out.must_writes,
        "[gs0, go0, ng0] -> { W[x0, 0, 0] -> out[g] : x0 = go0 + 64g and 0 <= g < ng0 }",
    );
    // Without it, the group id is over-approximated and the write is a may-write.
    let ka = corpus("reduce_sum.cl", &opts());
    let out = ka.array("out").unwrap();
    assert!(out.accesses.iter().all(|x| x.kind == AccessKind::MayWrite));
    assert!(ka
        .notes
        .iter()
        .any(|n| n.contains("local size is not known")));
}

#[test]
fn specialization_and_linearization_kinds() {
    let mut options = opts();
    options.specialize.insert("width".into(), 40);
    let ka = corpus("stencil2d.cl", &options);
    let a = ka.array("in").unwrap();
    assert_eq!(a.linearization, Linearization::Specialized);
    assert!(ka.params.iter().all(|p| p.name != "width"));
    assert!(ka.params.iter().any(|p| p.name == "height"));
    let ka = corpus("stencil3d.cl", &opts());
    let a = ka.array("in").unwrap();
    assert_eq!(a.linearization, Linearization::Delinearized);
    assert_eq!(a.strides, vec!["nx*ny", "nx", "1"]);
}

#[test]
fn unsupported_constructs_make_the_kernel_unanalyzable() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels/invalid/uses_goto.cl");
    let source = std::fs::read_to_string(path).unwrap();
    let program =
        coarsen::parse_program("uses_goto.cl", &source, &coarsen::ParseOptions::default()).unwrap();
    let ka = analyze_kernel(&program, "uses_goto", &opts()).unwrap();
    assert!(!ka.analyzable);
    let reason = ka.reason.clone().unwrap();
    assert!(
        reason.contains("goto") && reason.contains("uses_goto.cl:"),
        "{reason}"
    );
    for a in &ka.arrays {
        assert!(a
            .whole
            .as_deref()
            .unwrap()
            .starts_with("kernel is not analyzable"));
    }
    assert_eq!(ka.array("a").unwrap().mode, Mode::R);
    let b = ka.array("b").unwrap();
    assert_eq!(b.mode, Mode::RW);
    // Every work-item may write every element of b.
    let ctx = Context::alloc();
    let all = map(
        &ctx,
        "[gs0, go0] -> { W[x0, 0, 0] -> b[i] : go0 <= x0 < go0 + gs0 }",
    )
    .intersect_params(set(&ctx, &ka.context))
    .unwrap();
    assert!(map(&ctx, &b.may_writes)
        .intersect_params(set(&ctx, &ka.context))
        .unwrap()
        .is_equal(&all)
        .unwrap());
}

#[test]
fn bad_names_are_errors() {
    let program = coarsen::parse_program(
        "t.cl",
        "__kernel void k(__global int *a, float f) { a[0] = 1; }",
        &Default::default(),
    )
    .unwrap();
    let e = analyze_kernel(&program, "nope", &opts()).unwrap_err();
    assert_eq!(e.to_string(), "t.cl: no kernel named 'nope' (kernels: k)");
    let mut options = opts();
    options.specialize.insert("f".into(), 1);
    let e = analyze_kernel(&program, "k", &options).unwrap_err();
    assert!(matches!(e, AnalysisError::UnknownParameter { .. }), "{e}");
    assert!(e.to_string().contains("valid: gs0, go0, ng0"), "{e}");
    let options = AnalysisOptions {
        local_size: Some([0, 1, 1]),
        ..opts()
    };
    assert!(matches!(
        analyze_kernel(&program, "k", &options),
        Err(AnalysisError::InvalidLocalSize { .. })
    ));
}

#[test]
fn whole_array_texts_are_parseable_and_display_is_stable() {
    let ka = corpus("scatter_conflict.cl", &opts());
    let ctx = Context::alloc();
    for a in &ka.arrays {
        for t in [&a.reads, &a.must_writes, &a.may_writes] {
            map(&ctx, t);
        }
        for acc in &a.accesses {
            map(&ctx, &acc.map);
        }
    }
    assert_eq!(
        ka.to_string(),
        corpus("scatter_conflict.cl", &opts()).to_string()
    );
}

#[test]
fn taking_the_address_of_a_variable_forgets_its_value() {
    let ka = inline(
        "void set(int *p) { *p = 7; }
        __kernel void k(__global float *a) {
            int x = get_global_id(0);
            set(&x);
            a[x] = 0.0f;
        }",
        &opts(),
    );
    let reason = ka
        .array("a")
        .unwrap()
        .whole
        .as_deref()
        .expect("a whole")
        .to_string();
    assert!(reason.contains("the address of 'x' is taken"), "{reason}");
}

#[test]
fn exponential_inlining_is_cut_off_with_a_reason() {
    let mut src = String::from("int f0(int x) { return x + 1; }\n");
    for i in 1..20 {
        src.push_str(&format!(
            "int f{i}(int x) {{ int y = x; y = y + 1; y = y * 2; return f{}(y) + f{}(y + 1); }}\n",
            i - 1,
            i - 1
        ));
    }
    src.push_str("__kernel void k(__global int *a) { int i = get_global_id(0); a[i] = f19(i); }\n");
    let ka = inline(&src, &opts());
    assert!(!ka.analyzable);
    assert!(
        ka.reason
            .as_deref()
            .unwrap()
            .contains("too large to analyze"),
        "{:?}",
        ka.reason
    );
    assert!(ka.array("a").unwrap().whole.is_some());
}

/// An induction variable, stepped once per iteration by a
/// loop-invariant amount (`p += 3`, `q--`), is its value at the loop's entry
/// plus the iteration count times its step: the subscripts stay affine and
/// exact. One that a `continue` may skip, that is stepped under a condition,
/// whose step the loop changes, that the body declares anew or that the
/// loop's condition steps too stays loop-carried: its array is whole, with
/// the reason.
#[test]
fn induction_variables_are_affine_in_the_iteration_count() {
    let ka = inline(
        "__kernel void k(__global float *a, __global float *b, __global float *c,
                         __global float *d, __global float *e, __global float *g,
                         __global float *hh) {
            int i = get_global_id(0);
            int p = i;
            int q = 2 * i;
            for (int k = 0; k < 4; k++) {
                a[p] = 0.0f;
                p += 3;
                b[q] = 1.0f;
                q--;
            }
            int r = i;
            for (int k = 0; k < 4; k++) {
                if (k == 2)
                    continue;
                c[r] = 2.0f;
                r++;
            }
            int s = i;
            for (int k = 0; k < 4; k++) {
                d[s] = 3.0f;
                if (k > 1)
                    s++;
            }
            int u = i;
            int step = 1;
            for (int k = 0; k < 4; k++) {
                e[u] = 4.0f;
                u += step;
                step++;
            }
            int f = i;
            for (int k = 0; k < 4; k++) {
                g[f] = 5.0f;
                int f = 0;
                f++;
            }
            int h = i;
            for (int k = 0; k < 4 && h++ >= 0; k++) {
                hh[h] = 6.0f;
                h++;
            }
        }",
        &opts(),
    );
    let a = ka.array("a").unwrap();
    assert_eq!(a.whole, None);
    same(
        &ka,
        &a.must_writes,
        "[gs0, go0] -> { W[x0, 0, 0] -> a[o] : go0 <= x0 < go0 + gs0 and exists (k : 0 <= k <= 3 and o = x0 + 3k) }",
    );
    let b = ka.array("b").unwrap();
    assert_eq!(b.whole, None);
    same(
        &ka,
        &b.must_writes,
        "[gs0, go0] -> { W[x0, 0, 0] -> b[o] : go0 <= x0 < go0 + gs0 and 2x0 - 3 <= o <= 2x0 }",
    );
    // Also not: a variable the body declares anew (`g[f]` reads the outer
    // `f`, which stays `i`), or one the loop's condition steps too.
    for name in ["c", "d", "e", "g", "hh"] {
        let reason = ka
            .array(name)
            .unwrap()
            .whole
            .as_deref()
            .unwrap_or_else(|| panic!("{name} whole"));
        assert!(
            reason.contains("is modified in the loop"),
            "{name}: {reason}"
        );
    }
}

/// The guarantee: a variable whose address is taken is an unknown value
/// wherever it is read (a store through the pointer may change it after
/// any assignment the analysis sees), and a loop whose condition steps its
/// counter too (`j++ < n`) is not a counted loop. Both were followed
/// before, and claimed must-writes of elements never written. An
/// element's address (`&a[k]`) leaves the pointer `a` as it is.
#[test]
fn variables_whose_address_is_taken_and_counters_stepped_by_the_condition_are_not_followed() {
    let ka = inline(
        "__kernel void k(__global int *a, __global int *b, __global int *c, __global int *d) {
            int i = get_global_id(0);
            int w = 0;
            int *p = &w;
            w = 1;
            *p = 5;
            a[i * 16 + w] = 7;
            for (int j = 0; j++ < 4; j++)
                b[i * 16 + j] = 7;
            int e = 3;
            c[i * 4 + e] = 1;
            __global int *q = &d[i];
            *q = 2;
        }",
        &opts(),
    );
    let a = ka.array("a").unwrap().whole.clone().expect("a whole");
    assert!(a.contains("the address of 'w' is taken at"), "{a}");
    let b = ka.array("b").unwrap().whole.clone().expect("b whole");
    assert!(b.contains("'j' is modified in the loop"), "{b}");
    for name in ["c", "d"] {
        let arr = ka.array(name).unwrap();
        assert_eq!(arr.whole, None, "{name}: {:?}", ka.notes);
    }
    same(
        &ka,
        &ka.array("d").unwrap().must_writes,
        "[gs0, go0] -> { W[x0, 0, 0] -> d[x0] : go0 <= x0 < go0 + gs0 }",
    );
}

/// `do { ...; j++; } while (j < n);` (the front end's `while (1)
/// { ...; j++; if (!(j < n)) break; }`) is a counted loop whose first
/// iteration runs whatever the condition says: exact must-writes where the
/// condition is monotone in the iterator. A variable stepped twice is not
/// its iterator, and such a loop stays a while loop.
#[test]
fn do_while_loops_are_counted_loops_whose_first_iteration_always_runs() {
    let ka = inline(
        "__kernel void k(__global float *a, __global const float *b, __global float *c, int n) {
            int i = get_global_id(0);
            int j = 0;
            do {
                a[i + j] = b[i + 2 * j];
                j++;
            } while (j < n);
            int m = 0;
            do {
                c[i + m] = 1.0f;
                m += 2;
                m--;
            } while (m < n);
        }",
        &opts(),
    );
    let a = ka.array("a").unwrap();
    assert_eq!(a.whole, None, "{:?}", ka.notes);
    same(
        &ka,
        &a.must_writes,
        "[gs0, go0, n] -> { W[x0, 0, 0] -> a[o] : go0 <= x0 < go0 + gs0 and (o = x0 or x0 <= o < x0 + n) }",
    );
    let b = ka.array("b").unwrap();
    assert_eq!(b.whole, None);
    same(
        &ka,
        &b.reads,
        "[gs0, go0, n] -> { W[x0, 0, 0] -> b[o] : go0 <= x0 < go0 + gs0 and exists (t : o = x0 + 2t and (t = 0 or 0 <= t < n)) }",
    );
    let reason = ka.array("c").unwrap().whole.clone().expect("c whole");
    assert!(reason.contains("is modified in the loop"), "{reason}");
}

/// The integer members of a struct passed by value that the
/// kernel never changes are parameters, read from the argument's bytes at
/// launch (`ParamSource::StructMember`: offset, size, signedness); a
/// struct the kernel changes, one whose address is taken, a copy of one and
/// a float member are not followed.
#[test]
fn members_of_an_unchanged_struct_argument_are_parameters() {
    use access_analysis::ParamSource;
    let ka = inline(
        "typedef struct { float scale; int width; ushort rows; } geo;
        __kernel void k(__global float *a, __global const float *b, geo p) {
            int x = get_global_id(0);
            int y = get_global_id(1);
            if (x < p.width && y < p.rows)
                a[y * p.width + x] = p.scale * b[y * p.width + x];
        }",
        &opts(),
    );
    let a = ka.array("a").unwrap();
    assert_eq!(a.whole, None, "{:?}", ka.notes);
    let members: Vec<(&str, ParamSource)> = ka
        .params
        .iter()
        .filter(|p| matches!(p.source, ParamSource::StructMember { .. }))
        .map(|p| (p.name.as_str(), p.source))
        .collect();
    assert_eq!(
        members,
        vec![
            (
                "p_width",
                ParamSource::StructMember {
                    arg_index: 2,
                    offset: 4,
                    size: 4,
                    signed: true
                }
            ),
            (
                "p_rows",
                ParamSource::StructMember {
                    arg_index: 2,
                    offset: 8,
                    size: 2,
                    signed: false
                }
            ),
        ]
    );
    // must-writes: the guard is affine in the members
    assert!(a
        .accesses
        .iter()
        .all(|x| x.kind != access_analysis::AccessKind::MayWrite));

    // The members of a union that share bytes: one parameter per size and
    // signedness, each read from the same bytes.
    let ka = inline(
        "typedef union { int s; uint u; short h; } word;
        __kernel void k(__global float *a, word w) {
            int i = get_global_id(0);
            if (i < w.s && i < w.u && i < w.h)
                a[i] = 1.0f;
        }",
        &opts(),
    );
    let mut members: Vec<ParamSource> = ka
        .params
        .iter()
        .filter(|p| matches!(p.source, ParamSource::StructMember { .. }))
        .map(|p| p.source)
        .collect();
    members.sort_by_key(|s| format!("{s}"));
    assert_eq!(
        members,
        vec![
            ParamSource::StructMember {
                arg_index: 1,
                offset: 0,
                size: 2,
                signed: true
            },
            ParamSource::StructMember {
                arg_index: 1,
                offset: 0,
                size: 4,
                signed: true
            },
            ParamSource::StructMember {
                arg_index: 1,
                offset: 0,
                size: 4,
                signed: false
            },
        ]
    );

    for (body, why) in [
        ("p.width = 3;", "assigned"),
        ("p.width++;", "stepped"),
        ("__private geo *q = &p;", "its address taken"),
        ("{ int p = 1; }", "a local of its name"),
    ] {
        let ka = inline(
            &format!(
                "typedef struct {{ float scale; int width; }} geo;
                __kernel void k(__global float *a, geo p) {{
                    {body}
                    a[get_global_id(0) * p.width] = 1.0f;
                }}"
            ),
            &opts(),
        );
        assert!(
            ka.params
                .iter()
                .all(|p| !matches!(p.source, ParamSource::StructMember { .. })),
            "{why}: {:?}",
            ka.params
        );
        let a = ka.array("a").unwrap();
        assert!(
            a.whole
                .as_deref()
                .is_some_and(|w| w.contains("member of a struct value")),
            "{why}: {:?}",
            a.whole
        );
    }
}
