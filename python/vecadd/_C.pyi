"""Type stub of vecadd's compiled module (registers torch.ops.vecadd.* on import)."""

import torch

def add(
    x: torch.Tensor, y: torch.Tensor, alpha: float | int, out: torch.Tensor | None, /
) -> torch.Tensor: ...
