"""The dtypes vecadd's operators take, and how torch promotes them: the Python home of the list
the C++ rules enforce (vecadd::DType in vecadd/vecadd.h, in the same order) and of the promotion
the fake kernels, the decompositions and the checked way follow."""

from __future__ import annotations

import torch

# Every dtype torch.add takes, in vecadd::DType's order (the C++ error message's: "expected
# torch.bool, torch.uint8, ... or torch.complex128").
SUPPORTED_DTYPES: tuple[torch.dtype, ...] = (
    torch.bool,
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
    torch.complex32,
    torch.complex64,
    torch.complex128,
)
SUPPORTED_TEXT = ", ".join(str(d) for d in SUPPORTED_DTYPES[:-1]) + f" or {SUPPORTED_DTYPES[-1]}"


def dtype_name(dtype: torch.dtype) -> str:
    """torch.float16 -> 'float16', the spelling of the command line and the reports."""
    return str(dtype).removeprefix("torch.")


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype the kernels sum a dtype's tensors in (src/kernels/element_math.h): float32 for
    the 16-bit floats and complex64 for complex32, which round once when the sum is stored; the
    dtype itself otherwise."""
    if dtype in (torch.float16, torch.bfloat16):
        return torch.float32
    return torch.complex64 if dtype == torch.complex32 else dtype


def is_integral(dtype: torch.dtype) -> bool:
    """bool and the integers: the dtypes whose sums take integral weights."""
    return not (dtype.is_floating_point or dtype.is_complex)


# The complex dtype with parts of each floating one; bfloat16 has none vecadd (or torch.add)
# takes.
_COMPLEX_OF = {
    torch.float16: torch.complex32,
    torch.float32: torch.complex64,
    torch.float64: torch.complex128,
}


class NoCommonDtype(TypeError):
    """Operands whose promotion gives a complex dtype of bfloat16's range, in which neither
    vecadd nor torch.add computes: `index` is the operand where the chain met it."""

    def __init__(self, index: int, dtype: torch.dtype, beside: torch.dtype):
        super().__init__(index, dtype, beside)
        self.index, self.dtype, self.beside = index, dtype, beside


def _combine_categories(higher: torch.dtype | None, lower: torch.dtype | None):
    """Where operands with dimensions meet 0-dim ones: the higher keeps its dtype unless the
    lower is of a higher category (torch.result_type's rule)."""
    if higher is not None and higher.is_complex:
        return higher
    if lower is not None and lower.is_complex:
        if higher is not None and higher.is_floating_point:
            return _COMPLEX_OF.get(higher)  # higher's complex twin, where there is one
        return lower
    if higher is not None and higher.is_floating_point:
        return higher
    if higher is None or lower is None:
        return higher or lower
    if higher == torch.bool or lower.is_floating_point:
        return torch.promote_types(higher, lower)
    return higher


# What an operand weighs in a promotion (torch.result_type's three classes): a tensor with
# dimensions, a 0-dim tensor, a Python number.
WITH_DIMS, ZERO_DIM, NUMBER = 2, 1, 0


def number_dtype(number: bool | int | float | complex) -> torch.dtype:
    """The dtype a Python number takes in a promotion: bool, int64, or the default (complex)
    dtype."""
    if isinstance(number, bool):
        return torch.bool
    if isinstance(number, int):
        return torch.int64
    default = torch.get_default_dtype()
    if isinstance(number, complex):
        return torch.complex128 if default == torch.float64 else torch.complex64
    return default


def promoted(operands) -> torch.dtype:
    """torch.result_type of (dtype, class) pairs (class: WITH_DIMS, ZERO_DIM or NUMBER, or a
    bool for whether it has dimensions) as a chain of torch.add applies it, as the C++ rules do
    (src/binding/promotion.h): the first with the second, their result (of the higher class of
    the two) with the third, and so on."""
    (dtype, rank), *rest = operands
    for index, (other, other_rank) in enumerate(rest, 1):
        pair = ((dtype, int(rank)), (other, int(other_rank)))
        classes = [[d for d, r in pair if r == c] for c in (WITH_DIMS, ZERO_DIM, NUMBER)]
        with_dims, zero_dim, number = (_promote_all(c) if c else None for c in classes)
        lower = _combine_categories(zero_dim, number)
        result = _combine_categories(with_dims, lower) if lower is not None else with_dims
        if result is None or (zero_dim is not None and number is not None and lower is None):
            raise NoCommonDtype(index, other, dtype)
        dtype, rank = result, max(int(rank), int(other_rank))
    return dtype


def _promote_all(dtypes: list) -> torch.dtype:
    result = dtypes[0]
    for dtype in dtypes[1:]:
        result = torch.promote_types(result, dtype)
    return result


def chain_result_type(operands) -> torch.dtype:
    """The dtype a chain of torch.add over tensors and Python numbers returns (`promoted`)."""
    return promoted(
        [
            (o.dtype, WITH_DIMS if o.dim() > 0 else ZERO_DIM)
            if isinstance(o, torch.Tensor)
            else (number_dtype(o), NUMBER)
            for o in operands
        ]
    )
