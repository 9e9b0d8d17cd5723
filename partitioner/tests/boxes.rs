//! Per-dimension boxes of delinearized arrays (`c[y*w + x]` seen as
//! `c[y][x]`): the bounds of each dimension of a slice's read and write
//! footprints, and whether a slice writes every element of its write box
//! (`write_exact`), checked at concrete parameter values.

use partitioner::PartitionOptions;
use ranges_format::{ArrayRanges, KernelRanges, Range};
use std::collections::BTreeMap;

fn partition(name: &str, src: &str, split_dim: Option<u32>) -> KernelRanges {
    let p = coarsen::parse_program(&format!("{name}.cl"), src, &Default::default()).unwrap();
    let o = PartitionOptions {
        split_dim,
        counts: partitioner::Counts::None,
        ..Default::default()
    };
    let deadline = partitioner::deadline(&o.analysis, std::time::Instant::now());
    let acc = access_analysis::analyze_kernel(&p, name, &o.analysis).unwrap();
    partitioner::partition_kernel(&p, &acc, &o, deadline).unwrap()
}

fn array<'k>(k: &'k KernelRanges, name: &str) -> &'k ArrayRanges {
    k.arrays.iter().find(|a| a.name == name).unwrap()
}

/// Parameter values: the NDRange (offsets 0), the scalars and the slice.
fn values(k: &KernelRanges, gs: &[i64], ls: &[i64], given: &[(&str, i64)]) -> Vec<i64> {
    let mut m: BTreeMap<String, i64> = given.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    for d in 0..gs.len() {
        m.insert(format!("gs{d}"), gs[d]);
        m.insert(format!("ls{d}"), ls[d]);
        m.insert(format!("go{d}"), 0);
        m.insert(format!("ng{d}"), gs[d] / ls[d]);
    }
    k.params
        .iter()
        .map(|p| {
            *m.get(&p.name)
                .unwrap_or_else(|| panic!("no value for {}", p.name))
        })
        .collect()
}

fn eval(k: &KernelRanges, r: &Range, v: &[i64]) -> (i64, i64) {
    r.bind(&k.param_names())
        .unwrap()
        .eval(v)
        .unwrap()
        .expect("defined")
}

fn eval_box(k: &KernelRanges, b: &Option<Vec<Range>>, v: &[i64]) -> Vec<(i64, i64)> {
    b.as_ref()
        .expect("a box")
        .iter()
        .map(|r| eval(k, r, v))
        .collect()
}

const COLUMN_WALK: &str =
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
fn column_walk_reads_one_column_band_of_every_row() {
    let k = partition("colsum", COLUMN_WALK, None);
    assert!(k.splittable, "{:?}", k.reason);
    let a = array(&k, "A");
    let b = a.boxes.as_ref().expect("A has boxes");
    assert_eq!(b.strides, vec!["n".to_string(), "1".to_string()]);
    assert!(b.write.is_none() && !b.write_exact);
    // m = 10 rows of n = 256, slice of work-items [64, 128)
    let v = values(
        &k,
        &[256],
        &[64],
        &[("m", 10), ("n", 256), ("sx_lo", 64), ("sx_hi", 128)],
    );
    assert_eq!(eval_box(&k, &b.read, &v), vec![(0, 9), (64, 127)]);
    // the 1-D range is the box's linear hull
    assert_eq!(
        eval(&k, a.read_slice.as_ref().unwrap(), &v),
        (64, 9 * 256 + 127)
    );
    // 1-D arrays have no boxes
    assert!(array(&k, "out").boxes.is_none());
}

const CONV_INTERIOR: &str =
    "__kernel void conv(__global const float *in, __global float *out, int w, int h) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= 1 && x < w - 1 && y >= 1 && y < h - 1) {
        float s = 0.0f;
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++)
                s += in[(y + dy) * w + (x + dx)];
        out[y * w + x] = s;
    }
}";

#[test]
fn interior_write_box_is_exact() {
    let k = partition("conv", CONV_INTERIOR, Some(1));
    assert!(k.splittable, "{:?}", k.reason);
    let v = values(
        &k,
        &[64, 32],
        &[16, 8],
        &[("w", 64), ("h", 32), ("sx_lo", 8), ("sx_hi", 16)],
    );
    let out = array(&k, "out").boxes.as_ref().expect("out has boxes");
    // rows 8..15 of the slice, interior columns 1..62
    assert_eq!(eval_box(&k, &out.write, &v), vec![(8, 15), (1, 62)]);
    assert!(out.write_exact, "an interior write fills its box");
    assert!(out.read.is_none());
    let inp = array(&k, "in").boxes.as_ref().expect("in has boxes");
    assert_eq!(eval_box(&k, &inp.read, &v), vec![(7, 16), (0, 63)]);
    // the first slice starts at row 1
    let v = values(
        &k,
        &[64, 32],
        &[16, 8],
        &[("w", 64), ("h", 32), ("sx_lo", 0), ("sx_hi", 8)],
    );
    assert_eq!(eval_box(&k, &out.write, &v), vec![(1, 7), (1, 62)]);
}

#[test]
fn writes_that_leave_gaps_in_their_box_are_not_exact() {
    // every other column: a must-write that does not fill its box
    let src = "__kernel void even(__global float *out, int w) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    out[y * w + 2 * x] = 1.0f;
}";
    let k = partition("even", src, Some(1));
    let b = array(&k, "out").boxes.as_ref().expect("boxes");
    assert!(b.write.is_some());
    assert!(!b.write_exact, "gaps between the written columns");
    // a may-write (data-dependent condition) is never exact
    let src = "__kernel void cond(__global const float *in, __global float *out, int w) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (in[y * w + x] > 0.5f)
        out[y * w + x] = 1.0f;
}";
    let k = partition("cond", src, Some(1));
    let b = array(&k, "out").boxes.as_ref().expect("boxes");
    assert!(!b.write_exact, "a may-write");
    // the same write without the condition fills its box
    let src = "__kernel void full(__global const float *in, __global float *out, int w) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < w)
        out[y * w + x] = in[y * w + x];
}";
    let k = partition("full", src, Some(1));
    let b = array(&k, "out").boxes.as_ref().expect("boxes");
    assert!(b.write_exact);
}

#[test]
fn a_three_dimensional_stencil_gets_an_exact_interior_write_box() {
    let src = std::fs::read_to_string(format!(
        "{}/../kernels/stencils/stencil3d.cl",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let k = partition("stencil3d", &src, Some(2));
    let v = values(
        &k,
        &[16, 16, 8],
        &[4, 4, 2],
        &[
            ("nx", 16),
            ("ny", 16),
            ("nz", 8),
            ("sx_lo", 2),
            ("sx_hi", 4),
        ],
    );
    let out = array(&k, "out").boxes.as_ref().expect("boxes");
    assert_eq!(
        out.strides,
        vec!["nx*ny".to_string(), "nx".to_string(), "1".to_string()]
    );
    assert_eq!(eval_box(&k, &out.write, &v), vec![(2, 3), (1, 14), (1, 14)]);
    assert!(out.write_exact);
    let inp = array(&k, "in").boxes.as_ref().expect("boxes");
    // the 7-point stencil's box includes the corners it never reads
    assert_eq!(eval_box(&k, &inp.read, &v), vec![(1, 4), (0, 15), (0, 15)]);
}
