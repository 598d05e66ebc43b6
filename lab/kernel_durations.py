# Evidence for: docs/benchmarks.md, "Kernel durations: NVIDIA H100, 2026-12-05", and
# docs/kernel-notes.md, "Contiguous calls".
"""The kernels' own durations, vecadd's beside torch's, as the GPU records them (CUPTI through
torch.profiler): free of launch overlap, warm (back to back on the same operands, cache-resident
where they fit) and cold (each call after a cache flush).

    python lab/kernel_durations.py [--op add|add_n] [--dtypes float32,bfloat16] \
        [--min-log2 16] [--max-log2 26] [--step 1] [--out both|yes|no] [--rounds 5] \
        [--inputs 3,4] [--device cuda] [--json FILE]

Rows, tables and JSON are those of `vecadd bench` (a "bandwidth" list for add, "add_n" for
add_n), so lab/kernel_ab_table.py reads either. On a CPU the calls' own times stand in for
the kernels', as `vecadd bench`'s chain and cold modes take them.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict

import torch

import vecadd
from vecadd.bench.add_n import add_n_candidates, add_n_row, format_add_n
from vecadd.bench.layouts import DtypeCase, bytes_moved, operands
from vecadd.bench.modes import bandwidth_row, batch_calls, candidates, cold_calls, fits_in_cache
from vecadd.bench.report import RATIO_CONVENTION, format_bandwidth, summary_lines
from vecadd.bench.timing import batch_samples, cold_samples, flush_buffer, profiled_cuda_samples

DTYPES = {str(dtype).removeprefix("torch."): dtype for dtype in vecadd.SUPPORTED_DTYPES}


def kernel_times_between(spans: Sequence[tuple[str, int, int]], separator: str) -> list[float]:
    """Seconds of GPU work between each separator record and the next (or the end): each
    record from the later of its start and the end of the work before it, so neither the gaps
    between launches nor the time a launch that overlaps its predecessor waits for it (the
    predecessor's tail, programmatic dependent launch) count as the kernel's."""
    times: list[float] = []
    total = busy_until = None
    for name, start, end in spans:
        if name == separator:
            if total is not None:
                times.append(total / 1e9)
            total, busy_until = 0, end
        elif total is not None:
            total += max(0, end - max(start, busy_until))
            busy_until = max(busy_until, end)
    if total is not None:
        times.append(total / 1e9)
    return times


Call = Callable[[], object]


def kernel_samples(
    fns: Sequence[Call], device: torch.device, calls: int, rounds: int, cold: bool
) -> list[list[float]]:
    """Seconds per call of the GPU work each fn launches, warm or cold; per round the median of
    `calls` calls, the fns interleaved round by round. On a CPU, the calls' own times."""
    if device.type != "cuda":
        if cold:
            return cold_samples(fns, device, calls, rounds)
        return batch_samples(fns, device, calls, rounds)
    # Zeroing one element marks a warm call's start without evicting anything.
    separator = flush_buffer(device) if cold else torch.empty(1, dtype=torch.int32, device=device)
    mode = "kernel-cold" if cold else "kernel-warm"
    return profiled_cuda_samples(fns, separator, calls, rounds, kernel_times_between, mode)


def measure_add(device, dtype, n, with_out, rounds) -> list:
    """Warm then cold rows of vecadd.add against torch.add on contiguous operands."""
    x, y, z = operands(n, dtype, device, "contiguous")
    moved = bytes_moved(x, y, z)
    rows = []
    for cold in (False, True):
        calls = cold_calls(device) if cold else batch_calls(device, moved)
        samples = kernel_samples(candidates(x, y, z, with_out), device, calls, rounds, cold)
        mode = "kernel-cold" if cold else "kernel-warm"
        resident = not cold and fits_in_cache(device, moved)
        row = bandwidth_row(
            device, DtypeCase(dtype), n, "contiguous", with_out, mode, moved, samples, resident
        )
        rows.append(row)
    return rows


def measure_add_n(device, dtype, n, inputs, rounds) -> list:
    """Warm then cold rows of vecadd.add_n against a torch.add chain and torch.compile."""
    fns, nbytes = add_n_candidates(device, dtype, n, inputs)
    rows = []
    for cold in (False, True):
        calls = cold_calls(device) if cold else batch_calls(device, nbytes)
        samples = kernel_samples(fns, device, calls, rounds, cold)
        mode = "kernel-cold" if cold else "kernel-warm"
        rows.append(add_n_row(mode, dtype, n, inputs, nbytes, samples))
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = "cuda" if torch.cuda.is_available() else "cpu"
    parser.add_argument("--device", default=default, help=f"cpu or cuda[:N] ({default})")
    parser.add_argument("--op", choices=("add", "add_n"), default="add")
    parser.add_argument("--dtypes", default=",".join(DTYPES), help="comma-separated (all six)")
    parser.add_argument("--min-log2", type=int, default=16, help="smallest n is 2**this (16)")
    parser.add_argument("--max-log2", type=int, default=26, help="largest n is 2**this (26)")
    parser.add_argument("--step", type=int, default=1, help="step between exponents (1)")
    parser.add_argument("--out", choices=("both", "yes", "no"), default="both")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (5)")
    parser.add_argument("--inputs", default="3,4", help="add_n: input counts (3,4)")
    parser.add_argument("--json", metavar="FILE", help="write the rows as JSON")
    args = parser.parse_args(argv)
    unknown = [name for name in args.dtypes.split(",") if name not in DTYPES]
    if unknown:
        parser.error(f"--dtypes {args.dtypes!r}: unknown {unknown}; expected from {list(DTYPES)}")
    device = torch.device(args.device)
    dtypes = [DTYPES[name] for name in args.dtypes.split(",")]
    sizes = [2**e for e in range(args.min_log2, args.max_log2 + 1, args.step)]
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    record = {"device": str(device), "device_name": name, "torch": torch.__version__}
    # Each case is (dtype, n, inputs) for add_n, (dtype, n, with_out) for add.
    if args.op == "add_n":
        variants, measure_case = [int(k) for k in args.inputs.split(",")], measure_add_n
    else:
        variants = {"both": (False, True), "yes": (True,), "no": (False,)}[args.out]
        measure_case = measure_add
    rows = [
        row
        for dtype in dtypes
        for n in sizes
        for variant in variants
        for row in measure_case(device, dtype, n, variant, args.rounds)
    ]
    rows.sort(key=lambda row: row.mode != "kernel-warm")  # stable: warm rows, then cold
    if args.op == "add_n":
        print(format_add_n(rows))
        record["add_n"] = [asdict(row) for row in rows]
    else:
        for mode in ("kernel-warm", "kernel-cold"):
            print(f"\nmode {mode}; {RATIO_CONVENTION}")
            print(format_bandwidth([row for row in rows if row.mode == mode]))
        for line in summary_lines(rows):
            print(line)
        record["bandwidth"] = [row.record() for row in rows]
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(record, handle, indent=1)


if __name__ == "__main__":
    main()
