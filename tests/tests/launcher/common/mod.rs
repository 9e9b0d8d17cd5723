//! Shared helpers of the launcher tests: PoCL device setup and hand-written
//! range file entries for the test kernels. Their subkernels are hand-written
//! without the run-time guard, so the tests launch with `unchecked: true`
//! (the guard itself is tested end to end in `tests/tests/guard.rs`).
#![allow(dead_code)]

use std::sync::{Once, OnceLock};

use launcher::Runtime;
use ranges_format::{
    ArgInfo, ArgKind, ArrayRanges, ArrayStatus, Chamber, Count, ExtraArg, ExtraArgMeaning,
    KernelRanges, Mode, Param, ParamSource, Range, Subkernel, WriteVerdict,
};

static ENV: Once = Once::new();
static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// Selects the PoCL devices before the first OpenCL call of this test
/// process (each test file is its own process) and returns the shared
/// runtime. Call at the start of every test.
pub fn setup(pocl_devices: &str) -> Runtime {
    ENV.call_once(|| {
        // Before any OpenCL call: PoCL reads these when the ICD loader loads it.
        std::env::set_var("POCL_DEVICES", pocl_devices);
    });
    RUNTIME
        .get_or_init(|| Runtime::new().expect("pocl devices"))
        .clone()
}

/// The two-device setup of most tests.
pub fn two_devices() -> Runtime {
    let rt = setup("pthread basic");
    assert_eq!(rt.devices().len(), 2, "expected the two pocl devices");
    rt
}

pub fn arg(index: u32, name: &str, kind: ArgKind, ty: &str, size: u32) -> ArgInfo {
    ArgInfo {
        index,
        name: name.into(),
        kind,
        elem_type: ty.into(),
        elem_size: size,
        fields: Vec::new(),
    }
}

pub fn range(lower: &str, upper: &str) -> Option<Range> {
    Some(Range {
        lower: lower.into(),
        upper: upper.into(),
    })
}

pub fn count(value: &str) -> Option<Count> {
    Some(Count {
        at: Vec::new(),
        terms: vec![vec![Chamber {
            domain: String::new(),
            value: value.into(),
        }]],
    })
}

pub fn param(name: &str, source: ParamSource) -> Param {
    Param {
        name: name.into(),
        source,
    }
}

pub const VADD: &str = r#"
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
    int i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}
"#;

pub const VADD_SUB: &str = r#"
__kernel void vadd_sub(__global const float* a, __global const float* b, __global float* c, int n,
                       long base_a, long base_b, long base_c) {
    int i = get_global_id(0);
    if (i < n) c[i - base_c] = a[i - base_a] + b[i - base_b];
}
"#;

/// Hand-written ranges of `vadd` over `[lo, hi)` work-groups of dimension 0
/// (for launches with n == global size: every element of a slice is
/// touched).
pub fn vadd_ranges() -> KernelRanges {
    let lower = "[lo, hi, l0] -> { [(l0*lo)] }";
    let upper = "[lo, hi, l0] -> { [(l0*hi - 1)] }";
    let array = |index: u32, name: &str, mode: Mode| ArrayRanges {
        arg_index: index,
        name: name.into(),
        elem_type: "float".into(),
        elem_size: 4,
        mode,
        status: ArrayStatus::Bounded,
        total: range("{ [(0)] }", "[g0] -> { [(g0 - 1)] }"),
        slice: range(lower, upper),
        read_slice: if mode == Mode::R {
            range(lower, upper)
        } else {
            None
        },
        write_slice: if mode == Mode::W {
            range(lower, upper)
        } else {
            None
        },
        count_total: count("[g0] -> { [(g0)] }"),
        count_slice: count("[lo, hi, l0] -> { [(l0*hi - l0*lo)] }"),
        write: (mode == Mode::W).then_some(WriteVerdict {
            disjoint_across_slices: true,
            fills_hull: true,
            runs: None,
            written_count: None,
        }),
        boxes: None,
        vertices_slice: None,
        reduction: None,
        checked: false,
    };
    KernelRanges {
        name: "vadd".into(),
        work_dim: 1,
        params: vec![
            param("lo", ParamSource::SliceLo),
            param("hi", ParamSource::SliceHi),
            param("l0", ParamSource::LocalSize(0)),
            param("g0", ParamSource::GlobalSize(0)),
        ],
        args: vec![
            arg(0, "a", ArgKind::GlobalBuffer, "float", 4),
            arg(1, "b", ArgKind::GlobalBuffer, "float", 4),
            arg(2, "c", ArgKind::GlobalBuffer, "float", 4),
            arg(3, "n", ArgKind::Scalar, "int", 4),
        ],
        split_dim: Some(0),
        splittable: true,
        reason: None,
        arrays: vec![
            array(0, "a", Mode::R),
            array(1, "b", Mode::R),
            array(2, "c", Mode::W),
        ],
        assumptions: vec![],
        subkernel: Some(Subkernel {
            name: "vadd_sub".into(),
            source: VADD_SUB.into(),
            extra_args: ["a", "b", "c"]
                .iter()
                .enumerate()
                .map(|(i, n)| ExtraArg {
                    name: format!("base_{n}"),
                    meaning: ExtraArgMeaning::ArrayBase {
                        arg_index: i as u32,
                    },
                })
                .collect(),
            guarded: vec![],
            unguarded: vec![],
            aligned: vec![],
        }),
        diagnostics: vec![],
        group_size_use: None,
        cut_short: Vec::new(),
    }
}

pub const MATMUL: &str = r#"
__kernel void matmul(__global const float* A, __global const float* B, __global float* C,
                     int wa, int wb) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    float acc = 0.0f;
    for (int k = 0; k < wa; k++)
        acc += A[y * wa + k] * B[k * wb + x];
    C[y * wb + x] = acc;
}
"#;

pub const MATMUL_SUB: &str = r#"
__kernel void matmul_sub(__global const float* A, __global const float* B, __global float* C,
                         int wa, int wb, long base_A, long base_B, long base_C,
                         long group_base0, long num_groups0) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    float acc = 0.0f;
    for (int k = 0; k < wa; k++)
        acc += A[y * wa + k - base_A] * B[k * wb + x - base_B];
    C[y * wb + x - base_C] = acc;
}
"#;

/// Hand-written ranges of `matmul` (C = A x B, C is g1 x wb, A is g1 x wa,
/// B is wa x wb, width wb = global size 0) split along x: the hulls of B and
/// C over a slice of columns span many rows and overlap between slices, so
/// C's writes do not fill its hull (diff-merge).
pub fn matmul_ranges() -> KernelRanges {
    let a = |index: u32,
             name: &str,
             mode: Mode,
             total: Option<Range>,
             slice: Option<Range>,
             cnt: &str| ArrayRanges {
        arg_index: index,
        name: name.into(),
        elem_type: "float".into(),
        elem_size: 4,
        mode,
        status: ArrayStatus::Bounded,
        total,
        slice: slice.clone(),
        read_slice: if mode == Mode::R { slice.clone() } else { None },
        write_slice: if mode == Mode::W { slice } else { None },
        count_total: None,
        count_slice: count(cnt),
        write: (mode == Mode::W).then_some(WriteVerdict {
            disjoint_across_slices: true,
            fills_hull: false,
            runs: Some("g1 runs of l0*(hi - lo) elements, stride wb".into()),
            written_count: None,
        }),
        boxes: None,
        vertices_slice: None,
        reduction: None,
        checked: false,
    };
    let p = "[lo, hi, l0, g1, wa, wb]";
    KernelRanges {
        name: "matmul".into(),
        work_dim: 2,
        params: vec![
            param("lo", ParamSource::SliceLo),
            param("hi", ParamSource::SliceHi),
            param("l0", ParamSource::LocalSize(0)),
            param("g1", ParamSource::GlobalSize(1)),
            param("wa", ParamSource::ScalarArg { arg_index: 3 }),
            param("wb", ParamSource::ScalarArg { arg_index: 4 }),
        ],
        args: vec![
            arg(0, "A", ArgKind::GlobalBuffer, "float", 4),
            arg(1, "B", ArgKind::GlobalBuffer, "float", 4),
            arg(2, "C", ArgKind::GlobalBuffer, "float", 4),
            arg(3, "wa", ArgKind::Scalar, "int", 4),
            arg(4, "wb", ArgKind::Scalar, "int", 4),
        ],
        split_dim: Some(0),
        splittable: true,
        reason: None,
        arrays: vec![
            a(
                0,
                "A",
                Mode::R,
                range("{ [(0)] }", &format!("{p} -> {{ [(g1*wa - 1)] }}")),
                range("{ [(0)] }", &format!("{p} -> {{ [(g1*wa - 1)] }}")),
                &format!("{p} -> {{ [(g1*wa)] }}"),
            ),
            a(
                1,
                "B",
                Mode::R,
                range("{ [(0)] }", &format!("{p} -> {{ [(wa*wb - 1)] }}")),
                range(
                    &format!("{p} -> {{ [(l0*lo)] }}"),
                    &format!("{p} -> {{ [((wa - 1)*wb + l0*hi - 1)] }}"),
                ),
                &format!("{p} -> {{ [(wa*l0*(hi - lo))] }}"),
            ),
            a(
                2,
                "C",
                Mode::W,
                range("{ [(0)] }", &format!("{p} -> {{ [(g1*wb - 1)] }}")),
                range(
                    &format!("{p} -> {{ [(l0*lo)] }}"),
                    &format!("{p} -> {{ [((g1 - 1)*wb + l0*hi - 1)] }}"),
                ),
                &format!("{p} -> {{ [(g1*l0*(hi - lo))] }}"),
            ),
        ],
        assumptions: vec![ranges_format::Assumption {
            array: None,
            description: "the matrix width wb is the global size along x".into(),
            condition: "[wb, l0, lo, hi, g1, wa] -> { : wb >= 1 }".into(),
        }],
        subkernel: Some(Subkernel {
            name: "matmul_sub".into(),
            source: MATMUL_SUB.into(),
            extra_args: vec![
                ExtraArg {
                    name: "base_A".into(),
                    meaning: ExtraArgMeaning::ArrayBase { arg_index: 0 },
                },
                ExtraArg {
                    name: "base_B".into(),
                    meaning: ExtraArgMeaning::ArrayBase { arg_index: 1 },
                },
                ExtraArg {
                    name: "base_C".into(),
                    meaning: ExtraArgMeaning::ArrayBase { arg_index: 2 },
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
    }
}
