"""Where the cold-cache gap to torch.add sits: in the kernels' run time, or around them.

    python lab/cold_gap.py [--rounds 15] [--profiled-calls 200]

For each case, on the same x, y and z, with the L2 flushed before every call (the bench's
cold mode, vecadd/_bench_timing.py):
- event-timed, rounds interleaved: torch.add(out=z) against a second torch.add(out=z) (the
  harness's own spread and any bias of position) and against vecadd.add(out=z), as median
  paired ratios (above 1: the second is faster);
- from the profiler's device records (CUPTI) of the same calls: each add kernel's own run time,
  and the time from the end of the flush kernel to the add kernel's start, medians over
  `profiled-calls` calls of each.
If the kernels' own times agree and the event-timed ratio does not, the gap is in the launch;
if they differ by as much as the event-timed ratio, it is in the kernel's run.
"""

from __future__ import annotations

import argparse
import statistics

import torch

import vecadd
from vecadd._bench_modes import cold_calls
from vecadd._bench_timing import cold_samples, flush_buffer

CASES = (
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
    activities = [torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities) as profile:
        for _ in range(calls):
            flush.zero_()
            add()
        torch.cuda.synchronize()
    records = []
    for event in profile.profiler.kineto_results.events():
        if event.device_type() == torch.autograd.DeviceType.CUDA:
            start = event.start_ns()
            records.append((event.name(), start, start + event.duration_ns()))
    return sorted(records, key=lambda record: record[1])


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


def report_case(dtype: torch.dtype, log2: int, rounds: int, profiled_calls: int) -> None:
    device = torch.device("cuda")
    flush = flush_buffer(device)
    x = torch.randn(1 << log2, device=device).to(dtype)
    y = torch.randn(1 << log2, device=device).to(dtype)
    z = torch.empty_like(x)
    calls = [
        lambda: torch.add(x, y, out=z),
        lambda: torch.add(x, y, out=z),
        lambda: vecadd.add(x, y, out=z),
    ]
    samples = cold_samples(calls, device, cold_calls(device), rounds)
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
        f" {paired_ratio(samples[0], samples[2]):7.3f} {torch_run:13.2f} {vecadd_run:14.2f}"
        f" {torch_run / vecadd_run:13.3f} {statistics.median(torch_gaps):10.2f}"
        f" {statistics.median(vecadd_gaps):11.2f}"
    )
    print(f"{'':>14} kernels: {torch_name[:70]} | {vecadd_name[:70]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--profiled-calls", type=int, default=200)
    args = parser.parse_args()
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, {vecadd.build_info()}")
    print("ratios: torch.add's time / the other's; kernel and gap: medians in µs")
    print(
        f"{'case':>14} {'A/A':>6} {'vecadd':>7} {'torch kernel':>13} {'vecadd kernel':>14}"
        f" {'kernel ratio':>13} {'torch gap':>10} {'vecadd gap':>11}"
    )
    for dtype, log2 in CASES:
        report_case(dtype, log2, args.rounds, args.profiled_calls)


if __name__ == "__main__":
    main()
