"""alpha at the edges of each dtype: the 16-bit floats compute with alpha in float (never
rounded to 16 bits first), an alpha the compute type cannot hold is an error naming it, and a
bool or complex alpha is taken where torch.add takes it (a bool or complex sum) and refused in
words where torch.add refuses it."""

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


@pytest.mark.parametrize("dtype", [*COMPUTED_IN_FLOAT32, torch.complex32, torch.complex64])
@pytest.mark.parametrize("alpha", [1e300, -1e39, 2 * FLOAT32_MAX])
def test_alpha_beyond_float32_is_refused_by_name(device, dtype, alpha):
    x = torch.ones(4, dtype=dtype, device=device)
    with pytest.raises(ValueError, match=r"argument 'alpha' is .*compute in float32"):
        vecadd.add(x, x, alpha=alpha)
    with pytest.raises(op_error(ValueError, device), match=r"argument 'alpha'"):
        torch.ops.vecadd.add(x, x, alpha=alpha)


@pytest.mark.parametrize("dtype", [torch.complex32, torch.complex64])
@pytest.mark.parametrize("alpha", [1e39j, 1 - 1e300j, 2 * FLOAT32_MAX * 1j])
def test_an_imaginary_part_beyond_float32_is_refused_by_name(device, dtype, alpha):
    x = torch.ones(4, dtype=dtype, device=device)
    with pytest.raises(ValueError) as raised:
        vecadd.add(x, x, alpha=alpha)
    assert str(raised.value).startswith(f"vecadd.add(): argument 'alpha' is ({alpha.real:.0f}")
    assert str(raised.value).endswith(
        f"but x and y have dtype {dtype}, which compute in float32, so expected a magnitude of "
        "at most 3.4028234663852886e+38 (or inf or nan)"
    )


@pytest.mark.parametrize("dtype", [torch.complex32, torch.complex64, torch.complex128])
@pytest.mark.parametrize("alpha", [2 - 1j, 0.5j, -3, 1.25])
def test_complex_sums_take_complex_alphas(device, dtype, alpha):
    x = torch.complex(torch.linspace(-2, 2, 65), torch.linspace(1, -1, 65)).to(device, dtype)
    y = torch.complex(torch.linspace(3, -1, 65), torch.linspace(-2, 2, 65)).to(device, dtype)
    result = vecadd.add(x, y, alpha=alpha)
    assert result.dtype == dtype
    compute = torch.complex128 if dtype == torch.complex128 else torch.complex64
    expected = (x.to(compute) + alpha * y.to(compute)).to(torch.complex128)
    # The product may fuse or not: within one rounding of the compute type, then the dtype's.
    tolerance = 2 * torch.finfo(torch.float16 if dtype == torch.complex32 else torch.float32).eps
    torch.testing.assert_close(
        result.to(torch.complex128), expected, rtol=tolerance, atol=tolerance
    )


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
        (torch.int16, 2**15 - 1),
        (torch.int16, -(2**15)),
        (torch.int8, 127),
        (torch.int8, -128),
        (torch.uint8, 255),
        (torch.uint8, -255),  # a negative weight wraps around, as x - 255 * y does
        (torch.bool, 7),  # any integer for a bool sum: not 0 is true
        (torch.bool, 0),
    ],
    ids=str,
)
def test_integer_alphas_at_the_edges_wrap_like_torch(device, dtype, alpha):
    x = torch.arange(-50, 50, device=device).to(dtype)
    y = torch.arange(100, 0, -1, device=device).to(dtype)
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
        (torch.int16, 2**15, "from -32768 to 32767"),
        (torch.int8, -129, "from -128 to 127"),
        (torch.uint8, 256, "from -255 to 255"),
        (torch.uint8, -256, "from -255 to 255"),
    ],
    ids=str,
)
def test_integer_alpha_out_of_range_is_refused_by_name(device, dtype, alpha, bounds):
    x = torch.ones(4, dtype=dtype, device=device)
    with pytest.raises(ValueError, match=rf"argument 'alpha' is .*{dtype}.*{bounds}"):
        vecadd.add(x, x, alpha=alpha)


@pytest.mark.parametrize("alpha", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.complex64])
@pytest.mark.parametrize("out", [False, True], ids=["new", "out"])
def test_a_bool_alpha_is_refused_as_torch_add_refuses_it(device, dtype, alpha, out):
    """torch.add takes a bool alpha only for a bool sum (tests/test_torch_add_parity.py)."""
    x = torch.ones(3, dtype=dtype, device=device)
    with pytest.raises(RuntimeError):
        torch.add(x, x, alpha=alpha)
    keyword = {"out": torch.empty_like(x)} if out else {}
    refused = (
        f"vecadd.add(): argument 'alpha' is a bool ({alpha}) but x and y sum in {dtype}; expected "
        "a bool weight only for a bool sum, as torch takes a bool alpha, else an int, a float or "
        "a complex number"
    )
    with pytest.raises(TypeError) as raised:
        vecadd.add(x, x, alpha=alpha, **keyword)
    assert str(raised.value) == refused
    # A bool tensor beside x: the sum is still x's dtype, so the bool alpha still refused.
    with pytest.raises(TypeError) as raised:
        vecadd.add(x.bool(), x, alpha=alpha, **keyword)
    assert str(raised.value) == refused


@pytest.mark.parametrize("alpha", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_the_layer_refuses_a_bool_alpha_as_vecadd_add_does(device, dtype, alpha):
    """VecAdd(alpha=a)(x, y) is vecadd.add(x, y, alpha=a): a bool alpha for a sum that is not
    bool is refused in add's words, never taken as 1 or 0."""
    x = torch.ones(3, dtype=dtype, device=device)
    with pytest.raises(TypeError) as expected:
        vecadd.add(x, x, alpha=alpha)
    layer = vecadd.VecAdd(alpha=alpha)
    with pytest.raises(TypeError) as raised:
        layer(x, x)
    assert str(raised.value) == str(expected.value)


@pytest.mark.parametrize("alpha", [True, False, 1, 0, -2])
@pytest.mark.parametrize("out", [False, True], ids=["new", "out"])
def test_a_bool_sum_takes_a_bool_or_int_alpha_as_torch_add_does(device, alpha, out):
    x = torch.tensor([True, False, True, False], device=device)
    y = torch.tensor([True, True, False, False], device=device)
    expected = torch.add(x, y, alpha=alpha)
    result = vecadd.add(x, y, alpha=alpha, **({"out": torch.empty_like(x)} if out else {}))
    assert result.dtype == torch.bool
    assert torch.equal(result, expected)
    assert torch.equal(vecadd.VecAdd(alpha=alpha)(x, y), expected)
