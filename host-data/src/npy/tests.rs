use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::*;
use launcher::{ScalarKind, StructField};

/// A `.npy` file: this header text (padded as numpy pads it) and data, in
/// version 1.0 where the header fits, else 2.0.
fn npy_bytes(header: &str, data: &[u8]) -> Vec<u8> {
    let v1 = header.len() < 65000;
    let before = if v1 { 10 } else { 12 };
    let mut h = header.to_string();
    while !(before + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    let mut bytes = MAGIC.to_vec();
    if v1 {
        bytes.extend_from_slice(&[1, 0]);
        bytes.extend_from_slice(&(h.len() as u16).to_le_bytes());
    } else {
        bytes.extend_from_slice(&[2, 0]);
        bytes.extend_from_slice(&(h.len() as u32).to_le_bytes());
    }
    bytes.extend_from_slice(h.as_bytes());
    bytes.extend_from_slice(data);
    bytes
}

fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// The bytes [`write_npy_to`] writes for `buffer`.
fn written(buffer: &HostBuffer) -> Vec<u8> {
    let mut out = Vec::new();
    write_npy_to(&mut out, buffer).unwrap();
    out
}

/// The header of `.npy` bytes as numpy reads it: dtype and shape.
fn header_of(bytes: &[u8]) -> (npyz::DType, Vec<u64>) {
    let h = npyz::NpyHeader::from_reader(bytes).unwrap();
    (h.dtype(), h.shape().to_vec())
}

fn dtype(text: &str) -> npyz::DType {
    let header = format!("{{'descr': {text}, 'fortran_order': False, 'shape': (1,), }}");
    header_of(&npy_bytes(&header, &[])).0
}

/// `.npy` bytes read back as a buffer of `elem`, or the one-line error.
fn read_back(bytes: &[u8], elem: &ElemType) -> std::result::Result<HostBuffer, String> {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "a.npy", bytes);
    read_npy(&path, elem).map_err(|e| {
        let message = e.to_string();
        assert!(!message.contains('\n'), "not one line: {message}");
        message
    })
}

const ALL_KINDS: [ScalarKind; 11] = [
    ScalarKind::I8,
    ScalarKind::U8,
    ScalarKind::I16,
    ScalarKind::U16,
    ScalarKind::I32,
    ScalarKind::U32,
    ScalarKind::I64,
    ScalarKind::U64,
    ScalarKind::F16,
    ScalarKind::F32,
    ScalarKind::F64,
];

fn kind_name(kind: ScalarKind) -> &'static str {
    match kind {
        ScalarKind::I8 => "char",
        ScalarKind::U8 => "uchar",
        ScalarKind::I16 => "short",
        ScalarKind::U16 => "ushort",
        ScalarKind::I32 => "int",
        ScalarKind::U32 => "uint",
        ScalarKind::I64 => "long",
        ScalarKind::U64 => "ulong",
        ScalarKind::F16 => "half",
        ScalarKind::F32 => "float",
        ScalarKind::F64 => "double",
    }
}

/// Distinct bytes for `n` elements of `elem`.
fn pattern(elem: &ElemType, n: usize) -> Vec<u8> {
    (0..n * elem.size as usize)
        .map(|i| (i * 7 + 3) as u8)
        .collect()
}

#[test]
fn every_scalar_type_round_trips_in_its_own_dtype_and_shape() {
    for kind in ALL_KINDS {
        let elem = ElemType::parse(kind_name(kind), 0);
        let buffer = HostBuffer::from_bytes(elem.clone(), pattern(&elem, 12)).with_shape(&[3, 4]);
        let bytes = written(&buffer);
        let (dtype_read, shape) = header_of(&bytes);
        assert_eq!(
            dtype_read,
            dtype(&format!("'{}'", kind.npy_descr())),
            "{kind:?}"
        );
        assert_eq!(shape, [3, 4], "{kind:?}");
        let back = read_back(&bytes, &elem).unwrap();
        assert_eq!(back, buffer, "{kind:?}");
        assert_eq!(back.shape(), [3, 4], "{kind:?}");
    }
    // the dtypes by name, as numpy spells them
    let descr = |name: &str| dtype::dtype_text(&dtype::write_dtype(&ElemType::parse(name, 0)).0);
    assert_eq!(descr("double"), "<f8");
    assert_eq!(descr("half"), "<f2");
    assert_eq!(descr("short"), "<i2");
    assert_eq!(descr("ulong"), "<u8");
    assert_eq!(descr("char"), "|i1");
}

#[test]
fn a_vector_type_is_its_lanes_as_a_last_dimension() {
    for (name, lanes) in [("float4", 4), ("double2", 2), ("float3", 4), ("short8", 8)] {
        let elem = ElemType::parse(name, 0);
        let buffer = HostBuffer::from_bytes(elem.clone(), pattern(&elem, 5));
        let bytes = written(&buffer);
        assert_eq!(header_of(&bytes).1, [5, lanes], "{name}");
        let back = read_back(&bytes, &elem).unwrap();
        assert_eq!((back.shape(), &back), (vec![5], &buffer), "{name}");
    }
    // the scalars flattened are read as whole elements too
    let f4 = ElemType::parse("float4", 0);
    let data = pattern(&f4, 5);
    let flat = npy_bytes(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (20,), }",
        &data,
    );
    let back = read_back(&flat, &f4).unwrap();
    assert_eq!((back.shape(), back.as_bytes()), (vec![5], &data[..]));
}

#[test]
fn big_endian_numbers_are_converted_to_little_endian() {
    let values = [1.5f64, -2.25, 1e300];
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
    let f8 = npy_bytes(
        "{'descr': '>f8', 'fortran_order': False, 'shape': (3,), }",
        &data,
    );
    let back = read_back(&f8, &ElemType::parse("double", 0)).unwrap();
    let want: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(back.as_bytes(), want);
    let data: Vec<u8> = [-2i16, 300].iter().flat_map(|v| v.to_be_bytes()).collect();
    let i2 = npy_bytes(
        "{'descr': '>i2', 'fortran_order': False, 'shape': (2,), }",
        &data,
    );
    let back = read_back(&i2, &ElemType::parse("short", 0)).unwrap();
    assert_eq!(back.as_bytes(), [0xfe, 0xff, 0x2c, 0x01]);
    // a struct's big-endian fields, an array field's lanes each
    let mut data = 7i16.to_be_bytes().to_vec();
    data.extend(1.0f32.to_be_bytes());
    data.extend(2.0f32.to_be_bytes());
    let rec = npy_bytes(
        "{'descr': [('n', '>i2'), ('v', '>f4', (2,))], 'fortran_order': False, 'shape': (1,), }",
        &data,
    );
    let back = read_back(&rec, &ElemType::parse("pair", 10)).unwrap();
    let mut want = 7i16.to_le_bytes().to_vec();
    want.extend(1.0f32.to_le_bytes());
    want.extend(2.0f32.to_le_bytes());
    assert_eq!(back.as_bytes(), want);
    // what cannot be converted is refused
    let c8 = npy_bytes(
        "{'descr': [('z', '>c8')], 'fortran_order': False, 'shape': (1,), }",
        &[0; 8],
    );
    let e = read_back(&c8, &ElemType::parse("cplx", 8)).unwrap_err();
    assert!(
        e.ends_with("big-endian '>c8' values are not supported (save them little-endian)"),
        "{e}"
    );
}

/// `typedef struct { char c; double d; float f; } S;`: 7 bytes of padding
/// after `c`, 4 at the end, 24 bytes in all.
fn padded_struct() -> ElemType {
    let field = |name: &str, offset, ty| StructField {
        name: name.into(),
        offset,
        elem: ElemType::parse(ty, 0),
    };
    ElemType::parse("S", 24).with_fields(vec![
        field("d", 8, "double"),
        field("c", 0, "char"),
        field("f", 16, "float"),
    ])
}

/// What numpy 2 writes for `np.save(f, np.zeros(2, dtype))` with
/// `dtype = np.dtype({'names': ['c', 'd', 'f'], 'formats': ['i1', '<f8',
/// '<f4'], 'offsets': [0, 8, 16], 'itemsize': 24})`, `c` 1 and 2, `d` 0.5
/// and 1.5, `f` 3 and 4, the padding zero.
const NUMPY_PADDED_STRUCT: &str = "{'descr': [('c', '|i1'), ('', '|V7'), ('d', '<f8'), ('f', '<f4'), ('', '|V4')], 'fortran_order': False, 'shape': (2,), }";

fn padded_struct_data() -> Vec<u8> {
    let mut data = Vec::new();
    for (c, d, f) in [(1i8, 0.5f64, 3.0f32), (2, 1.5, 4.0)] {
        data.push(c as u8);
        data.extend([0; 7]);
        data.extend(d.to_le_bytes());
        data.extend(f.to_le_bytes());
        data.extend([0; 4]);
    }
    data
}

#[test]
fn a_struct_of_known_layout_is_a_structured_dtype_with_its_padding() {
    let elem = padded_struct();
    let buffer = HostBuffer::from_bytes(elem.clone(), padded_struct_data());
    let bytes = written(&buffer);
    // the header says what numpy's says: same dtype, same shape
    let numpy = npy_bytes(NUMPY_PADDED_STRUCT, &padded_struct_data());
    assert_eq!(header_of(&bytes), header_of(&numpy));
    assert_eq!(bytes.len(), numpy.len());
    assert_eq!(bytes[bytes.len() - 48..], numpy[numpy.len() - 48..]);
    // and both read back as the buffer
    assert_eq!(read_back(&bytes, &elem).unwrap(), buffer);
    assert_eq!(read_back(&numpy, &elem).unwrap(), buffer);
    // a struct without padding, and struct and vector fields
    let f = |name: &str, offset, elem| StructField {
        name: name.into(),
        offset,
        elem,
    };
    let float3 = ElemType::parse("FLOAT3", 12).with_fields(vec![
        f("x", 0, ElemType::parse("float", 0)),
        f("y", 4, ElemType::parse("float", 0)),
        f("z", 8, ElemType::parse("float", 0)),
    ]);
    let text = |e: &ElemType| dtype::dtype_text(&dtype::write_dtype(e).0);
    assert_eq!(text(&float3), "[('x', '<f4'), ('y', '<f4'), ('z', '<f4')]");
    let nested = ElemType::parse("body", 32).with_fields(vec![
        f("p", 0, float3.clone()),
        f("v", 16, ElemType::parse("float4", 0)),
    ]);
    assert_eq!(
        text(&nested),
        "[('p', [('x', '<f4'), ('y', '<f4'), ('z', '<f4')]), ('', '|V4'), ('v', '<f4', (4,))]"
    );
    let buffer = HostBuffer::from_bytes(nested.clone(), pattern(&nested, 3)).with_shape(&[3, 1]);
    let back = read_back(&written(&buffer), &nested).unwrap();
    assert_eq!((back.shape(), &back), (vec![3, 1], &buffer));
    // fields that overlap (a union) or pass the end are written as bytes
    let union = ElemType::parse("U", 4).with_fields(vec![
        f("i", 0, ElemType::parse("int", 0)),
        f("x", 0, ElemType::parse("float", 0)),
    ]);
    assert_eq!(text(&union), "|V4");
}

#[test]
fn a_struct_reads_raw_bytes_void_or_any_structured_dtype_of_its_size() {
    let elem = ElemType::parse("point", 12);
    let data = pattern(&elem, 2);
    let buffer = HostBuffer::from_bytes(elem.clone(), data.clone());
    // unknown layout: written as |V12
    let bytes = written(&buffer);
    assert_eq!(header_of(&bytes).0, dtype("'|V12'"));
    assert_eq!(read_back(&bytes, &elem).unwrap(), buffer);
    for header in [
        "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 12), }",
        "{'descr': '|u1', 'fortran_order': False, 'shape': (24,), }",
        "{'descr': [('x', '<f4'), ('y', '<f4'), ('z', '<f4')], 'fortran_order': False, 'shape': (2,), }",
    ] {
        let back = read_back(&npy_bytes(header, &data), &elem).unwrap();
        assert_eq!((back.shape(), &back), (vec![2], &buffer), "{header}");
    }
    let e = read_back(
        &npy_bytes(
            "{'descr': [('x', '<f4'), ('y', '<f4')], 'fortran_order': False, 'shape': (3,), }",
            &data,
        ),
        &elem,
    )
    .unwrap_err();
    assert!(
        e.ends_with(
            "dtype '[('x', '<f4'), ('y', '<f4')]' does not match element type 'point' (expected '|V12')"
        ),
        "{e}"
    );
}

#[test]
fn malformed_files_are_refused_in_one_line() {
    let int = ElemType::parse("int", 0);
    let ok = "{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }";
    let mut bad_magic = npy_bytes(ok, &[0; 16]);
    bad_magic[1] = b'n';
    let mut version = npy_bytes(ok, &[0; 16]);
    version[6] = 4;
    let mut long_header = npy_bytes(ok, &[]);
    long_header[8..10].copy_from_slice(&4000u16.to_le_bytes());
    let mut huge_header = MAGIC.to_vec();
    huge_header.extend([2, 0]);
    huge_header.extend((1u32 << 31).to_le_bytes());
    let shape = |s: &str| format!("{{'descr': '<i4', 'fortran_order': False, 'shape': {s}, }}");
    let f4 = ElemType::parse("float4", 0);
    for (bytes, elem, why) in [
        (b"\x93NUM".to_vec(), &int, "not a .npy file (bad magic)"),
        (bad_magic, &int, "not a .npy file (bad magic)"),
        (
            version,
            &int,
            "unsupported .npy version 4.0 (valid: 1.0, 2.0, 3.0)",
        ),
        (long_header, &int, "truncated header"),
        (
            huge_header,
            &int,
            "header of 2147483648 bytes is larger than 64 KiB, the most a .npy header may have",
        ),
        (
            npy_bytes(&shape("(4611686018427387904, 8)"), &[0; 16]),
            &int,
            "shape (4611686018427387904, 8) is too large: its data would be larger than",
        ),
        (
            npy_bytes(
                "{'descr': '<i4', 'fortran_order': False, 'shape': (4,), 'shape': (4611686018427387904, 8), }",
                &[0; 16],
            ),
            &int,
            "shape (4611686018427387904, 8) is too large",
        ),
        (
            npy_bytes(&shape("(0, 4611686018427387904, 8)"), &[]),
            &int,
            "shape (0, 4611686018427387904, 8) is too large",
        ),
        (
            npy_bytes(&shape("(99999999999999999999999,)"), &[]),
            &int,
            "malformed header: dimension cannot be larger than u64",
        ),
        (
            npy_bytes(&shape("(-1,)"), &[]),
            &int,
            "malformed header: dimension cannot be negative",
        ),
        (
            npy_bytes(&shape("(1000,)"), &[0; 16]),
            &int,
            "file is truncated: shape needs 4000 bytes of data, found 16",
        ),
        (
            npy_bytes(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
                &[0; 16],
            ),
            &int,
            "dtype '<f4' does not match element type 'int' (expected '<i4')",
        ),
        (
            npy_bytes(
                "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
                &[0; 16],
            ),
            &int,
            "dtype '<i8' does not match element type 'int' (expected '<i4')",
        ),
        (
            npy_bytes(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }",
                &[0; 24],
            ),
            &f4,
            "6 values are not a whole number of 'float4' elements (4 values each)",
        ),
        (
            npy_bytes(
                "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 2), }",
                &[0; 16],
            ),
            &int,
            "fortran-order arrays are not supported (save with C order)",
        ),
        (
            npy_bytes("{'descr': '<i4', 'shape': (4,), }", &[0; 16]),
            &int,
            "malformed header: dict is missing key 'fortran_order'",
        ),
        (
            npy_bytes(
                "{'descr': '<i4', 'fortran_order': False, 'shape': (4,",
                &[0; 16],
            ),
            &int,
            "malformed header: could not parse Python expression",
        ),
        (
            npy_bytes("[1, 2]", &[]),
            &int,
            "malformed header: expected a python dict literal",
        ),
        (
            npy_bytes(
                "{'descr': '<q9', 'fortran_order': False, 'shape': (4,), }",
                &[0; 16],
            ),
            &int,
            "malformed header: invalid type string",
        ),
    ] {
        let e = read_back(&bytes, elem).unwrap_err();
        assert!(e.contains(&format!("a.npy: {why}")), "{why}: {e}");
    }
    // Fortran order is C order with one dimension past 1
    let one = npy_bytes(
        "{'descr': '<i4', 'fortran_order': True, 'shape': (1, 4), }",
        &[0; 16],
    );
    assert_eq!(read_back(&one, &int).unwrap().shape(), [1, 4]);
}

#[test]
fn a_deeply_nested_header_is_refused_before_it_is_parsed() {
    // the parser takes seconds for 20 nested lists: this would not finish
    let deep = format!(
        "{{'descr': {}'<i4'{}, 'fortran_order': False, 'shape': (1,), }}",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let e = read_back(&npy_bytes(&deep, &[0; 4]), &ElemType::parse("int", 0)).unwrap_err();
    assert!(
        e.ends_with("header nests 10001 brackets deep, more than the 9 a .npy header may"),
        "{e}"
    );
}

proptest! {
    /// Any header text or bytes after the magic: an error or a buffer,
    /// never a panic.
    #[test]
    fn no_header_text_panics(text in "[{}\\[\\]()',: <>|=a-z_0-9A-Z]{0,120}") {
        let _ = read_back(&npy_bytes(&text, &[0; 64]), &ElemType::parse("int", 0));
        let _ = read_back(&npy_bytes(&text, &[0; 64]), &ElemType::parse("point", 8));
    }

    #[test]
    fn no_dict_panics(
        descr in "'[<>|=]?[biufcVSUOMm][0-9]{0,4}'|\\[\\('[a-z]{0,2}', '[<>|][biufcV][0-9]{1,2}'\\)\\]",
        dims in proptest::collection::vec(0u64..u64::MAX, 0..4),
        fortran in any::<bool>(),
    ) {
        let dims: Vec<String> = dims.iter().map(u64::to_string).collect();
        let header = format!(
            "{{'descr': {descr}, 'fortran_order': {}, 'shape': ({},), }}",
            if fortran { "True" } else { "False" },
            dims.join(", ")
        );
        for elem in [ElemType::parse("int", 0), ElemType::parse("float4", 0), ElemType::parse("point", 8)] {
            let _ = read_back(&npy_bytes(&header, &[0; 64]), &elem);
        }
    }

    #[test]
    fn no_bytes_panic(tail in proptest::collection::vec(any::<u8>(), 0..200), v in 1u8..4) {
        let mut bytes = MAGIC.to_vec();
        bytes.extend([v, 0]);
        bytes.extend(tail);
        let _ = read_back(&bytes, &ElemType::parse("int", 0));
    }
}
