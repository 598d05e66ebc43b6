"""vecadd.add_n next to what a user would write instead (``python -m vecadd bench --op add_n``):
a chain of torch.add, and the kernel torch.compile generates for the same weighted sum.

All three run on the same tensors in the same process, interleaved round by round, in the
chain mode (back to back) or the cold mode (the cache flushed before every call). A weighted
sum of k inputs must read k arrays and write one: add_n moves that, (k + 1) * n * itemsize; a
chain of k - 1 torch.add calls moves 3 * (k - 1) * n * itemsize. GB/s below count add_n's bytes
for every candidate, so that they compare as the same work done faster or slower.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

import torch

from .._dtypes import dtype_name
from .._ops import add_n
from .modes import batch_calls, cold_calls
from .timing import batch_samples, cold_samples

# The weights: the first is 1, so that the chain can carry the others as torch.add's alpha.
WEIGHTS = (1.0, 0.5, 2.0, -1.0, 0.25, 3.0, -0.5, 1.5)
CANDIDATES = ("add_n", "torch.add chain", "torch.compile")


@dataclass
class AddNRow:
    mode: str
    dtype: str
    n: int
    inputs: int
    gbps: dict[str, float]  # per candidate, add_n's bytes over its median time
    # Per-round time ratios of each reference to add_n: above 1, add_n is faster.
    speedup: dict[str, float] = field(default_factory=dict)
    seconds: dict[str, list[float]] = field(default_factory=dict)


def chain_of_adds(tensors: list[torch.Tensor], weights: list[float]):
    def chain():
        result = torch.add(tensors[0], tensors[1], alpha=weights[1])
        for tensor, weight in zip(tensors[2:], weights[2:], strict=True):
            result = torch.add(result, tensor, alpha=weight)
        return result

    return chain


def compiled_sum(tensors: list[torch.Tensor], weights: list[float]):
    def weighted(*inputs):
        total = inputs[0] * weights[0]
        for tensor, weight in zip(inputs[1:], weights[1:], strict=True):
            total = total + tensor * weight
        return total

    # Every case compiles the same code object: without a reset, torch.compile's recompile
    # limit (8 per code object) would end the run after eight cases.
    torch.compiler.reset()
    compiled = torch.compile(weighted, fullgraph=True, dynamic=False)
    compiled(*tensors)  # compiled here, not in the first timed call
    return lambda: compiled(*tensors)


def add_n_candidates(
    device: torch.device, dtype: torch.dtype, n: int, inputs: int
) -> tuple[list, int]:
    """The three candidates of CANDIDATES on the same `inputs` tensors of n elements, and the
    bytes add_n must move."""
    generator = torch.Generator().manual_seed(inputs)
    tensors = [
        torch.randn(n, generator=generator).to(device=device, dtype=dtype) for _ in range(inputs)
    ]
    weights = list(WEIGHTS[:inputs])
    calls = [
        lambda: add_n(tensors, weights),
        chain_of_adds(tensors, weights),
        compiled_sum(tensors, weights),
    ]
    return calls, (inputs + 1) * n * tensors[0].element_size()


def add_n_row(
    mode: str, dtype: torch.dtype, n: int, inputs: int, nbytes: int, samples: list[list[float]]
) -> AddNRow:
    """A row from the candidates' seconds per round (add_n's first)."""
    ours = samples[0]
    row = AddNRow(mode, dtype_name(dtype), n, inputs, {})
    for name, times in zip(CANDIDATES, samples, strict=True):
        row.gbps[name] = nbytes / statistics.median(times) / 1e9
        row.seconds[name] = times
        if name != "add_n":
            row.speedup[name] = statistics.median(
                theirs / mine for theirs, mine in zip(times, ours, strict=True)
            )
    return row


def measure_add_n(
    mode: str, device: torch.device, dtype: torch.dtype, n: int, inputs: int, rounds: int
) -> AddNRow:
    calls, nbytes = add_n_candidates(device, dtype, n, inputs)
    if mode == "cold":
        samples = cold_samples(calls, device, cold_calls(device), rounds)
    else:
        samples = batch_samples(calls, device, batch_calls(device, nbytes), rounds)
    return add_n_row(mode, dtype, n, inputs, nbytes, samples)


def format_add_n(rows: list[AddNRow]) -> str:
    lines = [
        f"{'mode':<11} {'dtype':<9} {'n':>11} {'k':>2} "
        + " ".join(f"{name + ' GB/s':>20}" for name in CANDIDATES)
        + f" {'x chain':>8} {'x compile':>10}"
    ]
    for row in rows:
        lines.append(
            f"{row.mode:<11} {row.dtype:<9} {row.n:>11} {row.inputs:>2} "
            + " ".join(f"{row.gbps[name]:>20.1f}" for name in CANDIDATES)
            + f" {row.speedup['torch.add chain']:>8.3f} {row.speedup['torch.compile']:>10.3f}"
        )
    lines.append(
        "GB/s count add_n's bytes ((k + 1) * n * itemsize) for every candidate; x chain and "
        "x compile: median per-round time of that reference over add_n's (above 1: add_n faster)"
    )
    return "\n".join(lines)
