#!/usr/bin/env bash
# Runs every cargo-fuzz (libFuzzer) target of fuzz/ for a bounded time:
#   scripts/fuzz.sh [SECONDS]   (default 20 s per target)
# Installs cargo-fuzz if missing; needs the nightly toolchain. Seeds: the
# golden range files, the frozen samples and fuzz/seeds/<target>/. A crash
# fails the script; its input is left in fuzz/artifacts/<target>/: copy it to
# fuzz/regressions/<target>/ (replayed by the normal test suite) and fix it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
SECONDS_EACH="${1:-20}"
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz
fi
targets=(range_file expr launch_plan)
for t in "${targets[@]}"; do
    corpus="fuzz/corpus/$t"
    mkdir -p "$corpus"
    cp -n fuzz/seeds/"$t"/* "$corpus"/ 2>/dev/null || true
    cp -n fuzz/regressions/"$t"/* "$corpus"/ 2>/dev/null || true
    if [ "$t" = range_file ]; then
        # Goldens up to 256 KiB: the largest (stencil3d's counts by parts,
        # 400 KiB) load in 90 ms in release but past libFuzzer's 10 s per
        # input under its instrumentation, and hold no structure the smaller
        # ones lack.
        find kernels/golden -name '*.ranges.ron' -size -256k -exec cp -n {} "$corpus"/ \;
        cp -n ranges-format/tests/data/v2_*.ranges.ron "$corpus"/
    fi
done
for t in "${targets[@]}"; do
    echo "fuzz: $t for ${SECONDS_EACH}s"
    (cd fuzz && cargo +nightly fuzz run "$t" "corpus/$t" -- \
        -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -timeout=10 -print_final_stats=0)
done
echo "fuzz: no crash in ${#targets[@]} targets"
