"""Checks an installed vecadd against the torch beside it (run with that environment's python).

    python tools/release/check_installed.py [--expect-cuda-library none|N]

- importing vecadd prints no warning;
- the CUDA library it loaded is the one for the installed torch's CUDA major (none under a
  CPU-only torch, or where the wheel holds none for that major; --expect-cuda-library names
  the major the caller expects instead);
- every CUDA runtime the process has mapped (libcudart.so.N) is of that major: the library
  runs on torch's own runtime, not on one that happens to be on the loader's path.

Prints build_info() and one line per problem; exits 1 if there is any.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import warnings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--expect-cuda-library", help="the CUDA major expected loaded, or none")
    args = parser.parse_args(argv)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import torch

        torch_warnings = len(caught)
        import vecadd
    info = vecadd.build_info()
    print(
        json.dumps({"torch": torch.__version__, "torch_cuda": torch.version.cuda, **info}, indent=1)
    )

    problems = [f"import vecadd warned: {w.message}" for w in caught[torch_warnings:]]
    held = {str(library["cuda_version"]).split(".")[0] for library in info["cuda_libraries"]}
    if args.expect_cuda_library is not None:
        expected = None if args.expect_cuda_library == "none" else args.expect_cuda_library
    elif torch.version.cuda is None:
        expected = None
    else:
        major = torch.version.cuda.split(".")[0]
        expected = major if major in held else None
    loaded = info["cuda_version"].split(".")[0] if info["cuda_version"] else None
    if loaded != expected:
        problems.append(
            f"loaded the CUDA library {loaded or 'none'}, expected {expected or 'none'} for torch "
            f"{torch.__version__} (this wheel holds CUDA {', '.join(sorted(held)) or 'none'}; "
            f"why none: {info['cuda_not_loaded']})"
        )
    if expected is not None:
        majors = {re.search(r"libcudart\.so\.(\d+)", p).group(1) for p in info["cuda_runtimes"]}
        if majors != {expected}:
            problems.append(
                f"mapped CUDA runtimes {info['cuda_runtimes']}; expected torch's CUDA {expected} "
                "runtime alone"
            )
    for problem in problems:
        print(f"check_installed.py: {problem}", file=sys.stderr)
    if not problems:
        which = f"CUDA {info['cuda_version']} library" if loaded else "no CUDA library"
        print(f"check_installed.py: ok: torch {torch.__version__} with {which}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
