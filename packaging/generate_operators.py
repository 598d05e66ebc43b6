"""Writes vecadd_operators.h, the C++ side of python/vecadd/_operators.py, for the build.

    python packaging/generate_operators.py OUTPUT

The header gives each operator's words (binding::OperatorWords, named k<Name>Words), the largest
integer weight a double holds exactly (binding::kExactIntegerLimit), and four lists as macros the
bindings expand: VECADD_OPERATOR_SCHEMAS(DEF) every schema (the public overloads and their twins
without autograd), VECADD_OPERATOR_KERNELS(IMPL) every overload with its kernel (NAME for the
functional overloads, NAME_out for the .out ones), VECADD_OPERATOR_AUTOGRAD(AUTOGRAD) the public
overloads with theirs, and VECADD_OPERATOR_ENTRIES(ENTRY) each operator's name, docstring and
argument parsers, from which the native build writes its vecadd._C entries (src/torch/module.cpp).
It refuses a record whose terms read a number that no weight entry names (no rule would check
it). The records are read by path: importing vecadd needs the libraries this build is making.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

OPERATORS_MODULE = Path(__file__).resolve().parents[1] / "python" / "vecadd" / "_operators.py"


def load_operators():
    spec = importlib.util.spec_from_file_location("vecadd_operators", OPERATORS_MODULE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while they are made
    spec.loader.exec_module(module)
    return module


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


def names_array(name: str, names) -> str:
    items = ", ".join("nullptr" if n is None else quoted(n) for n in names)
    return f"inline constexpr const char* {name}[] = {{{items}}};"


def operator_words(op) -> list[str]:
    name = camel(op.name)
    lines = []
    if isinstance(op.inputs, str):
        fixed, list_name = "nullptr", quoted(op.inputs)
    else:
        lines.append(names_array(f"k{name}Inputs", op.inputs))
        fixed, list_name = f"k{name}Inputs", "nullptr"
    if op.weights_list is None and not isinstance(op.inputs, str):
        weights = [op.weight_name(index) for index in range(len(op.inputs))]
        lines.append(names_array(f"k{name}Weights", weights))
        fixed_weights, weights_list = f"k{name}Weights", "nullptr"
    else:
        fixed_weights = "nullptr"
        weights_list = "nullptr" if op.weights_list is None else quoted(op.weights_list)
    lines.append(
        f"inline const OperatorWords k{name}Words{{{quoted(op.call)}, {fixed}, {list_name}, "
        f"{quoted(op.all_inputs)}, {fixed_weights}, {weights_list}, "
        f"{quoted('vecadd::' + name + 'Backward')}}};"
    )
    return lines


def entry(op) -> str:
    names = ", ".join(argument.name for argument in op.arguments)
    doc = (
        f"{op.name}({names}, out) -> Tensor\n\nLean entry to torch.ops.vecadd.{op.name} for plain "
        f"tensors; use vecadd.{op.name} instead."
    )
    parsers = ", ".join(PARSERS[argument.type] for argument in op.arguments)
    return f"ENTRY({op.name}, {quoted(doc)}, {parsers})"


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
        f"IMPL({quoted(registered)}, {op.name}{'_out' if out else ''})"
        for op in operators
        for registered, out in op.registered_names()
    ]
    autograd = [
        f"AUTOGRAD({quoted(registered)}, {op.name}{'_out' if out else ''})"
        for op in operators
        for registered, out in op.registered_names()[:2]
    ]
    return "\n".join(
        [
            "// vecadd's operators as python/vecadd/_operators.py describes them, written by",
            "// packaging/generate_operators.py at build time: edit the records, not this file.",
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


def refusals(records) -> list[str]:
    """Why the records cannot be built: a weight no rule would check, an argument type the
    bindings do not know."""
    problems = []
    for op in records.OPERATORS:
        problems += records.unnamed_weights(op)
        problems += [
            f"{op.name}: argument '{a.name}' has type {a.type}; expected one of {', '.join(PARSERS)}"
            for a in op.arguments
            if a.type not in PARSERS
        ]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path)
    args = parser.parse_args(argv)
    records = load_operators()
    problems = refusals(records)
    if problems:
        print("vecadd: python/vecadd/_operators.py cannot be built:", file=sys.stderr)
        print("\n".join(f"  {problem}" for problem in problems), file=sys.stderr)
        return 1
    text = header(records)
    # Rewritten only when it changes, so that an unchanged description rebuilds nothing.
    if not args.output.exists() or args.output.read_text() != text:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
