"""vecadd's operators, each described once.

Every operator is a weighted sum of tensors, broadcast like a chain of torch.add and computed in
one pass. A record names it, gives its arguments (its schema follows), the words its errors use
for its inputs, every argument that weighs an input (``weights``), and how a call's arguments
make the sum (``terms``); ``unnamed_weights`` refuses a record whose ``terms`` reads a number no
weight entry names, so that every rule checks every weight a call gives. Everything else
derives from the records: the schemas and their ``.out`` overloads, the private overloads with
no autograd kernel and the lean ways that call them (vecadd/_lean.py), both builds' C++
registration (through the header cmake/generate_operators.py writes at build time), the
fake kernels, the autograd kernels and the Python wrappers' checks.
docs/adding-an-operator.md walks through adding one.

Standard library only, so that the build can read it before vecadd exists.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# The largest magnitude up to which every integer is a float (a double): an int weight beyond it
# may not be the number the call gave, so every way in refuses or rechecks it.
EXACT_INTEGER_LIMIT = 2**53


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
class Weight:
    """A number argument of the call and the input it weighs, which every rule checks and names
    in its errors with the value the call gave (``-alpha`` is still ``alpha``'s value)."""

    argument: str
    # The index of the input it weighs; None for a list argument, one weight per input in order.
    term: int | None = None


@dataclass(frozen=True)
class Operator:
    name: str
    arguments: tuple[Argument, ...]
    # The inputs' names in errors: one per input, or the list argument they come in ("tensors":
    # tensors[0], tensors[1], ...).
    inputs: tuple[str, ...] | str
    # Every argument that weighs an input: a float per input it weighs (an argument may weigh
    # several, as w in (1 - w) * x + w * y), or one list of a weight per input. An input no
    # entry names has a constant weight (add's x: 1).
    weights: tuple[Weight, ...]
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
    def weights_list(self) -> str | None:
        """The argument that gives one weight per input, if the weights come as a list."""
        return next((w.argument for w in self.weights if w.term is None), None)

    def weight_name(self, index: int) -> str | None:
        """The argument that weighs input `index`, as errors name it; None for a constant."""
        if self.weights_list is not None:
            return self.weights_list
        return next((w.argument for w in self.weights if w.term == index), None)

    def given_weights(self, arguments: tuple, weights: list) -> list:
        """Each input's weight as the call's argument gave it (`arguments` in the record's
        order, `weights` the ones terms made), which errors name: alpha for sub's -alpha."""
        values = dict(zip((a.name for a in self.arguments), arguments, strict=True))
        if self.weights_list is not None:
            given = values[self.weights_list]
            return list(weights) if given is None else list(given)
        return [
            weights[i] if (name := self.weight_name(i)) is None else values[name]
            for i in range(len(weights))
        ]

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


# A number terms is tried with, unlike any default, so that what it reads shows in its weights.
_PROBE = 0.3125


def _probe_arguments(op: Operator, changed: tuple[str, int] | None = None) -> list:
    """Arguments for trying op.terms: placeholders for tensors, each number at its default (or
    1), and the number `changed` names (argument, index in a list) set to a probe value."""
    values = []
    for argument in op.arguments:
        if argument.type == "Tensor":
            value = object()
        elif argument.type == "Tensor[]":
            value = [object() for _ in range(3)]
        elif argument.type == "float":
            given = float(argument.default) if argument.default not in (None, "None") else 1.0
            value = _PROBE if changed == (argument.name, 0) else given
        elif argument.type == "float[]?":
            value = [_PROBE if changed == (argument.name, i) else 1.0 for i in range(3)]
        else:
            raise ValueError(f"{op.name}: argument '{argument.name}' has type {argument.type}")
        values.append(value)
    return values


def unnamed_weights(op: Operator) -> list[str]:
    """What the record's weight entries miss or misstate, in words: a number terms reads for an
    input that no entry names (a weight no rule would check), an entry for an input terms does
    not weigh with it, an entry naming no number argument. Empty for a sound record."""
    kinds = {argument.name: argument.type for argument in op.arguments}
    problems = []
    for weight in op.weights:
        wanted = "float[]?" if weight.term is None else "float"
        if kinds.get(weight.argument) != wanted:
            problems.append(
                f"{op.name}: weight entry {weight} names no {wanted} argument; expected one of "
                f"the record's arguments of type {wanted}"
            )
    terms = [weight.term for weight in op.weights if weight.term is not None]
    fixed = 0 if isinstance(op.inputs, str) else len(op.inputs)
    for term in sorted(set(terms)):
        if terms.count(term) > 1 or not 0 <= term < fixed:
            problems.append(
                f"{op.name}: weight entries name input {term} {terms.count(term)} times; "
                f"expected each input from 0 to {fixed - 1} at most once"
            )
    if op.weights_list is not None and len(op.weights) > 1:
        problems.append(
            f"{op.name}: a list of weights ('{op.weights_list}') and other weight entries; "
            "expected the list alone, one weight per input"
        )
    if problems:
        return problems
    _, base = op.terms(*_probe_arguments(op))
    for argument in op.arguments:
        places = {"float": 1, "float[]?": len(base)}.get(argument.type, 0)
        for place in range(places):
            _, weights = op.terms(*_probe_arguments(op, (argument.name, place)))
            read = {i for i, (a, b) in enumerate(zip(base, weights, strict=True)) if a != b}
            named = {
                i
                for i in range(len(base))
                if op.weight_name(i) == argument.name and (argument.type == "float" or i == place)
            }
            for index in sorted(read - named):
                problems.append(
                    f"{op.name}: terms reads argument '{argument.name}' for input {index}'s "
                    f"weight, but no weight entry names it; expected Weight({argument.name!r}, "
                    f"{index}) in the record's weights, so that every rule checks it"
                )
            for index in sorted(named - read):
                problems.append(
                    f"{op.name}: a weight entry says '{argument.name}' weighs input {index}, but "
                    "terms does not read it for that input; expected the entries to match terms"
                )
    return problems


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
    weights=(Weight("alpha", 1),),
    terms=_add_terms,
    summary="x + alpha * y",
)

ADD_N = Operator(
    name="add_n",
    arguments=(Argument("tensors", "Tensor[]"), Argument("weights", "float[]?", "None")),
    inputs="tensors",
    weights=(Weight("weights"),),
    terms=_add_n_terms,
    summary="weights[0] * tensors[0] + weights[1] * tensors[1] + ...",
)

OPERATORS: tuple[Operator, ...] = (ADD, ADD_N)
BY_NAME = {operator.name: operator for operator in OPERATORS}
