"""The kernel library's own C++ tests (tests/cpp: the planner and the CPU and CUDA runners,
with no torch and no Python in them) build and pass under ctest."""

from __future__ import annotations

import platform
import re
import subprocess
from pathlib import Path

import pytest
import torch

from helpers import ROOT, cmake_build, cmake_configure, cmake_executable

pytestmark = pytest.mark.build


def _cpu_has_avx512() -> bool:
    """Whether the CPU has the AVX-512 subsets the kernels' AVX-512 build needs (Linux)."""
    cpuinfo = Path("/proc/cpuinfo")
    flags = re.search(r"^flags\s*:(.*)$", cpuinfo.read_text(), re.M) if cpuinfo.exists() else None
    needed = {"avx512f", "avx512bw", "avx512vl", "avx512dq"}
    return flags is not None and needed <= set(flags.group(1).split())


def test_cpp_tests_pass_under_ctest(tmp_path: Path) -> None:
    defines = ["-DVECADD_PYTHON=OFF", "-DVECADD_BUILD_TESTS=ON", "-DCMAKE_BUILD_TYPE=Release"]
    expected = {"test_plan", "test_add_cpu", "test_result_layout", "test_sum_cpu"}
    # test_sum_cpu again with each instruction set of the CPU kernels (tests/cpp); AVX-512's is
    # skipped on a CPU without it.
    expected.add("test_sum_cpu_default")
    if platform.machine() in ("x86_64", "AMD64"):
        expected.add("test_sum_cpu_avx2")
        if _cpu_has_avx512():
            expected.add("test_sum_cpu_avx512")
    if torch.cuda.is_available():
        defines += ["-DVECADD_CUDA=ON", "-DCMAKE_CUDA_ARCHITECTURES=native"]
        expected.add("test_add_cuda")
    else:
        defines += ["-DVECADD_CUDA=OFF"]  # the CUDA test would only report itself skipped
    configured = cmake_configure(ROOT, tmp_path, *defines)
    assert configured.returncode == 0, configured.stdout + configured.stderr
    cmake_build(tmp_path)
    ctest = str(Path(cmake_executable()).with_name("ctest"))
    ran = subprocess.run(
        [ctest, "--test-dir", str(tmp_path), "--output-on-failure", "--verbose"],
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    passed = set(re.findall(r"Test\s+#\d+: (\w+) \.+\s+Passed", ran.stdout))
    assert passed == expected, ran.stdout
    # Each test program ran its cases and counted them: none may be empty.
    counts = [int(n) for n in re.findall(r"(\d+) passed, 0 failed", ran.stdout)]
    assert len(counts) == len(expected)
    assert all(count > 0 for count in counts)
