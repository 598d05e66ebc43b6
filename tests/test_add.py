"""vecadd.add against torch.add: dtypes (alike and mixed), shapes, views, broadcasting and special
values."""

from __future__ import annotations

import gc
import itertools
import weakref

import pytest
import torch

import vecadd
from helpers import assert_matches_torch_add, make_tensor

ALL_DTYPES = vecadd.SUPPORTED_DTYPES
FLOAT_DTYPES = tuple(dtype for dtype in ALL_DTYPES if dtype.is_floating_point)
INT_DTYPES = tuple(
    dtype for dtype in ALL_DTYPES if not (dtype.is_floating_point or dtype.is_complex)
)[1:]  # not bool


def assert_same_as_torch(x, y, alpha=1, **kwargs):
    result = vecadd.add(x, y, alpha=alpha, **kwargs)
    assert_matches_torch_add(result, x, y, alpha)
    return result


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("n", [1, 7, 8, 9, 31, 1000, 4099, 100_003])
def test_contiguous_matches_torch_bit_for_bit(device, dtype, n):
    x = make_tensor((n,), dtype, device, seed=1)
    y = make_tensor((n,), dtype, device, seed=2)
    assert_same_as_torch(x, y)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("alpha", [2, -3, 0])
def test_integral_alpha(device, dtype, alpha):
    x = make_tensor((257,), dtype, device, seed=3)
    y = make_tensor((257,), dtype, device, seed=4)
    assert_same_as_torch(x, y, alpha=alpha)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("alpha", [0.5, -1.25, 1e-3])
def test_float_alpha(device, dtype, alpha):
    x = make_tensor((513,), dtype, device, seed=5)
    y = make_tensor((513,), dtype, device, seed=6)
    assert_same_as_torch(x, y, alpha=alpha)


def test_integral_float_alpha_for_int_tensors(device):
    x = make_tensor((10,), torch.int32, device, seed=7)
    y = make_tensor((10,), torch.int32, device, seed=8)
    torch.testing.assert_close(vecadd.add(x, y, alpha=2.0), torch.add(x, y, alpha=2))


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_overflow_wraps_like_torch(device, dtype):
    info = torch.iinfo(dtype)
    x = torch.tensor([info.max, info.min, info.max], dtype=dtype, device=device)
    y = torch.tensor([1, -1, info.max], dtype=dtype, device=device)
    assert_same_as_torch(x, y)


@pytest.mark.parametrize(
    ("x_shape", "y_shape"),
    [
        ((4, 5), (5,)),
        ((4, 1), (1, 5)),
        ((3, 1, 7), (6, 1)),
        ((2, 3, 4, 5), (1, 3, 1, 5)),
        ((), (5, 2)),
        ((5, 2), ()),
        ((1,), (3, 4)),
        ((0, 3), (3,)),
    ],
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64])
def test_broadcasting(device, x_shape, y_shape, dtype):
    x = make_tensor(x_shape, dtype, device, seed=9)
    y = make_tensor(y_shape, dtype, device, seed=10)
    assert_same_as_torch(x, y)
    assert_same_as_torch(y, x, alpha=2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64, torch.int32])
def test_views_and_strides(device, dtype):
    base = make_tensor((6, 40, 9), dtype, device, seed=11)
    other = make_tensor((6, 40, 9), dtype, device, seed=12)
    views = [
        (base[:, 1:, :], other[:, :-1, :]),  # storage offsets
        (base.transpose(0, 2), other.transpose(0, 2)),  # transposed
        (base.transpose(1, 2), other.permute(0, 2, 1)),
        (base[::2, ::3, 1:], other[1::2, ::3, :-1]),  # steps
        (base[..., 0], other[..., 1]),  # strided last dimension
        (base.flatten()[1:], other.flatten()[:-1]),  # unaligned 1-D views
        (base[:, :1, :].expand(6, 40, 9), other),  # expanded input
    ]
    for x, y in views:
        assert_same_as_torch(x, y)
        assert_same_as_torch(x, y, alpha=3)


# Pairs of dtypes torch.add promotes: each input read in its own dtype and converted in the
# kernel (tests/test_torch_add_parity.py holds every pair on plain operands).
MIXED_PAIRS = [
    (torch.float32, torch.bfloat16),
    (torch.float16, torch.float32),
    (torch.int8, torch.uint8),
    (torch.int32, torch.float64),
    (torch.bool, torch.int16),
    (torch.complex64, torch.float16),
]


@pytest.mark.parametrize(("x_dtype", "y_dtype"), MIXED_PAIRS, ids=str)
def test_mixed_dtypes_on_views_and_broadcasts_match_torch(device, x_dtype, y_dtype):
    base = make_tensor((6, 40, 9), x_dtype, device, seed=44)
    other = make_tensor((6, 40, 9), y_dtype, device, seed=45)
    pairs = [
        (base, other),
        (base[:, 1:, :], other[:, :-1, :]),  # storage offsets
        (base.transpose(0, 2), other.transpose(0, 2)),  # transposed
        (base[::2, ::3, 1:], other[1::2, ::3, :-1]),  # steps
        (base.flatten()[1:], other.flatten()[:-1]),  # unaligned 1-D views
        (base, other[0, :1, :]),  # broadcast
        (base[0, 0], other),  # a row broadcast the other way
    ]
    for x, y in pairs:
        assert_same_as_torch(x, y)
        assert_same_as_torch(y, x, alpha=3)
        # Into out of a wider dtype: the sum cast as torch.add casts it.
        shape = torch.broadcast_shapes(x.shape, y.shape)
        out = torch.empty(shape, dtype=torch.complex128, device=device)
        expected = torch.empty(shape, dtype=torch.complex128, device=device)
        assert vecadd.add(x, y, out=out) is out
        torch.testing.assert_close(out, torch.add(x, y, out=expected), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64])
@pytest.mark.parametrize(("rows", "columns"), [(1031, 129), (3, 40009)])
def test_large_strided_calls_split_into_slabs(device, dtype, rows, columns):
    # Big enough that the CPU path splits work across threads: by the outer dimension, or,
    # with only three rows, by rows and columns together.
    x = make_tensor((rows, columns), dtype, device, seed=40)
    others = [
        make_tensor((columns, rows), dtype, device, seed=41).t(),  # column-major
        make_tensor((rows, 1), dtype, device, seed=42),  # one value per row
        make_tensor((rows, 2 * columns), dtype, device, seed=43)[:, ::2],  # stepped
    ]
    for y in others:
        assert_same_as_torch(x, y)
        assert_same_as_torch(y, x, alpha=-2)
        out = torch.empty(columns, rows, dtype=dtype, device=device).t()
        vecadd.add(x, y, out=out)
        torch.testing.assert_close(out, torch.add(x, y), rtol=0, atol=0)


def test_many_dimensions_beyond_the_strided_kernel_limit(device):
    shape = (2,) * 12
    x = make_tensor(shape, torch.float32, device, seed=13).permute(*reversed(range(12)))
    y = make_tensor(shape, torch.float32, device, seed=14)[..., :1].expand(*shape)
    assert_same_as_torch(x, y)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_zero_dim_and_zero_size(device, dtype):
    assert_same_as_torch(
        make_tensor((), dtype, device, seed=15), make_tensor((), dtype, device, seed=16)
    )
    result = assert_same_as_torch(
        torch.empty(0, 4, dtype=dtype, device=device), make_tensor((4,), dtype, device, seed=17)
    )
    assert result.numel() == 0


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_nan_and_inf_propagate(device, dtype):
    special = torch.tensor(
        [float("nan"), float("inf"), -float("inf"), 1.0, float("inf")], dtype=dtype, device=device
    )
    other = torch.tensor([1.0, 1.0, 2.0, float("nan"), -float("inf")], dtype=dtype, device=device)
    result = assert_same_as_torch(special, other)
    assert torch.isnan(result[[0, 3, 4]]).all()


def _assert_same_bits_or_both_nan(result, expected):
    # Which NaN payload a NaN + NaN propagates is unspecified (torch itself differs by dtype).
    assert torch.equal(result.isnan(), expected.isnan())
    numbers = ~result.isnan()
    assert torch.equal(result.view(torch.int16)[numbers], expected.view(torch.int16)[numbers])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("alpha", [1, -0.75])
def test_every_16_bit_pattern_rounds_alike_in_vector_and_scalar_paths(device, dtype, alpha):
    # All 65536 bit patterns (NaNs, infinities, subnormals, -0) against a shuffled copy:
    # contiguous runs take the vector conversions (AVX2/F16C on x86 CPUs, 16-byte packs on
    # GPUs), stepped views the element-by-element path.
    bits = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16)
    x = bits.view(dtype).to(device)
    y = x[torch.randperm(x.numel(), generator=torch.Generator().manual_seed(7)).to(device)]
    vector = vecadd.add(x, y, alpha=alpha)
    stepped_x = torch.stack([x, x], dim=1)[:, 0]
    stepped_y = torch.stack([y, y], dim=1)[:, 0]
    _assert_same_bits_or_both_nan(vector, vecadd.add(stepped_x, stepped_y, alpha=alpha))
    if alpha == 1:  # torch may fuse the multiply-add for other alphas
        _assert_same_bits_or_both_nan(vector, torch.add(x, y))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_half_precision_rounds_once_like_torch(device, dtype):
    # Values whose float sum lies near the midpoint between two representable results.
    x = torch.linspace(-300, 300, 20011, dtype=torch.float64).to(device=device, dtype=dtype)
    y = (torch.linspace(-1, 1, 20011, dtype=torch.float64) ** 3).to(device=device, dtype=dtype)
    assert_same_as_torch(x, y)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_out_is_written_and_returned(device, dtype):
    x = make_tensor((3, 50), dtype, device, seed=18)
    y = make_tensor((50,), dtype, device, seed=19)
    out = torch.full((3, 50), 7, dtype=dtype, device=device)
    result = vecadd.add(x, y, alpha=2, out=out)
    assert result is out
    torch.testing.assert_close(out, torch.add(x, y, alpha=2))


def test_out_may_be_non_contiguous(device):
    x = make_tensor((8, 16), torch.float32, device, seed=20)
    y = make_tensor((8, 16), torch.float32, device, seed=21)
    out = torch.empty(16, 8, device=device).t()
    vecadd.add(x, y, out=out)
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)


@pytest.mark.parametrize("which", ["x", "y"])
def test_out_may_be_an_input(device, which):
    x = make_tensor((1000,), torch.float32, device, seed=22)
    y = make_tensor((1000,), torch.float32, device, seed=23)
    expected = torch.add(x, y, alpha=3)
    target = x if which == "x" else y
    assert vecadd.add(x, y, alpha=3, out=target) is target
    torch.testing.assert_close(target, expected)


def test_in_place_on_a_transposed_view(device):
    x = make_tensor((30, 20), torch.float64, device, seed=24).t()
    y = make_tensor((20, 30), torch.float64, device, seed=25)
    expected = x + y
    vecadd.add(x, y, out=x)
    torch.testing.assert_close(x, expected, rtol=0, atol=0)


@pytest.mark.parametrize(
    ("x_layout", "y_layout", "expected_strides"),
    [
        ("transposed", "contiguous", (1, 6)),  # x decides
        ("contiguous", "transposed", (5, 1)),
        ("transposed", "transposed", (1, 6)),
    ],
)
def test_result_is_new_memory_laid_out_like_torch_add(device, x_layout, y_layout, expected_strides):
    def operand(layout, seed):
        if layout == "transposed":
            return make_tensor((5, 6), torch.float32, device, seed=seed).t()
        return make_tensor((6, 5), torch.float32, device, seed=seed)

    x, y = operand(x_layout, 26), operand(y_layout, 27)
    result = vecadd.add(x, y)
    assert result.stride() == expected_strides == torch.add(x, y).stride()
    assert result.data_ptr() not in (x.data_ptr(), y.data_ptr())
    assert torch.equal(result, torch.add(x, y))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_channels_last_stays_channels_last(device, dtype):
    activations = make_tensor((2, 16, 5, 7), dtype, device, seed=28).to(
        memory_format=torch.channels_last
    )
    residual = make_tensor((2, 16, 5, 7), dtype, device, seed=29).to(
        memory_format=torch.channels_last
    )
    bias = make_tensor((16, 1, 1), dtype, device, seed=30)
    for x, y in [(activations, residual), (activations, bias), (bias, activations)]:
        result = assert_same_as_torch(x, y)
        assert result.is_contiguous(memory_format=torch.channels_last)


def test_tensor_subclass_goes_through_the_dispatcher(device):
    class Tagged(torch.Tensor):
        pass

    x = make_tensor((4,), torch.float32, device, seed=28).as_subclass(Tagged)
    y = make_tensor((4,), torch.float32, device, seed=29)
    result = vecadd.add(x, y)
    torch.testing.assert_close(result.as_subclass(torch.Tensor), x.as_subclass(torch.Tensor) + y)


def test_parameter_inputs_take_the_fast_path(device):
    weight = torch.nn.Parameter(make_tensor((4,), torch.float32, device, seed=30))
    y = make_tensor((4,), torch.float32, device, seed=31)
    torch.testing.assert_close(vecadd.add(weight, y), weight + y)


def test_torch_ops_entry_points_match_the_python_face(device):
    x = make_tensor((9,), torch.float32, device, seed=32)
    y = make_tensor((9,), torch.float32, device, seed=33)
    expected = vecadd.add(x, y, alpha=2)
    torch.testing.assert_close(torch.ops.vecadd.add(x, y, alpha=2), expected, rtol=0, atol=0)
    out = torch.empty_like(x)
    torch.ops.vecadd.add.out(x, y, alpha=2, out=out)
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


@pytest.mark.parametrize(
    ("dtype", "shape"), list(itertools.product([torch.float32, torch.int64], [(3, 4)]))
)
def test_module_layer(device, dtype, shape):
    layer = vecadd.VecAdd(alpha=2)
    x = make_tensor(shape, dtype, device, seed=34)
    y = make_tensor(shape, dtype, device, seed=35)
    torch.testing.assert_close(layer(x, y), torch.add(x, y, alpha=2))
    assert "alpha=2" in repr(layer)


def _calls_of_every_way_in(x, y, out):
    """Each way into the kernels succeeding (also with another dtype, promoted or cast into
    out), then three of them refused by the call rules."""
    other_dtype = torch.zeros(4, dtype=torch.float64, device=x.device)
    unsupported = torch.zeros(4, dtype=torch.uint16, device=x.device)
    integer_out = torch.zeros(4, dtype=torch.int32, device=x.device)
    return [
        lambda: vecadd.add(x, y),
        lambda: vecadd.add(x, y, out=out),
        lambda: torch.ops.vecadd.add(x, y),
        lambda: torch.ops.vecadd.add.out(x, y, out=out),
        lambda: torch.ops.vecadd._add_without_autograd(x, y, 2.0),
        lambda: torch.ops.vecadd._add_out_without_autograd(x, y, 2.0, out),
        lambda: vecadd.add(x, other_dtype),
        lambda: vecadd.add(x, y, out=other_dtype),
        lambda: vecadd.add(x, 2.5),
        lambda: vecadd.add(x, unsupported),
        lambda: vecadd.add(x, y, out=integer_out),
        lambda: torch.ops.vecadd._add_without_autograd(x, unsupported, 1.0),
    ]


def test_kernels_keep_no_reference_to_their_tensors(device):
    # A kernel that kept a tensor's handle (on success or on a refused call) would keep
    # its memory alive after Python let go of it: its weak reference would stay alive.
    x = make_tensor((4,), torch.float32, device, seed=30)
    y = make_tensor((4,), torch.float32, device, seed=31)
    out = torch.empty(4, device=device)
    results, refusals = [], 0
    for call in _calls_of_every_way_in(x, y, out):
        try:
            results.append(call())
        except (TypeError, RuntimeError):
            refusals += 1
    assert refusals == 3
    tensors = [x, y, out, *(result for result in results if isinstance(result, torch.Tensor))]
    assert len(tensors) >= 9
    references = [weakref.ref(tensor) for tensor in tensors]
    del x, y, out, results, tensors, call
    gc.collect()
    assert [reference() for reference in references] == [None] * len(references)
