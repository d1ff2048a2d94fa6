"""The expert's C kernels are optional extensions: an install without a C compiler
succeeds without them, and their tests skip. Where a compiler and Python's headers are
present they must have been built, or a broken kernel would pass CI as skipped tests."""

import shutil
import sysconfig
from pathlib import Path

import pytest

from arena.bots import endgame, fast_playout


def test_the_c_kernels_are_built_where_they_can_be():
    headers = Path(sysconfig.get_paths()["include"], "Python.h")
    if not (shutil.which("cc") or shutil.which("gcc")) or not headers.exists():
        pytest.skip("no C compiler or no Python headers here: the kernels are optional")
    assert endgame._csolve is not None, "arena.bots._csolve is not built: pip install -e . with a C compiler"
    assert fast_playout.AVAILABLE, "arena.bots._cplayout is not built: pip install -e . with a C compiler"
    assert endgame.USE_C and fast_playout.USE_C
