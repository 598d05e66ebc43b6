"""The operand layouts ``python -m vecadd bench --layouts`` times: x, y and an out tensor."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .._dtypes import dtype_name

LAYOUTS = (
    "contiguous",
    "unaligned",
    "broadcast",
    "per_row",
    "transposed",
    "mixed_order",
    "channels_last_bias",
)


NUMBER = "number"  # --dtypes "float32+number": y is a Python number of x's kind


@dataclass(frozen=True)
class DtypeCase:
    """One entry of --dtypes: x's dtype and y's (None: x's; NUMBER: a Python number)."""

    x: torch.dtype
    y: torch.dtype | str | None = None

    @property
    def name(self) -> str:
        if self.y is None:
            return dtype_name(self.x)
        return f"{dtype_name(self.x)}+{self.y if self.y == NUMBER else dtype_name(self.y)}"


def number_like(dtype: torch.dtype) -> complex:
    """The Python number a model adds to a tensor of `dtype` (`x + 2.0`, `i + 2`, ...)."""
    if dtype == torch.bool:
        return True
    if dtype.is_complex:
        return complex(2.0, -1.0)
    return 2.0 if dtype.is_floating_point else 2


def random_tensor(count: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    if dtype == torch.bool:
        return torch.rand(count, device=device) < 0.5
    if dtype.is_floating_point or dtype.is_complex:
        return torch.randn(count, device=device, dtype=torch.float32).to(dtype)
    info = torch.iinfo(dtype)
    return torch.randint(max(info.min, -100), min(info.max, 100) + 1, (count,), device=device).to(
        dtype
    )


def operands(
    n: int,
    dtype: torch.dtype,
    device: torch.device,
    layout: str,
    y_dtype: torch.dtype | str | None = None,
) -> tuple[torch.Tensor, torch.Tensor | complex, torch.Tensor]:
    """x, y and an out tensor of the broadcast result for `layout`, about n elements each; y of
    `y_dtype` (default: x's) or, for NUMBER, a Python number; out of torch.result_type(x, y)."""
    if y_dtype == NUMBER:
        x, _, z = operands(n, dtype, device, layout)
        number = number_like(dtype)
        result = torch.result_type(x, number)
        return x, number, z if result == dtype else torch.empty_like(z, dtype=result)
    other = dtype if y_dtype is None else y_dtype
    result = torch.promote_types(dtype, other)

    def make(count: int, of: torch.dtype = dtype) -> torch.Tensor:
        return random_tensor(count, of, device)

    def empty(*shape: int) -> torch.Tensor:
        return torch.empty(*shape, device=device, dtype=result)

    if layout == "contiguous":
        return make(n), make(n, other), empty(n)
    if layout == "unaligned":
        return make(n + 1)[1:], make(n + 1, other)[1:], empty(n + 1)[1:]
    if layout == "channels_last_bias":
        channels = min(n, 64)
        pixels = n // channels
        x = make(pixels * channels).view(1, 1, pixels, channels).permute(0, 3, 1, 2)
        return x, make(channels, other).view(channels, 1, 1), torch.empty_like(x, dtype=result)
    # The rest are (rows, columns) matrices.
    columns = min(n, 1024)
    rows = n // columns

    def row_major(of: torch.dtype = dtype) -> torch.Tensor:
        return make(rows * columns, of).view(rows, columns)

    def column_major(of: torch.dtype = dtype) -> torch.Tensor:
        return make(rows * columns, of).view(columns, rows).t()

    if layout == "broadcast":
        return row_major(), make(columns, other), empty(rows, columns)
    if layout == "per_row":  # one y value per row: y's inner dimension repeats
        return row_major(), make(rows, other).view(rows, 1), empty(rows, columns)
    if layout == "transposed":
        x = column_major()
        return x, column_major(other), torch.empty_like(x, dtype=result)
    if layout == "mixed_order":  # x row-major, y column-major: one of them is read across
        return row_major(), column_major(other), empty(rows, columns)
    raise ValueError(f"unknown layout {layout!r}; expected one of {', '.join(LAYOUTS)}")


def bytes_moved(x: torch.Tensor, y: torch.Tensor | complex, z: torch.Tensor) -> int:
    """Bytes a call must read and write: every element of x, y and z once, each in its dtype (a
    Python number y moves none)."""
    tensors = [t for t in (x, y, z) if isinstance(t, torch.Tensor)]
    return sum(t.numel() * t.element_size() for t in tensors)
