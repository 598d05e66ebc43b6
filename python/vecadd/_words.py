"""The words of vecadd's messages: counted nouns ("1 tensor", "3 tensors"), and the kind of error
that a stable-ABI kernel's message carries in its first words."""

# The stable ABI delivers every C++ error as a RuntimeError whose first words are its kind
# (src/binding/call_rules.h's kind_prefix writes them).
ERROR_KINDS = {"TypeError: ": TypeError, "ValueError: ": ValueError}


def typed_error(error: RuntimeError) -> Exception:
    """The TypeError or ValueError that `error`'s first words name, with the rest of its
    message; `error` itself where they name none."""
    message = str(error)
    for prefix, kind in ERROR_KINDS.items():
        if message.startswith(prefix):
            return kind(message.removeprefix(prefix))
    return error


def plural(count: int, noun: str) -> str:
    """`count` and `noun`, the noun with an s unless the count is one."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
