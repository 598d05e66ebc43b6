"""The dtypes vecadd.add accepts: the Python home of the list the C++ checks enforce."""

from __future__ import annotations

import torch

# The order of the C++ error message ("expected torch.float16, ... or torch.int64").
SUPPORTED_DTYPES: tuple[torch.dtype, ...] = (
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
    torch.int32,
    torch.int64,
)


def dtype_name(dtype: torch.dtype) -> str:
    """torch.float16 -> 'float16', the spelling of the command line and the reports."""
    return str(dtype).removeprefix("torch.")


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype the kernels sum a dtype's tensors in (src/kernels/element_math.h): float32 for
    the 16-bit floats, which round once when the sum is stored; the dtype itself otherwise."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
