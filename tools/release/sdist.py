"""The release's sdist, as the workflow's sdist job and `nox -s wheels` make it: built without
isolation (it needs neither torch nor a compiler) and without a local version label, then
checked by twine.

    python tools/release/sdist.py --outdir DIR

Needs build, twine and scikit-build-core installed beside this Python.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--outdir", type=Path, required=True, help="where the sdist goes")
    args = parser.parse_args(argv)
    build = [sys.executable, "-m", "build", "--sdist", "--no-isolation", "--skip-dependency-check"]
    # One version for every file of a release: no label, whatever the caller's environment says.
    environment = {**os.environ, "VECADD_WHEEL_LABEL": ""}
    subprocess.run([*build, "--outdir", str(args.outdir), str(ROOT)], env=environment, check=True)
    sdists = sorted(str(p) for p in args.outdir.glob("*.tar.gz"))
    subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *sdists], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
