"""What [tool.cibuildwheel] resolves to for one wheel-matrix row, asked of cibuildwheel itself,
and whether that is what the row needs.

    python packaging/cibuildwheel_options.py ROW_JSON     (a row of wheel_matrix.py's output)

Prints the resolved options as JSON, then one line per problem; exits 1 if there is any.
Needs cibuildwheel installed and Python 3.11+.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import tomllib
from cibuildwheel.options import CommandLineArguments, compute_options

ROOT = Path(__file__).resolve().parents[1]
# The build decides the architecture list from its toolkit; none may be passed in.
ARCHITECTURE_VARIABLES = ("CMAKE_ARGS", "CMAKE_CUDA_ARCHITECTURES", "TORCH_CUDA_ARCH_LIST")


def resolve(row: dict) -> dict:
    env = {
        "VECADD_WHEEL_CUDA": row["cuda"],
        "VECADD_WHEEL_TORCH": row["torch"],
        "VECADD_WHEEL_TEST_TORCH": row["test_torch"],
        "VECADD_WHEEL_INDEX": row["index"],
        "VECADD_WHEEL_LABEL": row["label"],
    }
    arguments = CommandLineArguments.defaults()
    arguments.platform = "linux"
    arguments.package_dir = ROOT
    options = compute_options(platform="linux", command_line_arguments=arguments, env=env)
    build = options.build_options(row["identifiers"].split()[0])
    return {
        "environment": build.environment.as_dictionary({"PATH": "/usr/bin"}),
        "before_all": build.before_all,
        "before_build": build.before_build,
        "before_test": build.before_test,
        "repair": build.repair_command,
        "frontend": [build.build_frontend.name, *build.build_frontend.args],
        "test_command": build.test_command,
    }


def expanded(command: str, environment: dict[str, str]) -> list[str]:
    """A shell command's words with $NAME and ${NAME} taken from the build environment."""
    text = re.sub(r"\$\{?(\w+)\}?", lambda m: environment.get(m.group(1), m.group(0)), command)
    return shlex.split(text)


def installs_torch(words: list[str], torch: str, index: str) -> bool:
    pairs = zip(words, words[1:], words[2:], strict=False)
    return any(a == f"torch=={torch}" and b == "--index-url" and c == index for a, b, c in pairs)


def problems(row: dict, resolved: dict) -> list[str]:
    found = []
    environment = resolved["environment"]
    wanted = {
        "VECADD_CUDA": "ON",
        "CUDACXX": f"/usr/local/cuda-{row['cuda']}/bin/nvcc",
        "VECADD_WHEEL_CUDA": row["cuda"],
        "VECADD_WHEEL_LABEL": row["label"],
        "VECADD_WHEEL_TEST_TORCH": row["test_torch"],
    }
    for key, value in wanted.items():
        if environment.get(key) != value:
            found.append(f"environment {key}={environment.get(key)!r}, expected {value!r}")
    for key in ARCHITECTURE_VARIABLES:
        if key in environment:
            found.append(f"environment sets {key}={environment[key]!r}; the build picks the list")
    if resolved["frontend"] != ["pip", "--no-build-isolation"]:
        found.append(f"build frontend {resolved['frontend']}, expected pip --no-build-isolation")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    if resolved["repair"] != pyproject["tool"]["cibuildwheel"]["repair-wheel-command"]:
        found.append(f"repair command {resolved['repair']!r} is not pyproject.toml's")
    for step in ("before_build", "before_test"):
        words = expanded(resolved[step], environment)
        if not installs_torch(words, row["torch"], row["index"]):
            found.append(f"{step} does not install torch=={row['torch']} from {row['index']}")
    if "packaging/test_wheel_under_torches.sh" not in resolved["test_command"]:
        found.append("the test command does not test under each torch of the cell")
    if environment.get("VECADD_TORCH_ABI", "stable") != "stable":
        found.append("release wheels are the stable (portable) build")
    return found


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: cibuildwheel_options.py ROW_JSON", file=sys.stderr)
        return 2
    row = json.loads(argv[0])
    resolved = resolve(row)
    print(json.dumps(resolved, indent=1))
    found = problems(row, resolved)
    for problem in found:
        print(f"CUDA {row['cuda']} {row['platform']}: {problem}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
