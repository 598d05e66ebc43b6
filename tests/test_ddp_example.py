"""examples/ddp/train_ddp.py: two processes, DDP, vecadd.VecAdd against torch.add."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from helpers import free_port

SCRIPT = Path(__file__).resolve().parents[1] / "examples" / "ddp" / "train_ddp.py"

TWO_GPUS = pytest.mark.skipif(
    torch.cuda.device_count() < 2, reason="needs two CUDA GPUs; fewer are visible here"
)


@pytest.mark.parametrize(
    "device",
    [
        pytest.param("cpu", id="cpu-gloo"),
        pytest.param("cuda", id="cuda-nccl", marks=[pytest.mark.cuda, TWO_GPUS]),
    ],
)
def test_ddp_training_matches_torch_add_on_two_processes(device):
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc-per-node",
            "2",
            "--master-port",
            str(free_port()),
            str(SCRIPT),
            "--device",
            device,
            "--steps",
            "8",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NCCL_NVLS_ENABLE": "0"},
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert f"world size 2 on {device}" in ran.stdout
    assert "vecadd and torch.add runs agree in losses, gradients and weights" in ran.stdout
