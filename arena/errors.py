"""The error a user sees as one line: ``arena: error: <message>``.

`UserError` is for bad input the user can fix (a flag, a file, a name). The CLI wrapper
prints it without a traceback; any other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any


class UserError(Exception):
    """Bad input from the user, reported as one line naming the field or file."""


def read_toml(path: Path, missing: str) -> dict[str, Any]:
    """A TOML file's table; `UserError` (``missing`` when there is no file, else naming
    the file and what is wrong with it) instead of an exception per failure."""
    try:
        return tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(missing) from None
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"{path}: cannot read: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"{path}: not valid TOML: {e}") from None
