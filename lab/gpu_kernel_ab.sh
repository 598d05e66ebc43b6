#!/usr/bin/env bash
# Two builds of add's launch policy on one GPU, in one device call: the kernel-duration table
# (warm and cold, every dtype, 2^16-2^24) of each, the same Python and bench, only the library
# different (docs/kernel-notes.md, version 19: two packs for 4-byte elements against one),
# then the launch-shape tests, the sizes past the L2 and the graphed pipeline of the first.
# Steps run in order of need, each under its own limit and logged straight into $OUT, so that
# a call cut short still returns what ran.
# Usage: lab/gpu_kernel_ab.sh NEW_FOLDER OLD_FOLDER, run from the new build's checkout (its
# tests describe its policy); each folder holds a wheel, NEW_FOLDER expecttest's too.
set -uo pipefail
new=$1
old=$2
out=${OUT:-/tmp/vecadd-kernel-ab}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
step() { local limit=$1 log=$2; shift 2; echo "+ $* (limit ${limit}s)"; local start=$SECONDS
  timeout "$limit" "$@" >"$out/$log" 2>&1; echo "(exit $?, $((SECONDS - start)) s)"; }
python3 -m pip install -q --no-deps --no-index "$new"/vecadd-*.whl "$new"/expecttest-*.whl
python3 -m pip install -q --no-deps --no-index --target /tmp/vecadd-old "$old"/vecadd-*.whl
kernel_table() {  # LOG MIN MAX [env ...]
  local log=$1 low=$2 high=$3; shift 3
  step 75 "$log.txt" env "$@" python3 -m vecadd bench --op add --mode kernel --out no \
    --min-log2 "$low" --max-log2 "$high" --step 1 --rounds 5 --json "$out/$log.json"
  grep "median ratio" "$out/$log.txt"
}
kernel_table kernel_new_16_24 16 24
kernel_table kernel_old_16_24 16 24 PYTHONPATH=/tmp/vecadd-old
step 45 launch_shapes.txt python3 -m pytest -q -p no:cacheprovider tests/test_cuda.py \
  -k "two_packs or every_launch_shape or small_blocks or large_blocks"
tail -3 "$out/launch_shapes.txt"
kernel_table kernel_new_25_28 25 28
step 45 pipeline_new.txt python3 -m vecadd bench --op add --mode pipeline --out no \
  --dtypes float16,float32,int32,float64 --min-log2 16 --max-log2 24 --step 2 --rounds 5 \
  --json "$out/pipeline_new.json"
grep "median ratio" "$out/pipeline_new.txt"
