"""Data-parallel training with vecadd.VecAdd inside a model, checked against torch.add.

Each process trains the same small residual network twice from the same initial
weights, once with vecadd.VecAdd and once with torch.add in its place, wrapped in
DistributedDataParallel; losses, the all-reduced gradients of every step and the final
weights must agree to rounding.

    # two GPUs (NCCL; NVLink multicast stays off)
    NCCL_NVLS_ENABLE=0 torchrun --nproc-per-node 2 examples/ddp/train_ddp.py
    # anywhere, on the CPU (gloo)
    torchrun --nproc-per-node 2 examples/ddp/train_ddp.py --device cpu
"""

from __future__ import annotations

import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import vecadd

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")


class ResidualBlock(torch.nn.Module):
    def __init__(self, width: int, add: torch.nn.Module) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(width, width)
        self.add = add

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.add(torch.tanh(self.linear(x)), x)


class TorchAdd(torch.nn.Module):
    def __init__(self, alpha: float) -> None:
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.add(x, y, alpha=self.alpha)


def make_model(use_vecadd: bool, width: int, depth: int) -> torch.nn.Module:
    torch.manual_seed(0)  # identical weights for both runs and on every rank
    blocks = [
        ResidualBlock(width, vecadd.VecAdd(alpha=0.5) if use_vecadd else TorchAdd(0.5))
        for _ in range(depth)
    ]
    return torch.nn.Sequential(*blocks, torch.nn.Linear(width, 1))


def train(
    use_vecadd: bool, device: torch.device, steps: int, width: int
) -> tuple[list[float], list[list[torch.Tensor]], list[torch.Tensor]]:
    """Losses (averaged over ranks), gradients after each all-reduce, and final weights."""
    model = make_model(use_vecadd, width, depth=3).to(device)
    ddp = DistributedDataParallel(
        model, device_ids=[device.index] if device.type == "cuda" else None
    )
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05)
    generator = torch.Generator().manual_seed(1000 + dist.get_rank())  # each rank its own shard
    losses = []
    gradients = []
    for _ in range(steps):
        x = torch.randn(64, width, generator=generator).to(device)
        target = x.sum(dim=1, keepdim=True).sin()
        loss = torch.nn.functional.mse_loss(ddp(x), target)
        optimizer.zero_grad()
        loss.backward()
        gradients.append([p.grad.detach().cpu().clone() for p in model.parameters()])
        optimizer.step()
        averaged = loss.detach().clone()
        dist.all_reduce(averaged)
        losses.append(averaged.item() / dist.get_world_size())
    return losses, gradients, [p.detach().cpu() for p in model.parameters()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--width", type=int, default=32)
    args = parser.parse_args()
    use_cuda = args.device == "cuda"
    dist.init_process_group("nccl" if use_cuda else "gloo")
    rank = dist.get_rank()
    device = (
        torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
        if use_cuda
        else torch.device("cpu")
    )
    if use_cuda:
        torch.cuda.set_device(device)
    ours_losses, ours_gradients, ours_weights = train(True, device, args.steps, args.width)
    ref_losses, ref_gradients, ref_weights = train(False, device, args.steps, args.width)
    torch.testing.assert_close(torch.tensor(ours_losses), torch.tensor(ref_losses))
    for step, (mine, reference) in enumerate(zip(ours_gradients, ref_gradients, strict=True)):
        for ours, theirs in zip(mine, reference, strict=True):
            torch.testing.assert_close(ours, theirs, msg=lambda m, step=step: f"step {step}: {m}")
    for mine, reference in zip(ours_weights, ref_weights, strict=True):
        torch.testing.assert_close(mine, reference)
    if rank == 0:
        worst = max(abs(a - b) for a, b in zip(ours_losses, ref_losses, strict=True))
        print(
            f"world size {dist.get_world_size()} on {device.type}: losses "
            f"{ours_losses[0]:.5f} -> {ours_losses[-1]:.5f}; vecadd and torch.add runs agree "
            f"in losses, gradients and weights (max loss difference {worst:.2e})"
        )
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
