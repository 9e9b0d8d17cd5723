#!/usr/bin/env bash
# Builds clpart's C API and installs it under PREFIX:
#   lib/libclpart.so.MAJOR.MINOR.PATCH (SONAME libclpart.so.MAJOR), with the
#     symlinks lib/libclpart.so.MAJOR and lib/libclpart.so
#   lib/libclpart.a, include/clpart.h
#   lib/pkgconfig/clpart.pc and clpart-static.pc
#   lib/cmake/clpart/clpartConfig.cmake and clpartConfigVersion.cmake
#     (find_package(clpart): targets clpart::clpart, clpart::clpart_static)
# so that `cc app.c $(pkg-config --cflags --libs clpart)` and CMake's
# `target_link_libraries(app PRIVATE clpart::clpart)` work.
#
# usage: scripts/install-capi.sh [--no-build] [--from DIR] [PREFIX]
#   PREFIX       install prefix (default /usr/local)
#   --no-build   do not run cargo; install what DIR already holds
#   --from DIR   where the built libraries are (default: the release
#                directory of $CARGO_TARGET_DIR, or target/release)
#
# With the default prefix (or any prefix whose lib directory the dynamic
# linker knows), ldconfig runs after installing. For another prefix, the
# link flags of clpart.pc and of clpart::clpart carry -Wl,-rpath,PREFIX/lib,
# so programs built with them run without LD_LIBRARY_PATH; point
# PKG_CONFIG_PATH at PREFIX/lib/pkgconfig, or CMAKE_PREFIX_PATH at PREFIX.
# Uses sudo when the prefix is not writable.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
fail() { echo "install-capi: $*" >&2; exit 2; }
build=1
from=""
prefix=""
while [ $# -gt 0 ]; do
    case "$1" in
        --no-build) build=0 ;;
        --from) from="${2:?--from needs a directory}"; shift ;;
        -h|--help) usage; exit 0 ;;
        -*) fail "unknown option '$1' (valid: --no-build, --from DIR, PREFIX)" ;;
        *) [ -z "$prefix" ] || fail "more than one PREFIX ('$prefix', '$1')"
           prefix="$1" ;;
    esac
    shift
done
prefix="${prefix:-/usr/local}"
case "$prefix" in /*) ;; *) prefix="$(pwd)/$prefix" ;; esac
from="${from:-${CARGO_TARGET_DIR:-$root/target}/release}"

if [ "$build" = 1 ]; then
    [ -f "$root/scripts/env.sh" ] && source "$root/scripts/env.sh"
    (cd "$root" && cargo build --release -p clpart-capi)
fi
for f in libclpart.so libclpart.a; do
    [ -f "$from/$f" ] || fail "'$from/$f' does not exist (build it, or give --from DIR)"
done

# The version: the header's, which tests/header.rs keeps equal to Cargo's.
header="$root/capi/include/clpart.h"
version="$(sed -n 's/^#define CLPART_VERSION_STRING "\(.*\)"$/\1/p' "$header")"
[[ "$version" =~ ^([0-9]+)\.[0-9]+\.[0-9]+$ ]] \
    || fail "'$header' has no CLPART_VERSION_STRING \"MAJOR.MINOR.PATCH\" (found '$version')"
major="${BASH_REMATCH[1]}"
soname="libclpart.so.$major"
real="libclpart.so.$version"
dynamic="$(LC_ALL=C readelf -d "$from/libclpart.so")"
built_soname="$(sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p' <<<"$dynamic")"
[ "$built_soname" = "$soname" ] \
    || fail "'$from/libclpart.so' has SONAME '$built_soname', expected '$soname' (rebuild it: cargo build --release -p clpart-capi)"

# What a static link needs besides libclpart.a: the shared libraries the
# shared build links (libclang, PolyLib, ...) by their exact file names,
# and what the Rust standard library needs.
private=""
for lib in $(sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' <<<"$dynamic"); do
    case "$lib" in
        libc.so.*|ld-linux*|libgcc_s.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|libutil.so.*) ;;
        *) private="$private -l:$lib" ;;
    esac
done
private="${private# } -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"

libdir="$prefix/lib"
includedir="$prefix/include"

# Whether the dynamic linker searches libdir: then ldconfig runs after
# installing; otherwise the link flags carry an rpath to libdir.
known=0
case "$libdir" in /usr/local/lib|/usr/lib|/lib) known=1 ;; esac
if [ "$known" = 0 ] && [ -d /etc/ld.so.conf.d ] && grep -qsx "$libdir" /etc/ld.so.conf /etc/ld.so.conf.d/*.conf; then
    known=1
fi

# Values of the templates' @NAME@s.
declare -A value=(
    [PREFIX]="$prefix" [LIBDIR]="$libdir" [INCLUDEDIR]="$includedir"
    [VERSION]="$version" [VERSION_MAJOR]="$major"
    [PRIVATE_LIBS]="$private" [PRIVATE_LIBS_CMAKE]="${private// /;}"
)
if [ "$known" = 1 ]; then
    value[RPATH_FLAG]="" value[RPATH]="FALSE"
else
    value[RPATH_FLAG]=' -Wl,-rpath,${libdir}' value[RPATH]="TRUE"
fi
# Writes template $1 to $2 with every @NAME@ replaced by value[NAME] (taken
# literally: no character of a value is special); fails on an unknown one.
subst() {
    local text name
    text="$(<"$1")"
    for name in "${!value[@]}"; do
        text="${text//"@$name@"/"${value[$name]}"}"
    done
    if [[ "$text" =~ @[A-Z_]+@ ]]; then
        fail "'$1' names ${BASH_REMATCH[0]}, which has no value"
    fi
    printf '%s\n' "$text" > "$2"
}

SUDO=""
probe="$prefix"
while [ ! -e "$probe" ]; do probe="$(dirname "$probe")"; done
if [ ! -w "$probe" ] || { [ -e "$libdir" ] && [ ! -w "$libdir" ]; }; then
    [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && SUDO="sudo"
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for t in clpart.pc clpart-static.pc clpartConfig.cmake clpartConfigVersion.cmake; do
    subst "$root/capi/$t.in" "$tmp/$t"
done

$SUDO install -d "$libdir/pkgconfig" "$libdir/cmake/clpart" "$includedir"
$SUDO install -m 0755 "$from/libclpart.so" "$libdir/$real"
$SUDO ln -sfn "$real" "$libdir/$soname"
$SUDO ln -sfn "$soname" "$libdir/libclpart.so"
$SUDO install -m 0644 "$from/libclpart.a" "$libdir/libclpart.a"
$SUDO install -m 0644 "$header" "$includedir/clpart.h"
$SUDO install -m 0644 "$tmp/clpart.pc" "$tmp/clpart-static.pc" "$libdir/pkgconfig/"
$SUDO install -m 0644 "$tmp/clpartConfig.cmake" "$tmp/clpartConfigVersion.cmake" "$libdir/cmake/clpart/"

if [ "$known" = 1 ] && command -v ldconfig >/dev/null; then
    $SUDO ldconfig
fi

echo "install-capi: installed clpart $version into $prefix"
if ! PKG_CONFIG_PATH="" pkg-config --exists clpart 2>/dev/null \
    || [ "$(PKG_CONFIG_PATH="" pkg-config --variable=prefix clpart 2>/dev/null)" != "$prefix" ]; then
    echo "install-capi: pkg-config does not search $libdir/pkgconfig by default: export PKG_CONFIG_PATH=$libdir/pkgconfig"
    echo "install-capi: for CMake's find_package(clpart): -DCMAKE_PREFIX_PATH=$prefix"
fi
if [ "$known" = 0 ]; then
    echo "install-capi: programs linked with clpart.pc or clpart::clpart find $libdir by their rpath"
fi
