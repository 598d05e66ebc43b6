#!/usr/bin/env bash
# Evidence for: docs/benchmarks.md, "CPU kernels against torch.add".
# Builds lab/cpu_sum_bench.cpp against the installed vecadd (its public headers and libvecadd, as
# a downstream project would) and the installed torch (libtorch, for at::add_out), then runs it
# with the arguments given (see that file). Run from any folder, with the Python whose vecadd
# and torch are to be compared first on PATH (or PYTHON=...).
set -euo pipefail
python=${PYTHON:-python3}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
torch_dir=$("$python" -c 'import os, torch; print(os.path.dirname(torch.__file__))')
vecadd_lib=$(dirname "$(dirname "$("$python" -m vecadd --cmakedir)")")
build=${BUILD_DIR:-/tmp/vecadd-cpu-sum-bench}
mkdir -p "$build"
binary=$build/cpu_sum_bench
if [ ! -x "$binary" ] || [ "$here/cpu_sum_bench.cpp" -nt "$binary" ] ||
   [ "$vecadd_lib/libvecadd.so" -nt "$binary" ]; then
  # at::parallel_for is inline: compiled with torch's OpenMP, as the native binding is.
  ${CXX:-g++} -O2 -std=c++20 -fopenmp -D_GLIBCXX_USE_CXX11_ABI=1 \
    $("$python" -m vecadd --includes) -isystem "$torch_dir/include" \
    -isystem "$torch_dir/include/torch/csrc/api/include" "$here/cpu_sum_bench.cpp" \
    -L"$vecadd_lib" -lvecadd -L"$torch_dir/lib" -ltorch_cpu -lc10 -lgomp \
    -Wl,-rpath,"$vecadd_lib" -Wl,-rpath,"$torch_dir/lib" -o "$binary"
fi
exec "$binary" "$@"
