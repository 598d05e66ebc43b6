#!/usr/bin/env bash
# Evidence for: the H200 run of 2026-12-04 that compared 0.3.0 with 0.2.0 and timed add_n (its
# report left docs/benchmarks.md for git history; the page keeps the current figures).
# One GPU session for a wheel built elsewhere, each step under its own time limit so that one
# overrun leaves the others' logs: install and self-test, add_n against the chained torch.add
# and torch.compile (cold), add against an earlier release's wheel (alternating pairs), the
# suite without build tests, the AOTInductor control steps and examples/aoti on CUDA.
# Usage: lab/gpu_final.sh FOLDER BASELINE_WHEEL [tests|bench|calls|kernel|all]
#   FOLDER holds the wheel; logs come back as $OUT/gpu-logs.tgz. Each part fits one device call
#   (600 s): tests runs the suite without build tests (the DTensor CUDA tests with it) and the
#   kernel-duration table of add (every dtype, 2^16-2^28, warm and cold); calls the
#   kernel-duration table of add_n (k = 2, 3, 4, 8) and the per-call cost of every row of
#   tools/calls/ways.py in five processes; bench add_n against the chained torch.add and
#   torch.compile (cold), add cold against the baseline wheel and add's ways in against it;
#   kernel the DTensor tests and both kernel-duration tables; all runs tests and bench.
set -uo pipefail
folder=$1
baseline_wheel=$2
part=${3:-all}
# Logs gather in one folder and leave as one archive: few files come back from the machine.
results=${OUT:-/tmp/vecadd-final}
out=$(mktemp -d)
trap 'tar -czf "$results/gpu-logs.tgz" -C "$out" .' EXIT
baseline=/tmp/vecadd-baseline
mkdir -p "$results"
export PYTHONUNBUFFERED=1
step() { local limit=$1 log=$2; shift 2; echo "+ $* (limit ${limit}s)"; local start=$SECONDS
  timeout "$limit" "$@" >"$out/$log" 2>&1; echo "(exit $?, $((SECONDS - start)) s)"; }

python3 -m pip install -q --no-deps --no-index "$folder"/vecadd-*.whl "$folder"/expecttest-*.whl
python3 -m pip install -q --no-deps --no-index --target "$baseline" "$baseline_wheel"
step 30 info.txt python3 -m vecadd info
step 30 check_installed.txt python3 tools/release/check_installed.py; tail -2 "$out/check_installed.txt"
step 60 check.txt python3 -m vecadd check; tail -2 "$out/check.txt"
kernel_add() {
  step 220 kernel_add.txt python3 lab/kernel_durations.py --out no --min-log2 16 \
    --max-log2 28 --step 1 --rounds 5 --json "$out/kernel_add.json"; tail -4 "$out/kernel_add.txt"
}
kernel_add_n() {
  step 200 kernel_add_n.txt python3 lab/kernel_durations.py --op add_n --inputs 2,3,4,8 \
    --dtypes float32,bfloat16 --min-log2 18 --max-log2 28 --step 2 --rounds 5 \
    --json "$out/kernel_add_n.json"; tail -4 "$out/kernel_add_n.txt"
}
if [ "$part" = calls ]; then
  kernel_add_n
  # Every row of tools/calls/ways.py in five processes: the spread the targets are read from.
  for process in 1 2 3 4 5; do
    step 80 "call_cost_$process.txt" python3 lab/call_cost.py --device cuda \
      --json "$out/call_cost_$process.json"
    grep -A8 "^call (16 elements)" "$out/call_cost_$process.txt"
  done
  exit 0
fi
if [ "$part" = kernel ]; then
  step 180 dtensor.txt python3 -m pytest tests/test_dtensor.py tests/test_distributed_example.py \
    -q -p no:cacheprovider -k cuda; tail -3 "$out/dtensor.txt"
  kernel_add
  kernel_add_n
  exit 0
fi
if [ "$part" != tests ]; then
step 120 add_n.txt python3 -m vecadd bench --op add_n --inputs 3,4 --mode cold \
  --dtypes float32,bfloat16 --min-log2 24 --max-log2 28 --step 2 --rounds 11 --json "$out/add_n.json"
tail -16 "$out/add_n.txt"
# add against the baseline release: three pairs of processes, alternating, each cold (0.2.0's
# bench has no --op: add is all it times).
for pair in 1 2 3; do
  step 60 "add_current_$pair.txt" python3 -m vecadd bench --op add --mode cold --out no \
    --dtypes float32,bfloat16 --min-log2 24 --max-log2 28 --step 2 --rounds 5 \
    --json "$out/add_current_$pair.json"
  step 60 "add_baseline_$pair.txt" env PYTHONPATH=$baseline python3 -m vecadd bench --mode cold \
    --out no --dtypes float32,bfloat16 --min-log2 24 --max-log2 28 --step 2 --rounds 5 \
    --json "$out/add_baseline_$pair.json"
done
for who in current baseline; do
  path=""
  [ "$who" = baseline ] && path=$baseline
  step 60 "call_parts_$who.txt" env PYTHONPATH=$path python3 lab/call_parts.py
  grep -E "^(vecadd.add |VecAdd)" "$out/call_parts_$who.txt"
done
fi
[ "$part" = bench ] && exit 0
step 150 suite.txt python3 -m pytest -n 16 -q -p no:cacheprovider -m "not build" tests
grep -E "^(FAILED|ERROR)" "$out/suite.txt" | head -30; tail -2 "$out/suite.txt"
if [ "$part" = tests ]; then
  kernel_add
  exit 0
fi
step 50 aoti_control.txt python3 lab/aoti_control.py cpu /tmp/aoti-control
grep -E "step|control on" "$out/aoti_control.txt"
step 100 aoti_cuda.txt python3 -m pytest -q -p no:cacheprovider -rA -k "aoti and cuda" tests
grep -E "^(PASSED|FAILED|SKIPPED|ERROR)|passed|failed" "$out/aoti_cuda.txt" | tail -6
