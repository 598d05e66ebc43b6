"""The tables of docs/benchmarks.md from ``python -m vecadd bench --json`` files.

    python lab/mode_tables.py h200-pipeline.json h200-cold.json h200-chain.json

Prints, per mode, the summary row (median, worst cell, cells below 1.00 from 2^16 on, cells
below 0.97 under 2^16) and the table per dtype and layout, as markdown.
"""

from __future__ import annotations

import argparse
import json
import statistics

LARGE = 2**16


def cell_name(row: dict) -> str:
    out = ", `out=`" if row["out"] else ""
    return f"{row['dtype']}, 2^{row['n'].bit_length() - 1}, {row['layout']}{out}"


def summary(mode: str, rows: list[dict]) -> str:
    worst = min(rows, key=lambda row: row["ratio"])
    large = [row for row in rows if row["n"] >= LARGE]
    small = [row for row in rows if row["n"] < LARGE]
    below = sum(row["ratio"] < 1 for row in large)
    far_below = sum(row["ratio"] < 0.97 for row in small)
    median = statistics.median(row["ratio"] for row in rows)
    return (
        f"| {mode} | {median:.3f} | {worst['ratio']:.3f} ({cell_name(worst)}) |"
        f" {below} of {len(large)} | {far_below} of {len(small)} |"
    )


def worst_and_median(ratios: list[float]) -> str:
    if not ratios:
        return "none"
    return f"{min(ratios):.3f} / {statistics.median(ratios):.3f}"


def per_dtype_table(rows: list[dict]) -> list[str]:
    lines = [
        "| dtype | layout | n < 2^16: worst / median | n ≥ 2^16: worst / median |"
        " cells < 1.00 at n ≥ 2^16 |",
        "| --- | --- | --- | --- | --- |",
    ]
    keys = dict.fromkeys((row["dtype"], row["layout"]) for row in rows)
    for dtype, layout in keys:
        cells = [row for row in rows if (row["dtype"], row["layout"]) == (dtype, layout)]
        small = [row["ratio"] for row in cells if row["n"] < LARGE]
        large = [row["ratio"] for row in cells if row["n"] >= LARGE]
        lines.append(
            f"| {dtype} | {layout} | {worst_and_median(small)} | {worst_and_median(large)} |"
            f" {sum(r < 1 for r in large)} of {len(large)} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", nargs="+", help="the bench's --json files")
    args = parser.parse_args()
    by_mode: dict[str, list[dict]] = {}
    for path in args.json:
        with open(path) as file:
            for row in json.load(file)["bandwidth"]:
                by_mode.setdefault(row["mode"], []).append(row)
    print("| mode | median | worst cell | cells < 1.00 at n ≥ 2^16 | cells < 0.97 below 2^16 |")
    print("| --- | --- | --- | --- | --- |")
    for mode, rows in by_mode.items():
        print(summary(mode, rows))
    for mode, rows in by_mode.items():
        print(f"\n### `{mode}`\n")
        print("\n".join(per_dtype_table(rows)))


if __name__ == "__main__":
    main()
