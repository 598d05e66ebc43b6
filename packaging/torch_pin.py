"""scikit-build-core metadata provider: pins torch to the series the wheel is built against.

A compiled extension only loads under the torch minor series it was compiled with, so the
wheel's Requires-Dist must say ``torch==X.Y.*`` for the torch that is importable at build
time (builds run without isolation, against the user's torch).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any


def torch_requirement(torch_version: str) -> str:
    """``2.14.1+cu130`` -> ``torch==2.14.*``."""
    match = re.match(r"(\d+)\.(\d+)", torch_version)
    if match is None:
        raise ValueError(f"cannot read a torch version from {torch_version!r}")
    return f"torch=={match.group(1)}.{match.group(2)}.*"


def dynamic_metadata(field: str, settings: Mapping[str, Any] | None = None) -> list[str]:
    if field != "dependencies":
        raise ValueError(f"torch_pin provides 'dependencies', not {field!r}")
    try:
        import torch
    except ImportError:
        # An sdist (or metadata without torch) states the range the sources support.
        return ["torch>=2.4"]
    return [torch_requirement(torch.__version__)]
