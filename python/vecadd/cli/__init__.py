"""vecadd's command line: ``vecadd`` and ``python -m vecadd`` (main.py), ``vecadd info``
(info.py), the self-test of ``vecadd check`` (check.py); ``vecadd bench`` is vecadd.bench.

Importing this package imports nothing else: the path queries (``--cmakedir``, ``--includes``,
``--version``) answer without torch (vecadd/_path_query.py).
"""
