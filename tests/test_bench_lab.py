"""The lab's instruments that time through vecadd.bench: the kernels' own durations
(lab/kernel_durations.py) and the per-call cost (lab/call_cost.py), run as the GPU scripts in
lab/ run them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from helpers import ROOT

LAB = ROOT / "lab"


def run_lab(script: str, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(LAB / script), *arguments],
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def kernel_durations():
    sys.path.insert(0, str(LAB))
    try:
        import kernel_durations
    finally:
        sys.path.remove(str(LAB))
    return kernel_durations


def test_kernel_times_count_each_record_from_the_end_of_the_work_before_it(kernel_durations):
    spans = [
        ("fill", 0, 10),
        ("add", 40, 50),  # launched late: the gap before it is not the kernel's
        ("fill", 60, 61),
        ("add", 70, 75),
        ("sum", 80, 92),  # two kernels in one call: their durations add up
        ("fill", 100, 130),
        ("add", 126, 140),  # started over the fill's tail: counted from the fill's end
        ("sum", 138, 145),  # and over the add's: counted from the add's end
        ("fill", 150, 151),  # nothing after it: no time at all
    ]
    times = kernel_durations.kernel_times_between(spans, "fill")
    assert times == pytest.approx([10e-9, 17e-9, 15e-9, 0.0])


def test_kernel_durations_on_cpu_give_warm_and_cold_rows(tmp_path):
    json_path = tmp_path / "kernel.json"
    ran = run_lab(
        "kernel_durations.py", "--device", "cpu", "--dtypes", "float32", "--min-log2", "10",
        "--max-log2", "10", "--rounds", "2", "--out", "no", "--json", str(json_path),
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    rows = json.loads(json_path.read_text())["bandwidth"]
    assert [row["mode"] for row in rows] == ["kernel-warm", "kernel-cold"]
    assert all(row["vecadd_gbps"] > 0 and row["torch_gbps"] > 0 for row in rows)
    assert any(line.startswith("kernel-cold: median ratio ") for line in ran.stdout.splitlines())


@pytest.mark.cuda
def test_kernel_mode_times_the_kernels_not_the_launches(kernel_durations):
    import torch

    device = torch.device("cuda", torch.cuda.current_device())
    small = torch.ones(16, device=device)
    large = torch.ones(2**27, device=device)
    for cold in (False, True):
        samples = kernel_durations.kernel_samples(
            [lambda: small.add_(1), lambda: large.add_(1)], device, 4, 3, cold
        )
        assert [len(per_fn) for per_fn in samples] == [3, 3]
        # A 16-float kernel runs in a few microseconds, less than a launch; 512 MiB read and
        # written take over 100 us at any memory bandwidth below 10 TB/s.
        assert max(samples[0]) < 20e-6 < 100e-6 < min(samples[1])


def test_add_n_kernel_durations_give_warm_and_cold_rows(tmp_path):
    json_path = tmp_path / "add_n.json"
    ran = run_lab(
        "kernel_durations.py", "--op", "add_n", "--device", "cpu", "--dtypes", "float32",
        "--min-log2", "10", "--max-log2", "10", "--rounds", "2", "--inputs", "3",
        "--json", str(json_path),
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    rows = json.loads(json_path.read_text())["add_n"]
    assert [row["mode"] for row in rows] == ["kernel-warm", "kernel-cold"]
    assert all(gbps > 0 for row in rows for gbps in row["gbps"].values())
