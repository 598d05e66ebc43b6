"""Property-based tests: random shapes, broadcast patterns, strides and dtypes (alike or mixed,
promoted as torch.add promotes them) against torch.add."""

from __future__ import annotations

import pytest
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
    """Two broadcastable tensors, each possibly a permuted, sliced or stepped view, of one dtype
    or (half the time) of two."""
    ndim = draw(st.integers(0, 4))
    shape = draw(st.lists(st.integers(0, 6), min_size=ndim, max_size=ndim))
    dtype = draw(st.sampled_from(vecadd.SUPPORTED_DTYPES))
    other_dtype = draw(st.sampled_from(vecadd.SUPPORTED_DTYPES)) if draw(st.booleans()) else dtype
    if torch.bfloat16 in (dtype, other_dtype) and (dtype.is_complex or other_dtype.is_complex):
        # A complex 0-dim operand beside bfloat16 ones asks for a complex bfloat16, in which
        # torch.add computes nothing (the refusal: test_torch_add_parity.py, test_errors.py).
        other_dtype = dtype

    def operand(seed: int, dtype: torch.dtype):
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
    x, y = operand(seed, dtype), operand(seed + 1, other_dtype)
    return x, y, torch.add(x, y).dtype  # the dtype the sum is computed in and returned as


def _exactly(tensor: torch.Tensor) -> torch.Tensor:
    if tensor.dtype.is_floating_point or tensor.dtype.is_complex:
        return tensor.to(torch.complex128)
    return tensor.to(torch.int64)


def _real_part(dtype: torch.dtype) -> torch.dtype:
    parts = {torch.complex32: torch.float16, torch.complex64: torch.float32}
    return parts.get(dtype, torch.float64 if dtype.is_complex else dtype)


def check(device: str, x: torch.Tensor, y: torch.Tensor, alpha) -> None:
    x, y = x.to(device), y.to(device)
    result = vecadd.add(x, y, alpha=alpha)
    if x.dtype == y.dtype:
        assert_matches_torch_add(result, x, y, alpha)  # `vecadd check`'s rule
        return
    # Mixed: torch.add's dtype, layout and device; its values where it computes exactly (alpha
    # 1, integer and bool sums), else within one rounding of the exact sum of the inputs as
    # converted to the sum's dtype (as torch.add and vecadd convert them).
    integral = not (result.dtype.is_floating_point or result.dtype.is_complex)
    torch_alpha = int(alpha) if integral and isinstance(alpha, float) else alpha
    expected = torch.add(x, y, alpha=torch_alpha)
    assert (result.dtype, result.device) == (expected.dtype, expected.device)
    assert result.shape == expected.shape
    assert result.stride() == expected.stride()
    if alpha == 1 or integral:
        torch.testing.assert_close(
            _exactly(result), _exactly(expected), rtol=0, atol=0, equal_nan=True
        )
        return
    converted = [_exactly(t.to(result.dtype)) for t in (x, y)]
    exact = converted[0] + alpha * converted[1]
    scale = converted[0].abs() + abs(alpha) * converted[1].abs()
    # One rounding bounds the error only where the exact sum is within the dtype's range.
    largest = torch.finfo(_real_part(result.dtype)).max
    finite = exact.isfinite() & (exact.real.abs() <= largest) & (exact.imag.abs() <= largest)
    # One rounding: a relative error of eps, or below the normal range an absolute one of the
    # subnormals' spacing (tiny * eps; twice that for the two parts of a complex number).
    real = torch.finfo(_real_part(result.dtype))
    subnormal = real.tiny * real.eps * (2 if result.dtype.is_complex else 1)
    beyond = ((_exactly(result) - exact).abs() - real.eps * scale - subnormal)[finite]
    assert not (beyond > 0).any(), f"error exceeds one rounding by up to {beyond.max().item()}"


@SETTINGS
@given(data=operands(), alpha=st.sampled_from([1, 1, 2, -3]))
def test_matches_torch_add(device, data, alpha):
    x, y, _ = data
    check(device, x, y, alpha)


@SETTINGS
@given(data=operands(), alpha=st.floats(-4, 4, allow_nan=False, width=32))
def test_float_alpha_within_one_rounding(device, data, alpha):
    x, y, dtype = data
    if not (dtype.is_floating_point or dtype.is_complex):
        return
    check(device, x, y, alpha)


@SETTINGS
@given(
    data=operands(),
    alpha=st.complex_numbers(max_magnitude=4, allow_nan=False, allow_infinity=False, width=64),
)
def test_complex_alpha_within_one_rounding(device, data, alpha):
    x, y, dtype = data
    if not dtype.is_complex:
        return
    check(device, x, y, alpha)


@SETTINGS
@given(data=operands(), out_dtype=st.sampled_from(vecadd.SUPPORTED_DTYPES))
def test_out_matches_the_functional_result_cast(device, data, out_dtype):
    x, y, dtype = data
    x, y = x.to(device), y.to(device)
    expected = vecadd.add(x, y)
    out = torch.empty_like(expected, dtype=out_dtype).fill_(7)
    if not torch.can_cast(dtype, out_dtype):
        refused = rf"out has dtype {out_dtype} but the sum of x and y is {dtype}, which torch"
        with pytest.raises(TypeError, match=refused):
            vecadd.add(x, y, out=out)
        return
    assert vecadd.add(x, y, out=out) is out
    torch.testing.assert_close(
        _exactly(out), _exactly(expected.to(out_dtype)), rtol=0, atol=0, equal_nan=True
    )
