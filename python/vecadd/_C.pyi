"""Type stub of vecadd's compiled module (registers torch.ops.vecadd.* on import)."""

from typing import Final

import torch

TORCH_VERSION: Final[str]
CUDA_VERSION: Final[str | None]
CUDA_ARCHITECTURES: Final[str]
WITH_CUDA: Final[bool]
VERSION: Final[str]

def add(
    x: torch.Tensor, y: torch.Tensor, alpha: float | int, out: torch.Tensor | None, /
) -> torch.Tensor: ...
