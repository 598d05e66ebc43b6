"""Bad input gets an error that names the argument, what was given and what was expected; what
torch.add takes (other dtypes, 0-dim tensors, Python numbers, out= it casts into) is taken, as
torch.add takes it."""

from __future__ import annotations

import pytest
import torch

import vecadd

SUPPORTED_LISTING = (
    "torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, "
    "torch.bfloat16, torch.float32, torch.float64, torch.complex32, torch.complex64 or "
    "torch.complex128"
)


def assert_same_as_torch_add(result, expected):
    assert result.dtype == expected.dtype
    torch.testing.assert_close(result, expected, rtol=0, atol=0)


@pytest.mark.parametrize(
    ("x_dtype", "y_dtype"),
    [
        (torch.float32, torch.float64),
        (torch.float32, torch.bfloat16),
        (torch.int32, torch.float16),
        (torch.uint8, torch.int8),
        (torch.bool, torch.int64),
        (torch.float64, torch.complex64),
    ],
    ids=str,
)
def test_different_dtypes_promote_as_torch_add(x_dtype, y_dtype):
    x = torch.arange(-3, 3).to(x_dtype)
    y = torch.arange(6, 0, -1).to(y_dtype)
    assert_same_as_torch_add(vecadd.add(x, y), torch.add(x, y))
    assert_same_as_torch_add(vecadd.add(y, x, alpha=2), torch.add(y, x, alpha=2))


@pytest.mark.parametrize(
    "dtype", [torch.bool, torch.complex64, torch.uint8, torch.int8, torch.int16], ids=str
)
def test_dtypes_once_refused_are_summed_as_torch_add_sums_them(dtype):
    x = torch.arange(-2, 3).to(dtype)
    y = torch.arange(3, -2, -1).to(dtype)
    assert_same_as_torch_add(vecadd.add(x, y), torch.add(x, y))


@pytest.mark.parametrize(
    "dtype",
    [torch.uint16, torch.uint32, torch.uint64, torch.float8_e4m3fn, torch.float8_e5m2],
    ids=str,
)
def test_unsupported_dtypes(dtype):
    x = torch.ones(3).to(dtype)
    with pytest.raises(NotImplementedError):
        torch.add(x, x)  # torch.add has no kernel for them either
    with pytest.raises(TypeError) as raised:
        vecadd.add(x, x)
    assert str(raised.value) == (
        f"vecadd.add(): argument 'x' has dtype {dtype}, which vecadd does not support (nor does "
        f"torch.add); expected {SUPPORTED_LISTING}"
    )


def test_unsupported_dtype_of_y_is_named():
    with pytest.raises(TypeError, match=r"argument 'y' has dtype torch.uint16, which vecadd"):
        vecadd.add(torch.ones(3), torch.ones(3, dtype=torch.uint16))


def test_devices_must_match_and_both_are_named():
    x = torch.ones(3)
    y = torch.ones(3, device="meta")
    with pytest.raises(RuntimeError) as raised:
        vecadd.add(x, y)
    assert str(raised.value) == (
        "vecadd.add(): x is on cpu but y is on meta; expected both on the same device, but for "
        "0-dim CPU tensors (move one, e.g. y.to(x.device))"
    )
    # A CPU tensor with dimensions is refused beside a tensor of another device, a 0-dim one not.
    with pytest.raises(RuntimeError, match=r"x is on meta but y is on cpu; expected both"):
        vecadd.add(y, torch.ones(1))
    for result in (vecadd.add(y, torch.tensor(2.0)), vecadd.add(torch.tensor(2.0), y)):
        assert (result.device, result.dtype, result.shape) == (y.device, torch.float32, (3,))


@pytest.mark.cuda
def test_cpu_and_cuda_mix_names_both_devices():
    with pytest.raises(RuntimeError, match=r"x is on cuda:0 but y is on cpu"):
        vecadd.add(torch.ones(3, device="cuda"), torch.ones(3))
    x, number = torch.ones(3, device="cuda"), torch.tensor(2.5, dtype=torch.float64)
    assert_same_as_torch_add(vecadd.add(x, number), torch.add(x, number))
    assert_same_as_torch_add(vecadd.add(number, x), torch.add(number, x))


@pytest.mark.parametrize("device", ["cpu", "meta"])  # the C++ rules, then the fake kernel
def test_shapes_that_do_not_broadcast_are_named_once_with_the_failing_dimension(device):
    with pytest.raises(ValueError) as raised:
        vecadd.add(torch.ones(2, 3, 5, device=device), torch.ones(4, 1, device=device))
    assert str(raised.value) == (
        "vecadd.add(): x of shape [2, 3, 5] and y of shape [4, 1] cannot be broadcast together: "
        "in dimension -2, x has 3 and y has 4; expected sizes that are equal or 1 in each "
        "trailing dimension"
    )
    ten = [torch.ones(3, device=device)] * 9 + [torch.ones(2, 4, device=device)]
    with pytest.raises(ValueError) as raised:
        vecadd.add_n(ten)
    shapes = ", ".join(f"tensors[{i}] of shape [3]" for i in range(9))
    assert str(raised.value) == (
        f"vecadd.add_n(): {shapes} and tensors[9] of shape [2, 4] cannot be broadcast "
        "together: in dimension -1, tensors[0] has 3 and tensors[9] has 4; expected sizes that "
        "are equal or 1 in each trailing dimension"
    )


@pytest.mark.parametrize("alpha", [0.5, float("nan"), float("inf")])
def test_non_integral_alpha_for_integer_tensors(alpha):
    x = torch.ones(3, dtype=torch.int32)
    with pytest.raises(
        TypeError, match=r"argument 'alpha' is .* but x and y have dtype torch.int32"
    ):
        vecadd.add(x, x, alpha=alpha)


@pytest.mark.parametrize(
    ("alpha", "name"), [("2", "str"), (None, "NoneType"), (torch.tensor(2.0), "Tensor")]
)
def test_alpha_must_be_a_number(alpha, name):
    with pytest.raises(TypeError) as raised:
        vecadd.add(torch.ones(3), torch.ones(3), alpha=alpha)
    assert str(raised.value) == (
        f"vecadd.add(): argument 'alpha' must be a number (bool, int, float or complex), got {name}"
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_a_complex_alpha_is_refused_for_a_real_sum(dtype):
    x = torch.ones(3, dtype=dtype)
    with pytest.raises(RuntimeError):
        torch.add(x, x, alpha=2 - 1j)  # torch refuses it too
    with pytest.raises(TypeError) as raised:
        vecadd.add(x, x, alpha=2 - 1j)
    assert str(raised.value) == (
        f"vecadd.add(): argument 'alpha' is (2-1j) but x and y have dtype {dtype}; expected a "
        "real alpha for tensors that are not complex"
    )
    # Where the sum is complex (a complex y promotes x), the same alpha is taken.
    y = torch.full((3,), 1 + 1j, dtype=torch.complex64)
    assert_same_as_torch_add(vecadd.add(x, y, alpha=2 - 1j), torch.add(x, y, alpha=2 - 1j))


def test_alpha_beyond_the_float_range():
    with pytest.raises(OverflowError, match=r"argument 'alpha' is an int beyond the float range"):
        vecadd.add(torch.ones(3), torch.ones(3), alpha=2**1024)


@pytest.mark.parametrize(
    ("x", "y", "name", "kind"),
    [
        ([1.0], torch.ones(1), "x", "list"),
        (None, torch.ones(1), "x", "NoneType"),
        (torch.ones(1), "2", "y", "str"),
    ],
)
def test_inputs_that_are_neither_tensors_nor_numbers(x, y, name, kind):
    with pytest.raises(TypeError) as raised:
        vecadd.add(x, y)
    assert str(raised.value) == (
        f"vecadd.add(): argument '{name}' must be a torch.Tensor or a number (bool, int, float or "
        f"complex), got {kind}"
    )


@pytest.mark.parametrize("number", [2.0, -3, True, 1.5 - 2j], ids=repr)
@pytest.mark.parametrize("dtype", [torch.float16, torch.int32, torch.bool])
def test_a_python_number_on_either_side_is_taken_as_torch_add_takes_it(number, dtype):
    x = torch.arange(-2, 3).to(dtype)
    assert_same_as_torch_add(vecadd.add(x, number), torch.add(x, number))
    assert_same_as_torch_add(vecadd.add(number, x), torch.add(number, x))


def test_a_python_int_beyond_int64_is_refused_by_name():
    with pytest.raises(ValueError) as raised:
        vecadd.add(torch.ones(3), 2**64)
    assert str(raised.value) == (
        "vecadd.add(): argument 'y' is 18446744073709551616, beyond int64; expected an int from "
        "-9223372036854775808 to 9223372036854775807, as torch takes a Python int"
    )


def test_two_numbers_and_no_tensor_are_refused():
    with pytest.raises(TypeError) as raised:
        vecadd.add(1.0, 2)
    assert str(raised.value) == (
        "vecadd.add(): x and y are numbers; expected at least one tensor (torch takes a Python "
        "number only beside tensors)"
    )


def test_bfloat16_beside_a_complex_0_dim_tensor_or_number_is_refused():
    x = torch.ones(3, dtype=torch.bfloat16)
    tail = (
        " beside torch.bfloat16 tensors, which torch promotes to a complex dtype of bfloat16's "
        "range; vecadd (and torch.add) compute in none: expected the bfloat16 tensors converted "
        "first, e.g. to torch.float32"
    )
    with pytest.raises(TypeError) as raised:
        vecadd.add(x, torch.tensor(1j, dtype=torch.complex64))
    assert str(raised.value) == "vecadd.add(): y has dtype torch.complex64" + tail
    with pytest.raises(TypeError) as raised:
        vecadd.add(x, 1j)
    assert str(raised.value) == "vecadd.add(): y is 1j" + tail


def test_out_must_be_a_tensor():
    with pytest.raises(TypeError, match=r"argument 'out' must be a torch.Tensor, got list"):
        vecadd.add(torch.ones(2), torch.ones(2), out=[0.0, 0.0])


def test_out_with_wrong_shape_is_not_resized():
    out = torch.empty(4)
    with pytest.raises(ValueError, match=r"out has shape \[4\]; expected \[2, 3\]"):
        vecadd.add(torch.ones(2, 3), torch.ones(3), out=out)
    assert out.shape == (4,)


@pytest.mark.parametrize(
    ("dtype", "out_dtype"),
    [
        (torch.float32, torch.float64),
        (torch.float32, torch.float16),
        (torch.int32, torch.float32),
        (torch.bool, torch.int8),
        (torch.float64, torch.complex64),
    ],
    ids=str,
)
def test_out_of_a_dtype_torch_casts_the_sum_to_is_written(dtype, out_dtype):
    x = torch.arange(-3, 3).to(dtype)
    y = (torch.arange(6) * 0.37).to(dtype)
    out, expected = torch.empty(6, dtype=out_dtype), torch.empty(6, dtype=out_dtype)
    assert vecadd.add(x, y, out=out) is out
    torch.add(x, y, out=expected)
    assert_same_as_torch_add(out, expected)


@pytest.mark.parametrize(
    ("dtype", "out_dtype", "why"),
    [
        (torch.float32, torch.int32, "a floating-point number to an integer"),
        (torch.complex64, torch.float64, "a complex number to a real one"),
        (torch.int64, torch.bool, "a number that is not bool to bool"),
    ],
    ids=str,
)
def test_out_of_a_dtype_torch_does_not_cast_the_sum_to_is_refused(dtype, out_dtype, why):
    x = torch.ones(3, dtype=dtype)
    out = torch.zeros(3, dtype=out_dtype)
    with pytest.raises(RuntimeError):
        torch.add(x, x, out=out)  # torch refuses it too
    with pytest.raises(TypeError) as raised:
        vecadd.add(x, x, out=out)
    assert str(raised.value) == (
        f"vecadd.add(): out has dtype {out_dtype} but the sum of x and y is {dtype}, which torch "
        f"does not cast to it ({why}); expected out of dtype {dtype} or one it casts to"
    )
    assert torch.equal(out, torch.zeros(3, dtype=out_dtype))


def test_out_of_an_unsupported_dtype_is_refused():
    with pytest.raises(TypeError, match=r"argument 'out' has dtype torch.uint16, which vecadd"):
        vecadd.add(torch.ones(3), torch.ones(3), out=torch.empty(3, dtype=torch.uint16))


def test_out_with_wrong_device():
    with pytest.raises(RuntimeError, match=r"out is on meta; expected cpu"):
        vecadd.add(torch.ones(3), torch.ones(3), out=torch.empty(3, device="meta"))


def test_out_partly_overlapping_an_input():
    base = torch.arange(10.0)
    with pytest.raises(RuntimeError, match=r"out partly overlaps the memory of 'x'"):
        vecadd.add(base[:8], torch.ones(8), out=base[2:])
    with pytest.raises(RuntimeError, match=r"out partly overlaps the memory of 'y'"):
        vecadd.add(torch.ones(8), base[2:], out=base[:8])


def test_out_overlapping_a_broadcast_input():
    base = torch.arange(6.0)
    with pytest.raises(RuntimeError, match=r"out partly overlaps the memory of 'y'"):
        vecadd.add(torch.ones(6), base[:1], out=base)


def test_out_with_internal_overlap():
    out = torch.zeros(1).expand(4)
    with pytest.raises(RuntimeError, match=r"out has elements that share memory"):
        vecadd.add(torch.ones(4), torch.ones(4), out=out)


def test_out_with_inputs_that_require_grad():
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"out= cannot be used when x, y or out requires grad"):
        vecadd.add(x, torch.ones(3), out=torch.empty(3))
    with torch.no_grad():
        out = torch.empty(3)
        vecadd.add(x, torch.ones(3), out=out)
    torch.testing.assert_close(out, torch.full((3,), 2.0))


def test_errors_leave_the_process_usable():
    for _ in range(3):
        with pytest.raises(TypeError):
            vecadd.add(torch.ones(3), torch.ones(3), out=torch.empty(3, dtype=torch.int32))
    torch.testing.assert_close(vecadd.add(torch.ones(3), torch.ones(3)), torch.full((3,), 2.0))


def test_module_rejects_non_numeric_alpha():
    with pytest.raises(TypeError) as raised:
        vecadd.VecAdd(alpha="1")
    assert str(raised.value) == (
        "VecAdd(): argument 'alpha' must be a number (bool, int, float or complex), got str"
    )


def test_torch_ops_schema_errors_name_the_argument():
    with pytest.raises(RuntimeError, match=r"argument 'y'"):
        torch.ops.vecadd.add(torch.ones(2), [1, 2])
