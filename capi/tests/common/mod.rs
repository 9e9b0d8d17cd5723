//! Shared by the example tests: install the C API into a temporary prefix
//! with `scripts/install-capi.sh` (from the libraries cargo built for this
//! test run) and build the C examples against it with pkg-config.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Where cargo put `libclpart.so` and `libclpart.a` for this test run:
/// `target/<profile>/deps`, beside the test binary (cargo builds every
/// crate type of the library there for the tests; `cargo build` copies them
/// to `target/<profile>`, which a test run does not refresh).
pub fn artifacts() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().to_path_buf();
    for lib in ["libclpart.so", "libclpart.a"] {
        assert!(
            dir.join(lib).is_file(),
            "{} is missing: cargo builds it with the tests of clpart-capi",
            dir.join(lib).display()
        );
    }
    dir
}

/// An installed C API and the examples built against it.
pub struct Installed {
    /// Keeps the temporary directory alive.
    pub dir: tempfile::TempDir,
    /// The install prefix.
    pub prefix: PathBuf,
    /// Where the example binaries are.
    pub bin: PathBuf,
}

impl Installed {
    pub fn pkg_config_path(&self) -> PathBuf {
        self.prefix.join("lib/pkgconfig")
    }

    /// A command with the environment an application needs: clpart's
    /// pkg-config files and shared library, two PoCL devices.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env("PKG_CONFIG_PATH", self.pkg_config_path())
            .env("LD_LIBRARY_PATH", self.prefix.join("lib"))
            .env("POCL_DEVICES", "pthread basic");
        c
    }

    /// Runs a shell line in this environment, in the repository root.
    pub fn sh(&self, line: &str) -> Output {
        let out = self
            .command("sh")
            .arg("-c")
            .arg(line)
            .current_dir(repo())
            .output()
            .unwrap();
        assert!(out.status.success(), "`{line}` failed:\n{}", text(&out));
        out
    }
}

/// stdout and stderr of a finished command.
pub fn text(out: &Output) -> String {
    format!(
        "--- stdout\n{}--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Installs this test run's libraries into `prefix` with
/// `scripts/install-capi.sh --no-build --from`; returns its output.
pub fn install(prefix: &Path) -> Output {
    let out = Command::new("bash")
        .arg(repo().join("scripts/install-capi.sh"))
        .arg("--no-build")
        .arg("--from")
        .arg(artifacts())
        .arg(prefix)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "install-capi.sh failed:\n{}",
        text(&out)
    );
    out
}

/// Installs into a temporary prefix and builds `vadd` and `matmul` with
/// `make -C examples` (pkg-config --cflags --libs clpart OpenCL).
pub fn install_and_build() -> Installed {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("prefix");
    let bin = dir.path().join("bin");
    install(&prefix);
    for f in [
        "lib/libclpart.so",
        "lib/libclpart.a",
        "include/clpart.h",
        "lib/pkgconfig/clpart.pc",
        "lib/pkgconfig/clpart-static.pc",
    ] {
        assert!(prefix.join(f).is_file(), "{f} is not installed");
    }
    let installed = Installed { dir, prefix, bin };
    let out = installed
        .command("make")
        .arg("-C")
        .arg(repo().join("examples"))
        .arg(format!("OUT={}", installed.bin.display()))
        .arg("CFLAGS=-O1 -g -Wall -Wextra -Werror")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "make -C examples failed:\n{}",
        text(&out)
    );
    installed
}
