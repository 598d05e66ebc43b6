"""List the CUDA architectures embedded in a shared library's fatbinary.

Reads the ``.nv_fatbin`` section of an ELF file and prints one name per line: ``sm_XX``
for each SASS (cubin) image and ``compute_XX`` for each PTX image, with an ``a``/``f``
suffix for arch- or family-specific code, the way ``cuobjdump --list-elf/--list-ptx``
names them. Needs nothing but Python, so builds can run it where cuobjdump is absent.

Usage: python fatbin_archs.py LIBRARY [--output FILE]
"""

from __future__ import annotations

import argparse
import struct
import sys
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


def fatbin_architectures(section: bytes) -> list[str]:
    """Architecture names of every image in a fatbin section, sorted, without repeats."""
    found: set[tuple[int, int, str]] = set()
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
                found.add((0, arch, f"sm_{arch}{suffix}"))
            elif kind == KIND_PTX:
                found.add((1, arch, f"compute_{arch}{suffix}"))
            entry += entry_header_size + payload_size
        position = (end + 7) // 8 * 8
    return [name for _, _, name in sorted(found)]


def library_architectures(path: Path) -> list[str]:
    section = elf_section(path.read_bytes(), ".nv_fatbin")
    return [] if section is None else fatbin_architectures(section)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library", type=Path)
    parser.add_argument("--output", type=Path, help="write the list here instead of stdout")
    args = parser.parse_args(argv)
    text = "".join(f"{name}\n" for name in library_architectures(args.library))
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
