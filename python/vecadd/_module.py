"""vecadd.VecAdd: the operator as a torch.nn.Module layer."""

from __future__ import annotations

import torch

from ._ops import add


class VecAdd(torch.nn.Module):
    """A layer computing ``x + alpha * y`` with :func:`vecadd.add`.

    >>> layer = VecAdd(alpha=0.5)
    >>> layer(torch.ones(2), torch.ones(2))
    tensor([1.5000, 1.5000])
    """

    def __init__(self, alpha: float | int = 1) -> None:
        super().__init__()
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
            raise TypeError(
                f"VecAdd(): argument 'alpha' must be a real number (int or float), "
                f"got {type(alpha).__name__}"
            )
        self.alpha = alpha

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return add(x, y, alpha=self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}"
