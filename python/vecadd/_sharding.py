"""How vecadd's operators run on DTensors (torch.distributed.tensor): one sharding rule for every
overload of every operator record (vecadd/_operators.py), registered through DTensor's public
``register_sharding`` when torch.distributed.tensor is first imported.

A weighted sum is pointwise and linear, so on each mesh dimension it accepts: every input
sharded on the same dimension of the broadcast result (an input that is broadcast there, by a
missing or size-1 dimension, replicated), every input ``Partial`` with the same linear reduction
(sum or avg), or every input replicated. Any other mix of placements is redistributed by DTensor
to the cheapest of those. ``out=`` computes through the functional overload and copies into
out's own shards (after a redistribution only where out's placements differ from the result's),
so out keeps its placements. docs/distributed.md has the table.
"""

from __future__ import annotations

import sys
import warnings

import torch

from ._fake import check_out, result_shape
from ._on_import import when_imported
from ._operators import OPERATORS, Operator

DTENSOR_MODULE = "torch.distributed.tensor"
_LINEAR_REDUCTIONS = ("sum", "avg")  # the reductions a weighted sum commutes with


def broadcast_shape(op: Operator, shapes: list) -> tuple:
    """The inputs' broadcast shape; worded as vecadd's own checks word it where they do not
    broadcast (the sharding rule runs before any kernel could say so)."""
    try:
        return tuple(torch.broadcast_shapes(*shapes))
    except RuntimeError:
        result_shape(op, [torch.empty(shape, device="meta") for shape in shapes])
        raise


def weighted_sum_strategies(shapes: list, result: tuple, partial_reductions=()) -> list[tuple]:
    """The placements a weighted sum of tensors of these shapes (broadcast to `result`) accepts
    on one mesh dimension, as (output placements, input placements) pairs: replicated, partial
    with a linear reduction, or sharded on one dimension of the result (a broadcast input
    replicated there)."""
    from torch.distributed.tensor import Partial, Replicate, Shard

    count, ndim = len(shapes), len(result)
    strategies = [([Replicate()], [Replicate()] * count)]
    strategies += [
        ([Partial(reduction)], [Partial(reduction)] * count) for reduction in partial_reductions
    ]
    for dim in range(ndim):
        inputs = []
        for shape in shapes:
            own = dim - (ndim - len(shape))  # the input's dimension aligned with the result's
            # A guarded comparison under torch.compile: sizes are symbolic there.
            aligned = own >= 0 and shape[own] == result[dim]
            inputs.append(Shard(own) if aligned else Replicate())
        strategies.append(([Shard(dim)], inputs))
    return strategies


def _partial_reductions(specs) -> tuple[str, ...]:
    """The Partial reductions to offer: those every input has on each mesh dimension where any
    input is Partial. Where Partial and other placements mix, none: DTensor would make the
    others Partial by dividing them by the mesh size (rounding, and integers turned float)."""
    found = set()
    for on_mesh_dim in zip(*(spec.placements for spec in specs), strict=True):
        reductions = {p.reduce_op if p.is_partial() else None for p in on_mesh_dim}
        if reductions == {None}:
            continue
        if len(reductions) > 1 or not reductions <= set(_LINEAR_REDUCTIONS):
            return ()
        found |= reductions
    return tuple(sorted(found))


def _sharding_rule(op: Operator):
    """register_sharding's callback for a functional overload: it receives the call's arguments
    with each DTensor replaced by its spec, so the record's ``terms`` finds the input specs."""

    def rule(*args, **kwargs):
        specs, _ = op.terms(*args, **kwargs)
        shapes = [tuple(spec.shape) for spec in specs]
        result = broadcast_shape(op, shapes)
        return weighted_sum_strategies(shapes, result, _partial_reductions(specs))

    rule.__name__ = f"{op.name}_sharding"
    return rule


def _out_through_functional(op: Operator, functional):
    """The DTensor rule of an out= overload (public or twin): the functional overload, sharded
    by its rule, then one copy into out's local shard. Copying keeps out's placements, which
    DTensor's own handling of an out= overload could change by redistributing out itself."""
    from torch.distributed.tensor import DTensor

    def dispatch(_mode, _func, _types, args, kwargs):
        kwargs = dict(kwargs)
        if "out" in kwargs:
            out = kwargs.pop("out")
        else:  # the twins take out positionally, last
            *args, out = args
        result = functional(*args, **kwargs)
        if not isinstance(out, DTensor):
            raise TypeError(
                f"{op.call}: out is a {type(out).__name__} but {op.all_inputs} are DTensors; "
                "expected a DTensor out (e.g. torch.distributed.tensor.empty on their mesh)"
            )
        check_out(op, out, result.dtype, result.device, result.shape)
        if out.device_mesh != result.device_mesh:
            raise ValueError(
                f"{op.call}: out is a DTensor on {out.device_mesh} but {op.all_inputs} are on "
                f"{result.device_mesh}; expected out on the same device mesh"
            )
        if tuple(out.placements) != tuple(result.placements):
            result = result.redistribute(out.device_mesh, out.placements)
        with torch.no_grad():  # out's own local shard, not an autograd view of it
            out.to_local().copy_(result.to_local())

    return dispatch


def register_sharding_rules() -> None:
    """Registers the rules of every overload of every operator record with DTensor."""
    from torch.distributed.tensor import DTensor
    from torch.distributed.tensor.experimental import register_sharding

    for op in OPERATORS:
        computes_with = None  # an out= overload's functional twin, registered just before it
        for name, is_out in op.registered_names():
            overload = _overload(name)
            if is_out:
                rule = _out_through_functional(op, computes_with)
                torch.library.register_torch_dispatch(overload, DTensor, rule)
            else:
                register_sharding(overload)(_sharding_rule(op))
                computes_with = overload


def _overload(name: str):
    packet, _, overload = name.partition(".")
    return getattr(getattr(torch.ops.vecadd, packet), overload or "default")


def dtensor_type() -> type | None:
    """DTensor's class where torch.distributed.tensor is loaded; None where no DTensor can exist."""
    module = sys.modules.get(DTENSOR_MODULE)
    return getattr(module, "DTensor", None)


def check_distributed(op: Operator, named_tensors: list[tuple[str, torch.Tensor]]) -> None:
    """A call that mixes DTensors with plain tensors, or DTensors of different meshes, refused
    in the words of vecadd's other checks, naming the arguments (DTensor's own error names
    neither argument nor fix)."""
    dtensor = dtensor_type()
    if dtensor is None:
        return
    distributed = [(name, t) for name, t in named_tensors if isinstance(t, dtensor)]
    if not distributed:
        return
    first_name, first = distributed[0]
    for name, tensor in named_tensors:
        if not isinstance(tensor, dtensor):
            kind = "plain torch.Tensor" if type(tensor) is torch.Tensor else type(tensor).__name__
            raise TypeError(
                f"{op.call}: argument '{name}' is a {kind} but argument "
                f"'{first_name}' is a DTensor; expected DTensors only (make '{name}' one with "
                "torch.distributed.tensor.distribute_tensor or DTensor.from_local)"
            )
        if tensor.device_mesh != first.device_mesh:
            raise ValueError(
                f"{op.call}: argument '{name}' is a DTensor on {tensor.device_mesh} but "
                f"argument '{first_name}' is on {first.device_mesh}; expected every DTensor on "
                "the same device mesh (redistribute one onto the other's mesh)"
            )


def register_sharding_rules_or_warn() -> None:
    # A torch whose DTensor API moved must not make importing torch.distributed.tensor fail.
    try:
        register_sharding_rules()
    except Exception as error:  # any failure: the import itself must succeed
        warnings.warn(
            f"vecadd: could not register its DTensor sharding rules ({type(error).__name__}: "
            f"{error}); vecadd's operators will refuse DTensor arguments under torch "
            f"{torch.__version__}",
            RuntimeWarning,
            stacklevel=2,
        )


def register_when_dtensor_loads() -> None:
    """Registers the rules now if torch.distributed.tensor is loaded, else once it is."""
    if torch.distributed.is_available():
        when_imported(DTENSOR_MODULE, register_sharding_rules_or_warn)
