# Sourced by the scripts: environment for building clpart.
export LIBCLANG_PATH="${LIBCLANG_PATH:-/usr/lib/llvm-19/lib}"
