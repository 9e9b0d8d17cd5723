//! Kernel arguments from `NAME=SPEC` strings: [`FromSpecs`] (for
//! `KernelArgs::from_specs`, `KernelArgs::from_parsed`) and [`PlanArgs`]
//! (`Plan::args_from_specs`), each spec made into its argument's value
//! (`spec.rs` parses and generates, `npy.rs` reads `file:` specs). The
//! launcher checks the names and kinds ([`KernelArgs::from_named`]).

use std::path::Path;

use launcher::{ArgValue, ElemType, HostBuffer, KernelArgs, LaunchError, Plan, Result};
use ranges_format::{ArgInfo, ArgKind};

use crate::npy::read_npy;
use crate::spec::{parse_assignment, rand, scalar_literal, seq, ArgSpec};

/// Kernel arguments made from `NAME=SPEC` strings.
pub trait FromSpecs: Sized {
    /// Builds the arguments of `kernel` (whose arguments are `infos`) from
    /// `NAME=SPEC` strings. Every argument must be given exactly once.
    fn from_specs<S: AsRef<str>>(kernel: &str, infos: &[ArgInfo], specs: &[S]) -> Result<Self>;

    /// Builds the arguments from already parsed specs.
    fn from_parsed(kernel: &str, infos: &[ArgInfo], specs: &[(String, ArgSpec)]) -> Result<Self>;
}

impl FromSpecs for KernelArgs {
    fn from_specs<S: AsRef<str>>(
        kernel: &str,
        infos: &[ArgInfo],
        specs: &[S],
    ) -> Result<KernelArgs> {
        let parsed = specs
            .iter()
            .map(|s| parse_assignment(s.as_ref()))
            .collect::<Result<Vec<_>>>()?;
        KernelArgs::from_parsed(kernel, infos, &parsed)
    }

    fn from_parsed(
        kernel: &str,
        infos: &[ArgInfo],
        specs: &[(String, ArgSpec)],
    ) -> Result<KernelArgs> {
        KernelArgs::from_named(kernel, infos, specs, make_value)
    }
}

/// A plan's kernel arguments made from `NAME=SPEC` strings.
pub trait PlanArgs {
    /// Builds the arguments of this kernel from `NAME=SPEC` strings.
    fn args_from_specs<S: AsRef<str>>(&self, specs: &[S]) -> Result<KernelArgs>;
}

impl PlanArgs for Plan {
    fn args_from_specs<S: AsRef<str>>(&self, specs: &[S]) -> Result<KernelArgs> {
        let kernel = self.kernel();
        KernelArgs::from_specs(&kernel.name, &kernel.args, specs)
    }
}

/// The value of argument `info` that `spec` makes (images and samplers
/// are refused before: [`KernelArgs::from_named`]).
fn make_value(info: &ArgInfo, spec: &ArgSpec) -> Result<ArgValue> {
    let elem = ElemType::of_arg(info);
    let mistyped = |message: String| LaunchError::mistyped(info, message);
    match (info.kind, spec) {
        (ArgKind::Scalar, ArgSpec::Literal(text)) => scalar_literal(&elem, text).map_err(mistyped),
        (ArgKind::Scalar, ArgSpec::Bytes(bytes)) => {
            if bytes.len() != elem.size as usize {
                return Err(mistyped(format!(
                    "bytes: gives {} bytes, the argument has {}",
                    bytes.len(),
                    elem.size
                )));
            }
            Ok(ArgValue::Scalar {
                bytes: bytes.clone(),
                // an integer's value, for the expressions that use it
                int: elem.int_from_le_bytes(bytes),
            })
        }
        (_, ArgSpec::Bytes(_)) => Err(mistyped(
            "bytes:HEX is for by-value arguments; use rand:N, zeros:N, seq:N or file:PATH.npy".into(),
        )),
        (ArgKind::Scalar, other) => Err(mistyped(format!(
            "'{other}' makes a buffer but this is a scalar argument; give a literal such as 1024 or 0.5"
        ))),
        (ArgKind::LocalBuffer, ArgSpec::Local(n)) => Ok(ArgValue::Local {
            bytes: n
                .checked_mul(elem.size as u64)
                .ok_or_else(|| mistyped(format!("{n} elements are too many")))?,
        }),
        (ArgKind::LocalBuffer, other) => Err(mistyped(format!(
            "'{other}' does not fit a __local pointer; give local:N (N elements)"
        ))),
        (_, ArgSpec::Local(_)) => Err(mistyped(
            "local:N is for __local pointers; use rand:N, zeros:N, seq:N or file:PATH.npy".into(),
        )),
        (_, ArgSpec::Literal(text)) => Err(mistyped(format!(
            "the literal '{text}' is for scalar arguments; use rand:N, zeros:N, seq:N or file:PATH.npy"
        ))),
        (_, ArgSpec::Zeros(shape)) => {
            let n = shape.n();
            if n.checked_mul(elem.size as u64).is_none_or(|b| b > isize::MAX as u64) {
                return Err(mistyped(format!("{n} elements are too many")));
            }
            HostBuffer::zeros(elem, n)
                .map(|b| ArgValue::Buffer(b.with_shape(&shape.0)))
                .map_err(|_| LaunchError::Alloc { name: info.name.clone(), bytes: n.saturating_mul(info.elem_size as u64) })
        }
        (_, ArgSpec::Seq(shape)) => seq(&elem, shape.n())
            .map(|b| ArgValue::Buffer(b.with_shape(&shape.0)))
            .map_err(mistyped),
        (_, ArgSpec::Rand { n: shape, seed }) => rand(&elem, shape.n(), *seed)
            .map(|b| ArgValue::Buffer(b.with_shape(&shape.0)))
            .map_err(mistyped),
        (_, ArgSpec::File(path)) => read_file(path, &elem).map(ArgValue::Buffer),
    }
}

fn read_file(path: &Path, elem: &ElemType) -> Result<HostBuffer> {
    let buf = read_npy(path, elem)?;
    if buf.is_empty() {
        return Err(LaunchError::Npy {
            path: path.to_path_buf(),
            message: "the array is empty".into(),
        });
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::SplitMix64;

    fn info(index: u32, name: &str, kind: ArgKind, ty: &str, size: u32) -> ArgInfo {
        ArgInfo {
            index,
            name: name.into(),
            kind,
            elem_type: ty.into(),
            elem_size: size,
            fields: Vec::new(),
        }
    }

    fn infos() -> Vec<ArgInfo> {
        vec![
            info(0, "a", ArgKind::GlobalBuffer, "float", 4),
            info(1, "v", ArgKind::GlobalBuffer, "float4", 16),
            info(2, "n", ArgKind::Scalar, "int", 4),
            info(3, "tmp", ArgKind::LocalBuffer, "float", 4),
            info(4, "idx", ArgKind::ConstantBuffer, "uchar", 1),
        ]
    }

    #[test]
    fn builds_every_kind() {
        let args = KernelArgs::from_specs(
            "k",
            &infos(),
            &[
                "a=rand:5:7",
                "v=seq:3",
                "n=-3",
                "tmp=local:16",
                "idx=rand:1000",
            ],
        )
        .unwrap();
        let a = args.buffer("a").unwrap().to_f32().unwrap();
        assert_eq!(a.len(), 5);
        assert!(a.iter().all(|&x| (0.0..1.0).contains(&x)));
        let again = KernelArgs::from_specs(
            "k",
            &infos(),
            &[
                "a=rand:5:7",
                "v=zeros:1",
                "n=1",
                "tmp=local:1",
                "idx=zeros:1",
            ],
        )
        .unwrap();
        assert_eq!(args.buffer("a"), again.buffer("a"), "rand is deterministic");
        let v = args.buffer("v").unwrap();
        let floats: Vec<f32> = v
            .as_bytes()
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(floats, (0..12).map(|x| x as f32).collect::<Vec<_>>());
        assert_eq!(
            args.value(2),
            Some(&ArgValue::Scalar {
                bytes: (-3i32).to_le_bytes().to_vec(),
                int: Some(-3)
            })
        );
        assert_eq!(args.value(3), Some(&ArgValue::Local { bytes: 64 }));
        assert_eq!(args.buffer("idx").unwrap().len(), 1000);
    }

    #[test]
    fn splitmix_reference_values() {
        // reference values of splitmix64 seeded with 0
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next(), 0x6E78_9E6A_A1B9_65F4);
    }

    fn err(specs: &[&str]) -> String {
        KernelArgs::from_specs("k", &infos(), specs)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn errors_name_the_argument() {
        let base = ["v=seq:1", "n=1", "tmp=local:1", "idx=zeros:1"];
        let with = |extra: &str| {
            let mut s: Vec<&str> = base.to_vec();
            s.push(extra);
            s.into_iter().map(String::from).collect::<Vec<_>>()
        };
        let e = KernelArgs::from_specs("k", &infos(), &with("zz=seq:1"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "unknown argument 'zz' for kernel 'k' (valid arguments: a, v, n, tmp, idx)"
        );
        assert_eq!(
            err(&base),
            "missing argument 'a' for kernel 'k' (give it as a=SPEC)"
        );
        let e = err(&[
            "a=seq:1",
            "v=seq:1",
            "n=rand:3",
            "tmp=local:1",
            "idx=zeros:1",
        ]);
        assert!(
            e.starts_with("argument 'n' (int): 'rand:3:0' makes a buffer"),
            "{e}"
        );
        let e = err(&["a=seq:1", "v=seq:1", "n=0.5", "tmp=local:1", "idx=zeros:1"]);
        assert_eq!(e, "argument 'n' (int): '0.5' is not an integer");
        let e = KernelArgs::from_specs("k", &infos(), &with("a=bogus:3"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "invalid argument spec 'bogus:3': unknown spec kind 'bogus' (valid kinds: a literal, bytes:HEX, rand:N[:SEED], zeros:N, seq:N, file:PATH.npy, local:N)"
        );
        // bytes:HEX: a scalar's bytes, its size exactly; an integer's value
        // read from them; not for buffers
        let ok = KernelArgs::from_specs(
            "k",
            &infos(),
            &[
                "a=seq:1",
                "v=seq:1",
                "n=bytes:feffffff",
                "tmp=local:1",
                "idx=zeros:1",
            ],
        )
        .unwrap();
        assert_eq!(
            ok.value(2),
            Some(&ArgValue::Scalar {
                bytes: vec![0xfe, 0xff, 0xff, 0xff],
                int: Some(-2)
            })
        );
        let e = err(&[
            "a=seq:1",
            "v=seq:1",
            "n=bytes:0102",
            "tmp=local:1",
            "idx=zeros:1",
        ]);
        assert_eq!(
            e,
            "argument 'n' (int): bytes: gives 2 bytes, the argument has 4"
        );
        let e = err(&[
            "a=bytes:00000000",
            "v=seq:1",
            "n=1",
            "tmp=local:1",
            "idx=zeros:1",
        ]);
        assert!(e.contains("bytes:HEX is for by-value arguments"), "{e}");
        let e = err(&[
            "a=seq:1",
            "v=seq:1",
            "n=bytes:0g",
            "tmp=local:1",
            "idx=zeros:1",
        ]);
        assert!(e.contains("is not hex"), "{e}");
        let e = err(&["a=1", "v=seq:1", "n=1", "tmp=local:1", "idx=zeros:1"]);
        assert!(
            e.contains("argument 'a' (__global float*): the literal '1' is for scalar"),
            "{e}"
        );
        let e = err(&[
            "a=seq:1",
            "v=seq:1",
            "n=4294967296",
            "tmp=local:1",
            "idx=zeros:1",
        ]);
        assert!(e.contains("out of range"), "{e}");
    }

    /// A buffer given a shape (`zeros:4x3`, a 2-D `.npy` file) is written
    /// with it, a vector type's lanes last, and reads back with it.
    #[test]
    fn npy_files_keep_the_shape_of_their_elements() {
        let dir = tempfile::tempdir().unwrap();
        // the shape the file's header gives, as numpy reads it
        let file_shape_of = |path: &std::path::Path| {
            let file = std::fs::File::open(path).unwrap();
            npyz::NpyHeader::from_reader(file).unwrap().shape().to_vec()
        };
        for (ty, size, spec, shape, file_shape) in [
            ("float", 4, "zeros:4x3", vec![4, 3], vec![4, 3]),
            ("int", 4, "seq:2x3x2", vec![2, 3, 2], vec![2, 3, 2]),
            ("float2", 8, "rand:5x2:7", vec![5, 2], vec![5, 2, 2]),
            ("double", 8, "seq:6", vec![6], vec![6]),
        ] {
            let infos = vec![info(0, "x", ArgKind::GlobalBuffer, ty, size)];
            let args = KernelArgs::from_specs("k", &infos, &[format!("x={spec}")]).unwrap();
            assert_eq!(args.buffer("x").unwrap().shape(), shape, "{ty}");
            let path = dir.path().join(format!("{ty}.npy"));
            crate::npy::write_npy(&path, args.buffer("x").unwrap()).unwrap();
            assert_eq!(file_shape_of(&path), file_shape, "{ty}");
            let back = KernelArgs::from_specs("k", &infos, &[format!("x=file:{}", path.display())])
                .unwrap();
            assert_eq!(back.buffer("x").unwrap().shape(), shape, "{ty}");
            assert_eq!(args.buffer("x"), back.buffer("x"), "{ty}");
        }
        for (spec, why) in [
            ("zeros:0x4", "the element count must be at least 1"),
            ("seq:4xx4", "'' is not an element count"),
            ("zeros:99999999999x99999999999", "has too many elements"),
        ] {
            let infos = vec![info(0, "x", ArgKind::GlobalBuffer, "int", 4)];
            let e = KernelArgs::from_specs("k", &infos, &[format!("x={spec}")])
                .unwrap_err()
                .to_string();
            assert!(e.contains(why), "{spec}: {e}");
        }
    }

    #[test]
    fn npy_round_trip() {
        let dir = std::env::temp_dir().join(format!("launcher-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (ty, size, spec) in [
            ("float", 4, "rand:10:3"),
            ("float4", 16, "seq:5"),
            ("uchar", 1, "rand:300"),
            ("long", 8, "seq:9"),
        ] {
            let infos = vec![info(0, "x", ArgKind::GlobalBuffer, ty, size)];
            let args = KernelArgs::from_specs("k", &infos, &[format!("x={spec}")]).unwrap();
            let path = dir.join(format!("{ty}.npy"));
            crate::npy::write_npy(&path, args.buffer("x").unwrap()).unwrap();
            let back = KernelArgs::from_specs("k", &infos, &[format!("x=file:{}", path.display())])
                .unwrap();
            assert_eq!(args.buffer("x"), back.buffer("x"), "{ty}");
        }
        let infos = vec![info(0, "x", ArgKind::GlobalBuffer, "int", 4)];
        let e = KernelArgs::from_specs(
            "k",
            &infos,
            &[format!("x=file:{}", dir.join("float.npy").display())],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.ends_with(
                "float.npy: dtype '<f4' does not match element type 'int' (expected '<i4')"
            ),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
