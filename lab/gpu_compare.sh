#!/usr/bin/env bash
# On a GPU machine with the vecadd under test installed: add_n against a chain of torch.add and
# torch.compile's kernel (cold and chained), then add's throughput and per-call cost against an
# earlier release's, in alternating processes (each measured as its ratio to torch.add).
# Usage: lab/gpu_compare.sh BASELINE_WHEEL [PAIRS]   (logs and JSON go to $OUT)
set -uo pipefail
baseline_wheel=$1
pairs=${2:-2}
out=${OUT:-/tmp/vecadd-compare}
baseline=/tmp/vecadd-baseline
mkdir -p "$out"
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-deps --no-index --target "$baseline" "$baseline_wheel"

python3 -m vecadd bench --op add_n --inputs 3,4,8 --mode cold,chain --dtypes float32,bfloat16 \
  --min-log2 20 --max-log2 28 --step 2 --rounds 11 --json "$out/add_n.json" >"$out/add_n.txt" 2>&1
tail -40 "$out/add_n.txt"

for pair in $(seq "$pairs"); do
  for who in current baseline; do
    path=""
    [ "$who" = baseline ] && path=$baseline
    PYTHONPATH=$path python3 -c 'import vecadd; print(vecadd.__version__, vecadd.__file__)'
    PYTHONPATH=$path python3 -m vecadd bench --op add --mode cold --out no --dtypes float32,bfloat16 \
      --min-log2 24 --max-log2 28 --step 2 --rounds 11 --json "$out/add_${who}_$pair.json" \
      >"$out/add_${who}_$pair.txt" 2>&1
    PYTHONPATH=$path python3 lab/call_parts.py >"$out/call_parts_${who}_$pair.txt" 2>&1
    tail -4 "$out/add_${who}_$pair.txt"
    grep -E "^(vecadd.add |VecAdd)" "$out/call_parts_${who}_$pair.txt"
  done
done
