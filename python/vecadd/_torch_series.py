"""The torch series a compiled extension is tied to (standard library only).

The runtime check (``vecadd._loader``) and the build's dependency pin
(``cmake/torch_pin.py``, which loads this file by path) share this one rule.
"""

from __future__ import annotations

import re


def torch_series(version: str) -> str:
    """'2.14.1+cu130' -> '2.14': the part of a torch version its C++ ABI follows."""
    match = re.match(r"(\d+)\.(\d+)", version)
    if match is None:
        raise ValueError(
            f"torch version {version!r} does not start with MAJOR.MINOR; expected e.g. '2.14.1'"
        )
    return f"{match.group(1)}.{match.group(2)}"
