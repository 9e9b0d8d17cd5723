//! Differential test: for every corpus kernel without atomics or write
//! races (`@order-dependent`), the coarsened C
//! compiled with gcc and run over the whole NDRange gives the same output as the
//! kernel on PoCL.
//!
//! Integer outputs must match bit for bit. PoCL is asked not to contract
//! (`#pragma OPENCL FP_CONTRACT OFF`, gcc `-ffp-contract=off`), so float outputs
//! of kernels using only exactly rounded operations (+ - * / sqrt fabs fmin fmax
//! floor ceil) must match bit for bit too; kernels calling other math builtins
//! (exp, log, pow, sin, ...) whose library implementations differ are compared
//! within [`ULP_BOUND`] units in the last place.

use clpart_tests::cdriver::{run_coarsened, DriverOptions};
use clpart_tests::{corpus, pocl_env};
use host_data::FromSpecs;
use launcher::{ArgValue, KernelArgs, NdRange, Runtime, ScalarKind};

/// Float tolerance for kernels using inexact math builtins.
const ULP_BOUND: u32 = 4;

const INEXACT_MATH: &[&str] = &[
    "exp", "log", "pow", "sin", "cos", "tan", "rsqrt", "native_", "half_", "erf", "cbrt", "atan",
    "hypot",
];

fn ulp_distance(a: f32, b: f32) -> u32 {
    if a.to_bits() == b.to_bits() {
        return 0;
    }
    if a.is_nan() || b.is_nan() || a.signum() != b.signum() {
        return if a == b { 0 } else { u32::MAX };
    }
    a.to_bits().abs_diff(b.to_bits())
}

#[test]
fn coarsened_c_equals_pocl_on_every_corpus_kernel() {
    pocl_env(None);
    let rt = Runtime::new().expect("opencl runtime");
    let mut failures = Vec::new();
    let mut n_checked = 0;
    for k in corpus().into_iter().filter(|k| k.uncoarsenable.is_none()) {
        if k.source.contains("atomic_") || k.source.contains("atom_") || k.order_dependent {
            continue; // the order of atomic updates or racing writes is not defined
        }
        let inexact = INEXACT_MATH.iter().any(|f| k.source.contains(f));
        let file = k.file();
        let program = coarsen::parse_program(
            &file,
            &k.source,
            &coarsen::ParseOptions {
                clang_args: k.build.clone(),
            },
        )
        .unwrap();
        let kern = program.kernel(Some(&k.name)).unwrap();
        let infos = partitioner::args::arg_infos(kern);
        for run in 0..k.runs.len() {
            let specs: Vec<String> = k
                .run_args(run)
                .iter()
                .map(|(n, s)| format!("{n}={s}"))
                .collect();
            let nd = NdRange::new(
                &k.run_sizes(run, "--global")
                    .iter()
                    .map(|&x| x as u64)
                    .collect::<Vec<_>>(),
                &k.run_sizes(run, "--local")
                    .iter()
                    .map(|&x| x as u64)
                    .collect::<Vec<_>>(),
            )
            .unwrap();
            let mut on_pocl = KernelArgs::from_specs(&k.name, &infos, &specs).unwrap();
            let mut on_c = on_pocl.clone();
            let src = format!("#pragma OPENCL FP_CONTRACT OFF\n{}", k.source);
            launcher::run_whole(&rt, &src, &k.name, &k.build, 0, &nd, &mut on_pocl)
                .unwrap_or_else(|e| panic!("{}: {e}", k.name));
            let dir = tempfile::tempdir().unwrap();
            if let Err(e) = run_coarsened(
                &program,
                &k.name,
                &nd,
                &mut on_c,
                dir.path(),
                &DriverOptions::default(),
            ) {
                failures.push(format!("{} run {run}: {e}", k.name));
                continue;
            }
            n_checked += 1;
            for (i, (a, b)) in on_pocl.values().iter().zip(on_c.values()).enumerate() {
                let (ArgValue::Buffer(a), ArgValue::Buffer(b)) = (a, b) else {
                    continue;
                };
                let name = &infos[i].name;
                if a.elem().scalar == Some(ScalarKind::F32) {
                    let (x, y) = (a.to_f32().unwrap(), b.to_f32().unwrap());
                    let bound = if inexact { ULP_BOUND } else { 0 };
                    if let Some(j) = (0..x.len()).find(|&j| ulp_distance(x[j], y[j]) > bound) {
                        failures.push(format!("{} run {run}: array '{name}' element {j}: pocl {} vs coarsened C {} (bound {bound} ulp)", k.name, x[j], y[j]));
                    }
                } else if a.as_bytes() != b.as_bytes() {
                    let j = a
                        .as_bytes()
                        .iter()
                        .zip(b.as_bytes())
                        .position(|(x, y)| x != y)
                        .unwrap();
                    failures.push(format!(
                        "{} run {run}: array '{name}' differs at byte {j}",
                        k.name
                    ));
                }
            }
        }
    }
    assert!(n_checked >= 40, "only {n_checked} runs checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
