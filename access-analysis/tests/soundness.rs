//! Soundness by enumeration: for concrete launches, the (work-item, element)
//! pairs each corpus kernel really accesses — computed here by re-stating its
//! subscripts in Rust — must lie in the modeled relations: reads and
//! may-writes contain them, must-writes are contained in the real writes.
//! Where the analysis is exact, the relations are equal to them.

mod common;

use access_analysis::{AnalysisOptions, KernelAccesses};
use common::{concrete, corpus, map, pairs, Launch};
use isl_rs::Context;
use std::collections::BTreeMap;

/// One real access: array, is-write, element index.
type Acc = (&'static str, bool, i64);
/// Real (work-item, element) pairs per (array, is-write).
type Real<'a> = BTreeMap<(&'a str, bool), Vec<([i64; 3], i64)>>;

struct Item {
    x: [i64; 3],
    l: [i64; 3],
    g: [i64; 3],
}

#[derive(Clone, Copy, PartialEq)]
enum Exact {
    /// Relations equal the real accesses.
    Yes,
    /// Only containment is expected (over-approximations).
    No,
}

fn check(
    file: &str,
    options: &AnalysisOptions,
    launch: &Launch,
    exact: Exact,
    f: &dyn Fn(&Launch, &Item, &mut Vec<Acc>),
) {
    let ka = corpus(file, options);
    check_ka(&ka, file, launch, exact, f);
}

fn check_ka(
    ka: &KernelAccesses,
    file: &str,
    launch: &Launch,
    exact: Exact,
    f: &dyn Fn(&Launch, &Item, &mut Vec<Acc>),
) {
    let mut real: Real = BTreeMap::new();
    for (x, l, g) in launch.work_items() {
        let mut accs = Vec::new();
        f(launch, &Item { x, l, g }, &mut accs);
        for (name, w, i) in accs {
            real.entry((name, w)).or_default().push((x, i));
        }
    }
    let ctx = Context::alloc();
    for a in &ka.arrays {
        if a.whole.is_some() {
            continue;
        }
        let name: &str = &a.name;
        let get = |w: bool| real.get(&(name, w)).cloned().unwrap_or_default();
        // The real relations, in the parameter space of the analysis.
        let header = common::params_header(ka);
        let real_map = |w: bool| {
            map(&ctx, &format!("{header}{}", pairs(name, &get(w))))
                .intersect_params(common::set(&ctx, &launch.fix(ka)))
                .unwrap()
        };
        let (reads, writes) = (real_map(false), real_map(true));
        let r = concrete(&ctx, ka, a, "reads", launch);
        let must = concrete(&ctx, ka, a, "must", launch);
        let may = concrete(&ctx, ka, a, "may", launch);
        let show = |m: &isl_rs::Map| m.to_str().unwrap().to_string();
        let count = |m: &isl_rs::Map| {
            m.copy()
                .unwrap()
                .wrap()
                .unwrap()
                .count_val()
                .unwrap()
                .get_num_si()
                .unwrap()
        };
        let distinct = |w: bool| {
            let mut v = get(w);
            v.sort();
            v.dedup();
            v.len() as i64
        };
        assert!(
            reads.is_subset(&r).unwrap(),
            "{file} {name}: real reads not in {}\nreal: {}",
            a.reads,
            show(&reads)
        );
        assert!(
            writes.is_subset(&may).unwrap(),
            "{file} {name}: real writes not in {}",
            a.may_writes
        );
        assert!(
            must.is_subset(&may).unwrap(),
            "{file} {name}: must-writes not in may-writes"
        );
        // Must-writes are certainly written: contained in the real writes.
        let both = must
            .copy()
            .unwrap()
            .intersect(writes.copy().unwrap())
            .unwrap();
        assert_eq!(
            count(&both),
            count(&must),
            "{file} {name}: must-writes {} are not all written",
            a.must_writes
        );
        if exact == Exact::Yes {
            // real ⊆ modeled and the same number of pairs: equal.
            assert_eq!(
                count(&r),
                distinct(false),
                "{file} {name}: reads {} larger than real",
                show(&r)
            );
            assert_eq!(
                count(&may),
                distinct(true),
                "{file} {name}: may-writes {} larger than real",
                show(&may)
            );
            assert_eq!(
                count(&must),
                distinct(true),
                "{file} {name}: must-writes {} smaller than real",
                show(&must)
            );
        }
    }
}

fn opts() -> AnalysisOptions {
    AnalysisOptions::default()
}

fn with_local(ls: [i64; 3]) -> AnalysisOptions {
    AnalysisOptions {
        local_size: Some(ls),
        ..AnalysisOptions::default()
    }
}

#[test]
fn element_wise_kernels() {
    let l = Launch::new([24, 1, 1], [8, 1, 1]).offset([3, 0, 0]);
    check("vadd.cl", &opts(), &l, Exact::Yes, &|_, it, o| {
        let i = it.x[0];
        o.extend([("a", false, i), ("b", false, i), ("c", true, i)]);
    });
    check("strided.cl", &opts(), &l, Exact::Yes, &|_, it, o| {
        let i = it.x[0];
        o.extend([("a", false, 2 * i + 1), ("a", false, 2 * i), ("b", true, i)]);
    });
    check("interleave.cl", &opts(), &l, Exact::Yes, &|_, it, o| {
        let i = it.x[0];
        o.extend([
            ("a", false, i),
            ("b", false, i),
            ("out", true, 2 * i),
            ("out", true, 2 * i + 1),
        ]);
    });
    check("vec4_add.cl", &opts(), &l, Exact::Yes, &|_, it, o| {
        for k in 0..4 {
            let e = 4 * it.x[0] + k;
            o.extend([("a", false, e), ("b", false, e), ("c", true, e)]);
        }
    });
    check("vec4_ptr.cl", &opts(), &l, Exact::Yes, &|_, it, o| {
        let i = it.x[0];
        o.extend([("a", false, i), ("b", false, i), ("c", true, i)]);
    });
    check("helper_call.cl", &opts(), &l, Exact::Yes, &|_, it, o| {
        let i = it.x[0];
        o.extend([
            ("a", false, i),
            ("b", false, i),
            ("b", false, i + 1),
            ("out", true, i),
        ]);
    });
    let g = Launch::new([32, 1, 1], [8, 1, 1]).arg("n", 27);
    check("guarded_scale.cl", &opts(), &g, Exact::Yes, &|l, it, o| {
        let i = it.x[0];
        if i < l.scalars["n"] {
            o.extend([("x", false, i), ("y", true, i)]);
        }
    });
    check("collatz.cl", &opts(), &g, Exact::Yes, &|l, it, o| {
        let i = it.x[0];
        if i < l.scalars["n"] {
            o.extend([("start", false, i), ("steps", true, i)]);
        }
    });
    let r = Launch::new([16, 1, 1], [8, 1, 1]).arg("npix", 13);
    check("rgba_to_gray.cl", &opts(), &r, Exact::Yes, &|l, it, o| {
        let i = it.x[0];
        if i < l.scalars["npix"] {
            for k in 0..4 {
                o.push(("rgba", false, 4 * i + k));
            }
            o.extend([("gray", true, i), ("contrast", true, i)]);
        }
    });
}

#[test]
fn guards_quasi_affine_and_piecewise_subscripts() {
    let l = Launch::new([40, 1, 1], [8, 1, 1]).arg("npoints", 9);
    check("aos_to_soa.cl", &opts(), &l, Exact::Yes, &|l, it, o| {
        let (i, np) = (it.x[0], l.scalars["npoints"]);
        if i < 4 * np {
            o.extend([("aos", false, i), ("soa", true, (i % 4) * np + i / 4)]);
        }
    });
    let l = Launch::new([24, 1, 1], [8, 1, 1])
        .arg("n", 21)
        .arg("radius", 3);
    check("conv1d.cl", &opts(), &l, Exact::Yes, &|l, it, o| {
        let (i, n, r) = (it.x[0], l.scalars["n"], l.scalars["radius"]);
        if i < n {
            for k in -r..=r {
                let j = i + k;
                if j >= 0 && j < n {
                    o.extend([("filt", false, k + r), ("in", false, j)]);
                }
            }
            o.push(("out", true, i));
        }
    });
    let l = Launch::new([24, 1, 1], [8, 1, 1]).arg("n", 19);
    check("clamp_blur.cl", &opts(), &l, Exact::Yes, &|l, it, o| {
        let (i, n) = (it.x[0], l.scalars["n"]);
        if i < n {
            for e in [
                (i - 2).max(0),
                if i > 0 { i - 1 } else { 0 },
                i,
                (i + 1).min(n - 1),
                (i + 2).clamp(0, n - 1),
            ] {
                o.push(("in", false, e));
            }
            o.push(("out", true, i));
        }
    });
    let l = Launch::new([16, 1, 1], [4, 1, 1]).arg("n", 16);
    check("flag_write.cl", &opts(), &l, Exact::Yes, &|l, it, o| {
        let i = it.x[0];
        if i < l.scalars["n"] {
            o.extend([("in", false, i), ("out", true, i), ("flag", true, 0)]);
        }
    });
    // Data-dependent branches: only containment (label writes are may-writes).
    let l = Launch::new([16, 1, 1], [4, 1, 1]).arg("n", 12);
    check("classify.cl", &opts(), &l, Exact::No, &|l, it, o| {
        let i = it.x[0];
        if i < l.scalars["n"] {
            o.push(("v", false, i));
            if i % 3 == 0 {
                o.push(("label", true, i));
            }
        }
    });
}

fn matmul(l: &Launch, it: &Item, o: &mut Vec<Acc>) {
    let (x, y, w) = (it.x[0], it.x[1], l.scalars["width"]);
    for i in 0..w {
        o.extend([("a", false, y * w + i), ("b", false, i * w + x)]);
    }
    o.push(("c", true, y * w + x));
}

#[test]
fn linearized_subscripts_with_run_time_widths() {
    let l = Launch::new([6, 4, 1], [2, 2, 1])
        .arg("width", 7)
        .offset([1, 2, 0]);
    check("matmul.cl", &opts(), &l, Exact::Yes, &matmul);
    // The relation stays exact when the launch violates the assumption x < width.
    let bad = Launch::new([9, 3, 1], [3, 1, 1]).arg("width", 5);
    check("matmul.cl", &opts(), &bad, Exact::Yes, &matmul);
    let mut spec = opts();
    spec.specialize.insert("width".into(), 7);
    check("matmul.cl", &spec, &l, Exact::Yes, &matmul);
    let l = Launch::new([8, 6, 1], [4, 2, 1])
        .arg("width", 7)
        .arg("height", 5);
    check("transpose.cl", &opts(), &l, Exact::Yes, &|l, it, o| {
        let (x, y, w, h) = (it.x[0], it.x[1], l.scalars["width"], l.scalars["height"]);
        if x < w && y < h {
            o.extend([("in", false, y * w + x), ("out", true, x * h + y)]);
        }
    });
    check("stencil2d.cl", &opts(), &l, Exact::Yes, &|l, it, o| {
        let (x, y, w, h) = (it.x[0], it.x[1], l.scalars["width"], l.scalars["height"]);
        if x < w && y < h {
            let idx = y * w + x;
            if x > 0 && x < w - 1 && y > 0 && y < h - 1 {
                for e in [idx, idx - 1, idx + 1, idx - w, idx + w] {
                    o.push(("in", false, e));
                }
            } else {
                o.push(("in", false, idx));
            }
            o.push(("out", true, idx));
        }
    });
    let l = Launch::new([6, 5, 4], [2, 5, 2])
        .arg("nx", 5)
        .arg("ny", 4)
        .arg("nz", 4);
    check("stencil3d.cl", &opts(), &l, Exact::Yes, &|l, it, o| {
        let (x, y, z) = (it.x[0], it.x[1], it.x[2]);
        let (nx, ny, nz) = (l.scalars["nx"], l.scalars["ny"], l.scalars["nz"]);
        if x >= 1 && x < nx - 1 && y >= 1 && y < ny - 1 && z >= 1 && z < nz - 1 {
            let idx = (z * ny + y) * nx + x;
            for e in [
                idx,
                idx - 1,
                idx + 1,
                idx - nx,
                idx + nx,
                idx - nx * ny,
                idx + nx * ny,
            ] {
                o.push(("in", false, e));
            }
            o.push(("out", true, idx));
        }
    });
    let l = Launch::new([6, 5, 1], [3, 5, 1])
        .arg("width", 5)
        .arg("height", 4)
        .arg("count", 3);
    check("row_sum_2d.cl", &opts(), &l, Exact::Yes, &|l, it, o| {
        let (x, y) = (it.x[0], it.x[1]);
        let (w, h, c) = (l.scalars["width"], l.scalars["height"], l.scalars["count"]);
        if x < w && y < h {
            for k in 0..c {
                o.push(("in", false, (y * c + k) * w + x));
            }
            o.push(("out", true, y * w + x));
        }
    });
    let l = Launch::new([8, 1, 1], [4, 1, 1]).arg("nx", 5).arg("ny", 7);
    check("bicg.cl", &opts(), &l, Exact::Yes, &|l, it, o| {
        let (j, nx, ny) = (it.x[0], l.scalars["nx"], l.scalars["ny"]);
        if j < ny {
            o.push(("s", true, j));
            for i in 0..nx {
                o.extend([
                    ("s", false, j),
                    ("s", true, j),
                    ("r", false, i),
                    ("A", false, i * ny + j),
                ]);
            }
        }
    });
    let l = Launch::new([6, 4, 1], [2, 2, 1])
        .arg("ni", 3)
        .arg("nj", 5)
        .arg("nk", 4);
    check("gemm.cl", &opts(), &l, Exact::Yes, &|l, it, o| {
        let (j, i) = (it.x[0], it.x[1]);
        let (ni, nj, nk) = (l.scalars["ni"], l.scalars["nj"], l.scalars["nk"]);
        if i < ni && j < nj {
            o.extend([("c", false, i * nj + j), ("c", true, i * nj + j)]);
            for k in 0..nk {
                o.extend([
                    ("c", false, i * nj + j),
                    ("c", true, i * nj + j),
                    ("a", false, i * nk + k),
                    ("b", false, k * nj + j),
                ]);
            }
        }
    });
    let l = Launch::new([8, 1, 1], [4, 1, 1])
        .arg("nrows", 6)
        .arg("ncols", 5);
    check("matvec.cl", &opts(), &l, Exact::Yes, &|l, it, o| {
        let (row, nr, nc) = (it.x[0], l.scalars["nrows"], l.scalars["ncols"]);
        if row < nr {
            for j in 0..nc {
                o.extend([("A", false, row * nc + j), ("x", false, j)]);
            }
            o.push(("y", true, row));
        }
    });
    for t in [0, 2] {
        let l = Launch::new([8, 1, 1], [4, 1, 1]).arg("size", 7).arg("t", t);
        check("fan1.cl", &opts(), &l, Exact::Yes, &|l, it, o| {
            let (gid, size, t) = (it.x[0], l.scalars["size"], l.scalars["t"]);
            if gid < size - 1 - t {
                o.extend([
                    ("m_dev", true, size * (gid + t + 1) + t),
                    ("a_dev", false, size * (gid + t + 1) + t),
                    ("a_dev", false, size * t + t),
                ]);
            }
        });
        let l = Launch::new([8, 8, 1], [4, 4, 1]).arg("size", 7).arg("t", t);
        check("fan2.cl", &opts(), &l, Exact::Yes, &|l, it, o| {
            let (x, y, size, t) = (it.x[0], it.x[1], l.scalars["size"], l.scalars["t"]);
            if x < size - 1 - t && y < size - t {
                let e = size * (x + 1 + t) + (y + t);
                o.extend([
                    ("m_dev", false, size * (x + 1 + t) + t),
                    ("a_dev", false, size * t + (y + t)),
                    ("a_dev", false, e),
                    ("a_dev", true, e),
                ]);
                if y == 0 {
                    o.extend([
                        ("m_dev", false, size * (x + 1 + t) + (y + t)),
                        ("b_dev", false, b_idx(x, t)),
                        ("b_dev", true, b_idx(x, t)),
                        ("b_dev", false, t),
                    ]);
                }
            }
        });
    }
}

fn b_idx(x: i64, t: i64) -> i64 {
    x + 1 + t
}

#[test]
fn loops_with_run_time_bounds_and_strides() {
    let l = Launch::new([16, 1, 1], [4, 1, 1]).arg("natoms", 5);
    check("mdh.cl", &opts(), &l, Exact::Yes, &|l, it, o| {
        let i = it.x[0];
        for j in 0..l.scalars["natoms"] {
            o.extend([("gx", false, i), ("gy", false, i), ("gz", false, i)]);
            o.extend([
                ("ax", false, j),
                ("ay", false, j),
                ("az", false, j),
                ("charge", false, j),
                ("size", false, j),
            ]);
        }
        o.push(("val", true, i));
    });
    // Grid-stride loop: the stride by get_global_size is over-approximated ...
    let saxpy = |l: &Launch, it: &Item, o: &mut Vec<Acc>| {
        let mut i = it.x[0] - l.go[0];
        while i < l.scalars["n"] {
            o.extend([("x", false, i), ("y", false, i), ("y", true, i)]);
            i += l.gs[0];
        }
    };
    let l = Launch::new([8, 1, 1], [4, 1, 1])
        .arg("n", 29)
        .offset([5, 0, 0]);
    check("saxpy_offset.cl", &opts(), &l, Exact::No, &saxpy);
    // ... and exact once the global size is specialized.
    let mut spec = opts();
    spec.specialize.insert("gs0".into(), 8);
    check("saxpy_offset.cl", &spec, &l, Exact::Yes, &saxpy);
}

#[test]
fn local_and_group_ids() {
    let gid_write = |l: &Launch, it: &Item, o: &mut Vec<Acc>| {
        let (g, lid, ls, ng) = (it.g[0], it.l[0], l.ls[0], l.gs[0] / l.ls[0]);
        let i = g * ls + lid;
        o.extend([("out", true, (ng - 1 - g) * ls + lid), ("in", false, i)]);
        if lid == 0 {
            o.extend([("firsts", true, g), ("in", false, i)]);
        }
    };
    let l = Launch::new([24, 1, 1], [8, 1, 1]).offset([2, 0, 0]);
    check(
        "group_id_write.cl",
        &with_local([8, 1, 1]),
        &l,
        Exact::Yes,
        &gid_write,
    );
    check("group_id_write.cl", &opts(), &l, Exact::No, &gid_write);
    let reduce = |l: &Launch, it: &Item, o: &mut Vec<Acc>| {
        if it.x[0] < l.scalars["n"] {
            o.push(("in", false, it.x[0]));
        }
        if it.l[0] == 0 {
            o.push(("out", true, it.g[0]));
        }
    };
    let l = Launch::new([32, 1, 1], [8, 1, 1]).arg("n", 29);
    check(
        "reduce_sum.cl",
        &with_local([8, 1, 1]),
        &l,
        Exact::Yes,
        &reduce,
    );
    check("reduce_sum.cl", &opts(), &l, Exact::No, &reduce);
    let tiled = |l: &Launch, it: &Item, o: &mut Vec<Acc>| {
        let (x, y, tx, ty, w) = (it.x[0], it.x[1], it.l[0], it.l[1], l.scalars["width"]);
        for t in 0..w / 16 {
            o.extend([
                ("a", false, y * w + t * 16 + tx),
                ("b", false, (t * 16 + ty) * w + x),
            ]);
        }
        o.push(("c", true, y * w + x));
    };
    let l = Launch::new([32, 16, 1], [16, 16, 1]).arg("width", 32);
    check(
        "matmul_tiled.cl",
        &with_local([16, 16, 1]),
        &l,
        Exact::Yes,
        &tiled,
    );
    let l = Launch::new([16, 16, 1], [16, 16, 1]).arg("width", 32);
    check("matmul_tiled.cl", &opts(), &l, Exact::No, &tiled);
    let walk = |_: &Launch, it: &Item, o: &mut Vec<Acc>| {
        if it.l[0] == 0 {
            o.push(("out", true, it.g[0]));
        }
    };
    let l = Launch::new([16, 1, 1], [4, 1, 1])
        .arg("gw", 6)
        .arg("gh", 5)
        .arg("nwalks", 2)
        .arg("maxsteps", 9);
    check(
        "random_walk.cl",
        &with_local([4, 1, 1]),
        &l,
        Exact::Yes,
        &walk,
    );
}
