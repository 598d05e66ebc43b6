"""Example downstream package: uses vecadd's C++ library and its torch operator."""

import torch

import vecadd  # loads libvecadd and registers torch.ops.vecadd before our module loads

from . import _C

sum_of_three = _C.sum_of_three
broadcast_add = _C.broadcast_add


def shifted(x: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """x - shift, through vecadd's operator from Python."""
    return torch.ops.vecadd.add(x, shift, alpha=-1)


def residual(x: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
    """x + 0.5 * f, through this package's own C++ op that composes vecadd::add."""
    return torch.ops.vecadd_downstream.residual(x, f)


__all__ = ["broadcast_add", "residual", "shifted", "sum_of_three", "vecadd"]
