"""examples/aoti: a model that calls vecadd's operators, exported and compiled ahead of time
(AOTInductor), runs from a C++ program linked with vecadd::ops and gives eager PyTorch's
outputs; without vecadd::ops the program says which libraries to link (docs/deploy.md)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest
import torch

import vecadd
from helpers import ROOT, cmake_build, cmake_configure

EXAMPLE = ROOT / "examples" / "aoti"
pytestmark = [
    pytest.mark.build,
    pytest.mark.skipif(
        vecadd.build_info()["build"] != "portable",
        reason="vecadd::ops comes with the portable build; the native one is a Python module",
    ),
]


def run(*command: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(part) for part in command], capture_output=True, text=True, cwd=cwd)


class Package(NamedTuple):
    device: str
    folder: Path  # what export_model.py writes: model.pt2, inputs.pt, expected.pt


@pytest.fixture(scope="module", params=["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
def package(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Package:
    if request.param == "cuda" and vecadd.build_info()["cuda_library"] is None:
        pytest.skip("vecadd's CUDA kernels are not loaded")
    folder = tmp_path_factory.mktemp(f"package-{request.param}")
    exported = run(sys.executable, EXAMPLE / "export_model.py", folder, "--device", request.param)
    assert exported.returncode == 0, exported.stdout + exported.stderr
    return Package(request.param, folder)


def build_run_package(folder: Path, *defines: str) -> Path:
    prefixes = f"{torch.utils.cmake_prefix_path};{vecadd.get_cmake_dir()}"
    # As on Ubuntu, whose linker drops the libraries a program calls no function of.
    configured = cmake_configure(
        EXAMPLE,
        folder,
        f"-DCMAKE_PREFIX_PATH={prefixes}",
        "-DCMAKE_EXE_LINKER_FLAGS=-Wl,--as-needed",
        *defines,
    )
    assert configured.returncode == 0, configured.stdout + configured.stderr
    cmake_build(folder)
    return folder / "run_package"


@pytest.fixture(scope="module")
def run_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_run_package(tmp_path_factory.mktemp("run_package"))


def test_the_cpp_program_gives_eager_outputs(
    package: Package, run_package: Path, tmp_path: Path
) -> None:
    outputs = tmp_path / "outputs.pt"
    folder = package.folder
    ran = run(run_package, folder / "model.pt2", folder / "inputs.pt", outputs, package.device)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (got,) = torch.load(outputs)
    (expected,) = torch.load(folder / "expected.pt")
    # The batch differs from the one exported with: the package's batch size is dynamic.
    assert got.shape == expected.shape == (5, 64)
    torch.testing.assert_close(got, expected)


def test_the_program_links_vecadds_operator_libraries(run_package: Path):
    needed = run("readelf", "-d", run_package).stdout
    for library in ("libvecadd_stable_schemas.so", "libvecadd_stable_ops.so"):
        assert f"[{library}]" in needed


def test_without_vecadd_ops_the_program_names_the_libraries(
    package: Package, tmp_path: Path
) -> None:
    if package.device != "cpu":
        pytest.skip("the CPU package shows it: the operators are looked up before any run")
    program = build_run_package(tmp_path / "build", "-DLINK_VECADD_OPS=OFF")
    folder = package.folder
    ran = run(program, folder / "model.pt2", folder / "inputs.pt", tmp_path / "out.pt")
    assert ran.returncode == 1
    assert "target_link_libraries(run_package PRIVATE vecadd::ops)" in ran.stderr
    assert "libvecadd_stable_ops.so" in ran.stderr
    assert "Could not find schema for vecadd::" in ran.stderr
    assert not (tmp_path / "out.pt").exists()


LOAD_IN_PYTHON = """
import sys, torch
if sys.argv[2] == "import":
    import vecadd
runner = torch._inductor.aoti_load_package(sys.argv[1] + "/model.pt2")
inputs = [t.to(sys.argv[3]) for t in torch.load(sys.argv[1] + "/inputs.pt")]
(expected,) = torch.load(sys.argv[1] + "/expected.pt")
torch.testing.assert_close(runner(*inputs).cpu(), expected)
print("matches eager")
"""


def test_python_loads_the_package_once_vecadd_is_imported(package: Package):
    without = run(sys.executable, "-c", LOAD_IN_PYTHON, package.folder, "-", package.device)
    assert without.returncode == 1
    assert "Could not find schema for vecadd::add" in without.stderr
    loaded = run(sys.executable, "-c", LOAD_IN_PYTHON, package.folder, "import", package.device)
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    assert "matches eager" in loaded.stdout


def test_the_deploy_guides_cmake_is_the_examples():
    guide = (ROOT / "docs" / "deploy.md").read_text()
    (snippet,) = re.findall(r"^```cmake\n(.*?)^```", guide, re.M | re.S)
    assert snippet.strip() in (EXAMPLE / "CMakeLists.txt").read_text()
