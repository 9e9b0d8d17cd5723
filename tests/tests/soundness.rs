//! Soundness of the ranges: for concrete parameters and many slice bounds, every
//! element a slice really touches (recorded by running the coarsened C
//! instrumented) lies inside the slice's evaluated range, reads inside the read
//! range and writes inside the write range; the Ehrhart count is never below
//! the number of distinct elements touched, and equals it for kernels whose
//! accesses the analysis models exactly.

use clpart_tests::cdriver::{run_coarsened, DriverOptions, Traced};
use clpart_tests::{corpus, CorpusKernel};
use host_data::FromSpecs;
use launcher::NdRange;
use ranges_format::{ArrayStatus, KernelRanges, ParamSource};
use std::collections::BTreeSet;

/// Kernels whose every access is modeled exactly: counts must be equal.
const EXACT: &[&str] = &[
    "vadd",
    "matmul",
    "matmul_1000",
    "transpose",
    "strided",
    "vec4_add",
    "gemm",
    "matvec",
];

fn param_values(
    k: &KernelRanges,
    global: &[u64],
    local: &[u64],
    scalars: &[(String, String)],
    lo: u64,
    hi: u64,
) -> Vec<i64> {
    let d = k.split_dim.unwrap_or(0) as usize;
    let at = |v: &[u64], i: u32, dflt: u64| v.get(i as usize).copied().unwrap_or(dflt) as i64;
    k.params
        .iter()
        .map(|p| match p.source {
            ParamSource::GlobalSize(i) => at(global, i, 1),
            ParamSource::LocalSize(i) => at(local, i, 1),
            ParamSource::NumGroups(i) => at(global, i, 1) / at(local, i, 1),
            ParamSource::GlobalOffset(_) => 0,
            ParamSource::ScalarArg { arg_index } => {
                let name = &k.args[arg_index as usize].name;
                scalars
                    .iter()
                    .find(|(n, _)| n == name)
                    .and_then(|(_, v)| v.parse().ok())
                    .expect("integer scalar")
            }
            ParamSource::StructMember { arg_index, .. } => {
                let name = &k.args[arg_index as usize].name;
                let hex = scalars
                    .iter()
                    .find(|(n, _)| n == name)
                    .and_then(|(_, v)| v.strip_prefix("bytes:"))
                    .expect("a struct argument's bytes");
                let bytes: Vec<u8> = (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
                    .collect();
                p.source.member_value(&bytes).expect("the member's value")
            }
            ParamSource::SliceLo => lo as i64,
            ParamSource::SliceHi => hi as i64,
            ParamSource::SliceLoItem => (lo * local[d]) as i64,
            ParamSource::SliceHiItem => (hi * local[d]) as i64,
        })
        .collect()
}

/// Slices to check: halves, thirds, single groups at both ends, and a pseudo-random few.
fn slices(n_groups: u64) -> Vec<(u64, u64)> {
    let mut v = vec![
        (0, n_groups),
        (0, n_groups.div_ceil(2)),
        (n_groups / 2, n_groups),
        (0, 1),
        (n_groups - 1, n_groups),
    ];
    let mut x = 0x9e3779b97f4a7c15u64;
    for _ in 0..6 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let lo = x % n_groups;
        let hi = lo + 1 + (x >> 32) % (n_groups - lo);
        v.push((lo, hi));
    }
    v.retain(|(l, h)| l < h);
    v
}

fn check_kernel(k: &CorpusKernel) -> Result<usize, String> {
    let run = 0;
    let global: Vec<u64> = k
        .run_sizes(run, "--global")
        .iter()
        .map(|&x| x as u64)
        .collect();
    let local: Vec<u64> = k
        .run_sizes(run, "--local")
        .iter()
        .map(|&x| x as u64)
        .collect();
    let mut session = k.session().map_err(|e| e.to_string())?;
    let rf = session
        .ranges_for_launch(&k.name, &k.launch_config(run))
        .map_err(|e| e.to_string())?
        .clone();
    check_ranges(k, &session, &rf.kernels[0], &global, &local)
}

/// [`check_kernel`] for ranges `kr` of `k` (made for its first `@run`
/// line or not) at that line's sizes and arguments.
fn check_ranges(
    k: &CorpusKernel,
    session: &session::Session,
    kr: &KernelRanges,
    global: &[u64],
    local: &[u64],
) -> Result<usize, String> {
    let run = 0;
    let scalars = k.run_args(run);
    if kr.arrays.iter().all(|a| a.status != ArrayStatus::Bounded) {
        // Nothing to check; pointers such kernels copy around (`ptr_array`,
        // `ptr_int_cast`, `ptr_swap`) do not point at a buffer's start, which
        // the tracer needs.
        return Ok(0);
    }
    let program = session.program().expect("made from source");
    let infos = session.arg_infos(&k.name).map_err(|e| e.to_string())?;
    let specs: Vec<String> = scalars.iter().map(|(n, s)| format!("{n}={s}")).collect();
    let mut args =
        launcher::KernelArgs::from_specs(&k.name, &infos, &specs).map_err(|e| e.to_string())?;
    let nd = NdRange::new(global, local).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let trace = run_coarsened(
        program,
        &k.name,
        &nd,
        &mut args,
        dir.path(),
        &DriverOptions { trace: true },
    )?;
    let d = kr.split_dim.unwrap_or(0) as usize;
    let n_groups = global[d] / local[d];
    let names = kr.param_names();
    let mut n_checks = 0;
    for (lo, hi) in slices(n_groups) {
        let vals = param_values(kr, global, local, &scalars, lo, hi);
        let in_slice: Vec<&Traced> = trace
            .iter()
            .filter(|t| (lo..hi).contains(&t.group[d]))
            .collect();
        for a in kr
            .arrays
            .iter()
            .filter(|a| a.status == ArrayStatus::Bounded)
        {
            let touched: Vec<&&Traced> = in_slice
                .iter()
                .filter(|t| t.arg_index == a.arg_index)
                .collect();
            let check = |r: &Option<ranges_format::Range>,
                         what: &str,
                         pick: &dyn Fn(&Traced) -> bool|
             -> Result<(), String> {
                let sel: Vec<i64> = touched
                    .iter()
                    .filter(|t| pick(t))
                    .map(|t| t.index)
                    .collect();
                if sel.is_empty() {
                    return Ok(());
                }
                let Some(r) = r else {
                    return Err(format!(
                        "{} '{}' slice [{lo},{hi}): {what} range missing but touched",
                        k.name, a.name
                    ));
                };
                let (l, u) = r
                    .bind(&names)
                    .unwrap()
                    .eval(&vals)
                    .map_err(|e| e.to_string())?
                    .ok_or_else(|| {
                        format!("{} '{}': {what} undefined at [{lo},{hi})", k.name, a.name)
                    })?;
                let (mn, mx) = (*sel.iter().min().unwrap(), *sel.iter().max().unwrap());
                if mn < l || mx > u {
                    return Err(format!("{} '{}' slice [{lo},{hi}): {what} touches [{mn}, {mx}] outside range [{l}, {u}]", k.name, a.name));
                }
                Ok(())
            };
            check(&a.slice, "footprint", &|_| true)?;
            check(&a.read_slice, "read", &|t| !t.is_write)?;
            check(&a.write_slice, "write", &|t| t.is_write)?;
            if let Some(c) = &a.count_slice {
                let distinct: BTreeSet<i64> = touched.iter().map(|t| t.index).collect();
                let n = ranges_format::eval_count(c, &names, &vals).map_err(|e| e.to_string())?;
                if n < distinct.len() as i64
                    || (EXACT.contains(&k.name.as_str()) && n != distinct.len() as i64)
                {
                    return Err(format!(
                        "{} '{}' slice [{lo},{hi}): count {n}, distinct elements touched {}",
                        k.name,
                        a.name,
                        distinct.len()
                    ));
                }
            }
            n_checks += 1;
        }
    }
    Ok(n_checks)
}

#[test]
fn touched_elements_lie_inside_the_ranges() {
    let mut failures = Vec::new();
    let mut n = 0;
    for k in corpus() {
        match check_kernel(&k) {
            Ok(c) => n += c,
            Err(e) => failures.push(e),
        }
    }
    assert!(n > 300, "only {n} array/slice checks");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Bounds isl could not make exactly within its operation limit are those
/// of a superset (the footprint without its divisibility constraints):
/// `convolution_rows` analyzed without its local size (a halo loop over
/// each work-group's row; its exact bounds ran into the per-array limit,
/// and the kernel did not split) gets them, says so, splits along its rows
/// and holds every element its slices touch.
#[test]
fn looser_bounds_where_exact_ones_are_too_costly_still_hold_the_touched_elements() {
    let k = clpart_tests::slow_corpus()
        .into_iter()
        .find(|k| k.name == "convolution_rows")
        .expect("convolution_rows in the slow corpus");
    let session = k.session().expect("session");
    let kr = session
        .analyze_kernel(&k.name, &partitioner::PartitionOptions::default())
        .expect("analysis");
    assert!(kr.splittable, "{:?}", kr.reason);
    assert_eq!(kr.split_dim, Some(1));
    for a in ["in", "out"] {
        assert!(
            kr.diagnostics
                .iter()
                .any(|d| d.starts_with(&format!("array '{a}': some bounds are looser than exact"))),
            "{:#?}",
            kr.diagnostics
        );
    }
    let sizes =
        |flag: &str| -> Vec<u64> { k.run_sizes(0, flag).iter().map(|&x| x as u64).collect() };
    let n = check_ranges(&k, &session, &kr, &sizes("--global"), &sizes("--local"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(n >= 3 * 4, "only {n} array/slice checks");
}
