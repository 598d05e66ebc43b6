"""The fake (and Meta) kernels, written in Python for tracing, refuse exactly the calls the
compiled kernels refuse (C++, src/binding), with the same exception and the same words."""

from __future__ import annotations

import pytest
import torch

import vecadd

F32 = torch.float32


def refused_calls(device):
    def t(*shape, dtype=F32):
        return torch.ones(*shape, dtype=dtype, device=device)

    return {
        "different dtypes": lambda: vecadd.add(t(3), t(3, dtype=torch.float16)),
        "unsupported dtype": lambda: vecadd.add(t(3, dtype=torch.bool), t(3, dtype=torch.bool)),
        "unsupported y": lambda: vecadd.add(t(3), t(3, dtype=torch.uint8)),
        "fractional alpha for int32": lambda: vecadd.add(
            t(3, dtype=torch.int32), t(3, dtype=torch.int32), alpha=0.5
        ),
        "nan alpha for int64": lambda: vecadd.add(
            t(3, dtype=torch.int64), t(3, dtype=torch.int64), alpha=float("nan")
        ),
        "alpha beyond int32": lambda: vecadd.add(
            t(3, dtype=torch.int32), t(3, dtype=torch.int32), alpha=2**40
        ),
        "alpha beyond float32": lambda: vecadd.add(
            t(3, dtype=torch.float16), t(3, dtype=torch.float16), alpha=1e39
        ),
        "shapes that do not broadcast": lambda: vecadd.add(t(2, 3), t(4)),
        "out of another dtype": lambda: vecadd.add(t(3), t(3), out=t(3, dtype=torch.float64)),
        "out of another shape": lambda: vecadd.add(t(2, 3), t(3), out=t(3)),
    }


@pytest.mark.parametrize("case", list(refused_calls("cpu")))
def test_fake_kernels_refuse_like_the_compiled_ones(case):
    errors = {}
    for device in ("cpu", "meta"):
        with pytest.raises(Exception) as raised:
            refused_calls(device)[case]()
        errors[device] = raised.value
    assert type(errors["meta"]) is type(errors["cpu"])
    assert str(errors["meta"]) == str(errors["cpu"])


def test_fake_tensors_are_refused_in_the_same_words():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with pytest.raises(TypeError) as real:
        vecadd.add(torch.ones(2), torch.ones(2, dtype=torch.float64))
    with FakeTensorMode(), pytest.raises(TypeError) as fake:
        vecadd.add(torch.ones(2), torch.ones(2, dtype=torch.float64))
    assert str(fake.value) == str(real.value)
