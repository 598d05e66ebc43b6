"""What this copy of vecadd is, and where its C++ headers and CMake package live."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import _build_config

# Installed (generated) files sit beside _build_config, also in an editable install.
_INSTALL_DIR = Path(_build_config.__file__).resolve().parent


def build_info() -> dict[str, Any]:
    """How vecadd was built: its version, which torch API its operators use (``"stable"``: the
    LibTorch stable ABI, or ``"native"``), the torch it was built against and the torch
    versions it loads under, the CUDA it was built with and the CUDA architectures really
    embedded in the kernels (read from the built binary)."""
    archs_file = _INSTALL_DIR / "cuda_archs.txt"
    archs = archs_file.read_text().split() if archs_file.exists() else []
    return {
        "version": _build_config.VERSION,
        "torch_abi": _build_config.TORCH_ABI,
        "torch_version": _build_config.TORCH_VERSION,
        "torch_requirement": _build_config.TORCH_REQUIREMENT,
        "cuda_version": _build_config.CUDA_VERSION,
        "cuda_archs": archs,
        "with_cuda": _build_config.WITH_CUDA,
    }


def get_include() -> str:
    """Directory holding ``vecadd/vecadd.h`` (add it to a C++ include path)."""
    return str(_INSTALL_DIR / "include")


def get_cmake_dir() -> str:
    """Directory holding ``vecaddConfig.cmake``, for ``find_package(vecadd CONFIG)``."""
    return str(_INSTALL_DIR / "lib" / "cmake" / "vecadd")
