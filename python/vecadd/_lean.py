"""The lean way into each operator, written from its record when vecadd is imported.

A call on plain tensors and plain numbers in eager mode needs none of the checked way's work
(vecadd/_ops.py's ``call``): it goes to the operator's private overloads without autograd,
straight through the dispatcher, or through one autograd node where a gradient is needed. On
small tensors every Python step of that way is a visible share of the call, so each operator
gets a function of its own arguments, its checks unrolled from the argument types, as
dataclasses write ``__init__``: no loop over the record, no list of arguments, no starred call
(docs/portable.md measures the difference). Anything the way does not take it answers with
NotImplemented, and the checked way answers or words the error.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from . import _torch_private as private
from ._operators import EXACT_INTEGER_LIMIT, Operator

# What each argument type checks and converts; `{name}` is the argument.
_CHECKS = {
    "Tensor": """
    if type({name}) is not Tensor:
        return NotImplemented
    if {name}.requires_grad:
        needs_grad = True""",
    "Tensor[]": """
    if type({name}) not in SEQUENCES or not {name}:
        return NotImplemented
    for tensor in {name}:
        if type(tensor) is not Tensor:
            return NotImplemented
        if tensor.requires_grad:
            needs_grad = True""",
    "float": """
    if type({name}) is not float:
        {name} = lean_float({name})
        if {name} is None:
            return NotImplemented""",
    "float[]?": """
    if {name} is not None:
        {name} = lean_floats({name})
        if {name} is None:
            return NotImplemented""",
}

_TEMPLATE = """
def lean_{op}({parameters}, out):
    if {blocked}:
        return NotImplemented
    needs_grad = False{checks}
    if needs_grad:  # an input requires grad: does grad mode ask for it?
        needs_grad = grad_enabled()
    try:
        if out is None:
            if needs_grad:
                return {with_grad}
            return {functional}
        if type(out) is not Tensor or needs_grad or (out.requires_grad and grad_enabled()):
            return NotImplemented  # the checked way refuses out= with grad in words
        out_variant({arguments}, out)
        increment_versions((out,))  # as the .out overload's autograd kernel does
        return out
    except NotImplementedError:
        return NotImplemented  # a backend without vecadd kernels: the public op names it
    except RuntimeError as error:
        raise typed(error) from None
"""

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


def _functional_call(op: Operator) -> str:
    """The functional overload's call; a trailing float equal to its default is left out, which
    the dispatcher takes at less cost than a float passed."""
    names = [argument.name for argument in op.arguments]
    last = op.arguments[-1]
    everything = f"functional({', '.join(names)})"
    if last.type != "float" or last.default is None:
        return everything
    return (
        f"functional({', '.join(names[:-1])}) if {last.name} == {float(last.default)!r} "
        f"else {everything}"
    )


def source(op: Operator, *, with_grad: bool) -> str:
    """The lean way's Python source for an operator (`with_grad`: a gradient goes through the
    `with_grad` function of its namespace, else to the public op, NotImplemented)."""
    arguments = ", ".join(argument.name for argument in op.arguments)
    checks = (_CHECKS[argument.type].format(name=argument.name) for argument in op.arguments)
    return _TEMPLATE.format(
        op=op.name,
        blocked=private.LEAN_WAY_BLOCKED,
        parameters=arguments,
        arguments=arguments,
        checks="".join(checks),
        functional=_functional_call(op),
        with_grad=f"with_grad({arguments})" if with_grad else "NotImplemented",
    )


def untraced(entry: Callable[..., object]) -> Callable[..., object]:
    """The native build's C++ entry of an operator as its lean way: entry's calls, answered
    NotImplemented while torch.compile or torch.export traces, as neither can enter C++."""
    namespace = {**private.TRACING_NAMES, "entry": entry}
    text = (
        f"def untraced(*args):\n    if {private.TRACING}:\n        return NotImplemented\n"
        "    return entry(*args)\n"
    )
    exec(compile(text, "<vecadd untraced entry>", "exec"), namespace)
    return namespace["untraced"]


def lean_way(
    op: Operator,
    typed: Callable[[RuntimeError], Exception],
    grad_way: Callable[[Operator, Callable], Callable[..., torch.Tensor]] | None,
) -> Callable[..., object]:
    """The operator's lean way: lean_<name>(*its arguments in the record's order, out), its
    result or NotImplemented. `typed` turns a kernel's RuntimeError into the error it words;
    `grad_way(op, functional)` gives the function that takes the arguments where an input
    requires grad (None: the public op does)."""
    functional, out_variant = (
        private.direct_entry(getattr(torch.ops.vecadd, name).default)
        for name, _ in op.registered_names()[2:]
    )
    with_grad = None if grad_way is None else grad_way(op, functional)
    namespace = {
        "Tensor": torch.Tensor,
        "SEQUENCES": (list, tuple),
        **private.TRACING_NAMES,
        "functorch_transforms_active": private.functorch_transforms_active,
        "forward_ad_levels": private.forward_ad_levels,
        "torch_function_mode_enabled": private.torch_function_mode_enabled,
        "grad_enabled": torch.is_grad_enabled,
        "lean_float": lean_float,
        "lean_floats": lean_floats,
        "increment_versions": private.increment_versions,
        "functional": functional,
        "out_variant": out_variant,
        "with_grad": with_grad,
        "typed": typed,
    }
    text = source(op, with_grad=with_grad is not None)
    exec(compile(text, f"<vecadd lean way of {op.name}>", "exec"), namespace)
    way = namespace[f"lean_{op.name}"]
    way.__doc__ = f"{op.call}'s lean way (vecadd/_lean.py):\n{text}"
    return way
