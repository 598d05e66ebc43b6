"""vecadd.VecAdd: the operator as a torch.nn.Module layer."""

from __future__ import annotations

import torch

from . import _torch_private as private
from ._lean import layer_call
from ._library import native_module
from ._ops import ADD_TAKES_EVERY_CALL, _as_float, add, lean_add

_runs_forward_only = private.module_runs_forward_only


def _layer_alpha(alpha: object) -> complex:
    """A bool or complex alpha as given (add's rules say which sums take it); any other number as
    the float the schema takes, the cheapest to pass on every call."""
    if isinstance(alpha, (bool, complex)):
        return alpha
    return _as_float(alpha, "alpha", "VecAdd()")


def forward_only_call(layer, x, y):
    """layer(x, y) where calling the layer would run VecAdd's forward and nothing else (no hooks,
    Module.compile, torch.jit.trace, or forward of a subclass or set on the layer) and the way in
    takes the call; NotImplemented otherwise, for Module.__call__ to take it."""
    layer_class = type(layer)
    if (
        layer_class is not VecAdd and layer_class.forward is not VecAdd.forward
    ) or not _runs_forward_only(layer):
        return NotImplemented
    if ADD_TAKES_EVERY_CALL:  # the native build's C++ entry, which torch.compile replaces
        return add(x, y, alpha=layer.alpha)
    return lean_add(x, y, layer.alpha, None)  # NotImplemented while compile or export traces


class VecAdd(torch.nn.Module):
    """A layer computing ``x + alpha * y`` with :func:`vecadd.add`.

    >>> layer = VecAdd(alpha=0.5)
    >>> layer(torch.ones(2), torch.ones(2))
    tensor([1.5000, 1.5000])
    """

    def __init__(self, alpha: complex = 1.0) -> None:
        super().__init__()
        self.alpha = _layer_alpha(alpha)

    def __call__(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Module.__call__, which costs two Python frames per call; where it would only call
        forward, the layer's call goes the way vecadd.add takes it."""
        result = forward_only_call(self, x, y)
        if result is not NotImplemented:
            return result
        return super().__call__(x, y)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return add(x, y, alpha=self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}"


# The layer's call in Python: torch.compile traces it in place of the C++ one.
CALL_IN_PYTHON = VecAdd.__call__
# The same call in C++ where the native binding has it.
VecAdd.__call__ = layer_call(CALL_IN_PYTHON, VecAdd, add, "alpha", native_module)
