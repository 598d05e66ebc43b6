"""Gradients of vecadd.add and the VecAdd layer, also across dtypes (each input's gradient in its
own dtype, as torch.add gives it), complex alphas and under autocast."""

from __future__ import annotations

import pytest
import torch

import vecadd
from helpers import make_tensor, torch_abi


@pytest.mark.parametrize(
    ("x_shape", "y_shape"), [((4, 3), (4, 3)), ((4, 3), (3,)), ((1, 3), (5, 1)), ((), (2,))]
)
@pytest.mark.parametrize("alpha", [1, -2.5])
def test_gradcheck_and_gradgradcheck(device, x_shape, y_shape, alpha):
    x = make_tensor(x_shape, torch.float64, device, seed=1).requires_grad_()
    y = make_tensor(y_shape, torch.float64, device, seed=2).requires_grad_()
    assert torch.autograd.gradcheck(lambda a, b: vecadd.add(a, b, alpha=alpha), (x, y))
    assert torch.autograd.gradgradcheck(lambda a, b: vecadd.add(a, b, alpha=alpha), (x, y))


@pytest.mark.parametrize("alpha", [1, 3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_gradients_match_torch_add(device, dtype, alpha):
    x1 = make_tensor((5, 7), dtype, device, seed=3).requires_grad_()
    y1 = make_tensor((7,), dtype, device, seed=4).requires_grad_()
    x2 = x1.detach().clone().requires_grad_()
    y2 = y1.detach().clone().requires_grad_()
    grad = make_tensor((5, 7), dtype, device, seed=5)
    vecadd.add(x1, y1, alpha=alpha).backward(grad)
    torch.add(x2, y2, alpha=alpha).backward(grad)
    torch.testing.assert_close(x1.grad, x2.grad)
    torch.testing.assert_close(y1.grad, y2.grad)


MIXED = [
    (torch.float32, torch.bfloat16, 3),
    (torch.float16, torch.float64, -0.5),
    (torch.bfloat16, torch.float16, 1),
    (torch.complex64, torch.float32, 2 - 1j),  # a real input's gradient: the real part
    (torch.float64, torch.complex128, 0.5j),
    (torch.int64, torch.float32, 2),  # only the float input requires grad
]


@pytest.mark.parametrize(("x_dtype", "y_dtype", "alpha"), MIXED, ids=str)
def test_gradients_of_mixed_dtypes_match_torch_add(device, x_dtype, y_dtype, alpha):
    def leaf(shape, dtype, seed):
        tensor = make_tensor(shape, dtype, device, seed=seed)
        return tensor.requires_grad_(dtype.is_floating_point or dtype.is_complex)

    x1, y1 = leaf((5, 7), x_dtype, 3), leaf((7,), y_dtype, 4)
    x2, y2 = x1.detach().clone().requires_grad_(x1.requires_grad), y1.detach().clone()
    y2.requires_grad_(y1.requires_grad)
    ours, theirs = vecadd.add(x1, y1, alpha=alpha), torch.add(x2, y2, alpha=alpha)
    assert ours.dtype == theirs.dtype
    grad = make_tensor((5, 7), ours.dtype, device, seed=5)
    ours.backward(grad)
    theirs.backward(grad)
    for mine, reference in ((x1, x2), (y1, y2)):
        if not mine.requires_grad:
            assert mine.grad is None
            continue
        assert mine.grad.dtype == reference.grad.dtype == mine.dtype
        torch.testing.assert_close(mine.grad, reference.grad)


@pytest.mark.parametrize("alpha", [1, 2 - 1j, -0.5j])
def test_gradcheck_with_complex_inputs_and_alphas(device, alpha):
    x = make_tensor((4, 3), torch.complex128, device, seed=1).requires_grad_()
    y = make_tensor((3,), torch.complex128, device, seed=2).requires_grad_()
    real = make_tensor((4, 3), torch.float64, device, seed=3).requires_grad_()
    assert torch.autograd.gradcheck(lambda a, b: vecadd.add(a, b, alpha=alpha), (x, y))
    assert torch.autograd.gradgradcheck(lambda a, b: vecadd.add(a, b, alpha=alpha), (x, y))
    assert torch.autograd.gradcheck(lambda a, b: vecadd.add(a, b, alpha=alpha), (real, y))


def test_a_python_number_or_0_dim_tensor_gets_torch_adds_gradients(device):
    x = make_tensor((3, 4), torch.float32, device, seed=6).requires_grad_()
    scalar = torch.tensor(2.5, dtype=torch.float64, requires_grad=True)  # on the CPU
    result = vecadd.add(x, scalar, alpha=-2)
    assert result.dtype == torch.float32
    result.sum().backward()
    torch.testing.assert_close(x.grad, torch.ones_like(x))
    assert scalar.grad.dtype == torch.float64
    assert scalar.grad.item() == -2 * 12
    number_result = vecadd.add(3, x, alpha=0.5)
    number_result.sum().backward()
    torch.testing.assert_close(x.grad, torch.full_like(x, 1.5))


def test_a_residual_under_cpu_autocast_trains_as_with_torch_add():
    """A float32 stream and a bfloat16 branch (a Linear's output under autocast) summed: the
    same losses and gradients with vecadd.add as with torch.add, step after step."""

    def train(add_function):
        torch.manual_seed(0)
        model = torch.nn.Linear(8, 8)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.randn(16, 8)
        losses = []
        for _ in range(3):
            optimizer.zero_grad()
            with torch.autocast("cpu", dtype=torch.bfloat16):
                branch = model(x)
                assert branch.dtype == torch.bfloat16
                residual = add_function(x, branch, alpha=0.5)
            assert residual.dtype == torch.float32
            loss = residual.pow(2).mean()
            loss.backward()
            losses.append(loss.item())
            optimizer.step()
        return losses, model.weight.detach().clone()

    losses, weight = train(vecadd.add)
    reference_losses, reference_weight = train(torch.add)
    assert losses == reference_losses
    assert torch.equal(weight, reference_weight)


@pytest.mark.parametrize(("alpha", "stable_node"), [(1, "AddBackward"), (2, "AddScaledBackward")])
def test_only_the_inputs_that_require_grad_get_one(device, alpha, stable_node):
    x = make_tensor((3,), torch.float32, device, seed=6).requires_grad_()
    y = make_tensor((3,), torch.float32, device, seed=7)
    result = vecadd.add(x, y, alpha=alpha)
    assert result.requires_grad
    # The native build records its C++ node, the stable one its Python autograd.Function (one
    # for alpha = 1, one that keeps alpha); a direct torch.ops call in the stable build gets
    # the node of the op's own autograd.Function.
    expected = {"native": "vecadd::AddBackward", "stable": stable_node}
    assert result.grad_fn.name() == expected[torch_abi()]
    through_ops = torch.ops.vecadd.add(x, y, alpha=alpha)
    expected = {"native": "vecadd::AddBackward", "stable": "OperatorAddBackward"}
    assert through_ops.grad_fn.name() == expected[torch_abi()]
    torch.testing.assert_close(through_ops, result)
    result.sum().backward()
    torch.testing.assert_close(x.grad, torch.ones_like(x))
    assert y.grad is None


def test_no_graph_without_grad(device):
    x = make_tensor((3,), torch.float32, device, seed=8).requires_grad_()
    with torch.no_grad():
        result = vecadd.add(x, x)
    assert not result.requires_grad
    assert result.grad_fn is None
    assert not vecadd.add(x.detach(), x.detach()).requires_grad


def test_in_place_out_bumps_the_version_counter(device):
    x = make_tensor((3,), torch.float32, device, seed=9)
    out = torch.empty_like(x)
    version = out._version
    vecadd.add(x, x, out=out)
    assert out._version > version


def test_saved_output_modified_in_place_is_detected():
    x = torch.ones(3, requires_grad=True)
    hidden = x * 2
    squared = hidden.pow(2)  # saves `hidden` for backward
    with torch.no_grad():
        vecadd.add(hidden, hidden, out=hidden)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        squared.sum().backward()


def test_module_layer_trains(device):
    torch.manual_seed(0)
    layer = torch.nn.Linear(4, 4).to(device)
    add_layer = vecadd.VecAdd(alpha=0.5)
    x = torch.randn(8, 4, device=device)
    loss = add_layer(layer(x), x).pow(2).mean()
    loss.backward()
    reference = torch.nn.Linear(4, 4).to(device)
    reference.load_state_dict(layer.state_dict())
    torch.add(reference(x), x, alpha=0.5).pow(2).mean().backward()
    torch.testing.assert_close(layer.weight.grad, reference.weight.grad)
