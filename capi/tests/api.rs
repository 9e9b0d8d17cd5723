//! The C API called as C calls it (through the `extern "C"` functions):
//! bad calls return their status code and a message and never crash; good
//! calls split kernels over two PoCL devices and return the unsplit result.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::ptr::{null, null_mut};
use std::sync::Once;

use clpart::*;

const VADD: &str =
    "__kernel void vadd(__global const int *a, __global const int *b, __global int *c)\n\
{\n    int i = get_global_id(0);\n    c[i] = a[i] + b[i];\n}\n";

const SCALE: &str = "// two kernels, a scalar and a __local buffer\n\
__kernel void scale(__global float *x, float f, int n, __local float *tmp)\n\
{\n    int i = get_global_id(0);\n    tmp[get_local_id(0)] = x[i] * f;\n    barrier(CLK_LOCAL_MEM_FENCE);\n    if (i < n) x[i] = tmp[get_local_id(0)];\n}\n\
__kernel void other(__global int *y) { y[get_global_id(0)] = 1; }\n";

/// Selects two PoCL devices before the first OpenCL call of this process.
fn setup() {
    static ENV: Once = Once::new();
    ENV.call_once(|| {
        // SAFETY: before any OpenCL call; every test calls this first.
        unsafe { std::env::set_var("POCL_DEVICES", "pthread basic") };
    });
}

fn last_error() -> String {
    unsafe { CStr::from_ptr(clpart_last_error()) }
        .to_str()
        .unwrap()
        .to_string()
}

/// Asserts a status code and that the message contains `needle`.
#[track_caller]
fn expect(status: c_int, want: c_int, needle: &str) {
    let msg = last_error();
    assert_eq!(
        status,
        want,
        "got {} ('{msg}'), expected {}",
        name(status),
        name(want)
    );
    assert!(msg.contains(needle), "message '{msg}' lacks '{needle}'");
    if want != CLPART_SUCCESS {
        assert!(
            !msg.is_empty() && !msg.ends_with('.') && !msg.contains('\n'),
            "message '{msg}'"
        );
    }
}

fn name(status: c_int) -> String {
    unsafe { CStr::from_ptr(clpart_status_name(status)) }
        .to_str()
        .unwrap()
        .to_string()
}

fn plan_from(source: &str, kernel: Option<&str>) -> *mut clpart_plan {
    let src = CString::new(source).unwrap();
    let k = kernel.map(|k| CString::new(k).unwrap());
    let mut plan = null_mut();
    let st = unsafe {
        clpart_plan_create_from_source(
            src.as_ptr(),
            k.as_ref().map_or(null(), |k| k.as_ptr()),
            null(),
            &mut plan,
        )
    };
    expect(st, CLPART_SUCCESS, "");
    assert!(!plan.is_null());
    plan
}

fn set_buffer<T>(plan: *mut clpart_plan, index: u32, data: &mut [T]) -> c_int {
    unsafe {
        clpart_plan_set_arg_buffer(
            plan,
            index,
            data.as_mut_ptr().cast(),
            std::mem::size_of_val(data),
        )
    }
}

fn launch(plan: *mut clpart_plan, global: &[usize], local: &[usize], shares: &[f64]) -> c_int {
    let devices: Vec<u32> = (0..shares.len() as u32).collect();
    unsafe {
        clpart_plan_launch(
            plan,
            global.len() as u32,
            null(),
            global.as_ptr(),
            local.as_ptr(),
            shares.len() as u32,
            devices.as_ptr(),
            shares.as_ptr(),
        )
    }
}

fn report(plan: *mut clpart_plan) -> clpart_report {
    let mut r = clpart_report::default();
    expect(
        unsafe { clpart_plan_report(plan, &mut r) },
        CLPART_SUCCESS,
        "",
    );
    r
}

#[test]
fn null_and_dead_handles_are_refused() {
    setup();
    let mut n = 0u32;
    let mut r = clpart_report::default();
    let mut d = clpart_device_report::default();
    let mut text: *const c_char = null();
    let v = 1i32;
    let mut buf = [0i32; 4];
    let size = [4usize];
    unsafe {
        expect(
            clpart_plan_num_args(null(), &mut n),
            CLPART_INVALID_HANDLE,
            "the plan is NULL",
        );
        expect(
            clpart_plan_set_arg_scalar(null_mut(), 0, 4, (&v as *const i32).cast()),
            CLPART_INVALID_HANDLE,
            "NULL",
        );
        expect(
            set_buffer(null_mut(), 0, &mut buf),
            CLPART_INVALID_HANDLE,
            "NULL",
        );
        expect(
            clpart_plan_set_arg_local(null_mut(), 0, 16),
            CLPART_INVALID_HANDLE,
            "NULL",
        );
        expect(
            clpart_plan_set_verify(null_mut(), 1),
            CLPART_INVALID_HANDLE,
            "NULL",
        );
        expect(
            clpart_plan_launch(
                null_mut(),
                1,
                null(),
                size.as_ptr(),
                null(),
                0,
                null(),
                null(),
            ),
            CLPART_INVALID_HANDLE,
            "NULL",
        );
        expect(
            clpart_plan_launch_on(
                null_mut(),
                1,
                null(),
                size.as_ptr(),
                null(),
                0,
                null(),
                null(),
            ),
            CLPART_INVALID_HANDLE,
            "NULL",
        );
        expect(
            clpart_plan_report(null(), &mut r),
            CLPART_INVALID_HANDLE,
            "NULL",
        );
        expect(
            clpart_plan_report_device(null(), 0, &mut d),
            CLPART_INVALID_HANDLE,
            "NULL",
        );
        expect(
            clpart_plan_report_text(null(), &mut text),
            CLPART_INVALID_HANDLE,
            "NULL",
        );
        expect(
            clpart_plan_release(null_mut()),
            CLPART_INVALID_HANDLE,
            "NULL",
        );

        // a pointer that was never a plan is not dereferenced
        let bogus = 0x1000usize as *mut clpart_plan;
        expect(
            clpart_plan_num_args(bogus, &mut n),
            CLPART_INVALID_HANDLE,
            "not a live plan",
        );
        expect(
            clpart_plan_release(bogus),
            CLPART_INVALID_HANDLE,
            "not a live plan",
        );

        // released twice, used after release
        let plan = plan_from(VADD, None);
        expect(clpart_plan_release(plan), CLPART_SUCCESS, "");
        assert_eq!(last_error(), "", "success clears the message");
        expect(
            clpart_plan_release(plan),
            CLPART_INVALID_HANDLE,
            "not a live plan",
        );
        expect(
            set_buffer(plan, 0, &mut buf),
            CLPART_INVALID_HANDLE,
            "not a live plan",
        );
    }
}

#[test]
fn creation_errors() {
    setup();
    let mut plan = std::ptr::dangling_mut::<clpart_plan>();
    let src = CString::new(VADD).unwrap();
    unsafe {
        expect(
            clpart_plan_create_from_source(null(), null(), null(), &mut plan),
            CLPART_INVALID_ARGUMENT,
            "source is NULL",
        );
        assert!(plan.is_null(), "out_plan is set to NULL on failure");
        expect(
            clpart_plan_create_from_source(src.as_ptr(), null(), null(), null_mut()),
            CLPART_INVALID_ARGUMENT,
            "out_plan is NULL",
        );

        let bad = CString::new("__kernel void k(__global int *a) { a[0] = ; }").unwrap();
        expect(
            clpart_plan_create_from_source(bad.as_ptr(), null(), null(), &mut plan),
            CLPART_ANALYSIS_FAILED,
            "kernel.cl:1:",
        );
        assert!(plan.is_null());

        let missing = CString::new("nope").unwrap();
        expect(
            clpart_plan_create_from_source(src.as_ptr(), missing.as_ptr(), null(), &mut plan),
            CLPART_ANALYSIS_FAILED,
            "no kernel named 'nope' (kernels: vadd)",
        );

        let path = CString::new("/nonexistent/k.ranges.ron").unwrap();
        expect(
            clpart_plan_create_from_range_file(path.as_ptr(), null(), &mut plan),
            CLPART_INVALID_RANGE_FILE,
            "/nonexistent/k.ranges.ron",
        );
        expect(
            clpart_plan_create_from_range_file(null(), null(), &mut plan),
            CLPART_INVALID_ARGUMENT,
            "path is NULL",
        );

        let not_utf8 = [0xffu8, 0xfe, 0];
        expect(
            clpart_plan_create_from_source(not_utf8.as_ptr().cast(), null(), null(), &mut plan),
            CLPART_INVALID_ARGUMENT,
            "not valid utf-8",
        );
    }
}

#[test]
fn argument_errors() {
    setup();
    let plan = plan_from(SCALE, Some("scale"));
    let mut n = 0u32;
    let mut x = vec![1.0f32; 64];
    let f = 2.0f32;
    let wide = 2.0f64;
    unsafe {
        expect(clpart_plan_num_args(plan, &mut n), CLPART_SUCCESS, "");
        assert_eq!(n, 4);
        expect(
            clpart_plan_num_args(plan, null_mut()),
            CLPART_INVALID_ARGUMENT,
            "out_count is NULL",
        );

        expect(set_buffer(plan, 7, &mut x), CLPART_INVALID_ARG_INDEX, "argument index 7 is out of range: kernel 'scale' has 4 arguments (0 'x', 1 'f', 2 'n', 3 'tmp')");
        expect(
            clpart_plan_set_arg_scalar(plan, 4, 4, (&f as *const f32).cast()),
            CLPART_INVALID_ARG_INDEX,
            "argument index 4",
        );
        expect(
            clpart_plan_set_arg_local(plan, 99, 4),
            CLPART_INVALID_ARG_INDEX,
            "argument index 99",
        );

        // wrong kind: the message names the right setter
        expect(
            clpart_plan_set_arg_scalar(plan, 0, 4, (&f as *const f32).cast()),
            CLPART_INVALID_ARG_KIND,
            "use clpart_plan_set_arg_buffer",
        );
        expect(
            set_buffer(plan, 1, &mut x),
            CLPART_INVALID_ARG_KIND,
            "argument 1 ('f', float) is not set with this function; use clpart_plan_set_arg_scalar",
        );
        expect(
            clpart_plan_set_arg_local(plan, 0, 64),
            CLPART_INVALID_ARG_KIND,
            "use clpart_plan_set_arg_buffer",
        );
        expect(
            set_buffer(plan, 3, &mut x),
            CLPART_INVALID_ARG_KIND,
            "use clpart_plan_set_arg_local",
        );

        // sizes
        expect(
            clpart_plan_set_arg_scalar(plan, 1, 8, (&wide as *const f64).cast()),
            CLPART_SIZE_MISMATCH,
            "the value has 8 bytes, the argument 4",
        );
        expect(
            clpart_plan_set_arg_scalar(plan, 1, 4, null()),
            CLPART_INVALID_ARGUMENT,
            "arg_value is NULL",
        );
        expect(
            clpart_plan_set_arg_buffer(plan, 0, x.as_mut_ptr().cast(), 6),
            CLPART_SIZE_MISMATCH,
            "6 bytes is not a whole number of 4-byte elements",
        );
        expect(
            clpart_plan_set_arg_buffer(plan, 0, x.as_mut_ptr().cast(), 0),
            CLPART_SIZE_MISMATCH,
            "0 bytes",
        );
        expect(
            clpart_plan_set_arg_buffer(plan, 0, null_mut(), 16),
            CLPART_INVALID_ARGUMENT,
            "host_ptr is NULL",
        );
        expect(
            clpart_plan_set_arg_local(plan, 3, 0),
            CLPART_SIZE_MISMATCH,
            "0 bytes",
        );

        // launch before every argument is set
        expect(set_buffer(plan, 0, &mut x), CLPART_SUCCESS, "");
        expect(
            clpart_plan_set_arg_scalar(plan, 1, 4, (&f as *const f32).cast()),
            CLPART_SUCCESS,
            "",
        );
        expect(launch(plan, &[64], &[16], &[0.5, 0.5]), CLPART_ARGS_NOT_SET, "argument 2 ('n', int) of kernel 'scale' is not set (set it with clpart_plan_set_arg_scalar)");
        let mut r = clpart_report::default();
        expect(
            clpart_plan_report(plan, &mut r),
            CLPART_NO_REPORT,
            "not been launched",
        );
        assert!(
            x.iter().all(|&v| v == 1.0),
            "a refused launch leaves the arrays alone"
        );

        let n_val = 60i32;
        expect(
            clpart_plan_set_arg_scalar(plan, 2, 4, (&n_val as *const i32).cast()),
            CLPART_SUCCESS,
            "",
        );
        expect(
            launch(plan, &[64], &[16], &[0.5, 0.5]),
            CLPART_ARGS_NOT_SET,
            "argument 3 ('tmp', __local float*)",
        );
        expect(
            clpart_plan_set_arg_local(plan, 3, 16 * 4),
            CLPART_SUCCESS,
            "",
        );

        // now it runs: scalar, __local and the guard all work
        expect(launch(plan, &[64], &[16], &[0.5, 0.5]), CLPART_SUCCESS, "");
        for (i, &v) in x.iter().enumerate() {
            assert_eq!(v, if i < 60 { 2.0 } else { 1.0 }, "x[{i}]");
        }
        expect(clpart_plan_release(plan), CLPART_SUCCESS, "");
    }
}

#[test]
fn launch_errors() {
    setup();
    let plan = plan_from(VADD, None);
    let (mut a, mut b, mut c) = (vec![1i32; 256], vec![2i32; 256], vec![0i32; 256]);
    assert_eq!(set_buffer(plan, 0, &mut a), CLPART_SUCCESS);
    assert_eq!(set_buffer(plan, 1, &mut b), CLPART_SUCCESS);
    assert_eq!(set_buffer(plan, 2, &mut c), CLPART_SUCCESS);
    let g = [256usize, 1, 1, 1];
    unsafe {
        let dims =
            |w: u32| clpart_plan_launch(plan, w, null(), g.as_ptr(), null(), 0, null(), null());
        expect(
            dims(0),
            CLPART_INVALID_NDRANGE,
            "work_dim 0 is not 1, 2 or 3",
        );
        expect(dims(4), CLPART_INVALID_NDRANGE, "work_dim 4");
        expect(
            clpart_plan_launch(plan, 1, null(), null(), null(), 0, null(), null()),
            CLPART_INVALID_NDRANGE,
            "global_size is NULL",
        );
        expect(
            launch(plan, &[256], &[48], &[1.0]),
            CLPART_INVALID_NDRANGE,
            "global size 256 is not a multiple of local size 48",
        );
        expect(
            launch(plan, &[256], &[0], &[1.0]),
            CLPART_INVALID_NDRANGE,
            "at least 1",
        );

        // shares and devices
        expect(
            launch(plan, &[256], &[64], &[0.5, -0.5]),
            CLPART_INVALID_ARGUMENT,
            "shares[1] is '-0.5'",
        );
        expect(
            launch(plan, &[256], &[64], &[0.0, 0.0]),
            CLPART_INVALID_ARGUMENT,
            "sum to 0",
        );
        expect(
            launch(plan, &[256], &[64], &[f64::NAN]),
            CLPART_INVALID_ARGUMENT,
            "shares[0] is 'NaN'",
        );
        let nine = [0u32, 9];
        let sh = [0.5, 0.5];
        expect(
            clpart_plan_launch(
                plan,
                1,
                null(),
                g.as_ptr(),
                null(),
                2,
                nine.as_ptr(),
                sh.as_ptr(),
            ),
            CLPART_DEVICE_NOT_FOUND,
            "unknown device 9 (valid devices: 0, 1)",
        );
        let twice = [1u32, 1];
        expect(
            clpart_plan_launch(
                plan,
                1,
                null(),
                g.as_ptr(),
                null(),
                2,
                twice.as_ptr(),
                sh.as_ptr(),
            ),
            CLPART_INVALID_ARGUMENT,
            "listed twice",
        );
        expect(
            clpart_plan_launch(plan, 1, null(), g.as_ptr(), null(), 0, null(), sh.as_ptr()),
            CLPART_INVALID_ARGUMENT,
            "n_devices is 0",
        );
        let foreign: [cl_device_id; 1] = [0x1234 as *mut c_void];
        expect(
            clpart_plan_launch_on(
                plan,
                1,
                null(),
                g.as_ptr(),
                null(),
                1,
                foreign.as_ptr(),
                null(),
            ),
            CLPART_DEVICE_NOT_FOUND,
            "is none of clpart's devices",
        );
        expect(
            clpart_plan_launch_on(plan, 1, null(), g.as_ptr(), null(), 1, null(), null()),
            CLPART_INVALID_ARGUMENT,
            "devices is NULL",
        );

        // the NDRange reads past the buffers: with the guard on, the arrays go
        // whole (an analyzed range past a buffer may be an over-approximation)
        // and the guard catches the first access past one
        expect(launch(plan, &[512], &[64], &[0.5, 0.5]), CLPART_SIZE_MISMATCH, "kernel 'vadd' accesses array 'a' outside its 256 elements (caught by the run-time guard; nothing was written back)");
        assert!(
            c.iter().all(|&v| v == 0),
            "a failed launch leaves the arrays alone"
        );

        // the output aliases an input
        assert_eq!(set_buffer(plan, 2, &mut a), CLPART_SUCCESS);
        expect(
            launch(plan, &[256], &[64], &[0.5, 0.5]),
            CLPART_INVALID_ARGUMENT,
            "share host memory",
        );
        assert_eq!(set_buffer(plan, 2, &mut c), CLPART_SUCCESS);

        // report entries
        expect(launch(plan, &[256], &[64], &[0.5, 0.5]), CLPART_SUCCESS, "");
        assert!(c.iter().all(|&v| v == 3));
        let mut d = clpart_device_report::default();
        expect(
            clpart_plan_report_device(plan, 2, &mut d),
            CLPART_INVALID_ARGUMENT,
            "device entry 2 is out of range: the last launch used 2 devices",
        );
        expect(
            clpart_plan_report_device(plan, 0, null_mut()),
            CLPART_INVALID_ARGUMENT,
            "out_report is NULL",
        );
        expect(clpart_plan_release(plan), CLPART_SUCCESS, "");
    }
}

#[test]
fn devices_are_listed_and_named() {
    setup();
    let mut n = 0u32;
    unsafe {
        expect(clpart_device_count(&mut n), CLPART_SUCCESS, "");
        assert_eq!(n, 2, "POCL_DEVICES='pthread basic' gives two devices");
        expect(
            clpart_device_count(null_mut()),
            CLPART_INVALID_ARGUMENT,
            "out_count is NULL",
        );
        let mut size = 0usize;
        expect(
            clpart_device_name(1, null_mut(), 0, &mut size),
            CLPART_SUCCESS,
            "",
        );
        assert!(size > 1);
        let mut buf = vec![0u8; size];
        expect(
            clpart_device_name(1, buf.as_mut_ptr().cast(), size, null_mut()),
            CLPART_SUCCESS,
            "",
        );
        let name = CStr::from_bytes_with_nul(&buf).unwrap().to_str().unwrap();
        assert!(
            launcher::devices().unwrap()[1].name == name,
            "device 1 is '{name}'"
        );
        expect(
            clpart_device_name(1, buf.as_mut_ptr().cast(), 2, null_mut()),
            CLPART_SIZE_MISMATCH,
            "too small",
        );
        expect(
            clpart_device_name(5, buf.as_mut_ptr().cast(), size, null_mut()),
            CLPART_DEVICE_NOT_FOUND,
            "unknown device 5",
        );
        expect(
            clpart_device_name(0, null_mut(), 0, null_mut()),
            CLPART_INVALID_ARGUMENT,
            "both NULL",
        );
        let mut idx = 0u32;
        expect(
            clpart_device_index(null_mut(), &mut idx),
            CLPART_DEVICE_NOT_FOUND,
            "NULL",
        );
        expect(
            clpart_device_index(0x99 as cl_device_id, null_mut()),
            CLPART_INVALID_ARGUMENT,
            "out_index is NULL",
        );
        assert_eq!(name_of(clpart_status_name(12345)), "CLPART_UNKNOWN_STATUS");
        assert_eq!(
            name_of(clpart_status_name(CLPART_SIZE_MISMATCH)),
            "CLPART_SIZE_MISMATCH"
        );
    }
}

fn name_of(p: *const c_char) -> String {
    unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_string()
}

fn matmul_ref(a: &[f32], b: &[f32], w: usize, h: usize) -> Vec<f32> {
    let mut c = vec![0f32; w * h];
    for y in 0..h {
        for x in 0..w {
            let mut e = 0f32;
            for i in 0..w {
                e += a[y * w + i] * b[i * w + x];
            }
            c[y * w + x] = e;
        }
    }
    c
}

fn close(got: &[f32], want: &[f32]) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-4 * w.abs().max(1.0),
            "element {i}: {g} vs {w}"
        );
    }
}

const MATMUL: &str = include_str!("../../kernels/linear_algebra/matmul.cl");

#[test]
fn matmul_splits_caches_its_analysis_and_verifies() {
    setup();
    let plan = plan_from(MATMUL, Some("matmul"));
    let run = |w: usize, h: usize, shares: &[f64], verify: bool| {
        let a: Vec<f32> = (0..w * h).map(|i| (i % 17) as f32 * 0.25).collect();
        let b: Vec<f32> = (0..w * w).map(|i| (i % 13) as f32 * 0.5).collect();
        let (mut a2, mut b2, mut c) = (a.clone(), b.clone(), vec![0f32; w * h]);
        let width = w as i32;
        unsafe {
            assert_eq!(set_buffer(plan, 0, &mut c), CLPART_SUCCESS);
            assert_eq!(set_buffer(plan, 1, &mut a2), CLPART_SUCCESS);
            assert_eq!(set_buffer(plan, 2, &mut b2), CLPART_SUCCESS);
            expect(
                clpart_plan_set_arg_scalar(plan, 3, 4, (&width as *const i32).cast()),
                CLPART_SUCCESS,
                "",
            );
            expect(
                clpart_plan_set_verify(plan, verify as c_int),
                CLPART_SUCCESS,
                "",
            );
        }
        expect(launch(plan, &[w, h], &[16, 8], shares), CLPART_SUCCESS, "");
        close(&c, &matmul_ref(&a, &b, w, h));
        assert_eq!((a2, b2), (a, b), "inputs are not written");
        report(plan)
    };
    let r1 = run(64, 48, &[0.86, 0.14], false);
    assert_eq!(
        (r1.split, r1.n_devices, r1.analyzed, r1.verified),
        (1, 2, 1, -1)
    );
    assert!(r1.bytes_total < r1.bytes_whole_buffers, "{r1:?}");
    let r2 = run(64, 48, &[30.0, 70.0], true);
    assert_eq!(
        (r2.analyzed, r2.verified, r2.analysis_ms),
        (0, 1, 0.0),
        "same configuration: cached"
    );
    let r3 = run(32, 16, &[1.0, 1.0], true);
    assert_eq!(
        (r3.split, r3.analyzed, r3.verified),
        (1, 1, 1),
        "a new width is analyzed"
    );

    let mut sum = 0;
    for i in 0..r3.n_devices {
        let mut d = clpart_device_report::default();
        expect(
            unsafe { clpart_plan_report_device(plan, i, &mut d) },
            CLPART_SUCCESS,
            "",
        );
        assert_eq!(d.device_index, i);
        assert!(d.slice_end > d.slice_begin && d.bytes_to_device > 0);
        sum += d.bytes_to_device + d.bytes_from_device;
    }
    assert_eq!(sum, r3.bytes_total);
    let mut text: *const c_char = null();
    expect(
        unsafe { clpart_plan_report_text(plan, &mut text) },
        CLPART_SUCCESS,
        "",
    );
    let text = name_of(text);
    assert!(
        text.starts_with("kernel 'matmul', global 32x16 local 16x8, split along dimension"),
        "{text}"
    );
    assert!(text.contains("verified"), "{text}");
    expect(unsafe { clpart_plan_release(plan) }, CLPART_SUCCESS, "");
}

#[test]
fn range_file_plans_and_app_devices() {
    setup();
    // a range file as `clpart analyze -o` writes it
    let file = session::Session::from_source("vadd.cl", VADD, &[])
        .and_then(|s| s.analyze(None, &Default::default()))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vadd.ranges.ron");
    file.write_atomic(&path).unwrap();
    let cpath = CString::new(path.to_str().unwrap()).unwrap();
    let kernel = CString::new("vadd").unwrap();
    let wrong = CString::new("vsub").unwrap();
    let mut plan = null_mut();
    unsafe {
        expect(
            clpart_plan_create_from_range_file(cpath.as_ptr(), wrong.as_ptr(), &mut plan),
            CLPART_INVALID_RANGE_FILE,
            "no such kernel in the range file (valid kernels: vadd)",
        );
        expect(
            clpart_plan_create_from_range_file(cpath.as_ptr(), kernel.as_ptr(), &mut plan),
            CLPART_SUCCESS,
            "",
        );
    }
    let n = 1000usize;
    let a: Vec<i32> = (0..n as i32).collect();
    let b: Vec<i32> = (0..n as i32).map(|i| 3 * i - 7).collect();
    let (mut a2, mut b2, mut c) = (a.clone(), b.clone(), vec![0i32; n]);
    assert_eq!(set_buffer(plan, 0, &mut a2), CLPART_SUCCESS);
    assert_eq!(set_buffer(plan, 1, &mut b2), CLPART_SUCCESS);
    assert_eq!(set_buffer(plan, 2, &mut c), CLPART_SUCCESS);

    // the application's own cl_device_ids, in its order (device 1 first)
    let ids = app_device_ids();
    let devices = [ids[1], ids[0]];
    let shares = [0.25, 0.75];
    let global = [n];
    let local = [8usize];
    unsafe {
        let mut idx = 9u32;
        expect(clpart_device_index(ids[1], &mut idx), CLPART_SUCCESS, "");
        assert_eq!(idx, 1);
        expect(
            clpart_plan_launch_on(
                plan,
                1,
                null(),
                global.as_ptr(),
                local.as_ptr(),
                2,
                devices.as_ptr(),
                shares.as_ptr(),
            ),
            CLPART_SUCCESS,
            "",
        );
    }
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i], "c[{i}]");
    }
    let r = report(plan);
    assert_eq!((r.split, r.analyzed, r.n_devices), (1, 0, 2));
    let mut d = clpart_device_report::default();
    expect(
        unsafe { clpart_plan_report_device(plan, 0, &mut d) },
        CLPART_SUCCESS,
        "",
    );
    assert_eq!(
        (d.device_index, d.slice_begin),
        (1, 0),
        "the first entry is the first device given"
    );
    assert_eq!(
        d.work_groups, 31,
        "a quarter of 125 work-groups, rounded by the largest remainder"
    );

    // NULL local size: clpart picks 50 (the largest divisor of 1000 up to 64)
    c.iter_mut().for_each(|v| *v = 0);
    unsafe {
        expect(
            clpart_plan_launch(plan, 1, null(), global.as_ptr(), null(), 0, null(), null()),
            CLPART_SUCCESS,
            "",
        );
    }
    assert!((0..n).all(|i| c[i] == a[i] + b[i]));
    let mut text: *const c_char = null();
    expect(
        unsafe { clpart_plan_report_text(plan, &mut text) },
        CLPART_SUCCESS,
        "",
    );
    assert!(
        name_of(text).contains("global 1000 local 50"),
        "{}",
        name_of(text)
    );
    expect(unsafe { clpart_plan_release(plan) }, CLPART_SUCCESS, "");
}

/// The device handles an application gets from `clGetDeviceIDs`, over
/// every platform (the order clpart indexes them in).
fn app_device_ids() -> Vec<cl_device_id> {
    raw_ids(&launcher::Runtime::new().unwrap())
}

fn raw_ids(rt: &launcher::Runtime) -> Vec<cl_device_id> {
    // the ICD loader's entry points, as a C application calls them
    #[link(name = "OpenCL")]
    extern "C" {
        fn clGetPlatformIDs(n: u32, platforms: *mut *mut c_void, n_out: *mut u32) -> i32;
        fn clGetDeviceIDs(
            p: *mut c_void,
            ty: u64,
            n: u32,
            devices: *mut cl_device_id,
            n_out: *mut u32,
        ) -> i32;
    }
    let mut n_platforms = 0u32;
    let mut out = Vec::new();
    unsafe {
        assert_eq!(clGetPlatformIDs(0, null_mut(), &mut n_platforms), 0);
        let mut platforms = vec![null_mut(); n_platforms as usize];
        assert_eq!(
            clGetPlatformIDs(n_platforms, platforms.as_mut_ptr(), null_mut()),
            0
        );
        for p in platforms {
            let mut n = 0u32;
            if clGetDeviceIDs(p, u64::from(u32::MAX), 0, null_mut(), &mut n) != 0 {
                continue;
            }
            let mut ids = vec![null_mut(); n as usize];
            assert_eq!(
                clGetDeviceIDs(p, u64::from(u32::MAX), n, ids.as_mut_ptr(), null_mut()),
                0
            );
            out.extend(ids);
        }
    }
    assert_eq!(out.len(), rt.devices().len());
    out
}

#[test]
fn plans_run_concurrently_on_different_threads() {
    setup();
    let threads: Vec<_> = (0..3)
        .map(|t| {
            std::thread::spawn(move || {
                let plan = plan_from(VADD, None);
                let n = 512 + 64 * t;
                let a: Vec<i32> = (0..n as i32).map(|i| i * (t as i32 + 1)).collect();
                let (mut a2, mut b, mut c) = (a.clone(), vec![5i32; n], vec![0i32; n]);
                assert_eq!(set_buffer(plan, 0, &mut a2), CLPART_SUCCESS);
                assert_eq!(set_buffer(plan, 1, &mut b), CLPART_SUCCESS);
                assert_eq!(set_buffer(plan, 2, &mut c), CLPART_SUCCESS);
                for _ in 0..2 {
                    c.iter_mut().for_each(|v| *v = 0);
                    expect(launch(plan, &[n], &[64], &[0.6, 0.4]), CLPART_SUCCESS, "");
                    assert!((0..n).all(|i| c[i] == a[i] + 5), "thread {t}");
                }
                expect(unsafe { clpart_plan_release(plan) }, CLPART_SUCCESS, "");
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

/// An atomic whose returned value is used does not merge: the kernel
/// runs whole.
#[test]
fn an_unsplittable_kernel_runs_whole_and_says_why() {
    setup();
    let src = "__kernel void total(__global const int *a, __global int *sum)\n\
               { int old = atomic_add(sum, a[get_global_id(0)]); if (old == -1) sum[0] = 0; }\n";
    let plan = plan_from(src, None);
    let mut a: Vec<i32> = (1..=128).collect();
    let mut sum = [0i32; 1];
    assert_eq!(set_buffer(plan, 0, &mut a), CLPART_SUCCESS);
    assert_eq!(set_buffer(plan, 1, &mut sum), CLPART_SUCCESS);
    expect(launch(plan, &[128], &[16], &[0.5, 0.5]), CLPART_SUCCESS, "");
    assert_eq!(sum[0], 128 * 129 / 2);
    let r = report(plan);
    assert_eq!((r.split, r.n_devices), (0, 1));
    let mut text: *const c_char = null();
    expect(
        unsafe { clpart_plan_report_text(plan, &mut text) },
        CLPART_SUCCESS,
        "",
    );
    assert!(name_of(text).contains("ran whole:"), "{}", name_of(text));
    expect(unsafe { clpart_plan_release(plan) }, CLPART_SUCCESS, "");
}

/// An atomic whose returned value is unused merges as a reduction: the
/// kernel splits, each device adds into its own copy of the sum, and the
/// copies merge as the original plus each device's change.
#[test]
fn an_unused_atomic_result_splits_as_a_sum() {
    setup();
    let src = "__kernel void total(__global const int *a, __global int *sum)\n\
               { atomic_add(sum, a[get_global_id(0)]); }\n";
    let plan = plan_from(src, None);
    let mut a: Vec<i32> = (1..=128).collect();
    let mut sum = [7i32; 1];
    assert_eq!(set_buffer(plan, 0, &mut a), CLPART_SUCCESS);
    assert_eq!(set_buffer(plan, 1, &mut sum), CLPART_SUCCESS);
    expect(launch(plan, &[128], &[16], &[0.5, 0.5]), CLPART_SUCCESS, "");
    assert_eq!(sum[0], 7 + 128 * 129 / 2);
    let r = report(plan);
    assert_eq!((r.split, r.n_devices), (1, 2));
    expect(unsafe { clpart_plan_release(plan) }, CLPART_SUCCESS, "");
}

/// A first automatic launch over host arrays, on devices of
/// unknown speed, runs in two rounds (a probe of the first work-groups at
/// even shares, the rest at the measured ones) as `clpart run --split auto`
/// does; later launches are single launches at the balancer's shares. Every
/// result is the unsplit one (verified).
#[test]
fn a_first_automatic_launch_runs_in_two_rounds() {
    setup();
    let plan = plan_from(VADD, None);
    expect(
        unsafe { clpart_plan_set_auto_split(plan, 1) },
        CLPART_SUCCESS,
        "",
    );
    expect(
        unsafe { clpart_plan_set_verify(plan, 1) },
        CLPART_SUCCESS,
        "",
    );
    let n = 8192usize;
    let a: Vec<i32> = (0..n as i32).collect();
    let b: Vec<i32> = (0..n as i32).map(|i| 3 * i - 7).collect();
    for launch_no in 0..2 {
        let (mut a2, mut b2, mut c) = (a.clone(), b.clone(), vec![0i32; n]);
        assert_eq!(set_buffer(plan, 0, &mut a2), CLPART_SUCCESS);
        assert_eq!(set_buffer(plan, 1, &mut b2), CLPART_SUCCESS);
        assert_eq!(set_buffer(plan, 2, &mut c), CLPART_SUCCESS);
        expect(launch(plan, &[n], &[64], &[0.5, 0.5]), CLPART_SUCCESS, "");
        let want: Vec<i32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        assert_eq!(c, want, "launch {launch_no}");
        let r = report(plan);
        assert_eq!((r.split, r.verified), (1, 1), "launch {launch_no}: {r:?}");
        let mut text = null();
        expect(
            unsafe { clpart_plan_report_text(plan, &mut text) },
            CLPART_SUCCESS,
            "",
        );
        let text = name_of(text);
        assert_eq!(
            text.contains("in two rounds"),
            launch_no == 0,
            "launch {launch_no}: {text}"
        );
    }
    expect(unsafe { clpart_plan_release(plan) }, CLPART_SUCCESS, "");
}

/// Automatic shares. The launch's shares only pick the devices
/// (here 99% / 1% asked, ignored); both devices get work, every launch is
/// correct and verified, and turning it off goes back to the given shares.
#[test]
fn automatic_shares_ignore_the_given_values_and_verify() {
    setup();
    let plan = plan_from(MATMUL, Some("matmul"));
    let (w, h) = (64usize, 48usize);
    let a: Vec<f32> = (0..w * h).map(|i| (i % 17) as f32 * 0.25).collect();
    let b: Vec<f32> = (0..w * w).map(|i| (i % 13) as f32 * 0.5).collect();
    let width = w as i32;
    expect(
        unsafe { clpart_plan_set_auto_split(plan, 1) },
        CLPART_SUCCESS,
        "",
    );
    expect(
        unsafe { clpart_plan_set_verify(plan, 1) },
        CLPART_SUCCESS,
        "",
    );
    let groups = |plan: *mut clpart_plan| -> Vec<u64> {
        let r = report(plan);
        (0..r.n_devices)
            .map(|i| {
                let mut d = clpart_device_report::default();
                expect(
                    unsafe { clpart_plan_report_device(plan, i, &mut d) },
                    CLPART_SUCCESS,
                    "",
                );
                d.slice_end - d.slice_begin
            })
            .collect()
    };
    for round in 0..3 {
        let (mut a2, mut b2, mut c) = (a.clone(), b.clone(), vec![0f32; w * h]);
        unsafe {
            assert_eq!(set_buffer(plan, 0, &mut c), CLPART_SUCCESS);
            assert_eq!(set_buffer(plan, 1, &mut a2), CLPART_SUCCESS);
            assert_eq!(set_buffer(plan, 2, &mut b2), CLPART_SUCCESS);
            expect(
                clpart_plan_set_arg_scalar(plan, 3, 4, (&width as *const i32).cast()),
                CLPART_SUCCESS,
                "",
            );
        }
        expect(
            launch(plan, &[w, h], &[16, 8], &[0.99, 0.01]),
            CLPART_SUCCESS,
            "",
        );
        close(&c, &matmul_ref(&a, &b, w, h));
        let r = report(plan);
        assert_eq!((r.split, r.verified), (1, 1), "round {round}: {r:?}");
        let g = groups(plan);
        if round == 0 {
            assert_eq!(g[0], g[1], "the first automatic launch is even: {g:?}");
        }
        assert!(
            g.iter().all(|&n| n > 0),
            "round {round}: every device works: {g:?}"
        );
    }
    // off again: the given shares hold
    expect(
        unsafe { clpart_plan_set_auto_split(plan, 0) },
        CLPART_SUCCESS,
        "",
    );
    let (mut a2, mut b2, mut c) = (a.clone(), b.clone(), vec![0f32; w * h]);
    unsafe {
        assert_eq!(set_buffer(plan, 0, &mut c), CLPART_SUCCESS);
        assert_eq!(set_buffer(plan, 1, &mut a2), CLPART_SUCCESS);
        assert_eq!(set_buffer(plan, 2, &mut b2), CLPART_SUCCESS);
        expect(
            clpart_plan_set_arg_scalar(plan, 3, 4, (&width as *const i32).cast()),
            CLPART_SUCCESS,
            "",
        );
    }
    expect(
        launch(plan, &[w, h], &[16, 8], &[1.0, 0.0]),
        CLPART_SUCCESS,
        "",
    );
    let g = groups(plan);
    assert_eq!(g.iter().filter(|&&n| n > 0).count(), 1, "{g:?}");
    expect(
        unsafe { clpart_plan_set_auto_split(null_mut(), 1) },
        CLPART_INVALID_HANDLE,
        "NULL",
    );
    expect(unsafe { clpart_plan_release(plan) }, CLPART_SUCCESS, "");
}
