"""Figures for ``python -m vecadd bench --plot``: ratios to torch.add, and cold bandwidth."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .report import H200_HBM_PEAK_GBPS, BandwidthRow

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


def _panel_grid(plt, lines: int, columns: int, sharey: str | bool) -> tuple[Figure, object]:
    return plt.subplots(
        lines,
        columns,
        figsize=(3.6 * columns + 2.0, 2.9 * lines + 0.8),
        sharex=True,
        sharey=sharey,
        squeeze=False,
        layout="constrained",
    )


def _layout_colours(rows: list[BandwidthRow]) -> dict[str, str]:
    """One colour per layout, the same in every panel."""
    layouts = list(dict.fromkeys(row.layout for row in rows))
    return {layout: f"C{index % 10}" for index, layout in enumerate(layouts)}


def _finish_axes(axes, used: int) -> None:
    from matplotlib.ticker import MaxNLocator

    for axis in axes.flat[:used]:
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
        axis.grid(True, alpha=0.3)
        axis.tick_params(labelbottom=True)
    for axis in axes.flat[used:]:
        axis.set_visible(False)
    for axis in axes[-1, :]:
        axis.set_xlabel("log2 n")


def _fit_to_medians(axes, rows: list[BandwidthRow], modes: list[str] | None) -> None:
    """Scales each row of panels (modes given) or all to the medians and 1.0, so that one
    wild round of a host-bound cell cannot flatten every line; its band is cut at the edge."""
    groups = [[row for row in rows if row.mode == mode] for mode in modes] if modes else [rows]
    for line, group in enumerate(groups):
        ratios = [row.ratio for row in group] + [1.0]
        low, high = min(ratios), max(ratios)
        margin = max(0.02, 0.08 * (high - low))
        targets = axes[line, :] if modes else axes.flat
        for axis in targets:
            axis.set_ylim(low - margin, high + margin)


def _figure_legend(figure: Figure, axes) -> None:
    """One legend for the figure, outside every panel."""
    handles: dict[str, object] = {}
    for axis in axes.flat:
        for handle, label in zip(*axis.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    figure.legend(handles.values(), handles.keys(), loc="outside right center", fontsize=8)


def plot_ratios(rows: list[BandwidthRow], path: str) -> Figure:
    """Small multiples: a row of panels per mode, a panel per dtype; in each the ratio to
    torch.add against log2 n, one colour per layout (dashed with out=), the rounds' range
    shaded, 1.0 drawn. A single mode's dtypes wrap three to a row."""
    plt = _pyplot()
    modes = list(dict.fromkeys(row.mode for row in rows))
    dtypes = list(dict.fromkeys(row.dtype for row in rows))
    if len(modes) > 1:
        panels = [(mode, dtype) for mode in modes for dtype in dtypes]
        lines, columns = len(modes), len(dtypes)
    else:
        panels = [(modes[0], dtype) for dtype in dtypes]
        columns = min(3, len(dtypes))
        lines = -(-len(dtypes) // columns)
    # Ratios of one mode share a scale; modes differ too much (chain reaches 2.5) to share one.
    figure, axes = _panel_grid(plt, lines, columns, "row" if len(modes) > 1 else True)
    colours = _layout_colours(rows)
    for axis, (mode, dtype) in zip(axes.flat, panels, strict=False):
        series: dict[tuple[str, bool], list[BandwidthRow]] = {}
        for row in rows:
            if row.mode == mode and row.dtype == dtype:
                series.setdefault((row.layout, row.out), []).append(row)
        for (layout, out), points in series.items():
            points.sort(key=lambda p: p.n)
            x = [p.n.bit_length() - 1 for p in points]
            colour = colours[layout]
            label = f"{layout}, out=z" if out else layout
            axis.plot(x, [p.ratio for p in points], "o--" if out else "o-", color=colour,
                      label=label, markersize=3, linewidth=1.2)  # fmt: skip
            low = [min(p.round_ratios, default=p.ratio) for p in points]
            high = [max(p.round_ratios, default=p.ratio) for p in points]
            axis.fill_between(x, low, high, color=colour, alpha=0.15, linewidth=0)
        axis.axhline(1.0, color="black", linewidth=1)
        axis.set_title(f"{dtype}, {mode}", fontsize=10)
    _finish_axes(axes, len(panels))
    _fit_to_medians(axes, rows, modes if len(modes) > 1 else None)
    for axis in axes[:, 0]:
        axis.set_ylabel("vecadd speed / torch.add")
    _figure_legend(figure, axes)
    figure.suptitle("ratio to torch.add (above 1: vecadd faster; band: range over rounds)")
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return figure


def plot_cold_bandwidth(rows: list[BandwidthRow], ceiling_gbps: float, path: str) -> Figure:
    """A panel per dtype: cold GB/s of vecadd (solid) and torch.add (dotted) per layout against
    log2 n, with the measured cold copy ceiling and, on a GPU, the H200 HBM peak. Calls without
    out= only (the same bytes move with it), unless only out= calls ran."""
    plt = _pyplot()
    cold = [row for row in rows if row.mode == "cold"]
    with_out = not any(not row.out for row in cold)
    cold = [row for row in cold if row.out == with_out]
    dtypes = list(dict.fromkeys(row.dtype for row in cold)) or ["(none)"]
    columns = min(3, len(dtypes))
    lines = -(-len(dtypes) // columns)
    figure, axes = _panel_grid(plt, lines, columns, True)
    colours = _layout_colours(cold)
    on_gpu = bool(cold) and cold[0].device.startswith("cuda")
    for axis, dtype in zip(axes.flat, dtypes, strict=False):
        series: dict[str, list[BandwidthRow]] = {}
        for row in cold:
            if row.dtype == dtype:
                series.setdefault(row.layout, []).append(row)
        for layout, points in series.items():
            points.sort(key=lambda p: p.n)
            x = [p.n.bit_length() - 1 for p in points]
            colour = colours[layout]
            axis.plot(x, [p.vecadd_gbps for p in points], "-", color=colour,
                      label=f"vecadd, {layout}", linewidth=1.4)  # fmt: skip
            axis.plot(x, [p.torch_gbps for p in points], ":", color=colour,
                      label=f"torch.add, {layout}", linewidth=1.6)  # fmt: skip
        axis.axhline(
            ceiling_gbps, color="grey", linestyle="--", label="copy ceiling (cold, measured)"
        )
        if on_gpu:
            axis.axhline(H200_HBM_PEAK_GBPS, color="black", linestyle="-.",
                         label="H200 HBM3e peak")  # fmt: skip
        axis.set_title(dtype, fontsize=10)
    _finish_axes(axes, len(dtypes))
    for axis in axes[:, 0]:
        axis.set_ylabel("GB/s, cache flushed")
    _figure_legend(figure, axes)
    figure.suptitle(
        f"cold bandwidth{' (out=z)' if with_out else ''}: vecadd solid, torch.add dotted"
    )
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return figure
