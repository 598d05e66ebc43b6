"""What [tool.cibuildwheel] resolves to for one wheel-matrix row, asked of cibuildwheel itself,
and whether that is what the row needs.

    python tools/release/cibuildwheel_options.py ROW_JSON     (a row of wheel_matrix.py's output)

Prints the resolved options as JSON, then one line per problem; exits 1 if there is any.
Needs cibuildwheel installed and Python 3.11+.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]
# The build decides the architecture list from its toolkit; none may be passed in.
ARCHITECTURE_VARIABLES = ("CMAKE_ARGS", "CMAKE_CUDA_ARCHITECTURES", "TORCH_CUDA_ARCH_LIST")


def resolve(row: dict) -> dict:
    # Imported here, so that --help needs no cibuildwheel.
    from cibuildwheel.options import CommandLineArguments, compute_options

    env = {
        "VECADD_WHEEL_CUDA": row["cuda"],
        "VECADD_WHEEL_OTHER_CUDA": row["other_cuda"],
        "VECADD_WHEEL_TORCH": row["build_torch"],
    }
    arguments = CommandLineArguments.defaults()
    arguments.platform = "linux"
    arguments.package_dir = ROOT
    options = compute_options(platform="linux", command_line_arguments=arguments, env=env)
    build = options.build_options(row["identifiers"].split()[0])
    return {
        "environment": build.environment.as_dictionary({"PATH": "/usr/bin", **env}),
        "before_all": build.before_all,
        "before_build": build.before_build,
        "before_test": build.before_test,
        "repair": build.repair_command,
        "frontend": [build.build_frontend.name, *build.build_frontend.args],
        "test_command": build.test_command,
    }


def expanded(command: str, environment: dict[str, str]) -> str:
    """A shell command with $NAME and ${NAME} taken from the build environment."""
    return re.sub(r"\$\{?(\w+)\}?", lambda m: environment.get(m.group(1), m.group(0)), command)


def installs_torch(command: str, torch: str) -> bool:
    """`pip install torch==X` from PyPI, the build's torch (the matrix's build_torch)."""
    return f"pip install torch=={torch} " in shlex.join(shlex.split(command)) + " "


def problems(row: dict, resolved: dict) -> list[str]:
    found = []
    environment = resolved["environment"]
    wanted = {
        "VECADD_CUDA": "ON",
        "CUDACXX": f"/usr/local/cuda-{row['cuda']}/bin/nvcc",
        "VECADD_WHEEL_CUDA": row["cuda"],
        "VECADD_WHEEL_OTHER_CUDA": row["other_cuda"],
    }
    for key, value in wanted.items():
        if environment.get(key) != value:
            found.append(f"environment {key}={environment.get(key)!r}, expected {value!r}")
    prefix = environment.get("VECADD_CUDA_LIBRARIES", "")
    if not prefix.startswith("/"):
        found.append(f"environment VECADD_CUDA_LIBRARIES={prefix!r}, expected an absolute path")
    torches = environment.get("VECADD_NATIVE_TORCHES", "")
    if not torches.startswith("/"):
        found.append(f"environment VECADD_NATIVE_TORCHES={torches!r}, expected an absolute path")
    for key in ARCHITECTURE_VARIABLES:
        if key in environment:
            found.append(f"environment sets {key}={environment[key]!r}; the build picks the list")
    if resolved["frontend"] != ["pip", "--no-build-isolation"]:
        found.append(f"build frontend {resolved['frontend']}, expected pip --no-build-isolation")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    if resolved["repair"] != pyproject["tool"]["cibuildwheel"]["repair-wheel-command"]:
        found.append(f"repair command {resolved['repair']!r} is not pyproject.toml's")
    before_all = expanded(resolved["before_all"], environment)
    for toolkit in [row["cuda"], *row["other_cuda"].split()]:
        if f"for v in {row['cuda']} {row['other_cuda']}".strip() not in before_all:
            found.append(f"before_all does not install the CUDA {toolkit} toolkit")
    before_build = expanded(resolved["before_build"], environment)
    for step in ("before_build", "before_test"):
        if not installs_torch(expanded(resolved[step], environment), row["build_torch"]):
            found.append(f"{step} does not install torch=={row['build_torch']} from PyPI")
    if row["other_cuda"] and (
        "cmake/build_cuda_library.py" not in before_build or prefix not in before_build
    ):
        found.append(
            f"before_build does not build the CUDA {row['other_cuda']} libraries into {prefix}"
        )
    fetch = f"tools/release/binding_torches.py --into {torches}"
    # Unquoted words: shlex.join would quote the step's {project}/... path, which then never
    # matches.
    if fetch not in " ".join(shlex.split(before_build)):
        found.append(f"before_build does not fetch the native bindings' torches into {torches}")
    if environment.get("VECADD_NATIVE_BINDINGS", "ON") != "ON":
        found.append("release wheels hold the native bindings (VECADD_NATIVE_BINDINGS=ON)")
    if "vecadd check" not in resolved["test_command"]:
        found.append("the test command does not run vecadd's self-test")
    if environment.get("VECADD_TORCH_ABI", "stable") != "stable":
        found.append("release wheels are the stable (portable) build")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("row", help="a row of `wheel_matrix.py matrix`'s output, as JSON")
    row = json.loads(parser.parse_args(argv).row)
    resolved = resolve(row)
    print(json.dumps(resolved, indent=1))
    found = problems(row, resolved)
    for problem in found:
        print(f"{row['platform']}: {problem}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
