"""What ``python -m vecadd bench`` measures, as rows, printed tables and a plot."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class BandwidthRow:
    device: str
    dtype: str
    n: int
    layout: str
    out: bool
    vecadd_gbps: float
    torch_gbps: float

    @property
    def ratio(self) -> float:
        return self.vecadd_gbps / self.torch_gbps


@dataclass
class CallCostRow:
    case: str
    vecadd_us: float
    torch_us: float
    # Median over rounds of vecadd's time over torch.add's in the same round: a burst of
    # host noise that slows one round of one side does not move it.
    ratio: float


def format_bandwidth(rows: list[BandwidthRow]) -> str:
    lines = [
        f"{'n':>11} {'dtype':>9} {'layout':>10} {'out':>4} {'vecadd GB/s':>12} "
        f"{'torch GB/s':>11} {'ratio':>6}"
    ]
    for row in rows:
        lines.append(
            f"{row.n:>11} {row.dtype:>9} {row.layout:>10} {'yes' if row.out else 'no':>4} "
            f"{row.vecadd_gbps:>12.1f} {row.torch_gbps:>11.1f} {row.ratio:>6.3f}"
        )
    return "\n".join(lines)


def format_call_cost(rows: list[CallCostRow]) -> str:
    lines = [f"{'call (16 elements)':<34} {'vecadd us':>10} {'torch.add us':>13} {'ratio':>6}"]
    for row in rows:
        lines.append(
            f"{row.case:<34} {row.vecadd_us:>10.2f} {row.torch_us:>13.2f} {row.ratio:>6.3f}"
        )
    return "\n".join(lines)


def plot_bandwidth(rows: list[BandwidthRow], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series: dict[tuple[str, str, bool], list[BandwidthRow]] = {}
    for row in rows:
        series.setdefault((row.dtype, row.layout, row.out), []).append(row)
    figure, axis = plt.subplots(figsize=(9, 5.5))
    for index, ((dtype, layout, out), points) in enumerate(sorted(series.items())):
        color = f"C{index % 10}"
        label = f"{dtype} {layout}{' out=' if out else ''}"
        sizes = [p.n for p in points]
        axis.plot(sizes, [p.vecadd_gbps for p in points], "-", color=color, label=f"vecadd {label}")
        axis.plot(
            sizes, [p.torch_gbps for p in points], ":", color=color, label=f"torch.add {label}"
        )
    axis.set_xscale("log", base=2)
    axis.set_xlabel("n (elements)")
    axis.set_ylabel("GB/s (3 n itemsize bytes per call)")
    device = torch.device(rows[0].device)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    axis.set_title(f"vecadd.add (solid) vs torch.add (dotted), {name}")
    axis.grid(True, which="both", alpha=0.3)
    axis.legend(fontsize=6, ncol=2)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
