"""The private torch names vecadd uses, in one place: each found once, with a fallback or a
worded error where a torch release has moved it, so that such a release breaks this file alone.

Why each is needed: no public API says whether a torch.func transform or a forward-mode AD level
is active (both can make inputs that require no grad need autograd), runs an op below the
Autograd key, gives the keys below it, or calls an overload without its Python frame (a
measurable share of a call on small tensors, docs/portable.md).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator

import torch
import torch.autograd.forward_ad as _forward_ad

try:
    import torch.jit._trace as _jit_trace
except ImportError:  # a torch without TorchScript's tracer: the full Module.__call__ then
    _jit_trace = None

_MOVED = (
    "vecadd: this torch ({version}) no longer has {name}, which vecadd uses to {purpose}; "
    "expected a torch that vecadd supports (torch>=2.10), or a vecadd release that knows this one"
)


def _moved(name: str, purpose: str) -> RuntimeError:
    return RuntimeError(_MOVED.format(version=torch.__version__, name=name, purpose=purpose))


# Whether a torch.func transform is active: what torch.autograd.Function.apply itself asks.
# Without the query, assume one is (the slower way in, which is right either way).
functorch_transforms_active: Callable[[], bool] = getattr(
    torch._C, "_are_functorch_transforms_active", lambda: True
)


class _LevelOpen:
    """Stands for torch.autograd.forward_ad where a torch lacks its innermost level: one is
    assumed open, so that vecadd takes the slower way in, which is right either way."""

    _current_level = 0


# torch.autograd.forward_ad's innermost level (-1 for none), or an open one where it is missing.
forward_ad_levels = _forward_ad if hasattr(_forward_ad, "_current_level") else _LevelOpen


def transforms_or_forward_ad_active() -> bool:
    """Whether a torch.func transform or a forward-mode AD level is active: once per call of
    vecadd.add, so one Python call."""
    return functorch_transforms_active() or forward_ad_levels._current_level >= 0


def has_tangent(tensor: torch.Tensor) -> bool:
    """Whether a tensor carries a forward-mode AD tangent at the current level."""
    return (
        forward_ad_levels._current_level >= 0
        and _forward_ad.unpack_dual(tensor).tangent is not None
    )


def below_autograd() -> contextlib.AbstractContextManager:
    """Dispatches below the Autograd key, as an autograd.Function's forward must run its op."""
    guard = getattr(torch._C, "_AutoDispatchBelowAutograd", None)
    if guard is None:
        raise _moved("torch._C._AutoDispatchBelowAutograd", "run its kernels below autograd")
    return guard()


def keys_after_autograd() -> torch._C.DispatchKeySet:
    """The dispatch keys below Autograd, for an Autograd kernel to redispatch to."""
    keyset = getattr(torch._C, "_after_autograd_keyset", None)
    if keyset is None:
        raise _moved("torch._C._after_autograd_keyset", "redispatch below its autograd kernels")
    return keyset


_call_boxed = getattr(torch._C, "_dispatch_call_boxed", None)
_find_schema = getattr(torch._C, "_dispatch_find_schema_or_throw", None)


def direct_entry(overload: torch._ops.OpOverload) -> Callable:
    """The overload called straight through the dispatcher, positional arguments only: no
    OpOverload frame, no argument parsing against every overload of the packet, no
    __torch_function__ search (the callers pass plain tensors and check LEAN_WAY_BLOCKED). On
    16-element CPU tensors this takes add_n's private overload from 1.9 to 1.6 µs here, the
    two-call torch.add chain's time. Where a torch lacks it: the callable __call__ forwards to."""
    if _call_boxed is None or _find_schema is None:
        return getattr(overload, "_op", overload)
    handle = _find_schema(overload._schema.name, overload._schema.overload_name)
    return functools.partial(_call_boxed, handle)


torch_function_mode_enabled: Callable[[], bool] = getattr(
    torch._C, "_is_torch_function_mode_enabled", lambda: True
)


# Whether vecadd's lean ways (direct_entry's calls) must give way to the public operators: while
# torch.compile or torch.export traces (TRACING: dynamo folds is_dynamo_compiling to True and
# non-strict export sets torch.compiler's flag, the one is_compiling reads after a second frame),
# under a torch.func transform, a forward-mode AD level or a torch function mode, which only the
# public operators' way honours. Expressions over the names below, which vecadd/_lean.py writes
# into each lean way: a function's frame would be a visible share of a small call.
if hasattr(torch.compiler, "is_dynamo_compiling") and hasattr(torch.compiler, "_is_compiling_flag"):
    TRACING = "is_dynamo_compiling() or compiler._is_compiling_flag"
else:  # a torch that moved either name: the public question, one frame dearer
    TRACING = "is_compiling()"
TRACING_NAMES = {
    "is_dynamo_compiling": getattr(torch.compiler, "is_dynamo_compiling", None),
    "compiler": torch.compiler,
    "is_compiling": torch.compiler.is_compiling,
}
LEAN_WAY_BLOCKED = (
    f"{TRACING} or functorch_transforms_active() or forward_ad_levels._current_level >= 0 "
    "or torch_function_mode_enabled()"
)


def _global_module_hooks() -> tuple[dict, ...] | None:
    """torch.nn's global module hooks, the dicts that register_module_*_hook fill in place."""
    module = torch.nn.modules.module
    names = (
        "_global_backward_pre_hooks",
        "_global_backward_hooks",
        "_global_forward_hooks",
        "_global_forward_pre_hooks",
    )
    hooks = tuple(getattr(module, name, None) for name in names)
    return None if any(not isinstance(found, dict) for found in hooks) else hooks


_OWN_HOOKS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")


def _own_hooks_in_instance_dict() -> bool:
    """Whether a module keeps its hook dicts in its __dict__ and Module.compile's callable
    defaults to None on the class, as torch.nn.Module does from torch 2.2 on."""
    own = torch.nn.Module().__dict__
    compiled = getattr(torch.nn.Module, "_compiled_call_impl", False)
    return all(isinstance(own.get(name), dict) for name in _OWN_HOOKS) and compiled is None


_GLOBAL_MODULE_HOOKS = _global_module_hooks()


def _forward_only_never(module: torch.nn.Module) -> bool:
    """Where torch keeps a module's hooks elsewhere or has no trace map to read: the full
    Module.__call__ is right anyway."""
    return False


def _forward_only_from_dicts(module: torch.nn.Module) -> bool:
    """Whether calling this module would run its class's forward and nothing else: no hooks of
    its own or global ones, no Module.compile, no torch.jit tracing, no forward set on it."""
    # Read from the instance dict: nn.Module's __getattr__ makes each attribute read several
    # times dearer, and this runs on every call of a vecadd layer.
    own = module.__dict__
    return not (
        _global_backward_pre
        or _global_backward
        or _global_forward
        or _global_forward_pre
        or own["_forward_hooks"]
        or own["_forward_pre_hooks"]
        or own["_backward_hooks"]
        or own["_backward_pre_hooks"]
        or "_compiled_call_impl" in own  # set there by Module.compile
        or "forward" in own
        # Module.__call__ differs from forward under torch.jit.trace only where trace_module
        # records submodule calls, and then this map is set (Module._slow_forward): far
        # cheaper than asking the tracer's state.
        or _jit_trace._trace_module_map is not None
    )


if (
    _GLOBAL_MODULE_HOOKS is not None
    and _own_hooks_in_instance_dict()
    and hasattr(_jit_trace, "_trace_module_map")
):
    _global_backward_pre, _global_backward, _global_forward, _global_forward_pre = (
        _GLOBAL_MODULE_HOOKS
    )
    module_runs_forward_only = _forward_only_from_dicts
else:
    module_runs_forward_only = _forward_only_never

# What vecadd._C.layer_call asks on every call, the questions of _forward_only_from_dicts in
# its order (the global hook dicts, a module's own hook dicts' names, Module.compile's attribute,
# the tracer's module and its map's name); None where that function is not the one that applies.
MODULE_CALL_QUESTIONS = (
    (_GLOBAL_MODULE_HOOKS, _OWN_HOOKS, "_compiled_call_impl", _jit_trace, "_trace_module_map")
    if module_runs_forward_only is _forward_only_from_dicts
    else None
)


# Marks tensors written in place (a tuple of them), as torch.autograd.graph.increment_version
# does, without that function's frame, isinstance test and tuple: 1,400 instructions of an
# out= call instead of 1,700.
increment_versions: Callable[[tuple], None] = getattr(
    torch._C, "_increment_version", torch.autograd.graph.increment_version
)


class InductorLowerings:
    """Inductor's table of lowerings and what a vecadd lowering asks of the graph being lowered:
    no public API registers a lowering for an operator or tells which nodes it would fuse with
    (docs/compile.md). Built once torch._inductor.lowering has been imported."""

    def __init__(self) -> None:
        from torch._inductor import lowering
        from torch._inductor.virtualized import V

        self.table = lowering.lowerings
        self.fallback_handler = lowering.fallback_handler
        self.needs_realized_inputs = lowering.needs_realized_inputs
        self._graph = V
        aten, prims = torch.ops.aten, torch.ops.prims
        self.add = self.table[aten.add.Tensor]
        self.mul = self.table[aten.mul.Tensor]
        self.clone = self.table[aten.clone.default]
        self.convert = self.table[prims.convert_element_type.default]
        # A tensor put on a device as Inductor puts a CPU scalar beside GPU tensors.
        self.device_put = self.table[prims.device_put.default]

    def current_node(self) -> torch.fx.Node:
        """The FX node whose lowering is running."""
        return self._graph.graph.current_node

    def ahead_of_time(self) -> bool:
        """Whether the graph becomes an AOTInductor package, which other processes run."""
        return bool(self._graph.graph.aot_mode)

    def fuses(self, node: torch.fx.Node) -> bool:
        """Whether Inductor computes this node itself, in a kernel that can take in a pointwise
        neighbour, rather than calling out to a kernel that needs its inputs in memory."""
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
            return False
        lowering = self.table.get(node.target)
        return (
            lowering is not None
            and not getattr(lowering, "_is_fallback_handler", False)
            and node.target not in self.needs_realized_inputs
        )


def inductor_lowerings() -> InductorLowerings:
    try:
        return InductorLowerings()
    except (ImportError, AttributeError, KeyError) as error:
        raise _moved(
            f"Inductor's lowering table ({type(error).__name__}: {error})",
            "let torch.compile fuse its operators",
        ) from None


def dynamo_traces_bound_builtin_methods() -> bool:
    """Whether torch.compile traces a substitute in place of a C++ method bound to an object
    (substitute_in_graph on its descriptor): torch 2.13 does, 2.10 treats the bound method as an
    opaque builtin and breaks the graph."""
    from torch._dynamo.variables import builder

    return hasattr(builder, "bound_builtin_method_descriptor")


# A tag torch.compile's caches put in every key (a public option from torch 2.6 on): graphs
# compiled with vecadd's kernels kept must not be served to calls that fuse them, nor the reverse.
def add_cache_key_tag(tag: str) -> None:
    """Adds tag to torch.compile's cache keys from now on (nothing where a torch lacks them)."""
    config = torch.compiler.config
    if hasattr(config, "cache_key_tag") and tag not in config.cache_key_tag:
        config.cache_key_tag = f"{config.cache_key_tag}{tag}"


@contextlib.contextmanager
def cache_key_tag_patch(tag: str) -> Iterator[None]:
    """Adds tag to the cache keys within the scope. On leaving it takes out that tag alone: a tag
    added inside (the lowerings' own, when the first compile loads Inductor there) stays."""
    config = torch.compiler.config
    if not hasattr(config, "cache_key_tag"):
        yield
        return
    config.cache_key_tag = f"{config.cache_key_tag}{tag}"
    try:
        yield
    finally:
        config.cache_key_tag = config.cache_key_tag.replace(tag, "", 1)


def cpu_kernels_recorded() -> contextlib.AbstractContextManager:
    """Inductor's C++ kernels, compiled in this scope, record themselves for torch.profiler (a
    private option), so that a benchmark can count them; nothing where a torch lacks it."""
    from torch._inductor import config

    if not hasattr(config.cpp, "enable_kernel_profile"):
        return contextlib.nullcontext()
    return config.patch({"cpp.enable_kernel_profile": True})
