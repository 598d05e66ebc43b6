"""A self-test against torch.add on every device present (``python -m vecadd check``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from ._dtypes import SUPPORTED_DTYPES, dtype_name
from ._ops import add


@dataclass
class CheckResult:
    device: str
    case: str
    passed: bool
    detail: str = ""


def available_devices() -> list[torch.device]:
    devices = [torch.device("cpu")]
    if torch.cuda.is_available():
        devices += [torch.device("cuda", index) for index in range(torch.cuda.device_count())]
    return devices


def random_tensor(
    shape: tuple[int, ...], dtype: torch.dtype, device: torch.device, generator: torch.Generator
) -> torch.Tensor:
    if dtype.is_floating_point:
        values = torch.randn(shape, generator=generator, dtype=torch.float64)
    else:
        values = torch.randint(-1000, 1000, shape, generator=generator, dtype=torch.int64)
    return values.to(device=device, dtype=dtype)


def assert_matches_torch_add(
    result: torch.Tensor, x: torch.Tensor, y: torch.Tensor, alpha: float | int = 1
) -> None:
    """Bit-exact against torch.add for alpha = 1 and integers; otherwise within one rounding
    of the exact value (torch may fuse the multiply-add or round alpha * y first)."""
    expected = torch.add(x, y, alpha=alpha)
    assert result.shape == expected.shape
    assert result.stride() == expected.stride(), "memory layout differs from torch.add's"
    assert result.dtype == expected.dtype
    assert result.device == expected.device
    if alpha == 1 or not x.dtype.is_floating_point:
        torch.testing.assert_close(result, expected, rtol=0, atol=0, equal_nan=True)
        return
    exact = x.double() + alpha * y.double()
    bound = torch.finfo(result.dtype).eps * (x.double().abs() + abs(alpha) * y.double().abs())
    error = (result.double() - exact).abs()
    finite = exact.isfinite()
    worst = (error - bound)[finite].max().item() if finite.any() else 0.0
    assert worst <= torch.finfo(result.dtype).tiny, f"error exceeds one rounding by {worst}"
    torch.testing.assert_close(result[~finite].double(), exact[~finite], equal_nan=True)


def _case(device: torch.device, name: str, run: Callable[[], None]) -> CheckResult:
    try:
        run()
    except Exception as error:  # a self-test reports every failure instead of stopping
        return CheckResult(str(device), name, False, f"{type(error).__name__}: {error}")
    return CheckResult(str(device), name, True)


def check_device(device: torch.device, seed: int = 0) -> list[CheckResult]:
    generator = torch.Generator().manual_seed(seed)
    results = []
    for dtype in SUPPORTED_DTYPES:

        def same_as_torch(dtype: torch.dtype = dtype) -> None:
            x = random_tensor((1000, 33), dtype, device, generator)
            y = random_tensor((33,), dtype, device, generator)
            assert_matches_torch_add(add(x, y), x, y)
            assert_matches_torch_add(add(x, y, alpha=3), x, y, alpha=3)
            view = x[:, 1:]
            assert_matches_torch_add(add(view, view), view, view)

        results.append(_case(device, f"add {dtype_name(dtype)}", same_as_torch))

    def gradients() -> None:
        x = random_tensor((8, 5), torch.float64, device, generator).requires_grad_()
        y = random_tensor((5,), torch.float64, device, generator).requires_grad_()
        add(x, y, alpha=2.5).sum().backward()
        assert x.grad is not None
        assert y.grad is not None
        torch.testing.assert_close(x.grad, torch.ones_like(x))
        torch.testing.assert_close(y.grad, torch.full_like(y, 8 * 2.5))

    results.append(_case(device, "autograd", gradients))
    return results


def untested_cuda_note(
    with_cuda: bool, cuda_archs: list[str], visible_gpus: int, why_not: str | None = None
) -> str | None:
    """What a run on this machine leaves untested on CUDA, or None when nothing is left."""
    if with_cuda and visible_gpus == 0:
        return (
            f"CUDA kernels built for {', '.join(cuda_archs) or 'no architecture'} but not tested: "
            "no CUDA GPU is visible here (torch.cuda.is_available() is False; "
            "check CUDA_VISIBLE_DEVICES and the driver)"
        )
    if not with_cuda and visible_gpus > 0:
        return (
            f"CUDA GPUs not tested: {visible_gpus} visible, but no CUDA kernels of vecadd are "
            f"loaded ({why_not or 'none found'}; python -m vecadd info lists its CUDA libraries)"
        )
    return None


def run_checks() -> list[CheckResult]:
    return [result for device in available_devices() for result in check_device(device)]
