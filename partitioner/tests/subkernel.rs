//! Subkernel rewriting: the rewritten source parses as OpenCL C, has the extra
//! arguments, and rebases subscripts.

mod common;

use common::{corpus_names, program};
use partitioner::subkernel::rewrite;
use ranges_format::ExtraArgMeaning;

fn reparse(src: &str) {
    coarsen::parse_program("sub.cl", src, &Default::default())
        .unwrap_or_else(|e| panic!("subkernel does not parse: {e}\n{src}"));
}

#[test]
fn vadd_subscripts_are_rebased() {
    let p = program("vadd");
    let s = rewrite(&p, "vadd", &[0, 1, 2]).unwrap();
    reparse(&s.source);
    // every access rebased and checked by the run-time guard
    assert!(
        s.source.contains("c[__clpart_w((long)(i) - __clpart_base_c, __clpart_wlo_c, __clpart_whi_c, __clpart_len_c, &__clpart_bad, 2)] = a[__clpart_r((long)(i) - __clpart_base_a, __clpart_rlo_a, __clpart_rhi_a, __clpart_len_a, &__clpart_bad, 0)]"),
        "{}",
        s.source
    );
    assert_eq!(s.guarded, vec![0, 1, 2]);
    assert_eq!(s.extra_args.len(), 3 * 6 + 1);
    assert_eq!(
        s.extra_args[0].meaning,
        ExtraArgMeaning::ArrayBase { arg_index: 0 }
    );
    assert_eq!(
        s.extra_args.last().unwrap().meaning,
        ExtraArgMeaning::GuardFlags
    );
    // the private accumulator, flushed at the end of the kernel
    assert!(
        s.source.contains("ulong __clpart_bad = 0;")
            && s.source
                .contains("__clpart_flush(__clpart_bad, __clpart_guard);"),
        "{}",
        s.source
    );
}

#[test]
fn group_id_and_sizes_return_unsplit_values() {
    let p = program("reduce_sum");
    let s = rewrite(&p, "reduce_sum", &[0, 1]).unwrap();
    reparse(&s.source);
    assert!(
        s.source
            .contains("(get_group_id(0) + __clpart_group_base0)"),
        "{}",
        s.source
    );
    assert!(s
        .extra_args
        .iter()
        .any(|a| a.meaning == ExtraArgMeaning::GroupIdBase(0)));
}

#[test]
fn every_corpus_kernel_rewrites_to_valid_opencl() {
    for name in corpus_names() {
        let p = program(&name);
        let k = p.kernel(None).unwrap();
        let ptrs: Vec<u32> = k
            .params
            .iter()
            .enumerate()
            .filter(|(_, q)| {
                matches!(
                    q.space(),
                    coarsen::ir::AddrSpace::Global | coarsen::ir::AddrSpace::Constant
                )
            })
            .map(|(i, _)| i as u32)
            .collect();
        match rewrite(&p, &k.name, &ptrs) {
            Ok(s) => reparse(&s.source),
            Err(e) => eprintln!("{name}: {e}"),
        }
    }
}

/// Every buffer of every corpus kernel is checked by the run-time guard,
/// except the pointers copied into variables of the kernels in
/// [`COPIED_POINTERS`] (which the guard cannot follow: those kernels run
/// unsplit). The pointers cast to another element type of the `ptr_cast_*`
/// and `view_*` kernels are views the guard checks.
/// The corpus kernels that copy buffer pointers into variables (an array of
/// pointers, a pointer through an integer, pointers swapped in a loop).
const COPIED_POINTERS: &[&str] = &["ptr_array", "ptr_int_cast", "ptr_swap"];

#[test]
fn guard_covers_every_corpus_buffer() {
    let mut unguarded = Vec::new();
    for name in corpus_names() {
        let p = program(&name);
        let k = p.kernel(None).unwrap();
        let Ok(s) = rewrite(&p, &k.name, &[]) else {
            continue;
        };
        reparse(&s.source);
        let copied = COPIED_POINTERS.contains(&name.as_str());
        for (i, why) in &s.unguarded {
            if !copied {
                unguarded.push(format!("{name}: {i}: {why}"));
            }
        }
        if copied {
            assert!(
                !s.unguarded.is_empty(),
                "{name}: the copied pointer must be reported"
            );
        }
        let n_buffers = k
            .params
            .iter()
            .filter(|q| {
                matches!(
                    q.space(),
                    coarsen::ir::AddrSpace::Global
                        | coarsen::ir::AddrSpace::Constant
                        | coarsen::ir::AddrSpace::Local
                )
            })
            .count();
        assert_eq!(s.guarded.len() + s.unguarded.len(), n_buffers, "{name}");
    }
    unguarded.sort();
    assert!(
        unguarded.is_empty(),
        "unguarded buffers:\n{}",
        unguarded.join("\n")
    );
}

/// Pointers passed to helpers are checked inside a clone of the
/// helper; pointer arithmetic chains and atomics are checked in place.
#[test]
fn guard_clones_helpers_and_checks_pointer_chains() {
    let p = program("helper_call");
    let s = rewrite(&p, "helper_call", &[0, 1, 2]).unwrap();
    reparse(&s.source);
    assert!(s.unguarded.is_empty(), "{:?}", s.unguarded);
    assert!(
        s.source.contains(
            "float pair_avg__clpart_b(__global const float *p, int i, long __clpart_base_b"
        ),
        "{}",
        s.source
    );
    assert!(
        s.source
            .contains("pair_avg__clpart_b(b, i, __clpart_base_b"),
        "{}",
        s.source
    );
    let p = program("fan1");
    let s = rewrite(&p, "fan1", &[0, 1]).unwrap();
    reparse(&s.source);
    assert!(s.unguarded.is_empty(), "{:?}", s.unguarded);
    assert!(
        s.source.contains("m_dev[__clpart_w((long)(((m_dev + size"),
        "{}",
        s.source
    );
    let p = program("histogram");
    let s = rewrite(&p, "histogram", &[]).unwrap();
    reparse(&s.source);
    assert!(
        s.source.contains("atomic_inc(&bins[__clpart_rw("),
        "{}",
        s.source
    );
}

/// A pointer the guard cannot follow is reported with its reason
/// (a copy of the pointer itself, `q = a`, is a view).
#[test]
fn guard_checks_accesses_through_a_pointer_into_a_buffer() {
    let src = "__kernel void k(__global float *a, __global float *b) {\n    __global float *q = a + 1;\n    b[get_global_id(0)] = q[get_global_id(0)];\n}\n";
    let p = coarsen::parse_program("k.cl", src, &Default::default()).unwrap();
    let s = rewrite(&p, "k", &[]).unwrap();
    reparse(&s.source);
    assert_eq!(s.guarded, vec![0, 1], "{:?}", s.unguarded);
    // the access's address, less the parameter, is the checked index
    assert!(
        s.source
            .contains("a[__clpart_r((long)((&(q[get_global_id(0)]) - a))"),
        "{}",
        s.source
    );
}

#[test]
fn guard_reports_pointers_it_cannot_check() {
    let src = "__kernel void k(__global float *a, __global float *b) {\n    __global float *q = get_global_id(0) > 3 ? a : a + 1;\n    b[get_global_id(0)] = q[get_global_id(0)];\n}\n";
    let p = coarsen::parse_program("k.cl", src, &Default::default()).unwrap();
    let s = rewrite(&p, "k", &[]).unwrap();
    reparse(&s.source);
    assert_eq!(s.guarded, vec![1]);
    assert_eq!(s.unguarded.len(), 1);
    assert!(s.unguarded[0].1.contains("'a'"), "{:?}", s.unguarded);
}

/// The body between the per-work-group test's `if` and `else`: the fast copy.
fn fast_copy(src: &str) -> &str {
    let a = src
        .find("if (__clpart_fast) {")
        .unwrap_or_else(|| panic!("no per-work-group test:\n{src}"));
    let b = src[a..].find("} else {").map(|b| a + b).unwrap();
    &src[a..b]
}

#[test]
fn proven_accesses_use_plain_indices_in_the_fast_copy() {
    let p = program("vadd");
    let s = rewrite(&p, "vadd", &[0, 1, 2]).unwrap();
    reparse(&s.source);
    let fast = fast_copy(&s.source);
    assert!(fast.contains("c[((long)(i) - __clpart_base_c)] = a[((long)(i) - __clpart_base_a)] + b[((long)(i) - __clpart_base_b)]"), "{fast}");
    // the checked copy keeps every check; the test compares each access's
    // interval over the group with its window
    assert!(
        s.source.contains("} else {")
            && s.source
                .contains("c[__clpart_w((long)(i) - __clpart_base_c"),
        "{}",
        s.source
    );
    assert!(
        s.source.contains("(__clpart_g3 <= __clpart_rhi_a - 1)")
            || s.source.contains("<= __clpart_rhi_a - 1)"),
        "{}",
        s.source
    );
    // compiled out with the checks
    assert!(
        s.source.contains("#ifndef CLPART_UNCHECKED"),
        "{}",
        s.source
    );
}

#[test]
fn the_fast_copy_keeps_checks_it_cannot_prove() {
    // a data-dependent subscript, a narrowing conversion of a loaded value,
    // and a variable assigned twice stay checked in the fast copy
    let src = "__kernel void k(__global const int *idx, __global int *a, __global int *b, int n) {
    int i = get_global_id(0);
    int j = i;
    j = j + n;
    a[idx[i]] = 1;
    b[j] = 2;
}";
    let p = coarsen::parse_program("k.cl", src, &Default::default()).unwrap();
    let s = rewrite(&p, "k", &[0, 1, 2]).unwrap();
    reparse(&s.source);
    let fast = fast_copy(&s.source);
    assert!(fast.contains("a[__clpart_w("), "{fast}");
    assert!(fast.contains("b[__clpart_w("), "{fast}");
    assert!(
        fast.contains("idx[((long)(i) - __clpart_base_idx)]"),
        "{fast}"
    );
}

#[test]
fn counters_declared_before_their_loop_are_bounded_per_work_group() {
    // PolyBench/GPU's loops: `int k; for (k = 0; k < nk; k++)`. The
    // counter is assigned by the loop alone and read only inside it, so the
    // group's test bounds it like a counter the loop declares.
    let src = "__kernel void gemm(__global float *a, __global float *b, __global float *c,
                   float alpha, float beta, int ni, int nj, int nk) {
    int j = get_global_id(0);
    int i = get_global_id(1);
    if ((i < ni) && (j < nj)) {
        c[i * nj + j] *= beta;
        int k;
        for (k = 0; k < nk; k++)
            c[i * nj + j] += alpha * a[i * nk + k] * b[k * nj + j];
    }
}";
    let p = coarsen::parse_program("gemm.cl", src, &Default::default()).unwrap();
    let s = rewrite(&p, "gemm", &[0, 1, 2]).unwrap();
    reparse(&s.source);
    let fast = fast_copy(&s.source);
    assert!(
        fast.contains("a[((long)(i * nk + k) - __clpart_base_a)]")
            && fast.contains("b[((long)(k * nj + j) - __clpart_base_b)]"),
        "{fast}"
    );
    // Read after its loop (where it holds the bound), assigned in the body,
    // `__local`, or counting two loops, the counter is not bounded: those
    // accesses keep their checks.
    for (what, body) in [
        (
            "read after the loop",
            "int k; for (k = 0; k < n; k++) a[k] = 1; a[k - 1] = 2;",
        ),
        (
            "assigned in the body",
            "int k; for (k = 0; k < n; k++) { a[k] = 1; k = k + 1; }",
        ),
        (
            "shared by the work-items",
            "__local int k; for (k = 0; k < n; k++) a[k] = 1;",
        ),
        (
            "two loops",
            "int k; for (k = 0; k < n; k++) a[k] = 1; for (k = 0; k < 2 * n; k++) a[k] = 2;",
        ),
    ] {
        let src = format!("__kernel void k(__global int *a, int n) {{ {body} }}");
        let p = coarsen::parse_program("k.cl", &src, &Default::default()).unwrap();
        let s = rewrite(&p, "k", &[0]).unwrap();
        reparse(&s.source);
        assert!(s.source.contains("a[__clpart_w("), "{what}: {}", s.source);
        assert!(!s.source.contains("a[((long)(k)"), "{what}: {}", s.source);
    }
}

#[test]
fn local_tiles_stay_at_kernel_scope() {
    let p = program("matmul_tiled");
    let s = rewrite(&p, "matmul_tiled", &[0, 1, 2]).unwrap();
    reparse(&s.source);
    let fast = fast_copy(&s.source);
    assert!(!fast.contains("__local float"), "{fast}");
    let test = s
        .source
        .find("#ifndef CLPART_UNCHECKED\n    /* one test")
        .unwrap();
    let decl = s.source.find("__local float as[TILE][TILE];").unwrap();
    assert!(decl < test, "{}", s.source);
    assert!(
        !fast.contains("__clpart_r(") && !fast.contains("__clpart_w("),
        "every tile load is proven: {fast}"
    );
}

#[test]
fn narrowing_conversions_are_tested_not_assumed() {
    // (uchar)i is exact only while i < 256: the test requires it at run time
    let p = program("uchar_subscript");
    let k = p.kernel(None).unwrap().name.clone();
    let n = p.kernel(None).unwrap().params.len() as u32;
    let s = rewrite(&p, &k, &(0..n).collect::<Vec<_>>()).unwrap();
    reparse(&s.source);
    assert!(s.source.contains("<= 255L)"), "{}", s.source);
}

// ---------------------------------------------------------------------------
// The guard checks boxes

fn boxed_rewrite(name: &str, src: &str, boxes: &[(u32, &[&str])]) -> ranges_format::Subkernel {
    boxed_rewrite_specialized(name, src, boxes, &[])
}

/// [`boxed_rewrite`] for an analysis specialized on these scalar values.
fn boxed_rewrite_specialized(
    name: &str,
    src: &str,
    boxes: &[(u32, &[&str])],
    specialized: &[(&str, i64)],
) -> ranges_format::Subkernel {
    let specialized = specialized
        .iter()
        .map(|(n, v)| (n.to_string(), *v))
        .collect();
    let p = coarsen::parse_program(&format!("{name}.cl"), src, &Default::default()).unwrap();
    let strides: Vec<(u32, Vec<String>)> = boxes
        .iter()
        .map(|(i, s)| (*i, s.iter().map(|x| x.to_string()).collect()))
        .collect();
    let boxed: Vec<partitioner::subkernel::BoxedArray> = strides
        .iter()
        .map(|(i, s)| partitioner::subkernel::BoxedArray {
            arg_index: *i,
            strides: s,
            read_parts: 0,
        })
        .collect();
    let k = p.kernel(None).unwrap();
    let ptrs: Vec<u32> = (0..k.params.len() as u32)
        .filter(|&i| matches!(k.params[i as usize].ty, coarsen::ir::Type::Pointer { .. }))
        .collect();
    let s = partitioner::subkernel::rewrite_with_boxes(&p, name, &ptrs, &boxed, 3, &specialized)
        .unwrap();
    reparse(&s.source);
    s
}

const COLSUM: &str =
    "__kernel void colsum(__global const float *A, __global float *out, int m, int n) {
    int j = get_global_id(0);
    if (j < n) {
        float s = 0.0f;
        for (int i = 0; i < m; i++)
            s += A[i * n + j];
        out[j] = s;
    }
}";

#[test]
fn a_boxed_array_gets_box_arguments_and_box_checks() {
    let s = boxed_rewrite("colsum", COLSUM, &[(0, &["n", "1"])]);
    // A's six window arguments, then its box arguments for dimension 1
    let metas: Vec<&ExtraArgMeaning> = s.extra_args.iter().map(|e| &e.meaning).collect();
    let at = metas
        .iter()
        .position(|m| **m == ExtraArgMeaning::Extent { arg_index: 0 })
        .unwrap();
    assert_eq!(
        &metas[at + 1..at + 7],
        &[
            &ExtraArgMeaning::BoxStride {
                arg_index: 0,
                dim: 1
            },
            &ExtraArgMeaning::BoxExtent {
                arg_index: 0,
                dim: 1
            },
            &ExtraArgMeaning::BoxReadLo {
                arg_index: 0,
                dim: 1
            },
            &ExtraArgMeaning::BoxReadHi {
                arg_index: 0,
                dim: 1
            },
            &ExtraArgMeaning::BoxWriteLo {
                arg_index: 0,
                dim: 1
            },
            &ExtraArgMeaning::BoxWriteHi {
                arg_index: 0,
                dim: 1
            },
        ]
    );
    assert_eq!(s.extra_args[at + 1].name, "__clpart_bs1_A");
    // 'out' is 1-D: no box arguments
    assert!(s
        .extra_args
        .iter()
        .filter_map(|e| e.meaning.box_arg())
        .all(|(a, _)| a == 0));
    // the checked copy checks the absolute index's component
    assert!(
        s.source.contains("A[__clpart_bchk1((long)(i * n + j) - __clpart_base_A, 1, __clpart_rlo_A, __clpart_rhi_A, __clpart_len_A, &__clpart_bad, 0, __clpart_base_A, __clpart_bs1_A, __clpart_be1_A, __clpart_brl1_A, __clpart_brh1_A)]"),
        "{}",
        s.source
    );
    assert!(
        s.source
            .contains("out[__clpart_w((long)(j) - __clpart_base_out,"),
        "{}",
        s.source
    );
    // the component check: (a / stride) % extent in [lo, hi], never a division by zero
    assert!(
        s.source
            .contains("long c = (a / (st > 0 ? st : 1L)) % (ex > 0 ? ex : 1L);"),
        "{}",
        s.source
    );
    assert!(
        s.source
            .contains("return (st == 0) | ((c >= lo) & (c + (st == 1 ? n - 1 : 0L) <= hi));"),
        "{}",
        s.source
    );
    // compiled out with the guard
    assert!(
        s.source.contains(
            "#define __clpart_bchk1(i, n, lo, hi, len, bad, s, b, st1, ex1, lo1, hi1) (i)"
        ),
        "{}",
        s.source
    );
    // the fast path: `i * n + j` splits as R * n + j, j narrowed by `j < n`;
    // no division in the prologue
    let prologue = &s.source[s.source.find("int __clpart_fast = 1;").unwrap()
        ..s.source.find("if (__clpart_fast)").unwrap()];
    assert!(
        prologue.contains("__clpart_fast &= (__clpart_bs1_A == 0) | ((__clpart_bs1_A == 1L) & ((long)n == __clpart_be1_A) & (__clpart_g7 >= 0L) & (__clpart_g10 < (long)n) & (__clpart_g7 >= __clpart_brl1_A) & (__clpart_g10 <= __clpart_brh1_A));"),
        "{prologue}"
    );
    assert!(
        !prologue.contains(" / ") && !prologue.contains('%'),
        "{prologue}"
    );
    // the fast copy indexes plainly
    assert!(
        s.source
            .contains("s += A[((long)(i * n + j) - __clpart_base_A)];"),
        "{}",
        s.source
    );
}

#[test]
fn box_checks_of_three_dimensions_read_modify_writes_and_helpers() {
    // 3-D: two checked dimensions
    let src = "__kernel void plane(__global float *v, int nx, int ny, int z) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    v[(z * ny + y) * nx + x] += 1.0f;
}";
    let s = boxed_rewrite("plane", src, &[(0, &["nx*ny", "nx", "1"])]);
    assert_eq!(
        s.extra_args
            .iter()
            .filter(|e| e.meaning.box_arg().is_some())
            .count(),
        12
    );
    assert!(s.extra_args.iter().any(|e| e.meaning
        == ExtraArgMeaning::BoxWriteHi {
            arg_index: 0,
            dim: 2
        }));
    // a read-modify-write checks both windows and both boxes
    assert!(
        s.source.contains("v[__clpart_brw2((long)((z * ny + y) * nx + x) - __clpart_base_v, __clpart_rlo_v, __clpart_rhi_v, __clpart_wlo_v, __clpart_whi_v, __clpart_len_v, &__clpart_bad, 0, __clpart_base_v, __clpart_bs1_v, __clpart_be1_v, __clpart_brl1_v, __clpart_brh1_v, __clpart_bwl1_v, __clpart_bwh1_v, __clpart_bs2_v, __clpart_be2_v, __clpart_brl2_v, __clpart_brh2_v, __clpart_bwl2_v, __clpart_bwh2_v)]"),
        "{}",
        s.source
    );
    // the per-group proof splits (z * ny + y) * nx + x as x + nx * (y + ny * z):
    // the strides nest, the extents are nx and ny, both components proven
    let prologue = &s.source[s.source.find("int __clpart_fast = 1;").unwrap()
        ..s.source.find("if (__clpart_fast)").unwrap()];
    let proof = prologue
        .lines()
        .find(|l| {
            l.contains("__clpart_fast &= ((__clpart_bs1_v == 0) & (__clpart_bs2_v == 0)) | (")
        })
        .expect(prologue);
    for part in [
        "(__clpart_bs2_v == 1L)",
        "(__clpart_bs1_v == __clpart_g",
        "((long)nx == __clpart_be2_v)",
        "((long)ny == __clpart_be1_v)",
        "< (long)nx)",
        "< (long)ny)",
    ] {
        assert!(proof.contains(part), "{part}: {proof}");
    }
    for bound in [
        "__clpart_brl1_v",
        "__clpart_brh1_v",
        "__clpart_bwl1_v",
        "__clpart_bwh1_v",
        "__clpart_brl2_v",
        "__clpart_brh2_v",
        "__clpart_bwl2_v",
        "__clpart_bwh2_v",
    ] {
        assert!(proof.contains(bound), "{bound}: {proof}");
    }
    // a 3-D subscript that does not split (a vector load): only without a box check
    let src = "__kernel void plane2(__global const float *v, __global float2 *o, int nx, int ny) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    o[y * nx + x] = vload2((y * ny + 1) * nx + x, v);
}";
    let s = boxed_rewrite("plane2", src, &[(0, &["nx*ny", "nx", "1"])]);
    assert!(
        s.source
            .contains("__clpart_fast &= ((__clpart_bs1_v == 0) & (__clpart_bs2_v == 0));"),
        "{}",
        s.source
    );
    assert!(s.source.contains("int ok = (i >= lo) & (i <= hi - n) & __clpart_bin(a, n, st1, ex1, lo1, hi1) & __clpart_bin(a, n, st2, ex2, lo2, hi2);"), "{}", s.source);

    // 2-D, a subscript that does not split as R * S + C (a vector load)
    let src = "__kernel void pairs(__global const float *A, __global float2 *out, int n) {
    int j = get_global_id(0);
    int i = get_global_id(1);
    out[i * n + j] = vload2(i * n + j, A);
}";
    let s = boxed_rewrite("pairs", src, &[(0, &["n", "1"]), (1, &["n", "1"])]);
    assert!(
        s.source.contains("__clpart_fast &= (__clpart_bs1_A == 0);"),
        "{}",
        s.source
    );
    assert!(s.source.contains("__clpart_bchk1((long)((long)2 * (long)(i * n + j)) - __clpart_base_A, 2, __clpart_rlo_A"), "{}", s.source);
    // ... while out's subscript does
    assert!(
        s.source
            .contains("__clpart_fast &= (__clpart_bs1_out == 0) | ((__clpart_bs1_out == 1L)"),
        "{}",
        s.source
    );

    // a helper taking the buffer gets the box arguments too
    let src = "float at(__global const float *p, int k) { return p[k]; }
__kernel void via(__global const float *A, __global float *out, int n) {
    int j = get_global_id(0);
    int i = get_global_id(1);
    out[i * n + j] = at(A, i * n + j);
}";
    let s = boxed_rewrite("via", src, &[(0, &["n", "1"])]);
    assert!(s.source.contains("ulong *__clpart_badp, long __clpart_bs1_A, long __clpart_be1_A, long __clpart_brl1_A, long __clpart_brh1_A, long __clpart_bwl1_A, long __clpart_bwh1_A)"), "{}", s.source);
    assert!(s.source.contains("&__clpart_bad, __clpart_bs1_A, __clpart_be1_A, __clpart_brl1_A, __clpart_brh1_A, __clpart_bwl1_A, __clpart_bwh1_A)"), "{}", s.source);
    assert!(s.source.contains("p[__clpart_bchk1((long)(k) - __clpart_base_A, 1, __clpart_rlo_A, __clpart_rhi_A, __clpart_len_A, __clpart_badp, 0, __clpart_base_A, __clpart_bs1_A"), "{}", s.source);
}

#[test]
fn boxes_over_literal_strides_are_proven_per_work_group() {
    // `a[i + y*1000]`: the extent is the strides' ratio, a literal; the
    // subscript splits by it without division, and the test requires the
    // launch's extent to be that literal
    let src =
        "__kernel void mm(__global float *c, __global const float *a, __global const float *b) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    float e = 0.0f;
    for (int i = 0; i < 1000; i++)
        e += a[i + y * 1000] * b[x + i * 1000];
    c[x + y * 1000] = e;
}";
    let s = boxed_rewrite(
        "mm",
        src,
        &[
            (0, &["1000", "1"]),
            (1, &["1000", "1"]),
            (2, &["1000", "1"]),
        ],
    );
    let fast = fast_copy(&s.source);
    assert!(
        fast.contains("a[((long)(i + y * 1000) - __clpart_base_a)]")
            && fast.contains("b[((long)(x + i * 1000) - __clpart_base_b)]")
            && fast.contains("c[((long)(x + y * 1000) - __clpart_base_c)]"),
        "{fast}"
    );
    assert!(
        s.source
            .contains("(__clpart_bs1_a == 1L) & (1000L == __clpart_be1_a)"),
        "{}",
        s.source
    );
    // strides that do not nest (1000 is no multiple of 3) prove nothing
    let s = boxed_rewrite("mm", src, &[(0, &["1000", "3"])]);
    assert!(
        s.source.contains("__clpart_fast &= (__clpart_bs1_c == 0);"),
        "{}",
        s.source
    );
}

#[test]
fn specialized_extents_split_subscripts_written_with_their_arguments() {
    // a plane of a 3-D convolution specialized on nj = nk = 256: the
    // strides are literals, the subscript names the arguments; each
    // argument read as its value is required to be it at the launch
    let src =
        "__kernel void conv(__global const float *a, __global float *b, int nj, int nk, int i) {
    int k = get_global_id(0);
    int j = get_global_id(1);
    if (j > 0 && j < nj - 1 && k > 0 && k < nk - 1) {
        float s = 0.0f;
        for (int dj = -1; dj <= 1; dj++)
            for (int dk = -1; dk <= 1; dk++)
                s += a[(i - 1) * nj * nk + (j + dj) * nk + (k + dk)];
        b[i * nj * nk + j * nk + k] = s;
    }
}";
    let strides: &[&str] = &["65536", "256", "1"];
    let s = boxed_rewrite_specialized(
        "conv",
        src,
        &[(0, strides), (1, strides)],
        &[("nj", 256), ("nk", 256)],
    );
    let prologue = &s.source[s.source.find("int __clpart_fast = 1;").unwrap()
        ..s.source.find("if (__clpart_fast)").unwrap()];
    for array in ["a", "b"] {
        assert!(
            !prologue.contains(&format!(
                "&= ((__clpart_bs1_{array} == 0) & (__clpart_bs2_{array} == 0));"
            )),
            "{prologue}"
        );
    }
    assert!(
        prologue.contains("((long)nk == 256L)") && prologue.contains("((long)nj == 256L)"),
        "{prologue}"
    );
    // unspecialized, the arguments are not read as values
    let s = boxed_rewrite("conv", src, &[(0, strides)]);
    assert!(!s.source.contains("((long)nk == 256L)"), "{}", s.source);
}

#[test]
fn stencil_subscripts_through_a_local_split() {
    // idx = y * width + x: idx - 1, idx + width, idx - width all split,
    // with x narrowed by the conditions
    let p = program("stencil2d");
    let src = p.source.clone();
    let s = boxed_rewrite(
        "stencil2d",
        &src,
        &[(0, &["width", "1"]), (1, &["width", "1"])],
    );
    let prologue = &s.source[s.source.find("int __clpart_fast = 1;").unwrap()
        ..s.source.find("if (__clpart_fast)").unwrap()];
    let proofs = prologue.matches("__clpart_fast &= (__clpart_bs1_in == 0) | ((__clpart_bs1_in == 1L) & ((long)width == __clpart_be1_in)").count();
    assert_eq!(proofs, 6, "{prologue}");
    assert!(
        !prologue.contains("&= (__clpart_bs1_in == 0);"),
        "{prologue}"
    );
}

/// Work-item builtins reached through a macro (here `mul24` on `size_t`
/// parsed as a macro) are rewritten by `#define`: only the
/// NDRange's dimensions get extra arguments, and past `work_dim` the
/// builtins have OpenCL's values (a 2-D kernel had an argument for
/// dimension 2, which the range file's validation refused).
#[test]
fn builtins_in_macros_get_arguments_for_the_ndrange_dimensions_only() {
    let src = "__kernel void k(__global float *a, int w)
{
    int gx = get_global_id(0);
    int gy = mul24(get_group_id(1), get_local_size(1)) + get_local_id(1);
    a[gy * w + gx] = (float)mul24(get_num_groups(0), get_global_size(1));
}
";
    let p = coarsen::parse_program("k.cl", src, &Default::default()).unwrap();
    assert_eq!(p.added_options, coarsen::INT24_OPTIONS);
    let s = partitioner::subkernel::rewrite_with_boxes(&p, "k", &[0], &[], 2, &Default::default())
        .unwrap();
    let dims: Vec<u32> = s
        .extra_args
        .iter()
        .filter_map(|e| match e.meaning {
            ExtraArgMeaning::GroupIdBase(d)
            | ExtraArgMeaning::GlobalSize(d)
            | ExtraArgMeaning::NumGroups(d)
            | ExtraArgMeaning::GlobalOffset(d) => Some(d),
            _ => None,
        })
        .collect();
    assert!(!dims.is_empty() && dims.iter().all(|&d| d < 2), "{dims:?}");
    assert!(!s.source.contains("__clpart_group_base2"), "{}", s.source);
    assert!(s.source.contains("__clpart_group_base1"), "{}", s.source);
    let options = coarsen::ParseOptions {
        clang_args: p.added_options.clone(),
    };
    coarsen::parse_program("sub.cl", &s.source, &options)
        .unwrap_or_else(|e| panic!("subkernel does not parse: {e}\n{}", s.source));
}

fn parse(src: &str) -> coarsen::ir::Program {
    coarsen::parse_program("view.cl", src, &Default::default()).unwrap()
}

/// Pointers cast to another element type of a guarded buffer.
/// A view of wider elements is checked as the elements it covers and asks
/// the launcher for a device buffer starting at a multiple of them; a view
/// of narrower elements is checked against the element holding it; a view
/// the guard cannot follow (assigned again, passed on, wider than the
/// sink) leaves the buffer unguarded with the reason.
#[test]
fn views_through_casts_are_guarded() {
    let p = parse(
        "__kernel void k(__global const float *x, __global int *a, __global float *y) {
    int i = get_global_id(0);
    __global const float4 *x4 = (__global const float4 *)x;
    __global uchar *b = (__global uchar *)a;
    b[4 * i + 1] = (uchar)i;
    ((__global float2 *)y)[i] = x4[i].xy + ((__global const float2 *)x)[2 * i + 1];
}",
    );
    let s = rewrite(&p, "k", &[0, 1, 2]).unwrap();
    reparse(&s.source);
    assert!(s.unguarded.is_empty(), "{:?}", s.unguarded);
    assert_eq!(s.guarded, vec![0, 1, 2]);
    // x: float4 (4) and float2 (2) views: a multiple of 4; y: float2 views
    assert_eq!(s.aligned, vec![(0, 4), (2, 2)]);
    for want in [
        "x4[__clpart_valign(__clpart_rn((long)((long)4 * (long)(i)) - __clpart_base_x, 4, __clpart_rlo_x, __clpart_rhi_x, __clpart_len_x, &__clpart_bad, 0), 4, __clpart_len_x, &__clpart_bad, 0)]",
        "b[__clpart_vsub((long)(4 * i + 1), 4, __clpart_wlo_a, __clpart_whi_a, __clpart_len_a, &__clpart_bad, 1, __clpart_base_a)]",
        "((__global float2 *)y)[__clpart_valign(__clpart_wn((long)((long)2 * (long)(i)) - __clpart_base_y, 2,",
    ] {
        assert!(s.source.contains(want), "{want}\n{}", s.source);
    }
    for (src, why) in [
        (
            "__kernel void k(__global const float *x, __global float *y) {
    __global const float4 *x4 = (__global const float4 *)x;
    x4 += 1;
    y[get_global_id(0)] = x4[get_global_id(0)].x;
}",
            "the pointer itself is used",
        ),
        (
            "float f(__global const float4 *p, int i) { return p[i].x; }
__kernel void k(__global const float *x, __global float *y) {
    __global const float4 *x4 = (__global const float4 *)x;
    y[get_global_id(0)] = f(x4, get_global_id(0));
}",
            "'x4', a view of 'x', is used other than by subscript",
        ),
        (
            "__kernel void k(__global const float *x, __global float *y) {
    __global const float4 *x4 = (__global const float4 *)x;
    __global const float4 *p = &x4[1];
    y[get_global_id(0)] = p[get_global_id(0)].x;
}",
            "its address is taken",
        ),
        (
            "__kernel void k(__global const float *x, __global float *y) {
    __global const float16 *x16 = (__global const float16 *)x;
    y[get_global_id(0)] = x16[get_global_id(0)].s0;
}",
            "the pointer itself is used",
        ),
    ] {
        let s = rewrite(&parse(src), "k", &[0, 1]).unwrap();
        assert_eq!(s.unguarded.len(), 1, "{src}: {:?}", s.unguarded);
        let (i, reason) = &s.unguarded[0];
        assert!(*i == 0 && reason.contains(why), "{src}: {reason}");
        assert!(s.aligned.is_empty());
    }
}

/// The guarantee: the rewrite finds a parameter's uses by name, so a
/// variable shadowing a kernel parameter makes the kernel unsplittable (its
/// subscripts were rebased as the buffer's: a private array indexed with
/// the buffer's base), and one shadowing a helper's buffer parameter leaves
/// that buffer unguarded.
#[test]
fn variables_shadowing_parameters_are_not_rewritten_as_them() {
    let p = program("shadowed_param");
    let e = rewrite(&p, "shadowed_param", &[0, 1]).unwrap_err();
    assert!(
        e.to_string()
            .contains("shadowed_param.cl:16:9: variable 'x' shadows the kernel's parameter"),
        "{e}"
    );
    let p = parse(
        "float f(__global const float *p, int j) {
    float s = 0.0f;
    for (int q = 0; q < 2; q++) {
        __global const float *p = 0;
        s += q;
    }
    return s + p[j];
}
__kernel void k(__global const float *p, __global float *o) {
    int i = get_global_id(0);
    o[i] = f(p, i);
}",
    );
    let s = rewrite(&p, "k", &[0, 1]).unwrap();
    assert_eq!(s.guarded, vec![1]);
    assert!(
        s.unguarded[0]
            .1
            .contains("variable 'p' at 4:9 shadows its parameter"),
        "{:?}",
        s.unguarded
    );
}

/// The guarantee: a `return` inside a macro makes the kernel unsplittable
/// (the guard's braces would go around another statement), and a kernel
/// with labels gets no fast copy of its body (a label twice does not
/// build); a `{` in a comment before the body is not the body's.
#[test]
fn returns_in_macros_labels_and_braces_in_comments() {
    let p = program("return_in_macro");
    let e = rewrite(&p, "return_in_macro", &[0, 1]).unwrap_err();
    assert!(
        e.to_string()
            .contains("return_in_macro.cl:19:9: a return inside a macro expansion"),
        "{e}"
    );
    let p = parse(
        "__kernel void k(__global const float *a, __global float *b, int n) {
    int i = get_global_id(0);
    if (i >= n) goto done;
    b[i] = a[i] + 1.0f;
done:
    return;
}",
    );
    let s = rewrite(&p, "k", &[0, 1]).unwrap();
    reparse(&s.source);
    assert_eq!(s.source.matches("done:").count(), 1, "{}", s.source);
    let p = program("brace_in_comment");
    let s = rewrite(&p, "brace_in_comment", &[0, 1]).unwrap();
    reparse(&s.source);
    assert!(
        s.source.contains("int n, long __clpart_base_a") && s.source.contains(") /* { */\n{"),
        "{}",
        s.source
    );
}

/// A helper taking one buffer and a value read from another (`st(b, i,
/// a[i])`) is cloned for the buffer, and the read is checked by the other
/// buffer's guard: both are guarded (it was refused as "passed together
/// with other buffers").
#[test]
fn helpers_taking_a_value_read_from_another_buffer_are_cloned() {
    let p = parse(
        "void st(__global float *b, int i, float v) { b[i] = v; }
__kernel void k(__global const float *a, __global float *b, int n) {
    int i = get_global_id(0);
    if (i < n) st(b, i, a[i]);
}",
    );
    let s = rewrite(&p, "k", &[0, 1]).unwrap();
    reparse(&s.source);
    assert!(s.unguarded.is_empty(), "{:?}", s.unguarded);
    assert!(
        s.source
            .contains("st__clpart_b(b, i, a[__clpart_r((long)(i) - __clpart_base_a"),
        "{}",
        s.source
    );
    // two buffers passed as pointers: one clone guards both (each with
    // its window), the call renamed once with both windows' arguments
    let p = parse(
        "void cp(__global float *b, __global const float *a, int i) { b[i] = a[i]; }
__kernel void k(__global const float *a, __global float *b) {
    cp(b, a, get_global_id(0));
    cp(b, a, get_global_id(0) + 1);
}",
    );
    let s = rewrite(&p, "k", &[0, 1]).unwrap();
    reparse(&s.source);
    assert!(s.unguarded.is_empty(), "{:?}", s.unguarded);
    assert_eq!(
        s.source.matches("void cp__clpart_a_b(").count(),
        1,
        "one clone for both calls: {}",
        s.source
    );
    assert!(
        s.source
            .contains("cp__clpart_a_b(b, a, get_global_id(0), __clpart_base_a")
            && s.source.contains("__clpart_len_b, &__clpart_bad)"),
        "{}",
        s.source
    );
}
