"""Timing for ``python -m vecadd bench``: back-to-back batches, CUDA graphs, cold calls,
interleaved rounds."""

from __future__ import annotations

import statistics
import time
import warnings
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


def synchronizer(device: torch.device) -> Callable[[], None]:
    """Waits for the device's queued work (nothing to wait for on a CPU)."""
    if device.type == "cuda":
        return lambda: torch.cuda.synchronize(device)
    return lambda: None


def microseconds_per_call(
    device: torch.device, calls: int
) -> Callable[[Callable[[], object]], float]:
    """Wall time per call of fn over `calls` back-to-back calls, host and device together (one
    synchronization before and after the batch), in microseconds."""
    sync = synchronizer(device)

    def per_call(fn: Callable[[], object]) -> float:
        sync()
        begin = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        return (time.perf_counter() - begin) / calls * 1e6

    return per_call


def interleaved_order(count: int, rounds: int) -> list[int]:
    """Which of `count` candidates runs at each step: each once (a warm-up), then `rounds`
    rounds, each round starting at the next candidate so that no one always runs first."""
    warm_up = list(range(count))
    return warm_up + [(r + offset) % count for r in range(rounds) for offset in range(count)]


def samples_by_candidate(order: Sequence[int], measured: Sequence[float]) -> list[list[float]]:
    """The measures of each step of an :func:`interleaved_order`, per candidate, less the
    warm-up's."""
    count = len(set(order))  # the warm-up runs each candidate once
    samples: list[list[float]] = [[] for _ in range(count)]
    for which, value in list(zip(order, measured, strict=True))[count:]:
        samples[which].append(value)
    return samples


def interleaved_samples(
    candidates: Sequence[Callable[[], object]],
    measure: Callable[[Callable[[], object]], float],
    rounds: int,
) -> list[list[float]]:
    """`measure` of each candidate in each of `rounds` rounds, in :func:`interleaved_order`."""
    order = interleaved_order(len(candidates), rounds)
    return samples_by_candidate(order, [measure(candidates[which]) for which in order])


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
    """A buffer whose zeroing evicts the operands from the last-level cache (the idea of
    triton.testing.do_bench): 256 MiB on a CPU; on a GPU twice its L2 and at least 512 MiB, so
    that the zeroing outlasts the host's launch of the next call (2x L2 alone did not on an
    H200: docs/kernel-notes.md, version 18)."""
    size = 256 * 2**20
    if device.type == "cuda":
        size = max(2 * torch.cuda.get_device_properties(device).L2_cache_size, 512 * 2**20)
    return torch.empty(size // 4, dtype=torch.int32, device=device)


def device_spans(profile: torch.profiler.profile) -> list[tuple[str, int, int]]:
    """(name, start ns, end ns) of the GPU work (kernels, copies, fills) a profiler recorded,
    in the order it started."""
    spans = [
        (event.name(), event.start_ns(), event.start_ns() + event.duration_ns())
        for event in profile.profiler.kineto_results.events()
        if event.device_type() == torch.autograd.DeviceType.CUDA
    ]
    return sorted(spans, key=lambda span: span[1])


def times_after_flushes(spans: Sequence[tuple[str, int, int]], flush_name: str) -> list[float]:
    """Seconds from the end of each flush to the end of the GPU work between it and the next
    flush (or the end): what the kernel after the call waits for; 0 where there was none."""
    times: list[float] = []
    flush_end = last_end = None
    for name, _, end in spans:
        if name == flush_name:
            if flush_end is not None:
                times.append((last_end - flush_end) / 1e9)
            flush_end = last_end = end
        elif flush_end is not None:
            last_end = max(last_end, end)
    if flush_end is not None:
        times.append((last_end - flush_end) / 1e9)
    return times


def profiled_cuda_samples(
    fns: Sequence[Callable[[], object]],
    separator: torch.Tensor,
    calls: int,
    rounds: int,
    times_of: Callable[[Sequence[tuple[str, int, int]], str], list[float]],
    mode: str,
) -> list[list[float]]:
    """Seconds per call of each fn as `times_of` reads them from the GPU's own records (the
    cold mode: from the end of each flush), per round the median of `calls` calls, the fns
    interleaved round by round."""
    # The GPU's own records (CUPTI through torch.profiler), each call after a zeroing of
    # `separator` that marks where its work begins: judged from paired ratios, CUDA events put
    # 1.5-1.8 us more on a launch that overlaps the previous work's tail than these records do
    # (docs/kernel-notes.md, version 18). The separator is known by its kernel's name, which no
    # candidate may launch.
    order = interleaved_order(len(fns), rounds)
    torch.cuda.synchronize(separator.device)  # no earlier work among the records
    with warnings.catch_warnings():
        # torch warns, once per process, that a second profiler session drops the first's
        # events: each session here is read before the next begins.
        warnings.filterwarnings("ignore", message=".*Profiler clears events", category=UserWarning)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as profile:
            separator.zero_()  # alone first: its record names the separator's kernel
            torch.cuda.synchronize(separator.device)
            for which in order:
                for _ in range(calls):
                    separator.zero_()
                    fns[which]()
            torch.cuda.synchronize(separator.device)
    spans = device_spans(profile)
    times = times_of(spans, spans[0][0])[1:] if spans else []
    if len(times) != len(order) * calls:
        raise RuntimeError(
            f"the {mode} mode reads the GPU's timestamps through torch.profiler (CUPTI): it "
            f"expected {len(order) * calls} separators of one kernel each, and found "
            f"{len(times)} among {len(spans)} GPU records"
        )
    if min(times) <= 0:
        raise RuntimeError(
            f"the {mode} mode found a call that launched no GPU work; every timed call must "
            "launch at least one kernel or copy"
        )
    per_step = [
        statistics.median(times[step * calls : (step + 1) * calls]) for step in range(len(order))
    ]
    return samples_by_candidate(order, per_step)


def cold_samples(
    fns: Sequence[Callable[[], object]], device: torch.device, calls: int, rounds: int
) -> list[list[float]]:
    """Seconds per call of each fn with the cache flushed before every call: per round the
    median of `calls` calls, the fns interleaved round by round. On a GPU a call's time runs
    from the end of its flush to the end of its last GPU work."""
    flush = flush_buffer(device)
    if device.type == "cuda":
        return profiled_cuda_samples(fns, flush, calls, rounds, times_after_flushes, "cold")

    def one_round_cpu(fn: Callable[[], object]) -> float:
        times = []
        for _ in range(calls):
            flush.zero_()
            begin = time.perf_counter()
            fn()
            times.append(time.perf_counter() - begin)
        return statistics.median(times)

    return interleaved_samples(fns, one_round_cpu, rounds)
