"""Driving a real ``arena`` process from a test: counting what it has stored so far, and
pressing Ctrl-C once it has stored enough."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def count(db: Path, sql: str = "SELECT count(*) FROM matches") -> int:
    """``sql``'s one number from a store another process may be creating right now (0 until it exists)."""
    try:
        with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True) as c:
            return c.execute(sql).fetchone()[0]
    except sqlite3.Error:
        return 0


def interrupt_after(argv: list[str], db: Path, matches: int, *, timeout: float = 120) -> tuple[int, str, str]:
    """Start ``arena ARGV``, send it SIGINT (Ctrl-C) once ``db`` holds ``matches`` matches;
    its exit status, stdout and stderr."""
    proc = subprocess.Popen([sys.executable, "-m", "arena", *argv], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + timeout
        while count(db) < matches:
            assert proc.poll() is None, f"the run ended before it could be interrupted: {proc.communicate()}"
            assert time.monotonic() < deadline, f"fewer than {matches} matches stored in {timeout:g} s"
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, out, err


def arena(
    *args: str | Path, timeout: float = 300, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run ``arena ARGS`` to its end, as a user would (in ``env``, default this process's);
    its output as text."""
    return subprocess.run([sys.executable, "-m", "arena", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env=env)  # fmt: skip
