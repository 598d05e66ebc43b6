"""List the CUDA architectures embedded in a shared library's fatbinary.

Reads the ``.nv_fatbin`` section of an ELF file and prints one name per line: ``sm_XX``
for each SASS (cubin) image and ``compute_XX`` for each PTX image, with an ``a``/``f``
suffix for arch- or family-specific code, the way ``cuobjdump --list-elf/--list-ptx``
names them. Needs nothing but Python, so builds can run it where cuobjdump is absent.

Usage:
    python cmake/fatbin_archs.py LIBRARY [--output FILE]   read the fatbinary
    python cmake/fatbin_archs.py LIBRARY --cuobjdump        the same list, from cuobjdump
    python cmake/fatbin_archs.py --expand "80-real;90"      the images a CMake list gives
    python cmake/fatbin_archs.py LIBRARY --gpu 90 121       which images run on each GPU
        ("121: sm_121 sm_120 compute_121" per line; exit 1 if a GPU has none: "no kernel image")
"""

from __future__ import annotations

import argparse
import re
import shutil
import struct
import subprocess
import sys
import sysconfig
from collections.abc import Iterable
from pathlib import Path

FATBIN_MAGIC = 0xBA55ED50
KIND_PTX = 1
KIND_ELF = 2
FLAG_ARCH_SPECIFIC = 0x100000  # "a" targets (sm_90a)
FLAG_FAMILY_SPECIFIC = 0x200000  # "f" targets (compute_100f)


def elf_section(data: bytes, wanted: str) -> bytes | None:
    """The contents of the named section of a 64-bit little-endian ELF file, or None."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    (section_table,) = struct.unpack_from("<Q", data, 0x28)
    entry_size, count, names_index = struct.unpack_from("<HHH", data, 0x3A)

    def header(index: int) -> tuple[int, int, int]:
        base = section_table + index * entry_size
        name, _type, _flags, _addr, offset, size = struct.unpack_from("<IIQQQQ", data, base)
        return name, offset, size

    _, names_offset, _ = header(names_index)
    for index in range(count):
        name, offset, size = header(index)
        end = data.index(b"\0", names_offset + name)
        if data[names_offset + name : end].decode() == wanted:
            return data[offset : offset + size]
    return None


def sort_architecture_names(names: Iterable[str]) -> list[str]:
    """SASS before PTX, each by architecture number: sm_80, sm_90a, compute_90a."""
    return sorted(set(names), key=lambda n: (n.startswith("compute"), int(re.sub(r"\D", "", n)), n))


def fatbin_architectures(section: bytes) -> list[str]:
    """Architecture names of every image in a fatbin section, sorted, without repeats."""
    found: set[str] = set()
    position = 0
    while position + 16 <= len(section):
        magic, _version, header_size, body_size = struct.unpack_from("<IHHQ", section, position)
        if magic != FATBIN_MAGIC:
            break  # padding after the last container
        entry = position + header_size
        end = entry + body_size
        while entry < end:
            kind, _, entry_header_size, payload_size = struct.unpack_from("<HHIQ", section, entry)
            (arch,) = struct.unpack_from("<I", section, entry + 28)
            (flags,) = struct.unpack_from("<Q", section, entry + 40)
            suffix = ""
            if flags & FLAG_ARCH_SPECIFIC:
                suffix = "a"
            elif flags & FLAG_FAMILY_SPECIFIC and kind == KIND_PTX:
                suffix = "f"  # cuobjdump names family cubins by their plain arch
            if kind == KIND_ELF:
                found.add(f"sm_{arch}{suffix}")
            elif kind == KIND_PTX:
                found.add(f"compute_{arch}{suffix}")
            entry += entry_header_size + payload_size
        position = (end + 7) // 8 * 8
    return sort_architecture_names(found)


def library_architectures(path: Path) -> list[str]:
    section = elf_section(path.read_bytes(), ".nv_fatbin")
    return [] if section is None else fatbin_architectures(section)


def expected_architectures(cmake_list: str) -> list[str]:
    """The images a CMAKE_CUDA_ARCHITECTURES list puts into the fatbinary, named as above:
    '80-real;90' -> sm_80, sm_90, compute_90 (family cubins carry no 'f', as in cuobjdump)."""
    names = set()
    for entry in filter(None, cmake_list.split(";")):
        match = re.fullmatch(r"(\d+)([af]?)(-real|-virtual)?", entry)
        if match is None:
            raise ValueError(f"not a CUDA architecture: {entry!r}")
        number, suffix, kind = match.group(1), match.group(2), match.group(3) or ""
        if kind in ("", "-real"):
            names.add(f"sm_{number}{suffix if suffix == 'a' else ''}")
        if kind in ("", "-virtual"):
            names.add(f"compute_{number}{suffix}")
    return sort_architecture_names(names)


def images_that_run_on(capability: int, images: Iterable[str]) -> list[str]:
    """The images of `images` a GPU of compute capability `capability` (121 for 12.1) can run, by
    NVIDIA's compatibility rules: SASS for X.y runs on X.z with z >= y, PTX for X.y is compiled
    by the driver for any later GPU; 'a' code runs on its own GPU only, 'f' code on its major."""
    runnable = []
    for name in images:
        kind, number, suffix = re.fullmatch(r"(sm|compute)_(\d+)([af]?)", name).groups()
        number = int(number)
        same_major = number // 10 == capability // 10 and number <= capability
        if suffix == "a":
            fits = number == capability
        elif kind == "sm" or suffix == "f":
            fits = same_major
        else:
            fits = number <= capability
        if fits:
            runnable.append(name)
    return runnable


def find_cuobjdump() -> str | None:
    """cuobjdump on PATH, else the one pip's nvidia-cuda-cuobjdump installs, else None."""
    found = shutil.which("cuobjdump")
    if found:
        return found
    for base in sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}):
        for candidate in sorted(Path(base).glob("nvidia/*/bin/cuobjdump")):
            return str(candidate)
    return None


def cuobjdump_architectures(tool: str, library: Path) -> list[str]:
    """The same list as library_architectures(), as cuobjdump reports it (a cross-check)."""
    names = set()
    for flag, prefix in (("--list-elf", "sm_"), ("--list-ptx", "compute_")):
        listing = subprocess.run([tool, flag, str(library)], capture_output=True, text=True)
        names.update(
            prefix + arch for arch in re.findall(r"\.sm_(\d+[af]?)\.(?:cubin|ptx)", listing.stdout)
        )
    return sort_architecture_names(names)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library", type=Path, nargs="?")
    parser.add_argument("--output", type=Path, help="write the list here instead of stdout")
    parser.add_argument(
        "--cuobjdump", action="store_true", help="list with cuobjdump (exit 3 if not found)"
    )
    parser.add_argument("--expand", metavar="LIST", help="a CMAKE_CUDA_ARCHITECTURES list")
    parser.add_argument(
        "--gpu", type=int, nargs="+", metavar="CC", help="compute capabilities to check (90 121)"
    )
    args = parser.parse_args(argv)
    if (args.library is None) == (args.expand is None):
        parser.error("give either LIBRARY or --expand LIST")
    if args.expand is not None:
        try:
            names = expected_architectures(args.expand)
        except ValueError as error:
            parser.error(f"--expand {args.expand!r}: {error}")
    elif args.cuobjdump:
        tool = find_cuobjdump()
        if tool is None:
            print("cuobjdump not found (pip install nvidia-cuda-cuobjdump)", file=sys.stderr)
            return 3
        names = cuobjdump_architectures(tool, args.library)
    else:
        names = library_architectures(args.library)
    if args.gpu:
        for capability in args.gpu:
            runnable = images_that_run_on(capability, names)
            print(f"{capability}: {' '.join(runnable) or 'no kernel image'}")
        return 0 if all(images_that_run_on(c, names) for c in args.gpu) else 1
    text = "".join(f"{name}\n" for name in names)
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
