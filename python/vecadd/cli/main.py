"""Command line: ``python -m vecadd {info,check,bench}``, ``--cmakedir``, ``--includes``,
``--version``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from .._path_query import PATH_FLAGS, asks_only_for_a_path, path_answer

# 128 + SIGPIPE, as cat or yes give after `| head -1`: pipefail sees a cut, not a success.
EXIT_READER_GONE = 141


def invoked_as() -> str:
    """How the user called the command line: ``vecadd`` (the console script) or
    ``python -m vecadd``, so that usage and errors repeat what they typed."""
    return "vecadd" if Path(sys.argv[0]).name == "vecadd" else "python -m vecadd"


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="vecadd: z = x + alpha * y for PyTorch on CPU and CUDA.",
    )
    paths = parser.add_mutually_exclusive_group()
    paths.add_argument(
        "--cmakedir", action="store_true", help="print the directory of vecaddConfig.cmake and exit"
    )
    paths.add_argument(
        "--includes",
        action="store_true",
        help="print the include flag for vecadd's C++ headers and exit",
    )
    paths.add_argument("--version", action="store_true", help="print vecadd's version and exit")
    commands = parser.add_subparsers(dest="command", metavar="{info,check,bench}")
    info = commands.add_parser("info", help="show how vecadd was built and what it sees")
    info.add_argument(
        "--json", action="store_true", help="print vecadd.build_info() and what it sees as JSON"
    )
    commands.add_parser("check", help="self-test of every operator on every device present")
    from ..bench.command import EXAMPLES, add_arguments

    bench = commands.add_parser(
        "bench",
        help="bandwidth of vecadd.add against torch.add",
        description="Bandwidth of vecadd.add against torch.add (or of vecadd.add_n against a\n"
        "chain of torch.add), timed side by side in interleaved rounds.",
        epilog=EXAMPLES.format(prog=prog),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )

    add_arguments(bench)
    return parser


def _print_path(flag: str) -> int:
    print(path_answer(flag))
    return 0


def _check() -> int:
    import torch

    from .._info import build_info
    from .check import run_checks, untested_cuda_note
    from .info import LINE_WIDTH, wrapped

    def print_wrapped(text: str) -> None:
        # Past the device column: a failure's words and the note wrap under the cases.
        print("\n".join(wrapped(text, LINE_WIDTH, indent=" " * 10)))

    results = run_checks()
    for result in results:
        line = f"{result.device:>8}  {result.case:<18} {'ok' if result.passed else 'FAILED'}"
        print_wrapped(f"{line}  {result.detail}" if result.detail else line)
    info = build_info()
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    note = untested_cuda_note(info["with_cuda"], info["cuda_archs"], gpus, info["cuda_not_loaded"])
    if note is not None:
        print_wrapped(f"{'cuda':>8}  {note}")
    failed = sum(not result.passed for result in results)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


def _run(arguments: list[str]) -> int:
    if asks_only_for_a_path(arguments):
        return _print_path(arguments[0])
    prog = invoked_as()
    parser = _parser(prog)
    args = parser.parse_args(arguments)
    flag = next((f for f in PATH_FLAGS if getattr(args, f.removeprefix("--"))), None)
    if flag is not None:
        if args.command is not None:
            parser.error(f"{flag} prints an answer and takes no command (got {args.command!r})")
        return _print_path(flag)
    if args.command == "info":
        from .info import print_info

        return print_info(as_json=args.json)
    if args.command == "check":
        return _check()
    if args.command == "bench":
        from ..bench.command import CommandLineError, run_from_arguments

        try:
            return run_from_arguments(args)
        except CommandLineError as error:
            print(f"{prog} bench: error: {error}", file=sys.stderr)
            return error.exit_status
    parser.print_usage(sys.stderr)
    print(f"{prog}: error: a command is required (info, check or bench)", file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    try:
        status = _run(list(sys.argv[1:] if argv is None else argv))
        sys.stdout.flush()  # a reader that left surfaces here, not in the exit-time flush
    except BrokenPipeError:
        # Point stdout at devnull so that the interpreter's own flush at exit stays quiet.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_READER_GONE
    return status


if __name__ == "__main__":
    sys.exit(main())
