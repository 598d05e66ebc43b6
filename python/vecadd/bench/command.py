"""Bandwidth of vecadd.add next to torch.add, and of vecadd.add_n next to a chain of torch.add
and torch.compile (``vecadd bench [--op add_n]``).

Both operators run on the same buffers in the same process, interleaved round by round,
so the ratio is what matters; bandwidth counts the bytes that must move (read x and y,
write z: 3 * n * itemsize). The modes (chain, cold, pipeline) live in modes.py, timing,
operand layouts, reporting and figures in timing.py, layouts.py, report.py and plot.py; this
module checks the command line and drives it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from .._dtypes import SUPPORTED_DTYPES, dtype_name
from .._info import build_info
from .._words import plural
from .add_n import format_add_n, measure_add_n
from .compiled import DEFAULT_DTYPES, DEFAULT_SHAPES, FOOTER, HEADER, format_row, measure_compiled
from .layouts import LAYOUTS, NUMBER, DtypeCase
from .modes import MODES, copy_ceiling, measure
from .report import (
    H200_HBM_PEAK_GBPS,
    RATIO_CONVENTION,
    BandwidthRow,
    format_bandwidth,
    summary_lines,
)

DTYPE_NAMES = {dtype_name(dtype): dtype for dtype in SUPPORTED_DTYPES}
# The default --dtypes: the six whose kernels are tuned, so that the default run stays short.
DEFAULT_DTYPES_TEXT = "float16,bfloat16,float32,float64,int32,int64"

# argparse's exit status for a command line it refuses; the bench's own refusals (a bad value, or
# one this machine cannot serve, such as --device cuda without a GPU) give the same.
USAGE = 2


class CommandLineError(Exception):
    """A mistake on the command line or a missing requirement, shown as one line on stderr."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.exit_status = USAGE


MODE_TITLES = {
    "chain": "back-to-back calls on the same inputs (cache-resident when small)",
    "cold": "cache flushed before every call; from the flush's end to the call's end",
    "pipeline-eager": "x = 2a, z = add, w = -z, sum(z); batches of pipelines, eager",
    "pipeline-graph": "x = 2a, z = add, w = -z, sum(z); batches of pipelines in a CUDA graph",
    "compiled": "blocks under torch.compile, spelled with torch's operators and with vecadd's",
    "training": "eager training steps, spelled with torch's operators and with vecadd's",
}
# Modes with sizes of their own, not the bandwidth table's.
BLOCK_MODES = ("compiled", "training")


# `bench --help`'s closing lines; {prog} is how the user called the command line.
EXAMPLES = """examples:
  {prog} bench --device cpu
      every dtype, n = 2**10 to 2**22, 7 rounds: about 20 s on 2 idle CPU cores
  {prog} bench --device cuda --mode all --json bench.json
      on a GPU: every mode, n up to 2**28, the raw numbers kept in bench.json
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--device",
        default=None,
        help="cpu or cuda[:N] (default: cuda where a GPU is visible and vecadd's CUDA kernels are "
        "loaded, else cpu; the first line on stderr says which and why)",
    )
    parser.add_argument(
        "--dtypes",
        default=DEFAULT_DTYPES_TEXT,
        help="comma-separated dtypes of x and y, or X+Y (y of dtype Y, e.g. float32+bfloat16), or "
        f"X+number (y a Python number) (default: {DEFAULT_DTYPES_TEXT}; any of "
        f"{', '.join(DTYPE_NAMES)})",
    )
    parser.add_argument(
        "--min-log2", type=int, default=10, help="smallest n is 2**this (default: 10)"
    )
    parser.add_argument(
        "--max-log2",
        type=int,
        default=None,
        help="largest n is 2**this (default: 28 on cuda, 22 on cpu)",
    )
    parser.add_argument("--step", type=int, default=1, help="step between exponents (default: 1)")
    parser.add_argument(
        "--layouts",
        default="contiguous",
        help=f"comma-separated, from {', '.join(LAYOUTS)} (default: contiguous)",
    )
    parser.add_argument(
        "--out",
        choices=("both", "yes", "no"),
        default="both",
        help="time with out= given, without, or both (default: both)",
    )
    parser.add_argument(
        "--mode",
        default="chain",
        help="comma-separated, from chain (back to back, the default), cold (cache flushed "
        "before every call), pipeline (producer, add, consumers), compiled (blocks under "
        "torch.compile with torch's operators and with vecadd's), training (eager training "
        "steps of a stack with torch's operators and with vecadd's, batch 1 and 8), or all",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=7,
        help="timed rounds; the median of per-round ratios is kept (default: 7)",
    )
    parser.add_argument(
        "--op",
        choices=("add", "add_n"),
        default="add",
        help="add (against torch.add, the default) or add_n (against a chain of torch.add "
        "and torch.compile's kernel; modes chain and cold, contiguous tensors)",
    )
    parser.add_argument(
        "--inputs", default="3,4", help="add_n: comma-separated input counts (default: 3,4)"
    )
    parser.add_argument(
        "--shapes",
        default=None,
        help="compiled mode: operand shapes, e.g. 4096x1024,16384x4096 (default: 2048x1024 on "
        "cpu, 4096x1024,16384x4096 on cuda; 16-element calls are always timed too)",
    )
    parser.add_argument(
        "--no-training",
        action="store_true",
        help="compiled mode: leave out the compiled training step of a transformer-style stack",
    )
    parser.add_argument(
        "--json", metavar="FILE", help="write the raw numbers as JSON (default: none)"
    )
    parser.add_argument(
        "--plot", metavar="FILE.png", help="draw the ratio to torch.add against n (default: none)"
    )


# ---------------------------------------------------------------- driver


def _progress(items: list, label: str, group: Callable[[Any], str]) -> Iterator:
    """`items`, showing progress on stderr: a bar redrawn in place on a terminal; elsewhere (a
    log, a pipe) a line as each group of items (`group(item)`: a mode and dtype) is done."""
    if not sys.stderr.isatty():
        yield from _progress_lines(items, label, group)
        return
    try:
        from tqdm import tqdm
    except ImportError:
        for index, item in enumerate(items, 1):
            print(f"\r{label}: {index}/{len(items)}", end="", file=sys.stderr, flush=True)
            yield item
        print(file=sys.stderr)
        return
    yield from tqdm(items, desc=label, file=sys.stderr)


def _progress_lines(items: list, label: str, group: Callable[[Any], str]) -> Iterator:
    groups = list(dict.fromkeys(group(item) for item in items))
    started, finished = time.monotonic(), 0
    for done, item in enumerate(items, 1):
        yield item
        if done == len(items) or group(items[done]) != group(item):
            finished += 1
            print(
                f"{label}: {group(item)} done ({finished}/{len(groups)}, "
                f"{time.monotonic() - started:.0f} s so far)",
                file=sys.stderr,
                flush=True,
            )


def run_bandwidth(
    device: torch.device,
    modes: Iterable[str],
    dtypes: Iterable[DtypeCase],
    exponents: Iterable[int],
    layouts: Iterable[str],
    out_modes: Iterable[bool],
    rounds: int,
) -> list[BandwidthRow]:
    cases = [
        (mode, dtype, 2**e, layout, with_out)
        for mode in modes
        for layout in layouts
        for dtype in dtypes
        for e in exponents
        for with_out in out_modes
    ]
    rows = []

    def group(case: tuple) -> str:
        mode, dtype, _, layout, _ = case
        return f"{mode} {dtype.name}" + ("" if layout == "contiguous" else f" {layout}")

    for mode, dtype, n, layout, with_out in _progress(cases, "bench", group):
        rows.extend(measure(mode, device, dtype, n, layout, with_out, rounds))
    # A pipeline cell gives an eager and a graphed row: keep each kind of row together.
    kinds = list(dict.fromkeys(row.mode for row in rows))
    return sorted(rows, key=lambda row: kinds.index(row.mode))


def modes_from_argument(value: str) -> list[str]:
    """The modes `--mode value` names, in the order of MODES then BLOCK_MODES; `all` stands for
    every one."""
    every = (*MODES, *BLOCK_MODES)
    names = names_from_argument("--mode", value, (*every, "all"), "mode")
    return list(every) if "all" in names else [mode for mode in every if mode in names]


def shapes_from_argument(value: str) -> list[tuple[int, ...]]:
    """The shapes `--shapes value` names: comma-separated, each sizes joined by x."""
    shapes = []
    for text in value.split(","):
        sizes = text.strip().split("x")
        if not text.strip() or not all(size.isdigit() and int(size) > 0 for size in sizes):
            raise CommandLineError(
                f"--shapes {value!r}: {text.strip()!r} is not a shape; expected positive sizes "
                "joined by x, e.g. 4096x1024, shapes separated by commas"
            )
        shapes.append(tuple(int(size) for size in sizes))
    return shapes


def compiled_dtypes_and_shapes(
    args: argparse.Namespace, device: torch.device
) -> tuple[list[str], list[tuple[int, ...]]]:
    """--mode compiled's dtypes and shapes, checked: floating-point dtypes only."""
    default_dtypes = args.dtypes == DEFAULT_DTYPES_TEXT
    dtypes = list(DEFAULT_DTYPES[device.type]) if default_dtypes else args.dtypes.split(",")
    floats = [name for name in dtypes if DTYPE_NAMES[name].is_floating_point]
    if floats != dtypes:
        raise CommandLineError(
            f"--dtypes {args.dtypes!r}: the compiled mode's blocks (layer_norm, gelu) take "
            "floating-point dtypes; expected float16, bfloat16, float32 or float64"
        )
    shapes = (
        shapes_from_argument(args.shapes)
        if args.shapes is not None
        else list(DEFAULT_SHAPES[device.type])
    )
    return dtypes, shapes


def run_compiled(
    args: argparse.Namespace,
    device: torch.device,
    dtypes: list[str],
    shapes: list[tuple[int, ...]],
) -> None:
    """--mode compiled: each block compiled with torch's operators and with vecadd's."""
    print(f"\nmode compiled: {MODE_TITLES['compiled']} ({torch.get_num_threads()} CPU threads)")
    print(HEADER, flush=True)
    rows = []
    for row in measure_compiled(
        device, [DTYPE_NAMES[name] for name in dtypes], shapes, args.rounds, not args.no_training
    ):
        rows.append(row)
        print(format_row(row), flush=True)
    print(FOOTER)
    if args.json:
        record = {
            **_where(device),
            "threads": torch.get_num_threads(),
            "compiled": [asdict(row) for row in rows],
        }
        with open(args.json, "w") as handle:
            json.dump(record, handle, indent=1)


# ---------------------------------------------------------------- checking the command line


def device_from_argument(value: str | None) -> tuple[torch.device, str]:
    """The device `--device value` names, if vecadd can run on it here, and why it is the one;
    the default: cuda where a GPU is visible and vecadd's CUDA kernels are loaded, else cpu."""
    expected = "expected cpu, cuda or cuda:N"
    if value is None:
        if not torch.cuda.is_available():
            why = "no CUDA GPU is visible here (torch.cuda.is_available() is False)"
            return torch.device("cpu"), f", as {why}"
        if not build_info()["with_cuda"]:
            why = f"vecadd's CUDA kernels are not loaded ({build_info()['cuda_not_loaded']})"
            return torch.device("cpu"), f", as {why}"
        device = torch.device("cuda", torch.cuda.current_device())
        name = torch.cuda.get_device_name(device)
        return device, f" ({name}), the default where a GPU is visible; --device cpu for the CPU"
    try:
        device = torch.device(value)
    except (RuntimeError, ValueError):
        raise CommandLineError(f"--device {value!r} is not a device; {expected}") from None
    if device.type == "cpu" and device.index in (None, 0):
        return torch.device("cpu"), ", as --device asks"
    if device.type != "cuda":
        raise CommandLineError(f"--device {value!r}: vecadd runs on cpu and cuda; {expected}")
    if not build_info()["with_cuda"]:
        raise CommandLineError(
            f"--device {value!r}: no CUDA kernels of vecadd are loaded "
            f"({build_info()['cuda_not_loaded']}); use --device cpu, or install a vecadd with a "
            "CUDA library for your torch's CUDA",
        )
    if not torch.cuda.is_available():
        raise CommandLineError(
            f"--device {value!r}: no CUDA GPU is visible here (torch.cuda.is_available() is "
            "False); use --device cpu, or run where a GPU is visible (check CUDA_VISIBLE_DEVICES)",
        )
    count = torch.cuda.device_count()
    if device.index is not None and device.index >= count:
        raise CommandLineError(
            f"--device {value!r}: {plural(count, 'CUDA device')} visible; expected cuda:N with "
            f"N < {count}"
        )
    index = torch.cuda.current_device() if device.index is None else device.index
    device = torch.device("cuda", index)
    return device, f" ({torch.cuda.get_device_name(device)}), as --device asks"


def dtype_cases_from_argument(value: str) -> list[DtypeCase]:
    """The entries of `--dtypes value`: a dtype, X+Y or X+number."""
    cases = []
    for entry in names_from_argument("--dtypes", value, (), "dtype", check=False):
        x_name, plus, y_name = entry.partition("+")
        (x,) = names_from_argument("--dtypes", value, DTYPE_NAMES, "dtype", names=[x_name])
        if not plus:
            cases.append(DtypeCase(DTYPE_NAMES[x]))
            continue
        (y,) = names_from_argument(
            "--dtypes", value, (*DTYPE_NAMES, NUMBER), "dtype", names=[y_name]
        )
        cases.append(DtypeCase(DTYPE_NAMES[x], y if y == NUMBER else DTYPE_NAMES[y]))
    return cases


def names_from_argument(
    option: str,
    value: str,
    known: Iterable[str],
    kind: str,
    *,
    names: list[str] | None = None,
    check: bool = True,
) -> list[str]:
    """The comma-separated names of `option value` (or `names` from it), each one of `known` (a
    `kind`, e.g. dtype) unless `check` is False."""
    if names is None:
        names = [name.strip() for name in value.split(",") if name.strip()]
    known = tuple(known)
    unknown = [name for name in names if name not in known] if check else []
    expected = f"expected {kind}s from {', '.join(known)}"
    if not names:
        raise CommandLineError(f"{option} {value!r}: no {kind} given; {expected}")
    if unknown:
        named = (
            f"unknown {kind} {unknown[0]!r}" if len(unknown) == 1 else f"unknown {kind}s {unknown}"
        )
        raise CommandLineError(f"{option} {value!r}: {named}; {expected}")
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
            ) from None


def _where(device: torch.device) -> dict:
    """What a JSON record names first: the device and the torch that timed it."""
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    return {"device": str(device), "device_name": name, "torch": torch.__version__}


def add_n_counts(args: argparse.Namespace, modes: list[str], layouts: list[str]) -> list[int]:
    """--op add_n's input counts, checked with what it can time (modes chain and cold,
    contiguous tensors)."""
    if "pipeline" in modes or layouts != ["contiguous"]:
        raise CommandLineError(
            f"--op add_n times the modes chain and cold on contiguous tensors; got --mode "
            f"{args.mode!r} and --layouts {args.layouts!r}"
        )
    counts = []
    for value in args.inputs.split(","):
        if not value.strip().isdigit() or not 2 <= int(value) <= 8:
            raise CommandLineError(
                f"--inputs {args.inputs!r}: expected comma-separated counts from 2 to 8"
            )
        counts.append(int(value))
    return counts


def run_add_n(
    args: argparse.Namespace,
    device: torch.device,
    modes: list[str],
    dtypes: list[str],
    exponents: Iterable[int],
    counts: list[int],
) -> int:
    """--op add_n: each mode, dtype, size and input count, against the chain and torch.compile."""
    cases = [(m, d, 2**e, k) for m in modes for d in dtypes for e in exponents for k in counts]
    rows = [
        measure_add_n(mode, device, DTYPE_NAMES[dtype], n, k, args.rounds)
        for mode, dtype, n, k in _progress(cases, "bench add_n", lambda case: " ".join(case[:2]))
    ]
    print(format_add_n(rows))
    if args.json:
        record = {**_where(device), "add_n": [asdict(row) for row in rows]}
        with open(args.json, "w") as handle:
            json.dump(record, handle, indent=1)
    return 0


def run_from_arguments(args: argparse.Namespace) -> int:
    """Checks every argument, then times; a bad argument raises CommandLineError."""
    check_numbers(args)
    cases = dtype_cases_from_argument(args.dtypes)
    dtypes = [case.name for case in cases]
    if any(case.y is not None for case in cases) and (
        args.op == "add_n" or "compiled" in args.mode.split(",")
    ):
        raise CommandLineError(
            f"--dtypes {args.dtypes!r}: X+Y and X+number are timed by add's modes chain, cold and "
            "pipeline; --op add_n and --mode compiled take dtypes alone"
        )
    layouts = names_from_argument("--layouts", args.layouts, LAYOUTS, "layout")
    modes = modes_from_argument(args.mode)
    check_output_files(args)
    device, why = device_from_argument(args.device)
    max_log2 = args.max_log2 if args.max_log2 is not None else (28 if device.type == "cuda" else 22)
    if max_log2 < args.min_log2:
        raise CommandLineError(
            f"--min-log2 {args.min_log2}: expected <= {max_log2} (the default --max-log2 on "
            f"{device.type}), or give --max-log2"
        )
    exponents = range(args.min_log2, max_log2 + 1, args.step)
    compiled = compiled_dtypes_and_shapes(args, device) if "compiled" in modes else None
    training = "training" in modes
    modes = [mode for mode in modes if mode not in BLOCK_MODES]
    counts = add_n_counts(args, modes, layouts) if args.op == "add_n" and modes else None
    # Every argument is checked: from here on the command times, and says where.
    print(f"bench: timing on {device}{why}", file=sys.stderr, flush=True)
    if compiled is not None:
        run_compiled(args, device, *compiled)
    if training:
        from .training import run_training_mode

        run_training_mode(device, args.rounds, args.json)
    if not modes:
        return 0
    if args.op == "add_n":
        return run_add_n(args, device, modes, dtypes, exponents, counts)
    out_modes = {"both": (False, True), "yes": (True,), "no": (False,)}[args.out]
    rows = run_bandwidth(device, modes, cases, exponents, layouts, out_modes, args.rounds)
    cold_gbps = (
        copy_ceiling(device, 2**max_log2, args.rounds, cold=True) if "cold" in modes else None
    )
    titled = modes != ["chain"]  # the default's output stays as it was before modes existed
    for mode in dict.fromkeys(row.mode for row in rows):
        if titled:
            print(f"\nmode {mode}: {MODE_TITLES[mode]}; {RATIO_CONVENTION}")
        print(format_bandwidth([row for row in rows if row.mode == mode], cold_gbps))
    copy_gbps = copy_ceiling(device, 2**max_log2, args.rounds)
    print(f"\ncopy ceiling (z.copy_(x), float32, n=2**{max_log2}): {copy_gbps:.1f} GB/s")
    if cold_gbps is not None:
        peak = f"; H200 HBM3e peak (datasheet): {H200_HBM_PEAK_GBPS:.0f} GB/s"
        print(
            f"cold copy ceiling (cache flushed before each copy): {cold_gbps:.1f} GB/s"
            + (peak if device.type == "cuda" else "")
        )
    if not titled:
        print(RATIO_CONVENTION)
    for line in summary_lines(rows):
        print(line)
    if args.json:
        record = {
            **_where(device),
            "cuda": torch.version.cuda,
            "modes": modes,
            "copy_ceiling_gbps": copy_gbps,
            "cold_copy_ceiling_gbps": cold_gbps,
            "peak_gbps": H200_HBM_PEAK_GBPS,
            "bandwidth": [row.record() for row in rows],
        }
        with open(args.json, "w") as handle:
            json.dump(record, handle, indent=1)
    if args.plot:
        from .plot import cold_bandwidth_path, plot_cold_bandwidth, plot_ratios

        plot_ratios(rows, args.plot)
        print(f"plot: {args.plot}")
        if cold_gbps is not None:
            plot_cold_bandwidth(rows, cold_gbps, cold_bandwidth_path(args.plot))
            print(f"plot of cold bandwidth: {cold_bandwidth_path(args.plot)}")
    return 0
