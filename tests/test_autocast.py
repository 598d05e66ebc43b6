"""Mixed precision as people train with it: a pre-norm block stack under torch.autocast, its
residual stream in float32 and each branch's output in the autocast dtype (a Linear's), trained
with vecadd.add (and add_n for a branch mix) where the model would call torch.add, gives the
losses and gradients it gives with torch.add."""

from __future__ import annotations

import pytest
import torch

import vecadd

CASES = [
    pytest.param("cpu", torch.bfloat16, id="cpu-bfloat16"),
    pytest.param("cuda", torch.bfloat16, id="cuda-bfloat16", marks=pytest.mark.cuda),
    pytest.param("cuda", torch.float16, id="cuda-float16", marks=pytest.mark.cuda),
]


class Block(torch.nn.Module):
    """x + mlp(norm(x)), and a second branch mixed in with a weight: the adds of a transformer
    block, written with `add` and `add_n`."""

    def __init__(self, width: int, add, add_n) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, 2 * width)
        self.down = torch.nn.Linear(2 * width, width)
        self.gate = torch.nn.Linear(width, width)
        self.add, self.add_n = add, add_n

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        branch = self.down(torch.nn.functional.gelu(self.up(self.norm(x))))
        x = self.add(x, branch)  # float32 stream + autocast-dtype branch
        return self.add_n([x, self.gate(x), branch], [1.0, 0.5, -0.25])


def torch_add_n(tensors, weights):
    """add_n as the chain of torch.add it replaces."""
    total = tensors[0] * weights[0]
    for tensor, weight in zip(tensors[1:], weights[1:], strict=True):
        total = torch.add(total, tensor, alpha=weight)
    return total


def train(model: torch.nn.Module, inputs: torch.Tensor, dtype: torch.dtype, steps: int = 3):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses, gradients = [], []
    for _ in range(steps):
        optimizer.zero_grad()
        with torch.autocast(inputs.device.type, dtype=dtype):
            output = model(inputs)
        assert output.dtype == torch.float32  # the stream stays float32 through every add
        loss = output.float().square().mean()
        loss.backward()
        losses.append(loss.detach())
        gradients.append([p.grad.clone() for p in model.parameters()])
        optimizer.step()
    return losses, gradients


@pytest.mark.parametrize(("device", "dtype"), CASES)
def test_training_under_autocast_matches_torch_add(device, dtype):
    torch.manual_seed(0)
    width = 64
    theirs = torch.nn.Sequential(*(Block(width, torch.add, torch_add_n) for _ in range(2)))
    ours = torch.nn.Sequential(*(Block(width, vecadd.add, vecadd.add_n) for _ in range(2)))
    ours.load_state_dict(theirs.state_dict())
    theirs.to(device), ours.to(device)
    inputs = torch.randn(8, 16, width, device=device)
    their_losses, their_gradients = train(theirs, inputs, dtype)
    our_losses, our_gradients = train(ours, inputs, dtype)
    # add is torch.add bit for bit; add_n rounds its sum once where the chain rounds each step.
    torch.testing.assert_close(our_losses, their_losses, rtol=1e-5, atol=0)
    for ours_step, theirs_step in zip(our_gradients, their_gradients, strict=True):
        for our_gradient, their_gradient in zip(ours_step, theirs_step, strict=True):
            assert our_gradient.dtype == their_gradient.dtype
            torch.testing.assert_close(our_gradient, their_gradient, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize(("device", "dtype"), CASES)
def test_each_input_of_a_mixed_add_gets_its_gradient_in_its_own_dtype(device, dtype):
    stream = torch.randn(4, 8, device=device, requires_grad=True)
    branch = torch.randn(4, 8, device=device).to(dtype).requires_grad_()
    result = vecadd.add(stream, branch, alpha=0.5)
    expected = torch.add(stream.detach(), branch.detach(), alpha=0.5)
    assert result.dtype == torch.float32
    torch.testing.assert_close(result, expected, rtol=0, atol=0)
    result.backward(torch.ones_like(result))
    assert (stream.grad.dtype, branch.grad.dtype) == (torch.float32, dtype)
    torch.testing.assert_close(stream.grad, torch.ones_like(stream))
    torch.testing.assert_close(branch.grad, torch.full_like(branch, 0.5))
