"""A transformer-style stack for the compiled training step of ``vecadd bench --mode compiled``:
pre-norm blocks (a mixing layer, an MLP), residual adds and a three-way mix, spelled with
torch's operators or with vecadd's, from the same initial weights."""

from __future__ import annotations

import copy
from collections.abc import Callable

import torch

from .._module import VecAdd
from .._ops import add_n

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
