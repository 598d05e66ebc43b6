"""scikit-build-core dynamic-metadata provider: the version, with the wheel's local label if any.

The release number lives once, in pyproject.toml's ``wheel_version`` entry of
``[[tool.dynamic-metadata]]`` (``version = "X.Y.Z"``). A wheel for a CUDA toolkit other than
the default one gets a local label from the environment variable named there
(``VECADD_WHEEL_LABEL=cu128`` -> ``X.Y.Z+cu128``), so its file name and METADATA agree
without rewriting pyproject.toml.

Usage: python cmake/wheel_version.py [--label LABEL]   (prints the version a build gets;
default label: the environment's; needs Python 3.11+ to read pyproject.toml)
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
LOCAL_LABEL = re.compile(r"[a-z0-9]+(?:\.[a-z0-9]+)*")


def labelled_version(version: str, label: str, source: str = "label") -> str:
    """``0.1.0`` with ``cu128`` -> ``0.1.0+cu128``; an empty label leaves the version plain."""
    if not re.fullmatch(r"\d+\.\d+\.\d+", version):
        raise ValueError(f"version {version!r} must be a plain release like '0.1.0'")
    if not label:
        return version
    if not LOCAL_LABEL.fullmatch(label):
        raise ValueError(
            f"{source}={label!r} is not a local version label; expected lower-case letters "
            "and digits like 'cu128' or 'cpu', or empty for none"
        )
    return f"{version}+{label}"


def version_from(settings: Mapping[str, Any]) -> str:
    """The version a build gets from the provider's settings and the environment."""
    if set(settings) != {"version", "label-from"}:
        raise ValueError(
            "the wheel_version entry of [[tool.dynamic-metadata]] needs exactly the keys "
            f"'version' and 'label-from', not {sorted(settings)}"
        )
    variable = settings["label-from"]
    return labelled_version(settings["version"], os.environ.get(variable, ""), variable)


def dynamic_metadata(settings: Mapping[str, Any], project: Mapping[str, Any]) -> dict[str, str]:
    return {"version": version_from(settings)}


def project_settings(pyproject: Path = PYPROJECT) -> dict[str, str]:
    """The provider's entry in pyproject.toml, less the key scikit-build-core consumes."""
    import tomllib

    entries = tomllib.loads(pyproject.read_text())["tool"]["dynamic-metadata"]
    (table,) = [e for e in entries if e["provider"].get("module") == "wheel_version"]
    return {k: v for k, v in table.items() if k != "provider"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Print the version a wheel build gets.")
    parser.add_argument("--label", help="local label (default: from the environment)")
    parser.add_argument("--base", action="store_true", help="print the release number alone")
    parser.add_argument("--pyproject", type=Path, default=PYPROJECT)
    args = parser.parse_args(argv)
    settings = project_settings(args.pyproject)
    variable = settings["label-from"]
    label = os.environ.get(variable, "") if args.label is None else args.label
    try:
        version = labelled_version(
            settings["version"],
            "" if args.base else label,
            variable if args.label is None else "--label",
        )
    except ValueError as error:
        print(f"wheel_version.py: {error}", file=sys.stderr)
        return 2
    print(version)
    return 0


if __name__ == "__main__":
    sys.exit(main())
