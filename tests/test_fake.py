"""The fake (and Meta) kernels, written in Python for tracing, refuse exactly the calls the
compiled kernels refuse (C++, src/binding), with the same exception and the same words, and give
the result the compiled kernels give (torch.add's promotion) for the calls they take."""

from __future__ import annotations

import pytest
import torch

import vecadd

F32 = torch.float32


def refused_calls(device):
    def t(*shape, dtype=F32):
        return torch.ones(shape, dtype=dtype, device=device)

    return {
        "unsupported dtype": lambda: vecadd.add(t(3, dtype=torch.uint16), t(3, dtype=torch.uint16)),
        "unsupported y": lambda: vecadd.add(t(3), t(3, dtype=torch.float8_e4m3fn)),
        "bfloat16 beside a complex 0-dim tensor": lambda: vecadd.add(
            t(3, dtype=torch.bfloat16), t(dtype=torch.complex64)
        ),
        "fractional alpha for int32": lambda: vecadd.add(
            t(3, dtype=torch.int32), t(3, dtype=torch.int32), alpha=0.5
        ),
        "fractional alpha for int8 and uint8 summed in int16": lambda: vecadd.add(
            t(3, dtype=torch.int8), t(3, dtype=torch.uint8), alpha=0.5
        ),
        "nan alpha for int64": lambda: vecadd.add(
            t(3, dtype=torch.int64), t(3, dtype=torch.int64), alpha=float("nan")
        ),
        "alpha beyond int32": lambda: vecadd.add(
            t(3, dtype=torch.int32), t(3, dtype=torch.int32), alpha=2**40
        ),
        "alpha beyond uint8": lambda: vecadd.add(
            t(3, dtype=torch.uint8), t(3, dtype=torch.uint8), alpha=256
        ),
        "alpha beyond float32": lambda: vecadd.add(
            t(3, dtype=torch.float16), t(3, dtype=torch.float16), alpha=1e39
        ),
        "imaginary alpha beyond float32 for complex64": lambda: vecadd.add(
            t(3, dtype=torch.complex64), t(3, dtype=torch.complex64), alpha=1 + 1e39j
        ),
        "bool alpha for a float sum": lambda: vecadd.add(t(3), t(3), alpha=True),
        "bool alpha for an int sum": lambda: vecadd.add(
            t(3, dtype=torch.bool), t(3, dtype=torch.int64), alpha=False
        ),
        "complex alpha for a real sum": lambda: vecadd.add(t(3), t(3), alpha=1 + 2j),
        "complex alpha for an int sum": lambda: vecadd.add(
            t(3, dtype=torch.int64), t(3, dtype=torch.uint8), alpha=-1j
        ),
        "shapes that do not broadcast": lambda: vecadd.add(t(2, 3), t(4)),
        "out of a dtype torch does not cast to": lambda: vecadd.add(
            t(3), t(3), out=t(3, dtype=torch.int32)
        ),
        "complex sum into a real out": lambda: vecadd.add(
            t(3), t(3, dtype=torch.complex64), out=t(3, dtype=torch.float64)
        ),
        "int sum into a bool out": lambda: vecadd.add(
            t(3, dtype=torch.bool), t(3, dtype=torch.int8), out=t(3, dtype=torch.bool)
        ),
        "out of an unsupported dtype": lambda: vecadd.add(t(3), t(3), out=t(3, dtype=torch.uint32)),
        "out of another shape": lambda: vecadd.add(t(2, 3), t(3), out=t(3)),
    }


@pytest.mark.parametrize("case", list(refused_calls("cpu")))
def test_fake_kernels_refuse_like_the_compiled_ones(case):
    errors = {}
    for device in ("cpu", "meta"):
        with pytest.raises(Exception) as raised:
            refused_calls(device)[case]()
        errors[device] = raised.value
    assert type(errors["cpu"]) in (TypeError, ValueError), errors["cpu"]
    assert str(errors["cpu"]).startswith("vecadd.add(): "), errors["cpu"]
    assert type(errors["meta"]) is type(errors["cpu"])
    assert str(errors["meta"]) == str(errors["cpu"])


# Calls the kernels take: mixed dtypes, 0-dim tensors of each side, one element broadcast, a
# dtype out casts into.
PROMOTED_CALLS = {
    "float32 + bfloat16": ((2, 3), F32, (3,), torch.bfloat16),
    "int8 + uint8": ((2, 3), torch.int8, (2, 3), torch.uint8),
    "bool + float16": ((4,), torch.bool, (4,), torch.float16),
    "float16 + 0-dim float64": ((2, 3), torch.float16, (), torch.float64),
    "0-dim int64 + int16": ((), torch.int64, (5,), torch.int16),
    "int32 + 0-dim float32": ((5,), torch.int32, (), F32),
    "float32 + 0-dim complex128": ((5,), F32, (), torch.complex128),
    "bfloat16 + complex32": ((1,), torch.bfloat16, (3,), torch.complex32),
    "complex64 + float64": ((3,), torch.complex64, (3,), torch.float64),
}


@pytest.mark.parametrize("case", list(PROMOTED_CALLS))
def test_fake_kernels_give_the_dtype_and_layout_the_compiled_ones_give(case):
    x_shape, x_dtype, y_shape, y_dtype = PROMOTED_CALLS[case]
    results = {}
    for device in ("cpu", "meta"):
        x = torch.ones(x_shape, dtype=x_dtype, device=device)
        y = torch.ones(y_shape, dtype=y_dtype, device=device)
        results[device] = vecadd.add(x, y, alpha=2)
        add_n = vecadd.add_n([x, y, x])
        assert add_n.dtype == torch.add(torch.add(x, y), x).dtype, device
    real, fake = results["cpu"], results["meta"]
    expected = torch.add(
        torch.ones(x_shape, dtype=x_dtype), torch.ones(y_shape, dtype=y_dtype), alpha=2
    )
    assert real.dtype == fake.dtype == expected.dtype
    assert real.shape == fake.shape == expected.shape
    assert real.stride() == fake.stride()


def test_fake_tensors_are_refused_in_the_same_words():
    from torch._subclasses.fake_tensor import FakeTensorMode

    def refused():
        return vecadd.add(torch.ones(2), torch.ones(2), out=torch.empty(2, dtype=torch.int64))

    with pytest.raises(TypeError) as real:
        refused()
    with FakeTensorMode(), pytest.raises(TypeError) as fake:
        refused()
    assert str(fake.value) == str(real.value)
    assert "out has dtype torch.int64 but the sum of x and y is torch.float32" in str(real.value)


def test_fake_tensors_promote_as_the_compiled_kernels_do():
    from torch._subclasses.fake_tensor import FakeTensorMode

    real = vecadd.add(torch.ones(2, dtype=torch.bfloat16), torch.ones(2))
    with FakeTensorMode():
        fake = vecadd.add(torch.ones(2, dtype=torch.bfloat16), torch.ones(2))
        fake_number = vecadd.add(torch.ones(2, dtype=torch.int32), 2.5)
    assert fake.dtype == real.dtype == torch.float32
    assert fake_number.dtype == torch.float32
