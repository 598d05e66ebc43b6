"""python -m vecadd bench: its options, its JSON record, and the order it times candidates in."""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys

import pytest
import torch

import vecadd
from helpers import run_vecadd_in_process
from vecadd.bench.layouts import LAYOUTS  # every layout the command line offers
from vecadd.bench.timing import interleaved_medians, interleaved_samples


def run_bench(*arguments: str, **environment: str) -> subprocess.CompletedProcess:
    """`python -m vecadd bench ARGUMENTS`: in this process, or in a new one when the call needs
    environment variables of its own."""
    if not environment:
        return run_vecadd_in_process("bench", *arguments)
    return subprocess.run(
        [sys.executable, "-m", "vecadd", "bench", *arguments],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, **environment),
    )


def assert_one_line_error(ran: subprocess.CompletedProcess, *fragments: str) -> None:
    assert ran.returncode == 2, "a refused command line exits 2, as argparse's refusals do"
    assert "Traceback" not in ran.stderr
    assert ran.stdout == "", "the benchmark ran before the error"
    lines = ran.stderr.strip().splitlines()
    assert len(lines) == 1, ran.stderr
    assert lines[0].startswith("python -m vecadd bench: error: ")
    for fragment in fragments:
        assert fragment in lines[0]


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
    names = ["float16", "bfloat16", "float32", "float64", "int32", "int64"]  # the tuned six
    assert [row["dtype"] for row in record["bandwidth"]] == names
    assert {row["layout"] for row in record["bandwidth"]} == {"contiguous"}
    assert record["copy_ceiling_gbps"] > 0
    assert "call_cost" not in record  # per-call cost: lab/call_cost.py


def test_cli_bench_times_any_dtype_mixed_dtypes_and_numbers(tmp_path):
    json_path = tmp_path / "bench.json"
    cases = ["complex64", "float32+bfloat16", "bfloat16+float32", "int8+uint8", "float16+number"]
    ran = run_bench(
        *("--device", "cpu", "--min-log2", "10", "--max-log2", "10", "--rounds", "1"),
        *("--out", "yes", "--dtypes", ",".join(cases), "--json", str(json_path)),
    )
    assert ran.returncode == 0, ran.stderr
    rows = json.loads(json_path.read_text())["bandwidth"]
    assert [row["dtype"] for row in rows] == cases
    assert all(row["vecadd_gbps"] > 0 and row["torch_gbps"] > 0 for row in rows)
    # Bytes by dtype: float32 + bfloat16 into float32 moves 4 + 2 + 4 bytes an element, a
    # Python number none.
    mixed, number = rows[1], rows[4]
    assert mixed["vecadd_gbps"] / mixed["torch_gbps"] == pytest.approx(
        statistics.median(mixed["torch_round_s"]) / statistics.median(mixed["vecadd_round_s"])
    )
    assert number["n"] == 1024


@pytest.mark.parametrize(
    ("dtypes", "unknown"),
    [("float8", "float8"), ("float32+float8", "float8"), ("number+float32", "number")],
)
def test_cli_bench_rejects_unknown_dtype(dtypes, unknown):
    ran = run_bench("--dtypes", dtypes)
    assert ran.returncode == 2
    assert f"unknown dtype '{unknown}'" in ran.stderr
    assert "expected dtypes from bool, uint8, int8, int16, int32, int64, float16" in ran.stderr


def test_cli_bench_rejects_unknown_layout():
    ran = run_bench("--layouts", "contiguous,diagonal")
    assert ran.returncode == 2
    assert "unknown layout 'diagonal'" in ran.stderr
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


# Why cuda cannot be benchmarked with CUDA_VISIBLE_DEVICES="", by whether a CUDA library loaded.
NO_CUDA_HERE = (
    "no CUDA GPU is visible"
    if vecadd.build_info()["with_cuda"]
    else "no CUDA kernels of vecadd are loaded"
)
SMALL = ("--min-log2", "10", "--max-log2", "10", "--rounds", "1", "--dtypes", "float32")


def test_cli_bench_plot_without_matplotlib_stops_before_timing(tmp_path):
    # A matplotlib that fails to import, as an absent one does, wherever the suite runs.
    hidden = tmp_path / "hidden" / "matplotlib"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'matplotlib'\", name='matplotlib')\n"
    )
    path = os.pathsep.join(filter(None, [str(tmp_path / "hidden"), os.environ.get("PYTHONPATH")]))
    json_path = tmp_path / "bench.json"
    ran = run_bench(
        "--device",
        "cpu",
        *SMALL,
        "--json",
        str(json_path),
        "--plot",
        str(tmp_path / "b.png"),
        PYTHONPATH=path,
    )
    assert_one_line_error(ran, "--plot", "matplotlib", "pip install 'vecadd[bench]'")
    assert not json_path.exists()


@pytest.mark.parametrize(
    ("device", "fragments"),
    [
        ("gpu", ["--device 'gpu' is not a device", "expected cpu, cuda or cuda:N"]),
        ("cuda:x", ["--device 'cuda:x' is not a device", "expected cpu, cuda or cuda:N"]),
        ("meta", ["--device 'meta'", "expected cpu, cuda or cuda:N"]),
        ("cpu:1", ["--device 'cpu:1'", "expected cpu, cuda or cuda:N"]),
        ("cuda", ["--device 'cuda'", NO_CUDA_HERE, "--device cpu"]),
        ("cuda:0", ["--device 'cuda:0'", NO_CUDA_HERE, "--device cpu"]),
    ],
)
def test_cli_bench_device_is_checked_before_timing(device, fragments):
    ran = run_bench("--device", device, *SMALL, CUDA_VISIBLE_DEVICES="")
    assert_one_line_error(ran, *fragments)


@pytest.mark.cuda
def test_cli_bench_device_index_beyond_the_visible_gpus():
    import torch

    count = torch.cuda.device_count()
    ran = run_bench("--device", f"cuda:{count}", *SMALL)
    assert_one_line_error(ran, f"--device 'cuda:{count}'", f"expected cuda:N with N < {count}")


@pytest.mark.parametrize(
    ("arguments", "fragments"),
    [
        (("--step", "0"), ["--step 0", "expected an integer >= 1"]),
        (("--rounds", "0"), ["--rounds 0", "expected an integer >= 1"]),
        (("--min-log2", "-1"), ["--min-log2 -1", "expected an integer >= 0"]),
        (
            ("--min-log2", "12", "--max-log2", "10"),
            ["--max-log2 10", "expected >= --min-log2 (12)"],
        ),
        (("--dtypes", "float8"), ["--dtypes", "'float8'", "expected dtypes from bool"]),
        (
            ("--dtypes", "float32+bfloat16", "--op", "add_n"),
            ["--dtypes", "X+Y and X+number are timed by add's modes"],
        ),
        (
            ("--layouts", "diagonal"),
            ["--layouts", "'diagonal'", "expected layouts from contiguous"],
        ),
        (("--json", "/nonexistent/bench.json"), ["--json", "folder '/nonexistent' does not exist"]),
    ],
)
def test_cli_bench_bad_arguments_are_one_line_errors(arguments, fragments):
    ran = run_bench("--device", "cpu", "--rounds", "1", "--max-log2", "10", *arguments)
    assert_one_line_error(ran, *fragments)
    assert ran.returncode == 2


def test_cli_bench_into_a_log_holds_no_progress_frames():
    # `vecadd bench ... > log 2>&1`: progress redraws lines, which belong on a terminal only.
    ran = run_bench("--device", "cpu", *SMALL, PYTHONUNBUFFERED="1")
    assert ran.returncode == 0, ran.stderr
    assert "\r" not in ran.stdout + ran.stderr
    assert "ratio" in ran.stdout


def test_cli_bench_add_n_against_the_chain_and_torch_compile(tmp_path):
    json_path = tmp_path / "add_n.json"
    ran = run_bench(
        "--op", "add_n", "--device", "cpu", "--dtypes", "float32", "--min-log2", "10",
        "--max-log2", "10", "--rounds", "1", "--inputs", "3", "--json", str(json_path),
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    (row,) = json.loads(json_path.read_text())["add_n"]
    assert (row["n"], row["inputs"], row["dtype"]) == (1024, 3, "float32")
    assert set(row["gbps"]) == {"add_n", "torch.add chain", "torch.compile"}
    assert all(value > 0 for value in (*row["gbps"].values(), *row["speedup"].values()))
    assert "x chain" in ran.stdout


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        (("--mode", "pipeline"), "--op add_n times the modes chain and cold"),
        (("--inputs", "1"), "--inputs '1': expected comma-separated counts from 2 to 8"),
    ],
)
def test_cli_bench_add_n_refuses_what_it_cannot_time(arguments, fragment):
    ran = run_bench("--op", "add_n", "--device", "cpu", *SMALL, *arguments)
    assert_one_line_error(ran, fragment)


def test_cli_bench_help_gives_every_default_and_two_examples():
    ran = run_bench("--help")
    assert ran.returncode == 0
    # Each option that takes a value, with its help up to the next option or the examples.
    described = re.findall(r"^  (--[a-z0-9-]+) [A-Z{](.*?)(?=^  -|^\S)", ran.stdout, re.M | re.S)
    assert "--rounds" in dict(described)
    for option, words in described:
        assert "default" in words, f"{option} gives no default"
    examples = ran.stdout.split("examples:", 1)[1]
    assert "bench --device cpu\n" in examples
    assert "bench --device cuda " in examples


def test_cli_bench_says_which_device_and_why():
    ran = run_bench("--device", "cpu", *SMALL, "--out", "no")
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr.splitlines()[0] == "bench: timing on cpu, as --device asks"
    if not torch.cuda.is_available():
        ran = run_bench(*SMALL, "--out", "no")
        assert ran.returncode == 0, ran.stderr
        assert ran.stderr.splitlines()[0] == (
            "bench: timing on cpu, as no CUDA GPU is visible here "
            "(torch.cuda.is_available() is False)"
        )


def test_cli_bench_into_a_log_prints_a_line_as_each_mode_and_dtype_is_done():
    ran = run_bench("--device", "cpu", *SMALL, "--dtypes", "float32,int64", "--mode", "chain,cold")
    assert ran.returncode == 0, ran.stderr
    done = [line.split(" done ")[0] for line in ran.stderr.splitlines() if " done (" in line]
    assert done == [
        "bench: chain float32",
        "bench: chain int64",
        "bench: cold float32",
        "bench: cold int64",
    ]
