"""The operand layouts ``python -m vecadd bench --layouts`` times: x, y and an out tensor."""

from __future__ import annotations

import torch

LAYOUTS = (
    "contiguous",
    "unaligned",
    "broadcast",
    "per_row",
    "transposed",
    "mixed_order",
    "channels_last_bias",
)


def operands(
    n: int, dtype: torch.dtype, device: torch.device, layout: str
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """x, y and an out tensor of the broadcast result for `layout`, about n elements each."""

    def make(count: int) -> torch.Tensor:
        if dtype.is_floating_point:
            return torch.randn(count, device=device).to(dtype)
        return torch.randint(-1000, 1000, (count,), device=device, dtype=dtype)

    if layout == "contiguous":
        return make(n), make(n), torch.empty(n, device=device, dtype=dtype)
    if layout == "unaligned":
        return make(n + 1)[1:], make(n + 1)[1:], torch.empty(n + 1, device=device, dtype=dtype)[1:]
    if layout == "channels_last_bias":
        channels = min(n, 64)
        pixels = n // channels
        x = make(pixels * channels).view(1, 1, pixels, channels).permute(0, 3, 1, 2)
        return x, make(channels).view(channels, 1, 1), torch.empty_like(x)
    # The rest are (rows, columns) matrices.
    columns = min(n, 1024)
    rows = n // columns

    def row_major() -> torch.Tensor:
        return make(rows * columns).view(rows, columns)

    def column_major() -> torch.Tensor:
        return make(rows * columns).view(columns, rows).t()

    def row_major_out() -> torch.Tensor:
        return torch.empty(rows, columns, device=device, dtype=dtype)

    if layout == "broadcast":
        return row_major(), make(columns), row_major_out()
    if layout == "per_row":  # one y value per row: y's inner dimension repeats
        return row_major(), make(rows).view(rows, 1), row_major_out()
    if layout == "transposed":
        x = column_major()
        return x, column_major(), torch.empty_like(x)
    if layout == "mixed_order":  # x row-major, y column-major: one of them is read across
        return row_major(), column_major(), row_major_out()
    raise ValueError(f"unknown layout {layout!r}; expected one of {', '.join(LAYOUTS)}")


def bytes_moved(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> int:
    """Bytes a call must read and write: every element of x, y and z once."""
    return (x.numel() + y.numel() + z.numel()) * z.element_size()
