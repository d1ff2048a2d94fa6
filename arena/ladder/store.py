"""A ladder's store: the results store plus the ladder's own tables. SQL lives here and
in `arena.results.store` only.

Extra tables:

- ``entries``: one row per submitted agent version, keyed ``name@version``: its content
  hash, the folder of its immutable copy, when it was submitted, and its status
  (``active`` or ``retired``; a retired entry keeps its record).
- ``ladder_pairs``: every duplicate pair the scheduler planned, with its round and
  seed, written before any of its matches is played. In a ladder of a three- or
  four-handed game a row is a *table* instead, played for one deck set: its agents,
  sorted, in ``a``, ``b``, ``c`` (and ``d``; NULL at a table of three). A pair or table
  whose matches are not all in ``matches`` is open: a resumed run plays the missing ones
  first, under the same match ids, so a killed run neither loses nor repeats a match.
  (Ladders made before tables have no ``c``, ``d`` columns; they plan pairs only.)
- ``history``: each agent's rating, its standard error and games after each round.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from typing import Any

from ..results.store import Store, StoreError, _from_u64, _u64

_LADDER_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    key TEXT PRIMARY KEY, name TEXT NOT NULL, version TEXT NOT NULL, language TEXT,
    content_hash TEXT NOT NULL, folder TEXT NOT NULL, submitted REAL NOT NULL,
    status TEXT NOT NULL DEFAULT 'active', retired REAL
);
CREATE TABLE IF NOT EXISTS ladder_pairs (
    id INTEGER PRIMARY KEY, round INTEGER NOT NULL, a TEXT NOT NULL, b TEXT NOT NULL,
    seed INTEGER NOT NULL, planned REAL NOT NULL, c TEXT, d TEXT
);
CREATE TABLE IF NOT EXISTS history (
    round INTEGER NOT NULL, at REAL NOT NULL, agent TEXT NOT NULL, elo REAL NOT NULL,
    se REAL NOT NULL, games INTEGER NOT NULL, PRIMARY KEY (round, agent)
);
"""


class LadderStore(Store):
    """A ladder's SQLite file. ``create`` is for `arena ladder init` only."""

    def __init__(self, path: Any, *, create: bool = False):
        super().__init__(path, create=create)
        if create:
            self.db.executescript(_LADDER_SCHEMA)
        elif self.db.execute("SELECT name FROM sqlite_master WHERE name = 'entries'").fetchone() is None:
            raise StoreError(f"{self.path}: not a ladder store (no entries table)")

    # -- entries --------------------------------------------------------------------------
    def entry(self, key: str) -> dict[str, Any] | None:
        rows = self._rows("SELECT * FROM entries WHERE key = ?", (key,))
        return rows[0] if rows else None

    def entries(self, status: str | None = None) -> list[dict[str, Any]]:
        if status is None:
            return self._rows("SELECT * FROM entries ORDER BY submitted, key")
        return self._rows("SELECT * FROM entries WHERE status = ? ORDER BY submitted, key", (status,))

    def add_entry(self, row: dict[str, Any], *, retire_older: bool = True) -> list[str]:
        """Record a new entry; retire the active entries of the same name (a new version
        replaces the old one in the schedule, which keeps its record). Returns the keys
        retired."""
        now = time.time()
        self.db.execute("BEGIN IMMEDIATE")
        try:
            old = [
                r[0]
                for r in self.db.execute(
                    "SELECT key FROM entries WHERE name = ? AND status = 'active' AND key != ?",
                    (row["name"], row["key"]),
                )
            ]
            if retire_older and old:
                self.db.executemany(
                    "UPDATE entries SET status = 'retired', retired = ? WHERE key = ?", [(now, k) for k in old]
                )
            self.db.execute(
                "INSERT INTO entries (key, name, version, language, content_hash, folder, submitted) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (row["key"], row["name"], row["version"], row["language"], row["content_hash"], row["folder"], now),
            )
            self.db.execute("COMMIT")
        except sqlite3.IntegrityError:
            self.db.execute("ROLLBACK")
            raise StoreError(f"{self.path}: {row['key']} is already submitted") from None
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise
        return old if retire_older else []

    def set_status(self, key: str, status: str) -> None:
        self.db.execute(
            "UPDATE entries SET status = ?, retired = ? WHERE key = ?",
            (status, time.time() if status == "retired" else None, key),
        )

    # -- pairs ----------------------------------------------------------------------------
    def plan(self, round_: int, pairs: Sequence[tuple[Any, ...]]) -> list[dict[str, Any]]:
        """Record a round's pairs ``(a, b, seed)``, or tables ``(a, b, c[, d], seed)`` (their
        agents sorted), in one transaction; returns them with ids (see `pairs`)."""
        now = time.time()
        two = [(round_, *row[:-1], _u64(row[-1]), now) for row in pairs if len(row) == 3]
        more = [(round_, *row[:-1], *[None] * (5 - len(row)), _u64(row[-1]), now) for row in pairs if len(row) > 3]
        self.db.execute("BEGIN IMMEDIATE")
        try:
            if two:
                self.db.executemany("INSERT INTO ladder_pairs (round, a, b, seed, planned) VALUES (?, ?, ?, ?, ?)", two)
            if more:
                self.db.executemany(
                    "INSERT INTO ladder_pairs (round, a, b, c, d, seed, planned) VALUES (?, ?, ?, ?, ?, ?, ?)", more
                )
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise
        return self.pairs(round_)

    def pairs(self, round_: int | None = None) -> list[dict[str, Any]]:
        """The planned pairs or tables (all, or of one round), by id: rows of ``id``,
        ``round``, ``a``, ``b`` (``c``, ``d``: a table's others, or None), ``seed``,
        ``planned``, and ``agents``: the pair's or table's agents, in order."""
        if round_ is None:
            rows = self._rows("SELECT * FROM ladder_pairs ORDER BY id")
        else:
            rows = self._rows("SELECT * FROM ladder_pairs WHERE round = ? ORDER BY id", (round_,))
        for r in rows:
            r["seed"] = _from_u64(r["seed"])
            r.setdefault("c", None)
            r.setdefault("d", None)
            r["agents"] = tuple(r[k] for k in "abcd" if r[k] is not None)
        return rows

    def table_sets(self) -> dict[tuple[str, ...], int]:
        """How many deck sets each table (its agents, sorted) has planned so far: the next
        set's number, which its seed is derived from."""
        if "c" not in {r[1] for r in self.db.execute("PRAGMA table_info(ladder_pairs)")}:
            return {}
        rows = self.db.execute(
            "SELECT a, b, c, d, count(*) FROM ladder_pairs WHERE c IS NOT NULL GROUP BY a, b, c, d"
        ).fetchall()
        return {tuple(x for x in r[:4] if x is not None): int(r[4]) for r in rows}

    def last_round(self) -> int:
        """The highest planned round, or -1."""
        row = self.db.execute("SELECT max(round) FROM ladder_pairs").fetchone()
        return -1 if row[0] is None else int(row[0])

    # -- history --------------------------------------------------------------------------
    def finished_rounds(self) -> int:
        """How many rounds are finished (their ratings recorded in ``history``)."""
        return int(self.db.execute("SELECT count(DISTINCT round) FROM history").fetchone()[0])

    def has_history(self, round_: int) -> bool:
        return self.db.execute("SELECT 1 FROM history WHERE round = ? LIMIT 1", (round_,)).fetchone() is not None

    def record_history(self, round_: int, rows: Sequence[tuple[str, float, float, int]]) -> None:
        """Each agent's ``(agent, elo, se, games)`` after a round, in one transaction."""
        now = time.time()
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.executemany(
                "INSERT OR REPLACE INTO history (round, at, agent, elo, se, games) VALUES (?, ?, ?, ?, ?, ?)",
                [(round_, now, a, float(e), float(s), int(g)) for a, e, s, g in rows],
            )
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise

    def history(self) -> list[dict[str, Any]]:
        return self._rows("SELECT * FROM history ORDER BY round, agent")
