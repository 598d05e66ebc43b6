"""examples/ddp/train_ddp.py: two processes, DDP, vecadd.VecAdd against torch.add (CPU, gloo)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "examples" / "ddp" / "train_ddp.py"


def test_ddp_training_matches_torch_add_on_two_cpu_processes():
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc-per-node",
            "2",
            "--master-port",
            "29517",
            str(SCRIPT),
            "--device",
            "cpu",
            "--steps",
            "8",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "world size 2 on cpu" in ran.stdout
    assert "vecadd and torch.add runs agree" in ran.stdout
