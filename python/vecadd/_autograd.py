"""Autograd of vecadd::add for the stable build, registered from Python (the stable ABI has no
C++ autograd; the native build records the same backward in C++)."""

from __future__ import annotations

import torch


def _setup_context(ctx, inputs, keyword_only_inputs, output) -> None:
    ctx.alpha = keyword_only_inputs.get("alpha", 1.0)


def _gradients(needs_input_grad: tuple[bool, ...], grad: torch.Tensor, alpha: float):
    # z = x + alpha * y: dz/dx = 1 and dz/dy = alpha. A gradient of the broadcast shape is
    # summed back to its input's shape by the autograd engine (which records each input's
    # shape), so no shape is saved per call; built from torch ops, so it is differentiable.
    grad_x = grad if needs_input_grad[0] else None
    grad_y = None
    if needs_input_grad[1]:
        grad_y = grad if alpha == 1 else grad * alpha
    return grad_x, grad_y


def _backward(ctx, grad: torch.Tensor):
    return _gradients(ctx.needs_input_grad, grad, ctx.alpha)


torch.library.register_autograd("vecadd::add", _backward, setup_context=_setup_context)

_add_without_autograd = torch.ops.vecadd._add_without_autograd.default

# vecadd.add's own calls get one autograd node around the kernels, without entering
# vecadd::add's Python autograd kernel and redispatching below it. forward takes ctx itself:
# a separate setup_context makes apply several times slower (measured in docs/portable.md).


class Add(torch.autograd.Function):
    """x + y, the common call: no alpha to pass through apply or keep on the node, each of
    which costs measurable time per call (docs/portable.md)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return _add_without_autograd(x, y, 1.0)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        return _gradients(ctx.needs_input_grad, grad, 1.0)


class AddScaled(torch.autograd.Function):
    """x + alpha * y for any other alpha, kept on the node for backward."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
        ctx.alpha = alpha
        return _add_without_autograd(x, y, alpha)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        return (*_gradients(ctx.needs_input_grad, grad, ctx.alpha), None)


# out= is not differentiable (as in the native build): refused when anything requires grad
# under grad mode; otherwise the kernel runs and out's version counter moves, so that
# autograd notices a saved tensor overwritten through out=.
_OUT_WITH_GRAD = (
    "vecadd.add(): out= cannot be used when x, y or out requires grad (autograd does not flow "
    "through out=); expected no out= (call vecadd.add(x, y)) or a call inside torch.no_grad()"
)
_add_out = torch.ops.vecadd.add.out
_library = torch.library.Library("vecadd", "IMPL")


def refuse_out_with_grad(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor) -> None:
    if torch.is_grad_enabled() and (x.requires_grad or y.requires_grad or out.requires_grad):
        raise RuntimeError(_OUT_WITH_GRAD)


def _add_out_autograd(keyset, x, y, *, alpha=1.0, out):
    refuse_out_with_grad(x, y, out)
    _add_out.redispatch(keyset & torch._C._after_autograd_keyset, x, y, alpha=alpha, out=out)
    torch.autograd.graph.increment_version(out)


_library.impl("add.out", _add_out_autograd, "Autograd", with_keyset=True)
