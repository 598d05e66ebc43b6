"""``vecadd bench``: the bandwidth of vecadd's operators against torch's (docs/benchmarks.md).

command.py reads the command line and runs the modes; modes.py says what each mode times,
timing.py how (interleaved rounds, cache flushes, device spans); layouts.py makes the operands;
add_n.py times add_n against a chain of torch.add; report.py and plot.py show the results.
Importing this package imports nothing else.
"""
