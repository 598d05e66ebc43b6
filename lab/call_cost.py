# Evidence for: docs/benchmarks.md, "Per-call cost", and docs/portable.md, "Per-call cost".
"""Per-call wall time of each row of tools/calls/ways.py beside the torch call it stands in for,
on 16-element tensors (the host's cost per call decides the time).

    python lab/call_cost.py [--device cuda] [--rounds 11] [--calls 20000] [--json FILE]
        [--cases uncompiled|all|ROW;ROW...]

One synchronization per batch of --calls back-to-back calls; each row prints the medians over
--rounds interleaved rounds and the median of the per-round ratios (below 1: vecadd cheaper).
The same rows are counted in CPU instructions by tools/calls/instructions.py (nox -s calls).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from vecadd.bench.timing import interleaved_samples, microseconds_per_call

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "calls"))
from ways import CALLS, UNCOMPILED_CALLS, call_functions, call_scope


@dataclass
class CallCostRow:
    case: str
    vecadd_us: float
    torch_us: float
    # Median over rounds of vecadd's time over torch's in the same round: a burst of host
    # noise that slows one round of one side does not move it.
    ratio: float


def cases_from_argument(value: str) -> list[str]:
    """The rows --cases names: all, uncompiled (no torch.compile: UNCOMPILED_CALLS) or row
    names separated by semicolons."""
    if value == "all":
        return list(CALLS)
    if value == "uncompiled":
        return list(UNCOMPILED_CALLS)
    names = value.split(";")
    unknown = [name for name in names if name not in CALLS]
    if unknown:
        raise SystemExit(
            f"--cases: no row {unknown[0]!r}; expected all, uncompiled or of {list(CALLS)}"
        )
    return names


def measure_call_cost(
    device: torch.device, rounds: int, calls: int, cases: list[str]
) -> list[CallCostRow]:
    per_call = microseconds_per_call(device, calls)
    scope = call_scope(device)
    rows = []
    for name in cases:
        ours, theirs = call_functions(name, scope)
        ours_us, theirs_us = interleaved_samples([ours, theirs], per_call, rounds)
        paired = statistics.median(a / b for a, b in zip(ours_us, theirs_us, strict=True))
        rows.append(
            CallCostRow(name, statistics.median(ours_us), statistics.median(theirs_us), paired)
        )
    return rows


def format_call_cost(rows: list[CallCostRow]) -> str:
    lines = [f"{'call (16 elements)':<34} {'vecadd us':>10} {'torch us':>13} {'ratio':>6}"]
    for row in rows:
        lines.append(
            f"{row.case:<34} {row.vecadd_us:>10.2f} {row.torch_us:>13.2f} {row.ratio:>6.3f}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = "cuda" if torch.cuda.is_available() else "cpu"
    parser.add_argument("--device", default=default, help=f"cpu or cuda[:N] (default: {default})")
    parser.add_argument("--rounds", type=int, default=11, help="interleaved rounds (11)")
    parser.add_argument("--calls", type=int, default=20_000, help="calls per batch (20000)")
    parser.add_argument("--json", metavar="FILE", help="write the rows as JSON")
    parser.add_argument(
        "--cases", default="all", help="all (the default), uncompiled, or rows separated by ';'"
    )
    args = parser.parse_args()
    device = torch.device(args.device)
    rows = measure_call_cost(device, args.rounds, args.calls, cases_from_argument(args.cases))
    print(format_call_cost(rows))
    if args.json:
        import vecadd

        name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
        record = {"device": str(device), "device_name": name, "torch": torch.__version__}
        record["threads"] = torch.get_num_threads()
        record["binding"] = vecadd.build_info()["torch_abi"]
        with open(args.json, "w") as handle:
            json.dump({**record, "call_cost": [asdict(row) for row in rows]}, handle, indent=1)


if __name__ == "__main__":
    main()
