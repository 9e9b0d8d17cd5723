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

/// Per array, per device: the number of rectangles of each class.
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
        for d in a
            .children()
            .filter(|n| n.attribute("class") == Some("device"))
        {
            let dev = d
                .attribute("data-device")
                .expect("device index")
                .to_string();
            assert!(
                !devices.contains_key(&dev),
                "one group per device: {name} {dev}"
            );
            let m = devices.entry(dev).or_default();
            for r in d.children().filter(|n| n.has_tag_name("rect")) {
                let class = r.attribute("class").unwrap_or("");
                if class != "box-background" {
                    *m.entry(class.to_string()).or_default() += 1;
                }
            }
        }
    }
    out
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
/// wider than their boxes when width > gs0: three hatched rows each (the
/// partial first, the full middle, the partial last); a's are exact.
#[test]
fn grids_of_delinearized_arrays_with_waste() {
    let svg = analyze_svg(
        "kernels/matmul.cl",
        "gs0=64,gs1=48,ls0=16,ls1=8,width=80",
        "2",
    );
    let c = counts(&svg);
    assert_eq!(c.keys().cloned().collect::<Vec<_>>(), ["a", "b", "c"]);
    for dev in ["0", "1"] {
        assert_eq!(
            c["c"][dev],
            expect(&[("write", 1), ("waste", 3)]),
            "c {dev}"
        );
        assert_eq!(c["a"][dev], expect(&[("read", 1)]), "a {dev}");
        assert_eq!(c["b"][dev], expect(&[("read", 1), ("waste", 3)]), "b {dev}");
    }
    assert!(svg.contains("grid 48 x 80"), "c is a 48 x 80 grid");
    // equal slices of the analysis, which no device ran
    assert!(svg.contains(">slice 0 (work-groups [0, 3))<"), "{svg}");
    assert!(!svg.contains(">device "), "{svg}");
    assert!(render(&svg).is_none_or(|n| n > 1000));
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
        "kernels/matmul.cl",
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
    let mut args = vec!["run", "kernels/vadd.cl"];
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
        "kernels/matmul.cl",
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
        "kernels/vadd.cl",
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
    let o = clpart(&["analyze", "kernels/vadd.cl", "--svg", out.to_str().unwrap()]);
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
