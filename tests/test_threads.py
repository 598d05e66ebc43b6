"""vecadd called from many threads at once gives exactly what one thread gets, with or without
the GIL; on a free-threaded CPython, importing vecadd leaves the GIL off."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import threading
import time

import pytest
import torch

import vecadd
from helpers import make_tensor

THREADS = 8
# Seconds the threads call for: short in the suite, longer where asked (nox -s freethreaded).
SECONDS = float(os.environ.get("VECADD_THREAD_TEST_SECONDS", "1.5"))
FREE_THREADED_BUILD = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


def _calls() -> list:
    """One call per thread, each its own shape, dtype and way in: add, add with alpha,
    broadcasting and strided add, add_n with and without weights, the VecAdd layer, and out=."""
    a = make_tensor((257, 33), torch.float32, "cpu", seed=1)
    b = make_tensor((257, 33), torch.float32, "cpu", seed=2)
    i = make_tensor((4096,), torch.int32, "cpu", seed=3)
    j = make_tensor((4096,), torch.int32, "cpu", seed=4)
    h = make_tensor((64, 1, 31), torch.float16, "cpu", seed=5)
    g = make_tensor((1, 17, 31), torch.float16, "cpu", seed=6)
    d = make_tensor((70_000,), torch.float64, "cpu", seed=7)  # above one thread's share
    s = make_tensor((40, 60), torch.bfloat16, "cpu", seed=8).t()  # a transposed view
    t = make_tensor((60, 40), torch.bfloat16, "cpu", seed=9)
    n = [make_tensor((9, 130), torch.float32, "cpu", seed=10 + k) for k in range(4)]
    layer = vecadd.VecAdd(alpha=0.25)
    out = torch.empty(4096, dtype=torch.int32)

    def add_out(out=out):
        # Each call writes the thread's own buffer: the result is that buffer's copy.
        return vecadd.add(i, j, alpha=3, out=out).clone()

    return [
        lambda: vecadd.add(a, b),
        lambda: vecadd.add(i, j, alpha=-2),
        lambda: vecadd.add(h, g, alpha=0.5),
        lambda: vecadd.add(d, d, alpha=1.5),
        lambda: vecadd.add(s, t),
        lambda: vecadd.add_n(n, weights=[1.0, -2.0, 0.5, 3.0]),
        lambda: layer(a, b),
        add_out,
    ]


def test_threads_get_the_single_threaded_results():
    calls = _calls()
    assert len(calls) == THREADS
    expected = [call() for call in calls]
    start = threading.Barrier(THREADS)
    mismatches: list[str] = []
    counts = [0] * THREADS
    errors: list[BaseException] = []

    def worker(index: int) -> None:
        try:
            start.wait()
            deadline = time.monotonic() + SECONDS
            while time.monotonic() < deadline:
                result = calls[index]()
                counts[index] += 1
                if not torch.equal(result, expected[index]) or result.stride() != (
                    expected[index].stride()
                ):
                    mismatches.append(f"call {index}, round {counts[index]}")
        except BaseException as error:  # re-raised below, in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert not mismatches, mismatches[:10]
    assert all(count > 0 for count in counts), counts
    # triton's extension turns the GIL back on when torch.compile's tests load it in a process.
    if FREE_THREADED_BUILD and "triton" not in sys.modules:
        assert not sys._is_gil_enabled(), "the threads ran under the GIL"


def test_threads_train_the_same_gradients():
    x = make_tensor((128, 16), torch.float32, "cpu", seed=20)
    y = make_tensor((128, 16), torch.float32, "cpu", seed=21)

    def gradients():
        xs, ys = x.clone().requires_grad_(), y.clone().requires_grad_()
        (vecadd.add(xs, ys, alpha=-1.5) * torch.arange(16.0)).sum().backward()
        return xs.grad, ys.grad

    expected = gradients()
    results: list = [None] * THREADS
    start = threading.Barrier(THREADS)

    def worker(index: int) -> None:
        start.wait()
        results[index] = [gradients() for _ in range(20)]

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for per_thread in results:
        assert per_thread is not None
        for grad_x, grad_y in per_thread:
            assert torch.equal(grad_x, expected[0])
            assert torch.equal(grad_y, expected[1])


@pytest.mark.skipif(not FREE_THREADED_BUILD, reason="needs a free-threaded CPython (3.13t)")
def test_import_leaves_the_gil_off():
    # An extension module that does not declare itself free-threading safe turns the GIL back
    # on at import, with a RuntimeWarning: -W error makes that warning fail the import.
    ran = subprocess.run(
        [
            sys.executable,
            "-W",
            "error::RuntimeWarning",
            "-c",
            "import sys, vecadd; print(sys._is_gil_enabled())",
        ],
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "False"
