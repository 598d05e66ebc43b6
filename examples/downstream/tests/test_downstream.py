import pytest
import torch
import vecadd_downstream

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
def test_kernel_library_from_cpp(device):
    a, b, c = (torch.randn(1000, device=device) for _ in range(3))
    torch.testing.assert_close(vecadd_downstream.sum_of_three(a, b, c), a + b + c)


@pytest.mark.parametrize("device", DEVICES)
def test_kernel_library_plans_broadcast_and_strided_calls(device):
    matrix = torch.randn(300, 200, device=device)
    cases = [
        (matrix, torch.randn(200, device=device)),  # a bias along rows
        (matrix, torch.randn(300, 1, device=device)),  # a value per row
        (matrix.t(), torch.randn(200, 300, device=device)),  # one operand read across
        (matrix[:, 1::3], torch.randn(1, 67, device=device)[:, ::1]),  # a stepped view
        # ten dimensions that cannot merge (each a slice of 2 out of 3), against a broadcast
        (
            torch.randn((2, 3) * 5, device=device)[(slice(None), slice(0, 2)) * 5],
            torch.randn((2, 1) * 5, device=device),
        ),
    ]
    for a, b in cases:
        torch.testing.assert_close(vecadd_downstream.broadcast_add(a, b, 2.0), a + 2.0 * b)


def test_bad_input_to_the_cpp_function_is_an_error():
    with pytest.raises(RuntimeError, match="expected contiguous float32"):
        vecadd_downstream.sum_of_three(
            torch.ones(3, dtype=torch.float64), torch.ones(3), torch.ones(3)
        )


def test_vecadd_op_from_python():
    x, s = torch.randn(5, 4), torch.randn(4)
    torch.testing.assert_close(vecadd_downstream.shifted(x, s), x - s)


def test_own_op_composing_vecadd_with_autograd():
    x = torch.randn(6, requires_grad=True)
    f = torch.randn(6, requires_grad=True)
    result = vecadd_downstream.residual(x, f)
    torch.testing.assert_close(result, x + 0.5 * f)
    result.sum().backward()
    torch.testing.assert_close(f.grad, torch.full((6,), 0.5))


def test_own_op_under_torch_compile():
    compiled = torch.compile(vecadd_downstream.residual, fullgraph=True, backend="aot_eager")
    x, f = torch.randn(3, 2), torch.randn(2)
    torch.testing.assert_close(compiled(x, f), x + 0.5 * f)


def test_metadata_depends_on_vecadd():
    from importlib.metadata import requires

    assert any(r.startswith("vecadd") for r in requires("vecadd-downstream-example"))
