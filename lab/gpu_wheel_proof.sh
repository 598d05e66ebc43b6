#!/usr/bin/env bash
# A wheel built elsewhere, on a GPU machine: its CUDA library of torch's major runs the CUDA
# suite there, a CUDA call without a library is refused in words, and (an experiment) the CUDA
# 12 library, forced under a CUDA 13 torch, first as built (on the shared CUDA 12 runtime) and
# then linked with a static runtime (VECADD_CUDA_RUNTIME=static).
# Usage: lab/gpu_wheel_proof.sh FOLDER   (FOLDER: the wheel, test wheels such as expecttest's,
#        and cuda12-static/ with a static-runtime CUDA 12 library); logs go to $OUT.
set -uo pipefail
folder=$1
out=${OUT:-/tmp/vecadd-proof}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
run() { echo "+ $*"; "$@"; echo "(exit $?)"; }

run python3 -m pip install -q --no-deps --no-index "$folder"/*.whl
run python3 -m vecadd info 2>&1 | tee "$out/info.txt"
run python3 packaging/check_installed.py 2>&1 | tee "$out/check_installed.txt" | tail -2
run python3 -m vecadd check 2>&1 | tee "$out/check.txt" | tail -3
run timeout "${SUITE_TIMEOUT:-420}" python3 -m pytest -n 8 -q -p no:cacheprovider -m "not build" tests \
  >"$out/suite.txt" 2>&1
tail -3 "$out/suite.txt"

site=$(python3 -c 'import os, vecadd; print(os.path.dirname(vecadd.__file__))' 2>/dev/null)
{
  echo "== the CUDA 12 library under torch $(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null), as built"
  VECADD_CUDA_LIBRARY=12 python3 -m vecadd check 2>&1 | tail -4
  echo "== the same with a static CUDA 12.4 runtime"
  cp "$folder"/cuda12-static/* "$site/lib/cuda12/"
  VECADD_CUDA_LIBRARY=12 python3 -c 'import vecadd; i = vecadd.build_info(); print(i["cuda_version"], i["cuda_runtimes"])'
  VECADD_CUDA_LIBRARY=12 python3 -m vecadd check 2>&1 | tail -3
  VECADD_CUDA_LIBRARY=12 timeout 300 python3 -m pytest -n 8 -q -p no:cacheprovider tests/test_cuda.py tests/test_add.py 2>&1 | tail -3
} 2>&1 | tee "$out/static_runtime.txt"
