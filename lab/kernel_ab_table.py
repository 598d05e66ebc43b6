# Evidence for: docs/kernel-notes.md, version 20 (the candidate launch shapes against the measured
# policy and against main), from lab/gpu_kernel_ab.sh's JSON.
"""Side by side: the ratio to torch.add of each build in each cell of `vecadd bench --json` or
`lab/kernel_durations.py --json` files.

    python lab/kernel_ab_table.py main=old.json new=new.json candidate=candidate.json

Each file is one build's run of the same sweep (same modes, dtypes and sizes). Per mode, a row per
dtype and n with each build's median ratio (torch.add's time over vecadd's: above 1, vecadd is
faster) and vecadd's median time in microseconds, then per build the worst cell and how many
cells fall below 0.99. Ratios are taken within each run, so they compare across runs that each
timed torch.add beside their build.
"""

from __future__ import annotations

import json
import statistics
import sys

TARGET = 0.99


def load_cells(path: str) -> dict[tuple[str, str, int], dict]:
    with open(path) as handle:
        rows = json.load(handle)["bandwidth"]
    return {(row["mode"], row["dtype"], row["n"]): row for row in rows}


def main(arguments: list[str]) -> int:
    if not arguments or any("=" not in argument for argument in arguments):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    builds = dict(argument.split("=", 1) for argument in arguments)
    cells = {label: load_cells(path) for label, path in builds.items()}
    keys = sorted(set().union(*cells.values()), key=lambda key: (key[0], key[1], key[2]))
    for mode in sorted({key[0] for key in keys}):
        print(f"\n{mode}: ratio to torch.add (vecadd us) per build")
        print(f"{'dtype':>9} {'log2 n':>6}  " + "  ".join(f"{label:>17}" for label in builds))
        worst: dict[str, list[tuple[float, str]]] = {label: [] for label in builds}
        for _, dtype, n in (key for key in keys if key[0] == mode):
            line = f"{dtype:>9} {n.bit_length() - 1:>6}  "
            for label in builds:
                row = cells[label].get((mode, dtype, n))
                if row is None:
                    line += f"{'-':>17}  "
                    continue
                micros = statistics.median(row["vecadd_round_s"]) * 1e6
                line += f"{row['ratio']:>7.3f} ({micros:>7.2f})  "
                worst[label].append((row["ratio"], f"{dtype} 2^{n.bit_length() - 1}"))
            print(line.rstrip())
        for label, ratios in worst.items():
            if ratios:
                low = [cell for ratio, cell in sorted(ratios) if ratio < TARGET]
                ratio, cell = min(ratios)
                print(
                    f"  {label}: worst {ratio:.3f} ({cell}), median "
                    f"{statistics.median(r for r, _ in ratios):.3f}, {len(low)} of {len(ratios)}"
                    f" below {TARGET}: {', '.join(low) or 'none'}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
