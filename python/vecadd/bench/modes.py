"""The three ways ``vecadd bench --mode`` times vecadd.add against torch.add.

chain: back-to-back calls on the same inputs in a CUDA graph (cache-resident when small);
cold: the cache flushed before every call; pipeline: a producer writes x, the add runs,
consumers read z, timed as a whole, eager and in a CUDA graph. Every mode times the two side
by side, round by round (timing.interleaved_samples), and keeps paired ratios. The kernels' own
durations (CUPTI) are a lab instrument: lab/kernel_durations.py.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

import torch

from .._ops import add
from .layouts import DtypeCase, bytes_moved, operands
from .report import H200_HBM_PEAK_GBPS, BandwidthRow
from .timing import batch_samples, cold_samples

MODES = ("chain", "cold", "pipeline")

Call = Callable[[], object]


def cache_bytes(device: torch.device) -> int | None:
    """The GPU's L2 size; None on a CPU, where figures are labelled by the peak alone."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).L2_cache_size
    return None


def fits_in_cache(device: torch.device, nbytes: int) -> bool:
    """Whether `nbytes` fit in the GPU's L2 (never on a CPU)."""
    size = cache_bytes(device)
    return size is not None and nbytes <= size


def candidates(
    x: torch.Tensor, y: torch.Tensor | complex, z: torch.Tensor, with_out: bool
) -> list[Call]:
    """vecadd.add's call and torch.add's on the same operands, with out=z or without."""
    if with_out:
        return [lambda: add(x, y, out=z), lambda: torch.add(x, y, out=z)]
    return [lambda: add(x, y), lambda: torch.add(x, y)]


def cold_calls(device: torch.device) -> int:
    """Calls per round in the cold mode, each after its own flush; fewer on a CPU."""
    return 10 if device.type == "cuda" else 3


def batch_calls(device: torch.device, nbytes: int) -> int:
    """Enough back-to-back calls that each timed batch lasts about a millisecond or more."""
    calls = max(10, min(200, int(2e9 // max(nbytes, 1))))
    return calls if device.type == "cuda" else max(3, min(calls, 50))


def bandwidth_row(
    device: torch.device,
    case: DtypeCase,
    n: int,
    layout: str,
    with_out: bool,
    mode: str,
    nbytes: int,
    samples: list[list[float]],
    resident: bool,
) -> BandwidthRow:
    """A table row from the two candidates' seconds per round (vecadd's first)."""
    ours, theirs = samples
    ours_gbps = nbytes / statistics.median(ours) / 1e9
    theirs_gbps = nbytes / statistics.median(theirs) / 1e9
    beyond_peak = max(ours_gbps, theirs_gbps) > H200_HBM_PEAK_GBPS
    return BandwidthRow(
        str(device), case.name, n, layout, with_out, ours_gbps, theirs_gbps,
        mode, ours, theirs, resident or beyond_peak,
    )  # fmt: skip


def measure_chain(
    device: torch.device, case: DtypeCase, n: int, layout: str, with_out: bool, rounds: int
) -> BandwidthRow:
    x, y, z = operands(n, case.x, device, layout, case.y)
    moved = bytes_moved(x, y, z)
    calls = batch_calls(device, moved)
    samples = batch_samples(candidates(x, y, z, with_out), device, calls, rounds)
    return bandwidth_row(
        device, case, n, layout, with_out, "chain", moved, samples, fits_in_cache(device, moved)
    )


def measure_cold(
    device: torch.device, case: DtypeCase, n: int, layout: str, with_out: bool, rounds: int
) -> BandwidthRow:
    x, y, z = operands(n, case.x, device, layout, case.y)
    samples = cold_samples(candidates(x, y, z, with_out), device, cold_calls(device), rounds)
    return bandwidth_row(
        device, case, n, layout, with_out, "cold", bytes_moved(x, y, z), samples, False
    )


def pipeline_around(add: Call, source: torch.Tensor, x: torch.Tensor, w: torch.Tensor) -> Call:
    """The pipeline mode's unit of work: a producer writes x (x = 2 source), `add` runs and
    returns z, consumers read z (w = -z, sum(z))."""

    def run() -> object:
        torch.mul(source, 2, out=x)
        result = add()
        torch.neg(result, out=w)
        return torch.sum(result)

    return run


def pipeline_bytes(x: torch.Tensor, y: torch.Tensor | complex, z: torch.Tensor) -> int:
    """Every byte a pipeline moves: the add's, the producer's (read source, write x) and the
    consumers' (read z twice, write w)."""
    producer = 2 * x.numel() * x.element_size()
    return bytes_moved(x, y, z) + producer + 3 * z.numel() * z.element_size()


def measure_pipeline(
    device: torch.device, case: DtypeCase, n: int, layout: str, with_out: bool, rounds: int
) -> list[BandwidthRow]:
    """A producer writes x (x = 2 a), the add runs, consumers read z (w = -z, sum(z)); GB/s
    count every pipeline byte. Eager on every device, also as a CUDA graph on a GPU."""
    x, y, z = operands(n, case.x, device, layout, case.y)
    source = x.clone()
    w = torch.empty_like(z)
    fns = [pipeline_around(op, source, x, w) for op in candidates(x, y, z, with_out)]
    nbytes = pipeline_bytes(x, y, z)
    resident = fits_in_cache(device, bytes_moved(x, y, z) + x.nbytes + z.nbytes)
    calls = batch_calls(device, nbytes)
    variants = [("pipeline-eager", False)] + (
        [("pipeline-graph", True)] if device.type == "cuda" else []
    )
    rows = []
    for mode, graph in variants:
        samples = batch_samples(fns, device, calls, rounds, graph=graph)
        rows.append(
            bandwidth_row(device, case, n, layout, with_out, mode, nbytes, samples, resident)
        )
    return rows


def measure(
    mode: str,
    device: torch.device,
    case: DtypeCase,
    n: int,
    layout: str,
    with_out: bool,
    rounds: int,
) -> list[BandwidthRow]:
    if mode == "pipeline":
        return measure_pipeline(device, case, n, layout, with_out, rounds)
    measure_one = measure_chain if mode == "chain" else measure_cold
    return [measure_one(device, case, n, layout, with_out, rounds)]


def copy_ceiling(device: torch.device, n: int, rounds: int, cold: bool = False) -> float:
    """GB/s of torch's device copy z.copy_(x) (read n, write n, float32): the memory ceiling,
    back to back or with the cache flushed before every copy."""
    x = torch.randn(n, device=device)
    z = torch.empty_like(x)
    nbytes = 2 * n * 4

    def copy() -> object:
        return z.copy_(x)

    if cold:
        (seconds,) = cold_samples([copy], device, cold_calls(device), rounds)
    else:
        calls = max(3, min(50, int(2e9 // nbytes)))
        (seconds,) = batch_samples([copy], device, calls, rounds)
    return nbytes / statistics.median(seconds) / 1e9
