"""Batching rules (torch.vmap) of the vecadd operators, for both builds: a weighted sum is
elementwise, so each batched tensor takes its batch dimension first, padded with size-1
dimensions to the call's rank, and broadcasting does the rest. torch's fallback loops over the
batch for a tensor argument and cannot batch a list of tensors at all."""

from __future__ import annotations

import torch

from ._operators import OPERATORS, Operator


def _register(op: Operator) -> None:
    functional = getattr(torch.ops.vecadd, op.name).default

    def rule(info, in_dims, *args, **kwargs):
        arguments = op.arguments_of(args, kwargs)
        tensors, _ = op.terms(*arguments)
        dims = []  # one per tensor of the sum, in order (keyword arguments are never batched)
        for index, spec in enumerate(op.arguments):
            dim = in_dims[index] if index < len(in_dims) else None
            if spec.type == "Tensor":
                dims.append(dim)
            elif spec.type == "Tensor[]":
                dims.extend(dim if dim is not None else [None] * len(arguments[index]))
        rank = max(t.dim() - (d is not None) for t, d in zip(tensors, dims, strict=True))
        moved = []
        for tensor, dim in zip(tensors, dims, strict=True):
            if dim is not None:
                tensor = tensor.movedim(dim, 0)
                padding = rank - (tensor.dim() - 1)
                tensor = tensor.reshape(tensor.shape[:1] + (1,) * padding + tensor.shape[1:])
            moved.append(tensor)
        positional, keywords = op.split(op.with_tensors(arguments, moved))
        return functional(*positional, **keywords), 0

    torch.library.register_vmap(f"vecadd::{op.name}", rule)


for _operator in OPERATORS:
    _register(_operator)
