"""Bandwidth of vecadd.add next to torch.add (``python -m vecadd bench``)."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", default=None, help="cpu or cuda[:N] (default: cuda if present)")


def run_from_arguments(args: argparse.Namespace) -> int:
    raise SystemExit("python -m vecadd bench: not available yet")
