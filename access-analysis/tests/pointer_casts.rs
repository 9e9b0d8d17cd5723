//! Accesses through pointers cast to another element type whose
//! size divides or is divided by the buffer's: `(__global float4 *)x` on a
//! `float` buffer touches four floats per element, `(__global uint *)p` on
//! a `uint2` buffer part of one pair (a may-write, and a read of the pair);
//! other casts stay refused.

mod common;

use access_analysis::AnalysisOptions;
use common::{assert_relation as relation_is, inline, Launch};

#[test]
fn a_cast_to_a_wider_type_touches_every_element_it_spans() {
    let ka = inline(
        "__kernel void k(__global const float *x, __global float *y) { int i = get_global_id(0); \
         __global const float4 *x4 = (__global const float4 *)x; \
         ((__global float4 *)y)[i] = x4[i] + x4[i + 1]; }",
        &AnalysisOptions::default(),
    );
    let l = Launch::new([4, 1, 1], [2, 1, 1]);
    let span = |i: i64, k: i64| (0..4).map(move |e| ([i, 0, 0], 4 * (i + k) + e));
    let reads: Vec<_> = (0..4).flat_map(|i| span(i, 0).chain(span(i, 1))).collect();
    let writes: Vec<_> = (0..4).flat_map(|i| span(i, 0)).collect();
    relation_is(&ka, "x", "reads", &l, &reads);
    relation_is(&ka, "y", "must", &l, &writes);
}

#[test]
fn a_cast_to_a_narrower_type_touches_part_of_an_element() {
    let ka = inline(
        "__kernel void k(__global uint2 *p) { int i = get_global_id(0); \
         __global uint *w = (__global uint *)p; w[2 * i + 1] = w[2 * i] + 1u; \
         __global uint2 *q = (__global uint2 *)(w + 2); q[i].x = 0u; }",
        &AnalysisOptions::default(),
    );
    let l = Launch::new([4, 1, 1], [2, 1, 1]);
    let own: Vec<_> = (0..4).map(|i| ([i, 0, 0], i)).collect();
    let next: Vec<_> = (0..4).map(|i| ([i, 0, 0], i + 1)).collect();
    let both: Vec<_> = own.iter().chain(&next).cloned().collect();
    // part of pair i written (read too), part of pair i + 1 (back through
    // a cast to uint2 at an offset of two uints: one pair)
    relation_is(&ka, "p", "must", &l, &[]);
    relation_is(&ka, "p", "may", &l, &both);
    relation_is(&ka, "p", "reads", &l, &both);
}

#[test]
fn a_cast_back_off_the_elements_or_between_sizes_that_do_not_divide_is_not_followed() {
    // back to uint2 one uint past a pair: no whole number of pairs
    let ka = inline(
        "__kernel void k(__global uint2 *p) { int i = get_global_id(0); \
         __global uint2 *q = (__global uint2 *)((__global uint *)p + 1); q[i] = (uint2)(0u, 1u); }",
        &AnalysisOptions::default(),
    );
    let p = ka.array("p").unwrap();
    assert!(
        p.whole
            .as_deref()
            .is_some_and(|w| w.contains("pointer cast")),
        "{:?}",
        p.whole
    );
    // 12-byte structs over float4s: refused by the front end
    let program = coarsen::parse_program(
        "test.cl",
        "typedef struct { float a, b, c; } T; \
         __kernel void k(__global float4 *p) { __global T *t = (__global T *)p; t[get_global_id(0)].a = 0.0f; }",
        &coarsen::ParseOptions::default(),
    )
    .unwrap();
    let why = program.unsupported_in("k");
    assert!(
        why.iter()
            .any(|d| d.to_string().contains("pointer cast from")),
        "{why:?}"
    );
}
