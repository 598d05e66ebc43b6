"""The vecadd operators: their schemas (one contract for both builds), the compiled kernels of
the installed build, and what is registered from Python: the fake kernels (both builds) and,
for the stable build, autograd (the stable ABI has no C++ autograd)."""

from __future__ import annotations

import torch

from . import _build_config
from ._loader import cuda_state, held_text, load_operators

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


def _refuse_cuda(*args, **kwargs):
    device = next(
        (a.device for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)), None
    )
    raise RuntimeError(
        f"vecadd.add(): no CUDA kernels are loaded, so vecadd cannot run on {device}: "
        f"{cuda_state.why_not} (torch {torch.__version__}, CUDA {torch.version.cuda}; this vecadd "
        f"holds {held_text(cuda_state.libraries)}); expected a vecadd with a CUDA library for "
        "torch's CUDA major (python -m vecadd info lists what was found)"
    )


# Without a CUDA library, CUDA calls get words instead of torch's "could not run" error.
if native_module is None and cuda_state.loaded is None:
    for _name in ("add", "add.out", "_add_without_autograd", "_add_out_without_autograd"):
        _definitions.impl(_name, _refuse_cuda, "CUDA")

from . import _fake  # noqa: E402, F401  (registers the fake kernels)

if _build_config.TORCH_ABI == "stable":
    from . import _autograd  # noqa: F401  (registers autograd)
