"""Type stub of vecadd's compiled module (registers torch.ops.vecadd.* on import)."""

import torch

def add(
    x: torch.Tensor, y: torch.Tensor, alpha: float | int, out: torch.Tensor | None, /
) -> torch.Tensor: ...
def add_n(
    tensors: list[torch.Tensor] | tuple[torch.Tensor, ...],
    weights: list[float | int] | tuple[float | int, ...] | None,
    out: torch.Tensor | None,
    /,
) -> torch.Tensor: ...
