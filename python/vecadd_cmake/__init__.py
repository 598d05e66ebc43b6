"""Where CMake finds vecadd: the prefix that vecadd's ``cmake.prefix`` entry point names.

scikit-build-core imports every such entry point on every build it runs. ``import vecadd`` loads
torch and vecadd's libraries, which would make every unrelated build in an environment holding
vecadd pay for torch, and fail with vecadd whenever that import fails (no torch, a CPU-only
torch, a broken driver). This package imports nothing: its folder holds lib/cmake/vecadd, whose
files forward ``find_package(vecadd CONFIG)`` to the package config in vecadd/lib/cmake/vecadd.
"""
