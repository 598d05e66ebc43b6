"""examples/distributed/train_parallel.py on CPU processes (gloo): tensor + sequence parallel
on two ranks, FSDP2 on two, and FSDP2 x tensor parallel on a 2 x 2 mesh, each against the same
model with torch.add."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from helpers import free_port

SCRIPT = Path(__file__).resolve().parents[1] / "examples" / "distributed" / "train_parallel.py"


def run_example(ranks: int, device: str, plan: str) -> str:
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc-per-node",
            str(ranks),
            "--master-port",
            str(free_port()),
            str(SCRIPT),
            *("--device", device, "--plan", plan),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NCCL_NVLS_ENABLE": "0"},
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr[-4000:]
    assert f"world size {ranks} on {device}, plan {plan}" in ran.stdout
    assert "vecadd and torch.add runs agree in losses, gradients and weights" in ran.stdout
    return ran.stdout


@pytest.mark.parametrize(
    ("ranks", "plan", "computed_on"),
    [
        pytest.param(2, "tp", "DTensor [Shard(dim=1)]", id="tensor-sequence-parallel"),
        pytest.param(2, "fsdp", "Tensor []", id="fsdp2"),
        pytest.param(4, "fsdp-tp", "DTensor [Shard(dim=1)]", id="fsdp2-x-tensor-parallel"),
    ],
)
def test_parallel_training_matches_torch_add_on_cpu(ranks, plan, computed_on):
    printed = run_example(ranks, "cpu", plan)
    assert f"the last residual add's output: {computed_on}" in printed


@pytest.mark.cuda
@pytest.mark.skipif(
    torch.cuda.device_count() < 2, reason="needs two CUDA GPUs; fewer are visible here"
)
@pytest.mark.parametrize("plan", ["tp", "fsdp"])
def test_parallel_training_matches_torch_add_on_two_gpus(plan):
    run_example(2, "cuda", plan)
