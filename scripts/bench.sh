#!/usr/bin/env bash
# Installs what is missing, builds the release binaries and runs every
# benchmark (analysis time, launch overhead, bytes moved, co-execution,
# peak memory): prints the tables and writes bench-results.json (and
# bench-results.md). About 12 minutes on a 2-core machine (plus the first
# release build, about 10 minutes). Extra arguments
# go to clpart-bench (e.g. --quick, --only bytes,launch, --out FILE).
# Item 8 (`--only mpi`: clpart steps across MPI ranks, about 2 minutes)
# runs only when named; it builds clpart with the feature `mpi`. So do
# item 11 (`--only apps`: the host programs of tests/apps plain and under
# `clpart exec`) and item 12 (`--only mpi-exec`: the Jacobi program under
# `mpirun -n N clpart exec`, with clpart and the layer built with `mpi`).
# The layer is built with clpart every time: a layer from another build
# has other analysis-cache keys.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
features=()
case " $* " in
    *mpi*) features=(--features clpart/mpi,layer/mpi) ;;
esac
cargo build --release -q -p clpart -p layer -p clpart-bench "${features[@]}"
target="${CARGO_TARGET_DIR:-target}"
exec "$target/release/clpart-bench" --out bench-results.json --markdown bench-results.md "$@"
