"""The operator as torch's tooling sees it: schema, opcheck and torch.compile."""

from __future__ import annotations

import pytest
import torch

import vecadd
from helpers import OPCHECK_TESTS, make_tensor, op_error


def test_schemas_are_the_public_contract():
    # alpha is a float in both builds, and a complex alpha's imaginary part another: the stable
    # ABI has no Scalar. dtype: the sum's dtype where a Python number's promotion decides it.
    assert str(torch.ops.vecadd.add.default._schema) == (
        "vecadd::add(Tensor x, Tensor y, *, float alpha=1., float alpha_imag=0., "
        "ScalarType? dtype=None) -> Tensor"
    )
    assert str(torch.ops.vecadd.add.out._schema) == (
        "vecadd::add.out(Tensor x, Tensor y, *, float alpha=1., float alpha_imag=0., "
        "ScalarType? dtype=None, Tensor(a!) out) -> ()"
    )


def test_ops_are_tagged_pt2_compliant():
    assert torch.Tag.pt2_compliant_tag in torch.ops.vecadd.add.default.tags


@pytest.mark.parametrize(
    ("x_shape", "y_shape", "dtype", "alpha", "grad"),
    [
        ((8,), (8,), torch.float32, 1, True),
        ((3, 4), (4,), torch.float64, 2.5, True),
        ((2, 1, 5), (3, 1), torch.float16, -1, False),
        ((6,), (6,), torch.int64, 3, False),
        ((), (), torch.bfloat16, 1, False),
    ],
)
def test_opcheck_functional(device, x_shape, y_shape, dtype, alpha, grad):
    x = make_tensor(x_shape, dtype, device, seed=1).requires_grad_(grad)
    y = make_tensor(y_shape, dtype, device, seed=2).requires_grad_(grad)
    torch.library.opcheck(
        torch.ops.vecadd.add.default, (x, y), {"alpha": alpha}, test_utils=OPCHECK_TESTS
    )


@pytest.mark.parametrize(
    ("x_case", "y_case", "weights", "grad"),
    [
        (((3, 4), torch.float32), ((4,), torch.bfloat16), {"alpha": 2.0}, True),
        (((3, 4), torch.float16), ((), torch.float64), {"alpha": -1.0}, True),
        (((), torch.int64), ((5,), torch.int8), {"alpha": 3.0}, False),
        (
            ((2, 3), torch.complex64),
            ((3,), torch.float32),
            {"alpha": 2.0, "alpha_imag": -1.0},
            True,
        ),
        (((4,), torch.bool), ((4,), torch.bool), {"alpha": 0.0}, False),
        (((4,), torch.int32), ((4,), torch.float32), {"dtype": torch.float64}, True),
    ],
    ids=[
        "float32+bfloat16",
        "float16+0-dim float64",
        "0-dim int64+int8",
        "complex alpha",
        "bool",
        "dtype asked",
    ],
)
def test_opcheck_promoted(device, x_case, y_case, weights, grad):
    (x_shape, x_dtype), (y_shape, y_dtype) = x_case, y_case
    differentiable = (x_dtype.is_floating_point or x_dtype.is_complex) and grad
    x = make_tensor(x_shape, x_dtype, device, seed=1).requires_grad_(differentiable)
    y = make_tensor(y_shape, y_dtype, device, seed=2)
    y = y.requires_grad_(grad and (y_dtype.is_floating_point or y_dtype.is_complex))
    torch.library.opcheck(torch.ops.vecadd.add.default, (x, y), weights, test_utils=OPCHECK_TESTS)


@pytest.mark.parametrize(
    "layouts",
    [
        pytest.param(lambda t: t.t(), id="transposed"),
        pytest.param(lambda t: t.unsqueeze(0).unsqueeze(0).permute(0, 3, 1, 2), id="permuted"),
    ],
)
def test_opcheck_keeps_the_input_layout(device, layouts):
    # The fake and meta results must be laid out like the real one (opcheck compares strides).
    x = layouts(make_tensor((6, 4), torch.float32, device, seed=5)).requires_grad_(True)
    y = layouts(make_tensor((6, 4), torch.float32, device, seed=6)).requires_grad_(True)
    torch.library.opcheck(torch.ops.vecadd.add.default, (x, y), test_utils=OPCHECK_TESTS)
    bias = make_tensor((x.shape[-1],), torch.float32, device, seed=7)
    torch.library.opcheck(torch.ops.vecadd.add.default, (x, bias), test_utils=OPCHECK_TESTS)


def test_fake_and_meta_results_are_channels_last_like_torch_add():
    from torch._subclasses.fake_tensor import FakeTensorMode

    def channels_last_inputs(device):
        activations = torch.empty(2, 8, 3, 5, device=device).to(memory_format=torch.channels_last)
        return activations, torch.empty(8, 1, 1, device=device)

    real = vecadd.add(*channels_last_inputs("cpu"))
    meta = vecadd.add(*channels_last_inputs("meta"))
    with FakeTensorMode():
        fake = vecadd.add(*channels_last_inputs("cpu"))
    expected = torch.add(*channels_last_inputs("cpu")).stride()
    assert real.stride() == meta.stride() == fake.stride() == expected


def test_opcheck_out(device):
    x = make_tensor((3, 5), torch.float32, device, seed=3)
    y = make_tensor((5,), torch.float32, device, seed=4)
    out = torch.empty(3, 5, device=device)
    torch.library.opcheck(
        torch.ops.vecadd.add.out, (x, y), {"alpha": 2, "out": out}, test_utils=OPCHECK_TESTS
    )


def test_fake_tensor_shapes():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        result = vecadd.add(torch.empty(2, 1, 4), torch.empty(3, 1))
    assert result.shape == (2, 3, 4)
    meta = vecadd.add(torch.empty(5, 1, device="meta"), torch.empty(6, device="meta"))
    assert meta.shape == (5, 6)
    assert meta.device.type == "meta"


def test_meta_kernel_checks_like_the_real_one():
    def call(device, y_dtype, **keywords):
        x = torch.ones(2, device=device)
        return torch.ops.vecadd.add(x, torch.ones(2, device=device, dtype=y_dtype), **keywords)

    # A complex alpha for a sum the call asks for in float32.
    with pytest.raises(TypeError) as fake:
        call("meta", torch.complex64, alpha=0.5, alpha_imag=1.0, dtype=torch.float32)
    with pytest.raises(op_error(TypeError)) as real:
        call("cpu", torch.complex64, alpha=0.5, alpha_imag=1.0, dtype=torch.float32)
    # The stable ABI's RuntimeError starts with the kind's name.
    assert str(real.value).removeprefix("TypeError: ") == str(fake.value)
    with pytest.raises(TypeError, match=r"argument 'alpha' is \(0.5\+1j\) but x and y sum in "):
        call("meta", torch.float16, alpha=0.5, alpha_imag=1.0)
    # Taken: promoted as torch.add promotes, or computed in the dtype the call asks for.
    assert call("meta", torch.float16).dtype == torch.float32
    assert call("meta", torch.float16, dtype=torch.float64).dtype == torch.float64
    assert call("cpu", torch.float16, dtype=torch.float64).dtype == torch.float64


def _count_graph_breaks(function, *args):
    torch._dynamo.reset()
    explanation = torch._dynamo.explain(function)(*args)
    return explanation.graph_break_count, explanation.graph_count


def test_compile_fullgraph_dynamic(device):
    def model(x, y):
        return vecadd.add(x.sin(), y, alpha=2).cos()

    compiled = torch.compile(model, fullgraph=True, dynamic=True, backend="aot_eager")
    for n in (5, 17, 64):
        x = make_tensor((n, 3), torch.float32, device, seed=n)
        y = make_tensor((3,), torch.float32, device, seed=n + 1)
        torch.testing.assert_close(compiled(x, y), model(x, y))
    breaks, graphs = _count_graph_breaks(model, x, y)
    assert (breaks, graphs) == (0, 1)


def test_compile_keeps_transposed_and_channels_last_layouts(device):
    compiled = torch.compile(
        lambda x, y: vecadd.add(x, y, alpha=2), fullgraph=True, dynamic=True, backend="aot_eager"
    )
    for rows, columns in ((6, 4), (10, 3)):
        transposed = make_tensor((rows, columns), torch.float32, device, seed=rows).t()
        activations = make_tensor((2, rows, 3, columns), torch.float32, device, seed=columns)
        activations = activations.to(memory_format=torch.channels_last)
        bias = make_tensor((rows, 1, 1), torch.float32, device, seed=rows + columns)
        for x, y in ((transposed, transposed), (activations, bias)):
            result = compiled(x, y)
            expected = torch.add(x, y, alpha=2)
            torch.testing.assert_close(result, expected)
            assert result.stride() == expected.stride()


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(lambda x, a: (x, x * 2), id="same_shape"),
        pytest.param(lambda x, a: (x, a[0]), id="broadcast_row"),
        pytest.param(lambda x, a: (x.t(), x.t()), id="transposed"),
    ],
)
def test_compile_with_data_dependent_sizes(device, case):
    # The number of rows is only known when the graph runs (nonzero), so tracing must not
    # ask whether it equals 1 or another size.
    def model(mask, a):
        return vecadd.add(*case(a[mask.nonzero().squeeze(1)], a), alpha=2)

    def reference(mask, a):
        return torch.add(*case(a[mask.nonzero().squeeze(1)], a), alpha=2)

    mask = torch.tensor([True, False, True, True, False], device=device)
    a = make_tensor((5, 4), torch.float32, device, seed=9)
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        torch._dynamo.reset()
        compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
        result = compiled(mask, a)
    expected = reference(mask, a)
    torch.testing.assert_close(result, expected, rtol=0, atol=0)
    assert result.stride() == expected.stride()


def test_compile_module_with_backward(device):
    layer = vecadd.VecAdd(alpha=3)
    compiled = torch.compile(layer, fullgraph=True, dynamic=True, backend="aot_eager")
    x = make_tensor((7, 2), torch.float64, device, seed=5).requires_grad_()
    y = make_tensor((2,), torch.float64, device, seed=6).requires_grad_()
    compiled(x, y).sum().backward()
    torch.testing.assert_close(x.grad, torch.ones_like(x))
    torch.testing.assert_close(y.grad, torch.full_like(y, 7 * 3))


def test_compile_out_variant(device):
    def model(x, y, out):
        vecadd.add(x, y, out=out)
        return out * 2

    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    x = make_tensor((4,), torch.float32, device, seed=7)
    y = make_tensor((4,), torch.float32, device, seed=8)
    out = torch.empty(4, device=device)
    torch.testing.assert_close(compiled(x, y, out), (x + y) * 2)
    torch.testing.assert_close(out, x + y)


def test_opcheck_the_kernels_without_autograd(device):
    # vecadd.add's way in when nothing needs a gradient: the same kernels and fake kernel.
    x = make_tensor((3, 4), torch.float32, device, seed=8)
    y = make_tensor((4,), torch.float32, device, seed=9)
    torch.library.opcheck(
        torch.ops.vecadd._add_without_autograd.default,
        (x, y, 2.0),
        test_utils=("test_schema", "test_faketensor", "test_aot_dispatch_static"),
    )
    torch.testing.assert_close(
        torch.ops.vecadd._add_without_autograd(x, y, 2.0), torch.add(x, y, alpha=2)
    )


def test_opcheck_the_out_kernels_without_autograd(device):
    # The twins take the record's arguments alone: mixed dtypes and out= of another dtype, yes;
    # a complex alpha or a dtype goes through the public operator.
    x = make_tensor((3, 4), torch.float32, device, seed=10)
    y = make_tensor((4,), torch.float32, device, seed=11)
    out = torch.empty(3, 4, device=device)
    half = y.to(torch.bfloat16)
    wide = torch.empty(3, 4, dtype=torch.float64, device=device)
    for arguments in ((x, y, 2.0, out), (x, half, 2.0, wide)):
        torch.library.opcheck(
            torch.ops.vecadd._add_out_without_autograd.default,
            arguments,
            test_utils=("test_schema", "test_faketensor", "test_aot_dispatch_static"),
        )
    torch.ops.vecadd._add_out_without_autograd(x, y, 2.0, out)
    torch.testing.assert_close(out, torch.add(x, y, alpha=2))
    torch.ops.vecadd._add_out_without_autograd(x, half, 2.0, wide)
    torch.testing.assert_close(wide, torch.add(x, half, alpha=2).double(), rtol=0, atol=0)
    complex_x = torch.complex(x, -x)
    complex_out = torch.empty(3, 4, dtype=torch.complex64, device=device)
    torch.ops.vecadd.add.out(complex_x, y, alpha=2.0, alpha_imag=-1.0, out=complex_out)
    torch.testing.assert_close(complex_out, torch.add(complex_x, y, alpha=2 - 1j))


def _called_targets(graph: torch.fx.Graph) -> set[str]:
    return {str(node.target) for node in graph.nodes if node.op == "call_function"}


# Each way in whose lean path must stay out of traced graphs: (the call's maker, the public op).
TRACED_WAYS = {
    "add": (lambda: lambda a, b: vecadd.add(a, b, alpha=2), "vecadd.add.default"),
    "add_n": (lambda: lambda a, b: vecadd.add_n([a, b, a], [1, 2, 3]), "vecadd.add_n.default"),
    "VecAdd": (lambda: vecadd.VecAdd(alpha=2), "vecadd.add.default"),
}


@pytest.mark.parametrize("way", TRACED_WAYS)
@pytest.mark.parametrize("requires_grad", [False, True], ids=["no_grad", "grad"])
def test_traced_graphs_hold_the_public_op(device, requires_grad, way):
    # The lean eager ways (the build's private ops, one autograd.Function, the native build's
    # C++ entries) must not reach a graph that torch.compile or torch.export hands on: other
    # tools know vecadd's public ops.
    make_call, public = TRACED_WAYS[way]

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.call = make_call()

        def forward(self, x, y):
            return self.call(x, y)

    x = make_tensor((4, 3), torch.float32, device, seed=1).requires_grad_(requires_grad)
    y = make_tensor((3,), torch.float32, device, seed=2).requires_grad_(requires_grad)
    captured = []

    def keep_graph(graph_module, example_inputs):
        captured.append(graph_module.graph)
        return graph_module.forward

    class WithConstants(torch.nn.Module):
        # Tensors that are neither parameters nor buffers stay plain tensors under
        # torch.export's non-strict tracing.
        def __init__(self):
            super().__init__()
            self.call = make_call()
            self.bias = make_tensor((3,), torch.float32, device, seed=3)
            self.scale = make_tensor((3,), torch.float32, device, seed=4)

        def forward(self, x):
            return x * self.call(self.bias, self.scale)

    torch._dynamo.reset()
    torch.compile(Model(), fullgraph=True, backend=keep_graph)(x, y)
    graphs = {"torch.compile": captured[0]}
    for strict in (True, False):
        exported = torch.export.export(Model(), (x, y), strict=strict)
        graphs[f"torch.export(strict={strict})"] = exported.graph
        with_constants = torch.export.export(WithConstants(), (x,), strict=strict)
        graphs[f"torch.export(strict={strict}), tensor constants"] = with_constants.graph
    for traced_by, graph in graphs.items():
        targets = _called_targets(graph)
        assert public in targets, (traced_by, targets)
        assert not any("_without_autograd" in target for target in targets), (traced_by, targets)
        assert not any("Function" in target or "autograd" in target for target in targets), (
            traced_by,
            targets,
        )
