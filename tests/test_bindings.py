"""Which binding a process runs: the native binding of the running torch's series where the
portable build holds one that fits, else the stable binding, chosen once at import and said in
words; VECADD_BINDING=stable forces the stable one; a torch the build has never seen, and a
native binding that cannot load (a missing or corrupt file, another C++ ABI, a symbol torch
lacks), leave the stable binding running, with the reason kept, and nothing registered twice."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import vecadd
from helpers import major_minor
from vecadd import _loader
from vecadd._loader import BindingChoice, NativeBinding, choose_binding, read_binding

INFO = vecadd.build_info()
PORTABLE = INFO["build"] == "portable"
needs_portable = pytest.mark.skipif(not PORTABLE, reason="needs the portable build of vecadd")
RUNNING_SERIES = major_minor(torch.__version__)
RUNNING_FOLDER = RUNNING_SERIES.replace(".", "_")  # its binding's folder, lib/torch2_14
HELD_SERIES = [binding["torch_series"] for binding in INFO["native_bindings"]]
needs_a_binding_here = pytest.mark.skipif(
    RUNNING_SERIES not in HELD_SERIES,
    reason=f"needs a native binding for the running torch {RUNNING_SERIES} (this build holds "
    f"{', '.join(HELD_SERIES) or 'none'})",
)
# The binding of the running series registers the CUDA kernels itself (a CUDA torch's).
NATIVE_CUDA_KERNELS = any(
    b["torch_series"] == RUNNING_SERIES and b["cuda_kernels"] for b in INFO["native_bindings"]
)
needs_native_cuda_kernels = pytest.mark.skipif(
    not (INFO["with_cuda"] and NATIVE_CUDA_KERNELS),
    reason="needs vecadd's CUDA library loaded and a native binding with CUDA kernels for the "
    f"running torch {RUNNING_SERIES}",
)


def binding(series: str, torch_version: str | None = None, **fields) -> NativeBinding:
    return NativeBinding(
        Path(f"/lib/torch{series.replace('.', '_')}"),
        series,
        torch_version or f"{series}.0",
        True,
        True,
        **fields,
    )


HELD = [binding("2.10"), binding("2.11"), binding("2.14")]


@pytest.mark.parametrize(
    ("torch_version", "series"),
    [("2.14.1+cu130", "2.14"), ("2.10.0", "2.10"), ("2.11.0+cpu", "2.11")],
)
def test_the_running_series_picks_its_binding(torch_version, series):
    choice = choose_binding(HELD, torch_version, True)
    assert choice.native.series == series
    assert choice.why == (
        f"torch {torch_version} is of the {series} series, which this binding was compiled for "
        f"(against torch {series}.0)"
    )
    assert not choice.fault


@pytest.mark.parametrize("torch_version", ["2.16.0", "2.12.0+cu130", "2.17.0.dev20270101+cpu"])
def test_a_torch_the_build_has_not_seen_gets_the_stable_binding(torch_version):
    assert choose_binding(HELD, torch_version, True) == BindingChoice(
        None,
        f"this vecadd holds native bindings for torch 2.10, 2.11 and 2.14, none for torch "
        f"{torch_version}; the stable binding runs under every torch from 2.10 on",
    )


def test_the_switch_forces_the_stable_binding():
    assert choose_binding(HELD, "2.14.1", True, "stable") == BindingChoice(
        None, "VECADD_BINDING=stable asks for the stable binding"
    )
    assert choose_binding(HELD, "2.14.1", True, "").native.series == "2.14"


@pytest.mark.parametrize("value", ["native", "Stable", "0"])
def test_the_switch_refuses_a_value_it_does_not_know(value):
    with pytest.raises(ValueError, match=rf"VECADD_BINDING='{value}'; expected 'stable' \(the"):
        choose_binding(HELD, "2.14.1", True, value)


def test_another_cxx_abi_gets_the_stable_binding_as_a_fault():
    choice = choose_binding(HELD, "2.14.1", False)
    assert choice.native is None
    assert choice.fault
    assert choice.why == (
        "the native binding for torch 2.14 was built with _GLIBCXX_USE_CXX11_ABI=1, but torch "
        "2.14.1 uses _GLIBCXX_USE_CXX11_ABI=0"
    )


def test_an_unreadable_description_is_a_fault_named(tmp_path):
    folder = tmp_path / "torch2.14"
    folder.mkdir()
    (folder / "binding.json").write_text('{"torch_version": "2.14.0"')
    read = read_binding(folder)
    assert read.series == "2.14"
    assert read.problem.startswith(f"{folder / 'binding.json'} cannot be read (JSONDecodeError:")
    choice = choose_binding([read], "2.14.1", True)
    assert (choice.native, choice.fault) == (None, True)
    assert choice.why.startswith("the native binding for torch 2.14: ")
    assert (
        "(FileNotFoundError: [Errno 2] No such file or directory:"
        in read_binding(tmp_path / "torch2.13").problem
    )


@needs_portable
def test_build_info_says_which_binding_runs_and_why():
    held = {b["torch_series"]: b for b in INFO["native_bindings"]}
    for series, described in held.items():
        folder = Path(described["folder"])
        assert folder.name == f"torch{series.replace('.', '_')}"  # importable: torch2_14
        assert (folder / _loader.NATIVE_LIBRARY_NAME).is_file()
        assert major_minor(described["torch_version"]) == series
    forced = os.environ.get("VECADD_BINDING") == "stable"
    if forced or RUNNING_SERIES not in held:
        assert INFO["torch_abi"] == "stable"
        assert INFO["binding_entries"] is None
        assert vecadd._library.native_module is None
    else:
        assert INFO["torch_abi"] == "native"
        assert INFO["binding_why"] == (
            f"torch {torch.__version__} is of the {RUNNING_SERIES} series, which this binding was "
            f"compiled for (against torch {held[RUNNING_SERIES]['torch_version']})"
        )
        assert vecadd._library.native_module is not None


# The two libraries that can register the CUDA kernels (one per process).
CUDA_REGISTRATIONS = (_loader.NATIVE_CUDA_LIBRARY_NAME, _loader.STABLE_CUDA_LIBRARY_NAME)


def our_loaded_libraries() -> list[Path]:
    """The libraries of this vecadd that torch.ops.load_library has loaded."""
    return [
        p for p in map(Path, torch.ops.loaded_libraries) if p.is_relative_to(_loader.LIBRARY_DIR)
    ]


@needs_portable
def test_one_binding_registers_the_kernels():
    """Never two: the CPU kernels come from one binding's library, loaded once."""
    native = INFO["torch_abi"] == "native"
    expected = (
        _loader.binding_state.native.folder / _loader.NATIVE_LIBRARY_NAME
        if native
        else _loader.STABLE_LIBRARY
    )
    assert [p for p in our_loaded_libraries() if p.name not in CUDA_REGISTRATIONS] == [expected]
    assert _loader.load_operators() is _loader.load_operators()  # the first call's answer
    dump = torch._C._dispatch_dump("vecadd::add").splitlines()
    (cpu,) = [line for line in dump if line.startswith("CPU:")]
    assert f"src/{'torch' if native else 'stable'}/registration.cpp" in cpu


@needs_portable
def test_one_binding_registers_the_cuda_kernels():
    """The native binding's own CUDA library where it has one, else the CUDA library's
    stable-ABI registration: one of the two, loaded once, and said so by build_info."""
    registered = [p.name for p in our_loaded_libraries() if p.name in CUDA_REGISTRATIONS]
    dump = torch._C._dispatch_dump("vecadd::add").splitlines()
    cuda = [line for line in dump if line.startswith("CUDA:")]
    if not INFO["with_cuda"]:
        # Only the Python face's worded refusal (vecadd/_library.py) holds the CUDA key.
        assert (registered, INFO["cuda_registration"]) == ([], None)
        assert len(cuda) == 1
        assert "vecadd/_library.py" in cuda[0]
        return
    native = INFO["torch_abi"] == "native" and NATIVE_CUDA_KERNELS
    assert INFO["cuda_registration"] == ("native" if native else "stable")
    expected = _loader.NATIVE_CUDA_LIBRARY_NAME if native else _loader.STABLE_CUDA_LIBRARY_NAME
    assert registered == [expected]
    assert len(cuda) == 1
    assert f"src/{'torch' if native else 'stable'}/registration.cpp" in cuda[0]
    if native:
        assert INFO["cuda_registration_why"] == (
            f"the native binding for torch {RUNNING_SERIES} registers them (torch's full C++ API, "
            "no boxing)"
        )


def installed_copy(tmp_path: Path) -> Path:
    """A copy of the installed vecadd package, to break; the folder to put on PYTHONPATH."""
    package = Path(vecadd.__file__).parent
    if not _loader.LIBRARY_DIR.is_relative_to(package):
        pytest.skip("needs vecadd installed as a package (not an editable install)")
    shutil.copytree(package, tmp_path / "vecadd", ignore=shutil.ignore_patterns("__pycache__"))
    for metadata in package.parent.glob(f"vecadd-{vecadd.__version__}*.dist-info"):
        shutil.copytree(metadata, tmp_path / metadata.name)  # its RECORD: the files' hashes
    return tmp_path


REPORT = """
import json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import torch
    {before}
    import vecadd
info = vecadd.build_info()
x = torch.randn(5, requires_grad=True)
y = torch.randn(5)
z = vecadd.add(x, y, alpha=2.0)
z.sum().backward()
torch.testing.assert_close(z, x + 2 * y)
torch.testing.assert_close(x.grad, torch.ones(5))
s = vecadd.add_n([x, y, x], [1.0, -1.0, 0.5])
torch.testing.assert_close(s, 1.5 * x - y)
print(json.dumps({{
    "torch_abi": info["torch_abi"],
    "why": info["binding_why"],
    "entries": info["binding_entries"],
    "entries_why": info["binding_entries_why"],
    "grad_fn": type(z.grad_fn).__name__,
    "warnings": [str(w.message) for w in caught if "vecadd" in str(w.message)],
    "cuda_registration": info["cuda_registration"],
    "cuda_why": info["cuda_registration_why"],
    "cuda_kernels": [
        line for line in torch._C._dispatch_dump("vecadd::add").splitlines()
        if line.startswith("CUDA:")
    ],
}}))
"""


def run_report(path: Path | None = None, before: str = "", **environment: str) -> dict:
    """Imports vecadd (from `path` if given) in a new process, runs add and add_n with a
    gradient, and reports the binding and the warnings the import gave."""
    env = {k: v for k, v in os.environ.items() if k != "VECADD_BINDING"}
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(path), env.get("PYTHONPATH", "")])
    env.update(environment)
    script = REPORT.format(before=textwrap.indent(before, "    ").strip())
    ran = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout.splitlines()[-1])


@needs_portable
@needs_a_binding_here
def test_the_matching_binding_runs_with_its_entries_and_no_warning():
    report = run_report()
    assert report["torch_abi"] == "native"
    assert report["warnings"] == []
    assert report["grad_fn"] == "CppFunction"  # the C++ autograd node
    if not _loader.free_threaded():
        assert report["entries"].endswith(f"torch{RUNNING_FOLDER}/_C.abi3.so")
        assert report["entries_why"] is None


@needs_portable
def test_a_mismatched_torch_release_gets_the_stable_binding_and_works():
    """The running torch presented as a release after the build's (2.99.0): no native binding
    fits it; the stable binding runs, silently, and computes with Python autograd."""
    report = run_report(before="torch.__version__ = '2.99.0'")
    assert report["torch_abi"] == "stable"
    assert report["why"].startswith("this vecadd holds native bindings for torch ")
    assert report["why"].endswith(
        "none for torch 2.99.0; the stable binding runs under every torch from 2.10 on"
    )
    assert report["entries"] is None
    assert report["warnings"] == []
    assert report["grad_fn"] != "CppFunction"


@needs_portable
@needs_a_binding_here
def test_the_switch_forces_the_stable_binding_in_a_process():
    report = run_report(VECADD_BINDING="stable")
    assert (report["torch_abi"], report["why"], report["warnings"]) == (
        "stable",
        "VECADD_BINDING=stable asks for the stable binding",
        [],
    )


@needs_portable
@pytest.mark.parametrize("forced", [False, True])
def test_vecadd_info_says_which_binding_runs_and_why(forced):
    env = {k: v for k, v in os.environ.items() if k != "VECADD_BINDING"}
    if forced:
        env["VECADD_BINDING"] = "stable"
    ran = subprocess.run(
        [sys.executable, "-m", "vecadd", "info"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    # The binding's line and its continuation lines, joined as one sentence.
    start = next(i for i, line in enumerate(lines) if line.startswith("binding:"))
    shown = lines[start].removeprefix("binding:").strip()
    for line in lines[start + 1 :]:
        if line[:1].strip():
            break
        shown += " " + line.strip()
    if forced:
        assert shown == "stable: VECADD_BINDING=stable asks for the stable binding"
    elif RUNNING_SERIES in HELD_SERIES:
        assert shown.startswith(f"native: torch {torch.__version__} is of the {RUNNING_SERIES} ")
    else:
        assert shown.startswith("stable: this vecadd holds native bindings for torch ")
    held = [line for line in lines if line.startswith("native bindings:")]
    assert held == [f"native bindings:    torch {', '.join(HELD_SERIES) or 'none'}"]


@needs_portable
def test_a_misspelt_switch_is_a_worded_import_error():
    ran = subprocess.run(
        [sys.executable, "-c", "import vecadd"],
        capture_output=True,
        text=True,
        env={**os.environ, "VECADD_BINDING": "stabel"},
        timeout=300,
    )
    assert ran.returncode == 1
    assert "ImportError: vecadd: VECADD_BINDING='stabel'; expected 'stable'" in ran.stderr


def break_binding(copy: Path, how: str, name: str = _loader.NATIVE_LIBRARY_NAME) -> Path:
    """The copy's binding for the running series (its library `name`), broken `how`; the file
    it broke."""
    folder = copy / "vecadd" / "lib" / f"torch{RUNNING_FOLDER}"
    library = folder / name
    if how == "missing":
        library.unlink()
    elif how == "cut short":
        library.write_bytes(library.read_bytes()[:4096])
    elif how == "changed":
        data = bytearray(library.read_bytes())
        data[len(data) // 2 : len(data) // 2 + 64] = bytes(64)
        library.write_bytes(bytes(data))
    elif how == "other C++ ABI":
        description = json.loads((folder / "binding.json").read_text())
        description["cxx11_abi"] = not description["cxx11_abi"]
        (folder / "binding.json").write_text(json.dumps(description))
    elif how == "symbol torch lacks":
        compiler = shutil.which("c++") or shutil.which("g++")
        if compiler is None:
            pytest.skip("needs a C++ compiler to make a library with a symbol torch lacks")
        source = copy / "lacks.cpp"
        source.write_text(
            'extern "C" void vecadd_symbol_torch_lacks();\n'
            'extern "C" void vecadd_calls_it() { vecadd_symbol_torch_lacks(); }\n'
        )
        subprocess.run(
            [compiler, "-shared", "-fPIC", "-o", library, source], check=True, capture_output=True
        )
        record_as_installed(copy, library)  # what pip installed: only the loader can tell
    return library


def record_as_installed(copy: Path, path: Path) -> None:
    """The copy's RECORD states `path` as it is now, as pip would have written it."""
    (record,) = copy.glob("vecadd-*.dist-info/RECORD")
    name = path.relative_to(copy).as_posix()
    digest = base64.urlsafe_b64encode(hashlib.sha256(path.read_bytes()).digest()).decode()
    line = f"{name},sha256={digest.rstrip('=')},{path.stat().st_size}"
    lines = [
        line if entry.startswith(f"{name},") else entry for entry in record.read_text().splitlines()
    ]
    record.write_text("\n".join(lines) + "\n")


FAULTS = {
    "missing": "cannot be read (No such file or directory)",
    "cut short": "is cut short: its headers need",
    "changed": "is not the file pip installed (its sha256 differs from",
    "other C++ ABI": "was built with _GLIBCXX_USE_CXX11_ABI=",
    "symbol torch lacks": "undefined symbol: vecadd_symbol_torch_lacks",
}


@needs_portable
@needs_a_binding_here
@pytest.mark.parametrize("how", list(FAULTS))
def test_a_binding_that_cannot_load_leaves_the_stable_one_with_the_reason(tmp_path, how):
    copy = installed_copy(tmp_path)
    broken = break_binding(copy, how)
    report = run_report(copy)
    assert report["torch_abi"] == "stable"
    assert report["grad_fn"] != "CppFunction"
    assert FAULTS[how] in report["why"]
    if how != "other C++ ABI":
        assert report["why"].startswith(f"the native binding for torch {RUNNING_SERIES} failed")
        assert str(broken) in report["why"]
    (warning,) = report["warnings"]
    assert warning == (
        f"vecadd: {report['why']}; the stable binding runs instead (vecadd info says which runs "
        "and why)"
    )


@needs_portable
@needs_a_binding_here
def test_without_its_python_entries_the_binding_runs_through_the_dispatcher(tmp_path):
    """As on a free-threaded CPython, which takes no abi3 module: the native kernels and C++
    autograd, reached through the dispatcher by the lean ways."""
    report = run_report(
        before="import sysconfig; get = sysconfig.get_config_var\n"
        "sysconfig.get_config_var = lambda name: 1 if name == 'Py_GIL_DISABLED' else get(name)"
    )
    assert report["torch_abi"] == "native"
    assert report["grad_fn"] == "CppFunction"
    assert report["entries"] is None
    assert report["entries_why"] == (
        "a free-threaded CPython takes no abi3 module: calls go through the dispatcher"
    )
    assert report["warnings"] == []


@needs_portable
@needs_a_binding_here
def test_entries_that_fail_to_load_leave_the_dispatcher_way_with_a_warning(tmp_path):
    copy = installed_copy(tmp_path)
    entries = copy / "vecadd" / "lib" / f"torch{RUNNING_FOLDER}" / _loader.NATIVE_ENTRIES_NAME
    entries.write_bytes(b"not a library")
    report = run_report(copy)
    assert (report["torch_abi"], report["grad_fn"], report["entries"]) == (
        "native",
        "CppFunction",
        None,
    )
    if _loader.free_threaded():
        # A free-threaded CPython takes no abi3 module: the file is never read, nor warned of.
        assert report["entries_why"] == (
            "a free-threaded CPython takes no abi3 module: calls go through the dispatcher"
        )
        assert report["warnings"] == []
        return
    assert report["entries_why"].startswith("its Python entries failed to load (")
    assert report["warnings"] == [f"vecadd: {report['entries_why']}"]


@needs_portable
@needs_native_cuda_kernels
def test_the_native_binding_registers_the_cuda_kernels_unless_forced_stable():
    native = run_report()
    assert (native["torch_abi"], native["cuda_registration"], native["warnings"]) == (
        "native",
        "native",
        [],
    )
    (line,) = native["cuda_kernels"]
    assert "src/torch/registration.cpp" in line
    forced = run_report(VECADD_BINDING="stable")
    assert (forced["cuda_registration"], forced["warnings"]) == ("stable", [])
    assert forced["cuda_why"] == (
        "the stable binding runs: the CUDA library's stable-ABI registration serves"
    )
    (line,) = forced["cuda_kernels"]
    assert "src/stable/registration.cpp" in line


CUDA_FAULTS = {key: FAULTS[key] for key in ("missing", "cut short", "symbol torch lacks")}


@needs_portable
@needs_native_cuda_kernels
@pytest.mark.parametrize("how", list(CUDA_FAULTS))
def test_native_cuda_kernels_that_cannot_load_leave_the_stable_ones(tmp_path, how):
    """The native binding keeps its CPU kernels and autograd; the CUDA library's stable-ABI
    registration takes the CUDA kernels, once, with a warning that says why."""
    copy = installed_copy(tmp_path)
    broken = break_binding(copy, how, _loader.NATIVE_CUDA_LIBRARY_NAME)
    report = run_report(copy)
    assert (report["torch_abi"], report["grad_fn"]) == ("native", "CppFunction")
    assert report["cuda_registration"] == "stable"
    (line,) = report["cuda_kernels"]
    assert "src/stable/registration.cpp" in line
    assert report["cuda_why"].startswith(
        f"the native binding's CUDA kernels for torch {RUNNING_SERIES} failed to load ("
    )
    assert CUDA_FAULTS[how] in report["cuda_why"]
    assert str(broken) in report["cuda_why"]
    assert report["cuda_why"].endswith(": the CUDA library's stable-ABI registration serves")
    why = report["cuda_why"].removesuffix(": the CUDA library's stable-ABI registration serves")
    assert report["warnings"] == [
        f"vecadd: {why}; the CUDA library's stable-ABI kernels serve instead"
    ]


@needs_portable
@needs_native_cuda_kernels
def test_a_binding_built_without_cuda_kernels_leaves_them_to_the_stable_ones(tmp_path):
    """A binding compiled against a CPU-only torch (no libc10_cuda) says so in binding.json."""
    copy = installed_copy(tmp_path)
    description = copy / "vecadd" / "lib" / f"torch{RUNNING_FOLDER}" / "binding.json"
    data = json.loads(description.read_text())
    data["cuda_kernels"] = False
    description.write_text(json.dumps(data))
    report = run_report(copy)
    assert (report["torch_abi"], report["cuda_registration"], report["warnings"]) == (
        "native",
        "stable",
        [],
    )
    assert report["cuda_why"] == (
        f"the native binding for torch {RUNNING_SERIES} holds no CUDA kernels (compiled against "
        f"a CPU-only torch {data['torch_version']}): the CUDA library's stable-ABI registration "
        "serves"
    )
