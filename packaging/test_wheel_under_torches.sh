#!/usr/bin/env bash
# cibuildwheel's test step for a portable wheel: the installed wheel under each torch that the
# matrix cell names (VECADD_WHEEL_TEST_TORCH, from VECADD_WHEEL_INDEX), with vecadd's
# self-test and the CPU test suite under each.
# Usage: packaging/test_wheel_under_torches.sh PROJECT_DIR
set -euo pipefail
project=$1
: "${VECADD_WHEEL_TEST_TORCH:?set by .github/workflows/wheels.yml from the wheel matrix}"
: "${VECADD_WHEEL_INDEX:?set by .github/workflows/wheels.yml from the wheel matrix}"
for torch in $VECADD_WHEEL_TEST_TORCH; do
  echo "== vecadd under torch $torch"
  python -m pip install "torch==$torch" --index-url "$VECADD_WHEEL_INDEX"
  python -m vecadd info
  python -m vecadd check
  python -m pytest "$project/tests" -m "not build" -p no:cacheprovider -q
done
