"""Bad input gets an error that names the argument, what was given and what was expected."""

from __future__ import annotations

import pytest
import torch

import vecadd


def test_different_dtypes_are_not_promoted():
    with pytest.raises(TypeError, match=r"x has dtype torch.float32 but y has dtype torch.float64"):
        vecadd.add(torch.ones(3), torch.ones(3, dtype=torch.float64))


@pytest.mark.parametrize(
    "dtype", [torch.bool, torch.complex64, torch.uint8, torch.int8, torch.int16]
)
def test_unsupported_dtypes(dtype):
    x = torch.ones(3, dtype=dtype)
    with pytest.raises(TypeError, match=rf"argument 'x' has dtype {dtype}.*expected torch.float16"):
        vecadd.add(x, x)


def test_unsupported_dtype_of_y_is_named():
    with pytest.raises(TypeError, match=r"argument 'y' has dtype torch.bool"):
        vecadd.add(torch.ones(3), torch.ones(3, dtype=torch.bool))


def test_devices_must_match_and_both_are_named():
    x = torch.ones(3)
    y = torch.ones(3, device="meta")
    with pytest.raises(RuntimeError, match=r"x is on cpu but y is on meta"):
        vecadd.add(x, y)


@pytest.mark.cuda
def test_cpu_and_cuda_mix_names_both_devices():
    with pytest.raises(RuntimeError, match=r"x is on cuda:0 but y is on cpu"):
        vecadd.add(torch.ones(3, device="cuda"), torch.ones(3))


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
    ("alpha", "name"),
    [(1j, "complex"), ("2", "str"), (None, "NoneType"), (torch.tensor(2.0), "Tensor")],
)
def test_alpha_must_be_a_real_number(alpha, name):
    with pytest.raises(TypeError, match=rf"argument 'alpha' must be a real number.*got {name}"):
        vecadd.add(torch.ones(3), torch.ones(3), alpha=alpha)


def test_alpha_beyond_the_float_range():
    with pytest.raises(OverflowError, match=r"argument 'alpha' is an int beyond the float range"):
        vecadd.add(torch.ones(3), torch.ones(3), alpha=2**1024)


@pytest.mark.parametrize(
    ("x", "y", "name"),
    [([1.0], torch.ones(1), "x"), (torch.ones(1), 2.0, "y"), (None, torch.ones(1), "x")],
)
def test_non_tensor_inputs(x, y, name):
    with pytest.raises(TypeError, match=rf"argument '{name}' must be a torch.Tensor, got"):
        vecadd.add(x, y)


def test_out_must_be_a_tensor():
    with pytest.raises(TypeError, match=r"argument 'out' must be a torch.Tensor, got list"):
        vecadd.add(torch.ones(2), torch.ones(2), out=[0.0, 0.0])


def test_out_with_wrong_shape_is_not_resized():
    out = torch.empty(4)
    with pytest.raises(ValueError, match=r"out has shape \[4\]; expected \[2, 3\]"):
        vecadd.add(torch.ones(2, 3), torch.ones(3), out=out)
    assert out.shape == (4,)


def test_out_with_wrong_dtype():
    with pytest.raises(TypeError, match=r"out has dtype torch.float64; expected torch.float32"):
        vecadd.add(torch.ones(3), torch.ones(3), out=torch.empty(3, dtype=torch.float64))


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
            vecadd.add(torch.ones(3), torch.ones(3, dtype=torch.int32))
    torch.testing.assert_close(vecadd.add(torch.ones(3), torch.ones(3)), torch.full((3,), 2.0))


def test_module_rejects_non_numeric_alpha():
    with pytest.raises(
        TypeError, match=r"VecAdd\(\): argument 'alpha' must be a real number.*got str"
    ):
        vecadd.VecAdd(alpha="1")


def test_torch_ops_schema_errors_name_the_argument():
    with pytest.raises(RuntimeError, match=r"argument 'y'"):
        torch.ops.vecadd.add(torch.ones(2), [1, 2])
