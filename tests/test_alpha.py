"""alpha at the edges of each dtype: the 16-bit floats compute with alpha in float (never
rounded to 16 bits first), and an alpha the compute type cannot hold is an error naming it."""

from __future__ import annotations

import math

import pytest
import torch

import vecadd
from helpers import op_error

FLOAT32_MAX = torch.finfo(torch.float32).max
COMPUTED_IN_FLOAT32 = (torch.float16, torch.bfloat16, torch.float32)


def computed_in_float_rounded_once(x, y, alpha, dtype):
    compute = torch.float64 if dtype == torch.float64 else torch.float32
    return (x.to(compute) + torch.tensor(alpha, dtype=compute) * y.to(compute)).to(dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_16_bit_floats_take_alpha_beyond_their_own_range(device, dtype):
    zeros = torch.zeros(8, dtype=dtype, device=device)
    assert torch.equal(vecadd.add(zeros, zeros, alpha=1e5), zeros)  # was nan for float16
    x = torch.zeros(1000, dtype=dtype, device=device)
    y = torch.full((1000,), 1e-3, dtype=dtype, device=device)
    result = vecadd.add(x, y, alpha=7e4)
    expected = computed_in_float_rounded_once(x, y, 7e4, dtype)
    assert torch.equal(result, expected)
    if dtype == torch.float16:
        assert result[0].item() == 70.0  # 1e-3 in float16 times 7e4, rounded once (was inf)


@pytest.mark.parametrize("dtype", [*COMPUTED_IN_FLOAT32, torch.float64])
@pytest.mark.parametrize(
    "alpha", [FLOAT32_MAX, -FLOAT32_MAX, math.inf, -math.inf, math.nan, 2.0**24, 1.0 / 3]
)
def test_float_alphas_the_compute_type_holds(device, dtype, alpha):
    x = torch.linspace(-2, 2, 513, dtype=torch.float64).to(device=device, dtype=dtype)
    y = torch.linspace(3, -1, 513, dtype=torch.float64).to(device=device, dtype=dtype)
    expected = computed_in_float_rounded_once(x, y, alpha, dtype)
    result = vecadd.add(x, y, alpha=alpha)
    if alpha == 1.0 / 3:  # finite products may fuse or not: within one rounding
        torch.testing.assert_close(result, expected, equal_nan=True)
    else:
        torch.testing.assert_close(result, expected, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", COMPUTED_IN_FLOAT32)
@pytest.mark.parametrize("alpha", [1e300, -1e39, 2 * FLOAT32_MAX])
def test_alpha_beyond_float32_is_refused_by_name(device, dtype, alpha):
    x = torch.ones(4, dtype=dtype, device=device)
    with pytest.raises(ValueError, match=r"argument 'alpha' is .*compute in float32"):
        vecadd.add(x, x, alpha=alpha)
    with pytest.raises(op_error(ValueError), match=r"argument 'alpha'"):
        torch.ops.vecadd.add(x, x, alpha=alpha)


def test_float64_takes_any_double_alpha(device):
    x = torch.ones(4, dtype=torch.float64, device=device)
    assert torch.equal(vecadd.add(x, x, alpha=1e300), torch.full_like(x, 1e300))


@pytest.mark.parametrize(
    ("dtype", "alpha"),
    [
        (torch.int32, 2**31 - 1),
        (torch.int32, -(2**31)),
        (torch.int32, float(2**31 - 1)),
        (torch.int64, 2**62 + 2**10),  # beyond 2^53, but a float holds it exactly
        (torch.int64, -(2**63)),
        (torch.int64, 2.0**53),  # the largest double up to which every integer is exact
        (torch.int64, -(2.0**63)),
    ],
)
def test_integer_alphas_at_the_edges_wrap_like_torch(device, dtype, alpha):
    x = torch.arange(-50, 50, dtype=dtype, device=device)
    y = torch.arange(100, 0, -1, dtype=dtype, device=device)
    assert torch.equal(vecadd.add(x, y, alpha=alpha), torch.add(x, y, alpha=int(alpha)))


@pytest.mark.parametrize("alpha", [2**53 + 1, 2**63 - 1, -(2**63) + 1])
def test_integer_alpha_a_float_cannot_hold_is_refused_by_name(device, alpha):
    # The schema takes alpha as a float (the stable ABI has no Scalar): an int that would
    # change on the way is an error, not a silently different alpha.
    x = torch.ones(4, dtype=torch.int64, device=device)
    with pytest.raises(ValueError, match=rf"argument 'alpha' is {alpha}, which a float cannot"):
        vecadd.add(x, x, alpha=alpha)


@pytest.mark.parametrize(
    ("dtype", "alpha", "bounds"),
    [
        (torch.int32, 2**31, "from -2147483648 to 2147483647"),
        (torch.int32, -(2**31) - 1, "from -2147483648 to 2147483647"),
        (torch.int32, 2.0**40, "from -2147483648 to 2147483647"),
        (torch.int64, 2.0**63, "from -9223372036854775808 to 9223372036854775807"),
        (torch.int64, -(2.0**64), "from -9223372036854775808 to 9223372036854775807"),
        (torch.int64, 2**70, "from -9223372036854775808 to 9223372036854775807"),
    ],
)
def test_integer_alpha_out_of_range_is_refused_by_name(device, dtype, alpha, bounds):
    x = torch.ones(4, dtype=dtype, device=device)
    with pytest.raises(ValueError, match=rf"argument 'alpha' is .*{dtype}.*{bounds}"):
        vecadd.add(x, x, alpha=alpha)


@pytest.mark.parametrize("alpha", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
@pytest.mark.parametrize("out", [False, True], ids=["new", "out"])
def test_a_bool_alpha_is_refused_as_torch_add_refuses_it(device, dtype, alpha, out):
    """torch.add takes a bool alpha only for bool tensors, a dtype vecadd does not support."""
    x = torch.ones(3, dtype=dtype, device=device)
    with pytest.raises(RuntimeError):
        torch.add(x, x, alpha=alpha)
    keyword = {"out": torch.empty_like(x)} if out else {}
    refused = rf"argument 'alpha' is a bool \({alpha}\); expected an int"
    with pytest.raises(TypeError, match=refused):
        vecadd.add(x, x, alpha=alpha, **keyword)
    with pytest.raises(TypeError, match=rf"VecAdd\(\): argument 'alpha' is a bool \({alpha}\)"):
        vecadd.VecAdd(alpha=alpha)
