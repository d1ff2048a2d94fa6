"""Driving a real ``arena`` process from a test: counting what it has stored so far, and
pressing Ctrl-C once it has stored enough."""

from __future__ import annotations

import os
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


def ok(p: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert p.returncode == 0, f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    return p


def one_line_error(p: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit 2 and one ``arena: error:`` line on stderr (warnings aside), holding every needle."""
    assert p.returncode == 2, f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    assert "Traceback" not in p.stderr, p.stderr
    lines = [x for x in p.stderr.strip().splitlines() if "arena: error:" in x]
    assert len(lines) == 1, p.stderr
    for n in needles:
        assert n in lines[0], f"{n!r} not in {lines[0]!r}"
    return lines[0]


def group_alive(pgid: int) -> list[int]:
    """Pids of live (not zombie) processes in a process group."""
    alive = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(entry))
    return alive
