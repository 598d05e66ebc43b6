"""The README keeps up with what it describes: the extras, the test markers and the torch
that the development requirements install."""

from __future__ import annotations

import re

import pytest

from helpers import ROOT

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

README = (ROOT / "README.md").read_text()
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


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
