"""Checks a built vecadd wheel: versions, tag, torch pin and the CUDA images of its libraries.

    python tools/release/check_wheel.py WHEEL --version V --torch T [--abi stable|native]
                                          [--cuda TOOLKIT[=LIST] ... | --cuda none]
                                          [--native-bindings SERIES,...]

--version: what the file name and METADATA must say (with any local label); --torch: the torch
it was built against (the pin follows the flavour); --cuda: a toolkit the wheel must hold a CUDA
library of (lib/cudaN, per its cuda_library.json), compiled for LIST or else for that toolkit's
default list (cmake/VecaddCudaArchitectures.cmake, asked of CMake); repeat it for each library,
or say none. Every library's images are read by cmake/fatbin_archs.py, cross-checked with
cuobjdump, and must be what its cuda_library.json says it was compiled for. Every native binding
it holds (lib/torchX_Y) must hold its kernels, its Python entries and a binding.json of this
version and series; --native-bindings lists the series it must hold (a portable wheel of a
release: every series the wheel claims).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import zipfile
from pathlib import Path

# cmake/ holds the build's fatbin reader and torch pin; no package (PyPI's cmake owns the name)
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "cmake"))
from cuda_architectures import default_architectures
from fatbin_archs import (
    cuobjdump_architectures,
    expected_architectures,
    find_cuobjdump,
    library_architectures,
)
from torch_pin import ABIS, build_abi, torch_requirement

CUDA_LIBRARY = re.compile(r"vecadd/lib/(cuda\d+)/libvecadd_cuda\.so")
NATIVE_BINDING = re.compile(r"vecadd/lib/torch(\d+)_(\d+)/binding\.json")
# A native binding's files (vecadd/_loader.py loads them by these names).
NATIVE_BINDING_FILES = ("libvecadd_native_ops.so", "_C.abi3.so", "binding.json")
# Its CUDA kernels' library, there exactly where binding.json says cuda_kernels.
NATIVE_CUDA_BINDING_FILE = "libvecadd_native_cuda_ops.so"


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


def parse_cuda_options(options: list[str]) -> dict[str, str | None]:
    """['12.4', '13.0=90'] -> {'12.4': None, '13.0': '90'} (None: the toolkit's default);
    ['none'] -> {}."""
    if options == ["none"]:
        return {}
    wanted: dict[str, str | None] = {}
    for option in options:
        toolkit, sep, archs = option.partition("=")
        if not re.fullmatch(r"\d+\.\d+", toolkit):
            raise ValueError(f"--cuda {option!r}; expected TOOLKIT like 13.0, TOOLKIT=LIST or none")
        wanted[toolkit] = archs if sep else None
    return wanted


def cuda_library_problems(
    archive: zipfile.ZipFile, scratch: str, wanted: dict[str, str | None], cuobjdump: str | None
) -> list[str]:
    problems = []
    held = {}
    for member in archive.namelist():
        match = CUDA_LIBRARY.fullmatch(member)
        if match is None:
            continue
        folder = f"vecadd/lib/{match.group(1)}"
        description = json.loads(archive.read(f"{folder}/cuda_library.json"))
        held[description["cuda_version"]] = (member, description["cuda_architectures"])
    if sorted(held) != sorted(wanted):
        listed = sorted(held) or "no toolkit"
        problems.append(f"holds CUDA libraries for {listed}, expected {sorted(wanted) or 'none'}")
    for toolkit, (member, compiled_for) in sorted(held.items()):
        if toolkit in wanted:
            asked = (
                wanted[toolkit] if wanted[toolkit] is not None else default_architectures(toolkit)
            )
            if compiled_for != asked:
                problems.append(f"{member} was compiled for {compiled_for!r}, expected {asked!r}")
        expected = expected_architectures(compiled_for)
        library = Path(archive.extract(member, scratch))
        found = library_architectures(library)
        if found != expected:
            problems.append(f"{member} holds {found}, expected {expected} (from {compiled_for!r})")
        if cuobjdump:
            listed = cuobjdump_architectures(cuobjdump, library)
            if listed != expected:
                problems.append(f"cuobjdump lists {listed} in {member}, expected {expected}")
    return problems


def native_binding_problems(
    archive: zipfile.ZipFile, version: str, wanted: list[str] | None
) -> list[str]:
    """Each native binding's files and description; the series of `wanted`, where given."""
    problems = []
    names = set(archive.namelist())
    held = []
    for member in sorted(names):
        match = NATIVE_BINDING.fullmatch(member)
        if match is None:
            continue
        series = ".".join(match.groups())
        held.append(series)
        folder = f"vecadd/lib/torch{match[1]}_{match[2]}"
        missing = [f for f in NATIVE_BINDING_FILES if f"{folder}/{f}" not in names]
        if missing:
            problems.append(f"the native binding {folder} lacks {', '.join(missing)}")
        described = json.loads(archive.read(member))
        claims = bool(described.get("cuda_kernels"))
        if claims != (f"{folder}/{NATIVE_CUDA_BINDING_FILE}" in names):
            problems.append(
                f"{member} says cuda_kernels {claims}, but the folder "
                f"{'lacks' if claims else 'holds'} {NATIVE_CUDA_BINDING_FILE}"
            )
        if described.get("torch_series") != series:
            problems.append(f"{member} says series {described.get('torch_series')}, not {series}")
        if described.get("vecadd_version") != version.partition("+")[0]:
            problems.append(
                f"{member} is of vecadd {described.get('vecadd_version')}, expected "
                f"{version.partition('+')[0]}"
            )
    if wanted is not None and held != wanted:
        problems.append(
            f"holds native bindings for torch {', '.join(held) or 'none'}, expected "
            f"{', '.join(wanted) or 'none'}"
        )
    return problems


def wheel_problems(
    wheel: Path,
    version: str,
    torch: str,
    wanted_cuda: dict[str, str | None],
    cuobjdump: str | None = None,
    abi: str = "native",
    native_bindings: list[str] | None = None,
) -> list[str]:
    """Problems with a built wheel: its file name and METADATA versions, its tag and torch
    requirement for its flavour (`abi`), its core library, its native bindings (the series of
    `native_bindings`, where given) and its CUDA libraries."""
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
    with tempfile.TemporaryDirectory() as scratch, zipfile.ZipFile(wheel) as archive:
        if "vecadd/lib/libvecadd.so" not in archive.namelist():
            problems.append("holds no vecadd/lib/libvecadd.so (the CPU kernels)")
        problems += native_binding_problems(archive, version, native_bindings)
        problems += cuda_library_problems(archive, scratch, wanted_cuda, cuobjdump)
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check a built vecadd wheel.")
    parser.add_argument("wheel", type=Path)
    parser.add_argument("--version", required=True, help="expected version, label included")
    parser.add_argument("--torch", required=True, help="the torch it was built against")
    parser.add_argument("--abi", choices=ABIS, help="its flavour (default: $VECADD_TORCH_ABI)")
    parser.add_argument(
        "--cuda",
        action="append",
        required=True,
        metavar="TOOLKIT[=LIST]",
        help="a toolkit it holds a CUDA library of (repeat; 'none' for none)",
    )
    parser.add_argument(
        "--native-bindings",
        metavar="SERIES,...",
        help="the torch series it holds native bindings for, comma-separated ('none': none)",
    )
    args = parser.parse_args(argv)
    bindings = None
    if args.native_bindings is not None:
        bindings = [] if args.native_bindings == "none" else args.native_bindings.split(",")

    try:
        wanted = parse_cuda_options(args.cuda)
        abi = args.abi or build_abi()
    except ValueError as error:
        parser.error(str(error))
    cuobjdump = find_cuobjdump() if wanted else None
    if wanted and cuobjdump is None:
        print(
            "check_wheel.py: cuobjdump not found (pip install nvidia-cuda-cuobjdump)",
            file=sys.stderr,
        )
        return 1
    problems = wheel_problems(
        args.wheel, args.version, args.torch, wanted, cuobjdump, abi, bindings
    )
    for problem in problems:
        print(f"{args.wheel.name}: {problem}", file=sys.stderr)
    if problems:
        return 1
    libraries = ", ".join(f"CUDA {t}" for t in sorted(wanted)) or "no CUDA library"
    held = f", native bindings for torch {', '.join(bindings) or 'none'}" if bindings else ""
    print(
        f"{args.wheel.name}: ok ({abi} build, version {args.version}, "
        f"{torch_requirement(args.torch, abi)}{held}, {libraries})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
