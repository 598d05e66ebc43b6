#!/usr/bin/env bash
# Evidence for: docs/kernel-notes.md, "CPU kernels" (aarch64).
# The kernel library and its C++ tests (tests/cpp) cross-compiled for aarch64 with Debian's
# g++-aarch64-linux-gnu and run under qemu-aarch64 (user mode) by ctest: every dtype pair, layout
# and thread count of the CPU kernels, as on x86-64, without torch (tools/release/
# aarch64_emulated.py builds and tests the whole wheel in an arm64 root, in hours).
# Needs: apt-get install g++-aarch64-linux-gnu qemu-user-static. Usage: lab/aarch64_kernels.sh
# [BUILD_DIR], from anywhere; prints ctest's summary.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-/tmp/vecadd-aarch64-kernels}
cmake=${CMAKE:-cmake}
"$cmake" -S "$here" -B "$build" -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=aarch64 \
  -DCMAKE_CXX_COMPILER=aarch64-linux-gnu-g++ -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_CROSSCOMPILING_EMULATOR=qemu-aarch64-static;-L;/usr/aarch64-linux-gnu" \
  -DVECADD_PYTHON=OFF -DVECADD_CUDA=OFF -DVECADD_BUILD_TESTS=ON >/dev/null
"$cmake" --build "$build" >/dev/null
file "$build"/libvecadd.so.*.*.*
ctest --test-dir "$build" --output-on-failure
