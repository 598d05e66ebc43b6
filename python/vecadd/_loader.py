"""Loads vecadd's compiled operators after checking that the installed torch can load them.

The CPU kernels always load. The CUDA kernels come as one library per CUDA major (lib/cudaN,
each described by its cuda_library.json): the one matching the installed torch's CUDA major is
loaded, none under a CPU-only torch. VECADD_CUDA_LIBRARY=N (or none) overrides that choice.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import torch

from . import _build_config
from ._torch_series import torch_series

# Experts who know their torch is ABI-compatible can skip the version check.
SKIP_CHECK_VARIABLE = "VECADD_SKIP_TORCH_CHECK"
# The CUDA major whose library to load instead of torch's ("none": no CUDA library).
CUDA_LIBRARY_VARIABLE = "VECADD_CUDA_LIBRARY"
LIBRARY_DIR = Path(__file__).resolve().parent / "lib"
# The stable build's libraries: the CPU kernels beside libvecadd.so, the CUDA ones in lib/cudaN.
STABLE_LIBRARY = LIBRARY_DIR / "libvecadd_stable_ops.so"
STABLE_CUDA_LIBRARY_NAME = "libvecadd_stable_ops_cuda.so"

REBUILD_HINT = (
    "Install a torch this build of vecadd loads under, or rebuild vecadd against the installed "
    "torch from its source directory:\n"
    "    pip install --no-build-isolation --force-reinstall --no-deps .\n"
    f"(set {SKIP_CHECK_VARIABLE}=1 to skip this check and try loading anyway)"
)


@dataclass(frozen=True)
class CudaLibrary:
    """One CUDA library of this copy of vecadd, as its cuda_library.json and the build's
    reading of its fatbinary (cuda_archs.txt) describe it."""

    folder: Path
    cuda_version: str
    architectures: str  # the CMake list it was compiled for
    archs: tuple[str, ...]  # the images its fatbinary holds (sm_XX, compute_XX)

    @property
    def major(self) -> int:
        return int(self.cuda_version.split(".")[0])

    def describe(self) -> dict[str, object]:
        # Its architectures are build_info()'s cuda_archs once loaded: said once, not per library.
        return {"cuda_version": self.cuda_version, "folder": str(self.folder)}


def cuda_libraries(library_dir: Path = LIBRARY_DIR) -> list[CudaLibrary]:
    """The CUDA libraries installed under library_dir (cudaN/), by CUDA major."""
    found = []
    for description in library_dir.glob("cuda*/cuda_library.json"):
        if not re.fullmatch(r"cuda\d+", description.parent.name):
            continue
        data = json.loads(description.read_text())
        archs_file = description.parent / "cuda_archs.txt"
        archs = tuple(archs_file.read_text().split()) if archs_file.exists() else ()
        found.append(
            CudaLibrary(description.parent, data["cuda_version"], data["cuda_architectures"], archs)
        )
    return sorted(found, key=lambda library: library.major)


def held_text(libraries: list[CudaLibrary]) -> str:
    """'CUDA 12.4 and 13.0' (or 'none'): what this copy of vecadd holds, in words."""
    versions = [library.cuda_version for library in libraries]
    if not versions:
        return "no CUDA library"
    listed = ", ".join(versions[:-1]) + (" and " if len(versions) > 1 else "") + versions[-1]
    return f"CUDA libraries for CUDA {listed}"


def choose_cuda_library(
    libraries: list[CudaLibrary], torch_cuda: str | None, override: str | None = None
) -> tuple[CudaLibrary | None, str | None]:
    """The CUDA library to load for a torch built with CUDA `torch_cuda` (None: a CPU-only
    torch), and when there is none, why, in words."""
    by_major = {library.major: library for library in libraries}
    if override:
        if override == "none":
            return None, f"{CUDA_LIBRARY_VARIABLE}=none"
        if not override.isdigit() or int(override) not in by_major:
            majors = ", ".join(str(m) for m in by_major) or "none"
            return None, (
                f"{CUDA_LIBRARY_VARIABLE}={override!r} names no CUDA library of this vecadd; "
                f"expected one of its CUDA majors ({majors}) or 'none'"
            )
        return by_major[int(override)], None
    if torch_cuda is None:
        return None, "the installed torch is a CPU-only build"
    major = int(torch_cuda.split(".")[0])
    if major in by_major:
        return by_major[major], None
    return None, (
        f"the installed torch is a CUDA {torch_cuda} build and this vecadd holds "
        f"{held_text(libraries)}, none for CUDA {major}"
    )


@dataclass
class CudaState:
    """Which CUDA library this process loaded, and otherwise why none."""

    libraries: list[CudaLibrary]
    loaded: CudaLibrary | None = None
    why_not: str | None = None


cuda_state = CudaState(cuda_libraries())


def mapped_cuda_runtimes(maps: Path = Path("/proc/self/maps")) -> list[str]:
    """The CUDA runtime libraries (libcudart.so.N) this process has mapped, by path; empty
    where the system does not say (no /proc)."""
    try:
        lines = maps.read_text().splitlines()
    except OSError:
        return []
    paths = {line.split()[-1] for line in lines if len(line.split()) >= 6}
    return sorted(p for p in paths if re.search(r"/libcudart\.so\.\d+", p))


def _version_tuple(version: str) -> tuple[int, int]:
    major, minor = torch_series(version).split(".")
    return int(major), int(minor)


def incompatibility(
    abi: str,
    requirement: str,
    built_torch: str,
    running_torch: str,
    built_cuda: str | None = None,
    running_cuda: str | None = None,
) -> str | None:
    """Why a build cannot load under the running torch, or None if it can. A native build
    links the CUDA library of `built_cuda` into vecadd._C; the stable build loads its CUDA
    library, if any, apart from the CPU kernels."""
    if abi == "stable":
        minimum = requirement.removeprefix("torch>=")
        if _version_tuple(running_torch) < _version_tuple(minimum):
            return (
                f"vecadd {_build_config.VERSION} (stable-ABI build) needs torch>={minimum}, but "
                f"torch {running_torch} is installed."
            )
        return None
    if torch_series(built_torch) != torch_series(running_torch):
        return (
            f"vecadd {_build_config.VERSION} was built against torch {built_torch}, but torch "
            f"{running_torch} is installed; a native build of vecadd only loads under the torch "
            f"series it was built with (here {requirement}); a stable-ABI build of vecadd is not "
            "tied to one series."
        )
    if built_cuda is not None and running_cuda is None:
        return (
            f"vecadd {_build_config.VERSION} (native build) was built with CUDA {built_cuda} "
            f"against torch {built_torch}, but the installed torch {running_torch} is a CPU-only "
            "build; a stable-ABI build of vecadd runs its CPU kernels under any torch."
        )
    return None


def _load_stable_cuda_library() -> None:
    chosen, why_not = choose_cuda_library(
        cuda_state.libraries, torch.version.cuda, os.environ.get(CUDA_LIBRARY_VARIABLE)
    )
    if chosen is None:
        cuda_state.why_not = why_not
        return
    try:
        torch.ops.load_library(chosen.folder / STABLE_CUDA_LIBRARY_NAME)
    except OSError as error:
        cuda_state.why_not = f"loading the CUDA {chosen.cuda_version} library failed: {error}"
        warnings.warn(
            f"vecadd: {cuda_state.why_not}; vecadd runs on the CPU only (torch "
            f"{torch.__version__}, CUDA {torch.version.cuda})",
            RuntimeWarning,
            stacklevel=4,
        )
        return
    cuda_state.loaded = chosen


def load_operators() -> ModuleType | None:
    """Registers the compiled kernels; returns vecadd._C for the native build, else None."""
    libraries = cuda_state.libraries
    if os.environ.get(SKIP_CHECK_VARIABLE) != "1":
        problem = incompatibility(
            _build_config.TORCH_ABI,
            _build_config.TORCH_REQUIREMENT,
            _build_config.TORCH_VERSION,
            torch.__version__,
            libraries[0].cuda_version if libraries else None,
            torch.version.cuda,
        )
        if problem is not None:
            raise ImportError(f"{problem}\n{REBUILD_HINT}")
    try:
        if _build_config.TORCH_ABI == "stable":
            torch.ops.load_library(STABLE_LIBRARY)
            _load_stable_cuda_library()
            return None
        module = importlib.import_module("vecadd._C")
    except (ImportError, OSError) as error:
        raise ImportError(
            f"vecadd's compiled operators failed to load under torch {torch.__version__} "
            f"(built against torch {_build_config.TORCH_VERSION}): {error}\n{REBUILD_HINT}"
        ) from error
    # The native module links its one CUDA library, if any.
    cuda_state.loaded = libraries[0] if libraries else None
    cuda_state.why_not = None if libraries else "this vecadd was built without CUDA"
    return module
