"""vecadd.add: the Python face of the torch.ops.vecadd.add operator.

Autograd, the Meta (fake) kernel and the CPU/CUDA kernels are all registered in C++, so
this wrapper only picks the leanest way in.
"""

from __future__ import annotations

import torch

from . import _C

_add_functional = torch.ops.vecadd.add.default
_add_out = torch.ops.vecadd.add.out
_is_compiling = torch.compiler.is_compiling


def add(
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    alpha: float | int = 1,
    out: torch.Tensor | None = None,
) -> torch.Tensor:
    """Return ``x + alpha * y``, broadcasting ``x`` and ``y`` like :func:`torch.add`.

    ``x`` and ``y`` must share a dtype (float16, bfloat16, float32, float64, int32 or
    int64; no type promotion) and a device. ``alpha`` must be integral for integer
    tensors. With ``out``, the result is written into it: it must already have the
    broadcast shape, the inputs' dtype and device, and may be ``x`` or ``y`` itself but
    must not partly overlap them. Differentiable with respect to ``x`` and ``y``.
    """
    if not _is_compiling():
        result = _C.add(x, y, alpha, out)
        if result is not NotImplemented:
            return result
    # Tensor subclasses and torch.compile go through the dispatcher's Python-visible op.
    if out is None:
        return _add_functional(x, y, alpha=alpha)
    _add_out(x, y, alpha=alpha, out=out)
    return out
