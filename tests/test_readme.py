"""The README keeps up with what it describes: its code blocks run (the Python ones on this
machine, the command lines against the installed vecadd; the quick start is run by .ci/run
and the CMake snippet is built by tests/test_cmake_package.py), it stays short, and it names
the extras, the test markers and the torch that the development requirements install."""

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
MAX_WORDS = 1000


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


def test_install_block_asks_for_what_exists():
    """pip reaches PyPI, so the install block is not run here; its CPU-only torch comes from
    the index the table of PyTorch's builds names, and its package is this project."""
    (install,) = [b for b in code_blocks("bash") if "pip install vecadd" in b]
    torch_line, vecadd_line = commands(install)
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
    assert torch_line == f"pip install torch --index-url {index}"
    assert vecadd_line == f"pip install {PYPROJECT['project']['name']}"


def test_the_quick_start_has_the_two_commands_ci_runs():
    section = README.split("## Quick start", 1)[1]
    (block,) = re.findall(r"^```bash\n(.*?)^```", section, re.M | re.S)[:1]
    assert len(commands(block)) == 2


def test_every_extra_is_named():
    for extra in PYPROJECT["project"]["optional-dependencies"]:
        assert f"[{extra}]" in README, f"README never names the '{extra}' extra"


def test_every_test_marker_is_explained():
    for marker in PYPROJECT["tool"]["pytest"]["ini_options"]["markers"]:
        name = marker.split(":")[0]
        assert f"`{name}`" in README, f"README never explains the '{name}' test marker"
    assert '-m "not build"' in README


def test_the_light_cpu_torch_matches_the_development_requirements():
    (pinned,) = re.findall(r"^torch==(\S+)$", (ROOT / "requirements-dev.txt").read_text(), re.M)
    cpu_installs = re.findall(r"pip install torch==(\S+) --index-url \S+/whl/cpu", README)
    assert cpu_installs == [pinned], "README's CPU-only torch must be the version requirements pin"


def test_the_dependency_advice_is_this_minor_series():
    (entry,) = [
        e
        for e in PYPROJECT["tool"]["dynamic-metadata"]
        if e["provider"]["module"] == "wheel_version"
    ]
    major, minor, _ = entry["version"].split(".")
    assert f"vecadd>={major}.{minor},<{major}.{int(minor) + 1}" in README
    assert f"find_package(vecadd {major}.{minor} CONFIG REQUIRED)" in README
