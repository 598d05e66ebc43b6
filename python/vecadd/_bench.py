"""Bandwidth and per-call cost of vecadd.add next to torch.add (``python -m vecadd bench``).

Both operators run on the same buffers in the same process, interleaved round by round,
so the ratio is what matters; bandwidth counts the bytes that must move (read x and y,
write z: 3 * n * itemsize).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass

import torch

from ._module import VecAdd
from ._ops import add

DTYPE_NAMES = {
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float64": torch.float64,
    "int32": torch.int32,
    "int64": torch.int64,
}
LAYOUTS = (
    "contiguous",
    "unaligned",
    "broadcast",
    "per_row",
    "transposed",
    "mixed_order",
    "channels_last_bias",
)


@dataclass
class BandwidthRow:
    device: str
    dtype: str
    n: int
    layout: str
    out: bool
    vecadd_gbps: float
    torch_gbps: float

    @property
    def ratio(self) -> float:
        return self.vecadd_gbps / self.torch_gbps


@dataclass
class CallCostRow:
    case: str
    vecadd_us: float
    torch_us: float
    # Median over rounds of vecadd's time over torch.add's in the same round: a burst of
    # host noise that slows one round of one side does not move it.
    ratio: float


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


# ---------------------------------------------------------------- timing


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


# ---------------------------------------------------------------- bandwidth


def _operands(n: int, dtype: torch.dtype, device: torch.device, layout: str):
    def make(count: int) -> torch.Tensor:
        if dtype.is_floating_point:
            return torch.randn(count, device=device).to(dtype)
        return torch.randint(-1000, 1000, (count,), device=device, dtype=dtype)

    if layout == "contiguous":
        return make(n), make(n), torch.empty(n, device=device, dtype=dtype)
    if layout == "unaligned":
        return make(n + 1)[1:], make(n + 1)[1:], torch.empty(n + 1, device=device, dtype=dtype)[1:]
    if layout == "channels_last_bias":
        channels = min(n, 64)
        pixels = n // channels
        x = make(pixels * channels).view(1, 1, pixels, channels).permute(0, 3, 1, 2)
        return x, make(channels).view(channels, 1, 1), torch.empty_like(x)
    # The rest are (rows, columns) matrices.
    columns = min(n, 1024)
    rows = n // columns

    def row_major() -> torch.Tensor:
        return make(rows * columns).view(rows, columns)

    def column_major() -> torch.Tensor:
        return make(rows * columns).view(columns, rows).t()

    def row_major_out() -> torch.Tensor:
        return torch.empty(rows, columns, device=device, dtype=dtype)

    if layout == "broadcast":
        return row_major(), make(columns), row_major_out()
    if layout == "per_row":  # one y value per row: y's inner dimension repeats
        return row_major(), make(rows).view(rows, 1), row_major_out()
    if layout == "transposed":
        x = column_major()
        return x, column_major(), torch.empty_like(x)
    if layout == "mixed_order":  # x row-major, y column-major: one of them is read across
        return row_major(), column_major(), row_major_out()
    raise ValueError(f"unknown layout {layout!r}; expected one of {', '.join(LAYOUTS)}")


def _bytes_moved(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> int:
    return (x.numel() + y.numel() + z.numel()) * z.element_size()


def measure_bandwidth(
    device: torch.device, dtype: torch.dtype, n: int, layout: str, with_out: bool, rounds: int
) -> BandwidthRow:
    x, y, z = _operands(n, dtype, device, layout)
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
    calls = max(10, min(200, int(2e9 // max(_bytes_moved(x, y, z), 1))))
    if device.type != "cuda":
        calls = max(3, min(calls, 50))
    ours_s, theirs_s = seconds_per_call([ours, theirs], device, calls, rounds)
    moved = _bytes_moved(x, y, z)
    return BandwidthRow(
        str(device),
        str(dtype).removeprefix("torch."),
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


# ---------------------------------------------------------------- driver and output


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


def format_bandwidth(rows: list[BandwidthRow]) -> str:
    lines = [
        f"{'n':>11} {'dtype':>9} {'layout':>10} {'out':>4} {'vecadd GB/s':>12} "
        f"{'torch GB/s':>11} {'ratio':>6}"
    ]
    for row in rows:
        lines.append(
            f"{row.n:>11} {row.dtype:>9} {row.layout:>10} {'yes' if row.out else 'no':>4} "
            f"{row.vecadd_gbps:>12.1f} {row.torch_gbps:>11.1f} {row.ratio:>6.3f}"
        )
    return "\n".join(lines)


def format_call_cost(rows: list[CallCostRow]) -> str:
    lines = [f"{'call (16 elements)':<34} {'vecadd us':>10} {'torch.add us':>13} {'ratio':>6}"]
    for row in rows:
        lines.append(
            f"{row.case:<34} {row.vecadd_us:>10.2f} {row.torch_us:>13.2f} {row.ratio:>6.3f}"
        )
    return "\n".join(lines)


def plot_bandwidth(rows: list[BandwidthRow], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series: dict[tuple[str, str, bool], list[BandwidthRow]] = {}
    for row in rows:
        series.setdefault((row.dtype, row.layout, row.out), []).append(row)
    figure, axis = plt.subplots(figsize=(9, 5.5))
    for index, ((dtype, layout, out), points) in enumerate(sorted(series.items())):
        color = f"C{index % 10}"
        label = f"{dtype} {layout}{' out=' if out else ''}"
        sizes = [p.n for p in points]
        axis.plot(sizes, [p.vecadd_gbps for p in points], "-", color=color, label=f"vecadd {label}")
        axis.plot(
            sizes, [p.torch_gbps for p in points], ":", color=color, label=f"torch.add {label}"
        )
    axis.set_xscale("log", base=2)
    axis.set_xlabel("n (elements)")
    axis.set_ylabel("GB/s (3 n itemsize bytes per call)")
    device = torch.device(rows[0].device)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    axis.set_title(f"vecadd.add (solid) vs torch.add (dotted), {name}")
    axis.grid(True, which="both", alpha=0.3)
    axis.legend(fontsize=6, ncol=2)
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def run_from_arguments(args: argparse.Namespace) -> int:
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    dtypes = [name.strip() for name in args.dtypes.split(",") if name.strip()]
    unknown = [name for name in dtypes if name not in DTYPE_NAMES]
    layouts = [name.strip() for name in args.layouts.split(",") if name.strip()]
    bad_layouts = [name for name in layouts if name not in LAYOUTS]
    if unknown or bad_layouts:
        print(
            f"python -m vecadd bench: unknown dtype(s) {unknown} or layout(s) {bad_layouts}; "
            f"expected dtypes from {', '.join(DTYPE_NAMES)} and layouts from {', '.join(LAYOUTS)}",
            file=sys.stderr,
        )
        return 2
    max_log2 = args.max_log2 if args.max_log2 is not None else (28 if device.type == "cuda" else 22)
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
