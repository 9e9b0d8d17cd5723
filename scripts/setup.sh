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
