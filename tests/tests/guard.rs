//! The run-time guard. Subkernels check every buffer and
//! `__local` access against the window of their slice; an access outside it
//! is skipped, the launch's device results are discarded and the kernel
//! re-runs unsplit (correct output, reported); an access outside a host
//! buffer or a `__local` argument is an error with nothing written back;
//! `__local` sizes beyond the device's local memory are refused before
//! anything runs. Two PoCL devices (`pthread basic`).

use clpart_tests::{plan_from_source, shared_runtime};
use host_data::PlanArgs;
use launcher::{KernelArgs, LaunchError, LaunchOptions, NdRange, Plan, Runtime};

fn runtime() -> Runtime {
    shared_runtime("pthread basic")
}

fn plan(
    rt: &Runtime,
    name: &str,
    source: &str,
    global: &[u64],
    local: &[u64],
    scalars: &[(&str, i64)],
) -> Plan {
    plan_from_source(rt, name, source, global, local, scalars)
}

fn args(p: &Plan, specs: &[&str]) -> KernelArgs {
    p.args_from_specs(specs).unwrap()
}

const VADD: &str =
    "__kernel void vadd(__global const int *a, __global const int *b, __global int *c) {
    int i = get_global_id(0);
    c[i] = a[i] + b[i];
}";

#[test]
fn guard_never_fires_on_a_correct_split() {
    let rt = runtime();
    let mut p = plan(&rt, "vadd", VADD, &[1024], &[64], &[]);
    assert!(p.guard_status().is_ok(), "{:?}", p.guard_status());
    let nd = NdRange::new(&[1024], &[64]).unwrap();
    let mut a = args(&p, &["a=rand:1024:1", "b=rand:1024:2", "c=zeros:1024"]);
    let opts = LaunchOptions {
        verify: true,
        ..Default::default()
    };
    let r = launcher::launch(&mut p, &nd, &mut a, &[(0, 0.5), (1, 0.5)], &opts).unwrap();
    assert!(r.split && !r.guard_fired && r.verified == Some(true), "{r}");
}

#[test]
fn guard_catches_an_under_approximated_range_and_reruns_unsplit() {
    let rt = runtime();
    let mut p = plan(&rt, "vadd", VADD, &[1024], &[64], &[]);
    let nd = NdRange::new(&[1024], &[64]).unwrap();
    let pristine = args(&p, &["a=rand:1024:1", "b=rand:1024:2", "c=zeros:1024"]);
    // The reference: an unsplit run of the original kernel.
    let mut want = pristine.clone();
    p.run_whole(0, &nd, &mut want).unwrap();
    // The test hook makes 'a''s read range one element short on every device.
    let opts = LaunchOptions {
        verify: true,
        test_underapproximate: Some("a".into()),
        ..Default::default()
    };
    let mut got = pristine.clone();
    let r = launcher::launch(&mut p, &nd, &mut got, &[(0, 0.5), (1, 0.5)], &opts).unwrap();
    assert!(r.guard_fired, "the guard must fire: {r}");
    assert!(!r.split, "the launch re-ran unsplit: {r}");
    let reason = r.reason.clone().unwrap_or_default();
    assert!(
        reason.contains("'a'") && reason.contains("run-time guard"),
        "{reason}"
    );
    assert_eq!(r.verified, Some(true), "{r}");
    assert_eq!(
        got.buffer("c").unwrap().as_bytes(),
        want.buffer("c").unwrap().as_bytes()
    );
}

/// The guard on `kernel` of `src` (launched over `global`/`local` with
/// `scalars` and the buffers of `specs`): a correct analysis splits with
/// the guard quiet; with `array`'s read range one element short, the
/// guard catches the access and the launch re-runs unsplit. Both give
/// `output` as one device does.
#[allow(clippy::too_many_arguments)]
fn quiet_then_caught(
    kernel: &str,
    src: &str,
    global: &[u64],
    local: &[u64],
    scalars: &[(&str, i64)],
    specs: &[&str],
    array: &str,
    output: &str,
) {
    let rt = runtime();
    let mut p = plan(&rt, kernel, src, global, local, scalars);
    assert!(p.guard_status().is_ok(), "{:?}", p.guard_status());
    let nd = NdRange::new(global, local).unwrap();
    let pristine = args(&p, specs);
    let mut want = pristine.clone();
    p.run_whole(0, &nd, &mut want).unwrap();
    let mut got = pristine.clone();
    let opts = LaunchOptions::default();
    let r = launcher::launch(&mut p, &nd, &mut got, &[(0, 0.5), (1, 0.5)], &opts).unwrap();
    assert!(r.split && !r.guard_fired, "{r}");
    assert_eq!(got.buffer(output), want.buffer(output));
    let opts = LaunchOptions {
        test_underapproximate: Some(array.into()),
        ..Default::default()
    };
    let mut got = pristine.clone();
    let r = launcher::launch(&mut p, &nd, &mut got, &[(0, 0.5), (1, 0.5)], &opts).unwrap();
    assert!(r.guard_fired && !r.split, "the guard must fire: {r}");
    assert_eq!(got.buffer(output), want.buffer(output));
}

/// Subscripts written through macros, as public suites write them: a
/// function-like macro whose whole body is the subscript, read and written
/// (`#define AT(i, j) ...`), and an object-like one.
const MACRO_SUBSCRIPTS: &str = "#define AT(r, c) grid[(r) * n + (c)]
#define HERE grid[k]
__kernel void smooth(__global const float *in, __global float *grid, int n) {
    int k = get_global_id(0);
    int r = k / n, c = k % n;
    if (r > 0 && c > 0)
        AT(r, c) = 0.5f * in[k] + 0.25f * HERE;
    else
        HERE = in[k];
}";

#[test]
fn the_guard_checks_subscripts_written_through_macros() {
    // the macro's read of 'grid' one element short is caught
    quiet_then_caught(
        "smooth",
        MACRO_SUBSCRIPTS,
        &[1024],
        &[64],
        &[("n", 32)],
        &["in=rand:1024:1", "grid=rand:1024:2", "n=32"],
        "grid",
        "grid",
    );
}

/// Subscripts inside a macro's arguments, each argument expanded twice
/// (`MIN(row[l], row[x])`), and the work-item's index as an argument.
const MACRO_ARGUMENTS: &str = "#define MIN(a, b) ((a) <= (b) ? (a) : (b))
#define MAX(a, b) ((a) >= (b) ? (a) : (b))
__kernel void min_step(__global const int *row, __global int *out, int n) {
    int x = (int)MAX(get_global_id(0), (size_t)0);
    int l = MAX(x - 1, 0), r = MIN(x + 1, n - 1);
    out[x] = MIN(row[l], MIN(row[x], row[r]));
}";

#[test]
fn the_guard_checks_subscripts_inside_macro_arguments() {
    // a read of 'row' written in a macro argument is caught
    quiet_then_caught(
        "min_step",
        MACRO_ARGUMENTS,
        &[1024],
        &[64],
        &[("n", 1024)],
        &["row=rand:1024:1", "out=zeros:1024", "n=1024"],
        "row",
        "out",
    );
}

/// A macro argument one expansion reads and another writes
/// (`KEEP_MAX(out[i], ...)` compares `out[i]` and assigns it): guarded
/// once, as read and written.
const MACRO_READ_AND_WRITTEN: &str = "#define KEEP_MAX(a, v) if ((v) > (a)) (a) = (v)
__kernel void peak(__global const int *in, __global int *out) {
    int i = get_global_id(0);
    KEEP_MAX(out[i], in[i]);
}";

#[test]
fn the_guard_checks_a_macro_argument_both_read_and_written() {
    // a write of 'out' one element short is caught
    quiet_then_caught(
        "peak",
        MACRO_READ_AND_WRITTEN,
        &[1024],
        &[64],
        &[],
        &["in=rand:1024:1", "out=rand:1024:2"],
        "out",
        "out",
    );
}

/// A struct whose member is an array, updated in place through it
/// (`bins[i].sums[k] += ...`): the guard checks element `i` as read and
/// written.
const ARRAY_MEMBER: &str = "typedef struct { int count; float sums[4]; } bin_t;
__kernel void accumulate(__global const float *in, __global bin_t *bins) {
    int i = get_global_id(0);
    for (int k = 0; k < 4; k++)
        bins[i].sums[k] += in[4 * i + k];
}";

#[test]
fn the_guard_checks_accesses_through_array_members() {
    quiet_then_caught(
        "accumulate",
        ARRAY_MEMBER,
        &[256],
        &[32],
        &[],
        &["in=rand:1024:1", "bins=zeros:256"],
        "bins",
        "bins",
    );
}

/// Local pointers into the buffers at an offset (`row = a + r * n`,
/// `dst = &out[r * n]`), read and written through subscripts and
/// dereferences.
const POINTERS_INTO: &str =
    "__kernel void rows(__global const float *a, __global float *out, int n) {
    int r = get_global_id(0);
    __global const float *row = a + r * n;
    __global float *dst = &out[r * n];
    for (int j = 0; j < n - 1; j++)
        dst[j] = row[j] + *(row + j + 1);
    *(dst + n - 1) = row[0];
}";

#[test]
fn the_guard_checks_accesses_through_pointers_into_a_buffer() {
    quiet_then_caught(
        "rows",
        POINTERS_INTO,
        &[64],
        &[8],
        &[("n", 16)],
        &["a=rand:1024:1", "out=zeros:1024", "n=16"],
        "a",
        "out",
    );
}

/// The pointer argument itself stepped (`A += c`, `A += lda` in a loop).
const STEPPED: &str =
    "__kernel void sweep(__global const float *A, int lda, __global float *out, int n) {
    int c = get_global_id(0);
    A += c;
    float s = 0.0f;
    for (int i = 0; i < n; i++) {
        s += A[0];
        A += lda;
    }
    out[c] = s;
}";

#[test]
fn the_guard_checks_accesses_through_a_stepped_argument() {
    quiet_then_caught(
        "sweep",
        STEPPED,
        &[64],
        &[8],
        &[("lda", 64), ("n", 16)],
        &["A=rand:1024:1", "lda=64", "out=zeros:64", "n=16"],
        "A",
        "out",
    );
}

/// A pointer taken into the argument after the argument was stepped
/// (`A += c; row = A + 1;`): its accesses are checked against the
/// argument's value at the start, not its stepped value.
const STEPPED_THEN_ALIASED: &str =
    "__kernel void sweep_row(__global const float *A, int lda, __global float *out, int n) {
    int c = get_global_id(0);
    A += c;
    __global const float *row = A + 1;
    float s = 0.0f;
    for (int i = 0; i < n; i++)
        s += row[i * lda];
    out[c] = s;
}";

#[test]
fn the_guard_checks_a_pointer_into_a_stepped_argument() {
    quiet_then_caught(
        "sweep_row",
        STEPPED_THEN_ALIASED,
        &[64],
        &[8],
        &[("lda", 64), ("n", 15)],
        &["A=rand:1024:1", "lda=64", "out=zeros:64", "n=15"],
        "A",
        "out",
    );
}

/// A view of the argument taken after it was stepped would check its
/// accesses from the wrong start: the guard refuses it.
#[test]
fn a_view_of_a_stepped_argument_is_not_guarded() {
    let rt = runtime();
    let src = "__kernel void step_view(__global const float *a, __global float *out) {
    int i = get_global_id(0);
    a += 4;
    __global const float4 *v = (__global const float4 *)a;
    out[i] = v[i].x;
}";
    let p = plan(&rt, "step_view", src, &[64], &[8], &[]);
    assert!(p.guard_status().is_err(), "{:?}", p.guard_status());
}

#[test]
fn a_pointer_into_a_buffer_passed_on_is_not_guarded() {
    let rt = runtime();
    let src = "static float first(__global const float *p) { return p[0]; }
__kernel void pass_on(__global const float *a, __global float *out, int n) {
    int r = get_global_id(0);
    __global const float *row = a + r * n;
    out[r] = first(row);
}";
    let p = plan(&rt, "pass_on", src, &[64], &[8], &[("n", 16)]);
    let why = p.guard_status().expect_err("the pointer goes to a helper");
    assert!(why.contains("a pointer into 'a'"), "{why}");
}

/// A helper taking two buffers (as particle filters and alignment codes
/// write them): one clone guards both, each access with its buffer's
/// window.
const SHARED_HELPER: &str =
    "static void blend(__global const float *src, __global float *dst, int i, int w) {
    dst[i] = 0.5f * src[i] + 0.25f * (src[i - 1] + src[i + 1]) + (i % w == 0 ? dst[i] : 0.0f);
}
__kernel void smooth2(__global const float *in, __global float *out, int w) {
    int i = get_global_id(0) + 1;
    blend(in, out, i, w);
}";

#[test]
fn the_guard_checks_a_helper_taking_several_buffers() {
    let rt = runtime();
    let mut p = plan(&rt, "smooth2", SHARED_HELPER, &[1024], &[64], &[("w", 32)]);
    assert!(p.guard_status().is_ok(), "{:?}", p.guard_status());
    let nd = NdRange::new(&[1024], &[64]).unwrap();
    let pristine = args(&p, &["in=rand:1026:1", "out=rand:1026:2", "w=32"]);
    let mut want = pristine.clone();
    p.run_whole(0, &nd, &mut want).unwrap();
    let mut got = pristine.clone();
    let opts = LaunchOptions::default();
    let r = launcher::launch(&mut p, &nd, &mut got, &[(0, 0.5), (1, 0.5)], &opts).unwrap();
    assert!(r.split && !r.guard_fired, "{r}");
    assert_eq!(got.buffer("out"), want.buffer("out"));
    for short in ["in", "out"] {
        let opts = LaunchOptions {
            test_underapproximate: Some(short.into()),
            ..Default::default()
        };
        let mut got = pristine.clone();
        let r = launcher::launch(&mut p, &nd, &mut got, &[(0, 0.5), (1, 0.5)], &opts).unwrap();
        assert!(
            r.guard_fired && !r.split,
            "{short}: the guard must fire: {r}"
        );
        assert_eq!(got.buffer("out"), want.buffer("out"), "{short}");
    }
}

const SCRATCH: &str =
    "__kernel void scratch(__global const float *in, __global float *out, __local float *tmp) {
    int l = get_local_id(0);
    tmp[l] = in[get_global_id(0)] * 2.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tmp[get_local_size(0) - 1 - l];
}";

#[test]
fn a_local_argument_too_small_is_an_error_not_a_corruption() {
    let rt = runtime();
    let mut p = plan(&rt, "scratch", SCRATCH, &[256], &[64], &[]);
    let nd = NdRange::new(&[256], &[64]).unwrap();
    let mut a = args(&p, &["in=rand:256:1", "out=zeros:256", "tmp=local:1"]);
    let err = launcher::launch(
        &mut p,
        &nd,
        &mut a,
        &[(0, 0.5), (1, 0.5)],
        &LaunchOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, LaunchError::GuardOutOfBounds { .. }), "{err}");
    assert!(err.to_string().contains("__local argument 'tmp'"), "{err}");
    assert!(
        a.buffer("out").unwrap().as_bytes().iter().all(|&b| b == 0),
        "nothing is written back"
    );
    // The right size splits and verifies.
    let mut a = args(&p, &["in=rand:256:1", "out=zeros:256", "tmp=local:64"]);
    let opts = LaunchOptions {
        verify: true,
        ..Default::default()
    };
    let r = launcher::launch(&mut p, &nd, &mut a, &[(0, 0.5), (1, 0.5)], &opts).unwrap();
    assert!(r.split && !r.guard_fired && r.verified == Some(true), "{r}");
}

#[test]
fn a_local_argument_beyond_local_memory_is_refused_before_running() {
    let rt = runtime();
    let mut p = plan(&rt, "scratch", SCRATCH, &[256], &[64], &[]);
    let nd = NdRange::new(&[256], &[64]).unwrap();
    let mut a = args(
        &p,
        &["in=rand:256:1", "out=zeros:256", "tmp=local:268435456"],
    );
    let err = launcher::launch(
        &mut p,
        &nd,
        &mut a,
        &[(0, 0.5), (1, 0.5)],
        &LaunchOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, LaunchError::LocalTooLarge { .. }), "{err}");
}

/// An array the analysis cannot bound (its subscript is data-dependent) with
/// a host buffer smaller than what the kernel touches.
const WHOLE: &str = "__kernel void walk(__global const int *idx, __global int *a) {
    int i = get_global_id(0);
    a[idx[i]] = i;
}";

#[test]
fn a_host_buffer_too_small_for_a_whole_array_is_caught() {
    let rt = runtime();
    let mut p = plan(&rt, "walk", WHOLE, &[64], &[16], &[]);
    let nd = NdRange::new(&[64], &[16]).unwrap();
    // idx = 0..63 but 'a' holds 10 elements.
    let mut a = args(&p, &["idx=seq:64", "a=zeros:10"]);
    let err = launcher::launch(
        &mut p,
        &nd,
        &mut a,
        &[(0, 0.5), (1, 0.5)],
        &LaunchOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, LaunchError::GuardOutOfBounds { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("array 'a' outside its 10 elements"),
        "{err}"
    );
    assert!(
        a.buffer("a").unwrap().as_bytes().iter().all(|&b| b == 0),
        "nothing is written back"
    );
}

#[test]
fn unchecked_runs_without_the_guard() {
    let rt = runtime();
    let mut p = plan(&rt, "vadd", VADD, &[1024], &[64], &[]);
    let nd = NdRange::new(&[1024], &[64]).unwrap();
    let mut a = args(&p, &["a=rand:1024:1", "b=rand:1024:2", "c=zeros:1024"]);
    let opts = LaunchOptions {
        verify: true,
        unchecked: true,
        ..Default::default()
    };
    let r = launcher::launch(&mut p, &nd, &mut a, &[(0, 0.5), (1, 0.5)], &opts).unwrap();
    assert!(r.split && !r.guard_fired && r.verified == Some(true), "{r}");
}

/// Kernels whose every subscript the per-work-group test bounds, so that
/// groups run the body's fast copy (plain indices): conditions narrowing
/// the ids (a 2-D stencil), an early `return` under a padded NDRange with a
/// loop counting down, `__local` tiles loaded in a loop, and a loop whose
/// counter is declared before it (PolyBench/GPU's form), bounded at its
/// extreme iterations: with its window one element short, only the last
/// iteration of the last row leaves it.
/// (name, source, global, local, arguments, array whose window is cut, output)
type FastCase = (
    &'static str,
    &'static str,
    &'static [u64],
    &'static [u64],
    &'static [&'static str],
    &'static str,
    &'static str,
);

const FAST_PATH_KERNELS: [FastCase; 4] = [
    (
        "stencil",
        "__kernel void stencil(__global const float *in, __global float *out, int width, int height) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < width && y < height) {
        int idx = y * width + x;
        if (x > 0 && x < width - 1 && y > 0 && y < height - 1)
            out[idx] = 0.25f * (in[idx - 1] + in[idx + 1] + in[idx - width] + in[idx + width]);
        else
            out[idx] = in[idx];
    }
}",
        &[64, 32],
        &[16, 8],
        &["in=rand:2048:1", "out=zeros:2048", "width=64", "height=32"],
        "in",
        "out",
    ),
    (
        "rowsum",
        "__kernel void rowsum(__global const float *m, __global float *s, int n, int cols) {
    int r = get_global_id(0);
    if (r >= n) return;
    float acc = 0.0f;
    for (int j = cols - 1; j >= 0; j--)
        acc += m[r * cols + j];
    s[r] = acc;
}",
        &[96],
        &[16],
        &["m=rand:900:1", "s=zeros:90", "n=90", "cols=10"],
        "m",
        "s",
    ),
    (
        "tiled",
        "#define T 8
__kernel void tiled(__global const float *a, __global const float *b, __global float *c, int w) {
    __local float as[T][T];
    __local float bs[T][T];
    int lx = get_local_id(0), ly = get_local_id(1);
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int t = 0; t < w / T; t++) {
        as[ly][lx] = a[row * w + t * T + lx];
        bs[ly][lx] = b[(t * T + ly) * w + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < T; k++)
            acc += as[ly][k] * bs[k][lx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    c[row * w + col] = acc;
}",
        &[32, 32],
        &[8, 8],
        &["a=rand:1024:1", "b=rand:1024:2", "c=zeros:1024", "w=32"],
        "a",
        "c",
    ),
    (
        "rowsum_outer",
        "__kernel void rowsum_outer(__global const float *m, __global float *s, int n, int cols) {
    int r = get_global_id(0);
    int j;
    float acc = 0.0f;
    if (r < n) {
        for (j = 0; j < cols; j++)
            acc += m[r * cols + j];
        s[r] = acc;
    }
}",
        &[96],
        &[16],
        &["m=rand:900:1", "s=zeros:90", "n=90", "cols=10"],
        "m",
        "s",
    ),
];

#[test]
fn the_per_group_test_never_trusts_a_short_window() {
    let rt = runtime();
    for (name, src, global, local, specs, short, out) in FAST_PATH_KERNELS {
        let scalars: Vec<(&str, i64)> = specs
            .iter()
            .filter_map(|s| s.split_once('='))
            .filter_map(|(n, v)| v.parse().ok().map(|v| (n, v)))
            .collect();
        let mut p = plan(&rt, name, src, global, local, &scalars);
        assert!(p.guard_status().is_ok(), "{name}: {:?}", p.guard_status());
        if name == "rowsum_outer" {
            // the loop's read is proven per group, not checked per access
            let sub = p.kernel().subkernel.as_ref().unwrap();
            assert!(
                sub.source
                    .contains("m[((long)(r * cols + j) - __clpart_base_m)]"),
                "{}",
                sub.source
            );
        }
        let nd = NdRange::new(global, local).unwrap();
        let pristine = args(&p, specs);
        let mut want = pristine.clone();
        p.run_whole(0, &nd, &mut want).unwrap();
        // a correct split: the groups pass their test, nothing fires
        let mut got = pristine.clone();
        let opts = LaunchOptions {
            verify: true,
            ..Default::default()
        };
        let r = launcher::launch(&mut p, &nd, &mut got, &[(0, 0.5), (1, 0.5)], &opts).unwrap();
        assert!(
            r.split && !r.guard_fired && r.verified == Some(true),
            "{name}: {r}"
        );
        // a window one element short: the group that needs the element
        // fails its test, runs the checked copy, and the guard fires
        let mut got = pristine.clone();
        let opts = LaunchOptions {
            verify: true,
            test_underapproximate: Some(short.into()),
            ..Default::default()
        };
        let r = launcher::launch(&mut p, &nd, &mut got, &[(0, 0.5), (1, 0.5)], &opts).unwrap();
        assert!(
            r.guard_fired && !r.split,
            "{name}: the guard must fire on '{short}': {r}"
        );
        assert_eq!(r.verified, Some(true), "{name}: {r}");
        assert_eq!(
            got.buffer(out).unwrap().as_bytes(),
            want.buffer(out).unwrap().as_bytes(),
            "{name}"
        );
    }
}

/// A loop whose counter is declared before it is bounded once per group at
/// its extreme iterations. When its bound makes the last iteration read
/// past the host buffer (the last row's last element missing), the array
/// goes whole under the guard, the group holding that row fails its test,
/// and the checked copy catches the access: an error, nothing written back.
#[test]
fn a_loop_whose_last_iteration_leaves_the_buffer_is_caught() {
    let rt = runtime();
    let (name, src, global, local, ..) = FAST_PATH_KERNELS[3];
    let mut p = plan(&rt, name, src, global, local, &[("n", 90), ("cols", 10)]);
    let nd = NdRange::new(global, local).unwrap();
    let mut a = args(&p, &["m=rand:899:1", "s=zeros:90", "n=90", "cols=10"]);
    let err = launcher::launch(
        &mut p,
        &nd,
        &mut a,
        &[(0, 0.5), (1, 0.5)],
        &LaunchOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, LaunchError::GuardOutOfBounds { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("array 'm' outside its 899 elements"),
        "{err}"
    );
    assert!(
        a.buffer("s").unwrap().as_bytes().iter().all(|&b| b == 0),
        "nothing is written back"
    );
}

/// A buffer of 12-byte structs, accessed through a member: sized by OpenCL
/// C's layout; a host buffer with too few elements is refused before
/// anything runs (the member access is analyzed as part of the element),
/// and the right size splits.
const POINTS: &str = "typedef struct { float x, y, z; } point;
__kernel void shift(__global point *p, float d) {
    int i = get_global_id(0);
    p[i].x += d;
}";

/// The same through an index the analysis cannot bound: the array is whole,
/// and the guard catches a host buffer too small for what the kernel touches.
const POINTS_INDIRECT: &str = "typedef struct { float x, y, z; } point;
__kernel void shift(__global point *p, __global const int *idx, float d) {
    int i = get_global_id(0);
    p[idx[i]].x += d;
}";

#[test]
fn struct_buffers_are_sized_by_layout_and_checked() {
    let rt = runtime();
    let nd = NdRange::new(&[64], &[16]).unwrap();
    let mut p = plan(&rt, "shift", POINTS, &[64], &[16], &[]);
    assert!(p.guard_status().is_ok(), "{:?}", p.guard_status());
    let mut a = args(&p, &["p=zeros:10", "d=1.5"]);
    assert_eq!(
        a.buffer("p").unwrap().as_bytes().len(),
        10 * 12,
        "sized by OpenCL C's layout"
    );
    // with the guard, the array goes whole and the guard catches the first
    // access past its 10 elements; without it, the launch is refused
    let err = launcher::launch(
        &mut p,
        &nd,
        &mut a,
        &[(0, 0.5), (1, 0.5)],
        &LaunchOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(err, LaunchError::GuardOutOfBounds { .. })
            && err
                .to_string()
                .contains("array 'p' outside its 10 elements"),
        "{err}"
    );
    let unchecked = LaunchOptions {
        unchecked: true,
        ..Default::default()
    };
    let err = launcher::launch(&mut p, &nd, &mut a, &[(0, 0.5), (1, 0.5)], &unchecked).unwrap_err();
    assert!(matches!(err, LaunchError::BufferTooSmall { .. }), "{err}");
    let mut a = args(&p, &["p=zeros:64", "d=1.5"]);
    let opts = LaunchOptions {
        verify: true,
        ..Default::default()
    };
    let r = launcher::launch(&mut p, &nd, &mut a, &[(0, 0.5), (1, 0.5)], &opts).unwrap();
    assert!(r.split && !r.guard_fired && r.verified == Some(true), "{r}");
    let bytes = a.buffer("p").unwrap().as_bytes();
    for i in 0..64 {
        let x = f32::from_le_bytes(bytes[i * 12..i * 12 + 4].try_into().unwrap());
        let y = f32::from_le_bytes(bytes[i * 12 + 4..i * 12 + 8].try_into().unwrap());
        assert_eq!((x, y), (1.5, 0.0), "element {i}");
    }

    let mut p = plan(&rt, "shift", POINTS_INDIRECT, &[64], &[16], &[]);
    let mut a = args(&p, &["p=zeros:10", "idx=seq:64", "d=1.5"]);
    let err = launcher::launch(
        &mut p,
        &nd,
        &mut a,
        &[(0, 0.5), (1, 0.5)],
        &LaunchOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, LaunchError::GuardOutOfBounds { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("array 'p' outside its 10 elements"),
        "{err}"
    );
    assert!(
        a.buffer("p").unwrap().as_bytes().iter().all(|&b| b == 0),
        "nothing is written back"
    );
}

/// A column walk reads one column band of every row. Its read
/// box is that band, much smaller than its 1-D hull (every element between
/// the first row's first column and the last row's last one).
const COLSUM: &str =
    "__kernel void colsum(__global const float *A, __global float *out, int m, int n) {
    int j = get_global_id(0);
    if (j < n) {
        float s = 0.0f;
        for (int i = 0; i < m; i++)
            s += A[i * n + j];
        out[j] = s;
    }
}";

/// The guard checks boxes. A correct split never fires; a read
/// box one column short on every device (the windows, the boxes' linear
/// hulls, left as they were: only the box check can see it) makes the
/// groups that read that column fail their per-group test, the checked copy
/// refuse the accesses, and the launch re-run unsplit with the right result.
#[test]
fn the_guard_checks_boxes_and_catches_a_short_box() {
    let rt = runtime();
    type Case<'a> = (
        &'a str,
        &'a str,
        &'a [u64],
        &'a [u64],
        &'a [&'a str],
        &'a str,
        &'a str,
    );
    let (sname, ssrc, sglobal, slocal, sspecs, sin, sout) = FAST_PATH_KERNELS[0];
    let cases: [Case; 2] = [
        (
            "colsum",
            COLSUM,
            &[256],
            &[32],
            &["A=rand:2560:1", "out=zeros:256", "m=10", "n=256"],
            "A",
            "out",
        ),
        (sname, ssrc, sglobal, slocal, sspecs, sin, sout),
    ];
    for (name, src, global, local, specs, boxed, out) in cases {
        let scalars: Vec<(&str, i64)> = specs
            .iter()
            .filter_map(|s| s.split_once('='))
            .filter_map(|(n, v)| v.parse().ok().map(|v| (n, v)))
            .collect();
        let mut p = plan(&rt, name, src, global, local, &scalars);
        assert!(p.guard_status().is_ok(), "{name}: {:?}", p.guard_status());
        let k = p.kernel();
        let a = k.arrays.iter().find(|a| a.name == boxed).unwrap();
        assert!(a.boxes.is_some(), "{name}: '{boxed}' has boxes");
        let sub = k.subkernel.as_ref().unwrap();
        assert!(
            sub.extra_args
                .iter()
                .any(|e| e.meaning.box_arg() == Some((a.arg_index, 1))),
            "{name}: box-check arguments"
        );
        let nd = NdRange::new(global, local).unwrap();
        let pristine = args(&p, specs);
        let mut want = pristine.clone();
        p.run_whole(0, &nd, &mut want).unwrap();
        // a correct split
        let mut got = pristine.clone();
        let opts = LaunchOptions {
            verify: true,
            ..Default::default()
        };
        let r = launcher::launch(&mut p, &nd, &mut got, &[(0, 0.5), (1, 0.5)], &opts).unwrap();
        assert!(
            r.split && !r.guard_fired && r.verified == Some(true),
            "{name}: {r}"
        );
        // a box one column short
        let mut got = pristine.clone();
        let opts = LaunchOptions {
            verify: true,
            test_shrink_box: Some(boxed.into()),
            ..Default::default()
        };
        let r = launcher::launch(&mut p, &nd, &mut got, &[(0, 0.5), (1, 0.5)], &opts).unwrap();
        assert!(
            r.guard_fired && !r.split,
            "{name}: the guard must fire on '{boxed}': {r}"
        );
        let reason = r.reason.clone().unwrap_or_default();
        assert!(
            reason.contains(&format!("'{boxed}' outside its analyzed range")),
            "{name}: {reason}"
        );
        assert_eq!(r.verified, Some(true), "{name}: {r}");
        assert_eq!(
            got.buffer(out).unwrap().as_bytes(),
            want.buffer(out).unwrap().as_bytes(),
            "{name}"
        );
        // without the guard the same short box goes unnoticed: the check is the guard's
        let mut got = pristine.clone();
        let opts = LaunchOptions {
            unchecked: true,
            test_shrink_box: Some(boxed.into()),
            ..Default::default()
        };
        let r = launcher::launch(&mut p, &nd, &mut got, &[(0, 0.5), (1, 0.5)], &opts).unwrap();
        assert!(r.split && !r.guard_fired, "{name}: {r}");
    }
}

/// LU's trailing update (`kernels/iterative/lu.cl`): `a` is read in the
/// pivot row `k` and in the slice's own rows.
const LU_UPDATE: &str = r#"
__kernel void lu_update(__global float *a, int k, int n)
{
    int col = get_global_id(0);
    int row = get_global_id(1);
    if (row > k && row < n && col > k && col < n)
        a[row * n + col] = a[row * n + col] - a[row * n + k] * a[k * n + col];
}
"#;

/// With the largest read part of `array` shrunk (`test_shrink_part`), the
/// guard fires, the launch re-runs unsplit and `output` is what one device
/// gives (`want`).
fn short_part_is_caught(
    p: &mut Plan,
    nd: &NdRange,
    pristine: &KernelArgs,
    want: &KernelArgs,
    shares: &[(usize, f64)],
    array: &str,
    output: &str,
) {
    let mut got = pristine.clone();
    let opts = LaunchOptions {
        verify: true,
        test_shrink_part: Some(array.into()),
        ..Default::default()
    };
    let r = launcher::launch(p, nd, &mut got, shares, &opts).unwrap();
    assert!(
        r.guard_fired && !r.split,
        "the guard must fire on '{array}': {r}"
    );
    let reason = r.reason.clone().unwrap_or_default();
    assert!(
        reason.contains(&format!("'{array}' outside its analyzed range")),
        "{reason}"
    );
    assert_eq!(r.verified, Some(true), "{r}");
    assert_eq!(
        got.buffer(output).unwrap().as_bytes(),
        want.buffer(output).unwrap().as_bytes()
    );
}

/// The guard checks every read against the read parts, not only
/// against the box that holds them all. LU's update reads the pivot row and
/// the slice's rows (apart, and the rows between them do not move);
/// with the largest part one row short while the read box, its hull and the
/// windows stay whole, the reads of the missing row fail the part check,
/// the guard fires and the launch re-runs unsplit, bit-exact.
#[test]
fn the_guard_checks_read_parts_and_catches_a_short_part() {
    let rt = runtime();
    let (global, local): (&[u64], &[u64]) = (&[64, 64], &[16, 16]);
    let specs = ["a=rand:4096:7", "k=5", "n=64"];
    let mut p = plan(
        &rt,
        "lu_update",
        LU_UPDATE,
        global,
        local,
        &[("k", 5), ("n", 64)],
    );
    assert!(p.guard_status().is_ok(), "{:?}", p.guard_status());
    let k = p.kernel();
    let a = &k.arrays[0];
    let parts = a.boxes.as_ref().map_or(0, |b| b.read_parts.len());
    // the pivot row, the slice's rows and, apart from them (the NDRange
    // may start past column k + 1), the slice's rows in column k
    assert_eq!(parts, 3, "'a' has three read parts: {:?}", a.boxes);
    let sub = k.subkernel.as_ref().unwrap();
    assert_eq!(
        sub.extra_args
            .iter()
            .filter(|e| e.meaning.part_arg().is_some())
            .count(),
        3 * 2 * 2,
        "two bounds per part and dimension"
    );
    let nd = NdRange::new(global, local).unwrap();
    let pristine = args(&p, &specs);
    let mut want = pristine.clone();
    p.run_whole(0, &nd, &mut want).unwrap();
    let shares = [(0, 0.5), (1, 0.5)];
    // a correct split: the guard stays quiet, the result is exact
    let mut got = pristine.clone();
    let opts = LaunchOptions {
        verify: true,
        ..Default::default()
    };
    let r = launcher::launch(&mut p, &nd, &mut got, &shares, &opts).unwrap();
    assert!(r.split && !r.guard_fired && r.verified == Some(true), "{r}");
    assert_eq!(
        got.buffer("a").unwrap().as_bytes(),
        want.buffer("a").unwrap().as_bytes()
    );
    // a part one row short
    short_part_is_caught(&mut p, &nd, &pristine, &want, &shares, "a", "a");
    // without the guard the same short part goes unnoticed: the check is the guard's
    let mut got = pristine.clone();
    let opts = LaunchOptions {
        unchecked: true,
        test_shrink_part: Some("a".into()),
        ..Default::default()
    };
    let r = launcher::launch(&mut p, &nd, &mut got, &shares, &opts).unwrap();
    assert!(r.split && !r.guard_fired, "{r}");
}

const TWO_BANDS: &str = r#"
__kernel void two_bands(__global const float *in, __global float *out, int dist)
{
    int i = get_global_id(0);
    out[i] = in[i] - in[i + dist];
}
"#;

/// A 1-D array read in two bands `dist` apart has one read part
/// per band (its runs), and the guard checks every read against them: with
/// the larger part one element short while the read window stays whole,
/// the read of the missing element fails the part check, the guard fires
/// and the launch re-runs unsplit, bit-exact.
#[test]
fn the_guard_checks_the_read_runs_of_a_1d_array() {
    let rt = runtime();
    let (global, local): (&[u64], &[u64]) = (&[512], &[64]);
    let specs = ["in=rand:1024:5", "out=zeros:512", "dist=512"];
    let mut p = plan(&rt, "two_bands", TWO_BANDS, global, local, &[("dist", 512)]);
    assert!(p.guard_status().is_ok(), "{:?}", p.guard_status());
    let k = p.kernel();
    let a = k.arrays.iter().find(|a| a.name == "in").unwrap();
    let b = a.boxes.as_ref().expect("'in' has read runs");
    assert_eq!((b.strides.len(), b.read_parts.len()), (1, 2), "{b:?}");
    let nd = NdRange::new(global, local).unwrap();
    let pristine = args(&p, &specs);
    let mut want = pristine.clone();
    p.run_whole(0, &nd, &mut want).unwrap();
    let shares = [(0, 0.5), (1, 0.5)];
    let mut got = pristine.clone();
    let opts = LaunchOptions {
        verify: true,
        ..Default::default()
    };
    let r = launcher::launch(&mut p, &nd, &mut got, &shares, &opts).unwrap();
    assert!(r.split && !r.guard_fired && r.verified == Some(true), "{r}");
    assert_eq!(
        r.bytes_total,
        2 * 512 * 4 + 512 * 4,
        "the bands and out: {r}"
    );
    // a run one element short
    short_part_is_caught(&mut p, &nd, &pristine, &want, &shares, "in", "out");
}

/// The guard's flag buffers are kept zeroed between launches
/// and a configuration's launch work is cached; neither may hide a
/// violation. The same under-approximating configuration, launched again
/// and again (on two devices and on one) with clean launches in between,
/// fires every time, and each clean launch after a fired one is trusted.
#[test]
fn the_guard_fires_on_every_launch_of_a_cached_configuration() {
    let rt = runtime();
    let mut p = plan(&rt, "vadd", VADD, &[1024], &[64], &[]);
    let nd = NdRange::new(&[1024], &[64]).unwrap();
    let short = LaunchOptions {
        test_underapproximate: Some("a".into()),
        ..Default::default()
    };
    let clean = LaunchOptions::default();
    let half: &[(usize, f64)] = &[(0, 0.5), (1, 0.5)];
    let one: &[(usize, f64)] = &[(0, 1.0)];
    for round in 0..3u64 {
        for (shares, opts, fires) in [
            (half, &clean, false),
            (half, &short, true),
            (one, &short, true),
            (half, &clean, false),
            (one, &clean, false),
        ] {
            let pristine = args(
                &p,
                &[
                    &format!("a=rand:1024:{}", 10 + round),
                    &format!("b=rand:1024:{}", 20 + round),
                    "c=zeros:1024",
                ],
            );
            let mut want = pristine.clone();
            p.run_whole(0, &nd, &mut want).unwrap();
            let mut got = pristine.clone();
            let r = launcher::launch(&mut p, &nd, &mut got, shares, opts).unwrap();
            let what = format!("round {round}, shares {shares:?}, short {fires}");
            assert_eq!(r.guard_fired, fires, "{what}: {r}");
            assert_eq!(r.split, !fires, "{what}: {r}");
            assert_eq!(
                got.buffer("c").unwrap().as_bytes(),
                want.buffer("c").unwrap().as_bytes(),
                "{what}"
            );
        }
    }
}

/// Kernels viewing their buffers through pointers cast to wider
/// (`float4` over `float`) or narrower (`uchar` over `int`) elements, and
/// the array the test makes one element short.
const VIEW_KERNELS: &[(&str, &str, &[&str], &str, &str)] = &[
    (
        "view4",
        "__kernel void view4(__global const float *x, __global float *y) {
    int i = get_global_id(0);
    __global const float4 *x4 = (__global const float4 *)x;
    y[i] = x4[i].y + x4[i].z;
}",
        &["x=rand:1024:1", "y=zeros:256"],
        "x",
        "y",
    ),
    (
        "view_rw",
        "__kernel void view_rw(__global float *y, __global const float *x) {
    int i = get_global_id(0);
    ((__global float4 *)y)[i] += ((__global const float4 *)x)[i];
}",
        &["y=rand:1024:1", "x=rand:1024:2"],
        "y",
        "y",
    ),
    (
        "view_bytes",
        "__kernel void view_bytes(__global int *a) {
    int i = get_global_id(0);
    __global uchar *b = (__global uchar *)a;
    b[4 * i + 2] += 3;
}",
        &["a=seq:256"],
        "a",
        "a",
    ),
];

#[test]
fn the_guard_checks_accesses_through_views_and_catches_a_short_window() {
    let rt = runtime();
    let nd = NdRange::new(&[256], &[32]).unwrap();
    for (name, src, specs, short, out) in VIEW_KERNELS {
        let mut p = plan(&rt, name, src, &[256], &[32], &[]);
        assert!(p.guard_status().is_ok(), "{name}: {:?}", p.guard_status());
        let pristine = args(&p, specs);
        let mut want = pristine.clone();
        p.run_whole(0, &nd, &mut want).unwrap();
        for (shares, underapproximate) in [
            (&[(0, 0.5), (1, 0.5)][..], false),
            (&[(0, 0.75), (1, 0.25)][..], false),
            (&[(0, 0.5), (1, 0.5)][..], true),
        ] {
            let opts = LaunchOptions {
                verify: true,
                test_underapproximate: underapproximate.then(|| short.to_string()),
                ..Default::default()
            };
            let mut got = pristine.clone();
            let r = launcher::launch(&mut p, &nd, &mut got, shares, &opts).unwrap();
            // a correct split never fires; a window one element short does,
            // and the launch re-runs unsplit
            assert_eq!(r.guard_fired, underapproximate, "{name} {shares:?}: {r}");
            assert_eq!(r.split, !underapproximate, "{name} {shares:?}: {r}");
            assert_eq!(r.verified, Some(true), "{name} {shares:?}: {r}");
            assert_eq!(
                got.buffer(out).unwrap().as_bytes(),
                want.buffer(out).unwrap().as_bytes(),
                "{name} {shares:?}"
            );
        }
    }
}

/// An unsplit launch over kept buffers runs the guarded subkernel in
/// place on one device: a write the analysis did not see (here it is told
/// `c` is only read) goes to the sink, the written arrays get back what
/// only that device held, and the original kernel runs again there; the
/// result is the unsplit kernel's and nothing is lost.
#[test]
fn an_unseen_write_in_place_is_caught_and_run_again() {
    const ACC: &str = "__kernel void acc(__global const int *a, __global int *b, __global int *c) {
    int i = get_global_id(0);
    b[i] = b[i] * 3 + a[i];
    c[i] = c[i] * 2 + b[i];
}";
    let rt = runtime();
    let mut session = session::Session::from_source("acc.cl", ACC, &[]).unwrap();
    let config = session::LaunchConfig::new(&[1024], &[64]);
    let file = session.ranges_for_launch("acc", &config).unwrap();
    let mut ranges = file.kernels[0].clone();
    let plan_from_ranges = |r, src| Plan::from_kernel(&rt, r, src, &[]).unwrap();
    let splittable = plan_from_ranges(ranges.clone(), ACC);
    let mut reference = plan_from_ranges(ranges.clone(), ACC);
    ranges.splittable = false;
    ranges.reason = Some("made up: runs unsplit".into());
    for a in ranges.arrays.iter_mut().filter(|a| a.name == "c") {
        a.mode = ranges_format::Mode::R;
        a.write = None;
        a.write_slice = None;
        if a.read_slice.is_none() {
            a.read_slice = a.slice.clone();
        }
    }
    let mut blind = plan_from_ranges(ranges, ACC);
    assert!(blind.guard_status().is_ok(), "{:?}", blind.guard_status());
    let nd = NdRange::new(&[1024], &[64]).unwrap();
    let input = args(&blind, &["a=rand:1024:1", "b=rand:1024:2", "c=rand:1024:3"]);
    let kept = |n: &str| launcher::DeviceBuffer::new(input.buffer(n).unwrap().clone());
    let (mut a, mut b, mut c) = (kept("a"), kept("b"), kept("c"));
    let mut want = input.clone();
    let mut got = input.clone();
    let halves = [(0, 0.5), (1, 0.5)];
    let opts = LaunchOptions::default();
    // a split launch leaves `b` and `c` on the devices only, then the
    // blind plan runs unsplit in place, twice
    let mut splittable = splittable;
    for i in 0..3 {
        let p = if i == 0 { &mut splittable } else { &mut blind };
        let r = launcher::launch_resident(
            p,
            &nd,
            &mut got,
            &mut [(0, &mut a), (1, &mut b), (2, &mut c)],
            &halves,
            &opts,
        )
        .unwrap();
        assert_eq!(r.split, i == 0, "{r}");
        if i > 0 {
            assert!(r.notes.iter().any(|n| n.contains("caught a write")), "{r}");
        }
        reference.run_whole(0, &nd, &mut want).unwrap();
    }
    assert_eq!(b.read_all().unwrap(), want.buffer("b").unwrap());
    assert_eq!(c.read_all().unwrap(), want.buffer("c").unwrap());
}
