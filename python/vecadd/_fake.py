"""The fake (and Meta) kernels of every vecadd operator, for both builds: what torch.compile and
meta tensors see. The compiled kernels check a call with the C++ rules (src/binding); this is
their Python twin for tracing, where sizes may be symbolic, written once for every weighted sum
an operator record (vecadd/_operators.py) describes, in that record's words; tests/test_fake.py
holds the two to the same words for every refused call."""

from __future__ import annotations

import inspect
import math

import torch

from ._dtypes import (
    CATEGORIES,
    SUPPORTED_DTYPES,
    SUPPORTED_TEXT,
    NoCommonDtype,
    chain_result_type,
    compute_dtype,
    is_integral,
)
from ._operators import OPERATORS, Operator, listed
from ._words import plural

_FLOAT32_MAX = float(torch.finfo(torch.float32).max)
_IN_SINGLE_PRECISION = (torch.float32, torch.complex64)


def number_text(value: float) -> str:
    """A weight as the C++ rules print it: whole numbers without a fraction, else 17 digits."""
    if math.isfinite(value) and value == math.trunc(value) and abs(value) < 1e16:
        return f"{value:.0f}"
    return f"{value:.17g}"


def value_text(value: complex | float) -> str:
    """A weight as the C++ rules print it, a complex one as Python does: (1+2j)."""
    if isinstance(value, complex) and value.imag != 0:
        sign = "" if value.imag < 0 or math.copysign(1, value.imag) < 0 else "+"
        return f"({number_text(value.real)}{sign}{number_text(value.imag)}j)"
    return number_text(value.real if isinstance(value, complex) else value)


def _shape_text(sizes) -> str:
    return "[" + ", ".join(str(s) for s in sizes) + "]"


def _is_concrete(sizes) -> bool:
    return all(isinstance(s, int) for s in sizes)


# Beyond it no integral weight fits an integer dtype, and the C++ rules stop deriving it exactly.
_DERIVED_EXACTLY_BELOW = 2**100


def _check_weight(op: Operator, index: int, given: complex | float, common, have: str) -> None:
    """Input `index`'s weight for a sum in dtype `common`, derived from `given`, the value of
    the call's argument that weighs it (sub's alpha for its weight -alpha), which the words
    name: for an integer or bool sum exactly, from a real and integral argument, and within the
    dtype's range; for a floating sum from a real one. `have` says what the inputs sum in."""
    weight = op.weight_of(index)
    given = complex(given)
    real, imaginary = weight.of(given.real), weight.scale * given.imag
    value = value_text(given)
    stated = f"{op.call}: argument '{weight.argument}' " + (
        f"has {value} at index {index}" if op.weights_list else f"is {value}"
    )

    def with_weight(text: str) -> str:
        return f"{stated} ({op.input_name(index)}'s weight {text})" if weight.derived else stated

    if not common.is_complex and given.imag != 0:
        wanted = "weight" if op.weights_list else weight.argument
        words = with_weight(value_text(complex(real, imaginary)))
        raise TypeError(f"{words}{have}; expected a real {wanted} for tensors that are not complex")
    if is_integral(common):
        if not math.isfinite(given.real) or given.real != math.trunc(given.real):
            wanted = "integral weights" if op.weights_list else f"an integral {weight.argument}"
            raise TypeError(
                f"{with_weight(number_text(real))}{have}; expected {wanted} for integer tensors"
            )
        exact = (
            weight.exactly(int(given.real)) if abs(given.real) < _DERIVED_EXACTLY_BELOW else None
        )
        if common == torch.bool and exact is not None:
            return
        info = torch.iinfo(torch.int64 if common == torch.bool else common)
        lowest = -info.max if common == torch.uint8 else info.min  # a negative one wraps around
        if exact is None or not lowest <= exact <= info.max:
            words = with_weight(number_text(real) if exact is None else str(exact))
            wanted = "a weight" if weight.derived else "an integer"
            raise ValueError(f"{words}{have}; expected {wanted} from {lowest} to {info.max}")
        return
    beyond = [
        part for part in (real, imaginary) if math.isfinite(part) and abs(part) > _FLOAT32_MAX
    ]
    if compute_dtype(common) in _IN_SINGLE_PRECISION and beyond:
        raise ValueError(
            f"{with_weight(value_text(complex(real, imaginary)))}{have}, which compute in float32, "
            f"so expected a magnitude of at most {number_text(_FLOAT32_MAX)} (or inf or nan)"
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


def _is_cpu_number(tensor: torch.Tensor) -> bool:
    """A 0-dim CPU tensor, which torch lets join tensors on another device."""
    return tensor.device.type == "cpu" and tensor.dim() == 0


def check_inputs(op: Operator, tensors: list, given: list, dtype=None) -> torch.dtype:
    """The C++ rules' checks of a call's inputs, in their order and words; gives back the dtype
    the sum is computed in and returned as (`dtype`, or torch's promotion of the inputs as a
    chain of torch.add). `given`: each input's weighing argument as the call gave it
    (Operator.given_weights), from which each weight is derived and checked for that dtype."""
    if op.weights_list:
        check_list(op, tensors, given)
    for index, tensor in enumerate(tensors):
        if tensor.dtype not in SUPPORTED_DTYPES:
            raise TypeError(
                f"{op.call}: argument '{op.input_name(index)}' has dtype {tensor.dtype}, which "
                f"vecadd does not support (nor does torch.add); expected {SUPPORTED_TEXT}"
            )
    # The call runs on the device of its first input that is not a 0-dim CPU tensor.
    first = next((i for i, t in enumerate(tensors) if not _is_cpu_number(t)), 0)
    device, name = tensors[first].device, op.input_name(first)
    for index, tensor in enumerate(tensors):
        if tensor.device != device and not _is_cpu_number(tensor):
            other = op.input_name(index)
            both = "both" if len(tensors) == 2 else "all"
            raise RuntimeError(
                f"{op.call}: {name} is on {device} but {other} is on {tensor.device}; expected "
                f"{both} on the same device, but for 0-dim CPU tensors (move one, e.g. "
                f"{other}.to({name}.device))"
            )
    if dtype is not None and dtype not in SUPPORTED_DTYPES:
        raise TypeError(
            f"{op.call}: argument 'dtype' is {dtype}, which vecadd does not support; expected "
            f"{SUPPORTED_TEXT} or None"
        )
    try:
        common = chain_result_type(tensors) if dtype is None else dtype
    except NoCommonDtype as none:
        raise TypeError(
            f"{op.call}: {op.input_name(none.index)} has dtype {none.dtype} beside {none.beside} "
            "tensors, which torch promotes to a complex dtype of bfloat16's range; vecadd (and "
            "torch.add) compute in none: expected the bfloat16 tensors converted first, e.g. to "
            "torch.float32"
        ) from None
    alike = all(tensor.dtype == common for tensor in tensors)
    have = f" but {op.all_inputs} {'have dtype' if alike else 'sum in'} {common}"
    # Each weight an argument gives (add's x has a constant 1, which no argument gives).
    for index in range(len(tensors)):
        if op.weight_name(index) is not None:
            _check_weight(op, index, given[index], common, have)
    return common


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


# Why torch does not cast a sum into out, by the categories it would cross.
def _cast_words(common: torch.dtype, out: torch.dtype) -> str:
    if common.is_complex:
        return "a complex number to a real one"
    if common.is_floating_point and out != torch.bool:
        return "a floating-point number to an integer"
    return "a number that is not bool to bool"


def check_out(op: Operator, out: torch.Tensor, common: torch.dtype, device, shape) -> None:
    """out as the C++ rules check it: a dtype torch casts the sum's to, the call's device, the
    broadcast shape."""
    if out.dtype not in SUPPORTED_DTYPES:
        raise TypeError(
            f"{op.call}: argument 'out' has dtype {out.dtype}, which vecadd does not support (nor "
            f"does torch.add); expected {SUPPORTED_TEXT}"
        )
    # torch.can_cast's rule (no casting down a category), which torch.compile can trace.
    if CATEGORIES[common] > CATEGORIES[out.dtype]:
        raise TypeError(
            f"{op.call}: out has dtype {out.dtype} but the sum of {op.all_inputs} is {common}, "
            f"which torch does not cast to it ({_cast_words(common, out.dtype)}); expected out of "
            f"dtype {common} or one it casts to"
        )
    if out.device != device:
        raise RuntimeError(
            f"{op.call}: out is on {out.device}; expected {device}, the device of {op.all_inputs}"
        )
    if _is_concrete(out.shape) and _is_concrete(shape) and tuple(out.shape) != tuple(shape):
        raise ValueError(
            f"{op.call}: out has shape {_shape_text(out.shape)}; expected {_shape_text(shape)}, "
            f"the broadcast shape of {op.all_inputs} (vecadd does not resize out)"
        )


def call_device(tensors: list) -> torch.device:
    """The device a call runs on: its first input's that is not a 0-dim CPU tensor."""
    return next((t.device for t in tensors if not _is_cpu_number(t)), tensors[0].device)


def fake_result(op: Operator, tensors: list, given: list, dtype=None):
    common = check_inputs(op, tensors, given, dtype)
    result_shape(op, tensors)
    # torch.add's own shape function lays the result out as the real kernels do (the C++
    # library's result_strides follows a chain of torch.add), also for sizes known at run time.
    result = torch.add(tensors[0], tensors[0]) if len(tensors) == 1 else tensors[0]
    for tensor in tensors[1:]:
        result = torch.add(result, tensor)
    return result if result.dtype == common else torch.empty_like(result, dtype=common)


def _terms(op: Operator, signature: inspect.Signature, args, kwargs):
    """The call's tensors, each one's weighing argument as the call gave it, and the dtype the
    call asks for."""
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    tensors, _ = op.terms(*bound.args, **bound.kwargs)
    arguments = tuple(bound.arguments.values())
    return tensors, op.given_weights(arguments, len(tensors)), bound.arguments["dtype"]


def _register(op: Operator) -> None:
    signature = inspect.signature(op.terms)

    def functional(*args, **kwargs):
        return fake_result(op, *_terms(op, signature, args, kwargs))

    def out_variant(*args, out, **kwargs):
        tensors, given, dtype = _terms(op, signature, args, kwargs)
        common = check_inputs(op, tensors, given, dtype)
        check_out(op, out, common, call_device(tensors), result_shape(op, tensors))

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
