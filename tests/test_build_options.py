"""CUDA is optional: CPU-only builds say so; VECADD_CUDA=ON without a toolkit fails clearly."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from helpers import ROOT, cmake_configure

pytestmark = pytest.mark.build


def configure(tmp_path: Path, *defines: str) -> subprocess.CompletedProcess:
    return cmake_configure(ROOT, tmp_path / "build", "-DVECADD_PYTHON=OFF", *defines)


def test_cuda_off_builds_cpu_only_and_says_so(tmp_path):
    configured = configure(tmp_path, "-DVECADD_CUDA=OFF")
    assert configured.returncode == 0, configured.stderr
    assert "vecadd: building CPU-only: VECADD_CUDA=OFF" in configured.stdout
    config = (tmp_path / "build" / "generated" / "include" / "vecadd" / "config.h").read_text()
    assert "#define VECADD_WITH_CUDA 0" in config


def test_no_compiler_found_builds_cpu_only(tmp_path):
    configured = configure(tmp_path, "-DCMAKE_CUDA_COMPILER=/nonexistent/nvcc")
    assert configured.returncode == 0, configured.stderr
    assert (
        "vecadd: building CPU-only: the CUDA compiler '/nonexistent/nvcc' does not exist"
        in configured.stdout
    )


def test_cuda_on_without_a_toolkit_fails_clearly(tmp_path):
    configured = configure(tmp_path, "-DVECADD_CUDA=ON", "-DCMAKE_CUDA_COMPILER=/nonexistent/nvcc")
    assert configured.returncode != 0
    message = " ".join(configured.stderr.split())
    assert "VECADD_CUDA=ON, but the CUDA compiler '/nonexistent/nvcc' does not exist" in message
    assert "-DVECADD_CUDA=OFF" in message
