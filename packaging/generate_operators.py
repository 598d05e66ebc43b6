"""Writes vecadd_operators.h, the C++ side of python/vecadd/_operators.py, for the build.

    python packaging/generate_operators.py OUTPUT

The header gives each operator's words (binding::OperatorWords, named k<Name>Words), and three
lists as macros the bindings expand: VECADD_OPERATOR_SCHEMAS(DEF) every schema (the public
overloads and their twins without autograd), VECADD_OPERATOR_KERNELS(IMPL) every overload with
its kernel (NAME for the functional overloads, NAME_out for the .out ones), and
VECADD_OPERATOR_AUTOGRAD(AUTOGRAD) the public overloads with theirs. The records are read by
path: importing vecadd needs the libraries this build is making.
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
    return module.OPERATORS


def camel(name: str) -> str:
    """'add_n' -> 'AddN'."""
    return "".join(part.capitalize() for part in name.split("_"))


def quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def macro(name: str, parameter: str, entries: list[str]) -> str:
    body = " \\\n".join(f"  {entry}" for entry in entries)
    return f"#define {name}({parameter}) \\\n{body}\n"


def header(operators) -> str:
    words = []
    for op in operators:
        name = camel(op.name)
        if isinstance(op.inputs, str):
            fixed, list_name = "nullptr", quoted(op.inputs)
        else:
            words.append(
                f"inline constexpr const char* k{name}Inputs[] = "
                f"{{{', '.join(quoted(i) for i in op.inputs)}}};"
            )
            fixed, list_name = f"k{name}Inputs", "nullptr"
        words.append(
            f"inline const OperatorWords k{name}Words{{{quoted(op.call)}, {fixed}, {list_name}, "
            f"{quoted(op.all_inputs)}, {quoted(op.weights)}, "
            f"{'true' if op.weights_list else 'false'}, {quoted('vecadd::' + name + 'Backward')}}};"
        )
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
            *words,
            "}  // namespace vecadd::binding",
            "",
            macro("VECADD_OPERATOR_SCHEMAS", "DEF", schemas),
            macro("VECADD_OPERATOR_KERNELS", "IMPL", kernels),
            macro("VECADD_OPERATOR_AUTOGRAD", "AUTOGRAD", autograd),
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path)
    args = parser.parse_args(argv)
    text = header(load_operators())
    # Rewritten only when it changes, so that an unchanged description rebuilds nothing.
    if not args.output.exists() or args.output.read_text() != text:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
