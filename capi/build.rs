//! Gives the shared library its SONAME, `libclpart.so.MAJOR` with Cargo's
//! major version: a program linked against `libclpart.so` records that name,
//! so it keeps running against any later `libclpart.so.MAJOR.MINOR.PATCH`
//! of the same major version and refuses another major version.
//! `scripts/install-capi.sh` installs the file under its full version with
//! the two usual symlinks and checks this name.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if matches!(os.as_str(), "macos" | "ios" | "windows") {
        // no ELF SONAME there (macOS has -install_name, not set here)
        return;
    }
    let major =
        std::env::var("CARGO_PKG_VERSION_MAJOR").expect("cargo sets CARGO_PKG_VERSION_MAJOR");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libclpart.so.{major}");
}
