"""Compiled blocks written with vecadd's operators next to the same blocks written with torch's
(``python -m vecadd bench --mode compiled``): what a model under torch.compile pays, or saves,
for using vecadd.

Each block is compiled twice with torch.compile's defaults (Inductor), once per spelling, and
the two run on the same tensors, interleaved round by round; the ratio is torch's time over
vecadd's (1 or more: vecadd costs nothing). A call's time is the host's and the device's
together, as a model sees it. The kernels a block launches are counted once, under the
profiler: GPU kernels on CUDA, Inductor's C++ kernels and vecadd's operator calls on a CPU.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import torch

from .. import _torch_private as private
from .._dtypes import dtype_name
from .._ops import add, add_n
from .timing import interleaved_samples, microseconds_per_call, synchronizer

RATIO = "ratio = torch's time / vecadd's time (>= 1: vecadd costs nothing), median of rounds"
# Blocks and their operands' shapes; "tiny" blocks time the per-call cost of compiled code.
TINY_SHAPE = (16,)
DEFAULT_SHAPES = {"cpu": ((2048, 1024),), "cuda": ((4096, 1024), (16384, 4096))}
DEFAULT_DTYPES = {"cpu": ("float32",), "cuda": ("float32", "bfloat16")}


def _residual_layer_norm(adder):
    def block(x, y, weight, bias):
        residual = adder(x, y)
        return residual, torch.nn.functional.layer_norm(residual, weight.shape, weight, bias)

    return block


def _scaled_gelu(adder):
    return lambda x, y: torch.nn.functional.gelu(adder(x, y))


def _sum_gelu(summer):
    return lambda a, b, c: torch.nn.functional.gelu(summer(a, b, c))


# Each block: (torch's spelling, vecadd's spelling, operands from a shape, dtype and device).
def _pair(shape, dtype, device, count):
    return [torch.randn(shape, dtype=dtype, device=device) for _ in range(count)]


def _norm_operands(shape, dtype, device):
    x, y = _pair(shape, dtype, device, 2)
    width = shape[-1]
    return [
        x,
        y,
        torch.rand(width, dtype=dtype, device=device),
        torch.randn(width, dtype=dtype, device=device),
    ]


BLOCKS: dict[str, tuple[Callable, Callable, Callable]] = {
    "residual add + layer_norm": (
        _residual_layer_norm(torch.add),
        _residual_layer_norm(add),
        _norm_operands,
    ),
    "add(alpha=0.5) + gelu": (
        _scaled_gelu(lambda x, y: torch.add(x, y, alpha=0.5)),
        _scaled_gelu(lambda x, y: add(x, y, alpha=0.5)),
        lambda shape, dtype, device: _pair(shape, dtype, device, 2),
    ),
    "add_n(3) + gelu": (
        _sum_gelu(lambda a, b, c: a + b + c),
        _sum_gelu(lambda a, b, c: add_n([a, b, c])),
        lambda shape, dtype, device: _pair(shape, dtype, device, 3),
    ),
    "add alone": (  # called from the compiled function, as a model calls it
        lambda x, y: torch.add(x, y),
        lambda x, y: add(x, y),
        lambda shape, dtype, device: _pair(shape, dtype, device, 2),
    ),
    "add_n(3) alone": (
        lambda a, b, c: a + b + c,
        lambda a, b, c: add_n([a, b, c]),
        lambda shape, dtype, device: _pair(shape, dtype, device, 3),
    ),
}
TINY_BLOCKS = ("add alone", "add_n(3) alone")


@dataclass
class CompiledRow:
    block: str
    shape: tuple[int, ...]
    dtype: str
    torch_us: float
    vecadd_us: float
    ratio: float  # median of per-round torch / vecadd
    kernels: dict[str, int] = field(default_factory=dict)  # per call, each spelling
    ratios: list[float] = field(default_factory=list)


def _calls_per_round(fn: Callable[[], object], device: torch.device) -> int:
    """Enough calls that a round lasts about 20 ms."""
    once = max(microseconds_per_call(device, 1)(fn) * 1e-6, 1e-6)
    return max(5, min(20_000, int(0.02 / once)))


def kernels_per_call(fn: Callable[[], object], device: torch.device) -> int:
    """The kernels one call launches: GPU kernels on CUDA; on a CPU, Inductor's C++ kernels
    (recorded once compiled with kernel profiling) and vecadd's operator calls."""
    activity = torch.profiler.ProfilerActivity
    activities = [activity.CPU] + ([activity.CUDA] if device.type == "cuda" else [])
    sync = synchronizer(device)
    sync()
    with torch.profiler.profile(activities=activities) as profile:
        fn()
        sync()
    if device.type == "cuda":
        kinds = (torch.autograd.DeviceType.CUDA,)
        events = [e for e in profile.events() if e.device_type in kinds]
        return sum(1 for e in events if not e.name.lower().startswith(("memcpy", "memset")))
    names = [e.name for e in profile.events()]
    return sum(1 for name in names if "cpp_fused" in name or name.startswith("vecadd::"))


def compile_block(block: Callable) -> Callable:
    """The block as torch.compile's defaults compile it, compiled on its first call."""
    return torch.compile(block, fullgraph=True)


def _paired_row(
    name: str,
    shape: tuple[int, ...],
    dtype: torch.dtype,
    calls: tuple[Callable[[], object], Callable[[], object]],
    device: torch.device,
    rounds: int,
    calls_per_round: int,
    kernels: dict[str, int],
) -> CompiledRow:
    """torch's call and vecadd's timed side by side, round by round, as a row."""
    per_call = microseconds_per_call(device, calls_per_round)
    torch_us, vecadd_us = interleaved_samples(list(calls), per_call, rounds)
    ratios = [t / v for t, v in zip(torch_us, vecadd_us, strict=True)]
    return CompiledRow(
        name,
        tuple(shape),
        dtype_name(dtype),
        statistics.median(torch_us),
        statistics.median(vecadd_us),
        statistics.median(ratios),
        kernels,
        ratios,
    )


def measure_block(
    name: str, shape: tuple[int, ...], dtype: torch.dtype, device: torch.device, rounds: int
) -> CompiledRow:
    theirs, ours, make = BLOCKS[name]
    operands = make(shape, dtype, device)

    def compiled_pair() -> tuple[Callable[[], object], Callable[[], object]]:
        """Both spellings compiled afresh, at a first call made here."""
        torch.compiler.reset()
        blocks = compile_block(theirs), compile_block(ours)
        calls = (lambda: blocks[0](*operands)), (lambda: blocks[1](*operands))
        for call in calls:
            call()
        return calls

    def kernel_counts(calls) -> dict[str, int]:
        counts = (kernels_per_call(call, device) for call in calls)
        return dict(zip(("torch", "vecadd"), counts, strict=True))

    if device.type == "cpu":
        # Inductor's C++ kernels are counted compiled with profiling on, timed as users compile.
        with private.cpu_kernels_recorded():
            kernels = kernel_counts(compiled_pair())
        calls = compiled_pair()
    else:
        calls = compiled_pair()
        kernels = kernel_counts(calls)
    per_round = _calls_per_round(calls[0], device)
    return _paired_row(name, shape, dtype, calls, device, rounds, per_round, kernels)


def training_step_row(device: torch.device, dtype: torch.dtype, rounds: int) -> CompiledRow:
    """A compiled training step (forward, backward, AdamW) of a transformer-style stack whose
    residual adds are vecadd.add (or VecAdd) and whose three-way mix is add_n, against the same
    stack with torch's operators."""
    from .training import step_pair

    torch.compiler.reset()
    steps = step_pair(device, dtype)
    for step in steps:
        step()
    per_round = max(3, min(50, _calls_per_round(steps[0], device)))
    return _paired_row("training step", (), dtype, steps, device, rounds, per_round, {})


def measure_compiled(
    device: torch.device,
    dtypes: list[torch.dtype],
    shapes: list[tuple[int, ...]],
    rounds: int,
    training: bool = True,
) -> Iterator[CompiledRow]:
    """Every block at every shape and dtype, the 16-element calls, then the training step; row
    by row, so that a long run shows what it has."""
    for dtype in dtypes:
        for shape in shapes:
            for name in BLOCKS:
                yield measure_block(name, shape, dtype, device, rounds)
        for name in TINY_BLOCKS:
            yield measure_block(name, TINY_SHAPE, dtype, device, rounds)
        if training:
            yield training_step_row(device, dtype, rounds)


HEADER = (
    f"{'block':<28}{'shape':<14}{'dtype':<10}{'torch us':>10}{'vecadd us':>11}{'ratio':>8}"
    f"{'kernels':>10}"
)


def format_row(row: CompiledRow) -> str:
    shape = "x".join(str(s) for s in row.shape) or "-"
    kernels = f"{row.kernels['torch']}/{row.kernels['vecadd']}" if row.kernels else "-"
    return (
        f"{row.block:<28}{shape:<14}{row.dtype:<10}{row.torch_us:>10.2f}{row.vecadd_us:>11.2f}"
        f"{row.ratio:>8.3f}{kernels:>10}"
    )


FOOTER = f"{RATIO}; kernels per call: torch's spelling / vecadd's"
