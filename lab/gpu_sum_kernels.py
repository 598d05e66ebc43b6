# Evidence for: docs/benchmarks.md, "Mixed dtypes on the GPU", and docs/kernel-notes.md,
# "Sums of mixed dtypes".
"""Kernel durations (CUPTI, as lab/kernel_durations.py reads them) of vecadd::sum_cuda beside
torch.add's kernels on the same tensors: mixed dtypes (float32 with bfloat16 or float16, both ways
round; other pairs on the dynamic kernel), a Python number (vecadd's constant taken by value
against torch.add(x, 2.0)), and same-dtype calls through the same entry point. Each result is first
checked against torch.add's. The calls go through lab/sum_cuda_shim.cu (vecadd's public C++ API
behind a C function) until the bindings take mixed dtypes.

    python lab/gpu_sum_kernels.py SHIM.so [--cases all|mixed|number|same|NAME,...]
        [--min-log2 16] [--max-log2 26] [--step 2] [--rounds 5] [--json FILE]

Ratio = torch.add's kernel time / vecadd's, the median of paired per-round ratios (above 1:
vecadd's kernel is faster); warm = back to back on the same tensors, cold = after an L2 flush.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
from collections.abc import Callable, Sequence

import torch

from kernel_durations import kernel_samples  # lab/, beside this script
from vecadd.bench.modes import batch_calls, cold_calls

# vecadd::DType's enumerators, in order.
DTYPES = [
    torch.bool,
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
    torch.complex32,
    torch.complex64,
    torch.complex128,
]
CODE = {dtype: code for code, dtype in enumerate(DTYPES)}


class Case:
    """x (and y, or the Python number 2.0) of given dtypes; y broadcast along rows if asked."""

    def __init__(self, name: str, x: torch.dtype, y: torch.dtype | None, bias: bool = False):
        self.name, self.x, self.y, self.bias = name, x, y, bias


CASES = {
    "same": [
        Case(str(dtype).removeprefix("torch."), dtype, dtype)
        for dtype in (
            torch.float32,
            torch.float16,
            torch.bfloat16,
            torch.int64,
            torch.uint8,
            torch.complex64,
        )
    ],
    "mixed": [
        Case("float32+bfloat16", torch.float32, torch.bfloat16),
        Case("bfloat16+float32", torch.bfloat16, torch.float32),
        Case("float32+float16", torch.float32, torch.float16),
        Case("float16+float32", torch.float16, torch.float32),
        Case("int32+float32", torch.int32, torch.float32),
        Case("float32+bfloat16 bias", torch.float32, torch.bfloat16, bias=True),
    ],
    "number": [
        Case(f"{str(dtype).removeprefix('torch.')}+2.0", dtype, None)
        for dtype in (torch.float32, torch.bfloat16, torch.float16)
    ],
}


def load_shim(path: str) -> ctypes.CDLL:
    shim = ctypes.CDLL(path)
    pointer_array = ctypes.POINTER(ctypes.c_void_p)
    shim.vecadd_lab_sum.restype = ctypes.c_int
    shim.vecadd_lab_sum.argtypes = [
        ctypes.c_int,
        pointer_array,
        ctypes.POINTER(ctypes.c_int),
        ctypes.POINTER(ctypes.c_int),
        ctypes.POINTER(ctypes.POINTER(ctypes.c_int64)),
        ctypes.POINTER(ctypes.POINTER(ctypes.c_int64)),
        ctypes.POINTER(ctypes.c_double),
        ctypes.c_void_p,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.POINTER(ctypes.c_int64),
        ctypes.POINTER(ctypes.c_int64),
        ctypes.c_int,
        ctypes.c_void_p,
    ]
    return shim


def int64s(values: Sequence[int]):
    return (ctypes.c_int64 * max(len(values), 1))(*values)


def vecadd_call(shim: ctypes.CDLL, operands: Sequence[torch.Tensor | float], z: torch.Tensor):
    """A callable that runs sum_cuda(operands) into z (a float operand: a Python number), with
    every ctypes argument built once."""
    count = len(operands)
    kept = []  # keeps the ctypes arrays alive as long as the callable
    data = (ctypes.c_void_p * count)()
    dtypes = (ctypes.c_int * count)()
    ndims = (ctypes.c_int * count)()
    sizes = (ctypes.POINTER(ctypes.c_int64) * count)()
    strides = (ctypes.POINTER(ctypes.c_int64) * count)()
    values = (ctypes.c_double * count)()
    for i, operand in enumerate(operands):
        if isinstance(operand, torch.Tensor):
            data[i] = operand.data_ptr()
            dtypes[i] = CODE[operand.dtype]
            ndims[i] = operand.dim()
            shape, stride = int64s(operand.shape), int64s(operand.stride())
            kept += [shape, stride]
            sizes[i] = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
            strides[i] = ctypes.cast(stride, ctypes.POINTER(ctypes.c_int64))
        else:
            data[i] = None
            dtypes[i] = CODE[torch.float64]
            values[i] = operand
    z_shape, z_stride = int64s(z.shape), int64s(z.stride())
    kept += [z_shape, z_stride]
    arguments = (
        count,
        data,
        dtypes,
        ndims,
        sizes,
        strides,
        values,
        z.data_ptr(),
        CODE[z.dtype],
        z.dim(),
        z_shape,
        z_stride,
        CODE[z.dtype],
    )

    def run() -> None:
        status = shim.vecadd_lab_sum(*arguments, torch.cuda.current_stream().cuda_stream)
        if status != 0:
            raise RuntimeError(f"vecadd::sum_cuda returned {status}")

    run.kept = kept  # type: ignore[attr-defined]
    return run


def operands_of(case: Case, n: int, device: torch.device):
    shape = (n // 1024, 1024) if case.bias else (n,)
    x = torch.randn(shape, device=device).to(case.x)
    if case.y is None:
        return x, 2.0
    y_shape = (1024,) if case.bias else shape
    return x, torch.randn(y_shape, device=device).to(case.y)


def measure(shim, case: Case, n: int, device, rounds: int) -> list[dict]:
    x, y = operands_of(case, n, device)
    expected = torch.add(x, y)
    z_vecadd = torch.empty_like(expected)
    z_torch = torch.empty_like(expected)
    ours = vecadd_call(shim, [x, y], z_vecadd)
    ours()
    torch.cuda.synchronize(device)
    torch.testing.assert_close(z_vecadd, expected, rtol=0, atol=0, equal_nan=True)
    theirs: Callable[[], object] = lambda: torch.add(x, y, out=z_torch)  # noqa: E731
    moved = sum(t.numel() * t.element_size() for t in (x, y, z_vecadd) if torch.is_tensor(t))
    rows = []
    for cold in (False, True):
        calls = cold_calls(device) if cold else batch_calls(device, moved)
        ours_s, theirs_s = kernel_samples([ours, theirs], device, calls, rounds, cold)
        ratios = [t / o for o, t in zip(ours_s, theirs_s, strict=True)]
        rows.append(
            {
                "case": case.name,
                "log2": n.bit_length() - 1,
                "mode": "cold" if cold else "warm",
                "vecadd_us": statistics.median(ours_s) * 1e6,
                "torch_us": statistics.median(theirs_s) * 1e6,
                "ratio": statistics.median(ratios),
                "min": min(ratios),
                "max": max(ratios),
            }
        )
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shim", help="sum_cuda_shim.so, built against the installed vecadd")
    parser.add_argument("--cases", default="all", help="all, mixed, number, same or names")
    parser.add_argument("--min-log2", type=int, default=16)
    parser.add_argument("--max-log2", type=int, default=26)
    parser.add_argument("--step", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    every = [case for group in CASES.values() for case in group]
    if args.cases == "all":
        cases = every
    elif args.cases in CASES:
        cases = CASES[args.cases]
    else:
        names = args.cases.split(",")
        cases = [case for case in every if case.name in names]
    device = torch.device("cuda")
    shim = load_shim(args.shim)
    rows = []
    print(
        f"{torch.cuda.get_device_name(device)}, torch {torch.__version__}; ratio = torch.add's "
        "kernel time / vecadd's (median of paired rounds [min, max])"
    )
    for case in cases:
        for log2 in range(args.min_log2, args.max_log2 + 1, args.step):
            for row in measure(shim, case, 2**log2, device, args.rounds):
                rows.append(row)
                print(
                    f"{row['case']:24} 2^{row['log2']:<3} {row['mode']:5} {row['ratio']:.3f} "
                    f"[{row['min']:.3f}, {row['max']:.3f}]  vecadd {row['vecadd_us']:9.2f} us"
                    f"  torch {row['torch_us']:9.2f} us",
                    flush=True,
                )
    for mode in ("warm", "cold"):
        for group, members in CASES.items():
            names = {case.name for case in members}
            cells = [r for r in rows if r["mode"] == mode and r["case"] in names]
            if cells:
                worst = min(cells, key=lambda r: r["ratio"])
                print(
                    f"{mode} {group}: median {statistics.median(r['ratio'] for r in cells):.3f}, "
                    f"worst {worst['ratio']:.3f} ({worst['case']} 2^{worst['log2']})"
                )
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(
                {
                    "device": torch.cuda.get_device_name(device),
                    "torch": torch.__version__,
                    "rows": rows,
                },
                handle,
                indent=1,
            )


if __name__ == "__main__":
    main()
