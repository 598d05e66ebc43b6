"""A transformer-style stack: pre-norm blocks (a mixing layer, an MLP), residual adds and a
three-way mix, spelled with torch's operators or with vecadd's, from the same initial weights;
its training step (forward, backward, AdamW), compiled for ``vecadd bench --mode compiled`` and
eager for ``vecadd bench --mode training``, which times torch's spelling against vecadd's at two
batch sizes, interleaved round by round."""

from __future__ import annotations

import copy
import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import torch

from .._module import VecAdd
from .._ops import add_n
from .timing import interleaved_samples, microseconds_per_call, synchronizer

# Tokens and width of the stack: the GPU's is the size the model was measured at.
SIZES = {"cuda": (8 * 1024, 1024), "cpu": (256, 256)}
BLOCKS = 4
MIX_WEIGHTS = (1.0, 1.0, -0.5)  # torch's spelling: hidden + mlp, then alpha


class Block(torch.nn.Module):
    def __init__(self, width: int, with_vecadd: bool) -> None:
        super().__init__()
        self.norm_mix, self.norm_mlp = torch.nn.LayerNorm(width), torch.nn.LayerNorm(width)
        self.mix = torch.nn.Linear(width, width)
        self.up, self.down = torch.nn.Linear(width, 4 * width), torch.nn.Linear(4 * width, width)
        self.with_vecadd = with_vecadd
        self.residual = VecAdd() if with_vecadd else None

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        mixed = self.mix(self.norm_mix(hidden))
        hidden = self.residual(hidden, mixed) if self.with_vecadd else hidden + mixed
        mlp = self.down(torch.nn.functional.gelu(self.up(self.norm_mlp(hidden))))
        if self.with_vecadd:
            return add_n([hidden, mlp, mixed], list(MIX_WEIGHTS))
        return torch.add(hidden + mlp, mixed, alpha=MIX_WEIGHTS[2])


def stack(width: int, with_vecadd: bool) -> torch.nn.Module:
    return torch.nn.Sequential(*(Block(width, with_vecadd) for _ in range(BLOCKS)))


def with_vecadd(model: torch.nn.Module) -> torch.nn.Module:
    """The same stack, the same weights, spelled with vecadd's operators."""
    twin = copy.deepcopy(model)
    for block in twin:
        block.with_vecadd, block.residual = True, VecAdd()
    return twin


def training_step(
    model: torch.nn.Module, inputs: torch.Tensor, compiled: bool = True
) -> Callable[[], torch.Tensor]:
    """One step: forward (compiled whole, fullgraph), backward, AdamW; returns the loss."""
    forward = torch.compile(model, fullgraph=True) if compiled else model
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step() -> torch.Tensor:
        loss = forward(inputs).float().pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    return step


def step_pair(device: torch.device, dtype: torch.dtype) -> tuple[Callable, Callable]:
    """Compiled training steps of the stack with torch's operators and with vecadd's."""
    tokens, width = SIZES["cuda" if device.type == "cuda" else "cpu"]
    torch.manual_seed(0)
    model = stack(width, with_vecadd=False).to(device=device, dtype=dtype)
    inputs = torch.randn(tokens, width, device=device, dtype=dtype)
    return training_step(model, inputs), training_step(with_vecadd(model), inputs)


# The eager step's sequence (tokens) and width, and its batch sizes: on a GPU the sizes the
# issue's model was measured at (bf16), smaller on a CPU (float32).
EAGER_SIZES = {"cuda": (1024, 1024), "cpu": (128, 256)}
EAGER_DTYPES = {"cuda": torch.bfloat16, "cpu": torch.float32}
BATCHES = (1, 8)
TRAINING_RATIO = (
    "ratio = torch's time / vecadd's time (>= 1: vecadd costs nothing), median of rounds"
)


def eager_step_pair(
    device: torch.device, dtype: torch.dtype, batch: int
) -> tuple[Callable, Callable]:
    """Eager training steps of the stack with torch's operators and with vecadd's, on `batch`
    sequences."""
    tokens, width = EAGER_SIZES["cuda" if device.type == "cuda" else "cpu"]
    torch.manual_seed(0)
    model = stack(width, with_vecadd=False).to(device=device, dtype=dtype)
    inputs = torch.randn(batch, tokens, width, device=device, dtype=dtype)
    return (
        training_step(model, inputs, compiled=False),
        training_step(with_vecadd(model), inputs, compiled=False),
    )


def step_milliseconds(device: torch.device, steps: int, synced: bool) -> Callable:
    """Milliseconds per step over `steps` steps: each waited for (`synced`, the wall time a
    training loop that reads its loss sees), or back to back with one wait at the end (the
    host's and the device's work overlapping, as in a loop that does not)."""
    per_call, sync = microseconds_per_call(device, steps), synchronizer(device)

    def measure(step: Callable[[], object]) -> float:
        return per_call((lambda: (step(), sync())) if synced else step) / 1e3

    return measure


@dataclass
class TrainingRow:
    batch: int
    tokens: int
    width: int
    dtype: str
    torch_ms: float  # each step waited for
    vecadd_ms: float
    ratio: float  # median of per-round torch / vecadd
    torch_stream_ms: float  # steps back to back
    vecadd_stream_ms: float
    stream_ratio: float
    ratios: list[float] = field(default_factory=list)
    stream_ratios: list[float] = field(default_factory=list)


def measure_training(device: torch.device, batch: int, rounds: int) -> TrainingRow:
    """The eager step at one batch size, torch's spelling and vecadd's interleaved round by
    round, waited for after each step and back to back."""
    dtype = EAGER_DTYPES["cuda" if device.type == "cuda" else "cpu"]
    steps = eager_step_pair(device, dtype, batch)
    for step in steps:  # AdamW's state, the allocator's pools, lazily loaded kernels
        for _ in range(3):
            step()
    once = step_milliseconds(device, 1, True)(steps[0])
    per_round = max(3, min(50, int(200 / max(once, 1e-3))))
    synced = interleaved_samples(list(steps), step_milliseconds(device, per_round, True), rounds)
    streamed = interleaved_samples(list(steps), step_milliseconds(device, per_round, False), rounds)
    ratios = [t / v for t, v in zip(*synced, strict=True)]
    stream_ratios = [t / v for t, v in zip(*streamed, strict=True)]
    tokens, width = EAGER_SIZES["cuda" if device.type == "cuda" else "cpu"]
    return TrainingRow(
        batch,
        tokens,
        width,
        str(dtype).removeprefix("torch."),
        statistics.median(synced[0]),
        statistics.median(synced[1]),
        statistics.median(ratios),
        statistics.median(streamed[0]),
        statistics.median(streamed[1]),
        statistics.median(stream_ratios),
        ratios,
        stream_ratios,
    )


TRAINING_HEADER = (
    f"{'batch':>5} {'tokens x width':>15} {'dtype':>9} {'torch ms':>9} {'vecadd ms':>10} "
    f"{'ratio':>6}   {'streamed: torch ms':>18} {'vecadd ms':>10} {'ratio':>6}"
)


def format_training(row: TrainingRow) -> str:
    return (
        f"{row.batch:>5} {f'{row.tokens}x{row.width}':>15} {row.dtype:>9} {row.torch_ms:>9.3f} "
        f"{row.vecadd_ms:>10.3f} {row.ratio:>6.3f}   {row.torch_stream_ms:>18.3f} "
        f"{row.vecadd_stream_ms:>10.3f} {row.stream_ratio:>6.3f}"
    )


def training_record(device: torch.device, rows: list[TrainingRow]) -> dict:
    """What ``--json`` writes for the mode: the rows and what they ran on."""
    from .._info import build_info

    info = build_info()
    return {
        "device": str(device),
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "binding": info["torch_abi"],
        "binding_entries": info["binding_entries"],
        "training": [asdict(row) for row in rows],
    }


def run_training_mode(device: torch.device, rounds: int, json_path: str | None) -> None:
    """``vecadd bench --mode training``: the eager step at each batch size, printed row by row."""
    import json

    from .._info import build_info

    info = build_info()
    print(
        f"\nmode training: eager training steps of {BLOCKS} pre-norm blocks (AdamW), torch's "
        f"spelling against vecadd's; {torch.get_num_threads()} CPU threads, vecadd's "
        f"{info['torch_abi']} binding"
    )
    print(TRAINING_HEADER, flush=True)
    rows = []
    for batch in BATCHES:
        rows.append(measure_training(device, batch, rounds))
        print(format_training(rows[-1]), flush=True)
    print(f"{TRAINING_RATIO}; each step waited for, then (streamed) back to back")
    if json_path:
        with open(json_path, "w") as handle:
            json.dump(training_record(device, rows), handle, indent=1)
