"""Fixtures and hooks only; what test modules share otherwise lives in helpers.py."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

HAS_CUDA = torch.cuda.is_available()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if HAS_CUDA:
        return
    skip = pytest.mark.skip(
        reason="needs a CUDA GPU; none is visible here (torch.cuda.is_available() is False)"
    )
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)


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
