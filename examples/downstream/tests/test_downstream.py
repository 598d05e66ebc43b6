import pytest
import torch
import vecadd_downstream

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
def test_kernel_library_from_cpp(device):
    a, b, c = (torch.randn(1000, device=device) for _ in range(3))
    torch.testing.assert_close(vecadd_downstream.sum_of_three(a, b, c), a + b + c)


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
