"""docs/adding-an-operator.md, followed to the letter: the code blocks it marks with
``<!-- apply PATH ACTION "LINE" -->`` are applied to a copy of the sources, which is built in
both flavours (stable and native, CPU-only, against this environment's torch) and tested with
tests/test_operators.py, the guide's own test files and ``vecadd check``. A guide that has
drifted from the code fails here: a step whose line is gone, code that no longer compiles, or an
operator the tests do not find whole."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import ROOT, environment_without_arch_list, pip_install_into

pytestmark = pytest.mark.build

GUIDE = ROOT / "docs" / "adding-an-operator.md"
# A marker comment, then the fenced block it applies, both at the same indentation.
STEP = re.compile(
    r"^(?P<indent> *)<!-- apply (?P<path>\S+) (?P<action>new|append|replace|before|after)"
    r'(?: "(?P<line>[^\n]*)")? -->\n(?P=indent)```[a-z]*\n(?P<body>.*?)\n(?P=indent)```$',
    re.MULTILINE | re.DOTALL,
)
# The guide's operators (one weight derived from its argument; two weights) and their tests.
OPERATORS = ("sub", "axpby")
OWN_TESTS = ("tests/test_sub.py", "tests/test_axpby.py")


@dataclass(frozen=True)
class Step:
    path: str
    action: str  # new, append, replace, before or after a line
    line: str | None  # the first line whose text (stripped) starts with it
    text: str

    def apply(self, root: Path) -> None:
        target = root / self.path
        if self.action == "new":
            assert not target.exists(), f"the guide creates {self.path}, which exists already"
            target.write_text(self.text + "\n")
            return
        lines = target.read_text().splitlines()
        if self.action == "append":
            target.write_text("\n".join([*lines, *self.text.split("\n")]) + "\n")
            return
        found = [i for i, line in enumerate(lines) if line.strip().startswith(self.line)]
        assert found, f"the guide's step {self.action} {self.line!r}: no such line in {self.path}"
        at = found[0]
        block = self.text.split("\n")
        if self.action == "replace":
            lines[at : at + 1] = block
        else:
            at += self.action == "after"
            lines[at:at] = block
        target.write_text("\n".join(lines) + "\n")


def guide_steps(guide: str | None = None) -> list[Step]:
    steps = []
    for match in STEP.finditer(GUIDE.read_text() if guide is None else guide):
        indent = len(match["indent"])
        body = "\n".join(line[indent:] for line in match["body"].split("\n"))
        steps.append(Step(match["path"], match["action"], match["line"], body))
    return steps


def source_files() -> list[str]:
    """The checkout's files as git sees them (tracked or new, not ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return [name for name in listed.stdout.split("\0") if name and (ROOT / name).is_file()]


def test_the_guide_marks_every_file_it_names():
    """The steps cover what the guide says a new operator touches: five product files, its own
    tests, docs/usage.md and the changelog."""
    touched = {step.path for step in guide_steps()}
    assert touched == {
        "python/vecadd/_operators.py",
        "python/vecadd/_ops.py",
        "python/vecadd/__init__.py",
        "src/stable/registration.cpp",
        "src/torch/registration.cpp",
        *OWN_TESTS,
        "docs/usage.md",
        "CHANGELOG.md",
    }


@pytest.fixture(scope="module")
def guided_source(tmp_path_factory) -> Path:
    """A copy of the sources with every step of the guide applied."""
    scratch = tmp_path_factory.mktemp("guided") / "source"
    for name in source_files():
        (scratch / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, scratch / name)
    for step in guide_steps():
        step.apply(scratch)
    return scratch


@pytest.mark.parametrize("flavour", ["stable", "native"])
def test_following_the_guide_adds_working_operators(guided_source, tmp_path, flavour):
    site = tmp_path / "site"
    pip_install_into(
        site,
        guided_source,
        tmp_path / "build",
        env=environment_without_arch_list(VECADD_CUDA="OFF", VECADD_TORCH_ABI=flavour),
    )
    environment = environment_without_arch_list(
        PYTHONPATH=os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    )

    def run(*arguments: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, *arguments],
            cwd=guided_source,
            env=environment,
            capture_output=True,
            text=True,
            timeout=600,
        )

    tested = run(
        "-m",
        "pytest",
        "-v",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "tests/test_operators.py",
        *OWN_TESTS,
    )
    assert tested.returncode == 0, tested.stdout[-6000:] + tested.stderr[-3000:]
    # The built copy, not this environment's vecadd, answered: the new records were tested, in
    # the flavour asked for (the native build's C++ entries of the new operators too).
    native_entry = "test_each_operators_native_entry_takes_plain_calls_and_leaves_the_rest"
    for operator in OPERATORS:
        assert f"test_each_operator_passes_opcheck[{operator}]" in tested.stdout
        assert f"test_each_operator_compiles_fused_into_its_neighbours[{operator}] PASSED" in (
            tested.stdout
        )
        if flavour == "native":
            assert f"{native_entry}[{operator}] PASSED" in tested.stdout
    assert re.search(r"\b\d+ passed\b", tested.stdout)
    checked = run("-m", "vecadd", "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    for operator in OPERATORS:
        assert f"cpu  {operator} int64" in checked.stdout
    info = run("-c", "import vecadd; print(vecadd.build_info()['torch_abi'])")
    assert info.stdout.strip() == flavour, info.stdout + info.stderr


def test_a_step_that_misses_its_line_says_which(tmp_path):
    (tmp_path / "a.py").write_text("first\nsecond\n")
    Step("a.py", "after", "second", "third").apply(tmp_path)
    assert (tmp_path / "a.py").read_text() == "first\nsecond\nthird\n"
    with pytest.raises(AssertionError, match=r"no such line in a\.py"):
        Step("a.py", "before", "gone", "text").apply(tmp_path)


def test_marked_blocks_are_read_with_their_indentation_removed():
    guide = textwrap.dedent(
        """\
        1. A step:

           <!-- apply x.py replace "old line" -->
           ```python
           def f():
               return 1
           ```
        """
    )
    assert guide_steps(guide) == [Step("x.py", "replace", "old line", "def f():\n    return 1")]
