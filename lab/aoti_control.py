# Evidence for: docs/deploy.md, "torch's Python loader" (the segmentation fault is torch's, not
# vecadd's).
"""A model with no vecadd in it (a Linear and torch.add), exported, AOT-compiled and loaded back
from Python in fresh processes: the control case for an AOTInductor package on a machine. Each
step of torch's Python loader runs alone too, to show which one fails: reading the package's
metadata, constructing torch._C._aoti.AOTIModelPackageLoader directly, aoti_load_package.
Usage: python lab/aoti_control.py DEVICE FOLDER   (compiles FOLDER/control-DEVICE.pt2, loads it)
       python lab/aoti_control.py DEVICE FOLDER --step metadata|loader|package"""

from __future__ import annotations

import faulthandler
import subprocess
import sys
from pathlib import Path

import torch

faulthandler.enable()


class Control(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.add(self.linear(x), y, alpha=0.5)


def main() -> int:
    device, folder = sys.argv[1], Path(sys.argv[2])
    package = folder / f"control-{device}.pt2"
    torch.manual_seed(0)
    model = Control().eval().to(device)
    inputs = (torch.randn(4, 8, device=device), torch.randn(4, 8, device=device))
    if "--step" in sys.argv:
        step = sys.argv[sys.argv.index("--step") + 1]
        loader = torch._C._aoti.AOTIModelPackageLoader
        if step == "metadata":
            print(loader.load_metadata_from_package(str(package), "model"), flush=True)
            return 0
        if step == "loader":
            runner = loader(str(package), "model", False, 1, -1)
            outputs = runner.run(list(inputs))[0]
        else:
            outputs = torch._inductor.aoti_load_package(str(package))(*inputs)
        with torch.no_grad():
            error = (outputs - model(*inputs)).abs().max().item()
        print(f"control on {device} ({step}): max |package - eager| = {error}", flush=True)
        return 0
    folder.mkdir(parents=True, exist_ok=True)
    with torch.no_grad():
        exported = torch.export.export(model, inputs)
    torch._inductor.aoti_compile_and_package(exported, package_path=str(package))
    print("compiled", package, flush=True)
    failed = 0
    for step in ("metadata", "loader", "package"):
        ran = subprocess.run([sys.executable, __file__, device, str(folder), "--step", step])
        print(f"fresh process, step {step}: exit {ran.returncode}", flush=True)
        failed = failed or ran.returncode
    return failed


if __name__ == "__main__":
    sys.exit(main())
