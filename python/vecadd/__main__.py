"""Command line: ``python -m vecadd {info,check,bench}``, ``--cmakedir``, ``--includes``."""

from __future__ import annotations

import argparse
import json
import sys


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m vecadd",
        description="vecadd: z = x + alpha * y for PyTorch on CPU and CUDA.",
    )
    parser.add_argument(
        "--cmakedir", action="store_true", help="print the directory of vecaddConfig.cmake and exit"
    )
    parser.add_argument(
        "--includes",
        action="store_true",
        help="print the include flag for vecadd's C++ headers and exit",
    )
    commands = parser.add_subparsers(dest="command", metavar="{info,check,bench}")
    info = commands.add_parser("info", help="show how vecadd was built and what it sees")
    info.add_argument("--json", action="store_true", help="print build_info() as JSON")
    commands.add_parser("check", help="self-test against torch.add on every device present")
    bench = commands.add_parser("bench", help="bandwidth of vecadd.add against torch.add")
    from ._bench import add_arguments

    add_arguments(bench)
    return parser


def _info(as_json: bool) -> int:
    import torch

    import vecadd

    info = vecadd.build_info()
    if as_json:
        print(json.dumps(info, indent=2))
        return 0
    for key, value in info.items():
        print(f"{key:>14}: {value}")
    print(f"{'torch loaded':>14}: {torch.__version__}")
    gpus = (
        [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        if torch.cuda.is_available()
        else []
    )
    print(f"{'GPUs':>14}: {', '.join(gpus) if gpus else 'none'}")
    return 0


def _check() -> int:
    from ._check import run_checks

    results = run_checks()
    for result in results:
        status = "ok" if result.passed else "FAILED"
        line = f"{result.device:>8}  {result.case:<18} {status}"
        print(f"{line}  {result.detail}" if result.detail else line)
    failed = sum(not result.passed for result in results)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.cmakedir or args.includes:
        import vecadd

        print(vecadd.get_cmake_dir() if args.cmakedir else f"-I{vecadd.get_include()}")
        return 0
    if args.command == "info":
        return _info(args.json)
    if args.command == "check":
        return _check()
    if args.command == "bench":
        from ._bench import run_from_arguments

        return run_from_arguments(args)
    parser.print_usage(sys.stderr)
    print("python -m vecadd: error: a command is required (info, check or bench)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
