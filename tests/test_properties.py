"""Property-based tests: random shapes, broadcast patterns, strides and dtypes against torch.add."""

from __future__ import annotations

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vecadd
from helpers import assert_matches_torch_add, make_tensor

# `device` is conftest's cpu / cuda fixture, the same for every example of a test.
SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@st.composite
def operands(draw):
    """Two broadcastable tensors, each possibly a permuted, sliced or stepped view."""
    ndim = draw(st.integers(0, 4))
    shape = draw(st.lists(st.integers(0, 6), min_size=ndim, max_size=ndim))
    dtype = draw(st.sampled_from(vecadd.SUPPORTED_DTYPES))

    def operand(seed: int):
        # Broadcast: drop leading dimensions and set some sizes to 1.
        keep = draw(st.integers(0, ndim))
        sizes = [
            1 if draw(st.booleans()) and draw(st.booleans()) else s for s in shape[ndim - keep :]
        ]
        step = draw(st.integers(1, 3))
        offset = draw(st.integers(0, 2))
        base_sizes = [s * step + offset for s in sizes]
        base = make_tensor(tuple(base_sizes), dtype, "cpu", seed=seed)
        view = base[tuple(slice(offset, offset + s * step, step) for s in sizes)]
        if view.dim() > 1 and draw(st.booleans()):
            order = draw(st.permutations(range(view.dim())))
            # Same shape, other memory order: materialize permuted, then permute back.
            inverse = [order.index(d) for d in range(view.dim())]
            view = view.permute(*order).contiguous().permute(*inverse)
        return view

    seed = draw(st.integers(0, 2**16))
    return operand(seed), operand(seed + 1), dtype


def check(device: str, x: torch.Tensor, y: torch.Tensor, alpha) -> None:
    x, y = x.to(device), y.to(device)
    assert_matches_torch_add(vecadd.add(x, y, alpha=alpha), x, y, alpha)


@SETTINGS
@given(data=operands(), alpha=st.sampled_from([1, 1, 2, -3]))
def test_matches_torch_add(device, data, alpha):
    x, y, _ = data
    check(device, x, y, alpha)


@SETTINGS
@given(data=operands(), alpha=st.floats(-4, 4, allow_nan=False, width=32))
def test_float_alpha_within_one_rounding(device, data, alpha):
    x, y, dtype = data
    if not dtype.is_floating_point:
        return
    check(device, x, y, alpha)


@SETTINGS
@given(data=operands())
def test_out_matches_the_functional_result(device, data):
    x, y, _ = data
    x, y = x.to(device), y.to(device)
    expected = vecadd.add(x, y)
    out = torch.empty_like(expected).fill_(7)
    assert vecadd.add(x, y, out=out) is out
    torch.testing.assert_close(out, expected, rtol=0, atol=0, equal_nan=True)
