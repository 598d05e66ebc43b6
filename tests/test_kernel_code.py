"""The installed CUDA kernels as compiled, read from their PTX (no GPU needed): the vector kernels
move each input and z as whole 16-byte packs, one load or store per pack. Read element by
element, a pack of a 16-bit type costs eight loads, and torch.add's bandwidth is out of reach."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import vecadd
from helpers import ROOT

VECTOR_LOAD = re.compile(r"\bld\.global(?:\.nc)?(?:\.L[12]::\S+)?\.v[24]\.")
VECTOR_STORE = re.compile(r"\bst\.global(?:\.cs)?\.v[24]\.")
# sum_contiguous_kernel<T, kWidth, kThreads, kPacks, Index, kCaching, kCapacity, First, Rest,
# Constant>: the inputs' element types and the constant term follow the capacity.
CONTIGUOUS = re.compile(
    r"sum_contiguous_kernel<[^,]+, (\d+), \d+, (\d+), \w+, [^,]+, (\d+)(?:, [^(]*)?>\("
)
# sum_rows_kernel<T, kWidth, Indexer, kCapacity>
ROWS = re.compile(r"sum_rows_kernel<[^,]+, (\d+), [^,]+, (\d+)>\(")


def fatbin_tools():
    spec = importlib.util.spec_from_file_location(
        "fatbin_archs", ROOT / "cmake" / "fatbin_archs.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kernel_bodies(library: Path, cuobjdump: str) -> dict[str, str]:
    """Each kernel's PTX by its demangled name, from the library's first PTX image."""
    ptx = subprocess.run([cuobjdump, "-ptx", str(library)], capture_output=True, text=True)
    assert ptx.returncode == 0, ptx.stderr
    images = ptx.stdout.split("Fatbin ptx code:")
    text = images[1] if len(images) > 1 else ""
    entries = list(re.finditer(r"(?:\.visible )?\.entry (\S+)\(", text))
    mangled = "\n".join(entry.group(1) for entry in entries)
    names = subprocess.run(["c++filt"], input=mangled, capture_output=True, text=True).stdout
    bodies = {}
    for index, (entry, name) in enumerate(zip(entries, names.splitlines(), strict=True)):
        end = entries[index + 1].start() if index + 1 < len(entries) else len(text)
        bodies[name] = text[entry.start() : end]
    return bodies


def installed_cuda_libraries() -> list[Path]:
    folders = [Path(f["folder"]) for f in vecadd.build_info().get("cuda_libraries", [])]
    return [folder / "libvecadd_cuda.so" for folder in folders]


@pytest.mark.parametrize("library", installed_cuda_libraries() or [None], ids=str)
def test_vector_kernels_move_whole_packs(library):
    if library is None:
        pytest.skip("this vecadd has no CUDA library")
    cuobjdump = fatbin_tools().find_cuobjdump()
    if cuobjdump is None or shutil.which("c++filt") is None:
        pytest.skip("needs cuobjdump (pip install nvidia-cuda-cuobjdump) and c++filt")
    bodies = kernel_bodies(library, cuobjdump)
    if not bodies:
        pytest.skip(f"{library} holds no PTX (only real architectures)")
    checked = 0
    for name, body in bodies.items():
        loads = len(VECTOR_LOAD.findall(body))
        stores = len(VECTOR_STORE.findall(body))
        if match := CONTIGUOUS.search(name):
            width, packs, capacity = map(int, match.groups())
            if width == 1:
                continue
            # Every input's packs, then z's: at least one vector access per pack.
            assert loads >= capacity * packs, f"{name}: {loads} vector loads"
            assert stores >= packs, f"{name}: {stores} vector stores"
            checked += 1
        elif match := ROWS.search(name):
            width, capacity = map(int, match.groups())
            assert loads >= capacity, f"{name}: {loads} vector loads"
            checked += 1
    assert checked > 0, "no vector kernel found in the PTX"
