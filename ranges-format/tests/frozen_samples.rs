//! Frozen range files of past format versions (`tests/data/v*_*.ranges.ron`):
//! those of a version this clpart reads must keep loading and evaluating to
//! the same values; older ones must be refused with the regenerate hint.

use std::path::{Path, PathBuf};

use ranges_format::{source_hash, KernelRanges, RangeFile, FORMAT_VERSION};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn load(name: &str) -> RangeFile {
    RangeFile::read(data(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Range of array `array` (`slice` or `total`) for the given parameter values.
fn range(k: &KernelRanges, array: &str, which: &str, values: &[i64]) -> Option<(i64, i64)> {
    let a = k.arrays.iter().find(|a| a.name == array).unwrap();
    let r = match which {
        "total" => a.total.as_ref(),
        "slice" => a.slice.as_ref(),
        "read_slice" => a.read_slice.as_ref(),
        "write_slice" => a.write_slice.as_ref(),
        _ => unreachable!(),
    }
    .unwrap();
    r.bind(&k.param_names()).unwrap().eval(values).unwrap()
}

fn count(k: &KernelRanges, array: &str, slice: bool, values: &[i64]) -> i64 {
    let a = k.arrays.iter().find(|a| a.name == array).unwrap();
    let c = if slice {
        &a.count_slice
    } else {
        &a.count_total
    };
    ranges_format::eval_count(c.as_ref().unwrap(), &k.param_names(), values).unwrap()
}

fn assumptions_hold(k: &KernelRanges, values: &[i64]) -> bool {
    let names = k.param_names();
    k.assumptions.iter().all(|a| {
        ranges_format::Condition::parse(&a.condition)
            .unwrap()
            .bind(&names)
            .unwrap()
            .eval(values)
            .unwrap()
    })
}

#[test]
fn every_sample_loads_and_round_trips() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.ends_with(".ranges.ron") {
            continue;
        }
        if name.starts_with("v1_") {
            continue;
        }
        let f = load(&name);
        assert!(f.format_version <= FORMAT_VERSION, "{name}");
        assert_eq!(f.source_hash, source_hash(&f.source), "{name}: source hash");
        let again = RangeFile::from_ron_str(&f.to_ron_string().unwrap()).unwrap();
        assert_eq!(again, f, "{name}");
        n += 1;
    }
    assert!(n >= 2, "expected the frozen samples in tests/data");
}

#[test]
fn v2_vadd_evaluates() {
    let f = load("v2_vadd.ranges.ron");
    assert_eq!(f.format_version, 2);
    let k = f.kernel("vadd").unwrap();
    assert_eq!(k.param_names(), ["N", "lo", "hi", "L"]);
    assert_eq!(k.split_dim, Some(0));

    // N = 1000 elements, slice of work-groups [10, 40) of 16.
    let v = [1000, 10, 40, 16];
    assert!(assumptions_hold(k, &v));
    assert!(!assumptions_hold(k, &[1000, 10, 40, 32]));
    for array in ["a", "b", "c"] {
        assert_eq!(range(k, array, "total", &v), Some((0, 999)), "{array}");
        assert_eq!(range(k, array, "slice", &v), Some((160, 639)), "{array}");
    }
    assert_eq!(range(k, "a", "read_slice", &v), Some((160, 639)));
    assert_eq!(range(k, "c", "write_slice", &v), Some((160, 639)));
    assert_eq!(count(k, "a", true, &v), 480);
    assert_eq!(count(k, "a", false, &v), 1000);

    // The last slice is cut by the guard i < n.
    let v = [1000, 50, 63, 16];
    assert_eq!(range(k, "a", "slice", &v), Some((800, 999)));
    assert_eq!(range(k, "a", "read_slice", &v), Some((800, 999)));
    assert_eq!(count(k, "c", true, &v), 200);

    // A slice entirely past n touches nothing.
    let v = [1000, 63, 64, 16];
    assert_eq!(range(k, "a", "slice", &v), None);
    assert_eq!(count(k, "a", true, &v), 0);

    let c = k.arrays.iter().find(|a| a.name == "c").unwrap();
    assert!(c.write.as_ref().unwrap().disjoint_across_slices);
    assert_eq!(k.subkernel.as_ref().unwrap().extra_args.len(), 4);
}

#[test]
fn v2_matmul_evaluates() {
    let f = load("v2_matmul.ranges.ron");
    let k = f.kernel("matmul").unwrap();
    assert_eq!(k.param_names(), ["w", "lo", "hi", "G0", "G1"]);
    assert_eq!(k.split_dim, Some(1));

    // width 64, rows of work-groups [1, 3): rows 16..48.
    let v = [64, 1, 3, 64, 64];
    assert!(assumptions_hold(k, &v));
    assert!(!assumptions_hold(k, &[64, 1, 3, 64, 32]));
    assert_eq!(range(k, "a", "slice", &v), Some((1024, 3071)));
    assert_eq!(range(k, "b", "slice", &v), Some((0, 4095)));
    assert_eq!(range(k, "c", "write_slice", &v), Some((1024, 3071)));
    assert_eq!(range(k, "a", "total", &v), Some((0, 4095)));
    assert_eq!(count(k, "a", true, &v), 2048);
    assert_eq!(count(k, "b", true, &v), 4096);
    assert_eq!(count(k, "c", false, &v), 4096);

    // Empty slice.
    assert_eq!(range(k, "a", "slice", &[64, 3, 3, 64, 64]), None);
    assert_eq!(count(k, "a", true, &[64, 3, 3, 64, 64]), 0);
}

#[test]
fn v1_files_are_refused_with_the_regenerate_hint() {
    for name in ["v1_vadd.ranges.ron", "v1_matmul.ranges.ron"] {
        let err = RangeFile::read(data(name)).unwrap_err();
        assert!(
            matches!(err, ranges_format::RangesError::OlderVersion { found: 1 }),
            "{name}: {err:?}"
        );
        assert_eq!(
            err.to_string(),
            "range file has format_version 1, which this clpart no longer reads: \
             regenerate it with 'clpart analyze -o'"
        );
    }
}

#[test]
fn an_edited_v2_sample_names_the_section() {
    let text = std::fs::read_to_string(data("v2_vadd.ranges.ron")).unwrap();
    // Narrow a's slice range: still a consistent file, caught by the checksum.
    let edited = text.replacen(
        "[(16lo)] : 0 <= lo < hi and N > 16lo",
        "[(16lo + 1)] : 0 <= lo < hi and N > 16lo",
        1,
    );
    assert_ne!(edited, text);
    let err = RangeFile::from_ron_str(&edited).unwrap_err();
    assert_eq!(
        err.to_string(),
        "kernel 'vadd': array 'a': checksum mismatch (the file was edited after clpart wrote it); \
         regenerate the file with 'clpart analyze -o'"
    );
}
