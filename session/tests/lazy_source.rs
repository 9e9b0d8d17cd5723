//! `Session::from_source_lazy` over the persistent analysis cache: a warm
//! session serves the argument list and a launch's ranges without parsing
//! (its program stays unparsed); a miss parses, and a parse error or a
//! kernel the source lacks surfaces from the call that needed the program;
//! a corrupt or foreign argument-list entry is ignored and rewritten.
//!
//! Every test shares one cache folder (`CLPART_CACHE_DIR`, set once before
//! any session reads it) and uses its own source text, so their entries
//! never meet.

use std::path::Path;
use std::sync::OnceLock;

use session::{cache, LaunchConfig, Session, SessionError};

fn cache_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        std::env::set_var("CLPART_CACHE_DIR", dir.path());
        std::env::remove_var("CLPART_CACHE");
        dir
    })
    .path()
}

fn vadd(tag: &str) -> String {
    format!(
        "// {tag}\n__kernel void vadd(__global const float *a, __global const float *b,\n\
         __global float *c, const uint n) {{\n  size_t i = get_global_id(0);\n  if (i < n) c[i] = a[i] + b[i];\n}}\n"
    )
}

fn config() -> LaunchConfig {
    let mut c = LaunchConfig::new(&[1024], &[64]);
    c.scalars.insert("n".into(), 1024);
    c
}

const OPTIONS: &[&str] = &["-DUNUSED=1"];

fn options() -> Vec<String> {
    OPTIONS.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_warm_lazy_session_serves_arguments_and_ranges_without_parsing() {
    let dir = cache_dir();
    let source = vadd("warm");
    let cold = Session::from_source_lazy("vadd.cl", &source, &options());
    assert!(cold.program().is_none());
    let infos = cold.arg_infos("vadd").unwrap();
    assert_eq!(
        infos.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
        ["a", "b", "c", "n"]
    );
    assert!(cold.program().is_some(), "a miss parses");
    let mut cold = cold;
    let (ranges, cached) = cold.take_ranges("vadd", &config()).unwrap();
    assert!(!cached);
    assert!(ranges.kernels[0].splittable, "{:?}", ranges.kernels[0]);
    let args_entry = cache::args_entry_path(
        dir,
        &cache::args_key("vadd.cl", &source, &options(), "vadd"),
    );
    assert!(args_entry.is_file());

    let mut warm = Session::from_source_lazy("vadd.cl", &source, &options());
    assert_eq!(warm.arg_infos("vadd").unwrap(), infos);
    let (again, cached) = warm.take_ranges("vadd", &config()).unwrap();
    assert!(cached);
    assert_eq!(again, ranges);
    assert!(warm.program().is_none(), "a warm session never parses");
    // The same through ranges_for_launch, which keeps the launch.
    let mut warm = Session::from_source_lazy("vadd.cl", &source, &options());
    assert_eq!(warm.ranges_for_launch("vadd", &config()).unwrap(), &ranges);
    assert!(warm.from_cache("vadd", &config()));
    assert!(warm.program().is_none());

    // Another launch configuration misses and parses.
    let other = LaunchConfig::new(&[512], &[32]);
    let (_, cached) = warm.take_ranges("vadd", &other).unwrap();
    assert!(!cached);
    assert!(warm.program().is_some());

    // Different build options are another entry.
    let fresh = Session::from_source_lazy("vadd.cl", &source, &[]);
    assert_eq!(fresh.arg_infos("vadd").unwrap(), infos);
    assert!(fresh.program().is_some());
}

#[test]
fn a_kernel_the_source_lacks_is_the_parses_error() {
    cache_dir();
    let source = vadd("lacks");
    let mut s = Session::from_source_lazy("vadd.cl", &source, &options());
    let e = s.arg_infos("vsub").unwrap_err();
    assert!(matches!(e, SessionError::Coarsen(_)), "{e}");
    assert!(e.to_string().contains("no kernel named 'vsub'"), "{e}");
    s.arg_infos("vadd").unwrap();
    let e = s.take_ranges("vsub", &config()).unwrap_err();
    assert!(e.to_string().contains("no kernel named 'vsub'"), "{e}");
    // A warm entry of one kernel does not serve another.
    let mut warm = Session::from_source_lazy("vadd.cl", &source, &options());
    let e = warm.take_ranges("vsub", &config()).unwrap_err();
    assert!(e.to_string().contains("no kernel named 'vsub'"), "{e}");
}

#[test]
fn a_parse_error_surfaces_from_the_call_that_needed_the_program() {
    cache_dir();
    let bad = "__kernel void broken(__global float *a) { a[0] = ; }\n";
    let eager = match Session::from_source("broken.cl", bad, &[]) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("the source parses"),
    };
    let mut s = Session::from_source_lazy("broken.cl", bad, &[]);
    assert_eq!(s.file_name(), "broken.cl");
    let e = s.arg_infos("broken").unwrap_err();
    assert!(matches!(e, SessionError::Coarsen(_)), "{e}");
    assert_eq!(e.to_string(), eager);
    s.set_fallback_unsplit(true);
    let e = s.take_ranges("broken", &config()).unwrap_err();
    assert!(matches!(e, SessionError::Coarsen(_)), "{e}");
    assert_eq!(e.to_string(), eager);
    assert!(s.program().is_none());
}

/// An argument-list entry that does not read, or is for another kernel, is
/// ignored: the session parses and writes a good one over it.
#[test]
fn a_corrupt_or_foreign_argument_entry_is_ignored_and_replaced() {
    let dir = cache_dir();
    let source = vadd("corrupt");
    let entry = |kernel: &str| {
        cache::args_entry_path(
            dir,
            &cache::args_key("vadd.cl", &source, &options(), kernel),
        )
    };
    let infos = Session::from_source_lazy("vadd.cl", &source, &options())
        .arg_infos("vadd")
        .unwrap();
    let good = std::fs::read(entry("vadd")).unwrap();
    let foreign = {
        let other = vadd("foreign");
        Session::from_source_lazy("vadd.cl", &other, &options())
            .arg_infos("vadd")
            .unwrap();
        std::fs::read(cache::args_entry_path(
            dir,
            &cache::args_key("vadd.cl", &other, &options(), "vadd"),
        ))
        .unwrap()
    };
    let edited = String::from_utf8(good.clone())
        .unwrap()
        .replace("\"n\"", "\"m\"")
        .into_bytes();
    for bad in [
        b"garbage".to_vec(),
        good[..good.len() / 2].to_vec(),
        edited,
        foreign,
        vec![0xff, 0xfe, 0],
    ] {
        std::fs::write(entry("vadd"), &bad).unwrap();
        let s = Session::from_source_lazy("vadd.cl", &source, &options());
        assert_eq!(s.arg_infos("vadd").unwrap(), infos);
        assert!(s.program().is_some(), "a bad entry is not used");
        assert_eq!(std::fs::read(entry("vadd")).unwrap(), good, "rewritten");
    }
}

/// The guarantee: the key covers the source's own text, not the files it
/// includes. A header changed between two launches (`#define OFF 0`, then
/// `400`) got the first launch's ranges from the cache: a wrong result and
/// reads past a device buffer. A source that includes is never cached.
#[test]
fn a_source_that_includes_a_header_is_analyzed_again_after_the_header_changes() {
    let _ = cache_dir();
    let folder = tempfile::tempdir().unwrap();
    let header = folder.path().join("off.h");
    let file = folder.path().join("shift.cl");
    let source = "#include \"off.h\"\n__kernel void shift(__global float *y, __global const float *x, int n) {\n  int i = get_global_id(0);\n  if (i < n) y[i] = x[i + OFF];\n}\n";
    let include = vec![format!("-I{}", folder.path().display())];
    let mut config = LaunchConfig::new(&[512], &[64]);
    config.scalars.insert("n".into(), 512);
    let read_range = |off: u32| {
        std::fs::write(&header, format!("#define OFF {off}\n")).unwrap();
        let mut s = Session::from_source_lazy(file.to_str().unwrap(), source, &include);
        let infos = s.arg_infos("shift").unwrap();
        assert_eq!(infos.len(), 3);
        let (ranges, cached) = s.take_ranges("shift", &config).unwrap();
        assert!(
            !cached,
            "a source that includes is never served from the cache"
        );
        let x = ranges.kernels[0]
            .arrays
            .iter()
            .find(|a| a.name == "x")
            .unwrap()
            .clone();
        format!("{:?}", x.total)
    };
    let first = read_range(0);
    let second = read_range(400);
    assert_ne!(first, second, "the header's change is in the ranges");
    assert!(second.contains("400"), "{second}");
    assert!(!cache::cacheable(source));
    assert!(cache::cacheable(
        "// #include in a comment\n__kernel void k() {}\n"
    ));
    assert!(!cache::cacheable("  #  include <x.h>\n"));
}
