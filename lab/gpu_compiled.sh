#!/usr/bin/env bash
# vecadd under torch.compile on one GPU, in one device call (docs/compile.md): the CUDA cases of
# tests/test_compile.py, `vecadd bench --mode compiled` of the portable wheel (bfloat16 with the
# training step, then float32), then a native build of this checkout against the machine's
# torch and its compiled training step. Each step runs under its own limit and logs straight
# into $OUT, so that a call cut short still returns what ran.
# Usage: lab/gpu_compiled.sh WHEEL_FOLDER [portable|native], from the checkout; the folder holds
# the portable wheel (built for the GPU's architecture) and expecttest's. Naming a part runs only
# that part, so that each fits one device call's time limit.
set -uo pipefail
wheels=$1
part=${2:-all}
out=${OUT:-/tmp/vecadd-compiled}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
step() { local limit=$1 log=$2; shift 2; echo "+ $* (limit ${limit}s)"; local start=$SECONDS
  timeout "$limit" "$@" >>"$out/$log" 2>&1; echo "(exit $?, $((SECONDS - start)) s)"; }
nvidia-smi -L
python3 -m pip install -q --no-deps --no-index "$wheels"/vecadd-*.whl "$wheels"/expecttest-*.whl
if [ "$part" != native ]; then
step 150 tests.txt python3 -m pytest -q -p no:cacheprovider -rs tests/test_compile.py -k cuda
tail -3 "$out/tests.txt"
bench() { step "$1" compiled_portable.txt python3 -m vecadd bench --mode compiled --device cuda \
  --rounds 25 "${@:2}"; }
bench 260 --dtypes bfloat16 --json "$out/compiled_bf16.json"
bench 200 --dtypes float32 --no-training --json "$out/compiled_fp32.json"
grep -v "^W1\|^I1" "$out/compiled_portable.txt"
fi
[ "$part" = portable ] && exit 0
native=/tmp/vecadd-native
step 240 native.txt env VECADD_TORCH_ABI=native python3 -m pip install -q --no-build-isolation \
  --no-deps --target "$native" -C cmake.define.CMAKE_CUDA_ARCHITECTURES=90 .
step 150 native.txt env PYTHONPATH="$native" python3 -c "
import torch, vecadd
from vecadd.bench.compiled import format_row, training_step_row
print(vecadd.build_info()['torch_abi'], torch.__version__)
print(format_row(training_step_row(torch.device('cuda'), torch.bfloat16, 25)))"
tail -3 "$out/native.txt"
