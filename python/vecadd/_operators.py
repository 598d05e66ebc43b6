"""vecadd's operators, each described once.

Every operator is a weighted sum of tensors, broadcast like a chain of torch.add and computed in
one pass. A record names it, gives its arguments (its schema follows), the words its errors use
for its inputs and weights, and how a call's arguments make the sum (``terms``). Everything else
derives from the records: the schemas and their ``.out`` overloads, the private overloads with
no autograd kernel and the lean ways that call them (vecadd/_lean.py), both builds' C++
registration (through the header packaging/generate_operators.py writes at build time), the
fake kernels, the autograd kernels and the Python wrappers' checks.
docs/adding-an-operator.md walks through adding one.

Standard library only, so that the build can read it before vecadd exists.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Argument:
    name: str
    type: str  # as a schema writes it: Tensor, Tensor[], float, float[]?
    default: str | None = None
    keyword_only: bool = False

    def declaration(self, *, with_default: bool = True) -> str:
        default = f"={self.default}" if with_default and self.default is not None else ""
        return f"{self.type} {self.name}{default}"


@dataclass(frozen=True)
class Operator:
    name: str
    arguments: tuple[Argument, ...]
    # The inputs' names in errors: one per input, or the list argument they come in ("tensors":
    # tensors[0], tensors[1], ...).
    inputs: tuple[str, ...] | str
    # The argument that carries the weights, and whether it is a list of one per input (else
    # one float weighing the last input, as add's alpha).
    weights: str
    weights_list: bool
    # The sum a call computes: its tensors and their weights, from the call's arguments.
    terms: Callable[..., tuple[list, list[float]]]
    summary: str

    @property
    def overload_packet(self) -> str:
        return f"vecadd::{self.name}"

    def _declarations(self, *, positional: bool, defaults: bool) -> list[str]:
        words, keyword = [], False
        for argument in self.arguments:
            if argument.keyword_only and not keyword and not positional:
                words.append("*")
                keyword = True
            words.append(argument.declaration(with_default=defaults))
        return words

    def schema(self, *, out: bool = False, twin: bool = False) -> str:
        """The functional or .out schema; `twin`: the private overload with no autograd
        kernel, whose arguments are all positional (out last, so the .out twin has no
        defaults). A default lets a lean path leave a weight out, which costs far less per
        call than passing it (docs/portable.md)."""
        declarations = self._declarations(positional=twin, defaults=not (twin and out))
        name = f"_{self.name}_without_autograd" if twin else self.name
        if not out:
            return f"{name}({', '.join(declarations)}) -> Tensor"
        if not twin and "*" not in declarations:
            declarations.append("*")
        declarations.append("Tensor(a!) out")
        overload = f"_{self.name}_out_without_autograd" if twin else f"{self.name}.out"
        return f"{overload}({', '.join(declarations)}) -> ()"

    def registered_names(self) -> list[tuple[str, bool]]:
        """(name the dispatcher knows an overload by, whether it is an .out overload), for
        the public overloads and their twins."""
        return [
            (self.name, False),
            (f"{self.name}.out", True),
            (f"_{self.name}_without_autograd", False),
            (f"_{self.name}_out_without_autograd", True),
        ]

    def arguments_of(self, args: tuple, kwargs: dict) -> tuple:
        """A call's arguments in the record's order, defaults filled in."""
        bound = inspect.signature(self.terms).bind(*args, **kwargs)
        bound.apply_defaults()
        return tuple(bound.arguments.values())

    def with_tensors(self, arguments: tuple, tensors) -> tuple:
        """The call's arguments (in the record's order) with its tensors replaced, in order."""
        tensors, replaced = list(tensors), []
        for argument, value in zip(self.arguments, arguments, strict=True):
            if argument.type == "Tensor":
                value = tensors.pop(0)
            elif argument.type == "Tensor[]":
                value, tensors = tensors[: len(value)], tensors[len(value) :]
            replaced.append(value)
        return tuple(replaced)

    def split(self, arguments: tuple) -> tuple[list, dict]:
        """The arguments as the schema takes them: positional ones, then keyword-only ones."""
        pairs = list(zip(arguments, self.arguments, strict=True))
        return (
            [value for value, spec in pairs if not spec.keyword_only],
            {spec.name: value for value, spec in pairs if spec.keyword_only},
        )

    @property
    def call(self) -> str:
        return f"vecadd.{self.name}()"

    def input_name(self, index: int) -> str:
        if isinstance(self.inputs, str):
            return f"{self.inputs}[{index}]"
        return self.inputs[index]

    @property
    def all_inputs(self) -> str:
        if isinstance(self.inputs, str):
            return f"the {self.inputs}"
        return " and ".join(self.inputs)


def _add_terms(x, y, alpha: float = 1.0) -> tuple[list, list[float]]:
    return [x, y], [1.0, alpha]


def _add_n_terms(tensors: Sequence, weights: Sequence[float] | None = None):
    tensors = list(tensors)
    return tensors, [1.0] * len(tensors) if weights is None else list(weights)


ADD = Operator(
    name="add",
    arguments=(
        Argument("x", "Tensor"),
        Argument("y", "Tensor"),
        Argument("alpha", "float", "1", keyword_only=True),
    ),
    inputs=("x", "y"),
    weights="alpha",
    weights_list=False,
    terms=_add_terms,
    summary="x + alpha * y",
)

ADD_N = Operator(
    name="add_n",
    arguments=(Argument("tensors", "Tensor[]"), Argument("weights", "float[]?", "None")),
    inputs="tensors",
    weights="weights",
    weights_list=True,
    terms=_add_n_terms,
    summary="weights[0] * tensors[0] + weights[1] * tensors[1] + ...",
)

OPERATORS: tuple[Operator, ...] = (ADD, ADD_N)
BY_NAME = {operator.name: operator for operator in OPERATORS}
