"""Fixtures and hooks only; what test modules share otherwise lives in helpers.py."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest
import torch

HAS_CUDA = torch.cuda.is_available()
# Where the workers of a pytest-xdist run write the node ids of the `build` tests they collected,
# for the controller, which collects nothing itself, to announce them.
BUILD_TESTS_FILE = "vecadd_build_tests_file"


def skipped_at_collection(item: pytest.Item) -> bool:
    """A skip mark, or a skipif mark whose condition is already True (a bool, as here)."""
    if item.get_closest_marker("skip"):
        return True
    for mark in item.iter_markers("skipif"):
        condition = mark.args[0] if mark.args else mark.kwargs.get("condition")
        if isinstance(condition, bool) and condition:
            return True
    return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if HAS_CUDA:
        return
    skip = pytest.mark.skip(
        reason="needs a CUDA GPU; none is visible here (torch.cuda.is_available() is False)"
    )
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)


def pytest_collection_finish(session: pytest.Session) -> None:
    """The `build` tests this run will start (after -k, -m and the skips above)."""
    config, items = session.config, session.items
    builds = [i.nodeid for i in items if "build" in i.keywords and not skipped_at_collection(i)]
    progress = config.pluginmanager.get_plugin(BuildProgress.NAME)
    if progress is not None:  # a run without xdist: this process runs and reports the tests
        progress.build_tests = builds
    elif hasattr(config, "workerinput"):
        # Every worker collects the same tests: each writes the same list, whole or not at all.
        target = Path(config.workerinput[BUILD_TESTS_FILE])
        partial = target.with_suffix(f".{os.getpid()}")
        partial.write_text("\n".join(builds))
        partial.replace(target)


class BuildProgress:
    """A line as each `build` test starts and as it ends, with its time: they compile with CMake
    for up to minutes each, while the progress line of dots stands still. Runs in the process
    that reports (the controller of a pytest-xdist run), from the start and end each worker
    forwards."""

    NAME = "vecadd-build-progress"

    def __init__(self, config: pytest.Config, folder: Path) -> None:
        self.config, self.folder = config, folder
        self.build_tests: list[str] | None = None  # set by collection, or read from the workers'
        self.started: dict[str, float] = {}
        self.outcomes: dict[str, str] = {}
        self.finished = 0

    def is_build_test(self, nodeid: str) -> bool:
        if self.build_tests is None:
            written = self.folder / "build-tests.txt"
            if not written.exists():
                return False
            self.build_tests = written.read_text().splitlines()
        return nodeid in self.build_tests

    def write_line(self, text: str) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None:
            return
        # After a test's progress dot: a line of its own (pytest's own check misses xdist's dots).
        if getattr(reporter, "_width_of_current_line", 0):
            reporter.write("\n")
        reporter.write_line(text)

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        if self.is_build_test(nodeid):
            self.started[nodeid] = time.monotonic()
            self.outcomes[nodeid] = "passed"
            self.write_line(f"[build] started  {nodeid}")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.nodeid in self.started and not report.passed:
            failed = self.outcomes[report.nodeid] == "failed"
            self.outcomes[report.nodeid] = "failed" if failed else report.outcome

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        if nodeid in self.started:
            seconds = time.monotonic() - self.started.pop(nodeid)
            self.finished += 1
            count = f"{self.finished}/{len(self.build_tests or ())}"
            outcome = self.outcomes.pop(nodeid)
            self.write_line(f"[build] {outcome:<8} {nodeid} in {seconds:.0f} s ({count})")

    def pytest_unconfigure(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the process that reports, not an xdist worker
        folder = Path(tempfile.mkdtemp(prefix="vecadd-build-tests-"))
        config.pluginmanager.register(BuildProgress(config, folder), BuildProgress.NAME)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """pytest-xdist, in the controller: tells each worker where to write its `build` tests."""
    progress = node.config.pluginmanager.get_plugin(BuildProgress.NAME)
    node.workerinput[BUILD_TESTS_FILE] = str(progress.folder / "build-tests.txt")


DEVICES = [pytest.param("cpu", id="cpu"), pytest.param("cuda", id="cuda", marks=pytest.mark.cuda)]


@pytest.fixture(params=DEVICES)
def device(request: pytest.FixtureRequest) -> str:
    return request.param


def skip_reason(report: pytest.TestReport) -> str:
    """The reason a skipped test gave, without pytest's "Skipped: " prefix."""
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    return reason.removeprefix("Skipped: ")


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    # One line per reason with its count: a machine without a GPU skips dozens of tests for one.
    skipped = [report for report in terminalreporter.stats.get("skipped", []) if report.skipped]
    if not skipped:
        return
    reasons = Counter(skip_reason(report) for report in skipped)
    terminalreporter.section("skips by reason")
    for reason, count in reasons.most_common():
        terminalreporter.line(f"{count:>4}  {reason}")
