# Evidence for: docs/benchmarks.md, "Chain, cold and pipeline: NVIDIA H200, 2026-12-01" (how far
# a ratio can be trusted), and docs/kernel-notes.md, "How the bench times a kernel".
"""How far torch.add is from itself in the bench's modes: the resolution of a ratio to it.

    python lab/parity_spread.py [--rounds 7] [--modes cold,pipeline-graph]

Each cell (contiguous, out=, n = 2^16 ... 2^28 in steps of 4x, every dtype) times three
candidates as the bench's modes time them (vecadd/bench/modes.py), rounds interleaved:
torch.add, torch.add again, and vecadd.add. It prints the median paired ratio of torch.add to
its second self (A/A) and to vecadd.add, and the range of the per-round A/A ratios: how far two
timings of the same work land apart in that cell. A vecadd cell below 1.00 but within that
range is not resolved from parity; one below it is more likely a loss, though one pair of
candidates bounds the spread only roughly (each graph, for instance, is captured once).
"""

from __future__ import annotations

import argparse
import statistics

import torch

import vecadd
from vecadd.bench.layouts import operands
from vecadd.bench.modes import batch_calls, cold_calls, pipeline_around, pipeline_bytes
from vecadd.bench.timing import batch_samples, cold_samples

LOG2_SIZES = range(16, 29, 2)


def samples_of(mode: str, dtype: torch.dtype, log2: int, rounds: int) -> list[list[float]]:
    device = torch.device("cuda")
    x, y, z = operands(1 << log2, dtype, device, "contiguous")
    adds = [
        lambda: torch.add(x, y, out=z),
        lambda: torch.add(x, y, out=z),
        lambda: vecadd.add(x, y, out=z),
    ]
    if mode == "cold":
        return cold_samples(adds, device, cold_calls(device), rounds)
    source = x.clone()
    w = torch.empty_like(z)
    pipelines = [pipeline_around(add, source, x, w) for add in adds]
    calls = batch_calls(device, pipeline_bytes(x, y, z))
    return batch_samples(pipelines, device, calls, rounds, graph=mode == "pipeline-graph")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--modes", default="cold,pipeline-graph")
    args = parser.parse_args()
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, {args.rounds} rounds")
    print("ratios: torch.add's time / the other's (median of paired rounds)")
    for mode in args.modes.split(","):
        print(f"\n{mode}")
        print(f"{'dtype':>9} {'n':>5} {'A/A':>6} {'A/A range':>13} {'vecadd':>7}  verdict")
        below = resolved = 0
        for dtype in vecadd.SUPPORTED_DTYPES:
            for log2 in LOG2_SIZES:
                reference, again, ours = samples_of(mode, dtype, log2, args.rounds)
                same = [a / b for a, b in zip(reference, again, strict=True)]
                versus = statistics.median(a / b for a, b in zip(reference, ours, strict=True))
                verdict = ""
                if versus < 1:
                    below += 1
                    if versus < min(same):
                        resolved += 1
                        verdict = "below every A/A round"
                name = str(dtype).removeprefix("torch.")
                print(
                    f"{name:>9} 2^{log2:<3} {statistics.median(same):6.3f}"
                    f" {min(same):6.3f}-{max(same):6.3f} {versus:7.3f}  {verdict}"
                )
        print(f"{mode}: {below} cells below 1.00, {resolved} of them below every A/A round")


if __name__ == "__main__":
    main()
