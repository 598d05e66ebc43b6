# Evidence for: docs/data/h200-modes-v17/README.md, the Nsight Compute files behind docs/kernel-
# notes.md, "Versions, predictions, outcomes".
"""The kernels of torch.add and vecadd.add, and lab shapes, for Nsight Compute to compare.

    ncu --clock-control none --cache-control all --profile-from-start off --csv \\
        --metrics gpu__time_duration.sum,dram__bytes_read.sum,... \\
        python lab/ncu_cases.py kernel_variants.so

Only the calls between torch.cuda.profiler.start() and stop() are profiled: three rounds of
torch.add(x, y, out=z), vecadd.add(x, y, out=z) and, for float16, the lab's 128-thread shape
held to 12 blocks per SM, on buffers filled beforehand. --cache-control all flushes the caches
before each kernel, as the bench's cold mode does.
"""

from __future__ import annotations

import sys

import torch

import vecadd
from kernel_variants import dtype_codes, load_library, variant_launcher

CASES = ((torch.float16, 26), (torch.float16, 24), (torch.float64, 20), (torch.int64, 20))
ROUNDS = 3
TWELVE_BLOCKS_PER_SM = "128 occ12 exit"


def main(library_path: str) -> None:
    library = load_library(library_path)
    codes = dtype_codes(library)
    names = [library.vecadd_variant_name(i).decode() for i in range(library.vecadd_variant_count())]
    buffers = []
    for dtype, log2 in CASES:
        x = torch.randn(1 << log2, device="cuda").to(dtype)
        y = torch.randn(1 << log2, device="cuda").to(dtype)
        buffers.append((x, y, torch.empty_like(x)))

    twelve_per_sm = names.index(TWELVE_BLOCKS_PER_SM)
    for x, y, z in buffers:  # lazy loading and the allocator, outside the profiled range
        torch.add(x, y, out=z)
        vecadd.add(x, y, out=z)
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for x, y, z in buffers:
        for _ in range(ROUNDS):
            torch.add(x, y, out=z)
            vecadd.add(x, y, out=z)
            if x.dtype == torch.float16:
                code = codes[str(x.dtype).removeprefix("torch.")]
                variant_launcher(library, twelve_per_sm, code, x, y, z)()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


if __name__ == "__main__":
    main(sys.argv[1])
