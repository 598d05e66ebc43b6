"""The vecadd operators: their schemas (one contract for both builds), the compiled kernels of
the installed build, and what is registered from Python: the fake kernels (both builds) and,
for the stable build, autograd (the stable ABI has no C++ autograd)."""

from __future__ import annotations

import torch

from . import _build_config
from ._loader import load_operators

# alpha is a float: the stable ABI has no Scalar in schemas (vecadd.add checks that an int
# alpha survives the conversion).
ADD_SCHEMA = "add(Tensor x, Tensor y, *, float alpha=1) -> Tensor"
ADD_OUT_SCHEMA = "add.out(Tensor x, Tensor y, *, float alpha=1, Tensor(a!) out) -> ()"
# The same kernels with no autograd kernel in front of them, for vecadd.add when nothing needs
# a gradient: the stable build's autograd is Python, which every call of vecadd::add enters.
ADD_WITHOUT_AUTOGRAD_SCHEMA = "_add_without_autograd(Tensor x, Tensor y, float alpha) -> Tensor"
ADD_OUT_WITHOUT_AUTOGRAD_SCHEMA = (
    "_add_out_without_autograd(Tensor x, Tensor y, float alpha, Tensor(a!) out) -> ()"
)

_definitions = torch.library.Library("vecadd", "DEF")
_definitions.define(ADD_SCHEMA, tags=(torch.Tag.pt2_compliant_tag,))
_definitions.define(ADD_OUT_SCHEMA, tags=(torch.Tag.pt2_compliant_tag,))
_definitions.define(ADD_WITHOUT_AUTOGRAD_SCHEMA, tags=(torch.Tag.pt2_compliant_tag,))
_definitions.define(ADD_OUT_WITHOUT_AUTOGRAD_SCHEMA, tags=(torch.Tag.pt2_compliant_tag,))

# No autograd kernel: the dispatcher skips the Autograd key rather than entering torch's
# fallback for ops without one, which checks every input on each call (docs/portable.md).
for _name in ("_add_without_autograd", "_add_out_without_autograd"):
    _definitions.impl(_name, torch.library.fallthrough_kernel, "Autograd")

# vecadd._C for the native build, None for the stable one (a library torch loads).
native_module = load_operators()

from . import _fake  # noqa: E402, F401  (registers the fake kernels)

if _build_config.TORCH_ABI == "stable":
    from . import _autograd  # noqa: F401  (registers autograd)
