"""What this copy of vecadd is, and where its C++ headers and CMake package live."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import _build_config

# Installed (generated) files sit beside _build_config, also in an editable install.
_INSTALL_DIR = Path(_build_config.__file__).resolve().parent


def build_info() -> dict[str, Any]:
    """How vecadd was built and which of its kernels this process runs: its version, which
    torch API its operators use (``"stable"``: the LibTorch stable ABI, or ``"native"``), the
    torch it was built against and the torch versions it loads under; the CUDA libraries it
    holds (one per CUDA major: toolkit and folder); which one is loaded (``cuda_version``,
    ``cuda_library``, and ``cuda_archs``, the architectures read from its binary; ``with_cuda``
    is False when none is) and otherwise why not (``cuda_not_loaded``); and
    the CUDA runtime libraries the process has mapped (``cuda_runtimes``: the loaded library
    uses torch's runtime of its major)."""
    from ._loader import cuda_state, mapped_cuda_runtimes  # loads torch: not for path queries

    loaded = cuda_state.loaded
    return {
        "version": _build_config.VERSION,
        "torch_abi": _build_config.TORCH_ABI,
        "torch_version": _build_config.TORCH_VERSION,
        "torch_requirement": _build_config.TORCH_REQUIREMENT,
        "cuda_libraries": [library.describe() for library in cuda_state.libraries],
        "with_cuda": loaded is not None,
        "cuda_version": loaded.cuda_version if loaded else None,
        "cuda_archs": list(loaded.archs) if loaded else [],
        "cuda_library": str(loaded.folder) if loaded else None,
        "cuda_not_loaded": cuda_state.why_not,
        "cuda_runtimes": mapped_cuda_runtimes(),
    }


def get_include() -> str:
    """Directory holding ``vecadd/vecadd.h`` (add it to a C++ include path)."""
    return str(_INSTALL_DIR / "include")


def get_cmake_dir() -> str:
    """Directory holding ``vecaddConfig.cmake``, for ``find_package(vecadd CONFIG)``."""
    return str(_INSTALL_DIR / "lib" / "cmake" / "vecadd")
