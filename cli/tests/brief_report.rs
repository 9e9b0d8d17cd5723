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

/// `clpart analyze ARGS`'s standard error with standard output on a
/// terminal (through `script`; None where it is not installed).
fn stderr_with_stdout_on_a_terminal(args: &[&str]) -> Option<String> {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("script (util-linux) not found: terminal check skipped");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let err = dir.path().join("err");
    let cmd = format!(
        "{} analyze {} 2> {}",
        env!("CARGO_BIN_EXE_clpart"),
        args.join(" "),
        err.display()
    );
    let o = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .current_dir(root())
        .output()
        .expect("script runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some(std::fs::read_to_string(err).unwrap())
}

#[test]
fn the_default_report_says_what_decides_the_split_and_verbose_says_all() {
    let (brief, err) = analyze(&["kernels/linear_algebra/matmul.cl"]);
    for line in [
        "kernel matmul (work_dim 2): splits along dimension 1",
        "  array c (float, w): writes c[go1 + sx_lo .. go1 + sx_hi - 1][go0 .. gs0 + go0 - 1], disjoint across slices",
        "  array a (float, r): a slice reads a[go1 + sx_lo .. go1 + sx_hi - 1][0 .. width - 1]",
        "  checked at launch: array 'c': 0 <= x0 < width in c[y * width + x] (kernels/linear_algebra/matmul.cl:16:5)",
        "    width  kernel argument 3 'width' (int)",
    ] {
        assert!(brief.lines().any(|l| l == line), "{line}\n{brief}");
    }
    // no counts, no isl syntax, and a legend of the names used only
    for absent in ["elements, slice", "->", "{", "ls0 ", "legend"] {
        assert!(!brief.contains(absent), "{absent}\n{brief}");
    }
    assert!(brief.lines().count() < 20, "{brief}");
    // the hint to add --verbose is for a terminal: none on a pipe
    assert!(!err.contains("add --verbose"), "{err}");
    if let Some(tty) = stderr_with_stdout_on_a_terminal(&["kernels/linear_algebra/matmul.cl"]) {
        assert!(tty.contains("add --verbose"), "{tty}");
    }
    let (whole, _) = analyze(&["-v", "kernels/linear_algebra/matmul.cl"]);
    assert!(whole.contains("elements, slice"), "{whole}");
    assert!(whole.contains("legend:"), "{whole}");
    assert!(whole.lines().count() > brief.lines().count(), "{whole}");
}

/// Most lines the default report of one kernel may take: a screenful.
const SCREENFUL: usize = 40;

/// The columns a line is counted at: a longer one takes several rows.
const COLUMNS: usize = 100;

/// What of isl's syntax `line` holds, if any: a map or set's arrow
/// (`-> {`, `] -> `) or a `:` inside braces (`{ : w > 0 }`).
fn isl_syntax(line: &str) -> Option<&'static str> {
    if line.contains("-> {") {
        return Some("-> {");
    }
    if line.contains("] -> ") {
        return Some("] -> ");
    }
    let mut depth = 0usize;
    for c in line.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ':' if depth > 0 => return Some("':' inside braces"),
            _ => {}
        }
    }
    None
}

/// The terminal rows `text` takes at [`COLUMNS`] columns.
fn rows(text: &str) -> usize {
    text.lines()
        .map(|l| l.chars().count().div_ceil(COLUMNS).max(1))
        .sum()
}

/// Checks one kernel's reports; returns what is wrong, if anything.
fn check_reports(what: &str, brief: &str, whole: &str, problems: &mut Vec<String>) {
    if rows(brief) > SCREENFUL {
        problems.push(format!(
            "{what}: the default report takes {} rows of {COLUMNS} columns:\n{brief}",
            rows(brief)
        ));
    }
    for (form, text) in [("default", brief), ("verbose", whole)] {
        for line in text.lines() {
            if let Some(syntax) = isl_syntax(line) {
                problems.push(format!("{what} ({form}): isl's {syntax} in: {line}"));
            }
        }
    }
}

#[test]
fn the_syntax_check_finds_what_isl_writes() {
    assert_eq!(isl_syntax("([w] -> {  : w > 0 })"), Some("-> {"));
    assert_eq!(isl_syntax("[w] -> [(w)]"), Some("] -> "));
    assert_eq!(isl_syntax("{ : w > 0 }"), Some("':' inside braces"));
    assert_eq!(isl_syntax("holds if w > 0"), None);
    assert_eq!(isl_syntax("  refused: array 'a' (k.cl:3:5)"), None);
    assert_eq!(rows(&"x".repeat(2 * COLUMNS + 1)), 3);
}

/// Every kernel of the corpus, from its golden range file (the analysis's
/// own output, checked by `tests/tests/ranges_golden.rs`): its default
/// report fits a screenful (40 rows of 100 columns) and neither report
/// has a line in isl's syntax.
#[test]
fn every_corpus_report_is_a_screenful_without_isl_syntax() {
    let mut problems = Vec::new();
    let mut n_kernels = 0;
    for c in clpart_tests::corpus() {
        let path = root().join(format!("kernels/golden/{}.ranges.ron", c.name));
        let rf = ranges_format::RangeFile::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for k in &rf.kernels {
            let brief = partitioner::report::brief(k);
            let whole = partitioner::report::human(k);
            check_reports(
                &format!("{} ({})", k.name, c.name),
                &brief,
                &whole,
                &mut problems,
            );
            n_kernels += 1;
        }
    }
    assert!(n_kernels > 100, "the corpus: {n_kernels} kernels");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The kernels under `kernels/` that have no golden range file (the
/// iterative programs' kernels, images, the slow set), as `clpart analyze`
/// prints them: each kernel's default report a screenful, no isl syntax
/// in either report, on standard output or standard error.
#[test]
fn the_other_kernels_reports_from_the_cli_are_screenfuls_without_isl_syntax() {
    let mut problems = Vec::new();
    let mut n_files = 0;
    for folder in ["kernels/iterative", "kernels/images", "kernels/slow"] {
        let mut files: Vec<_> = std::fs::read_dir(root().join(folder))
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "cl"))
            .collect();
        files.sort();
        for f in files {
            let rel = f
                .strip_prefix(root())
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
            let run = |verbose: bool| {
                let mut c = Command::new(env!("CARGO_BIN_EXE_clpart"));
                c.arg("analyze").arg(&rel).current_dir(root());
                if verbose {
                    c.arg("-v");
                }
                let o = c.output().expect("clpart runs");
                // 1: nothing splits, still a report
                assert!(
                    matches!(o.status.code(), Some(0 | 1)),
                    "{rel}: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
                (
                    String::from_utf8_lossy(&o.stdout).into_owned(),
                    String::from_utf8_lossy(&o.stderr).into_owned(),
                )
            };
            let (brief, brief_err) = run(false);
            let (whole, whole_err) = run(true);
            // one report per kernel, each starting `kernel NAME`
            let per_kernel = |t: &str| -> Vec<String> {
                let mut v: Vec<String> = Vec::new();
                for l in t.lines() {
                    if l.starts_with("kernel ") || v.is_empty() {
                        v.push(String::new());
                    }
                    let last = v.last_mut().unwrap();
                    last.push_str(l);
                    last.push('\n');
                }
                v
            };
            let (briefs, wholes) = (per_kernel(&brief), per_kernel(&whole));
            assert_eq!(briefs.len(), wholes.len(), "{rel}:\n{brief}\n{whole}");
            for (b, w) in briefs.iter().zip(&wholes) {
                check_reports(&rel, b, w, &mut problems);
            }
            check_reports(&rel, "", &format!("{brief_err}{whole_err}"), &mut problems);
            n_files += 1;
        }
    }
    assert!(n_files >= 5, "{n_files} files");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Histogram reads `data[i]` for the work-items `i < n`: both reports
/// state the upper bound as the lesser of the two, `min`, never `max`.
#[test]
fn histograms_bound_is_stated_as_a_minimum() {
    // (exit 0: histogram splits, its bins merged as a sum)
    let report = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_clpart"))
            .arg("analyze")
            .args(args)
            .current_dir(root())
            .output()
            .expect("clpart runs");
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let brief = report(&["kernels/atomics/histogram.cl"]);
    assert!(
        brief.contains("a slice reads data[go0 + sx_lo .. min(n - 1, go0 + sx_hi - 1)]"),
        "{brief}"
    );
    let whole = report(&["-v", "kernels/atomics/histogram.cl"]);
    assert!(
        whole.contains("whole NDRange: data[go0 .. min(gs0 + go0 - 1, n - 1)]"),
        "{whole}"
    );
    for text in [&brief, &whole] {
        assert!(!text.contains("max("), "{text}");
    }
}
