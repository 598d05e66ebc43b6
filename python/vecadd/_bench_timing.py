"""Timing for ``python -m vecadd bench``: back-to-back batches, CUDA graphs, cold calls,
interleaved rounds."""

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
    """Median over rounds of :func:`batch_samples`, one per fn."""
    return [statistics.median(s) for s in batch_samples(fns, device, calls, rounds)]


def batch_samples(
    fns: Sequence[Callable[[], object]],
    device: torch.device,
    calls: int,
    rounds: int,
    graph: bool = True,
) -> list[list[float]]:
    """Seconds per call of each fn in each round, timed in batches of `calls` back-to-back
    calls (one CUDA-graph replay on a GPU when `graph`), the fns interleaved round by round."""
    timer = _timer(device)
    if device.type != "cuda" or not graph:
        return interleaved_samples(fns, lambda fn: timer(fn, calls), rounds)
    graphs = [_as_graph(fn, device, calls) for fn in fns]
    samples = interleaved_samples(graphs, lambda fn: timer(fn, 1), rounds)
    return [[s / calls for s in per_fn] for per_fn in samples]


def flush_buffer(device: torch.device) -> torch.Tensor:
    """A buffer twice the size of the last-level cache (256 MiB when unknown, as on a CPU):
    zeroing it evicts the operands, the idea of triton.testing.do_bench."""
    size = 256 * 2**20
    if device.type == "cuda":
        size = max(2 * torch.cuda.get_device_properties(device).L2_cache_size, 64 * 2**20)
    return torch.empty(size // 4, dtype=torch.int32, device=device)


def cold_samples(
    fns: Sequence[Callable[[], object]], device: torch.device, calls: int, rounds: int
) -> list[list[float]]:
    """Seconds per call of each fn with the cache flushed before every call: per round the
    median of `calls` calls, the fns interleaved round by round."""
    flush = flush_buffer(device)

    def one_round_cuda(fn: Callable[[], object]) -> float:
        # Events around the call alone: the flush queued before it keeps the GPU busy while
        # the host launches the call, so neither the flush nor the launch gap is counted.
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(calls)]
        stops = [torch.cuda.Event(enable_timing=True) for _ in range(calls)]
        for start, stop in zip(starts, stops, strict=True):
            flush.zero_()
            start.record()
            fn()
            stop.record()
        stops[-1].synchronize()
        return (
            statistics.median(a.elapsed_time(b) for a, b in zip(starts, stops, strict=True)) / 1e3
        )

    def one_round_cpu(fn: Callable[[], object]) -> float:
        times = []
        for _ in range(calls):
            flush.zero_()
            begin = time.perf_counter()
            fn()
            times.append(time.perf_counter() - begin)
        return statistics.median(times)

    measure = one_round_cuda if device.type == "cuda" else one_round_cpu
    return interleaved_samples(fns, measure, rounds)
