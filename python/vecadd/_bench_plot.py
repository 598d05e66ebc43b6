"""Figures for ``python -m vecadd bench --plot``: ratios to torch.add, and cold bandwidth."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ._bench_report import H200_HBM_PEAK_GBPS, BandwidthRow

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def cold_bandwidth_path(path: str) -> str:
    """Where the cold-bandwidth figure goes next to the ratio figure `path`."""
    target = Path(path)
    return str(target.with_name(f"{target.stem}-cold-bandwidth{target.suffix or '.png'}"))


def plot_ratios(rows: list[BandwidthRow], path: str) -> Figure:
    """Small multiples: one panel per mode when several ran, else per dtype; the ratio to
    torch.add against log2 n, one colour per series, the rounds' range shaded."""
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    modes = list(dict.fromkeys(row.mode for row in rows))
    by_mode = len(modes) > 1
    panels = modes if by_mode else list(dict.fromkeys(row.dtype for row in rows))
    columns = min(3, len(panels))
    lines = -(-len(panels) // columns)
    figure, axes = plt.subplots(
        lines,
        columns,
        figsize=(4.2 * columns + 2.2, 3.2 * lines + 0.6),
        sharey=True,
        squeeze=False,
        layout="constrained",
    )
    names = {(row.dtype, row.layout) if by_mode else row.layout for row in rows}
    palette = plt.get_cmap("tab10" if len(names) <= 10 else "tab20")
    colours: dict[str, tuple] = {}
    for axis, panel in zip(axes.flat, panels, strict=False):
        series: dict[tuple[str, bool], list[BandwidthRow]] = {}
        for row in rows:
            if (row.mode if by_mode else row.dtype) == panel:
                name = f"{row.dtype} {row.layout}" if by_mode else row.layout
                series.setdefault((name, row.out), []).append(row)
        for (name, out), points in series.items():
            # One colour per dtype/layout, dashed when out= is given: distinct past ten series.
            colour = colours.setdefault(name, palette(len(colours) % palette.N))
            points.sort(key=lambda p: p.n)
            x = [p.n.bit_length() - 1 for p in points]
            label = f"{name}, out=z" if out else name
            axis.plot(x, [p.ratio for p in points], "o--" if out else "o-", color=colour,
                      label=label, markersize=3)  # fmt: skip
            low = [min(p.round_ratios, default=p.ratio) for p in points]
            high = [max(p.round_ratios, default=p.ratio) for p in points]
            axis.fill_between(x, low, high, color=colour, alpha=0.15, linewidth=0)
        axis.axhline(1.0, color="black", linewidth=1)
        axis.set_title(f"mode {panel}" if by_mode else f"{panel} ({modes[0]})", fontsize=10)
        axis.set_xlabel("log2 n")
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
        axis.grid(True, alpha=0.3)
    for axis in axes.flat[len(panels) :]:
        axis.set_visible(False)
    for axis in axes[:, 0]:
        axis.set_ylabel("vecadd speed / torch.add")
    handles = {}
    for axis in axes.flat:
        for handle, label in zip(*axis.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    figure.legend(handles.values(), handles.keys(), loc="outside right center", fontsize=7)
    figure.suptitle("ratio to torch.add (>1: vecadd faster; band: range over rounds)")
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return figure


def plot_cold_bandwidth(rows: list[BandwidthRow], ceiling_gbps: float, path: str) -> Figure:
    """Cold GB/s of vecadd (solid) and torch.add (dotted) against n, the measured cold copy
    ceiling and the H200 HBM peak as horizontal lines."""
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    figure, axis = plt.subplots(figsize=(9.5, 5))
    series: dict[str, list[BandwidthRow]] = {}
    for row in rows:
        if row.mode == "cold":
            series.setdefault(f"{row.dtype} {row.layout}{' out=' if row.out else ''}", []).append(
                row
            )
    for index, (name, points) in enumerate(series.items()):
        points.sort(key=lambda p: p.n)
        x = [p.n.bit_length() - 1 for p in points]
        colour = f"C{index % 10}"
        axis.plot(x, [p.vecadd_gbps for p in points], "-", color=colour, label=f"vecadd {name}")
        axis.plot(x, [p.torch_gbps for p in points], ":", color=colour, label=f"torch.add {name}")
    axis.axhline(ceiling_gbps, color="grey", linestyle="--", label="copy ceiling (cold, measured)")
    if rows and rows[0].device.startswith("cuda"):
        axis.axhline(H200_HBM_PEAK_GBPS, color="black", linestyle="-.", label="H200 HBM3e peak")
    axis.set_xlabel("log2 n")
    axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    axis.set_ylabel("GB/s, L2 flushed before each call")
    axis.set_title("cold bandwidth: vecadd (solid) vs torch.add (dotted)")
    axis.grid(True, alpha=0.3)
    axis.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return figure
