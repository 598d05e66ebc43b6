"""examples/downstream, a separate package built on vecadd, builds and passes its tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "downstream"
pytestmark = pytest.mark.build


def test_downstream_example_builds_and_passes(tmp_path):
    site = tmp_path / "site"
    installed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-build-isolation",
            "--no-deps",
            "-q",
            "--target",
            str(site),
            str(EXAMPLE),
            "-C",
            f"build-dir={tmp_path / 'build'}",
        ],
        capture_output=True,
        text=True,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
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
