"""vecadd's operators on DTensors: every placement of two and three inputs on one- and
two-dimensional meshes of CPU processes (gloo), with broadcasting, weights, out= and backward,
against torch on the full tensors; the output placements the rules promise, with no collective
where the inputs are aligned (tests/dtensor_cases.py); and the errors of mixed calls."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
import torch.distributed as dist

pytestmark = pytest.mark.skipif(
    not dist.is_available(), reason="this torch is built without torch.distributed"
)

if dist.is_available():
    import dtensor_cases as cases
    from ranks import Ranks


@pytest.fixture(scope="module")
def two_ranks():
    ranks = Ranks(2)
    yield ranks
    ranks.close()


@pytest.fixture(scope="module")
def four_ranks():
    ranks = Ranks(4)
    yield ranks
    ranks.close()


BROADCASTS = [
    pytest.param([(4, 6), (4, 6)], id="same-shape"),
    pytest.param([(4, 6), (6,)], id="missing-dim"),
    pytest.param([(4, 6), (4, 1)], id="size-1-dim"),
]


@pytest.mark.parametrize("shapes", BROADCASTS)
@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_two_inputs_every_placement_on_a_line_of_two(two_ranks, shapes, dtype):
    rows = two_ranks.run(cases.placement_table, "add", (2,), shapes, dtype)[0]
    assert len(rows) == len(cases.placements_of(2)) * len(cases.placements_of(len(shapes[1])))


@pytest.mark.parametrize(
    "shapes",
    [
        pytest.param([(4, 6), (4, 6), (4, 6)], id="same-shape"),
        pytest.param([(4, 6), (6,), (4, 1)], id="broadcast"),
    ],
)
def test_three_inputs_every_placement_on_a_line_of_two(two_ranks, shapes):
    rows = two_ranks.run(cases.placement_table, "add_n", (2,), shapes, "float64")[0]
    assert len(rows) == 4 * len(cases.placements_of(len(shapes[1]))) * 4


@pytest.mark.parametrize("shapes", BROADCASTS[:2])
def test_two_inputs_every_placement_on_a_two_by_two_mesh(four_ranks, shapes):
    rows = four_ranks.run(cases.placement_table, "add", (2, 2), shapes, "float32")[0]
    assert len(rows) == 16 * len(cases.placements_of(len(shapes[1]))) ** 2


def test_three_inputs_every_placement_on_a_two_by_two_mesh(four_ranks):
    shapes = [(6,), (6,), (1,)]  # 9 placements each on a 2 x 2 mesh: 729 cases
    rows = four_ranks.run(cases.placement_table, "add_n", (2, 2), shapes, "float64")[0]
    assert len(rows) == 9**3


def test_three_inputs_sampled_placements_on_a_two_by_two_mesh(four_ranks):
    shapes = [(4, 6), (6,), (4, 6)]  # 16 x 9 x 16 placements: a fixed sample
    rows = four_ranks.run(cases.placement_table, "add_n", (2, 2), shapes, "float64", "cpu", 64)[0]
    assert len(rows) == 64


def test_aligned_placements_need_no_collective(two_ranks):
    """The promised cases, spelled out: sharded alike, partial, replicated, broadcast replicated."""
    from torch.distributed.tensor import Partial, Replicate, Shard

    rows = two_ranks.run(cases.placement_table, "add", (2,), [(4, 6), (6,)], "float32")[0]
    found = {case: (placements, count) for case, placements, count in rows}
    s0, s1, r, p = Shard(0), Shard(1), Replicate(), Partial()
    assert found[((s0,), (r,))] == ((s0,), 0)  # y broadcast along the sharded dimension
    assert found[((s1,), (s0,))] == ((s1,), 0)  # y's only dimension is x's second
    assert found[((r,), (r,))] == ((r,), 0)
    assert found[((p,), (p,))] == ((p,), 0)
    assert found[((s0,), (s0,))][0] == (s0,)  # y sharded where it broadcasts: redistributed


@pytest.mark.parametrize("op", ["add", "add_n"])
@pytest.mark.parametrize("mesh", [(2,), (2, 2)], ids=["line", "square"])
def test_out_keeps_its_placements(two_ranks, four_ranks, op, mesh):
    ranks = two_ranks if len(mesh) == 1 else four_ranks
    (aligned, other) = ranks.run(cases.out_keeps_placements, op, mesh)[0]
    assert aligned[2] == 0  # out placed as the result: written in place, no collective
    assert other[2] > 0  # out replicated: the sharded result is gathered into it


@pytest.mark.parametrize("mesh", [(2,), (2, 2)], ids=["line", "square"])
def test_gradients_have_torch_adds_placements_and_values(two_ranks, four_ranks, mesh):
    ranks = two_ranks if len(mesh) == 1 else four_ranks
    rows = ranks.run(cases.backward_matches_torch, mesh)[0]
    assert len(rows) == 6


def test_compiled_fullgraph_on_dtensors(two_ranks):
    placements = two_ranks.run(cases.compiled_matches_eager, (2,))[0]
    assert placements == (cases.Shard(0),)


@pytest.mark.parametrize("mesh", [(2,), (2, 2)], ids=["line", "square"])
def test_dtensors_of_different_dtypes_promote_as_torch_add(two_ranks, four_ranks, mesh):
    ranks = two_ranks if len(mesh) == 1 else four_ranks
    rows = ranks.run(cases.promotes_like_torch, mesh)[0]
    assert [(name, dtype) for name, dtype, _ in rows] == [
        ("float32 + bfloat16", torch.float32),
        ("bfloat16 + float32", torch.float32),
        ("add_n of float32, bfloat16, float64", torch.float64),
    ]


def test_a_python_number_beside_a_dtensor_is_taken_as_torch_add_takes_it(two_ranks):
    rows = two_ranks.run(cases.numbers_beside_dtensors, (2,))[0]
    assert [(name, dtype, placements) for name, dtype, placements in rows] == [
        ("float32 + a Python float", torch.float32, (cases.Shard(0),)),
        ("a Python int - float32", torch.float32, (cases.Shard(0),)),
    ]


def test_mixed_calls_are_refused_naming_the_argument(four_ranks):
    messages = four_ranks.run(cases.refusals)[0]
    assert (
        "vecadd.add(): argument 'y' is a plain torch.Tensor but argument 'x' is a DTensor"
        in messages[0]
    )
    assert "argument 'x' is a plain torch.Tensor but argument 'y' is a DTensor" in messages[1]
    assert "vecadd.add_n(): argument 'tensors[2]' is a plain torch.Tensor" in messages[2]
    assert "argument 'out' is a plain torch.Tensor but argument 'x' is a DTensor" in messages[3]
    assert "vecadd.add(): argument 'y' is a DTensor on DeviceMesh" in messages[4]
    assert "expected every DTensor on the same device mesh" in messages[4]
    assert "vecadd.add_n(): argument 'tensors[1]' is a DTensor on DeviceMesh" in messages[5]
    assert "vecadd.add(): argument 'y' is a plain torch.Tensor" in messages[6]


def test_every_overload_of_every_record_runs_on_dtensors(two_ranks):
    """The public overloads, their out= twins and the private twins, called as torch.ops."""
    names = two_ranks.run(cases.every_overload)[0]
    assert len(names) == 4 * len(cases.OPERATORS)


def test_importing_vecadd_leaves_dtensor_unimported():
    """The rules wait for torch.distributed.tensor: importing it costs about a second."""
    ran = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, vecadd; print('torch.distributed.tensor' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.stdout.strip().splitlines()[-1] == "False", ran.stderr


TWO_GPUS = pytest.mark.skipif(
    not torch.cuda.is_available() or torch.cuda.device_count() < 2, reason="needs two GPUs"
)


@pytest.mark.cuda
def test_cuda_one_rank_mesh():
    ranks = Ranks(1, backend="nccl")
    try:
        rows = ranks.run(
            cases.placement_table, "add_n", (1,), [(4, 6), (6,), (4, 1)], "float32", "cuda"
        )[0]
        assert rows
        ranks.run(cases.out_keeps_placements, "add", (1,), "cuda")
        ranks.run(cases.backward_matches_torch, (1,), "cuda")
        ranks.run(cases.compiled_matches_eager, (1,), "cuda")
    finally:
        ranks.close()


@pytest.mark.cuda
@TWO_GPUS
def test_cuda_two_ranks():
    ranks = Ranks(2, backend="nccl")
    try:
        ranks.run(cases.placement_table, "add", (2,), [(4, 6), (6,)], "float32", "cuda")
        ranks.run(cases.placement_table, "add_n", (2,), [(4, 6), (6,), (4, 1)], "float32", "cuda")
        ranks.run(cases.out_keeps_placements, "add_n", (2,), "cuda")
        ranks.run(cases.backward_matches_torch, (2,), "cuda")
    finally:
        ranks.close()


def test_the_import_hook_gives_one_thread_the_spec_when_many_import_at_once(monkeypatch):
    """vecadd waits for torch.distributed.tensor with a finder on sys.meta_path that removes
    itself: without its lock, two threads importing at once (free-threaded CPython) both see it
    there and the second's remove raises. A slow membership test widens that window."""
    import sys
    import threading
    import time

    from vecadd._on_import import _RegisterOnImport
    from vecadd._sharding import DTENSOR_MODULE

    class SlowList(list):
        def __contains__(self, item):
            found = super().__contains__(item)
            time.sleep(0.05)  # the window between the look and the remove
            return found

    finder = _RegisterOnImport(DTENSOR_MODULE, lambda: None)
    monkeypatch.setattr(sys, "meta_path", SlowList([finder, *sys.meta_path]))
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)  # nothing is imported
    start, results = threading.Barrier(8), []

    def find():
        start.wait()
        try:
            results.append(finder.find_spec(DTENSOR_MODULE, None))
        except Exception as error:  # the race, had the finder no lock
            results.append(error)

    threads = [threading.Thread(target=find) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not [r for r in results if isinstance(r, Exception)], results
    assert finder not in list(sys.meta_path)
