"""Tensor, sequence and fully sharded data parallel training with vecadd, checked against torch.

A small transformer-style stack (no attention): each block is norm -> MLP -> a vecadd.VecAdd
residual, and a mixing block sums the residual stream and two MLP branches with
vecadd.add_n. It is trained twice from the same initial weights, once with vecadd and once with
torch.add in its place, under the same parallel plan; losses, gradients and final weights must
agree to rounding.

Plans (--plan):
  tp       tensor + sequence parallel on a 1-D mesh of every rank: the residual stream is a
           DTensor sharded along the sequence, so each residual add and the add_n mix run on
           aligned shards with no communication of their own
  fsdp     FSDP2 (fully_shard) on a 1-D mesh: vecadd computes on plain tensors
  fsdp-tp  a 2-D mesh (data parallel x tensor parallel): FSDP2 over the first dimension, tensor
           + sequence parallel over the second (4 ranks: 2 x 2)

    torchrun --nproc-per-node 2 examples/distributed/train_parallel.py --device cpu --plan tp
    torchrun --nproc-per-node 4 examples/distributed/train_parallel.py --device cpu --plan fsdp-tp
    # GPUs (NCCL; NVLink multicast stays off)
    NCCL_NVLS_ENABLE=0 torchrun --nproc-per-node 2 examples/distributed/train_parallel.py
"""

from __future__ import annotations

import argparse
import gc
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    RowwiseParallel,
    SequenceParallel,
    parallelize_module,
)

import vecadd

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")

WIDTH, HIDDEN, SEQUENCE, BATCH = 16, 32, 8, 4
MIX_WEIGHTS = [1.0, 0.5, -0.25]


def weighted_sum(use_vecadd: bool, tensors: list[torch.Tensor]) -> torch.Tensor:
    if use_vecadd:
        return vecadd.add_n(tensors, MIX_WEIGHTS)
    total = tensors[0]
    for tensor, weight in zip(tensors[1:], MIX_WEIGHTS[1:], strict=True):
        total = torch.add(total, tensor, alpha=weight)
    return total


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(WIDTH)
        self.up = torch.nn.Linear(WIDTH, HIDDEN)
        self.down = torch.nn.Linear(HIDDEN, WIDTH)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.down(F.gelu(self.up(self.norm(h))))


class ResidualBlock(torch.nn.Module):
    def __init__(self, use_vecadd: bool) -> None:
        super().__init__()
        self.mlp = Mlp()
        self.residual = vecadd.VecAdd() if use_vecadd else None  # None: torch.add

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        if self.residual is None:
            return torch.add(h, self.mlp(h))
        return self.residual(h, self.mlp(h))


class MixBlock(torch.nn.Module):
    """The residual stream and two branches, summed with weights in one pass."""

    def __init__(self, use_vecadd: bool) -> None:
        super().__init__()
        self.use_vecadd = use_vecadd
        self.first, self.second = Mlp(), Mlp()

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return weighted_sum(self.use_vecadd, [h, self.first(h), self.second(h)])


def make_model(use_vecadd: bool) -> torch.nn.Sequential:
    torch.manual_seed(0)  # identical weights for both runs and on every rank
    return torch.nn.Sequential(
        ResidualBlock(use_vecadd), MixBlock(use_vecadd), ResidualBlock(use_vecadd)
    )


def tensor_parallel(model: torch.nn.Sequential, mesh) -> None:
    """Sequence-parallel norms, column- then row-wise MLPs: each MLP's output is reduce-scattered
    back to sequence shards, the residual stream's placement, as a DTensor (Shard(1))."""
    mlp_plan = {
        "norm": SequenceParallel(),
        "up": ColwiseParallel(input_layouts=Shard(1)),
        "down": RowwiseParallel(output_layouts=Shard(1), use_local_output=False),
    }
    for module in model.modules():
        if isinstance(module, Mlp):
            parallelize_module(module, mesh, mlp_plan)


def build(use_vecadd: bool, plan: str, device: torch.device):
    model = make_model(use_vecadd).to(device)
    world = dist.get_world_size()
    if plan == "tp":
        mesh = init_device_mesh(device.type, (world,), mesh_dim_names=("tp",))
        tensor_parallel(model, mesh)
        return model, None, mesh
    if plan == "fsdp":
        mesh = init_device_mesh(device.type, (world,), mesh_dim_names=("dp",))
        for block in model:
            fully_shard(block, mesh=mesh)
        fully_shard(model, mesh=mesh)
        return model, mesh, None
    mesh = init_device_mesh(device.type, (2, world // 2), mesh_dim_names=("dp", "tp"))
    tensor_parallel(model, mesh["tp"])
    for block in model:
        fully_shard(block, mesh=mesh["dp"])
    fully_shard(model, mesh=mesh["dp"])
    return model, mesh["dp"], mesh["tp"]


def full(tensor: torch.Tensor) -> torch.Tensor:
    return (tensor.full_tensor() if isinstance(tensor, DTensor) else tensor).detach().cpu()


def train(use_vecadd: bool, plan: str, device: torch.device, steps: int):
    """Losses, every parameter's full gradient after each step, the final weights, and the
    kind of tensor the model's last residual add returned."""
    model, dp_mesh, tp_mesh = build(use_vecadd, plan, device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    # Ranks of one data-parallel group share a batch (fitted for every step); each group its own.
    group = dp_mesh.get_local_rank() if dp_mesh is not None else 0
    generator = torch.Generator().manual_seed(1000 + group)
    batch = torch.randn(BATCH, SEQUENCE, WIDTH, generator=generator).to(device)
    target = batch.flip(1).sin()
    losses, gradients = [], []
    for _ in range(steps):
        h = batch if tp_mesh is None else distribute_tensor(batch, tp_mesh, [Shard(1)])
        output = model(h)
        computed_on = f"{type(output).__name__} {list(getattr(output, 'placements', []))}"
        if isinstance(output, DTensor):  # sequence shards gathered for the loss
            output = output.redistribute(output.device_mesh, [Replicate()]).to_local()
        loss = F.mse_loss(output, target)
        optimizer.zero_grad()
        loss.backward()
        gradients.append([full(p.grad) for p in model.parameters()])
        optimizer.step()
        averaged = loss.detach().clone()
        dist.all_reduce(averaged)
        losses.append(averaged.item() / dist.get_world_size())
    return losses, gradients, [full(p) for p in model.parameters()], computed_on


def largest_difference(ours: list[torch.Tensor], theirs: list[torch.Tensor]) -> float:
    return max((a - b).abs().max().item() for a, b in zip(ours, theirs, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cuda")
    parser.add_argument("--plan", choices=["tp", "fsdp", "fsdp-tp"], default="tp")
    parser.add_argument("--steps", type=int, default=4)
    args = parser.parse_args()
    if args.device == "cuda":
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    dist.init_process_group("nccl" if args.device == "cuda" else "gloo")
    world = dist.get_world_size()
    if args.plan == "fsdp-tp" and world % 2:
        raise SystemExit(f"--plan fsdp-tp needs an even number of ranks, got {world}")

    vec_losses, vec_grads, vec_weights, computed_on = train(True, args.plan, device, args.steps)
    ref_losses, ref_grads, ref_weights, _ = train(False, args.plan, device, args.steps)

    loss_gap = max(abs(a - b) for a, b in zip(vec_losses, ref_losses, strict=True))
    grad_gap = max(largest_difference(a, b) for a, b in zip(vec_grads, ref_grads, strict=True))
    weight_gap = largest_difference(vec_weights, ref_weights)
    tolerance = 1e-5
    if dist.get_rank() == 0:
        print(f"world size {world} on {args.device}, plan {args.plan}")
        print(f"the last residual add's output: {computed_on}")
        print("losses (vecadd): " + " ".join(f"{v:.6f}" for v in vec_losses))
        print("losses (torch):  " + " ".join(f"{v:.6f}" for v in ref_losses))
        print(
            f"largest differences: loss {loss_gap:.3g}, gradients {grad_gap:.3g}, "
            f"weights {weight_gap:.3g}"
        )
    if max(loss_gap, grad_gap, weight_gap) > tolerance:
        raise SystemExit(f"vecadd and torch.add runs differ by more than {tolerance}")
    if vec_losses[-1] >= vec_losses[0]:
        raise SystemExit("the loss did not go down")
    if dist.get_rank() == 0:
        print("vecadd and torch.add runs agree in losses, gradients and weights")
    # The sharded models go while their process groups exist, and no rank leaves before the
    # others: a gloo group torn down under a straggler can abort the process at exit.
    gc.collect()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
