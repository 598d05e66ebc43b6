"""Autograd of vecadd::add for the stable build, registered from Python (the stable ABI has no
C++ autograd; the native build records the same backward in C++)."""

from __future__ import annotations

import torch
import torch.autograd.forward_ad as _forward_ad

_add_functional = torch.ops.vecadd.add.default
# Under a torch.func transform or a forward-mode AD level, inputs that require no grad can still
# need autograd (a wrapped tensor, a tangent). No public API asks whether either is active; these
# are what torch.autograd.Function.apply and torch.autograd.forward_ad themselves read:
# functorch_transforms_active() and forward_ad._current_level (the innermost dual level, -1: none).
functorch_transforms_active = torch._C._are_functorch_transforms_active


def _has_tangent(tensor: torch.Tensor) -> bool:
    return _forward_ad._current_level >= 0 and _forward_ad.unpack_dual(tensor).tangent is not None


def _gradients(needs_input_grad: tuple[bool, ...], grad: torch.Tensor, alpha: float):
    # z = x + alpha * y: dz/dx = 1 and dz/dy = alpha. A gradient of the broadcast shape is
    # summed back to its input's shape by the autograd engine (which records each input's
    # shape), so no shape is saved per call; built from torch ops, so it is differentiable.
    grad_x = grad if needs_input_grad[0] else None
    grad_y = None
    if needs_input_grad[1]:
        grad_y = grad if alpha == 1 else grad * alpha
    return grad_x, grad_y


def _tangent(x_tangent, y_tangent, alpha: float, shape: torch.Size) -> torch.Tensor:
    # Forward mode: z_t = x_t + alpha * y_t at z's shape, from torch ops (so differentiable).
    if y_tangent is None:
        tangent = x_tangent
    elif x_tangent is None:
        tangent = y_tangent if alpha == 1 else y_tangent * alpha
    else:
        tangent = torch.add(x_tangent, y_tangent, alpha=alpha)
    return tangent.expand(shape)


def _add_below_autograd(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    # The public op, so that traced graphs hold vecadd::add.
    with torch._C._AutoDispatchBelowAutograd():
        return _add_functional(x, y, alpha=alpha)


# Each Function's forward takes ctx itself where torch.func does not need otherwise: a separate
# setup_context makes apply several times slower (measured in docs/portable.md).
class OperatorAdd(torch.autograd.Function):
    """torch.ops.vecadd.add's autograd, in reverse and forward mode (register_autograd would
    drop tangents)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
        result = _add_below_autograd(x, y, alpha)
        ctx.alpha, ctx.shape = alpha, result.shape
        return result

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        return (*_gradients(ctx.needs_input_grad, grad, ctx.alpha), None)

    @staticmethod
    def jvp(ctx, x_tangent, y_tangent, _alpha_tangent):
        return _tangent(x_tangent, y_tangent, ctx.alpha, ctx.shape)


class AddUnderTransforms(OperatorAdd):
    """vecadd.add under torch.func transforms, which need forward without ctx, a separate
    setup_context and a vmap rule."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
        return _add_below_autograd(x, y, alpha)

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        ctx.alpha, ctx.shape = inputs[2], output.shape


_OPERATOR_UNDER_TRANSFORMS = (
    "torch.ops.vecadd.add: the stable build's operator cannot be differentiated under torch.func "
    "transforms (its autograd is Python inside the dispatcher, where torch.func cannot run an "
    "autograd.Function: see pytorch/pytorch#170834); expected vecadd.add(x, y) on plain tensors "
    "with a Python int or float alpha, which can, or the native build"
)


def _add_autograd(keyset, x, y, *, alpha=1.0):
    needs_grad = torch.is_grad_enabled() and (x.requires_grad or y.requires_grad)
    if needs_grad or _has_tangent(x) or _has_tangent(y):
        if functorch_transforms_active():
            raise RuntimeError(_OPERATOR_UNDER_TRANSFORMS)
        return OperatorAdd.apply(x, y, alpha)
    return _add_functional.redispatch(keyset & torch._C._after_autograd_keyset, x, y, alpha=alpha)


def _direct_entry(overload: torch._ops.OpOverload):
    # The C++ callable an OpOverload's __call__ forwards to, without that Python frame: a
    # measurable share of a call on small tensors (docs/portable.md); the overload where absent.
    return getattr(overload, "_op", overload)


add_without_autograd = _direct_entry(torch.ops.vecadd._add_without_autograd.default)
add_out_without_autograd = _direct_entry(torch.ops.vecadd._add_out_without_autograd.default)

# vecadd.add's own calls get one autograd node around the kernels, without entering
# vecadd::add's Python autograd kernel and redispatching below it.


class Add(torch.autograd.Function):
    """x + y, the common call: no alpha to pass through apply or keep on the node, each of
    which costs measurable time per call (docs/portable.md)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return add_without_autograd(x, y, 1.0)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        return _gradients(ctx.needs_input_grad, grad, 1.0)


class AddScaled(torch.autograd.Function):
    """x + alpha * y for any other alpha, kept on the node for backward."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
        ctx.alpha = alpha
        return add_without_autograd(x, y, alpha)

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


_OUT_WITH_TANGENT = (
    "vecadd.add(): out= cannot be used with forward-mode AD (a tangent on x, y or out would not "
    "flow through out=); expected no out= (call vecadd.add(x, y)) or inputs without tangents"
)


def refuse_out_with_grad(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor) -> None:
    if torch.is_grad_enabled() and (x.requires_grad or y.requires_grad or out.requires_grad):
        raise RuntimeError(_OUT_WITH_GRAD)


def _add_out_autograd(keyset, x, y, *, alpha=1.0, out):
    refuse_out_with_grad(x, y, out)
    if _has_tangent(x) or _has_tangent(y) or _has_tangent(out):
        raise RuntimeError(_OUT_WITH_TANGENT)
    _add_out.redispatch(keyset & torch._C._after_autograd_keyset, x, y, alpha=alpha, out=out)
    torch.autograd.graph.increment_version(out)


_library.impl("add", _add_autograd, "Autograd", with_keyset=True)
_library.impl("add.out", _add_out_autograd, "Autograd", with_keyset=True)
