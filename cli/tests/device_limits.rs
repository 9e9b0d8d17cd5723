//! A launch larger than a device can run is refused before anything runs,
//! with one line naming the size and the limit (exit 2), instead of
//! crashing or hanging inside the driver (PoCL dies with SIGILL or SIGFPE
//! on 2^39 work-items and aborts on 2^40).

use clpart_tests::{assert_input_error, workspace_root as root};
use std::process::{Command, Output};

fn run(global: &str, local: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clpart"))
        .args([
            "run",
            "kernels/basics/vadd.cl",
            "--global",
            global,
            "--local",
            local,
        ])
        .args([
            "--arg",
            "a=rand:64",
            "--arg",
            "b=rand:64",
            "--arg",
            "c=zeros:64",
        ])
        .current_dir(root())
        .env("POCL_DEVICES", "pthread basic")
        .output()
        .expect("clpart runs")
}

#[test]
fn a_global_size_past_the_work_item_limit_is_refused() {
    for global in ["549755813888", "1099511627776", "4294967296"] {
        assert_input_error(
            &run(global, "64"),
            &format!("global size {global} in dimension 0 exceeds what device 0 ('"),
        );
        assert_input_error(&run(global, "64"), "can run: at most 4294967295 work-items");
    }
}

#[test]
fn a_work_group_past_the_device_limit_is_refused() {
    // PoCL's CPU devices take at most 4096 work-items in a work-group
    assert_input_error(
        &run("16384", "8192"),
        "local size 8192 (8192 work-items) exceeds what device 0 ('",
    );
}
