"""examples/downstream, a separate package built on vecadd, builds and passes its tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import pip_install_into

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "downstream"
pytestmark = pytest.mark.build


def test_downstream_example_builds_and_passes(tmp_path):
    site = tmp_path / "site"
    pip_install_into(site, EXAMPLE, tmp_path / "build")
    environment = dict(os.environ, PYTHONPATH=str(site))
    tested = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE / "tests")],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "passed" in tested.stdout
    assert "failed" not in tested.stdout
