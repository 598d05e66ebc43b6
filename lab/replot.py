"""Redraw the figures of a ``python -m vecadd bench --json`` file with the current plot code.

python lab/replot.py h200-cold.json h200-cold.png   # and h200-cold-cold-bandwidth.png
"""

from __future__ import annotations

import argparse
import dataclasses
import json

from vecadd._bench_plot import cold_bandwidth_path, plot_cold_bandwidth, plot_ratios
from vecadd._bench_report import BandwidthRow


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", help="the bench's --json file")
    parser.add_argument("png", help="the ratio figure to write (as --plot would)")
    args = parser.parse_args()
    with open(args.json) as file:
        data = json.load(file)
    fields = {field.name for field in dataclasses.fields(BandwidthRow)}
    rows = [
        BandwidthRow(**{k: v for k, v in row.items() if k in fields}) for row in data["bandwidth"]
    ]
    plot_ratios(rows, args.png)
    if any(row.mode == "cold" for row in rows):
        plot_cold_bandwidth(rows, data["cold_copy_ceiling_gbps"], cold_bandwidth_path(args.png))


if __name__ == "__main__":
    main()
