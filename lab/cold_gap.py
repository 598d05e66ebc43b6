# Evidence for: docs/kernel-notes.md, "How the bench times a kernel" (how the cold mode times a
# call), and docs/benchmarks.md, "Chain, cold and pipeline: NVIDIA H200, 2026-12-01".
"""Where the cold-cache gap to torch.add sits: in the kernels' run time, or around them.

    python lab/cold_gap.py [--rounds 15] [--profiled-calls 200] [--flush-mib N]

For each case, on the same x, y and z, with the L2 flushed before every call, rounds
interleaved, as median paired ratios (above 1: the second is faster):
- the bench's cold mode (vecadd/bench/timing.py: from the flush kernel's end to the call's
  end, by the GPU's timestamps): torch.add(out=z) against a second torch.add(out=z) (A/A:
  the harness's own spread and any bias of position) and against vecadd.add(out=z);
- the same calls bracketed by CUDA events recorded between the flush and the call (how the
  cold mode timed them before), against vecadd.add(out=z);
- from the profiler's device records (CUPTI): each add kernel's own run time, and the time
  from the end of the flush kernel to the add kernel's start (negative: it started over the
  flush's tail), medians over `profiled-calls` calls of each.
--flush-mib sets the buffer that the event-timed calls and the kernel records flush (default:
the bench's, vecadd.bench.timing.flush_buffer); the bench's own columns always flush the
bench's buffer.
"""

from __future__ import annotations

import argparse
import statistics

import torch

import vecadd
from vecadd.bench.modes import cold_calls
from vecadd.bench.timing import cold_samples, device_spans, flush_buffer, interleaved_samples

CASES = (
    (torch.float16, 16),
    (torch.float16, 20),
    (torch.float16, 24),
    (torch.float16, 26),
    (torch.float16, 28),
    (torch.bfloat16, 26),
    (torch.float32, 24),
    (torch.float32, 26),
)


def paired_ratio(reference: list[float], other: list[float]) -> float:
    return statistics.median(a / b for a, b in zip(reference, other, strict=True))


def kernel_records(calls: int, add, flush: torch.Tensor) -> list[tuple[str, int, int]]:
    """(name, start ns, end ns) of every device kernel in `calls` flushed calls of add."""
    torch.cuda.synchronize()  # no earlier work among the records
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as profile:
        for _ in range(calls):
            flush.zero_()
            add()
        torch.cuda.synchronize()
    return device_spans(profile)


def event_timed_samples(adds, flush: torch.Tensor, calls: int, rounds: int) -> list[list[float]]:
    """Seconds per call by CUDA events recorded between the flush and the call."""

    def one_round(add) -> float:
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(calls)]
        stops = [torch.cuda.Event(enable_timing=True) for _ in range(calls)]
        for start, stop in zip(starts, stops, strict=True):
            flush.zero_()
            start.record()
            add()
            stop.record()
        stops[-1].synchronize()
        return statistics.median(a.elapsed_time(b) for a, b in zip(starts, stops, strict=True))

    return interleaved_samples(adds, one_round, rounds)


def add_kernel_times(records: list[tuple[str, int, int]]) -> tuple[str, list[float], list[float]]:
    """The add kernel's name, its run times and its starts after the flush's end, in µs: the
    records alternate flush, add."""
    flushes, adds = records[0::2], records[1::2]
    names = {record[0] for record in adds}
    if len(flushes) != len(adds) or len(names) != 1 or {r[0] for r in flushes} & names:
        raise RuntimeError(f"expected flush and add kernels in turn, found {len(records)} records")
    durations = [(end - start) / 1e3 for _, start, end in adds]
    gaps = [(add[1] - flush[2]) / 1e3 for flush, add in zip(flushes, adds, strict=True)]
    return names.pop(), durations, gaps


def report_case(
    dtype: torch.dtype, log2: int, rounds: int, profiled_calls: int, flush: torch.Tensor
) -> None:
    device = torch.device("cuda")
    x = torch.randn(1 << log2, device=device).to(dtype)
    y = torch.randn(1 << log2, device=device).to(dtype)
    z = torch.empty_like(x)
    calls = [
        lambda: torch.add(x, y, out=z),
        lambda: torch.add(x, y, out=z),
        lambda: vecadd.add(x, y, out=z),
    ]
    samples = cold_samples(calls, device, cold_calls(device), rounds)
    timed = event_timed_samples(calls, flush, cold_calls(device), rounds)
    torch_name, torch_runs, torch_gaps = add_kernel_times(
        kernel_records(profiled_calls, calls[0], flush)
    )
    vecadd_name, vecadd_runs, vecadd_gaps = add_kernel_times(
        kernel_records(profiled_calls, calls[2], flush)
    )
    torch_run = statistics.median(torch_runs)
    vecadd_run = statistics.median(vecadd_runs)
    case = f"{str(dtype).removeprefix('torch.')} 2^{log2}"
    print(
        f"{case:>14} {paired_ratio(samples[0], samples[1]):6.3f}"
        f" {paired_ratio(samples[0], samples[2]):7.3f} {paired_ratio(timed[0], timed[2]):7.3f}"
        f" {paired_ratio(timed[0], timed[1]):7.3f} {torch_run:13.2f} {vecadd_run:14.2f}"
        f" {torch_run / vecadd_run:13.3f} {statistics.median(torch_gaps):10.2f}"
        f" {statistics.median(vecadd_gaps):11.2f}"
    )
    print(f"{'':>14} kernels: {torch_name[:70]} | {vecadd_name[:70]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--profiled-calls", type=int, default=200)
    parser.add_argument("--flush-mib", type=int, default=None)
    args = parser.parse_args()
    flush = flush_buffer(torch.device("cuda"))
    if args.flush_mib is not None:
        flush = torch.empty(args.flush_mib * 2**18, dtype=torch.int32, device="cuda")
    bench_flush = flush_buffer(torch.device("cuda")).numel() * 4 / 2**20
    print(
        f"flushed buffer: {flush.numel() * 4 / 2**20:.0f} MiB for the events and kernel"
        f" records, {bench_flush:.0f} MiB for the bench's columns (A/A, vecadd)"
    )
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, {vecadd.build_info()}")
    print("ratios: torch.add's time / the other's; kernel and gap: medians in µs")
    print("A/A, vecadd: the bench's cold mode; events, events A/A: CUDA events around the call")
    print(
        f"{'case':>14} {'A/A':>6} {'vecadd':>7} {'events':>7} {'ev. A/A':>7}"
        f" {'torch kernel':>13} {'vecadd kernel':>14}"
        f" {'kernel ratio':>13} {'torch gap':>10} {'vecadd gap':>11}"
    )
    for dtype, log2 in CASES:
        report_case(dtype, log2, args.rounds, args.profiled_calls, flush)


if __name__ == "__main__":
    main()
