"""vecadd's operators under torch.compile (docs/compile.md): Inductor fuses them with their
neighbours into its own kernels, with eager's values, unless keep_kernels() is open; compiled
training matches eager; torch.export keeps the operators whatever Inductor does."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
import torch

import vecadd
from helpers import make_tensor
from vecadd import _compile
from vecadd.bench.compiled import BLOCKS, kernels_per_call
from vecadd.bench.training import stack, training_step, with_vecadd

# The kernels' own operators, public or private: what a call of vecadd's kernels records.
VECADD_EVENTS = (
    "vecadd::add",
    "vecadd::add_n",
    "vecadd::_add_without_autograd",
    "vecadd::_add_n_without_autograd",
)


@pytest.fixture(autouse=True)
def fresh_compiles(monkeypatch):
    # Caches could serve a graph compiled before a change to vecadd, or by another test.
    monkeypatch.setenv("TORCHINDUCTOR_FX_GRAPH_CACHE", "0")
    monkeypatch.setenv("TORCHINDUCTOR_AUTOGRAD_CACHE", "0")
    torch.compiler.reset()
    yield
    torch.compiler.reset()


def vecadd_events(function, *args) -> list[str]:
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        function(*args)
    return [event.name for event in profile.events() if event.name in VECADD_EVENTS]


def operands(name: str, device: str, dtype=torch.float32) -> list[torch.Tensor]:
    return BLOCKS[name][2]((64, 48), dtype, device)


@pytest.mark.parametrize("name", [name for name in BLOCKS if "alone" not in name])
def test_compiled_blocks_fuse_vecadds_operators_and_give_eager_values(name, device):
    theirs, ours, _ = BLOCKS[name]
    inputs = operands(name, device)
    compiled = torch.compile(ours, fullgraph=True)
    torch.testing.assert_close(compiled(*inputs), ours(*inputs))
    assert vecadd_events(compiled, *inputs) == []  # no call of vecadd's kernels is left
    # As many kernels as the block written with torch's operators: the add is fused in.
    reference = torch.compile(theirs, fullgraph=True)
    reference(*inputs)
    assert kernels_per_call(lambda: compiled(*inputs), torch.device(device)) == kernels_per_call(
        lambda: reference(*inputs), torch.device(device)
    )


def _weights(dtype: torch.dtype) -> tuple[list, complex | float | int]:
    """add_n's weights and add's alpha for a sum of dtype: integral for integer and bool sums,
    fractional for floating ones, complex for complex ones."""
    if dtype.is_complex:
        return [0.5j, -3.0, 1.25 - 1j], 2 - 0.5j
    if dtype.is_floating_point:
        return [0.5, -3.0, 1.25], 2
    return [2, -3, 1], 2


@pytest.mark.parametrize("dtype", vecadd.SUPPORTED_DTYPES, ids=str)
def test_the_fused_sum_computes_the_kernels_values(dtype, device):
    # A producer and a consumer around each operator, so that Inductor fuses it; broadcast
    # shapes, weights other than 1, every dtype (16-bit floats summed in float32, rounded once).
    weights, alpha = _weights(dtype)

    def block(x, y, z):
        total = vecadd.add_n([x * 1, y, z], weights)
        return vecadd.add(total, y, alpha=alpha) * 1

    x = make_tensor((5, 1, 7), dtype, device, seed=1, low=-9, high=9)
    y = make_tensor((4, 7), dtype, device, seed=2, low=-9, high=9)
    z = make_tensor((7,), dtype, device, seed=3, low=-9, high=9)
    compiled = torch.compile(block, fullgraph=True)
    got = compiled(x, y, z)
    if dtype.is_complex:
        # Inductor's kernels take no complex sums: the lowering calls vecadd's (vecadd/_compile.py),
        # through the public operators, as the twins take real weights alone.
        assert vecadd_events(compiled, x, y, z) == ["vecadd::add_n", "vecadd::add"]
    else:
        assert vecadd_events(compiled, x, y, z) == []
    expected = block(x, y, z)  # eager: vecadd's kernels
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    if dtype in (torch.float16, torch.bfloat16):
        # Fused, add_n's sum reaches add in float32, unrounded: as torch's own operations do
        # under Inductor. One rounding of the largest sum here (|total| < 64) at most.
        rounding = torch.finfo(dtype).eps * 64
        torch.testing.assert_close(got, expected, atol=rounding, rtol=0)
    elif dtype.is_floating_point or dtype.is_complex:
        torch.testing.assert_close(got, expected)
    else:
        assert torch.equal(got, expected)


# Operands of different dtypes, 0-dim tensors and Python numbers: the fused sum converts each
# input as the kernels do (to the sum's dtype, then its compute type).
MIXED = {
    "float32 + bfloat16": lambda d: (
        make_tensor((5, 7), torch.float32, d, seed=1),
        make_tensor((7,), torch.bfloat16, d, seed=2),
    ),
    "float16 + int32": lambda d: (
        make_tensor((5, 7), torch.float16, d, seed=3),
        make_tensor((5, 7), torch.int32, d, seed=4, low=-9, high=9),
    ),
    "int8 + uint8": lambda d: (
        make_tensor((5, 7), torch.int8, d, seed=5),
        make_tensor((5, 7), torch.uint8, d, seed=6),
    ),
    "bfloat16 + a 0-dim float64": lambda d: (
        make_tensor((5, 7), torch.bfloat16, d, seed=7),
        torch.tensor(0.3, dtype=torch.float64, device=d),
    ),
    "float32 + a Python float": lambda d: (make_tensor((5, 7), torch.float32, d, seed=8), 0.3),
}


@pytest.mark.parametrize("case", MIXED)
def test_a_fused_sum_of_mixed_dtypes_computes_the_kernels_values(case, device):
    x, y = MIXED[case](device)

    def block(x, y):
        return vecadd.add(x * 1, y, alpha=2) * 1

    compiled = torch.compile(block, fullgraph=True)
    got = compiled(x, y)
    assert vecadd_events(compiled, x, y) == []
    expected = block(x, y)  # eager: vecadd's kernels
    assert got.dtype == expected.dtype == torch.add(x, y).dtype
    if expected.dtype in (torch.float16, torch.bfloat16) and any(
        isinstance(t, torch.Tensor) and t.dtype != expected.dtype for t in (x, y)
    ):
        # Inductor's GPU kernels keep a value converted to a 16-bit float in float32, for
        # torch.add's lowering too (docs/compile.md): one rounding of the sum apart at most.
        torch.testing.assert_close(got, expected, rtol=torch.finfo(expected.dtype).eps, atol=0)
    else:
        torch.testing.assert_close(got, expected, rtol=0, atol=0)

    # Asked for eager's roundings, Inductor keeps every conversion: the kernels' bits exactly.
    torch._dynamo.reset()  # the switch is read as a graph compiles; it guards nothing
    with torch._inductor.config.patch(emulate_precision_casts=True):
        emulated = torch.compile(block, fullgraph=True)(x, y)
    torch._dynamo.reset()
    torch.testing.assert_close(emulated, expected, rtol=0, atol=0)


def test_keep_kernels_keeps_them_and_the_function_compiles_anew_across_it(device):
    def block(x, y):
        return torch.nn.functional.gelu(vecadd.add(x, y, alpha=0.5))

    x, y = operands("add(alpha=0.5) + gelu", device)
    compiled = torch.compile(block, fullgraph=True)
    fused = compiled(x, y)
    assert vecadd_events(compiled, x, y) == []
    with vecadd.keep_kernels():
        kept = compiled(x, y)  # the switch is a guard: compiled anew, with the kernels
        assert vecadd_events(compiled, x, y) == ["vecadd::_add_without_autograd"]
        with vecadd.keep_kernels():  # scopes nest
            assert _compile.kept_scopes == 2
    assert _compile.kept_scopes == 0
    assert vecadd_events(compiled, x, y) == []  # the first graph again
    torch.testing.assert_close(kept, fused)


def test_keep_kernels_puts_a_tag_in_the_compile_caches_keys():
    before = torch.compiler.config.cache_key_tag
    with vecadd.keep_kernels():
        assert torch.compiler.config.cache_key_tag == before + "+vecadd-kernels"
    assert torch.compiler.config.cache_key_tag == before


def test_a_tag_added_inside_keep_kernels_outlives_the_scope():
    # The first torch.compile of a process may load Inductor inside the scope, which adds the
    # lowerings' tag then: leaving the scope must take out its own tag alone.
    from vecadd import _torch_private

    before = torch.compiler.config.cache_key_tag
    try:
        with vecadd.keep_kernels():
            _torch_private.add_cache_key_tag("+lowerings-loaded-inside")
        assert torch.compiler.config.cache_key_tag == before + "+lowerings-loaded-inside"
    finally:
        torch.compiler.config.cache_key_tag = before


def test_the_compile_caches_keys_name_the_lowerings_code(tmp_path, monkeypatch):
    """Inductor keys its on-disk caches by torch's code, not a lowering's: vecadd's version and
    a digest of the code its lowerings write go into the keys, so that a graph another build of
    vecadd compiled is never served."""
    from vecadd import _compile

    torch.compile(lambda x: vecadd.add(x, x), fullgraph=True)(torch.ones(2))  # lowerings load
    tag = _compile.lowering_fingerprint()
    assert tag.startswith(f"+vecadd-{vecadd.__version__}-")
    assert tag in torch.compiler.config.cache_key_tag
    for name in ("_operators.py", "_export.py", "_compile.py"):
        (tmp_path / name).write_text((Path(_compile.__file__).parent / name).read_text())
    monkeypatch.setattr(_compile, "__file__", str(tmp_path / "_compile.py"))
    assert _compile.lowering_fingerprint() == tag
    (tmp_path / "_export.py").write_text("# another build\n")
    assert _compile.lowering_fingerprint() != tag


def test_torch_ops_called_in_a_compiled_function_are_lowered_too(device):
    x, y, w = operands("add_n(3) + gelu", device)

    def block(x, y, w):
        return torch.ops.vecadd.add_n([x, y, w], [1.0, 2.0, 3.0]).relu()

    compiled = torch.compile(block, fullgraph=True)
    torch.testing.assert_close(compiled(x, y, w), block(x, y, w))
    assert vecadd_events(compiled, x, y, w) == []


def test_a_sum_alone_on_a_cpu_is_inductors():
    # Nothing to fuse with: on a CPU Inductor's loop is the faster of the two (docs/compile.md).
    x, y, w = operands("add_n(3) alone", "cpu")
    compiled = torch.compile(lambda x, y, w: vecadd.add_n([x, y, w]), fullgraph=True)
    torch.testing.assert_close(compiled(x, y, w), x + y + w)
    assert vecadd_events(compiled, x, y, w) == []


@pytest.mark.cuda
def test_a_large_sum_alone_on_a_gpu_runs_vecadds_kernel():
    props = torch.cuda.get_device_properties(0)
    # Four float32 arrays of n move KERNEL_MIN_L2_CACHES times the L2.
    n = _compile.KERNEL_MIN_L2_CACHES * props.L2_cache_size // 16
    x, y, w = (torch.randn(n, device="cuda") for _ in range(3))
    compiled = torch.compile(lambda x, y, w: vecadd.add_n([x, y, w]), fullgraph=True)
    torch.testing.assert_close(compiled(x, y, w), vecadd.add_n([x, y, w]))
    assert vecadd_events(compiled, x, y, w) == ["vecadd::_add_n_without_autograd"]
    below = [t[: n // 2] for t in (x, y, w)]  # half the threshold: a Triton launch costs less
    compiled(*below)
    assert vecadd_events(compiled, *below) == []
    small = [t[:1024] for t in (x, y, w)]
    compiled(*small)
    assert vecadd_events(compiled, *small) == []  # in the cache: fused, one launch less


def test_compiled_training_matches_eager(device):
    # Forward, backward and AdamW of a stack whose residual adds are VecAdd layers and whose
    # three-way mix is add_n, compiled whole (fullgraph), against the same steps in eager.
    torch.manual_seed(0)
    model = with_vecadd(stack(32, with_vecadd=False)).to(device)
    twin = with_vecadd(stack(32, with_vecadd=False)).to(device)
    twin.load_state_dict(model.state_dict())
    inputs = torch.randn(16, 32, device=device)
    compiled_step, eager_step = training_step(model, inputs), training_step(twin, inputs, False)
    for _ in range(3):
        torch.testing.assert_close(compiled_step(), eager_step())
    for ours, theirs in zip(model.parameters(), twin.parameters(), strict=True):
        torch.testing.assert_close(ours, theirs)


def test_export_keeps_the_operators_once_inductor_has_lowerings_for_them():
    import torch._inductor.lowering

    class Model(torch.nn.Module):
        def forward(self, x, y, z):
            return torch.nn.functional.gelu(vecadd.add_n([vecadd.add(x, y, alpha=2), z]))

    x, y, z = (torch.randn(3, 4) for _ in range(3))
    program = torch.export.export(Model(), (x, y, z))
    called = {node.target for node in program.graph.nodes if node.op == "call_function"}
    assert {torch.ops.vecadd.add.default, torch.ops.vecadd.add_n.default} <= called
    torch.testing.assert_close(program.module()(x, y, z), Model()(x, y, z))


def test_a_torch_without_the_lowering_table_warns_and_compiles_unfused(monkeypatch):
    import torch._inductor.lowering as lowering

    from vecadd import _torch_private

    saved = {o: lowering.lowerings.pop(o) for o in list(lowering.lowerings) if "vecadd" in str(o)}
    monkeypatch.setattr(lowering, "lowerings", lowering.lowerings)
    monkeypatch.setattr(_torch_private.InductorLowerings, "__init__", _missing_table)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _compile.register_lowerings()
        (warning,) = caught
        assert "no longer has Inductor's lowering table" in str(warning.message)
        assert "compiled graphs call its kernels" in str(warning.message)
        x, y = torch.randn(8), torch.randn(8)
        compiled = torch.compile(lambda x, y: vecadd.add(x, y).relu(), fullgraph=True)
        torch.testing.assert_close(compiled(x, y), (x + y).relu())
        assert vecadd_events(compiled, x, y)  # Inductor's own fallback: the kernel, unfused
    finally:
        lowering.lowerings.update(saved)


def _missing_table(self):
    raise AttributeError("module 'torch._inductor.lowering' has no attribute 'lowerings'")
