//! Split launches on two PoCL devices compared bit-for-bit with the unsplit
//! kernel.

mod common;

use common::*;
use host_data::PlanArgs;
use launcher::{launch, run_whole, KernelArgs, LaunchOptions, NdRange, Plan};
use ranges_format::Assumption;

fn vadd_args(plan: &Plan, n: u64) -> KernelArgs {
    plan.args_from_specs(&[
        format!("a=rand:{n}:1"),
        format!("b=rand:{n}:2"),
        format!("c=zeros:{n}"),
        format!("n={n}"),
    ])
    .unwrap()
}

fn whole_reference(
    rt: &launcher::Runtime,
    source: &str,
    kernel: &str,
    nd: &NdRange,
    args: &KernelArgs,
) -> KernelArgs {
    let mut reference = args.clone();
    run_whole(rt, source, kernel, &[], 0, nd, &mut reference).unwrap();
    reference
}

#[test]
fn vadd_split_equals_whole_for_every_share() {
    let rt = two_devices();
    let mut plan = Plan::from_kernel(&rt, vadd_ranges(), VADD, &[]).unwrap();
    let nd = NdRange::new(&[1000], &[8]).unwrap();
    let input = vadd_args(&plan, 1000);
    let reference = whole_reference(&rt, VADD, "vadd", &nd, &input);
    let expect: Vec<f32> = {
        let a = input.buffer("a").unwrap().to_f32().unwrap();
        let b = input.buffer("b").unwrap().to_f32().unwrap();
        a.iter().zip(&b).map(|(x, y)| x + y).collect()
    };
    assert_eq!(reference.buffer("c").unwrap().to_f32().unwrap(), expect);

    for (shares, groups) in [
        (vec![(0, 0.5), (1, 0.5)], vec![63, 62]),
        (vec![(0, 0.86), (1, 0.14)], vec![108, 17]),
        (vec![(1, 0.86), (0, 0.14)], vec![108, 17]),
        (vec![(0, 1.0), (1, 0.0)], vec![125]),
    ] {
        let mut args = input.clone();
        let opts = LaunchOptions {
            verify: true,
            unchecked: true,
            ..Default::default()
        };
        let report = launch(&mut plan, &nd, &mut args, &shares, &opts).unwrap();
        assert!(report.split, "{report}");
        assert_eq!(report.verified, Some(true), "{report}");
        assert_eq!(args.buffer("c"), reference.buffer("c"), "shares {shares:?}");
        assert_eq!(
            report
                .devices
                .iter()
                .map(|d| d.work_groups)
                .collect::<Vec<_>>(),
            groups
        );
        // every device moves exactly its slice of a and b in and of c out
        for d in &report.devices {
            assert_eq!(d.bytes_to_device, 2 * 4 * 8 * d.work_groups);
            assert_eq!(d.bytes_from_device, 4 * 8 * d.work_groups);
        }
        assert_eq!(report.bytes_total, 3 * 4 * 1000);
        assert_eq!(report.bytes_exact, Some(report.bytes_total));
        assert_eq!(
            report.bytes_whole_buffers,
            report.devices.len() as u64 * 3 * 4 * 1000
        );
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["bytes_total"], 12000);
        assert_eq!(json["verified"], true);
    }
}

#[test]
fn vadd_with_offset_and_uneven_groups() {
    let rt = two_devices();
    // 7 groups of 8 with a global offset of 16: the kernel touches 16..72
    let nd = NdRange::with_offset(&[56], &[8], &[16]).unwrap();
    let mut ranges = vadd_ranges();
    for a in &mut ranges.arrays {
        let lower = "[lo, hi, l0, o0] -> { [(o0 + l0*lo)] }";
        let upper = "[lo, hi, l0, o0] -> { [(o0 + l0*hi - 1)] }";
        a.slice = range(lower, upper);
        if a.read_slice.is_some() {
            a.read_slice = range(lower, upper);
        }
        if a.write_slice.is_some() {
            a.write_slice = range(lower, upper);
        }
        a.total = range("[o0] -> { [(o0)] }", "[g0, o0] -> { [(o0 + g0 - 1)] }");
    }
    ranges
        .params
        .push(param("o0", ranges_format::ParamSource::GlobalOffset(0)));
    let mut plan = Plan::from_kernel(&rt, ranges, VADD, &[]).unwrap();
    let input = vadd_args(&plan, 100);
    let reference = whole_reference(&rt, VADD, "vadd", &nd, &input);
    let mut args = input.clone();
    let report = launch(
        &mut plan,
        &nd,
        &mut args,
        &[(0, 0.3), (1, 0.7)],
        &LaunchOptions {
            unchecked: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(args.buffer("c"), reference.buffer("c"), "{report}");
    assert_eq!(report.bytes_total, 3 * 4 * 56);
    // elements outside the NDRange keep their host values
    assert!(args.buffer("c").unwrap().to_f32().unwrap()[..16]
        .iter()
        .all(|&x| x == 0.0));
}

fn matmul_args(plan: &Plan, wa: u64, wb: u64, hc: u64) -> KernelArgs {
    plan.args_from_specs(&[
        format!("A=rand:{}:11", hc * wa),
        format!("B=rand:{}:12", wa * wb),
        format!("C=rand:{}:13", hc * wb),
        format!("wa={wa}"),
        format!("wb={wb}"),
    ])
    .unwrap()
}

#[test]
fn matmul_split_along_x_diff_merges_c() {
    let rt = two_devices();
    let mut plan = Plan::from_kernel(&rt, matmul_ranges(), MATMUL, &[]).unwrap();
    let (wa, wb, hc) = (10, 56, 12);
    let nd = NdRange::new(&[wb, hc], &[8, 4]).unwrap();
    let input = matmul_args(&plan, wa, wb, hc);
    let reference = whole_reference(&rt, MATMUL, "matmul", &nd, &input);
    for shares in [
        vec![(0, 0.5), (1, 0.5)],
        vec![(1, 0.86), (0, 0.14)],
        vec![(0, 0.0), (1, 1.0)],
    ] {
        let mut args = input.clone();
        let opts = LaunchOptions {
            verify: true,
            verify_device: Some(1),
            unchecked: true,
            ..Default::default()
        };
        let report = launch(&mut plan, &nd, &mut args, &shares, &opts).unwrap();
        assert!(report.split);
        assert_eq!(report.verified, Some(true), "{report}");
        assert_eq!(args.buffer("C"), reference.buffer("C"), "shares {shares:?}");
        // the devices' write hulls of C overlap: merged on the host (one
        // device alone keeps what it wrote)
        let two = shares.iter().filter(|s| s.1 > 0.0).count() == 2;
        assert_eq!(
            report
                .notes
                .iter()
                .any(|n| n.contains("'C' is glued element by element")),
            two,
            "{report}"
        );
        // the hulls of B and C carry gaps: more bytes than the exact footprint
        let exact = report.bytes_exact.unwrap();
        assert!(report.bytes_total > exact, "{report}");
        // per device: all of A, the hull of B, C's hull in (filled) and out
        for d in &report.devices {
            let cols = 8 * (d.slice.1 - d.slice.0);
            let b_hull = (wa - 1) * wb + cols;
            let c_hull = (hc - 1) * wb + cols;
            assert_eq!(
                d.bytes_to_device,
                4 * (hc * wa + b_hull + c_hull),
                "{report}"
            );
            assert_eq!(d.bytes_from_device, 4 * c_hull, "{report}");
        }
        let groups: u64 = report.devices.iter().map(|d| d.work_groups).sum();
        assert_eq!(groups, 7 * 3);
    }
}

#[test]
fn unsplittable_kernel_runs_whole_on_the_largest_share() {
    let rt = two_devices();
    let mut ranges = vadd_ranges();
    ranges.splittable = false;
    ranges.reason = Some("array 'c': subscript 'c[idx[i]]' is indirect".into());
    let mut plan = Plan::from_kernel(&rt, ranges, VADD, &[]).unwrap();
    let nd = NdRange::new(&[1000], &[8]).unwrap();
    let input = vadd_args(&plan, 1000);
    let reference = whole_reference(&rt, VADD, "vadd", &nd, &input);
    let mut args = input.clone();
    let report = launch(
        &mut plan,
        &nd,
        &mut args,
        &[(0, 0.3), (1, 0.7)],
        &LaunchOptions {
            unchecked: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(!report.split);
    assert_eq!(
        report.reason.as_deref(),
        Some("array 'c': subscript 'c[idx[i]]' is indirect")
    );
    assert_eq!(report.devices.len(), 1);
    assert_eq!(report.devices[0].index, 1);
    assert_eq!(report.devices[0].work_groups, 125);
    assert_eq!(report.devices[0].bytes_to_device, 3 * 4000);
    assert_eq!(report.devices[0].bytes_from_device, 4000);
    assert_eq!(args.buffer("c"), reference.buffer("c"));
}

#[test]
fn failed_assumption_runs_unsplit_and_says_so() {
    let rt = two_devices();
    let mut ranges = vadd_ranges();
    ranges.params.push(param(
        "n",
        ranges_format::ParamSource::ScalarArg { arg_index: 3 },
    ));
    ranges.assumptions.push(Assumption {
        array: None,
        description: "n is the global size".into(),
        condition: "[n, g0] -> { : n = g0 }".into(),
    });
    let mut plan = Plan::from_kernel(&rt, ranges, VADD, &[]).unwrap();
    let nd = NdRange::new(&[1000], &[8]).unwrap();

    let mut args = vadd_args(&plan, 1000);
    let report = launch(
        &mut plan,
        &nd,
        &mut args,
        &[(0, 0.5), (1, 0.5)],
        &LaunchOptions {
            unchecked: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(report.split && report.notes.is_empty(), "{report}");

    let input = plan
        .args_from_specs(&["a=rand:1000:1", "b=rand:1000:2", "c=seq:1000", "n=997"])
        .unwrap();
    let reference = whole_reference(&rt, VADD, "vadd", &nd, &input);
    let mut args = input.clone();
    let report = launch(
        &mut plan,
        &nd,
        &mut args,
        &[(0, 0.5), (1, 0.5)],
        &LaunchOptions {
            unchecked: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(!report.split, "{report}");
    assert_eq!(
        report.reason.as_deref(),
        Some("a launch-time assumption does not hold: n is the global size")
    );
    assert!(
        report.notes[0].starts_with("assumption does not hold: n is the global size"),
        "{report}"
    );
    assert_eq!(args.buffer("c"), reference.buffer("c"));
}

/// An assumption that names its array sends that array alone
/// whole when it fails at launch, where it names a read-only one; the
/// split goes on, the other arrays keep their ranges, and the result is the
/// unsplit one. One that names a written array still runs the kernel
/// unsplit. (The conditions are made up: here `a`'s fails with nothing
/// else wrong, as when only `a`'s delinearization needed it.)
#[test]
fn a_failed_assumption_of_a_read_array_sends_it_alone_whole() {
    let rt = two_devices();
    let with = |array: u32, condition: &str| {
        let mut ranges = vadd_ranges();
        ranges.params.push(param(
            "n",
            ranges_format::ParamSource::ScalarArg { arg_index: 3 },
        ));
        ranges.assumptions.push(Assumption {
            array: Some(array),
            description: "a made-up assumption".into(),
            condition: condition.into(),
        });
        Plan::from_kernel(&rt, ranges, VADD, &[]).unwrap()
    };
    let nd = NdRange::new(&[1000], &[8]).unwrap();
    let options = LaunchOptions {
        unchecked: true,
        ..Default::default()
    };
    // `a` (argument 0) is only read: it alone goes whole to each device.
    let mut plan = with(0, "[n, g0] -> { : n = g0 + 1 }");
    let input = plan
        .args_from_specs(&["a=rand:1000:1", "b=rand:1000:2", "c=seq:1000", "n=1000"])
        .unwrap();
    let reference = whole_reference(&rt, VADD, "vadd", &nd, &input);
    let mut args = input.clone();
    let report = launch(&mut plan, &nd, &mut args, &[(0, 0.5), (1, 0.5)], &options).unwrap();
    assert!(report.split, "{report}");
    assert!(
        report.notes[0].starts_with("assumption does not hold: a made-up assumption")
            && report.notes[0].ends_with("array 'a' is transferred whole"),
        "{report}"
    );
    // each device: all of a, its part of b; its part of c back
    for d in &report.devices {
        let part = 4 * 8 * d.work_groups;
        assert_eq!(d.bytes_to_device, 4000 + part, "{report}");
        assert_eq!(d.bytes_from_device, part, "{report}");
    }
    assert_eq!(args.buffer("c"), reference.buffer("c"));
    // `c` (argument 2) is written: the kernel runs unsplit.
    let mut plan = with(2, "[n, g0] -> { : n = g0 }");
    let input = plan
        .args_from_specs(&["a=rand:1000:1", "b=rand:1000:2", "c=seq:1000", "n=997"])
        .unwrap();
    let reference = whole_reference(&rt, VADD, "vadd", &nd, &input);
    let mut args = input.clone();
    let report = launch(&mut plan, &nd, &mut args, &[(0, 0.5), (1, 0.5)], &options).unwrap();
    assert!(!report.split, "{report}");
    assert_eq!(
        report.reason.as_deref(),
        Some("a launch-time assumption does not hold: a made-up assumption")
    );
    assert_eq!(args.buffer("c"), reference.buffer("c"));
}

#[test]
fn repeated_launches_reuse_built_programs() {
    two_devices();
    // a runtime of its own: other tests build programs concurrently
    let rt = launcher::Runtime::new().unwrap();
    let mut plan = Plan::from_kernel(&rt, vadd_ranges(), VADD, &[]).unwrap();
    plan.prepare(&[0, 1]).unwrap();
    let built = rt.n_cached_programs();
    let nd = NdRange::new(&[1000], &[8]).unwrap();
    for _ in 0..3 {
        let mut args = vadd_args(&plan, 1000);
        launch(
            &mut plan,
            &nd,
            &mut args,
            &[(0, 0.5), (1, 0.5)],
            &LaunchOptions {
                unchecked: true,
                ..Default::default()
            },
        )
        .unwrap();
    }
    // a second plan for the same kernel finds the programs in the cache
    let mut again = Plan::from_kernel(&rt, vadd_ranges(), VADD, &[]).unwrap();
    again.prepare(&[0, 1]).unwrap();
    assert_eq!(rt.n_cached_programs(), built);
}

#[test]
fn memory_cap_names_the_device() {
    let rt = two_devices();
    let mut plan = Plan::from_kernel(&rt, vadd_ranges(), VADD, &[]).unwrap();
    let nd = NdRange::new(&[1000], &[8]).unwrap();
    let mut args = vadd_args(&plan, 1000);
    let opts = LaunchOptions {
        mem_cap_bytes: Some(8000),
        unchecked: true,
        ..Default::default()
    };
    let e = launch(&mut plan, &nd, &mut args, &[(0, 0.8), (1, 0.2)], &opts).unwrap_err();
    let name = &rt.devices()[0].name;
    assert_eq!(
        e.to_string(),
        format!("device 0 ('{name}') needs 9600 bytes of buffers for its slice, over the cap of 8000 bytes")
    );
    // the smaller slice fits
    launch(
        &mut plan,
        &nd,
        &mut args,
        &[(0, 0.2), (1, 0.8)],
        &LaunchOptions {
            mem_cap_bytes: Some(12000),
            unchecked: true,
            ..Default::default()
        },
    )
    .unwrap();
}

#[test]
fn verification_reports_the_first_mismatch() {
    let rt = two_devices();
    let mut ranges = vadd_ranges();
    ranges.subkernel.as_mut().unwrap().source = VADD_SUB.replace(
        "a[i - base_a] + b[i - base_b]",
        "a[i - base_a] + b[i - base_b] + (i == 700 ? 1.0f : 0.0f)",
    );
    let mut plan = Plan::from_kernel(&rt, ranges, VADD, &[]).unwrap();
    let nd = NdRange::new(&[1000], &[8]).unwrap();
    let mut args = vadd_args(&plan, 1000);
    let opts = LaunchOptions {
        verify: true,
        unchecked: true,
        ..Default::default()
    };
    let report = launch(&mut plan, &nd, &mut args, &[(0, 0.5), (1, 0.5)], &opts).unwrap();
    assert_eq!(report.verified, Some(false));
    assert_eq!(
        report.mismatch,
        Some(launcher::Mismatch {
            array: "c".into(),
            elem_idx: 700
        })
    );
    assert!(
        report
            .to_string()
            .contains("verification failed at 'c'[700]"),
        "{report}"
    );
}

const GROUP_SUM: &str = r#"
__kernel void group_sum(__global const int* in, __global int* out, __local int* tmp) {
    int l = get_local_id(0);
    tmp[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        int s = 0;
        for (int k = 0; k < get_local_size(0); k++) s += tmp[k];
        out[get_group_id(0)] = s * (int)get_num_groups(0);
    }
}
"#;

const GROUP_SUM_SUB: &str = r#"
__kernel void group_sum_sub(__global const int* in, __global int* out, __local int* tmp,
                            long base_in, long base_out, long group_base0, long num_groups0) {
    int l = get_local_id(0);
    tmp[l] = in[get_global_id(0) - base_in];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        int s = 0;
        for (int k = 0; k < get_local_size(0); k++) s += tmp[k];
        out[get_group_id(0) + group_base0 - base_out] = s * (int)num_groups0;
    }
}
"#;

/// `__local` arguments, `get_group_id` and `get_num_groups` through the extra
/// arguments: each device must see the unsplit values.
#[test]
fn local_buffers_and_group_ids() {
    use ranges_format::{
        ArgKind, ArrayRanges, ArrayStatus, ExtraArg, ExtraArgMeaning, KernelRanges, Mode,
        ParamSource, Subkernel, WriteVerdict,
    };
    let rt = two_devices();
    let p = "[lo, hi, l0]";
    let ranges = KernelRanges {
        name: "group_sum".into(),
        work_dim: 1,
        params: vec![
            param("lo", ParamSource::SliceLo),
            param("hi", ParamSource::SliceHi),
            param("l0", ParamSource::LocalSize(0)),
        ],
        args: vec![
            arg(0, "in", ArgKind::GlobalBuffer, "int", 4),
            arg(1, "out", ArgKind::GlobalBuffer, "int", 4),
            arg(2, "tmp", ArgKind::LocalBuffer, "int", 4),
        ],
        split_dim: Some(0),
        splittable: true,
        reason: None,
        arrays: vec![
            ArrayRanges {
                arg_index: 0,
                name: "in".into(),
                elem_type: "int".into(),
                elem_size: 4,
                mode: Mode::R,
                status: ArrayStatus::Bounded,
                total: None,
                slice: range(
                    &format!("{p} -> {{ [(l0*lo)] }}"),
                    &format!("{p} -> {{ [(l0*hi - 1)] }}"),
                ),
                read_slice: None,
                write_slice: None,
                count_total: None,
                count_slice: count(&format!("{p} -> {{ [(l0*(hi - lo))] }}")),
                write: None,
                boxes: None,
                vertices_slice: None,
                reduction: None,
                checked: false,
            },
            ArrayRanges {
                arg_index: 1,
                name: "out".into(),
                elem_type: "int".into(),
                elem_size: 4,
                mode: Mode::W,
                status: ArrayStatus::Bounded,
                total: None,
                slice: range(
                    &format!("{p} -> {{ [(lo)] }}"),
                    &format!("{p} -> {{ [(hi - 1)] }}"),
                ),
                read_slice: None,
                write_slice: None,
                count_total: None,
                count_slice: count(&format!("{p} -> {{ [(hi - lo)] }}")),
                write: Some(WriteVerdict {
                    disjoint_across_slices: true,
                    fills_hull: true,
                    runs: None,
                    written_count: None,
                }),
                boxes: None,
                vertices_slice: None,
                reduction: None,
                checked: false,
            },
        ],
        assumptions: vec![],
        subkernel: Some(Subkernel {
            name: "group_sum_sub".into(),
            source: GROUP_SUM_SUB.into(),
            extra_args: vec![
                ExtraArg {
                    name: "base_in".into(),
                    meaning: ExtraArgMeaning::ArrayBase { arg_index: 0 },
                },
                ExtraArg {
                    name: "base_out".into(),
                    meaning: ExtraArgMeaning::ArrayBase { arg_index: 1 },
                },
                ExtraArg {
                    name: "group_base0".into(),
                    meaning: ExtraArgMeaning::GroupIdBase(0),
                },
                ExtraArg {
                    name: "num_groups0".into(),
                    meaning: ExtraArgMeaning::NumGroups(0),
                },
            ],
            guarded: vec![],
            unguarded: vec![],
            aligned: vec![],
        }),
        diagnostics: vec![],
        group_size_use: None,
        cut_short: Vec::new(),
    };
    let mut plan = Plan::from_kernel(&rt, ranges, GROUP_SUM, &[]).unwrap();
    let nd = NdRange::new(&[16 * 37], &[16]).unwrap();
    let input = plan
        .args_from_specs(&["in=rand:592:5", "out=seq:37", "tmp=local:16"])
        .unwrap();
    let reference = whole_reference(&rt, GROUP_SUM, "group_sum", &nd, &input);
    let want: Vec<i32> = input
        .buffer("in")
        .unwrap()
        .to_i32()
        .unwrap()
        .chunks(16)
        .map(|c| c.iter().sum::<i32>() * 37)
        .collect();
    assert_eq!(reference.buffer("out").unwrap().to_i32().unwrap(), want);
    for shares in [[(0, 0.5), (1, 0.5)], [(0, 0.1), (1, 0.9)]] {
        let mut args = input.clone();
        let report = launch(
            &mut plan,
            &nd,
            &mut args,
            &shares,
            &LaunchOptions {
                unchecked: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(report.split);
        assert_eq!(args.buffer("out"), reference.buffer("out"), "{report}");
        assert_eq!(report.bytes_exact, Some(report.bytes_total));
    }
}

/// Slice bounds given in work-items (`SliceLoItem`/`SliceHiItem`), as the
/// analysis writes them for footprints affine in global ids.
#[test]
fn slice_bounds_in_work_items() {
    let rt = two_devices();
    let mut ranges = vadd_ranges();
    ranges.params = vec![
        param("lo_i", ranges_format::ParamSource::SliceLoItem),
        param("hi_i", ranges_format::ParamSource::SliceHiItem),
        param("g0", ranges_format::ParamSource::GlobalSize(0)),
    ];
    for a in &mut ranges.arrays {
        let r = range(
            "[lo_i, hi_i] -> { [(lo_i)] }",
            "[lo_i, hi_i] -> { [(hi_i - 1)] }",
        );
        a.slice = r.clone();
        if a.read_slice.is_some() {
            a.read_slice = r.clone();
        }
        if a.write_slice.is_some() {
            a.write_slice = r;
        }
        a.count_slice = count("[lo_i, hi_i] -> { [(hi_i - lo_i)] }");
    }
    let mut plan = Plan::from_kernel(&rt, ranges, VADD, &[]).unwrap();
    let nd = NdRange::new(&[1000], &[8]).unwrap();
    let input = vadd_args(&plan, 1000);
    let reference = whole_reference(&rt, VADD, "vadd", &nd, &input);
    let mut args = input.clone();
    let report = launch(
        &mut plan,
        &nd,
        &mut args,
        &[(0, 0.86), (1, 0.14)],
        &LaunchOptions {
            unchecked: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(args.buffer("c"), reference.buffer("c"), "{report}");
    assert_eq!(report.bytes_total, 12000);
    assert_eq!(report.bytes_exact, Some(12000));
}

/// A plan keeps the schedules of its last launches (ranges, sets,
/// glue, counts) by NDRange, shares, integer scalars and buffer lengths.
/// Launches cycling over more configurations than it keeps, with new data
/// each time, give the outputs and reports (timings aside) of a fresh plan.
#[test]
fn cached_schedules_give_what_a_fresh_plan_gives() {
    let rt = two_devices();
    let ranges = || {
        let mut r = vadd_ranges();
        r.params.push(param(
            "n",
            ranges_format::ParamSource::ScalarArg { arg_index: 3 },
        ));
        r.assumptions.push(Assumption {
            array: None,
            description: "n is the global size".into(),
            condition: "[n, g0] -> { : n = g0 }".into(),
        });
        r
    };
    let mut plan = Plan::from_kernel(&rt, ranges(), VADD, &[]).unwrap();
    let half: &[(usize, f64)] = &[(0, 0.5), (1, 0.5)];
    let uneven: &[(usize, f64)] = &[(0, 0.86), (1, 0.14)];
    // (global, buffer length, n, shares, exact_bytes)
    type Config<'a> = (u64, u64, u64, &'a [(usize, f64)], bool);
    let configs: [Config<'_>; 6] = [
        (1000, 1000, 1000, half, true),
        (1000, 1000, 997, half, true), // the assumption fails: unsplit
        (1000, 1000, 1000, uneven, true),
        (512, 512, 512, half, true),
        (1000, 1200, 1000, half, true),
        (1000, 1000, 1000, half, false),
    ];
    let untimed = |mut r: launcher::RunReport| {
        r.wall_ms = 0.0;
        r.host_us = 0.0;
        r.devices
            .iter_mut()
            .for_each(|d| (d.kernel_ms, d.busy_ms) = (0.0, 0.0));
        r
    };
    for round in 0..3u64 {
        for (i, &(global, len, n, shares, exact_bytes)) in configs.iter().enumerate() {
            let nd = NdRange::new(&[global], &[8]).unwrap();
            let seed = 10 * round + i as u64;
            let input = plan
                .args_from_specs(&[
                    format!("a=rand:{len}:{seed}"),
                    format!("b=rand:{len}:{}", seed + 100),
                    format!("c=seq:{len}"),
                    format!("n={n}"),
                ])
                .unwrap();
            let opts = LaunchOptions {
                unchecked: true,
                exact_bytes,
                ..Default::default()
            };
            let mut args = input.clone();
            let report = launch(&mut plan, &nd, &mut args, shares, &opts).unwrap();
            let mut fresh = Plan::from_kernel(&rt, ranges(), VADD, &[]).unwrap();
            let mut fresh_args = input.clone();
            let expect = launch(&mut fresh, &nd, &mut fresh_args, shares, &opts).unwrap();
            let what = format!("round {round}, configuration {i}");
            assert_eq!(report.split, n == global, "{what}: {report}");
            assert_eq!(
                report.bytes_exact.is_some(),
                exact_bytes,
                "{what}: {report}"
            );
            assert_eq!(untimed(report), untimed(expect), "{what}");
            for name in ["a", "b", "c"] {
                assert_eq!(
                    args.buffer(name),
                    fresh_args.buffer(name),
                    "{what}: '{name}'"
                );
            }
            let reference = whole_reference(&rt, VADD, "vadd", &nd, &input);
            assert_eq!(args.buffer("c"), reference.buffer("c"), "{what}");
        }
    }
}

/// A launch over fresh buffers (the host-array form's, and the
/// unbound arguments of a launch over resident buffers) replays what the
/// first such launch of its schedule did to them (the commands it sent
/// each device, what each holder held afterwards). Launched again and
/// again with new data, on one and two devices, for an array merged on the
/// host (matmul's C) and for arrays left on the devices (vadd's c, read
/// back in the kernel's command stream), each launch gives the outputs and
/// report (timings aside) of a fresh plan, and the unsplit kernel's
/// outputs; a resident buffer bound beside fresh ones keeps its own
/// bookkeeping. (Written sets that come back after the launch:
/// `tests/tests/reuse.rs`.)
#[test]
fn a_fresh_buffers_bookkeeping_is_replayed_exactly() {
    let rt = two_devices();
    let untimed = |mut r: launcher::RunReport| {
        r.wall_ms = 0.0;
        r.host_us = 0.0;
        r.devices
            .iter_mut()
            .for_each(|d| (d.kernel_ms, d.busy_ms) = (0.0, 0.0));
        r
    };
    let opts = LaunchOptions {
        unchecked: true,
        ..Default::default()
    };
    let share_sets: [&[(usize, f64)]; 3] =
        [&[(0, 0.5), (1, 0.5)], &[(1, 1.0)], &[(1, 0.3), (0, 0.7)]];
    let (wa, wb, hc) = (10, 56, 12);
    let mm_nd = NdRange::new(&[wb, hc], &[8, 4]).unwrap();
    let mut mm = Plan::from_kernel(&rt, matmul_ranges(), MATMUL, &[]).unwrap();
    let vadd_nd = NdRange::new(&[1000], &[8]).unwrap();
    let mut vadd = Plan::from_kernel(&rt, vadd_ranges(), VADD, &[]).unwrap();
    let mut resident_a: Option<launcher::DeviceBuffer> = None;
    for round in 0..4u64 {
        for shares in share_sets {
            let what = format!("round {round}, shares {shares:?}");
            // matmul: C merged on the host
            let input = mm
                .args_from_specs(&[
                    format!("A=rand:{}:{}", hc * wa, 11 + round),
                    format!("B=rand:{}:{}", wa * wb, 12 + round),
                    format!("C=rand:{}:{}", hc * wb, 13 + round),
                    format!("wa={wa}"),
                    format!("wb={wb}"),
                ])
                .unwrap();
            let mut got = input.clone();
            let report = launch(&mut mm, &mm_nd, &mut got, shares, &opts).unwrap();
            let mut fresh = Plan::from_kernel(&rt, matmul_ranges(), MATMUL, &[]).unwrap();
            let mut want = input.clone();
            let expect = launch(&mut fresh, &mm_nd, &mut want, shares, &opts).unwrap();
            assert!(report.split, "{what}: {report}");
            assert_eq!(untimed(report), untimed(expect), "{what}");
            assert_eq!(got.buffer("C"), want.buffer("C"), "{what}");
            let reference = whole_reference(&rt, MATMUL, "matmul", &mm_nd, &input);
            assert_eq!(got.buffer("C"), reference.buffer("C"), "{what}");

            // vadd: c left on the devices, read back with the kernel; `a`
            // resident across the launches (rewritten each round), `b` and
            // `c` fresh at every launch
            let input = vadd
                .args_from_specs(&[
                    format!("a=rand:1000:{}", 21 + round),
                    format!("b=rand:1000:{}", 22 + round),
                    format!("c=rand:1000:{}", 23 + round),
                    "n=1000".into(),
                ])
                .unwrap();
            let a_bytes = input.buffer("a").unwrap().as_bytes();
            let a = resident_a.get_or_insert_with(|| {
                launcher::DeviceBuffer::new(input.buffer("a").unwrap().clone())
            });
            a.write(0, a_bytes).unwrap();
            let mut got = input.clone();
            let report = launcher::launch_resident(
                &mut vadd,
                &vadd_nd,
                &mut got,
                &mut [(0, a)],
                shares,
                &opts,
            )
            .unwrap();
            let mut fresh = Plan::from_kernel(&rt, vadd_ranges(), VADD, &[]).unwrap();
            let mut want = input.clone();
            launch(&mut fresh, &vadd_nd, &mut want, shares, &opts).unwrap();
            assert!(report.split, "{what}: {report}");
            assert_eq!(got.buffer("c"), want.buffer("c"), "{what}");
            let reference = whole_reference(&rt, VADD, "vadd", &vadd_nd, &input);
            assert_eq!(got.buffer("c"), reference.buffer("c"), "{what}");
            assert_eq!(a.read_all().unwrap().as_bytes(), a_bytes, "{what}");
        }
    }
}

/// An unsplit launch among split ones over buffers kept on the devices
/// runs on the device that holds them: only what it lacks moves there (and
/// what only the other device holds, through the host), nothing moves when
/// it holds everything, and the results are the unsplit kernel's.
#[test]
fn an_unsplit_launch_runs_where_its_buffers_are_kept() {
    // an accumulation, so that running it twice or on stale inputs shows
    const ACC: &str = r#"
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
    int i = get_global_id(0);
    if (i < n) c[i] = 0.5f * c[i] + a[i] * b[i];
}
"#;
    let rt = two_devices();
    // (the hand-written subkernel has no guard)
    let opts = LaunchOptions {
        unchecked: true,
        ..Default::default()
    };
    let halves = [(0, 0.5), (1, 0.5)];
    let nd = NdRange::new(&[1000], &[8]).unwrap();
    let mut split = Plan::from_kernel(&rt, vadd_ranges(), VADD, &[]).unwrap();
    let mut unsplittable = vadd_ranges();
    unsplittable.splittable = false;
    unsplittable.reason = Some("made up: the kernel is not splittable".into());
    let mut unsplit = Plan::from_kernel(&rt, unsplittable, ACC, &[]).unwrap();
    let input = vadd_args(&split, 1000);
    let kept = |name: &str| launcher::DeviceBuffer::new(input.buffer(name).unwrap().clone());
    let (mut a, mut b, mut c) = (kept("a"), kept("b"), kept("c"));
    let mut args = input.clone();

    let mut launch = |plan: &mut Plan| {
        let bufs = &mut [(0, &mut a), (1, &mut b), (2, &mut c)];
        launcher::launch_resident(plan, &nd, &mut args, bufs, &halves, &opts).unwrap()
    };
    let r = launch(&mut split);
    assert!(r.split, "{r}");
    let mut expect = whole_reference(&rt, VADD, "vadd", &nd, &input);

    // each device holds half of every array: the kernel runs on the first,
    // sent the other halves (c's through the host)
    let r = launch(&mut unsplit);
    assert!(!r.split, "{r}");
    let ran: Vec<_> = r.devices.iter().filter(|d| d.work_groups > 0).collect();
    assert_eq!(ran.len(), 1, "{r}");
    // the other device's part of each of the three arrays, and of `c`
    // (which only it held) the same again through the host
    let other_half: u64 = r.devices.iter().map(|d| d.bytes_from_device).sum();
    assert!(other_half > 0 && other_half < 4000, "{r}");
    assert_eq!(ran[0].bytes_to_device, 3 * other_half, "{r}");
    assert_eq!(r.bytes_total, 4 * other_half, "{r}");
    expect = whole_reference(&rt, ACC, "vadd", &nd, &expect);

    // again: the device holds everything, nothing moves
    let r = launch(&mut unsplit);
    assert!(!r.split, "{r}");
    assert_eq!(r.bytes_total, 0, "{r}");
    expect = whole_reference(&rt, ACC, "vadd", &nd, &expect);

    // split again: the other device fetches its half back
    let r = launch(&mut split);
    assert!(r.split, "{r}");
    expect = whole_reference(&rt, VADD, "vadd", &nd, &expect);
    let r = launch(&mut unsplit);
    assert!(!r.split, "{r}");
    expect = whole_reference(&rt, ACC, "vadd", &nd, &expect);
    assert_eq!(c.read_all().unwrap(), expect.buffer("c").unwrap());
    assert_eq!(a.read_all().unwrap(), input.buffer("a").unwrap());
}
