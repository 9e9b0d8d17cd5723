#!/usr/bin/env bash
# Packs what `scripts/gpu-run.sh` needs on a lent GPU machine (a bare image
# with NVIDIA's driver and no OpenCL loader, PoCL or LLVM) into
# .gpu/bundle.tar.xz: the release `clpart`, range files made here (so the
# machine needs no libclang), the ICD loader (ocl-icd), PoCL 3.1 with the
# LLVM 15 it links, clinfo, and libpolylib64. Debian 12 packages only.
# Usage: bash scripts/gpu-bundle.sh   (after cargo build --release)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
debs=(libpocl2 libpocl2-common pocl-opencl-icd clang-15 libclang-common-15-dev
      libllvm15 libclang-cpp15 libz3-4 libicu72 libxml2 libedit2 libhwloc15
      ocl-icd-libopencl1 clinfo libbsd0 libmd0 libtinfo6)
(cd "$work" && apt-get download "${debs[@]}" >/dev/null 2>&1)
mkdir -p "$work/root"
for f in "$work"/*.deb; do dpkg -x "$f" "$work/root"; done
b=$work/b
mkdir -p "$b"/{lib,bin,ron} "$b"/sys/usr/share/pocl "$b"/sys/usr/lib/x86_64-linux-gnu/pocl \
         "$b"/sys/usr/lib/llvm-15/bin "$b"/sys/usr/lib/llvm-15/lib/clang/15.0.6
for so in libLLVM-15.so.1 libclang-cpp.so.15 libz3.so.4 libicudata.so.72 libicuuc.so.72 \
          libxml2.so.2 libedit.so.2 libbsd.so.0 libmd.so.0 libtinfo.so.6 libhwloc.so.15 \
          libpocl.so.2 libOpenCL.so.1; do
    f=$(find "$work/root" -name "$so*" | head -1)
    cp -L "$f" "$b/lib/$so"
done
cp -L /lib/x86_64-linux-gnu/libpolylib64.so.8 "$b/lib/"
r=$work/root
cp -a "$r/usr/share/pocl/include" "$b/sys/usr/share/pocl/"
# The kernel libraries of CPUs such a machine has (the rest would not fit).
for v in GENERIC avx2 avx512; do
    cp "$r/usr/share/pocl/kernel-x86_64-pc-linux-gnu-$v.bc" "$b/sys/usr/share/pocl/"
done
cp "$r"/usr/lib/x86_64-linux-gnu/pocl/*.so "$b/sys/usr/lib/x86_64-linux-gnu/pocl/"
cp -a "$r"/usr/lib/llvm-15/bin/* "$b/sys/usr/lib/llvm-15/bin/"
cp -a "$r/usr/lib/llvm-15/lib/clang/15.0.6/include" "$b/sys/usr/lib/llvm-15/lib/clang/15.0.6/"
cp "$r/usr/bin/clinfo" "$b/bin/"
strip -o "$b/bin/clpart" target/release/clpart
# Range files: analysis here, launches there.
for f in linear_algebra/matmul basics/mdh basics/vadd stencils/stencil2d; do
    k=${f#*/}
    target/release/clpart analyze "kernels/$f.cl" --kernel "$k" -o "$b/ron/$k.ron" >/dev/null
done
target/release/clpart analyze kernels/work_groups/random_walk.cl --local 32 -o "$b/ron/random_walk.ron" >/dev/null
mkdir -p .gpu
tar -C "$b" -cf - . | xz -9 -T2 > .gpu/bundle.tar.xz.part
mv .gpu/bundle.tar.xz.part .gpu/bundle.tar.xz
cp scripts/gpu-run.sh .gpu/run.sh
ls -la .gpu
