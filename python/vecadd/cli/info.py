"""``vecadd info``: how vecadd was built and what it finds on this machine, as lines to read, or
``--json``: :func:`vecadd.build_info` for programs."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import torch

from .._info import build_info

LABEL_WIDTH = 20
# The widest line `vecadd info` and `vecadd check` print: one glance, on any terminal.
LINE_WIDTH = 100


def _words(values: list[str], empty: str = "none") -> str:
    return ", ".join(values) if values else empty


def wrapped(value: str, width: int, indent: str = "") -> list[str]:
    """`value` in lines of at most `width` characters, the second on starting with `indent`:
    broken at spaces, and a path too long for one line after a slash."""
    lines: list[str] = []
    pieces = textwrap.wrap(
        value, width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False
    )
    for line in pieces:
        start = len(indent) + 1 if lines else 1
        while len(line) > width and "/" in line[start:width]:
            cut = line.rindex("/", start, width) + 1
            lines.append(line[:cut])
            line, start = indent + line[cut:], len(indent) + 1
        lines.append(line)
    return lines or [""]


def format_lines(pairs: list[tuple[str, str]], indent: int = LABEL_WIDTH) -> list[str]:
    """`label: value` lines, values aligned at `indent` and wrapped within LINE_WIDTH."""
    lines = []
    for label, value in pairs:
        head = f"{label + ':' if label else '':<{indent}}"
        first, *rest = wrapped(value, LINE_WIDTH - indent)
        lines += [head + first, *(" " * indent + line for line in rest)]
    return lines


def _relative(path: str, folder: Path) -> str:
    """`path` below `folder` as a relative path, else whole."""
    return str(Path(path).relative_to(folder)) if Path(path).is_relative_to(folder) else path


def info_lines(info: dict) -> list[tuple[str, str]]:
    """(label, value) pairs of build_info() and of the torch and GPUs this process sees; each
    fact once."""
    import vecadd

    gpus = (
        [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        if torch.cuda.is_available()
        else []
    )
    package = Path(vecadd.__file__).resolve().parent
    lines = [
        ("version", info["version"]),
        ("build", f"{info['build']}, loads under {info['torch_requirement']}"),
        ("binding", f"{info['torch_abi']}: {info['binding_why']}"),
        ("built with torch", info["torch_version"]),
        ("torch loaded", f"{torch.__version__} (CUDA {torch.version.cuda or 'none'})"),
        ("GPUs", _words(gpus)),
        ("installed in", str(package)),
    ]
    if info["binding_entries_why"]:
        lines.insert(
            3, ("Python entries", f"through the dispatcher: {info['binding_entries_why']}")
        )
    if info["build"] == "portable":
        held = [binding["torch_series"] for binding in info["native_bindings"]]
        lines.insert(3, ("native bindings", f"torch {_words(held)}" if held else "none"))
    libraries = info["cuda_libraries"]
    if info["with_cuda"]:
        folder = _relative(info["cuda_library"], package)
        lines.append(("CUDA kernels", f"CUDA {info['cuda_version']}, loaded from {folder}"))
        lines.append(
            ("registered by", f"{info['cuda_registration']}: {info['cuda_registration_why']}")
        )
        lines.append(("architectures", _words(info["cuda_archs"])))
        # Each CUDA library runs on the runtime of its major that torch has loaded.
        runtimes = info["cuda_runtimes"]
        lines.append(("CUDA runtime" if len(runtimes) == 1 else "CUDA runtimes", _words(runtimes)))
    else:
        lines.append(("CUDA kernels", f"none loaded: {info['cuda_not_loaded']}"))
    others = [
        f"CUDA {library['cuda_version']} ({_relative(library['folder'], package)})"
        for library in libraries
        if library["folder"] != info["cuda_library"]
    ]
    if others:
        label = "also in this build" if info["with_cuda"] else "CUDA libraries"
        lines.append((label, _words(others)))
    return lines


def print_info(as_json: bool = False) -> int:
    info = build_info()
    if as_json:
        print(json.dumps(info, indent=2))
        return 0
    for line in format_lines(info_lines(info)):
        print(line)
    return 0
