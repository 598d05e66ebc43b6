"""python -m vecadd bench: its options, its JSON record, and the order it times candidates in."""

from __future__ import annotations

import json
import subprocess
import sys

import vecadd
from vecadd._bench_timing import interleaved_medians, interleaved_samples

LAYOUTS = (
    "contiguous",
    "unaligned",
    "broadcast",
    "per_row",
    "transposed",
    "mixed_order",
    "channels_last_bias",
)


def run_bench(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "vecadd", "bench", *arguments],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_cli_bench_on_cpu(tmp_path):
    json_path = tmp_path / "bench.json"
    ran = run_bench(
        "--device",
        "cpu",
        "--dtypes",
        "float32,int64",
        "--min-log2",
        "10",
        "--max-log2",
        "12",
        "--step",
        "2",
        "--rounds",
        "2",
        "--layouts",
        ",".join(LAYOUTS),
        "--json",
        str(json_path),
    )
    assert ran.returncode == 0, ran.stderr
    record = json.loads(json_path.read_text())
    assert len(record["bandwidth"]) == 2 * 2 * len(LAYOUTS) * 2
    assert {row["layout"] for row in record["bandwidth"]} == set(LAYOUTS)
    assert all(row["vecadd_gbps"] > 0 and row["torch_gbps"] > 0 for row in record["bandwidth"])
    assert "ratio" in ran.stdout


def test_cli_bench_times_every_supported_dtype_by_default(tmp_path):
    json_path = tmp_path / "bench.json"
    ran = run_bench(
        "--device",
        "cpu",
        "--min-log2",
        "10",
        "--max-log2",
        "10",
        "--out",
        "no",
        "--rounds",
        "1",
        "--json",
        str(json_path),
    )
    assert ran.returncode == 0, ran.stderr
    record = json.loads(json_path.read_text())
    names = [str(dtype).removeprefix("torch.") for dtype in vecadd.SUPPORTED_DTYPES]
    assert [row["dtype"] for row in record["bandwidth"]] == names
    assert {row["layout"] for row in record["bandwidth"]} == {"contiguous"}
    assert record["copy_ceiling_gbps"] > 0
    assert record["call_cost"] == []


def test_cli_bench_rejects_unknown_dtype():
    ran = run_bench("--dtypes", "complex64")
    assert ran.returncode == 2
    assert "unknown dtype(s) ['complex64']" in ran.stderr
    assert "expected dtypes from float16, bfloat16, float32, float64, int32, int64" in ran.stderr


def test_cli_bench_rejects_unknown_layout():
    ran = run_bench("--layouts", "contiguous,diagonal")
    assert ran.returncode == 2
    assert "layout(s) ['diagonal']" in ran.stderr
    assert f"layouts from {', '.join(LAYOUTS)}" in ran.stderr


def test_interleaved_rounds_rotate_which_candidate_runs_first():
    order = []

    def measure(name):
        order.append(name)
        return len(order)

    samples = interleaved_samples(["a", "b", "c"], measure, rounds=3)
    # A warm-up of each, then rounds starting at a, b and c in turn.
    assert order == list("abcabcbcacab")
    assert samples == [[4, 9, 11], [5, 7, 12], [6, 8, 10]]
    order.clear()
    assert interleaved_medians(["a", "b", "c"], measure, rounds=3) == [9, 7, 8]
