"""Type stub of the build description CMake generates beside vecadd's compiled operators."""

from typing import Final

VERSION: Final[str]
TORCH_ABI: Final[str]
TORCH_VERSION: Final[str]
TORCH_REQUIREMENT: Final[str]
