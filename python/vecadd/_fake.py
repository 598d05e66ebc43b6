"""The fake (and Meta) kernels of the vecadd operators, for both builds: what torch.compile and
meta tensors see. The compiled kernels check a call with the C++ rules (src/binding); this is
their Python twin for tracing, where sizes may be symbolic, and tests/test_fake.py holds the two
to the same words for every refused call."""

from __future__ import annotations

import math

import torch

from ._dtypes import SUPPORTED_DTYPES

OP = "vecadd.add()"
_FLOAT32_MAX = float(torch.finfo(torch.float32).max)
_COMPUTES_IN_FLOAT32 = (torch.float16, torch.bfloat16, torch.float32)
_SUPPORTED_TEXT = ", ".join(str(d) for d in SUPPORTED_DTYPES[:-1]) + f" or {SUPPORTED_DTYPES[-1]}"


def number_text(value: float) -> str:
    """alpha as the C++ rules print it: whole numbers without a fraction, else 17 digits."""
    if math.isfinite(value) and value == math.trunc(value) and abs(value) < 1e16:
        return f"{value:.0f}"
    return f"{value:.17g}"


def _shape_text(sizes) -> str:
    return "[" + ", ".join(str(s) for s in sizes) + "]"


def _is_concrete(sizes) -> bool:
    return all(isinstance(s, int) for s in sizes)


def _check_alpha(alpha: float, dtype: torch.dtype) -> None:
    given = f"{OP}: argument 'alpha' is {number_text(alpha)}"
    if not dtype.is_floating_point:
        if not math.isfinite(alpha) or alpha != math.trunc(alpha):
            raise TypeError(
                f"{given} but x and y have dtype {dtype}; expected an integral alpha for integer "
                "tensors"
            )
        info = torch.iinfo(dtype)
        if not (info.min <= alpha < -float(info.min)):
            raise ValueError(
                f"{given} but x and y have dtype {dtype}; expected an integer from {info.min} to "
                f"{info.max}"
            )
    elif dtype in _COMPUTES_IN_FLOAT32 and math.isfinite(alpha) and abs(alpha) > _FLOAT32_MAX:
        raise ValueError(
            f"{given}, which {dtype} tensors cannot use: they compute in float32, so expected a "
            f"magnitude of at most {number_text(_FLOAT32_MAX)} (or inf or nan)"
        )


def check_inputs(x: torch.Tensor, y: torch.Tensor, alpha: float) -> None:
    for name, t in (("x", x), ("y", y)):
        if t.dtype not in SUPPORTED_DTYPES:
            raise TypeError(
                f"{OP}: argument '{name}' has dtype {t.dtype}, which vecadd does not support; "
                f"expected {_SUPPORTED_TEXT}"
            )
    if x.dtype != y.dtype:
        raise TypeError(
            f"{OP}: x has dtype {x.dtype} but y has dtype {y.dtype}; expected the same dtype "
            "(vecadd does not promote types: convert one, e.g. y.to(x.dtype))"
        )
    if x.device != y.device:
        raise RuntimeError(
            f"{OP}: x is on {x.device} but y is on {y.device}; expected both on the same device "
            "(move one, e.g. y.to(x.device))"
        )
    _check_alpha(alpha, x.dtype)


def result_shape(x: torch.Tensor, y: torch.Tensor):
    """The broadcast shape; worded like the C++ rules where the sizes are known."""
    if _is_concrete(x.shape) and _is_concrete(y.shape):
        ndim = max(x.dim(), y.dim())
        for i in range(ndim):
            x_size = x.shape[-1 - i] if i < x.dim() else 1
            y_size = y.shape[-1 - i] if i < y.dim() else 1
            if x_size != y_size and 1 not in (x_size, y_size):
                raise ValueError(
                    f"{OP}: x of shape {_shape_text(x.shape)} and y of shape "
                    f"{_shape_text(y.shape)} cannot be broadcast together (dimension "
                    f"{ndim - 1 - i} of the result: {x_size} vs {y_size}); expected sizes that "
                    "are equal or 1 in each trailing dimension"
                )
    return torch.broadcast_shapes(x.shape, y.shape)


def check_out(out: torch.Tensor, x: torch.Tensor, shape) -> None:
    if out.dtype != x.dtype:
        raise TypeError(
            f"{OP}: out has dtype {out.dtype}; expected {x.dtype}, the dtype of x and y"
        )
    if out.device != x.device:
        raise RuntimeError(
            f"{OP}: out is on {out.device}; expected {x.device}, the device of x and y"
        )
    if _is_concrete(out.shape) and _is_concrete(shape) and tuple(out.shape) != tuple(shape):
        raise ValueError(
            f"{OP}: out has shape {_shape_text(out.shape)}; expected {_shape_text(shape)}, the "
            "broadcast shape of x and y (vecadd does not resize out)"
        )


@torch.library.register_fake("vecadd::add")
def _add_fake(x: torch.Tensor, y: torch.Tensor, *, alpha: float = 1.0) -> torch.Tensor:
    check_inputs(x, y, alpha)
    result_shape(x, y)
    # torch.add's own shape function lays the result out as the real kernels do (the C++
    # library's result_strides follows torch.add), also for sizes only known at run time.
    return torch.add(x, y)


@torch.library.register_fake("vecadd::_add_without_autograd")
def _add_without_autograd_fake(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    return _add_fake(x, y, alpha=alpha)


@torch.library.register_fake("vecadd::_add_out_without_autograd")
def _add_out_without_autograd_fake(x, y, alpha: float, out: torch.Tensor) -> None:
    _add_out_fake(x, y, alpha=alpha, out=out)


@torch.library.register_fake("vecadd::add.out")
def _add_out_fake(x: torch.Tensor, y: torch.Tensor, *, alpha: float = 1.0, out: torch.Tensor):
    check_inputs(x, y, alpha)
    check_out(out, x, result_shape(x, y))
