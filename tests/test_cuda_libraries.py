"""Which CUDA library a process loads: the one of the installed torch's CUDA major, none under a
CPU-only torch (whose CPU work is untouched), worded reasons when there is none, and the CUDA
runtime it runs on is torch's own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import vecadd
from helpers import ROOT
from vecadd import _loader
from vecadd._loader import CudaLibrary, choose_cuda_library, held_text


def library(cuda_version: str) -> CudaLibrary:
    return CudaLibrary(Path(f"/lib/cuda{cuda_version.split('.')[0]}"), cuda_version, "90", ())


BOTH = [library("12.4"), library("13.0")]


@pytest.mark.parametrize(
    ("torch_cuda", "chosen"),
    [("12.8", "12.4"), ("12.6", "12.4"), ("13.0", "13.0"), ("13.2", "13.0")],
)
def test_torch_cuda_major_picks_the_library(torch_cuda, chosen):
    picked, why_not = choose_cuda_library(BOTH, torch_cuda)
    assert picked.cuda_version == chosen
    assert why_not is None


def test_a_cpu_only_torch_loads_no_cuda_library():
    assert choose_cuda_library(BOTH, None) == (None, "the installed torch is a CPU-only build")


def test_a_major_without_a_library_says_what_the_wheel_holds():
    picked, why_not = choose_cuda_library(BOTH, "14.1")
    assert picked is None
    assert why_not == (
        "the installed torch is a CUDA 14.1 build and this vecadd holds CUDA libraries for CUDA "
        "12.4 and 13.0, none for CUDA 14"
    )
    assert choose_cuda_library([], "13.0")[1].endswith("holds no CUDA library, none for CUDA 13")


@pytest.mark.parametrize(
    ("override", "chosen", "why_not"),
    [
        ("12", "12.4", None),
        ("none", None, "VECADD_CUDA_LIBRARY=none"),
        (
            "11",
            None,
            "VECADD_CUDA_LIBRARY='11' names no CUDA library of this vecadd; expected one of its "
            "CUDA majors (12, 13) or 'none'",
        ),
        ("twelve", None, "VECADD_CUDA_LIBRARY='twelve' names no CUDA library"),
    ],
)
def test_the_environment_overrides_the_choice(override, chosen, why_not):
    picked, reason = choose_cuda_library(BOTH, "13.0", override)
    assert (picked.cuda_version if picked else None) == chosen
    if why_not is None:
        assert reason is None
    else:
        assert reason.startswith(why_not)


def test_held_text_lists_the_toolkits():
    assert held_text(BOTH) == "CUDA libraries for CUDA 12.4 and 13.0"
    assert held_text(BOTH[:1]) == "CUDA libraries for CUDA 12.4"
    assert held_text([]) == "no CUDA library"


def test_installed_libraries_describe_themselves():
    for found in _loader.cuda_state.libraries:
        description = json.loads((found.folder / "cuda_library.json").read_text())
        assert description["vecadd_version"] == vecadd.__version__
        assert found.folder.name == f"cuda{found.major}"
        assert (found.folder / "libvecadd_cuda.so").is_file()


def test_this_process_loaded_the_library_of_torch_s_cuda_major():
    info = vecadd.build_info()
    held = {lib.major: lib for lib in _loader.cuda_state.libraries}
    major = int(torch.version.cuda.split(".")[0]) if torch.version.cuda else None
    if os.environ.get(_loader.CUDA_LIBRARY_VARIABLE):
        pytest.skip("VECADD_CUDA_LIBRARY overrides the choice in this process")
    if major in held:
        assert info["cuda_library"] == str(held[major].folder)
        runtimes = info["cuda_runtimes"]
        assert runtimes
        assert all(path.endswith(f"libcudart.so.{major}") for path in runtimes), runtimes
    else:
        assert info["with_cuda"] is False


def run_python(code: str, **environment: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-W", "error", "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **environment},
        timeout=300,
    )


NONE_LOADED = """
import torch, vecadd
info = vecadd.build_info()
assert vecadd.add(torch.ones(3), torch.arange(3.0)).tolist() == [1.0, 2.0, 3.0]
print(info["with_cuda"], info["cuda_library"], info["cuda_not_loaded"])
"""


@pytest.mark.skipif(
    vecadd.build_info()["build"] != "portable",
    reason="only the portable build chooses among CUDA libraries; the native build links its one",
)
def test_without_a_cuda_library_cpu_work_is_untouched_and_silent():
    ran = run_python(NONE_LOADED, VECADD_CUDA_LIBRARY="none")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "False None VECADD_CUDA_LIBRARY=none"
    assert ran.stderr == ""


@pytest.mark.skipif(
    vecadd.build_info()["build"] != "portable",
    reason="only the portable build chooses among CUDA libraries; the native build links its one",
)
def test_check_installed_agrees_with_this_environment():
    ran = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "release" / "check_installed.py")],
        capture_output=True,
        text=True,
        cwd=ROOT / "tests",
        timeout=300,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "check_installed.py: ok: torch" in ran.stdout
    refused = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "release" / "check_installed.py")],
        capture_output=True,
        text=True,
        env={**os.environ, "VECADD_CUDA_LIBRARY": "none"},
        cwd=ROOT / "tests",
        timeout=300,
    )
    if vecadd.build_info()["with_cuda"]:
        assert refused.returncode == 1
        assert "loaded the CUDA library none, expected" in refused.stderr


REFUSED_ON_CUDA = """
import torch, vecadd
x = torch.ones(4, device="cuda")
for call in (lambda: vecadd.add(x, x), lambda: torch.ops.vecadd.add(x, x),
             lambda: vecadd.add(x, x, out=torch.empty_like(x))):
    try:
        call()
    except RuntimeError as error:
        print("REFUSED", error)
    else:
        print("RAN")
"""


@pytest.mark.cuda
@pytest.mark.skipif(
    vecadd.build_info()["build"] != "portable",
    reason="only the portable build chooses among CUDA libraries; the native build links its one",
)
def test_a_cuda_call_without_a_library_is_refused_in_words():
    ran = run_python(REFUSED_ON_CUDA, VECADD_CUDA_LIBRARY="none")
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert len(lines) == 3
    for line in lines:
        assert line.startswith("REFUSED vecadd.add(): no CUDA kernels are loaded, so vecadd cannot")
        assert "cuda:0" in line
        assert f"torch {torch.__version__}, CUDA {torch.version.cuda}" in line
        assert "VECADD_CUDA_LIBRARY=none" in line
        assert "this vecadd holds CUDA libraries for CUDA" in line
