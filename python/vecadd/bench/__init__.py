"""``vecadd bench``: vecadd's operators against torch's on the user's machine
(docs/benchmarks.md).

command.py reads the command line and runs the modes; modes.py says what each mode times,
timing.py how (interleaved rounds, cache flushes, device spans); layouts.py makes the operands;
add_n.py times add_n against a chain of torch.add, compiled.py and training.py compiled blocks;
report.py and plot.py show the results. timing.py, modes.py and layouts.py are public: scripts
that time other calls (lab/) time them the same way. The bench uses vecadd's operators and
never the command line; importing this package imports nothing else.
"""
