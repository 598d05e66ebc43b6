"""Counted nouns for messages: "1 tensor", "3 tensors"."""


def plural(count: int, noun: str) -> str:
    """`count` and `noun`, the noun with an s unless the count is one."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
