"""What ``python -m vecadd bench`` measures, as rows, printed tables and summary lines."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from .._words import plural

# NVIDIA H200 datasheet: 4.8 TB/s of HBM3e bandwidth. Used only to label figures above it.
H200_HBM_PEAK_GBPS = 4800.0

# Rounds of one cell whose ratios spread wider than this (of their median) get a warning.
SPREAD_WARNING = 0.05

RATIO_CONVENTION = (
    "ratio = vecadd speed / torch.add speed (>1: vecadd faster), median of per-round ratios"
)


@dataclass
class BandwidthRow:
    device: str
    dtype: str
    n: int
    layout: str
    out: bool
    vecadd_gbps: float
    torch_gbps: float
    mode: str = "chain"
    # Seconds per call (per pipeline in the pipeline modes), one per round, same rounds.
    vecadd_round_s: list[float] = field(default_factory=list)
    torch_round_s: list[float] = field(default_factory=list)
    # The bytes of the cell fit in the cache (or a figure beats the HBM peak).
    cache_resident: bool = False

    @property
    def round_ratios(self) -> list[float]:
        return [t / v for v, t in zip(self.vecadd_round_s, self.torch_round_s, strict=True)]

    @property
    def ratio(self) -> float:
        ratios = self.round_ratios
        return statistics.median(ratios) if ratios else self.vecadd_gbps / self.torch_gbps

    @property
    def spread(self) -> float:
        """(max - min) / median of the per-round ratios: how far the rounds disagree."""
        ratios = self.round_ratios
        return (max(ratios) - min(ratios)) / statistics.median(ratios) if ratios else 0.0

    def cell(self) -> str:
        out = "yes" if self.out else "no"
        return f"{self.dtype} n=2**{self.n.bit_length() - 1} {self.layout} out={out}"

    def record(self) -> dict:
        ratios = self.round_ratios
        return {
            **{k: getattr(self, k) for k in self.__dataclass_fields__},
            "ratio": self.ratio,
            "ratio_min": min(ratios, default=self.ratio),
            "ratio_max": max(ratios, default=self.ratio),
            "round_ratios": ratios,
        }


def _median_us(samples: list[float]) -> float:
    return statistics.median(samples) * 1e6 if samples else float("nan")


def format_bandwidth(rows: list[BandwidthRow], ceiling_gbps: float | None = None) -> str:
    """One table; pipeline rows show microseconds per pipeline, the others GB/s. The note says
    cache-resident, or for cold rows vecadd's share of the copy ceiling and of the peak."""
    timed = bool(rows) and rows[0].mode.startswith("pipeline")
    first = (
        f"{'vecadd us':>12} {'torch us':>11}"
        if timed
        else f"{'vecadd GB/s':>12} {'torch GB/s':>11}"
    )
    lines = [
        f"{'n':>11} {'dtype':>9} {'layout':>10} {'out':>4} {first} {'ratio':>6} {'spread':>7}  note"
    ]
    for row in rows:
        if timed:
            figures = (
                f"{_median_us(row.vecadd_round_s):>12.2f} {_median_us(row.torch_round_s):>11.2f}"
            )
        else:
            figures = f"{row.vecadd_gbps:>12.1f} {row.torch_gbps:>11.1f}"
        notes = ["cache-resident"] if row.cache_resident else []
        if row.mode == "cold" and ceiling_gbps:
            notes.append(f"{row.vecadd_gbps / ceiling_gbps:.0%} of copy ceiling")
            if row.device.startswith("cuda"):
                notes.append(f"{row.vecadd_gbps / H200_HBM_PEAK_GBPS:.0%} of H200 peak")
        lines.append(
            f"{row.n:>11} {row.dtype:>9} {row.layout:>10} {'yes' if row.out else 'no':>4} "
            f"{figures} {row.ratio:>6.3f} {row.spread:>6.1%}  {', '.join(notes)}".rstrip()
        )
    return "\n".join(lines)


def summary_lines(rows: list[BandwidthRow]) -> list[str]:
    """Per mode: the median and worst ratio naming the worst cell; then one warning line per
    mode whose cells' rounds disagree by more than SPREAD_WARNING."""
    lines, warnings = [], []
    modes = list(dict.fromkeys(row.mode for row in rows))
    for mode in modes:
        cells = [row for row in rows if row.mode == mode]
        worst = min(cells, key=lambda row: row.ratio)
        median = statistics.median(row.ratio for row in cells)
        lines.append(
            f"{mode}: median ratio {median:.3f}, worst {worst.ratio:.3f} at {worst.cell()} "
            f"({plural(len(cells), 'cell')})"
        )
        noisy = [row for row in cells if row.spread > SPREAD_WARNING]
        if noisy:
            loudest = max(noisy, key=lambda row: row.spread)
            warnings.append(
                f"warning: {mode}: the rounds of {len(noisy)} of {plural(len(cells), 'cell')} "
                f"disagree by more than {SPREAD_WARNING:.0%} ((max-min)/median of per-round "
                f"ratios; worst {loudest.spread:.0%} at {loudest.cell()}): rerun with more "
                "--rounds or on a quieter machine"
            )
    return lines + warnings
