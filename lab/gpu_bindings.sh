#!/usr/bin/env bash
# Evidence for: docs/portable.md, "Native bindings: what they cost and save", the GPU rows.
# The portable wheel's native binding against its stable binding (VECADD_BINDING=stable, the
# wheel's behaviour before it held native bindings), each against torch, on one GPU: which
# binding each process runs and why, the per-call rows (lab/call_cost.py, the uncompiled rows
# of tools/calls/ways.py against the torch call each stands in for) and the eager training step
# (vecadd bench --mode training, batch 1 and 8), each in processes that alternate native,
# stable, native, ... so that the host's drift between processes falls on both
# (lab/binding_pairs.py, which starts no pair its budget cannot hold). Everything logs straight
# into $OUT, so that a call cut short keeps what ran.
# Usage, from any directory: bash lab/gpu_bindings.sh [WHEEL_FOLDER] [bench|calls|training|tests]
#   WHEEL_FOLDER may be given as WHEELS=FOLDER instead (relative to the directory it runs from).
#   bench (the default): the calls, then the training step; about 8 minutes, within 9.
#   tests: the suite under each binding (needs tests/ beside lab/ and expecttest's wheel).
#   DEVICE=cpu runs the same steps on the CPU, to try the script where there is no GPU.
#   WHEEL_FOLDER holds the portable wheel, built on the development machine with
#   VECADD_NATIVE_TORCHES naming the binding torches (tools/release/binding_torches.py: it must
#   hold the GPU machine's torch series) and `pip wheel --no-build-isolation --no-deps
#   -w WHEEL_FOLDER -C cmake.define.CMAKE_CUDA_ARCHITECTURES=90 .`
set -uo pipefail
if [ $# -ge 1 ] && [ -d "$1" ]; then wheels=$1; shift; else wheels=${WHEELS:-}; fi
[ -n "$wheels" ] || { echo "gpu_bindings.sh: no wheel folder: give it first or as WHEELS=" >&2; exit 2; }
wheels=$(cd "$wheels" && pwd) || exit 2
part=${1:-bench}
cd "$(dirname "$0")/.."  # the tree that holds lab/ and tools/
out=${OUT:-/tmp/vecadd-bindings}
device=${DEVICE:-cuda}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
begin=$SECONDS
step() { local limit=$1 log=$2; shift 2; echo "+ $* (limit ${limit}s)"; local start=$SECONDS
  timeout "$limit" "$@" >>"$out/$log" 2>&1; echo "(exit $?, $((SECONDS - start)) s)"; }
# Processes that alternate the native binding and the stable one, up to 3 pairs in `budget` s.
pairs() { local budget=$1 name=$2; shift 2; echo "+ binding pairs: $* (budget ${budget}s)"
  timeout $((budget + 60)) python3 lab/binding_pairs.py --pairs "${PAIRS:-3}" --budget "$budget" \
    --out "$out/$name" -- "$@" | tee "$out/$name.txt"; echo "($((SECONDS - begin)) s so far)"; }

nvidia-smi -L || echo "no GPU visible (DEVICE=$device)"
python3 -m pip install -q --force-reinstall --no-deps --no-index "$wheels"/vecadd-*.whl
step 60 info.txt python3 -m vecadd info
step 60 info.txt env VECADD_BINDING=stable python3 -m vecadd info
step 60 installed.txt python3 tools/release/check_installed.py
step 60 installed.txt env VECADD_BINDING=stable python3 tools/release/check_installed.py \
  --expect-binding stable
grep -h "^binding:\|^native bindings:\|^check_installed.py:" "$out/info.txt" "$out/installed.txt"
if [ "$part" = calls ] || [ "$part" = bench ]; then
  pairs 200 calls python3 lab/call_cost.py --device "$device" --rounds 9 --calls 5000 \
    --cases uncompiled
fi
if [ "$part" = training ] || [ "$part" = bench ]; then
  pairs 220 training python3 -m vecadd bench --mode training --device "$device" --rounds 9
fi
if [ "$part" = tests ]; then
  ls "$wheels"/expecttest-*.whl >/dev/null 2>&1 && \
    python3 -m pip install -q --no-deps --no-index "$wheels"/expecttest-*.whl
  suite=(python3 -m pytest -q -p no:cacheprovider -m "not build" tests)
  python3 -c "import xdist" 2>/dev/null && suite+=(-n 8)
  step 270 tests-native.txt "${suite[@]}"
  step 270 tests-stable.txt env VECADD_BINDING=stable "${suite[@]}"
  tail -n 2 "$out"/tests-*.txt
fi
echo "gpu_bindings.sh $part: $((SECONDS - begin)) s"
