"""vecadd.add: the Python face of the torch.ops.vecadd.add operator, the same for both builds.

It picks the leanest way in: the native build's vecadd._C entry, or the stable build's kernels
for plain tensors; else the dispatcher's op, after wording the errors of arguments that are not
tensors or numbers and turning alpha into the float the schema takes (refusing an int that a
float cannot hold exactly).
"""

from __future__ import annotations

import torch
import torch.autograd.forward_ad as _forward_ad

from ._library import native_module

_add_functional = torch.ops.vecadd.add.default
_increment_version = torch.autograd.graph.increment_version
_add_out = torch.ops.vecadd.add.out
# Not is_dynamo_compiling, one call cheaper: torch.export's non-strict tracing passes a
# module's plain tensor attributes as plain tensors, which must reach the public op too.
_is_compiling = torch.compiler.is_compiling
_native_add = native_module.add if native_module is not None else None
_Tensor = torch.Tensor
_grad_enabled = torch.is_grad_enabled
if native_module is None:  # the stable build, whose autograd is Python
    from ._autograd import (
        Add,
        AddScaled,
        AddUnderTransforms,
        add_out_without_autograd,
        add_without_autograd,
        functorch_transforms_active,
        refuse_out_with_grad,
    )

    _apply_unscaled, _apply_scaled = Add.apply, AddScaled.apply
    _apply_under_transforms = AddUnderTransforms.apply
_EXACT_INTEGER_LIMIT = 2**53  # every integer up to 2^53 is a float, some beyond are not
# The stable ABI delivers every C++ error as a RuntimeError whose first word is its kind.
_KINDS = {"TypeError: ": TypeError, "ValueError: ": ValueError}


def _alpha_as_float(alpha: object) -> float:
    if isinstance(alpha, float):
        return alpha
    if isinstance(alpha, bool):
        raise TypeError(
            f"vecadd.add(): argument 'alpha' is a bool ({alpha}); expected an int or a float "
            "(as torch.add, which takes a bool alpha only for bool tensors, a dtype vecadd "
            "does not support)"
        )
    if not isinstance(alpha, int):
        raise TypeError(
            f"vecadd.add(): argument 'alpha' must be a real number (int or float), got "
            f"{type(alpha).__name__}"
        )
    try:
        value = float(alpha)
    except OverflowError:
        raise OverflowError(
            "vecadd.add(): argument 'alpha' is an int beyond the float range (the op takes "
            "alpha as a float); expected a magnitude below 2**1024"
        ) from None
    if abs(alpha) > _EXACT_INTEGER_LIMIT and int(value) != alpha:
        raise ValueError(
            f"vecadd.add(): argument 'alpha' is {alpha}, which a float cannot hold exactly (the "
            f"op takes alpha as a float); expected an integer a float holds exactly, e.g. of "
            f"magnitude at most 2**53"
        )
    return value


def _check_tensor(value: object, name: str) -> None:
    if not isinstance(value, torch.Tensor):
        raise TypeError(
            f"vecadd.add(): argument '{name}' must be a torch.Tensor, got {type(value).__name__}; "
            "expected a tensor (wrap numbers or lists with torch.as_tensor)"
        )


def _typed(error: RuntimeError) -> Exception:
    message = str(error)
    for prefix, kind in _KINDS.items():
        if message.startswith(prefix):
            return kind(message.removeprefix(prefix))
    return error


def _add(x, y, alpha, out) -> torch.Tensor:
    """vecadd.add's way through the dispatcher, with every argument checked in Python first."""
    _check_tensor(x, "x")
    _check_tensor(y, "y")
    alpha = _alpha_as_float(alpha)
    if _is_compiling():
        return _call(x, y, alpha, out)
    try:
        return _call(x, y, alpha, out)
    except RuntimeError as error:
        typed = _typed(error)
        if typed is error:
            raise
        raise typed from None


def add(
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    alpha: float | int = 1.0,  # a float, as the schema takes it: the cheapest to pass on
    out: torch.Tensor | None = None,
) -> torch.Tensor:
    """Return ``x + alpha * y``, broadcasting ``x`` and ``y`` like :func:`torch.add`.

    ``x`` and ``y`` must share a dtype (float16, bfloat16, float32, float64, int32 or
    int64; no type promotion) and a device. ``alpha`` must be integral for integer
    tensors. With ``out``, the result is written into it: it must already have the
    broadcast shape, the inputs' dtype and device, and may be ``x`` or ``y`` itself but
    must not partly overlap them. Differentiable with respect to ``x`` and ``y``.
    """
    if _native_add is not None:
        if not _is_compiling():
            result = _native_add(x, y, alpha, out)
            if result is not NotImplemented:
                return result
    elif (
        # The stable build's lean way for plain tensors and an alpha a float holds exactly
        # (torch converts the int itself): the kernels directly, or one autograd node around
        # them (under torch.func or forward-mode AD, one that supports them); each check here
        # costs the per-call time of small tensors (docs/portable.md).
        type(x) is _Tensor
        and type(y) is _Tensor
        and (
            type(alpha) is float
            or (type(alpha) is int and -_EXACT_INTEGER_LIMIT <= alpha <= _EXACT_INTEGER_LIMIT)
        )
        and not _is_compiling()
    ):
        try:
            # why each of these may need autograd: vecadd/_autograd.py
            if functorch_transforms_active() or _forward_ad._current_level >= 0:
                if out is None:
                    return _apply_under_transforms(x, y, alpha)
            elif out is None:
                if (x.requires_grad or y.requires_grad) and _grad_enabled():
                    return _apply_unscaled(x, y) if alpha == 1 else _apply_scaled(x, y, alpha)
                return add_without_autograd(x, y, alpha)
            elif type(out) is _Tensor:
                refuse_out_with_grad(x, y, out)
                add_out_without_autograd(x, y, alpha, out)
                _increment_version(out)  # as add.out's autograd kernel does
                return out
        except NotImplementedError:
            pass  # a backend without vecadd kernels: the public op below names vecadd::add
        except RuntimeError as error:
            raise _typed(error) from None
    return _add(x, y, alpha, out)


def _call(x: torch.Tensor, y: torch.Tensor, alpha: float, out: torch.Tensor | None):
    if out is None:
        return _add_functional(x, y, alpha=alpha)
    _check_tensor(out, "out")
    _add_out(x, y, alpha=alpha, out=out)
    return out
