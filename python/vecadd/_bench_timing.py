"""Timing for ``python -m vecadd bench``: back-to-back batches, CUDA graphs, interleaved rounds."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence

import torch


def _timer(device: torch.device) -> Callable[[Callable[[], object], int], float]:
    """Seconds per call of fn, run `calls` times back to back (GPU work included)."""
    if device.type == "cuda":

        def time_cuda(fn: Callable[[], object], calls: int) -> float:
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(calls):
                fn()
            stop.record()
            stop.synchronize()
            return start.elapsed_time(stop) / 1e3 / calls

        return time_cuda

    def time_cpu(fn: Callable[[], object], calls: int) -> float:
        begin = time.perf_counter()
        for _ in range(calls):
            fn()
        return (time.perf_counter() - begin) / calls

    return time_cpu


def _as_graph(fn: Callable[[], object], device: torch.device, calls: int) -> Callable[[], object]:
    """`calls` CUDA launches of fn captured in one graph: times the kernels, not the host."""
    stream = torch.cuda.Stream(device)
    stream.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()  # warm-up outside capture: allocator pools, lazy module loading
    torch.cuda.current_stream(device).wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    return graph.replay


def interleaved_samples(
    candidates: Sequence[Callable[[], object]],
    measure: Callable[[Callable[[], object]], float],
    rounds: int,
) -> list[list[float]]:
    """`measure` of each candidate in each of `rounds` rounds, each round starting at the
    next candidate so that no one always runs first (after a warm-up of each)."""
    for candidate in candidates:
        measure(candidate)
    samples: list[list[float]] = [[] for _ in candidates]
    for round_index in range(rounds):
        for offset in range(len(candidates)):
            which = (round_index + offset) % len(candidates)
            samples[which].append(measure(candidates[which]))
    return samples


def interleaved_medians(
    candidates: Sequence[Callable[[], object]],
    measure: Callable[[Callable[[], object]], float],
    rounds: int,
) -> list[float]:
    """Median per candidate of :func:`interleaved_samples`."""
    return [statistics.median(s) for s in interleaved_samples(candidates, measure, rounds)]


def seconds_per_call(
    fns: Sequence[Callable[[], object]], device: torch.device, calls: int, rounds: int
) -> list[float]:
    """Median seconds per call of each fn, timed in batches of `calls` back-to-back calls
    (one CUDA-graph replay on a GPU), the fns interleaved round by round."""
    timer = _timer(device)
    if device.type != "cuda":
        return interleaved_medians(fns, lambda fn: timer(fn, calls), rounds)
    graphs = [_as_graph(fn, device, calls) for fn in fns]
    return [s / calls for s in interleaved_medians(graphs, lambda fn: timer(fn, 1), rounds)]
