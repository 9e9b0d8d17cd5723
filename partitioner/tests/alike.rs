//! Arrays accessed alike are analyzed once (the partitioner's memo by array
//! shape): each still gets its own name in its reasons and notes, and the
//! same ranges and counts as when it is the only array of its shape.

use partitioner::{Counts, PartitionOptions};
use ranges_format::{ArrayStatus, KernelRanges};

fn partition(src: &str, kernel: &str, counts: Counts) -> KernelRanges {
    let p = coarsen::parse_program("alike.cl", src, &Default::default()).unwrap();
    let o = PartitionOptions {
        counts,
        ..Default::default()
    };
    let deadline = partitioner::deadline(&o.analysis, std::time::Instant::now());
    let (acc, isl) =
        access_analysis::analyze_kernel_in(&p, kernel, &o.analysis, deadline.unwrap()).unwrap();
    partitioner::partition_kernel_in(&p, &acc, isl, &o, deadline).unwrap()
}

#[test]
fn arrays_written_alike_each_name_themselves_in_the_refusal() {
    // each work-group writes its element of both, which slices may share
    // while the work-group size is unknown: neither can be split
    let k = partition(
        "__kernel void k(__global float *p, __global float *q) { p[get_group_id(0)] = 1.0f; q[get_group_id(0)] = 2.0f; }",
        "k",
        Counts::None,
    );
    assert!(!k.splittable);
    let reason = k.reason.clone().unwrap_or_default();
    for name in ["p", "q"] {
        assert!(
            reason.contains(&format!("array '{name}': work-groups in different slices")),
            "no refusal naming '{name}' in: {reason}"
        );
    }
    assert!(!reason.contains('\u{0}'), "a placeholder leaked: {reason}");
}

#[test]
fn arrays_accessed_alike_get_what_each_gets_alone() {
    // a, b and c are read alike, o is written; "one" has a alone
    let three = partition(
        "__kernel void k(__global const float *a, __global const float *b, __global const float *c, \
         __global float *o, int n) { int i = get_global_id(0); if (i + 1 < n) o[i] = a[i + 1] + b[i + 1] * c[i + 1]; }",
        "k",
        Counts::All,
    );
    let one = partition(
        "__kernel void k(__global const float *a, __global float *o, int n) \
         { int i = get_global_id(0); if (i + 1 < n) o[i] = a[i + 1]; }",
        "k",
        Counts::All,
    );
    assert!(three.splittable && one.splittable);
    let alone = &one.arrays[0];
    assert_eq!(alone.status, ArrayStatus::Bounded);
    for (idx, name) in [(0, "a"), (1, "b"), (2, "c")] {
        let x = &three.arrays[idx];
        assert_eq!((x.arg_index, x.name.as_str()), (idx as u32, name));
        assert_eq!(x.status, alone.status, "{name}");
        assert_eq!(x.total, alone.total, "{name}");
        assert_eq!(x.slice, alone.slice, "{name}");
        assert_eq!(x.read_slice, alone.read_slice, "{name}");
        assert!(
            x.count_total.is_some() && x.count_slice.is_some(),
            "{name}: no counts"
        );
        assert_eq!(x.count_total, alone.count_total, "{name}");
        assert_eq!(x.count_slice, alone.count_slice, "{name}");
        assert_eq!(x.vertices_slice, alone.vertices_slice, "{name}");
    }
    assert!(
        three.diagnostics.iter().all(|d| !d.contains('\u{0}')),
        "a placeholder leaked: {:?}",
        three.diagnostics
    );
}
