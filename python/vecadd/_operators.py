"""vecadd's operators, each described once.

Every operator is a weighted sum of tensors, broadcast like a chain of torch.add and computed in
one pass. A record names it, gives its arguments (its schema follows), the words its errors use
for its inputs, and how each input is weighed (``weights``): by a number argument, its negation
or an integer plus either (``Weight``), or by a constant 1 where no entry names the input.
Everything else derives from the records: the sum a call makes (``Operator.terms``, and
``Operator.exact_terms`` for integer tensors), the schemas and their ``.out`` overloads, the
private overloads with no autograd kernel and the lean ways that call them (vecadd/_lean.py),
both builds' C++ kernel entries and the rules that derive and check each weight (through the
header cmake/generate_operators.py writes at build time), the fake kernels, the autograd
kernels and the Python wrappers' checks. docs/adding-an-operator.md walks through adding one.

Standard library only, so that the build can read it before vecadd exists.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

# The largest magnitude up to which every integer is a float (a double): an int weight beyond it
# may not be the number the call gave, so every way in refuses or rechecks it.
EXACT_INTEGER_LIMIT = 2**53


@dataclass(frozen=True)
class Argument:
    name: str
    type: str  # as a schema writes it: Tensor, Tensor[], float, float[]?, ScalarType?
    default: str | None = None
    keyword_only: bool = False
    # The weighing argument whose imaginary part this one carries (the schemas take complex
    # weights as two floats: the stable ABI has no complex or Scalar arguments).
    imaginary_of: str | None = None

    def declaration(self, *, with_default: bool = True) -> str:
        default = f"={self.default}" if with_default and self.default is not None else ""
        return f"{self.type} {self.name}{default}"


# The argument every schema ends with: the dtype the sum is computed in and returned as, which
# the Python face gives where a Python number's promotion decides it (None: the inputs').
DTYPE = Argument("dtype", "ScalarType?", "None", keyword_only=True)


@dataclass(frozen=True)
class Weight:
    """How a number argument of the call weighs an input: ``offset + scale * argument``, the
    argument itself (the default), its negation (``scale=-1``) or an integer plus either
    (``offset``, as 1 - w). Every rule checks it and names, in its errors, the argument and the
    value the call gave (``-alpha`` is still ``alpha``'s value). For integer tensors the weight
    is derived exactly, in integers, from an integral argument; for floating ones in double, as
    written."""

    argument: str
    # The index of the input it weighs; None for a list argument, one weight per input in order.
    term: int | None = None
    scale: int = 1  # 1 or -1: a weight a float argument gives with one rounding at most
    offset: int = 0

    @property
    def derived(self) -> bool:
        """Whether the weight differs from the argument (the errors then say both)."""
        return (self.scale, self.offset) != (1, 0)

    def of(self, value):
        """The weight for a float argument `value`, in double, as the C++ rules compute it."""
        if not self.derived:
            return value
        return self.offset + self.scale * value

    def exactly(self, value: int) -> int:
        """The weight for an integral argument `value`, exactly (integer tensors)."""
        return self.offset + self.scale * value

    def expression(self, value: str) -> str:
        """The weight as Python source, of the expression `value` for the argument."""
        signed = value if self.scale == 1 else f"-{value}"
        if self.offset == 0:
            return signed
        return f"{self.offset} {'+' if self.scale == 1 else '-'} {value}"


@dataclass(frozen=True)
class Operator:
    name: str
    arguments: tuple[Argument, ...]
    # The inputs' names in errors: one per input, or the list argument they come in ("tensors":
    # tensors[0], tensors[1], ...).
    inputs: tuple[str, ...] | str
    # How each input is weighed: a Weight per input an argument weighs (an argument may weigh
    # several, as w in (1 - w) * x + w * y), or one Weight of a list argument, a weight per
    # input. An input no entry names has the constant weight 1 (add's x).
    weights: tuple[Weight, ...]
    summary: str

    @property
    def overload_packet(self) -> str:
        return f"vecadd::{self.name}"

    @cached_property
    def schema_arguments(self) -> tuple[Argument, ...]:
        """The schema's arguments: the record's, then the imaginary part of each weighing
        argument (`alpha_imag`, default 0), then `dtype`. The record's are a prefix of them."""
        weighing = {weight.argument for weight in self.weights}
        imaginary = tuple(
            Argument(
                f"{argument.name}_imag",
                argument.type,
                "0" if argument.type == "float" else "None",
                keyword_only=True,
                imaginary_of=argument.name,
            )
            for argument in self.arguments
            if argument.name in weighing
        )
        return (*self.arguments, *imaginary, DTYPE)

    def overload_arguments(self, *, twin: bool) -> tuple[Argument, ...]:
        """The arguments of the public overloads (the schema's), or of the private twins: the
        record's alone, since each argument the lean ways pass costs every call, and a call
        with a complex weight or a dtype goes to the public overloads."""
        return self.arguments if twin else self.schema_arguments

    def _declarations(self, *, positional: bool, defaults: bool) -> list[str]:
        words, keyword = [], False
        for argument in self.overload_arguments(twin=positional):
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
        """The call's arguments (in the schema's order: the record's, perhaps followed by the
        rest) with its tensors replaced, in order."""
        tensors, replaced = list(tensors), []
        for argument, value in zip(self.schema_arguments, arguments, strict=False):
            if argument.type == "Tensor":
                value = tensors.pop(0)
            elif argument.type == "Tensor[]":
                value, tensors = tensors[: len(value)], tensors[len(value) :]
            replaced.append(value)
        return tuple(replaced)

    def split(self, arguments: tuple) -> tuple[list, dict]:
        """The arguments (in the schema's order: the record's, perhaps followed by the rest) as
        the schema takes them: positional ones, then keyword-only ones."""
        pairs = list(zip(arguments, self.schema_arguments, strict=False))
        return (
            [value for value, spec in pairs if not spec.keyword_only],
            {spec.name: value for value, spec in pairs if spec.keyword_only},
        )

    @property
    def weights_list(self) -> str | None:
        """The argument that gives one weight per input, if the weights come as a list."""
        return next((w.argument for w in self.weights if w.term is None), None)

    def weight_of(self, index: int) -> Weight | None:
        """How input `index` is weighed; None for the constant 1."""
        if self.weights_list is not None:
            return self.weights[0]
        return next((w for w in self.weights if w.term == index), None)

    def weight_name(self, index: int) -> str | None:
        """The argument that weighs input `index`, as errors name it; None for a constant."""
        weight = self.weight_of(index)
        return None if weight is None else weight.argument

    def given_weights(self, arguments: tuple, count: int) -> list:
        """Each of the `count` inputs' weighing argument as the call gave it (`arguments` in the
        schema's order, the record's at least), which the rules derive its weight from and
        errors name: alpha for sub's -alpha, a complex number where its imaginary part is not
        0; None for an input of constant weight, 1.0 for a list left out."""
        names = (a.name for a in self.schema_arguments)
        values = dict(zip(names, arguments, strict=False))

        def complex_where_imaginary(real, imaginary):
            return real if not imaginary else complex(real, imaginary)

        if self.weights_list is not None:
            given = values[self.weights_list]
            imaginary = values.get(f"{self.weights_list}_imag") or [0.0] * count
            if given is None:
                return [1.0] * count
            return [complex_where_imaginary(*pair) for pair in zip(given, imaginary, strict=False)]
        return [
            None
            if (weight := self.weight_of(i)) is None
            else complex_where_imaginary(
                values[weight.argument], values.get(f"{weight.argument}_imag", 0.0)
            )
            for i in range(count)
        ]

    @cached_property
    def terms(self) -> Callable[..., tuple[list, list]]:
        """The sum a call makes: terms(*arguments) -> (its tensors, their weights), the weights
        as floating tensors take them (in double, as written); the function has the operator's
        Python signature, so that calling it binds the arguments."""
        return _terms_function(self, exact=False)

    @cached_property
    def exact_terms(self) -> Callable[..., tuple[list, list]]:
        """terms for integer tensors: each weight derived exactly, as a Python int, from
        integral arguments (the rules refuse others first)."""
        return _terms_function(self, exact=True)

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
        return listed(self.inputs)


def listed(names) -> str:
    """'x', 'x and y', 'x, y and z': names as a sentence lists them."""
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _python_default(argument: Argument) -> str:
    if argument.default is None:
        return ""
    return f"={float(argument.default)!r}" if argument.type == "float" else f"={argument.default}"


def _terms_function(op: Operator, *, exact: bool) -> Callable[..., tuple[list, list]]:
    """op's terms (or exact_terms) as a function of its schema's arguments, written from the
    record and compiled once: a call then costs what a hand-written one would (the stable
    build's autograd kernels call it on every call). A weight with an imaginary part other
    than 0 is complex; exact_terms, for integer tensors, reads the real parts."""
    parameters = ", ".join(a.name + _python_default(a) for a in op.schema_arguments)
    one = "1" if exact else "1.0"

    def weight_of(weight: Weight, real: str, imaginary: str) -> str:
        if exact:
            return weight.expression(f"int({real})")
        value = f"({real} if not {imaginary} else complex({real}, {imaginary}))"
        return weight.expression(value)

    if op.weights_list is not None:
        (tensors,) = (a.name for a in op.arguments if a.type == "Tensor[]")
        weight, listed_weights = op.weights[0], op.weights_list
        each = weight_of(weight, "w", "i")
        body = (
            f"    {tensors} = list({tensors})\n"
            f"    if {listed_weights} is None:\n"
            f"        return {tensors}, [{one}] * len({tensors})\n"
            f"    imaginary = {listed_weights}_imag or [0.0] * len({listed_weights})\n"
            f"    return {tensors}, [{each} for w, i in zip({listed_weights}, imaginary)]\n"
        )
    else:
        tensors = [a.name for a in op.arguments if a.type == "Tensor"]
        weights = [
            one
            if (w := op.weight_of(i)) is None
            else weight_of(w, w.argument, f"{w.argument}_imag")
            for i in range(len(tensors))
        ]
        body = f"    return [{', '.join(tensors)}], [{', '.join(weights)}]\n"
    name = "exact_terms" if exact else "terms"
    namespace: dict = {}
    exec(f"def {name}({parameters}):\n{body}", namespace)  # the record's own text, nothing else
    function = namespace[name]
    function.__qualname__ = f"{op.name}_{name}"
    return function


def record_problems(op: Operator) -> list[str]:
    """What makes a record unbuildable, in words: a weight entry naming no number argument of
    its kind, an input weighed twice or out of range, a list of weights beside other entries, a
    derivation the rules cannot keep exact, a number argument that weighs nothing. Empty for a
    sound record."""
    kinds = {argument.name: argument.type for argument in op.arguments}
    tensors = [a.name for a in op.arguments if a.type == "Tensor"]
    lists = [a.name for a in op.arguments if a.type == "Tensor[]"]
    problems = []
    if isinstance(op.inputs, str):
        if lists != [op.inputs] or tensors:
            problems.append(
                f"{op.name}: inputs is '{op.inputs}' but the tensor arguments are "
                f"{listed(tensors + lists) if tensors + lists else 'none'}; expected one Tensor[] "
                "argument of that name and no other tensor"
            )
    elif list(op.inputs) != tensors or lists:
        problems.append(
            f"{op.name}: inputs are {listed(op.inputs)} but the tensor arguments are "
            f"{listed(tensors + lists) if tensors + lists else 'none'}; expected the Tensor "
            "arguments' names, in order"
        )
    for weight in op.weights:
        wanted = "float[]?" if weight.term is None else "float"
        if kinds.get(weight.argument) != wanted:
            problems.append(
                f"{op.name}: weight entry {weight} names no {wanted} argument; expected one of "
                f"the record's arguments of type {wanted}"
            )
        if weight.scale not in (1, -1) or not isinstance(weight.offset, int):
            problems.append(
                f"{op.name}: weight entry {weight} has scale {weight.scale!r} and offset "
                f"{weight.offset!r}; expected scale 1 or -1 and an integer offset, a weight the "
                "rules derive exactly for integer tensors"
            )
        elif abs(weight.offset) > EXACT_INTEGER_LIMIT:
            problems.append(
                f"{op.name}: weight entry {weight} has offset {weight.offset}; expected a "
                f"magnitude of at most 2**{EXACT_INTEGER_LIMIT.bit_length() - 1}, which a float "
                "holds exactly"
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
    weighing = {weight.argument for weight in op.weights}
    for argument in op.arguments:
        if argument.type.startswith("float") and argument.name not in weighing:
            problems.append(
                f"{op.name}: argument '{argument.name}' weighs no input; expected a weight "
                f"entry naming it (Weight({argument.name!r}, ...)), so that it changes the sum"
            )
    return problems


ADD = Operator(
    name="add",
    arguments=(
        Argument("x", "Tensor"),
        Argument("y", "Tensor"),
        Argument("alpha", "float", "1", keyword_only=True),
    ),
    inputs=("x", "y"),
    weights=(Weight("alpha", 1),),
    summary="x + alpha * y",
)

ADD_N = Operator(
    name="add_n",
    arguments=(Argument("tensors", "Tensor[]"), Argument("weights", "float[]?", "None")),
    inputs="tensors",
    weights=(Weight("weights"),),
    summary="weights[0] * tensors[0] + weights[1] * tensors[1] + ...",
)

OPERATORS: tuple[Operator, ...] = (
    ADD,
    ADD_N,
    # A new record's name goes above this line (docs/adding-an-operator.md).
)
BY_NAME = {operator.name: operator for operator in OPERATORS}
