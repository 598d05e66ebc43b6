#!/usr/bin/env bash
# On a GPU machine: builds vecadd from this checkout, then the AOTInductor cases: the control
# model with no vecadd (lab/aoti_control.py, loaded from Python in a fresh process, CPU and CUDA;
# a backtrace under gdb where the load crashes) and examples/aoti through tests/test_aoti.py.
# Usage: lab/gpu_aoti.sh   (logs go to $OUT/aoti)
set -uo pipefail
out=${OUT:-/tmp/vecadd-aoti}/aoti
mkdir -p "$out"
export PYTHONUNBUFFERED=1
{ g++ --version | head -1; python3 -c 'import torch; print("torch", torch.__version__)'; command -v gdb; } \
  >"$out/env.txt" 2>&1
( time CMAKE_ARGS="-DCMAKE_CUDA_ARCHITECTURES=90" python3 -m pip install -q --no-build-isolation \
  --no-deps . ) >"$out/build.txt" 2>&1
tail -4 "$out/build.txt"
python3 -m vecadd info >"$out/info.txt" 2>&1
for device in cpu cuda; do
  timeout 200 python3 lab/aoti_control.py "$device" /tmp/aoti-control >"$out/control-$device.txt" 2>&1
  echo "control $device: exit $?" | tee -a "$out/env.txt"
  tail -12 "$out/control-$device.txt"
  if grep -q "exit -11\|exit 139\|Segmentation" "$out/control-$device.txt" && command -v gdb >/dev/null; then
    timeout 150 gdb -batch -ex run -ex bt --args python3 lab/aoti_control.py "$device" \
      /tmp/aoti-control --load-only >"$out/gdb-$device.txt" 2>&1
    grep -A25 "SIGSEGV" "$out/gdb-$device.txt" | head -30
  fi
done
timeout 300 python3 -m pytest -q -p no:cacheprovider -rA -k aoti tests >"$out/tests.txt" 2>&1
echo "tests: exit $?"
grep -E "^(PASSED|FAILED|SKIPPED|ERROR)|passed|failed" "$out/tests.txt" | tail -15
