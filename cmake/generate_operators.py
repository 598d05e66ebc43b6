"""Writes vecadd_operators.h, the C++ side of python/vecadd/_operators.py, for the build.

    python cmake/generate_operators.py [HEADER] [--lean-ways PYTHON_FILE]

The header gives each operator's words and weight rules (binding::OperatorWords, named
k<Name>Words: how each input's weight derives from the call's numbers, which the shared rules
derive and check once for every operator), the largest integer weight a double holds exactly
(binding::kExactIntegerLimit), and four lists as macros the bindings expand:
VECADD_OPERATOR_SCHEMAS(DEF) every schema (the public overloads and their twins without
autograd), VECADD_OPERATOR_KERNELS(IMPL) every overload with its words, whether it is an .out
overload and its argument kinds (IMPL(NAME, WORDS, OUT, KIND...), from which each binding
instantiates its one generic kernel entry), VECADD_OPERATOR_AUTOGRAD(AUTOGRAD) the public
overloads alike, and VECADD_OPERATOR_ENTRIES(ENTRY) each operator's name, docstring and argument
parsers, from which the native build writes its vecadd._C entries (src/torch/module.cpp). No
operator needs a line of C++ of its own. It refuses a record the rules could not check (a weight
no number gives, a derivation that is not exact). With --lean-ways it also writes
vecadd/_lean_ways.py, each operator's lean way as a Python function of its own arguments
(vecadd/_lean.py says why), asking torch's tracing questions inline as
vecadd/_torch_private.py words them (which imports torch), and the function torch.compile
traces in place of each operator's wrapper. The records are read by path: importing vecadd needs
the libraries this build is making.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "vecadd"
OPERATORS_MODULE = PACKAGE / "_operators.py"
TORCH_PRIVATE_MODULE = PACKAGE / "_torch_private.py"


def load_module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while they are made
    spec.loader.exec_module(module)
    return module


def load_operators():
    return load_module("vecadd_operators", OPERATORS_MODULE)


def camel(name: str) -> str:
    """'add_n' -> 'AddN'."""
    return "".join(part.capitalize() for part in name.split("_"))


def quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def macro(name: str, parameter: str, entries: list[str]) -> str:
    body = " \\\n".join(f"  {entry}" for entry in entries)
    return f"#define {name}({parameter}) \\\n{body}\n"


# The native entries' parser of each schema argument type (src/torch/module.cpp).
PARSERS = {
    "Tensor": "TensorArgument",
    "Tensor[]": "TensorListArgument",
    "float": "FloatArgument",
    "float[]?": "OptionalFloatListArgument",
}
# The kind each binding's generic kernel entry reads a schema argument as (src/binding): by its
# type, or, for the imaginary part of a weighing argument, by that.
KINDS = {
    "Tensor": "vecadd::binding::TensorKind",
    "Tensor[]": "vecadd::binding::TensorListKind",
    "float": "vecadd::binding::FloatKind",
    "float[]?": "vecadd::binding::FloatListKind",
    "ScalarType?": "vecadd::binding::DTypeKind",
}
IMAGINARY_KINDS = {
    "float": "vecadd::binding::ImaginaryKind",
    "float[]?": "vecadd::binding::ImaginaryListKind",
}
# What the native entries pass for each schema argument that follows the record's (module.cpp).
ENTRY_DEFAULTS = {"float": "ImaginaryDefault", "float[]?": "ImaginaryListDefault"}


def names_array(name: str, names) -> str:
    items = ", ".join("nullptr" if n is None else quoted(n) for n in names)
    return f"inline constexpr const char* {name}[] = {{{items}}};"


def weight_rule(op, weight) -> str:
    """A binding::WeightRule: the argument, which of the call's numbers gives it (its place among
    the float arguments, or 0 for the list), the scale and the offset; a constant 1 for None."""
    if weight is None:
        return "{nullptr, 0, 0, 1}"
    numbers = [a.name for a in op.arguments if a.type == "float"]
    number = numbers.index(weight.argument) if weight.term is not None else 0
    return f"{{{quoted(weight.argument)}, {number}, {weight.scale}, {weight.offset}}}"


def operator_words(op) -> list[str]:
    name = camel(op.name)
    lines = []
    if isinstance(op.inputs, str):
        fixed, list_name = "nullptr", quoted(op.inputs)
        rules = [weight_rule(op, op.weights[0])]
    else:
        lines.append(names_array(f"k{name}Inputs", op.inputs))
        fixed, list_name = f"k{name}Inputs", "nullptr"
        rules = [weight_rule(op, op.weight_of(index)) for index in range(len(op.inputs))]
    lines.append(f"inline constexpr WeightRule k{name}Weights[] = {{{', '.join(rules)}}};")
    lines.append(
        f"inline const OperatorWords k{name}Words{{{quoted(op.overload_packet)}, "
        f"{quoted(op.call)}, {fixed}, {list_name}, {quoted(op.all_inputs)}, k{name}Weights, "
        f"{'true' if op.weights_list else 'false'}, "
        f"{quoted('vecadd::' + name + 'Backward')}}};"
    )
    return lines


def entry(op) -> str:
    names = ", ".join(argument.name for argument in op.arguments)
    doc = (
        f"{op.name}({names}, out) -> Tensor\n\nLean entry to torch.ops.vecadd.{op.name} for plain "
        f"tensors; use vecadd.{op.name} instead."
    )
    parsers = [PARSERS[argument.type] for argument in op.arguments]
    defaults = [
        ENTRY_DEFAULTS[a.type] if a.imaginary_of else "DTypeDefault"
        for a in op.schema_arguments[len(op.arguments) :]
    ]
    return f"ENTRY({op.name}, {quoted(doc)}, {', '.join(parsers + defaults)})"


def kind(argument) -> str:
    return (IMAGINARY_KINDS if argument.imaginary_of else KINDS)[argument.type]


def kernel(macro_argument: str, op, registered: str, out: bool) -> str:
    twin = registered.startswith("_")
    kinds = ", ".join(kind(argument) for argument in op.overload_arguments(twin=twin))
    words = f"vecadd::binding::k{camel(op.name)}Words"
    return f"{macro_argument}({quoted(registered)}, {words}, {'true' if out else 'false'}, {kinds})"


def header(records) -> str:
    operators = records.OPERATORS
    words = [line for op in operators for line in operator_words(op)]
    schemas = [
        f"DEF({quoted(op.schema(out=out, twin=twin))})"
        for op in operators
        for twin in (False, True)
        for out in (False, True)
    ]
    kernels = [
        kernel("IMPL", op, registered, out)
        for op in operators
        for registered, out in op.registered_names()
    ]
    autograd = [
        kernel("AUTOGRAD", op, registered, out)
        for op in operators
        for registered, out in op.registered_names()[:2]
    ]
    return "\n".join(
        [
            "// vecadd's operators as python/vecadd/_operators.py describes them, written by",
            "// cmake/generate_operators.py at build time: edit the records, not this file.",
            "#pragma once",
            "",
            '#include "call_rules.h"',
            "",
            "namespace vecadd::binding {",
            f"inline constexpr long long kExactIntegerLimit = {records.EXACT_INTEGER_LIMIT};",
            *words,
            "}  // namespace vecadd::binding",
            "",
            macro("VECADD_OPERATOR_SCHEMAS", "DEF", schemas),
            macro("VECADD_OPERATOR_KERNELS", "IMPL", kernels),
            macro("VECADD_OPERATOR_AUTOGRAD", "AUTOGRAD", autograd),
            macro("VECADD_OPERATOR_ENTRIES", "ENTRY", [entry(op) for op in operators]),
        ]
    )


# What each argument type of a lean way checks and converts; `{name}` is the argument.
LEAN_CHECKS = {
    "Tensor": """
        if type({name}) is not Tensor:
            numbers = (*numbers, {name})
            {name} = lean_number({name})
            if {name} is None:
                return NotImplemented
        elif {name}.requires_grad:
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

LEAN_WAYS_HEAD = '''"""The lean way into each vecadd operator, written from the records
(vecadd/_operators.py) by cmake/generate_operators.py at build time: edit the records or the
generator, not this file.
vecadd/_lean.py says what a lean way is, and takes these only where the running torch asks the
tracing questions below as they were written here."""

from torch import Tensor
from torch import is_grad_enabled as grad_enabled

from ._lean import lean_float, lean_floats, lean_number, numbers_join
from ._torch_private import (
    TRACING_NAMES,
    forward_ad_levels,
    functorch_transforms_active,
    increment_versions,
    torch_function_mode_enabled,
)

is_dynamo_compiling = TRACING_NAMES["is_dynamo_compiling"]
compiler = TRACING_NAMES["compiler"]
is_compiling = TRACING_NAMES["is_compiling"]
SEQUENCES = (list, tuple)
# vecadd/_torch_private.py's questions, as this file asks them inline.
TRACING = {tracing!r}
LEAN_WAY_BLOCKED = {blocked!r}


def each_has_type(items, kind, wanted):
    """Whether kind(item) is `wanted` for every item: a loop, which torch.compile traces without
    the guards that its polyfill of all() adds in some releases."""
    for item in items:
        if kind(item) is not wanted:
            return False
    return True


def untraced(entry):
    """The native build's C++ entry of an operator as its lean way: entry's calls, answered
    NotImplemented while torch.compile or torch.export traces, as neither can enter C++."""

    def untraced_entry(*args):
        if {tracing}:
            return NotImplemented
        return entry(*args)

    return untraced_entry
'''

LEAN_WAY = '''

def lean_{op}(functional, out_variant, with_grad, typed):
    """{call}'s lean way: lean_{op}({parameters}, out), its result or NotImplemented.
    `functional`, `out_variant`: its private overloads; `with_grad`: the way where an input
    requires grad (None: the public op's); `typed`: a kernel's error as the error it words."""

    def lean_{op}({parameters}, out):
        if {blocked}:
            return NotImplemented
        needs_grad = False{numbers}{checks}{numbers_check}
        if needs_grad:  # an input requires grad: does grad mode ask for it?
            needs_grad = grad_enabled()
        try:
            if out is None:
                if needs_grad:
                    return NotImplemented if with_grad is None else with_grad({parameters})
                return {functional}
            if type(out) is not Tensor or needs_grad or (out.requires_grad and grad_enabled()):
                return NotImplemented  # the checked way refuses out= with grad in words
            out_variant({parameters}, out)
            increment_versions((out,))  # as the .out overload's autograd kernel does
            return out
        except NotImplementedError:
            return NotImplemented  # a backend without vecadd kernels: the public op names it
        except RuntimeError as error:
            raise typed(error) from None

    return lean_{op}
'''


# What each argument type of a traced way asks of a plain call; `{name}` is the argument.
TRACED_PLAIN = {
    "Tensor": "kind({name}) is tensor",
    "Tensor[]": (
        "kind({name}) in sequences and len_of({name}) > 0 and each_is({name}, kind, tensor)"
    ),
    "float": "kind({name}) is real",
    "float[]?": "({name} is None or kind({name}) in sequences and each_is({name}, kind, real))",
}
# How a traced way passes each argument type on to the operator.
TRACED_PASSED = {
    "Tensor": "{name}",
    "Tensor[]": "as_list({name})",
    "float": "{name}",
    "float[]?": "None if {name} is None else as_list({name})",
}

TRACED_WAY = '''

def traced_{op}(functional, checked, kernels_kept):
    """{call} as torch.compile traces it in its place: {op}({signature}).
    `functional`: the public functional overload; `checked(arguments, out)`: the checked way;
    `kernels_kept()`: how many vecadd.keep_kernels() scopes are open."""
    # Globals read once, here: the traced function reads closure cells, which torch.compile does
    # not guard, where each global it read would be one more check on every compiled call.
    tensor, kind, real, sequences = Tensor, type, float, SEQUENCES
    each_is, len_of, as_list = each_has_type, len, list

    def {op}({signature}):
        # kernels_kept() is read for its guard: a graph compiled on one side of the switch is
        # not run on the other.
        if kernels_kept() >= 0 and out is None and {plain}:
            return functional({passed})
        return checked(({parameters},), out)

    return {op}
'''


def python_default(argument) -> str:
    """The Python default of a record's argument, as its wrapper declares it."""
    if argument.default is None:
        return ""
    if argument.type == "float":
        return f"={float(argument.default)!r}"  # "1" in a schema, 1.0 in the wrapper
    return f"={argument.default}"


def wrapper_signature(op) -> str:
    """The parameters of the operator's Python wrapper: the record's arguments, then out."""
    words, keyword = [], False
    for argument in op.arguments:
        if argument.keyword_only and not keyword:
            words.append("*")
            keyword = True
        words.append(argument.name + python_default(argument))
    return ", ".join([*words, "out=None"] if keyword else [*words, "*", "out=None"])


def traced_way(op) -> str:
    passed = [
        TRACED_PASSED[a.type].format(name=a.name)
        if not a.keyword_only
        else f"{a.name}={TRACED_PASSED[a.type].format(name=a.name)}"
        for a in op.arguments
    ]
    return TRACED_WAY.format(
        op=op.name,
        call=op.call,
        signature=wrapper_signature(op),
        plain=" and ".join(TRACED_PLAIN[a.type].format(name=a.name) for a in op.arguments),
        passed=", ".join(passed),
        parameters=", ".join(argument.name for argument in op.arguments),
    )


def functional_call(op) -> str:
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


def lean_numbers(op) -> dict[str, str]:
    """A lean way's lines for Python numbers among its tensor arguments: each is taken as a
    0-dim tensor where that promotes as the number would (numbers_join), else NotImplemented."""
    tensors = [a.name for a in op.arguments if a.type == "Tensor"]
    if not tensors:
        return {"numbers": "", "numbers_check": ""}
    return {
        "numbers": "\n        numbers = ()",
        "numbers_check": (
            f"\n        if numbers and not numbers_join(numbers, ({', '.join(tensors)},)):"
            "\n            return NotImplemented"
        ),
    }


def lean_ways(records, tracing: str, blocked: str) -> str:
    """vecadd/_lean_ways.py: the head, then for each operator lean_<name>(functional,
    out_variant, with_grad, typed), which gives its lean way, and traced_<name>(functional,
    checked, kernels_kept), which gives the function torch.compile traces in its wrapper's
    place."""
    ways = [LEAN_WAYS_HEAD.format(tracing=tracing, blocked=blocked)]
    for op in records.OPERATORS:
        ways.append(
            LEAN_WAY.format(
                op=op.name,
                call=op.call,
                parameters=", ".join(argument.name for argument in op.arguments),
                blocked=blocked,
                checks="".join(LEAN_CHECKS[a.type].format(name=a.name) for a in op.arguments),
                functional=functional_call(op),
                **lean_numbers(op),
            )
        )
        ways.append(traced_way(op))
    return "".join(ways)


def refusals(records) -> list[str]:
    """Why the records cannot be built: a record the rules could not check
    (records.record_problems), an argument type the bindings do not know."""
    problems = []
    for op in records.OPERATORS:
        problems += records.record_problems(op)
        problems += [
            f"{op.name}: argument '{a.name}' has type {a.type}; expected one of "
            + ", ".join(PARSERS)
            for a in op.arguments
            if a.type not in PARSERS
        ]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path, nargs="?", help="the header (vecadd_operators.h)")
    parser.add_argument("--lean-ways", type=Path, help="also write vecadd/_lean_ways.py here")
    args = parser.parse_args(argv)
    records = load_operators()
    problems = refusals(records)
    if problems:
        print("vecadd: python/vecadd/_operators.py cannot be built:", file=sys.stderr)
        print("\n".join(f"  {problem}" for problem in problems), file=sys.stderr)
        return 1
    written = {} if args.output is None else {args.output: header(records)}
    if args.lean_ways is not None:
        private = load_module("vecadd_torch_private", TORCH_PRIVATE_MODULE)
        written[args.lean_ways] = lean_ways(records, private.TRACING, private.LEAN_WAY_BLOCKED)
    for path, text in written.items():
        # Rewritten only when it changes, so that an unchanged description rebuilds nothing.
        if not path.exists() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
