"""``vecadd info``: how vecadd was built and what it finds on this machine, as lines to read, or
``--json``: :func:`vecadd.build_info` for programs."""

from __future__ import annotations

import json

import torch

from .._info import build_info

LABEL_WIDTH = 20


def _words(values: list[str], empty: str = "none") -> str:
    return ", ".join(values) if values else empty


def info_lines(info: dict) -> list[tuple[str, str]]:
    """(label, value) pairs of build_info() and of the torch and GPUs this process sees."""
    gpus = (
        [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        if torch.cuda.is_available()
        else []
    )
    if info["with_cuda"]:
        kernels = f"CUDA {info['cuda_version']}, {_words(info['cuda_archs'])}"
    else:
        kernels = f"not loaded ({info['cuda_not_loaded']})"
    lines = [
        ("version", info["version"]),
        ("torch API", info["torch_abi"]),
        ("built with torch", info["torch_version"]),
        ("loads under", info["torch_requirement"]),
        ("torch loaded", f"{torch.__version__} (CUDA {torch.version.cuda or 'none'})"),
        ("GPUs", _words(gpus)),
        ("CUDA kernels", kernels),
    ]
    if info["with_cuda"]:
        lines.append(("CUDA library", info["cuda_library"]))
    lines.append(("CUDA runtimes", _words(info["cuda_runtimes"])))
    libraries = info["cuda_libraries"]
    lines.append(("CUDA libraries", str(len(libraries)) if libraries else "none"))
    for library in libraries:
        state = "loaded" if library["folder"] == info["cuda_library"] else "not loaded"
        lines.append(
            (
                "",
                f"CUDA {library['cuda_version']} ({state}): {library['folder']}, "
                f"{_words(library['cuda_archs'])}",
            )
        )
    return lines


def print_info(as_json: bool = False) -> int:
    info = build_info()
    if as_json:
        print(json.dumps(info, indent=2))
        return 0
    for label, value in info_lines(info):
        print(f"{label + ':' if label else '':<{LABEL_WIDTH}}{value}")
    return 0
