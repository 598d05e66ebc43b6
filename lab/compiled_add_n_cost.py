# Evidence for: docs/compile.md, "Measured" (the add_n cells below the others on the H100).
"""Where a compiled add_n's extra time per call goes, beside a + b + c and beside add: graphs and
graph breaks, guard lines, the host's time per call (launches only, then with a sync), and the
kernels each spelling runs, at 16 elements and at 4096x1024.

    python lab/compiled_add_n_cost.py [cuda|cpu]
"""

import statistics
import sys
import time

import torch
from torch._dynamo.eval_frame import _debug_get_cache_entry_list

from vecadd import add, add_n

DEVICE = sys.argv[1] if len(sys.argv) > 1 else "cuda"
SPELLINGS = {
    "torch a+b+c": lambda a, b, c: a + b + c,
    "vecadd add_n": lambda a, b, c: add_n([a, b, c]),
    "torch add": lambda a, b, c: torch.add(a, b),
    "vecadd add": lambda a, b, c: add(a, b),
}
CASES = (((16,), torch.float32), ((4096, 1024), torch.bfloat16), ((4096, 1024), torch.float32))


def sync() -> None:
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def compiled_spellings(operands: list) -> dict:
    compiled = {}
    for name, function in SPELLINGS.items():
        torch._dynamo.reset()
        explained = torch._dynamo.explain(function)(*operands)
        compiled[name] = torch.compile(function)
        compiled[name](*operands)
        (entry,) = _debug_get_cache_entry_list(function.__code__)
        guard_lines = str(entry.guard_manager).count("\n")
        print(
            f"  {name:14s} graphs {explained.graph_count}, breaks "
            f"{explained.graph_break_count}, guard lines {guard_lines}"
        )
    return compiled


def main() -> None:
    for shape, dtype in CASES:
        print(shape, dtype)
        operands = [torch.randn(shape, device=DEVICE, dtype=dtype) for _ in range(3)]
        compiled = compiled_spellings(operands)
        launched = {name: [] for name in compiled}
        synced = {name: [] for name in compiled}
        for _ in range(15):
            for name, function in compiled.items():
                sync()
                start = time.perf_counter()
                for _ in range(500):
                    function(*operands)
                launched[name].append((time.perf_counter() - start) / 500 * 1e6)
                sync()
                synced[name].append((time.perf_counter() - start) / 500 * 1e6)
        for name in compiled:
            print(
                f"  {name:14s} launches {statistics.median(launched[name]):8.2f} us, with a "
                f"sync {statistics.median(synced[name]):8.2f} us"
            )
        kind = torch.profiler.ProfilerActivity
        with torch.profiler.profile(activities=[kind.CUDA if DEVICE == "cuda" else kind.CPU]) as p:
            for function in compiled.values():
                for _ in range(20):
                    function(*operands)
            sync()
        for event in p.key_averages():
            if event.device_time > 0 or "vecadd" in event.key:
                print(f"  kernel {event.key[:60]:60s} n={event.count} {event.device_time:.2f} us")


if __name__ == "__main__":
    main()
