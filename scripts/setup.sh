#!/usr/bin/env bash
# Installs the system packages clpart needs (Debian 12), only those missing.
# Run as root (or with sudo available). Idempotent.
set -euo pipefail
pkgs=(libclang-19-dev libpolylib64-dev ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd clinfo
      autoconf automake libtool pkg-config gcc make valgrind)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# barvinok (exact counts; GPL-2.0-or-later), optional: the libraries of PyPI's
# islpy-barvinok wheel, unpacked into $CLPART_BARVINOK_DIR or
# ${XDG_CACHE_HOME:-~/.cache}/clpart/barvinok. clpart loads them at run time
# (barvinok-sys); without them counts come from PolyLib and the report says why.
# A failure here is not fatal.
bv_dir="${CLPART_BARVINOK_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/clpart/barvinok}"
if ! ls "$bv_dir"/libbarvinok*.so* "$bv_dir"/islpy_barvinok.libs/libbarvinok*.so* >/dev/null 2>&1; then
    (
        set -e
        tmp="$(mktemp -d)"
        trap 'rm -rf "$tmp"' EXIT
        py="$(command -v python3 || command -v python)"
        "$py" -m pip download --quiet --no-deps --only-binary=:all: \
            --python-version 3.11 --platform manylinux_2_28_x86_64 \
            -d "$tmp" 'islpy-barvinok==2026.2.2' >&2
        "$py" - "$tmp"/islpy_barvinok-*.whl "$tmp/x" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("islpy_barvinok.libs/")])
PY
        mkdir -p "$bv_dir"
        cp "$tmp"/x/islpy_barvinok.libs/* "$bv_dir"/
        echo "setup: barvinok libraries in $bv_dir" >&2
    ) || echo "setup: barvinok not fetched (counts will come from PolyLib); see README" >&2
fi
