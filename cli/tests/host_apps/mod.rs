//! What the tests over the host programs of `tests/apps/` share: the
//! repository, the layer cargo built for the run, and a program built
//! with gcc against the ICD loader.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The layer cargo built for this test run (a dev-dependency: it lands in
/// `target/<profile>/deps`, beside the test binary).
pub fn layer() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let p = exe.parent().unwrap().join("libclpart_layer.so");
    assert!(
        p.is_file(),
        "{} is missing: cargo builds it as a dev-dependency of clpart",
        p.display()
    );
    p
}

/// Builds `tests/apps/<app>` into `dir`.
pub fn compile(app: &str, dir: &Path) -> PathBuf {
    let exe = dir.join(app);
    let out = Command::new("gcc")
        .args([
            "-O1",
            "-std=c99",
            "-Wall",
            "-DCL_TARGET_OPENCL_VERSION=120",
            "-Wno-deprecated-declarations",
            "-o",
        ])
        .arg(&exe)
        .arg(repo().join("tests/apps").join(app).join("main.c"))
        .args(["-lOpenCL", "-lm"])
        .output()
        .expect("gcc runs");
    assert!(
        out.status.success(),
        "gcc {app}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}
