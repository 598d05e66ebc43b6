"""Bandwidth and per-call cost of vecadd.add next to torch.add (``python -m vecadd bench``).

Both operators run on the same buffers in the same process, interleaved round by round,
so the ratio is what matters; bandwidth counts the bytes that must move (read x and y,
write z: 3 * n * itemsize). Timing, operand layouts and reporting live in _bench_timing,
_bench_layouts and _bench_report; this module measures and drives the command.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict
from pathlib import Path

import torch

from ._bench_layouts import LAYOUTS, bytes_moved, operands
from ._bench_report import (
    BandwidthRow,
    CallCostRow,
    format_bandwidth,
    format_call_cost,
    plot_bandwidth,
)
from ._bench_timing import interleaved_samples, seconds_per_call
from ._build_config import WITH_CUDA
from ._command_line import UNAVAILABLE, CommandLineError
from ._dtypes import SUPPORTED_DTYPES, dtype_name
from ._module import VecAdd
from ._ops import add

DTYPE_NAMES = {dtype_name(dtype): dtype for dtype in SUPPORTED_DTYPES}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", default=None, help="cpu or cuda[:N] (default: cuda if present)")
    parser.add_argument(
        "--dtypes", default=",".join(DTYPE_NAMES), help="comma-separated dtypes (default: all six)"
    )
    parser.add_argument("--min-log2", type=int, default=10, help="smallest n is 2**this (10)")
    parser.add_argument(
        "--max-log2", type=int, default=None, help="largest n is 2**this (28 on CUDA, 22 on CPU)"
    )
    parser.add_argument("--step", type=int, default=1, help="step between exponents (1)")
    parser.add_argument(
        "--layouts",
        default="contiguous",
        help=f"comma-separated, from {', '.join(LAYOUTS)} (default: contiguous)",
    )
    parser.add_argument(
        "--out",
        choices=("both", "yes", "no"),
        default="both",
        help="time with out= given, without, or both (default)",
    )
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds; the median is kept")
    parser.add_argument(
        "--call-cost",
        action="store_true",
        help="also time the per-call host cost on 16-element tensors",
    )
    parser.add_argument("--json", metavar="FILE", help="write the raw numbers as JSON")
    parser.add_argument("--plot", metavar="FILE.png", help="draw bandwidth against n")


# ---------------------------------------------------------------- bandwidth


def measure_bandwidth(
    device: torch.device, dtype: torch.dtype, n: int, layout: str, with_out: bool, rounds: int
) -> BandwidthRow:
    x, y, z = operands(n, dtype, device, layout)
    if with_out:

        def ours() -> object:
            return add(x, y, out=z)

        def theirs() -> object:
            return torch.add(x, y, out=z)
    else:

        def ours() -> object:
            return add(x, y)

        def theirs() -> object:
            return torch.add(x, y)

    # Enough back-to-back calls that each timed batch lasts about a millisecond or more.
    calls = max(10, min(200, int(2e9 // max(bytes_moved(x, y, z), 1))))
    if device.type != "cuda":
        calls = max(3, min(calls, 50))
    ours_s, theirs_s = seconds_per_call([ours, theirs], device, calls, rounds)
    moved = bytes_moved(x, y, z)
    return BandwidthRow(
        str(device),
        dtype_name(dtype),
        n,
        layout,
        with_out,
        moved / ours_s / 1e9,
        moved / theirs_s / 1e9,
    )


def measure_copy_ceiling(device: torch.device, n: int, rounds: int) -> float:
    """GB/s of torch's device copy z.copy_(x) (read n, write n): the memory ceiling."""
    x = torch.randn(n, device=device)
    z = torch.empty_like(x)
    calls = max(3, min(50, int(2e9 // (2 * n * 4))))
    (seconds,) = seconds_per_call([lambda: z.copy_(x)], device, calls, rounds)
    return 2 * n * 4 / seconds / 1e9


# ---------------------------------------------------------------- per-call host cost


def measure_call_cost(
    device: torch.device, rounds: int = 11, calls: int = 20_000
) -> list[CallCostRow]:
    """Wall time per call on 16-element tensors, one synchronization per batch of `calls`;
    medians over `rounds` interleaved rounds."""

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    def per_call(fn: Callable[[], object]) -> float:
        sync()
        begin = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        return (time.perf_counter() - begin) / calls * 1e6

    rows = []
    layer = VecAdd()
    for requires_grad in (False, True):
        x = torch.randn(16, device=device, requires_grad=requires_grad)
        y = torch.randn(16, device=device, requires_grad=requires_grad)
        z = torch.empty(16, device=device)
        suffix = " (requires grad)" if requires_grad else ""
        cases = [
            ("add(x, y)", lambda x=x, y=y: add(x, y), lambda x=x, y=y: torch.add(x, y)),
            ("VecAdd()(x, y)", lambda x=x, y=y: layer(x, y), lambda x=x, y=y: torch.add(x, y)),
        ]
        if not requires_grad:
            cases.insert(
                1,
                (
                    "add(x, y, out=z)",
                    lambda x=x, y=y, z=z: add(x, y, out=z),
                    lambda x=x, y=y, z=z: torch.add(x, y, out=z),
                ),
            )
        for name, ours, theirs in cases:
            ours_us, theirs_us = interleaved_samples([ours, theirs], per_call, rounds)
            paired = statistics.median(a / b for a, b in zip(ours_us, theirs_us, strict=True))
            rows.append(
                CallCostRow(
                    name + suffix,
                    statistics.median(ours_us),
                    statistics.median(theirs_us),
                    paired,
                )
            )
    return rows


# ---------------------------------------------------------------- driver


def _progress(items: list, label: str) -> Iterator:
    try:
        from tqdm import tqdm
    except ImportError:
        for index, item in enumerate(items, 1):
            print(f"\r{label}: {index}/{len(items)}", end="", file=sys.stderr, flush=True)
            yield item
        print(file=sys.stderr)
        return
    yield from tqdm(items, desc=label, file=sys.stderr)


def run_bandwidth(
    device: torch.device,
    dtypes: Iterable[str],
    exponents: Iterable[int],
    layouts: Iterable[str],
    out_modes: Iterable[bool],
    rounds: int,
) -> list[BandwidthRow]:
    cases = [
        (dtype, 2**e, layout, with_out)
        for layout in layouts
        for dtype in dtypes
        for e in exponents
        for with_out in out_modes
    ]
    rows = []
    for dtype, n, layout, with_out in _progress(cases, "bench"):
        rows.append(measure_bandwidth(device, DTYPE_NAMES[dtype], n, layout, with_out, rounds))
    return rows


# ---------------------------------------------------------------- checking the command line


def device_from_argument(value: str | None) -> torch.device:
    """The device `--device value` names, if vecadd can run on it here; the default: cuda if
    a GPU is visible, else cpu."""
    expected = "expected cpu, cuda or cuda:N"
    if value is None:
        if torch.cuda.is_available():
            return torch.device("cuda", torch.cuda.current_device())
        return torch.device("cpu")
    try:
        device = torch.device(value)
    except (RuntimeError, ValueError):
        raise CommandLineError(f"--device {value!r} is not a device; {expected}") from None
    if device.type == "cpu" and device.index in (None, 0):
        return torch.device("cpu")
    if device.type != "cuda":
        raise CommandLineError(f"--device {value!r}: vecadd runs on cpu and cuda; {expected}")
    if not WITH_CUDA:
        raise CommandLineError(
            f"--device {value!r}: this vecadd was built without CUDA; use --device cpu, "
            "or install a CUDA build of vecadd",
            UNAVAILABLE,
        )
    if not torch.cuda.is_available():
        raise CommandLineError(
            f"--device {value!r}: no CUDA GPU is visible here (torch.cuda.is_available() is "
            "False); use --device cpu, or run where a GPU is visible (check CUDA_VISIBLE_DEVICES)",
            UNAVAILABLE,
        )
    count = torch.cuda.device_count()
    if device.index is not None and device.index >= count:
        raise CommandLineError(
            f"--device {value!r}: {count} CUDA device(s) visible; expected cuda:N with N < {count}"
        )
    index = torch.cuda.current_device() if device.index is None else device.index
    return torch.device("cuda", index)


def names_from_argument(option: str, value: str, known: Iterable[str], kind: str) -> list[str]:
    """The comma-separated names of `option value`, each one of `known` (a `kind`, e.g. dtype)."""
    names = [name.strip() for name in value.split(",") if name.strip()]
    known = tuple(known)
    unknown = [name for name in names if name not in known]
    expected = f"expected {kind}s from {', '.join(known)}"
    if not names:
        raise CommandLineError(f"{option} {value!r}: no {kind} given; {expected}")
    if unknown:
        raise CommandLineError(f"{option} {value!r}: unknown {kind}(s) {unknown}; {expected}")
    return names


def check_numbers(args: argparse.Namespace) -> None:
    for option, number, least in (
        ("--min-log2", args.min_log2, 0),
        ("--step", args.step, 1),
        ("--rounds", args.rounds, 1),
    ):
        if number < least:
            raise CommandLineError(f"{option} {number}: expected an integer >= {least}")
    if args.max_log2 is not None and args.max_log2 < args.min_log2:
        raise CommandLineError(
            f"--max-log2 {args.max_log2}: expected >= --min-log2 ({args.min_log2})"
        )


def check_output_files(args: argparse.Namespace) -> None:
    """Before timing anything: what writing the results needs is there."""
    for option, path in (("--json", args.json), ("--plot", args.plot)):
        if path is not None and not Path(path).absolute().parent.is_dir():
            folder = Path(path).absolute().parent
            raise CommandLineError(f"{option} {path!r}: folder '{folder}' does not exist")
    if args.plot is not None:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise CommandLineError(
                f"--plot {args.plot!r} needs matplotlib, which is not installed; "
                "pip install 'vecadd[bench]' (or pip install matplotlib), or leave out --plot",
                UNAVAILABLE,
            ) from None


def run_from_arguments(args: argparse.Namespace) -> int:
    """Checks every argument, then times; a bad argument raises CommandLineError."""
    check_numbers(args)
    dtypes = names_from_argument("--dtypes", args.dtypes, DTYPE_NAMES, "dtype")
    layouts = names_from_argument("--layouts", args.layouts, LAYOUTS, "layout")
    check_output_files(args)
    device = device_from_argument(args.device)
    max_log2 = args.max_log2 if args.max_log2 is not None else (28 if device.type == "cuda" else 22)
    if max_log2 < args.min_log2:
        raise CommandLineError(
            f"--min-log2 {args.min_log2}: expected <= {max_log2} (the default --max-log2 on "
            f"{device.type}), or give --max-log2"
        )
    exponents = range(args.min_log2, max_log2 + 1, args.step)
    out_modes = {"both": (False, True), "yes": (True,), "no": (False,)}[args.out]
    rows = run_bandwidth(device, dtypes, exponents, layouts, out_modes, args.rounds)
    print(format_bandwidth(rows))
    copy_gbps = measure_copy_ceiling(device, 2**max_log2, args.rounds)
    print(f"\ncopy ceiling (z.copy_(x), float32, n=2**{max_log2}): {copy_gbps:.1f} GB/s")
    call_rows = measure_call_cost(device) if args.call_cost else []
    if call_rows:
        print()
        print(format_call_cost(call_rows))
    if args.json:
        record = {
            "device": str(device),
            "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "copy_ceiling_gbps": copy_gbps,
            "bandwidth": [asdict(row) | {"ratio": row.ratio} for row in rows],
            "call_cost": [asdict(row) for row in call_rows],
        }
        with open(args.json, "w") as handle:
            json.dump(record, handle, indent=1)
    if args.plot:
        plot_bandwidth(rows, args.plot)
    return 0
