"""docs/adding-an-operator.md, followed to the letter: the code blocks it marks with
``<!-- apply OPERATOR PATH ACTION "LINE" -->`` are applied to a copy of the sources (the steps of
an operator the sources already hold are skipped, as a contributor who merged it would), the copy
is checked with ruff and built in both flavours (stable and native, CPU-only, against this
environment's torch) and tested with tests/test_operators.py, the guide's own test files and
``vecadd check``; then again on a copy that already holds one of the guide's operators. A guide
that has drifted from the code fails here: a step whose line is gone, code that no longer
compiles or lints, or an operator the tests do not find whole."""

from __future__ import annotations

import importlib.util
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
    r"^(?P<indent> *)<!-- apply (?P<operator>\w+) (?P<path>\S+) "
    r'(?P<action>new|append|replace|before|after|name)(?: "(?P<line>[^\n]*)")? -->\n'
    r"(?P=indent)```(?P<language>[a-z]*)\n(?P<body>.*?)\n(?P=indent)```$",
    re.MULTILINE | re.DOTALL,
)
# The guide's operators (a negated weight; two weights; one argument weighing two inputs; three
# inputs) and their tests.
OPERATORS = ("sub", "axpby", "lerp", "add3")
OWN_TESTS = ("tests/test_sub.py", "tests/test_axpby.py", "tests/test_lerp.py", "tests/test_add3.py")


def name_order(name: str) -> tuple[int, str]:
    """Where a name sorts in an import line or __all__ as ruff sorts them: constants, then
    classes, then the rest, each by its characters."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


@dataclass(frozen=True)
class Step:
    path: str
    action: str  # new, append, replace, before or after a line, or name (added in order)
    line: str | None  # the first line whose text (stripped) is it, else starts with it
    text: str
    operator: str = ""
    language: str = "python"

    def _find(self, lines: list[str]) -> int:
        stripped = [line.strip() for line in lines]
        found = [i for i, line in enumerate(stripped) if line == self.line] or [
            i for i, line in enumerate(stripped) if line.startswith(self.line)
        ]
        assert found, (
            f"the guide's step for {self.operator or 'an operator'}, {self.action} "
            f"{self.line!r}: no such line in {self.path}"
        )
        return found[0]

    def apply(self, root: Path) -> None:
        target = root / self.path
        if self.action == "new":
            assert not target.exists(), f"the guide creates {self.path}, which exists already"
            target.write_text(self.text + "\n")
            return
        lines = target.read_text().splitlines()
        block = self.text.split("\n")
        # Python code into a Python file is a top-level statement: set apart by blank lines, as
        # a formatter keeps it (two before a definition at the end, one after one put before).
        statement = self.language == "python" and self.path.endswith(".py")
        if self.action == "append":
            while statement and lines and not lines[-1].strip():
                lines.pop()
            separation = ["", ""] if statement else []
            target.write_text("\n".join([*lines, *separation, *block]) + "\n")
            return
        at = self._find(lines)
        if self.action == "name":
            lines = _with_name(lines, at, self.text.strip())
        elif self.action == "replace":
            lines[at : at + 1] = block
        else:
            at += self.action == "after"
            lines[at:at] = [*block, ""] if statement and self.action == "before" else block
        target.write_text("\n".join(lines) + "\n")


def _with_name(lines: list[str], at: int, name: str) -> list[str]:
    """Adds `name` in its sorted place to the names on line `at` (an import line), or to the
    list that opens there, one quoted name a line (__all__)."""
    line = lines[at]
    if line.rstrip().endswith("["):
        end = next(i for i in range(at + 1, len(lines)) if lines[i].strip().startswith("]"))
        entries = lines[at + 1 : end]
        indent = entries[0][: len(entries[0]) - len(entries[0].lstrip())]
        names = [entry.strip().strip(",").strip('"') for entry in entries]
        names = sorted({*names, name}, key=name_order)
        return [*lines[: at + 1], *(f'{indent}"{n}",' for n in names), *lines[end:]]
    prefix, names = line.split(" import ")
    names = sorted({*(n.strip() for n in names.split(",")), name}, key=name_order)
    return [*lines[:at], f"{prefix} import {', '.join(names)}", *lines[at + 1 :]]


def guide_steps(guide: str | None = None) -> list[Step]:
    steps = []
    for match in STEP.finditer(GUIDE.read_text() if guide is None else guide):
        indent = len(match["indent"])
        body = "\n".join(line[indent:] for line in match["body"].split("\n"))
        steps.append(
            Step(
                match["path"],
                match["action"],
                match["line"],
                body,
                match["operator"],
                match["language"],
            )
        )
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


def held_operators(root: Path) -> set[str]:
    """The operators the records under root describe."""
    path = root / "python" / "vecadd" / "_operators.py"
    spec = importlib.util.spec_from_file_location("records_under_test", path)
    records = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = records  # dataclasses look their module up while they are made
    try:
        spec.loader.exec_module(records)
    finally:
        del sys.modules[spec.name]
    return set(records.BY_NAME)


def follow_the_guide(root: Path) -> list[Step]:
    """Applies the guide's steps to the sources under root, but those of an operator they hold
    already; gives back the steps applied."""
    held = held_operators(root)
    applied = [step for step in guide_steps() if step.operator not in held]
    for step in applied:
        step.apply(root)
    return applied


def copy_of_the_sources(scratch: Path) -> Path:
    for name in source_files():
        (scratch / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, scratch / name)
    return scratch


def test_the_guide_marks_every_file_it_names():
    """The steps cover what the guide says a new operator touches: three product files, its own
    tests, docs/usage.md and the changelog; no C++."""
    touched = {step.path for step in guide_steps()}
    assert touched == {
        "python/vecadd/_operators.py",
        "python/vecadd/_ops.py",
        "python/vecadd/__init__.py",
        *OWN_TESTS,
        "docs/usage.md",
        "CHANGELOG.md",
    }
    assert {step.operator for step in guide_steps()} == set(OPERATORS)


@pytest.fixture(scope="module")
def guided_source(tmp_path_factory) -> Path:
    """A copy of the sources with every step of the guide applied."""
    scratch = copy_of_the_sources(tmp_path_factory.mktemp("guided") / "source")
    assert held_operators(scratch).isdisjoint(OPERATORS), "the sources hold a guide operator"
    assert follow_the_guide(scratch) == guide_steps()
    return scratch


def test_the_guided_copy_passes_the_projects_lint(guided_source):
    """ruff check and ruff format --check over the guided copy, with the project's settings,
    as nox -s lint runs them; the changelog lines land under the unreleased section's Added."""
    for command in (["check", "."], ["format", "--check", "."]):
        linted = subprocess.run(
            [sys.executable, "-m", "ruff", *command],
            cwd=guided_source,
            capture_output=True,
            text=True,
        )
        assert linted.returncode == 0, linted.stdout + linted.stderr
    changelog = (guided_source / "CHANGELOG.md").read_text()
    unreleased = changelog.split("\n## [Unreleased]\n", 1)[1].split("\n## [", 1)[0]
    added = unreleased.split("\n### Added\n", 1)[1].split("\n### ", 1)[0]
    for operator in OPERATORS:
        assert f"`vecadd::{operator}`" in added, operator


@pytest.mark.parametrize("flavour", ["stable", "native"])
def test_following_the_guide_adds_working_operators(guided_source, tmp_path, flavour):
    site = tmp_path / "site"
    pip_install_into(
        site,
        guided_source,
        tmp_path / "build",
        env=environment_without_arch_list(VECADD_CUDA="OFF", VECADD_TORCH_ABI=flavour),
    )
    # The portable build runs the native binding of its own torch unless told otherwise: its
    # stable binding is the flavour asked for, forced.
    forced = {"VECADD_BINDING": "stable"} if flavour == "stable" else {}
    environment = environment_without_arch_list(
        PYTHONPATH=os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])),
        **forced,
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


def test_the_guide_survives_the_operators_it_adds(tmp_path):
    """On sources that already hold an operator made from the guide (sub, merged as the guide
    wrote it), the guide's other steps still apply, and the copy builds and passes its tests."""
    scratch = copy_of_the_sources(tmp_path / "source")
    for step in guide_steps():
        if step.operator == "sub":
            step.apply(scratch)  # as merged
    applied = follow_the_guide(scratch)
    assert {step.operator for step in applied} == set(OPERATORS) - {"sub"}
    assert held_operators(scratch) >= set(OPERATORS)
    site = tmp_path / "site"
    pip_install_into(
        site,
        scratch,
        tmp_path / "build",
        env=environment_without_arch_list(VECADD_CUDA="OFF", VECADD_TORCH_ABI="stable"),
    )
    environment = environment_without_arch_list(
        PYTHONPATH=os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    )
    # The exactness cases of the operators this scenario is about, with every other test.
    pytest_command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    only = ["-p", "no:xdist", "-k", "sub or lerp or not exact"]
    tested = subprocess.run(
        [*pytest_command, *only, *OWN_TESTS, "tests/test_operators.py"],
        cwd=scratch,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert tested.returncode == 0, tested.stdout[-6000:] + tested.stderr[-3000:]


def test_a_step_that_misses_its_line_says_which(tmp_path):
    (tmp_path / "a.py").write_text("first\nsecond\n")
    Step("a.py", "after", "second", "third", language="text").apply(tmp_path)
    assert (tmp_path / "a.py").read_text() == "first\nsecond\nthird\n"
    with pytest.raises(AssertionError, match=r"for sub, before 'gone': no such line in a\.py"):
        Step("a.py", "before", "gone", "text", "sub").apply(tmp_path)


def test_a_line_is_found_whole_before_it_is_found_by_its_start(tmp_path):
    (tmp_path / "CHANGELOG.md").write_text("### Added (compile)\n### Added\n")
    Step("CHANGELOG.md", "after", "### Added", "- a line").apply(tmp_path)
    assert (tmp_path / "CHANGELOG.md").read_text() == "### Added (compile)\n### Added\n- a line\n"


def test_a_name_goes_to_its_sorted_place(tmp_path):
    (tmp_path / "i.py").write_text('__all__ = [\n    "VecAdd",\n    "add",\n    "add_n",\n]\n')
    (tmp_path / "j.py").write_text("    from ._ops import add, add_n\n")
    Step("i.py", "name", "__all__ = [", "add3", language="text").apply(tmp_path)
    Step("j.py", "name", "from ._ops import", "sub", language="text").apply(tmp_path)
    assert (tmp_path / "i.py").read_text() == (
        '__all__ = [\n    "VecAdd",\n    "add",\n    "add3",\n    "add_n",\n]\n'
    )
    assert (tmp_path / "j.py").read_text() == "    from ._ops import add, add_n, sub\n"


def test_marked_blocks_are_read_with_their_indentation_removed():
    guide = textwrap.dedent(
        """\
        1. A step:

           <!-- apply f x.py replace "old line" -->
           ```python
           def f():
               return 1
           ```
        """
    )
    assert guide_steps(guide) == [
        Step("x.py", "replace", "old line", "def f():\n    return 1", "f", "python")
    ]
