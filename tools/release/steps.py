"""The step runner of the release scripts (rehearse_wheels.py, verify_wheel.py, free_threaded.py,
aarch64_emulated.py): each step's output goes to WORK/logs, and a summary closes the run with
each step's outcome and time and a failed step's last lines, all a CI log may show.

Not a script of its own; its siblings import it, being run as files from this folder.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import venv
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]
RELEASE_TOOLS = Path(__file__).resolve().parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# The checking tools (auditwheel, twine, ...) are installed beside the Python running the script.
TOOLS_BIN = Path(sys.executable).parent

# Byte-compiling all of torch at install time costs half a minute; imports compile lazily.
QUIET_TORCH_INSTALL = ("install", "--quiet", "--no-compile")
# What the CPU test suite needs beside torch in a verification environment.
TEST_TOOLS = ("pytest>=7", "pytest-xdist>=3", "hypothesis>=6", "numpy", "expecttest")
# Wheels only: the newest hypothesis has no wheel for every interpreter and its sdist needs Rust.
BINARY_ONLY = "--only-binary=:all:"
# What a pip.conf's torch cap would otherwise undo: these environments take PyPI's torch.
UNCAPPED = {"PIP_CONSTRAINT": " "}
FAILURE_TAIL_LINES = 20  # of a failed step's output, printed at the end of the summary


class StepFailed(Exception):
    pass


def repair_command(wheel: str, dest_dir: str) -> str:
    """pyproject.toml's repair command as cibuildwheel runs it: the one list of excludes."""
    command = PYPROJECT["tool"]["cibuildwheel"]["repair-wheel-command"]
    return command.replace("{wheel}", wheel).replace("{dest_dir}", dest_dir)


def add_work_dir(parser: argparse.ArgumentParser, default: str, what: str) -> None:
    """The --work-dir option, its default under this checkout's build/."""
    parser.add_argument(
        "--work-dir", type=Path, default=ROOT / default, help=f"{what} (default: {default})"
    )


def work_folder(given: Path) -> Path:
    """A run's scratch folder, made, without an earlier run's logs."""
    work = given.resolve()
    (work / "logs").mkdir(parents=True, exist_ok=True)
    for old in (work / "logs").glob("*.log"):
        old.unlink()
    return work


def log(line: str) -> None:
    print(line, flush=True)


@dataclass
class WheelResult:
    name: str
    wheel: Path | None = None
    size: int = 0
    build_s: float = 0.0
    rebuild_s: float = 0.0


@dataclass
class Steps:
    work: Path
    steps: list[tuple[str, str, float]] = field(default_factory=list)
    wheels: list[WheelResult] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)
    failure_output: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    # Environments with CUDA torches take gigabytes: the summary says what the disk had.
    free_at_start_gib: float = field(init=False)

    def __post_init__(self) -> None:
        self.free_at_start_gib = shutil.disk_usage(self.work).free / 2**30

    def run(
        self,
        name: str,
        command: Sequence[str | Path],
        *,
        env: dict[str, str | None] | None = None,
        cwd: Path | None = None,
        expect_failure: bool = False,
    ) -> str:
        """Runs one step, logs its output under WORK/logs and records its time and outcome;
        a failed step's last lines are kept for the summary."""
        started = time.monotonic()
        environment = dict(os.environ)
        environment["PATH"] = os.pathsep.join([str(TOOLS_BIN), environment.get("PATH", "")])
        for key, value in (env or {}).items():
            if value is None:
                environment.pop(key, None)
            else:
                environment[key] = value
        try:
            completed = subprocess.run(
                list(map(str, command)),
                env=environment,
                cwd=cwd,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
            )
        except OSError as error:  # no such program: a failed step, named in the summary
            completed = subprocess.CompletedProcess(command, 127, stdout=f"{error}\n")
        output = completed.stdout
        failed = (completed.returncode == 0) if expect_failure else (completed.returncode != 0)
        self.steps.append((name, "FAILED" if failed else "ok", time.monotonic() - started))
        log_name = f"{len(self.steps):02d}-{re.sub(r'[^A-Za-z0-9.]+', '-', name)}.log"
        header = f"$ {shlex.join(map(str, command))}\n(exit {completed.returncode})\n"
        (self.work / "logs" / log_name).write_text(header + output)
        if failed:
            self.failure_output = output.splitlines()[-FAILURE_TAIL_LINES:]
            raise StepFailed(name)
        return output

    def check(self, name: str, problems: list[str]) -> None:
        self.steps.append((name, "FAILED" if problems else "ok", 0.0))
        log(f"{name}: {'FAILED' if problems else 'ok'}")
        for problem in problems:
            log(f"  {problem}")
        if problems:
            raise StepFailed(name)

    def fresh_venv(self, name: str) -> Path:
        path = self.work / "venvs" / name
        shutil.rmtree(path, ignore_errors=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(path)
        return path / "bin" / "python"

    def pip(self, python: Path | str, name: str, *args: str | Path, **kwargs) -> str:
        return self.run(name, [python, "-m", "pip", "--no-input", *args], **kwargs)

    def tool(self, name: str, script: str, *args: str | Path, **kwargs) -> str:
        """One of this folder's scripts, run by the Python running this one."""
        return self.run(name, [sys.executable, RELEASE_TOOLS / script, *args], **kwargs)

    def summary(self, failure: str | None) -> str:
        lines = ["", "=== steps"]
        lines += [f"  {status:<6} {elapsed:7.1f} s  {name}" for name, status, elapsed in self.steps]
        lines += ["", "=== wheels", f"  {'wheel':<58} {'size':>10} {'build':>8} {'rebuild':>8}"]
        for w in self.wheels:
            lines.append(
                f"  {w.wheel.name if w.wheel else w.name:<58} {w.size / 2**10:6.0f} KiB "
                f"{w.build_s:7.1f}s {w.rebuild_s:7.1f}s"
            )
        lines.append(f"\n=== identifiers: {' '.join(self.identifiers) or '(not reached)'}")
        free = shutil.disk_usage(self.work).free / 2**30
        lines.append(
            f"=== disk: {self.free_at_start_gib:.1f} GiB free at the start, {free:.1f} GiB now"
        )
        if self.failure_output:
            lines += ["", f"=== the failed step's last {len(self.failure_output)} lines"]
            lines += [f"  {line}" for line in self.failure_output]
        total = time.monotonic() - self.started
        outcome = f"FAILED at {failure}" if failure else "all steps passed"
        lines.append(f"=== total {total:.0f} s: {outcome}")
        return "\n".join(lines)

    def conclude(self, failure: str | None, what: str) -> int:
        """Prints the summary; the exit status, with a last line naming the failed step."""
        log(self.summary(failure))
        if failure:
            print(f"{what} failed at: {failure}", file=sys.stderr, flush=True)
            return 1
        return 0
