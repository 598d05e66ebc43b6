"""build_info, the include/CMake paths, the torch-series check and the command line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib.metadata import requires, version
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from packaging.version import Version

import vecadd
from helpers import major_minor, run_vecadd_in_process
from vecadd import _loader
from vecadd.cli.info import LINE_WIDTH, wrapped


def run_cli(*arguments: str, **environment: str) -> subprocess.CompletedProcess:
    """`python -m vecadd ARGUMENTS`: in this process, or in a new one when the call needs
    environment variables of its own (the entry points have tests of their own below)."""
    if not environment:
        return run_vecadd_in_process(*arguments)
    return subprocess.run(
        [sys.executable, "-m", "vecadd", *arguments],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, **environment),
    )


def test_build_info_describes_this_build():
    info = vecadd.build_info()
    assert set(info) == {
        "version",
        "build",
        "torch_abi",
        "binding_why",
        "binding_entries",
        "binding_entries_why",
        "native_bindings",
        "torch_version",
        "torch_requirement",
        "cuda_libraries",
        "with_cuda",
        "cuda_version",
        "cuda_archs",
        "cuda_library",
        "cuda_not_loaded",
        "cuda_registration",
        "cuda_registration_why",
        "cuda_runtimes",
    }
    assert info["version"] == vecadd.__version__
    assert info["torch_abi"] in ("stable", "native")
    assert info["build"] in ("portable", "native")
    # The running torch is one the build says it loads under.
    running = Version(major_minor(torch.__version__))
    if info["build"] == "portable":
        assert info["torch_requirement"] == "torch>=2.10"
        assert running >= Version("2.10")
    else:
        assert info["torch_requirement"] == f"torch=={major_minor(info['torch_version'])}.*"
        assert running == Version(major_minor(info["torch_version"]))
    for library in info["cuda_libraries"]:
        # Each fact once: the loaded library's architectures are info["cuda_archs"] alone.
        assert set(library) == {"cuda_version", "folder"}
    if info["with_cuda"]:
        (loaded,) = [lib for lib in info["cuda_libraries"] if lib["folder"] == info["cuda_library"]]
        assert info["cuda_version"] == loaded["cuda_version"]
        assert info["cuda_archs"], "a CUDA library must embed at least one architecture"
        assert all(a.startswith(("sm_", "compute_")) for a in info["cuda_archs"])
        assert info["cuda_not_loaded"] is None
        assert info["cuda_registration"] in ("native", "stable")
        assert info["cuda_registration_why"]
    else:
        assert info["cuda_version"] is None
        assert info["cuda_archs"] == []
        assert info["cuda_library"] is None
        assert info["cuda_not_loaded"]
        assert (info["cuda_registration"], info["cuda_registration_why"]) == (None, None)


def test_version_is_the_installed_distribution_version():
    # Release wheels add a local label (0.1.0+cu128) to the metadata, never to __version__.
    assert vecadd.__version__ == version("vecadd").partition("+")[0]
    assert vecadd.__version__ == vecadd.build_info()["version"]


def test_headers_and_cmake_package_are_installed():
    assert (Path(vecadd.get_include()) / "vecadd" / "vecadd.h").is_file()
    assert (Path(vecadd.get_include()) / "vecadd" / "config.h").is_file()
    assert (Path(vecadd.get_cmake_dir()) / "vecaddConfig.cmake").is_file()


@pytest.mark.parametrize(
    ("abi", "built", "built_cuda", "running", "running_cuda", "problem"),
    [
        ("native", "2.14.1+cu130", "13.0", "2.14.0+cu130", "13.0", None),
        (
            "native",
            "2.14.1+cu130",
            "13.0",
            "2.13.0+cpu",
            None,
            "built against torch 2.14.1+cu130, but torch 2.13.0+cpu",
        ),
        (
            "native",
            "2.13.0",
            None,
            "2.14.1+cu130",
            "13.0",
            "only loads under the torch series it was built with (here torch==2.13.*)",
        ),
        ("native", "2.14.1+cu130", "13.0", "2.14.1+cpu", None, "is a CPU-only build"),
        ("native", "2.14.1+cpu", None, "2.14.1+cu130", "13.0", None),
        ("stable", "2.14.1+cu130", "13.0", "2.10.0+cu126", "12.6", None),
        ("stable", "2.14.1+cpu", None, "2.13.0+cpu", None, None),
        ("stable", "2.14.1+cpu", None, "3.0.0", None, None),
        ("stable", "2.14.1+cu130", "13.0", "2.9.1+cu128", "12.8", "needs torch>=2.10"),
        # The stable build's CPU kernels load apart from its CUDA libraries.
        ("stable", "2.14.1+cu130", "13.0", "2.13.0+cpu", None, None),
    ],
)
def test_torch_version_check(abi, built, built_cuda, running, running_cuda, problem):
    requirement = "torch>=2.10" if abi == "stable" else f"torch=={major_minor(built)}.*"
    found = _loader.incompatibility(abi, requirement, built, running, built_cuda, running_cuda)
    if problem is None:
        assert found is None
    else:
        assert problem in found


def test_import_under_a_torch_it_cannot_load_under_is_a_worded_error(monkeypatch):
    unsupported = "2.99.0" if vecadd.build_info()["build"] == "native" else "2.9.0"
    monkeypatch.setattr(torch, "__version__", unsupported)
    with pytest.raises(ImportError) as raised:
        _loader.load_operators()
    message = str(raised.value)
    assert f"but torch {unsupported} is installed" in message
    assert "pip install --no-build-isolation" in message
    assert "VECADD_SKIP_TORCH_CHECK=1" in message
    monkeypatch.setenv("VECADD_SKIP_TORCH_CHECK", "1")
    # The first call's answer: vecadd._C, None for the stable binding, or DISPATCHER_ENTRIES for a
    # native binding without vecadd._C, whose lean ways vecadd/_library.py makes in its place.
    loaded = _loader.load_operators()
    if loaded is _loader.DISPATCHER_ENTRIES:
        assert isinstance(vecadd._library.native_module, SimpleNamespace)
    else:
        assert loaded is vecadd._library.native_module


def test_cli_info_json():
    ran = run_cli("info", "--json")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout) == vecadd.build_info()


def test_cli_check_passes_on_every_device():
    from vecadd._dtypes import dtype_name
    from vecadd._operators import OPERATORS

    ran = run_cli("check")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert " 0 failed" in ran.stdout
    # Every operator in every dtype torch.add takes, mixed precision (a float32 stream and a
    # bfloat16 branch, promoted as torch.add promotes them) and gradients: each one passed.
    verdicts = {
        line.strip().removeprefix("cpu").strip().rsplit(" ", 1)[0].strip(): line.split()[-1]
        for line in ran.stdout.splitlines()
        if line.strip().startswith("cpu ")
    }
    expected = [
        f"{op.name} {case}"
        for op in OPERATORS
        for case in [
            *(dtype_name(dtype) for dtype in vecadd.SUPPORTED_DTYPES),
            "float32 + bfloat16",
            "autograd",
        ]
    ]
    assert verdicts == dict.fromkeys(expected, "ok")
    assert f"{len(expected)} passed" in ran.stdout or torch.cuda.is_available()
    assert max(len(line) for line in ran.stdout.splitlines()) <= LINE_WIDTH


def test_cli_info_reads_in_one_glance():
    """At most LINE_WIDTH characters a line, and no value said twice: the loaded CUDA library's
    architectures once, its folder once."""
    ran = run_cli("info")
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert max(len(line) for line in lines) <= LINE_WIDTH, ran.stdout
    info = vecadd.build_info()
    folders = ["/".join(Path(lib["folder"]).parts[-2:]) for lib in info["cuda_libraries"]]
    for value in (*info["cuda_archs"], *folders):
        shown = re.findall(rf"(?<![\w]){re.escape(value)}(?![\w])", ran.stdout)
        assert len(shown) <= 1, f"{value} shown {len(shown)} times:\n{ran.stdout}"
    if info["with_cuda"]:
        assert ", ".join(info["cuda_archs"]) in " ".join(line[20:].strip() for line in lines)


@pytest.mark.parametrize(
    ("value", "width", "expected"),
    [
        ("sm_75, sm_80, sm_86", 14, ["sm_75, sm_80,", "sm_86"]),
        ("/a/long/path/libcudart.so.13", 12, ["/a/long/", "path/", "libcudart.so.13"]),
        ("short", 100, ["short"]),
    ],
)
def test_long_values_wrap_at_spaces_then_slashes(value, width, expected):
    assert wrapped(value, width) == expected


def test_cli_json_says_each_fact_once():
    ran = run_cli("info", "--json")
    document = json.loads(ran.stdout)
    for library in document["cuda_libraries"]:
        assert "cuda_archs" not in library


def test_cli_paths():
    assert run_cli("--cmakedir").stdout.strip() == vecadd.get_cmake_dir()
    assert run_cli("--includes").stdout.strip() == f"-I{vecadd.get_include()}"


@pytest.mark.parametrize("arguments", [("frobnicate",), ()])
def test_cli_usage_errors_have_no_traceback(arguments):
    ran = run_cli(*arguments)
    assert ran.returncode == 2
    assert "usage: python -m vecadd" in ran.stderr
    assert "Traceback" not in ran.stderr


def test_cli_info_prints_words_not_python_values():
    ran = run_cli("info")
    assert ran.returncode == 0, ran.stderr
    labels = [line.split(":", 1)[0] for line in ran.stdout.splitlines() if line[:1].strip()]
    assert labels[0] == "version"
    # One key style: words a person reads, not build_info()'s keys.
    assert not [label for label in labels if "_" in label]
    for python_value in ("None", "[", "{", "True", "False"):
        assert python_value not in ran.stdout


def test_installed_metadata_states_the_torch_versions_the_build_loads_under():
    pins = [r for r in requires("vecadd") or [] if r.startswith("torch")]
    info = vecadd.build_info()
    if info["build"] == "portable":
        assert pins == ["torch>=2.10"]
    else:
        assert pins == [f"torch=={major_minor(info['torch_version'])}.*"]
    assert pins == [info["torch_requirement"]]


NO_CUDA_KERNELS = "needs vecadd's CUDA kernels loaded; this vecadd has none (vecadd info says why)"

NO_GPU_SCRIPT = """
import torch, vecadd
assert vecadd.build_info()["with_cuda"]
print("cpu", vecadd.add(torch.ones(2), torch.ones(2)).tolist())
try:
    vecadd.add(torch.ones(2, device="cuda"), torch.ones(2, device="cuda"))
except (RuntimeError, AssertionError) as error:
    print("cuda error:", type(error).__name__)
"""


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a usable GPU")
@pytest.mark.skipif(not vecadd.build_info()["with_cuda"], reason=NO_CUDA_KERNELS)
def test_cuda_build_on_a_machine_without_gpu():
    ran = subprocess.run(
        [sys.executable, "-c", NO_GPU_SCRIPT], capture_output=True, text=True, timeout=300
    )
    assert ran.returncode == 0, ran.stderr
    assert "cpu [2.0, 2.0]" in ran.stdout
    assert "cuda error: RuntimeError" in ran.stdout or "cuda error: AssertionError" in ran.stdout


@pytest.mark.skipif(not vecadd.build_info()["with_cuda"], reason=NO_CUDA_KERNELS)
def test_cli_check_without_a_gpu_says_the_cuda_kernels_went_untested():
    ran = run_cli("check", CUDA_VISIBLE_DEVICES="")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    # The note starts at `cuda` and wraps under the cases: its lines joined are its words.
    lines = ran.stdout.splitlines()
    (start,) = [index for index, line in enumerate(lines) if line.split()[:1] == ["cuda"]]
    wrapped_lines = [lines[start]] + [
        line for line in lines[start + 1 :] if line.startswith(" " * 10) and line.strip()
    ]
    note = " ".join(line.strip() for line in wrapped_lines)
    assert "not tested" in note
    assert "no CUDA GPU is visible" in note
    assert f"built for {', '.join(vecadd.build_info()['cuda_archs'])}" in note
    assert "cpu  add float16" in ran.stdout
    # A fresh process: torch's once-per-process notices would reach the user here.
    assert "Warning" not in ran.stderr, ran.stderr


@pytest.mark.parametrize(
    ("with_cuda", "gpus", "expected"),
    [
        (True, 0, "CUDA kernels built for sm_90, compute_90 but not tested"),
        (False, 2, "2 GPUs visible, but no CUDA kernels of vecadd are loaded (why;"),
        (False, 1, "1 GPU visible, but no CUDA kernels of vecadd are loaded (why;"),
        (True, 1, None),
        (False, 0, "CUDA not tested: no CUDA GPU is visible here"),
    ],
)
def test_check_names_what_it_could_not_test(with_cuda, gpus, expected, monkeypatch):
    from vecadd.cli.check import untested_cuda_note

    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)

    note = untested_cuda_note(with_cuda, ["sm_90", "compute_90"], gpus, "why")
    if expected is None:
        assert note is None
    else:
        assert expected in note


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        (("--cmakedir", "--includes"), "argument --includes: not allowed with argument --cmakedir"),
        (("--includes", "--cmakedir"), "argument --cmakedir: not allowed with argument --includes"),
        (("--cmakedir", "info"), "--cmakedir prints an answer and takes no command (got 'info')"),
    ],
)
def test_cli_path_flags_stand_alone(arguments, complaint):
    ran = run_cli(*arguments)
    assert ran.returncode == 2
    assert ran.stdout == ""
    assert complaint in ran.stderr
    assert "Traceback" not in ran.stderr


def imported_modules(importtime_log: str) -> set[str]:
    """Module names from `python -X importtime` lines ('import time: self | cumulative | name')."""
    lines = [line for line in importtime_log.splitlines() if line.startswith("import time:")]
    return {line.rsplit("|", 1)[1].strip() for line in lines[1:]}


LIGHT_ANSWERS = {
    "--cmakedir": lambda: vecadd.get_cmake_dir(),
    "--includes": lambda: f"-I{vecadd.get_include()}",
    "--version": lambda: f"vecadd {vecadd.__version__}",
}


def light_commands() -> list:
    """`python -m vecadd` and, where installed, the `vecadd` console script, each run by the
    interpreter with -X importtime."""
    commands = [pytest.param(["-m", "vecadd"], id="python-m-vecadd")]
    script = Path(sys.executable).parent / "vecadd"
    if script.is_file():
        commands.append(pytest.param([str(script)], id="vecadd-script"))
    return commands


@pytest.mark.parametrize("command", light_commands())
@pytest.mark.parametrize("flag", list(LIGHT_ANSWERS))
def test_cli_light_queries_load_neither_torch_nor_the_libraries(command, flag):
    # CMake configure steps call these: they must stay quiet and not pay for torch.
    ran = subprocess.run(
        [sys.executable, "-X", "importtime", *command, flag],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr
    modules = imported_modules(ran.stderr)
    assert "vecadd._path_query" in modules, "the -X importtime log was not read"
    loaders = ("torch.", "vecadd._C", "vecadd._loader", "vecadd._library")
    heavy = sorted(m for m in modules if m == "torch" or m.startswith(loaders))
    assert heavy == []
    quiet = subprocess.run(
        [sys.executable, *command, flag], capture_output=True, text=True, timeout=300
    )
    assert quiet.returncode == 0
    assert quiet.stderr == ""
    assert quiet.stdout == LIGHT_ANSWERS[flag]() + "\n"


def test_import_vecadd_still_loads_torch_and_registers_the_op():
    script = (
        "import sys, vecadd\n"
        "loaded = 'torch' in sys.modules\n"
        "import torch\n"
        "print(loaded, hasattr(torch.ops.vecadd, 'add'))"
    )
    ran = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["True", "True"]


def cli_commands() -> list:
    commands = [pytest.param([sys.executable, "-m", "vecadd"], id="python-m-vecadd")]
    script = Path(sys.executable).parent / "vecadd"
    if script.is_file():
        commands.append(pytest.param([str(script)], id="vecadd-script"))
    return commands


@pytest.mark.parametrize("command", cli_commands())
@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_cli_reader_gone_before_the_first_line(command, unbuffered):
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write of the child now fails with EPIPE, buffered or not
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        environment["PYTHONUNBUFFERED"] = unbuffered
    try:
        ran = subprocess.run(
            [*command, "info"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env=environment,
            timeout=300,
        )
    finally:
        os.close(write_end)
    assert ran.stderr == ""
    assert ran.returncode == 141


@pytest.mark.parametrize("command", cli_commands())
def test_cli_reader_gone_after_the_first_line(command):
    # `vecadd info | head -1`: whether the rest was already written when the reader left is a race.
    child = subprocess.Popen(
        [*command, "info"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
    )
    assert child.stdout is not None
    assert child.stderr is not None
    first = child.stdout.readline()
    child.stdout.close()
    errors = child.stderr.read()
    assert child.wait(timeout=300) in (0, 141)
    assert first.split() == ["version:", vecadd.__version__]
    assert errors == ""


def test_cmake_package_is_registered_for_scikit_build_core():
    from importlib.metadata import entry_points
    from importlib.resources import files

    [entry] = [e for e in entry_points(group="cmake.prefix") if e.name == "vecadd"]
    # A package that imports nothing: scikit-build-core imports it in every build.
    assert entry.value == "vecadd_cmake"
    # find_package(vecadd CONFIG) searches <prefix>/lib/cmake/vecadd/ under each prefix; the
    # files there forward to vecadd's own package config.
    forwarding = Path(str(files(entry.value))) / "lib" / "cmake" / "vecadd"
    for name in ("vecaddConfig.cmake", "vecaddConfigVersion.cmake"):
        included = re.search(
            r'include\("\$\{CMAKE_CURRENT_LIST_DIR\}/(.*)"\)', (forwarding / name).read_text()
        )
        assert (forwarding / included.group(1)).resolve() == Path(vecadd.get_cmake_dir()) / name


@pytest.mark.parametrize("command", cli_commands())
def test_cli_names_itself_as_invoked(command):
    ran = subprocess.run(command, capture_output=True, text=True, timeout=300)
    invoked = "vecadd" if Path(command[0]).name == "vecadd" else "python -m vecadd"
    assert ran.returncode == 2
    assert ran.stderr.startswith(f"usage: {invoked} [-h]")
    assert f"{invoked}: error: a command is required" in ran.stderr
