"""``vecadd bench``: vecadd's operators against torch's on the user's machine
(docs/benchmarks.md).

command.py reads the command line and runs the modes; modes.py says what each mode times,
timing.py how (interleaved rounds, cache flushes, device spans); layouts.py makes the operands;
add_n.py times add_n against a chain of torch.add, compiled.py and training.py compiled blocks;
report.py and plot.py show the results. Its modules and their names without a leading underscore
are public: lab/ builds its instruments (kernel durations, per-call cost, kernel variants) on
them. The bench uses vecadd's public operators, never the command line; importing this package
imports nothing else.
"""
