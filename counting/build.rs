//! Builds the PolyLib bindings of `src/ffi.rs`.
//!
//! - compiles `csrc/polylib_shim.c` (exception-safe wrappers, see its header);
//! - runs bindgen over `csrc/polylib_shim.h`, which includes
//!   `<polylib/polylib64.h>` (Debian package `libpolylib64-dev`);
//! - links `polylib64`.
//!
//! bindgen needs libclang: clang-sys finds it in the usual places
//! (`/usr/lib/llvm-*/lib`, `llvm-config`); `LIBCLANG_PATH` overrides.

use std::env;
use std::path::PathBuf;

const POLYLIB_HEADER: &str = "/usr/include/polylib/polylib64.h";

fn main() {
    println!("cargo:rerun-if-changed=csrc/polylib_shim.c");
    println!("cargo:rerun-if-changed=csrc/polylib_shim.h");
    println!("cargo:rerun-if-changed={POLYLIB_HEADER}");
    println!("cargo:rerun-if-env-changed=LIBCLANG_PATH");

    if !std::path::Path::new(POLYLIB_HEADER).exists() {
        panic!(
            "counting: {POLYLIB_HEADER} not found; install PolyLib \
             (Debian: apt-get install libpolylib64-dev)"
        );
    }

    cc::Build::new()
        .file("csrc/polylib_shim.c")
        .include("csrc")
        .warnings(false)
        .compile("clpart_polylib_shim");
    println!("cargo:rustc-link-lib=dylib=polylib64");

    let bindings = bindgen::Builder::default()
        .header("csrc/polylib_shim.h")
        .allowlist_function("clpart_.*")
        .allowlist_function("Matrix_Alloc")
        .allowlist_function("Matrix_Free")
        .allowlist_function("Polyhedron_Free")
        .allowlist_function("Domain_Free")
        .allowlist_function("Enumeration_Free")
        .allowlist_function("Param_Polyhedron_Free")
        .allowlist_type("Matrix")
        .allowlist_type("Polyhedron")
        .allowlist_type("Enumeration")
        .allowlist_type("evalue")
        .allowlist_type("enode")
        .allowlist_type("enode_type")
        .allowlist_type("Param_Polyhedron")
        .allowlist_type("Param_Vertices")
        .allowlist_type("Param_Domain")
        .layout_tests(false)
        .derive_debug(false)
        .generate_comments(false)
        .generate()
        .unwrap_or_else(|e| panic!("counting: bindgen over {POLYLIB_HEADER} failed: {e}"));
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    bindings
        .write_to_file(out.join("polylib_bindings.rs"))
        .expect("counting: cannot write polylib_bindings.rs");
}
