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
from ._operators import OPERATORS, Operator
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


def _check_weight(op: Operator, weight: float, given: float, index: int, dtype) -> None:
    """`given`: the value of the call's argument that made the weight (sub's alpha for its
    weight -alpha), which the words name."""
    derived = not (weight == given or (math.isnan(weight) and math.isnan(given)))
    value, name = number_text(given), op.weight_name(index)
    stated = f"{op.call}: argument '{name}' " + (
        f"has {value} at index {index}" if op.weights_list else f"is {value}"
    )
    if derived:
        stated += f" ({op.input_name(index)}'s weight {number_text(weight)})"
    have = f" but {op.all_inputs} have dtype {dtype}"
    if not dtype.is_floating_point:
        if not math.isfinite(weight) or weight != math.trunc(weight):
            wanted = "integral weights" if op.weights_list else f"an integral {name}"
            raise TypeError(f"{stated}{have}; expected {wanted} for integer tensors")
        info = torch.iinfo(dtype)
        if not (info.min <= weight < -float(info.min)):
            wanted = "a weight" if derived else "an integer"
            raise ValueError(f"{stated}{have}; expected {wanted} from {info.min} to {info.max}")
    elif dtype in _COMPUTES_IN_FLOAT32 and math.isfinite(weight) and abs(weight) > _FLOAT32_MAX:
        raise ValueError(
            f"{stated}, which {dtype} tensors cannot use: they compute in float32, so expected a "
            f"magnitude of at most {number_text(_FLOAT32_MAX)} (or inf or nan)"
        )


def check_list(op: Operator, tensors: list, weights: list) -> None:
    """A list's inputs: at least one, and one weight for each."""
    if not tensors:
        raise ValueError(
            f"{op.call}: argument '{op.inputs}' is an empty list; expected at least one tensor"
        )
    if len(weights) != len(tensors):
        raise ValueError(
            f"{op.call}: argument '{op.weights_list}' has {plural(len(weights), 'value')} but "
            f"'{op.inputs}' has {plural(len(tensors), 'tensor')}; expected one weight per tensor"
        )


def check_inputs(op: Operator, tensors: list, weights: list, given: list | None = None) -> None:
    """`given`: each input's weight as the call's argument gave it, where ``terms`` derives the
    weights from the arguments (sub's alpha); None when they are the arguments themselves."""
    if op.weights_list:
        check_list(op, tensors, weights)
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
            _check_weight(
                op, weights[index], (weights if given is None else given)[index], index, first.dtype
            )


def _broadcast_error(op: Operator, before: str, name: str, sizes, dimension: int, a, b):
    return ValueError(
        f"{op.call}: {before} and {name} of shape {_shape_text(sizes)} cannot be broadcast "
        f"together (dimension {dimension} of the result: {a} vs {b}); expected sizes that are "
        "equal or 1 in each trailing dimension"
    )


def result_shape(op: Operator, tensors: list):
    """The broadcast shape, as a chain of additions broadcasts; worded like the C++ rules where
    the sizes are known."""
    shape = tensors[0].shape
    for index, tensor in enumerate(tensors[1:], 1):
        if _is_concrete(shape) and _is_concrete(tensor.shape):
            ndim = max(len(shape), tensor.dim())
            for i in range(ndim):
                so_far = shape[-1 - i] if i < len(shape) else 1
                size = tensor.shape[-1 - i] if i < tensor.dim() else 1
                if so_far != size and 1 not in (so_far, size):
                    first = op.input_name(0)
                    before = (
                        f"{first} of shape {_shape_text(shape)}"
                        if index == 1
                        else f"the shape {_shape_text(shape)} of {first} to "
                        f"{op.input_name(index - 1)}"
                    )
                    raise _broadcast_error(
                        op, before, op.input_name(index), tensor.shape, ndim - 1 - i, so_far, size
                    )
        shape = torch.broadcast_shapes(shape, tensor.shape)
    return shape


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


def fake_result(op: Operator, tensors: list, weights: list, given: list | None = None):
    check_inputs(op, tensors, weights, given)
    result_shape(op, tensors)
    # torch.add's own shape function lays the result out as the real kernels do (the C++
    # library's result_strides follows a chain of torch.add), also for sizes known at run time.
    result = torch.add(tensors[0], tensors[0]) if len(tensors) == 1 else tensors[0]
    for tensor in tensors[1:]:
        result = torch.add(result, tensor)
    return result


def _terms(op: Operator, signature: inspect.Signature, args, kwargs):
    """The call's tensors, their weights, and the weights as its arguments gave them."""
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    tensors, weights = op.terms(*bound.args, **bound.kwargs)
    return tensors, weights, op.given_weights(tuple(bound.arguments.values()), weights)


def _register(op: Operator) -> None:
    signature = inspect.signature(op.terms)

    def functional(*args, **kwargs):
        return fake_result(op, *_terms(op, signature, args, kwargs))

    def out_variant(*args, out, **kwargs):
        tensors, weights, given = _terms(op, signature, args, kwargs)
        check_inputs(op, tensors, weights, given)
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
