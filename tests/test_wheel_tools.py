"""packaging/: the wheel matrix, the version and torch-pin providers and the wheel checker,
run through their command lines as the workflow and the build run them."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from helpers import ROOT, cmake_executable

PACKAGING = ROOT / "packaging"
MATRIX_FILE = ROOT / ".github" / "wheel-matrix.json"

if not MATRIX_FILE.exists():  # an sdist leaves .github out
    pytest.skip("needs a checkout with .github/wheel-matrix.json", allow_module_level=True)

needs_tomllib = pytest.mark.skipif(sys.version_info < (3, 11), reason="reads pyproject.toml")
needs_cmake = pytest.mark.skipif(shutil.which(cmake_executable()) is None, reason="needs CMake")


def packaging_script(script: str, *arguments: str | Path, **environment: str):
    return subprocess.run(
        [sys.executable, str(PACKAGING / script), *map(str, arguments)],
        capture_output=True,
        text=True,
        env={**os.environ, **environment},
    )


def output(ran: subprocess.CompletedProcess) -> str:
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


def matrix_rows(which: str, matrix_file: Path = MATRIX_FILE) -> list[dict]:
    printed = output(packaging_script("wheel_matrix.py", "matrix", which, "--file", matrix_file))
    return json.loads(printed)["include"]


def release_version() -> str:
    return output(packaging_script("wheel_version.py", "--base")).strip()


def architecture_rules(*defines: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [cmake_executable(), *defines, "-P", str(PACKAGING / "cuda_architectures.cmake")],
        capture_output=True,
        text=True,
    )


# -- the matrix ----------------------------------------------------------------------------


@needs_tomllib
def test_release_set_is_one_portable_wheel_per_cell_and_platform():
    matrix = json.loads(MATRIX_FILE.read_text())
    rows = matrix_rows("release")
    assert [(row["cuda"], row["platform"]) for row in rows] == [
        (cell["cuda"], platform) for cell in matrix["cells"] for platform in cell["platforms"]
    ]
    assert len({row["artifact"] for row in rows}) == len(rows)
    oldest, newest = matrix["python"][0], matrix["python"][-1]
    for row in rows:
        # Built under the oldest CPython, tested there and under the newest.
        assert row["identifiers"].split() == [
            f"cp{p.replace('.', '')}-{row['platform']}" for p in (oldest, newest)
        ]
        cell = next(c for c in matrix["cells"] if c["cuda"] == row["cuda"])
        assert row["test_torch"].split() == cell["test_torch"]
        assert row["runner"] == (
            "ubuntu-24.04-arm" if row["arch"] == "aarch64" else "ubuntu-latest"
        )
    assert {row["arch"] for row in rows} == {"x86_64", "aarch64"}


@needs_tomllib
def test_rows_carry_label_version_and_channel():
    default_cuda = json.loads(MATRIX_FILE.read_text())["default_cuda"]
    base = release_version()
    for row in matrix_rows("release"):
        default = row["cuda"] == default_cuda
        label = "" if default else "cu" + row["cuda"].replace(".", "")
        assert row["label"] == label
        assert row["version"] == (base if default else f"{base}+{label}")
        assert row["channel"] == ("pypi" if default else "release")
        assert row["artifact"].startswith(f"wheel-{row['channel']}-cu")


@needs_tomllib
def test_pull_request_slice_is_part_of_the_release_set():
    release = matrix_rows("release")
    pull_request = matrix_rows("pull_request")
    assert 0 < len(pull_request) < len(release)
    assert all(row in release for row in pull_request)
    assert any(row["channel"] == "pypi" for row in pull_request)


@needs_tomllib
@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda m: m["cells"][0].update(index="https://download.pytorch.org/whl/cu999"), "index"),
        (lambda m: m["cells"][0].update(archs="80;90"), "unknown key 'archs'"),
        (lambda m: m["cells"][0].update(torch="2.14"), "expected a release like 2.14.1"),
        (
            lambda m: m["pull_request"].append({"cuda": "12.6", "platform": "manylinux_aarch64"}),
            "release set",
        ),
        (lambda m: m["cells"][0].update(test_torch=["2.10"]), "test_torch must list releases"),
        (lambda m: m["cells"][0].update(platforms=["win_amd64"]), "platforms ['win_amd64']"),
        (lambda m: m.update(default_cuda="12.7"), "default_cuda '12.7' is not a cell"),
    ],
    ids=["index", "archs", "torch", "pull-request", "test-torch", "platform", "default"],
)
def test_broken_matrix_is_refused(tmp_path, change, problem):
    matrix = json.loads(MATRIX_FILE.read_text())
    change(matrix)
    broken = tmp_path / "wheel-matrix.json"
    broken.write_text(json.dumps(matrix))
    ran = packaging_script("wheel_matrix.py", "matrix", "release", "--file", broken)
    assert ran.returncode == 1
    assert ran.stdout == ""
    assert problem in ran.stderr


@needs_cmake
def test_every_cell_toolkit_has_a_default_list():
    for cell in json.loads(MATRIX_FILE.read_text())["cells"]:
        ran = architecture_rules(f"-DCUDA_VERSION={cell['cuda']}")
        assert ran.returncode == 0, ran.stderr
        default = dict(line.split("=", 1) for line in ran.stdout.splitlines())["default"]
        entries = default.split(";")
        # SASS for each generation, PTX for the newest only.
        assert [e for e in entries if not e.endswith("-real")] == [entries[-1]]


@needs_cmake
@pytest.mark.parametrize(
    ("version", "message"),
    [("11.0", "older than any this project supports"), ("12", "is not a toolkit version")],
)
def test_architecture_rules_refuse_unknown_toolkits(version, message):
    ran = architecture_rules(f"-DCUDA_VERSION={version}")
    assert ran.returncode != 0
    assert message in " ".join(ran.stderr.split())


# -- version and torch pin -----------------------------------------------------------------


@needs_tomllib
@pytest.mark.parametrize("label", ["", "cu128", "cpu"])
def test_version_takes_the_label_from_the_environment(label):
    base = release_version()
    assert re.fullmatch(r"\d+\.\d+\.\d+", base)
    printed = output(packaging_script("wheel_version.py", VECADD_WHEEL_LABEL=label)).strip()
    assert printed == (f"{base}+{label}" if label else base)


@needs_tomllib
def test_version_refuses_a_bad_label():
    ran = packaging_script("wheel_version.py", VECADD_WHEEL_LABEL="CU 128")
    assert ran.returncode == 2
    assert "VECADD_WHEEL_LABEL='CU 128' is not a local version label" in ran.stderr


@pytest.mark.parametrize(
    ("torch", "pin"),
    [
        ("2.14.1+cu130", "torch==2.14.*"),
        ("2.13.0+cpu", "torch==2.13.*"),
        ("2.10.0a0", "torch==2.10.*"),
    ],
)
def test_native_torch_pin_is_the_series(torch, pin):
    assert output(packaging_script("torch_pin.py", "--abi", "native", torch)).strip() == pin
    assert output(packaging_script("torch_pin.py", torch, VECADD_TORCH_ABI="native")).strip() == pin


@pytest.mark.parametrize("torch", ["2.14.1+cu130", "2.10.0"])
def test_stable_torch_requirement_is_the_stable_minimum_on(torch):
    minimum = output(packaging_script("torch_pin.py", "--stable-minimum")).strip()
    assert minimum == "2.10"
    for environment in ({"VECADD_TORCH_ABI": "stable"}, {"VECADD_TORCH_ABI": ""}):
        printed = output(packaging_script("torch_pin.py", torch, **environment)).strip()
        assert printed == "torch>=2.10"


def test_torch_pin_refuses_an_unknown_abi():
    ran = packaging_script("torch_pin.py", "2.14.1", VECADD_TORCH_ABI="stabel")
    assert ran.returncode == 2
    assert "VECADD_TORCH_ABI='stabel'; expected one of stable, native" in ran.stderr


def test_torch_pin_refuses_a_version_without_a_series():
    ran = packaging_script("torch_pin.py", "--abi", "native", "nightly")
    assert ran.returncode == 2
    assert "'nightly' does not start with MAJOR.MINOR" in ran.stderr


# -- the wheel checker ---------------------------------------------------------------------


def fake_wheel(
    directory: Path,
    version: str,
    requires: list[str],
    library: Path | None,
    tag: str = "cp311-cp311",
) -> Path:
    """A wheel-shaped zip: METADATA and, optionally, a kernel library."""
    wheel = directory / f"vecadd-{version}-{tag}-manylinux_2_28_x86_64.whl"
    metadata = "".join(
        ["Metadata-Version: 2.4\nName: vecadd\n", f"Version: {version}\n"]
        + [f"Requires-Dist: {r}\n" for r in requires]
    )
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(f"vecadd-{version}.dist-info/METADATA", metadata + "\nreadme\n")
        if library is not None:
            archive.write(library, "vecadd/lib/libvecadd.so")
    return wheel


@pytest.fixture(scope="module")
def library_without_cuda(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("plain")
    (directory / "plain.cpp").write_text("int plain() { return 1; }\n")
    library = directory / "libvecadd.so"
    subprocess.run(
        ["c++", "-shared", "-fPIC", str(directory / "plain.cpp"), "-o", str(library)], check=True
    )
    return library


def check_wheel(wheel: Path, version: str, torch: str, *arguments: str, abi: str = "native"):
    """packaging/check_wheel.py on `wheel`, expecting `version`, built against `torch`."""
    return packaging_script(
        "check_wheel.py", wheel, "--abi", abi, "--version", version, "--torch", torch, *arguments
    )


def test_check_wheel_accepts_a_matching_cpu_wheel(tmp_path, library_without_cuda):
    wheel = fake_wheel(tmp_path, "0.1.0+cpu", ["torch==2.13.*"], library_without_cuda)
    ran = check_wheel(wheel, "0.1.0+cpu", "2.13.0+cpu", "--archs", "")
    assert output(ran).strip() == (
        f"{wheel.name}: ok (native build, version 0.1.0+cpu, torch==2.13.*)"
    )


def test_check_wheel_accepts_a_portable_wheel_and_refuses_a_cpython_tag(
    tmp_path, library_without_cuda
):
    portable = fake_wheel(tmp_path, "0.2.0", ["torch>=2.10"], library_without_cuda, "py3-none")
    arguments = ("0.2.0", "2.14.1", "--archs", "")
    ran = check_wheel(portable, *arguments, abi="stable")
    assert output(ran).strip() == f"{portable.name}: ok (stable build, version 0.2.0, torch>=2.10)"
    tied = fake_wheel(tmp_path, "0.2.0", ["torch==2.14.*"], library_without_cuda)
    ran = check_wheel(tied, *arguments, abi="stable")
    assert ran.returncode == 1
    assert ran.stderr.splitlines() == [
        f"{tied.name}: tag cp311-cp311 for a stable build; expected py3-none",
        f"{tied.name}: Requires-Dist ['torch==2.14.*'] lacks torch>=2.10",
    ]


def test_check_wheel_names_each_problem(tmp_path, library_without_cuda):
    wheel = fake_wheel(tmp_path, "0.1.0", ["torch==2.13.*"], library_without_cuda)
    ran = check_wheel(wheel, "0.1.0+cu128", "2.14.1", "--archs", "")
    assert ran.returncode == 1
    assert ran.stderr.splitlines() == [
        f"{wheel.name}: file name has version 0.1.0, expected 0.1.0+cu128",
        f"{wheel.name}: METADATA has Version ['0.1.0'], expected 0.1.0+cu128",
        f"{wheel.name}: Requires-Dist ['torch==2.13.*'] lacks torch==2.14.*",
    ]


@needs_cmake
def test_check_wheel_derives_the_list_from_the_toolkit(tmp_path, library_without_cuda):
    """--cuda X.Y expects that toolkit's default list, as CMake's table gives it."""
    wheel = fake_wheel(tmp_path, "0.1.0", ["torch==2.14.*"], library_without_cuda)
    ran = check_wheel(wheel, "0.1.0", "2.14.1", "--cuda", "13.0")
    assert ran.returncode == 1
    if "cuobjdump not found" in ran.stderr:
        pytest.skip("needs cuobjdump (pip install nvidia-cuda-cuobjdump)")
    default = dict(
        line.split("=", 1) for line in architecture_rules("-DCUDA_VERSION=13.0").stdout.split()
    )["default"]
    reader, cuobjdump = ran.stderr.splitlines()
    assert "vecadd/lib/libvecadd.so holds []" in reader
    assert f"(from {default!r})" in reader
    assert "cuobjdump lists [] in vecadd/lib/libvecadd.so" in cuobjdump


def test_check_wheel_wants_one_kernel_library(tmp_path):
    wheel = fake_wheel(tmp_path, "0.1.0", ["torch==2.14.*"], None)
    ran = check_wheel(wheel, "0.1.0", "2.14.1", "--archs", "")
    assert ran.returncode == 1
    assert "expected one vecadd/lib*/libvecadd.so in the wheel, found []" in ran.stderr


# -- the workflow --------------------------------------------------------------------------


@needs_tomllib
def test_workflow_sets_exactly_the_variables_cibuildwheel_passes():
    import tomllib

    passed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["cibuildwheel"][
        "environment-pass"
    ]
    workflow = (ROOT / ".github" / "workflows" / "wheels.yml").read_text()
    assert sorted(set(re.findall(r"^\s+(VECADD_WHEEL_\w+):", workflow, re.M))) == sorted(passed)


def test_workflow_actions_are_pinned():
    for workflow in (ROOT / ".github" / "workflows").glob("*.yml"):
        for uses in re.findall(r"uses:\s*(\S+)", workflow.read_text()):
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@(v\d+(\.\d+)*|[0-9a-f]{40})", uses), uses


# -- the docs ------------------------------------------------------------------------------


@needs_tomllib
@needs_cmake
def test_docs_tables_agree_with_the_matrix_and_the_architecture_table():
    ran = packaging_script("check_docs.py")
    assert ran.returncode == 0, ran.stdout + ran.stderr
