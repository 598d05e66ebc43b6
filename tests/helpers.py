"""What several test modules share: operands, the comparison with torch.add, and the steps
of the tests that configure, build or pip-install with CMake (pytest fixtures and hooks
stay in conftest.py)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import torch
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
# The torch.library.opcheck tests every operator passes.
OPCHECK_TESTS = (
    "test_schema",
    "test_autograd_registration",
    "test_faketensor",
    "test_aot_dispatch_dynamic",
)


# ---------------------------------------------------------------- the two builds


def torch_abi() -> str:
    """ "stable" or "native": which build of vecadd's operators is installed."""
    import vecadd

    return vecadd.build_info()["torch_abi"]


def op_error(kind: type[Exception], device: str = "cpu") -> type[Exception]:
    """What a direct torch.ops.vecadd call on `device` raises for a refused call that vecadd.add
    raises as `kind`: the stable ABI carries C++ errors as RuntimeError (whose message starts
    with the kind's name), torch's full C++ API raises `kind` itself. On CUDA, the kernels are
    those of whichever binding registered them (build_info's cuda_registration)."""
    import vecadd

    if torch.device(device).type == "cuda":
        stable_kernels = vecadd.build_info()["cuda_registration"] == "stable"
    else:
        stable_kernels = torch_abi() == "stable"
    return RuntimeError if stable_kernels else kind


# ---------------------------------------------------------------- operands and results


def make_tensor(shape, dtype, device, *, seed=0, low=None, high=None) -> torch.Tensor:
    """Random values that are never all zero; integers span negative and positive (and wrap
    into the narrow ones, as a cast does), complex numbers have both parts, bools are mixed."""
    generator = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point or dtype.is_complex:
        values = torch.randn(shape, generator=generator, dtype=torch.float64) * 4
        if dtype.is_complex:
            imaginary = torch.randn(shape, generator=generator, dtype=torch.float64) * 4
            values = torch.complex(values, imaginary)
    elif dtype == torch.bool:
        values = torch.randint(0, 2, shape, generator=generator, dtype=torch.int64)
    else:
        values = torch.randint(
            low if low is not None else -(2**15),
            high if high is not None else 2**15,
            shape,
            generator=generator,
            dtype=torch.int64,
        )
    return values.to(device=device, dtype=dtype)


def assert_matches_torch_add(result, x, y, alpha: float | int = 1) -> None:
    """`vecadd check`'s comparison with torch.add (vecadd/cli/check.py), the one home of its
    rule; imported on use, as some test modules run where vecadd is not installed."""
    from vecadd.cli.check import assert_matches_torch_add as compare

    compare(result, x, y, alpha)


def compiled_guards(function) -> list[str]:
    """What torch.compile checks before each call of `function`'s one compiled graph, one
    expression per guard (from Dynamo's cache entry, a torch-private view kept to tests)."""
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list

    (entry,) = _debug_get_cache_entry_list(function.__code__)
    lines = str(entry.guard_manager).splitlines()
    return [
        line.split(": ", 1)[1].split("  #")[0].strip()
        for line in lines
        if re.search(r"\+- [A-Z_]+(MATCH|CHECK): ", line)
    ]


def major_minor(version: str) -> str:
    """'2.14.1+cu130' -> '2.14', read as PEP 440 does (independently of vecadd's own rule)."""
    return ".".join(str(part) for part in Version(version).release[:2])


# ---------------------------------------------------------------- CMake and pip


def run_vecadd_in_process(*arguments: str) -> subprocess.CompletedProcess:
    """`python -m vecadd ARGUMENTS` through vecadd.cli.main.main in this process, its output
    captured: the same parser and commands without a new interpreter importing torch (about
    4 s each). Tests of the entry points themselves, or that need another environment, start
    a process."""
    import contextlib
    import io

    from vecadd.cli.main import main

    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            status = main(list(arguments))
        except SystemExit as exit_:  # argparse's own errors
            status = exit_.code if isinstance(exit_.code, int) else 1
    command = [sys.executable, "-m", "vecadd", *arguments]
    return subprocess.CompletedProcess(command, status, stdout.getvalue(), stderr.getvalue())


def cmake_executable() -> str:
    """The cmake next to this Python (pip's, >= 3.26) before any other on PATH."""
    return shutil.which("cmake", path=str(Path(sys.executable).parent)) or "cmake"


def environment_without_arch_list(**extra: str) -> dict[str, str]:
    """This process's environment, minus an inherited TORCH_CUDA_ARCH_LIST."""
    environment = {k: v for k, v in os.environ.items() if k != "TORCH_CUDA_ARCH_LIST"}
    environment.update(extra)
    return environment


def cmake_configure(
    source: Path, build: Path, *defines: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """`cmake -S source -B build -G Ninja -D...` with its output captured."""
    return subprocess.run(
        [cmake_executable(), "-S", str(source), "-B", str(build), "-G", "Ninja", *defines],
        capture_output=True,
        text=True,
        env=env if env is not None else environment_without_arch_list(),
    )


def cmake_build(build: Path, *arguments: str, env: dict[str, str] | None = None) -> None:
    built = subprocess.run(
        [cmake_executable(), "--build", str(build), *arguments],
        capture_output=True,
        text=True,
        env=env,
    )
    assert built.returncode == 0, built.stdout + built.stderr


def pip_install_into(
    site: Path,
    project: Path,
    build_dir: Path,
    *config_settings: str,
    env: dict[str, str] | None = None,
) -> None:
    """Build `project` against this environment's torch and install it into `site`."""
    command = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--no-build-isolation",
        "--no-deps",
        "-q",
        "--target",
        str(site),
        str(project),
        "-C",
        f"build-dir={build_dir}",
    ]
    for setting in config_settings:
        command += ["-C", setting]
    installed = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=env if env is not None else environment_without_arch_list(),
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr


def free_port() -> int:
    """A TCP port nothing listens on now, for a process group's rendezvous: a fixed one would
    collide with another run of the same test on this machine."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
