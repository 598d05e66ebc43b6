"""vecadd.VecAdd: its call skips Module.__call__'s frames only where that would just run forward."""

from __future__ import annotations

import sys
import warnings

import pytest
import torch

import vecadd
from helpers import make_tensor


def test_alpha_is_kept_as_a_float_and_checked():
    assert vecadd.VecAdd(alpha=2).alpha == 2.0
    assert type(vecadd.VecAdd(alpha=2).alpha) is float
    with pytest.raises(ValueError, match=r"VecAdd\(\): argument 'alpha' is 9007199254740993"):
        vecadd.VecAdd(alpha=2**53 + 1)


def test_alpha_set_after_construction_is_checked_on_each_call(device):
    # The layer's lean way takes a float or an exact int; anything else reaches vecadd.add's
    # checks through Module.__call__.
    layer = vecadd.VecAdd()
    x = make_tensor((5,), torch.float32, device, seed=11)
    y = make_tensor((5,), torch.float32, device, seed=12)
    layer.alpha = 3
    torch.testing.assert_close(layer(x, y), torch.add(x, y, alpha=3))
    layer.alpha = "3"
    with pytest.raises(TypeError) as raised:
        layer(x, y)
    assert str(raised.value) == (
        "vecadd.add(): argument 'alpha' must be a number (bool, int, float or complex), got str"
    )
    layer.alpha = 2 - 1j  # a complex alpha: add's rules, for a real sum refused
    with pytest.raises(TypeError, match=r"argument 'alpha' is \(2-1j\) but x and y have dtype"):
        layer(x, y)
    complex_y = torch.complex(y, -y)
    torch.testing.assert_close(layer(x, complex_y), torch.add(x, complex_y, alpha=2 - 1j))


def test_the_layer_takes_what_vecadd_add_takes(device):
    """VecAdd(alpha=a)(x, y) is vecadd.add(x, y, alpha=a): mixed dtypes, Python numbers and a
    complex alpha for a complex sum."""
    x = make_tensor((5,), torch.float32, device, seed=13)
    half = make_tensor((5,), torch.bfloat16, device, seed=14)
    complex_y = make_tensor((5,), torch.complex64, device, seed=15)
    layer = vecadd.VecAdd(alpha=3)
    for y in (half, 2.5, torch.tensor(-1, dtype=torch.int64)):
        result = layer(x, y)
        assert result.dtype == torch.add(x, y).dtype
        torch.testing.assert_close(result, vecadd.add(x, y, alpha=3), rtol=0, atol=0)
    complex_layer = vecadd.VecAdd(alpha=2 - 1j)
    assert "alpha=(2-1j)" in repr(complex_layer)
    torch.testing.assert_close(
        complex_layer(x, complex_y), vecadd.add(x, complex_y, alpha=2 - 1j), rtol=0, atol=0
    )


def test_hooks_of_the_layer_run(device):
    layer = vecadd.VecAdd(alpha=2.0)
    x = make_tensor((5,), torch.float32, device, seed=1)
    y = make_tensor((5,), torch.float32, device, seed=2)
    seen = []
    pre = layer.register_forward_pre_hook(lambda module, args: (args[0], args[1] * 0))
    post = layer.register_forward_hook(lambda module, args, result: seen.append(result) or -result)
    torch.testing.assert_close(layer(x, y), -x)
    assert len(seen) == 1
    pre.remove()
    post.remove()
    torch.testing.assert_close(layer(x, y), torch.add(x, y, alpha=2.0))
    assert len(seen) == 1


def test_global_hooks_and_backward_hooks_run(device):
    layer = vecadd.VecAdd()
    x = make_tensor((5,), torch.float32, device, seed=3).requires_grad_()
    y = make_tensor((5,), torch.float32, device, seed=4).requires_grad_()
    calls = []
    handle = torch.nn.modules.module.register_module_forward_hook(
        lambda module, args, result: calls.append(type(module).__name__)
    )
    try:
        layer(x, y)
    finally:
        handle.remove()
    assert calls == ["VecAdd"]
    grads = []
    handle = layer.register_full_backward_hook(lambda module, grad_in, grad_out: grads.append(1))
    layer(x, y).sum().backward()
    handle.remove()
    assert grads == [1]
    torch.testing.assert_close(y.grad, torch.ones_like(y))


def test_subclass_inputs_take_module_call(device):
    class Tagged(torch.Tensor):
        pass

    layer = vecadd.VecAdd(alpha=3.0)
    x = make_tensor((4,), torch.float32, device, seed=5)
    y = make_tensor((4,), torch.float32, device, seed=6).as_subclass(Tagged)
    torch.testing.assert_close(
        torch.Tensor(layer(x, y)), torch.add(x, y.as_subclass(torch.Tensor), alpha=3.0)
    )


def test_compiled_module_and_model(device):
    layer = vecadd.VecAdd(alpha=0.5)
    x = make_tensor((6,), torch.float32, device, seed=7)
    y = make_tensor((6,), torch.float32, device, seed=8)
    expected = torch.add(x, y, alpha=0.5)
    layer.compile(fullgraph=True, backend="eager")
    torch.testing.assert_close(layer(x, y), expected)

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.add = vecadd.VecAdd(alpha=0.5)

        def forward(self, x, y):
            return self.add(x, y).relu()

    compiled = torch.compile(Model(), fullgraph=True, backend="eager")
    torch.testing.assert_close(compiled(x, y), expected.relu())


def test_traced_model_keeps_the_layer_as_a_submodule():
    # Under torch.jit.trace the layer takes Module.__call__, which records it as a call of the
    # submodule's forward instead of inlining its ops into the model's graph.
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.add = vecadd.VecAdd(alpha=2.0)

        def forward(self, x, y):
            return self.add(x, y) * 2

    x = make_tensor((4,), torch.float32, "cpu", seed=9)
    y = make_tensor((4,), torch.float32, "cpu", seed=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.jit's deprecation
        traced = torch.jit.trace(Model(), (x, y))
    assert 'prim::CallMethod[name="forward"]' in str(traced.graph)
    torch.testing.assert_close(traced(x, y), torch.add(x, y, alpha=2.0) * 2)


def test_a_plain_call_of_the_layer_runs_no_python(device):
    """With the native binding the layer's __call__ is C++ (vecadd._C.layer_call): a plain call
    runs no Python function at all."""
    if vecadd.VecAdd.__call__ is vecadd._module.CALL_IN_PYTHON:  # decided when Dynamo loads
        pytest.skip("tests the native binding's C++ layer call; this process's is Python")
    layer = vecadd.VecAdd(alpha=2.0)
    x = make_tensor((5,), torch.float32, device, seed=16)
    y = make_tensor((5,), torch.float32, device, seed=17)
    layer(x, y)  # first-call work (lazy imports, caches) out of the count
    called = []

    def profile(frame, event, arg):
        if event == "call":
            called.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        result = layer(x, y)
    finally:
        sys.setprofile(None)
    assert called == []
    torch.testing.assert_close(result, torch.add(x, y, alpha=2.0), rtol=0, atol=0)


def test_a_torch_compile_that_cannot_trace_the_c_call_gets_the_python_one(device):
    """Once torch.compile is loaded, the layer's call is C++ only where it traces the Python
    twin in its place (torch 2.13 on); torch 2.10's would break the graph at it."""
    import torch._dynamo  # vecadd decides the layer call when it loads

    from vecadd import _torch_private

    assert (
        vecadd.VecAdd.__call__ is vecadd._module.CALL_IN_PYTHON
        or _torch_private.dynamo_traces_bound_builtin_methods()
    )
    layer = vecadd.VecAdd(alpha=2.0)
    compiled = torch.compile(layer, fullgraph=True, backend="aot_eager")
    x = make_tensor((5,), torch.float32, device, seed=18)
    y = make_tensor((5,), torch.float32, device, seed=19)
    torch.testing.assert_close(compiled(x, y), torch.add(x, y, alpha=2.0), rtol=0, atol=0)


def test_the_layer_call_answers_as_its_python_twin(device):
    """VecAdd.__call__ (C++ where the native binding has it) and the Python call torch.compile
    traces in its place answer alike: the sum where calling the layer would run forward alone,
    and Module.__call__'s answer where a hook, Module.compile or a missing alpha needs it."""
    twin = vecadd._module.CALL_IN_PYTHON
    x = make_tensor((5,), torch.float32, device, seed=18)
    y = make_tensor((5,), torch.float32, device, seed=19)
    layer = vecadd.VecAdd(alpha=0.5)
    expected = torch.add(x, y, alpha=0.5)

    def both(layer, *args, **kwargs):
        return [call(layer, *args, **kwargs) for call in (twin, vecadd.VecAdd.__call__)]

    for result in both(layer, x, y):
        torch.testing.assert_close(result, expected, rtol=0, atol=0)
    seen = []
    handle = layer.register_forward_pre_hook(lambda module, args: seen.append(len(args)))
    both(layer, x, y)
    handle.remove()
    assert seen == [2, 2]
    handle = torch.nn.modules.module.register_module_forward_hook(
        lambda module, args, result: seen.append(result.shape)
    )
    try:
        both(layer, x, y)
    finally:
        handle.remove()
    assert seen[2:] == [torch.Size([5])] * 2
    compiled = vecadd.VecAdd(alpha=0.5)
    compiled.compile(backend="eager")
    for result in both(compiled, x, y):
        torch.testing.assert_close(result, expected, rtol=0, atol=0)
    del layer.alpha  # a layer without its weight: Module.__call__ words what forward raises
    for call in (twin, vecadd.VecAdd.__call__):
        with pytest.raises(AttributeError, match="alpha"):
            call(layer, x, y)


def test_a_forward_of_a_subclass_or_set_on_the_layer_runs(device):
    """The layer's call skips Module.__call__ only for VecAdd's own forward: a subclass that
    defines another, or a forward set on the layer, runs that forward."""

    class Scaled(vecadd.VecAdd):
        def forward(self, x, y):
            return super().forward(x, y) * 3

    class Named(vecadd.VecAdd):
        def extra_repr(self):
            return "named"

    x = make_tensor((4,), torch.float32, device, seed=20)
    y = make_tensor((4,), torch.float32, device, seed=21)
    expected = torch.add(x, y, alpha=2.0)
    patched = vecadd.VecAdd(alpha=2.0)
    patched.forward = lambda x, y: torch.sub(x, y)
    for call in (vecadd._module.CALL_IN_PYTHON, vecadd.VecAdd.__call__):
        torch.testing.assert_close(call(Scaled(alpha=2.0), x, y), expected * 3)
        torch.testing.assert_close(call(Named(alpha=2.0), x, y), expected)
        torch.testing.assert_close(call(patched, x, y), torch.sub(x, y))


def test_the_layer_call_takes_keywords_and_words_wrong_arguments(device):
    layer = vecadd.VecAdd(alpha=2.0)
    x = make_tensor((4,), torch.float32, device, seed=22)
    y = make_tensor((4,), torch.float32, device, seed=23)
    torch.testing.assert_close(layer(x, y=y), torch.add(x, y, alpha=2.0))
    torch.testing.assert_close(layer(y=y, x=x), torch.add(x, y, alpha=2.0))
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'y'"):
        layer(x)
    with pytest.raises(TypeError, match="positional arguments but 4 were given"):
        layer(x, y, x)
