from __future__ import annotations

import pytest
import torch

HAS_CUDA = torch.cuda.is_available()

FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
INT_DTYPES = (torch.int32, torch.int64)
ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if HAS_CUDA:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)


DEVICES = [pytest.param("cpu", id="cpu"), pytest.param("cuda", id="cuda", marks=pytest.mark.cuda)]


@pytest.fixture(params=DEVICES)
def device(request: pytest.FixtureRequest) -> str:
    return request.param


def make_tensor(shape, dtype, device, *, seed=0, low=None, high=None) -> torch.Tensor:
    """Random values that are never all zero; integers span negative and positive."""
    generator = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        values = torch.randn(shape, generator=generator, dtype=torch.float64) * 4
    else:
        values = torch.randint(
            low if low is not None else -(2**15),
            high if high is not None else 2**15,
            shape,
            generator=generator,
            dtype=torch.int64,
        )
    return values.to(device=device, dtype=dtype)
