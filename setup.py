"""Build the optional C kernels of the expert's search (everything else is in pyproject.toml).

Each kernel is an `optional` extension: on a machine without a C compiler or Python's
headers the install still succeeds and the search runs its pure-Python twin, which plays
the same moves (the tests check the two agree), only slower.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("arena.bots._csolve", ["arena/bots/_csolve.c"], optional=True),
        Extension("arena.bots._cplayout", ["arena/bots/_cplayout.c"], optional=True),
    ]
)
