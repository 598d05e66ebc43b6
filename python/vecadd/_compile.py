"""vecadd's operators under torch.compile: Inductor fuses each one with its neighbours, or calls
vecadd's kernel where that is faster (docs/compile.md).

Every functional overload of every operator record (vecadd/_operators.py) gets an Inductor
lowering, registered once torch._inductor.lowering is imported. It writes the record's weighted
sum (vecadd/_export.py's ``weighted_sum``, the kernels' formula) in Inductor's own operations,
which Inductor fuses into the kernels around it, unless the sum has nothing to fuse with: then
one kernel or the other is the only pass over memory either way, and vecadd's is ahead on a
GPU once the operands outgrow its L2 cache several times over. torch.export and eager calls
never see these lowerings: exported programs keep calling ``torch.ops.vecadd.*``.

``keep_kernels()`` makes the lowerings call vecadd's kernels in every graph compiled in its
scope.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path

import torch

from . import _torch_private as private
from ._export import functional_overloads, terms, weighted_sum
from ._on_import import when_imported
from ._operators import OPERATORS, Operator

INDUCTOR_LOWERING_MODULE = "torch._inductor.lowering"
DYNAMO_MODULE = "torch._dynamo"
# Put in torch.compile's cache keys while kernels are kept.
_KEPT_TAG = "+vecadd-kernels"
# The files whose code a lowered graph holds: the records and the formula written from them.
_LOWERING_SOURCES = ("_operators.py", "_export.py", "_compile.py")


def lowering_fingerprint() -> str:
    """vecadd's version and a digest of the code its lowerings write into compiled graphs:
    Inductor's on-disk caches key a graph by torch's code, not a lowering's, so without it a
    graph compiled by another build of vecadd could be served."""
    from . import _build_config

    digest = hashlib.sha256()
    for name in _LOWERING_SOURCES:
        digest.update((Path(__file__).parent / name).read_bytes())
    return f"+vecadd-{_build_config.VERSION}-{digest.hexdigest()[:16]}"


# How many keep_kernels() scopes are open: graphs compiled now keep vecadd's kernels when any
# is. The Python face reads it while torch.compile traces (so that a compiled function compiles
# anew on the other side of the switch), and the lowerings read it.
kept_scopes = 0
_kept_lock = threading.Lock()


def kernels_kept() -> int:
    """How many keep_kernels() scopes are open; what torch.compile traces reads it here, so that
    the count is one of the compiled function's guards."""
    return kept_scopes


@contextlib.contextmanager
def keep_kernels() -> Iterator[None]:
    """Graphs that torch.compile compiles inside this scope call vecadd's kernels for vecadd's
    operators instead of fusing them into Inductor's kernels::

        with vecadd.keep_kernels():
            compiled(x)  # torch.compile compiles at the first call: make it here

    The switch is read when a graph is compiled: a graph compiled outside the scope keeps
    fusing inside it, except that a call of vecadd's Python functions or layers inside a
    compiled function makes that function compile anew on the other side of the switch.
    """
    global kept_scopes
    with _kept_lock:
        kept_scopes += 1
    try:
        with private.cache_key_tag_patch(_KEPT_TAG):
            yield
    finally:
        with _kept_lock:
            kept_scopes -= 1


# How many L2 caches' worth of bytes a sum alone must move before vecadd's kernel runs it: its
# operator call costs the host more than a Triton launch (5 µs a call on the H100's host at 64
# MiB, one L2 and a quarter, docs/compile.md), which only a kernel that outlasts the compiled
# call's host work hides; at 512 MiB and more it ran 0.1-0.7 % ahead of Inductor's.
KERNEL_MIN_L2_CACHES = 4


def _large_on_gpu(result: torch.Tensor, inputs: int) -> bool:
    """Whether a sum moves KERNEL_MIN_L2_CACHES times the bytes the GPU's L2 cache holds, where
    vecadd's kernel streams faster than Inductor's and its call's host cost is hidden."""
    if result.device.type != "cuda" or not isinstance(result.numel(), int):
        return False
    moved = (inputs + 1) * result.numel() * result.element_size()
    l2 = torch.cuda.get_device_properties(result.device).L2_cache_size
    return moved >= KERNEL_MIN_L2_CACHES * l2


class _InductorArithmetic:
    """weighted_sum's steps as Inductor's lowerings of the aten operations (vecadd/_export.py
    writes the same steps for decompositions and ONNX)."""

    def __init__(self, inductor: private.InductorLowerings) -> None:
        self._inductor = inductor
        self._put_on_device: set[int] = set()  # ids of CPU numbers put beside GPU tensors

    def numbers_on_device(self, tensors: list) -> list:
        """tensors with each 0-dim CPU tensor beside tensors of another device put on theirs,
        as Inductor's own lowerings put a CPU scalar (a constant is made anew there): its kernels
        take no CPU tensor. Each is still read as the scalar it was (host_number)."""
        device = next((t.get_device() for t in tensors if t.get_device().type != "cpu"), None)
        if device is None:
            return tensors
        moved = []
        for tensor in tensors:
            if not tensor.get_size() and tensor.get_device().type == "cpu":
                tensor = self._inductor.device_put(tensor, device)
                self._put_on_device.add(id(tensor))
            moved.append(tensor)
        return moved

    def dtype(self, tensor):
        return tensor.get_dtype()

    def torch_dtype(self, dtype):
        return dtype

    def has_dims(self, tensor):
        return len(tensor.get_size()) > 0

    def host_number(self, tensor, device_tensor):
        """Whether tensor is a 0-dim CPU tensor beside device_tensor's other device, or one that
        numbers_on_device put on that device."""
        if id(tensor) in self._put_on_device:
            return True
        device = tensor.get_device().type
        return not tensor.get_size() and device == "cpu" != device_tensor.get_device().type

    def convert(self, tensor, dtype):
        return self._inductor.convert(tensor, dtype)

    def scale(self, tensor, weight, dtype):
        return self._inductor.mul(tensor, weight)

    def add(self, total, term, dtype):
        return self._inductor.add(total, term)

    def copy(self, tensor):
        return self._inductor.clone(tensor)


def _lowering(op: Operator, overload, inductor: private.InductorLowerings):
    kernel_in_process = functional_overloads(op)[-1]  # the twin: no autograd kernel to enter

    def kernel_is_faster(node, inputs: int) -> bool:
        """Whether the sum stands alone (no neighbour Inductor would fuse it with) and is large
        enough on a GPU for vecadd's kernel to beat Inductor's."""
        if any(inductor.fuses(n) for n in (*node.all_input_nodes, *node.users)):
            return False
        result = node.meta.get("val")
        return isinstance(result, torch.Tensor) and _large_on_gpu(result, inputs)

    def lower(*args, **kwargs):
        arguments = op.arguments_of(args, kwargs)
        arithmetic = _InductorArithmetic(inductor)  # per call: it keeps the numbers it moved
        tensors, weights, common = terms(op, arithmetic, arguments, {})
        if (
            not common.is_complex  # Inductor's own kernels take no complex sum
            and not kept_scopes
            and not kernel_is_faster(inductor.current_node(), len(tensors))
        ):
            tensors = arithmetic.numbers_on_device(list(tensors))
            return weighted_sum(arithmetic, tensors, weights, common)
        record, rest = arguments[: len(op.arguments)], arguments[len(op.arguments) :]
        plain = all(value in (0.0, None) for value in rest)  # no complex weight, no dtype asked
        if inductor.ahead_of_time() or not plain:
            # A package run by other processes calls the public operator, the one vecadd
            # promises; so does a call the twin cannot make (it takes the record's arguments).
            positional, keywords = op.split(arguments)
            return inductor.fallback_handler(overload, add_to_fallback_set=False)(
                *positional, **keywords
            )
        # The twin takes the record's arguments, positionally.
        return inductor.fallback_handler(kernel_in_process, add_to_fallback_set=False)(*record)

    lower.__name__ = f"lower_{overload._schema.name.split('::')[1]}"
    return lower


def register_lowerings() -> None:
    """Gives Inductor a lowering for every functional overload of every operator."""
    try:
        inductor = private.inductor_lowerings()
    except RuntimeError as error:
        # torch.compile still works: Inductor then calls vecadd's kernels, unfused.
        warnings.warn(f"{error}; compiled graphs call its kernels", RuntimeWarning, stacklevel=2)
        return
    for op in OPERATORS:
        for overload in functional_overloads(op):
            inductor.table[overload] = _lowering(op, overload, inductor)
    private.add_cache_key_tag(lowering_fingerprint())


def register_when_inductor_loads() -> None:
    when_imported(INDUCTOR_LOWERING_MODULE, register_lowerings)


def _trace_the_traced_ways() -> None:
    # Imported by now: vecadd/__init__.py registers after the wrappers and the layer exist.
    from . import _module, _ops

    for op in OPERATORS:
        wrapper = getattr(_ops, op.name, None)
        try:
            torch.compiler.substitute_in_graph(wrapper)(_ops.TRACED_WAYS[op.name])
        except (TypeError, ValueError) as error:
            # torch.compile then traces the wrapper itself: the same graph, more guards per call.
            warnings.warn(
                f"vecadd.{op.name}: torch.compile cannot trace its traced way ({error}); it "
                "traces the wrapper, at a higher cost per compiled call",
                RuntimeWarning,
                stacklevel=2,
            )
    if _module.VecAdd.__call__ is not _module.CALL_IN_PYTHON:
        if private.dynamo_traces_bound_builtin_methods():
            # The layer's C++ call, which torch.compile cannot enter, traced as its Python twin.
            torch.compiler.substitute_in_graph(_module.VecAdd.__call__)(_module.CALL_IN_PYTHON)
        else:
            # This torch.compile would stop at the C++ call: the Python twin takes its place.
            _module.VecAdd.__call__ = _module.CALL_IN_PYTHON


def register_traced_ways_when_dynamo_loads() -> None:
    """torch.compile traces each operator's traced way (vecadd/_lean.py) where a compiled
    function calls its wrapper (vecadd.add, ...), from the moment torch._dynamo is imported."""
    when_imported(DYNAMO_MODULE, _trace_the_traced_ways)
