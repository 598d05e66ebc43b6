"""The lean way into each operator, from its record.

A call on plain tensors and plain numbers in eager mode needs none of the checked way's work
(vecadd/_ops.py's ``call``): it goes to the operator's private overloads without autograd,
straight through the dispatcher, or through one autograd node where a gradient is needed. On
small tensors every Python step of that way is a visible share of the call, so each operator
gets a function of its own arguments, its checks unrolled from the argument types and torch's
tracing questions asked inline: no loop over the record, no list of arguments, no starred call
(docs/portable.md measures the difference). cmake/generate_operators.py writes them from the
records at build time into vecadd/_lean_ways.py, which the wheel holds. Anything a way does not
take it answers with NotImplemented, and the checked way answers or words the error.

The same file holds each operator's traced way: the function torch.compile traces in place of
the operator's wrapper (vecadd/_compile.py registers it), which passes plain tensors and float
weights to the public operator through closure cells alone, since torch.compile checks every
global a traced function reads on every compiled call (docs/compile.md).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import torch

from . import _torch_private as private
from ._dtypes import CATEGORIES
from ._operators import EXACT_INTEGER_LIMIT, Operator


def lean_float(value) -> float | None:
    """A weight the schema takes without a question, as a float; None for any other value."""
    if type(value) is float:
        return value
    if type(value) is int and -EXACT_INTEGER_LIMIT <= value <= EXACT_INTEGER_LIMIT:
        return float(value)  # torch takes an int for a float schema argument more slowly
    return None


def lean_floats(values) -> list[float] | None:
    """A list of weights as lean_float takes each; None if one is not taken or not a list."""
    if type(values) not in (list, tuple):
        return None
    floats = [lean_float(value) for value in values]
    return None if None in floats else floats


# A Python number as the 0-dim tensor that holds it exactly, and its category in torch's
# promotion (bool < integer < floating < complex).
_NUMBER_DTYPES = {
    bool: torch.bool,
    int: torch.int64,
    float: torch.float64,
    complex: torch.complex128,
}
_NUMBER_CATEGORIES = {bool: 0, int: 1, float: 2, complex: 3}
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def lean_number(value) -> torch.Tensor | None:
    """A Python number as a 0-dim CPU tensor that holds it exactly; None for anything else."""
    dtype = _NUMBER_DTYPES.get(type(value))
    if dtype is None or (dtype is torch.int64 and not _INT64_MIN <= value <= _INT64_MAX):
        return None
    return torch.scalar_tensor(value, dtype=dtype)


def numbers_join(numbers: tuple, operands: tuple[torch.Tensor, ...]) -> bool:
    """Whether `operands`, where `numbers` became 0-dim tensors, promote as torch promotes the
    numbers themselves: so when every other operand has dimensions and no number's category
    (bool, integer, floating, complex) is above theirs, as then no 0-dim operand counts. No
    generators and no dtype properties: it runs on every call with a number."""
    highest, zero_dim = -1, 0
    for operand in operands:
        if operand.dim() == 0:
            zero_dim += 1
        else:
            # A dtype vecadd does not take counts as none: the checked way words its error.
            category = CATEGORIES.get(operand.dtype, -1)
            if category > highest:
                highest = category
    if zero_dim != len(numbers):
        return False  # a 0-dim tensor of the caller's own: the checked way weighs it
    for number in numbers:  # noqa: SIM110 (all() over a generator costs a frame a call)
        if _NUMBER_CATEGORIES[type(number)] > highest:
            return False
    return True


def _no_lean_way(*arguments) -> object:
    return NotImplemented


def _written_for_this_torch() -> bool:
    """Whether vecadd/_lean_ways.py asks the tracing questions as vecadd/_torch_private.py asks
    them under the running torch: a torch that moved a name they read (a wheel built under
    another) leaves every call to the checked way, right if slower."""
    from . import _lean_ways

    return (_lean_ways.TRACING, _lean_ways.LEAN_WAY_BLOCKED) == (
        private.TRACING,
        private.LEAN_WAY_BLOCKED,
    )


def untraced(entry: Callable[..., object]) -> Callable[..., object]:
    """The native build's C++ entry of an operator as its lean way: entry's calls, answered
    NotImplemented while torch.compile or torch.export traces, as neither can enter C++."""
    from . import _lean_ways

    return _lean_ways.untraced(entry) if _written_for_this_torch() else _no_lean_way


def public_entry(wrapper: Callable[..., torch.Tensor], native_module) -> Callable[..., object]:
    """The operator's wrapper (vecadd.add) as the native build's public C++ entry, where
    vecadd._C has one: a builtin with the wrapper's name, signature and doc that binds the
    wrapper's parameters itself and runs a plain call in C++, and hands any other call to
    `wrapper` (which checks, words and traces it); else `wrapper` itself. A Python frame and the
    lean way's own are what a call of 16 elements saves (docs/portable.md)."""
    make = getattr(native_module, "public_entry", None)
    parameters = list(inspect.signature(wrapper).parameters.values())
    kinds = {inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY}
    if (
        make is None
        or not _written_for_this_torch()
        or any(p.kind not in kinds for p in parameters)
    ):
        return wrapper
    names = tuple(parameter.name for parameter in parameters)
    # The wrapper itself stands for "no default": the entry then leaves an omitted one to it.
    defaults = tuple(wrapper if p.default is p.empty else p.default for p in parameters)
    positional = sum(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in parameters)
    flag = "_is_compiling_flag"  # non-strict export's, which vecadd/_torch_private.py reads too
    owner = torch.compiler if hasattr(torch.compiler, flag) else None
    unannotated = inspect.Signature([p.replace(annotation=p.empty) for p in parameters])
    doc = f"{wrapper.__name__}{unannotated}\n--\n\n{inspect.getdoc(wrapper)}"
    return make(wrapper.__name__, wrapper, names, defaults, positional, owner, flag, doc, "vecadd")


def layer_call(
    in_python: Callable[..., object],
    layer_class: type,
    operator: Callable[..., object],
    weight: str,
    native_module,
) -> Callable[..., object]:
    """A layer class's __call__, in_python(layer, *args, **kwargs), as the native build's C++
    method where `operator` is a public C++ entry (public_entry above) and this torch keeps a
    module's hooks where the method looks; else in_python itself. The method calls the operator
    with (x, y, <weight>=layer.<weight>) where calling the layer would run the class's forward
    alone, and torch.nn.Module.__call__ otherwise; it saves in_python's frames and attribute
    reads: about 2,100 instructions of a 16-element call (docs/portable.md)."""
    make = getattr(native_module, "layer_call", None)
    questions = private.MODULE_CALL_QUESTIONS
    if make is None or questions is None or not isinstance(operator, type(len)):
        return in_python
    parameters = inspect.signature(in_python).parameters.values()
    unannotated = inspect.Signature([p.replace(annotation=p.empty) for p in parameters])
    # "$self": the signature of a method, which inspect drops once the method is bound.
    signature = str(unannotated).replace("(self", "($self", 1)
    doc = f"__call__{signature}\n--\n\n{inspect.getdoc(in_python)}"
    return make(operator.__name__, weight, *questions, doc, layer_class)


def lean_way(
    op: Operator,
    typed: Callable[[RuntimeError], Exception],
    grad_way: Callable[[Operator, Callable], Callable[..., torch.Tensor]] | None,
) -> Callable[..., object]:
    """The operator's lean way: lean_<name>(*its arguments in the record's order, out), its
    result or NotImplemented. `typed` turns a kernel's RuntimeError into the error it words;
    `grad_way(op, functional)` gives the function that takes the arguments where an input
    requires grad (None: the public op does)."""
    from . import _lean_ways

    if not _written_for_this_torch():
        return _no_lean_way
    functional, out_variant = (
        private.direct_entry(getattr(torch.ops.vecadd, name).default)
        for name, _ in op.registered_names()[2:]
    )
    with_grad = None if grad_way is None else grad_way(op, functional)
    return getattr(_lean_ways, f"lean_{op.name}")(functional, out_variant, with_grad, typed)


def traced_way(
    op: Operator,
    checked: Callable[[tuple, torch.Tensor | None], torch.Tensor],
    kernels_kept: Callable[[], int],
) -> Callable[..., torch.Tensor]:
    """The function torch.compile traces in place of the operator's wrapper, with the wrapper's
    signature: the public operator for plain tensors and float weights, else `checked(arguments
    in the record's order, out)`. `kernels_kept()` is read so that its value is a guard."""
    from . import _lean_ways

    functional = getattr(torch.ops.vecadd, op.name).default
    return getattr(_lean_ways, f"traced_{op.name}")(functional, checked, kernels_kept)
