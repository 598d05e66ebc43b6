"""vecadd's command line: ``vecadd`` and ``python -m vecadd`` (main.py), the self-test of
``vecadd check`` (check.py), and what runs before torch is loaded (without_torch.py).

Importing this package imports nothing else: the path queries (``--cmakedir``, ``--includes``,
``--version``) answer without torch.
"""
