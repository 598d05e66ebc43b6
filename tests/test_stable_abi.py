"""The stable build's operator libraries (the CPU one and each CUDA one) reach torch only
through the LibTorch stable ABI: no torch C++ symbol, and no C shim newer than the stable
minimum (torch 2.10), so that one build loads under every torch from 2.10 on."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import vecadd
from vecadd import _loader

# The C shims torch 2.10's libraries export (how the list was made: its first lines).
SHIMS_2_10 = Path(__file__).parent / "data" / "torch-2.10-shim-symbols.txt"
TORCH_CXX_NAMESPACES = ("c10::", "at::", "torch::", "caffe2::")

pytestmark = [
    pytest.mark.skipif(
        vecadd.build_info()["build"] != "portable", reason="needs the portable build of vecadd"
    ),
    pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils' nm"),
]


def operator_libraries() -> list[Path]:
    """The CPU operators and those of every CUDA library this copy holds."""
    cuda = [lib.folder / _loader.STABLE_CUDA_LIBRARY_NAME for lib in _loader.cuda_state.libraries]
    return [_loader.STABLE_LIBRARY, *cuda]


LIBRARIES = pytest.mark.parametrize(
    "library", operator_libraries(), ids=lambda path: path.parent.name + "/" + path.name
)


def undefined_symbols(library: Path, *, demangle: bool) -> list[str]:
    flags = ["-D", "--undefined-only"] + (["-C"] if demangle else [])
    listed = subprocess.run(
        ["nm", *flags, str(library)], capture_output=True, text=True, check=True
    ).stdout
    return [line.split(maxsplit=1)[1].strip() for line in listed.splitlines() if line.strip()]


@LIBRARIES
def test_library_imports_no_torch_cxx_symbol(library):
    assert library.is_file()
    torch_cxx = [
        s for s in undefined_symbols(library, demangle=True) if s.startswith(TORCH_CXX_NAMESPACES)
    ]
    assert torch_cxx == []
    mangled = [s for s in undefined_symbols(library, demangle=False) if s.startswith("_Z")]
    assert not [s for s in mangled if any(n in s for n in ("3c10", "2at", "5torch", "6caffe2"))]


@LIBRARIES
def test_library_uses_only_shims_torch_2_10_exports(library):
    exported = {
        line.strip()
        for line in SHIMS_2_10.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    shims = {
        s
        for s in undefined_symbols(library, demangle=False)
        if s.startswith(("aoti_torch_", "torch_"))
    }
    assert shims, "the library must call torch through its C shims"
    assert sorted(shims - exported) == []


@LIBRARIES
def test_library_is_not_a_python_extension(library):
    # One wheel for every CPython: nothing in the stable build calls the Python C API.
    python_calls = [
        s for s in undefined_symbols(library, demangle=False) if s.startswith(("Py", "_Py"))
    ]
    assert python_calls == []
