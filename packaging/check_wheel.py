"""Checks a built vecadd wheel: versions, torch pin and the CUDA images in its kernel library.

    python packaging/check_wheel.py WHEEL --version V --torch T [--cuda X.Y | --archs LIST]

--version: what the file name and METADATA must say (with any local label); --torch: the torch
it was built against (its series must be pinned); --cuda: the toolkit it was built with, whose
default list (cmake/VecaddCudaArchitectures.cmake, asked of CMake) the library must hold;
--archs: the CMAKE_CUDA_ARCHITECTURES list it was built for instead ("" = no CUDA images).
The images are read by packaging/fatbin_archs.py and cross-checked with cuobjdump.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import zipfile
from pathlib import Path

# packaging/, beside this file
from cuda_architectures import default_architectures
from fatbin_archs import (
    cuobjdump_architectures,
    expected_architectures,
    find_cuobjdump,
    library_architectures,
)
from torch_pin import ABIS, build_abi, torch_requirement


def parse_wheel_name(name: str) -> dict[str, str]:
    parts = name[: -len(".whl")].split("-")
    if not name.endswith(".whl") or len(parts) not in (5, 6):
        raise ValueError(f"wheel file name {name!r} is not NAME-VERSION-PY-ABI-PLATFORM.whl")
    return {
        "name": parts[0],
        "version": parts[1],
        "python": parts[-3],
        "abi": parts[-2],
        "platform": parts[-1],
    }


def wheel_metadata(wheel: Path) -> dict[str, list[str]]:
    with zipfile.ZipFile(wheel) as archive:
        member = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        text = archive.read(member).decode()
    fields: dict[str, list[str]] = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            fields.setdefault(key, []).append(value)
    return fields


def wheel_problems(
    wheel: Path,
    version: str,
    torch: str,
    archs: str | None,
    cuobjdump: str | None = None,
    abi: str = "native",
) -> list[str]:
    """Problems with a built wheel: its file name and METADATA versions, its tag and torch
    requirement for its flavour (`abi`) and, when archs is given, the CUDA images in vecadd's
    kernel library ("" = none expected)."""
    problems = []
    named = parse_wheel_name(wheel.name)
    # The stable build holds no extension module: one wheel for every CPython.
    python_agnostic = (named["python"], named["abi"]) == ("py3", "none")
    if python_agnostic != (abi == "stable"):
        problems.append(
            f"tag {named['python']}-{named['abi']} for a {abi} build; expected "
            + ("py3-none" if abi == "stable" else "a CPython tag such as cp311-cp311")
        )
    metadata = wheel_metadata(wheel)
    if named["version"] != version:
        problems.append(f"file name has version {named['version']}, expected {version}")
    if metadata.get("Version") != [version]:
        problems.append(f"METADATA has Version {metadata.get('Version')}, expected {version}")
    pin = torch_requirement(torch, abi)
    if pin not in metadata.get("Requires-Dist", []):
        problems.append(f"Requires-Dist {metadata.get('Requires-Dist')} lacks {pin}")
    if archs is None:
        return problems
    expected = expected_architectures(archs)
    with tempfile.TemporaryDirectory() as scratch, zipfile.ZipFile(wheel) as archive:
        members = [n for n in archive.namelist() if re.fullmatch(r"vecadd/lib\w*/libvecadd\.so", n)]
        if len(members) != 1:
            return [
                *problems,
                f"expected one vecadd/lib*/libvecadd.so in the wheel, found {members}",
            ]
        library = Path(archive.extract(members[0], scratch))
        found = library_architectures(library)
        if found != expected:
            problems.append(f"{members[0]} holds {found}, expected {expected} (from {archs!r})")
        if cuobjdump and expected:
            listed = cuobjdump_architectures(cuobjdump, library)
            if listed != expected:
                problems.append(f"cuobjdump lists {listed} in {members[0]}, expected {expected}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check a built vecadd wheel.")
    parser.add_argument("wheel", type=Path)
    parser.add_argument("--version", required=True, help="expected version, label included")
    parser.add_argument("--torch", required=True, help="the torch it was built against")
    parser.add_argument("--abi", choices=ABIS, help="its flavour (default: $VECADD_TORCH_ABI)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--cuda", help="the CUDA toolkit it was built with (its default list)")
    which.add_argument(
        "--archs", help='the CMAKE_CUDA_ARCHITECTURES list it was built for ("": none)'
    )
    args = parser.parse_args(argv)

    archs = args.archs
    if args.cuda is not None:
        try:
            archs = default_architectures(args.cuda)
        except ValueError as error:
            parser.error(f"--cuda {args.cuda!r}: {error}")
    cuobjdump = find_cuobjdump() if archs else None
    if archs and cuobjdump is None:
        print(
            "check_wheel.py: cuobjdump not found (pip install nvidia-cuda-cuobjdump)",
            file=sys.stderr,
        )
        return 1
    try:
        abi = args.abi or build_abi()
        problems = wheel_problems(args.wheel, args.version, args.torch, archs, cuobjdump, abi)
    except ValueError as error:
        parser.error(str(error))
    for problem in problems:
        print(f"{args.wheel.name}: {problem}", file=sys.stderr)
    if problems:
        return 1
    images = f"; CUDA images {' '.join(expected_architectures(archs))}" if archs else ""
    print(
        f"{args.wheel.name}: ok ({abi} build, version {args.version}, "
        f"{torch_requirement(args.torch, abi)}{images})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
