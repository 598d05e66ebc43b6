# Evidence for: docs/portable.md, "Native bindings: what they cost and save".
"""A timing command run in processes that alternate the binding vecadd chooses (the native one
of the running torch's series) and the stable one forced (VECADD_BINDING=stable, the portable
wheel's behaviour before it held native bindings), then each row's paired ratios per binding.

    python lab/binding_pairs.py [--pairs 3] [--budget SECONDS] [--out DIR] -- COMMAND ...

COMMAND is lab/call_cost.py or `python -m vecadd bench --mode training` (anything that takes
--json FILE and writes their records); each process gets --json DIR/BINDING-N.json and its
output goes to DIR/BINDING-N.txt. Alternating processes put the host's drift from one process
to the next on both bindings alike; within a process the rows are already torch against vecadd,
interleaved round by round. With --budget, no pair starts that the slowest pair so far says
would end after it: the table is printed within the budget, of the pairs that ran.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

BINDINGS = {"native": {}, "stable": {"VECADD_BINDING": "stable"}}


def rows_of(record: dict) -> dict[str, float]:
    """Each row's ratio in a record: lab/call_cost.py's (vecadd / torch, lower is better) or
    the training mode's (torch / vecadd, higher is better; waited for and streamed)."""
    if "call_cost" in record:
        return {row["case"]: row["ratio"] for row in record["call_cost"]}
    rows = {}
    for row in record["training"]:
        rows[f"training batch {row['batch']}, torch / vecadd"] = row["ratio"]
        rows[f"training batch {row['batch']}, streamed, torch / vecadd"] = row["stream_ratio"]
    return rows


def spread(values: list[float]) -> str:
    return f"{min(values):.3f}-{max(values):.3f} (median {statistics.median(values):.3f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=3, help="processes of each binding (3)")
    parser.add_argument(
        "--budget", type=float, default=None, help="seconds for all pairs (default: no limit)"
    )
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "pairs")))
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ...")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the timing command after --")
    args.out.mkdir(parents=True, exist_ok=True)
    found: dict[str, dict[str, list[float]]] = {name: {} for name in BINDINGS}
    start, slowest = time.monotonic(), 0.0
    for pair in range(1, args.pairs + 1):
        elapsed = time.monotonic() - start
        if args.budget is not None and pair > 1 and elapsed + slowest > args.budget:
            print(
                f"{pair - 1} pairs in {elapsed:.0f} s: no time for another in {args.budget:.0f} s"
            )
            break
        pair_start = time.monotonic()
        for name, environment in BINDINGS.items():
            record_path = args.out / f"{name}-{pair}.json"
            # A process that would end past the budget is stopped there; the table keeps the rest.
            left = None if args.budget is None else max(args.budget - (time.monotonic() - start), 1)
            with open(args.out / f"{name}-{pair}.txt", "w") as log:
                try:
                    ran = subprocess.run(
                        [*command, "--json", str(record_path)],
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        env={**os.environ, **environment},
                        check=False,
                        timeout=left,
                    )
                except subprocess.TimeoutExpired:
                    print(f"{name} process {pair} stopped at the budget: {log.name}")
                    continue
            if ran.returncode != 0 or not record_path.exists():
                print(f"{name} process {pair} failed (exit {ran.returncode}): {log.name}")
                continue
            record = json.loads(record_path.read_text())
            if record.get("binding", name) != name:
                print(f"{name} process {pair} ran the {record['binding']} binding: left out")
                continue
            for row, ratio in rows_of(record).items():
                found[name].setdefault(row, []).append(ratio)
        slowest = max(slowest, time.monotonic() - pair_start)
    print(f"{'row':<52} {'native binding':>34} {'stable binding':>34}")
    for row in dict.fromkeys([*found["native"], *found["stable"]]):
        cells = [spread(found[name][row]) if row in found[name] else "-" for name in BINDINGS]
        print(f"{row:<52} {cells[0]:>34} {cells[1]:>34}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
