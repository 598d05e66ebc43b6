"""vecadd: z = x + alpha * y as a PyTorch custom op with CPU and CUDA kernels.

>>> import torch, vecadd
>>> vecadd.add(torch.ones(3), torch.arange(3.0), alpha=2)
tensor([1., 3., 5.])
"""

import torch  # noqa: F401  (torch's libraries must be loaded before vecadd._C)

from ._loader import load_extension

_C = load_extension()

from . import _build_config  # noqa: E402
from ._dtypes import SUPPORTED_DTYPES  # noqa: E402
from ._info import build_info, get_cmake_dir, get_include  # noqa: E402
from ._module import VecAdd  # noqa: E402
from ._ops import add  # noqa: E402

__version__: str = _build_config.VERSION
__all__ = [
    "SUPPORTED_DTYPES",
    "VecAdd",
    "__version__",
    "add",
    "build_info",
    "get_cmake_dir",
    "get_include",
]
