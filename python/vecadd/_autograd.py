"""Autograd of the vecadd operators for the stable build, registered from Python (the stable ABI
has no C++ autograd; the native build records the same backward in C++). Every operator is a
weighted sum (vecadd/_operators.py): each input's gradient is its weight times the result's,
each tangent its weight times the input's; one set of autograd.Functions serves them all."""

from __future__ import annotations

from collections.abc import Callable

import torch

from . import _torch_private as private
from ._operators import OPERATORS, Operator

functorch_transforms_active = private.functorch_transforms_active


def _gradients(needs_input_grad, grad: torch.Tensor, weights, real=None) -> tuple:
    # A gradient of the broadcast shape is summed back to its input's shape, and cast to its
    # input's dtype, by the autograd engine (which records each input's shape and dtype), so
    # neither is saved per call; built from torch ops, so it is differentiable. torch's complex
    # gradients are conjugate-Wirtinger: conj(w) times the result's; `real`, for a complex
    # result, says which inputs are real, whose gradient is its real part.
    gradients = []
    for index, (needed, weight) in enumerate(zip(needs_input_grad, weights, strict=True)):
        if not needed:
            gradients.append(None)
            continue
        gradient = grad if weight == 1 else grad * weight.conjugate()
        if real is not None and real[index] and gradient.is_complex():
            gradient = gradient.real
        gradients.append(gradient)
    return tuple(gradients)


def _tangent(tangents, weights, shape: torch.Size, dtype: torch.dtype) -> torch.Tensor | None:
    # Forward mode: the sum of the weighted tangents at the result's shape and dtype, from torch
    # ops.
    total = None
    for tangent, weight in zip(tangents, weights, strict=True):
        if tangent is None:
            continue
        if total is None:
            total = tangent if weight == 1 else tangent * weight
        else:
            total = torch.add(total, tangent, alpha=weight)
    return None if total is None else total.to(dtype).expand(shape)


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


# Each Function's forward takes ctx itself where torch.func does not need otherwise: a separate
# setup_context makes apply several times slower (measured in docs/portable.md). Their apply
# takes (call, weights, *tensors): `call(tensors)` is the operator below autograd.
class OperatorSum(torch.autograd.Function):
    """An operator's own autograd, in reverse and forward mode (register_autograd would drop
    tangents); one subclass per operator, named for it."""

    @staticmethod
    def forward(ctx, call, weights, *tensors):
        with private.below_autograd():
            result = call(tensors)
        ctx.weights, ctx.shape, ctx.dtype = weights, result.shape, result.dtype
        ctx.real = [not t.is_complex() for t in tensors] if result.is_complex() else None
        return result

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        return (None, None, *_gradients(ctx.needs_input_grad[2:], grad, ctx.weights, ctx.real))

    @staticmethod
    def jvp(ctx, _call_tangent, _weights_tangent, *tangents):
        return _tangent(tangents, ctx.weights, ctx.shape, ctx.dtype)


class SumUnderTransforms(OperatorSum):
    """A wrapper's call under torch.func transforms, which need forward without ctx, a separate
    setup_context and a vmap rule."""

    generate_vmap_rule = True

    @staticmethod
    def forward(call, weights, *tensors):
        with private.below_autograd():
            return call(tensors)

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        ctx.weights, ctx.shape, ctx.dtype = inputs[1], output.shape, output.dtype
        real = [not t.is_complex() for t in inputs[2:]]
        ctx.real = real if output.is_complex() else None


def _functions_of(op: Operator) -> tuple[type, type]:
    name = _camel(op.name)
    return (
        type(f"Operator{name}", (OperatorSum,), {"__doc__": f"{op.call}'s autograd"}),
        type(f"{name}UnderTransforms", (SumUnderTransforms,), {"__doc__": op.summary}),
    )


FUNCTIONS = {op.name: _functions_of(op) for op in OPERATORS}


def _under_transforms(op: Operator) -> str:
    return (
        f"torch.ops.vecadd.{op.name}: the stable build's operator cannot be differentiated under "
        "torch.func transforms (its autograd is Python inside the dispatcher, where torch.func "
        "cannot run an autograd.Function: see pytorch/pytorch#170834); expected "
        f"{op.call[:-2]}(...) on plain tensors, which can, or the native build"
    )


def _inputs_text(op: Operator) -> str:
    return op.inputs if isinstance(op.inputs, str) else ", ".join(op.inputs)


def out_with_grad(op: Operator) -> str:
    inputs = _inputs_text(op)
    return (
        f"{op.call}: out= cannot be used when {inputs} or out requires grad (autograd does not "
        f"flow through out=); expected no out= (call {op.call[:-2]}({inputs})) or a call inside "
        "torch.no_grad()"
    )


def out_with_tangent(op: Operator) -> str:
    inputs = _inputs_text(op)
    return (
        f"{op.call}: out= cannot be used with forward-mode AD (a tangent on {inputs} or out "
        f"would not flow through out=); expected no out= (call {op.call[:-2]}({inputs})) or "
        "inputs without tangents"
    )


def refuse_out(op: Operator, tensors, out: torch.Tensor) -> None:
    """out= is not differentiable (as in the native build): refused when anything requires grad
    under grad mode, or carries a tangent."""
    if torch.is_grad_enabled() and (out.requires_grad or any(t.requires_grad for t in tensors)):
        raise RuntimeError(out_with_grad(op))
    if private.has_tangent(out) or any(private.has_tangent(t) for t in tensors):
        raise RuntimeError(out_with_tangent(op))


def _register(op: Operator, library: torch.library.Library) -> None:
    packet = getattr(torch.ops.vecadd, op.name)
    functional, out_overload = packet.default, packet.out
    # terms has the operator's Python signature: calling it binds the arguments, far more
    # cheaply than inspect.Signature.bind.
    terms = op.terms
    apply = FUNCTIONS[op.name][0].apply

    def autograd(keyset, *args, **kwargs):
        tensors, weights = terms(*args, **kwargs)
        needs_grad = torch.is_grad_enabled() and any(t.requires_grad for t in tensors)
        if needs_grad or any(private.has_tangent(t) for t in tensors):
            if functorch_transforms_active():
                raise RuntimeError(_under_transforms(op))
            # The operator itself below autograd, so that traced graphs hold it.
            return apply(lambda _: functional(*args, **kwargs), weights, *tensors)
        return functional.redispatch(keyset & private.keys_after_autograd(), *args, **kwargs)

    def out_autograd(keyset, *args, out, **kwargs):
        tensors, _ = terms(*args, **kwargs)
        refuse_out(op, tensors, out)
        out_overload.redispatch(keyset & private.keys_after_autograd(), *args, **kwargs, out=out)
        torch.autograd.graph.increment_version(out)

    library.impl(op.name, autograd, "Autograd", with_keyset=True)
    library.impl(f"{op.name}.out", out_autograd, "Autograd", with_keyset=True)


_library = torch.library.Library("vecadd", "IMPL")
for _operator in OPERATORS:
    _register(_operator, _library)

# vecadd.add's own calls, the common ones: one autograd node around the kernels, without
# entering vecadd::add's Python autograd kernel and redispatching below it.
add_without_autograd = private.direct_entry(torch.ops.vecadd._add_without_autograd.default)


class Add(torch.autograd.Function):
    """x + y, the common call: no alpha to pass through apply or keep on the node, each of
    which costs measurable time per call (docs/portable.md)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        result = add_without_autograd(x, y)  # the schema's alpha of 1
        if result.is_complex():  # a real input's gradient is then the result's real part
            ctx.real = (not x.is_complex(), not y.is_complex())
        return result

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        return _gradients(ctx.needs_input_grad, grad, (1.0, 1.0), getattr(ctx, "real", None))


class AddScaled(torch.autograd.Function):
    """x + alpha * y for any other alpha, kept on the node for backward."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
        ctx.alpha = alpha
        result = add_without_autograd(x, y, alpha)
        if result.is_complex():  # as in Add
            ctx.real = (not x.is_complex(), not y.is_complex())
        return result

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        real = getattr(ctx, "real", None)
        return (*_gradients(ctx.needs_input_grad[:2], grad, (1.0, ctx.alpha), real), None)


def grad_way(op: Operator, functional) -> Callable[..., torch.Tensor]:
    """The lean way's call where an input requires grad (vecadd/_lean.py): one autograd node
    around `functional`, the operator's private overload; add's own Functions for add, whose
    nodes keep no list of weights."""
    if op.name == "add":
        return lambda x, y, alpha: (
            _apply_unscaled(x, y) if alpha == 1.0 else _apply_scaled(x, y, alpha)
        )
    apply, terms = FUNCTIONS[op.name][0].apply, op.terms

    def with_grad(*arguments):
        tensors, weights = terms(*arguments)
        return apply(lambda _: functional(*arguments), weights, *tensors)

    return with_grad


_apply_unscaled, _apply_scaled = Add.apply, AddScaled.apply
