#!/usr/bin/env bash
# Evidence for: docs/benchmarks.md, "Mixed dtypes on the GPU", and docs/kernel-notes.md, "Sums of
# mixed dtypes". One device call (under 10 minutes on one H100 or H200) for the kernel library's
# sums of mixed dtypes, against the vecadd wheel in WHEEL_FOLDER (built with its CUDA library, e.g.
#   pip wheel --no-build-isolation --no-deps -w WHEELS -C cmake.define.CMAKE_CUDA_ARCHITECTURES=90 .
# on the development machine):
# 1. installs it (no network: --no-index, no dependencies);
# 2. builds the C++ tests of tests/cpp against the installed headers and libraries (as downstream
#    code builds) and runs them: test_add_cuda (add_cuda, and sum_cuda for every dtype pair,
#    constant, out dtype and layout against the reference) and test_sum_cpu;
# 3. builds lab/sum_cuda_shim.cu the same way and times sum_cuda's kernels beside torch.add's
#    (lab/gpu_sum_kernels.py: mixed dtypes, a Python number, same-dtype; 2^16-2^26, CUPTI);
# 4. times vecadd.add's own kernels (lab/kernel_durations.py), the same-dtype reference table.
# Each step runs under its own time limit; everything lands in $OUT (default /tmp/vecadd-sum):
# steps.log, tests.txt, sum_kernels.{txt,json}, kernel_add.{txt,json}.
# Usage: lab/gpu_sum_kernels.sh WHEEL_FOLDER, from the checkout the wheel was built from.
set -uo pipefail
wheels=$1
out=${OUT:-/tmp/vecadd-sum}
rounds=${SUM_ROUNDS:-5}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PYTHONUNBUFFERED=1
build=$(mktemp -d)

step() {  # LIMIT COMMAND...
  local limit=$1 start=$SECONDS
  shift
  echo "+ $* (limit ${limit}s)"
  timeout "$limit" "$@"
  echo "(exit $?, $((SECONDS - start)) s)"
}

main() {
  python3 -m pip install -q --no-deps --no-index --force-reinstall "$wheels"/vecadd-*.whl
  python3 -m vecadd info
  local includes lib cuda_dir
  includes=$(python3 -m vecadd --includes)
  lib=$(dirname "$(dirname "$(python3 -m vecadd --cmakedir)")")
  cuda_dir=$(python3 -c 'import vecadd; print(vecadd.build_info()["cuda_library"])')
  local link=(-L"$cuda_dir" -L"$lib" -lvecadd_cuda -lvecadd -Xlinker -rpath,"$cuda_dir"
    -Xlinker -rpath,"$lib")
  # shellcheck disable=SC2086
  step 240 nvcc -O2 -std=c++17 -arch=native -DVECADD_WITH_CUDA=1 $includes -Itests/cpp \
    tests/cpp/test_add_cuda.cu "${link[@]}" -o "$build/test_add_cuda"
  # shellcheck disable=SC2086
  step 120 g++ -O2 -std=c++17 $includes -Itests/cpp tests/cpp/test_sum_cpu.cpp -L"$lib" \
    -lvecadd -Wl,-rpath,"$lib" -o "$build/test_sum_cpu"
  {
    step 150 "$build/test_add_cuda"
    step 60 "$build/test_sum_cpu"
  } 2>&1 | tee "$out/tests.txt"
  # shellcheck disable=SC2086
  step 120 nvcc -O3 -std=c++17 -shared -Xcompiler -fPIC -DVECADD_WITH_CUDA=1 $includes \
    lab/sum_cuda_shim.cu "${link[@]}" -o "$build/sum_cuda_shim.so"
  step 200 python3 lab/gpu_sum_kernels.py "$build/sum_cuda_shim.so" --rounds "$rounds" \
    --min-log2 16 --max-log2 26 --step 2 --json "$out/sum_kernels.json" |
    tee "$out/sum_kernels.txt"
  step 150 python3 lab/kernel_durations.py --op add --out no --rounds "$rounds" \
    --dtypes float32,float16,bfloat16,int64 --min-log2 16 --max-log2 26 --step 2 \
    --json "$out/kernel_add.json" | tee "$out/kernel_add.txt"
  echo "done in $SECONDS s"
}
main 2>&1 | tee "$out/steps.log"
