"""vecadd: z = x + alpha * y as a PyTorch custom op with CPU and CUDA kernels.

>>> import torch, vecadd
>>> vecadd.add(torch.ones(3), torch.arange(3.0), alpha=2)
tensor([1., 3., 5.])
"""

from . import _build_config
from ._info import build_info, get_cmake_dir, get_include
from ._path_query import running_as_path_query

__version__: str = _build_config.VERSION
__all__ = [
    "SUPPORTED_DTYPES",
    "VecAdd",
    "__version__",
    "add",
    "add_n",
    "build_info",
    "decompositions",
    "get_cmake_dir",
    "get_include",
    "keep_kernels",
    "onnx_translations",
]

# `python -m vecadd --cmakedir` runs this file first, for CMake, which wants a path, not torch.
if not running_as_path_query():
    import torch  # noqa: F401  (torch's libraries must be loaded before vecadd's own)

    from . import _compile, _library  # noqa: F401  (_library defines the operators, loads their kernels)
    from ._compile import keep_kernels
    from ._dtypes import SUPPORTED_DTYPES
    from ._export import decompositions, onnx_translations
    from ._module import VecAdd
    from ._ops import add, add_n

    _compile.register_traced_ways_when_dynamo_loads()  # once every wrapper exists
