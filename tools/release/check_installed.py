"""Checks an installed vecadd against the torch beside it (run with that environment's python).

    python tools/release/check_installed.py [--expect-cuda-library none|N]
        [--expect-binding native|stable]

- importing vecadd prints no warning;
- the binding it runs is the one expected (--expect-binding; by default the native binding of
  the installed torch's series where the wheel holds one and VECADD_BINDING is not stable, else
  the stable one), and a native binding runs with its Python entries (vecadd._C) but on a
  free-threaded CPython, which takes no abi3 module;
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
import os
import re
import sys
import sysconfig
import warnings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--expect-cuda-library", help="the CUDA major expected loaded, or none")
    parser.add_argument(
        "--expect-binding", choices=("native", "stable"), help="the binding expected to run"
    )
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
    series = ".".join(torch.__version__.split(".")[:2])
    held_series = [b["torch_series"] for b in info["native_bindings"]]
    if args.expect_binding is not None:
        binding = args.expect_binding
    elif info["build"] == "native":
        binding = "native"
    else:
        forced = os.environ.get("VECADD_BINDING") == "stable"
        binding = "native" if series in held_series and not forced else "stable"
    if info["torch_abi"] != binding:
        problems.append(
            f"runs the {info['torch_abi']} binding, expected the {binding} one for torch "
            f"{torch.__version__} (this wheel holds native bindings for torch "
            f"{', '.join(held_series) or 'none'}; why: {info['binding_why']})"
        )
    free_threaded = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    if info["torch_abi"] == "native" and (info["binding_entries"] is None) != free_threaded:
        problems.append(
            f"the native binding's Python entries: {info['binding_entries']} "
            f"({info['binding_entries_why']}); expected them loaded on a CPython with the GIL "
            "and not on a free-threaded one"
        )
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
        print(
            f"check_installed.py: ok: torch {torch.__version__}, the {info['torch_abi']} "
            f"binding, {which}"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
