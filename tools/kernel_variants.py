"""Time launch shapes of vecadd's contiguous kernel next to torch.add on the same buffers.

    nvcc -O3 -std=c++17 -arch=sm_90 -shared -Xcompiler -fPIC -I src/include -I src/kernels \\
         -I <build>/generated/include tools/kernel_variants.cu src/kernels/add_cuda.cu \\
         -o kernel_variants.so
    python tools/kernel_variants.py kernel_variants.so --dtypes float16,float32

Each cell is the variant's bandwidth divided by torch.add(x, y, out=z)'s, both timed as
CUDA-graph replays interleaved round by round (vecadd's own bench method); the last
column is torch.add in GB/s. Every variant's result is first checked against torch.add.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import sys

import torch

from vecadd._bench import DTYPE_NAMES, seconds_per_call

DTYPE_CODES = {name: code for code, name in enumerate(DTYPE_NAMES)}


def load_library(path: str) -> ctypes.CDLL:
    library = ctypes.CDLL(path)
    library.vecadd_variant_count.restype = ctypes.c_int
    library.vecadd_variant_name.restype = ctypes.c_char_p
    library.vecadd_variant_name.argtypes = [ctypes.c_int]
    library.vecadd_variant_launch.restype = ctypes.c_int
    library.vecadd_variant_launch.argtypes = [
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_int64,
        ctypes.c_double,
        ctypes.c_void_p,
    ]
    return library


def variant_launcher(library: ctypes.CDLL, variant: int, dtype: str, x, y, z):
    code = DTYPE_CODES[dtype]

    def launch() -> None:
        stream = torch.cuda.current_stream().cuda_stream
        status = library.vecadd_variant_launch(
            variant, code, x.data_ptr(), y.data_ptr(), z.data_ptr(), x.numel(), 1.0, stream
        )
        if status != 0:
            raise RuntimeError(f"variant {variant} ({dtype}) failed to launch: status {status}")

    return launch


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library", help="kernel_variants.so built from tools/kernel_variants.cu")
    parser.add_argument("--dtypes", default="float16,bfloat16,float32")
    parser.add_argument("--min-log2", type=int, default=16)
    parser.add_argument("--max-log2", type=int, default=28)
    parser.add_argument("--step", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("kernel_variants: needs a CUDA GPU", file=sys.stderr)
        return 1
    library = load_library(args.library)
    names = [library.vecadd_variant_name(i).decode() for i in range(library.vecadd_variant_count())]
    device = torch.device("cuda")
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}; ratio to torch.add(out=)")
    for dtype in args.dtypes.split(","):
        torch_dtype = DTYPE_NAMES[dtype]
        print(f"\n{dtype}\n{'n':>6} " + " ".join(f"{name:>15}" for name in names) + "  torch GB/s")
        for exponent in range(args.min_log2, args.max_log2 + 1, args.step):
            n = 1 << exponent
            x = torch.randn(n, device=device).to(torch_dtype)
            y = torch.randn(n, device=device).to(torch_dtype)
            z = torch.empty_like(x)
            expected = torch.add(x, y)
            launchers = [variant_launcher(library, i, dtype, x, y, z) for i in range(len(names))]
            for name, launch in zip(names, launchers, strict=True):
                z.zero_()
                launch()
                if not torch.equal(z, expected):
                    raise AssertionError(f"variant {name!r} is wrong for {dtype}, n = {n}")
            calls = max(10, min(200, int(2e9 // (3 * n * x.element_size()))))
            reference_add = functools.partial(torch.add, x, y, out=z)
            seconds = seconds_per_call([*launchers, reference_add], device, calls, args.rounds)
            reference = seconds[-1]
            torch_gbps = 3 * n * x.element_size() / reference / 1e9
            cells = " ".join(f"{reference / s:>15.3f}" for s in seconds[:-1])
            print(f"  2^{exponent:<3} {cells}  {torch_gbps:10.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
