//! Bad input to the launcher: a clear one-line error naming the argument or
//! device, before any device runs.

mod common;

use common::*;
use host_data::PlanArgs;
use launcher::{launch, run_whole, KernelArgs, LaunchError, LaunchOptions, NdRange, Plan};

fn setup_vadd() -> (launcher::Runtime, Plan, NdRange, KernelArgs) {
    let rt = two_devices();
    let plan = Plan::from_kernel(&rt, vadd_ranges(), VADD, &[]).unwrap();
    let nd = NdRange::new(&[1000], &[8]).unwrap();
    let args = plan
        .args_from_specs(&["a=rand:1000", "b=rand:1000", "c=seq:1000", "n=1000"])
        .unwrap();
    (rt, plan, nd, args)
}

fn launch_err(shares: &[(usize, f64)]) -> String {
    let (_rt, mut plan, nd, mut args) = setup_vadd();
    let before = args.clone();
    let e = launch(
        &mut plan,
        &nd,
        &mut args,
        shares,
        &LaunchOptions {
            unchecked: true,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert_eq!(args.buffer("c"), before.buffer("c"), "nothing ran");
    e.to_string()
}

#[test]
fn shares_must_sum_to_one() {
    assert_eq!(
        launch_err(&[(0, 0.5), (1, 0.4)]),
        "invalid shares: '0:0.5,1:0.4': the shares sum to 0.9, not 1"
    );
    assert_eq!(
        launch_err(&[(0, 1.5), (1, -0.5)]),
        "invalid shares: share '1.5' of device 0 is not between 0 and 1"
    );
    assert_eq!(
        launch_err(&[(0, 0.5), (0, 0.5)]),
        "invalid shares: '0:0.5,0:0.5': device 0 is listed twice"
    );
    assert_eq!(
        launch_err(&[]),
        "invalid shares: no shares given (write them as 0:0.86,1:0.14)"
    );
}

#[test]
fn unknown_device_lists_the_valid_ones() {
    assert_eq!(
        launch_err(&[(0, 0.5), (7, 0.5)]),
        "unknown device 7 (valid devices: 0, 1)"
    );
}

#[test]
fn missing_and_unknown_arguments() {
    let rt = two_devices();
    let plan = Plan::from_kernel(&rt, vadd_ranges(), VADD, &[]).unwrap();
    let e = plan
        .args_from_specs(&["a=rand:1000", "b=rand:1000", "c=zeros:1000"])
        .unwrap_err();
    assert!(matches!(e, LaunchError::MissingArg { .. }));
    assert_eq!(
        e.to_string(),
        "missing argument 'n' for kernel 'vadd' (give it as n=SPEC)"
    );
    let e = plan
        .args_from_specs(&["a=rand:1000", "b=rand:1000", "c=zeros:1000", "n=1", "m=2"])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown argument 'm' for kernel 'vadd' (valid arguments: a, b, c, n)"
    );
    let e = plan
        .args_from_specs(&["a=rand:1000", "b=rand:1000", "c=zeros:1000", "n=rand:4"])
        .unwrap_err();
    assert!(
        e.to_string().starts_with(
            "argument 'n' (int): 'rand:4:0' makes a buffer but this is a scalar argument"
        ),
        "{e}"
    );
}

/// Launches `vadd` (a plan without a guard) over a `b` of 900 elements
/// with `options`: the launch must be refused as too small before any
/// device runs, `c` untouched.
fn assert_too_small_before_any_run(options: &LaunchOptions) {
    let rt = two_devices();
    let mut plan = Plan::from_kernel(&rt, vadd_ranges(), VADD, &[]).unwrap();
    assert!(plan.guard_status().is_err(), "this plan has no guard");
    let nd = NdRange::new(&[1000], &[8]).unwrap();
    let mut args = plan
        .args_from_specs(&["a=rand:1000", "b=rand:900", "c=seq:1000", "n=1000"])
        .unwrap();
    let before = args.clone();
    let e = launch(&mut plan, &nd, &mut args, &[(0, 0.5), (1, 0.5)], options).unwrap_err();
    assert_eq!(
        e.to_string(),
        "argument 'b' is too small for this ndrange: the kernel accesses elements 0..=999 but the buffer holds 900"
    );
    assert_eq!(args.buffer("c"), before.buffer("c"));
}

/// With the guard on but unable to check the kernel (this subkernel has no
/// guard flags), nothing would catch an access past a buffer: an analyzed
/// range past one is refused as without the guard, never sent whole.
#[test]
fn buffer_too_small_fails_where_the_guard_cannot_check_the_kernel() {
    assert_too_small_before_any_run(&LaunchOptions::default());
}

#[test]
fn buffer_too_small_fails_before_any_device_runs() {
    assert_too_small_before_any_run(&LaunchOptions {
        unchecked: true,
        ..Default::default()
    });
}

#[test]
fn build_failure_names_the_device_and_the_first_log_line() {
    let rt = two_devices();
    let mut ranges = vadd_ranges();
    ranges.subkernel.as_mut().unwrap().source =
        VADD_SUB.replace("c[i - base_c] =", "c[i - base_c] = = ");
    let mut plan = Plan::from_kernel(&rt, ranges, VADD, &[]).unwrap();
    let nd = NdRange::new(&[1000], &[8]).unwrap();
    let mut args = plan
        .args_from_specs(&["a=rand:1000", "b=rand:1000", "c=seq:1000", "n=1000"])
        .unwrap();
    let before = args.clone();
    let e = launch(
        &mut plan,
        &nd,
        &mut args,
        &[(1, 0.5), (0, 0.5)],
        &LaunchOptions {
            unchecked: true,
            ..Default::default()
        },
    )
    .unwrap_err();
    let LaunchError::Build {
        first_line, log, ..
    } = &e
    else {
        panic!("expected a build error, got {e}");
    };
    let name = &rt.devices()[1].name;
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!(
            "build of kernel 'vadd_sub' failed on device 1 ('{name}'): "
        )),
        "{msg}"
    );
    assert!(first_line.contains("error"), "{first_line}");
    assert!(msg.ends_with(first_line.as_str()));
    assert!(!msg.contains('\n'));
    assert!(log.contains("expected expression"), "{log}");
    assert_eq!(args.buffer("c"), before.buffer("c"));

    // the original kernel is fine: run_whole works; a broken one reports too
    run_whole(&rt, VADD, "vadd", &[], 0, &nd, &mut args).unwrap();
    let e = run_whole(&rt, "__kernel void vadd(", "vadd", &[], 0, &nd, &mut args).unwrap_err();
    assert!(
        e.to_string().starts_with(&format!(
            "build of kernel 'vadd' failed on device 0 ('{}'): ",
            rt.devices()[0].name
        )),
        "{e}"
    );
}

/// Hosts launch 1-D kernels as `work_dim` 2 with global `[n, 1]`;
/// that splits like the 1-D launch, bit for bit what one device gives.
#[test]
fn a_1d_kernel_splits_on_an_ndrange_with_a_trailing_1() {
    let (_rt, mut plan, nd, args) = setup_vadd();
    // (this hand-written range file's subkernel has no guard)
    let options = LaunchOptions {
        verify: true,
        unchecked: true,
        ..Default::default()
    };
    let mut one = args.clone();
    let r1 = launch(&mut plan, &nd, &mut one, &[(0, 0.5), (1, 0.5)], &options).unwrap();
    for (global, local) in [
        (vec![1000, 1], vec![8, 1]),
        (vec![1000, 1, 1], vec![8, 1, 1]),
    ] {
        let nd2 = NdRange::new(&global, &local).unwrap();
        let mut two = args.clone();
        let r2 = launch(&mut plan, &nd2, &mut two, &[(0, 0.5), (1, 0.5)], &options).unwrap();
        assert!(r2.split, "{:?}", r2.reason);
        assert_eq!(r2.verified, Some(true));
        assert_eq!(r2.bytes_total, r1.bytes_total);
        assert_eq!(two.buffer("c"), one.buffer("c"));
    }
}

#[test]
fn ndrange_must_fit_the_kernel() {
    let (_rt, mut plan, _nd, mut args) = setup_vadd();
    let nd2 = NdRange::new(&[1000, 2], &[8, 1]).unwrap();
    let e = launch(
        &mut plan,
        &nd2,
        &mut args,
        &[(0, 1.0)],
        &LaunchOptions {
            unchecked: true,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid ndrange: kernel 'vadd' was analyzed for 1 dimensions, the ndrange has 2"
    );
    // a trailing dimension of one work-item, but at an offset
    let nd3 = NdRange::with_offset(&[1000, 1], &[8, 1], &[0, 5]).unwrap();
    let e = launch(
        &mut plan,
        &nd3,
        &mut args,
        &[(0, 1.0)],
        &LaunchOptions::default(),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("was analyzed for 1 dimensions"),
        "{e}"
    );
}

#[test]
fn corrupt_ranges_are_reported_with_the_kernel() {
    let rt = two_devices();
    let mut ranges = vadd_ranges();
    ranges.arrays[1].slice.as_mut().unwrap().upper = "[lo, hi, l0] -> { [(l0*hi - ] }".into();
    let e = Plan::from_kernel(&rt, ranges, VADD, &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("kernel 'vadd', array 'b': bad expression in slice.upper: "),
        "{e}"
    );

    let mut ranges = vadd_ranges();
    ranges.params.push(param(
        "n",
        ranges_format::ParamSource::ScalarArg { arg_index: 0 },
    ));
    let e = Plan::from_kernel(&rt, ranges, VADD, &[])
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "kernel 'vadd': parameter 'n' refers to argument 'a', which is not an integer scalar"
    );
}
