"""The results store: one SQLite file per tournament, the only code that knows SQL.

Tables (schema version 2):

- ``meta``: key/value: ``schema_version``, ``config_hash``, ``config`` (JSON), and
  ``secret``: the secret root seed of a run given no seed (`arena.tournament.secret`).
- ``runs``: every invocation that wrote here: start and end time, code version, shard,
  command line.
- ``agents``: name, version, language, content hash of the folder, folder.
- ``matches``: one row per match, keyed by its id (a pure function of the config): the
  pairing, pair index, game in the pair, the agents in each seat, the seed, the winner
  (seat and name), the final score, the margin, the forfeit (seat, fault code, detail),
  counts, per-seat latency and CPU statistics, timings, and the latencies themselves,
  packed (`pack_ms`: whole microseconds as 16-, 32- or 64-bit integers, a third of
  their JSON text's size; version 1 kept JSON text).
- ``deals``: one row per deal: seed, dealer, winner, game points, reason, card points,
  tricks, and the action list. ``game_points`` is the deal's own worth (1, 2, 3);
  ``carried`` what a drawn hand before it added.

A match lost before play (a forfeit with no deal: a seat could not be started, or its
process was gone before the first deal) is recorded like any other, but is not a result
of play: `unplayed_ids` lists such matches, a resumed run plays them again, and the new
record replaces the old (`write_match`). This needs no column of its own (``fault`` set,
``fault_deal`` NULL, ``deals`` 0), so stores written before it was introduced are read
the same way.

A match and its deals are written in one transaction, so a killed run (SIGKILL
included) leaves only whole matches; the database runs in WAL mode so readers (progress,
export, reports) never block the writer. Opening a store made by another config is
refused with a one-line error.

SQLite's and the OS's errors on the store (a full disk, a read-only folder, a file that
is not SQLite or is damaged) become a one-line `StoreError` naming the file, here only:
the connection's cursors translate them wherever they show (`_errors`); a failed match
transaction rolls back and leaves the matches before it. `Store.verify` is the end-of-run
check: the file is still the one opened, whole, and holds every match this run wrote.

A version 1 store (latencies as JSON text) is read as it is: `unpack_ms` reads both
forms. Opening one to write (``create=True``: a resumed tournament, a merge), or writing a
match to it (a ladder's next round), migrates it first, in one transaction: its
latencies are packed and its version becomes 2.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import sqlite3
import statistics
import struct
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..play.referee import MatchRecord

SCHEMA_VERSION = 2
#: Versions this code opens: version 1 is read as it is, and migrated when opened to write.
_READABLE = ("1", "2")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY, started REAL NOT NULL, finished REAL, code_version TEXT,
    shard TEXT, argv TEXT, matches_played INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS agents (
    name TEXT PRIMARY KEY, version TEXT, language TEXT, content_hash TEXT NOT NULL, folder TEXT
);
CREATE TABLE IF NOT EXISTS matches (
    id TEXT PRIMARY KEY, idx INTEGER NOT NULL, run_id INTEGER, pairing TEXT NOT NULL,
    pair_index INTEGER NOT NULL, game INTEGER NOT NULL, seat0 TEXT NOT NULL, seat1 TEXT NOT NULL,
    seed INTEGER NOT NULL, winner INTEGER, winner_name TEXT, score0 INTEGER NOT NULL,
    score1 INTEGER NOT NULL, margin INTEGER NOT NULL, forfeit_seat INTEGER, fault TEXT,
    fault_detail TEXT, fault_deal INTEGER, deals INTEGER NOT NULL, decisions0 INTEGER NOT NULL,
    decisions1 INTEGER NOT NULL, latency_mean0 REAL, latency_mean1 REAL, latency_max0 REAL,
    latency_max1 REAL, cpu_ms0 REAL, cpu_ms1 REAL, started REAL, finished REAL,
    latencies BLOB, cpu BLOB
);
CREATE TABLE IF NOT EXISTS deals (
    match_id TEXT NOT NULL REFERENCES matches(id), deal INTEGER NOT NULL, seed INTEGER NOT NULL,
    dealer INTEGER NOT NULL, winner INTEGER, game_points INTEGER NOT NULL, carried INTEGER NOT NULL,
    reason TEXT NOT NULL,
    points0 INTEGER, points1 INTEGER, tricks0 INTEGER, tricks1 INTEGER, actions TEXT NOT NULL,
    PRIMARY KEY (match_id, deal)
);
"""

#: Matches lost before play: a forfeit with no deal played (see `Store.unplayed_ids`).
_UNPLAYED = "fault IS NOT NULL AND fault_deal IS NULL AND deals = 0"

#: Columns of `matches` that depend on the machine, not on the games (left out when
#: comparing two runs of one config).
TIMING_COLUMNS = (
    "run_id", "latency_mean0", "latency_mean1", "latency_max0", "latency_max1", "cpu_ms0", "cpu_ms1",
    "started", "finished", "latencies", "cpu",
)  # fmt: skip


# -- packed latencies ----------------------------------------------------------------------------
#
# ``matches.latencies`` and ``matches.cpu`` hold ``[[seat 0's ms per decision], [seat 1's]]``.
# The referee measures them to the microsecond (ms rounded to 3 decimals), so they are kept
# as whole microseconds: a header ``<BII`` (the width of a value in bytes, 2, 4 or 8, and
# the two seats' counts), then every value little-endian unsigned, seat 0's first; the
# largest value of the width stands for a missing one (CPU time not measured). The width
# is the smallest that holds the largest value. A list that does not fit (a negative or
# non-finite value, more than 3 decimals) is kept as JSON text, version 1's form.
_HEADER = struct.Struct("<BII")
_WIDTHS = {2: "H", 4: "I", 8: "Q"}


def pack_ms(lists: Sequence[Sequence[float | None]]) -> bytes | str:
    """Two seats' lists of milliseconds (None: missing) as the store keeps them: packed
    microseconds, or JSON text for values that do not fit (see above)."""
    us: list[int | None] = []
    for x in (*lists[0], *lists[1]):
        if x is None:
            us.append(None)
            continue
        if not (isinstance(x, int | float) and math.isfinite(x) and x >= 0):
            return json.dumps([list(lists[0]), list(lists[1])])
        u = round(x * 1000)
        if u / 1000 != x:
            return json.dumps([list(lists[0]), list(lists[1])])
        us.append(u)
    top = max((u for u in us if u is not None), default=0)
    width = next((w for w in (2, 4, 8) if top < (1 << (8 * w)) - 1), None)
    if width is None:
        return json.dumps([list(lists[0]), list(lists[1])])
    missing = (1 << (8 * width)) - 1
    values = [missing if u is None else u for u in us]
    return _HEADER.pack(width, len(lists[0]), len(lists[1])) + struct.pack(f"<{len(values)}{_WIDTHS[width]}", *values)


def unpack_ms(value: bytes | str | None) -> list[list[float | None]] | None:
    """The two seats' lists of milliseconds from a stored ``latencies`` or ``cpu`` value:
    packed (version 2) or JSON text (version 1, or values that do not pack); None stays None."""
    if value is None:
        return None
    if isinstance(value, str):
        return json.loads(value)
    width, n0, n1 = _HEADER.unpack_from(value)
    values = struct.unpack_from(f"<{n0 + n1}{_WIDTHS[width]}", value, _HEADER.size)
    missing = (1 << (8 * width)) - 1
    ms = [None if u == missing else u / 1000 for u in values]
    return [ms[:n0], ms[n0:]]


def _repack(value: bytes | str | None) -> bytes | str | None:
    """A stored value in this version's form (for a migration or a merge)."""
    return value if value is None or isinstance(value, bytes) else pack_ms(json.loads(value))


class StoreError(UserError):
    """A store that cannot be used for what was asked (another config, not a store, a
    full disk, a read-only folder, a damaged file)."""


# What a SQLite error (its extended, else its primary result code) or an OS error (its
# errno) means for the user. Other errors (an SQL mistake, a misuse of the API) are bugs
# and keep their type.
_FOLDER = "cannot write: its folder must be writable, for SQLite's -wal and -shm files"
_SQLITE_PROBLEMS = {
    sqlite3.SQLITE_READONLY_DIRECTORY: _FOLDER,
    sqlite3.SQLITE_READONLY_CANTINIT: _FOLDER,
    sqlite3.SQLITE_READONLY_CANTLOCK: _FOLDER,
    sqlite3.SQLITE_FULL: "cannot write: the disk is full",
    sqlite3.SQLITE_READONLY: "cannot write: the store or its folder is read-only",
    sqlite3.SQLITE_PERM: "cannot write: the store or its folder is read-only",
    sqlite3.SQLITE_CANTOPEN: "cannot open the store: it must be readable and writable, and its folder writable, "
    "for SQLite's -wal and -shm files",
    sqlite3.SQLITE_NOTADB: "not a results store",
    sqlite3.SQLITE_CORRUPT: "the store is damaged",
    sqlite3.SQLITE_IOERR: "cannot read or write the store",
    sqlite3.SQLITE_BUSY: "the store is busy: another process is writing it",
    sqlite3.SQLITE_LOCKED: "the store is busy: another process is writing it",
}
_OS_PROBLEMS = {
    errno.ENOSPC: "cannot write: the disk is full",
    errno.EDQUOT: "cannot write: the disk quota is used up",
    errno.EROFS: "cannot write: the store or its folder is read-only",
    errno.EACCES: "cannot write: the store or its folder is not writable by this user",
    errno.EPERM: "cannot write: the store or its folder is not writable by this user",
}


def _problem(e: sqlite3.Error | OSError, path: Path) -> str | None:
    """What is wrong, in words, for an error of SQLite or of the OS on the store at
    ``path``; None for an error that is a bug here (bad SQL, a closed connection)."""
    if isinstance(e, OSError):
        return f"{_OS_PROBLEMS.get(e.errno, 'cannot use the store')} ({e.strerror or e})"
    code = getattr(e, "sqlite_errorcode", None)
    if isinstance(e, sqlite3.IntegrityError | sqlite3.ProgrammingError) or code is None:
        return None
    if code & 0xFF == sqlite3.SQLITE_IOERR and _no_space(path):  # growing the -shm file, say
        code = sqlite3.SQLITE_FULL
    what = _SQLITE_PROBLEMS.get(code) or _SQLITE_PROBLEMS.get(code & 0xFF)
    return f"{what} ({e})" if what else None


def _no_space(path: Path) -> bool:
    """Whether the file system of ``path`` has (next to) no room left."""
    try:
        st = os.statvfs(path.parent)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 64 * 1024


@contextlib.contextmanager
def _errors(path: Path) -> Iterator[None]:
    """Turn SQLite's and the OS's errors on the store at ``path`` into one-line `StoreError`s."""
    try:
        yield
    except (sqlite3.Error, OSError) as e:
        what = _problem(e, path)
        if what is None:
            raise
        raise StoreError(f"{path}: {what}") from None


class _Cursor(sqlite3.Cursor):
    """A cursor of a store's connection: errors as `StoreError` (see `_errors`)."""

    connection: _Connection

    def execute(self, sql: str, parameters: Any = (), /) -> _Cursor:
        with _errors(self.connection.path):
            return super().execute(sql, parameters)

    def executemany(self, sql: str, seq: Iterable[Any], /) -> _Cursor:
        with _errors(self.connection.path):
            return super().executemany(sql, seq)

    def executescript(self, script: str, /) -> _Cursor:
        with _errors(self.connection.path):
            return super().executescript(script)

    def __next__(self) -> Any:
        with _errors(self.connection.path):
            return super().__next__()

    def fetchone(self) -> Any:
        with _errors(self.connection.path):
            return super().fetchone()

    def fetchall(self) -> list[Any]:
        with _errors(self.connection.path):
            return super().fetchall()


class _Connection(sqlite3.Connection):
    """A store's connection: every statement runs on a `_Cursor`, so a full disk, a
    read-only folder or a damaged file is a `StoreError` naming the file wherever it shows."""

    path: Path

    def execute(self, sql: str, parameters: Any = (), /) -> _Cursor:
        return self.cursor(_Cursor).execute(sql, parameters)

    def executemany(self, sql: str, seq: Iterable[Any], /) -> _Cursor:
        return self.cursor(_Cursor).executemany(sql, seq)

    def executescript(self, script: str, /) -> _Cursor:
        return self.cursor(_Cursor).executescript(script)


def _u64(x: int) -> int:
    """SQLite integers are signed 64-bit: store seeds as their two's complement."""
    return x - (1 << 64) if x >= 1 << 63 else x


def _from_u64(x: int) -> int:
    return x + (1 << 64) if x < 0 else x


class Store:
    """An open results store. Use as a context manager, or call `close`."""

    def __init__(self, path: Path, *, create: bool = True):
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise StoreError(f"{self.path}: no such store")
        #: The ids of the matches this object wrote, for `verify`.
        self.written: list[str] = []
        with _errors(self.path):
            if create:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                # The store holds the seeds and every deal: readable by this user only (SQLite
                # gives its -wal and -shm files the same mode), so no sandboxed agent reads it.
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
            self.db = sqlite3.connect(self.path, isolation_level=None, timeout=30, factory=_Connection)
            self.db.path = self.path
            opened = os.stat(self.path)
        # The file as opened: `verify` checks that the run's file is still this one.
        self._identity = (opened.st_dev, opened.st_ino)
        self._size = opened.st_size
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            if create:
                self.db.executescript(_SCHEMA)
            version = self._meta("schema_version")
        except sqlite3.DatabaseError as e:
            self.db.close()
            raise StoreError(f"{self.path}: not a results store ({e})") from None
        except StoreError:
            self.db.close()
            raise
        if version is None:
            if not create:
                raise StoreError(f"{self.path}: not a results store (no schema version)")
            self._set_meta("schema_version", str(SCHEMA_VERSION))
        elif version not in _READABLE:
            self.db.close()
            raise StoreError(
                f"{self.path}: store schema version {version}; this arena reads versions {', '.join(_READABLE)}"
            )
        #: The store's schema version, as text; a version 1 store is migrated when opened
        #: to write (``create``) or written to (`write_match`), whichever comes first.
        self.version = version or str(SCHEMA_VERSION)
        if self.version != str(SCHEMA_VERSION) and create:
            self._migrate()

    def _migrate(self) -> None:
        """Bring a version 1 store to this version, in one transaction: pack its latencies
        and CPU times (`pack_ms`)."""
        self.db.create_function("repack", 1, _repack, deterministic=True)
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.execute(
                "UPDATE matches SET latencies = repack(latencies), cpu = repack(cpu) "
                "WHERE typeof(latencies) = 'text' OR typeof(cpu) = 'text'"
            )
            self._set_meta("schema_version", str(SCHEMA_VERSION))
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise
        self.version = str(SCHEMA_VERSION)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    # -- meta and config ----------------------------------------------------------------
    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def _set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    @property
    def config_hash(self) -> str | None:
        return self._meta("config_hash")

    @property
    def config(self) -> dict[str, Any] | None:
        text = self._meta("config")
        return json.loads(text) if text else None

    def bind_config(self, config: dict[str, Any], config_hash: str) -> None:
        """Tie the store to a config, or check that it is tied to this one."""
        have = self.config_hash
        if have is None:
            self._set_meta("config_hash", config_hash)
            self._set_meta("config", json.dumps(config, sort_keys=True))
        elif have != config_hash:
            raise StoreError(
                f"{self.path} holds a tournament with another config (hash {have[:12]}, this one {config_hash[:12]}); "
                "use another --store, or the config it was made with"
            )

    def secret(self) -> int | None:
        """The store's secret root seed (see `arena.tournament.secret`), or None for a store of an
        explicit seed. Kept here only: reports and events carry its hash at most."""
        text = self._meta("secret")
        return int(text) if text else None

    def bind_secret(self, secret: int) -> int:
        """Keep ``secret`` as the store's secret unless it has one; returns the store's
        (the old one if there was one: the caller compares)."""
        self.db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('secret', ?)", (str(secret),))
        return int(self._meta("secret"))

    def compare_settings(self) -> dict[str, Any] | None:
        """The SPRT settings of an ``arena compare`` store, else None."""
        text = self._meta("compare")
        return json.loads(text) if text else None

    def bind_compare(self, settings: dict[str, Any]) -> None:
        """Record a comparison's settings, or check a resumed one uses the same."""
        have = self.compare_settings()
        if have is None:
            self._set_meta("compare", json.dumps(settings, sort_keys=True))
        elif have != settings:
            raise StoreError(f"{self.path} holds a comparison with other settings ({have}); use another --store")

    def bind_agents(self, agents: Iterable[dict[str, Any]]) -> None:
        """Record the agents; refuse one whose code changed since the store was started."""
        for a in agents:
            row = self.db.execute("SELECT content_hash FROM agents WHERE name = ?", (a["name"],)).fetchone()
            if row is None:
                self.db.execute(
                    "INSERT INTO agents (name, version, language, content_hash, folder) VALUES (?, ?, ?, ?, ?)",
                    (a["name"], a["version"], a["language"], a["content_hash"], a["folder"]),
                )
            elif row[0] != a["content_hash"]:
                raise StoreError(
                    f"{self.path}: agent {a['name']!r} changed since this store was started (content hash "
                    f"{row[0][:12]}, now {a['content_hash'][:12]}); use another --store"
                )

    def agents(self) -> list[dict[str, Any]]:
        return self._rows("SELECT * FROM agents ORDER BY name")

    # -- runs -----------------------------------------------------------------------------
    def start_run(self, code_version: str, shard: str | None, argv: Sequence[str]) -> int:
        cur = self.db.execute(
            "INSERT INTO runs (started, code_version, shard, argv) VALUES (?, ?, ?, ?)",
            (time.time(), code_version, shard, json.dumps(list(argv))),
        )
        return int(cur.lastrowid)

    def finish_run(self, run_id: int) -> None:
        self.db.execute(
            "UPDATE runs SET finished = ?, matches_played = (SELECT count(*) FROM matches WHERE run_id = ?) "
            "WHERE id = ?",
            (time.time(), run_id, run_id),
        )

    # -- the end-of-run check ---------------------------------------------------------------
    def verify(self) -> None:
        """Check at the end of a run that the store can be trusted; `StoreError` naming
        what is wrong if not.

        The file at `path` must still be the one opened (same device and inode, no shorter,
        a SQLite header), ``PRAGMA quick_check`` must find it whole, and every match this
        object wrote must be in it. The check reads through a new read-only connection:
        what a later reader will get, not what this connection has cached."""
        n = len(self.written)
        changed = self._changed()
        found, damage = self._reread()
        kept = f"{found} of {n} matches written by this run are in it"
        if changed:
            raise StoreError(f"{self.path}: the store changed under the run ({changed}): {kept}")
        if damage:
            raise StoreError(f"{self.path}: the store is damaged ({damage}): {kept}")
        if found < n:
            raise StoreError(f"{self.path}: {n - found} of the {n} matches written by this run are missing from it")

    def _changed(self) -> str | None:
        """How the file at `path` differs from the one opened, or None."""
        try:
            st = os.stat(self.path)
            with open(self.path, "rb") as f:
                head = f.read(100)
        except FileNotFoundError:
            return "file removed"
        except OSError as e:
            return f"cannot read it: {e.strerror or e}"
        if (st.st_dev, st.st_ino) != self._identity:
            return "file replaced"
        if st.st_size < self._size:
            return f"file truncated: {st.st_size} bytes, {self._size} when opened"
        if st.st_size < 512 or not head.startswith(b"SQLite format 3\0"):
            return f"file truncated or overwritten: {st.st_size} bytes, no SQLite header"
        page = int.from_bytes(head[16:18], "big")
        size = int.from_bytes(head[28:32], "big") * (65536 if page == 1 else page)
        if head[24:28] == head[92:96] and st.st_size < size:  # the header's size is valid: is it all there?
            return f"file truncated: {st.st_size} bytes, its header says {size}"
        return None

    def _reread(self) -> tuple[int, str | None]:
        """How many of the matches this object wrote a new read-only connection finds, and
        what ``PRAGMA quick_check`` (or reading at all) says is wrong, or None."""
        found, damage = 0, None
        try:
            db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
        except sqlite3.Error as e:
            return 0, str(e)
        try:
            check = [row[0] for row in db.execute("PRAGMA quick_check")]
            if check != ["ok"]:
                damage = f"quick_check: {check[0]}" + (f", and {len(check) - 1} more" if len(check) > 1 else "")
            mine = set(self.written)
            found = sum(1 for (match_id,) in db.execute("SELECT id FROM matches") if match_id in mine)
        except sqlite3.Error as e:
            damage = damage or str(e)
        finally:
            db.close()
        return found, damage

    # -- matches --------------------------------------------------------------------------
    def done_ids(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT id FROM matches")}

    def unplayed_ids(self) -> set[str]:
        """The matches recorded as lost before play (a forfeit before the first deal: a
        seat could not be started): a resumed run plays them again."""
        return {r[0] for r in self.db.execute(f"SELECT id FROM matches WHERE {_UNPLAYED}")}

    def count(self) -> int:
        return self.db.execute("SELECT count(*) FROM matches").fetchone()[0]

    def write_match(
        self,
        *,
        run_id: int | None,
        index: int,
        match_id: str,
        pairing: str,
        pair_index: int,
        game: int,
        seats: Sequence[str],
        record: MatchRecord,
        started: float,
        finished: float,
    ) -> None:
        """Write one match and its deals atomically. A match of that id already stored
        is replaced if it was lost before play (`unplayed_ids`), else refused."""
        if self.version != str(SCHEMA_VERSION):  # a version 1 store opened to read, and now written
            self._migrate()
        r = record
        f = r.forfeit

        def lat(seat: int, fn: Any) -> float | None:
            xs = r.latency_ms[seat]
            return round(fn(xs), 3) if xs else None

        cpu = [
            round(sum(x for x in r.cpu_ms[s] if x is not None), 3) if any(x is not None for x in r.cpu_ms[s]) else None
            for s in (0, 1)
        ]
        row = (
            match_id, index, run_id, pairing, pair_index, game, seats[0], seats[1], _u64(r.seed), r.winner,
            seats[r.winner] if r.winner is not None else None, r.score[0], r.score[1], r.margin,
            f.seat if f else None, f.code if f else None, f.detail if f else None, f.deal if f else None,
            len(r.deals), len(r.latency_ms[0]), len(r.latency_ms[1]),
            lat(0, statistics.fmean), lat(1, statistics.fmean), lat(0, max), lat(1, max), cpu[0], cpu[1],
            started, finished, pack_ms(r.latency_ms), pack_ms(r.cpu_ms),
        )  # fmt: skip
        deals = [
            (match_id, k, _u64(d.seed), d.dealer, d.winner, d.game_points, d.carried, d.reason, d.points[0],
             d.points[1], d.tricks[0], d.tricks[1], " ".join(d.actions))
            for k, d in enumerate(r.deals)
        ]  # fmt: skip
        try:
            self.db.execute("BEGIN IMMEDIATE")
            gone = self.db.execute(f"DELETE FROM matches WHERE id = ? AND {_UNPLAYED}", (match_id,)).rowcount
            if gone:
                self.db.execute("DELETE FROM deals WHERE match_id = ?", (match_id,))
            self.db.execute(f"INSERT INTO matches VALUES ({', '.join('?' * len(row))})", row)
            self.db.executemany(f"INSERT INTO deals VALUES ({', '.join('?' * 13)})", deals)
            self.db.execute("COMMIT")
        except sqlite3.IntegrityError:
            self.db.execute("ROLLBACK")
            raise StoreError(f"{self.path}: match {match_id} is already recorded") from None
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise
        self.written.append(match_id)

    def _rows(self, sql: str, args: Sequence[Any] = ()) -> list[dict[str, Any]]:
        cur = self.db.execute(sql, args)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur]

    def matches(self, columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Every match row, in schedule order (seeds as unsigned integers; ``latencies``
        and ``cpu`` as stored: `unpack_ms` reads them); only ``columns`` if given, for a
        reader that does not need the latencies (most of a row)."""
        if columns is not None:  # seeds unsigned already
            names = list(columns)
            return [dict(zip(names, r, strict=True)) for chunk in self.chunks("matches", names) for r in chunk]
        rows = self._rows("SELECT * FROM matches ORDER BY idx")
        for r in rows:
            r["seed"] = _from_u64(r["seed"])
        return rows

    def results(self) -> list[dict[str, Any]]:
        """Who played whom and who won (``seat0``, ``seat1``, ``winner``), with the
        ``pairing`` and ``pair_index``: what a rating fit or a bootstrap over duplicate
        pairs needs, without the heavy columns of `matches`."""
        return self._rows("SELECT seat0, seat1, winner, pairing, pair_index FROM matches ORDER BY idx")

    def result_counts(self) -> list[dict[str, Any]]:
        """How many matches ended each way: rows of ``seat0``, ``seat1``, ``pairing``,
        ``winner`` (NULL: no result) and ``count``, a few per pairing however many matches
        are stored (for `arena.stats.rating.fit_counts`)."""
        return self._rows(
            "SELECT seat0, seat1, pairing, winner, count(*) AS count FROM matches "
            "GROUP BY seat0, seat1, pairing, winner ORDER BY pairing, seat0, winner"
        )

    def pair_counts(self) -> list[dict[str, Any]]:
        """How the duplicate pairs of each pairing ``a~b`` came out: rows of ``pairing``,
        ``games`` (the pair's matches stored), ``no_result`` (of them, those without a
        result), ``a_wins`` (those a, the first agent of the pairing, won) and ``count``
        (how many pairs came out so); for `arena.stats.rating.pair_scores_counted`."""
        return self._rows(
            "SELECT pairing, games, no_result, a_wins, count(*) AS count FROM ("
            " SELECT pairing, count(*) AS games, sum(winner IS NULL) AS no_result,"
            " sum(coalesce(CASE winner WHEN 0 THEN seat0 WHEN 1 THEN seat1 END"
            " = substr(pairing, 1, instr(pairing, '~') - 1), 0)) AS a_wins"
            " FROM matches GROUP BY pairing, pair_index"
            ") GROUP BY pairing, games, no_result, a_wins ORDER BY pairing, games, no_result, a_wins"
        )

    def chunks(
        self, table: str, columns: Sequence[str] | None = None, size: int = 50_000
    ) -> Iterator[list[tuple[Any, ...]]]:
        """The ``matches`` or ``deals`` table's ``columns`` (default: all, in order) in the
        order of `matches` and `deals` (seeds as unsigned integers), as lists of at most
        ``size`` tuples: for a reader that keeps only what it needs, or one chunk at a time
        (the report leaves out the latencies, the bulk of a row; an export streams)."""
        known = [name for name, _, _ in self.columns(table)]
        columns = list(known if columns is None else columns)
        if table not in ("matches", "deals") or any(c not in known for c in columns):
            raise ValueError(f"cannot read {columns} of {table!r} in chunks")
        if table == "matches":
            cur = self.db.execute(f"SELECT {', '.join(columns)} FROM matches ORDER BY idx")
        else:
            cur = self.db.execute(
                f"SELECT {', '.join('d.' + c for c in columns)} FROM deals d JOIN matches m ON m.id = d.match_id "
                "ORDER BY m.idx, d.deal"
            )
        seed = columns.index("seed") if "seed" in columns else None
        while chunk := cur.fetchmany(size):
            if seed is not None:
                chunk = [(*r[:seed], _from_u64(r[seed]), *r[seed + 1 :]) for r in chunk]
            yield chunk

    def latency_chunks(self, size: int = 50_000) -> Iterator[list[tuple[str, str, bytes | str | None]]]:
        """Every match's ``seat0``, ``seat1`` and ``latencies`` as stored (`unpack_ms` reads
        them), in lists of at most ``size``."""
        cur = self.db.execute("SELECT seat0, seat1, latencies FROM matches")
        while chunk := cur.fetchmany(size):
            yield chunk

    def deal_counts(self) -> list[dict[str, Any]]:
        """How many deals ended each way: rows of ``seat0``, ``seat1`` (the match's),
        ``winner`` (the deal's seat; NULL for a drawn hand), ``game_points`` and ``count``
        (for `arena.stats.margins.deal_points_counted`)."""
        return self._rows(
            "SELECT m.seat0, m.seat1, d.winner, d.game_points, count(*) AS count FROM deals d "
            "JOIN matches m ON m.id = d.match_id GROUP BY m.seat0, m.seat1, d.winner, d.game_points "
            "ORDER BY m.seat0, m.seat1, d.winner, d.game_points"
        )

    def deals(self) -> list[dict[str, Any]]:
        rows = self._rows("SELECT d.* FROM deals d JOIN matches m ON m.id = d.match_id ORDER BY m.idx, d.deal")
        for r in rows:
            r["seed"] = _from_u64(r["seed"])
        return rows

    def match(self, match_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        rows = self._rows("SELECT * FROM matches WHERE id = ?", (match_id,))
        if not rows:
            return None
        rows[0]["seed"] = _from_u64(rows[0]["seed"])
        deals = self._rows("SELECT * FROM deals WHERE match_id = ? ORDER BY deal", (match_id,))
        for d in deals:
            d["seed"] = _from_u64(d["seed"])
        return rows[0], deals

    def runs(self) -> list[dict[str, Any]]:
        return self._rows("SELECT * FROM runs ORDER BY id")

    def columns(self, table: str) -> list[tuple[str, str, bool]]:
        """A table's columns in order: name, declared SQLite type, whether NULL is allowed
        (for exports that type every column, even of an empty table)."""
        if table not in ("meta", "runs", "agents", "matches", "deals"):
            raise ValueError(f"no table {table!r} in a results store")
        rows = self._rows(f"PRAGMA table_info({table})")
        return [(r["name"], r["type"], not r["notnull"] and not r["pk"]) for r in rows]

    # -- merging --------------------------------------------------------------------------
    def merge_from(self, other: Store) -> int:
        """Copy the matches of another store of the same config; returns how many were new.

        A match present in both must be identical in every column but the timings."""
        if other.config_hash is None:
            return 0
        self.bind_config(other.config, other.config_hash)
        self.bind_agents(other.agents())
        mine = {m["id"]: m for m in self.matches()}
        new = 0
        self.db.execute("BEGIN IMMEDIATE")
        try:
            for m in other.matches():
                if m["id"] in mine:
                    a = {k: v for k, v in mine[m["id"]].items() if k not in TIMING_COLUMNS}
                    b = {k: v for k, v in m.items() if k not in TIMING_COLUMNS}
                    if a != b:
                        raise StoreError(f"{other.path}: match {m['id']} differs from the one in {self.path}")
                    continue
                m = dict(m, seed=_u64(m["seed"]), run_id=None, latencies=_repack(m["latencies"]), cpu=_repack(m["cpu"]))
                self.db.execute(f"INSERT INTO matches VALUES ({', '.join('?' * len(m))})", tuple(m.values()))
                _, deals = other.match(m["id"])
                self.db.executemany(
                    f"INSERT INTO deals VALUES ({', '.join('?' * 13)})",
                    [tuple(dict(d, seed=_u64(d["seed"])).values()) for d in deals],
                )
                new += 1
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return new
