"""The CMake and pip steps now live in helpers.py; this name remains for test_architectures.py."""

from helpers import (  # noqa: F401
    ROOT,
    cmake_build,
    cmake_configure,
    cmake_executable,
    environment_without_arch_list,
    pip_install_into,
)
