"""What this copy of vecadd is, and where its C++ headers and CMake package live."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import _build_config

# Installed (generated) files sit beside _build_config, also in an editable install.
_INSTALL_DIR = Path(_build_config.__file__).resolve().parent


def build_info() -> dict[str, Any]:
    """How vecadd was built and which of its kernels this process runs: its version; the build
    (``"portable"``: the stable binding and native bindings per torch release, or ``"native"``:
    one torch series' vecadd._C), the torch it was built against and the torch versions it loads
    under; which binding runs (``torch_abi``: ``"native"``, torch's full C++ API, or
    ``"stable"``, the LibTorch stable ABI), why (``binding_why``), its Python entries
    (``binding_entries``: vecadd._C's file, or None where calls go through the dispatcher, and
    then why in ``binding_entries_why``) and the native bindings the build holds
    (``native_bindings``); the CUDA libraries it holds (one per CUDA major: toolkit and folder);
    which one is loaded (``cuda_version``, ``cuda_library``, and ``cuda_archs``, the
    architectures read from its binary; ``with_cuda`` is False when none is) and otherwise why
    not (``cuda_not_loaded``); which binding registers its kernels (``cuda_registration``:
    ``"native"`` or ``"stable"``) and why (``cuda_registration_why``); and the CUDA runtime
    libraries the process has mapped (``cuda_runtimes``: the loaded library uses torch's
    runtime of its major)."""
    # loads torch: not for path queries
    from ._loader import binding_state, cuda_state, mapped_cuda_runtimes, native_bindings

    loaded = cuda_state.loaded
    portable = _build_config.TORCH_ABI == "stable"
    return {
        "version": _build_config.VERSION,
        "build": "portable" if portable else "native",
        "torch_abi": binding_state.name,
        "torch_version": _build_config.TORCH_VERSION,
        "torch_requirement": _build_config.TORCH_REQUIREMENT,
        "binding_why": binding_state.why,
        "binding_entries": str(binding_state.entries) if binding_state.entries else None,
        "binding_entries_why": binding_state.entries_why,
        "native_bindings": [b.describe() for b in native_bindings()] if portable else [],
        "cuda_libraries": [library.describe() for library in cuda_state.libraries],
        "with_cuda": loaded is not None,
        "cuda_version": loaded.cuda_version if loaded else None,
        "cuda_archs": list(loaded.archs) if loaded else [],
        "cuda_library": str(loaded.folder) if loaded else None,
        "cuda_not_loaded": cuda_state.why_not,
        "cuda_registration": cuda_state.registration,
        "cuda_registration_why": cuda_state.registration_why,
        "cuda_runtimes": mapped_cuda_runtimes(),
    }


def get_include() -> str:
    """Directory holding ``vecadd/vecadd.h`` (add it to a C++ include path)."""
    return str(_INSTALL_DIR / "include")


def get_cmake_dir() -> str:
    """Directory holding ``vecaddConfig.cmake``, for ``find_package(vecadd CONFIG)``."""
    return str(_INSTALL_DIR / "lib" / "cmake" / "vecadd")
