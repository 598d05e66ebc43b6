"""Every operator vecadd/_operators.py describes, checked from its record alone: its schemas as
the dispatcher holds them, its Python wrapper, its sum against torch, its gradients, its fake
kernel, torch.library.opcheck and every overload on DTensors. A new record is tested here without
a new test."""

from __future__ import annotations

import inspect
import pickle
import re
from types import ModuleType

import pytest
import torch

import vecadd
from helpers import compiled_guards, op_error
from vecadd._fake import number_text
from vecadd._operators import OPERATORS, Argument, Operator, Weight, listed, record_problems

LIST_LENGTH = 3


def sample_arguments(op: Operator, device: str, dtype=torch.float64, requires_grad=False):
    """A call's arguments in the record's order: broadcasting tensors and weights that are not
    all 1, built from the argument types alone."""
    generator = torch.Generator().manual_seed(len(op.name))
    shapes = iter([(3, 4), (4,), (3, 1), (1, 4), (3, 4)] * 4)

    def tensor():
        made = torch.randn(next(shapes), generator=generator, dtype=dtype).to(device)
        return made.requires_grad_(requires_grad)

    arguments = []
    for argument in op.arguments:
        if argument.type == "Tensor":
            arguments.append(tensor())
        elif argument.type == "Tensor[]":
            arguments.append([tensor() for _ in range(LIST_LENGTH)])
        elif argument.type == "float":
            arguments.append(-2.0)
        elif argument.type == "float[]?":
            arguments.append([0.5 * (index + 1) for index in range(LIST_LENGTH)])
        else:
            raise AssertionError(f"no sample for argument type {argument.type}")
    return tuple(arguments)


def call(op: Operator, arguments: tuple, **keywords):
    positional, named = op.split(arguments)
    return getattr(vecadd, op.name)(*positional, **named, **keywords)


def reference(op: Operator, arguments: tuple) -> torch.Tensor:
    tensors, weights = op.terms(*arguments)
    total = weights[0] * tensors[0]
    for tensor, weight in zip(tensors[1:], weights[1:], strict=True):
        total = total + weight * tensor
    return total


@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.name)
def test_dispatcher_holds_the_records_schemas(op):
    def parsed(schema: str) -> str:  # as the dispatcher prints it (a default of 1 as 1.)
        return str(torch._C.parse_schema(f"vecadd::{schema}"))

    packet = getattr(torch.ops.vecadd, op.name)
    assert str(packet.default._schema) == parsed(op.schema())
    assert str(packet.out._schema) == parsed(op.schema(out=True))
    for twin_out in (False, True):
        twin = op.schema(out=twin_out, twin=True)
        overload = getattr(torch.ops.vecadd, twin.split("(")[0]).default
        assert str(overload._schema) == parsed(twin)
    assert op.name in vecadd.__all__


def test_the_usage_page_lists_every_operators_schemas_in_order():
    """docs/usage.md's schema block, the public contract, is the records' public schemas."""
    from helpers import ROOT

    usage = (ROOT / "docs" / "usage.md").read_text()
    block = usage.split("Schemas (the public contract", 1)[1].split("```", 2)[1]
    listed_schemas = [line for line in block.splitlines() if line.startswith("vecadd::")]
    assert listed_schemas == [
        f"vecadd::{op.schema(out=out)}" for op in OPERATORS for out in (False, True)
    ]
    for op in OPERATORS:
        assert f"| `vecadd.{op.name}(" in usage, op.name


@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.name)
def test_each_operator_is_its_weighted_sum(op, device):
    arguments = sample_arguments(op, device)
    expected = reference(op, arguments)
    torch.testing.assert_close(call(op, arguments), expected)
    out = torch.empty_like(expected)
    assert call(op, arguments, out=out) is out
    torch.testing.assert_close(out, expected)


# The dtypes of each operator's inputs in turn, for a sum of mixed dtypes.
MIXED_DTYPES = (torch.float32, torch.bfloat16, torch.float64, torch.int32, torch.float16)


@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.name)
def test_each_operator_promotes_its_inputs_as_a_chain_of_torch_add(op, device):
    arguments = sample_arguments(op, device)
    tensors, _ = op.terms(*arguments)
    mixed = [t.to(MIXED_DTYPES[i % len(MIXED_DTYPES)]) for i, t in enumerate(tensors)]
    arguments = op.with_tensors(arguments, mixed)
    chain = mixed[0]
    for tensor in mixed[1:]:
        chain = torch.add(chain, tensor)
    result = call(op, arguments)
    assert result.dtype == chain.dtype
    # Each input converted to the sum's dtype, the sum computed in float32 or wider.
    expected = reference(op, op.with_tensors(arguments, [t.to(chain.dtype) for t in mixed]))
    torch.testing.assert_close(result, expected)
    metas = op.with_tensors(arguments, [t.to("meta") for t in mixed])
    assert call(op, metas).dtype == chain.dtype  # the fake kernel promotes alike
    out = torch.empty_like(expected, dtype=torch.float64)
    assert call(op, arguments, out=out) is out
    torch.testing.assert_close(out, result.to(torch.float64))


@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.name)
def test_each_operator_has_gradients_and_a_fake_kernel(op):
    arguments = sample_arguments(op, "cpu", requires_grad=True)
    tensors, _ = op.terms(*arguments)

    def function(*inputs):
        return call(op, op.with_tensors(arguments, inputs))

    assert torch.autograd.gradcheck(function, tuple(tensors))
    assert torch.autograd.gradgradcheck(function, tuple(tensors))
    detached = [tensor.detach() for tensor in tensors]
    with torch._subclasses.fake_tensor.FakeTensorMode() as mode:
        fakes = [mode.from_tensor(tensor) for tensor in detached]
        faked = call(op, op.with_tensors(arguments, fakes))
    assert faked.shape == reference(op, arguments).shape


class Marked(torch.Tensor):
    """A tensor subclass: the lean ways leave it to the checked way (its __torch_function__)."""


def _takes_plain_calls_and_leaves_subclasses_and_bools(way, op: Operator) -> tuple:
    """Checks a way into op (its arguments, then out) against the checked way on plain values,
    into out too, and that it answers NotImplemented for a tensor subclass or a bool weight,
    which the checked way must answer or word; gives back the arguments and the result."""
    from vecadd import _ops

    arguments = sample_arguments(op, "cpu")
    expected = _ops.call(op, arguments, None)
    assert torch.equal(way(*arguments, None), expected)
    out = torch.empty_like(expected)
    assert way(*arguments, out) is out
    assert torch.equal(out, expected)
    tensors, _ = op.terms(*arguments)
    marked = [tensor.as_subclass(Marked) for tensor in tensors]
    assert way(*op.with_tensors(arguments, marked), None) is NotImplemented
    for weight in [argument for argument in op.arguments if argument.type.startswith("float")]:
        unusual = [*arguments]
        unusual[op.arguments.index(weight)] = (
            True if weight.type == "float" else [True] * len(tensors)
        )
        assert way(*unusual, None) is NotImplemented  # a bool weight: the checked way words it
    return arguments, expected


@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.name)
def test_each_operators_lean_way_takes_plain_calls_and_leaves_the_rest(op):
    """The lean way written from the record (vecadd/_lean.py) gives the checked way's result,
    into out too, and answers NotImplemented for what the checked way must answer or word."""
    from vecadd import _ops

    lean = _ops.LEAN_WAYS[op.name]
    # Written at build time (vecadd/_lean_ways.py), for the tracing questions this torch asks.
    assert lean.__module__ == "vecadd._lean_ways"
    assert lean.__name__ == f"lean_{op.name}"
    arguments, expected = _takes_plain_calls_and_leaves_subclasses_and_bools(lean, op)
    with_grad = sample_arguments(op, "cpu", requires_grad=True)
    assert lean(*with_grad, torch.empty_like(expected)) is NotImplemented  # out= and grad: words
    # out of a dtype torch casts the sum to is written; one it does not is refused in the
    # kernels' words.
    narrower = torch.empty_like(expected, dtype=torch.float32)
    assert lean(*arguments, narrower) is narrower
    torch.testing.assert_close(narrower, expected.to(torch.float32), rtol=0, atol=0)
    with pytest.raises(TypeError, match=r"out has dtype torch.int64 but the sum of .* is "):
        lean(*arguments, expected.to(torch.int64))


# (tensors' dtype, the number, whether the lean way takes it): a number joins the lean way where
# a 0-dim tensor holding it promotes as torch promotes the number (no category above the
# tensors'); else the checked way weighs it (torch.result_type).
NUMBER_CASES = [
    (torch.float32, 2.5, True),
    (torch.float32, 3, True),
    (torch.float32, True, True),
    (torch.int32, 3, True),
    (torch.bool, True, True),
    (torch.complex64, 1 - 2j, True),
    (torch.int32, 2.5, False),
    (torch.float32, 1 - 2j, False),
    (torch.bool, 3, False),
]


@pytest.mark.parametrize(
    "op", [op for op in OPERATORS if any(a.type == "Tensor" for a in op.arguments)], ids=str
)
@pytest.mark.parametrize(("dtype", "number", "taken"), NUMBER_CASES, ids=str)
def test_each_operators_lean_way_takes_numbers_that_promote_as_tensors(op, dtype, number, taken):
    """A Python number in a tensor's place: the lean way's result is the checked way's, dtype and
    bits, where it takes the call; NotImplemented where a 0-dim tensor of its value would promote
    otherwise, or where the call has a 0-dim tensor of its own."""
    from vecadd import _ops

    lean = _ops.LEAN_WAYS[op.name]
    weight = (
        1 if dtype == torch.bool else -2.0 if dtype.is_floating_point or dtype.is_complex else 2
    )
    for index, argument in enumerate(op.arguments):
        if argument.type != "Tensor":
            continue
        arguments = [
            a.to(dtype) if isinstance(a, torch.Tensor) else weight
            for a in sample_arguments(op, "cpu")
        ]
        arguments[index] = number
        result = lean(*arguments, None)
        if not taken:
            assert result is NotImplemented, (argument.name, dtype, number)
            continue
        expected = _ops.call(op, tuple(arguments), None)
        assert (
            result.dtype == expected.dtype == torch.result_type(torch.empty(2, dtype=dtype), number)
        )
        assert torch.equal(result, expected), (argument.name, dtype, number)
        out = torch.empty_like(expected)
        assert lean(*arguments, out) is out
        assert torch.equal(out, expected)
        # Beside a 0-dim tensor of the caller's, or with nothing but numbers: the checked way.
        zero_dim = [
            a[0, 0] if isinstance(a, torch.Tensor) and a.dim() == 2 else a for a in arguments
        ]
        if any(isinstance(a, torch.Tensor) and a.dim() == 0 for a in zero_dim):
            assert lean(*zero_dim, None) is NotImplemented
    if all(a.type in ("Tensor", "float") for a in op.arguments):
        numbers = [number if a.type == "Tensor" else weight for a in op.arguments]
        assert lean(*numbers, None) is NotImplemented


@pytest.mark.parametrize("number", [3, 2.5, True], ids=["int", "float", "bool"])
def test_a_python_number_beside_a_tensor_never_takes_the_checked_way(monkeypatch, number):
    """Under either binding a number that promotes as a 0-dim tensor takes a lean way: the checked
    way costs several times a lean call (the native binding's C++ entry takes tensors alone)."""

    def checked(*arguments):
        raise AssertionError(f"the checked way ran for {arguments}")

    x = torch.randn(8)
    expected = {"left": number + x, "right": x + number}
    monkeypatch.setattr(vecadd._ops, "call", checked)
    for side, arguments in (("left", (number, x)), ("right", (x, number))):
        result = vecadd.add(*arguments)
        assert result.dtype == expected[side].dtype
        torch.testing.assert_close(result, expected[side], rtol=0, atol=0)
        out = torch.empty_like(result)
        assert vecadd.add(*arguments, out=out) is out
        torch.testing.assert_close(out, expected[side], rtol=0, atol=0)


@pytest.mark.skipif(
    vecadd._library.native_module is None,
    reason="tests the native build's C++ entries; this vecadd is the stable build",
)
@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.name)
def test_each_operators_native_entry_takes_plain_calls_and_leaves_the_rest(op):
    """The native build's C++ entry (vecadd._C.<name>, one template for every operator) gives the
    checked way's result, into out too, and answers NotImplemented for what the checked way
    must answer or word; so does the lean way through the dispatcher that stands in for it where
    the native binding has no vecadd._C (a free-threaded CPython)."""
    native = vecadd._library.native_module
    entry = getattr(native, op.name)
    assert vecadd._ops.ENTRIES[op.name].__module__ == "vecadd._lean_ways"  # untraced(entry)
    arguments, expected = _takes_plain_calls_and_leaves_subclasses_and_bools(entry, op)
    assert entry(*arguments, expected.as_subclass(Marked)) is NotImplemented
    with FunctionsSeen():
        assert entry(*arguments, None) is NotImplemented  # the mode expects the public call
    # A call without out: the C++ entry words it as C++ does, the lean way as Python does.
    if isinstance(native, ModuleType):
        words = rf"vecadd._C.{op.name}\(\) takes {len(arguments) + 1} "
    else:
        words = "missing 1 required positional argument: 'out'"
    with pytest.raises(TypeError, match=words):
        entry(*arguments)


@pytest.mark.skipif(
    not vecadd._ops.ADD_TAKES_EVERY_CALL,
    reason="tests the native binding's public entries (vecadd._C.public_entry); this vecadd "
    "calls its Python wrappers",
)
def test_the_public_entries_bind_as_the_wrappers_and_leave_the_rest_to_them():
    """With vecadd._C, vecadd.add and vecadd.add_n are its C++ public entries: they take the
    wrappers' parameters by position or keyword, with their defaults, pickle by name, and hand
    every call they do not take (a number, a misbound argument, a torch function mode) to the
    Python wrapper, whose result and words are the same."""
    assert str(inspect.signature(vecadd.add)) == "(x, y, *, alpha=1.0, out=None)"
    assert str(inspect.signature(vecadd.add_n)) == "(tensors, weights=None, *, out=None)"
    assert vecadd.add.__doc__.startswith("Return ``x + alpha * y``")
    assert pickle.loads(pickle.dumps(vecadd.add_n)) is vecadd.add_n
    x, y, out = torch.randn(5), torch.randn(5), torch.empty(5)
    torch.testing.assert_close(vecadd.add(y=y, x=x, alpha=2), torch.add(x, y, alpha=2))
    torch.testing.assert_close(vecadd.add(x, 3.5), torch.add(x, 3.5))  # the wrapper's way
    assert vecadd.add(x, y, out=out) is out
    torch.testing.assert_close(out, x + y)
    summed = vecadd.add_n(weights=(1, -2), tensors=[x, y], out=out)
    assert summed is out
    torch.testing.assert_close(out, x - 2 * y)
    torch.testing.assert_close(vecadd.add_n((x, y)), x + y)
    misbound = {
        "takes 2 positional arguments but 3 were given": lambda: vecadd.add(x, y, 2.0),
        "missing 1 required positional argument: 'y'": lambda: vecadd.add(x, alpha=2.0),
        "unexpected keyword argument 'beta'": lambda: vecadd.add(x, y, beta=1.0),
        "multiple values for argument 'x'": lambda: vecadd.add(x, y, x=x),
        "missing 1 required positional argument: 'tensors'": lambda: vecadd.add_n(out=out),
    }
    for words, misbound_call in misbound.items():
        with pytest.raises(TypeError, match=re.escape(words)):
            misbound_call()
    with FunctionsSeen() as seen:
        vecadd.add(x, y)
    assert torch.ops.vecadd.add.default in seen.functions


class FunctionsSeen(torch.overrides.TorchFunctionMode):
    """Records every function a torch function mode is handed, and runs it."""

    def __init__(self):
        super().__init__()
        self.functions = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.functions.append(func)
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.name)
def test_a_torch_function_mode_sees_each_operators_public_overloads(op):
    """The lean way calls private overloads straight through the dispatcher, where a torch
    function mode cannot see them: under one, the public overloads answer, as the mode expects."""
    arguments = sample_arguments(op, "cpu")
    expected = reference(op, arguments)
    out = torch.empty_like(expected)
    packet = getattr(torch.ops.vecadd, op.name)
    with FunctionsSeen() as mode:
        result = call(op, arguments)
        call(op, arguments, out=out)
    torch.testing.assert_close(result, expected)
    torch.testing.assert_close(out, expected)
    seen = [func for func in mode.functions if isinstance(func, torch._ops.OpOverload)]
    assert seen == [packet.default, packet.out], mode.functions


@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.name)
def test_each_operator_compiles_fused_into_its_neighbours(op):
    # Inductor's lowering comes from the record (vecadd/_compile.py): the sum and the relu after
    # it become one kernel of Inductor's, with no call of vecadd's kernels left in the graph.
    arguments = sample_arguments(op, "cpu", dtype=torch.float32)
    compiled = torch.compile(lambda *values: call(op, values).relu(), fullgraph=True)
    torch.testing.assert_close(compiled(*arguments), reference(op, arguments).relu())
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        compiled(*arguments)
    called = {event.name for event in profile.events() if event.name.startswith("vecadd::")}
    assert not called, f"{op.name} compiled to vecadd's kernels {sorted(called)}, not fused"


@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.name)
def test_a_compiled_call_of_each_operator_checks_only_its_wrapper_and_the_switch(op):
    # torch.compile traces the record's traced way (vecadd/_lean.py) in the wrapper's place: of
    # vecadd's objects, each compiled call then checks the keep_kernels() count alone (Dynamo
    # guards every object a trace reads, on every call: docs/compile.md).
    arguments = sample_arguments(op, "cpu", dtype=torch.float32)
    positional, named = op.split(arguments)

    def block(*values):
        return getattr(vecadd, op.name)(*values, **named).relu()

    torch._dynamo.reset()  # block's code is every case's: its graph alone in the cache
    compiled = torch.compile(block, fullgraph=True)
    torch.testing.assert_close(compiled(*positional), reference(op, arguments).relu())
    internals = [guard for guard in compiled_guards(block) if "__import_vecadd" in guard]
    switch = "G['__import_vecadd_dot__compile']"  # the module, then its count
    assert [guard.startswith((f"___check_obj_id({switch}", switch)) for guard in internals] == [
        True,
        True,
    ], internals
    assert internals[1] == f"{switch}.kept_scopes == 0", internals


@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.name)
def test_each_operator_passes_opcheck(op):
    arguments = sample_arguments(op, "cpu", dtype=torch.float32, requires_grad=True)
    positional, named = op.split(arguments)
    torch.library.opcheck(getattr(torch.ops.vecadd, op.name).default, positional, named)


@pytest.fixture(scope="module")
def one_rank_process_group(tmp_path_factory):
    """A process group of this process alone (gloo), for DTensors on a mesh of one rank."""
    import torch.distributed as dist

    if not dist.is_available():
        pytest.skip("torch without torch.distributed")
    store = tmp_path_factory.mktemp("process-group") / "store"
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
    yield
    dist.destroy_process_group()


@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.name)
def test_each_operator_has_a_sharding_rule_for_every_overload(op, one_rank_process_group):
    """The record alone gives DTensor its rules (docs/distributed.md); tests/test_dtensor.py
    covers the placements on several ranks."""
    from dtensor_cases import mesh_of, overloads_on_dtensors

    called = overloads_on_dtensors(op, sample_arguments(op, "cpu"), mesh_of("cpu", (1,)))
    assert called == [name for name, _ in op.registered_names()]


def test_every_record_is_one_the_rules_can_check():
    for op in OPERATORS:
        assert record_problems(op) == [], op.name


# A weight each rule must refuse, whatever terms derives from it (-w, 1 - w): (case, dtype,
# value, the error of vecadd's wrappers, what the words say after the argument).
BAD_WEIGHTS = [
    ("non-integral", torch.int64, 2.5, TypeError, r"(is|has) 2\.5\b.*expected (an )?integral"),
    ("nan", torch.int32, float("nan"), TypeError, r"(is|has) nan\b.*expected (an )?integral"),
    ("beyond int64", torch.int64, 2**64, ValueError, r"expected .*from -9223372036854775808 to"),
    ("beyond float32", torch.float16, 1e39, ValueError, r"compute in float32"),
    ("a bool", torch.int64, True, TypeError, r"is a bool"),
    ("complex", torch.float32, 2 + 1j, TypeError, r"(is|has) \(2\+1j\).*expected a real"),
]


WEIGHT_CASES = [
    pytest.param(op, weight, *case[1:], id=f"{op.name}-{weight.argument}-{case[0]}")
    for op in OPERATORS
    for weight in op.weights
    for case in BAD_WEIGHTS
]


def with_weight(op: Operator, weight, value, dtype, device) -> tuple:
    """Sample arguments of dtype on device, every weight 1 but `weight`'s (for a list, its item
    at index 1), set to value."""
    arguments = sample_arguments(op, "cpu")
    tensors, _ = op.terms(*arguments)
    ones = [torch.ones(t.shape, dtype=dtype, device=device) for t in tensors]
    arguments = list(op.with_tensors(arguments, ones))
    for index, argument in enumerate(op.arguments):
        if argument.type == "float":
            arguments[index] = value if argument.name == weight.argument else 1.0
        elif argument.type == "float[]?":
            values = [1.0] * len(tensors)
            if argument.name == weight.argument:
                values[1] = value
            arguments[index] = values
    return tuple(arguments)


@pytest.mark.parametrize(("op", "weight", "dtype", "value", "kind", "words"), WEIGHT_CASES)
@pytest.mark.parametrize("device", ["cpu", "meta"])  # the C++ rules, then the fake kernel
def test_every_weight_of_every_operator_is_refused_by_its_name(
    op, weight, dtype, value, kind, words, device
):
    """Each weight entry of each record is checked by every way in, in both builds, and the
    words name the user's argument and value: never a silent result."""
    arguments = with_weight(op, weight, value, dtype, device)
    named = rf"^{re.escape(op.call)}: argument '{weight.argument}(\[1\])?' .*{words}"
    with pytest.raises(kind, match=named):
        call(op, arguments)
    with pytest.raises(kind, match=named):
        call(op, arguments, out=torch.empty_like(op.terms(*arguments)[0][0]))
    if isinstance(value, (bool, complex)):
        return  # the dispatcher's own parser answers a bool or a complex for a float
    positional, keywords = op.split(arguments)
    raised = kind if device == "meta" else op_error(kind)  # the fake kernels raise it in Python
    with pytest.raises(raised, match=rf"argument '{weight.argument}' .*{words}"):
        getattr(torch.ops.vecadd, op.name)(*positional, **keywords)


# Integral weights at and beyond 2^53 (each a double exactly; a derived 1 - w or -w is not always
# one), for int64 tensors: each input's weight must be derived exactly, or refused in words.
EXACT_VALUES = [2**53, 2**53 + 2, 2**54, 2**60, -(2**60), 2**62, 2**63 - 1024, 2**63, -(2**63)]
TRACED_VALUE = 2**60
EXACT_CASES = [
    pytest.param(op, weight, value, id=f"{op.name}-{weight.argument}-{value}")
    for op in OPERATORS
    for weight in op.weights
    for value in EXACT_VALUES
]
INT64 = torch.iinfo(torch.int64)


def exact_sum(op: Operator, arguments: tuple) -> list[int] | None:
    """Each element of op's sum over `arguments` (tensors of ones) as int64 computes it, from
    the record's Weight entries in integers: None where a weight does not fit int64 (refused)."""
    tensors, _ = op.terms(*arguments)
    given = op.given_weights(arguments, len(tensors))
    total = 0
    for index in range(len(tensors)):
        weight = op.weight_of(index)
        exact = 1 if weight is None else weight.offset + weight.scale * int(given[index])
        if not INT64.min <= exact <= INT64.max:
            return None
        total += exact
    wrapped = (total - INT64.min) % 2**64 + INT64.min  # int64 wraps around
    return [wrapped] * tensors[0].numel()


@pytest.mark.parametrize(("op", "weight", "value"), EXACT_CASES)
def test_every_derived_weight_is_exact_or_refused_by_its_name(op, weight, value):
    """An integral weight the call gives as a float is derived exactly for int64 tensors by
    every way in (the wrapper, out=, the dispatcher, the fake kernel, torch.compile, torch.export
    and its decompositions), never from a double's rounding; one that int64 cannot hold is refused
    naming the user's argument and value."""
    arguments = with_weight(op, weight, float(value), torch.int64, "cpu")
    expected = exact_sum(op, arguments)
    positional, keywords = op.split(arguments)
    tensors, _ = op.terms(*arguments)
    metas = op.with_tensors(arguments, [t.to("meta") for t in tensors])
    given = re.escape(number_text(float(value)))
    named = rf"argument '{weight.argument}' (is|has) {given}\b"
    if expected is None:
        with pytest.raises(ValueError, match=named):
            call(op, arguments)
        with pytest.raises(ValueError, match=named):
            call(op, arguments, out=torch.empty_like(tensors[0]))
        with pytest.raises(op_error(ValueError), match=named):
            getattr(torch.ops.vecadd, op.name)(*positional, **keywords)
        with pytest.raises(ValueError, match=named):
            call(op, metas)
        return

    ways = {
        "wrapper": call(op, arguments),
        "out=": call(op, arguments, out=torch.empty_like(tensors[0])),
        "dispatcher": getattr(torch.ops.vecadd, op.name)(*positional, **keywords),
    }
    if value == TRACED_VALUE:  # tracing is slow: one value beyond 2^53 for the traced ways

        def block(*values):
            return call(op, op.with_tensors(arguments, values))

        ways["compiled"] = compiled(block)(*tensors)
        exported = torch.export.export(Block(block), tuple(tensors))
        ways["exported"] = exported.module()(*tensors)
        decomposed = exported.run_decompositions(vecadd.decompositions())
        ways["decomposed"] = decomposed.module()(*tensors)
    for way, result in ways.items():
        assert result.dtype == torch.int64, way
        assert result.flatten().tolist() == expected, way
    assert call(op, metas).shape == ways["wrapper"].shape  # the fake kernel takes it


def compiled(function):
    torch._dynamo.reset()  # the block's code is every case's: each compiles afresh
    return torch.compile(function, fullgraph=True)


class Block(torch.nn.Module):
    def __init__(self, function):
        super().__init__()
        self.function = function

    def forward(self, *values):
        return self.function(*values)


def test_exact_terms_derive_each_weight_in_integers():
    arguments = (Argument("x", "Tensor"), Argument("y", "Tensor"), Argument("weight", "float"))
    lerp = Operator(
        "lerp",
        arguments,
        ("x", "y"),
        (Weight("weight", 0, scale=-1, offset=1), Weight("weight", 1)),
        "(1 - weight) * x + weight * y",
    )
    assert lerp.exact_terms("x", "y", float(2**60)) == (["x", "y"], [1 - 2**60, 2**60])
    assert lerp.terms("x", "y", float(2**60)) == (["x", "y"], [1.0 - 2.0**60, 2.0**60])
    assert lerp.terms("x", "y", 0.25) == (["x", "y"], [0.75, 0.25])
    assert lerp.given_weights(("x", "y", 0.25), 2) == [0.25, 0.25]


def test_errors_list_any_number_of_inputs_as_a_sentence():
    assert [listed(names) for names in (["x"], ["x", "y"], ["x", "y", "z"])] == [
        "x",
        "x and y",
        "x, y and z",
    ]
    three = Operator(
        "add3",
        tuple(Argument(name, "Tensor") for name in "xyz"),
        ("x", "y", "z"),
        (),
        "x + y + z",
    )
    assert three.all_inputs == "x, y and z"


def _axpby(*weights: Weight, arguments=None) -> Operator:
    """A record of alpha * x + beta * y, as a contributor writes it, with the given entries."""
    arguments = arguments or (
        Argument("x", "Tensor"),
        Argument("y", "Tensor"),
        Argument("alpha", "float", "1"),
        Argument("beta", "float", "1"),
    )
    return Operator("axpby", arguments, ("x", "y"), weights, "alpha * x + beta * y")


def test_the_build_refuses_a_record_the_rules_cannot_check(tmp_path, monkeypatch):
    """cmake/generate_operators.py, which the build runs, stops at a record with a number
    argument that weighs nothing (beta named by no entry): no operator reaches a kernel with an
    argument no rule checks."""
    import importlib.util

    from helpers import ROOT

    records = (ROOT / "python" / "vecadd" / "_operators.py").read_text()
    bad = (
        records
        + """
AXPBY = Operator(
    name="axpby",
    arguments=(Argument("x", "Tensor"), Argument("y", "Tensor"),
               Argument("alpha", "float", "1"), Argument("beta", "float", "1")),
    inputs=("x", "y"),
    weights=(Weight("alpha", 0),),
    summary="alpha * x + beta * y",
)
OPERATORS = (*OPERATORS, AXPBY)
"""
    )
    (tmp_path / "_operators.py").write_text(bad)
    spec = importlib.util.spec_from_file_location(
        "generate_operators", ROOT / "cmake" / "generate_operators.py"
    )
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    monkeypatch.setattr(generator, "OPERATORS_MODULE", tmp_path / "_operators.py")
    header = tmp_path / "vecadd_operators.h"
    assert generator.main([str(header)]) == 1
    assert not header.exists()
    both = bad.replace('(Weight("alpha", 0),)', '(Weight("alpha", 0), Weight("beta", 1))')
    (tmp_path / "_operators.py").write_text(both)
    assert generator.main([str(header)]) == 0
    assert 'kAxpbyWeights[] = {{"alpha", 0, 1, 0}, {"beta", 1, 1, 0}}' in header.read_text()


def test_record_problems_says_what_a_record_gets_wrong():
    assert record_problems(_axpby(Weight("alpha", 0), Weight("beta", 1))) == []
    (unweighing,) = record_problems(_axpby(Weight("beta", 1)))
    assert "argument 'alpha' weighs no input; expected a weight entry naming it" in unweighing
    (twice,) = record_problems(_axpby(Weight("alpha", 0), Weight("beta", 0)))
    assert "name input 0 2 times" in twice
    untyped = record_problems(_axpby(Weight("x", 0), Weight("alpha", 1), Weight("beta", 1)))
    assert any("names no float argument" in problem for problem in untyped)
    (scaled,) = record_problems(_axpby(Weight("alpha", 0, scale=2), Weight("beta", 1)))
    assert "expected scale 1 or -1 and an integer offset" in scaled
    (far,) = record_problems(_axpby(Weight("alpha", 0, offset=2**60), Weight("beta", 1)))
    assert "has offset 1152921504606846976; expected a magnitude of at most 2**53" in far
    misnamed = Operator("add", _axpby().arguments[:2], ("a", "b"), (), "a + b")
    (inputs,) = record_problems(misnamed)
    assert "inputs are a and b but the tensor arguments are x and y" in inputs
