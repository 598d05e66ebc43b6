"""Loads vecadd._C after checking that the installed torch is one it can load under."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import torch

from . import _build_config
from ._torch_series import torch_series

# Experts who know their torch is ABI-compatible can skip the series check.
SKIP_CHECK_VARIABLE = "VECADD_SKIP_TORCH_CHECK"

REBUILD_HINT = (
    "Install the torch series vecadd was built for, or rebuild vecadd against the installed "
    "torch from its source directory:\n"
    "    pip install --no-build-isolation --force-reinstall --no-deps .\n"
    f"(set {SKIP_CHECK_VARIABLE}=1 to skip this check and try loading anyway)"
)


def incompatibility(
    built_torch: str, built_cuda: str | None, running_torch: str, running_cuda: str | None
) -> str | None:
    """Why a module built against one torch cannot load under another, or None if it can."""
    if torch_series(built_torch) != torch_series(running_torch):
        return (
            f"vecadd {_build_config.VERSION} was built against torch {built_torch}, but torch "
            f"{running_torch} is installed; a compiled PyTorch extension only loads under the "
            f"torch series it was built with (here torch=={torch_series(built_torch)}.*)."
        )
    if built_cuda is not None and running_cuda is None:
        return (
            f"vecadd {_build_config.VERSION} was built with CUDA {built_cuda} against torch "
            f"{built_torch}, but the installed torch {running_torch} is a CPU-only build."
        )
    return None


def load_extension() -> ModuleType:
    if os.environ.get(SKIP_CHECK_VARIABLE) != "1":
        problem = incompatibility(
            _build_config.TORCH_VERSION,
            _build_config.CUDA_VERSION,
            torch.__version__,
            torch.version.cuda,
        )
        if problem is not None:
            raise ImportError(f"{problem}\n{REBUILD_HINT}")
    try:
        return importlib.import_module("vecadd._C")
    except ImportError as error:
        raise ImportError(
            f"vecadd's compiled module failed to load under torch {torch.__version__} "
            f"(it was built against torch {_build_config.TORCH_VERSION}): {error}\n{REBUILD_HINT}"
        ) from error
