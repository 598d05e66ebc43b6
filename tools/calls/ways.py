"""The calls whose per-call cost vecadd watches, each beside the torch call it stands in for:
timed by ``vecadd bench --call-cost`` and counted in instructions by
tools/calls/instructions.py (``nox -s calls``), from this one table."""

from __future__ import annotations

from collections.abc import Callable

import torch

# Each row: its name, vecadd's call and torch's, as Python expressions over the names that
# call_scope gives (x, y, z = out; xg, yg require grad, g is their result's gradient;
# layer = vecadd.VecAdd(); compiled_*: torch.compile'd functions of x and y, compiled at their
# first call).
CALLS: dict[str, tuple[str, str]] = {
    "vecadd.add(x, y)": ("vecadd.add(x, y)", "torch.add(x, y)"),
    "vecadd.add(x, y, alpha=2.0)": ("vecadd.add(x, y, alpha=2.0)", "torch.add(x, y, alpha=2.0)"),
    "vecadd.add(x, y, out=z)": ("vecadd.add(x, y, out=z)", "torch.add(x, y, out=z)"),
    "VecAdd()(x, y)": ("layer(x, y)", "torch.add(x, y)"),
    "vecadd.add with grad": ("vecadd.add(xg, yg)", "torch.add(xg, yg)"),
    # A training step's share: the forward and its backward, through autograd's engine.
    "vecadd.add with grad, backward": (
        "vecadd.add(xg, yg).backward(g)",
        "torch.add(xg, yg).backward(g)",
    ),
    "vecadd.add_n([x, y, x]) with grad, backward": (
        "vecadd.add_n([xg, yg, xg]).backward(g)",
        "torch.add(torch.add(xg, yg), xg).backward(g)",
    ),
    "vecadd.add_n([x, y, x])": ("vecadd.add_n([x, y, x])", "torch.add(torch.add(x, y), x)"),
    "vecadd.add_n([x, y, x], out=z)": (
        "vecadd.add_n([x, y, x], out=z)",
        "torch.add(torch.add(x, y), x, out=z)",
    ),
    # Compiled functions that make the same calls: what a compiled model pays per call.
    "compiled vecadd.add(x, y)": ("compiled_add(x, y)", "compiled_torch_add(x, y)"),
    "compiled vecadd.add_n([x, y, x])": ("compiled_add_n(x, y)", "compiled_chain(x, y)"),
}
# The rows without torch.compile: each compiled row costs a compilation per process, and its
# calls run Inductor's kernels, whichever binding vecadd loaded.
UNCOMPILED_CALLS = [name for name in CALLS if not name.startswith("compiled ")]
CALL_ELEMENTS = 16  # small enough that the host's cost per call decides the time


def call_scope(device: torch.device | str = "cpu") -> dict:
    """The names the rows' expressions use, on 16-element float32 tensors of `device`."""
    import vecadd

    scope = {"torch": torch, "vecadd": vecadd, "layer": vecadd.VecAdd()}
    compiled = {
        "compiled_add": lambda x, y: vecadd.add(x, y),
        "compiled_torch_add": lambda x, y: torch.add(x, y),
        "compiled_add_n": lambda x, y: vecadd.add_n([x, y, x]),
        "compiled_chain": lambda x, y: torch.add(torch.add(x, y), x),
    }
    scope |= {name: torch.compile(fn, fullgraph=True) for name, fn in compiled.items()}
    scope |= {name: torch.randn(CALL_ELEMENTS, device=device) for name in ("x", "y", "z")}
    scope["g"] = torch.ones(CALL_ELEMENTS, device=device)
    for name in ("xg", "yg"):
        scope[name] = torch.randn(CALL_ELEMENTS, device=device, requires_grad=True)
    return scope


def call_functions(row: str, scope: dict) -> tuple[Callable[[], object], Callable[[], object]]:
    """vecadd's call and torch's of a row, as functions of no arguments."""
    return tuple(eval(f"lambda: {expression}", scope) for expression in CALLS[row])  # CALLS only
