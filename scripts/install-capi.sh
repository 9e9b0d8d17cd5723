#!/usr/bin/env bash
# Builds clpart's C API and installs it:
#   PREFIX/lib/libclpart.so, PREFIX/lib/libclpart.a, PREFIX/include/clpart.h,
#   PREFIX/lib/pkgconfig/clpart.pc and clpart-static.pc
# so that `cc app.c $(pkg-config --cflags --libs clpart)` works.
#
# usage: scripts/install-capi.sh [--no-build] [--from DIR] [PREFIX]
#   PREFIX       install prefix (default /usr/local)
#   --no-build   do not run cargo; install what DIR already holds
#   --from DIR   where the built libraries are (default: the release
#                directory of $CARGO_TARGET_DIR, or target/release)
#
# With the default prefix (or any prefix whose lib directory the dynamic
# linker knows), ldconfig runs after installing. For another prefix, point
# PKG_CONFIG_PATH at PREFIX/lib/pkgconfig and LD_LIBRARY_PATH at PREFIX/lib.
# Uses sudo when the prefix is not writable.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build=1
from=""
prefix=""
while [ $# -gt 0 ]; do
    case "$1" in
        --no-build) build=0 ;;
        --from) from="${2:?--from needs a directory}"; shift ;;
        -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "install-capi: unknown option '$1' (valid: --no-build, --from DIR, PREFIX)" >&2; exit 2 ;;
        *) [ -z "$prefix" ] || { echo "install-capi: more than one PREFIX ('$prefix', '$1')" >&2; exit 2; }
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
    [ -f "$from/$f" ] || { echo "install-capi: '$from/$f' does not exist (build it, or give --from DIR)" >&2; exit 2; }
done

# What a static link needs besides libclpart.a: the shared libraries the
# shared build links (libclang, PolyLib, ...) by their exact file names,
# and what the Rust standard library needs.
needed="$(LC_ALL=C readelf -d "$from/libclpart.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')"
private=""
for lib in $needed; do
    case "$lib" in
        libc.so.*|ld-linux*|libgcc_s.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|libutil.so.*) ;;
        *) private="$private -l:$lib" ;;
    esac
done
private="${private# } -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"

version="$(sed -n 's/^version *= *"\(.*\)"/\1/p' "$root/Cargo.toml" | head -n1)"
libdir="$prefix/lib"
includedir="$prefix/include"

SUDO=""
probe="$prefix"
while [ ! -e "$probe" ]; do probe="$(dirname "$probe")"; done
if [ ! -w "$probe" ] || { [ -e "$libdir" ] && [ ! -w "$libdir" ]; }; then
    [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && SUDO="sudo"
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for pc in clpart clpart-static; do
    sed -e "s|@PREFIX@|$prefix|g" -e "s|@LIBDIR@|$libdir|g" -e "s|@INCLUDEDIR@|$includedir|g" \
        -e "s|@VERSION@|$version|g" -e "s|@PRIVATE_LIBS@|$private|g" \
        "$root/capi/$pc.pc.in" > "$tmp/$pc.pc"
done

$SUDO install -d "$libdir/pkgconfig" "$includedir"
$SUDO install -m 0755 "$from/libclpart.so" "$libdir/libclpart.so"
$SUDO install -m 0644 "$from/libclpart.a" "$libdir/libclpart.a"
$SUDO install -m 0644 "$root/capi/include/clpart.h" "$includedir/clpart.h"
$SUDO install -m 0644 "$tmp/clpart.pc" "$tmp/clpart-static.pc" "$libdir/pkgconfig/"

# Refresh the dynamic linker's cache when it searches this lib directory.
known=0
case "$libdir" in /usr/local/lib|/usr/lib|/lib) known=1 ;; esac
if [ "$known" = 0 ] && [ -d /etc/ld.so.conf.d ] && grep -qsx "$libdir" /etc/ld.so.conf /etc/ld.so.conf.d/*.conf; then
    known=1
fi
if [ "$known" = 1 ] && command -v ldconfig >/dev/null; then
    $SUDO ldconfig
fi

echo "install-capi: installed clpart $version into $prefix"
if ! PKG_CONFIG_PATH="" pkg-config --exists clpart 2>/dev/null \
    || [ "$(PKG_CONFIG_PATH="" pkg-config --variable=prefix clpart 2>/dev/null)" != "$prefix" ]; then
    echo "install-capi: pkg-config does not search $libdir/pkgconfig by default: export PKG_CONFIG_PATH=$libdir/pkgconfig"
fi
if [ "$known" = 0 ]; then
    echo "install-capi: the dynamic linker does not search $libdir: export LD_LIBRARY_PATH=$libdir (or link with -Wl,-rpath,$libdir)"
fi
