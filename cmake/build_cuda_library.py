"""Builds vecadd's CUDA library for one CUDA toolkit alone, for a wheel built with another to hold.

    python cmake/build_cuda_library.py --nvcc NVCC --prefix PREFIX
        [--torch-root DIR] [--build-dir DIR] [--system-root ROOT] [--host-compiler CXX]
        [--cuda-runtime shared|static]

Configures this checkout with VECADD_CUDA_LIBRARY_ONLY=ON and CMAKE_CUDA_COMPILER=NVCC against
the torch package at --torch-root (default: the importable torch's folder), builds it and
installs lib/cudaN (the kernels, their stable torch operators, cuda_library.json) and its CMake
targets under PREFIX. The wheel build then names PREFIX in VECADD_CUDA_LIBRARIES (the wheel
workflow and `nox -s wheels` both call this script; docs/wheels.md).

--system-root runs every step inside that root directory (chroot), for a toolkit installed in
another system's tree: this checkout, the torch folder and PREFIX are bind-mounted there at
their own paths, in a mount namespace of their own (needs root, `unshare` and `chroot`).
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def torch_folder() -> Path:
    import torch  # only to find its folder; the build reads its files

    return Path(torch.__file__).resolve().parent


def cmake_steps(
    nvcc: str,
    prefix: Path,
    torch_root: Path,
    build_dir: Path,
    host_compiler: str | None,
    cuda_runtime: str = "shared",
) -> list[list[str]]:
    configure = [
        "cmake",
        "-S",
        str(ROOT),
        "-B",
        str(build_dir),
        "-G",
        "Ninja",
        "-DCMAKE_BUILD_TYPE=Release",
        "-DVECADD_CUDA_LIBRARY_ONLY=ON",
        "-DVECADD_PYTHON=ON",
        "-DVECADD_TORCH_ABI=stable",
        "-DVECADD_CUDA=ON",
        f"-DCMAKE_CUDA_COMPILER={nvcc}",
        f"-DVECADD_TORCH_ROOT={torch_root}",
        f"-DCMAKE_INSTALL_PREFIX={prefix}",
        f"-DVECADD_CUDA_RUNTIME={cuda_runtime}",
    ]
    if host_compiler:
        configure += [
            f"-DCMAKE_CXX_COMPILER={host_compiler}",
            f"-DCMAKE_CUDA_HOST_COMPILER={host_compiler}",
        ]
    return [
        configure,
        ["cmake", "--build", str(build_dir)],
        ["cmake", "--install", str(build_dir)],
    ]


def inside(system_root: Path, shared: list[Path], steps: list[list[str]]) -> list[str]:
    """One command that runs `steps` in `system_root` with `shared` mounted at their paths."""
    script = ["set -e"]
    outermost = [p for p in shared if not any(o != p and o in p.parents for o in shared)]
    for path in dict.fromkeys(outermost):
        target = f"{system_root}{path}"
        script.append(f"mkdir -p {shlex.quote(target)}")
        script.append(f"mount --bind {shlex.quote(str(path))} {shlex.quote(target)}")
    # An architecture list or compiler of the caller's system would mean nothing in the root.
    clean = (
        "env -u CMAKE_ARGS -u CUDACXX -u CXX -u CC -u CMAKE_CUDA_ARCHITECTURES PATH=/usr/bin:/bin"
    )
    for step in steps:
        script.append(f"chroot {shlex.quote(str(system_root))} {clean} {shlex.join(step)}")
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", "\n".join(script)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--nvcc", required=True, help="the CUDA compiler of the toolkit to build with"
    )
    parser.add_argument("--prefix", type=Path, required=True, help="where to install lib/cudaN")
    parser.add_argument("--torch-root", type=Path, help="the torch package folder to build against")
    parser.add_argument("--build-dir", type=Path, help="default: PREFIX/build")
    parser.add_argument("--system-root", type=Path, help="run the build inside this root (chroot)")
    parser.add_argument("--host-compiler", help="the C++ compiler nvcc and CMake use")
    parser.add_argument(
        "--cuda-runtime",
        choices=("shared", "static"),
        default="shared",
        help="link the CUDA runtime shared (torch's own, the default) or statically",
    )
    args = parser.parse_args(argv)

    prefix = args.prefix.resolve()
    torch_root = (args.torch_root or torch_folder()).resolve()
    build_dir = (args.build_dir or prefix / "build").resolve()
    if not (torch_root / "version.py").exists():
        parser.error(
            f"--torch-root {torch_root} holds no version.py; expected a torch package folder"
        )
    prefix.mkdir(parents=True, exist_ok=True)
    build_dir.mkdir(parents=True, exist_ok=True)
    steps = cmake_steps(
        args.nvcc, prefix, torch_root, build_dir, args.host_compiler, args.cuda_runtime
    )
    if args.system_root is not None:
        commands = [
            inside(args.system_root.resolve(), [ROOT, torch_root, prefix, build_dir], steps)
        ]
    else:
        commands = steps
    for command in commands:
        print("+", shlex.join(command), flush=True)
        ran = subprocess.run(command, env={**os.environ, "CMAKE_ARGS": ""}, check=False)
        if ran.returncode != 0:
            print(
                f"build_cuda_library.py: step failed with exit status {ran.returncode}",
                file=sys.stderr,
            )
            return ran.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
