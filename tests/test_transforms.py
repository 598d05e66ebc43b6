"""torch.func transforms and forward-mode AD through vecadd.add and torch.ops.vecadd.add: the
same gradients, tangents, Jacobians and batches as torch.add, or a refusal that says why."""

from __future__ import annotations

import pytest
import torch
import torch.autograd.forward_ad as forward_ad
from torch import func

import vecadd
from helpers import make_tensor, torch_abi

ALPHAS = [1, -2.5]
# (x, y): broadcasting both ways, so that every gradient is summed back and every tangent
# is expanded to the result's shape.
SHAPES = [((2, 3), (3,)), ((1, 3), (4, 1))]


def vecadd_add(x, y, alpha):
    return vecadd.add(x, y, alpha=alpha)


def ops_add(x, y, alpha):
    return torch.ops.vecadd.add(x, y, alpha=alpha)


def torch_add(x, y, alpha):
    return torch.add(x, y, alpha=alpha)


def operands(device, x_shape, y_shape):
    x = make_tensor(x_shape, torch.float64, device, seed=1)
    y = make_tensor(y_shape, torch.float64, device, seed=2)
    return x, y


def squared_sum(add, alpha):
    return lambda x, y: add(x, y, alpha).pow(2).sum()


TRANSFORMS = {
    "grad": lambda add, x, y, a: func.grad(squared_sum(add, a), argnums=(0, 1))(x, y),
    "vjp": lambda add, x, y, a: func.vjp(lambda p, q: add(p, q, a), x, y)[1](
        torch.ones(torch.broadcast_shapes(x.shape, y.shape), dtype=x.dtype, device=x.device)
    ),
    "jacrev": lambda add, x, y, a: func.jacrev(lambda p, q: add(p, q, a), argnums=(0, 1))(x, y),
    "jvp": lambda add, x, y, a: func.jvp(
        lambda p, q: add(p, q, a), (x, y), (torch.ones_like(x), torch.full_like(y, 0.5))
    ),
    "jacfwd": lambda add, x, y, a: func.jacfwd(lambda p, q: add(p, q, a), argnums=(0, 1))(x, y),
    "hessian": lambda add, x, y, a: func.hessian(squared_sum(add, a), argnums=1)(x, y),
    "vmap(grad)": lambda add, x, y, a: func.vmap(func.grad(squared_sum(add, a)), in_dims=(0, None))(
        torch.stack([x, 2 * x]), y
    ),
    "grad(vmap)": lambda add, x, y, a: func.grad(
        lambda p: func.vmap(lambda row: add(row, y, a))(p).pow(2).sum()
    )(torch.stack([x, 2 * x])),
}
# Transforms that need no autograd of the op: vmap alone runs the kernels slice by slice.
WITHOUT_AUTOGRAD = {
    "vmap": lambda add, x, y, a: func.vmap(lambda p: add(p, y, a))(torch.stack([x, 2 * x])),
}


def dual_tangent(add, x, y, alpha):
    with forward_ad.dual_level():
        x_dual = forward_ad.make_dual(x, torch.ones_like(x))
        y_dual = forward_ad.make_dual(y, torch.full_like(y, 0.5))
        return forward_ad.unpack_dual(add(x_dual, y_dual, alpha)).tangent


def assert_same(got, expected) -> None:
    torch.testing.assert_close(got, expected)  # float64's default tolerances


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize(("x_shape", "y_shape"), SHAPES)
@pytest.mark.parametrize("alpha", ALPHAS)
def test_vecadd_add_under_torch_func_matches_torch_add(device, transform, x_shape, y_shape, alpha):
    x, y = operands(device, x_shape, y_shape)
    run = TRANSFORMS[transform]
    assert_same(run(vecadd_add, x, y, alpha), run(torch_add, x, y, alpha))


# Operands torch.add promotes: another dtype (y's gradient and tangent in y's dtype), a Python
# number, a complex y with a complex alpha.
PROMOTED = {
    "float64 + float32": lambda x, y: (x, y.float(), -2.5),
    "float32 + float64": lambda x, y: (x.float(), y, 2),
    "float64 + a number": lambda x, y: (x, 1.5, -2.5),
    "float64 + complex128": lambda x, y: (x, torch.complex(y, -y), 2 - 1j),
}


def promoted_transforms(add, x, y, alpha) -> list[torch.Tensor]:
    """grad of a real loss, jvp and vmap through add, over the tensors among x and y."""
    tensors = [t for t in (x, y) if isinstance(t, torch.Tensor)]

    def call(*inputs):
        return add(*inputs, alpha) if len(inputs) == 2 else add(inputs[0], y, alpha)

    def loss(*inputs):
        return call(*inputs).abs().pow(2).sum()

    grads = func.grad(loss, argnums=tuple(range(len(tensors))))(*tensors)
    tangents = tuple(torch.ones_like(t) for t in tensors)
    value, tangent = func.jvp(call, tuple(tensors), tangents)
    batched = func.vmap(lambda row: call(row, *tensors[1:]))(torch.stack([x, 2 * x]))
    return [*grads, value, tangent, batched]


@pytest.mark.parametrize("case", PROMOTED)
def test_promoted_operands_under_torch_func_match_torch_add(device, case):
    x, y, alpha = PROMOTED[case](*operands(device, *SHAPES[0]))
    got = promoted_transforms(vecadd_add, x, y, alpha)
    expected = promoted_transforms(torch_add, x, y, alpha)
    for mine, theirs in zip(got, expected, strict=True):
        assert mine.dtype == theirs.dtype
        torch.testing.assert_close(mine, theirs)


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("alpha", ALPHAS)
def test_the_operator_under_torch_func(device, transform, alpha):
    x, y = operands(device, *SHAPES[0])
    run = TRANSFORMS[transform]
    if torch_abi() == "native":
        assert_same(run(ops_add, x, y, alpha), run(torch_add, x, y, alpha))
        return
    # The stable build's op has Python autograd, which torch.func cannot enter: a refusal
    # that names the way that works, never a silent zero gradient or tangent.
    with pytest.raises(RuntimeError, match=r"torch\.func transforms.*expected vecadd\.add"):
        run(ops_add, x, y, alpha)


@pytest.mark.parametrize("add", [vecadd_add, ops_add], ids=["vecadd.add", "torch.ops"])
@pytest.mark.parametrize("alpha", ALPHAS)
def test_the_operator_without_autograd_under_vmap(device, add, alpha):
    x, y = operands(device, *SHAPES[1])
    run = WITHOUT_AUTOGRAD["vmap"]
    assert_same(run(add, x, y, alpha), run(torch_add, x, y, alpha))


@pytest.mark.parametrize("add", [vecadd_add, ops_add], ids=["vecadd.add", "torch.ops"])
@pytest.mark.parametrize(("x_shape", "y_shape"), SHAPES)
@pytest.mark.parametrize("alpha", ALPHAS)
def test_forward_mode_tangent_matches_torch_add(device, add, x_shape, y_shape, alpha):
    x, y = operands(device, x_shape, y_shape)
    tangent = dual_tangent(add, x, y, alpha)
    assert tangent is not None, "the tangent was dropped"
    assert_same(tangent, dual_tangent(torch_add, x, y, alpha))


def test_forward_mode_with_one_tangent(device):
    x, y = operands(device, *SHAPES[0])
    with forward_ad.dual_level():
        got = vecadd.add(x, forward_ad.make_dual(y, torch.ones_like(y)), alpha=3)
        expected = torch.add(x, forward_ad.make_dual(y, torch.ones_like(y)), alpha=3)
        assert_same(forward_ad.unpack_dual(got).tangent, forward_ad.unpack_dual(expected).tangent)


@pytest.mark.parametrize("dual_argument", ["x", "y", "out"])
def test_out_with_a_tangent_is_refused(device, dual_argument):
    x, y = operands(device, *SHAPES[0])
    out = torch.empty(2, 3, dtype=torch.float64, device=device)
    with forward_ad.dual_level():
        arguments = {"x": x, "y": y, "out": out}
        arguments[dual_argument] = forward_ad.make_dual(
            arguments[dual_argument], torch.ones_like(arguments[dual_argument])
        )
        with pytest.raises(RuntimeError, match="out= cannot be used with forward-mode AD"):
            vecadd.add(arguments["x"], arguments["y"], out=arguments["out"])
