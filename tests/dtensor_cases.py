"""What tests/test_dtensor.py runs on every rank of a process group (tests/ranks.py): vecadd's
operators on DTensors of every placement, against torch on the full tensors."""

from __future__ import annotations

import itertools
import random

import torch
import torch.distributed as dist
from torch.distributed.tensor import (
    DTensor,
    Partial,
    Replicate,
    Shard,
    distribute_tensor,
    init_device_mesh,
)
from torch.distributed.tensor.debug import CommDebugMode

import vecadd
from vecadd._operators import OPERATORS

_MESHES: dict = {}


def mesh_of(device: str, shape: tuple[int, ...]):
    """One mesh per shape and process: each new mesh would make new process groups."""
    if (device, shape) not in _MESHES:
        names = ("dp", "tp")[-len(shape) :]
        _MESHES[device, shape] = init_device_mesh(device, shape, mesh_dim_names=names)
    return _MESHES[device, shape]


def placements_of(ndim: int) -> list:
    """Every placement a tensor of ndim dimensions can have on one mesh dimension."""
    return [Shard(d) for d in range(ndim)] + [Replicate(), Partial("sum")]


def distributed(tensor: torch.Tensor, mesh, placements) -> DTensor:
    """The full tensor with these placements. Partial: on each partial mesh dimension the
    first rank holds the value less the others' parts, the others a random part."""
    laid = [Replicate() if p.is_partial() else p for p in placements]
    local = distribute_tensor(tensor, mesh, laid).to_local()
    generator = torch.Generator().manual_seed(7)  # the same parts on every rank
    for mesh_dim, placement in enumerate(placements):
        if not placement.is_partial():
            continue
        part = torch.randint(-9, 9, local.shape, generator=generator).to(local)
        others = mesh.size(mesh_dim) - 1
        local = local - others * part if mesh.get_local_rank(mesh_dim) == 0 else part
    return DTensor.from_local(local, mesh, placements, shape=tensor.shape, stride=tensor.stride())


def global_inputs(shapes, dtype, device, seed=0) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)  # the same on every rank
    if dtype.is_floating_point:
        made = [torch.randn(s, generator=generator, dtype=dtype) for s in shapes]
    else:
        made = [torch.randint(-50, 50, s, generator=generator, dtype=dtype) for s in shapes]
    return [t.to(device) for t in made]


def expected_output(placements_per_input, shapes) -> tuple | None:
    """The output placements the rules promise without communication, per mesh dimension, or
    None where the placements must be redistributed first (DTensor chooses how)."""
    result = torch.broadcast_shapes(*shapes)
    expected = []
    for on_mesh_dim in zip(*placements_per_input, strict=True):
        if all(p == Replicate() for p in on_mesh_dim):
            expected.append(Replicate())
        elif all(p == Partial("sum") for p in on_mesh_dim):
            expected.append(Partial("sum"))
        else:
            dims = set()
            for placement, shape in zip(on_mesh_dim, shapes, strict=True):
                offset = len(result) - len(shape)
                if isinstance(placement, Shard):
                    dims.add(placement.dim + offset)
            if len(dims) != 1:
                return None
            (dim,) = dims
            for placement, shape in zip(on_mesh_dim, shapes, strict=True):
                own = dim - (len(result) - len(shape))
                broadcast_here = own < 0 or (shape[own] == 1 and result[dim] != 1)
                if placement == Replicate() and broadcast_here:
                    continue
                if placement != Shard(own) or broadcast_here:
                    return None
            expected.append(Shard(dim))
    return tuple(expected)


def _check_close(actual: torch.Tensor, expected: torch.Tensor, what: str) -> None:
    torch.testing.assert_close(actual, expected, msg=lambda m: f"{what}: {m}")


def _call(op: str, inputs, weights, out=None):
    if op == "add":
        return vecadd.add(*inputs, alpha=weights[1], out=out)
    return vecadd.add_n(inputs, weights, out=out)


def _reference(inputs, weights):
    total = inputs[0] * weights[0] if weights[0] != 1 else inputs[0]
    for tensor, weight in zip(inputs[1:], weights[1:], strict=True):
        total = torch.add(total, tensor, alpha=weight)
    return total


def placement_table(op, mesh_shape, shapes, dtype_name, device="cpu", sample=None, seed=0):
    """op on every combination of the inputs' placements (or `sample` of them): values against
    torch on the full tensors; where the rules promise it, the output placements and no
    collective. Returns (input placements, output placements, collectives) per case."""
    dtype = getattr(torch, dtype_name)
    mesh = mesh_of(device, mesh_shape)
    inputs = global_inputs(shapes, dtype, device, seed)
    weights = (
        [1.0, 2.0, -3.0][: len(shapes)] if dtype.is_floating_point else [1, 2, -3][: len(shapes)]
    )
    if op == "add":
        weights = [1.0, weights[1]]
    expected_value = _reference(inputs, weights)
    per_input = [list(itertools.product(placements_of(len(s)), repeat=mesh.ndim)) for s in shapes]
    cases = list(itertools.product(*per_input))
    if sample is not None and sample < len(cases):
        cases = random.Random(seed).sample(cases, sample)
    rows = []
    for case in cases:
        dtensors = [distributed(t, mesh, p) for t, p in zip(inputs, case, strict=True)]
        with CommDebugMode() as comms:
            result = _call(op, dtensors, weights)
        collectives = comms.get_total_counts()
        what = f"{op} of {shapes} placed {case}"
        assert isinstance(result, DTensor), what
        assert result.dtype == dtype, f"{what}: {result.dtype}"
        _check_close(result.full_tensor(), expected_value, what)
        promised = expected_output(case, shapes)
        if promised is not None:
            assert tuple(result.placements) == promised, f"{what}: {result.placements}"
            assert collectives == 0, f"{what}: {collectives} collectives"
        rows.append((case, tuple(result.placements), collectives))
    return rows


def out_keeps_placements(op, mesh_shape, device="cpu"):
    """out= on DTensors writes out's own shards and keeps its placements: no collective where
    they are the result's, a redistribution of the result where they are not."""
    mesh = mesh_of(device, mesh_shape)
    shapes = [(4, 6), (6,), (4, 6)] if op == "add_n" else [(4, 6), (6,)]
    inputs = global_inputs(shapes, torch.float64, device)
    weights = [1.0, 0.5, 2.0][: len(shapes)]
    expected = _reference(inputs, weights)
    found = []
    for input_placement, out_placement in [(Shard(0), Shard(0)), (Shard(0), Replicate())]:
        placements = [[input_placement] * mesh.ndim] + [[Replicate()] * mesh.ndim] * (
            len(shapes) - 1
        )
        if op == "add_n":  # the third input, full size, sharded like the first
            placements[2] = [input_placement] * mesh.ndim
        dtensors = [distributed(t, mesh, p) for t, p in zip(inputs, placements, strict=True)]
        out = distributed(
            torch.zeros(4, 6, dtype=torch.float64, device=device), mesh, [out_placement] * mesh.ndim
        )
        local = out.to_local()
        with CommDebugMode() as comms:
            returned = _call(op, dtensors, weights, out=out)
        assert returned is out, "out= returns out"
        assert tuple(out.placements) == (out_placement,) * mesh.ndim, out.placements
        assert out.to_local().data_ptr() == local.data_ptr(), "out's own shard was written"
        _check_close(out.full_tensor(), expected, f"{op} out={out_placement}")
        found.append((input_placement, out_placement, comms.get_total_counts()))
    return found


def backward_matches_torch(mesh_shape, device="cpu"):
    """Gradients through vecadd on DTensors: torch.add's placements and values."""
    mesh = mesh_of(device, mesh_shape)
    rows = []
    for shapes, placements in [
        ([(4, 6), (4, 6)], [Shard(0), Shard(0)]),
        ([(4, 6), (6,)], [Shard(0), Replicate()]),
        ([(4, 6), (6,)], [Shard(1), Shard(0)]),
        ([(4, 6), (4, 1)], [Shard(1), Replicate()]),
        ([(4, 6), (4, 6)], [Partial(), Partial()]),
        ([(4, 6), (4, 6)], [Shard(0), Shard(1)]),
    ]:
        inputs = global_inputs(shapes, torch.float64, device)
        upstream = global_inputs([torch.broadcast_shapes(*shapes)], torch.float64, device, 1)[0]
        grads = {}
        for name, function in [
            ("vecadd", lambda a, b: vecadd.add(a, b, alpha=-2.5)),
            ("vecadd.add_n", lambda a, b: vecadd.add_n([a, b], [1.0, -2.5])),
            ("torch", lambda a, b: torch.add(a, b, alpha=-2.5)),
        ]:
            leaves = [
                distributed(t, mesh, [p] * mesh.ndim).requires_grad_()
                for t, p in zip(inputs, placements, strict=True)
            ]
            result = function(*leaves)
            # The same incoming gradient for both (torch.add's output may be placed otherwise).
            seed = distributed(upstream, mesh, [Replicate()] * mesh.ndim)
            result.backward(seed)
            grads[name] = [
                (tuple(leaf.grad.placements), leaf.grad.full_tensor()) for leaf in leaves
            ]
        for name in ("vecadd", "vecadd.add_n"):
            for (ours, our_value), (theirs, their_value) in zip(
                grads[name], grads["torch"], strict=True
            ):
                assert ours == theirs, (
                    f"{name} {shapes} {placements}: grad placed {ours}, torch.add's {theirs}"
                )
                _check_close(our_value, their_value, f"{name} grad {shapes} {placements}")
        rows.append((shapes, placements, [p for p, _ in grads["vecadd"]]))
    return rows


def compiled_matches_eager(mesh_shape, device="cpu"):
    """torch.compile(fullgraph=True) of a function on DTensors that calls vecadd."""
    torch._dynamo.reset()
    mesh = mesh_of(device, mesh_shape)
    x, y, w = global_inputs([(8, 6), (6,), (8, 6)], torch.float32, device)
    dx = distributed(x, mesh, [Shard(0)] * mesh.ndim)
    dy = distributed(y, mesh, [Replicate()] * mesh.ndim)
    dw = distributed(w, mesh, [Shard(0)] * mesh.ndim)
    layer = vecadd.VecAdd(alpha=0.5)

    def step(a, b, c):
        return vecadd.add_n([layer(a, b).relu(), c, b], [1.0, -1.0, 2.0]) * 3

    compiled = torch.compile(step, fullgraph=True)
    result, eager = compiled(dx, dy, dw), step(dx, dy, dw)
    assert tuple(result.placements) == tuple(eager.placements), (
        result.placements,
        eager.placements,
    )
    _check_close(result.full_tensor(), eager.full_tensor(), "compiled")
    dx.requires_grad_()
    compiled(dx, dy, dw).sum().backward()
    gradient = dx.grad.full_tensor()
    _check_close(gradient, torch.where(x + 0.5 * y > 0, 3.0, 0.0), "compiled gradient")
    return tuple(result.placements)


def _compare(name, ours, theirs) -> tuple:
    result, expected = ours(), theirs()
    assert isinstance(result, DTensor), name
    assert result.dtype == expected.dtype, f"{name}: {result.dtype}, torch {expected.dtype}"
    _check_close(result.full_tensor(), expected, name)
    return name, result.dtype, tuple(result.placements)


def promotes_like_torch(mesh_shape, device="cpu"):
    """DTensors of different dtypes promote as torch.add promotes them; out= of a wider dtype
    is cast into."""
    mesh = mesh_of(device, mesh_shape)
    sharded = [Shard(0)] * mesh.ndim
    x, y, w = global_inputs([(4, 6), (6,), (4, 6)], torch.float32, device)
    half, wide = y.to(torch.bfloat16), w.to(torch.float64)
    dx = distributed(x, mesh, sharded)
    dhalf = distributed(half, mesh, [Replicate()] * mesh.ndim)
    dwide = distributed(wide, mesh, sharded)
    rows = [
        _compare(name, ours, theirs)
        for name, ours, theirs in [
            ("float32 + bfloat16", lambda: vecadd.add(dx, dhalf, alpha=2), lambda: x + 2 * half),
            ("bfloat16 + float32", lambda: vecadd.add(dhalf, dx), lambda: half + x),
            (
                "add_n of float32, bfloat16, float64",
                lambda: vecadd.add_n([dx, dhalf, dwide], [1.0, -2.0, 0.5]),
                lambda: x - 2 * half + 0.5 * wide,
            ),
        ]
    ]
    out = distributed(torch.zeros(4, 6, dtype=torch.float64, device=device), mesh, sharded)
    assert vecadd.add(dx, dhalf, out=out) is out
    _check_close(out.full_tensor(), (x + half).to(torch.float64), "out= of float64")
    return rows


def numbers_beside_dtensors(mesh_shape, device="cpu"):
    """A Python number beside a DTensor, as torch.add takes one."""
    mesh = mesh_of(device, mesh_shape)
    (x,) = global_inputs([(4, 6)], torch.float32, device)
    dx = distributed(x, mesh, [Shard(0)] * mesh.ndim)
    return [
        _compare(name, ours, theirs)
        for name, ours, theirs in [
            ("float32 + a Python float", lambda: vecadd.add(dx, 2.5), lambda: x + 2.5),
            ("a Python int - float32", lambda: vecadd.add(3, dx, alpha=-1), lambda: 3 - x),
        ]
    ]


def refusals(device="cpu"):
    """A DTensor with a plain tensor, or DTensors of two meshes: an error naming the operator
    and the argument, on every rank, with no collective left waiting."""
    world = dist.get_world_size()
    line = mesh_of(device, (world,))
    square = mesh_of(device, (2, world // 2))
    x, y = global_inputs([(4, 6), (4, 6)], torch.float32, device)
    dx = distribute_tensor(x, line, [Shard(0)])
    other = distribute_tensor(y, square, [Shard(0), Replicate()])
    messages = []
    for call in [
        lambda: vecadd.add(dx, y),
        lambda: vecadd.add(x, dx),
        lambda: vecadd.add_n([dx, dx, y]),
        lambda: vecadd.add(dx, dx, out=torch.empty(4, 6, device=device)),
        lambda: vecadd.add(dx, other),
        lambda: vecadd.add_n([dx, other]),
        lambda: vecadd.VecAdd()(dx, y),
    ]:
        try:
            call()
        except (TypeError, ValueError) as error:
            messages.append(str(error))
        else:
            raise AssertionError("a mixed call was not refused")
    dist.barrier()  # every rank is here: nothing waits
    return messages


def every_overload(device="cpu"):
    """Each record's overloads on DTensors sharded across the ranks."""
    mesh = mesh_of(device, (dist.get_world_size(),))
    called = []
    for op in OPERATORS:
        made = global_inputs([(4, 6), (6,), (4, 6)], torch.float64, device)
        arguments = []
        for argument in op.arguments:
            kind = argument.type
            if kind == "Tensor":
                arguments.append(made.pop())
            elif kind == "Tensor[]":
                arguments.append(list(made))
            elif kind == "float":
                arguments.append(-1.5)
            elif kind == "float[]?":
                arguments.append([0.5, -1.5, 2.0])
        called += overloads_on_dtensors(op, tuple(arguments), mesh)
    return called


def overloads_on_dtensors(op, arguments: tuple, mesh) -> list[str]:
    """Every overload of one record on DTensors (the full-size inputs sharded on their first
    dimension, the others replicated), called as torch.ops would be (the twins positionally,
    out last): values against torch on the full tensors."""
    tensors, weights = op.terms(*arguments)
    expected = _reference(tensors, weights)
    dtensors = [
        distributed(t, mesh, [Shard(0) if t.shape == expected.shape else Replicate()] * mesh.ndim)
        for t in tensors
    ]
    on_mesh = op.with_tensors(arguments, dtensors)
    positional, keywords = op.split(on_mesh)
    called = []
    for name, is_out in op.registered_names():
        packet, _, overload = name.partition(".")
        function = getattr(getattr(torch.ops.vecadd, packet), overload or "default")
        twin = name.startswith("_")
        if is_out:
            out = distributed(torch.empty_like(expected), mesh, [Shard(0)] * mesh.ndim)
            if twin:
                function(*on_mesh, out)  # a twin takes the record's arguments alone
            else:
                function(*positional, **keywords, out=out)
            result = out
        else:
            result = function(*on_mesh) if twin else function(*positional, **keywords)
        assert isinstance(result, DTensor), name
        _check_close(result.full_tensor(), expected, f"torch.ops.vecadd.{name}")
        called.append(name)
    return called
