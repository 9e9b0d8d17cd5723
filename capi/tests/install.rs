//! The installed C library as a C user meets it: `scripts/install-capi.sh`
//! into a fresh prefix gives `libclpart.so.MAJOR.MINOR.PATCH` with its
//! SONAME and symlinks, and `examples/vadd.c` built against that prefix,
//! with pkg-config and with CMake's `find_package(clpart)`, runs without
//! `LD_LIBRARY_PATH`: the link flags give the program an rpath to the
//! prefix's `lib` (kept by `cmake --install`). A small program checks the
//! header's version macros against `clpart_version()`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{install, repo, text};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `libclpart.so.MAJOR`, the SONAME.
fn soname() -> String {
    format!("libclpart.so.{}", env!("CARGO_PKG_VERSION_MAJOR"))
}

/// Prints the library's and the header's versions; fails when they differ.
const VERSION_C: &str = r#"#define CL_TARGET_OPENCL_VERSION 120
#include <clpart.h>
#include <stdio.h>
#include <string.h>
int main(void) {
    printf("%s %s %d.%d.%d\n", clpart_version(), CLPART_VERSION_STRING,
           CLPART_VERSION_MAJOR, CLPART_VERSION_MINOR, CLPART_VERSION_PATCH);
    return strcmp(clpart_version(), CLPART_VERSION_STRING) != 0;
}
"#;

/// A fresh prefix with clpart installed in it.
struct Prefix {
    dir: tempfile::TempDir,
    path: PathBuf,
}

impl Prefix {
    fn new() -> Prefix {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prefix");
        install(&path);
        Prefix { dir, path }
    }

    fn lib(&self) -> PathBuf {
        self.path.join("lib")
    }

    /// A folder of the temporary directory, created.
    fn scratch(&self, name: &str) -> PathBuf {
        let d = self.dir.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}

/// Runs a command to success; returns its stdout.
fn run(c: &mut Command) -> String {
    let out: Output = c.output().unwrap_or_else(|e| panic!("{c:?}: {e}"));
    assert!(out.status.success(), "{c:?} failed:\n{}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs a built program as a user would after installing: two PoCL
/// devices and no `LD_LIBRARY_PATH` (cargo sets one for its tests). Checks
/// that the dynamic linker takes libclpart from the prefix.
fn run_installed(program: &Path, prefix: &Prefix) -> String {
    let mut c = Command::new(program);
    c.env_remove("LD_LIBRARY_PATH")
        .env("POCL_DEVICES", "pthread basic");
    let stdout = run(&mut c);
    let ldd = run(Command::new("ldd")
        .arg(program)
        .env_remove("LD_LIBRARY_PATH"));
    let want = format!("{} => {}", soname(), prefix.lib().join(soname()).display());
    assert!(
        ldd.contains(&want),
        "{} does not load libclpart from the prefix ({want}):\n{ldd}",
        program.display()
    );
    stdout
}

/// vadd's verdict is its last line.
fn assert_passed(stdout: &str, program: &str) {
    assert_eq!(stdout.lines().last(), Some("PASS"), "{program}:\n{stdout}");
}

fn assert_version_output(stdout: &str) {
    assert_eq!(stdout.trim(), format!("{VERSION} {VERSION} {VERSION}"));
}

#[test]
fn install_gives_versioned_library_with_soname_and_symlinks() {
    let prefix = Prefix::new();
    let lib = prefix.lib();
    let real = format!("libclpart.so.{VERSION}");
    assert!(lib.join(&real).is_file(), "{real} is not installed");
    assert_eq!(
        std::fs::read_link(lib.join(soname())).unwrap(),
        PathBuf::from(&real)
    );
    assert_eq!(
        std::fs::read_link(lib.join("libclpart.so")).unwrap(),
        PathBuf::from(soname())
    );
    let dynamic = run(Command::new("readelf")
        .arg("-d")
        .arg(lib.join(&real))
        .env("LC_ALL", "C"));
    let line = dynamic
        .lines()
        .find(|l| l.contains("(SONAME)"))
        .unwrap_or_else(|| panic!("{real} has no SONAME:\n{dynamic}"));
    assert!(
        line.ends_with(&format!("Library soname: [{}]", soname())),
        "{line}"
    );
    for f in [
        "lib/libclpart.a",
        "include/clpart.h",
        "lib/pkgconfig/clpart.pc",
        "lib/pkgconfig/clpart-static.pc",
        "lib/cmake/clpart/clpartConfig.cmake",
        "lib/cmake/clpart/clpartConfigVersion.cmake",
    ] {
        assert!(prefix.path.join(f).is_file(), "{f} is not installed");
    }
}

#[test]
fn vadd_built_with_pkg_config_runs_without_ld_library_path() {
    let prefix = Prefix::new();
    let bin = prefix.scratch("bin");
    let pkg_config = |args: &[&str]| {
        run(Command::new("pkg-config")
            .args(args)
            .env("PKG_CONFIG_PATH", prefix.lib().join("pkgconfig")))
    };
    assert_eq!(pkg_config(&["--modversion", "clpart"]).trim(), VERSION);
    assert_eq!(
        pkg_config(&["--variable=prefix", "clpart"]).trim(),
        prefix.path.display().to_string()
    );
    let flags = pkg_config(&["--cflags", "--libs", "clpart"]);
    let rpath = format!("-Wl,-rpath,{}", prefix.lib().display());
    assert!(flags.contains(&rpath), "no {rpath} in: {flags}");

    let version_c = prefix.scratch("src").join("version.c");
    std::fs::write(&version_c, VERSION_C).unwrap();
    for (src, exe) in [
        (repo().join("examples/vadd.c"), bin.join("vadd")),
        (version_c, bin.join("version")),
    ] {
        run(Command::new("cc")
            .arg(&src)
            .arg("-o")
            .arg(&exe)
            .args(flags.split_whitespace())
            .arg("-lm"));
    }
    assert_passed(&run_installed(&bin.join("vadd"), &prefix), "vadd");
    assert_version_output(&run_installed(&bin.join("version"), &prefix));
}

#[test]
fn vadd_built_with_cmake_find_package_runs_without_ld_library_path() {
    let cmake = Command::new("cmake").arg("--version").output();
    assert!(
        cmake.is_ok_and(|o| o.status.success()),
        "cmake is not installed: run scripts/setup.sh (it installs cmake)"
    );
    let prefix = Prefix::new();
    let src = prefix.scratch("src");
    let build = prefix.dir.path().join("build");
    std::fs::write(src.join("version.c"), VERSION_C).unwrap();
    let vadd = repo().join("examples/vadd.c").display().to_string();
    std::fs::write(
        src.join("CMakeLists.txt"),
        format!(
            r#"cmake_minimum_required(VERSION 3.16)
project(app C)
find_package(clpart {VERSION} REQUIRED)
add_executable(vadd "{vadd}")
target_link_libraries(vadd PRIVATE clpart::clpart m)
add_executable(vadd_static "{vadd}")
target_link_libraries(vadd_static PRIVATE clpart::clpart_static m)
add_executable(version version.c)
target_link_libraries(version PRIVATE clpart::clpart)
install(TARGETS vadd)
"#
        ),
    )
    .unwrap();
    run(Command::new("cmake")
        .arg("-S")
        .arg(&src)
        .arg("-B")
        .arg(&build)
        .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.path.display())));
    run(Command::new("cmake").arg("--build").arg(&build));

    assert_passed(&run_installed(&build.join("vadd"), &prefix), "vadd");
    assert_version_output(&run_installed(&build.join("version"), &prefix));
    // `cmake --install` drops CMake's build rpath; clpart::clpart's link
    // option keeps the prefix's lib
    let app = prefix.dir.path().join("app");
    run(Command::new("cmake")
        .arg("--install")
        .arg(&build)
        .arg("--prefix")
        .arg(&app));
    assert_passed(
        &run_installed(&app.join("bin/vadd"), &prefix),
        "installed vadd",
    );
    // the static target: no libclpart.so at all
    let exe = build.join("vadd_static");
    let out = run(Command::new(&exe)
        .env_remove("LD_LIBRARY_PATH")
        .env("POCL_DEVICES", "pthread basic"));
    assert_passed(&out, "vadd_static");
    let ldd = run(Command::new("ldd").arg(&exe));
    assert!(
        !ldd.contains("libclpart"),
        "vadd_static links libclpart:\n{ldd}"
    );
}
