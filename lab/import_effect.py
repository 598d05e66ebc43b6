# Evidence for: docs/portable.md, "Per-call cost" (importing vecadd leaves torch's own calls' cost
# alone: import-effect.txt of docs/data/h200-modes-v17).
"""Host time of torch calls on 16-element CUDA tensors after importing a vecadd build, or none.

    python lab/import_effect.py none|stable|native

Run once per process, with the build to compare first on sys.path: whether importing vecadd
changes what torch's own calls cost.
"""

from __future__ import annotations

import statistics
import sys
import timeit

import torch

CALLS = 20_000


def main(which: str) -> None:
    if which != "none":
        import vecadd

        built = vecadd.build_info()["torch_abi"]
        if built != which:
            raise SystemExit(f"asked for the {which} build, {vecadd.__file__} is {built}")
    x = torch.randn(16, device="cuda")
    y = torch.randn(16, device="cuda")
    names = {"torch": torch, "x": x, "y": y}
    for statement in ("torch.empty_like(x)", "torch.add(x, y)", "torch.mul(x, y)"):
        timeit.timeit(statement, globals=names, number=2_000)
        runs = timeit.repeat(statement, globals=names, number=CALLS, repeat=7)
        torch.cuda.synchronize()
        print(f"{which:7s} {statement:22s} {statistics.median(runs) / CALLS * 1e9:7.1f} ns")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "none")
