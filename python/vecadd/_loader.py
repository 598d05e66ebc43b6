"""Loads vecadd's compiled operators after checking that the installed torch can load them."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType

import torch

from . import _build_config
from ._torch_series import torch_series

# Experts who know their torch is ABI-compatible can skip the version check.
SKIP_CHECK_VARIABLE = "VECADD_SKIP_TORCH_CHECK"
# The stable build's library, installed beside libvecadd.so.
STABLE_LIBRARY = Path(__file__).resolve().parent / "lib" / "libvecadd_stable_ops.so"

REBUILD_HINT = (
    "Install a torch this build of vecadd loads under, or rebuild vecadd against the installed "
    "torch from its source directory:\n"
    "    pip install --no-build-isolation --force-reinstall --no-deps .\n"
    f"(set {SKIP_CHECK_VARIABLE}=1 to skip this check and try loading anyway)"
)


def _version_tuple(version: str) -> tuple[int, int]:
    major, minor = torch_series(version).split(".")
    return int(major), int(minor)


def incompatibility(
    abi: str,
    requirement: str,
    built_torch: str,
    built_cuda: str | None,
    running_torch: str,
    running_cuda: str | None,
) -> str | None:
    """Why a build cannot load under the running torch, or None if it can."""
    if abi == "stable":
        minimum = requirement.removeprefix("torch>=")
        if _version_tuple(running_torch) < _version_tuple(minimum):
            return (
                f"vecadd {_build_config.VERSION} (stable-ABI build) needs torch>={minimum}, but "
                f"torch {running_torch} is installed."
            )
    elif torch_series(built_torch) != torch_series(running_torch):
        return (
            f"vecadd {_build_config.VERSION} was built against torch {built_torch}, but torch "
            f"{running_torch} is installed; a native build of vecadd only loads under the torch "
            f"series it was built with (here {requirement}); a stable-ABI build of vecadd is not "
            "tied to one series."
        )
    if built_cuda is not None and running_cuda is None:
        return (
            f"vecadd {_build_config.VERSION} was built with CUDA {built_cuda} against torch "
            f"{built_torch}, but the installed torch {running_torch} is a CPU-only build."
        )
    return None


def load_operators() -> ModuleType | None:
    """Registers the compiled kernels; returns vecadd._C for the native build, else None."""
    if os.environ.get(SKIP_CHECK_VARIABLE) != "1":
        problem = incompatibility(
            _build_config.TORCH_ABI,
            _build_config.TORCH_REQUIREMENT,
            _build_config.TORCH_VERSION,
            _build_config.CUDA_VERSION,
            torch.__version__,
            torch.version.cuda,
        )
        if problem is not None:
            raise ImportError(f"{problem}\n{REBUILD_HINT}")
    try:
        if _build_config.TORCH_ABI == "stable":
            torch.ops.load_library(STABLE_LIBRARY)
            return None
        return importlib.import_module("vecadd._C")
    except (ImportError, OSError) as error:
        raise ImportError(
            f"vecadd's compiled operators failed to load under torch {torch.__version__} "
            f"(built against torch {_build_config.TORCH_VERSION}): {error}\n{REBUILD_HINT}"
        ) from error
