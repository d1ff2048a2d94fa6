"""Live progress of a run, and its JSON-lines event stream.

`Progress` keeps counts as matches finish and redraws a status block on a terminal: a
progress bar with matches done and total, rate, ETA and fault counts, and the standings
every few seconds. When stderr is not a terminal it prints a plain status line every ten
seconds instead. `StatusLine` does the same for one line of text (``arena compare``'s
SPRT state). `EventLog` writes a versioned JSON-lines stream (``run_started``,
``match_finished``, ``fault``, ``run_finished``) that other tools can follow.
`interrupted` tells a Ctrl-C from other errors, however Trio wrapped it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

import trio

from ..results.standings import format_standings, standings
from ..tournament.runner import Finished

EVENTS_VERSION = 1


class EventLog:
    """Append-only JSON lines, one event each, flushed as written."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        # private to this user, like the store: the events carry the seeds
        self.f = os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "a", encoding="utf-8")

    def emit(self, event: str, **data: Any) -> None:
        self.f.write(json.dumps({"v": EVENTS_VERSION, "event": event, "time": round(time.time(), 3), **data}) + "\n")
        self.f.flush()

    def close(self) -> None:
        self.f.close()


def match_event(f: Finished) -> dict[str, Any]:
    r = f.record
    return {
        "match_id": f.spec.match_id,
        "pairing": f.spec.pairing,
        "pair": f.spec.pair_index,
        "game": f.spec.game,
        "seats": list(f.spec.seats),
        "winner": _winner_name(f.spec.seats, r.winner, r.kind),
        "score": r.score,
        "margin": r.margin,
        "deals": len(r.deals),
        "seconds": round(f.finished - f.started, 3),
        "forfeit": {"seat": r.forfeit.seat, "agent": f.spec.seats[r.forfeit.seat], "fault": r.forfeit.code}
        if r.forfeit
        else None,
        **({"kind": r.kind, "places": r.places} if len(f.spec.seats) > 2 else {}),
    }


def _winner_name(seats: Sequence[str], winner: int | None, kind: str) -> str | None:
    """Who won: a seat's agent, or a team's agents joined by "+" (team t: seats t, t + 2)."""
    if winner is None:
        return None
    return "+".join(seats[winner::2]) if kind == "team" else seats[winner]


class Progress:
    """Counts and a terminal display; feed it with `finished`, run `display` in a task."""

    def __init__(
        self, total: int, done_before: int, rows: list[dict], names: list[str], *, stream: IO[str] | None = None
    ):
        self.total = total
        self.done = done_before
        self.rows = list(rows)
        self.names = names
        self.faults: Counter[str] = Counter()
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.t0 = time.monotonic()
        self.played = 0
        self._lines = 0

    def finished(self, f: Finished) -> None:
        r = f.record
        self.done += 1
        self.played += 1
        if r.forfeit:
            self.faults[r.forfeit.code] += 1
        row = {f"seat{s}": name for s, name in enumerate(f.spec.seats)}
        row.update({f"score{s}": x for s, x in enumerate(r.score)})
        row.update({f"place{s}": x for s, x in enumerate(r.places or ())})
        row.update(winner=r.winner, kind=r.kind, forfeit_seat=r.forfeit.seat if r.forfeit else None)
        self.rows.append(row)

    def status(self) -> str:
        elapsed = max(time.monotonic() - self.t0, 1e-9)
        rate = self.played / elapsed
        left = self.total - self.done
        eta = f"{int(left / rate) // 60}:{int(left / rate) % 60:02d}" if rate > 0 else "?"
        frac = self.done / self.total if self.total else 1.0
        bar = "#" * int(30 * frac) + "." * (30 - int(30 * frac))
        faults = ", ".join(f"{k} {v}" for k, v in self.faults.most_common()) or "none"
        return f"[{bar}] {self.done}/{self.total} {100 * frac:.0f}%  {rate:.1f} matches/s  ETA {eta}  faults: {faults}"

    def table(self) -> str:
        return format_standings(standings(self.rows, self.names), tables=any("seat2" in r for r in self.rows))

    def draw(self) -> None:
        if self.tty:
            block = self.table() + "\n" + self.status()
            up = f"\x1b[{self._lines}F\x1b[J" if self._lines else ""
            self.stream.write(up + block + "\n")
            self._lines = block.count("\n") + 1
        else:
            self.stream.write(self.status() + "\n")
        self.stream.flush()

    def note(self, line: str) -> None:
        """Print ``line`` above the live display, where the next redraw will not erase it."""
        if self.tty and self._lines:
            self.stream.write(f"\x1b[{self._lines}F\x1b[J")
            self._lines = 0
        self.stream.write(line + "\n")
        self.stream.flush()

    async def display(self) -> None:
        """Redraw until cancelled: twice a second on a terminal, every 10 s otherwise."""
        period = 0.5 if self.tty else 10.0
        while True:
            await trio.sleep(period)
            self.draw()


class StatusLine:
    """One status line kept current on a terminal (redrawn in place twice a second), or
    printed every ten seconds when the stream is not a terminal. ``text`` gives the line."""

    def __init__(self, text: Callable[[], str], *, stream: IO[str] | None = None):
        self.text = text
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self._shown = ""

    def draw(self) -> None:
        line = self.text()
        if self.tty:
            if line != self._shown:
                self.stream.write("\r\x1b[K" + line)
        else:
            self.stream.write(line + "\n")
        self._shown = line
        self.stream.flush()

    def clear(self) -> None:
        """End the line on a terminal, so that what is printed next starts on its own."""
        if self.tty and self._shown:
            self.stream.write("\n")
            self.stream.flush()
            self._shown = ""

    async def display(self) -> None:
        """Redraw until cancelled: twice a second on a terminal, every 10 s otherwise."""
        period = 0.5 if self.tty else 10.0
        while True:
            await trio.sleep(period)
            self.draw()


def interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is a Ctrl-C: a `KeyboardInterrupt`, or an exception group (Trio's
    nurseries wrap what their tasks raise) holding nothing else."""
    if isinstance(exc, BaseExceptionGroup):
        match, rest = exc.split(KeyboardInterrupt)
        return match is not None and rest is None
    return isinstance(exc, KeyboardInterrupt)
