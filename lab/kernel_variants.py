# Evidence for: docs/kernel-notes.md, "Contiguous calls" and "What was tried and is not in the
# kernels" (the candidates each rule was chosen over).
"""Time candidate contiguous kernels next to vecadd's own and torch.add on the same buffers.

    lab/gpu_session.sh variants     # builds kernel_variants.so against the installed vecadd
    python lab/kernel_variants.py kernel_variants.so --dtypes float16,float32 --modes chain,cold

kernel_variants.so comes from lab/kernel_variants.cu, which reaches vecadd only through its
public headers and its CUDA library (its build line is in that file). Each cell is torch.add(x, y,
out=z)'s time divided by the variant's (above 1: the variant is faster), the median of paired
per-round ratios, timed as the bench's modes time them (vecadd/bench/modes.py), rounds
interleaved:
- chain: back-to-back launches on the same buffers, one CUDA-graph replay per batch;
- cold: the L2 flushed before every launch;
- pipeline: x = 2 a, the add, w = -z and sum(z), a batch of such pipelines in one CUDA graph,
  with the variant or torch.add in the add's place;
- kernel-warm, kernel-cold: each kernel's own duration as the GPU records it (CUPTI through
  torch.profiler), back to back or after a flush, as lab/kernel_durations.py measures.
The last column is torch.add's GB/s (of the add alone, in chain and cold). Every
variant's result is first checked against torch.add, once alone and in a chain of dependent
launches (z = x + z), eager and as one CUDA graph: a launch that overlaps the previous one
must still see its writes.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import statistics
import sys

import torch

import vecadd
from kernel_durations import kernel_samples  # lab/, beside this script
from vecadd.bench.layouts import bytes_moved
from vecadd.bench.modes import batch_calls, cold_calls, pipeline_around, pipeline_bytes
from vecadd.bench.timing import batch_samples, cold_samples


def load_library(path: str) -> ctypes.CDLL:
    library = ctypes.CDLL(path)
    library.vecadd_variant_count.restype = ctypes.c_int
    library.vecadd_variant_name.restype = ctypes.c_char_p
    library.vecadd_variant_name.argtypes = [ctypes.c_int]
    library.vecadd_variant_dtype_name.restype = ctypes.c_char_p
    library.vecadd_variant_dtype_name.argtypes = [ctypes.c_int]
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


def dtype_codes(library: ctypes.CDLL) -> dict[str, int]:
    """The library's element type numbers by name, checked against vecadd.SUPPORTED_DTYPES."""
    names = []
    while (name := library.vecadd_variant_dtype_name(len(names))) is not None:
        names.append(name.decode())
    supported = [str(dtype).removeprefix("torch.") for dtype in vecadd.SUPPORTED_DTYPES]
    if names != supported:
        raise RuntimeError(
            f"the variants library numbers the element types {names}, vecadd.SUPPORTED_DTYPES"
            f" lists {supported}: rebuild it against the installed vecadd"
        )
    return {name: code for code, name in enumerate(names)}


def variant_launcher(library: ctypes.CDLL, variant: int, code: int, x, y, z):
    dtype = str(x.dtype).removeprefix("torch.")

    def launch() -> None:
        stream = torch.cuda.current_stream().cuda_stream
        status = library.vecadd_variant_launch(
            variant, code, x.data_ptr(), y.data_ptr(), z.data_ptr(), x.numel(), 1.0, stream
        )
        if status != 0:
            raise RuntimeError(f"variant {variant} ({dtype}) failed to launch: status {status}")

    return launch


CHAIN_LENGTH = 24
MODES = ("chain", "cold", "pipeline", "kernel-warm", "kernel-cold")


def time_mode(mode: str, adds, x, y, z, device, rounds: int) -> list[list[float]]:
    """Per-round seconds of each add (launching on x, y, z) in the given mode, as the bench's
    modes time them (kernel-*: the kernels' own durations, CUPTI, as `--mode kernel` does)."""
    if mode == "kernel-cold":
        return kernel_samples(adds, device, cold_calls(device), rounds, cold=True)
    if mode == "kernel-warm":
        calls = batch_calls(device, bytes_moved(x, y, z))
        return kernel_samples(adds, device, calls, rounds, cold=False)
    if mode == "cold":
        return cold_samples(adds, device, cold_calls(device), rounds)
    if mode == "chain":
        return batch_samples(adds, device, batch_calls(device, bytes_moved(x, y, z)), rounds)
    source = x.clone()
    w = torch.empty_like(z)

    def returning_z(add):
        def run() -> torch.Tensor:
            add()
            return z

        return run

    pipelines = [pipeline_around(returning_z(add), source, x, w) for add in adds]
    calls = batch_calls(device, pipeline_bytes(x, y, z))
    return batch_samples(pipelines, device, calls, rounds)


def check_chain(library: ctypes.CDLL, variant: int, name: str, code: int, x, z) -> None:
    """z = x + z, CHAIN_LENGTH times, eager and replayed as one graph, against torch.add."""
    expected = torch.zeros_like(z)
    for _ in range(CHAIN_LENGTH):
        torch.add(x, expected, out=expected)
    accumulate = variant_launcher(library, variant, code, x, z, z)
    z.zero_()
    for _ in range(CHAIN_LENGTH):
        accumulate()
    eager_ok = torch.equal(z, expected)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(CHAIN_LENGTH):
            accumulate()
    z.zero_()
    graph.replay()
    graph_ok = torch.equal(z, expected)
    if not (eager_ok and graph_ok):
        raise AssertionError(
            f"variant {name!r} breaks a chain of dependent launches for {z.dtype}, n = {z.numel()}"
            f" (eager {'ok' if eager_ok else 'wrong'}, graph {'ok' if graph_ok else 'wrong'})"
        )


def sweep_cell(library, indices, names, code, dtype, n, mode, device, rounds):
    """The row of one size: each variant checked, then timed next to torch.add in `mode`."""
    x = torch.randn(n, device=device).to(dtype)
    y = torch.randn(n, device=device).to(dtype)
    z = torch.empty_like(x)
    expected = torch.add(x, y)
    launchers = [variant_launcher(library, i, code, x, y, z) for i in indices]
    for index, name, launch in zip(indices, names, launchers, strict=True):
        z.zero_()
        launch()
        if not torch.equal(z, expected):
            raise AssertionError(f"variant {name!r} is wrong for {dtype}, n = {n}")
        check_chain(library, index, name, code, x, z)
    reference_add = functools.partial(torch.add, x, y, out=z)
    samples = time_mode(mode, [*launchers, reference_add], x, y, z, device, rounds)
    reference = samples[-1]
    ratios = [
        statistics.median(r / v for r, v in zip(reference, s, strict=True)) for s in samples[:-1]
    ]
    torch_gbps = 3 * n * x.element_size() / statistics.median(reference) / 1e9
    cells = (f"{ratio:>{max(11, len(name))}.3f}" for ratio, name in zip(ratios, names, strict=True))
    return " ".join(cells), torch_gbps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library", help="kernel_variants.so built from lab/kernel_variants.cu")
    parser.add_argument("--dtypes", default="float16,bfloat16,float32")
    parser.add_argument("--min-log2", type=int, default=16)
    parser.add_argument("--max-log2", type=int, default=28)
    parser.add_argument("--step", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--variants", help="comma-separated variant names (default: all)")
    parser.add_argument(
        "--modes", default="chain", help=f"comma-separated, from {', '.join(MODES)}"
    )
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("kernel_variants: needs a CUDA GPU", file=sys.stderr)
        return 1
    library = load_library(args.library)
    codes = dtype_codes(library)
    dtypes = args.dtypes.split(",")
    if unknown_dtypes := [name for name in dtypes if name not in codes]:
        parser.error(f"--dtypes: unknown {unknown_dtypes}; expected names from {list(codes)}")
    all_names = [
        library.vecadd_variant_name(i).decode() for i in range(library.vecadd_variant_count())
    ]
    chosen = args.variants.split(",") if args.variants else all_names
    unknown = sorted(set(chosen) - set(all_names))
    if unknown:
        parser.error(f"--variants: unknown {unknown}; expected names from {all_names}")
    indices = [all_names.index(name) for name in chosen]
    names = chosen
    modes = args.modes.split(",")
    if unknown_modes := sorted(set(modes) - set(MODES)):
        parser.error(f"--modes: unknown {unknown_modes}; expected names from {list(MODES)}")
    device = torch.device("cuda")
    device_name = torch.cuda.get_device_name()
    print(f"{device_name}, torch {torch.__version__}; torch.add(out=)'s time / the variant's")
    for mode in modes:
        for dtype in dtypes:
            header = " ".join(f"{name:>{max(11, len(name))}}" for name in names)
            print(f"\n{mode}, {dtype}\n{'n':>6} {header}  torch GB/s")
            for exponent in range(args.min_log2, args.max_log2 + 1, args.step):
                cells, torch_gbps = sweep_cell(
                    library, indices, names, codes[dtype], getattr(torch, dtype), 1 << exponent,
                    mode, device, args.rounds,
                )  # fmt: skip
                print(f"  2^{exponent:<3} {cells}  {torch_gbps:10.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
