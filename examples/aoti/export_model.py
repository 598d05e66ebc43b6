"""Exports a small model that calls vecadd's operators and compiles it ahead of time into an
AOTInductor package, for run_package (main.cpp) to run from C++ without Python.

    python export_model.py FOLDER [--device cpu|cuda]

writes FOLDER/model.pt2 (the package), FOLDER/inputs.pt (the inputs to run it on) and
FOLDER/expected.pt (eager PyTorch's outputs on them, on the CPU)."""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

import vecadd


class ResidualBlock(torch.nn.Module):
    """A feed-forward block whose skip connection and output mix are vecadd's operators."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.expand = torch.nn.Linear(width, 4 * width)
        self.project = torch.nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        hidden = vecadd.add(x, self.project(torch.relu(self.expand(x))), alpha=0.5)
        # bias has shape (width,) and broadcasts over the batch, as in a chain of torch.add.
        return vecadd.add_n([hidden, x, bias], weights=[1.0, -0.25, 2.0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    arguments = parser.parse_args()
    arguments.folder.mkdir(parents=True, exist_ok=True)

    torch.manual_seed(0)
    width = 64
    model = ResidualBlock(width).eval().to(arguments.device)
    example = (torch.randn(8, width), torch.randn(width))
    # The package takes any batch size: the inputs it is run on have another one.
    inputs = [torch.randn(5, width), torch.randn(width)]
    batch = torch.export.Dim("batch", min=1)
    with torch.no_grad():
        exported = torch.export.export(
            model,
            tuple(t.to(arguments.device) for t in example),
            dynamic_shapes=({0: batch}, None),
        )
        expected = model(*(t.to(arguments.device) for t in inputs))
    # Inductor would fuse vecadd's operators into its own kernels; kept, the package calls
    # vecadd's operators, which the C++ program links (vecadd::ops).
    with vecadd.keep_kernels():
        package = torch._inductor.aoti_compile_and_package(
            exported, package_path=str(arguments.folder / "model.pt2")
        )
    torch.save(inputs, arguments.folder / "inputs.pt")
    torch.save([expected.cpu()], arguments.folder / "expected.pt")
    print(f"wrote {package} ({arguments.device})")


if __name__ == "__main__":
    main()
