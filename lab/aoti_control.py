"""A model with no vecadd in it (a Linear and torch.add), exported, AOT-compiled and loaded back
from Python in a fresh process: the control case for an AOTInductor package on a machine.
Usage: python lab/aoti_control.py DEVICE FOLDER   (compiles FOLDER/control.pt2, then loads it)
       python lab/aoti_control.py DEVICE FOLDER --load-only"""

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
    if "--load-only" in sys.argv:
        print("loading", package, flush=True)
        runner = torch._inductor.aoti_load_package(str(package))
        print("loaded; running", flush=True)
        with torch.no_grad():
            error = (runner(*inputs) - model(*inputs)).abs().max().item()
        print(f"control on {device}: max |package - eager| = {error}", flush=True)
        return 0
    folder.mkdir(parents=True, exist_ok=True)
    with torch.no_grad():
        exported = torch.export.export(model, inputs)
    torch._inductor.aoti_compile_and_package(exported, package_path=str(package))
    print("compiled", package, flush=True)
    loaded = subprocess.run([sys.executable, __file__, device, str(folder), "--load-only"])
    print(f"fresh process loading the package: exit {loaded.returncode}", flush=True)
    return loaded.returncode


if __name__ == "__main__":
    sys.exit(main())
