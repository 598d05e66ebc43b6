"""The release tools (tools/release), the build's version and torch-pin providers (cmake/) and the
docs check (tools/docs): the wheel matrix, the providers and the wheel checker,
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

BUILD_HELPERS = ROOT / "cmake"
RELEASE_TOOLS = ROOT / "tools" / "release"
DOCS_TOOLS = ROOT / "tools" / "docs"
MATRIX_FILE = ROOT / ".github" / "wheel-matrix.json"

if not MATRIX_FILE.exists():  # an sdist leaves .github out
    pytest.skip("needs a checkout with .github/wheel-matrix.json", allow_module_level=True)

needs_tomllib = pytest.mark.skipif(
    sys.version_info < (3, 11), reason="reads pyproject.toml with tomllib, new in Python 3.11"
)
needs_cmake = pytest.mark.skipif(shutil.which(cmake_executable()) is None, reason="needs CMake")


def run_script(script: Path, *arguments: str | Path, **environment: str):
    return subprocess.run(
        [sys.executable, str(script), *map(str, arguments)],
        capture_output=True,
        text=True,
        env={**os.environ, **environment},
    )


def output(ran: subprocess.CompletedProcess) -> str:
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


def matrix_rows(which: str, matrix_file: Path = MATRIX_FILE) -> list[dict]:
    printed = output(
        run_script(RELEASE_TOOLS / "wheel_matrix.py", "matrix", which, "--file", matrix_file)
    )
    return json.loads(printed)["include"]


def release_version() -> str:
    return output(run_script(BUILD_HELPERS / "wheel_version.py", "--base")).strip()


def architecture_rules(*defines: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [cmake_executable(), *defines, "-P", str(RELEASE_TOOLS / "cuda_architectures.cmake")],
        capture_output=True,
        text=True,
    )


# -- the matrix ----------------------------------------------------------------------------


@needs_tomllib
def test_release_set_is_one_portable_wheel_per_platform():
    matrix = json.loads(MATRIX_FILE.read_text())
    rows = matrix_rows("release")
    assert [row["platform"] for row in rows] == matrix["platforms"]
    assert len({row["artifact"] for row in rows}) == len(rows)
    oldest, newest = matrix["python"][0], matrix["python"][-1]
    toolkits = sorted(matrix["cuda_libraries"], key=lambda t: tuple(map(int, t.split("."))))
    for row in rows:
        # Built under the oldest CPython, tested there and under the newest.
        assert row["identifiers"].split() == [
            f"cp{p.replace('.', '')}-{row['platform']}" for p in (oldest, newest)
        ]
        # The wheel build compiles the newest toolkit's library, the others come first.
        assert [*row["other_cuda"].split(), row["cuda"]] == toolkits
        assert row["build_torch"] == matrix["build_torch"]
        assert row["version"] == release_version()
        assert row["runner"] == (
            "ubuntu-24.04-arm" if row["arch"] == "aarch64" else "ubuntu-latest"
        )
    assert {row["arch"] for row in rows} == {"x86_64", "aarch64"}


@needs_tomllib
def test_pull_request_slice_is_part_of_the_release_set():
    release = matrix_rows("release")
    pull_request = matrix_rows("pull_request")
    assert 0 < len(pull_request) < len(release)
    assert all(row in release for row in pull_request)


@needs_tomllib
def test_matrix_agrees_with_the_table_of_pytorch_builds():
    ran = run_script(RELEASE_TOOLS / "wheel_matrix.py", "check")
    assert output(ran).strip() == "wheel-matrix.json: agrees with pytorch_cuda_builds.json"


@needs_tomllib
@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            lambda m: m["test_torch"].append({"torch": "2.14.1", "cuda": "12.8"}),
            "test_torch 2.14.1:12.8: PyTorch does not publish torch 2.14.1 for CUDA 12.8 (the "
            "table lists CUDA 12.6, 13.0, 13.2 for 2.14)",
        ),
        (
            lambda m: m["test_torch"].append({"torch": "2.12.0", "cuda": "12.8"}),
            "PyTorch does not publish torch 2.12.0 for CUDA 12.8",
        ),
        (
            lambda m: m["test_torch"].append({"torch": "2.16.0", "cuda": "13.2"}),
            "the table of PyTorch builds has no torch 2.16 series",
        ),
        (
            lambda m: m.update(test_torch=[e for e in m["test_torch"] if e["torch"] != "2.15.0"]),
            "torch 2.15, the newest series on the table, is not tested (test_torch)",
        ),
        (
            lambda m: m.update(test_torch=[e for e in m["test_torch"] if e["torch"] != "2.10.0"]),
            "torch 2.10, the oldest series vecadd claims, is not tested (test_torch)",
        ),
        (
            lambda m: m.update(test_torch=[e for e in m["test_torch"] if e["cuda"] != "cpu"]),
            "no CPU-only torch is tested",
        ),
        (
            lambda m: m.update(cuda_libraries=["13.0"]),
            "PyTorch publishes CUDA 12 builds (12.6, 12.8) but cuda_libraries ['13.0'] has no "
            "CUDA 12 toolkit",
        ),
        (
            lambda m: m.update(cuda_libraries=["12.8", "13.0"]),
            "cuda_libraries builds CUDA 12 with 12.8, newer than the CUDA 12.6 runtime",
        ),
        (lambda m: m.update(cuda_libraries=["12.6", "12.8"]), "names a CUDA major twice"),
        (lambda m: m.update(build_torch="2.14.1+cu128"), "build_torch '2.14.1+cu128'"),
        (lambda m: m.update(pull_request=["win_amd64"]), "pull_request platform 'win_amd64'"),
        (lambda m: m.update(archs="80;90"), "unknown key 'archs'"),
    ],
    ids=[
        "unpublished-pair",
        "removed-cuda",
        "unknown-series",
        "newest-untested",
        "oldest-untested",
        "no-cpu",
        "missing-major",
        "toolkit-too-new",
        "major-twice",
        "build-torch",
        "pull-request",
        "unknown-key",
    ],
)
def test_broken_matrix_is_refused(tmp_path, change, problem):
    matrix = json.loads(MATRIX_FILE.read_text())
    change(matrix)
    broken = tmp_path / "wheel-matrix.json"
    broken.write_text(json.dumps(matrix))
    for command in (("matrix", "release"), ("check",)):
        ran = run_script(RELEASE_TOOLS / "wheel_matrix.py", *command, "--file", broken)
        assert ran.returncode == 1
        assert ran.stdout == ""
        assert problem in " ".join(ran.stderr.split())


@needs_tomllib
def test_a_new_series_on_the_table_must_be_tested(tmp_path):
    """Recording the next torch series fails the check until the matrix tests it."""
    builds = json.loads((RELEASE_TOOLS / "pytorch_cuda_builds.json").read_text())
    builds["series"]["2.16"] = {
        "releases": ["2.16.0"],
        "cuda": ["13.0", "13.2"],
        "pypi": {"x86_64": "13.2", "aarch64": "13.2"},
        "cpu": True,
        "status": "planned",
        "sources": [],
    }
    table = tmp_path / "builds.json"
    table.write_text(json.dumps(builds))
    ran = run_script(RELEASE_TOOLS / "wheel_matrix.py", "check", "--builds", table)
    assert ran.returncode == 1
    assert "torch 2.16, the newest series on the table, is not tested" in ran.stderr


@needs_tomllib
@pytest.mark.parametrize(
    ("build", "index"),
    [
        ("2.10.0:12.8", "https://pypi.org/simple"),
        ("2.10.0:12.6", "https://download.pytorch.org/whl/cu126"),
        ("2.15.0:13.2", "https://pypi.org/simple"),
        ("2.15.0:cpu", "https://download.pytorch.org/whl/cpu"),
    ],
)
def test_each_torch_build_comes_from_its_index(build, index):
    assert output(run_script(RELEASE_TOOLS / "wheel_matrix.py", "index", build)).strip() == index


@needs_tomllib
def test_the_aarch64_pypi_torch_of_2_10_is_cpu_only():
    ran = run_script(
        RELEASE_TOOLS / "wheel_matrix.py", "index", "2.10.0:12.8", "--platform", "manylinux_aarch64"
    )
    assert output(ran).strip() == "https://download.pytorch.org/whl/cu128"


@needs_cmake
def test_every_cuda_library_toolkit_has_a_default_list():
    for toolkit in json.loads(MATRIX_FILE.read_text())["cuda_libraries"]:
        ran = architecture_rules(f"-DCUDA_VERSION={toolkit}")
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
    printed = output(
        run_script(BUILD_HELPERS / "wheel_version.py", VECADD_WHEEL_LABEL=label)
    ).strip()
    assert printed == (f"{base}+{label}" if label else base)


@needs_tomllib
def test_version_refuses_a_bad_label():
    ran = run_script(BUILD_HELPERS / "wheel_version.py", VECADD_WHEEL_LABEL="CU 128")
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
    assert (
        output(run_script(BUILD_HELPERS / "torch_pin.py", "--abi", "native", torch)).strip() == pin
    )
    assert (
        output(run_script(BUILD_HELPERS / "torch_pin.py", torch, VECADD_TORCH_ABI="native")).strip()
        == pin
    )


@pytest.mark.parametrize("torch", ["2.14.1+cu130", "2.10.0"])
def test_stable_torch_requirement_is_the_stable_minimum_on(torch):
    minimum = output(run_script(BUILD_HELPERS / "torch_pin.py", "--stable-minimum")).strip()
    assert minimum == "2.10"
    for environment in ({"VECADD_TORCH_ABI": "stable"}, {"VECADD_TORCH_ABI": ""}):
        printed = output(run_script(BUILD_HELPERS / "torch_pin.py", torch, **environment)).strip()
        assert printed == "torch>=2.10"


def test_torch_pin_refuses_an_unknown_abi():
    ran = run_script(BUILD_HELPERS / "torch_pin.py", "2.14.1", VECADD_TORCH_ABI="stabel")
    assert ran.returncode == 2
    assert "VECADD_TORCH_ABI='stabel'; expected one of stable, native" in ran.stderr


def test_torch_pin_refuses_a_version_without_a_series():
    ran = run_script(BUILD_HELPERS / "torch_pin.py", "--abi", "native", "nightly")
    assert ran.returncode == 2
    assert "'nightly' does not start with MAJOR.MINOR" in ran.stderr


# -- the wheel checker ---------------------------------------------------------------------


def fake_wheel(
    directory: Path,
    version: str,
    requires: list[str],
    library: Path | None,
    tag: str = "cp311-cp311",
    cuda: dict[str, str] | None = None,
    bindings: dict[str, dict] | None = None,
) -> Path:
    """A wheel-shaped zip: METADATA, optionally the core library and, for each toolkit of
    `cuda` (toolkit: the list it claims to be compiled for), a CUDA library (`library` again);
    for each series of `bindings`, a native binding's files with that binding.json."""
    wheel = directory / f"vecadd-{version}-{tag}-manylinux_2_28_x86_64.whl"
    metadata = "".join(
        ["Metadata-Version: 2.4\nName: vecadd\n", f"Version: {version}\n"]
        + [f"Requires-Dist: {r}\n" for r in requires]
    )
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(f"vecadd-{version}.dist-info/METADATA", metadata + "\nreadme\n")
        if library is not None:
            archive.write(library, "vecadd/lib/libvecadd.so")
        for toolkit, archs in (cuda or {}).items():
            folder = f"vecadd/lib/cuda{toolkit.split('.')[0]}"
            archive.write(library, f"{folder}/libvecadd_cuda.so")
            description = {"vecadd_version": version, "cuda_version": toolkit}
            archive.writestr(
                f"{folder}/cuda_library.json",
                json.dumps({**description, "cuda_architectures": archs}),
            )
        for series, described in (bindings or {}).items():
            folder = f"vecadd/lib/torch{series.replace('.', '_')}"
            names = ["libvecadd_native_ops.so", "_C.abi3.so"]
            names += ["libvecadd_native_cuda_ops.so"] if described.get("cuda_kernels") else []
            for name in names:
                archive.writestr(f"{folder}/{name}", b"\x7fELF")
            archive.writestr(f"{folder}/binding.json", json.dumps(described))
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
    """tools/release/check_wheel.py on `wheel`, expecting `version`, built against `torch`."""
    return run_script(
        RELEASE_TOOLS / "check_wheel.py",
        wheel,
        "--abi",
        abi,
        "--version",
        version,
        "--torch",
        torch,
        *arguments,
    )


def test_check_wheel_accepts_a_matching_cpu_wheel(tmp_path, library_without_cuda):
    wheel = fake_wheel(tmp_path, "0.1.0+cpu", ["torch==2.13.*"], library_without_cuda)
    ran = check_wheel(wheel, "0.1.0+cpu", "2.13.0+cpu", "--cuda", "none")
    assert output(ran).strip() == (
        f"{wheel.name}: ok (native build, version 0.1.0+cpu, torch==2.13.*, no CUDA library)"
    )


def test_check_wheel_accepts_a_portable_wheel_and_refuses_a_cpython_tag(
    tmp_path, library_without_cuda
):
    portable = fake_wheel(tmp_path, "0.2.0", ["torch>=2.10"], library_without_cuda, "py3-none")
    arguments = ("0.2.0", "2.14.1", "--cuda", "none")
    ran = check_wheel(portable, *arguments, abi="stable")
    assert output(ran).strip() == (
        f"{portable.name}: ok (stable build, version 0.2.0, torch>=2.10, no CUDA library)"
    )
    tied = fake_wheel(tmp_path, "0.2.0", ["torch==2.14.*"], library_without_cuda)
    ran = check_wheel(tied, *arguments, abi="stable")
    assert ran.returncode == 1
    assert ran.stderr.splitlines() == [
        f"{tied.name}: tag cp311-cp311 for a stable build; expected py3-none",
        f"{tied.name}: Requires-Dist ['torch==2.14.*'] lacks torch>=2.10",
    ]


def test_check_wheel_names_each_problem(tmp_path, library_without_cuda):
    wheel = fake_wheel(tmp_path, "0.1.0", ["torch==2.13.*"], library_without_cuda)
    ran = check_wheel(wheel, "0.1.0+cu128", "2.14.1", "--cuda", "none")
    assert ran.returncode == 1
    assert ran.stderr.splitlines() == [
        f"{wheel.name}: file name has version 0.1.0, expected 0.1.0+cu128",
        f"{wheel.name}: METADATA has Version ['0.1.0'], expected 0.1.0+cu128",
        f"{wheel.name}: Requires-Dist ['torch==2.13.*'] lacks torch==2.14.*",
    ]


def test_check_wheel_wants_the_cpu_kernels(tmp_path):
    wheel = fake_wheel(tmp_path, "0.1.0", ["torch==2.14.*"], None)
    ran = check_wheel(wheel, "0.1.0", "2.14.1", "--cuda", "none")
    assert ran.returncode == 1
    assert "holds no vecadd/lib/libvecadd.so (the CPU kernels)" in ran.stderr


@needs_cmake
def test_check_wheel_wants_a_library_per_toolkit_with_its_images(tmp_path, library_without_cuda):
    """--cuda X.Y expects that toolkit's library, compiled for that toolkit's default list (as
    CMake's table gives it), and its fatbinary holding just those images."""
    default = dict(
        line.split("=", 1) for line in architecture_rules("-DCUDA_VERSION=13.0").stdout.split()
    )["default"]
    cuda = {"12.4": "80-real;90", "13.0": default}
    wheel = fake_wheel(tmp_path, "0.1.0", ["torch==2.14.*"], library_without_cuda, cuda=cuda)
    ran = check_wheel(wheel, "0.1.0", "2.14.1", "--cuda", "12.6", "--cuda", "13.0=90")
    assert ran.returncode == 1
    if "cuobjdump not found" in ran.stderr:
        pytest.skip("needs cuobjdump (pip install nvidia-cuda-cuobjdump)")
    problems = ran.stderr.splitlines()
    assert problems[0].endswith(
        "holds CUDA libraries for ['12.4', '13.0'], expected ['12.6', '13.0']"
    )
    assert (
        "vecadd/lib/cuda12/libvecadd_cuda.so holds [], expected ['sm_80', 'sm_90', 'compute_90']"
        in ran.stderr
    )
    assert (
        f"vecadd/lib/cuda13/libvecadd_cuda.so was compiled for {default!r}, expected '90'"
        in ran.stderr
    )
    assert "cuobjdump lists [] in vecadd/lib/cuda13/libvecadd_cuda.so" in ran.stderr


def described(series: str, version: str = "0.2.0") -> dict:
    return {"vecadd_version": version, "torch_version": f"{series}.0", "torch_series": series}


def test_check_wheel_wants_every_native_binding_asked_for(tmp_path, library_without_cuda):
    bindings = {"2.10": described("2.10"), "2.11": described("2.11")}
    portable = fake_wheel(
        tmp_path, "0.2.0", ["torch>=2.10"], library_without_cuda, "py3-none", bindings=bindings
    )
    arguments = ("0.2.0", "2.14.1", "--cuda", "none")
    ran = check_wheel(portable, *arguments, "--native-bindings", "2.10,2.11", abi="stable")
    assert output(ran).strip() == (
        f"{portable.name}: ok (stable build, version 0.2.0, torch>=2.10, native bindings for "
        "torch 2.10, 2.11, no CUDA library)"
    )
    ran = check_wheel(portable, *arguments, "--native-bindings", "2.10,2.11,2.12", abi="stable")
    assert ran.returncode == 1
    assert ran.stderr.strip() == (
        f"{portable.name}: holds native bindings for torch 2.10, 2.11, expected 2.10, 2.11, 2.12"
    )


def test_check_wheel_reads_each_native_binding(tmp_path, library_without_cuda):
    bindings = {"2.10": described("2.10", "0.1.9"), "2.11": described("2.12")}
    portable = fake_wheel(
        tmp_path, "0.2.0", ["torch>=2.10"], library_without_cuda, "py3-none", bindings=bindings
    )
    with zipfile.ZipFile(portable, "a") as archive:
        archive.writestr("vecadd/lib/torch2_13/binding.json", json.dumps(described("2.13")))
    ran = check_wheel(portable, "0.2.0", "2.14.1", "--cuda", "none", abi="stable")
    assert ran.returncode == 1
    assert ran.stderr.splitlines() == [
        f"{portable.name}: vecadd/lib/torch2_10/binding.json is of vecadd 0.1.9, expected 0.2.0",
        f"{portable.name}: vecadd/lib/torch2_11/binding.json says series 2.12, not 2.11",
        f"{portable.name}: the native binding vecadd/lib/torch2_13 lacks "
        "libvecadd_native_ops.so, _C.abi3.so",
    ]


def test_check_wheel_finds_the_cuda_kernels_a_binding_claims(tmp_path, library_without_cuda):
    bindings = {
        "2.10": {**described("2.10"), "cuda_kernels": True},
        "2.11": {**described("2.11"), "cuda_kernels": False},
    }
    portable = fake_wheel(
        tmp_path, "0.2.0", ["torch>=2.10"], library_without_cuda, "py3-none", bindings=bindings
    )
    arguments = (portable, "0.2.0", "2.14.1", "--cuda", "none")
    assert check_wheel(*arguments, abi="stable").returncode == 0
    with zipfile.ZipFile(portable, "a") as archive:
        archive.writestr("vecadd/lib/torch2_11/libvecadd_native_cuda_ops.so", b"\x7fELF")
        claims = {**described("2.12"), "cuda_kernels": True}
        archive.writestr("vecadd/lib/torch2_12/binding.json", json.dumps(claims))
        for name in ("libvecadd_native_ops.so", "_C.abi3.so"):
            archive.writestr(f"vecadd/lib/torch2_12/{name}", b"\x7fELF")
    ran = check_wheel(*arguments, abi="stable")
    assert ran.returncode == 1
    assert ran.stderr.splitlines() == [
        f"{portable.name}: vecadd/lib/torch2_11/binding.json says cuda_kernels False, but the "
        "folder holds libvecadd_native_cuda_ops.so",
        f"{portable.name}: vecadd/lib/torch2_12/binding.json says cuda_kernels True, but the "
        "folder lacks libvecadd_native_cuda_ops.so",
    ]


def test_the_binding_torches_are_the_first_release_of_each_claimed_series():
    printed = output(run_script(RELEASE_TOOLS / "wheel_matrix.py", "binding-torches"))
    builds = json.loads((RELEASE_TOOLS / "pytorch_cuda_builds.json").read_text())["series"]
    claimed = [s for s in builds if tuple(map(int, s.split("."))) >= (2, 10)]
    assert printed.split() == [builds[s]["releases"][0] for s in claimed]
    assert printed.split()[0] == "2.10.0"


@needs_tomllib
def test_the_cibuildwheel_check_finds_the_binding_torches_fetch_as_pyproject_writes_it():
    """cibuildwheel_options.py's check of before-build, on pyproject.toml's own steps (joined as
    cibuildwheel joins them, {project} left in): the fetch of the bindings' torches is found, and
    missed once that step is gone."""
    import tomllib

    sys.path.insert(0, str(RELEASE_TOOLS))
    try:
        import cibuildwheel_options
    finally:
        sys.path.remove(str(RELEASE_TOOLS))
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["cibuildwheel"]
    environment = dict(settings["linux"]["environment"])
    row = json.loads(output(run_script(RELEASE_TOOLS / "wheel_matrix.py", "matrix", "release")))
    row = row["include"][0]
    steps = settings["before-build"]
    resolved = {
        "environment": environment,
        "before_all": " && ".join(settings["before-all"]),
        "before_test": settings["before-test"],
        "repair": settings["repair-wheel-command"],
        "frontend": ["pip", "--no-build-isolation"],
        "test_command": settings["test-command"],
    }
    missing = "before_build does not fetch the native bindings' torches into "
    whole = cibuildwheel_options.problems(row, {**resolved, "before_build": " && ".join(steps)})
    assert not [problem for problem in whole if problem.startswith(missing)]
    fetch = [step for step in steps if "binding_torches.py" not in step]
    without = cibuildwheel_options.problems(row, {**resolved, "before_build": " && ".join(fetch)})
    assert f"{missing}{environment['VECADD_NATIVE_TORCHES']}" in without


def test_check_wheel_refuses_a_malformed_cuda_option(tmp_path, library_without_cuda):
    wheel = fake_wheel(tmp_path, "0.1.0", ["torch==2.14.*"], library_without_cuda)
    ran = check_wheel(wheel, "0.1.0", "2.14.1", "--cuda", "13")
    assert ran.returncode == 2
    assert "--cuda '13'; expected TOOLKIT like 13.0, TOOLKIT=LIST or none" in ran.stderr


# -- the workflow --------------------------------------------------------------------------


@needs_tomllib
def test_workflow_sets_exactly_the_variables_cibuildwheel_passes():
    import tomllib

    passed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["cibuildwheel"][
        "environment-pass"
    ]
    workflow = (ROOT / ".github" / "workflows" / "wheels.yml").read_text()
    assert sorted(set(re.findall(r"^\s+(VECADD_WHEEL_\w+):", workflow, re.M))) == sorted(passed)


def test_workflow_actions_are_pinned_to_a_commit_with_its_version_named():
    for workflow in (ROOT / ".github" / "workflows").glob("*.yml"):
        lines = [line for line in workflow.read_text().splitlines() if "uses:" in line]
        assert lines
        for line in lines:
            assert re.search(r"uses: [\w.-]+/[\w.-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$", line), line


def test_workflow_checkouts_keep_no_credentials():
    for workflow in (ROOT / ".github" / "workflows").glob("*.yml"):
        text = workflow.read_text()
        checkouts = text.count("uses: actions/checkout@")
        assert checkouts == text.count("persist-credentials: false"), workflow.name


# -- the docs ------------------------------------------------------------------------------


@needs_tomllib
@needs_cmake
def test_docs_tables_agree_with_the_matrix_and_the_architecture_table():
    ran = run_script(DOCS_TOOLS / "check_docs.py")
    assert ran.returncode == 0, ran.stdout + ran.stderr
