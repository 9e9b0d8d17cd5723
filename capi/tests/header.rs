//! The checked-in header `include/clpart.h` is cbindgen's output for this
//! crate's sources (`cbindgen.toml`): every `extern "C"` function, status
//! code and `#[repr(C)]` struct with its doc comments. This test generates
//! it again and fails on any difference, with a diff; `CLPART_BLESS=1`
//! rewrites the file.

use std::path::Path;

fn generate() -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    // the version macros: Cargo's version is the only source
    let versions = config.after_includes.as_mut().expect("after_includes");
    for (name, value) in [
        ("CARGO_PKG_VERSION_MAJOR", env!("CARGO_PKG_VERSION_MAJOR")),
        ("CARGO_PKG_VERSION_MINOR", env!("CARGO_PKG_VERSION_MINOR")),
        ("CARGO_PKG_VERSION_PATCH", env!("CARGO_PKG_VERSION_PATCH")),
        ("CARGO_PKG_VERSION", env!("CARGO_PKG_VERSION")),
    ] {
        *versions = versions.replace(&format!("@{name}@"), value);
    }
    assert!(
        !versions.contains('@'),
        "cbindgen.toml's after_includes names an unknown @...@: {versions}"
    );
    let mut b = cbindgen::Builder::new().with_config(config);
    // the sources with C items (no `cargo metadata`: works offline)
    for f in ["src/lib.rs", "src/status.rs"] {
        b = b.with_src(dir.join(f));
    }
    let mut out = Vec::new();
    b.generate()
        .expect("cbindgen generates the header")
        .write(&mut out);
    String::from_utf8(out).expect("UTF-8")
}

#[test]
fn header_is_cbindgens_output_for_the_sources() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/clpart.h");
    let generated = generate();
    if std::env::var("CLPART_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap();
    if checked_in != generated {
        let (e, a): (Vec<&str>, Vec<&str>) =
            (checked_in.lines().collect(), generated.lines().collect());
        let first = e
            .iter()
            .zip(&a)
            .position(|(x, y)| x != y)
            .unwrap_or(e.len().min(a.len()));
        let from = first.saturating_sub(3);
        let show = |v: &[&str]| {
            v.iter()
                .skip(from)
                .take(10)
                .map(|l| format!("  {l}"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        panic!(
            "include/clpart.h differs from cbindgen's output for src/ (run with CLPART_BLESS=1 to update) at line {}:\nchecked in:\n{}\ngenerated:\n{}",
            first + 1,
            show(&e),
            show(&a)
        );
    }
}

/// Every entry point and status code of the sources is in the header.
#[test]
fn header_declares_every_entry_point_and_status_code() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let header = std::fs::read_to_string(dir.join("include/clpart.h")).unwrap();
    let mut n = 0;
    for f in ["src/lib.rs", "src/status.rs"] {
        let src = std::fs::read_to_string(dir.join(f)).unwrap();
        for line in src.lines() {
            let name = if let Some(rest) = line.split("extern \"C\" fn ").nth(1) {
                rest.split('(').next().unwrap().trim().to_string()
            } else if let Some(rest) = line.strip_prefix("pub const CLPART_") {
                format!("CLPART_{}", rest.split(':').next().unwrap().trim())
            } else {
                continue;
            };
            assert!(
                header.contains(&format!("{name}("))
                    || header.contains(&format!("#define {name} ")),
                "{name} missing from include/clpart.h"
            );
            n += 1;
        }
    }
    assert!(n > 40, "found the entry points and status codes ({n})");
}

/// The version macros of the checked-in header are the crate's version, and
/// so is what the library says it is.
#[test]
fn header_version_macros_and_clpart_version_are_the_crate_version() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let header = std::fs::read_to_string(dir.join("include/clpart.h")).unwrap();
    let define = |name: &str| {
        let prefix = format!("#define {name} ");
        let lines: Vec<&str> = header
            .lines()
            .filter_map(|l| l.strip_prefix(&prefix))
            .collect();
        assert_eq!(lines.len(), 1, "one #define {name} in include/clpart.h");
        lines[0].trim().to_string()
    };
    assert_eq!(
        define("CLPART_VERSION_MAJOR"),
        env!("CARGO_PKG_VERSION_MAJOR")
    );
    assert_eq!(
        define("CLPART_VERSION_MINOR"),
        env!("CARGO_PKG_VERSION_MINOR")
    );
    assert_eq!(
        define("CLPART_VERSION_PATCH"),
        env!("CARGO_PKG_VERSION_PATCH")
    );
    assert_eq!(
        define("CLPART_VERSION_STRING"),
        format!("\"{}\"", env!("CARGO_PKG_VERSION"))
    );
    // SAFETY: clpart_version returns a static NUL-terminated string
    let v = unsafe { std::ffi::CStr::from_ptr(clpart::clpart_version()) };
    assert_eq!(v.to_str(), Ok(env!("CARGO_PKG_VERSION")));
}
