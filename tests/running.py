"""What several test files share: driving a real ``arena`` process (counting what it has
stored so far, pressing Ctrl-C once it has stored enough, its one-line errors), processes
left in a group, a match record replayed in the engine, a transcript fed to an agent, a
replay page's data and the cards in it."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

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


def replay_record(rec: Any, variant: Any) -> tuple[Any, Any]:
    """A referee's match record played again in the rules engine from its seed and
    actions: the `Match` and its result (adjudicated when the record stopped at the deal
    limit), to compare with what the referee recorded."""
    from arena.game import Match

    match = Match(variant, rec.seed)
    for d in rec.deals:
        state = match.new_deal()
        for a in d.actions:
            state.apply_action(a)
        match.finish_deal()
    return match, (match.result if match.is_over() else match.adjudicate())


def feed_transcript(lines: list[dict], seat: int, agent: str) -> tuple[list[dict], list[dict]]:
    """How an author replays a recorded transcript (protocol/SPEC.md section 11): one
    seat's ``to-agent`` lines into the bundled ``agent``; (its answers, the recorded ones)."""
    fed = "".join(json.dumps(x["msg"]) + "\n" for x in lines if x["seat"] == seat and x["dir"] == "to-agent")
    want = [x["msg"] for x in lines if x["seat"] == seat and x["dir"] == "from-agent"]
    p = subprocess.run(
        [sys.executable, "agent.py"], cwd=ROOT / "agents" / agent, input=fed, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    return [json.loads(x) for x in p.stdout.splitlines()], want


def new_local_cluster(n: int, **kw: Any) -> Any:
    """A Dask LocalCluster of ``n`` single-threaded worker processes, no dashboard (so no
    clash on its port with another at the same time), quiet; ``kw`` adds to it (``env``)."""
    import logging

    import distributed

    return distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                                    scheduler_kwargs={"dashboard": False}, memory_limit=0,
                                    silence_logs=logging.CRITICAL, **kw)  # fmt: skip



#: A card as the replay pages write it.
CARD = re.compile(r"^[ATKQJ987][CDHS]$")


def cards_in(x: Any) -> set[str]:
    """Every card string anywhere in a JSON value (``{KH}`` in text included)."""
    if isinstance(x, str):
        return {x} if CARD.match(x) else set(re.findall(r"\{([ATKQJ987][CDHS])\}", x))
    if isinstance(x, dict):
        return set().union(*(cards_in(v) for v in x.values())) if x else set()
    if isinstance(x, list):
        return set().union(*(cards_in(v) for v in x)) if x else set()
    return set()


def page_data(path: Path) -> dict:
    """The replay data embedded in an ``arena view`` page, its views expanded."""
    from arena.report.replay_page import expand_views

    m = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', path.read_text(), re.S)
    assert m
    return expand_views(json.loads(m.group(1).replace("<\\/", "</")))
