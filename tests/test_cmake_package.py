"""A plain C++ program (no torch, no Python) finds vecadd's installed CMake package."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import vecadd
from helpers import cmake_build, cmake_configure

pytestmark = pytest.mark.build

CONSUMER_CMAKE = """
cmake_minimum_required(VERSION 3.26)
project(consumer LANGUAGES CXX)
find_package(vecadd 0.3 CONFIG REQUIRED)
message(STATUS "found vecadd ${vecadd_VERSION} with CUDA=${vecadd_WITH_CUDA}")
add_executable(consumer main.cpp)
target_link_libraries(consumer PRIVATE vecadd::vecadd)
"""

CONSUMER_MAIN = """
#include <cstdio>
#include <vecadd/vecadd.h>
int main() {
  const double x[3] = {1.0, 2.0, 3.0};
  const double y[3] = {10.0, 20.0, 30.0};
  double z[3];
  vecadd::add_cpu<double>(x, y, z, 3, 2.0);
  std::printf("%g %g %g %s\\n", z[0], z[1], z[2], VECADD_VERSION_STRING);
  return 0;
}
"""


def configure_consumer(tmp_path: Path, cmake_lists: str, *defines: str):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "CMakeLists.txt").write_text(cmake_lists)
    (tmp_path / "main.cpp").write_text(CONSUMER_MAIN)
    return cmake_configure(tmp_path, tmp_path / "build", *defines)


def test_find_package_from_the_installed_wheel(tmp_path):
    configured = configure_consumer(
        tmp_path, CONSUMER_CMAKE, f"-DCMAKE_PREFIX_PATH={vecadd.get_cmake_dir()}"
    )
    assert configured.returncode == 0, configured.stdout + configured.stderr
    assert f"found vecadd {vecadd.__version__}" in configured.stdout
    cmake_build(tmp_path / "build")
    ran = subprocess.run([str(tmp_path / "build" / "consumer")], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["21", "42", "63", vecadd.__version__]


def test_older_minor_series_is_not_accepted(tmp_path):
    configured = configure_consumer(
        tmp_path,
        CONSUMER_CMAKE.replace("vecadd 0.3", "vecadd 0.2"),
        f"-Dvecadd_DIR={vecadd.get_cmake_dir()}",
    )
    assert configured.returncode != 0
    assert "not compatible" in configured.stderr or "version" in configured.stderr


def readme_cmake_snippet() -> str:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    (snippet,) = re.findall(r"^```cmake\n(.*?)^```", readme, re.M | re.S)
    return snippet


def test_the_readme_snippet_builds(tmp_path):
    cmake_lists = (
        "cmake_minimum_required(VERSION 3.26)\nproject(consumer LANGUAGES CXX)\n"
        "add_library(my_extension SHARED main.cpp)\n" + readme_cmake_snippet()
    )
    configured = configure_consumer(
        tmp_path, cmake_lists, f"-DCMAKE_PREFIX_PATH={vecadd.get_cmake_dir()}"
    )
    assert configured.returncode == 0, configured.stdout + configured.stderr
    cmake_build(tmp_path / "build")
    assert list((tmp_path / "build").glob("libmy_extension.so"))


@pytest.mark.parametrize("major", ["none", "11"])
def test_no_cuda_target_for_a_major_the_copy_lacks(tmp_path, major):
    cmake_lists = CONSUMER_CMAKE.replace(
        "find_package(vecadd 0.3 CONFIG REQUIRED)",
        "find_package(vecadd 0.3 CONFIG REQUIRED)\n"
        "if(TARGET vecadd::cuda OR vecadd_WITH_CUDA)\n"
        '  message(FATAL_ERROR "unexpected CUDA")\n'
        "endif()",
    )
    configured = configure_consumer(
        tmp_path,
        cmake_lists,
        f"-Dvecadd_DIR={vecadd.get_cmake_dir()}",
        f"-Dvecadd_CUDA_MAJOR={major}",
    )
    assert configured.returncode == 0, configured.stdout + configured.stderr
    required = configure_consumer(
        tmp_path / "required",
        CONSUMER_CMAKE.replace("CONFIG REQUIRED", "CONFIG REQUIRED COMPONENTS cuda"),
        f"-Dvecadd_DIR={vecadd.get_cmake_dir()}",
        f"-Dvecadd_CUDA_MAJOR={major}",
    )
    assert required.returncode != 0
    libraries = vecadd.build_info()["cuda_libraries"]
    expected = "holds CUDA libraries for CUDA" if libraries else "was built without CUDA"
    assert expected in " ".join(required.stderr.split())
