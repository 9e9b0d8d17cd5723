//! Inside an application, clpart computes exactly what the driver would:
//! host programs that depend on what the driver decides (a header
//! regenerated between two builds and a `chdir`, the OpenCL C version and
//! its feature macros, the work-group size of a launch with a NULL local
//! size) or alias their arguments (one buffer twice, sub-buffers of one
//! buffer), move rectangles, or launch from several host threads at once
//! print the same bytes plain and under `clpart exec` at 50/50, with
//! automatic shares and on three devices; and the kernels that may split
//! do, the others say why. So do programs that order their commands by
//! events alone (an out-of-order queue), migrate,
//! map or write buffers that split launches left on clpart's devices,
//! keep data in private variables of a struct type (a CFD solver),
//! hand them to a native kernel or an image, or use atomics, `__local`
//! tiles and barriers; and programs whose kernel objects or programs are
//! made the less common ways (all kernels of a program at once, a clone,
//! compiled and linked, from a binary, two contexts).

mod host_apps;

use host_apps::{compile, layer, repo};
use std::path::Path;
use std::process::{Command, Output};

/// Runs the built program in its folder on the PoCL devices `devices`:
/// plain (`layered` `None`) or under `clpart exec` with these options and
/// a report at `report`. Killed after two minutes.
fn run(app: &str, exe: &Path, devices: &str, layered: Option<(&[&str], &Path)>) -> Output {
    let mut c = Command::new("timeout");
    c.arg("120");
    if let Some((options, report)) = layered {
        c.arg(env!("CARGO_BIN_EXE_clpart"))
            .args(["exec", "--wait-for-analysis"])
            .args(options)
            .arg("--report")
            .arg(report)
            .arg("--");
    }
    c.arg(exe)
        .current_dir(repo().join("tests/apps").join(app))
        .env("POCL_DEVICES", devices)
        .env("CLPART_LAYER", layer())
        .env_remove("OPENCL_LAYERS");
    c.output().unwrap()
}

/// Per kernel of the report: launches, split launches, reason.
fn kernels(report: &Path) -> Vec<(String, u64, u64, String)> {
    let text = std::fs::read_to_string(report).unwrap();
    let r: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut out: Vec<_> = r["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["name"].as_str().unwrap().to_string(),
                k["launches"].as_u64().unwrap(),
                k["split_launches"].as_u64().unwrap(),
                k["reason"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// What a kernel must do at 50/50: split at every launch, or never, with
/// a reason containing the text, or some of its launches (kernel objects
/// of one name in two programs or with two argument sets), the others
/// with the reason.
enum Verdict {
    Splits,
    Whole(&'static str),
    Partly(&'static str),
}

const APPS: &[(&str, &[(&str, Verdict)])] = &[
    // one buffer as two arguments, and two sub-buffers of it: passed through
    (
        "aliased",
        &[
            ("axpy", Verdict::Whole("is a sub-buffer")),
            ("pair_sum", Verdict::Whole("is a sub-buffer")),
        ],
    ),
    ("regen_header", &[("apply", Verdict::Splits)]),
    (
        "fp64_feature",
        &[
            (
                "row_sum",
                Verdict::Whole("the OpenCL C version or the device's features"),
            ),
            ("version", Verdict::Splits),
        ],
    ),
    (
        "null_local",
        &[
            ("scale", Verdict::Splits),
            (
                "where",
                Verdict::Whole("without a work-group size, which the driver chooses"),
            ),
            ("where2d", Verdict::Whole("get_group_id")),
        ],
    ),
    // a tile written in, a window copied out and one read back, all by
    // rectangles, around split kernels
    (
        "rect_copies",
        &[("smooth", Verdict::Splits), ("scale", Verdict::Splits)],
    ),
    // three host threads, a queue and a kernel object each, one shared
    // read-only buffer
    ("host_threads", &[("relax", Verdict::Splits)]),
    // an out-of-order queue ordered by the program's events alone
    (
        "out_of_order",
        &[("axpb", Verdict::Splits), ("neighbor", Verdict::Splits)],
    ),
    // buffers migrated to the host and back between split launches
    (
        "migrate",
        &[("axpb", Verdict::Splits), ("neighbor", Verdict::Splits)],
    ),
    // resident buffers written and read by every kind of command between
    // split launches, and a kernel with atomics between them (its counter
    // merged as a sum)
    (
        "resident",
        &[
            ("axpb", Verdict::Splits),
            ("neighbor", Verdict::Splits),
            ("scale4", Verdict::Splits),
            ("negate_above", Verdict::Splits),
        ],
    ),
    // a CL_MEM_USE_HOST_PTR buffer updated in place and mapped
    ("scale_map", &[("scale", Verdict::Splits)]),
    // a ring written through an index array: one value per slot merges, two
    // values per slot are a conflict found at run time (run unsplit)
    (
        "scatter",
        &[
            ("ring_same", Verdict::Splits),
            (
                "ring_overwrite",
                Verdict::Whole("a write conflict between slices"),
            ),
        ],
    ),
    // an unstructured-mesh solver's three kernels over FLOAT3 private
    // variables, neighbours read through an index array, a stage index
    // changing every launch and a device-side copy every iteration
    (
        "cfd",
        &[
            ("step_factor", Verdict::Splits),
            ("compute_flux", Verdict::Splits),
            ("time_step", Verdict::Splits),
        ],
    ),
    // a relaxation that splits and, at every step, a reduction finished by
    // the work-group that draws the last ticket, which does not: it runs
    // unsplit where the relaxation left the grids
    (
        "residual",
        &[
            ("relax", Verdict::Splits),
            ("change", Verdict::Whole("its returned value is used")),
        ],
    ),
    // Needleman-Wunsch by blocks of an anti-diagonal per launch, a helper
    // taking the score matrix and the substitution scores together, local
    // tiles through subscript macros, built with -DBS=16
    (
        "nw",
        &[("nw_upper", Verdict::Splits), ("nw_lower", Verdict::Splits)],
    ),
    // a dynamic program over rows, `iteration` rows per launch in blocks
    // with halos in local memory, subscripts inside a macro's arguments
    // (`MIN(prev[w], prev[tx])`): the launches at the analysis' values
    // split; the first fails the parametric analysis' assumptions and the
    // last, shorter, would need a fourth analysis
    (
        "pathfinder",
        &[("dynproc", Verdict::Partly("not analyzed again"))],
    ),
    // breadth-first search, two kernels per level and a flag read back:
    // the expansion's indirect cost writes change elements another slice
    // may have read (its reads are the slice's frontier), so most of its
    // launches are discarded and run again unsplit
    (
        "bfs",
        &[
            (
                "bfs_expand",
                Verdict::Partly("a write conflict between slices"),
            ),
            ("bfs_update", Verdict::Splits),
        ],
    ),
    // a thermal pyramid built with -DBLOCK_SIZE=16, halos shrinking per
    // step in local tiles, the temperature buffers swapped per launch
    ("hotspot", &[("hotspot", Verdict::Splits)]),
    // particles in boxes, each box's neighbour list an array member of its
    // struct, structs passed by value: its forces are added where the
    // box's offset, loaded from memory, says, and also read there (a race
    // between slices the analysis cannot rule out)
    (
        "lavamd",
        &[(
            "kernel_gpu_opencl",
            Verdict::Whole("is written but cannot be bounded"),
        )],
    ),
    // global atomics accumulating one set of bins over six launches, each
    // merged as a sum of the devices' counts
    ("histogram", &[("histogram", Verdict::Splits)]),
    // a native kernel and an image over buffers split launches wrote (the
    // launches over the buffer under the image run whole)
    ("native_image", &[("twice_image", Verdict::Whole("image"))]),
    // __local tiles and barriers
    ("matmul_tiled", &[("matmul_tiled", Verdict::Splits)]),
    // kernels from clCreateKernelsInProgram, a clone with other arguments
    // (one a CL_MEM_HOST_NO_ACCESS buffer), a 3-D NDRange with an offset
    (
        "kernel_objects",
        &[
            ("fill3d", Verdict::Splits),
            ("axpy_from", Verdict::Partly("CL_MEM_HOST_")),
        ],
    ),
    // a program compiled with an in-memory header and linked, one built
    // again from its binary on a second context: passed through
    (
        "linked_binary",
        &[
            ("weighted", Verdict::Whole("clCreateProgramWithSource")),
            ("scale", Verdict::Partly("clCreateProgramWithSource")),
        ],
    ),
];

const MODES: &[(&str, &[&str])] = &[
    ("pthread basic", &["--split", "0:0.5,1:0.5"]),
    ("pthread basic", &["--split", "auto"]),
    (
        "pthread pthread pthread",
        &["--split", "0:0.34,1:0.33,2:0.33"],
    ),
];

#[test]
fn programs_that_depend_on_the_driver_print_the_same_bytes_under_clpart() {
    let tmp = tempfile::tempdir().unwrap();
    for &(app, verdicts) in APPS {
        let exe = compile(app, tmp.path());
        for &(devices, options) in MODES {
            let plain = run(app, &exe, devices, None);
            let plain_out = String::from_utf8_lossy(&plain.stdout).into_owned();
            assert!(
                plain.status.success() && plain_out.contains(": 0 mismatches"),
                "{app} plain on {devices}: {:?}\n{plain_out}{}",
                plain.status,
                String::from_utf8_lossy(&plain.stderr)
            );
            let report = tmp.path().join(format!("{app}.json"));
            let layered = run(app, &exe, devices, Some((options, &report)));
            assert_eq!(
                String::from_utf8_lossy(&layered.stdout),
                plain_out,
                "{app} under clpart exec {options:?} on {devices}: {:?}\n{}",
                layered.status,
                String::from_utf8_lossy(&layered.stderr)
            );
            assert!(layered.status.success(), "{app}: {:?}", layered.status);
            if options[1] != "0:0.5,1:0.5" {
                continue;
            }
            let seen = kernels(&report);
            for (name, verdict) in verdicts.iter() {
                let k = seen
                    .iter()
                    .find(|k| k.0 == *name)
                    .unwrap_or_else(|| panic!("{app}: no kernel {name} in {seen:?}"));
                match verdict {
                    Verdict::Splits => assert_eq!(k.1, k.2, "{app}: {k:?}"),
                    Verdict::Whole(why) => {
                        assert_eq!(k.2, 0, "{app}: {k:?}");
                        assert!(k.3.contains(why), "{app}: {k:?} lacks {why:?}");
                    }
                    Verdict::Partly(why) => {
                        assert!(0 < k.2 && k.2 < k.1, "{app}: {k:?}");
                        assert!(k.3.contains(why), "{app}: {k:?} lacks {why:?}");
                    }
                }
            }
        }
    }
}
