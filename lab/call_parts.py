# Evidence for: docs/portable.md, "Per-call cost", and docs/benchmarks.md, "Per-call cost".
"""Per-call cost of each way into the installed vecadd build, on 16-element CUDA tensors.

    python lab/call_parts.py

Each way in is timed over 20,000 calls per round, rounds interleaved (vecadd.bench.timing),
and printed as the median of its paired per-round ratios to torch.add (below 1: cheaper).
torch.ops.aten.add.Tensor is torch's own add through the Python path every torch.ops operator
takes, the floor for vecadd's ops reached that way.
"""

from __future__ import annotations

import statistics
import time

import torch

import vecadd
from vecadd.bench.timing import interleaved_samples

CALLS = 20_000
ROUNDS = 11


class EmptyLike(torch.autograd.Function):
    """The least any Python autograd.Function returning a new tensor costs: no kernel."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(x)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        return grad, grad


def per_call_us(call) -> float:
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(CALLS):
        call()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / CALLS * 1e6


def ways_in(requires_grad: bool) -> dict:
    """Each public way into vecadd's add beside torch's; from the Python face down to the
    operator's own overload, so that the difference between rows is what each layer costs."""
    x = torch.randn(16, device="cuda", requires_grad=requires_grad)
    y = torch.randn(16, device="cuda", requires_grad=requires_grad)
    overload = torch.ops.vecadd.add.default
    aten_add = torch.ops.aten.add.Tensor
    layer = vecadd.VecAdd()
    ways = {
        "torch.add": lambda: torch.add(x, y),
        "vecadd.add": lambda: vecadd.add(x, y),
        "VecAdd()(x, y)": lambda: layer(x, y),
        "vecadd.add(alpha=2.0)": lambda: vecadd.add(x, y, alpha=2.0),
        "torch.ops.vecadd.add": lambda: torch.ops.vecadd.add(x, y),
        "torch.ops.vecadd.add.default": lambda: overload(x, y),
        "torch.ops.aten.add.Tensor": lambda: aten_add(x, y),
    }
    if not requires_grad:
        z = torch.empty(16, device="cuda")
        ways |= {
            "torch.add(out=)": lambda: torch.add(x, y, out=z),
            "vecadd.add(out=)": lambda: vecadd.add(x, y, out=z),
            "torch.empty_like": lambda: torch.empty_like(x),
        }
    else:
        ways |= {"EmptyLike.apply": lambda: EmptyLike.apply(x, y)}
    return ways


def main() -> None:
    print(vecadd.build_info()["torch_abi"], torch.__version__)
    for requires_grad in (False, True):
        ways = ways_in(requires_grad)
        samples = interleaved_samples(list(ways.values()), per_call_us, ROUNDS)
        print(f"\nrequires_grad={requires_grad}")
        for name, times in zip(ways, samples, strict=True):
            ratio = statistics.median(a / b for a, b in zip(times, samples[0], strict=True))
            print(f"{name:30s} {statistics.median(times):7.2f} us  ratio to torch.add {ratio:.3f}")


if __name__ == "__main__":
    main()
