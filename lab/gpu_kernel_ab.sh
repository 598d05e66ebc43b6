#!/usr/bin/env bash
# Evidence for: docs/kernel-notes.md, "Contiguous calls" (the candidates), and docs/benchmarks.md
# (kernel durations on the H100). Three launch policies of add on one GPU, in one device call of
# at most AB_BUDGET_S seconds (default 470): NEW_FOLDER's wheel with its measured policy ("new"),
# the same wheel with the candidate packs (VECADD_LAUNCH_CANDIDATE=one-pack-8-byte, "candidate")
# and OLD_FOLDER's wheel ("old"), the same Python and bench for all three. Steps, in order of need:
# - the launch-shape tests of new and candidate (each policy is what the timings assume);
# - their kernel-duration tables (`lab/kernel_durations.py`, warm and cold, 2^16-2^26,
#   float32, float16, bfloat16 and int64, whose kernel is the same in all three builds: the
#   run's own A/A);
# - their pipelines (`--mode pipeline`, graphed and eager, float32 and float16);
# - old's kernel table and pipeline; the side-by-side tables (lab/kernel_ab_table.py).
# Each step runs under its own limit, cut to what is left of the budget, and writes straight
# into $OUT, so a call cut short still returns what ran: ab.log (every step's output),
# kernel_{candidate,new,old}.json and pipeline_{candidate,new,old}.json (7 files).
# Usage: lab/gpu_kernel_ab.sh NEW_FOLDER OLD_FOLDER, from the new build's checkout (its tests
# describe its policies); each folder holds a vecadd wheel, NEW_FOLDER expecttest's too.
set -uo pipefail
new=$1
old=$2
out=${OUT:-/tmp/vecadd-kernel-ab}
budget=${AB_BUDGET_S:-470}
rounds=${AB_ROUNDS:-5}  # rounds of each table
mkdir -p "$out"
export PYTHONUNBUFFERED=1
old_site=/tmp/vecadd-old

step() {  # LIMIT COMMAND...: run it under min(LIMIT, what is left of the budget)
  local limit=$1 left=$((budget - SECONDS)) start=$SECONDS
  shift
  if ((left < 15)); then echo "- skipped, budget spent: $*"; return; fi
  ((limit > left)) && limit=$left
  echo "+ $* (limit ${limit}s)"
  timeout "$limit" "$@"
  echo "(exit $?, $((SECONDS - start)) s)"
}
# What makes a command run a build: new as installed, candidate by its switch, old by path.
build_env() {  # BUILD
  case $1 in
    new) echo "VECADD_BUILD=new" ;;
    candidate) echo "VECADD_LAUNCH_CANDIDATE=one-pack-8-byte" ;;
    old) echo "PYTHONPATH=$old_site" ;;
  esac
}
kernel_table() {  # BUILD
  step 150 env "$(build_env "$1")" python3 lab/kernel_durations.py --op add --out no \
    --dtypes float32,float16,bfloat16,int64 --min-log2 16 --max-log2 26 --step 1 --rounds "$rounds" \
    --json "$out/kernel_$1.json"
}
pipeline_table() {  # BUILD
  step 70 env "$(build_env "$1")" python3 -m vecadd bench --op add --mode pipeline --out no \
    --dtypes float32,float16 --min-log2 16 --max-log2 26 --step 1 --rounds "$rounds" \
    --json "$out/pipeline_$1.json"
}
shape_tests() {  # BUILD
  step 45 env "$(build_env "$1")" python3 -m pytest -q -p no:cacheprovider tests/test_cuda.py \
    -k "two_packs or candidate_packs or every_launch_shape or small_blocks or large_blocks"
}
side_by_side() {  # KIND: the builds whose JSON exists, in the order candidate, new, old
  local runs=() build
  for build in candidate new old; do
    [ -s "$out/$1_$build.json" ] && runs+=("$build=$out/$1_$build.json")
  done
  ((${#runs[@]})) && python3 lab/kernel_ab_table.py "${runs[@]}"
}

# Which library a build loads, under which torch, on which GPU.
describe='import torch, vecadd
p = torch.cuda.get_device_properties(0)
print(vecadd.build_info()["cuda_library"], torch.__version__, p.name, p.multi_processor_count,
      "SMs", getattr(p, "L2_cache_size", 0) >> 20, "MiB L2")'

main() {
  python3 -m pip install -q --no-deps --no-index "$new"/vecadd-*.whl "$new"/expecttest-*.whl
  python3 -m pip install -q --no-deps --no-index --target "$old_site" "$old"/vecadd-*.whl
  for build in new old; do
    env "$(build_env "$build")" python3 -c "$describe"
  done
  shape_tests new
  shape_tests candidate
  kernel_table candidate
  kernel_table new
  pipeline_table candidate
  pipeline_table new
  kernel_table old
  pipeline_table old
  side_by_side kernel
  side_by_side pipeline
  echo "done in $SECONDS s"
}
main 2>&1 | tee "$out/ab.log"
