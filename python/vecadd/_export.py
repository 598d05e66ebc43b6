"""Routes for models that call vecadd to targets that do not load vecadd's library: a table
that decomposes every operator into core ATen operators (for ExportedProgram.run_decompositions,
and so for ExecuTorch and every other core-ATen consumer), and ONNX translations for
torch.onnx.export(..., dynamo=True). Both are made from the operator records
(vecadd/_operators.py) and write the kernels' formula once, in ``weighted_sum``: each input in
the compute type, weighed, added in order, the sum rounded to the inputs' dtype once.

Only the functional overloads are covered (the public one and its twin without autograd): a
graph that calls an .out overload holds it, after functionalization, inside
``auto_functionalized_v2``, which neither a decomposition table nor torch.onnx's translation
table reaches (docs/deploy.md).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Protocol

import torch

from ._dtypes import compute_dtype, is_integral, promoted
from ._operators import OPERATORS, Operator

ONNX_EXTRA = "vecadd[onnx]"
# How a schema's non-tensor arguments are annotated for torch.onnx, which reads a translation's
# signature: annotated arguments are ONNX attributes, the others (tensors) graph inputs.
_ONNX_ANNOTATIONS = {"float": float, "float[]?": Sequence[float] | None}


class _Arithmetic(Protocol):
    """The few steps of a weighted sum, as one route writes them, and what it knows of the
    tensors."""

    def dtype(self, tensor) -> torch.dtype: ...
    def torch_dtype(self, dtype) -> torch.dtype: ...
    def has_dims(self, tensor) -> bool: ...
    def host_number(self, tensor, device_tensor) -> bool: ...
    def convert(self, tensor, dtype: torch.dtype): ...
    def scale(self, tensor, weight: float | int | complex, dtype: torch.dtype): ...
    def add(self, total, term, dtype: torch.dtype): ...
    def copy(self, tensor): ...


def terms(op: Operator, arithmetic: _Arithmetic, args, kwargs) -> tuple[list, list, torch.dtype]:
    """A call's tensors, their weights as the kernels take them (each derived exactly, as an
    int, for an integer sum: 1 - w for w = 2^60 is not a double's rounding of it; in double or
    complex for floating ones) and the dtype the sum is computed in and returned as (the call's
    `dtype`, or torch's promotion of the tensors as a chain of torch.add)."""
    arguments = op.arguments_of(args, kwargs)
    tensors, weights = op.terms(*arguments)
    common = arguments[-1]  # the schema's last argument: the dtype asked for
    if common is not None and not isinstance(common, torch.dtype):
        common = arithmetic.torch_dtype(common)  # as a route spells a dtype (ONNX's enum)
    if common is None:
        common = promoted([(arithmetic.dtype(t), arithmetic.has_dims(t)) for t in tensors])
    if is_integral(common):
        _, weights = op.exact_terms(*arguments)
        if common == torch.bool:  # a bool sum: a term is kept where its weight is not 0
            weights = [bool(weight) for weight in weights]
    return tensors, weights, common


def reads_as_scalar(arithmetic: _Arithmetic, tensors: Sequence, index: int) -> bool:
    """Whether the kernels read input `index` straight into the compute type, as torch.add reads
    a scalar (src/binding/call_rules.h, read_as_scalar): in a two-input call, an input that is a
    0-dim CPU tensor beside a tensor of another device (on a CPU every input is rounded to the
    common dtype first)."""
    return len(tensors) == 2 and arithmetic.host_number(tensors[index], tensors[1 - index])


def weighted_sum(
    arithmetic: _Arithmetic, tensors: Sequence, weights: Sequence, common: torch.dtype
):
    """The kernels' formula (src/kernels/element_math.h): each tensor converted to the common
    dtype as a cast converts it (a scalar straight to the compute type) and loaded into the
    compute type, multiplied by its weight (in that type: exact ints from ``terms`` for
    integers, a bool for bool), added to the sum in order, the sum stored in the common dtype.
    A weight of 1 is no multiplication, as 1 * x is x exactly."""
    compute = compute_dtype(common)
    total = None
    for index, (tensor, weight) in enumerate(zip(tensors, weights, strict=True)):
        term, dtype = tensor, arithmetic.dtype(tensor)
        if dtype != common and not reads_as_scalar(arithmetic, tensors, index):
            term, dtype = arithmetic.convert(term, common), common
        if dtype != compute:
            term = arithmetic.convert(term, compute)
        if weight != 1:
            term = arithmetic.scale(term, weight, compute)
        total = term if total is None else arithmetic.add(total, term, compute)
    if compute != common:
        return arithmetic.convert(total, common)
    # The operators return new memory, also for one input of weight 1.
    return arithmetic.copy(total) if total is tensors[0] else total


def functional_overloads(op: Operator) -> list:
    """The overloads of an operator that a decomposed or translated graph can hold: the public
    functional one and its twin without autograd."""
    packet = torch.ops.vecadd
    return [getattr(packet, name).default for name, is_out in op.registered_names() if not is_out]


class _Aten(_Arithmetic):
    def dtype(self, tensor):
        return tensor.dtype

    def torch_dtype(self, dtype):
        return dtype

    def has_dims(self, tensor):
        return tensor.dim() > 0

    def host_number(self, tensor, device_tensor):
        """Whether tensor is a 0-dim CPU tensor beside device_tensor's other device."""
        return tensor.dim() == 0 and tensor.device.type == "cpu" != device_tensor.device.type

    def convert(self, tensor, dtype):
        return torch.ops.aten._to_copy.default(tensor, dtype=dtype)

    def scale(self, tensor, weight, dtype):
        return torch.ops.aten.mul.Tensor(tensor, weight)

    def add(self, total, term, dtype):
        return torch.ops.aten.add.Tensor(total, term)

    def copy(self, tensor):
        return torch.ops.aten.clone.default(tensor)


def _decomposition(op: Operator) -> Callable:
    def decompose(*args, **kwargs):
        arithmetic = _Aten()
        return weighted_sum(arithmetic, *terms(op, arithmetic, args, kwargs))

    decompose.__name__ = f"decompose_{op.name}"
    return decompose


def decompositions():
    """torch.export's default decomposition table, with every vecadd operator decomposed into
    core ATen operators (``_to_copy``, ``mul.Tensor``, ``add.Tensor``, ``clone``) that compute
    the kernels' values::

        exported = torch.export.export(model, args)
        portable = exported.run_decompositions(vecadd.decompositions())

    Eager calls, torch.compile and AOTInductor keep vecadd's kernels: only the programs this
    table is given to lose them.
    """
    table = torch.export.default_decompositions()
    for op in OPERATORS:
        for overload in functional_overloads(op):
            table[overload] = _decomposition(op)
    return table


class _Onnx(_Arithmetic):
    """ONNX's standard operators (Cast, Mul, Add, Identity), traced by onnxscript."""

    def __init__(self) -> None:
        import onnx_ir
        import onnx_ir.tensor_adapters
        from onnxscript import opset18

        self.ir, self.opset = onnx_ir, opset18
        self.from_torch = onnx_ir.tensor_adapters.from_torch_dtype
        self.to_torch = onnx_ir.tensor_adapters.to_torch_dtype

    def dtype(self, tensor):
        return self.to_torch(tensor.dtype)

    def torch_dtype(self, dtype):
        return self.to_torch(dtype)

    def has_dims(self, tensor):
        shape = tensor.shape
        return shape is None or len(shape) > 0  # a rank not known: a tensor with dimensions

    def host_number(self, tensor, device_tensor):
        return False  # an ONNX graph holds no devices: each input converts to the common dtype

    def convert(self, tensor, dtype):
        return self.opset.Cast(tensor, to=self.from_torch(dtype))

    def scale(self, tensor, weight, dtype):
        constant = self.opset.Constant(value=self.ir.tensor(weight, dtype=self.from_torch(dtype)))
        if dtype == torch.bool:  # a weighted term of a bool sum is "and"
            return self.opset.And(tensor, constant)
        return self.opset.Mul(tensor, constant)

    def add(self, total, term, dtype):
        if dtype == torch.bool:  # a sum of bools is "or"
            return self.opset.Or(total, term)
        return self.opset.Add(total, term)

    def copy(self, tensor):
        return self.opset.Identity(tensor)


def _onnx_modules_or_error() -> None:
    try:
        import onnx  # noqa: F401  (torch.onnx.export writes the model with it)
        import onnxscript  # noqa: F401
    except ImportError as error:
        raise ModuleNotFoundError(
            f"vecadd.onnx_translations(): the module '{error.name}' is not installed; expected "
            f"onnx and onnxscript, which vecadd's onnx extra installs: pip install '{ONNX_EXTRA}'"
        ) from error


def _onnx_translation(op: Operator) -> Callable:
    def translate(*args, **kwargs):
        arithmetic = _Onnx()
        return weighted_sum(arithmetic, *terms(op, arithmetic, args, kwargs))

    # torch.onnx matches a node's arguments against the translation's signature: the record's.
    signature = inspect.signature(op.terms)
    annotations = {
        argument.name: _ONNX_ANNOTATIONS[argument.type]
        for argument in op.arguments
        if argument.type in _ONNX_ANNOTATIONS
    }
    translate.__signature__ = signature.replace(
        parameters=[
            parameter.replace(annotation=annotations.get(name, inspect.Parameter.empty))
            for name, parameter in signature.parameters.items()
        ],
        return_annotation=inspect.Signature.empty,
    )
    translate.__annotations__ = annotations
    translate.__name__ = translate.__qualname__ = op.name
    return translate


def onnx_translations() -> dict[Callable, Callable]:
    """ONNX translations of every vecadd operator, for torch.onnx's dynamo exporter::

        torch.onnx.export(model, args, dynamo=True,
                          custom_translation_table=vecadd.onnx_translations())

    The ONNX graph holds standard operators only (Cast, Mul, Add; Identity for a copy) that
    compute as the kernels do. Needs onnx and onnxscript: ``pip install 'vecadd[onnx]'``.
    """
    _onnx_modules_or_error()
    return {
        overload: _onnx_translation(op) for op in OPERATORS for overload in functional_overloads(op)
    }
