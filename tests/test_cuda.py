"""CUDA specifics: launch shapes, broadcast kernels, streams, graphs, threads, devices,
alignment, memory and huge inputs."""

from __future__ import annotations

import os
import threading

import pytest
import torch

import vecadd
from helpers import make_tensor

pytestmark = pytest.mark.cuda


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("offset", range(1, 8))
def test_unaligned_views_at_every_offset(dtype, offset):
    x = make_tensor((4099,), dtype, "cuda", seed=1)
    y = make_tensor((4099,), dtype, "cuda", seed=2)
    out = torch.empty(4099, dtype=dtype, device="cuda")
    xs, ys = x[offset:], y[: 4099 - offset]
    torch.testing.assert_close(vecadd.add(xs, ys), xs + ys, rtol=0, atol=0)
    vecadd.add(xs, ys, out=out[offset:])
    torch.testing.assert_close(out[offset:], xs + ys, rtol=0, atol=0)


def _assert_every_element_is_written(n: int, dtype: torch.dtype, seed: int) -> None:
    x = make_tensor((n,), dtype, "cuda", seed=seed)
    y = make_tensor((n,), dtype, "cuda", seed=seed + 1)
    out = torch.full((n,), 99, dtype=dtype, device="cuda")
    vecadd.add(x, y, alpha=-1, out=out)
    torch.testing.assert_close(out, torch.add(x, y, alpha=-1), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", vecadd.SUPPORTED_DTYPES)
def test_every_element_is_written(dtype):
    for n in (1, 3, 17, 1023, 65_537, 1_000_003):
        _assert_every_element_is_written(n, dtype, seed=n)


def is_vecadd_kernel(name: str) -> bool:
    return any(
        kernel in name
        for kernel in ("sum_contiguous_kernel", "sum_rows_kernel", "sum_strided_kernel")
    )


def _broadcast_case(case: str, dtype: torch.dtype):
    """x, y and the CUDA kernel vecadd should pick for a broadcast layout."""
    make = lambda shape, seed: make_tensor(shape, dtype, "cuda", seed=seed)  # noqa: E731
    if case == "row":  # (rows, 64) + (64,): contiguous rows, every row 16-byte aligned
        return make((333, 64), 1), make((64,), 2), "sum_rows_kernel"
    if case == "batch_of_matrices":  # (5, 7, 32) + (7, 32) coalesces into rows of 224
        return make((5, 7, 32), 1), make((7, 32), 2), "sum_rows_kernel"
    if case == "row_starts_unaligned":  # rows 65 elements apart: not all rows 16-byte aligned
        return make((100, 65), 1)[:, :64], make((64,), 2), "sum_strided_kernel"
    if case == "shifted_start":  # the first element is off a 16-byte boundary
        return make((100, 65), 1)[:, 1:], make((64,), 2), "sum_strided_kernel"
    if case == "column":  # (rows, 1) broadcast: y repeats one element along each row
        return make((300, 64), 1), make((300, 1), 2), "sum_rows_kernel"
    if case == "column_unaligned_rows":  # the same with rows 65 elements apart in x
        return make((300, 65), 1)[:, :64], make((300, 1), 2), "sum_strided_kernel"
    if case == "mixed_order":  # y column-major: no dimension is contiguous in all three
        return make((200, 64), 1), make((64, 200), 2).t(), "sum_strided_kernel"
    if case == "transposed":  # one transposed layout for x, y and the result: a flat array
        return make((64, 333), 1).t(), make((64, 333), 2).t(), "sum_contiguous_kernel"
    if case == "channels_last_bias":  # NHWC activations + a (C, 1, 1) bias: rows of C
        activations = make((4, 64, 7, 9), 1).to(memory_format=torch.channels_last)
        return activations, make((64, 1, 1), 2), "sum_rows_kernel"
    raise ValueError(case)


BROADCAST_CASES = [
    "row",
    "batch_of_matrices",
    "row_starts_unaligned",
    "shifted_start",
    "column",
    "column_unaligned_rows",
    "mixed_order",
    "transposed",
    "channels_last_bias",
]


@pytest.mark.parametrize("dtype", vecadd.SUPPORTED_DTYPES)
@pytest.mark.parametrize("case", BROADCAST_CASES)
def test_broadcast_layouts_match_torch(dtype, case):
    x, y, _ = _broadcast_case(case, dtype)
    shape = torch.broadcast_shapes(x.shape, y.shape)
    for alpha in (1, -3):
        expected = torch.add(x, y, alpha=alpha)
        result = vecadd.add(x, y, alpha=alpha)
        torch.testing.assert_close(result, expected, rtol=0, atol=0)
        assert result.stride() == expected.stride()
        swapped = torch.add(y, x, alpha=alpha)
        swapped_result = vecadd.add(y, x, alpha=alpha)
        torch.testing.assert_close(swapped_result, swapped, rtol=0, atol=0)
        assert swapped_result.stride() == swapped.stride()
        row_major = torch.full(shape, 7, dtype=dtype, device="cuda")
        reversed_dims = list(range(len(shape)))[::-1]
        column_major = torch.full(shape[::-1], 7, dtype=dtype, device="cuda").permute(reversed_dims)
        for out in (row_major, column_major):
            vecadd.add(x, y, alpha=alpha, out=out)
            torch.testing.assert_close(out, expected, rtol=0, atol=0)


@pytest.mark.profiler
@pytest.mark.parametrize("case", BROADCAST_CASES)
def test_broadcast_layouts_pick_the_vectorized_row_kernel_when_they_can(case):
    x, y, expected_kernel = _broadcast_case(case, torch.float32)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as profile:
        vecadd.add(x, y)
        torch.cuda.synchronize()
    kernels = [event.name for event in profile.events() if is_vecadd_kernel(event.name)]
    assert kernels, "the profiler saw no vecadd kernel"
    assert all(expected_kernel in name for name in kernels), kernels


def _elements_for(bytes_in_all_three: int, dtype: torch.dtype) -> int:
    """An odd n whose x, y and z together take at least the given bytes."""
    itemsize = torch.empty((), dtype=dtype).element_size()
    return bytes_in_all_three // (3 * itemsize) + 4097


def _l2_bytes() -> int:
    return getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 64 << 20)


# Below 4 MiB in all (128-thread blocks, always; two packs where that grid still reaches every
# SM) and above it (1024-thread blocks right after a vecadd kernel in a graph; streaming stores
# once z alone outgrows the L2), the large shape just above the threshold, a quarter to a half
# of the L2 (2-byte elements back to one pack), within and beyond the L2, and beyond 128 MiB,
# where every width goes back to one pack per thread; one_wave is a grid of fewer 128-thread
# blocks than SMs.
ARRAY_SIZES = {
    "one_wave": lambda: 256 << 10,
    "small": lambda: 1 << 20,
    "short_two_packs": lambda: 3 << 20,
    "medium": lambda: 6 << 20,
    "large": lambda: 16 << 20,
    "quarter_to_half_l2": lambda: 3 * _l2_bytes() // 8,
    "beyond_l2": lambda: 2 * _l2_bytes(),
    "beyond_two_packs": lambda: 160 << 20,
}


@pytest.mark.parametrize("dtype", vecadd.SUPPORTED_DTYPES)
@pytest.mark.parametrize("size", ARRAY_SIZES)
def test_every_launch_shape_writes_every_element(dtype, size):
    _assert_every_element_is_written(_elements_for(ARRAY_SIZES[size](), dtype), dtype, seed=3)


def _contiguous_kernels(run) -> list[str]:
    """The names of vecadd's contiguous kernels that run() ran on the GPU, in launch order."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as profile:
        run()
        torch.cuda.synchronize()
    events = [event for event in profile.events() if "sum_contiguous_kernel" in event.name]
    return [event.name for event in sorted(events, key=lambda event: event.time_range.start)]


def _replay_three_calls(n: int) -> list[str]:
    """Captures a torch kernel, then a vecadd call (after the torch kernel), then another (after
    vecadd's) in a graph, replays it, checks the result and returns the kernels' names."""
    x = torch.randn(n, device="cuda")
    z = torch.empty_like(x)

    def calls() -> None:
        torch.mul(x, 2, out=z)
        vecadd.add(x, z, out=z)
        vecadd.add(z, x, out=z)

    calls()  # outside capture first: lazy loading, allocator
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        calls()
    z.zero_()
    kernels = _contiguous_kernels(graph.replay)
    torch.testing.assert_close(z, (x + 2 * x) + x, rtol=0, atol=0)
    return kernels


@pytest.mark.profiler
@pytest.mark.parametrize("size", ARRAY_SIZES)
def test_eager_calls_take_small_blocks(size):
    # Outside a graph a call cannot know the kernel before it: 1024-thread blocks won only
    # behind a vecadd kernel (docs/kernel-notes.md, version 16).
    x = torch.randn(_elements_for(ARRAY_SIZES[size](), torch.float32), device="cuda")
    kernels = _contiguous_kernels(lambda: vecadd.add(x, x))
    assert len(kernels) == 1, kernels
    assert "1024" not in kernels[0], kernels


@pytest.mark.profiler
@pytest.mark.parametrize("size", ARRAY_SIZES)
def test_graphed_calls_after_vecadd_take_large_blocks(size):
    after_torch, after_vecadd = _replay_three_calls(
        _elements_for(ARRAY_SIZES[size](), torch.float32)
    )
    assert "1024" not in after_torch, after_torch
    assert ("1024" in after_vecadd) == (ARRAY_SIZES[size]() >= 4 << 20), after_vecadd


def _template_argument(kernel: str, index: int) -> int:
    """An argument of a sum_contiguous_kernel<T, kWidth, kThreads, kPacks, ...> name."""
    return int(kernel.split("sum_contiguous_kernel<", 1)[1].split(", ")[index])


def _packs_per_thread(kernel: str) -> int:
    return _template_argument(kernel, 3)


def _threads_per_block(kernel: str) -> int:
    return _template_argument(kernel, 2)


# lab/gpu_kernel_ab.sh times candidate launch shapes by running the library with this set; the
# shape tests then check the candidate's rule instead of the measured one.
CANDIDATE_SELECTED = os.environ.get("VECADD_LAUNCH_CANDIDATE") == "one-pack-8-byte"


def _eager_kernel(dtype: torch.dtype, mebibytes: float) -> tuple[int, str]:
    """n, and the one contiguous kernel an eager add of n elements (x, y and z together at
    least `mebibytes`) runs."""
    n = _elements_for(int(mebibytes * (1 << 20)), dtype)
    x = torch.ones(n, dtype=dtype, device="cuda")
    kernels = _contiguous_kernels(lambda: vecadd.add(x, x))
    assert len(kernels) == 1, kernels
    return n, kernels[0]


def _expected_packs(dtype: torch.dtype, n: int, *, candidate: bool = False) -> int:
    """Packs per thread of add_cuda.cu's packs_per_thread (candidate: candidate_packs)."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    width, l2 = dtype.itemsize, _l2_bytes()
    call_bytes = 3 * n * width
    short_call = call_bytes < 4 << 20
    in_window = 4 * call_bytes > l2 and 2 * call_bytes <= l2  # a quarter to a half of the L2
    if (width == 8 and short_call) or call_bytes >= (64 if width == 2 else 128) << 20:
        return 1
    if in_window and (width == 2 or (candidate and width == 8)):
        return 1
    two_pack_blocks = -(-n // (128 * 2 * (16 // width)))
    return 2 if two_pack_blocks >= (1 if short_call else 2) * sms else 1


SIZES_MIB = [0.25, 1, 3, 6, 12, 16, 24, 48, 100, 160]


@pytest.mark.profiler
@pytest.mark.skipif(
    CANDIDATE_SELECTED, reason="VECADD_LAUNCH_CANDIDATE=one-pack-8-byte runs other launch shapes"
)
@pytest.mark.parametrize("dtype", vecadd.SUPPORTED_DTYPES)
@pytest.mark.parametrize("mebibytes", SIZES_MIB)
def test_contiguous_calls_take_two_packs_where_the_grid_still_fills_the_sms(dtype, mebibytes):
    n, kernel = _eager_kernel(dtype, mebibytes)
    shape = (_threads_per_block(kernel), _packs_per_thread(kernel))
    assert shape == (128, _expected_packs(dtype, n)), kernel


@pytest.mark.profiler
@pytest.mark.skipif(not CANDIDATE_SELECTED, reason="needs VECADD_LAUNCH_CANDIDATE=one-pack-8-byte")
@pytest.mark.parametrize("dtype", vecadd.SUPPORTED_DTYPES)
@pytest.mark.parametrize("mebibytes", SIZES_MIB)
def test_candidate_packs_follow_size_width_sms_and_l2(dtype, mebibytes):
    n, kernel = _eager_kernel(dtype, mebibytes)
    shape = (_threads_per_block(kernel), _packs_per_thread(kernel))
    assert shape == (128, _expected_packs(dtype, n, candidate=True)), kernel


def _streams(kernel: str) -> bool:
    return "StoreCaching)1" in kernel or "kStreaming" in kernel


@pytest.mark.profiler
@pytest.mark.parametrize(
    ("l2_multiple", "streaming"), [(0.1, False), (2, False), (4, True)], ids=str
)
def test_streaming_stores_only_where_z_outgrows_the_l2(l2_multiple, streaming):
    # x, y and z together take l2_multiple times the L2: z alone outgrows it at 4 (4/3 L2).
    after_torch, after_vecadd = _replay_three_calls(
        _elements_for(int(l2_multiple * _l2_bytes()), torch.float32)
    )
    assert "1024" in after_vecadd, after_vecadd
    assert _streams(after_vecadd) == streaming, after_vecadd
    assert not _streams(after_torch), after_torch


def test_runs_on_the_current_stream():
    side = torch.cuda.Stream()
    x = torch.randn(1 << 22, device="cuda")
    y = torch.randn(1 << 22, device="cuda")
    blocker = torch.randn(4096, 4096, device="cuda")
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)  # keep the side stream busy for tens of milliseconds
        for _ in range(3):
            blocker = blocker @ blocker / 4096
        result = vecadd.add(x, y)
        done = torch.cuda.Event()
        done.record(side)
    assert not done.query(), "the kernel should wait behind the busy side stream"
    side.synchronize()
    torch.testing.assert_close(result, x + y, rtol=0, atol=0)


def test_cuda_graph_capture_and_replay():
    x = torch.randn(1000, device="cuda")
    y = torch.randn(1000, device="cuda")
    out = torch.empty(1000, device="cuda")
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        vecadd.add(x, y, out=out)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fresh = vecadd.add(x, y, alpha=2)
        vecadd.add(x, y, out=out)
    for _ in range(3):
        x.copy_(torch.randn(1000, device="cuda"))
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(out, x + y, rtol=0, atol=0)
        torch.testing.assert_close(fresh, torch.add(x, y, alpha=2), rtol=0, atol=0)


def _dependent_chain(kernel: str, size: str, dtype: torch.dtype):
    """x and an accumulator z for one of the three kernels. Short calls (under 4 MiB) let the
    next kernel launch as soon as their blocks start, long ones after their stores or exit."""
    rows = 128 if size == "short" else 4096
    if kernel == "contiguous":
        n = 1 << 16 if size == "short" else _elements_for(2 * _l2_bytes(), dtype)
        x_shape = z_shape = (n,)
    elif kernel == "rows":
        x_shape, z_shape = (1024,), (rows, 1024)  # a bias row broadcast over z
    else:
        x_shape, z_shape = (rows, 1024), (rows, 1024)
    x = make_tensor(x_shape, dtype, "cuda", seed=11)
    if kernel == "strided":  # column-major z against row-major x: the strided kernel
        return x, torch.zeros(z_shape[::-1], dtype=dtype, device="cuda").t()
    return x, torch.zeros(z_shape, dtype=dtype, device="cuda")


def _run_chain(add, x: torch.Tensor, z: torch.Tensor, steps: int) -> None:
    # Each call reads what the one before wrote; every eighth step a torch kernel sits between.
    for step in range(steps):
        add(x, z, out=z)
        if step % 8 == 7:
            z.neg_()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64])
@pytest.mark.parametrize("size", ["short", "long"])
@pytest.mark.parametrize("kernel", ["contiguous", "rows", "strided"])
def test_dependent_calls_see_each_others_writes(kernel, size, dtype):
    # On compute capability 9.0 and up, a launch may overlap the end of the kernel before it;
    # the kernel must still wait for that kernel's writes, eagerly and inside a CUDA graph.
    steps = 240 if size == "short" else 12
    x, z = _dependent_chain(kernel, size, dtype)
    expected = z.clone()
    _run_chain(torch.add, x, expected, steps)
    _run_chain(vecadd.add, x, z, steps)
    torch.testing.assert_close(z, expected, rtol=0, atol=0)
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        _run_chain(vecadd.add, x, z, 1)  # warm-up outside the capture
    torch.cuda.current_stream().wait_stream(stream)
    with torch.cuda.graph(graph):
        _run_chain(vecadd.add, x, z, steps)
    for _ in range(2):
        z.zero_()
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(z, expected, rtol=0, atol=0)


def test_from_eight_threads():
    errors = []

    def work(seed: int) -> None:
        try:
            with torch.cuda.stream(torch.cuda.Stream()):
                for i in range(50):
                    x = make_tensor((5000 + seed,), torch.float32, "cuda", seed=seed * 100 + i)
                    y = make_tensor((5000 + seed,), torch.float32, "cuda", seed=seed * 100 + i + 1)
                    torch.testing.assert_close(vecadd.add(x, y), x + y, rtol=0, atol=0)
        except Exception as error:  # collected and re-raised in the main thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors


def _allocations_so_far() -> tuple[int, int]:
    # Every allocation ever made and the bytes requested for them: unlike the peak, these do
    # not depend on how the caching allocator rounds a request up to a cached block.
    stats = torch.cuda.memory_stats()
    return stats["allocation.all.allocated"], stats["requested_bytes.all.allocated"]


def test_allocates_nothing_but_the_output():
    x = torch.randn(1 << 20, device="cuda")
    y = torch.randn(1 << 20, device="cuda")
    out = torch.empty_like(x)
    vecadd.add(x, y)  # warm-up
    torch.cuda.synchronize()
    count, requested = _allocations_so_far()
    vecadd.add(x, y, out=out)
    torch.cuda.synchronize()
    assert _allocations_so_far() == (count, requested)
    result = vecadd.add(x, y)
    torch.cuda.synchronize()
    assert _allocations_so_far() == (count + 1, requested + result.numel() * result.element_size())


@pytest.mark.skipif(
    torch.cuda.device_count() < 2, reason="needs two CUDA GPUs; fewer are visible here"
)
def test_second_gpu_while_the_first_is_current():
    torch.cuda.set_device(0)
    x = torch.randn(1000, device="cuda:1")
    y = torch.randn(1000, device="cuda:1")
    result = vecadd.add(x, y)
    assert result.device == torch.device("cuda:1")
    assert torch.cuda.current_device() == 0
    torch.testing.assert_close(result, x + y, rtol=0, atol=0)
    with pytest.raises(RuntimeError, match=r"x is on cuda:0 but y is on cuda:1"):
        vecadd.add(torch.ones(3, device="cuda:0"), torch.ones(3, device="cuda:1"))


def test_more_than_two_to_the_31_elements():
    n = (1 << 31) + 37
    try:
        x = torch.ones(n, dtype=torch.float16, device="cuda")
        y = torch.full((n,), 2.0, dtype=torch.float16, device="cuda")
    except torch.cuda.OutOfMemoryError:
        pytest.skip("not enough GPU memory for 3 x 4 GiB")
    x[-5:] = 5.0
    result = vecadd.add(x, y)
    assert result[:4].tolist() == [3.0] * 4
    assert result[-6:].tolist() == [3.0, 7.0, 7.0, 7.0, 7.0, 7.0]
    assert bool((result == 3.0).sum() == n - 5)


@pytest.mark.profiler
def test_views_reaching_beyond_two_to_the_30_take_64_bit_indices():
    # Few elements, but offsets past the 32-bit index limit (2^30): a stepped view takes
    # the strided kernel and rows 2^20 elements apart the row kernel, both with 64-bit indices.
    try:
        base = torch.randn((1 << 11) + 1, 1 << 20, dtype=torch.float16, device="cuda")
    except torch.cuda.OutOfMemoryError:
        pytest.skip("not enough GPU memory for 4 GiB")
    stepped = base[:, ::4096]  # (2049, 256), inner stride 4096: strided kernel
    rows = base[:, :64]  # (2049, 64), contiguous rows: row kernel
    bias = make_tensor((64,), torch.float16, "cuda", seed=5)
    for x, y, kernel in ((stepped, stepped, "sum_strided_kernel"), (rows, bias, "sum_rows_kernel")):
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as profile:
            result = vecadd.add(x, y, alpha=-2)
            torch.cuda.synchronize()
        names = [event.name for event in profile.events() if kernel in event.name]
        assert names, f"the profiler saw no {kernel}"
        assert all("StridedIndexer64" in name for name in names), names
        torch.testing.assert_close(result, torch.add(x, y, alpha=-2), rtol=0, atol=0)
