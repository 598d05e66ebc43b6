"""The wheel matrix (.github/wheel-matrix.json) and the pure helpers of tools/rehearse_wheels.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import rehearse_wheels as rw  # noqa: E402

if not rw.MATRIX_FILE.exists():  # an sdist leaves .github out
    pytest.skip("needs a checkout with .github/wheel-matrix.json", allow_module_level=True)

MATRIX = rw.load_matrix()
PYPROJECT = (ROOT / "pyproject.toml").read_text()


def cibuildwheel_table() -> dict:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    return tomllib.loads(PYPROJECT)["tool"]["cibuildwheel"]


def architecture_table() -> list[tuple[str, set[str], list[str]]]:
    """cmake/VecaddCudaArchitectures.cmake's rows: (first toolkit, supported, default list)."""
    text = (ROOT / "cmake" / "VecaddCudaArchitectures.cmake").read_text()
    rows = re.findall(r'"(\d+\.\d+)\|([\d,]+)\|([^"]+)"', text)
    assert rows, "the architecture table was not found"
    return [(v, set(supported.split(",")), default.split(",")) for v, supported, default in rows]


def table_row(toolkit: str) -> tuple[set[str], list[str]]:
    rows = [
        row for row in architecture_table() if rw.version_key(row[0]) <= rw.version_key(toolkit)
    ]
    return rows[-1][1], rows[-1][2]


def test_matrix_is_well_formed():
    assert rw.matrix_problems(MATRIX) == []
    assert [cell["cuda"] for cell in MATRIX["cells"]] == ["12.6", "12.8", "12.9", "13.0"]
    assert MATRIX["python"] == ["3.10", "3.11", "3.12", "3.13", "3.14"]
    assert MATRIX["default_cuda"] == "13.0"


def test_matrix_problems_are_reported():
    broken = json.loads(json.dumps(MATRIX))
    broken["cells"][0]["index"] = "https://download.pytorch.org/whl/cu999"
    broken["pull_request"].append({"cuda": "11.8", "python": "3.12"})
    problems = rw.matrix_problems(broken)
    assert any("index should be https://download.pytorch.org/whl/cu126" in p for p in problems)
    assert any("not in the release set" in p for p in problems)


@pytest.mark.parametrize("cell", MATRIX["cells"], ids=lambda cell: cell["cuda"])
def test_cell_archs_are_accepted_by_the_architecture_table(cell):
    supported, _ = table_row(cell["cuda"])
    entries = cell["archs"].split(";")
    for entry in entries:
        match = re.fullmatch(r"(\d+)(-real|-virtual)?", entry)
        assert match, f"{entry!r} is not in CMake's syntax"
        assert match.group(1) in supported, f"CUDA {cell['cuda']} cannot build {entry}"
    # SASS for each generation, PTX for the newest only.
    ptx = [e for e in entries if not e.endswith("-real")]
    assert ptx == [entries[-1]]
    assert max(int(e.split("-")[0]) for e in entries) == int(ptx[0])


@pytest.mark.parametrize(
    ("cuda", "archs"),
    [
        ("12.6", "75-real;80-real;86-real;89-real;90"),
        ("12.8", "75-real;80-real;86-real;89-real;90-real;100-real;120"),
        ("12.9", "75-real;80-real;86-real;89-real;90-real;100-real;120"),
        ("13.0", "75-real;80-real;86-real;89-real;90-real;100-real;110-real;120"),
    ],
)
def test_cell_archs(cuda, archs):
    (cell,) = [cell for cell in MATRIX["cells"] if cell["cuda"] == cuda]
    assert cell["archs"] == archs
    assert cell["index"] == f"https://download.pytorch.org/whl/{rw.local_label(cuda)}"


def test_default_cell_matches_the_table_default_from_75():
    _, default = table_row("13.0")
    (cell,) = [cell for cell in MATRIX["cells"] if cell["cuda"] == "13.0"]
    assert cell["archs"].split(";") == default


def test_pull_request_slice_is_a_subset_of_the_release_set():
    release = rw.matrix_rows(MATRIX, "release")
    pull_request = rw.matrix_rows(MATRIX, "pull_request")
    assert len(release) == len(MATRIX["cells"]) * len(MATRIX["python"]) == 20
    assert 0 < len(pull_request) < len(release)
    assert all(row in release for row in pull_request)
    assert {row["cuda"] for row in pull_request} >= {MATRIX["default_cuda"]}


def test_rows_carry_label_channel_and_unique_artifacts():
    rows = rw.matrix_rows(MATRIX, "release")
    assert len({row["artifact"] for row in rows}) == len(rows)
    for row in rows:
        default = row["cuda"] == MATRIX["default_cuda"]
        assert row["label"] == ("" if default else rw.local_label(row["cuda"]))
        assert row["channel"] == ("pypi" if default else "release")
        assert row["artifact"].startswith(f"wheel-{row['channel']}-")


def test_matrix_identifiers():
    assert rw.identifiers(MATRIX) == [
        "cp310-manylinux_x86_64",
        "cp311-manylinux_x86_64",
        "cp312-manylinux_x86_64",
        "cp313-manylinux_x86_64",
        "cp314-manylinux_x86_64",
    ]
    rows = rw.matrix_rows(MATRIX, "release")
    assert sorted({row["identifier"] for row in rows}) == rw.identifiers(MATRIX)


def test_cibuildwheel_selects_the_matrix_pythons():
    """[tool.cibuildwheel] build selectors match exactly the matrix's identifiers."""
    from fnmatch import fnmatch

    table = cibuildwheel_table()
    candidates = [f"cp3{m}-manylinux_x86_64" for m in range(8, 16)]
    candidates += ["cp314t-manylinux_x86_64", "cp312-musllinux_x86_64"]
    selected = [
        c
        for c in candidates
        if any(fnmatch(c, p) for p in table["build"])
        and not any(fnmatch(c, p) for p in table["skip"])
    ]
    assert selected == rw.identifiers(MATRIX)


def test_matrix_command_prints_github_include():
    printed = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "rehearse_wheels.py"), "matrix", "pull_request"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(printed) == {"include": rw.matrix_rows(MATRIX, "pull_request")}


@pytest.mark.parametrize(
    ("cuda", "label"), [("12.6", "cu126"), ("12.8", "cu128"), ("13.0", "cu130"), (None, "cpu")]
)
def test_local_label(cuda, label):
    assert rw.local_label(cuda) == label


def test_local_label_rejects_junk():
    with pytest.raises(ValueError, match="not a CUDA version"):
        rw.local_label("12")


def test_with_local_version_rewrites_only_the_project_version():
    labelled = rw.with_local_version(PYPROJECT, "cu128")
    base = rw.project_version(PYPROJECT)
    assert "+" not in base
    assert rw.project_version(labelled) == f"{base}+cu128"
    changed = [
        (a, b) for a, b in zip(PYPROJECT.splitlines(), labelled.splitlines(), strict=True) if a != b
    ]
    assert changed == [(f'version = "{base}"', f'version = "{base}+cu128"')]
    # Idempotent, replaceable, removable.
    assert rw.with_local_version(labelled, "cu128") == labelled
    assert rw.project_version(rw.with_local_version(labelled, "cu126")) == f"{base}+cu126"
    assert rw.with_local_version(labelled, "") == PYPROJECT


def test_with_local_version_ignores_other_tables():
    text = '[tool.x]\nversion = "9.9.9"\n\n[project]\nname = "a"\nversion = "1.2.3"\n'
    assert rw.with_local_version(text, "cpu").endswith('version = "1.2.3+cpu"\n')
    assert 'version = "9.9.9"\n' in rw.with_local_version(text, "cpu")
    with pytest.raises(ValueError, match="local version label"):
        rw.with_local_version(text, "CU 128")


def test_cmake_reads_the_base_version_from_a_labelled_version():
    """CMakeLists.txt keeps the X.Y.Z part of the version; the label is the wheel's alone."""
    cmake = (ROOT / "CMakeLists.txt").read_text()
    assert r'string(REGEX MATCH "[0-9]+\\.[0-9]+\\.[0-9]+" _vecadd_version' in cmake


@pytest.mark.parametrize(
    ("archs", "images"),
    [
        (
            "75-real;80-real;86-real;89-real;90",
            ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "compute_90"],
        ),
        ("90", ["sm_90", "compute_90"]),
        ("90a", ["sm_90a", "compute_90a"]),
        ("100-real;120-virtual", ["sm_100", "compute_120"]),
        ("", []),
    ],
)
def test_expected_architectures(archs, images):
    assert rw.expected_architectures(archs) == images


def test_wheel_name_parsing():
    name = "vecadd-0.1.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl"
    assert rw.parse_wheel_name(name) == {
        "name": "vecadd",
        "version": "0.1.0+cu128",
        "python": "cp312",
        "platform": "manylinux_2_28_x86_64",
    }


def test_repair_command_excludes_what_torch_provides(tmp_path):
    pytest.importorskip("tomllib")
    command = rw.repair_command(ROOT / "pyproject.toml", tmp_path / "w.whl", tmp_path / "out")
    assert command.startswith("auditwheel repair ")
    for pattern in rw.REPAIR_EXCLUDES:
        assert f"--exclude '{pattern}'" in command or f"--exclude {pattern}" in command
    assert f"-w {tmp_path / 'out'} {tmp_path / 'w.whl'}" in command


def test_cibuildwheel_configuration_follows_the_matrix():
    CIBUILDWHEEL = cibuildwheel_table()
    assert CIBUILDWHEEL["build-frontend"] == {"name": "pip", "args": ["--no-build-isolation"]}
    assert CIBUILDWHEEL["manylinux-x86_64-image"] == "manylinux_2_28"
    environment = CIBUILDWHEEL["linux"]["environment"]
    assert environment["CMAKE_ARGS"] == "-DCMAKE_CUDA_ARCHITECTURES=$VECADD_WHEEL_ARCHS"
    torch_from_index = '"torch==$VECADD_WHEEL_TORCH" --index-url "$VECADD_WHEEL_INDEX"'
    assert any(torch_from_index in step for step in CIBUILDWHEEL["before-build"])
    assert torch_from_index in CIBUILDWHEEL["before-test"]
    assert "set-version" in CIBUILDWHEEL["before-build"][0]
    assert any("python -m vecadd check" in step for step in CIBUILDWHEEL["test-command"])


def test_workflow_reads_the_matrix_and_pins_actions():
    workflow = (ROOT / ".github" / "workflows" / "wheels.yml").read_text()
    assert "tools/rehearse_wheels.py matrix" in workflow
    assert "fromJSON(needs.setup.outputs.matrix)" in workflow
    for variable in ("CUDA", "TORCH", "INDEX", "ARCHS", "LABEL"):
        assert f"VECADD_WHEEL_{variable}: ${{{{ matrix." in workflow
        assert f'"VECADD_WHEEL_{variable}"' in PYPROJECT
    for uses in re.findall(r"uses:\s*(\S+)", workflow):
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@(v\d+(\.\d+)*|release/v\d+)", uses), uses
