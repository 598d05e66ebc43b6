"""Models that call vecadd leave torch without vecadd's library: decomposed into core ATen
operators (vecadd.decompositions()), translated to ONNX and run in ONNX Runtime
(vecadd.onnx_translations()), and, where ExecuTorch is installed, run from a .pte program; each
against eager vecadd, with broadcasting and a dynamic batch dimension. Eager calls and
torch.compile within vecadd.keep_kernels() keep vecadd's kernels."""

from __future__ import annotations

import dataclasses
import inspect
import operator
import re
import subprocess
import sys

import pytest
import torch

import vecadd
from helpers import ROOT, make_tensor
from vecadd._operators import ADD

BATCHES = (1, 7)
ONNX_DTYPES = [torch.float32, torch.float16, torch.float64, torch.int32, torch.int64]
# Integer tensors take integral weights; floats take some that float32 rounds (0.1).
WEIGHTS = {True: (0.1, [1.0, -2.0, 0.25]), False: (3, [1, -2, 5])}


class Block(torch.nn.Module):
    """A skip connection through VecAdd and a mix of three tensors through add_n, with x
    (batch, 3, 4) and y (3, 1) broadcasting against each other."""

    def __init__(self, floating: bool) -> None:
        super().__init__()
        alpha, self.weights = WEIGHTS[floating]
        self.skip = vecadd.VecAdd(alpha=alpha)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return vecadd.add_n([self.skip(x, y), x, y], weights=self.weights)


def operands(dtype: torch.dtype, batch: int, seed: int = 0):
    return make_tensor((batch, 3, 4), dtype, "cpu", seed=seed), make_tensor(
        (3, 1), dtype, "cpu", seed=seed + 1
    )


def exported(dtype: torch.dtype) -> tuple[Block, torch.export.ExportedProgram]:
    model = Block(dtype.is_floating_point)
    batch = torch.export.Dim("batch", min=1, max=1024)
    program = torch.export.export(model, operands(dtype, 5), dynamic_shapes=({0: batch}, None))
    return model, program


def called(graph: torch.fx.Graph) -> set:
    return {node.target for node in graph.nodes if node.op == "call_function"}


@pytest.mark.parametrize("dtype", vecadd.SUPPORTED_DTYPES, ids=str)
def test_decomposed_program_holds_core_aten_only_and_matches_eager(dtype):
    model, program = exported(dtype)
    assert {torch.ops.vecadd.add.default, torch.ops.vecadd.add_n.default} <= called(program.graph)
    decomposed = program.run_decompositions(vecadd.decompositions())
    targets = called(decomposed.graph) - {operator.getitem}
    assert targets, "the decomposed program computes nothing"
    not_core = [str(t) for t in targets if torch.Tag.core not in t.tags]
    assert not not_core, f"not core ATen: {not_core}"
    for batch in BATCHES:
        x, y = operands(dtype, batch, seed=batch)
        result, expected = decomposed.module()(x, y), model(x, y)
        assert result.dtype == dtype
        # The same formula in the same compute type: the same bits as the kernels.
        torch.testing.assert_close(result, expected, rtol=0, atol=0)


def test_decomposition_covers_the_private_twins():
    class Twins(torch.nn.Module):
        def forward(self, x, y):
            total = torch.ops.vecadd._add_without_autograd(x, y, 2.0)
            return torch.ops.vecadd._add_n_without_autograd([total, y], [0.5, 3.0])

    x, y = operands(torch.float32, 3)
    program = torch.export.export(Twins(), (x, y))
    assert torch.ops.vecadd._add_without_autograd.default in called(program.graph)
    decomposed = program.run_decompositions(vecadd.decompositions())
    assert all(t.namespace == "aten" for t in called(decomposed.graph))
    torch.testing.assert_close(decomposed.module()(x, y), Twins()(x, y), rtol=0, atol=0)


class Mixed(torch.nn.Module):
    """A float32 stream, a bfloat16 branch, a 0-dim float64 tensor, a Python number and an int32
    bias: torch.add's promotion at each step."""

    def forward(self, x, branch, scale, bias):
        total = vecadd.add(x, branch)  # float32
        total = vecadd.add_n([total, bias, scale], [1.0, 2.0, 0.5])  # float32 (scale is 0-dim)
        return vecadd.add(total, 3.0, alpha=0.25), vecadd.add(bias, 2)  # float32, int32


def mixed_operands(seed: int = 0):
    return (
        make_tensor((4, 6), torch.float32, "cpu", seed=seed),
        make_tensor((6,), torch.bfloat16, "cpu", seed=seed + 1),
        torch.tensor(0.75, dtype=torch.float64),
        make_tensor((4, 1), torch.int32, "cpu", seed=seed + 2, low=-9, high=9),
    )


def test_a_program_of_mixed_dtypes_and_numbers_decomposes_with_eagers_dtypes_and_values():
    operands_ = mixed_operands()
    program = torch.export.export(Mixed(), operands_)
    decomposed = program.run_decompositions(vecadd.decompositions())
    not_core = [str(t) for t in called(decomposed.graph) - {operator.getitem}]
    assert not [t for t in not_core if not t.startswith("aten.")], not_core
    for seed in (0, 5):
        inputs = mixed_operands(seed)
        results, expected = decomposed.module()(*inputs), Mixed()(*inputs)
        assert [r.dtype for r in results] == [torch.float32, torch.int32]
        for result, eager in zip(results, expected, strict=True):
            assert result.dtype == eager.dtype
            # Weights whose products are exact: the kernels' values, bit for bit.
            torch.testing.assert_close(result, eager, rtol=0, atol=0)


def test_onnx_model_of_mixed_dtypes_casts_as_the_kernels_do():
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")

    class Residual(torch.nn.Module):
        def forward(self, x, branch):
            return vecadd.add(x, branch, alpha=0.5)

    x, branch = make_tensor((4, 6), torch.float32, "cpu"), make_tensor((6,), torch.float16, "cpu")
    onnx_program = torch.onnx.export(
        Residual(), (x, branch), dynamo=True, custom_translation_table=vecadd.onnx_translations()
    )
    proto = onnx_program.model_proto
    assert "Cast" in {node.op_type for node in proto.graph.node}
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    (result,) = session.run(None, {"x": x.numpy(), "branch": branch.numpy()})
    expected = Residual()(x, branch)
    assert result.dtype == expected.numpy().dtype
    torch.testing.assert_close(torch.from_numpy(result), expected)


def test_sixteen_bit_floats_are_summed_in_float32_and_rounded_once():
    # 2048 + 1 + 1 in float16 step by step is 2048 (each 2049 rounds to even); vecadd's sum,
    # rounded once, is 2050.
    class Sum(torch.nn.Module):
        def forward(self, x, y, z):
            return vecadd.add_n([x, y, z])

    x, y = torch.full((2,), 2048.0, dtype=torch.float16), torch.ones(2, dtype=torch.float16)
    assert Sum()(x, y, y).tolist() == [2050.0, 2050.0]
    program = torch.export.export(Sum(), (x, y, y))
    decomposed = program.run_decompositions(vecadd.decompositions())
    assert decomposed.module()(x, y, y).tolist() == [2050.0, 2050.0]


def test_the_default_table_eager_calls_and_kept_kernels_keep_vecadds_kernels():
    vecadd.decompositions()
    assert not {op for op in torch.export.default_decompositions() if op.namespace == "vecadd"}
    model, program = exported(torch.float32)
    assert torch.ops.vecadd.add_n.default in called(program.run_decompositions().graph)
    x, y = operands(torch.float32, 2)
    compiled = torch.compile(model, fullgraph=True)
    with vecadd.keep_kernels():  # torch.compile fuses the operators otherwise (test_compile.py)
        compiled(x, y)  # compiles outside the profile
        for run in (model, compiled):
            with torch.profiler.profile(
                activities=[torch.profiler.ProfilerActivity.CPU]
            ) as profile:
                result = run(x, y)
            names = {event.name for event in profile.events()}
            # The public overload (the native build's eager entry) or its private twin (the
            # portable build's lean way, and kept kernels in compiled graphs): vecadd's kernels.
            assert names & {"vecadd::add_n", "vecadd::_add_n_without_autograd"}, (run, names)
            assert not names & {"aten::mul", "aten::_to_copy"}, (run, sorted(names))
            torch.testing.assert_close(result, model(x, y), rtol=0, atol=0)
    # Eager calls follow vecadd's own rules, not a decomposition's: torch.add's promotion...
    promoted = model(x, y.double())
    assert promoted.dtype == torch.float64
    torch.testing.assert_close(promoted, model(x.double(), y.double()), rtol=0, atol=0)
    # ...and its refusals, in its words (a decomposition would multiply by 0.1 regardless).
    with pytest.raises(
        TypeError, match=r"argument 'alpha' is 0\.1\d* but x and y have dtype torch.int64"
    ):
        model(x.long(), y.long())


def test_a_new_record_gets_its_decomposition_and_translation_with_no_code():
    # docs/adding-an-operator.md's third operator, x - alpha * y, as a record alone.
    from vecadd._export import _decomposition, _onnx_translation
    from vecadd._operators import Argument, Weight

    sub = dataclasses.replace(
        ADD, name="sub", weights=(Weight("alpha", 1, scale=-1),), summary="x - alpha * y"
    )
    x, y = operands(torch.float16, 3)
    expected = (x.float() - 2.5 * y.float()).half()  # in float32, rounded once
    torch.testing.assert_close(_decomposition(sub)(x, y, alpha=2.5), expected, rtol=0, atol=0)
    # A weight derived from an argument is exact for integers: (1 - w) * x + w * y is x + w * (y
    # - x) exactly, where a double's 1 - 2^60 would lose the 1.
    lerp = dataclasses.replace(
        ADD,
        name="lerp",
        arguments=(*ADD.arguments[:2], Argument("weight", "float")),
        weights=(Weight("weight", 0, scale=-1, offset=1), Weight("weight", 1)),
    )
    ones = torch.ones(3, dtype=torch.int64)
    decomposed = _decomposition(lerp)(ones, 3 * ones, float(2**60))
    assert decomposed.tolist() == [1 + 2 * 2**60] * 3
    # torch.onnx reads the translation's signature: the schema's arguments in order, the
    # tensors unannotated (graph inputs), alpha a float attribute.
    parameters = inspect.signature(_onnx_translation(sub)).parameters
    assert list(parameters) == [argument.name for argument in sub.schema_arguments]
    assert list(parameters) == ["x", "y", "alpha", "alpha_imag", "dtype"]
    assert [parameters[name].annotation for name in ("x", "y", "alpha")] == [
        inspect.Parameter.empty,
        inspect.Parameter.empty,
        float,
    ]


# ---------------------------------------------------------------- ONNX


def test_onnx_translations_cover_every_functional_overload():
    pytest.importorskip("onnxscript")
    from vecadd._export import functional_overloads
    from vecadd._operators import OPERATORS

    translations = vecadd.onnx_translations()
    assert set(translations) == {o for op in OPERATORS for o in functional_overloads(op)}
    assert torch.ops.vecadd._add_n_without_autograd.default in translations


def test_onnx_translations_without_the_extra_name_it(monkeypatch):
    for module in ("onnx", "onnxscript"):
        monkeypatch.setitem(sys.modules, module, None)  # its import fails as if not installed
    with pytest.raises(ModuleNotFoundError, match=r"'onnx' .*pip install 'vecadd\[onnx\]'"):
        vecadd.onnx_translations()


@pytest.mark.parametrize("dtype", ONNX_DTYPES, ids=str)
def test_onnx_model_runs_in_onnx_runtime_like_eager(dtype):
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx_ir.tensor_adapters import from_torch_dtype

    model = Block(dtype.is_floating_point).eval()
    batch = torch.export.Dim("batch", min=1, max=1024)
    onnx_program = torch.onnx.export(
        model,
        operands(dtype, 5),
        dynamo=True,
        custom_translation_table=vecadd.onnx_translations(),
        dynamic_shapes=({0: batch}, None),
        verbose=False,
    )
    proto = onnx_program.model_proto
    onnx.checker.check_model(proto, full_check=True)
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param, "a dynamic batch"
    nodes = list(proto.graph.node)
    assert {n.domain for n in nodes} == {""}, "standard ONNX operators only"
    assert {n.op_type for n in nodes} <= {"Cast", "Mul", "Add", "Identity"}
    # The kernels' compute type: float32 for float16, the dtype itself otherwise.
    wanted = from_torch_dtype(vecadd._dtypes.compute_dtype(dtype))
    for node in onnx_program.model.graph:
        if node.op_type in ("Mul", "Add"):
            assert node.outputs[0].dtype == wanted, node
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch_size in BATCHES:
        x, y = operands(dtype, batch_size, seed=batch_size)
        (result,) = session.run(None, {"x": x.numpy(), "y": y.numpy()})
        expected = model(x, y)
        assert result.shape == tuple(expected.shape)
        torch.testing.assert_close(torch.from_numpy(result), expected)


class OutBlock(torch.nn.Module):
    """vecadd's operators with out=, into buffers the model makes."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        skip = torch.zeros(x.shape, dtype=x.dtype)
        vecadd.add(x, y, alpha=0.5, out=skip)
        mixed = torch.zeros(x.shape, dtype=x.dtype)
        return vecadd.add_n([skip, x, y], [1.0, 2.0, -1.0], out=mixed)


def test_out_is_exported_as_the_functional_operator_and_a_copy():
    """A mutating custom operator would reach the routes only wrapped in auto_functionalized."""
    x, y = operands(torch.float32, 5)
    program = torch.export.export(OutBlock(), (x, y))
    targets = called(program.graph)
    assert {torch.ops.vecadd.add.default, torch.ops.vecadd.add_n.default} <= targets
    assert not {torch.ops.vecadd.add.out, torch.ops.vecadd.add_n.out} & targets
    decomposed = program.run_decompositions(vecadd.decompositions())
    not_core = [str(t) for t in called(decomposed.graph) if torch.Tag.core not in t.tags]
    assert not not_core, f"not core ATen: {not_core}"
    torch.testing.assert_close(decomposed.module()(x, y), OutBlock()(x, y), rtol=0, atol=0)
    with pytest.raises(ValueError, match=r"vecadd\.add\(\): out has shape \[3, 4\]; expected"):
        torch.export.export(_WrongOut(), (x, y))


class _WrongOut(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty(3, 4)
        vecadd.add(x, y, out=out)  # copy_ would broadcast; vecadd refuses as in eager
        return out


def test_onnx_model_with_out_runs_like_eager():
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    x, y = operands(torch.float32, 5)
    onnx_program = torch.onnx.export(
        OutBlock(), (x, y), dynamo=True, custom_translation_table=vecadd.onnx_translations()
    )
    proto = onnx_program.model_proto
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    (result,) = session.run(None, {"x": x.numpy(), "y": y.numpy()})
    torch.testing.assert_close(torch.from_numpy(result), OutBlock()(x, y))


# ---------------------------------------------------------------- ExecuTorch


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64], ids=str)
def test_executorch_program_runs_like_eager(dtype, tmp_path):
    exir = pytest.importorskip("executorch.exir")
    runtime = pytest.importorskip("executorch.runtime")
    model, program = exported(dtype)
    edge = exir.to_edge(program.run_decompositions(vecadd.decompositions()))
    path = tmp_path / "block.pte"
    path.write_bytes(edge.to_executorch().buffer)
    method = runtime.Runtime.get().load_program(path).load_method("forward")
    for batch in BATCHES:
        x, y = operands(dtype, batch, seed=batch)
        (result,) = method.execute([x, y])
        torch.testing.assert_close(result, model(x, y), rtol=0, atol=0)


# ---------------------------------------------------------------- docs/deploy.md

MODEL_BLOCK, *ROUTE_BLOCKS = re.findall(
    r"^```python\n(.*?)^```", (ROOT / "docs" / "deploy.md").read_text(), re.M | re.S
)
# What a block of the guide needs beyond torch and vecadd, by what it calls.
NEEDS = {"onnx_translations": ("onnxscript", "onnxruntime"), "executorch": ("executorch",)}


@pytest.mark.parametrize(
    "block", ROUTE_BLOCKS, ids=lambda b: next((w for w in NEEDS if w in b), "decompositions")
)
def test_deploy_guide_blocks_run(block, tmp_path):
    for word, modules in NEEDS.items():
        if word in block:
            for module in modules:
                pytest.importorskip(module)
    ran = subprocess.run(
        [sys.executable, "-c", MODEL_BLOCK + block],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr
