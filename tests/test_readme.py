"""The README keeps up with what it describes: its code blocks run (the Python ones on this
machine, the command lines against the installed vecadd; the quick start's lines are what
.ci/run runs, as written, from a fresh clone, and the CMake snippet is built by
tests/test_cmake_package.py), it stays short with the quick start first, and it names the
extras, the test markers and the torch that the development requirements install."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

README = (ROOT / "README.md").read_text()
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
MAX_WORDS = 900
CPU_INDEX = "--index-url https://download.pytorch.org/whl/cpu"


def code_blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README, re.M | re.S)


def commands(block: str) -> list[str]:
    """A bash block's commands, less their comments."""
    lines = (line.split("  #")[0].strip() for line in block.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def test_readme_is_short():
    assert len(re.findall(r"\S+", README)) <= MAX_WORDS


@pytest.mark.parametrize("block", code_blocks("python"))
def test_python_blocks_run(block):
    ran = subprocess.run(
        [sys.executable, "-c", block], capture_output=True, text=True, timeout=600, cwd=ROOT
    )
    assert ran.returncode == 0, ran.stderr


def test_command_line_blocks_run():
    script = Path(sys.executable).parent / "vecadd"
    lines = [c for b in code_blocks("bash") for c in commands(b) if c.startswith("vecadd ")]
    assert {"vecadd info", "vecadd check", "vecadd --version"} <= set(lines)
    for line in lines:
        program = [str(script)] if script.is_file() else [sys.executable, "-m", "vecadd"]
        ran = subprocess.run(
            [*program, *line.split()[1:]], capture_output=True, text=True, timeout=600
        )
        assert ran.returncode == 0, f"{line}: {ran.stderr}"


def words(text: str) -> int:
    return len(re.findall(r"\S+", text))


def quick_start() -> list[str]:
    section = README.split("## Quick start", 1)[1]
    (block,) = re.findall(r"^```bash\n(.*?)^```", section, re.M | re.S)[:1]
    return [line for line in block.splitlines() if line.strip()]


def requirements_torch() -> str:
    (pinned,) = re.findall(r"^torch==(\S+)$", (ROOT / "requirements-dev.txt").read_text(), re.M)
    return pinned


def test_the_quick_start_comes_in_the_first_third():
    block = "\n".join(quick_start())
    assert words(README[: README.index(block) + len(block)]) <= words(README) / 3


def test_the_quick_start_runs_in_a_fresh_shell():
    """Every line names the environment's programs by path: nothing relies on an activated
    environment or on what PATH holds, and each line runs in a new shell."""
    first, *rest = quick_start()
    assert first == "python3 -m venv .venv"
    assert all(line.startswith(".venv/bin/") for line in rest), rest


def test_ci_runs_the_quick_start_as_written():
    """.ci/run runs the README's lines themselves, read from README.md: all but the CPU-only
    torch (CI builds the CUDA kernels, as the README says to leave it out for), then the two
    test lines, which between them run the whole suite."""
    listed = subprocess.run(
        ["bash", str(ROOT / ".ci" / "run"), "--list"], capture_output=True, text=True, cwd=ROOT
    )
    assert listed.returncode == 0, listed.stderr
    ran = [line.split(": ", 1) for line in listed.stdout.splitlines()]
    lines = quick_start()
    cpu_torch = [line for line in lines if CPU_INDEX in line]
    assert len(cpu_torch) == 1
    assert ran.pop(0) == ["left out (the CPU-only torch)", cpu_torch[0]]
    assert [line for _, line in ran] == [line for line in lines if line not in cpu_torch]
    tests = [line for kind, line in ran if kind == "tests"]
    assert [kind for kind, _ in ran] == ["set-up"] * (len(ran) - len(tests)) + ["tests"] * len(
        tests
    )
    markers = sorted(re.search(r' -m ("not build"|build)$', line)[1] for line in tests)
    assert markers == ['"not build"', "build"]


def test_the_cpu_only_torch_comes_from_the_index_pytorch_names():
    """pip cannot reach PyTorch's index from here, so those lines are not run: their index is
    the one the table of PyTorch's builds names for the CPU-only torch, and the package named
    for the first release is this project."""
    index = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "release" / "wheel_matrix.py"),
            "index",
            "2.15.0:cpu",
        ],
        capture_output=True,
        text=True,
    ).stdout.strip()
    assert f"--index-url {index}" == CPU_INDEX
    (line,) = [line for line in quick_start() if CPU_INDEX in line]
    assert (
        line.split("  #")[0] == f".venv/bin/pip install torch=={requirements_torch()} {CPU_INDEX}"
    )
    assert f"`pip install torch {CPU_INDEX}`" in README
    assert f"`pip install {PYPROJECT['project']['name']}`" in README


def test_every_extra_is_named():
    for extra in PYPROJECT["project"]["optional-dependencies"]:
        assert f"[{extra}]" in README, f"README never names the '{extra}' extra"


def test_every_test_marker_is_explained():
    for marker in PYPROJECT["tool"]["pytest"]["ini_options"]["markers"]:
        name = marker.split(":")[0]
        assert f"`{name}`" in README, f"README never explains the '{name}' test marker"
    assert '-m "not build"' in README


def test_the_light_cpu_torch_matches_the_development_requirements():
    cpu_installs = re.findall(r"pip install torch==(\S+) --index-url \S+/whl/cpu", README)
    assert cpu_installs == [requirements_torch()], "the CPU-only torch is the version they pin"


def test_the_dependency_advice_is_this_minor_series():
    (entry,) = [
        e
        for e in PYPROJECT["tool"]["dynamic-metadata"]
        if e["provider"]["module"] == "wheel_version"
    ]
    major, minor, _ = entry["version"].split(".")
    assert f"vecadd>={major}.{minor},<{major}.{int(minor) + 1}" in README
    assert f"find_package(vecadd {major}.{minor} CONFIG REQUIRED)" in README
