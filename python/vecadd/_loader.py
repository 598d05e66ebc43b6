"""Loads vecadd's compiled operators after checking that the installed torch can load them.

The portable build holds two bindings of the same kernels: the stable one (the LibTorch stable
ABI, for every torch from 2.10 on) and a native binding per torch release it was built for
(lib/torchX_Y, each described by its binding.json: torch's full C++ API, C++ autograd, C++
Python entries). At import, once, vecadd loads the native binding of the running torch's series
where there is one that fits, else the stable one, and keeps why (vecadd info shows it);
VECADD_BINDING=stable forces the stable one. A native binding that fails to load leaves the
stable one in its place with a warning: nothing is registered twice. The CUDA kernels come as
one library per CUDA major (lib/cudaN, each described by its cuda_library.json), whichever
binding runs: the one matching the installed torch's CUDA major is loaded, none under a
CPU-only torch. VECADD_CUDA_LIBRARY=N (or none) overrides that choice. Over it, the native
binding's own library registers the CUDA kernels where it has one (compiled against a CUDA
torch); otherwise, or where that fails to load, the CUDA library's stable-ABI registration does.
"""

from __future__ import annotations

import base64
import ctypes
import hashlib
import importlib
import importlib.machinery
import importlib.util
import json
import os
import re
import struct
import sys
import sysconfig
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
# The CUDA kernels themselves (torch-free), in the same folder: a native binding's CUDA
# registration names it without a path, so it must be loaded first from torch's CUDA major.
CUDA_KERNELS_LIBRARY_NAME = "libvecadd_cuda.so"
# The one switch of the binding choice: "stable" forces the stable binding (for packagers and
# bug reports); unset (or empty), the native binding of the running torch's series, if any.
BINDING_VARIABLE = "VECADD_BINDING"
# A native binding's files in its folder lib/torchX_Y: the kernels (a library torch loads) and
# their Python entries (CPython's limited API), loaded as vecadd._C.
NATIVE_LIBRARY_NAME = "libvecadd_native_ops.so"
NATIVE_CUDA_LIBRARY_NAME = "libvecadd_native_cuda_ops.so"  # where binding.json says cuda_kernels
NATIVE_ENTRIES_NAME = "_C.abi3.so"
ENTRIES_MODULE = "vecadd._C"

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


@dataclass(frozen=True)
class NativeBinding:
    """One native binding of this copy of vecadd, as its folder (lib/torchX_Y) and its
    binding.json describe it; `problem` says why it cannot be used, if its description cannot
    be read."""

    folder: Path
    series: str  # the torch series it serves ("2.14"), its folder's name
    torch_version: str = ""  # the torch release it was compiled against
    cxx11_abi: bool = True  # compiled with libstdc++'s C++11 ABI
    python_entries: bool = False  # holds vecadd._C (not built by a free-threaded CPython)
    cuda_kernels: bool = False  # registers the CUDA kernels itself (built against a CUDA torch)
    problem: str | None = None

    def describe(self) -> dict[str, object]:
        return {
            "torch_series": self.series,
            "torch_version": self.torch_version,
            "folder": str(self.folder),
            "python_entries": self.python_entries,
            "cuda_kernels": self.cuda_kernels,
        }


def read_binding(folder: Path) -> NativeBinding:
    """The binding in `folder` (lib/torchX_Y), from its binding.json."""
    series = folder.name.removeprefix("torch").replace("_", ".")
    description = folder / "binding.json"
    try:
        data = json.loads(description.read_text())
        return NativeBinding(
            folder,
            series,
            str(data["torch_version"]),
            bool(data["cxx11_abi"]),
            bool(data["python_entries"]),
            bool(data.get("cuda_kernels", False)),
        )
    except (OSError, ValueError, KeyError, TypeError) as error:
        problem = f"{description} cannot be read ({type(error).__name__}: {error})"
        return NativeBinding(folder, series, problem=problem)


def native_bindings(library_dir: Path = LIBRARY_DIR) -> list[NativeBinding]:
    """The native bindings installed under library_dir (torchX_Y/), oldest series first."""
    folders = [p for p in library_dir.glob("torch*") if re.fullmatch(r"torch\d+_\d+", p.name)]
    bindings = [read_binding(folder) for folder in folders]
    return sorted(bindings, key=lambda b: tuple(map(int, b.series.split("."))))


def series_text(bindings: list[NativeBinding]) -> str:
    """'2.10, 2.11 and 2.12' (or 'none'): the series this copy of vecadd has bindings for."""
    series = [binding.series for binding in bindings]
    if not series:
        return "none"
    return ", ".join(series[:-1]) + (" and " if len(series) > 1 else "") + series[-1]


@dataclass(frozen=True)
class BindingChoice:
    """The native binding to load (None: the stable one), why, in words, and whether the why
    is a fault worth a warning (a binding that should have fitted and does not)."""

    native: NativeBinding | None
    why: str
    fault: bool = False


def choose_binding(
    bindings: list[NativeBinding],
    torch_version: str,
    torch_cxx11_abi: bool,
    override: str | None = None,
) -> BindingChoice:
    """The binding for torch `torch_version`. `override` is VECADD_BINDING's value; a value it
    does not know raises ValueError."""
    if override == "stable":
        return BindingChoice(None, f"{BINDING_VARIABLE}=stable asks for the stable binding")
    if override:
        raise ValueError(
            f"{BINDING_VARIABLE}={override!r}; expected 'stable' (the stable binding) or unset "
            "(the native binding of the running torch's series, where vecadd has one)"
        )
    series = torch_series(torch_version)
    by_series = {binding.series: binding for binding in bindings}
    if series not in by_series:
        return BindingChoice(
            None,
            f"this vecadd holds native bindings for torch {series_text(bindings)}, none for "
            f"torch {torch_version}; the stable binding runs under every torch from 2.10 on",
        )
    chosen = by_series[series]
    if chosen.problem is not None:
        return BindingChoice(None, f"the native binding for torch {series}: {chosen.problem}", True)
    if chosen.cxx11_abi != torch_cxx11_abi:
        return BindingChoice(
            None,
            f"the native binding for torch {series} was built with _GLIBCXX_USE_CXX11_ABI="
            f"{int(chosen.cxx11_abi)}, but torch {torch_version} uses "
            f"_GLIBCXX_USE_CXX11_ABI={int(torch_cxx11_abi)}",
            True,
        )
    return BindingChoice(
        chosen,
        f"torch {torch_version} is of the {series} series, which this binding was compiled for "
        f"(against torch {chosen.torch_version})",
    )


def free_threaded() -> bool:
    """Whether this CPython runs without the GIL's build (no abi3 modules there)."""
    return bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


@dataclass
class BindingState:
    """Which binding this process runs ("native" or "stable") and why; for the native one,
    its Python entries (vecadd._C) or, where calls go through the dispatcher, why."""

    name: str = "stable"
    why: str = ""
    native: NativeBinding | None = None
    entries: Path | None = None
    entries_why: str | None = None


binding_state = BindingState()


@dataclass
class CudaState:
    """Which CUDA library this process loaded, and otherwise why none; which binding registers
    its kernels ("native" or "stable") and why."""

    libraries: list[CudaLibrary]
    loaded: CudaLibrary | None = None
    why_not: str | None = None
    registration: str | None = None
    registration_why: str | None = None


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


# Libraries loaded for others to find by name, kept open for the life of the process.
_held_libraries: list[ctypes.CDLL] = []


def _load_native_cuda_kernels(binding: NativeBinding, library: CudaLibrary) -> str | None:
    """Registers `library`'s CUDA kernels through the native binding's own library; why it
    did not, or None."""
    if not binding.cuda_kernels:
        return (
            f"the native binding for torch {binding.series} holds no CUDA kernels (compiled "
            f"against a CPU-only torch {binding.torch_version})"
        )
    # The kernels' library is loaded under either registration, unchecked as before: reading
    # its tens of megabytes at every import would cost more than the check is worth.
    try:
        _held_libraries.append(ctypes.CDLL(str(library.folder / CUDA_KERNELS_LIBRARY_NAME)))
    except OSError as error:
        problem = str(error)
    else:
        problem = _load_checked(binding.folder / NATIVE_CUDA_LIBRARY_NAME)
    if problem is None:
        return None
    return (
        f"the native binding's CUDA kernels for torch {binding.series} failed to load ({problem})"
    )


def _load_cuda_library(native: NativeBinding | None) -> None:
    """The CUDA library of torch's CUDA major, its kernels registered by the native binding
    where it can, else by the library's stable-ABI registration."""
    chosen, why_not = choose_cuda_library(
        cuda_state.libraries, torch.version.cuda, os.environ.get(CUDA_LIBRARY_VARIABLE)
    )
    if chosen is None:
        cuda_state.why_not = why_not
        return
    why = "the stable binding runs"
    if native is not None:
        failure = _load_native_cuda_kernels(native, chosen)
        if failure is None:
            cuda_state.loaded, cuda_state.registration = chosen, "native"
            cuda_state.registration_why = (
                f"the native binding for torch {native.series} registers them (torch's full C++ "
                "API, no boxing)"
            )
            return
        why = failure
        if native.cuda_kernels:
            _warn(f"{why}; the CUDA library's stable-ABI kernels serve instead")
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
    cuda_state.loaded, cuda_state.registration = chosen, "stable"
    cuda_state.registration_why = f"{why}: the CUDA library's stable-ABI registration serves"


def elf_problem(path: Path) -> str | None:
    """Why `path` is not a whole ELF shared object of this machine's word size and byte order,
    or None: the dynamic loader maps what the file's headers promise, and a file cut short
    would crash the process (SIGBUS) where its code or data were missing."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError as error:
        return f"{path} cannot be read ({error.strerror})"
    header = struct.Struct("<16sHHIQQQIHHHHHH")
    if len(data) < header.size or data[:4] != b"\x7fELF" or data[4:6] != b"\x02\x01":
        return f"{path} is not a 64-bit little-endian ELF file ({len(data)} bytes)"
    fields = header.unpack_from(data)
    program_offset, section_offset = fields[5], fields[6]
    program_size, program_count, section_size, section_count = fields[9:13]
    end = section_offset + section_size * section_count
    segments = []
    for index in range(program_count):
        start = program_offset + index * program_size
        if start + 56 > len(data):
            end = max(end, start + 56)
            break
        kind, _, offset, _, _, file_size = struct.unpack_from("<IIQQQQ", data, start)
        if kind == 1:  # PT_LOAD: the bytes mapped from the file
            segments.append(offset + file_size)
    end = max([end, program_offset + program_size * program_count, *segments])
    if end > len(data):
        return f"{path} is cut short: its headers need {end} bytes, it has {len(data)}"
    return None


def record_problem(path: Path, package: Path = LIBRARY_DIR.parent) -> str | None:
    """Why `path` differs from the file pip installed (its hash in the distribution's RECORD),
    or None: also where no RECORD lists it (a copy of the package, a build directory)."""
    records = list(package.parent.glob(f"vecadd-{_build_config.VERSION}*.dist-info/RECORD"))
    try:
        name = path.resolve().relative_to(package.parent.resolve()).as_posix()
        lines = records[0].read_text().splitlines() if len(records) == 1 else []
    except (ValueError, OSError):
        return None
    for line in lines:
        listed, _, rest = line.partition(",")
        algorithm, _, digest = rest.partition(",")[0].partition("=")
        if listed != name or algorithm != "sha256":
            continue
        found = base64.urlsafe_b64encode(hashlib.sha256(path.read_bytes()).digest())
        if found.decode().rstrip("=") != digest:
            return f"{path} is not the file pip installed (its sha256 differs from {records[0]})"
        return None
    return None


def _load_checked(library: Path) -> str | None:
    """Loads a library that registers kernels, after checking its file; why it failed, or None."""
    problem = elf_problem(library) or record_problem(library)
    if problem is not None:
        return problem
    try:
        # The dynamic loader resolves every symbol before any of the library's code runs: a
        # library that fails here has registered nothing.
        torch.ops.load_library(library)
    except OSError as error:
        # torch words it "Could not load this library: PATH", the loader's reason in its cause.
        return str(error.__cause__ or error)
    return None


def _load_native(binding: NativeBinding) -> str | None:
    """Loads a native binding's kernels; why it failed, or None."""
    problem = _load_checked(binding.folder / NATIVE_LIBRARY_NAME)
    if problem is None:
        return None
    return f"the native binding for torch {binding.series} failed to load ({problem})"


def _load_entries(binding: NativeBinding) -> tuple[ModuleType | None, str | None]:
    """A native binding's Python entries, vecadd._C, or why calls go through the dispatcher."""
    if free_threaded():
        return None, "a free-threaded CPython takes no abi3 module: calls go through the dispatcher"
    if not binding.python_entries:
        return None, (
            "this binding was built without its Python entries (by a free-threaded CPython): "
            "calls go through the dispatcher"
        )
    path = binding.folder / NATIVE_ENTRIES_NAME
    problem = elf_problem(path) or record_problem(path)
    if problem is not None:
        return (
            None,
            f"its Python entries failed to load ({problem}): calls go through the dispatcher",
        )
    try:
        loader = importlib.machinery.ExtensionFileLoader(ENTRIES_MODULE, str(path))
        spec = importlib.util.spec_from_file_location(ENTRIES_MODULE, path, loader=loader)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except (ImportError, OSError) as error:
        return None, f"its Python entries failed to load ({error}): calls go through the dispatcher"
    sys.modules[ENTRIES_MODULE] = module
    return module, None


def _warn(message: str) -> None:
    warnings.warn(f"vecadd: {message}", RuntimeWarning, stacklevel=4)


def load_operators() -> ModuleType | object | None:
    """Registers the compiled kernels of one binding, chosen once per process (later calls
    give the first call's answer); returns the native binding's entries (vecadd._C, or
    DISPATCHER_ENTRIES where calls go through the dispatcher), None for the stable binding."""
    global _loaded
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
    if _loaded is not _NOTHING_LOADED:
        return _loaded
    if _build_config.TORCH_ABI == "stable":
        _loaded = _load_portable()
        return _loaded
    try:
        module = importlib.import_module("vecadd._C")
    except (ImportError, OSError) as error:
        raise ImportError(
            f"vecadd's compiled operators failed to load under torch {torch.__version__} "
            f"(built against torch {_build_config.TORCH_VERSION}): {error}\n{REBUILD_HINT}"
        ) from error
    # The native module links its one CUDA library, if any.
    cuda_state.loaded = libraries[0] if libraries else None
    cuda_state.why_not = None if libraries else "this vecadd was built without CUDA"
    if libraries:
        cuda_state.registration = "native"
        cuda_state.registration_why = "a native build registers the CUDA kernels it links"
    binding_state.name, binding_state.entries = "native", Path(module.__file__)
    binding_state.why = (
        f"a native build of vecadd for torch {torch_series(_build_config.TORCH_VERSION)} "
        f"(built against torch {_build_config.TORCH_VERSION})"
    )
    _loaded = module
    return module


def _load_portable() -> ModuleType | object | None:
    """The portable build: one native binding, or the stable one; then the CUDA library."""
    try:
        choice = choose_binding(
            native_bindings(),
            torch.__version__,
            bool(torch._C._GLIBCXX_USE_CXX11_ABI),
            os.environ.get(BINDING_VARIABLE),
        )
    except ValueError as error:
        raise ImportError(f"vecadd: {error}") from None
    chosen, why = choice.native, choice.why
    if chosen is not None:
        failure = _load_native(chosen)
        if failure is not None:
            chosen, why = None, failure
    if chosen is None and (choice.fault or choice.native is not None):
        _warn(f"{why}; the stable binding runs instead (vecadd info says which runs and why)")
    entries = None
    if chosen is None:
        try:
            torch.ops.load_library(STABLE_LIBRARY)
        except OSError as error:
            raise ImportError(
                f"vecadd's compiled operators failed to load under torch {torch.__version__} "
                f"(built against torch {_build_config.TORCH_VERSION}): {error}\n{REBUILD_HINT}"
            ) from error
        binding_state.name, binding_state.why = "stable", why
    else:
        binding_state.name, binding_state.why, binding_state.native = "native", why, chosen
        module, binding_state.entries_why = _load_entries(chosen)
        if module is not None:
            binding_state.entries = chosen.folder / NATIVE_ENTRIES_NAME
            entries = module
        else:
            if chosen.python_entries and not free_threaded():
                _warn(binding_state.entries_why)
            entries = DISPATCHER_ENTRIES
    _load_cuda_library(chosen)
    return entries


# What load_operators answers for a native binding without vecadd._C (vecadd/_library.py
# gives the operators' ways in through the dispatcher in its place).
DISPATCHER_ENTRIES = object()
_NOTHING_LOADED = object()
_loaded: ModuleType | object | None = _NOTHING_LOADED
