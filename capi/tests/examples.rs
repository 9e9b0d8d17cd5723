//! The C examples (`examples/`), ordinary OpenCL host programs changed to
//! use clpart: installed API, built with pkg-config, run split over two PoCL
//! devices, checked against their CPU reference (they print PASS).

mod common;

use common::{install_and_build, text, Installed};

/// Runs an example and checks that it passed on two devices.
fn run_example(inst: &Installed, program: &str, args: &[&str]) -> String {
    let out = inst
        .command(inst.bin.join(program))
        .args(args)
        .output()
        .unwrap();
    let all = text(&out);
    assert!(out.status.success(), "{program} {args:?} failed:\n{all}");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(
        stdout.lines().last(),
        Some("PASS"),
        "{program} {args:?}:\n{all}"
    );
    assert!(
        stdout.contains(", split along dimension"),
        "{program} ran split:\n{all}"
    );
    assert!(
        stdout.contains("  device 0 ") && stdout.contains("  device 1 "),
        "{program} used both devices:\n{all}"
    );
    stdout
}

#[test]
fn examples_build_with_pkg_config_and_pass() {
    let inst = install_and_build();
    run_example(&inst, "vadd", &[]);
    run_example(&inst, "vadd", &["65536"]);
    let out = run_example(&inst, "matmul", &[]);
    assert!(out.contains("split 1 over 2 devices"), "{out}");
    // a different run-time width: a new analysis, still exact
    run_example(&inst, "matmul", &["48", "32"]);

    // the README's line, literally; and the static library
    inst.sh(
        "cc examples/vadd.c -o \"$0\" $(pkg-config --cflags --libs clpart)"
            .replace("$0", &inst.bin.join("vadd-pc").display().to_string())
            .as_str(),
    );
    run_example(&inst, "vadd-pc", &["1024"]);
    let static_bin = inst.bin.join("vadd-static");
    inst.sh(&format!(
        "cc examples/vadd.c -o {} $(pkg-config --cflags --libs clpart-static)",
        static_bin.display()
    ));
    let out = std::process::Command::new("ldd")
        .arg(&static_bin)
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("libclpart"),
        "vadd-static links libclpart.so"
    );
    let out = inst
        .command(&static_bin)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).ends_with("PASS\n"),
        "{}",
        text(&out)
    );
}

#[test]
fn report_structs_have_the_rust_layout_in_c() {
    use clpart::{clpart_device_report as D, clpart_report as R};
    use std::mem::{offset_of, size_of};
    let inst = install_and_build();
    let src = inst.dir.path().join("layout.c");
    std::fs::write(
        &src,
        r#"#define CL_TARGET_OPENCL_VERSION 120
#include <clpart.h>
#include <stdio.h>
#define F(T, f) printf(" %zu", offsetof(T, f))
int main(void) {
    printf("%zu", sizeof(clpart_report));
    F(clpart_report, split); F(clpart_report, verified); F(clpart_report, analyzed);
    F(clpart_report, split_dim); F(clpart_report, n_devices); F(clpart_report, bytes_total);
    F(clpart_report, bytes_whole_buffers); F(clpart_report, bytes_exact);
    F(clpart_report, analysis_ms); F(clpart_report, wall_ms);
    printf(" %zu", sizeof(clpart_device_report));
    F(clpart_device_report, device_index); F(clpart_device_report, work_groups);
    F(clpart_device_report, slice_begin); F(clpart_device_report, slice_end);
    F(clpart_device_report, bytes_to_device); F(clpart_device_report, bytes_from_device);
    F(clpart_device_report, kernel_ms);
    printf("\n");
    return 0;
}
"#,
    )
    .unwrap();
    let exe = inst.dir.path().join("layout");
    inst.sh(&format!(
        "cc -std=c99 -Wall -Werror -include stddef.h {} -o {} $(pkg-config --cflags --libs clpart) && {}",
        src.display(),
        exe.display(),
        exe.display()
    ));
    let out = inst.command(&exe).output().unwrap();
    let want = [
        size_of::<R>(),
        offset_of!(R, split),
        offset_of!(R, verified),
        offset_of!(R, analyzed),
        offset_of!(R, split_dim),
        offset_of!(R, n_devices),
        offset_of!(R, bytes_total),
        offset_of!(R, bytes_whole_buffers),
        offset_of!(R, bytes_exact),
        offset_of!(R, analysis_ms),
        offset_of!(R, wall_ms),
        size_of::<D>(),
        offset_of!(D, device_index),
        offset_of!(D, work_groups),
        offset_of!(D, slice_begin),
        offset_of!(D, slice_end),
        offset_of!(D, bytes_to_device),
        offset_of!(D, bytes_from_device),
        offset_of!(D, kernel_ms),
    ]
    .map(|v| v.to_string())
    .join(" ");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), want);
}
