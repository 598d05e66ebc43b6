"""vecadd.SUPPORTED_DTYPES is the list the compiled checks enforce, for every dtype torch has:
every dtype torch.add takes (tests/test_torch_add_parity.py holds the two to each other)."""

from __future__ import annotations

import warnings

import pytest
import torch

import vecadd

TORCH_DTYPES = sorted({v for v in vars(torch).values() if isinstance(v, torch.dtype)}, key=str)

# How the compiled checks name the supported dtypes, a public error message.
SUPPORTED_LISTING = (
    "torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, "
    "torch.bfloat16, torch.float32, torch.float64, torch.complex32, torch.complex64 or "
    "torch.complex128"
)


def test_the_error_message_lists_exactly_the_supported_dtypes_in_order():
    assert isinstance(vecadd.SUPPORTED_DTYPES, tuple)
    assert "SUPPORTED_DTYPES" in vecadd.__all__
    names = [str(dtype) for dtype in vecadd.SUPPORTED_DTYPES]
    assert f"{', '.join(names[:-1])} or {names[-1]}" == SUPPORTED_LISTING


def test_torch_has_every_supported_dtype():
    assert set(vecadd.SUPPORTED_DTYPES) <= set(TORCH_DTYPES)
    assert len(TORCH_DTYPES) > len(vecadd.SUPPORTED_DTYPES)


def test_the_categories_give_torch_can_casts_rule_for_every_pair():
    """out='s check reads the categories (torch.compile of torch 2.10 cannot trace can_cast)."""
    from vecadd._dtypes import CATEGORIES

    for common in vecadd.SUPPORTED_DTYPES:
        for out in vecadd.SUPPORTED_DTYPES:
            expected = torch.can_cast(common, out)
            assert (CATEGORIES[common] <= CATEGORIES[out]) == expected, (common, out)


def _tensor(dtype: torch.dtype, device: str) -> torch.Tensor:
    """Five ones of a supported dtype; five uninitialized elements of any other."""
    with warnings.catch_warnings():
        # Experimental and deprecated dtypes (complex32, quantized ones) warn on allocation.
        warnings.simplefilter("ignore")
        if dtype in vecadd.SUPPORTED_DTYPES:
            return torch.ones(5, dtype=dtype, device=device)
        return torch.empty(5, dtype=dtype, device=device)


QUANTIZED = {dtype for dtype in TORCH_DTYPES if _tensor(dtype, "cpu").is_quantized}

# Meta holds the checks torch.compile traces; quantized tensors cannot be made on it.
CASES = [
    pytest.param(dtype, device, id=f"{device}-{str(dtype).removeprefix('torch.')}")
    for device in ("cpu", "meta")
    for dtype in TORCH_DTYPES
    if device == "cpu" or dtype not in QUANTIZED
]


@pytest.mark.parametrize(("dtype", "device"), CASES)
@pytest.mark.parametrize("argument", ["x", "y"])
def test_add_accepts_a_dtype_if_and_only_if_it_is_supported(dtype, device, argument):
    tensor = _tensor(dtype, device)
    other = tensor.clone() if dtype in vecadd.SUPPORTED_DTYPES else torch.ones(5, device=device)
    x, y = (tensor, other) if argument == "x" else (other, tensor)
    if dtype in vecadd.SUPPORTED_DTYPES:
        result = vecadd.add(x, y, alpha=2)
        assert (result.dtype, result.device, result.shape) == (dtype, x.device, x.shape)
        if device == "cpu":  # compared in complex128: torch.equal takes no complex32
            expected = torch.full((5,), 3, dtype=dtype).to(torch.complex128)
            assert torch.equal(result.to(torch.complex128), expected)
        return
    if dtype in QUANTIZED:
        # A quantized tensor dispatches to the QuantizedCPU backend, which has no vecadd kernel.
        with pytest.raises(NotImplementedError, match=r"'vecadd::add' .* 'QuantizedCPU' backend"):
            vecadd.add(x, y)
        return
    with pytest.raises(TypeError) as raised:
        vecadd.add(x, y)
    message = str(raised.value)
    assert f"argument '{argument}' has dtype torch." in message
    assert message.endswith(
        f", which vecadd does not support (nor does torch.add); expected {SUPPORTED_LISTING}"
    )
