"""The vecadd operators: their schemas (one contract for every binding, from the records of
vecadd/_operators.py), the compiled kernels of the binding vecadd/_loader.py chooses, and what is
registered from Python: the fake kernels (every binding) and, for the stable binding, autograd
(the stable ABI has no C++ autograd)."""

from __future__ import annotations

from types import SimpleNamespace

import torch

from ._lean import lean_way
from ._loader import DISPATCHER_ENTRIES, binding_state, cuda_state, held_text, load_operators
from ._operators import OPERATORS
from ._words import typed_error

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


def _through_the_dispatcher() -> SimpleNamespace:
    """A native binding's ways in where it has no vecadd._C (a free-threaded CPython): each
    operator's lean way, its gradients from the public operator's C++ autograd kernel, its
    errors raised by the C++ kernels as they are, or as the kind their first words name where
    the CUDA library's stable-ABI kernels raised them."""

    def public_operator(op, _functional):
        overload, split = getattr(torch.ops.vecadd, op.name).default, op.split

        def with_grad(*arguments):
            positional, keywords = split(arguments)  # add's alpha is keyword-only
            return overload(*positional, **keywords)

        return with_grad

    return SimpleNamespace(
        **{op.name: lean_way(op, typed_error, public_operator) for op in OPERATORS}
    )


# The native binding's entries to each operator (vecadd._C, or the lean ways through the
# dispatcher), None for the stable binding (a library torch loads, its autograd Python's).
native_module = load_operators()
if native_module is DISPATCHER_ENTRIES:
    native_module = _through_the_dispatcher()


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
if cuda_state.loaded is None:
    for _operator in OPERATORS:
        for _name, _ in _operator.registered_names():
            _definitions.impl(_name, _cuda_refusal(_operator.call), "CUDA")

from . import _batching, _fake  # noqa: E402, F401  (registers the vmap rules, fake kernels)
from ._compile import register_when_inductor_loads  # noqa: E402
from ._sharding import register_when_dtensor_loads  # noqa: E402

register_when_dtensor_loads()
register_when_inductor_loads()

if binding_state.name == "stable":
    from . import _autograd  # noqa: F401  (registers autograd)
