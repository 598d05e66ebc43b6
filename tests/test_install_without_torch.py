"""Installing vecadd breaks no other package's build: in an environment without torch, holding
vecadd's wheel (no dependencies), scikit-build-core builds an unrelated project (it imports every
cmake.prefix entry point on every build), a project that uses vecadd's CMake package finds it
through that entry point, and both --cmakedir forms answer."""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

import pytest

from helpers import ROOT, environment_without_arch_list

pytestmark = pytest.mark.build

UNRELATED_PYPROJECT = """
[build-system]
requires = ["scikit-build-core"]
build-backend = "scikit_build_core.build"

[project]
name = "unrelated"
version = "1.0"

[tool.scikit-build]
wheel.packages = []
"""
UNRELATED_CMAKE = """
cmake_minimum_required(VERSION 3.26)
project(unrelated LANGUAGES NONE)
install(FILES note.txt DESTINATION .)
"""
CONSUMER_PYPROJECT = UNRELATED_PYPROJECT.replace('"unrelated"', '"consumer"') + (
    "search.site-packages = false\n"
)
CONSUMER_CMAKE = """
cmake_minimum_required(VERSION 3.26)
project(consumer LANGUAGES CXX)
find_package(vecadd CONFIG REQUIRED)
message(STATUS "consumer found vecadd ${vecadd_VERSION} at ${vecadd_DIR}")
install(FILES note.txt DESTINATION .)
"""


def run(*command: str | Path, **kwargs) -> subprocess.CompletedProcess:
    ran = subprocess.run(
        [str(c) for c in command],
        capture_output=True,
        text=True,
        env=environment_without_arch_list(VECADD_CUDA="OFF"),
        timeout=900,
        **kwargs,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return ran


@pytest.fixture(scope="module")
def torchless(tmp_path_factory) -> Path:
    """A fresh environment with the build tools, no torch, and vecadd's wheel without its
    dependencies; its python."""
    work = tmp_path_factory.mktemp("torchless")
    run(
        sys.executable,
        *("-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-q"),
        *("-w", work / "dist", "-C", f"build-dir={work / 'build'}", ROOT),
    )
    (wheel,) = (work / "dist").glob("vecadd-*.whl")
    venv.EnvBuilder(with_pip=True).create(work / "venv")
    python = work / "venv" / "bin" / "python"
    run(python, "-m", "pip", "install", "-q", "scikit-build-core", "cmake>=3.26", "ninja")
    run(python, "-m", "pip", "install", "-q", "--no-deps", wheel)
    run(
        python,
        "-c",
        "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is not None)",
    )
    return python


def project(folder: Path, pyproject: str, cmake: str) -> Path:
    folder.mkdir()
    (folder / "pyproject.toml").write_text(pyproject)
    (folder / "CMakeLists.txt").write_text(cmake)
    (folder / "note.txt").write_text("built\n")
    return folder


def test_an_unrelated_project_builds_beside_vecadd_without_torch(torchless, tmp_path):
    unrelated = project(tmp_path / "unrelated", UNRELATED_PYPROJECT, UNRELATED_CMAKE)
    run(
        torchless,
        "-m",
        "pip",
        "wheel",
        "--no-build-isolation",
        "--no-deps",
        "-w",
        tmp_path,
        unrelated,
    )
    assert list(tmp_path.glob("unrelated-1.0-*.whl"))


def test_a_consumer_finds_vecadd_through_the_entry_point_without_torch(torchless, tmp_path):
    consumer = project(tmp_path / "consumer", CONSUMER_PYPROJECT, CONSUMER_CMAKE)
    built = run(
        torchless,
        *("-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-v", "-w", tmp_path),
        consumer,
    )
    assert "consumer found vecadd" in built.stdout + built.stderr
    assert list(tmp_path.glob("consumer-1.0-*.whl"))


@pytest.mark.parametrize("form", ["python -m vecadd", "vecadd"])
def test_both_cmakedir_forms_answer_without_torch(torchless, form):
    command = [torchless, "-m", "vecadd"] if form != "vecadd" else [torchless.parent / "vecadd"]
    ran = run(*command, "--cmakedir")
    folder = Path(ran.stdout.strip())
    assert (folder / "vecaddConfig.cmake").is_file()
    assert folder.parts[-4:] == ("vecadd", "lib", "cmake", "vecadd")
    assert ran.stderr == ""
    assert run(*command, "--version").stdout.startswith("vecadd ")
