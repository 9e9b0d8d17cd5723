//! Which arrays updated by global atomics merge as reductions: only
//! atomics of one family whose returned values are unused, on 32- or
//! 64-bit integers, in an array not otherwise accessed; every other atomic
//! stays a reason not to split, saying why.

mod common;

use access_analysis::{AnalysisOptions, KernelAccesses};
use common::inline;
use ranges_format::{ReduceOp, Reduction};

fn analyze(src: &str) -> KernelAccesses {
    inline(src, &AnalysisOptions::default())
}

fn reduction(ka: &KernelAccesses, name: &str) -> Option<Reduction> {
    ka.array(name).unwrap().reduction
}

#[test]
fn each_family_merges_with_the_element_types_signedness() {
    let ka = analyze(
        "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
        __kernel void k(__global const int *d, __global uint *s, __global int *lo,
                        __global uint *hi, __global int *m, __global uint *o,
                        __global uint *x, __global long *t) {
            int i = get_global_id(0);
            int v = d[i];
            atomic_inc(&s[v % 4]);
            atomic_sub(&s[v % 4], 2u);
            atom_add(&s[0], 1u);
            atomic_min(&lo[v % 8], v);
            atomic_max(&hi[v % 8], (uint)v);
            (void)atomic_and(&m[0], v);
            atomic_or(&o[v % 2], 1u << (v % 32));
            atomic_xor(&x[i % 2], (uint)v);
            atom_add(&t[v % 3], (long)v);
        }",
    );
    assert!(ka.global_atomics.is_empty(), "{:?}", ka.global_atomics);
    let r = |op, signed| Some(Reduction { op, signed });
    assert_eq!(reduction(&ka, "s"), r(ReduceOp::Sum, false));
    assert_eq!(reduction(&ka, "lo"), r(ReduceOp::Min, true));
    assert_eq!(reduction(&ka, "hi"), r(ReduceOp::Max, false));
    assert_eq!(reduction(&ka, "m"), r(ReduceOp::And, true));
    assert_eq!(reduction(&ka, "o"), r(ReduceOp::Or, false));
    assert_eq!(reduction(&ka, "x"), r(ReduceOp::Xor, false));
    assert_eq!(reduction(&ka, "t"), r(ReduceOp::Sum, true));
    assert_eq!(reduction(&ka, "d"), None);
    assert!(ka.to_string().contains("reduction sum (unsigned)"));
}

#[test]
fn a_used_result_keeps_the_atomic_a_reason() {
    let ka = analyze(
        "__kernel void k(__global const float *in, __global float *out, __global uint *count) {
            int i = get_global_id(0);
            uint idx = atomic_inc(&count[0]);
            out[idx] = in[i];
        }",
    );
    assert_eq!(reduction(&ka, "count"), None);
    assert_eq!(ka.global_atomics.len(), 1);
    assert!(
        ka.global_atomics[0].starts_with("atomic_inc on 'count' (")
            && ka.global_atomics[0].ends_with("): its returned value is used"),
        "{:?}",
        ka.global_atomics
    );
}

#[test]
fn mixed_families_other_accesses_and_exchanges_do_not_merge() {
    let ka = analyze(
        "__kernel void k(__global const int *d, __global int *a, __global int *b,
                         __global int *c, __global float *f) {
            int i = get_global_id(0);
            atomic_add(&a[d[i] % 4], 1);
            atomic_max(&a[d[i] % 4], d[i]);
            atomic_add(&b[d[i] % 4], 1);
            if (i == 0) b[1] = 0;
            atomic_xchg(&c[0], i);
            atomic_xchg(&f[0], 1.0f);
        }",
    );
    for name in ["a", "b", "c", "f"] {
        assert_eq!(reduction(&ka, name), None, "{name}");
    }
    let why = ka.global_atomics.join("\n");
    assert!(
        why.contains("'a' is updated by atomics of more than one family (sum and max)"),
        "{why}"
    );
    assert!(
        why.contains("'b' is also accessed other than by atomics ('b[1]',"),
        "{why}"
    );
    assert!(
        why.contains("atomic_xchg does not merge as a reduction"),
        "{why}"
    );
    // every atomic on an array that does not merge is listed
    assert_eq!(ka.global_atomics.len(), 5, "{why}");
}
