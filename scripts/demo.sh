#!/usr/bin/env bash
# Installs what is missing, then the main job on PoCL CPU devices: analyze a
# kernel and run it split across two devices, verified against an unsplit run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
# the layer too: `clpart exec` looks for it beside `clpart`
cargo build --release -q -p clpart -p layer
clpart="${CARGO_TARGET_DIR:-target}/release/clpart"
echo "== clpart analyze kernels/linear_algebra/matmul.cl"
$clpart analyze kernels/linear_algebra/matmul.cl
export POCL_DEVICES="pthread basic"
echo "== clpart devices"
$clpart devices
echo "== clpart run kernels/linear_algebra/matmul.cl split 86% / 14% across two PoCL devices, verified"
$clpart run kernels/linear_algebra/matmul.cl --global 128,128 --local 16,16 --arg width=128 \
    --arg a=rand:16384:1 --arg b=rand:16384:2 --arg c=zeros:16384 \
    --split 0:0.86,1:0.14 --verify
