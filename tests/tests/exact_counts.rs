//! Exact counts over the corpus. For every corpus kernel, analyzed
//! as its first `@run` launches it (`Session::ranges_for_launch`), the
//! launcher's `bytes_exact` exists when every buffer argument is a bounded
//! array with a per-slice count. Every kernel whose accesses are all affine
//! (every buffer bounded) must have its counts with barvinok, unless
//! counting ran past its time limit (a budget decision the kernel's notes
//! state); the test prints how many have them and which engine gave them.
//! All 53 affine kernels have them since footprints of many pieces are
//! counted by parts (`stencil3d`'s 7-point footprint over nine parameters
//! took 17 s whole, 0.2 s by parts).
//!
//! barvinok comes from `scripts/setup.sh`; when its libraries are absent the
//! counts come from PolyLib and the assertion is skipped, unless
//! `CLPART_REQUIRE_BARVINOK=1` (set by `scripts/test.sh` after a successful
//! setup) makes the absence a failure.

use clpart_tests::corpus;
use host_data::PlanArgs;
use ranges_format::{ArgKind, ArrayStatus};

#[test]
fn bytes_exact_for_every_affine_corpus_kernel() {
    let barvinok = partitioner::ehrhart::barvinok_available();
    if let Err(why) = &barvinok {
        let required = std::env::var("CLPART_REQUIRE_BARVINOK").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "barvinok required (CLPART_REQUIRE_BARVINOK=1): {why}"
        );
    }
    let (mut affine, mut counted, mut counted_affine) = (0, 0, 0);
    let mut missing = Vec::new();
    for k in corpus() {
        let Some(global) = k.run_flag(0, "--global") else {
            continue;
        };
        let _ = global;
        let file = k.file();
        let mut session = session::Session::from_source(&file, &k.source, &k.build)
            .unwrap_or_else(|e| panic!("{}: {e}", k.name));
        let rf = session
            .ranges_for_launch(&k.name, &k.launch_config(0))
            .unwrap_or_else(|e| panic!("{}: {e}", k.name));
        let kr = &rf.kernels[0];
        let buffers: Vec<_> = kr
            .args
            .iter()
            .enumerate()
            .filter(|(_, a)| matches!(a.kind, ArgKind::GlobalBuffer | ArgKind::ConstantBuffer))
            .collect();
        let array = |i: usize| kr.arrays.iter().find(|a| a.arg_index as usize == i);
        let is_affine = buffers
            .iter()
            .all(|(i, _)| array(*i).is_some_and(|a| a.status == ArrayStatus::Bounded));
        let has_exact = buffers
            .iter()
            .all(|(i, _)| array(*i).is_some_and(|a| a.count_slice.is_some()));
        affine += is_affine as usize;
        counted += has_exact as usize;
        counted_affine += (is_affine && has_exact) as usize;
        if is_affine && !has_exact {
            let notes: Vec<&String> = kr
                .diagnostics
                .iter()
                .filter(|d| d.contains("no count of"))
                .collect();
            // Only a count at the launch's values (the fallback of a
            // parametric count out of time) that ran out of its own time
            // is forgiven: a load decision, stated in the notes.
            let over_time = !notes.is_empty()
                && notes
                    .iter()
                    .all(|n| n.contains("the count at the launch's values ran out of its"));
            if over_time {
                eprintln!(
                    "exact counts: {}: counts over the time limit per count: {notes:?}",
                    k.name
                );
            } else {
                missing.push(format!("{}: {notes:?}", k.name));
            }
        }
    }
    eprintln!(
        "exact counts: engine {}; {counted} kernels with bytes_exact; {counted_affine} of {affine} affine kernels",
        if barvinok.is_ok() { "barvinok" } else { "polylib" }
    );
    if barvinok.is_ok() {
        assert!(
            missing.is_empty(),
            "affine kernels without counts:\n{}",
            missing.join("\n")
        );
    }
}

/// The 3-D 7-point stencil's footprint is counted by parts (one basic set of
/// 60-odd constraints after coalescing, which barvinok takes 17 s to count
/// whole): the sum of the parts' counts equals the footprint enumerated
/// point by point, for the whole NDRange and for slices along the split
/// dimension, at global offsets 0 and 1 and sizes that clip the grid or not.
#[test]
fn stencil3d_counts_by_parts_equal_enumeration() {
    if partitioner::ehrhart::barvinok_available().is_err() {
        let required = std::env::var("CLPART_REQUIRE_BARVINOK").is_ok_and(|v| v == "1");
        assert!(!required, "barvinok required (CLPART_REQUIRE_BARVINOK=1)");
        return;
    }
    let k = corpus()
        .into_iter()
        .find(|k| k.name == "stencil3d")
        .expect("stencil3d in the corpus");
    let session =
        session::Session::from_source("kernels/stencils/stencil3d.cl", &k.source, &k.build)
            .unwrap();
    let kr = session
        .analyze_kernel("stencil3d", &Default::default())
        .unwrap();
    assert_eq!(kr.split_dim, Some(2));
    let a = kr.arrays.iter().find(|a| a.name == "in").unwrap();
    let (total, slice) = (
        a.count_total.as_ref().expect("a total count"),
        a.count_slice.as_ref().expect("a slice count"),
    );
    assert!(slice.terms.len() > 1, "counted by parts");
    let names: Vec<&str> = kr.params.iter().map(|p| p.name.as_str()).collect();
    // (nx, ny, nz), global size, global offset, slice [lo, hi) of work-items along z.
    let cases = [
        ([6, 5, 7], [6, 5, 7], [0, 0, 0], (0, 3)),
        ([6, 5, 7], [4, 3, 5], [1, 1, 1], (2, 5)),
        ([5, 6, 4], [8, 8, 8], [0, 0, 0], (1, 8)),
        ([7, 4, 9], [3, 2, 4], [1, 0, 2], (0, 1)),
    ];
    for (n, gs, go, (lo, hi)) in cases {
        let value = |name: &str| -> i64 {
            let d = |s: &str| s[s.len() - 1..].parse::<usize>().unwrap();
            match name {
                "nx" => n[0],
                "ny" => n[1],
                "nz" => n[2],
                "sx_lo" => lo,
                "sx_hi" => hi,
                s if s.starts_with("gs") => gs[d(s)],
                s if s.starts_with("go") => go[d(s)],
                s if s.starts_with("ls") => 1,
                s if s.starts_with("ng") => gs[d(s)],
                other => panic!("unexpected parameter {other}"),
            }
        };
        let values: Vec<i64> = names.iter().map(|p| value(p)).collect();
        // Elements [z][y][x] read by the work-items with z in [zlo, zhi).
        let enumerate = |zlo: i64, zhi: i64| {
            let mut seen = std::collections::BTreeSet::new();
            for z in zlo.max(go[2])..zhi.min(go[2] + gs[2]) {
                for y in go[1]..go[1] + gs[1] {
                    for x in go[0]..go[0] + gs[0] {
                        if x >= 1
                            && x < n[0] - 1
                            && y >= 1
                            && y < n[1] - 1
                            && z >= 1
                            && z < n[2] - 1
                        {
                            for (dz, dy, dx) in [
                                (0, 0, 0),
                                (0, 0, -1),
                                (0, 0, 1),
                                (0, -1, 0),
                                (0, 1, 0),
                                (-1, 0, 0),
                                (1, 0, 0),
                            ] {
                                seen.insert((z + dz, y + dy, x + dx));
                            }
                        }
                    }
                }
            }
            seen.len() as i64
        };
        let at = format!("n={n:?} gs={gs:?} go={go:?} slice=[{lo}, {hi})");
        assert_eq!(
            ranges_format::eval_count(total, &names, &values).unwrap(),
            enumerate(i64::MIN / 4, i64::MAX / 4),
            "total, {at}"
        );
        assert_eq!(
            ranges_format::eval_count(slice, &names, &values).unwrap(),
            enumerate(go[2] + lo, go[2] + hi),
            "slice, {at}"
        );
    }
}

/// Counts at a launch's values (`Counts::AtLaunch`: isl's exact
/// count where a parametric one cannot be had): every parameter but the
/// slice's bounds is fixed at the launch's values and barvinok counts the
/// accesses' footprints in the slice's bounds. For 1-D, 2-D and 3-D
/// kernels (the 3-D 7-point stencils are those whose parametric counts run
/// out of time), a launch split 50/50 and 86/14 reports a `bytes_exact`
/// equal to its traced footprint, the same as the parametric counts' where
/// they exist; the count is marked with its point and refuses other values
/// (an error, never 0); and a launch at a global offset the count was not
/// made for has no `bytes_exact` rather than a wrong one.
#[test]
fn counts_at_the_launch_values_equal_the_traced_footprint() {
    if partitioner::ehrhart::barvinok_available().is_err() {
        let required = std::env::var("CLPART_REQUIRE_BARVINOK").is_ok_and(|v| v == "1");
        assert!(!required, "barvinok required (CLPART_REQUIRE_BARVINOK=1)");
        return;
    }
    let rt = clpart_tests::shared_runtime("pthread basic");
    let kernels = [
        "vadd",
        "matmul",
        "column_walk",
        "conv3x3_interior",
        "stencil7_interior",
        "stencil3d",
    ];
    for name in kernels {
        let k = corpus().into_iter().find(|k| k.name == name).unwrap();
        let at_launch = k.launch_config(0).with_counts(session::Counts::AtLaunch);
        let mut session = k.session().unwrap();
        let parsed = k.session().unwrap();
        let rf = session.ranges_for_launch(name, &at_launch).unwrap().clone();
        let kr = &rf.kernels[0];
        assert!(kr.splittable, "{name}: {:?}", kr.reason);
        for a in &kr.arrays {
            let c = a.count_slice.as_ref().unwrap_or_else(|| {
                panic!("{name}: '{}' has no count: {:?}", a.name, kr.diagnostics)
            });
            assert!(!c.at.is_empty(), "{name}: '{}': a count at a point", a.name);
            assert!(c.at.iter().all(|(p, _)| p != "sx_lo" && p != "sx_hi"));
            assert!(a.count_total.is_none() && a.vertices_slice.is_none());
            // Elsewhere: an error naming the parameter, never a number.
            let names: Vec<&str> = kr.params.iter().map(|p| p.name.as_str()).collect();
            let mut values = vec![0i64; names.len()];
            for (p, v) in &c.at {
                values[names.iter().position(|n| n == p).unwrap()] = *v;
            }
            let moved = names.iter().position(|n| *n == c.at[0].0).unwrap();
            values[moved] += 1;
            let e = ranges_format::eval_count(c, &names, &values).unwrap_err();
            assert!(e.to_string().contains(&c.at[0].0), "{name}: {e}");
        }
        let (plan, _) = session.plan(&rt, name, &at_launch).unwrap();
        let specs: Vec<String> = k
            .run_args(0)
            .iter()
            .map(|(n, s)| format!("{n}={s}"))
            .collect();
        let args = plan.args_from_specs(&specs).unwrap();
        let nd = launcher::NdRange::new(&at_launch.global, &at_launch.local).unwrap();
        let options = launcher::LaunchOptions {
            verify: true,
            ..Default::default()
        };
        for shares in [[(0, 0.5), (1, 0.5)], [(0, 0.86), (1, 0.14)]] {
            let r = launcher::launch(plan, &nd, &mut args.clone(), &shares, &options).unwrap();
            assert_eq!(r.verified, Some(true), "{name}: {:?}", r.mismatch);
            assert!(r.split, "{name}: {:?}", r.reason);
            let slices: Vec<(u64, u64)> = r.devices.iter().map(|d| d.slice).collect();
            let dir = tempfile::tempdir().unwrap();
            let traced = clpart_tests::cdriver::traced_footprint_bytes(
                parsed.program().unwrap(),
                name,
                &nd,
                &args,
                r.split_dim.unwrap(),
                &slices,
                dir.path(),
            )
            .unwrap();
            assert_eq!(
                r.bytes_exact,
                Some(traced),
                "{name} {shares:?}: bytes_exact against the traced footprint ({:?})",
                r.notes
            );
        }
        // The parametric counts, where barvinok has them, say the same.
        if matches!(name, "vadd" | "matmul" | "column_walk") {
            let (plan, _) = session.plan(&rt, name, &k.launch_config(0)).unwrap();
            let r = launcher::launch(
                plan,
                &nd,
                &mut args.clone(),
                &[(0, 0.5), (1, 0.5)],
                &options,
            )
            .unwrap();
            let (at_plan, _) = session.plan(&rt, name, &at_launch).unwrap();
            let at = launcher::launch(
                at_plan,
                &nd,
                &mut args.clone(),
                &[(0, 0.5), (1, 0.5)],
                &options,
            )
            .unwrap();
            assert!(r.bytes_exact.is_some(), "{name}: a parametric count");
            assert_eq!(r.bytes_exact, at.bytes_exact, "{name}");
        }
    }
    // At a global offset the counts were not made for: no bytes_exact, and
    // the report says why.
    let k = corpus().into_iter().find(|k| k.name == "vadd").unwrap();
    let config = k.launch_config(0).with_counts(session::Counts::AtLaunch);
    let mut session = k.session().unwrap();
    let (plan, _) = session.plan(&rt, "vadd", &config).unwrap();
    let (g, l) = (config.global[0], config.local[0]);
    let n = g + l;
    let specs = [
        format!("a=rand:{n}:1"),
        format!("b=rand:{n}:2"),
        format!("c=zeros:{n}"),
    ];
    let mut args = plan.args_from_specs(&specs).unwrap();
    let nd = launcher::NdRange::with_offset(&[g], &[l], &[l]).unwrap();
    let r = launcher::launch(
        plan,
        &nd,
        &mut args,
        &[(0, 0.5), (1, 0.5)],
        &Default::default(),
    );
    let r = r.unwrap();
    assert_eq!(r.bytes_exact, None);
    assert!(
        r.notes.iter().any(|n| n.contains("go0")),
        "a note names the offset: {:?}",
        r.notes
    );
}
