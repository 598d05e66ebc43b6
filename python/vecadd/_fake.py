"""The fake (and Meta) kernels of every vecadd operator, for both builds: what torch.compile and
meta tensors see. The compiled kernels check a call with the C++ rules (src/binding); this is
their Python twin for tracing, where sizes may be symbolic, written once for every weighted sum
an operator record (vecadd/_operators.py) describes, in that record's words; tests/test_fake.py
holds the two to the same words for every refused call."""

from __future__ import annotations

import inspect
import math

import torch

from ._dtypes import SUPPORTED_DTYPES, compute_dtype
from ._operators import OPERATORS, Operator, listed
from ._words import plural

_FLOAT32_MAX = float(torch.finfo(torch.float32).max)
_COMPUTES_IN_FLOAT32 = tuple(d for d in SUPPORTED_DTYPES if compute_dtype(d) == torch.float32)
_SUPPORTED_TEXT = ", ".join(str(d) for d in SUPPORTED_DTYPES[:-1]) + f" or {SUPPORTED_DTYPES[-1]}"


def number_text(value: float) -> str:
    """A weight as the C++ rules print it: whole numbers without a fraction, else 17 digits."""
    if math.isfinite(value) and value == math.trunc(value) and abs(value) < 1e16:
        return f"{value:.0f}"
    return f"{value:.17g}"


def _shape_text(sizes) -> str:
    return "[" + ", ".join(str(s) for s in sizes) + "]"


def _is_concrete(sizes) -> bool:
    return all(isinstance(s, int) for s in sizes)


# Beyond it no integral weight fits an integer dtype, and the C++ rules stop deriving it exactly.
_DERIVED_EXACTLY_BELOW = 2**100


def _check_weight(op: Operator, index: int, given: float, dtype) -> None:
    """Input `index`'s weight for dtype, derived from `given`, the value of the call's argument
    that weighs it (sub's alpha for its weight -alpha), which the words name: for integer
    tensors exactly, from an integral argument, and within the dtype's range."""
    weight = op.weight_of(index)
    value = number_text(given)
    stated = f"{op.call}: argument '{weight.argument}' " + (
        f"has {value} at index {index}" if op.weights_list else f"is {value}"
    )

    def with_weight(text: str) -> str:
        return f"{stated} ({op.input_name(index)}'s weight {text})" if weight.derived else stated

    have = f" but {op.all_inputs} have dtype {dtype}"
    if not dtype.is_floating_point:
        if not math.isfinite(given) or given != math.trunc(given):
            wanted = "integral weights" if op.weights_list else f"an integral {weight.argument}"
            words = with_weight(number_text(weight.of(given)))
            raise TypeError(f"{words}{have}; expected {wanted} for integer tensors")
        exact = weight.exactly(int(given)) if abs(given) < _DERIVED_EXACTLY_BELOW else None
        info = torch.iinfo(dtype)
        if exact is None or not info.min <= exact <= info.max:
            words = with_weight(number_text(weight.of(given)) if exact is None else str(exact))
            wanted = "a weight" if weight.derived else "an integer"
            raise ValueError(f"{words}{have}; expected {wanted} from {info.min} to {info.max}")
        return
    derived = weight.of(given)
    if dtype in _COMPUTES_IN_FLOAT32 and math.isfinite(derived) and abs(derived) > _FLOAT32_MAX:
        raise ValueError(
            f"{with_weight(number_text(derived))}, which {dtype} tensors cannot use: they compute "
            f"in float32, so expected a magnitude of at most {number_text(_FLOAT32_MAX)} (or inf "
            "or nan)"
        )


def check_list(op: Operator, tensors: list, weights: list) -> None:
    """A list's inputs: at least one, and one weight for each (`weights` as given)."""
    if not tensors:
        raise ValueError(
            f"{op.call}: argument '{op.inputs}' is an empty list; expected at least one tensor"
        )
    if len(weights) != len(tensors):
        raise ValueError(
            f"{op.call}: argument '{op.weights_list}' has {plural(len(weights), 'value')} but "
            f"'{op.inputs}' has {plural(len(tensors), 'tensor')}; expected one weight per tensor"
        )


def check_inputs(op: Operator, tensors: list, given: list) -> None:
    """`given`: each input's weighing argument as the call gave it (Operator.given_weights),
    from which each weight is derived and checked for the tensors' dtype."""
    if op.weights_list:
        check_list(op, tensors, given)
    for index, tensor in enumerate(tensors):
        if tensor.dtype not in SUPPORTED_DTYPES:
            raise TypeError(
                f"{op.call}: argument '{op.input_name(index)}' has dtype {tensor.dtype}, which "
                f"vecadd does not support; expected {_SUPPORTED_TEXT}"
            )
    first, name = tensors[0], op.input_name(0)
    for index, tensor in enumerate(tensors[1:], 1):
        if tensor.dtype != first.dtype:
            other = op.input_name(index)
            raise TypeError(
                f"{op.call}: {name} has dtype {first.dtype} but {other} has dtype {tensor.dtype}; "
                f"expected the same dtype (vecadd does not promote types: convert one, e.g. "
                f"{other}.to({name}.dtype))"
            )
    for index, tensor in enumerate(tensors[1:], 1):
        if tensor.device != first.device:
            other = op.input_name(index)
            both = "both" if len(tensors) == 2 else "all"
            raise RuntimeError(
                f"{op.call}: {name} is on {first.device} but {other} is on {tensor.device}; "
                f"expected {both} on the same device (move one, e.g. {other}.to({name}.device))"
            )
    # Each weight an argument gives (add's x has a constant 1, which no argument gives).
    for index in range(len(tensors)):
        if op.weight_name(index) is not None:
            _check_weight(op, index, given[index], first.dtype)


def _broadcast_error(op: Operator, shapes: list) -> ValueError:
    """Why shapes do not broadcast, in the C++ rules' words: each input named once with its
    shape, then the innermost dimension that fails and the first two inputs whose sizes differ
    there."""
    names = [op.input_name(index) for index in range(len(shapes))]
    message = f"{op.call}: " + listed(
        f"{name} of shape {_shape_text(shape)}" for name, shape in zip(names, shapes, strict=True)
    )
    message += " cannot be broadcast together"
    for from_end in range(max(len(shape) for shape in shapes)):
        sizes = [shape[-1 - from_end] if from_end < len(shape) else 1 for shape in shapes]
        first = next((i for i, size in enumerate(sizes) if size != 1), None)
        if first is None:
            continue
        other = next((i for i, size in enumerate(sizes) if size not in (1, sizes[first])), None)
        if other is not None:
            message += (
                f": in dimension -{from_end + 1}, {names[first]} has {sizes[first]} and "
                f"{names[other]} has {sizes[other]}"
            )
            break
    return ValueError(f"{message}; expected sizes that are equal or 1 in each trailing dimension")


def result_shape(op: Operator, tensors: list):
    """The broadcast shape, as a chain of additions broadcasts; worded like the C++ rules where
    the sizes are known."""
    shapes = [tensor.shape for tensor in tensors]
    if all(_is_concrete(shape) for shape in shapes):
        try:
            return torch.broadcast_shapes(*shapes)
        except RuntimeError:
            raise _broadcast_error(op, shapes) from None
    return torch.broadcast_shapes(*shapes)


def check_out(op: Operator, out: torch.Tensor, first: torch.Tensor, shape) -> None:
    if out.dtype != first.dtype:
        raise TypeError(
            f"{op.call}: out has dtype {out.dtype}; expected {first.dtype}, the dtype of "
            f"{op.all_inputs}"
        )
    if out.device != first.device:
        raise RuntimeError(
            f"{op.call}: out is on {out.device}; expected {first.device}, the device of "
            f"{op.all_inputs}"
        )
    if _is_concrete(out.shape) and _is_concrete(shape) and tuple(out.shape) != tuple(shape):
        raise ValueError(
            f"{op.call}: out has shape {_shape_text(out.shape)}; expected {_shape_text(shape)}, "
            f"the broadcast shape of {op.all_inputs} (vecadd does not resize out)"
        )


def fake_result(op: Operator, tensors: list, given: list):
    check_inputs(op, tensors, given)
    result_shape(op, tensors)
    # torch.add's own shape function lays the result out as the real kernels do (the C++
    # library's result_strides follows a chain of torch.add), also for sizes known at run time.
    result = torch.add(tensors[0], tensors[0]) if len(tensors) == 1 else tensors[0]
    for tensor in tensors[1:]:
        result = torch.add(result, tensor)
    return result


def _terms(op: Operator, signature: inspect.Signature, args, kwargs):
    """The call's tensors, and each one's weighing argument as the call gave it."""
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    tensors, _ = op.terms(*bound.args, **bound.kwargs)
    return tensors, op.given_weights(tuple(bound.arguments.values()), len(tensors))


def _register(op: Operator) -> None:
    signature = inspect.signature(op.terms)

    def functional(*args, **kwargs):
        return fake_result(op, *_terms(op, signature, args, kwargs))

    def out_variant(*args, out, **kwargs):
        tensors, given = _terms(op, signature, args, kwargs)
        check_inputs(op, tensors, given)
        check_out(op, out, tensors[0], result_shape(op, tensors))

    for name, is_out in op.registered_names():
        if is_out:
            # The twins take out positionally, last.
            def kernel(*args, _variant=out_variant, **kwargs):
                if "out" not in kwargs:
                    *args, kwargs["out"] = args
                return _variant(*args, **kwargs)
        else:
            kernel = functional
        torch.library.register_fake(f"vecadd::{name}", kernel)


for _operator in OPERATORS:
    _register(_operator)
