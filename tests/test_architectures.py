"""The CUDA architecture list asked for is the list in the binary, read back from it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from helpers import (
    ROOT,
    cmake_build,
    cmake_configure,
    cmake_executable,
    environment_without_arch_list,
    pip_install_into,
)

FATBIN_ARCHS = ROOT / "cmake" / "fatbin_archs.py"
ARCHITECTURE_RULES = ROOT / "tools" / "release" / "cuda_architectures.cmake"
CUOBJDUMP_NOT_FOUND = 3  # fatbin_archs.py --cuobjdump's exit status without cuobjdump


def fatbin_archs(*arguments: str | Path) -> subprocess.CompletedProcess:
    """cmake/fatbin_archs.py, the build's fatbin reader, run as the build runs it."""
    return subprocess.run(
        [sys.executable, str(FATBIN_ARCHS), *map(str, arguments)], capture_output=True, text=True
    )


def listed(ran: subprocess.CompletedProcess) -> list[str]:
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.split()


def expected_architectures(cmake_list: str) -> list[str]:
    """The images a CMAKE_CUDA_ARCHITECTURES list gives, named as cuobjdump names them."""
    return listed(fatbin_archs("--expand", cmake_list))


def table_row(version: str) -> tuple[list[int], list[str]]:
    """(supported architectures, default list) of cmake/VecaddCudaArchitectures.cmake for a
    toolkit, as CMake itself reads the table."""
    ran = subprocess.run(
        [cmake_executable(), f"-DCUDA_VERSION={version}", "-P", str(ARCHITECTURE_RULES)],
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stderr
    answers = dict(line.split("=", 1) for line in ran.stdout.splitlines())
    return [int(a) for a in answers["supported"].split(";")], answers["default"].split(";")


pytestmark = pytest.mark.build

# The Grace-Hopper and Blackwell GPUs each default list must name with SASS when its toolkit can.
GRACE_AND_BLACKWELL = {
    "GH200": 90,
    "GB200": 100,
    "GB300": 103,
    "RTX 50 / RTX PRO": 120,
    "GB10": 121,
}
FUTURE_GPU = 130  # a compute capability no toolkit of the table knows: only PTX can serve it


def table_toolkits() -> list[str]:
    ran = subprocess.run(
        [cmake_executable(), "-P", str(ARCHITECTURE_RULES)], capture_output=True, text=True
    )
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.strip().removeprefix("toolkits=").split(";")


def gpus_to_serve(supported: list[int], default: list[str]) -> list[int]:
    """Every GPU from the oldest of the default list on: those the toolkit knows, the named
    ones and one newer than all of them."""
    oldest = min(int(re.match(r"\d+", entry).group()) for entry in default)
    wanted = set(supported) | set(GRACE_AND_BLACKWELL.values()) | {FUTURE_GPU}
    return sorted(gpu for gpu in wanted if gpu >= oldest)


def find_nvcc() -> str | None:
    candidates = [os.environ.get("CUDACXX"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"]
    return next((c for c in candidates if c and Path(c).exists()), None)


NVCC = find_nvcc()
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="needs a CUDA compiler (nvcc)")


def configure_and_build(
    tmp_path: Path,
    defines: dict[str, str],
    env: dict[str, str] | None = None,
    nvcc: str | None = None,
) -> tuple[subprocess.CompletedProcess, Path]:
    """Configure the kernel libraries alone (no torch) and build the CUDA one; returns
    (configure, the CUDA library). Device code is built unoptimized (-G): these tests read which
    architectures the binary holds, and -G compiles each about five times faster; the
    optimized build of the default list is the one every install and wheel makes."""
    build = tmp_path / "build"
    environment = environment_without_arch_list(**(env or {}))
    configure = cmake_configure(
        ROOT,
        build,
        "-DVECADD_PYTHON=OFF",
        "-DVECADD_CUDA=ON",
        f"-DCMAKE_CUDA_COMPILER={nvcc or NVCC}",
        "-DCMAKE_CUDA_FLAGS=-G",
        *(f"-D{key}={value}" for key, value in defines.items()),
        env=environment,
    )
    if configure.returncode == 0:
        cmake_build(build, "--target", "vecadd_cuda_kernels", env=environment)
    libraries = list(build.glob("cuda*/libvecadd_cuda.so"))
    return configure, libraries[0] if len(libraries) == 1 else build / "cudaN/libvecadd_cuda.so"


def assert_embedded(library: Path, expected: list[str]) -> None:
    assert listed(fatbin_archs(library)) == expected
    cross_check = fatbin_archs(library, "--cuobjdump")
    if cross_check.returncode != CUOBJDUMP_NOT_FOUND:
        assert listed(cross_check) == expected, "cuobjdump disagrees with cmake/fatbin_archs.py"


@needs_nvcc
@pytest.mark.parametrize(
    ("defines", "env", "expected"),
    [
        ({"CMAKE_CUDA_ARCHITECTURES": "80;90"}, {}, ["sm_80", "sm_90", "compute_80", "compute_90"]),
        ({"CMAKE_CUDA_ARCHITECTURES": "80-real;90-virtual"}, {}, ["sm_80", "compute_90"]),
        ({"CMAKE_CUDA_ARCHITECTURES": "90a"}, {}, ["sm_90a", "compute_90a"]),
        ({}, {"TORCH_CUDA_ARCH_LIST": "8.0 8.6+PTX"}, ["sm_80", "sm_86", "compute_86"]),
        ({"TORCH_CUDA_ARCH_LIST": "8.0;9.0a"}, {}, ["sm_80", "sm_90a"]),
        ({"CMAKE_CUDA_ARCHITECTURES": "75-real"}, {"TORCH_CUDA_ARCH_LIST": "9.0"}, ["sm_75"]),
    ],
    ids=["80;90", "80-real;90-virtual", "90a", "torch-env", "torch-cmake-var", "cmake-wins"],
)
def test_requested_list_is_embedded(tmp_path, defines, env, expected):
    configure, library = configure_and_build(tmp_path, defines, env)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    assert "vecadd: CUDA architectures" in configure.stdout
    assert_embedded(library, expected)


def toolkit_version(nvcc: str) -> str:
    banner = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    return re.search(r"release (\d+\.\d+)", banner).group(1)


@needs_nvcc
@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ("70", "this toolkit cannot compile for 70"),
        ("foo", "is not valid"),
        ("80a", "'a' variants exist from 90 on"),
    ],
)
def test_impossible_architecture_stops_configure(tmp_path, entry, reason):
    configure, _ = configure_and_build(tmp_path, {"CMAKE_CUDA_ARCHITECTURES": f"80;{entry}"})
    assert configure.returncode != 0
    message = " ".join(configure.stderr.split())
    version = toolkit_version(NVCC)
    assert f"CUDA architecture '{entry}'" in message
    assert reason in message
    assert f"CUDA toolkit {version}" in message
    supported, _ = table_row(version)
    assert " ".join(str(a) for a in supported) in message


def reachable_toolkits() -> list[str]:
    """nvcc executables the tests can reach: the system's and any pip-installed ones."""
    found = [NVCC] if NVCC else []
    for base in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
        found += [str(p) for p in Path(base).glob("nvidia/*/bin/nvcc")]
    return sorted(set(found))


@pytest.mark.parametrize("nvcc", reachable_toolkits() or [pytest.param(None, marks=needs_nvcc)])
def test_table_matches_what_each_toolkit_compiles(nvcc):
    listing = subprocess.run([nvcc, "--list-gpu-code"], capture_output=True, text=True)
    assert listing.returncode == 0, listing.stderr
    compiled = sorted(int(a) for a in re.findall(r"sm_(\d+)\b", listing.stdout))
    supported, default = table_row(toolkit_version(nvcc))
    assert compiled == sorted(supported)
    assert {int(entry.split("-")[0]) for entry in default} <= set(compiled)


def test_fatbin_reader_on_a_library_without_cuda(tmp_path):
    source = tmp_path / "plain.cpp"
    source.write_text("int plain() { return 1; }\n")
    library = tmp_path / "libplain.so"
    subprocess.run(["c++", "-shared", "-fPIC", str(source), "-o", str(library)], check=True)
    assert listed(fatbin_archs(library)) == []


def torch_has_cuda() -> bool:
    import torch

    return torch.version.cuda is not None


@needs_nvcc
@pytest.mark.skipif(not torch_has_cuda(), reason="needs a CUDA build of torch")
@pytest.mark.parametrize("abi", ["native", "stable"])
def test_torch_gencode_flags_do_not_leak(tmp_path, abi):
    # The native build runs torch's CMake config, which appends its own -gencode flags; the
    # stable build reads only torch's headers and libraries.
    build = tmp_path / "build"
    configure = cmake_configure(
        ROOT,
        build,
        "-DVECADD_PYTHON=ON",
        f"-DVECADD_TORCH_ABI={abi}",
        "-DVECADD_CUDA=ON",
        f"-DPython_EXECUTABLE={sys.executable}",
        "-DCMAKE_CUDA_ARCHITECTURES=86-real",
    )
    assert configure.returncode == 0, configure.stdout + configure.stderr
    ninja = (build / "build.ninja").read_text()
    flags = re.findall(
        r"build CMakeFiles/vecadd_cuda_kernels\.dir/src/kernels/add_cuda\.cu\.o.*?\n"
        r"  FLAGS = (.*?)\n",
        ninja,
        re.S,
    )
    assert len(flags) == 1
    assert re.findall(r"(?:-gencode|--generate-code)[= ][^\s\"]+", flags[0]) == [
        "--generate-code=arch=compute_86,code=[sm_86]"
    ]
    discarded = "torch's CUDA architecture flags are discarded; vecadd compiles for 86-real"
    assert (discarded in configure.stdout) == (abi == "native")


RUN_ON_GPU = """
import torch, vecadd
x = torch.arange(8.0, device="cuda")
try:
    print("RESULT", vecadd.add(x, x).tolist())
except RuntimeError as error:
    print("ERROR", error)
print("ARCHS", vecadd.build_info()["cuda_archs"])
"""


def install_variant(tmp_path: Path, archs: str | None) -> subprocess.CompletedProcess:
    """pip-install vecadd built for `archs` (None: the default list), then run it on the GPU."""
    settings = [] if archs is None else [f"cmake.define.CMAKE_CUDA_ARCHITECTURES={archs}"]
    pip_install_into(tmp_path / "site", ROOT, tmp_path / "build", *settings)
    environment = environment_without_arch_list(PYTHONPATH=str(tmp_path / "site"))
    return subprocess.run(
        [sys.executable, "-c", RUN_ON_GPU],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
    )


@pytest.mark.cuda
def test_gpu_missing_from_the_binary_gets_a_worded_error(tmp_path):
    import torch

    major, minor = torch.cuda.get_device_capability()
    if (major, minor) == (8, 0):
        pytest.skip("the GPU is itself sm_80")
    ran = install_variant(tmp_path, "80-real")
    print(ran.stdout, ran.stderr)
    assert "ERROR" in ran.stdout
    assert f"compute capability {major}.{minor}" in ran.stdout
    assert torch.cuda.get_device_name() in ran.stdout
    assert "'80-real'" in ran.stdout
    assert f"CMAKE_CUDA_ARCHITECTURES={major}{minor}" in ran.stdout
    assert "ARCHS ['sm_80']" in ran.stdout


@pytest.mark.cuda
@pytest.mark.parametrize("archs", ["80", None], ids=["ptx-80-jit", "default"])
def test_gpu_runs_from_ptx_or_the_default_list(tmp_path, archs):
    ran = install_variant(tmp_path, archs)
    print(ran.stdout, ran.stderr)
    assert "RESULT [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]" in ran.stdout


def toolkit_root(nvcc: str) -> Path:
    """Where nvcc's toolkit lives, as nvcc itself reports it (wrappers on PATH included)."""
    source = Path(tempfile.mkdtemp()) / "empty.cu"
    source.write_text("")
    dry_run = subprocess.run(
        [nvcc, "--dryrun", "-c", str(source), "-o", os.devnull], capture_output=True, text=True
    ).stderr
    top = re.search(r"TOP=(\S+)", dry_run)
    return Path(top.group(1)).resolve() if top else Path(nvcc).resolve().parents[1]


@pytest.mark.parametrize("nvcc", reachable_toolkits() or [pytest.param(None, marks=needs_nvcc)])
def test_default_list_builds_with_each_reachable_toolkit(tmp_path, nvcc):
    root = toolkit_root(nvcc)
    if not any(
        (root / d / "libcudart.so").exists() for d in ("lib", "lib64", "targets/x86_64-linux/lib")
    ):
        pytest.skip(f"{root} has no libcudart.so link (pip toolkits need one: see .ci/run)")
    # The default list follows the architecture table's row for each toolkit.
    configure, library = configure_and_build(tmp_path, {}, nvcc=nvcc)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    supported, default = table_row(toolkit_version(nvcc))
    assert f"(from the default for CUDA {toolkit_version(nvcc)})" in configure.stdout
    assert_embedded(library, expected_architectures(";".join(default)))
    served = fatbin_archs(library, "--gpu", *map(str, gpus_to_serve(supported, default)))
    assert served.returncode == 0, served.stdout


def test_default_lists_leave_no_gpu_without_code():
    # "no kernel image" must not happen for a GPU a default list claims (its PTX or SASS).
    # One test over the table's rows: collecting it must not need CMake, which a CPU suite lacks.
    for toolkit in table_toolkits():
        supported, default = table_row(toolkit)
        gpus = gpus_to_serve(supported, default)
        ran = fatbin_archs("--expand", ";".join(default), "--gpu", *map(str, gpus))
        assert ran.returncode == 0, f"CUDA {toolkit}: {ran.stdout}"
        images = expected_architectures(";".join(default))
        for name, capability in GRACE_AND_BLACKWELL.items():
            if capability in supported:
                assert f"sm_{capability}" in images, f"CUDA {toolkit} names no SASS for {name}"
        assert images[-1] == f"compute_{max(supported)}", f"CUDA {toolkit}: PTX not the newest"


def test_gpu_check_finds_a_gpu_without_code():
    # GB10 (12.1) cannot run code built for 12.0a, the trap of packages that ship sm_120a only.
    ran = fatbin_archs("--expand", "90-real;120a-real", "--gpu", "90", "121")
    assert ran.returncode == 1
    assert ran.stdout.splitlines() == ["90: sm_90", "121: no kernel image"]
