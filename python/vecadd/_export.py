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

from ._dtypes import compute_dtype
from ._operators import OPERATORS, Operator

ONNX_EXTRA = "vecadd[onnx]"
# How a schema's non-tensor arguments are annotated for torch.onnx, which reads a translation's
# signature: annotated arguments are ONNX attributes, the others (tensors) graph inputs.
_ONNX_ANNOTATIONS = {"float": float, "float[]?": Sequence[float] | None}


class _Arithmetic(Protocol):
    """The few steps of a weighted sum, as one route writes them."""

    def dtype(self, tensor) -> torch.dtype: ...
    def convert(self, tensor, dtype: torch.dtype): ...
    def scale(self, tensor, weight: float | int, dtype: torch.dtype): ...
    def add(self, total, term): ...
    def copy(self, tensor): ...


def terms(op: Operator, arithmetic: _Arithmetic, args, kwargs) -> tuple[list, list]:
    """A call's tensors and their weights as the kernels take them: each derived exactly, as an
    int, for integer tensors (1 - w for w = 2^60 is not a double's rounding of it); in double
    for floating ones."""
    tensors, weights = op.terms(*args, **kwargs)
    if not arithmetic.dtype(tensors[0]).is_floating_point:
        return op.exact_terms(*args, **kwargs)
    return tensors, weights


def weighted_sum(arithmetic: _Arithmetic, tensors: Sequence, weights: Sequence[float | int]):
    """The kernels' formula (src/kernels/element_math.h): each tensor loaded into the compute
    type, multiplied by its weight (in that type: exact ints from ``terms`` for integers), added
    to the sum in order, the sum stored in the tensors' dtype. A weight of 1 is no
    multiplication, as 1 * x is x exactly."""
    dtype = arithmetic.dtype(tensors[0])
    compute = compute_dtype(dtype)
    total = None
    for tensor, weight in zip(tensors, weights, strict=True):
        term = tensor if compute == dtype else arithmetic.convert(tensor, compute)
        if weight != 1:
            term = arithmetic.scale(term, weight, compute)
        total = term if total is None else arithmetic.add(total, term)
    if compute != dtype:
        return arithmetic.convert(total, dtype)
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

    def convert(self, tensor, dtype):
        return torch.ops.aten._to_copy.default(tensor, dtype=dtype)

    def scale(self, tensor, weight, dtype):
        return torch.ops.aten.mul.Tensor(tensor, weight)

    def add(self, total, term):
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

    def convert(self, tensor, dtype):
        return self.opset.Cast(tensor, to=self.from_torch(dtype))

    def scale(self, tensor, weight, dtype):
        constant = self.ir.tensor(weight, dtype=self.from_torch(dtype))
        return self.opset.Mul(tensor, self.opset.Constant(value=constant))

    def add(self, total, term):
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
