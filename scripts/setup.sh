#!/usr/bin/env bash
# Installs the system packages clpart needs (Debian 12), only those missing.
# Run as root (or with sudo available). Idempotent.
set -euo pipefail
pkgs=(libclang-19-dev libpolylib64-dev ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd clinfo
      autoconf automake libtool pkg-config gcc make valgrind python3 python3-pip
      cmake  # find_package(clpart) in capi/tests/install.rs
      librsvg2-bin  # librsvg2-bin: rsvg-convert renders the --svg pictures in cli/tests/svg.rs
      openmpi-bin libopenmpi-dev iproute2)  # the `mpi` feature and its tests (cli/tests/mpi.rs: mpirun, ip netns)
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
fetch_barvinok() {
    # Each step checked explicitly (set -e does not apply on the left of ||).
    local tmp py rc
    py="$(command -v python3 || command -v python)" || return 1
    tmp="$(mktemp -d)" || return 1
    rc=0
    "$py" -m pip download --quiet --no-deps --only-binary=:all: \
        --python-version 3.11 --platform manylinux_2_28_x86_64 \
        -d "$tmp" 'islpy-barvinok==2026.2.2' >&2 || rc=1
    if [ $rc -eq 0 ]; then
        "$py" - "$tmp" <<'PY' || rc=1
import glob, os, sys, zipfile
wheels = glob.glob(os.path.join(sys.argv[1], "islpy_barvinok-*.whl"))
if len(wheels) != 1:
    sys.exit("setup: expected one islpy-barvinok wheel, found %d" % len(wheels))
with zipfile.ZipFile(wheels[0]) as z:
    names = [n for n in z.namelist() if n.startswith("islpy_barvinok.libs/") and ".so" in n]
    if not any("libbarvinok" in n for n in names):
        sys.exit("setup: the wheel has no libbarvinok")
    z.extractall(os.path.join(sys.argv[1], "x"), names)
PY
    fi
    if [ $rc -eq 0 ]; then
        mkdir -p "$bv_dir" && cp "$tmp"/x/islpy_barvinok.libs/* "$bv_dir"/ || rc=1
    fi
    rm -rf "$tmp"
    return $rc
}
if ! ls "$bv_dir"/libbarvinok*.so* "$bv_dir"/islpy_barvinok.libs/libbarvinok*.so* >/dev/null 2>&1; then
    if fetch_barvinok; then
        echo "setup: barvinok libraries in $bv_dir" >&2
    else
        echo "setup: barvinok not fetched (counts will come from PolyLib); see README" >&2
    fi
fi
