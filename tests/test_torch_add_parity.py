"""vecadd.add and add_n held to torch.add's contract case by case, with torch itself as the
reference on each device: every pair of dtypes, 0-dim tensors and Python numbers on either side,
alpha of each kind, out= of each dtype. In each case both give the same dtype and the same values
(bit for bit), or both refuse. The one difference on purpose is listed in KEPT_DIFFERENCES."""

from __future__ import annotations

import pytest
import torch

import vecadd

DTYPES = vecadd.SUPPORTED_DTYPES
# Shapes of x and y: both with dimensions, then a 0-dim tensor on either side (which promotes
# like a scalar unless it is of a higher category), then one element broadcast.
SHAPES = {
    "dims": ((2, 5), (5,)),
    "0-dim y": ((2, 5), ()),
    "0-dim x": ((), (2, 5)),
    "[1] y": ((5,), (1,)),
}
NUMBERS = {"bool": True, "int": 3, "float": 2.5, "complex": 1.5 - 2j, "negative int": -7}


def operand(shape, dtype: torch.dtype, device: str, seed: int) -> torch.Tensor:
    """Values of every kind a dtype holds: negative, fractional, large for 16 bits, complex."""
    generator = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=generator).bool().to(device)
    if not (dtype.is_floating_point or dtype.is_complex):
        values = torch.randint(-300, 300, shape, generator=generator)
        return values.to(dtype).to(device)  # wraps into the narrow integers, as a cast does
    real = torch.randn(shape, generator=generator, dtype=torch.float64) * 100
    if dtype.is_complex:
        imag = torch.randn(shape, generator=generator, dtype=torch.float64) * 100
        real = torch.complex(real, imag)
    return real.to(dtype).to(device)


def outcome(function):
    """('ok', result) or ('refused', the exception)."""
    try:
        return "ok", function()
    except (TypeError, ValueError, RuntimeError, OverflowError) as error:
        return "refused", error


# torch's CPU kernels round alpha * y to 16 bits before adding it where they finish a row one
# element at a time (c10::Half arithmetic), and fuse it in float elsewhere; vecadd rounds the
# sum once everywhere. For these dtypes, with alpha other than 1, the values may differ by a
# rounding of each term: `bound`, eps * (|x| + |alpha * y|).
ROUNDED_ONCE = (torch.float16, torch.bfloat16, torch.complex32)
# On a CPU, torch fuses alpha * y into the add where its kernels vectorize (vec::fmadd); vecadd's
# CPU kernels round the product first everywhere, as the exported, decomposed and ONNX programs
# do (docs/usage.md): the same bound for every floating dtype there.


# bfloat16 beside a complex 0-dim operand asks for a complex dtype of bfloat16's range, which
# torch has not: torch 2.14.1's CPU add refuses it, 2.13.0's CPU add and 2.11.0's CUDA add return
# a complex tensor. vecadd refuses it on every release and device, for now.
NO_COMPLEX_BFLOAT16 = "which torch promotes to a complex dtype of bfloat16's range"


def assert_same_outcome(ours, theirs, case: str, *, bound=None) -> None:
    (our_kind, our_value), (their_kind, their_value) = ours, theirs
    if (our_kind, their_kind) == ("refused", "ok") and NO_COMPLEX_BFLOAT16 in str(our_value):
        pytest.xfail(f"{case}: torch {torch.__version__} computes it on {their_value.device.type}")
    assert our_kind == their_kind, (
        f"{case}: vecadd {our_kind} ({our_value}), torch {their_kind} ({their_value})"
    )
    if our_kind == "refused":
        return
    assert our_value.dtype == their_value.dtype, case
    assert our_value.shape == their_value.shape, case
    fused_by_torch = our_value.device.type == "cpu" and (
        our_value.dtype.is_floating_point or our_value.dtype.is_complex
    )
    if bound is not None and (our_value.dtype in ROUNDED_ONCE or fused_by_torch):
        difference = (our_value.to(torch.complex128) - their_value.to(torch.complex128)).abs()
        assert bool((difference <= bound).all()), f"{case}: {our_value} against {their_value}"
        return
    torch.testing.assert_close(our_value, their_value, rtol=0, atol=0, equal_nan=True, msg=case)


def pairs():
    return [(a, b) for a in DTYPES for b in DTYPES]


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize(
    ("x_dtype", "y_dtype"), pairs(), ids=lambda d: str(d).removeprefix("torch.")
)
def test_every_pair_of_dtypes_promotes_as_torch_add(device, x_dtype, y_dtype, shapes):
    x_shape, y_shape = SHAPES[shapes]
    x = operand(x_shape, x_dtype, device, 1)
    y = operand(y_shape, y_dtype, device, 2)
    case = f"{x_dtype}{list(x_shape)} + {y_dtype}{list(y_shape)}"
    assert_same_outcome(outcome(lambda: vecadd.add(x, y)), outcome(lambda: torch.add(x, y)), case)


@pytest.mark.parametrize("number", NUMBERS, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_a_python_number_on_either_side_promotes_as_torch_add(device, dtype, number):
    value = NUMBERS[number]
    x = operand((3, 4), dtype, device, 3)
    for ours, theirs, case in [
        (lambda: vecadd.add(x, value), lambda: torch.add(x, value), f"{dtype} + {value!r}"),
        (lambda: vecadd.add(value, x), lambda: torch.add(value, x), f"{value!r} + {dtype}"),
    ]:
        assert_same_outcome(outcome(ours), outcome(theirs), case)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_a_cpu_number_tensor_joins_tensors_of_any_device(device, dtype):
    x = operand((3, 4), dtype, device, 4)
    for y in (torch.tensor(2.5), torch.tensor(3, dtype=torch.int8), torch.tensor(True)):
        case = f"{dtype} on {device} + {y.dtype} 0-dim on the CPU"
        for ours, theirs in [
            (lambda y=y: vecadd.add(x, y), lambda y=y: torch.add(x, y)),
            (lambda y=y: vecadd.add(y, x), lambda y=y: torch.add(y, x)),
        ]:
            assert_same_outcome(outcome(ours), outcome(theirs), case)


ALPHAS = {"bool": True, "int": 3, "negative int": -2, "float": 0.5, "complex": 2 - 1j}


def kept_difference(dtype: torch.dtype, alpha) -> bool:
    """vecadd takes a float weight whose value is integral for an integer sum (docs/usage.md),
    where torch.add refuses any float alpha."""
    return (
        isinstance(alpha, float)
        and alpha.is_integer()
        and not (dtype.is_floating_point or dtype.is_complex)
    )


@pytest.mark.parametrize("alpha", [*ALPHAS, "integral float"], ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_alpha_of_each_kind_is_taken_or_refused_as_torch_add_does(device, dtype, alpha):
    value = 2.0 if alpha == "integral float" else ALPHAS[alpha]
    x = operand((3, 4), dtype, device, 5)
    y = operand((4,), dtype, device, 6)
    case = f"{dtype}, alpha={value!r}"
    ours = outcome(lambda: vecadd.add(x, y, alpha=value))
    if kept_difference(dtype, value):
        theirs = outcome(lambda: torch.add(x, y, alpha=int(value)))
    else:
        theirs = outcome(lambda: torch.add(x, y, alpha=value))
    bound = None
    if (dtype.is_floating_point or dtype.is_complex) and value is not True and value != 1:
        terms = x.to(torch.complex128).abs() + (complex(value) * y.to(torch.complex128)).abs()
        bound = torch.finfo(x.dtype).eps * terms
    assert_same_outcome(ours, theirs, case, bound=bound)


SOURCES = [
    (torch.float32, torch.bfloat16),
    (torch.float16, torch.float16),
    (torch.int32, torch.int64),
    (torch.uint8, torch.int8),
    (torch.bool, torch.bool),
    (torch.complex64, torch.float64),
    (torch.int16, torch.float16),
]


@pytest.mark.parametrize("out_dtype", DTYPES, ids=str)
@pytest.mark.parametrize(
    ("x_dtype", "y_dtype"), SOURCES, ids=lambda d: str(d).removeprefix("torch.")
)
def test_out_of_each_dtype_is_cast_into_or_refused_as_torch_add_does(
    device, x_dtype, y_dtype, out_dtype
):
    x = operand((3, 4), x_dtype, device, 7)
    y = operand((3, 4), y_dtype, device, 8)
    ours, theirs = (
        torch.empty(3, 4, dtype=out_dtype, device=device),
        torch.empty(3, 4, dtype=out_dtype, device=device),
    )
    case = f"{x_dtype} + {y_dtype} into {out_dtype}"
    assert_same_outcome(
        outcome(lambda: vecadd.add(x, y, out=ours)),
        outcome(lambda: torch.add(x, y, out=theirs)),
        case,
    )


@pytest.mark.parametrize(
    ("x_dtype", "y_dtype"), pairs()[::5], ids=lambda d: str(d).removeprefix("torch.")
)
def test_add_n_promotes_as_the_chain_of_torch_add_it_replaces(device, x_dtype, y_dtype):
    tensors = [
        operand((2, 5), x_dtype, device, 9),
        operand((), torch.float64, "cpu" if device != "cpu" else device, 10),
        operand((5,), y_dtype, device, 11),
    ]
    case = f"add_n of {[t.dtype for t in tensors]}"

    def chain():
        return torch.add(torch.add(tensors[0], tensors[1]), tensors[2])

    ours, theirs = outcome(lambda: vecadd.add_n(tensors)), outcome(chain)
    assert ours[0] == theirs[0], f"{case}: vecadd {ours}, torch {theirs}"
    if ours[0] == "ok":  # one rounding where the chain rounds twice: the dtype must agree
        assert ours[1].dtype == theirs[1].dtype, case
