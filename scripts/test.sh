#!/usr/bin/env bash
# Installs what is missing and runs every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --workspace --no-fail-fast
else
    cargo test --workspace --no-fail-fast
fi
# Fuzzing (bounded, 20 s per target) on CI or when asked; a crash fails.
if [ -n "${CI:-}" ] || [ "${CLPART_FUZZ:-}" = 1 ]; then
    bash scripts/fuzz.sh "${CLPART_FUZZ_SECONDS:-20}"
fi
