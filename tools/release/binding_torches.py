"""The torch releases the portable wheel's native bindings are compiled against, each unpacked
from its wheel as far as a binding needs it (headers, the libraries it links, torch's CMake
config and version), for the wheel build to read as files (VECADD_NATIVE_TORCHES,
docs/portable.md).

    python tools/release/binding_torches.py --into DIR [--wheels DIR] [VERSION ...]

VERSION defaults to wheel_matrix.py's binding-torches: the first release of every torch series
the wheel claims, from the table of PyTorch's builds. Each wheel is fetched once with
`pip download --no-deps torch==VERSION` (whatever build pip's sources give: a binding's CPU
and Autograd kernels use torch's CPU API alone, the same in its CUDA and CPU-only builds; its
CUDA kernels need libc10_cuda, which only a CUDA build holds, and are left out without it) and
unpacked into DIR/VERSION/torch; what is unpacked already is kept. The wheels go to --wheels and
stay there, or without it to DIR/wheels, each deleted once unpacked (a CUDA torch's is near a
gigabyte). Prints DIR.
Runs under Python 3.10, the build Python of the wheel workflow.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import wheel_matrix

# What a binding needs of a torch wheel: its headers, CMake config (the C++ standard and ABI it
# states), version, and the libraries a binding or its Python entry links (never torch_cuda;
# libc10_cuda, a CUDA build's, for the library of the binding's CUDA kernels).
NEEDED = re.compile(
    r"torch/(include/.*|share/cmake/.*|version\.py"
    r"|lib/(libc10|libc10_cuda|libtorch|libtorch_cpu|libtorch_python|libshm)\.so"
    r"|lib/libgomp[^/]*\.so[^/]*)"
)
UNPACKED_MARK = ".unpacked"  # written last: a folder without it was cut short and is redone


def fetch_wheel(version: str, wheels: Path) -> Path:
    """torch VERSION's wheel for this Python and platform, downloaded unless it is there."""
    pattern = f"torch-{version}-*.whl"
    found = sorted(wheels.glob(pattern)) + sorted(wheels.glob(f"torch-{version}+*.whl"))
    if not found:
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
        command += ["--dest", str(wheels), f"torch=={version}"]
        subprocess.run(command, check=True)
        found = sorted(wheels.glob(pattern)) + sorted(wheels.glob(f"torch-{version}+*.whl"))
    if not found:
        raise SystemExit(f"binding_torches.py: pip left no torch {version} wheel in {wheels}")
    return found[0]


def unpack(wheel: Path, folder: Path) -> Path:
    """The parts of `wheel` a binding needs, under folder/torch (the torch package folder)."""
    shutil.rmtree(folder, ignore_errors=True)
    with zipfile.ZipFile(wheel) as archive:
        members = [name for name in archive.namelist() if NEEDED.fullmatch(name)]
        archive.extractall(folder, members)
    (folder / UNPACKED_MARK).write_text(f"{wheel.name}\n")
    return folder / "torch"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("versions", nargs="*", metavar="VERSION", help="torch releases")
    parser.add_argument("--into", type=Path, required=True, help="where the torches go")
    parser.add_argument(
        "--wheels", type=Path, help="where the wheels go and stay (default: INTO/wheels, emptied)"
    )
    args = parser.parse_args(argv)
    into = args.into.resolve()
    wheels = (args.wheels or into / "wheels").resolve()
    wheels.mkdir(parents=True, exist_ok=True)
    keep_wheels = args.wheels is not None
    versions = args.versions or wheel_matrix.binding_torches(wheel_matrix.load_builds())
    for version in versions:
        if not re.fullmatch(r"\d+\.\d+\.\d+", version):
            parser.error(f"torch version {version!r}; expected X.Y.Z like 2.14.0")
        if not (into / version / UNPACKED_MARK).exists():
            wheel = fetch_wheel(version, wheels)
            unpack(wheel, into / version)
            if not keep_wheels:
                wheel.unlink()
        print(f"binding_torches.py: torch {version} in {into / version}", file=sys.stderr)
    print(into)
    return 0


if __name__ == "__main__":
    sys.exit(main())
