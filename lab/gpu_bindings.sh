#!/usr/bin/env bash
# Evidence for: docs/portable.md, "Native bindings: what they cost and save", the GPU rows.
# The portable wheel's native binding against its stable binding (VECADD_BINDING=stable, the
# wheel's behaviour before it held native bindings) on one GPU: which binding each process runs
# and why, the per-call record (lab/call_cost.py, every row of tools/calls/ways.py against the
# torch call it stands in for) and the eager training step (vecadd bench --mode training, batch
# 1 and 8), each in processes that alternate native, stable, native, ... so that the host's
# drift between processes falls on both; then the suite under each binding. Every step runs
# under its own limit and logs straight into $OUT, so that a call cut short keeps what ran.
# Usage, from the checkout: lab/gpu_bindings.sh WHEEL_FOLDER [calls|training|tests|all]
#   WHEEL_FOLDER holds the portable wheel, built on the development machine with
#   `pip wheel --no-build-isolation --no-deps -w WHEEL_FOLDER
#    -C cmake.define.CMAKE_CUDA_ARCHITECTURES=90 .` and VECADD_NATIVE_TORCHES naming the
#   binding torches (tools/release/binding_torches.py: it must hold the GPU machine's torch
#   series), and expecttest's wheel for the suite. Each part fits one device call (600 s).
set -uo pipefail
wheels=$1
part=${2:-all}
out=${OUT:-/tmp/vecadd-bindings}
pairs=${PAIRS:-3}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
step() { local limit=$1 log=$2; shift 2; echo "+ $* (limit ${limit}s)"; local start=$SECONDS
  timeout "$limit" "$@" >>"$out/$log" 2>&1; echo "(exit $?, $((SECONDS - start)) s)"; }
# Processes that alternate the native binding and the stable one (lab/binding_pairs.py).
pairs() { local limit=$1 name=$2; shift 2; echo "+ binding pairs: $* (limit ${limit}s)"
  timeout "$limit" python3 lab/binding_pairs.py --pairs "$pairs" --out "$out/$name" -- "$@" \
    | tee "$out/$name.txt"; }

nvidia-smi -L
python3 -m pip install -q --no-deps --no-index "$wheels"/vecadd-*.whl
ls "$wheels"/expecttest-*.whl >/dev/null 2>&1 && \
  python3 -m pip install -q --no-deps --no-index "$wheels"/expecttest-*.whl
step 60 info.txt python3 -m vecadd info
step 60 info.txt env VECADD_BINDING=stable python3 -m vecadd info
step 60 installed.txt python3 tools/release/check_installed.py
step 60 installed.txt env VECADD_BINDING=stable python3 tools/release/check_installed.py \
  --expect-binding stable
grep -h "check_installed.py" "$out/installed.txt"
if [ "$part" = calls ] || [ "$part" = all ]; then
  pairs 540 calls python3 lab/call_cost.py --device cuda --rounds 9 --calls 10000
fi
if [ "$part" = training ] || [ "$part" = all ]; then
  pairs 540 training python3 -m vecadd bench --mode training --device cuda --rounds 9
fi
if [ "$part" = tests ] || [ "$part" = all ]; then
  suite=(python3 -m pytest -q -p no:cacheprovider -m "not build" tests)
  python3 -c "import xdist" 2>/dev/null && suite+=(-n 8)
  step 280 tests-native.txt "${suite[@]}"
  step 280 tests-stable.txt env VECADD_BINDING=stable "${suite[@]}"
  tail -n 2 "$out"/tests-*.txt
fi
