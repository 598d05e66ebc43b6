"""The CPU instructions each way of calling vecadd costs per call, counted by callgrind, and the
guard that keeps them from growing unseen (nox -s calls).

    python tools/calls/instructions.py measure [--json FILE]  # print (and save) the counts
    python tools/calls/instructions.py check   # fail where a row is 10 % above its record
    (measure and check take --uncompiled: the rows without torch.compile alone)
    python tools/calls/instructions.py table   # this environment's record, as docs shows it

A count is per call on 16-element float32 CPU tensors with one thread, vecadd's and the torch
call it replaces, for each row of tools/calls/ways.py (the rows `vecadd bench --call-cost`
times): the instructions of 300 calls less those of 100, over 200, so that what starts and
stops the count cancels. Instruction counts are repeatable whatever else the machine does
(timings are not), but they depend on the interpreter and the torch build: a record applies to
the Python and torch versions it names, and `check` says so and passes where they differ.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "docs" / "data" / "call-instructions.json"
BENCHMARKS_DOC = ROOT / "docs" / "benchmarks.md"
TABLE_START = "| call (CPU, 16 elements, one thread) |"
ALLOWED_GROWTH = 1.10
CALL_COUNTS = (100, 300)


def _label(row_index: int, side: str, count: int) -> str:
    return f"row{row_index}-{side}-{count}"  # callgrind_control passes it through a shell


def _inside(rows: list[str]) -> None:
    """Runs under callgrind (instrumentation off): each call of `rows`, counted over both
    lengths."""
    import torch
    from ways import call_functions, call_scope

    torch.set_num_threads(1)
    scope = call_scope()

    def control(*words: str) -> None:
        command = ["callgrind_control", *words, str(os.getpid())]
        subprocess.run(command, stdout=subprocess.DEVNULL, check=True)

    for index, row in enumerate(rows):
        for side, function in zip(("vecadd", "torch"), call_functions(row, scope), strict=True):
            for _ in range(50):  # warm: first-call caches, lazily made objects
                function()
            for count in CALL_COUNTS:
                control("--zero")
                control("--instr=on")
                for _ in range(count):
                    function()
                control("--instr=off")
                control(f"--dump={_label(index, side, count)}")


def measure(rows: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "callgrind.out"
        ran = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--instr-atstart=no",
                f"--callgrind-out-file={out}",
                sys.executable,
                __file__,
                "inside",
                *rows,
            ],
            capture_output=True,
            text=True,
            env={**os.environ, "OMP_NUM_THREADS": "1"},
        )
        if ran.returncode != 0:
            raise SystemExit(f"callgrind run failed:\n{ran.stderr[-3000:]}")
        totals: dict[str, int] = {}
        for dump in Path(folder).glob("callgrind.out*"):
            text = dump.read_text(errors="replace")
            trigger = re.search(r"^desc: Trigger: dump (\S+)$", text, re.M)
            counted = re.search(r"^totals: (\d+)$", text, re.M)
            if trigger and counted:
                totals[trigger.group(1)] = int(counted.group(1))
    per_call = {}
    for index, row in enumerate(rows):
        per_call[row] = {}
        for side in ("vecadd", "torch"):
            fewer, more = (totals[_label(index, side, count)] for count in CALL_COUNTS)
            per_call[row][side] = round((more - fewer) / (CALL_COUNTS[1] - CALL_COUNTS[0]))
    return {**_environment(), "instructions_per_call": per_call}


def _environment() -> dict:
    """What a record applies to: this Python, torch and vecadd build."""
    import torch

    import vecadd

    return {
        "python": ".".join(map(str, sys.version_info[:2])),
        "torch": torch.__version__.split("+")[0],
        "vecadd_build": vecadd.build_info()["torch_abi"],
    }


def table(record: dict) -> str:
    lines = [
        f"{TABLE_START} vecadd | torch | vecadd / torch |",
        "| --- | --- | --- | --- |",
    ]
    for row, counts in record["instructions_per_call"].items():
        ratio = counts["vecadd"] / counts["torch"]
        lines.append(f"| `{row}` | {counts['vecadd']:,} | {counts['torch']:,} | {ratio:.2f} |")
    return "\n".join(lines)


ENVIRONMENT_KEYS = ("python", "torch", "vecadd_build")


def latest_record(records: list[dict], environment: dict) -> dict | None:
    """The last record of the environment's Python, torch and build (a measurement or what
    _environment gives), the one a measurement is held to."""
    key = [environment[name] for name in ENVIRONMENT_KEYS]
    matching = [r for r in records if [r[name] for name in ENVIRONMENT_KEYS] == key]
    return matching[-1] if matching else None


def check(measured: dict, records: list[dict]) -> list[str]:
    """Rows whose count grew more than 10 % over the record of the same Python, torch and
    build, or that record's table missing from docs/benchmarks.md; the empty list where every
    row holds (or no record applies)."""
    record = latest_record(records, measured)
    if record is None:
        python, torch, build = (measured[name] for name in ENVIRONMENT_KEYS)
        print(f"call_instructions: no record for Python {python}, torch {torch}, {build} build")
        return []
    recorded = record["instructions_per_call"]
    problems = []
    if table(record) not in BENCHMARKS_DOC.read_text():
        problems.append(f"{BENCHMARKS_DOC.name} does not show the table of this record")
    for row, counts in measured["instructions_per_call"].items():
        if row not in recorded:
            problems.append(f"{row}: no recorded count (add one to {RECORD.name})")
            continue
        limit = recorded[row]["vecadd"] * ALLOWED_GROWTH
        if counts["vecadd"] > limit:
            problems.append(
                f"{row}: {counts['vecadd']:,} instructions per call, recorded "
                f"{recorded[row]['vecadd']:,} (limit {limit:,.0f}, +10 %)"
            )
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["measure", "check", "table", "inside"])
    parser.add_argument("--json", type=Path, help="measure: write the counts here")
    parser.add_argument(
        "--uncompiled", action="store_true", help="measure, check: the rows without torch.compile"
    )
    parser.add_argument("rows", nargs="*", help=argparse.SUPPRESS)  # inside: the rows to count
    args = parser.parse_args()
    if args.action == "inside":
        _inside(args.rows)
        return 0
    records = json.loads(RECORD.read_text())["records"] if RECORD.exists() else []
    if args.action == "table":  # this environment's record, else the last one
        print(table(latest_record(records, _environment()) or records[-1]))
        return 0
    from ways import CALLS, UNCOMPILED_CALLS

    measured = measure(UNCOMPILED_CALLS if args.uncompiled else list(CALLS))
    print(table(measured))
    if args.json:
        args.json.write_text(json.dumps(measured, indent=2) + "\n")
    if args.action == "check":
        problems = check(measured, records)
        for problem in problems:
            print(f"call_instructions: {problem}")
        if problems:
            return 1
        print("call_instructions: every row within 10 % of its record")
    return 0


if __name__ == "__main__":
    sys.exit(main())
