//! `--svg` pictures. Each parses as XML, has one group per array
//! and per device with the expected rectangles (ranges as rectangles, never
//! per element: a 4096 x 4096 array costs what a small one does), renders
//! with `rsvg-convert` to a non-empty PNG, and is written atomically.

use clpart_tests::workspace_root as root;
use std::collections::BTreeMap;
use std::process::{Command, Output};

fn clpart(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clpart"))
        .args(args)
        .current_dir(root())
        .env("POCL_DEVICES", "pthread basic")
        .output()
        .expect("clpart runs")
}

/// Per array, per device: the number of rectangles of each class
/// (`read`, `write`, `waste`: the fills and hatchings; the edges repeat
/// the fills).
type Counts = BTreeMap<String, BTreeMap<String, BTreeMap<String, usize>>>;

fn counts(svg: &str) -> Counts {
    let doc = roxmltree::Document::parse(svg).expect("the picture is XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let mut out = Counts::new();
    for a in doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("array"))
    {
        let name = a.attribute("data-name").expect("array name").to_string();
        assert!(!out.contains_key(&name), "one group per array: {name}");
        let devices = out.entry(name.clone()).or_default();
        for layer in a
            .children()
            .filter(|n| n.attribute("class") == Some("layer"))
        {
            let mut seen = Vec::new();
            for d in layer
                .children()
                .filter(|n| n.attribute("class") == Some("device"))
            {
                let dev = d
                    .attribute("data-device")
                    .expect("device index")
                    .to_string();
                assert!(!seen.contains(&dev), "one group per device: {name} {dev}");
                seen.push(dev.clone());
                let m = devices.entry(dev).or_default();
                for r in d.children().filter(|n| n.has_tag_name("rect")) {
                    let class = r.attribute("class").unwrap_or("");
                    if ["read", "write", "waste"].contains(&class) {
                        *m.entry(class.to_string()).or_default() += 1;
                    }
                }
            }
        }
    }
    out
}

/// A rectangle of the picture: its class, layer, device and place.
#[derive(Debug, Clone)]
struct Rect {
    class: String,
    layer: String,
    device: Option<String>,
    y: f64,
    h: f64,
    x: f64,
    w: f64,
}

/// The rectangles of array `name`, in document (drawing) order.
fn rects(svg: &str, name: &str) -> Vec<Rect> {
    let doc = roxmltree::Document::parse(svg).expect("the picture is XML");
    let a = doc
        .descendants()
        .find(|n| n.attribute("class") == Some("array") && n.attribute("data-name") == Some(name))
        .unwrap_or_else(|| panic!("no array {name}"));
    let num = |n: &roxmltree::Node, at: &str| n.attribute(at).unwrap().parse::<f64>().unwrap();
    a.descendants()
        .filter(|n| n.has_tag_name("rect") && n.attribute("class") != Some("outline"))
        .map(|r| {
            let up = |class: &str| {
                r.ancestors()
                    .find(|n| n.attribute("class") == Some(class))
                    .and_then(|n| {
                        n.attribute(if class == "layer" {
                            "data-layer"
                        } else {
                            "data-device"
                        })
                    })
                    .map(str::to_string)
            };
            Rect {
                class: r.attribute("class").unwrap_or("").to_string(),
                layer: up("layer").unwrap_or_default(),
                device: up("device"),
                x: num(&r, "x"),
                y: num(&r, "y"),
                w: num(&r, "width"),
                h: num(&r, "height"),
            }
        })
        .collect()
}

fn expect(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
    pairs
        .iter()
        .filter(|p| p.1 > 0)
        .map(|(k, v)| (k.to_string(), *v))
        .collect()
}

fn analyze_svg(file: &str, at: &str, slices: &str) -> String {
    svg_of(&[
        "analyze",
        file,
        "--no-counts",
        "--at",
        at,
        "--slices",
        slices,
    ])
}

/// With the counts: the waste of a 1-D range is known from them.
fn analyze_svg_counted(file: &str, at: &str, slices: &str) -> String {
    svg_of(&["analyze", file, "--at", at, "--slices", slices])
}

fn svg_of(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.svg");
    let mut a = args.to_vec();
    a.extend(["--svg", out.to_str().unwrap()]);
    let o = clpart(&a);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::read_to_string(&out).unwrap()
}

/// Renders with rsvg-convert; returns the PNG's size, or None (with the
/// reason printed) when rsvg-convert is missing.
fn render(svg: &str) -> Option<u64> {
    if Command::new("rsvg-convert")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!(
            "rsvg-convert not found (scripts/setup.sh installs librsvg2-bin): render step skipped"
        );
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let (i, o) = (dir.path().join("p.svg"), dir.path().join("p.png"));
    std::fs::write(&i, svg).unwrap();
    let r = Command::new("rsvg-convert")
        .arg("-o")
        .arg(&o)
        .arg(&i)
        .output()
        .unwrap();
    assert!(
        r.status.success(),
        "rsvg-convert: {}",
        String::from_utf8_lossy(&r.stderr)
    );
    let png = std::fs::read(&o).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    Some(png.len() as u64)
}

/// matmul, delinearized: grids. c's and b's ranges (linear hulls) are
/// wider than their boxes when width > gs0: the range less the box is
/// columns gs0 .. width - 1 of every row but the box's last, one hatched
/// rectangle each; a's are exact.
#[test]
fn grids_of_delinearized_arrays_with_waste() {
    let svg = analyze_svg(
        "kernels/linear_algebra/matmul.cl",
        "gs0=64,gs1=48,ls0=16,ls1=8,width=80",
        "2",
    );
    let c = counts(&svg);
    assert_eq!(c.keys().cloned().collect::<Vec<_>>(), ["a", "b", "c"]);
    for dev in ["0", "1"] {
        assert_eq!(
            c["c"][dev],
            expect(&[("write", 1), ("waste", 1)]),
            "c {dev}"
        );
        assert_eq!(c["a"][dev], expect(&[("read", 1)]), "a {dev}");
        assert_eq!(c["b"][dev], expect(&[("read", 1), ("waste", 1)]), "b {dev}");
        // the waste is beside the box, never over it: columns 64 .. 79
        for r in rects(&svg, "c")
            .iter()
            .filter(|r| r.class == "waste" && r.device.as_deref() == Some(dev))
        {
            assert_eq!((r.x, r.w), (20.0 + 64.0 * 10.0, 16.0 * 10.0), "{r:?}");
        }
    }
    assert!(svg.contains("grid 48 x 80"), "c is a 48 x 80 grid");
    // equal slices of the analysis, which no device ran
    assert!(svg.contains(">slice 0 (work-groups [0, 3))<"), "{svg}");
    assert!(!svg.contains(">device "), "{svg}");
    assert!(render(&svg).is_none_or(|n| n > 1000));
}

/// Drawing order: every slice's edges after every fill and hatching, the
/// halo after all; no white rectangle that could hide another slice's.
fn assert_layered(r: &[Rect]) {
    let last = |layer: &str| r.iter().rposition(|x| x.layer == layer);
    let first = |layer: &str| r.iter().position(|x| x.layer == layer);
    if let (Some(w), Some(f)) = (last("waste"), first("fill")) {
        assert!(w < f, "hatching over a fill: {r:?}");
    }
    if let (Some(f), Some(e)) = (last("fill"), first("edge")) {
        assert!(f < e, "a fill over an edge: {r:?}");
    }
    if let (Some(e), Some(h)) = (last("edge"), first("halo")) {
        assert!(e < h, "an edge over a halo: {r:?}");
    }
    assert!(r.iter().all(|x| !x.class.contains("background")), "{r:?}");
}

/// A 2-D stencil split in two: each slice reads one row beyond its own
/// on each side, so rows 31 and 32 of 64 are read by both. Both slices'
/// reads stay visible there (edges over fills) and the two rows are
/// marked as a halo; the written array, split exactly, has none.
#[test]
fn a_stencils_halo_rows_are_marked_and_both_slices_reads_stay_visible() {
    let svg = analyze_svg(
        "kernels/stencils/stencil2d.cl",
        "gs0=64,gs1=64,ls0=16,ls1=16,width=64,height=64",
        "2",
    );
    let r = rects(&svg, "in");
    assert_layered(&r);
    let read = |dev: &str, class: &str| {
        r.iter()
            .find(|x| x.class == class && x.device.as_deref() == Some(dev))
            .unwrap_or_else(|| panic!("no {class} of slice {dev}: {r:?}"))
            .clone()
    };
    let row = 480.0 / 64.0;
    let top = read("0", "read").y;
    // slice 0 reads rows 0 .. 32, slice 1 rows 31 .. 63, both edged
    for (dev, first, n_rows) in [("0", 0.0, 33.0), ("1", 31.0, 33.0)] {
        for class in ["read", "read-edge"] {
            let x = read(dev, class);
            assert_eq!((x.y - top, x.h), (first * row, n_rows * row), "{x:?}");
        }
    }
    let halos: Vec<&Rect> = r.iter().filter(|x| x.class == "halo").collect();
    assert_eq!(halos.len(), 1, "{halos:?}");
    assert_eq!(
        (halos[0].y - top, halos[0].h, halos[0].w),
        (31.0 * row, 2.0 * row, 800.0)
    );
    let out = rects(&svg, "out");
    assert_layered(&out);
    assert!(out.iter().all(|x| x.class != "halo"), "{out:?}");
    assert!(render(&svg).is_none_or(|n| n > 1000));
}

/// A 1-D convolution in three slices: each reads `radius` elements past
/// its own on each side, so the strip of `in` has two halos of
/// 2 * radius elements, at the slices' borders, in the read lane.
#[test]
fn a_strips_halos_are_the_elements_two_slices_read() {
    let svg = analyze_svg(
        "kernels/stencils/conv1d.cl",
        "gs0=1024,ls0=64,n=1024,radius=3",
        "3",
    );
    let r = rects(&svg, "in");
    assert_layered(&r);
    let px = 800.0 / 1024.0;
    let mut halos: Vec<(f64, f64)> = r
        .iter()
        .filter(|x| x.class == "halo")
        .map(|x| ((x.x - 20.0) / px, x.w / px))
        .collect();
    halos.sort_by(|a, b| a.0.total_cmp(&b.0));
    // slices of 5, 5 and 6 work-groups of 64: borders at 320 and 640
    let round = |v: f64| (v * 100.0).round() / 100.0;
    let halos: Vec<(f64, f64)> = halos.iter().map(|&(a, w)| (round(a), round(w))).collect();
    assert_eq!(halos, [(317.0, 6.0), (637.0, 6.0)], "{r:?}");
    // in the read lane, as tall as the reads
    let read = r.iter().find(|x| x.class == "read").unwrap();
    for h in r.iter().filter(|x| x.class == "halo") {
        assert_eq!((h.y, h.h), (read.y, read.h), "{h:?}");
    }
    // nothing written twice: no halo on out
    assert!(rects(&svg, "out").iter().all(|x| x.class != "halo"));
}

/// A transpose writes columns: each slice's written box is half the
/// columns, and its range (the rows it spans) covers the other's box.
/// The hatching of one slice's waste is drawn under the other's box and
/// both boxes' edges over it: both slices' writes stay visible.
#[test]
fn a_transposes_two_written_boxes_both_stay_visible() {
    let svg = analyze_svg(
        "kernels/linear_algebra/transpose.cl",
        "gs0=64,gs1=64,ls0=16,ls1=16,width=64,height=64",
        "2",
    );
    let out = rects(&svg, "out");
    assert_layered(&out);
    let edges: Vec<&Rect> = out.iter().filter(|x| x.class == "write-edge").collect();
    assert_eq!(edges.len(), 2, "{out:?}");
    // the left and the right half, every row
    let mut halves: Vec<(f64, f64, f64)> = edges.iter().map(|e| (e.x, e.w, e.h)).collect();
    halves.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert_eq!(halves, [(20.0, 400.0, 480.0), (420.0, 400.0, 480.0)]);
    // each slice's waste is the other's half
    for (dev, x) in [("0", 420.0), ("1", 20.0)] {
        let w: Vec<&Rect> = out
            .iter()
            .filter(|r| r.class == "waste" && r.device.as_deref() == Some(dev))
            .collect();
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!((w[0].x, w[0].w), (x, 400.0), "{w:?}");
    }
    assert!(render(&svg).is_none_or(|n| n > 1000));
}

/// The drawn size: a run's buffer gives the true shape (a 64 x 64 grid
/// whose last row the kernel never writes is still 64 x 64); analyze,
/// without buffers, draws to the last element used and says so.
#[test]
fn grids_have_the_buffers_shape_and_analyze_says_where_it_has_none() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.svg");
    let o = clpart(&[
        "run",
        "kernels/stencils/conv3x3_interior.cl",
        "--global",
        "64,64",
        "--local",
        "16,16",
        "--arg",
        "in=rand:64x64:1",
        "--arg",
        "out=zeros:64x64",
        "--arg",
        "f=rand:9:3",
        "--arg",
        "w=64",
        "--arg",
        "h=64",
        "--split",
        "0:0.5,1:0.5",
        "--svg",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(
        svg.contains("array out (float, mode w): grid 64 x 64<"),
        "{svg}"
    );
    assert!(!svg.contains("last element used"), "{svg}");
    let svg = analyze_svg(
        "kernels/stencils/conv3x3_interior.cl",
        "gs0=64,gs1=64,ls0=16,ls1=16,w=64,h=64",
        "2",
    );
    assert!(
        svg.contains("array out (float, mode w): grid 63 x 64 (to its last element used)<"),
        "{svg}"
    );
}

/// A 1-D array: a strip; `a[i]` read where `i % 3 == 0` touches every
/// third element of its range: the count (a third of the range) makes it
/// waste, hatched. (`a[2*i]` would be delinearized with the constant stride
/// 2 and drawn as a grid.)
#[test]
fn strips_of_one_dimensional_arrays() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("every_other.cl");
    std::fs::write(&k, "__kernel void every_other(__global const float *a, __global float *b)\n{\n    int i = get_global_id(0);\n    float v = 0.0f;\n    if (i % 3 == 0)\n        v = a[i];\n    b[i] = v;\n}\n").unwrap();
    let svg = analyze_svg_counted(k.to_str().unwrap(), "gs0=1024,ls0=64", "3");
    let c = counts(&svg);
    assert_eq!(c.len(), 2);
    for dev in ["0", "1", "2"] {
        assert_eq!(c["a"][dev], expect(&[("read", 1), ("waste", 1)]), "a {dev}");
        assert_eq!(c["b"][dev], expect(&[("write", 1)]), "b {dev}");
    }
    assert!(
        svg.contains("strip of 1024"),
        "a is drawn up to its last element used"
    );
    assert!(render(&svg).is_none_or(|n| n > 1000));
}

/// 4096 x 4096: the same rectangles, a small file, quick to render.
#[test]
fn a_4096_square_array_is_a_small_picture() {
    let svg = analyze_svg(
        "kernels/linear_algebra/matmul.cl",
        "gs0=4096,gs1=4096,ls0=16,ls1=16,width=4096",
        "4",
    );
    let c = counts(&svg);
    for dev in ["0", "1", "2", "3"] {
        assert_eq!(c["c"][dev], expect(&[("write", 1)]), "c {dev}");
    }
    assert!(svg.len() < 20_000, "{} bytes", svg.len());
    assert!(svg.contains("grid 4096 x 4096"));
    assert!(render(&svg).is_none_or(|n| n > 1000));
}

/// `clpart run --svg`: the launch's slices, one group per device.
#[test]
fn run_draws_each_devices_slice() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.svg");
    let mut args = vec!["run", "kernels/basics/vadd.cl"];
    args.extend_from_slice(clpart_tests::VADD_RUN_ARGS);
    args.extend_from_slice(&["--split", "0:0.75,1:0.25", "--svg", out.to_str().unwrap()]);
    let o = clpart(&args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let svg = std::fs::read_to_string(&out).unwrap();
    let c = counts(&svg);
    assert_eq!(c.keys().cloned().collect::<Vec<_>>(), ["a", "b", "c"]);
    for dev in ["0", "1"] {
        assert_eq!(c["a"][dev], expect(&[("read", 1)]));
        assert_eq!(c["c"][dev], expect(&[("write", 1)]));
    }
    assert!(svg.contains(">device 1 (work-groups ["), "{svg}");
    assert!(render(&svg).is_none_or(|n| n > 1000));
}

/// Errors: one line, exit 2, and no file (or the old one untouched).
#[test]
fn bad_svg_requests_leave_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("keep.svg");
    std::fs::write(&out, "old").unwrap();
    let o = clpart(&[
        "analyze",
        "kernels/linear_algebra/matmul.cl",
        "--no-counts",
        "--at",
        "gs0=64,ls0=16,gs1=48,ls1=8",
        "--svg",
        out.to_str().unwrap(),
    ]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        !e.contains("panicked")
            && e.lines()
                .filter(|l| l.starts_with("clpart: error:"))
                .count()
                == 1,
        "{e}"
    );
    assert!(e.contains("needs a value for 'width'"), "{e}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old");
    let missing = dir.path().join("no/such/dir/p.svg");
    let o = clpart(&[
        "analyze",
        "kernels/basics/vadd.cl",
        "--no-counts",
        "--at",
        "gs0=64,ls0=8",
        "--svg",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot write"));
    let o = clpart(&[
        "analyze",
        "kernels/iterative/fdtd2d.cl",
        "--no-counts",
        "--at",
        "gs0=64,ls0=8",
        "--svg",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--svg draws one kernel: choose it with --kernel (kernels: fdtd2d_ey, fdtd2d_ex, fdtd2d_hz)"));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old");
    let o = clpart(&[
        "analyze",
        "kernels/basics/vadd.cl",
        "--svg",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "--svg without --at is a usage error"
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "no temporary left: {leftovers:?}");
}
