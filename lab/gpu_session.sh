#!/usr/bin/env bash
# Evidence for: docs/benchmarks.md, "Rerun it" and "Memory and sanitizers", and docs/building.md,
# "Tests".
# Build vecadd on a GPU machine with the torch already installed there, run the whole test
# suite and the benchmark; logs and results go to $OUT (default: ./gpu-results).
# Usage: lab/gpu_session.sh [build] [test] [bench] [archs] [variants] [sanitize]
# (default: build test bench archs); runs from the repository root wherever it is called from.
set -uo pipefail
OUT=${OUT:-$PWD/gpu-results}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$(dirname "${BASH_SOURCE[0]}")/.."
steps=${*:-build test bench archs}
export PYTHONUNBUFFERED=1
python3 - <<'PY' 2>&1 | tee "$OUT/environment.txt"
import torch, platform, importlib.metadata as md
print("python", platform.python_version(), "torch", torch.__version__, "cuda", torch.version.cuda)
print("gpus", [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())])
for name in ("scikit-build-core", "pybind11", "cmake", "ninja", "pytest", "hypothesis", "triton"):
    try:
        print(name, md.version(name))
    except md.PackageNotFoundError:
        print(name, "missing")
PY
status=0
run() { echo "== $*"; "$@" || status=1; }
for step in $steps; do
  case $step in
    build)
      start=$(date +%s)
      # The default architecture list is what users get; do not inherit an image-wide choice.
      run env -u TORCH_CUDA_ARCH_LIST python3 -m pip install --no-build-isolation --no-deps -v . > "$OUT/build.log" 2>&1
      echo "build: $(( $(date +%s) - start )) s, status $status"; grep -E "vecadd:|error" "$OUT/build.log" | head -20
      run python3 -m vecadd info
      run python3 -m vecadd check ;;
    test)
      run python3 -m pytest -q -ra -p no:cacheprovider tests 2>&1 | tee "$OUT/pytest.log" | tail -25 ;;
    bench)
      run python3 -m vecadd bench --min-log2 10 --max-log2 28 \
        --json "$OUT/bench.json" --plot "$OUT/bench.png" 2>"$OUT/bench.err" | tee "$OUT/bench.txt"
      run python3 lab/call_cost.py --json "$OUT/call_cost.json" 2>>"$OUT/bench.err" |
        tee "$OUT/call_cost.txt"
      run python3 -m vecadd bench --min-log2 12 --max-log2 28 --step 4 --out no \
        --layouts unaligned,broadcast,per_row,transposed,mixed_order,channels_last_bias --json "$OUT/bench-layouts.json" 2>>"$OUT/bench.err" |
        tee "$OUT/bench-layouts.txt" ;;
    archs)
      run python3 -m pytest -q -ra -p no:cacheprovider -m "build" tests 2>&1 | tee "$OUT/archs.log" | tail -25 ;;
    variants)
      # Against the installed vecadd, as downstream code builds: public headers, its libraries.
      lib_dir=$(dirname "$(dirname "$(python3 -m vecadd --cmakedir)")")
      cuda_dir=$(python3 -c 'import vecadd; print(vecadd.build_info()["cuda_library"])')
      run nvcc -O3 -std=c++17 -arch=sm_90 -shared -Xcompiler -fPIC -DVECADD_WITH_CUDA=1 \
        $(python3 -m vecadd --includes) lab/kernel_variants.cu -L"$cuda_dir" -L"$lib_dir" \
        -lvecadd_cuda -lvecadd -Xlinker -rpath,"$cuda_dir" -Xlinker -rpath,"$lib_dir" -o /tmp/kernel_variants.so
      run python3 lab/kernel_variants.py /tmp/kernel_variants.so --dtypes "${VARIANT_DTYPES:-float16,bfloat16,float32}" ${VARIANT_ARGS:-} \
        2>&1 | tee "$OUT/variants.txt" ;;
    sanitize)
      # The CUDA cases of the suite, less the 12 GiB one, the thread storm (too slow here) and
      # the profiler ones (CUPTI and the sanitizer exclude each other).
      # racecheck instruments only vecadd's kernels: it checks shared-memory hazards, and
      # with torch's kernels instrumented too it managed 20 tests in 5 minutes.
      for tool in memcheck racecheck initcheck; do
        filter=()
        [ $tool = racecheck ] && filter=(--kernel-name kns=vecadd)
        run timeout "${SANITIZE_TIMEOUT:-200}" compute-sanitizer --tool $tool "${filter[@]}" --error-exitcode 9 \
          python3 -m pytest -q -x -p no:cacheprovider tests/test_cuda.py tests/test_add.py tests/test_autograd.py \
          -m "not profiler" -k "cuda and not more_than_two and not threads" > "$OUT/sanitize-$tool.log" 2>&1
        echo "$tool: $(grep -E "ERROR SUMMARY|passed|failed" "$OUT/sanitize-$tool.log" | tr '\n' ' ')"
      done ;;
  esac
done
exit $status
