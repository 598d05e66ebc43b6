"""A self-test of every operator vecadd/_operators.py describes, on every device present
(``vecadd check``): each record's sum against its exact value for each dtype and its
gradients, and add against torch.add itself."""

from __future__ import annotations

import os
import warnings
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
    """Values of every kind a dtype holds: negative, fractional, complex, true and false."""
    if dtype == torch.bool:
        values = torch.randint(0, 2, shape, generator=generator, dtype=torch.int64)
    elif dtype.is_floating_point or dtype.is_complex:
        values = torch.randn(shape, generator=generator, dtype=torch.float64)
        if dtype.is_complex:
            values = torch.complex(values, torch.randn(shape, generator=generator).double())
    else:
        low = 0 if dtype == torch.uint8 else -100
        values = torch.randint(low, 100, shape, generator=generator, dtype=torch.int64)
    return values.to(device=device, dtype=dtype)


def _exactly(tensor: torch.Tensor) -> torch.Tensor:
    """A tensor's values where every dtype's are exact: complex128, or int64 for integers."""
    if tensor.dtype.is_floating_point or tensor.dtype.is_complex:
        return tensor.to(torch.complex128)
    return tensor.to(torch.int64)


def _epsilon(dtype: torch.dtype) -> float:
    """One rounding of a floating or complex dtype, relative."""
    parts = {torch.complex32: torch.float16, torch.complex64: torch.float32}
    return torch.finfo(parts.get(dtype, torch.float64 if dtype.is_complex else dtype)).eps


def _within_roundings(result, exact, scale, roundings: int) -> None:
    """result is exact within `roundings` roundings of its dtype, relative to `scale`."""
    finite = exact.isfinite()
    allowed = roundings * _epsilon(result.dtype) * scale + 1e-300
    beyond = ((_exactly(result) - exact).abs() - allowed)[finite]
    assert not (beyond > 0).any(), f"error exceeds one rounding by up to {beyond.max().item()}"
    torch.testing.assert_close(_exactly(result)[~finite], exact[~finite], equal_nan=True)


def assert_matches_torch_add(
    result: torch.Tensor, x: torch.Tensor, y: torch.Tensor, alpha: complex | float | int = 1
) -> None:
    """`result` is torch.add(x, y, alpha=alpha): the same shape, strides, dtype and device;
    the same values for alpha = 1 and integer or bool sums, else within one rounding of the
    exact value (an integral float alpha, which vecadd takes for an integer sum, as an int)."""
    integral = not (result.dtype.is_floating_point or result.dtype.is_complex)
    if integral and isinstance(alpha, float) and alpha.is_integer():
        alpha = int(alpha)
    expected = torch.add(x, y, alpha=alpha)
    assert result.shape == expected.shape
    assert result.stride() == expected.stride(), (
        f"strides {result.stride()}; torch.add lays it out as {expected.stride()}"
    )
    assert result.dtype == expected.dtype
    assert result.device == expected.device
    if alpha == 1 or integral:
        torch.testing.assert_close(
            _exactly(result), _exactly(expected), rtol=0, atol=0, equal_nan=True
        )
        return
    # torch may round alpha * y first or fuse the multiply-add: compare with the exact value.
    exact = _exactly(x) + alpha * _exactly(y)
    _within_roundings(result, exact, _exactly(x).abs() + abs(alpha) * _exactly(y).abs(), 1)


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
    if result.dtype == torch.bool:  # a sum of bools is "or", a weighted term "and"
        terms = [
            t.to(result.device).bool() & bool(w) for w, t in zip(weights, tensors, strict=True)
        ]
        expected = terms[0]
        for term in terms[1:]:
            expected = expected | term
        assert torch.equal(result, expected.expand(result.shape))
        return
    exact = sum(w * _exactly(t.to(result.device)) for w, t in zip(weights, tensors, strict=True))
    if not (result.dtype.is_floating_point or result.dtype.is_complex):
        # Integers wrap around: the exact sum, cast as the kernels' arithmetic wraps it.
        assert torch.equal(result, exact.to(result.dtype).expand(result.shape))
        return
    terms = [
        abs(w) * _exactly(t.to(result.device)).abs() for w, t in zip(weights, tensors, strict=True)
    ]
    _within_roundings(result, exact, sum(terms), len(tensors))


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

        def promoted(op: Operator = op, wrapper=wrapper) -> None:
            # A float32 stream and a bfloat16 branch (mixed precision) give float32, as torch.
            sample = sample_arguments(
                op, lambda shape: random_tensor(shape, torch.float32, device, generator)
            )
            tensors, _ = op.terms(*sample)
            mixed = [t if i % 2 == 0 else t.bfloat16() for i, t in enumerate(tensors)]
            arguments = op.with_tensors(sample, mixed)
            positional, keywords = op.split(arguments)
            assert_is_weighted_sum(wrapper(*positional, **keywords), *op.terms(*arguments))

        results.append(_case(device, f"{op.name} float32 + bfloat16", promoted))

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
    with warnings.catch_warnings():
        # torch's notice on making a complex32 tensor, which the check does on purpose.
        warnings.filterwarnings("ignore", "ComplexHalf support is experimental", UserWarning)
        return [result for device in available_devices() for result in check_device(device)]
