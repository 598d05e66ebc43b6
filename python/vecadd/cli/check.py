"""A self-test of every operator vecadd/_operators.py describes, on every device present
(``vecadd check``): each record's sum against its exact value for each dtype and its
gradients, and add against torch.add itself."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import torch

from .. import _ops
from .._dtypes import SUPPORTED_DTYPES, dtype_name
from .._operators import ADD, OPERATORS, Operator
from .._ops import add
from .._words import plural


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
    """`result` is torch.add(x, y, alpha=alpha): the same shape, strides, dtype and device;
    the same values for alpha = 1 and integers, else within one rounding of the exact value."""
    expected = torch.add(x, y, alpha=alpha)
    assert result.shape == expected.shape
    assert result.stride() == expected.stride(), (
        f"strides {result.stride()}; torch.add lays it out as {expected.stride()}"
    )
    assert result.dtype == expected.dtype
    assert result.device == expected.device
    if alpha == 1 or not result.dtype.is_floating_point:
        torch.testing.assert_close(result, expected, rtol=0, atol=0, equal_nan=True)
        return
    # torch may round alpha * y first or fuse the multiply-add: compare with the exact value.
    exact = x.double() + alpha * y.double()
    finfo = torch.finfo(result.dtype)
    allowed = finfo.eps * (x.double().abs() + abs(alpha) * y.double().abs()) + finfo.tiny
    error = (result.double() - exact).abs()
    finite = exact.isfinite()
    beyond = (error - allowed)[finite]
    assert not (beyond > 0).any(), f"error exceeds one rounding by up to {beyond.max().item()}"
    torch.testing.assert_close(result.double()[~finite], exact[~finite], equal_nan=True)


def _case(device: torch.device, name: str, run: Callable[[], None]) -> CheckResult:
    try:
        run()
    except Exception as error:  # a self-test reports every failure instead of stopping
        return CheckResult(str(device), name, False, f"{type(error).__name__}: {error}")
    return CheckResult(str(device), name, True)


def sample_arguments(op: Operator, make_tensor: Callable[[tuple[int, ...]], torch.Tensor]):
    """A call's arguments in the record's order, from its argument types alone: tensors that
    broadcast, and integral weights, which every dtype takes."""
    shapes = iter([(1000, 33), (33,), (1000, 1), (1, 33)])
    arguments = []
    for argument in op.arguments:
        if argument.type == "Tensor":
            arguments.append(make_tensor(next(shapes)))
        elif argument.type == "Tensor[]":
            arguments.append([make_tensor(shape) for shape in shapes])
        elif argument.type == "float":
            arguments.append(3)
        elif argument.type == "float[]?":
            arguments.append([2, -1, 3, 1])
        else:
            raise AssertionError(f"{op.call}: no self-test sample for a {argument.type}")
    return tuple(arguments)


def assert_is_weighted_sum(result: torch.Tensor, tensors: list, weights: list) -> None:
    """The values of sum(w_i * t_i) within one rounding per term of the exact sum (float32
    computes in float32 throughout; exact for integers), laid out as a chain of torch.add lays
    it out."""
    chain = tensors[0] + tensors[0] if len(tensors) == 1 else tensors[0]
    for tensor in tensors[1:]:
        chain = chain + tensor
    assert result.shape == chain.shape
    assert result.stride() == chain.stride(), "memory layout differs from torch.add's"
    assert (result.dtype, result.device) == (chain.dtype, chain.device)
    exact = sum(w * t.double() for w, t in zip(weights, tensors, strict=True))
    if not result.dtype.is_floating_point:
        torch.testing.assert_close(result.double(), exact, rtol=0, atol=0)
        return
    scale = sum(abs(w) * t.double().abs() for w, t in zip(weights, tensors, strict=True))
    finfo = torch.finfo(result.dtype)
    bound = len(tensors) * finfo.eps * scale + finfo.tiny
    worst = ((result.double() - exact).abs() - bound).max().item()
    assert worst <= 0, f"error exceeds one rounding per term by {worst}"


def check_device(device: torch.device, seed: int = 0) -> list[CheckResult]:
    generator = torch.Generator().manual_seed(seed)
    results = []
    for op in OPERATORS:
        wrapper = getattr(_ops, op.name)
        for dtype in SUPPORTED_DTYPES:

            def same_as_exact(op: Operator = op, wrapper=wrapper, dtype: torch.dtype = dtype):
                arguments = sample_arguments(
                    op, lambda shape: random_tensor(shape, dtype, device, generator)
                )
                positional, keywords = op.split(arguments)
                assert_is_weighted_sum(wrapper(*positional, **keywords), *op.terms(*arguments))
                if op is ADD:
                    x, y, alpha = arguments
                    assert_matches_torch_add(add(x, y), x, y)
                    assert_matches_torch_add(add(x, y, alpha=alpha), x, y, alpha=alpha)
                    view = x[:, 1:]
                    assert_matches_torch_add(add(view, view), view, view)

            results.append(_case(device, f"{op.name} {dtype_name(dtype)}", same_as_exact))

        def gradients(op: Operator = op, wrapper=wrapper) -> None:
            def leaf(shape: tuple[int, ...]) -> torch.Tensor:
                return random_tensor(shape, torch.float64, device, generator).requires_grad_()

            arguments = sample_arguments(op, leaf)
            positional, keywords = op.split(arguments)
            result = wrapper(*positional, **keywords)
            result.sum().backward()
            for tensor, weight in zip(*op.terms(*arguments), strict=True):
                # each element of an input reaches result.numel() / its numel() elements
                expected = weight * result.numel() / tensor.numel()
                torch.testing.assert_close(tensor.grad, torch.full_like(tensor, expected))

        results.append(_case(device, f"{op.name} autograd", gradients))
    return results


def untested_cuda_note(
    with_cuda: bool, cuda_archs: list[str], visible_gpus: int, why_not: str | None = None
) -> str | None:
    """What a run on this machine leaves untested on CUDA, or None when nothing is left."""
    hidden = os.environ.get("CUDA_VISIBLE_DEVICES")
    # A GPU hidden on purpose is worth naming; otherwise the plain reason is that none is there.
    no_gpu = "no CUDA GPU is visible here" + (
        f" (CUDA_VISIBLE_DEVICES={hidden!r})" if hidden is not None else ""
    )
    if with_cuda and visible_gpus == 0:
        archs = ", ".join(cuda_archs) or "no architecture"
        return f"CUDA kernels built for {archs} but not tested: {no_gpu}; only the CPU was tested"
    if not with_cuda and visible_gpus == 0:
        return f"CUDA not tested: {no_gpu}, and this vecadd has no CUDA kernels loaded"
    if not with_cuda:
        return (
            f"CUDA GPUs not tested: {plural(visible_gpus, 'GPU')} visible, but no CUDA kernels of "
            f"vecadd are loaded ({why_not or 'none found'}; vecadd info lists its CUDA libraries)"
        )
    return None


def run_checks() -> list[CheckResult]:
    return [result for device in available_devices() for result in check_device(device)]
