"""Shared steps of the tests that configure, build or pip-install with CMake."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


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
