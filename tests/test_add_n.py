"""vecadd.add_n, the fused weighted sum: the same function as a chain of torch.add (values,
broadcast shape, layout, dtypes and their promotion, devices, views), rounded once,
differentiable, traceable, and refusing bad input in words."""

from __future__ import annotations

import math
import platform
import re
import subprocess

import pytest
import torch

import vecadd
from helpers import OPCHECK_TESTS, make_tensor, op_error

FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
INTEGERS = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
COMPLEX = (torch.complex32, torch.complex64, torch.complex128)
# The compute type of each dtype the kernels do not compute in (vecadd/_dtypes.py).
COMPUTED_IN = {
    torch.float16: torch.float32,
    torch.bfloat16: torch.float32,
    torch.complex32: torch.complex64,
}


def chained(tensors, weights):
    """The chain of torch.add a user would write, for its shape and layout."""
    result = torch.add(tensors[0], tensors[0]) if len(tensors) == 1 else tensors[0]
    for tensor in tensors[1:]:
        result = torch.add(result, tensor)
    return result


def exact_sum(tensors, weights):
    """The weighted sum in complex128 (exact for these inputs' magnitudes up to one rounding)."""
    total = torch.zeros((), dtype=torch.complex128, device=tensors[0].device)
    for tensor, weight in zip(tensors, weights, strict=True):
        total = total + weight * tensor.to(total.device, torch.complex128)
    return total


def _eps(dtype):
    """One rounding of a floating or complex dtype, relative."""
    parts = {torch.complex32: torch.float16, torch.complex64: torch.float32}
    return torch.finfo(parts.get(dtype, torch.float64 if dtype.is_complex else dtype)).eps


def assert_weighted_sum(result, tensors, weights):
    """The result has the chain's shape, strides, dtype (torch's promotion) and device, and each
    element is the exact weighted sum within the roundings of its compute type and one final
    rounding (exact for bool and integer sums, which wrap around)."""
    like = chained(tensors, weights)
    assert result.shape == like.shape
    assert result.stride() == like.stride(), "memory layout differs from a chain of torch.add"
    assert result.dtype == like.dtype
    assert result.device == like.device
    dtype = result.dtype
    if dtype == torch.bool:  # a sum of bools is "or", a weighted term "and"
        expected = torch.zeros(like.shape, dtype=torch.bool, device=result.device)
        for tensor, weight in zip(tensors, weights, strict=True):
            expected = expected | (tensor.to(result.device).bool() & bool(weight))
        assert torch.equal(result, expected)
        return
    if not (dtype.is_floating_point or dtype.is_complex):
        expected = torch.zeros(like.shape, dtype=torch.int64, device=result.device)
        for tensor, weight in zip(tensors, weights, strict=True):
            # Each input converted to the sum's dtype first, as a chain of torch.add converts
            # it; the sum wraps in int64 as in the narrower dtype, modulo its size.
            expected = expected + int(weight) * tensor.to(result.device, dtype).long()
        torch.testing.assert_close(result, expected.to(dtype), rtol=0, atol=0)
        return
    exact = exact_sum(tensors, weights)
    compute = COMPUTED_IN.get(dtype, dtype)
    # Each of the n terms and sums rounds in compute type; then one rounding to the dtype.
    magnitude = sum(
        abs(w) * t.to(result.device, torch.complex128).abs()
        for t, w in zip(tensors, weights, strict=True)
    )
    bound = 2 * len(tensors) * _eps(compute) * magnitude
    bound = bound + _eps(dtype) * exact.abs() + torch.finfo(torch.float16).tiny
    for tensor, weight in zip(tensors, weights, strict=True):
        if tensor.dtype != dtype:  # converted to the sum's dtype first: one rounding more
            bound = (
                bound + _eps(dtype) * abs(weight) * tensor.to(result.device, torch.complex128).abs()
            )
    error = (result.to(torch.complex128) - exact).abs()
    assert bool((error <= bound).all()), (
        f"error exceeds the rounding bound by {(error - bound).max()}"
    )


def inputs_for(count, dtype, device, shape=(33, 40)):
    """count tensors that broadcast to `shape`: plain, a per-row value, a bias, a transposed
    matrix, an unaligned view, in turn."""
    rows, columns = shape
    tensors = []
    for i in range(count):
        kind = i % 5
        if kind == 0:
            tensor = make_tensor(shape, dtype, device, seed=i)
        elif kind == 1:
            tensor = make_tensor((rows, 1), dtype, device, seed=i)
        elif kind == 2:
            tensor = make_tensor((columns,), dtype, device, seed=i)
        elif kind == 3:
            tensor = make_tensor((columns, rows), dtype, device, seed=i).t()
        else:
            tensor = make_tensor((rows * columns + 1,), dtype, device, seed=i)[1:].view(shape)
        tensors.append(tensor)
    return tensors


@pytest.mark.parametrize("dtype", vecadd.SUPPORTED_DTYPES, ids=str)
@pytest.mark.parametrize("count", [1, 2, 3, 4, 5, 9, 33, 40])
def test_matches_the_weighted_sum(device, dtype, count):
    tensors = inputs_for(count, dtype, device)
    weights = [float((i % 5) - 2) for i in range(count)]
    if dtype == torch.bool:  # bool weights for a bool sum, as torch.add takes a bool alpha
        weights = [bool(weight) for weight in weights]
    assert_weighted_sum(vecadd.add_n(tensors, weights), tensors, weights)
    assert_weighted_sum(vecadd.add_n(tensors), tensors, [1] * count)


@pytest.mark.parametrize("dtype", FLOATS + COMPLEX, ids=str)
def test_fractional_weights(device, dtype):
    tensors = inputs_for(4, dtype, device)
    weights = [0.5, -1.25, 3.0, 1e-3]
    assert_weighted_sum(vecadd.add_n(tensors, weights), tensors, weights)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_complex_weights_for_complex_sums(device, dtype):
    tensors = inputs_for(4, dtype, device)
    weights = [1j, 0.5 - 2j, 3, -1.25]
    assert_weighted_sum(vecadd.add_n(tensors, weights), tensors, weights)
    # A complex weight makes a real tensor's term complex only where the sum is complex.
    mixed = [tensors[0], inputs_for(1, torch.float32, device)[0]]
    assert_weighted_sum(vecadd.add_n(mixed, [2, 1 - 1j]), mixed, [2, 1 - 1j])


# Lists of dtypes whose chain of torch.add promotes: categories, widths, 0-dim tensors (of lower
# category: they do not widen the sum; of higher: they do).
MIXED = {
    "float32, bfloat16, float64": (
        (torch.float32, (33, 40)),
        (torch.bfloat16, (40,)),
        (torch.float64, (33, 1)),
    ),
    "float16 and bfloat16": ((torch.float16, (33, 40)), (torch.bfloat16, (33, 40))),
    "int8, uint8, int16": ((torch.int8, (33, 40)), (torch.uint8, (40,)), (torch.int16, (33, 40))),
    "bool, int32, float16": (
        (torch.bool, (33, 40)),
        (torch.int32, (40,)),
        (torch.float16, (33, 40)),
    ),
    "float16 and a 0-dim float64": ((torch.float16, (33, 40)), (torch.float64, ())),
    "int16 and a 0-dim float32": ((torch.int16, (33, 40)), (torch.float32, ())),
    "float32 and a 0-dim complex128": ((torch.float32, (33, 40)), (torch.complex128, ())),
    "complex32, float32, int64": (
        (torch.complex32, (33, 40)),
        (torch.float32, (40,)),
        (torch.int64, (33, 1)),
    ),
}


@pytest.mark.parametrize("case", list(MIXED))
def test_mixed_dtypes_promote_as_the_chain_of_torch_add(device, case):
    tensors = [
        make_tensor(shape, dtype, device, seed=i, low=-100, high=100)
        for i, (dtype, shape) in enumerate(MIXED[case])
    ]
    floating = chained(tensors, None).dtype.is_floating_point
    weights = [0.5, -2.0, 3.0][: len(tensors)] if floating else [1, -2, 3][: len(tensors)]
    if chained(tensors, None).dtype.is_complex:
        weights = [0.5, 1 - 2j, 3.0][: len(tensors)]
    assert_weighted_sum(vecadd.add_n(tensors, weights), tensors, weights)
    assert_weighted_sum(vecadd.add_n(tensors), tensors, [1] * len(tensors))


def test_out_of_a_dtype_torch_casts_the_sum_to(device):
    tensors = inputs_for(3, torch.float32, device)
    weights = [1.0, -2.0, 0.5]
    expected = vecadd.add_n(tensors, weights)
    for dtype in (torch.float64, torch.float16, torch.complex64):
        out = torch.empty(33, 40, dtype=dtype, device=device)
        assert vecadd.add_n(tensors, weights, out=out) is out
        # The sum in float32, then cast into out as torch casts it.
        torch.testing.assert_close(out, expected.to(dtype), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_16_bit_floats_round_once(device, dtype):
    # Terms that cancel in float32 but not after rounding each partial sum to 16 bits.
    big = torch.full((64,), 2048.0, dtype=dtype, device=device)
    small = torch.full((64,), 1.0, dtype=dtype, device=device)
    result = vecadd.add_n([big, small, small, -big], [1.0, 0.5, 0.5, 1.0])
    assert torch.equal(result, torch.ones(64, dtype=dtype, device=device))


def test_integers_wrap_around(device):
    big = torch.full((8,), 2**31 - 1, dtype=torch.int32, device=device)
    one = torch.ones(8, dtype=torch.int32, device=device)
    result = vecadd.add_n([big, one, one])
    assert result.tolist() == [-(2**31) + 1] * 8


def test_zero_dim_and_empty_tensors(device):
    scalars = [torch.tensor(float(i), device=device) for i in range(3)]
    assert vecadd.add_n(scalars, [1.0, 2.0, 3.0]).item() == 8.0
    empty = [torch.ones(0, 3, device=device), torch.ones(3, device=device)]
    assert vecadd.add_n(empty).shape == (0, 3)


def test_out_and_in_place(device):
    tensors = inputs_for(3, torch.float32, device)
    weights = [1.0, -2.0, 0.5]
    out = torch.empty(33, 40, device=device)
    assert vecadd.add_n(tensors, weights, out=out) is out
    assert_weighted_sum(out, tensors, weights)
    first = tensors[0].clone()
    expected = vecadd.add_n([first, *tensors[1:]], weights)
    vecadd.add_n([first, *tensors[1:]], weights, out=first)
    assert torch.equal(first, expected)


def test_many_dimensions_and_a_64_bit_offset_layout(device):
    # Ten dimensions that cannot merge: more than one launch walks.
    base = make_tensor((3,) * 10, torch.float32, device, seed=1)
    view = base[(slice(0, 2),) * 10]
    tensors = [view, make_tensor((2,) * 10, torch.float32, device, seed=2), view]
    assert_weighted_sum(vecadd.add_n(tensors, [1.0, 2.0, 3.0]), tensors, [1.0, 2.0, 3.0])


@pytest.mark.parametrize("count", [1, 2, 3])
def test_gradients_are_weighted_and_reduced_to_each_shape(device, count):
    shapes = [(3, 4), (4,), (3, 1)][:count]
    tensors = [
        make_tensor(shape, torch.float64, device, seed=i).requires_grad_()
        for i, shape in enumerate(shapes)
    ]
    weights = [1.5, -2.0, 0.25][:count]

    def function(*inputs):
        return vecadd.add_n(list(inputs), weights)

    assert torch.autograd.gradcheck(function, tensors)
    assert torch.autograd.gradgradcheck(function, tensors)
    vecadd.add_n(tensors, weights).sum().backward()
    for tensor, weight, shape in zip(tensors, weights, shapes, strict=True):
        expected = torch.full(
            shape, weight * math.prod((3, 4)) / math.prod(shape), dtype=torch.float64, device=device
        )
        torch.testing.assert_close(tensor.grad, expected)


def test_only_tensors_that_require_grad_get_one(device):
    a = make_tensor((5,), torch.float32, device, seed=1).requires_grad_()
    b = make_tensor((5,), torch.float32, device, seed=2)
    vecadd.add_n([a, b], [2.0, 3.0]).sum().backward()
    assert b.grad is None
    torch.testing.assert_close(a.grad, torch.full((5,), 2.0, device=device))


def test_torch_func_transforms(device):
    tensors = [make_tensor((4,), torch.float64, device, seed=i) for i in range(3)]
    weights = [1.0, -2.0, 0.5]

    def function(a, b, c):
        return vecadd.add_n([a, b, c], weights).sum()

    grads = torch.func.grad(function, argnums=(0, 1, 2))(*tensors)
    for grad, weight in zip(grads, weights, strict=True):
        torch.testing.assert_close(
            grad, torch.full((4,), weight, dtype=torch.float64, device=device)
        )
    tangents = [torch.ones(4, dtype=torch.float64, device=device)] * 3
    _, tangent = torch.func.jvp(
        lambda *t: vecadd.add_n(list(t), weights), tuple(tensors), tuple(tangents)
    )
    torch.testing.assert_close(tangent, torch.full((4,), -0.5, dtype=torch.float64, device=device))
    batched = torch.func.vmap(lambda a, b: vecadd.add_n([a, b], [1.0, 2.0]))(
        torch.ones(3, 4, device=device), torch.ones(3, 4, device=device)
    )
    torch.testing.assert_close(batched, torch.full((3, 4), 3.0, device=device))


def test_schemas_are_the_public_contract():
    # Each weight's imaginary part as a float (the stable ABI has no complex or Scalar), and
    # the dtype the Python face asks for where a Python number's promotion decides it.
    assert str(torch.ops.vecadd.add_n.default._schema) == (
        "vecadd::add_n(Tensor[] tensors, float[]? weights=None, *, float[]? weights_imag=None, "
        "ScalarType? dtype=None) -> Tensor"
    )
    assert str(torch.ops.vecadd.add_n.out._schema) == (
        "vecadd::add_n.out(Tensor[] tensors, float[]? weights=None, *, float[]? "
        "weights_imag=None, ScalarType? dtype=None, Tensor(a!) out) -> ()"
    )
    assert torch.Tag.pt2_compliant_tag in torch.ops.vecadd.add_n.default.tags


@pytest.mark.parametrize("grad", [False, True])
def test_opcheck(device, grad):
    tensors = [
        make_tensor(shape, torch.float32, device, seed=i).requires_grad_(grad)
        for i, shape in enumerate([(3, 4), (4,), (3, 1)])
    ]
    torch.library.opcheck(
        torch.ops.vecadd.add_n.default, (tensors, [1.0, 2.0, -1.0]), test_utils=OPCHECK_TESTS
    )
    torch.library.opcheck(torch.ops.vecadd.add_n.default, (tensors[:2],), test_utils=OPCHECK_TESTS)
    if not grad:
        out = torch.empty(3, 4, device=device)
        torch.library.opcheck(
            torch.ops.vecadd.add_n.out, (tensors, None), {"out": out}, test_utils=OPCHECK_TESTS[:3]
        )


def inductor_gxx_major() -> int | None:
    """The major version of the g++ Inductor compiles CPU kernels with (None if not g++)."""
    try:
        from torch._inductor.cpp_builder import get_cpp_compiler

        banner = subprocess.run(
            [get_cpp_compiler(), "--version"], capture_output=True, text=True
        ).stdout
    except (ImportError, OSError, RuntimeError):  # no compiler Inductor could name or run
        return None
    found = re.match(r"(?:g\+\+|c\+\+).*\) (\d+)\.\d+", banner)
    return int(found.group(1)) if found else None


# docs/wheels.md, "aarch64, under emulation": g++ 12 crashes on torch 2.15.0's SVE header.
SVE_HEADER_CRASH = "g++ 12 crashes compiling torch 2.15.0's aarch64 SVE header (ATen/cpu/vec/sve)"


def test_torch_compile_without_graph_breaks(device, request):
    if (
        device == "cpu"
        and platform.machine() == "aarch64"
        and torch.__version__.split("+")[0] == "2.15.0"
        and inductor_gxx_major() == 12
    ):
        request.applymarker(pytest.mark.xfail(reason=SVE_HEADER_CRASH, strict=True))
    torch._dynamo.reset()

    def function(a, b, c):
        return vecadd.add_n([a, b, c], [2.0, 1.0, -1.0]) * 2

    compiled = torch.compile(function, fullgraph=True, dynamic=True)
    for rows in (3, 5):
        tensors = [make_tensor((rows, 4), torch.float32, device, seed=i) for i in range(3)]
        torch.testing.assert_close(compiled(*tensors), function(*tensors))


def test_torch_export_round_trip(device, tmp_path):
    class Model(torch.nn.Module):
        def forward(self, a, b, c):
            return vecadd.add_n([a, b, c], [1.0, 0.5, 2.0])

    tensors = tuple(make_tensor((3, 4), torch.float32, device, seed=i) for i in range(3))
    exported = torch.export.export(Model(), tensors)
    assert "vecadd.add_n" in str(exported.graph)
    path = tmp_path / "model.pt2"
    torch.export.save(exported, path)
    loaded = torch.export.load(path)
    torch.testing.assert_close(loaded.module()(*tensors), Model()(*tensors))


def refused_calls(device):
    def t(*shape, dtype=torch.float32, on=device):
        return torch.ones(shape, dtype=dtype, device=on)

    return {
        "empty list": (
            lambda: vecadd.add_n([]),
            ValueError,
            "vecadd.add_n(): argument 'tensors' is an empty list; expected at least one tensor",
        ),
        "weights of another length": (
            lambda: vecadd.add_n([t(3), t(3)], [1.0]),
            ValueError,
            "vecadd.add_n(): argument 'weights' has 1 value but 'tensors' has 2 tensors; "
            "expected one weight per tensor",
        ),
        "bfloat16 beside a complex 0-dim tensor": (
            lambda: vecadd.add_n([t(3, dtype=torch.bfloat16), t(dtype=torch.complex64)]),
            TypeError,
            "vecadd.add_n(): tensors[1] has dtype torch.complex64 beside torch.bfloat16 tensors, "
            "which torch promotes to a complex dtype of bfloat16's range; vecadd (and torch.add) "
            "compute in none: expected the bfloat16 tensors converted first, e.g. to "
            "torch.float32",
        ),
        "shapes that do not broadcast": (
            lambda: vecadd.add_n([t(2, 4), t(4), t(3)]),
            ValueError,
            "vecadd.add_n(): tensors[0] of shape [2, 4], tensors[1] of shape [4] and tensors[2] "
            "of shape [3] cannot be broadcast together: in dimension -1, tensors[0] has 4 and "
            "tensors[2] has 3; expected sizes that are equal or 1 in each trailing dimension",
        ),
        "unsupported dtype": (
            lambda: vecadd.add_n([t(3), t(3, dtype=torch.uint16)]),
            TypeError,
            "vecadd.add_n(): argument 'tensors[1]' has dtype torch.uint16, which vecadd does not "
            "support (nor does torch.add); expected torch.bool, torch.uint8, torch.int8, "
            "torch.int16, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float32, "
            "torch.float64, torch.complex32, torch.complex64 or torch.complex128",
        ),
        "fractional weight for integers": (
            lambda: vecadd.add_n([t(3, dtype=torch.int64)] * 2, [1, 0.5]),
            TypeError,
            "vecadd.add_n(): argument 'weights' has 0.5 at index 1 but the tensors have dtype "
            "torch.int64; expected integral weights for integer tensors",
        ),
        "fractional weight for integers summed in int16": (
            lambda: vecadd.add_n([t(3, dtype=torch.uint8), t(3, dtype=torch.int8)], [0.5, 1]),
            TypeError,
            "vecadd.add_n(): argument 'weights' has 0.5 at index 0 but the tensors sum in "
            "torch.int16; expected integral weights for integer tensors",
        ),
        "complex weight for a real sum": (
            lambda: vecadd.add_n([t(3), t(3)], [1, 2 + 1j]),
            TypeError,
            "vecadd.add_n(): argument 'weights' has (2+1j) at index 1 but the tensors have dtype "
            "torch.float32; expected a real weight for tensors that are not complex",
        ),
        "bool weight for an integer sum": (
            lambda: vecadd.add_n([t(3, dtype=torch.int64), t(3, dtype=torch.bool)], [True, 1]),
            TypeError,
            "vecadd.add_n(): argument 'weights[0]' is a bool (True) but the tensors sum in "
            "torch.int64; expected a bool weight only for a bool sum, as torch takes a bool "
            "alpha, else an int, a float or a complex number",
        ),
        "a non-tensor in the list": (
            lambda: vecadd.add_n([t(3), [1.0, 2.0, 3.0]]),
            TypeError,
            "vecadd.add_n(): argument 'tensors[1]' must be a torch.Tensor, got list; expected a "
            "tensor (wrap numbers or lists with torch.as_tensor)",
        ),
        "out of another shape": (
            lambda: vecadd.add_n([t(2, 3), t(3)], out=t(3)),
            ValueError,
            "vecadd.add_n(): out has shape [3]; expected [2, 3], the broadcast shape of the "
            "tensors (vecadd does not resize out)",
        ),
        "out of a dtype torch does not cast to": (
            lambda: vecadd.add_n([t(3)], out=t(3, dtype=torch.int64)),
            TypeError,
            "vecadd.add_n(): out has dtype torch.int64 but the sum of the tensors is "
            "torch.float32, which torch does not cast to it (a floating-point number to an "
            "integer); expected out of dtype torch.float32 or one it casts to",
        ),
        "complex sum into a real out": (
            lambda: vecadd.add_n([t(3), t(3, dtype=torch.complex64)], out=t(3)),
            TypeError,
            "vecadd.add_n(): out has dtype torch.float32 but the sum of the tensors is "
            "torch.complex64, which torch does not cast to it (a complex number to a real one); "
            "expected out of dtype torch.complex64 or one it casts to",
        ),
    }


@pytest.mark.parametrize("case", list(refused_calls("cpu")))
def test_bad_input_is_refused_in_words(device, case):
    call, kind, message = refused_calls(device)[case]
    with pytest.raises(kind) as raised:
        call()
    assert str(raised.value) == message


@pytest.mark.parametrize("case", list(refused_calls("cpu")))
def test_fake_kernels_refuse_in_the_same_words(case):
    _, kind, message = refused_calls("cpu")[case]
    fake_call = refused_calls("meta")[case][0]
    with pytest.raises(kind) as raised:
        fake_call()
    assert str(raised.value) == message


def test_mixed_devices_and_overlap_are_refused(device):
    base = torch.arange(12.0, device=device)
    with pytest.raises(
        op_error(RuntimeError), match=r"out partly overlaps the memory of 'tensors\[0\]'"
    ):
        vecadd.add_n([base[:6], base[2:8]], out=base[1:7])
    if device == "cuda":
        with pytest.raises(
            RuntimeError,
            match=r"tensors\[0\] is on cuda:0 but tensors\[1\] is on cpu; expected all",
        ):
            vecadd.add_n(
                [torch.ones(3, device="cuda"), torch.ones(3), torch.ones(3, device="cuda")]
            )
        # A 0-dim CPU tensor joins them, as it joins a chain of torch.add.
        tensors = [torch.ones(3, device="cuda"), torch.tensor(2.5), torch.ones(3, device="cuda")]
        assert_weighted_sum(vecadd.add_n(tensors, [1, -2, 3]), tensors, [1, -2, 3])


def test_weights_must_be_numbers():
    with pytest.raises(TypeError) as raised:
        vecadd.add_n([torch.ones(2)] * 2, [1.0, True])
    assert str(raised.value) == (
        "vecadd.add_n(): argument 'weights[1]' is a bool (True) but the tensors sum in "
        "torch.float32; expected a bool weight only for a bool sum, as torch takes a bool alpha, "
        "else an int, a float or a complex number"
    )
    with pytest.raises(TypeError) as raised:
        vecadd.add_n([torch.ones(2)] * 2, 2.0)
    assert str(raised.value) == (
        "vecadd.add_n(): argument 'weights' must be a list or tuple of numbers or None, got float"
    )
    with pytest.raises(TypeError) as raised:
        vecadd.add_n([torch.ones(2)] * 2, [1.0, "2"])
    assert str(raised.value) == (
        "vecadd.add_n(): argument 'weights[1]' must be a number (bool, int, float or complex), "
        "got str"
    )


def test_bool_weights_for_a_bool_sum_are_and_and_or():
    """torch.add takes a bool alpha for bool tensors: a term is kept where its weight is
    true, and terms are or-ed."""
    a = torch.tensor([True, False, True, False])
    b = torch.tensor([True, True, False, False])
    assert torch.equal(vecadd.add_n([a, b], [True, False]), torch.add(a, b, alpha=False))
    assert torch.equal(vecadd.add_n([a, b], [False, True]), b)
    assert torch.equal(vecadd.add_n([a, b]), torch.add(a, b))


@pytest.mark.cuda
def test_a_call_beyond_32_bit_indices():
    # 2**31 + 32 float16 elements: the strided and contiguous kernels take 64-bit indices.
    count = 2**31 + 32
    x = torch.full((count,), 1.0, dtype=torch.float16, device="cuda")
    row = torch.full((1,), 2.0, dtype=torch.float16, device="cuda")
    result = vecadd.add_n([x, row.expand(count), x], [1.0, 0.5, 2.0])
    assert result[0].item() == 4.0
    assert result[-1].item() == 4.0
    assert bool((result == 4.0).all())


def test_the_lean_way_in_keeps_the_checked_ways_contract(device):
    """Plain tensors take add_n's lean way (its private overloads, no argument binding): out=
    bumps out's version as the public .out overload does, tuples and int weights are taken,
    and what only the checked way can word (out= with grad, an int no float holds) is refused
    in its words."""
    tensors = [make_tensor((3, 4), torch.float32, device, seed=i) for i in range(3)]
    out = torch.empty(3, 4, device=device)
    version = out._version
    assert vecadd.add_n(tuple(tensors), (1, 2, -1), out=out) is out
    assert out._version > version
    torch.testing.assert_close(out, tensors[0] + 2 * tensors[1] - tensors[2])
    leaves = [t.clone().requires_grad_() for t in tensors]
    with pytest.raises(RuntimeError, match=r"vecadd\.add_n\(\): out= cannot be used when"):
        vecadd.add_n(leaves, out=out)
    with torch.no_grad():
        vecadd.add_n(leaves, out=out)
    with pytest.raises(ValueError, match=r"'weights\[0\]' is 1152921504606846977, which a float"):
        vecadd.add_n(tensors, [2**60 + 1, 1, 1])
    summed = vecadd.add_n(leaves, [0.5, 1, 2])
    summed.sum().backward()
    for leaf, weight in zip(leaves, [0.5, 1, 2], strict=True):
        torch.testing.assert_close(leaf.grad, torch.full_like(leaf, weight))
