"""python -m vecadd bench --mode: paired ratios, the summary and its warning, cache-resident
labels, the cold and pipeline modes, the row order and the plots."""

from __future__ import annotations

import json

import pytest

from test_bench import SMALL, assert_one_line_error, run_bench
from vecadd.bench.layouts import DtypeCase


def crafted_row(dtype="float32", log2=10, ours=(1.0, 1.0), theirs=(1.0, 1.0), **fields):
    from vecadd.bench.report import BandwidthRow

    values = {"device": "cuda:0", "layout": "contiguous", "out": False, "mode": "cold"}
    values.update(fields)
    return BandwidthRow(
        values.pop("device"),
        dtype,
        2**log2,
        values.pop("layout"),
        values.pop("out"),
        100.0,
        100.0,
        vecadd_round_s=list(ours),
        torch_round_s=list(theirs),
        **values,
    )


def test_summary_names_the_median_and_the_worst_cell_per_mode():
    from vecadd.bench.report import summary_lines

    rows = [
        crafted_row(log2=10, ours=(1.0, 1.0), theirs=(1.2, 1.2)),  # 1.2
        crafted_row(log2=12, ours=(2.0, 2.0), theirs=(1.6, 1.6), out=True),  # 0.8
        crafted_row(log2=14, ours=(1.0, 1.0), theirs=(1.0, 1.0), dtype="int64"),  # 1.0
        crafted_row(log2=16, ours=(1.0, 1.0), theirs=(0.5, 0.5), mode="chain", layout="per_row"),
    ]
    assert summary_lines(rows) == [
        "cold: median ratio 1.000, worst 0.800 at float32 n=2**12 contiguous out=yes (3 cells)",
        "chain: median ratio 0.500, worst 0.500 at float32 n=2**16 per_row out=no (1 cell)",
    ]


def test_ratio_is_the_median_of_per_round_ratios_and_disagreement_warns():
    from vecadd.bench.report import summary_lines

    # Round ratios 1.0, 2.0, 1.1: the median of ratios is 1.1, not the ratio of medians.
    noisy = crafted_row(log2=20, ours=(1.0, 1.0, 1.0), theirs=(1.0, 2.0, 1.1), dtype="float16")
    assert noisy.round_ratios == [1.0, 2.0, 1.1]
    assert noisy.ratio == pytest.approx(1.1)
    assert noisy.spread == pytest.approx(1.0 / 1.1)
    slightly = crafted_row(log2=18, ours=(1.0, 1.0), theirs=(1.0, 1.06))
    steady = crafted_row(log2=16, ours=(1.0, 1.0), theirs=(1.0, 1.04))
    lines = summary_lines([steady, slightly, noisy])
    warnings = [line for line in lines if line.startswith("warning:")]
    assert len(warnings) == 1, lines
    assert "2 of 3 cells disagree by more than 5%" in warnings[0]
    assert "worst 91% at float16 n=2**20 contiguous out=no" in warnings[0]
    assert not any(line.startswith("warning:") for line in summary_lines([steady]))


def test_record_keeps_rounds_and_the_ratio_range():
    row = crafted_row(ours=(1.0, 2.0, 1.0), theirs=(1.5, 2.0, 0.9))
    record = row.record()
    assert record["mode"] == "cold"
    assert record["round_ratios"] == pytest.approx([1.5, 1.0, 0.9])
    assert (record["ratio_min"], record["ratio"], record["ratio_max"]) == pytest.approx(
        (0.9, 1.0, 1.5)
    )
    assert record["vecadd_round_s"] == [1.0, 2.0, 1.0]


def test_figures_beyond_the_peak_or_inside_the_cache_are_labelled_cache_resident():
    import torch

    from vecadd.bench.modes import bandwidth_row
    from vecadd.bench.report import format_bandwidth

    cpu = torch.device("cpu")
    nbytes = 6 * 2**20
    fast = bandwidth_row(cpu, DtypeCase(torch.float32), 2**19, "contiguous", False, "chain", nbytes,
                [[1e-6, 1e-6], [1e-6, 1e-6]], resident=False)  # fmt: skip
    slow = bandwidth_row(cpu, DtypeCase(torch.float32), 2**19, "contiguous", False, "chain", nbytes,
                [[1e-3, 1e-3], [1e-3, 1e-3]], resident=False)  # fmt: skip
    fits = bandwidth_row(cpu, DtypeCase(torch.float32), 2**19, "contiguous", False, "chain", nbytes,
                [[1e-3, 1e-3], [1e-3, 1e-3]], resident=True)  # fmt: skip
    assert fast.vecadd_gbps > 4800
    assert fast.cache_resident
    assert not slow.cache_resident
    assert fits.cache_resident
    lines = format_bandwidth([fast, slow, fits]).splitlines()
    assert lines[0].split()[-1] == "note"
    assert [line.endswith("cache-resident") for line in lines[1:]] == [True, False, True]


def test_mode_argument_expands_all_and_keeps_a_fixed_order():
    from vecadd.bench.command import CommandLineError, modes_from_argument

    assert modes_from_argument("chain") == ["chain"]
    assert modes_from_argument("pipeline, cold") == ["cold", "pipeline"]
    assert modes_from_argument("all") == ["chain", "cold", "pipeline", "compiled", "training"]
    with pytest.raises(CommandLineError, match=r"unknown mode 'hot'"):
        modes_from_argument("cold,hot")


@pytest.mark.parametrize(
    ("value", "fragments"),
    [
        (
            "hot",
            [
                "--mode 'hot'",
                "unknown mode 'hot'",
                "chain, cold, pipeline, compiled, training, all",
            ],
        ),
        (",", ["--mode ','", "no mode given"]),
    ],
)
def test_cli_bench_rejects_unknown_mode(value, fragments):
    ran = run_bench("--device", "cpu", *SMALL, "--mode", value)
    assert_one_line_error(ran, *fragments)
    assert ran.returncode == 2


def test_cli_bench_default_mode_keeps_its_table_and_adds_a_summary():
    ran = run_bench("--device", "cpu", *SMALL, "--out", "no")
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[0].split()[:7] == ["n", "dtype", "layout", "out", "vecadd", "GB/s", "torch"]
    assert not any(line.startswith("mode ") for line in lines)
    assert any(line.startswith("chain: median ratio ") for line in lines)
    assert "ratio = vecadd speed / torch.add speed (>1: vecadd faster)" in ran.stdout


def test_cli_bench_cold_and_pipeline_modes_on_cpu(tmp_path):
    json_path = tmp_path / "bench.json"
    ran = run_bench(
        "--device", "cpu", "--dtypes", "float32", "--min-log2", "10", "--max-log2", "10",
        "--rounds", "3", "--out", "both", "--layouts", "contiguous,transposed",
        "--mode", "cold,pipeline", "--json", str(json_path),
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    record = json.loads(json_path.read_text())
    assert record["modes"] == ["cold", "pipeline"]
    assert record["cold_copy_ceiling_gbps"] > 0
    rows = record["bandwidth"]
    # On a CPU the pipeline runs eager only; no CUDA graph.
    assert [row["mode"] for row in rows] == ["cold"] * 4 + ["pipeline-eager"] * 4
    for row in rows:
        assert len(row["round_ratios"]) == 3
        assert row["ratio_min"] <= row["ratio"] <= row["ratio_max"]
        assert row["vecadd_gbps"] > 0
        assert row["torch_gbps"] > 0
    for mode in ("cold", "pipeline-eager"):
        assert f"mode {mode}: " in ran.stdout
        assert f"\n{mode}: median ratio " in ran.stdout
    assert "of copy ceiling" in ran.stdout
    assert "cold copy ceiling (cache flushed before each copy)" in ran.stdout


@pytest.mark.cuda
def test_cli_bench_cold_and_pipeline_modes_on_cuda(tmp_path, capsys):
    from vecadd.cli.main import main

    json_path = tmp_path / "bench.json"
    status = main(
        ["bench", "--device", "cuda", "--mode", "cold,pipeline", "--dtypes", "float32",
         "--min-log2", "12", "--max-log2", "14", "--rounds", "2", "--json", str(json_path)]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert status == 0
    rows = json.loads(json_path.read_text())["bandwidth"]
    modes = ["cold", "pipeline-eager", "pipeline-graph"]
    assert [row["mode"] for row in rows] == [m for m in modes for _ in range(2 * 3)]
    for mode in modes:
        assert f"\n{mode}: median ratio " in printed
    for row in rows:
        assert len(row["round_ratios"]) == 2
        assert row["ratio"] > 0
        # A pipeline of 2**14 elements fits in any recent GPU's L2; flushed calls never do.
        assert row["cache_resident"] == row["mode"].startswith("pipeline")
    assert "of H200 peak" in printed
    assert "H200 HBM3e peak (datasheet): 4800 GB/s" in printed


def test_interleaved_order_warms_each_up_then_rotates_the_start():
    from vecadd.bench.timing import interleaved_order

    assert interleaved_order(3, 2) == [0, 1, 2, 0, 1, 2, 1, 2, 0]


def test_cold_times_run_from_each_flush_end_to_the_end_of_the_work_after_it():
    from vecadd.bench.timing import times_after_flushes

    spans = [
        ("fill", 0, 100),
        ("add", 90, 130),  # launched over the flush's tail: counted from the flush's end
        ("fill", 140, 240),
        ("add", 243, 250),
        ("sum", 251, 262),
        ("fill", 270, 370),  # nothing after it: no time at all
    ]
    assert times_after_flushes(spans, "fill") == pytest.approx([30e-9, 22e-9, 0.0])


@pytest.mark.cuda
def test_cold_mode_times_each_call_from_the_end_of_its_flush():
    import torch

    from vecadd.bench.timing import cold_samples

    device = torch.device("cuda", torch.cuda.current_device())
    small = torch.ones(16, device=device)
    large = torch.ones(2**27, device=device)
    samples = cold_samples([lambda: small.add_(1), lambda: large.add_(1)], device, 4, 3)
    assert [len(per_fn) for per_fn in samples] == [3, 3]
    # 16 floats take a launch's latency; 512 MiB read and 512 MiB written take over 100 us
    # at any memory bandwidth below 10 TB/s.
    assert max(samples[0]) < 50e-6 < 100e-6 < min(samples[1])


@pytest.mark.cuda
def test_chain_on_cuda_is_cache_resident_only_when_it_fits():
    import torch

    from vecadd.bench.modes import cache_bytes, measure_chain

    device = torch.device("cuda", torch.cuda.current_device())
    small = measure_chain(device, DtypeCase(torch.float32), 2**12, "contiguous", True, 2)
    assert small.cache_resident
    n = 2 ** (cache_bytes(device).bit_length() + 1)  # 3 n * 4 bytes: well beyond L2
    large = measure_chain(device, DtypeCase(torch.float32), n, "contiguous", True, 2)
    assert not large.cache_resident


def test_plots_from_crafted_rows(tmp_path):
    pytest.importorskip("matplotlib", reason="needs matplotlib (pip install 'vecadd[bench]')")
    from vecadd.bench.plot import cold_bandwidth_path, plot_cold_bandwidth, plot_ratios

    rows = [
        crafted_row(dtype=dtype, log2=log2, mode=mode, out=out, theirs=(1.0, 1.0 + log2 / 100))
        for mode in ("chain", "cold")
        for dtype in ("float32", "int64")
        for log2 in (10, 12, 14)
        for out in (False, True)
    ]
    path = tmp_path / "bench.png"
    figure = plot_ratios(rows, str(path))
    panels = [axis for axis in figure.axes if axis.get_visible()]
    # A row per mode, a panel per dtype.
    titles = ["float32, chain", "int64, chain", "float32, cold", "int64, cold"]
    assert [axis.get_title() for axis in panels] == titles
    # Per panel: one series per layout and out=, at log2 n, and the line at 1.0.
    assert len(panels[0].get_lines()) == 2 + 1
    assert list(panels[0].get_lines()[0].get_xdata()) == [10, 12, 14]
    assert any(list(line.get_ydata()) == [1.0, 1.0] for line in panels[0].get_lines())
    assert len(figure.legends) == 1
    assert [text.get_text() for text in figure.legends[0].get_texts()] == [
        "contiguous",
        "contiguous, out=z",
    ]
    one_mode = plot_ratios([row for row in rows if row.mode == "cold"], str(path))
    titles = [axis.get_title() for axis in one_mode.axes if axis.get_visible()]
    assert titles == ["float32, cold", "int64, cold"]
    cold_path = cold_bandwidth_path(str(path))
    assert cold_path == str(tmp_path / "bench-cold-bandwidth.png")
    cold = plot_cold_bandwidth(rows, 3000.0, cold_path)
    cold_panels = [axis for axis in cold.axes if axis.get_visible()]
    assert [axis.get_title() for axis in cold_panels] == ["float32", "int64"]
    for axis in cold_panels:
        ys = [list(line.get_ydata()) for line in axis.get_lines()]
        assert [3000.0, 3000.0] in ys
        assert [4800.0, 4800.0] in ys
        # vecadd and torch.add without out=: two series of the three sizes.
        assert sum(len(y) == 3 for y in ys) == 2
    for written in (path, tmp_path / "bench-cold-bandwidth.png"):
        assert written.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_rows_of_one_kind_stay_together_when_a_cell_gives_several(monkeypatch):
    import copy

    import torch

    import vecadd.bench.command as bench

    measured = bench.measure

    def with_a_graphed_row(mode, *arguments):
        rows = measured(mode, *arguments)
        if mode == "pipeline":  # as on a GPU: an eager and a graphed row per cell
            graphed = copy.copy(rows[0])
            graphed.mode = "pipeline-graph"
            rows.append(graphed)
        return rows

    monkeypatch.setattr(bench, "measure", with_a_graphed_row)
    rows = bench.run_bandwidth(
        torch.device("cpu"), ["chain", "pipeline"], [DtypeCase(torch.float32)], [10, 12],
        ["contiguous"],
        [False, True], 1,
    )  # fmt: skip
    kinds = ["chain", "pipeline-eager", "pipeline-graph"]
    assert [row.mode for row in rows] == [kind for kind in kinds for _ in range(4)]
    assert [row.n for row in rows[4:8]] == [2**10, 2**10, 2**12, 2**12]


def test_training_mode_times_both_spellings_at_both_batches(tmp_path):
    """The eager training step, torch's spelling against vecadd's, waited for and streamed."""
    record_path = tmp_path / "training.json"
    ran = run_bench(
        "--device", "cpu", "--mode", "training", "--rounds", "1", "--json", str(record_path)
    )
    assert ran.returncode == 0, ran.stderr
    assert "mode training: eager training steps of 4 pre-norm blocks (AdamW)" in ran.stdout
    record = json.loads(record_path.read_text())
    import vecadd

    assert record["binding"] == vecadd.build_info()["torch_abi"]
    rows = record["training"]
    assert [row["batch"] for row in rows] == [1, 8]
    for row in rows:
        assert (row["tokens"], row["width"], row["dtype"]) == (128, 256, "float32")
        for key in ("torch_ms", "vecadd_ms", "torch_stream_ms", "vecadd_stream_ms"):
            assert row[key] > 0
        assert row["ratio"] == pytest.approx(row["torch_ms"] / row["vecadd_ms"])
        assert len(row["ratios"]) == len(row["stream_ratios"]) == 1


def test_the_eager_steps_train_the_same_stack_alike():
    """Both spellings start from the same weights and take the same first step."""
    import torch

    from vecadd.bench.training import eager_step_pair

    theirs, ours = eager_step_pair(torch.device("cpu"), torch.float64, 2)
    torch.testing.assert_close(ours(), theirs())
    torch.testing.assert_close(ours(), theirs())
