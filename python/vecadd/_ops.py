"""The Python face of the vecadd operators, the same for both builds.

Each wrapper checks its arguments as its record (vecadd/_operators.py) declares them, words the
errors of arguments that are not tensors or numbers, turns weights into the floats the schemas
take (refusing an int that a float cannot hold exactly), and calls the dispatcher's op (under a
torch.func transform or forward-mode AD, in the stable build, through an autograd.Function that
supports them). vecadd.add, the common call, and the VecAdd layer first try ``lean_add``: the
native build's vecadd._C entry, or the stable build's way to its kernels for plain tensors.
"""

from __future__ import annotations

import torch

from . import _torch_private as private
from ._fake import check_out
from ._library import native_module
from ._operators import ADD, ADD_N, OPERATORS, Operator
from ._sharding import check_distributed

_increment_version = private.increment_version
# Not is_dynamo_compiling, one call cheaper: torch.export's non-strict tracing passes a
# module's plain tensor attributes as plain tensors, which must reach the public op too.
is_compiling = torch.compiler.is_compiling
is_exporting = torch.compiler.is_exporting
_Tensor = torch.Tensor
_grad_enabled = torch.is_grad_enabled
_transforms_active = private.transforms_or_forward_ad_active
_lean_way_blocked = private.lean_way_blocked
if native_module is None:  # the stable build, whose autograd is Python
    from ._autograd import (
        FUNCTIONS,
        Add,
        AddScaled,
        add_out_without_autograd,
        add_without_autograd,
    )

    _apply_unscaled, _apply_scaled = Add.apply, AddScaled.apply
    _add_under_transforms = FUNCTIONS["add"][1].apply
_EXACT_INTEGER_LIMIT = 2**53  # every integer up to 2^53 is a float, some beyond are not
# The stable ABI delivers every C++ error as a RuntimeError whose first word is its kind.
_KINDS = {"TypeError: ": TypeError, "ValueError: ": ValueError}


def _as_float(value: object, name: str, call: str) -> float:
    """A weight as the float the schema takes: a real number, not a bool, that a float holds
    exactly; errors name the call (e.g. "vecadd.add()") and the argument."""
    if isinstance(value, float):
        return value
    if isinstance(value, bool):
        raise TypeError(
            f"{call}: argument '{name}' is a bool ({value}); expected an int or a float "
            "(torch takes a bool weight only for bool tensors, a dtype vecadd does not support)"
        )
    if not isinstance(value, int):
        raise TypeError(
            f"{call}: argument '{name}' must be a real number (int or float), got "
            f"{type(value).__name__}"
        )
    try:
        converted = float(value)
    except OverflowError:
        raise OverflowError(
            f"{call}: argument '{name}' is an int beyond the float range (the op takes it as "
            "a float); expected a magnitude below 2**1024"
        ) from None
    if abs(value) > _EXACT_INTEGER_LIMIT and int(converted) != value:
        raise ValueError(
            f"{call}: argument '{name}' is {value}, which a float cannot hold exactly (the "
            "op takes it as a float); expected an integer a float holds exactly, e.g. of "
            "magnitude at most 2**53"
        )
    return converted


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
    """The call's arguments, in the record's order, checked and converted as the schema
    declares each: tensors, lists of tensors, floats and optional lists of floats; out too."""
    checked, plain = [], type(out) in (_Tensor, type(None))
    for argument, value in zip(op.arguments, arguments, strict=True):
        kind = argument.type
        if kind == "Tensor":
            _check_tensor(op, value, argument.name)
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
        elif kind == "float":
            value = _as_float(value, argument.name, op.call)
        elif kind == "float[]?" and value is not None:
            if not isinstance(value, (list, tuple)):
                raise TypeError(
                    f"{op.call}: argument '{argument.name}' must be a list or tuple of real "
                    f"numbers or None, got {type(value).__name__}"
                )
            value = [_as_float(w, f"{argument.name}[{i}]", op.call) for i, w in enumerate(value)]
        checked.append(value)
    if out is not None:
        _check_tensor(op, out, "out")
    if not plain:  # a tensor subclass: DTensors must not be mixed with others
        check_distributed(op, _named_tensors(op, tuple(checked), out))
    return tuple(checked)


def _typed(error: RuntimeError) -> Exception:
    message = str(error)
    for prefix, kind in _KINDS.items():
        if message.startswith(prefix):
            return kind(message.removeprefix(prefix))
    return error


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
            check_out(op, out, op.terms(*arguments)[0][0], result.shape)
            out.copy_(result)
        else:
            packet.out(*positional, **keywords, out=out)
        return out
    except RuntimeError as error:
        if is_compiling():
            raise
        typed = _typed(error)
        if typed is error:
            raise
        raise typed from None


def _stable_lean_add(x, y, alpha, out):
    """The stable build's kernels for plain tensors and an alpha a float holds exactly, directly
    or through one autograd node (under torch.func or forward-mode AD, one that supports them);
    NotImplemented for any other call. Each check here costs the per-call time of small tensors
    (docs/portable.md)."""
    if type(x) is not _Tensor or type(y) is not _Tensor:
        return NotImplemented
    if type(alpha) is not float:
        if type(alpha) is not int or not -_EXACT_INTEGER_LIMIT <= alpha <= _EXACT_INTEGER_LIMIT:
            return NotImplemented
        alpha = float(alpha)  # torch takes an int for a float schema argument more slowly
    try:
        if _lean_way_blocked():
            if out is None and not private.torch_function_mode_enabled():
                return _add_under_transforms(
                    lambda inputs: torch.ops.vecadd.add.default(*inputs, alpha=alpha),
                    (1.0, alpha),
                    x,
                    y,
                )
        elif out is None:
            if (x.requires_grad or y.requires_grad) and _grad_enabled():
                return _apply_unscaled(x, y) if alpha == 1.0 else _apply_scaled(x, y, alpha)
            # The schema's default alpha costs far less than passing one.
            return add_without_autograd(x, y) if alpha == 1.0 else add_without_autograd(x, y, alpha)
        elif type(out) is _Tensor:
            # No tangent can be open here (checked above): only grad needs the checked way's words.
            if _grad_enabled() and (x.requires_grad or y.requires_grad or out.requires_grad):
                return NotImplemented
            add_out_without_autograd(x, y, alpha, out)
            _increment_version(out)  # as add.out's autograd kernel does
            return out
    except NotImplementedError:
        pass  # a backend without vecadd kernels: the public op names vecadd::add
    except RuntimeError as error:
        raise _typed(error) from None
    return NotImplemented


# lean_add(x, y, alpha, out): add's result for plain tensors in eager mode (not under
# torch.compile or torch.export), or NotImplemented where the public op must answer.
lean_add = _stable_lean_add if native_module is None else native_module.add


def _lean_float(value) -> float | None:
    """A weight the schema takes without a question, as a float; None for any other value."""
    if type(value) is float:
        return value
    if type(value) is int and -_EXACT_INTEGER_LIMIT <= value <= _EXACT_INTEGER_LIMIT:
        return float(value)  # torch takes an int for a float schema argument more slowly
    return None


def _lean_way(op: Operator) -> tuple:
    """What the lean way reads of an operator on every call: its argument types in the record's
    order and its private overloads without autograd, functional and .out, called directly."""
    types = tuple(argument.type for argument in op.arguments)
    twins = [getattr(torch.ops.vecadd, name).default for name, _ in op.registered_names()[2:]]
    return (types, *(private.direct_entry(twin) for twin in twins))


_LEAN_WAYS = {op.name: _lean_way(op) for op in OPERATORS}
_SEQUENCES = (list, tuple)


def lean_call(op: Operator, arguments: tuple, out):
    """An operator's result for plain tensors and plain numbers in eager mode, through its
    private overloads without autograd (one autograd node in front where a gradient is needed,
    in the stable build): no argument binding, no Python autograd kernel. NotImplemented for
    anything the checked way must answer or word."""
    if _lean_way_blocked():
        return NotImplemented
    types, functional, out_variant = _LEAN_WAYS[op.name]
    grad_mode = _grad_enabled()
    needs_grad = False
    lean = []
    for kind, value in zip(types, arguments):  # noqa: B905 (strict costs ~1,700 instructions a call)
        if kind == "Tensor":
            if type(value) is not _Tensor:
                return NotImplemented
            if grad_mode and value.requires_grad:
                needs_grad = True
        elif kind == "Tensor[]":
            if type(value) not in _SEQUENCES or not value:
                return NotImplemented
            for tensor in value:
                if type(tensor) is not _Tensor:
                    return NotImplemented
                if grad_mode and tensor.requires_grad:
                    needs_grad = True
        elif kind == "float":
            if type(value) is not float:
                value = _lean_float(value)
                if value is None:
                    return NotImplemented
        elif value is not None:  # float[]?
            if type(value) not in _SEQUENCES:
                return NotImplemented
            value = [_lean_float(weight) for weight in value]
            if None in value:
                return NotImplemented
        lean.append(value)
    try:
        if out is None:
            if not needs_grad:
                return functional(*lean)
            if native_module is not None:
                return NotImplemented  # the public op's C++ autograd kernel
            tensors, weights = op.terms(*lean)
            return FUNCTIONS[op.name][0].apply(lambda _: functional(*lean), weights, *tensors)
        if type(out) is not _Tensor or needs_grad or (grad_mode and out.requires_grad):
            return NotImplemented  # the checked way refuses out= with grad in words
        out_variant(*lean, out)
        _increment_version(out)  # as the .out overload's autograd kernel does
        return out
    except NotImplementedError:
        return NotImplemented  # a backend without vecadd kernels: the public op names it
    except RuntimeError as error:
        raise _typed(error) from None


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
    if not is_compiling():
        result = lean_add(x, y, alpha, out)
        if result is not NotImplemented:
            return result
    return call(ADD, (x, y, alpha), out)


def add_n(
    tensors: list[torch.Tensor] | tuple[torch.Tensor, ...],
    weights: list[float] | tuple[float, ...] | None = None,
    *,
    out: torch.Tensor | None = None,
) -> torch.Tensor:
    """Return ``weights[0] * tensors[0] + weights[1] * tensors[1] + ...`` in one pass: each
    tensor is read once and the result written once.

    The tensors broadcast together as a chain of :func:`torch.add` would, and must share a
    dtype (float16, bfloat16, float32, float64, int32 or int64; no type promotion) and a device;
    there must be at least one. ``weights`` (default: all 1) has one number per tensor, integral
    for integer tensors; 16-bit floats compute in float32 and round once. With ``out``, the
    result is written into it: it must already have the broadcast shape, the tensors' dtype and
    device, and may be one of the tensors itself but must not partly overlap any. Differentiable
    with respect to every tensor.
    """
    if not is_compiling():
        result = lean_call(ADD_N, (tensors, weights), out)
        if result is not NotImplemented:
            return result
    return call(ADD_N, (tensors, weights), out)
