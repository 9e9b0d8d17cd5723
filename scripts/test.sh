#!/usr/bin/env bash
# Installs what is missing and runs every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
# With barvinok's libraries in place (setup fetched them), the tests that
# need barvinok must not skip.
bv_dir="${CLPART_BARVINOK_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/clpart/barvinok}"
if ls "$bv_dir"/libbarvinok*.so* "$bv_dir"/islpy_barvinok.libs/libbarvinok*.so* >/dev/null 2>&1; then
    export CLPART_REQUIRE_BARVINOK=1
fi
if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --workspace --no-fail-fast
else
    cargo test --workspace --no-fail-fast
fi
# The ranks over MPI: the `mpi` feature's tests, wherever mpirun
# is installed (setup installs Open MPI, so on CI they always run).
if command -v mpirun >/dev/null 2>&1; then
    if cargo nextest --version >/dev/null 2>&1; then
        cargo nextest run -p clpart --features mpi --test mpi --no-fail-fast
    else
        cargo test -p clpart --features mpi --test mpi --no-fail-fast
    fi
else
    echo "test.sh: mpirun not found: the MPI tests (cli/tests/mpi.rs) did not run" >&2
fi
# Fuzzing (bounded, 20 s per target) on CI or when asked; a crash fails.
if [ -n "${CI:-}" ] || [ "${CLPART_FUZZ:-}" = 1 ]; then
    bash scripts/fuzz.sh "${CLPART_FUZZ_SECONDS:-20}"
fi
