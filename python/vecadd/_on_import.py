"""Registrations that wait for a torch module vecadd does not import itself (DTensor, Inductor):
importing either with vecadd would cost every user about a second of import time, so vecadd
registers with it once whoever needs it has imported it."""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import threading
from collections.abc import Callable


def when_imported(module: str, register: Callable[[], None]) -> None:
    """Calls `register` now if `module` is loaded, else right after its first import."""
    if module in sys.modules:
        register()
    else:
        sys.meta_path.insert(0, _RegisterOnImport(module, register))


class _RegisterOnImport(importlib.abc.MetaPathFinder):
    def __init__(self, module: str, register: Callable[[], None]) -> None:
        self._module, self._register = module, register
        self._lock = threading.Lock()

    def find_spec(self, fullname, path, target=None):
        if fullname != self._module:
            return None
        with self._lock:
            if self not in sys.meta_path:
                return None
            sys.meta_path.remove(self)  # from here on the ordinary finders answer
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _ThenRegister(spec.loader, self._register)
        return spec


class _ThenRegister(importlib.abc.Loader):
    def __init__(self, loader, register: Callable[[], None]) -> None:
        self._loader, self._register = loader, register

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        self._loader.exec_module(module)
        self._register()
