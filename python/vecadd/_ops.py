"""The Python face of the vecadd operators, the same for both builds.

Each wrapper first tries its operator's lean way (vecadd/_lean.py: plain tensors and numbers in
eager mode, straight to the kernels; the native build's vecadd._C entries for add and add_n).
Otherwise the checked way (``call``) checks the arguments as the record (vecadd/_operators.py)
declares them, words the errors of arguments that are not tensors or numbers, turns weights into the
floats the schemas take (refusing an int that a float cannot hold exactly), and calls the
dispatcher's op (under a torch.func transform or forward-mode AD, in the stable build, through
an autograd.Function that supports them).
"""

from __future__ import annotations

from collections.abc import Callable
from types import BuiltinFunctionType

import torch

from . import _compile
from . import _torch_private as private
from ._dtypes import SUPPORTED_DTYPES, SUPPORTED_TEXT, NoCommonDtype, chain_result_type
from ._fake import check_out
from ._lean import lean_way, public_entry, traced_way, untraced
from ._library import native_module
from ._operators import ADD, ADD_N, BY_NAME, EXACT_INTEGER_LIMIT, OPERATORS, Operator
from ._sharding import check_distributed
from ._words import typed_error

# The checked way's question, true under torch.compile and torch.export alike (the lean ways
# ask the same inline: TRACING in vecadd/_torch_private.py).
is_compiling = torch.compiler.is_compiling
is_exporting = torch.compiler.is_exporting
_Tensor = torch.Tensor
_transforms_active = private.transforms_or_forward_ad_active
if native_module is None:  # the stable build, whose autograd is Python
    from ._autograd import FUNCTIONS, grad_way


def _as_float(value: object, name: str, call: str) -> float:
    """A real weight as the float the schema takes: an int a float holds exactly, a float, or a
    bool (as 1.0 or 0.0: the rules take it for a bool sum alone, as torch does); errors name the
    call (e.g. "vecadd.add()") and the argument."""
    if isinstance(value, float):
        return value
    if not isinstance(value, int):
        raise TypeError(
            f"{call}: argument '{name}' must be a number (bool, int, float or complex), got "
            f"{type(value).__name__}"
        )
    try:
        converted = float(value)
    except OverflowError:
        raise OverflowError(
            f"{call}: argument '{name}' is an int beyond the float range (the op takes it as "
            "a float); expected a magnitude below 2**1024"
        ) from None
    if abs(value) > EXACT_INTEGER_LIMIT and int(converted) != value:
        raise ValueError(
            f"{call}: argument '{name}' is {value}, which a float cannot hold exactly (the "
            "op takes it as a float); expected an integer a float holds exactly, e.g. of "
            f"magnitude at most 2**{EXACT_INTEGER_LIMIT.bit_length() - 1}"
        )
    return converted


def _as_weight(value: object, name: str, call: str) -> tuple[float, float]:
    """A weight as the schema takes it: its real part as _as_float takes it, and its imaginary
    part (0.0 but for a complex number)."""
    if isinstance(value, complex):
        return value.real, value.imag
    return _as_float(value, name, call), 0.0


# The dtype torch gives a Python number that joins tensors (a "wrapped number"), which the
# checked way passes as a 0-dim CPU tensor of it; its promotion is torch.result_type's.
_NUMBER_DTYPES = {
    bool: torch.bool,
    int: torch.int64,
    float: torch.float64,
    complex: torch.complex128,
}
_INT64 = torch.iinfo(torch.int64)


def _as_tensor(op: Operator, value: object, name: str) -> torch.Tensor:
    """A tensor argument, or a Python number as the 0-dim CPU tensor torch would make of it."""
    if isinstance(value, torch.Tensor):
        return value
    dtype = _NUMBER_DTYPES.get(type(value))
    if dtype is None:
        raise TypeError(
            f"{op.call}: argument '{name}' must be a torch.Tensor or a number (bool, int, float "
            f"or complex), got {type(value).__name__}"
        )
    if dtype == torch.int64 and not _INT64.min <= value <= _INT64.max:
        raise ValueError(
            f"{op.call}: argument '{name}' is {value}, beyond int64; expected an int from "
            f"{_INT64.min} to {_INT64.max}, as torch takes a Python int"
        )
    return torch.scalar_tensor(value, dtype=dtype)


def _check_tensor(op: Operator, value: object, name: str) -> None:
    if not isinstance(value, torch.Tensor):
        raise TypeError(
            f"{op.call}: argument '{name}' must be a torch.Tensor, got {type(value).__name__}; "
            "expected a tensor (wrap numbers or lists with torch.as_tensor)"
        )


def _named_tensors(op: Operator, arguments: tuple, out) -> list[tuple[str, torch.Tensor]]:
    named = []
    for argument, value in zip(op.arguments, arguments, strict=True):
        if argument.type == "Tensor":
            named.append((argument.name, value))
        elif argument.type == "Tensor[]":
            named += [(f"{argument.name}[{i}]", item) for i, item in enumerate(value)]
    return named if out is None else [*named, ("out", out)]


def _checked(op: Operator, arguments: tuple, out: torch.Tensor | None) -> tuple:
    """The call's arguments, in the schema's order, checked and converted as the schema
    declares each: tensors (a Python number as a 0-dim CPU tensor, with the dtype its
    promotion gives), lists of tensors, weights as floats (a complex one's imaginary part
    after the record's arguments); out too. Only as many as the call needs: the record's
    arguments where the rest keep their defaults."""
    checked, plain, operands = [], type(out) in (_Tensor, type(None)), []
    imaginary: dict[str, object] = {}
    bools = []
    for argument, value in zip(op.arguments, arguments, strict=True):
        kind = argument.type
        if kind == "Tensor":
            operands.append(value)
            value = _as_tensor(op, value, argument.name)
            plain = plain and type(value) is _Tensor
        elif kind == "Tensor[]":
            if isinstance(value, torch.Tensor) or not isinstance(value, (list, tuple)):
                raise TypeError(
                    f"{op.call}: argument '{argument.name}' must be a list or tuple of tensors, "
                    f"got {type(value).__name__}"
                )
            for index, item in enumerate(value):
                _check_tensor(op, item, f"{argument.name}[{index}]")
                plain = plain and type(item) is _Tensor
            if not value:  # the dispatcher cannot pick a device for an empty list: said here
                raise ValueError(
                    f"{op.call}: argument '{argument.name}' is an empty list; expected at least "
                    "one tensor"
                )
            value = list(value)
            operands += value
        elif kind == "float":
            if isinstance(value, bool):
                bools.append((argument.name, value))
            value, imaginary[argument.name] = _as_weight(value, argument.name, op.call)
        elif kind == "float[]?" and value is not None:
            if not isinstance(value, (list, tuple)):
                raise TypeError(
                    f"{op.call}: argument '{argument.name}' must be a list or tuple of numbers "
                    f"or None, got {type(value).__name__}"
                )
            pairs = [_as_weight(w, f"{argument.name}[{i}]", op.call) for i, w in enumerate(value)]
            bools += [(f"{argument.name}[{i}]", w) for i, w in enumerate(value) if type(w) is bool]
            value = [real for real, _ in pairs]
            imaginary[argument.name] = [imag for _, imag in pairs]
        checked.append(value)
    if out is not None:
        _check_tensor(op, out, "out")
    numbers = [operand for operand in operands if not isinstance(operand, torch.Tensor)]
    if len(numbers) == len(operands):
        raise TypeError(
            f"{op.call}: {op.all_inputs} are numbers; expected at least one tensor (torch "
            "takes a Python number only beside tensors)"
        )
    # A number's promotion is torch.result_type's, which the rules cannot see in a 0-dim tensor.
    try:
        dtype = chain_result_type(operands) if numbers else None
    except NoCommonDtype as none:
        named, value = op.input_name(none.index), operands[none.index]
        what = f"has dtype {none.dtype}" if isinstance(value, torch.Tensor) else f"is {value!r}"
        raise TypeError(
            f"{op.call}: {named} {what} beside {none.beside} tensors, which torch promotes to a "
            "complex dtype of bfloat16's range; vecadd (and torch.add) compute in none: expected "
            "the bfloat16 tensors converted first, e.g. to torch.float32"
        ) from None
    if dtype is not None and dtype not in SUPPORTED_DTYPES:
        raise TypeError(
            f"{op.call}: {op.all_inputs} promote to {dtype} (a Python number promotes as "
            f"torch.result_type says), which vecadd does not support (nor does torch.add); "
            f"expected operands that promote to {SUPPORTED_TEXT}"
        )
    if bools:
        common = dtype or chain_result_type(operands)
        if common != torch.bool:
            name, value = bools[0]
            raise TypeError(
                f"{op.call}: argument '{name}' is a bool ({value}) but {op.all_inputs} sum in "
                f"{common}; expected a bool weight only for a bool sum, as torch takes a bool "
                "alpha, else an int, a float or a complex number"
            )
    if not plain:  # a tensor subclass: DTensors must not be mixed with others (numbers may)
        named = _named_tensors(op, tuple(checked), out)
        given = [
            (name, t)
            for (name, t), o in zip(
                named, [*operands, *([out] if out is not None else [])], strict=True
            )
            if o is t
        ]
        check_distributed(op, given)
    complex_weights = any(
        any(parts) if isinstance(parts, list) else parts for parts in imaginary.values()
    )
    if dtype is None and not complex_weights:
        return tuple(checked)  # the common call: the rest at their defaults
    rest = [
        imaginary.get(a.imaginary_of, 0.0 if a.type == "float" else None)
        if a.imaginary_of
        else dtype
        for a in op.schema_arguments[len(op.arguments) :]
    ]
    return (*checked, *rest)


def _under_transforms(op: Operator, arguments: tuple) -> torch.Tensor:
    """The stable build under torch.func or forward-mode AD: an autograd.Function that they
    can run (the operator's own Autograd kernel is Python inside the dispatcher, where they
    cannot), its forward the operator itself, so that traced graphs hold it."""
    functional = getattr(torch.ops.vecadd, op.name).default
    tensors, weights = op.terms(*arguments)

    def operator(inputs):
        positional, keywords = op.split(op.with_tensors(arguments, inputs))
        return functional(*positional, **keywords)

    return FUNCTIONS[op.name][1].apply(operator, weights, *tensors)


def call(op: Operator, arguments: tuple, out: torch.Tensor | None) -> torch.Tensor:
    """An operator's way through the dispatcher, with every argument checked in Python first."""
    arguments = _checked(op, arguments, out)
    if is_compiling() and _compile.kept_scopes:
        pass  # read while torch.compile traces: its guards then recompile across the switch
    packet = getattr(torch.ops.vecadd, op.name)
    positional, keywords = op.split(arguments)
    try:
        if out is None:
            if native_module is None and not is_compiling() and _transforms_active():
                return _under_transforms(op, arguments)
            return packet.default(*positional, **keywords)
        if is_exporting():
            # Exported as the functional op and a copy: a graph's mutating custom op reaches
            # the ONNX and core-ATen routes only wrapped in auto_functionalized (docs/deploy.md).
            result = packet.default(*positional, **keywords)
            check_out(op, out, result.dtype, result.device, result.shape)
            out.copy_(result)
        else:
            packet.out(*positional, **keywords, out=out)
        return out
    except RuntimeError as error:
        if is_compiling():
            raise
        typed = typed_error(error)
        if typed is error:
            raise
        raise typed from None


# Each operator's lean way (vecadd/_lean.py): its result for plain tensors and plain numbers in
# eager mode (not under torch.compile or torch.export), or NotImplemented where the checked way
# must answer. A gradient takes one autograd node in the stable build, the public op's C++
# autograd kernel in the native build.
LEAN_WAYS = {
    op.name: lean_way(op, typed_error, grad_way if native_module is None else None)
    for op in OPERATORS
}
# Each wrapper's first way in, name(*arguments, out), chosen here alone: the native build's C++
# entry (vecadd._C.<name>, written from the record), leaner still, else the lean way.
ENTRIES = {
    op.name: LEAN_WAYS[op.name]
    if native_module is None
    else untraced(getattr(native_module, op.name))
    for op in OPERATORS
}
lean_add, _lean_add_n = ENTRIES["add"], ENTRIES["add_n"]  # lean_add: the VecAdd layer's too


def _checked_way(name: str) -> Callable[[tuple, torch.Tensor | None], torch.Tensor]:
    def checked(arguments: tuple, out: torch.Tensor | None) -> torch.Tensor:
        # The record by its name: torch.compile can trace a record it reads from a global, not
        # one held in a closure.
        return call(BY_NAME[name], arguments, out)

    return checked


# What torch.compile traces in place of each wrapper below (vecadd/_compile.py registers them
# once torch._dynamo is imported): plain tensors and float weights go to the public operator
# through as few guarded objects as a call of torch.add, anything else to the checked way.
TRACED_WAYS = {
    op.name: traced_way(op, _checked_way(op.name), _compile.kernels_kept) for op in OPERATORS
}
_traced_add, _traced_add_n = TRACED_WAYS["add"], TRACED_WAYS["add_n"]


def add(
    x: torch.Tensor | complex,
    y: torch.Tensor | complex,
    *,
    alpha: complex = 1.0,  # a float, as the schema takes it: the cheapest to pass on
    out: torch.Tensor | None = None,
) -> torch.Tensor:
    """Return ``x + alpha * y``, broadcasting and promoting ``x`` and ``y`` as :func:`torch.add`
    does.

    ``x`` and ``y`` are tensors of any dtype torch.add takes (one may be a Python number or a
    0-dim CPU tensor beside tensors on a GPU); the result has ``torch.result_type(x, y)``.
    ``alpha`` is real for a real sum, complex for a complex one, a bool for a bool sum, and
    integral for an integer sum. With ``out``, the result is cast into it: it must already have
    the broadcast shape, a dtype the result casts to and the inputs' device, and may be ``x``
    or ``y`` itself but must not partly overlap them. Differentiable with respect to ``x`` and
    ``y``, each gradient in its input's dtype.
    """
    result = lean_add(x, y, alpha, out)  # NotImplemented while compile or export traces
    if result is not NotImplemented:
        return result
    if is_compiling():
        # Traced by torch.export, or by torch.compile as the compiled function itself: the
        # traced way, which a call inside a compiled function traces in this one's place.
        return _traced_add(x, y, alpha=alpha, out=out)
    return call(ADD, (x, y, alpha), out)


def add_n(
    tensors: list[torch.Tensor] | tuple[torch.Tensor, ...],
    weights: list[float] | tuple[float, ...] | None = None,
    *,
    out: torch.Tensor | None = None,
) -> torch.Tensor:
    """Return ``weights[0] * tensors[0] + weights[1] * tensors[1] + ...`` in one pass: each
    tensor is read once and the result written once.

    The tensors broadcast and promote together as a chain of :func:`torch.add` would (any dtype
    torch.add takes, on one device but for 0-dim CPU tensors); there must be at least one.
    ``weights`` (default: all 1) has one number per tensor: complex for a complex sum, integral
    for an integer one; 16-bit floats compute in float32 and round once. With ``out``, the
    result is cast into it: it must already have the broadcast shape, a dtype the result casts
    to and the tensors' device, and may be one of the tensors itself but must not partly overlap
    any. Differentiable with respect to every tensor, each gradient in its tensor's dtype.
    """
    result = _lean_add_n(tensors, weights, out)  # NotImplemented while compile or export traces
    if result is not NotImplemented:
        return result
    if is_compiling():  # as in add
        return _traced_add_n(tensors, weights, out=out)
    return call(ADD_N, (tensors, weights), out)


# The native build's wrappers are its C++ public entries where vecadd._C has them: a plain call
# goes straight to C++, any other to the Python wrapper above (vecadd/_lean.py's public_entry).
add, add_n = (public_entry(wrapper, native_module) for wrapper in (add, add_n))
ADD_TAKES_EVERY_CALL = isinstance(add, BuiltinFunctionType)  # its entry, not the wrapper
