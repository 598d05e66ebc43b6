"""Type stub of the build description CMake generates next to vecadd._C."""

from typing import Final

VERSION: Final[str]
TORCH_VERSION: Final[str]
CUDA_VERSION: Final[str | None]
WITH_CUDA: Final[bool]
