"""The vecadd operators: their schemas (one contract for both builds, from the records of
vecadd/_operators.py), the compiled kernels of the installed build, and what is registered from
Python: the fake kernels (both builds) and, for the stable build, autograd (the stable ABI has no
C++ autograd)."""

from __future__ import annotations

import torch

from . import _build_config
from ._loader import cuda_state, held_text, load_operators
from ._operators import OPERATORS

_definitions = torch.library.Library("vecadd", "DEF")
for _operator in OPERATORS:
    for _twin in (False, True):
        for _out in (False, True):
            _definitions.define(
                _operator.schema(out=_out, twin=_twin), tags=(torch.Tag.pt2_compliant_tag,)
            )
    # The twins (the same kernels with no autograd kernel in front of them, for the lean paths
    # when nothing needs a gradient: the stable build's autograd is Python, which every call of
    # the public overloads enters) skip the Autograd key rather than entering torch's fallback
    # for ops without one, which checks every input on each call (docs/portable.md).
    for _name, _ in _operator.registered_names()[2:]:
        _definitions.impl(_name, torch.library.fallthrough_kernel, "Autograd")

# vecadd._C for the native build, None for the stable one (a library torch loads).
native_module = load_operators()


def _cuda_refusal(call: str):
    def refuse(*args, **kwargs):
        values = [*args, *kwargs.values()]
        tensors = [t for v in values for t in (v if isinstance(v, (list, tuple)) else [v])]
        device = next((t.device for t in tensors if isinstance(t, torch.Tensor)), None)
        raise RuntimeError(
            f"{call}: no CUDA kernels are loaded, so vecadd cannot run on {device}: "
            f"{cuda_state.why_not} (torch {torch.__version__}, CUDA {torch.version.cuda}; this "
            f"vecadd holds {held_text(cuda_state.libraries)}); expected a vecadd with a CUDA "
            "library for torch's CUDA major (python -m vecadd info lists what was found)"
        )

    return refuse


# Without a CUDA library, CUDA calls get words instead of torch's "could not run" error.
if native_module is None and cuda_state.loaded is None:
    for _operator in OPERATORS:
        for _name, _ in _operator.registered_names():
            _definitions.impl(_name, _cuda_refusal(_operator.call), "CUDA")

from . import _batching, _fake  # noqa: E402, F401  (registers the vmap rules, fake kernels)
from ._compile import register_when_inductor_loads  # noqa: E402
from ._sharding import register_when_dtensor_loads  # noqa: E402

register_when_dtensor_loads()
register_when_inductor_loads()

if _build_config.TORCH_ABI == "stable":
    from . import _autograd  # noqa: F401  (registers autograd)
