//! `clpart analyze`'s default report is the short one: per kernel what
//! decides the split, in a screenful, without isl's syntax; `--verbose`
//! gives the whole one (ranges by case, counts, vertices, conditions).

use clpart_tests::workspace_root as root;
use std::process::Command;

fn analyze(args: &[&str]) -> (String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_clpart"))
        .arg("analyze")
        .args(args)
        .current_dir(root())
        .output()
        .expect("clpart runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn the_default_report_says_what_decides_the_split_and_verbose_says_all() {
    let (brief, err) = analyze(&["kernels/matmul.cl"]);
    for line in [
        "kernel matmul (work_dim 2): splits along dimension 1",
        "  array c (float, w): writes c[go1 + sx_lo .. go1 + sx_hi - 1][go0 .. gs0 + go0 - 1], disjoint across slices",
        "  array a (float, r): a slice reads a[go1 + sx_lo .. go1 + sx_hi - 1][0 .. width - 1]",
        "  checked at launch: array 'c': 0 <= x0 < width in c[y * width + x] (kernels/matmul.cl:16:5)",
        "    width  kernel argument 3 'width' (int)",
    ] {
        assert!(brief.lines().any(|l| l == line), "{line}\n{brief}");
    }
    // no counts, no isl syntax, and a legend of the names used only
    for absent in ["elements, slice", "->", "{", "ls0 ", "legend"] {
        assert!(!brief.contains(absent), "{absent}\n{brief}");
    }
    assert!(brief.lines().count() < 20, "{brief}");
    assert!(err.contains("add --verbose"), "{err}");
    let (whole, _) = analyze(&["-v", "kernels/matmul.cl"]);
    assert!(whole.contains("elements, slice"), "{whole}");
    assert!(whole.contains("legend:"), "{whole}");
    assert!(whole.lines().count() > brief.lines().count(), "{whole}");
}
