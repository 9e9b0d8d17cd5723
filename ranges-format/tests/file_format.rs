//! The range file: RON round trip, version check, corrupt input, validation
//! and atomic writes.

use proptest::prelude::*;
use ranges_format::*;

// ---------------------------------------------------------------------------
// Strategies

/// Expression texts over the parameters every generated kernel declares.
const PW_POOL: &[&str] = &[
    "[N, lo, hi] -> { [(-1 + 16hi)] : hi > lo }",
    "[N] -> { [(N - 1)] }",
    "{ [(5)] }",
    "[w] -> { [(floor((w)/16) + 2w)] : w >= 0; [(0)] : w < 0 }",
    "[N, lo, hi] -> { [(min(N, 64hi) - 1)] : hi > lo >= 0 and N > 64lo }",
    "[lo] -> { [(-2 + 4 * floor((lo)/4))] }",
    "[N] -> { [(N)] : exists (e0 = floor((-1 + N)/2): N >= 2e0 + 1) }",
];
const QP_POOL: &[&str] = &[
    "1/2 * N^2 + 1/2 * N",
    "16hi - 16lo",
    "[ 3, 7/2 ]_N * 2",
    "w*w",
];
const COND_POOL: &[&str] = &[
    "N >= 1 and hi > lo",
    "0 <= lo < hi <= 10",
    "[N] -> { : N >= 1 }",
    "",
    "(w) mod 4 = 0",
];

fn text() -> impl Strategy<Value = String> {
    // Any Unicode, including quotes, backslashes, '#', newlines and controls.
    prop_oneof![any::<String>(), "[a-z_]{0,8}", "\"#*\\\\?\n?\r?\t?.{0,4}"]
}

fn from_pool(pool: &'static [&'static str]) -> impl Strategy<Value = String> {
    proptest::sample::select(pool).prop_map(str::to_string)
}

fn range() -> impl Strategy<Value = Range> {
    (from_pool(PW_POOL), from_pool(PW_POOL)).prop_map(|(lower, upper)| Range { lower, upper })
}

fn count() -> impl Strategy<Value = Count> {
    let chamber = (from_pool(COND_POOL), from_pool(QP_POOL))
        .prop_map(|(domain, value)| Chamber { domain, value });
    proptest::collection::vec(proptest::collection::vec(chamber, 0..3), 0..3)
        .prop_map(Count::parametric)
}

fn param_source() -> impl Strategy<Value = ParamSource> {
    prop_oneof![
        any::<u32>().prop_map(|arg_index| ParamSource::ScalarArg { arg_index }),
        any::<u32>().prop_map(ParamSource::GlobalSize),
        any::<u32>().prop_map(ParamSource::LocalSize),
        any::<u32>().prop_map(ParamSource::GlobalOffset),
        any::<u32>().prop_map(ParamSource::NumGroups),
        Just(ParamSource::SliceLo),
        Just(ParamSource::SliceHi),
    ]
}

fn arg_kind() -> impl Strategy<Value = ArgKind> {
    prop_oneof![
        Just(ArgKind::Scalar),
        Just(ArgKind::GlobalBuffer),
        Just(ArgKind::ConstantBuffer),
        Just(ArgKind::LocalBuffer),
    ]
}

fn mode() -> impl Strategy<Value = Mode> {
    prop_oneof![Just(Mode::R), Just(Mode::W), Just(Mode::RW)]
}

fn array() -> impl Strategy<Value = ArrayRanges> {
    (
        (any::<u32>(), text(), text(), any::<u32>(), mode()),
        prop_oneof![
            Just(ArrayStatus::Bounded),
            text().prop_map(|reason| ArrayStatus::Whole { reason })
        ],
        proptest::option::of(range()),
        proptest::option::of(range()),
        proptest::option::of(range()),
        proptest::option::of(range()),
        proptest::option::of(count()),
        proptest::option::of(count()),
        proptest::option::of(
            (any::<bool>(), any::<bool>(), proptest::option::of(text())).prop_map(
                |(disjoint_across_slices, fills_hull, runs)| WriteVerdict {
                    disjoint_across_slices,
                    fills_hull,
                    runs,
                    written_count: None,
                },
            ),
        ),
        proptest::option::of(boxes()),
    )
        .prop_map(
            |(
                (arg_index, name, elem_type, elem_size, mode),
                status,
                total,
                slice,
                read_slice,
                write_slice,
                count_total,
                count_slice,
                write,
                boxes,
            )| ArrayRanges {
                arg_index,
                name,
                elem_type,
                elem_size,
                mode,
                status,
                total,
                slice,
                read_slice,
                write_slice,
                count_total,
                count_slice,
                write,
                boxes,
                vertices_slice: None,
                reduction: None,
                checked: false,
            },
        )
}

fn boxes() -> impl Strategy<Value = Boxes> {
    (
        proptest::collection::vec(
            prop_oneof![
                from_pool(PW_POOL),
                Just("1".to_string()),
                Just("w".to_string())
            ],
            0..4,
        ),
        proptest::option::of(proptest::collection::vec(range(), 0..4)),
        proptest::option::of(proptest::collection::vec(range(), 0..4)),
        any::<bool>(),
        proptest::collection::vec(proptest::collection::vec(range(), 0..4), 0..3),
    )
        .prop_map(|(strides, read, write, write_exact, read_parts)| Boxes {
            strides,
            read,
            write,
            write_exact,
            read_parts,
        })
}

fn extra_arg() -> impl Strategy<Value = ExtraArg> {
    let meaning = prop_oneof![
        any::<u32>().prop_map(|arg_index| ExtraArgMeaning::ArrayBase { arg_index }),
        any::<u32>().prop_map(ExtraArgMeaning::GroupIdBase),
        any::<u32>().prop_map(ExtraArgMeaning::GlobalSize),
        any::<u32>().prop_map(ExtraArgMeaning::NumGroups),
        any::<u32>().prop_map(ExtraArgMeaning::GlobalOffset),
        (any::<u32>(), 0u32..4)
            .prop_map(|(arg_index, dim)| ExtraArgMeaning::BoxStride { arg_index, dim }),
        (any::<u32>(), 0u32..4)
            .prop_map(|(arg_index, dim)| ExtraArgMeaning::BoxReadHi { arg_index, dim }),
        (any::<u32>(), 0u32..4, 0u32..4).prop_map(|(arg_index, part, dim)| {
            ExtraArgMeaning::BoxPartLo {
                arg_index,
                part,
                dim,
            }
        }),
    ];
    (text(), meaning).prop_map(|(name, meaning)| ExtraArg { name, meaning })
}

fn kernel() -> impl Strategy<Value = KernelRanges> {
    let extra_params = proptest::collection::vec(("x[0-9]{1,3}", param_source()), 0..3);
    (
        (text(), 1u32..4, extra_params, param_source()),
        proptest::collection::vec(
            (any::<u32>(), text(), arg_kind(), text(), any::<u32>()).prop_map(
                |(index, name, kind, elem_type, elem_size)| ArgInfo {
                    index,
                    name,
                    kind,
                    elem_type,
                    elem_size,
                    fields: Vec::new(),
                },
            ),
            0..4,
        ),
        (
            proptest::option::of(0u32..3),
            any::<bool>(),
            proptest::option::of(text()),
        ),
        proptest::collection::vec(array(), 0..3),
        proptest::collection::vec(
            (text(), from_pool(COND_POOL)).prop_map(|(description, condition)| Assumption {
                description,
                condition,
                array: None,
            }),
            0..3,
        ),
        proptest::option::of(
            (text(), text(), proptest::collection::vec(extra_arg(), 0..4)).prop_map(
                |(name, source, extra_args)| Subkernel {
                    name,
                    source,
                    extra_args,
                    guarded: vec![],
                    unguarded: vec![],
                    aligned: vec![],
                },
            ),
        ),
        (
            proptest::collection::vec(text(), 0..3),
            proptest::option::of(text()),
            proptest::collection::vec(
                prop_oneof![
                    Just(CutShort::Budget),
                    Just(CutShort::CountTime),
                    Just(CutShort::CountProcess)
                ],
                0..3,
            ),
        ),
    )
        .prop_map(
            |(
                (name, work_dim, extra, src),
                args,
                (split_dim, splittable, reason),
                arrays,
                assumptions,
                subkernel,
                (diagnostics, group_size_use, cut_short),
            )| {
                let mut params: Vec<Param> = ["N", "lo", "hi", "w"]
                    .iter()
                    .map(|n| Param {
                        name: n.to_string(),
                        source: src.clone(),
                    })
                    .collect();
                for (name, source) in extra {
                    if !params.iter().any(|p| p.name == name) {
                        params.push(Param { name, source });
                    }
                }
                KernelRanges {
                    name,
                    work_dim,
                    params,
                    args,
                    split_dim,
                    splittable,
                    reason,
                    arrays,
                    assumptions,
                    subkernel,
                    diagnostics,
                    group_size_use,
                    cut_short,
                }
            },
        )
}

fn range_file() -> impl Strategy<Value = RangeFile> {
    (
        text(),
        text(),
        proptest::collection::vec(text(), 0..3),
        proptest::collection::vec(kernel(), 0..3),
    )
        .prop_map(|(source_name, source, build_options, kernels)| {
            let mut f = RangeFile::new(source_name, source);
            f.build_options = build_options;
            f.kernels = kernels;
            f
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn ron_round_trip(f in range_file()) {
        // Arbitrary (mostly inconsistent) content: the structure round trips;
        // the full load refuses exactly what validate refuses.
        let text = f.to_ron_string().unwrap();
        let full = RangeFile::from_ron_str(&text).map(|_| ()).map_err(|e| e.to_string());
        prop_assert_eq!(full, f.validate().map_err(|e| e.to_string()));
        let back = RangeFile::from_ron_str_unvalidated(&text)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(back, f);
    }

    #[test]
    fn truncated_file_is_corrupt_with_a_position(f in range_file(), frac in 0.0f64..1.0) {
        let text = f.to_ron_string().unwrap();
        let mut cut = (text.trim_end().len() as f64 * frac) as usize;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        match RangeFile::from_ron_str(&text[..cut]) {
            Err(RangesError::Corrupt { line, col, message }) => {
                prop_assert!(line >= 1 && col >= 1);
                prop_assert!(!message.is_empty() && !message.contains('\n'), "{}", message);
            }
            other => prop_assert!(false, "cut at {}: {:?}", cut, other.map(|_| ())),
        }
    }
}

// ---------------------------------------------------------------------------
// Fixed cases

fn small_file() -> RangeFile {
    let mut f = RangeFile::new("vadd.cl", "__kernel void vadd() {}\n");
    f.kernels.push(KernelRanges {
        name: "vadd".into(),
        work_dim: 1,
        params: vec![
            Param {
                name: "N".into(),
                source: ParamSource::ScalarArg { arg_index: 1 },
            },
            Param {
                name: "lo".into(),
                source: ParamSource::SliceLo,
            },
            Param {
                name: "hi".into(),
                source: ParamSource::SliceHi,
            },
        ],
        args: vec![
            ArgInfo {
                index: 0,
                name: "a".into(),
                kind: ArgKind::GlobalBuffer,
                elem_type: "float".into(),
                elem_size: 4,
                fields: Vec::new(),
            },
            ArgInfo {
                index: 1,
                name: "n".into(),
                kind: ArgKind::Scalar,
                elem_type: "int".into(),
                elem_size: 4,
                fields: Vec::new(),
            },
        ],
        split_dim: Some(0),
        splittable: true,
        reason: None,
        arrays: vec![ArrayRanges {
            arg_index: 0,
            name: "a".into(),
            elem_type: "float".into(),
            elem_size: 4,
            mode: Mode::R,
            status: ArrayStatus::Bounded,
            total: None,
            slice: Some(Range {
                lower: "[N, lo, hi] -> { [(16lo)] : hi > lo }".into(),
                upper: "[N, lo, hi] -> { [(-1 + 16hi)] : hi > lo }".into(),
            }),
            read_slice: None,
            write_slice: None,
            count_total: None,
            count_slice: None,
            write: None,
            boxes: None,
            vertices_slice: None,
            reduction: None,
            checked: false,
        }],
        assumptions: vec![],
        subkernel: None,
        diagnostics: vec![],
        group_size_use: None,
        cut_short: Vec::new(),
    });
    f
}

#[test]
fn newer_version_is_reported_before_anything_else() {
    let text = small_file().to_ron_string().unwrap().replace(
        &format!("format_version: {FORMAT_VERSION}"),
        "format_version: 7",
    );
    let err = RangeFile::from_ron_str(&text).unwrap_err();
    assert!(
        matches!(
            err,
            RangesError::NewerVersion {
                found: 7,
                supported: FORMAT_VERSION
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!("range file has format_version 7, this clpart reads up to {FORMAT_VERSION}")
    );

    // A future layout this version cannot describe still reads as "newer".
    let future =
        r#"RangeFile(format_version: 4, programs: {"x": [1, 2, (a: Some(3))]}, kernels: "gone")"#;
    let err = RangeFile::from_ron_str(future).unwrap_err();
    assert!(
        matches!(
            err,
            RangesError::NewerVersion {
                found: 4,
                supported: FORMAT_VERSION
            }
        ),
        "{err:?}"
    );
    let future = r#"(kernels: Deep(Nested(x: 1)), format_version: 9)"#;
    assert!(matches!(
        RangeFile::from_ron_str(future),
        Err(RangesError::NewerVersion { found: 9, .. })
    ));
}

#[test]
fn corrupt_files_report_line_and_column() {
    let good = small_file().to_ron_string().unwrap();
    let cases: Vec<(&str, String)> = vec![
        ("garbage", "this is not ron at all {{{".to_string()),
        ("empty", String::new()),
        ("truncated", good[..good.len() / 2].to_string()),
        (
            "missing field",
            good.replace("        splittable: true,\n", ""),
        ),
        (
            "wrong type",
            good.replace("work_dim: 1", "work_dim: \"one\""),
        ),
        ("unknown variant", good.replace("mode: R", "mode: X")),
        (
            "missing version",
            good.replace(&format!("    format_version: {FORMAT_VERSION},\n"), ""),
        ),
        (
            "bad version",
            good.replace(
                &format!("format_version: {FORMAT_VERSION}"),
                "format_version: -1",
            ),
        ),
    ];
    for (what, text) in cases {
        match RangeFile::from_ron_str(&text) {
            Err(e @ RangesError::Corrupt { .. }) => {
                let RangesError::Corrupt {
                    line,
                    col,
                    ref message,
                } = e
                else {
                    unreachable!()
                };
                assert!(line >= 1 && col >= 1, "{what}");
                let shown = e.to_string();
                assert!(
                    shown.starts_with("corrupt range file at line "),
                    "{what}: {shown}"
                );
                assert!(!shown.contains('\n'), "{what}: {shown}");
                assert!(
                    message.chars().next().is_none_or(|c| !c.is_uppercase()),
                    "{what}: {shown}"
                );
            }
            other => panic!("{what}: {:?}", other.map(|_| ())),
        }
    }
    // The position points at the damage.
    let text = good.replace("work_dim: 1", "work_dim: \"one\"");
    let want_line = 1 + text[..text.find("\"one\"").unwrap()].matches('\n').count();
    let Err(RangesError::Corrupt { line, .. }) = RangeFile::from_ron_str(&text) else {
        panic!()
    };
    assert_eq!(line, want_line);
}

#[test]
fn bad_expressions_name_kernel_array_and_field() {
    let mut f = small_file();
    f.kernels[0].arrays[0].slice.as_mut().unwrap().upper =
        "[N, lo, hi] -> { [(-1 + 16hi)] : hi > }".into();
    let err = RangeFile::from_ron_str(&f.to_ron_string().unwrap()).unwrap_err();
    let RangesError::BadExpression {
        kernel,
        array,
        field,
        message,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (kernel.as_str(), array.as_str(), field.as_str()),
        ("vadd", "a", "slice.upper")
    );
    assert!(
        message.starts_with("column 39: expected an expression"),
        "{message}"
    );
    assert!(
        err.to_string()
            .starts_with("kernel 'vadd', array 'a': bad expression in slice.upper: column 39"),
        "{err}"
    );

    // A name that is not a kernel parameter.
    let mut f = small_file();
    f.kernels[0].arrays[0].slice.as_mut().unwrap().lower = "16*M".into();
    let err = f.validate().unwrap_err();
    assert_eq!(
        err.to_string(),
        "kernel 'vadd', array 'a': bad expression in slice.lower: unknown parameter 'M' (parameters: N, lo, hi)"
    );

    // Kernel-level expressions.
    let mut f = small_file();
    f.kernels[0].assumptions.push(Assumption {
        array: None,
        description: "x".into(),
        condition: "N >=".into(),
    });
    let err = f.validate().unwrap_err();
    assert!(
        err.to_string()
            .starts_with("kernel 'vadd': bad expression in assumptions[0].condition: "),
        "{err}"
    );

    // Counts.
    let mut f = small_file();
    f.kernels[0].arrays[0].count_slice = Some(Count {
        at: Vec::new(),
        terms: vec![vec![Chamber {
            domain: "N >= 1".into(),
            value: "N +".into(),
        }]],
    });
    let err = f.validate().unwrap_err();
    assert!(
        matches!(&err, RangesError::BadExpression { field, .. } if field == "count_slice[0][0].value"),
        "{err}"
    );

    // A count at a point names parameters of the kernel.
    let mut f = small_file();
    f.kernels[0].arrays[0].count_slice = Some(Count {
        at: vec![("M".into(), 4)],
        terms: vec![vec![Chamber {
            domain: String::new(),
            value: "N".into(),
        }]],
    });
    let err = f.validate().unwrap_err();
    assert!(
        matches!(&err, RangesError::BadExpression { field, .. } if field == "count_slice.at"),
        "{err}"
    );

    // Duplicate parameters.
    let mut f = small_file();
    let p = f.kernels[0].params[0].clone();
    f.kernels[0].params.push(p);
    assert_eq!(
        f.validate().unwrap_err().to_string(),
        "kernel 'vadd': parameter 'N' is listed twice"
    );
}

/// A count made at one point (isl's count at a launch's values)
/// keeps its point through the file, evaluates there, and is an error
/// anywhere else, never 0; a parametric count's file text has no `at`.
#[test]
fn a_count_at_a_point_holds_there_only() {
    let mut f = small_file();
    let names: Vec<String> = f.kernels[0].params.iter().map(|p| p.name.clone()).collect();
    let count = Count {
        at: vec![(names[0].clone(), 16)],
        terms: vec![vec![Chamber {
            domain: String::new(),
            value: "7".into(),
        }]],
    };
    f.kernels[0].arrays[0].count_slice = Some(count.clone());
    let text = f.to_ron_string().unwrap();
    assert!(text.contains("at: ["), "{text}");
    let back = RangeFile::from_ron_str(&text).unwrap();
    assert_eq!(back.kernels[0].arrays[0].count_slice.as_ref(), Some(&count));
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut values = vec![0i64; refs.len()];
    values[0] = 16;
    assert_eq!(eval_count(&count, &refs, &values).unwrap(), 7);
    values[0] = 17;
    let e = eval_count(&count, &refs, &values).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "the count holds only where {0} = 16 (here {0} = 17)",
            names[0]
        )
    );
    let plain = small_file().to_ron_string().unwrap();
    assert!(!plain.contains("at: ["));
}

#[test]
fn write_atomic_then_read() {
    let dir = std::env::temp_dir().join(format!("ranges-format-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("vadd.ranges.ron");
    let f = small_file();
    f.write_atomic(&path).unwrap();
    assert_eq!(RangeFile::read(&path).unwrap(), f);
    // Overwrite in place; no temporary file is left behind.
    let mut g = f.clone();
    g.build_options.push("-DN=4".into());
    g.write_atomic(&path).unwrap();
    assert_eq!(RangeFile::read(&path).unwrap(), g);
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("vadd.ranges.ron")]);

    // An invalid file is never written.
    let mut bad = f.clone();
    bad.kernels[0].arrays[0].slice.as_mut().unwrap().lower = "((".into();
    assert!(matches!(
        bad.write_atomic(&path),
        Err(RangesError::BadExpression { .. })
    ));
    assert_eq!(RangeFile::read(&path).unwrap(), g);

    // I/O errors name the file.
    let missing = dir.join("nope").join("x.ron");
    let err = RangeFile::read(&missing).unwrap_err();
    assert!(
        err.to_string().starts_with("cannot read range file '"),
        "{err}"
    );
    let err = f.write_atomic(&missing).unwrap_err();
    assert!(
        err.to_string().starts_with("cannot write range file '"),
        "{err}"
    );

    // Not UTF-8: corrupt, with the position of the bad byte.
    std::fs::write(&path, b"RangeFile(\n  format_version: 2,\xff").unwrap();
    let err = RangeFile::read(&path).unwrap_err();
    assert!(
        matches!(
            err,
            RangesError::Corrupt {
                line: 2,
                col: 21,
                ..
            }
        ),
        "{err:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn source_hash_is_sha256_hex() {
    assert_eq!(
        source_hash(""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    let f = RangeFile::new("k.cl", "abc");
    assert_eq!(
        f.source_hash,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(f.format_version, FORMAT_VERSION);
}

#[test]
fn bound_range_evaluates_both_bounds() {
    let f = small_file();
    let k = f.kernel("vadd").unwrap();
    let names = k.param_names();
    let r = k.arrays[0].slice.as_ref().unwrap().bind(&names).unwrap();
    assert_eq!(r.eval(&[1000, 2, 5]).unwrap(), Some((32, 79)));
    assert_eq!(r.eval(&[1000, 5, 5]).unwrap(), None);
}

/// Two sections of the same name (two arrays called alike, which only an
/// inconsistent file has) are each checked against their own checksum: the
/// structure still round trips, the full load refuses the file for its
/// content, not its checksums, and an edit of the second one is still
/// caught. (Found by `ron_round_trip`.)
#[test]
fn same_named_sections_keep_their_own_checksums() {
    let mut f = small_file();
    let dup = f.kernels[0].arrays[0].clone();
    f.kernels[0].arrays.push(dup);
    let text = f.to_ron_string().unwrap();
    assert_eq!(RangeFile::from_ron_str_unvalidated(&text).unwrap(), f);
    let e = RangeFile::from_ron_str(&text).unwrap_err().to_string();
    assert!(!e.contains("checksum"), "{e}");
    let at = text.rfind("16hi").expect("the second array's upper bound");
    let edited = format!("{}17hi{}", &text[..at], &text[at + 4..]);
    let e = RangeFile::from_ron_str_unvalidated(&edited)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("array 'a'") && e.contains("checksum mismatch"),
        "{e}"
    );
}

// ---------------------------------------------------------------------------
// Per-dimension boxes

/// A 2-D kernel `col(a, w)` reading column slice `[lo, hi)` of every row of
/// a `w`-wide array, with boxes.
fn boxed_file() -> RangeFile {
    let mut f = RangeFile::new(
        "col.cl",
        "__kernel void col(__global const float *a, int w) {}\n",
    );
    let pw = |t: &str| format!("[w, lo, hi] -> {{ [({t})] : hi > lo }}");
    f.kernels.push(KernelRanges {
        name: "col".into(),
        work_dim: 1,
        params: vec![
            Param {
                name: "w".into(),
                source: ParamSource::ScalarArg { arg_index: 1 },
            },
            Param {
                name: "lo".into(),
                source: ParamSource::SliceLoItem,
            },
            Param {
                name: "hi".into(),
                source: ParamSource::SliceHiItem,
            },
        ],
        args: vec![
            ArgInfo {
                index: 0,
                name: "a".into(),
                kind: ArgKind::GlobalBuffer,
                elem_type: "float".into(),
                elem_size: 4,
                fields: Vec::new(),
            },
            ArgInfo {
                index: 1,
                name: "w".into(),
                kind: ArgKind::Scalar,
                elem_type: "int".into(),
                elem_size: 4,
                fields: Vec::new(),
            },
        ],
        split_dim: Some(0),
        splittable: true,
        reason: None,
        arrays: vec![ArrayRanges {
            arg_index: 0,
            name: "a".into(),
            elem_type: "float".into(),
            elem_size: 4,
            mode: Mode::R,
            status: ArrayStatus::Bounded,
            total: None,
            slice: Some(Range {
                lower: pw("lo"),
                upper: pw("7w + hi - 1"),
            }),
            read_slice: Some(Range {
                lower: pw("lo"),
                upper: pw("7w + hi - 1"),
            }),
            write_slice: None,
            count_total: None,
            count_slice: None,
            write: None,
            boxes: Some(Boxes {
                strides: vec!["w".into(), "1".into()],
                read: Some(vec![
                    Range {
                        lower: "0".into(),
                        upper: "7".into(),
                    },
                    Range {
                        lower: pw("lo"),
                        upper: pw("hi - 1"),
                    },
                ]),
                write: None,
                write_exact: false,
                read_parts: vec![],
            }),
            vertices_slice: None,
            reduction: None,
            checked: false,
        }],
        assumptions: vec![],
        subkernel: Some(Subkernel {
            name: "col".into(),
            source: "__kernel void col() {}".into(),
            extra_args: vec![
                ExtraArg {
                    name: "__clpart_base_a".into(),
                    meaning: ExtraArgMeaning::ArrayBase { arg_index: 0 },
                },
                ExtraArg {
                    name: "__clpart_bs1_a".into(),
                    meaning: ExtraArgMeaning::BoxStride {
                        arg_index: 0,
                        dim: 1,
                    },
                },
                ExtraArg {
                    name: "__clpart_brh1_a".into(),
                    meaning: ExtraArgMeaning::BoxReadHi {
                        arg_index: 0,
                        dim: 1,
                    },
                },
                ExtraArg {
                    name: "__clpart_guard".into(),
                    meaning: ExtraArgMeaning::GuardFlags,
                },
            ],
            guarded: vec![0],
            unguarded: vec![],
            aligned: vec![],
        }),
        diagnostics: vec![],
        group_size_use: None,
        cut_short: Vec::new(),
    });
    f
}

#[test]
fn boxes_round_trip_bind_and_evaluate() {
    let f = boxed_file();
    let text = f.to_ron_string().unwrap();
    assert!(
        text.contains("format_version: 3") && text.contains("boxes: Some(Boxes("),
        "{text}"
    );
    assert_eq!(RangeFile::from_ron_str(&text).unwrap(), f);
    let k = f.kernel("col").unwrap();
    let b = k.validate_and_bind().unwrap();
    let bx = b.arrays[0].boxes.as_ref().expect("bound boxes");
    // w = 100, slice [16, 32)
    let vals = [100, 16, 32];
    assert_eq!(
        bx.strides
            .iter()
            .map(|s| s.eval(&vals).unwrap())
            .collect::<Vec<_>>(),
        vec![Some(100), Some(1)]
    );
    let read = bx.read.as_ref().unwrap();
    assert_eq!(read[0].eval(&vals).unwrap(), Some((0, 7)));
    assert_eq!(read[1].eval(&vals).unwrap(), Some((16, 31)));
    assert!(bx.write.is_none() && !bx.write_exact);
    // An array without boxes writes no `boxes` field (version 2 sections
    // keep their checksums).
    let mut g = f.clone();
    g.kernels[0].arrays[0].boxes = None;
    g.kernels[0]
        .subkernel
        .as_mut()
        .unwrap()
        .extra_args
        .retain(|e| e.meaning.box_arg().is_none());
    assert!(!g.to_ron_string().unwrap().contains("boxes"));
}

#[test]
fn bad_boxes_are_refused_with_the_field() {
    let check = |edit: &dyn Fn(&mut Boxes), want: &str| {
        let mut f = boxed_file();
        edit(f.kernels[0].arrays[0].boxes.as_mut().unwrap());
        let err = f.validate().unwrap_err().to_string();
        assert!(err.contains(want), "want '{want}', got: {err}");
        // the loader refuses it likewise
        let text = f.to_ron_string().unwrap();
        assert!(RangeFile::from_ron_str(&text).is_err());
    };
    // dimensions
    check(
        &|b| b.read.as_mut().unwrap().truncate(1),
        "array 'a': boxes.read has 1 dimensions, boxes.strides 2",
    );
    check(
        &|b| b.strides.truncate(1),
        "array 'a': boxes with 1 stride, not at least 2",
    );
    check(
        &|b| b.strides = vec!["w".into(), "2".into()],
        "array 'a': boxes.strides ends in '2', not '1'",
    );
    check(
        &|b| b.write = b.read.clone(),
        "array 'a': a write box for an array that is not written",
    );
    check(
        &|b| b.write_exact = true,
        "array 'a': boxes.write_exact without a write box",
    );
    // expression text
    check(
        &|b| b.strides[0] = "w +".into(),
        "kernel 'col', array 'a': bad expression in boxes.strides[0]: column",
    );
    check(
        &|b| b.strides[0] = "W".into(),
        "bad expression in boxes.strides[0]: unknown parameter 'W' (parameters: w, lo, hi)",
    );
    check(
        &|b| b.read.as_mut().unwrap()[1].upper = "[w, lo, hi] -> { [(hi - 1)] : hi > }".into(),
        "bad expression in boxes.read[1].upper: column",
    );
    check(
        &|b| b.read.as_mut().unwrap()[0].lower = "n".into(),
        "bad expression in boxes.read[0].lower: unknown parameter 'n'",
    );

    // boxes on an array transferred whole
    let mut f = boxed_file();
    f.kernels[0].arrays[0].status = ArrayStatus::Whole { reason: "x".into() };
    assert!(f
        .validate()
        .unwrap_err()
        .to_string()
        .contains("boxes for an array that is transferred whole"));

    // box-check arguments: only for an array with boxes, dimensions 1.., guarded
    let mut f = boxed_file();
    f.kernels[0].subkernel.as_mut().unwrap().extra_args[1].meaning = ExtraArgMeaning::BoxStride {
        arg_index: 0,
        dim: 0,
    };
    let err = f.validate().unwrap_err().to_string();
    assert!(
        err.contains("refers to box dimension 0 of argument 'a', not in 1..2"),
        "{err}"
    );
    let mut f = boxed_file();
    f.kernels[0].subkernel.as_mut().unwrap().extra_args[2].meaning = ExtraArgMeaning::BoxReadHi {
        arg_index: 0,
        dim: 2,
    };
    assert!(f
        .validate()
        .unwrap_err()
        .to_string()
        .contains("box dimension 2"));
    let mut f = boxed_file();
    f.kernels[0].arrays[0].boxes = None;
    let err = f.validate().unwrap_err().to_string();
    assert!(
        err.contains("is a box check of argument 'a', which has no boxes"),
        "{err}"
    );
    let mut f = boxed_file();
    f.kernels[0].subkernel.as_mut().unwrap().guarded.clear();
    let err = f.validate().unwrap_err().to_string();
    assert!(err.contains("which the subkernel does not guard"), "{err}");
    let mut f = boxed_file();
    f.kernels[0].subkernel.as_mut().unwrap().extra_args[1].meaning = ExtraArgMeaning::BoxExtent {
        arg_index: 1,
        dim: 1,
    };
    let err = f.validate().unwrap_err().to_string();
    assert!(
        err.contains("refers to argument 'w', which is not a global or constant buffer"),
        "{err}"
    );
}

#[test]
fn boxes_need_format_version_3_and_are_checksummed() {
    // A version 2 file has no boxes.
    let mut f = boxed_file();
    f.format_version = 2;
    let err = f.validate().unwrap_err().to_string();
    assert_eq!(
        err,
        "kernel 'col': array 'a': boxes in a file of format_version 2 (boxes came with version 3)"
    );
    // An edit of a box is caught by the array's checksum.
    let text = boxed_file().to_ron_string().unwrap();
    let edited = text.replacen("upper: \"7\"", "upper: \"8\"", 1);
    assert_ne!(edited, text);
    let err = RangeFile::from_ron_str(&edited).unwrap_err().to_string();
    assert!(
        err.contains("kernel 'col': array 'a'") && err.contains("checksum mismatch"),
        "{err}"
    );
}

/// Read parts (a union of boxes) round-trip, bind, and are
/// refused where they contradict the rest; a file without them writes no
/// `read_parts` field (older array sections keep their checksums).
#[test]
fn read_parts_round_trip_bind_and_are_checked() {
    let row = |lo: &str, hi: &str| Range {
        lower: lo.into(),
        upper: hi.into(),
    };
    let mut f = boxed_file();
    assert!(!f.to_ron_string().unwrap().contains("read_parts"));
    {
        let b = f.kernels[0].arrays[0].boxes.as_mut().unwrap();
        b.read_parts = vec![
            vec![row("0", "0"), row("lo", "hi - 1")],
            vec![row("7", "7"), row("lo", "lo")],
        ];
        let sub = f.kernels[0].subkernel.as_mut().unwrap();
        sub.extra_args.push(ExtraArg {
            name: "__clpart_ppl1_0_a".into(),
            meaning: ExtraArgMeaning::BoxPartLo {
                arg_index: 0,
                part: 1,
                dim: 0,
            },
        });
    }
    let text = f.to_ron_string().unwrap();
    assert!(text.contains("read_parts: ["), "{text}");
    assert_eq!(RangeFile::from_ron_str(&text).unwrap(), f);
    let b = f.kernel("col").unwrap().validate_and_bind().unwrap();
    let parts = &b.arrays[0].boxes.as_ref().unwrap().read_parts;
    let vals = [100, 16, 32];
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[0][1].eval(&vals).unwrap(), Some((16, 31)));
    assert_eq!(parts[1][0].eval(&vals).unwrap(), Some((7, 7)));

    let check = |edit: &dyn Fn(&mut RangeFile), want: &str| {
        let mut g = f.clone();
        edit(&mut g);
        let err = g.validate().unwrap_err().to_string();
        assert!(err.contains(want), "want '{want}', got: {err}");
        assert!(RangeFile::from_ron_str(&g.to_ron_string().unwrap()).is_err());
    };
    fn parts_of(g: &mut RangeFile) -> &mut Vec<Vec<Range>> {
        &mut g.kernels[0].arrays[0].boxes.as_mut().unwrap().read_parts
    }
    check(
        &|g| parts_of(g)[1].truncate(1),
        "array 'a': boxes.read_parts[1] has 1 dimensions, boxes.strides 2",
    );
    check(
        &|g| parts_of(g).truncate(1),
        "boxes.read_parts has 1 part, not at least 2",
    );
    check(
        &|g| {
            let p = parts_of(g)[0].clone();
            parts_of(g).resize(5, p)
        },
        "boxes.read_parts has 5 parts, more than 4",
    );
    check(
        &|g| parts_of(g)[0][1].upper = "m".into(),
        "bad expression in boxes.read_parts[0][1].upper: unknown parameter 'm'",
    );
    check(
        &|g| g.kernels[0].arrays[0].boxes.as_mut().unwrap().read = None,
        "boxes.read_parts without a read box",
    );
    check(
        &|g| {
            let sub = g.kernels[0].subkernel.as_mut().unwrap();
            let last = sub.extra_args.len() - 1;
            sub.extra_args[last].meaning = ExtraArgMeaning::BoxPartHi {
                arg_index: 0,
                part: 2,
                dim: 0,
            };
        },
        "refers to read part 2 of argument 'a', which has 2",
    );
    check(
        &|g| {
            let sub = g.kernels[0].subkernel.as_mut().unwrap();
            let last = sub.extra_args.len() - 1;
            sub.extra_args[last].meaning = ExtraArgMeaning::BoxPartHi {
                arg_index: 0,
                part: 0,
                dim: 2,
            };
        },
        "refers to box dimension 2 of argument 'a', not in 0..2",
    );
}

/// What cut an analysis short is kept in the file, under a checksum of
/// its own (an edit is refused naming it), and absent when nothing did (a
/// file written before the field existed reads and keeps its checksums).
#[test]
fn what_cut_an_analysis_short_is_kept_and_checksummed() {
    let mut f = small_file();
    let plain = f.to_ron_string().unwrap();
    assert!(!plain.contains("cut_short"), "{plain}");
    f.kernels[0].cut_short = vec![CutShort::Budget, CutShort::CountTime];
    let text = f.to_ron_string().unwrap();
    let back = RangeFile::from_ron_str(&text).unwrap();
    assert_eq!(back.kernels[0].cut_short, f.kernels[0].cut_short);
    let edited = text.replace("CountTime", "CountProcess");
    assert_ne!(edited, text);
    let err = RangeFile::from_ron_str(&edited).unwrap_err().to_string();
    assert!(err.contains("cut short"), "{err}");
}

/// A reduction merge or a checked merge round-trips and is checksummed;
/// the validation refuses one that cannot hold: a reduction over a
/// bounded, unwritten or floating-point array, a checked merge of an array
/// not written or also reduced.
#[test]
fn reductions_and_checked_merges_round_trip_and_are_checked() {
    use ranges_format::{ReduceOp, Reduction};
    let red = Reduction {
        op: ReduceOp::Max,
        signed: true,
    };
    let with = |elem: &str, mode: Mode, whole: bool, reduction, checked| {
        let mut f = small_file();
        f.kernels[0].args[0].elem_type = elem.into();
        let a = &mut f.kernels[0].arrays[0];
        a.elem_type = elem.into();
        a.mode = mode;
        if whole {
            a.status = ArrayStatus::Whole {
                reason: "indirect".into(),
            };
        }
        a.reduction = reduction;
        a.checked = checked;
        f
    };
    for f in [
        with("int", Mode::RW, true, Some(red), false),
        with("float", Mode::W, true, None, true),
        with("float", Mode::RW, false, None, true),
    ] {
        let text = f.to_ron_string().unwrap();
        assert_eq!(RangeFile::from_ron_str(&text).unwrap(), f);
        // the merge is part of its array's checksum
        let flipped = if f.kernels[0].arrays[0].checked {
            text.replace("checked: true", "checked: false")
        } else {
            text.replace("op: Max", "op: Min")
        };
        let err = RangeFile::from_ron_str(&flipped).unwrap_err().to_string();
        assert!(err.contains("checksum mismatch"), "{err}");
    }
    for (f, want) in [
        (
            with("int", Mode::RW, false, Some(red), false),
            "a reduction for an array that is not written and transferred whole",
        ),
        (
            with("int", Mode::R, true, Some(red), false),
            "a reduction for an array that is not written and transferred whole",
        ),
        (
            with("float", Mode::RW, true, Some(red), false),
            "a reduction (max) over elements of type 'float'",
        ),
        (
            with("float", Mode::R, true, None, true),
            "a checked merge for an array that is not written",
        ),
        (
            with("int", Mode::RW, true, Some(red), true),
            "or is merged as a reduction",
        ),
    ] {
        let err = f.validate().unwrap_err().to_string();
        assert!(err.contains(want), "want '{want}', got: {err}");
    }
}
