"""Run a command as an unprivileged user, for the tests and benchmarks that check the
arena as a normal user runs it (CI runs as root).

`ensure_user` creates the user (``useradd``) when missing. `as_user` gives the command
line that runs a command as that user through the sandbox's own launcher
(`arena.runtime.jail`): a mount namespace in which any folder on the way to this Python, the
virtual environment and the checkout that the user may not traverse (``/root``, where
pyenv puts Python) is covered by an empty tmpfs with just those trees bound back, then
setgid/setuid to the user. Nothing on the machine changes: no chmod of ``/root``.
Only root can do this; elsewhere the current user already is unprivileged.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from arena.runtime.sandbox import _mask_spec, _masks, _runtime, jail_argv

USER = "arena-hostile"
ROOT = Path(__file__).resolve().parent.parent


def can_switch() -> bool:
    """Whether this process can run commands as another user (it is root, with useradd)."""
    return os.geteuid() == 0 and shutil.which("useradd") is not None


def ensure_user(name: str = USER) -> tuple[int, int]:
    """(uid, gid) of ``name``, created without a home folder if missing."""
    try:
        pw = pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True)
        pw = pwd.getpwnam(name)
    return pw.pw_uid, pw.pw_gid


def give(path: Path, name: str = USER) -> Path:
    """Hand a folder (made by root for a test) to the user, recursively; returns it."""
    uid, gid = ensure_user(name)
    for dirpath, _dirs, filenames in os.walk(path):
        os.chown(dirpath, uid, gid)
        for f in filenames:
            os.chown(os.path.join(dirpath, f), uid, gid, follow_symlinks=False)
    return path


def as_user(command: Sequence[str], name: str = USER, extra: Sequence[Path] = ()) -> list[str]:
    """The command line that runs ``command`` as ``name`` with this Python, the arena
    checkout and ``extra`` paths reachable (see the module docstring)."""
    uid, gid = ensure_user(name)
    masks = _masks([*_runtime(), ROOT, *(Path(p).resolve() for p in extra)])
    spec = {"mask": _mask_spec(masks), "uid": uid, "gid": gid}
    return jail_argv(spec, command)


def user_env(home: Path) -> dict[str, str]:
    """A plain environment for the user's processes, with ``home`` as HOME."""
    return {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(home), "LANG": "C.UTF-8"}


def run_as(command: Sequence[str], home: Path, name: str = USER, **kw: object) -> subprocess.CompletedProcess:
    """Run ``command`` as the user in ``home`` (a folder of the user's)."""
    return subprocess.run(as_user(command, name), cwd=home, env=user_env(home), **kw)  # type: ignore[call-overload]
