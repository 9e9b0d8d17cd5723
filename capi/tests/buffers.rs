//! Buffer handles: created, written, read (whole and by range),
//! released, bound to plan arguments so that launches leave the data on the
//! devices. Bad calls return their status code and a one-line message; the
//! C program `resident_jacobi1d.c` runs 50 Jacobi steps through handles,
//! built against the installed API.

mod common;

use std::ffi::{c_int, CStr, CString};
use std::ptr::{null, null_mut};
use std::sync::Once;

use clpart::*;

const JACOBI1D: &str = include_str!("../../kernels/iterative/jacobi1d.cl");

/// Two PoCL devices, before the first OpenCL call of this process.
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

fn name(status: c_int) -> String {
    unsafe { CStr::from_ptr(clpart_status_name(status)) }
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

fn create_from(elem: &str, data: &[f32]) -> *mut clpart_buffer {
    let t = CString::new(elem).unwrap();
    let mut b = null_mut();
    let st = unsafe {
        clpart_buffer_create_from_host(
            t.as_ptr(),
            data.as_ptr().cast(),
            std::mem::size_of_val(data),
            &mut b,
        )
    };
    expect(st, CLPART_SUCCESS, "");
    b
}

fn read_all(b: *mut clpart_buffer, n: usize) -> Vec<f32> {
    let mut out = vec![0f32; n];
    let st = unsafe { clpart_buffer_read_all(b, out.as_mut_ptr().cast(), n * 4) };
    expect(st, CLPART_SUCCESS, "");
    out
}

fn jacobi_plan(n: i32) -> *mut clpart_plan {
    let src = CString::new(JACOBI1D).unwrap();
    let mut plan = null_mut();
    expect(
        unsafe { clpart_plan_create_from_source(src.as_ptr(), null(), null(), &mut plan) },
        CLPART_SUCCESS,
        "",
    );
    expect(
        unsafe { clpart_plan_set_arg_scalar(plan, 2, 4, (&n as *const i32).cast()) },
        CLPART_SUCCESS,
        "",
    );
    plan
}

fn launch(plan: *mut clpart_plan, n: usize, shares: &[f64]) -> c_int {
    let devices: Vec<u32> = (0..shares.len() as u32).collect();
    let local = n.min(64);
    unsafe {
        clpart_plan_launch(
            plan,
            1,
            null(),
            &n,
            &local,
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

fn step_cpu(src: &[f32], dst: &mut [f32]) {
    let n = src.len();
    for i in 1..n - 1 {
        dst[i] = 0.33333334f32 * (src[i - 1] + src[i] + src[i + 1]);
    }
}

fn initial(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 7919) % 1000) as f32 / 1000.0)
        .collect()
}

#[test]
fn bad_buffer_calls_return_codes() {
    setup();
    let float = c"float";
    let mut b = null_mut();
    expect(
        unsafe { clpart_buffer_create(null(), 4, &mut b) },
        CLPART_INVALID_ARGUMENT,
        "elem_type is NULL",
    );
    expect(
        unsafe { clpart_buffer_create(c"struct pt".as_ptr(), 4, &mut b) },
        CLPART_INVALID_ARGUMENT,
        "'struct pt' is not an OpenCL C scalar or vector type",
    );
    assert!(b.is_null());
    expect(
        unsafe { clpart_buffer_create(float.as_ptr(), 0, &mut b) },
        CLPART_SIZE_MISMATCH,
        "n_elems is 0",
    );
    expect(
        unsafe { clpart_buffer_create(float.as_ptr(), 4, null_mut()) },
        CLPART_INVALID_ARGUMENT,
        "out_buffer is NULL",
    );
    expect(
        unsafe { clpart_buffer_create_from_host(float.as_ptr(), null(), 8, &mut b) },
        CLPART_INVALID_ARGUMENT,
        "host_ptr is NULL",
    );
    let three = [0u8; 3];
    expect(
        unsafe { clpart_buffer_create_from_host(float.as_ptr(), three.as_ptr().cast(), 3, &mut b) },
        CLPART_SIZE_MISMATCH,
        "not a positive whole number of 4-byte float elements",
    );

    expect(
        unsafe { clpart_buffer_create(float.as_ptr(), 8, &mut b) },
        CLPART_SUCCESS,
        "",
    );
    let mut size = 0usize;
    expect(
        unsafe { clpart_buffer_size(b, &mut size) },
        CLPART_SUCCESS,
        "",
    );
    assert_eq!(size, 32);
    let mut out = [1f32; 8];
    expect(
        unsafe { clpart_buffer_read(b, 2, 4, out.as_mut_ptr().cast()) },
        CLPART_SIZE_MISMATCH,
        "multiples of the element size, 4 bytes (float)",
    );
    expect(
        unsafe { clpart_buffer_read(b, 28, 8, out.as_mut_ptr().cast()) },
        CLPART_INVALID_ARGUMENT,
        "bytes [28, 28+8) are outside the buffer of 32 bytes",
    );
    expect(
        unsafe { clpart_buffer_read(b, 0, 4, null_mut()) },
        CLPART_INVALID_ARGUMENT,
        "dst is NULL",
    );
    expect(
        unsafe { clpart_buffer_write(b, 0, 4, null()) },
        CLPART_INVALID_ARGUMENT,
        "src is NULL",
    );
    expect(
        unsafe { clpart_buffer_read_all(b, out.as_mut_ptr().cast(), 16) },
        CLPART_SIZE_MISMATCH,
        "not the buffer's size, 32 bytes",
    );
    let v = [2.5f32, 3.5];
    expect(
        unsafe { clpart_buffer_write(b, 8, 8, v.as_ptr().cast()) },
        CLPART_SUCCESS,
        "",
    );
    expect(
        unsafe { clpart_buffer_read_all(b, out.as_mut_ptr().cast(), 32) },
        CLPART_SUCCESS,
        "",
    );
    assert_eq!(out, [0.0, 0.0, 2.5, 3.5, 0.0, 0.0, 0.0, 0.0]);
    let mut two = [0f32; 2];
    expect(
        unsafe { clpart_buffer_read(b, 12, 8, two.as_mut_ptr().cast()) },
        CLPART_SUCCESS,
        "",
    );
    assert_eq!(two, [3.5, 0.0]);

    // binding: kinds, element sizes, handles
    let plan = jacobi_plan(8);
    expect(
        unsafe { clpart_plan_set_arg_resident(plan, 2, b) },
        CLPART_INVALID_ARG_KIND,
        "use clpart_plan_set_arg_scalar",
    );
    expect(
        unsafe { clpart_plan_set_arg_resident(plan, 7, b) },
        CLPART_INVALID_ARG_INDEX,
        "argument index 7 is out of range",
    );
    expect(
        unsafe { clpart_plan_set_arg_resident(plan, 0, null_mut()) },
        CLPART_INVALID_HANDLE,
        "the buffer is NULL",
    );
    let mut longs = null_mut();
    expect(
        unsafe { clpart_buffer_create(c"long".as_ptr(), 8, &mut longs) },
        CLPART_SUCCESS,
        "",
    );
    expect(
        unsafe { clpart_plan_set_arg_resident(plan, 0, longs) },
        CLPART_SIZE_MISMATCH,
        "its elements have 4 bytes, the buffer's (long) 8",
    );
    // one buffer bound to both arguments of a launch
    expect(
        unsafe { clpart_plan_set_arg_resident(plan, 0, b) },
        CLPART_SUCCESS,
        "",
    );
    expect(
        unsafe { clpart_plan_set_arg_resident(plan, 1, b) },
        CLPART_SUCCESS,
        "",
    );
    expect(
        launch(plan, 8, &[1.0]),
        CLPART_INVALID_ARGUMENT,
        "are bound to the same buffer",
    );

    expect(unsafe { clpart_buffer_release(longs) }, CLPART_SUCCESS, "");
    expect(
        unsafe { clpart_buffer_release(longs) },
        CLPART_INVALID_HANDLE,
        "is not a live buffer",
    );
    expect(
        unsafe { clpart_buffer_size(longs, &mut size) },
        CLPART_INVALID_HANDLE,
        "is not a live buffer",
    );
    // a plan handle is not a buffer handle
    expect(
        unsafe { clpart_buffer_release(plan.cast()) },
        CLPART_INVALID_HANDLE,
        "is not a live buffer",
    );
    expect(unsafe { clpart_buffer_release(b) }, CLPART_SUCCESS, "");
    expect(unsafe { clpart_plan_release(plan) }, CLPART_SUCCESS, "");
}

/// 40 Jacobi steps over two handles, shares changed half-way, host reads
/// and writes between launches: every value is the CPU's, bit for bit.
#[test]
fn jacobi_over_handles_equals_the_cpu() {
    setup();
    let n = 1024usize;
    let mut ref_a = initial(n);
    let mut ref_b = ref_a.clone();
    let a = create_from("float", &ref_a);
    let b = create_from("float", &ref_b);
    let plan = jacobi_plan(n as i32);
    for s in 0..40 {
        let (src, dst) = if s % 2 == 0 { (a, b) } else { (b, a) };
        expect(
            unsafe { clpart_plan_set_arg_resident(plan, 0, src) },
            CLPART_SUCCESS,
            "",
        );
        expect(
            unsafe { clpart_plan_set_arg_resident(plan, 1, dst) },
            CLPART_SUCCESS,
            "",
        );
        let shares: &[f64] = if s < 20 { &[0.5, 0.5] } else { &[0.8, 0.2] };
        expect(launch(plan, n, shares), CLPART_SUCCESS, "");
        assert_eq!(report(plan).split, 1);
        if s % 2 == 0 {
            step_cpu(&ref_a, &mut ref_b);
        } else {
            step_cpu(&ref_b, &mut ref_a);
        }
        if s == 11 {
            // a range the devices hold, read between launches
            let mut got = vec![0f32; 100];
            expect(
                unsafe { clpart_buffer_read(a, 4 * 500, 400, got.as_mut_ptr().cast()) },
                CLPART_SUCCESS,
                "",
            );
            assert_eq!(got, ref_a[500..600]);
        }
        if s == 24 {
            // a host write the next launch must see
            let v = [9.0f32; 3];
            expect(
                unsafe { clpart_buffer_write(b, 4 * 700, 12, v.as_ptr().cast()) },
                CLPART_SUCCESS,
                "",
            );
            ref_b[700..703].copy_from_slice(&v);
        }
    }
    assert_eq!(
        read_all(a, n)
            .iter()
            .map(|x| x.to_bits())
            .collect::<Vec<_>>(),
        ref_a.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
    assert_eq!(read_all(b, n), ref_b);
    // the plan keeps a released handle's data: one more launch still works
    expect(unsafe { clpart_buffer_release(b) }, CLPART_SUCCESS, "");
    expect(launch(plan, n, &[0.5, 0.5]), CLPART_SUCCESS, "");
    step_cpu(&ref_b, &mut ref_a);
    assert_eq!(read_all(a, n), ref_a);
    expect(unsafe { clpart_buffer_release(a) }, CLPART_SUCCESS, "");
    expect(unsafe { clpart_plan_release(plan) }, CLPART_SUCCESS, "");
}

/// Host arrays and a handle in one launch: the host array is written back,
/// the handle keeps its data.
#[test]
fn host_arrays_and_handles_mix() {
    setup();
    let n = 256usize;
    let src = initial(n);
    let mut out = src.clone();
    let a = create_from("float", &src);
    let plan = jacobi_plan(n as i32);
    expect(
        unsafe { clpart_plan_set_arg_resident(plan, 0, a) },
        CLPART_SUCCESS,
        "",
    );
    expect(
        unsafe { clpart_plan_set_arg_buffer(plan, 1, out.as_mut_ptr().cast(), n * 4) },
        CLPART_SUCCESS,
        "",
    );
    expect(launch(plan, n, &[0.5, 0.5]), CLPART_SUCCESS, "");
    let mut want = src.clone();
    step_cpu(&src, &mut want);
    assert_eq!(out, want);
    assert_eq!(read_all(a, n), src);
    expect(unsafe { clpart_buffer_release(a) }, CLPART_SUCCESS, "");
    expect(unsafe { clpart_plan_release(plan) }, CLPART_SUCCESS, "");
}

/// Resident data moves once, then only the halo: 40 launches over handles
/// move less than 1.1 times the resident model (upload both arrays once,
/// per launch one element each way across the split boundary through the
/// host, read both back), where host arrays would move the arrays at every
/// launch. Waits for the launcher's residency.
#[test]
fn residency_bytes_over_handles_within_the_model() {
    setup();
    let n = 4096usize;
    let steps = 40u64;
    let init = initial(n);
    let a = create_from("float", &init);
    let b = create_from("float", &init);
    let plan = jacobi_plan(n as i32);
    let mut moved = 0u64;
    for s in 0..steps {
        let (src, dst) = if s % 2 == 0 { (a, b) } else { (b, a) };
        expect(
            unsafe { clpart_plan_set_arg_resident(plan, 0, src) },
            CLPART_SUCCESS,
            "",
        );
        expect(
            unsafe { clpart_plan_set_arg_resident(plan, 1, dst) },
            CLPART_SUCCESS,
            "",
        );
        expect(launch(plan, n, &[0.5, 0.5]), CLPART_SUCCESS, "");
        moved += report(plan).bytes_total;
    }
    read_all(a, n);
    read_all(b, n);
    // bytes gathered by the reads are not in the launch reports: the model
    // bound covers the launches only, plus an upper bound for the reads
    let es = 4u64;
    let upload = (n as u64 + 2) * es + 2 * es; // A with the halo, B's boundary
    let halo = steps * 4 * es; // one element each way, device → host → device
    let model_launches = upload + halo;
    assert!(
        moved as f64 <= 1.1 * model_launches as f64,
        "launches over handles moved {moved} bytes; the resident model allows {model_launches} (x1.1)"
    );
    expect(unsafe { clpart_buffer_release(a) }, CLPART_SUCCESS, "");
    expect(unsafe { clpart_buffer_release(b) }, CLPART_SUCCESS, "");
    expect(unsafe { clpart_plan_release(plan) }, CLPART_SUCCESS, "");
}

/// The C program, built against the installed API with pkg-config.
#[test]
fn c_program_runs_jacobi_through_handles() {
    let inst = common::install_and_build();
    let exe = inst.bin.join("resident_jacobi1d");
    inst.sh(&format!(
        "cc -std=c99 -O1 -g -Wall -Wextra -Werror capi/tests/resident_jacobi1d.c -o {} $(pkg-config --cflags --libs clpart)",
        exe.display()
    ));
    let root = common::repo();
    let out = inst
        .command(&exe)
        .arg(root.join("kernels/iterative/jacobi1d.cl"))
        .output()
        .unwrap();
    let all = common::text(&out);
    assert!(out.status.success(), "{all}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().last(), Some("PASS"), "{all}");
    assert!(stdout.contains("step 50: split"), "{all}");
}
