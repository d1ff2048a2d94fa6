"""The results store: one SQLite file per tournament, the only code that knows SQL.

Tables (schema version 3):

- ``meta``: key/value: ``schema_version``, ``config_hash``, ``config`` (JSON), and
  ``secret``: the secret root seed of a run given no seed (`arena.tournament.secret`).
- ``runs``: every invocation that wrote here: start and end time, code version, shard,
  command line.
- ``agents``: name, version, language, content hash of the folder, folder.
- ``match_rows``: one row per match, keyed by its id (a pure function of the config): the
  pairing, pair index, game in the pair, the agents in each seat, the seed, the winner
  (seat and name), the final score, the margin, the forfeit (seat, fault code, detail),
  counts, per-seat latency and CPU statistics, timings, and the latencies themselves,
  packed (`pack_ms`: whole microseconds as byte planes, compressed); and ``n``, the
  rowid, the small key the deals refer to. ``match_rows_idx`` gives the schedule order;
  the view ``matches`` is version 2's table (every column but ``n``).
- ``deal_rows``: one row per deal, clustered on (``match_n``, ``deal``) (``WITHOUT ROWID``:
  no index of its own): seed, dealer, winner, game points, reason, card points, tricks,
  and the actions as codes, a byte each (``action_codes``: built-in codes the same in every
  store, new action strings numbered per store as they come). ``game_points`` is the
  deal's own worth (1, 2, 3); ``carried`` what a drawn hand before it added. The view
  ``deals`` shows them as version 2's table ``deals`` was (the match id, the actions as
  text, decoded in SQL), so SQL written for version 2 still reads them.

Version 2 kept each deal's match id as text (and indexed it) and its actions as text,
about 1,600 bytes a match where version 3 takes about 730 (docs/store.md, "Size and
speed"). Readers see what they saw then: `Store.deals`, `Store.match` and `Store.chunks`
give ``match_id`` and the actions as space-separated text (`DEAL_COLUMNS`), whatever the
version.

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

Stores of versions 1 (latencies as JSON text) and 2 are read as they are. Opening one to
write (``create=True``: a resumed tournament, a merge), or writing a match to it (a
ladder's next round), migrates it first, in one transaction (`Store._migrate`). A store
of a later version is refused in one line.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sqlite3
import statistics
import struct
import time
import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..play.referee import MatchRecord

SCHEMA_VERSION = 4
#: Versions this code opens: versions 1 to 3 are read as they are, and migrated when opened to write.
_READABLE = ("1", "2", "3", "4")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY, started REAL NOT NULL, finished REAL, code_version TEXT,
    shard TEXT, argv TEXT, matches_played INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS agents (
    name TEXT PRIMARY KEY, version TEXT, language TEXT, content_hash TEXT NOT NULL, folder TEXT
);
"""

#: The columns of ``matches``: version 2's table, version 3's view.
MATCH_NAMES = (
    "id", "idx", "run_id", "pairing", "pair_index", "game", "seat0", "seat1", "seed", "winner", "winner_name",
    "score0", "score1", "margin", "forfeit_seat", "fault", "fault_detail", "fault_deal", "deals", "decisions0",
    "decisions1", "latency_mean0", "latency_mean1", "latency_max0", "latency_max1", "cpu_ms0", "cpu_ms1",
    "started", "finished", "latencies", "cpu",
)  # fmt: skip

#: Version 3's tables of matches, deals and action codes. ``match_rows.n`` (the rowid) is
#: what ``deal_rows.match_n`` refers to: a small integer instead of the match's text id in
#: every deal row and its index. ``deal_rows`` is clustered on (``match_n``, ``deal``), so it
#: needs no index of its own and a match's deals are together; ``match_rows_idx`` gives the
#: schedule order without a sort. The views ``matches`` and ``deals`` are version 2's tables
#: (without ``n``; the deals' actions decoded in SQL: `_DECODE_SQL`), for SQL written against them.
_BYTES = "x'" + "".join(f"{i:02x}" for i in range(256)) + "'"
_BYTE = f"(instr({_BYTES}, substr(d.actions, v.i + 1, 1)) - 1)"  # the byte after position i, 0..255
#: A deal ``d``'s actions as space-separated text, in SQL: its varint codes walked by a
#: recursive query and looked up in ``action_codes`` (slow, about 30 us a deal, but any
#: SQLite reads it; the arena decodes in Python).
_DECODE_SQL = f"""(WITH RECURSIVE v(i, c, s, code) AS (
        SELECT 0, 0, 1, NULL
        UNION ALL
        SELECT v.i + 1,
            CASE WHEN {_BYTE} >= 128 THEN v.c + ({_BYTE} - 128) * v.s ELSE 0 END,
            CASE WHEN {_BYTE} >= 128 THEN v.s * 128 ELSE 1 END,
            CASE WHEN {_BYTE} >= 128 THEN NULL ELSE v.c + {_BYTE} * v.s END
        FROM v WHERE v.i < length(d.actions)
    )
    SELECT coalesce(group_concat(action, ' '), '') FROM (
        SELECT a.action FROM v JOIN action_codes a ON a.code = v.code ORDER BY v.i
    ))"""
_SCHEMA_3 = f"""
CREATE TABLE IF NOT EXISTS match_rows (
    id TEXT NOT NULL UNIQUE, idx INTEGER NOT NULL, run_id INTEGER, pairing TEXT NOT NULL,
    pair_index INTEGER NOT NULL, game INTEGER NOT NULL, seat0 TEXT NOT NULL, seat1 TEXT NOT NULL,
    seed INTEGER NOT NULL, winner INTEGER, winner_name TEXT, score0 INTEGER NOT NULL,
    score1 INTEGER NOT NULL, margin INTEGER NOT NULL, forfeit_seat INTEGER, fault TEXT,
    fault_detail TEXT, fault_deal INTEGER, deals INTEGER NOT NULL, decisions0 INTEGER NOT NULL,
    decisions1 INTEGER NOT NULL, latency_mean0 REAL, latency_mean1 REAL, latency_max0 REAL,
    latency_max1 REAL, cpu_ms0 REAL, cpu_ms1 REAL, started REAL, finished REAL,
    latencies BLOB, cpu BLOB, n INTEGER PRIMARY KEY
);
CREATE INDEX IF NOT EXISTS match_rows_idx ON match_rows (idx);
CREATE TABLE IF NOT EXISTS deal_rows (
    match_n INTEGER NOT NULL, deal INTEGER NOT NULL, seed INTEGER NOT NULL,
    dealer INTEGER NOT NULL, winner INTEGER, game_points INTEGER NOT NULL, carried INTEGER NOT NULL,
    reason TEXT NOT NULL,
    points0 INTEGER, points1 INTEGER, tricks0 INTEGER, tricks1 INTEGER, actions BLOB NOT NULL,
    PRIMARY KEY (match_n, deal)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS action_codes (code INTEGER PRIMARY KEY, action TEXT NOT NULL UNIQUE);
CREATE VIEW IF NOT EXISTS deals AS
    SELECT m.id AS match_id, d.deal, d.seed, d.dealer, d.winner, d.game_points, d.carried, d.reason,
        d.points0, d.points1, d.tricks0, d.tricks1, {_DECODE_SQL} AS actions
    FROM deal_rows d JOIN match_rows m ON m.n = d.match_n;
CREATE VIEW IF NOT EXISTS matches AS SELECT {", ".join(MATCH_NAMES)} FROM match_rows;
"""

#: Version 4's columns for the three- and four-handed games, added to version 3's tables
#: (NULL in a two-handed match's row, so version 3's readers and SQL read those as before).
#: A match: how many ``players`` (NULL: 2), what ``winner`` is (``kind``: "team" for a
#: partnership, the winning team's index; "order" for an order of finish; NULL: a seat),
#: the third and fourth seats, every seat's place (1 = first, equal places shared), the
#: third side's score, the third and fourth seats' counts, latency and CPU statistics,
#: and whether a deal limit ``adjudicated`` the match. A deal: the third side's card
#: points and tricks, what each side gained (``gain0..2``: stakes or marks, may be negative
#: or halves), the contract (``bidder``, a seat, and ``bid``) and, in dealer-sits-out,
#: ``seat_map``: the match seats holding the deal's seats 0 and 1 ("1 2").
MATCH_COLUMNS_4: tuple[tuple[str, str], ...] = (
    ("players", "INTEGER"), ("kind", "TEXT"), ("seat2", "TEXT"), ("seat3", "TEXT"),
    ("place0", "INTEGER"), ("place1", "INTEGER"), ("place2", "INTEGER"), ("place3", "INTEGER"),
    ("score2", "REAL"), ("decisions2", "INTEGER"), ("decisions3", "INTEGER"),
    ("latency_mean2", "REAL"), ("latency_mean3", "REAL"), ("latency_max2", "REAL"), ("latency_max3", "REAL"),
    ("cpu_ms2", "REAL"), ("cpu_ms3", "REAL"), ("adjudicated", "INTEGER"),
)  # fmt: skip
DEAL_COLUMNS_4: tuple[tuple[str, str], ...] = (
    ("points2", "INTEGER"), ("tricks2", "INTEGER"), ("gain0", "REAL"), ("gain1", "REAL"), ("gain2", "REAL"),
    ("bidder", "INTEGER"), ("bid", "INTEGER"), ("seat_map", "TEXT"),
)  # fmt: skip

#: The line-up and outcome of every match at a table, in an index of their own (partial:
#: two-handed rows have ``players`` NULL and are not in it, so it costs them nothing). A
#: table match's own columns come after its latency BLOBs in the row, so a scan of the
#: table for them reads every row's overflow pages; this index holds them in about 60
#: bytes a match, and `Store.table_result_chunks` reads it alone (a covering scan).
_RESULT_INDEX = (
    "CREATE INDEX IF NOT EXISTS match_rows_result ON match_rows (seat0, seat1, seat2, seat3, kind, winner, "
    "place0, place1, place2, place3, players) WHERE players IS NOT NULL"
)

#: What readers get from ``deals`` whatever the version: version 2's columns, with the
#: match's text id and the actions as space-separated text (name, declared type, nullable),
#: then version 4's (a store of an older version has only the first 13).
DEAL_COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("match_id", "TEXT", False), ("deal", "INTEGER", False), ("seed", "INTEGER", False),
    ("dealer", "INTEGER", False), ("winner", "INTEGER", True), ("game_points", "INTEGER", False),
    ("carried", "INTEGER", False), ("reason", "TEXT", False), ("points0", "INTEGER", True),
    ("points1", "INTEGER", True), ("tricks0", "INTEGER", True), ("tricks1", "INTEGER", True),
    ("actions", "TEXT", False), *((name, kind, True) for name, kind in DEAL_COLUMNS_4),
)  # fmt: skip
_DEAL_NAMES = [name for name, _, _ in DEAL_COLUMNS]
#: Version 3's deal columns (``actions`` last), what a store before version 4 has.
_DEAL_NAMES_3 = _DEAL_NAMES[:13]

#: Matches lost before play: a forfeit with no deal played (see `Store.unplayed_ids`).
_UNPLAYED = "fault IS NOT NULL AND fault_deal IS NULL AND deals = 0"

#: Columns of `matches` that depend on the machine, not on the games (left out when
#: comparing two runs of one config).
TIMING_COLUMNS = (
    "run_id", "latency_mean0", "latency_mean1", "latency_max0", "latency_max1", "cpu_ms0", "cpu_ms1",
    "started", "finished", "latencies", "cpu", "latency_mean2", "latency_mean3", "latency_max2", "latency_max3",
    "cpu_ms2", "cpu_ms3",
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
#
# Version 3 writes the same values as byte planes (every value's lowest byte, then every
# value's next byte, ...) compressed with raw DEFLATE, and says so with the width's high
# bit (0x82, 0x84, 0x88): a millisecond or less needs only the low byte or two, so the
# high planes are nearly all zeros and compress to almost nothing (about 200 bytes for
# a match's two lists instead of 315). Kept as planes only when that is smaller; both
# forms decode in C (zlib, slice assignment, struct), so reading stays fast.
_HEADER = struct.Struct("<BII")
_WIDTHS = {2: "H", 4: "I", 8: "Q"}
_PLANES = 0x80


#: The width byte's flag for lists of other than two seats (the three- and four-handed
#: games): a count byte and each list's length (uint32) follow it, instead of two lengths.
_SEATS = 0x40


def pack_ms(lists: Sequence[Sequence[float | None]]) -> bytes | str:
    """Each seat's list of milliseconds (None: missing) as the store keeps them: packed
    microseconds, or JSON text for values that do not fit (see above). Two lists pack as
    version 3 did; any other number of lists says so in the width byte (`_SEATS`)."""
    flat = [x for xs in lists for x in xs]
    present = [x for x in flat if x is not None]
    try:
        us = [round(x * 1000) for x in present]
    except (TypeError, ValueError, OverflowError):  # not a number, NaN, infinite
        us = None
    # whole microseconds (text fails above), none below 0
    if us is None or (us and min(us) < 0) or [u / 1000 for u in us] != present:
        return json.dumps([list(xs) for xs in lists])
    top = max(us, default=0)
    width = next((w for w in (2, 4, 8) if top < (1 << (8 * w)) - 1), None)
    if width is None or len(lists) > 255:
        return json.dumps([list(xs) for xs in lists])
    missing = (1 << (8 * width)) - 1
    if len(us) < len(flat):
        it = iter(us)
        us = [missing if x is None else next(it) for x in flat]
    body = struct.pack(f"<{len(us)}{_WIDTHS[width]}", *us)
    planes = zlib.compress(b"".join(body[j::width] for j in range(width)), 6, wbits=-15)
    flag, body = (width | _PLANES, planes) if len(planes) < len(body) else (width, body)
    if len(lists) == 2:
        return _HEADER.pack(flag, len(lists[0]), len(lists[1])) + body
    return struct.pack(f"<BB{len(lists)}I", flag | _SEATS, len(lists), *map(len, lists)) + body


def unpack_ms(value: bytes | str | None) -> list[list[float | None]] | None:
    """Each seat's list of milliseconds from a stored ``latencies`` or ``cpu`` value:
    packed (versions 2 and 3, and `_SEATS` for other than two seats) or JSON text
    (version 1, or values that do not pack); None stays None."""
    if value is None:
        return None
    if isinstance(value, str):
        return json.loads(value)
    width = value[0]
    if width & _SEATS:
        count = value[1]
        lengths = list(struct.unpack_from(f"<{count}I", value, 2))
        offset = 2 + 4 * count
    else:
        lengths = list(_HEADER.unpack_from(value)[1:])
        offset = _HEADER.size
    width &= ~_SEATS
    total = sum(lengths)
    if width & _PLANES:
        width &= ~_PLANES
        planes = zlib.decompress(value[offset:], wbits=-15)
        count = len(planes) // width
        body = bytearray(len(planes))
        for j in range(width):
            body[j::width] = planes[j * count : (j + 1) * count]
        values = struct.unpack(f"<{total}{_WIDTHS[width]}", body)
    else:
        values = struct.unpack_from(f"<{total}{_WIDTHS[width]}", value, offset)
    missing = (1 << (8 * width)) - 1
    if missing in values:
        ms = [None if u == missing else u / 1000 for u in values]
    else:
        ms = [u / 1000 for u in values]
    out, at = [], 0
    for n in lengths:
        out.append(ms[at : at + n])
        at += n
    return out


def _repack(value: bytes | str | None) -> bytes | str | None:
    """A stored value in this version's form (for a migration or a merge)."""
    if value is None:
        return None
    if isinstance(value, bytes) and value[0] & _PLANES:
        return value
    return pack_ms(unpack_ms(value))


# -- actions ---------------------------------------------------------------------------------------
#
# ``deals.actions`` (version 3) is a BLOB of action codes, one per action, each an unsigned
# LEB128 varint: one byte for codes below 128. The codes are the store's own, listed in its
# ``action_codes`` table: the built-in ones below are the same in every store and never
# change (they are not the engine's action ids, which may grow); an action string not among
# them (a new game form's, say) gets the next free code of that store the first time it is
# written, in the same transaction. So any action string is kept exactly.
_RANKS = "ATKQJ987"
_SUITS = "CDHS"
BUILTIN_ACTIONS: tuple[str, ...] = (
    *(f"play:{r}{s}" for s in _SUITS for r in _RANKS),
    *(f"marry:{s}" for s in _SUITS),
    "exchange", "close", "declare", "draw", "pass",
    *(f"bid:{k}" for k in range(1, 6)),
    *(f"trump:{s}" for s in _SUITS),
)  # fmt: skip
"""Codes 1, 2, ... in this order, in every version 3 store (code 0 is not used)."""


def _varints(codes: Iterable[int]) -> bytes:
    """Codes as unsigned LEB128 varints."""
    out = bytearray()
    for c in codes:
        while c >= 0x80:
            out.append(c & 0x7F | 0x80)
            c >>= 7
        out.append(c)
    return bytes(out)


def _codes(blob: bytes) -> list[int]:
    """The codes of a varint BLOB."""
    if blob.isascii():  # every byte below 128: one code each (the usual case, read in C)
        return list(blob)
    out, c, shift = [], 0, 0
    for b in blob:
        c |= (b & 0x7F) << shift
        if b & 0x80:
            shift += 7
        else:
            out.append(c)
            c, shift = 0, 0
    return out


def match_row(
    index: int, match_id: str, pairing: str, pair_index: int, game: int, seats: Sequence[str], record: MatchRecord,
    run_id: int | None, started: float, finished: float,
) -> dict[str, Any]:  # fmt: skip
    """A match's row (column -> value, seed signed) from the referee's record: version
    3's columns for two seats; at a table also version 4's (`MATCH_COLUMNS_4`). A team's
    ``winner_name`` is its members' names joined by "+" (team ``t``: seats ``t`` and ``t + 2``)."""
    r, f, n = record, record.forfeit, len(seats)
    if r.winner is None:
        winner_name = None
    elif r.kind == "team":
        winner_name = "+".join(seats[s] for s in range(r.winner, n, 2))
    else:
        winner_name = seats[r.winner]
    row: dict[str, Any] = {
        "id": match_id, "idx": index, "run_id": run_id, "pairing": pairing, "pair_index": pair_index,
        "game": game, "seat0": seats[0], "seat1": seats[1], "seed": _u64(r.seed), "winner": r.winner,
        "winner_name": winner_name, "score0": r.score[0], "score1": r.score[1], "margin": r.margin,
        "forfeit_seat": f.seat if f else None, "fault": f.code if f else None, "fault_detail": f.detail if f else None,
        "fault_deal": f.deal if f else None, "deals": len(r.deals), "started": started, "finished": finished,
        "latencies": pack_ms(r.latency_ms), "cpu": pack_ms(r.cpu_ms),
    }  # fmt: skip
    for s in range(n):
        xs = r.latency_ms[s]
        cpu = [x for x in r.cpu_ms[s] if x is not None]
        row[f"decisions{s}"] = len(xs)
        row[f"latency_mean{s}"] = round(statistics.fmean(xs), 3) if xs else None
        row[f"latency_max{s}"] = round(max(xs), 3) if xs else None
        row[f"cpu_ms{s}"] = round(sum(cpu), 3) if cpu else None
    if n > 2:
        row.update(players=n, kind=r.kind, adjudicated=int(r.adjudicated))
        for s in range(2, n):
            row[f"seat{s}"] = seats[s]
        for s, place in enumerate(r.places or ()):
            row[f"place{s}"] = place
        if len(r.score) > 2:
            row["score2"] = r.score[2]
    elif r.adjudicated:
        row["adjudicated"] = 1
    return row


def deal_rows(record: MatchRecord) -> list[dict[str, Any]]:
    """A match's deals as rows (`DEAL_COLUMNS` but ``match_id``; seed signed, the actions
    a list): per side at a table (a seat, or a team), with the contract and the seat map."""
    out = []
    for k, d in enumerate(record.deals):
        row: dict[str, Any] = {
            "deal": k, "seed": _u64(d.seed), "dealer": d.dealer, "winner": d.winner, "game_points": d.game_points,
            "carried": d.carried, "reason": d.reason, "actions": d.actions,
        }  # fmt: skip
        for side, x in enumerate(d.points[:3]):
            row[f"points{side}"] = x
        for side, x in enumerate(d.tricks[:3]):
            row[f"tricks{side}"] = x
        for side, x in enumerate((d.scores or ())[:3]):
            row[f"gain{side}"] = x
        if d.bidder is not None:
            row.update(bidder=d.bidder, bid=d.bid)
        if d.seats is not None:
            row["seat_map"] = " ".join(map(str, d.seats))
        out.append(row)
    return out


#: Match columns declared INTEGER that may hold a fraction (`Store.columns`).
_FRACTIONAL = ("score0", "score1", "margin")


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
        self._names: dict[str, list[str]] = {}
        self._players: int | None = None
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
                self.db.close()
                raise StoreError(f"{self.path}: not a results store (no schema version)")
            self._create()
        elif version not in _READABLE:
            self.db.close()
            raise StoreError(
                f"{self.path}: store schema version {version}, written by a newer arena; this one reads versions "
                f"{', '.join(_READABLE)}"
            )
        #: The store's schema version, as text; a store of an older version is migrated when
        #: opened to write (``create``) or written to (`write_match`), whichever comes first.
        self.version = version or str(SCHEMA_VERSION)
        #: ``action_codes`` as read (code -> action; index 0 unused), and its inverse.
        self._actions: list[str] | None = None
        self._action_codes: dict[str, int] = {}
        if self.version != str(SCHEMA_VERSION) and create:
            self._migrate()
        elif create:  # a version 4 store written before its result index was added
            with _errors(self.path):
                self.db.execute(_RESULT_INDEX)

    @property
    def _v3(self) -> bool:
        """Matches and deals in version 3's tables (``match_rows``, ``deal_rows``): versions 3 and 4."""
        return self.version in ("3", "4")

    @property
    def players(self) -> int:
        """Seats at a match of this store: its config's variant's (2 without a config); read
        once (readers ask for every match), again after `bind_config`."""
        if self._players is None:
            config = self.config
            if config is None:  # not bound yet (another process may bind it): asked again next time
                return 2
            variant = config.get("variant")
            players = variant.get("players", 2) if isinstance(variant, dict) else 2
            self._players = players if isinstance(players, int) else 2
        return self._players

    @property
    def _deal_names(self) -> list[str]:
        """The `DEAL_COLUMNS` readers get: version 4's only in a store of the three- and
        four-handed games (so a two-handed store reads and exports as it did in version 3)."""
        return _DEAL_NAMES if self.version == "4" and self.players > 2 else _DEAL_NAMES_3

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """One write transaction: committed when the block ends, rolled back (and the
        action codes it added forgotten) when anything is raised in it."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.db.execute("COMMIT")
        except BaseException:
            self._rollback()
            raise

    def _create(self) -> None:
        """A new store's tables (version 3's with version 4's columns), with the built-in action codes."""
        with self._transaction():
            self._create_tables_3()
            self._add_columns_4()
            self._set_meta("schema_version", str(SCHEMA_VERSION))

    def _add_columns_4(self) -> None:
        """Version 4's columns added to version 3's tables (nullable: cheap, rows untouched),
        and the views ``table_matches`` and ``table_deals``: ``matches`` and ``deals`` with
        them (``matches`` and ``deals`` stay as they were, for SQL written for them); in the
        caller's transaction."""
        for name, kind in MATCH_COLUMNS_4:
            self.db.execute(f"ALTER TABLE match_rows ADD COLUMN {name} {kind}")
        for name, kind in DEAL_COLUMNS_4:
            self.db.execute(f"ALTER TABLE deal_rows ADD COLUMN {name} {kind}")
        self.db.execute(_RESULT_INDEX)
        listed = ", ".join((*MATCH_NAMES, *(name for name, _ in MATCH_COLUMNS_4)))
        self.db.execute(f"CREATE VIEW IF NOT EXISTS table_matches AS SELECT {listed} FROM match_rows")
        extra = ", ".join(f"d.{name}" for name, _ in DEAL_COLUMNS_4)
        self.db.execute(
            "CREATE VIEW IF NOT EXISTS table_deals AS SELECT m.id AS match_id, d.deal, d.seed, d.dealer, d.winner, "
            "d.game_points, d.carried, d.reason, d.points0, d.points1, d.tricks0, d.tricks1, "
            f"{_DECODE_SQL} AS actions, {extra} FROM deal_rows d JOIN match_rows m ON m.n = d.match_n"
        )

    def _create_tables_3(self) -> None:
        """Version 3's tables, index and view, and the built-in action codes, in the caller's
        transaction (``executescript`` would commit it)."""
        for statement in _SCHEMA_3.split(";"):
            if statement.strip():
                self.db.execute(statement)
        self.db.executemany(
            "INSERT OR IGNORE INTO action_codes (code, action) VALUES (?, ?)",
            enumerate(BUILTIN_ACTIONS, 1),
        )

    def _migrate(self) -> None:
        """Bring an older store to version 4, in one transaction. From version 3: version
        4's columns added (NULL in every row: all its matches are two-handed). From version
        1 or 2, first version 3's tables: the same matches in the same rows (their rowids
        become ``n``), latencies and CPU times repacked (`pack_ms`), every deal keyed by its
        match's ``n`` with its actions as codes. The space freed is reused by later writes
        (``VACUUM`` gives it back to the disk)."""
        if self.version == "3":
            with self._transaction():
                self._add_columns_4()
                self._set_meta("schema_version", str(SCHEMA_VERSION))
            self.version = str(SCHEMA_VERSION)
            self._names.clear()
            return
        codes = dict(zip(BUILTIN_ACTIONS, range(1, len(BUILTIN_ACTIONS) + 1), strict=True))
        extra: list[str] = []

        def encode(text: str) -> bytes:
            actions = text.split()
            try:
                out = [codes[a] for a in actions]
            except KeyError:
                out = []
                for action in actions:
                    code = codes.get(action)
                    if code is None:
                        code = codes[action] = len(codes) + 1
                        extra.append(action)
                    out.append(code)
            return bytes(out) if not out or max(out) < 0x80 else _varints(out)

        self.db.create_function("repack", 1, _repack, deterministic=True)
        self.db.create_function("encode_actions", 1, encode)
        names = self._table_names("matches")
        listed = ", ".join(names)
        repacked = ", ".join(f"repack({c})" if c in ("latencies", "cpu") else c for c in names)
        deal_names = ", ".join(f"d.{c}" for c in _DEAL_NAMES_3[1:-1])
        with self._transaction():
            self.db.execute("ALTER TABLE matches RENAME TO matches_2")
            self.db.execute("ALTER TABLE deals RENAME TO deals_2")
            self._create_tables_3()
            self.db.execute(
                f"INSERT INTO match_rows ({listed}, n) SELECT {repacked}, rowid FROM matches_2 ORDER BY rowid"
            )
            self.db.execute(
                f"INSERT INTO deal_rows SELECT m.n, {deal_names}, encode_actions(d.actions) FROM deals_2 d "
                "JOIN match_rows m ON m.id = d.match_id ORDER BY m.n, d.deal"
            )
            self.db.execute("DROP TABLE deals_2")
            self.db.execute("DROP TABLE matches_2")
            self._add_columns_4()
            self.db.executemany(
                "INSERT INTO action_codes (code, action) VALUES (?, ?)",
                [(codes[a], a) for a in extra],
            )
            self._set_meta("schema_version", str(SCHEMA_VERSION))
        self.version = str(SCHEMA_VERSION)
        self._actions = None
        self._names.clear()

    def _table_names(self, table: str) -> list[str]:
        """A table's column names as readers get them, in order (version 3's ``match_rows``
        for ``matches``, its key ``n`` left out; version 4's columns only in a store of the
        three- and four-handed games, see `_deal_names`)."""
        if table not in self._names:
            names = self._stored_names(table)
            if table == "matches" and self.players == 2:
                table4 = {name for name, _ in MATCH_COLUMNS_4}
                names = [c for c in names if c not in table4]
            self._names[table] = names
        return self._names[table]

    def _stored_names(self, table: str) -> list[str]:
        """A table's stored column names, in order (``n`` left out); read once (every match
        written asks), again after a migration."""
        key = f"stored {table}"
        if key not in self._names:
            rows = self.db.execute(f"PRAGMA table_info({self._m if table == 'matches' else table})")
            self._names[key] = [r[1] for r in rows if r[1] != "n"]
        return self._names[key]

    @property
    def _m(self) -> str:
        """The table of matches: ``match_rows`` in version 3 (``matches`` is its view), else ``matches``."""
        return "match_rows" if self._v3 else "matches"

    # -- action codes ---------------------------------------------------------------------
    def _load_actions(self) -> list[str]:
        """The store's action codes, read again (another writer may have added some)."""
        table = [""]
        for code, action in self.db.execute("SELECT code, action FROM action_codes ORDER BY code"):
            if code != len(table):
                raise StoreError(f"{self.path}: the store is damaged (action code {code} out of sequence)")
            table.append(action)
        self._actions = table
        self._action_codes = {a: k for k, a in enumerate(table) if k}
        return table

    def _decode(self, blob: bytes) -> str:
        """A deal's stored action codes as space-separated text."""
        table = self._actions or self._load_actions()
        codes = blob if blob.isascii() else _codes(blob)  # bytes below 128 are whole codes
        try:
            return " ".join([table[c] for c in codes])
        except IndexError:
            table = self._load_actions()
            try:
                return " ".join([table[c] for c in codes])
            except IndexError:
                raise StoreError(f"{self.path}: the store is damaged (an unknown action code)") from None

    def _encode(self, actions: Sequence[str]) -> bytes:
        """A deal's actions as codes; a new action string gets the next free code. Call
        inside the write transaction (the new codes are written in it)."""
        if self._actions is None:
            self._load_actions()
        try:
            codes = [self._action_codes[a] for a in actions]
            if not codes or max(codes) < 0x80:
                return bytes(codes)
        except KeyError:
            codes = []
            for action in actions:
                code = self._action_codes.get(action)
                if code is None:
                    table = self._load_actions()  # in the transaction: the latest codes
                    code = self._action_codes.get(action)
                    if code is None:
                        code = len(table)
                        self.db.execute("INSERT INTO action_codes (code, action) VALUES (?, ?)", (code, action))
                        table.append(action)
                        self._action_codes[action] = code
                codes.append(code)
        return _varints(codes)

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
            self._names.clear()  # the columns readers get depend on the config's players
            self._players = None
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
        """Record the run's end and the matches it stored. A write cut short by Ctrl-C
        between its statements (a signal can land anywhere) may have left its transaction
        open; it is rolled back first (that match was never whole), or this record would
        join it and be lost with it when the store is closed."""
        self._rollback()
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
        is replaced if it was lost before play (`unplayed_ids`), else refused. ``seats``:
        two agents, or three or four at a table (``pairing`` is then the table, and
        ``pair_index`` its deck set)."""
        if self.version != str(SCHEMA_VERSION):  # an older store opened to read, and now written
            self._migrate()
        try:
            with self._transaction():
                self._insert(match_id, match_row(index, match_id, pairing, pair_index, game, seats, record,
                                                 run_id, started, finished), deal_rows(record), replace_unplayed=True)
        except sqlite3.IntegrityError:
            raise StoreError(f"{self.path}: match {match_id} is already recorded") from None
        self.written.append(match_id)

    def _rollback(self) -> None:
        """Roll back the write transaction; codes it added are forgotten (read again when needed)."""
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")
        self._actions = None

    def _insert(
        self,
        match_id: str,
        row: dict[str, Any],
        deals: Sequence[dict[str, Any]],
        *,
        replace_unplayed: bool = False,
    ) -> None:
        """Insert a match row (columns by name, seed signed; those this store lacks must be
        None) and its deals (`DEAL_COLUMNS` by name but ``match_id``, seed signed, the
        actions a list of strings), in the caller's transaction; first delete the match of
        that id if it was lost before play and ``replace_unplayed``."""
        if replace_unplayed:
            gone = self.db.execute(f"SELECT n FROM match_rows WHERE id = ? AND {_UNPLAYED}", (match_id,)).fetchone()
            if gone:
                self.db.execute("DELETE FROM deal_rows WHERE match_n = ?", gone)
                self.db.execute("DELETE FROM match_rows WHERE n = ?", gone)
        names = self._stored_names("matches")
        lost = next((k for k, v in row.items() if v is not None and k not in names), None)
        if lost is not None:
            raise StoreError(f"{self.path}: cannot keep column {lost!r} in a version {self.version} store")
        n = self.db.execute(
            f"INSERT INTO match_rows ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
            [row.get(c) for c in names],
        ).lastrowid
        deal_names = (_DEAL_NAMES if self.version == "4" else _DEAL_NAMES_3)[1:]
        stored = ["match_n", *deal_names]
        self.db.executemany(
            f"INSERT INTO deal_rows ({', '.join(stored)}) VALUES ({', '.join('?' * len(stored))})",
            [(n, *(self._encode(d["actions"]) if c == "actions" else d.get(c) for c in deal_names)) for d in deals],
        )

    def _rows(self, sql: str, args: Sequence[Any] = ()) -> list[dict[str, Any]]:
        cur = self.db.execute(sql, args)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur]

    @property
    def _order(self) -> str:
        """The schedule order of ``matches`` (``n`` breaks ties in version 3, so the
        ``match_rows_idx`` index gives it without a sort)."""
        return "idx, n" if self._v3 else "idx"

    def matches(self, columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Every match row, in schedule order (seeds as unsigned integers; ``latencies``
        and ``cpu`` as stored: `unpack_ms` reads them); only ``columns`` if given, for a
        reader that does not need the latencies (most of a row)."""
        names = list(self._table_names("matches") if columns is None else columns)
        return [dict(zip(names, r, strict=True)) for chunk in self.chunks("matches", names) for r in chunk]

    def results(self) -> list[dict[str, Any]]:
        """Who played whom and who won (``seat0``, ``seat1``, ``winner``), with the
        ``pairing`` and ``pair_index``: what a rating fit or a bootstrap over duplicate
        pairs needs, without the heavy columns of `matches`."""
        return self._rows(f"SELECT seat0, seat1, winner, pairing, pair_index FROM {self._m} ORDER BY {self._order}")

    def result_counts(self) -> list[dict[str, Any]]:
        """How many matches ended each way: rows of ``seat0``, ``seat1``, ``pairing``,
        ``winner`` (NULL: no result) and ``count``, a few per pairing however many matches
        are stored (for `arena.stats.rating.fit_counts`)."""
        return self._rows(
            "SELECT seat0, seat1, pairing, winner, count(*) AS count FROM matches "
            "GROUP BY seat0, seat1, pairing, winner ORDER BY pairing, seat0, winner"
        )

    def table_counts(self) -> list[dict[str, Any]]:
        """How the matches at tables ended, counted in SQL: a row per line-up (``seat0..3``)
        and outcome (``kind``, ``winner``, ``place0..3``) with its ``count``: what a team
        or order-of-finish fit needs (`arena.stats.table_rating.fit_table_counts`), however
        many matches are stored (`table_result_codes` is the faster read where line-ups
        rarely repeat). Empty for a store without tables."""
        if self.version != "4" or self.players == 2:
            return []
        cols = "seat0, seat1, seat2, seat3, kind, winner, place0, place1, place2, place3"
        # the index `_RESULT_INDEX` is in this order: grouped as it is scanned, no sort
        return self._rows(f"SELECT {cols}, count(*) AS count FROM match_rows WHERE players IS NOT NULL GROUP BY {cols}")

    def table_result_chunks(self, size: int = 100_000) -> Iterator[list[tuple[Any, ...]]]:
        """Every table match's line-up and outcome (``seat0..3``, ``kind``, ``winner``,
        ``place0..3``), in lists of at most ``size``: what `arena ratings` reads into arrays
        a chunk at a time (`arena.stats.table_rating.TableResults`). No SQL grouping: with
        many agents nearly every line-up is new, and a group-by would sort them all."""
        if self.version != "4" or self.players == 2:
            return
        cur = self.db.execute(  # a covering scan of the index `_RESULT_INDEX`
            "SELECT seat0, seat1, seat2, seat3, kind, winner, place0, place1, place2, place3 FROM match_rows "
            "WHERE players IS NOT NULL"
        )
        while chunk := cur.fetchmany(size):
            yield chunk

    def table_result_codes(self, names: Sequence[str], size: int = 100_000) -> Iterator[list[tuple[Any, ...]]]:
        """Every table match's line-up and outcome with the agents as numbers, in lists of
        at most ``size``: ``(i0, i1, i2, i3, team, winner, place0..3)``, ``i`` the seat's
        agent's index in ``names`` (-1 for an empty seat, -2 for a name not in ``names``),
        ``team`` 1 for a team result. Small integers, not names: the fastest form to read
        (one covering scan of `_RESULT_INDEX`, the names looked up in SQL)."""
        if self.version != "4" or self.players == 2:
            return
        self.db.execute("CREATE TEMP TABLE IF NOT EXISTS result_agents (name TEXT PRIMARY KEY, i INTEGER NOT NULL) "
                        "WITHOUT ROWID")  # fmt: skip
        self.db.execute("DELETE FROM temp.result_agents")
        self.db.executemany("INSERT INTO temp.result_agents VALUES (?, ?)", [(n, i) for i, n in enumerate(names)])
        joins = " ".join(f"LEFT JOIN temp.result_agents a{s} ON a{s}.name = m.seat{s}" for s in range(4))
        codes = ", ".join(f"coalesce(a{s}.i, CASE WHEN m.seat{s} IS NULL THEN -1 ELSE -2 END)" for s in range(4))
        cur = self.db.execute(
            f"SELECT {codes}, m.kind = 'team', m.winner, m.place0, m.place1, m.place2, m.place3 "
            f"FROM match_rows m {joins} WHERE m.players IS NOT NULL"
        )
        while chunk := cur.fetchmany(size):
            yield chunk

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

    def _deal_select(self, columns: Sequence[str]) -> str:
        """``SELECT`` of these columns of `DEAL_COLUMNS` from deals ``d`` joined to their
        matches ``m`` (the ``FROM`` included), for this store's version."""
        if not self._v3:
            return f"SELECT {', '.join('d.' + c for c in columns)} FROM deals d JOIN matches m ON m.id = d.match_id"
        picked = ", ".join("m.id" if c == "match_id" else "d." + c for c in columns)
        return f"SELECT {picked} FROM match_rows m JOIN deal_rows d ON d.match_n = m.n"

    def chunks(
        self, table: str, columns: Sequence[str] | None = None, size: int = 50_000
    ) -> Iterator[list[tuple[Any, ...]]]:
        """The ``matches`` or ``deals`` table's ``columns`` (default: all, in order) in the
        order of `matches` and `deals` (seeds as unsigned integers, actions as text), as
        lists of at most ``size`` tuples: for a reader that keeps only what it needs, or
        one chunk at a time (the report leaves out the latencies, the bulk of a row; an
        export streams). Version 3 reads both in schedule order through ``match_rows_idx``
        and the deals' key, without a sort, so memory stays flat however large the store."""
        known = [name for name, _, _ in self.columns(table)] if table in ("matches", "deals") else []
        columns = list(known if columns is None else columns)
        if not known or any(c not in known for c in columns):
            raise ValueError(f"cannot read {columns} of {table!r} in chunks")
        if table == "matches":
            cur = self.db.execute(f"SELECT {', '.join(columns)} FROM {self._m} ORDER BY {self._order}")
        else:
            order = "m.idx, m.n, d.deal" if self._v3 else "m.idx, d.deal"
            cur = self.db.execute(f"{self._deal_select(columns)} ORDER BY {order}")
        seed = columns.index("seed") if "seed" in columns else None
        actions = columns.index("actions") if "actions" in columns and self._v3 else None
        while chunk := cur.fetchmany(size):
            if seed is not None or actions is not None:
                chunk = self._plain_rows(chunk, seed, actions)
            yield chunk

    def _plain_rows(self, rows: list[tuple[Any, ...]], seed: int | None, actions: int | None) -> list[tuple[Any, ...]]:
        """Stored rows with the seed unsigned and the actions as text (at those places),
        converted a column at a time."""
        cols = list(zip(*rows, strict=True))
        if seed is not None:
            cols[seed] = [x + (1 << 64) if x < 0 else x for x in cols[seed]]
        if actions is not None:
            cols[actions] = list(map(self._decode, cols[actions]))
        return list(zip(*cols, strict=True))

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
        on, deals = ("m.n = d.match_n", "deal_rows") if self._v3 else ("m.id = d.match_id", "deals")
        return self._rows(
            f"SELECT m.seat0, m.seat1, d.winner, d.game_points, count(*) AS count FROM {deals} d "
            f"JOIN {self._m} m ON {on} GROUP BY m.seat0, m.seat1, d.winner, d.game_points "
            "ORDER BY m.seat0, m.seat1, d.winner, d.game_points"
        )

    def deals(self) -> list[dict[str, Any]]:
        """Every deal row (`DEAL_COLUMNS`), in the order of `matches`."""
        names = self._deal_names
        return [dict(zip(names, r, strict=True)) for chunk in self.chunks("deals") for r in chunk]

    def match(self, match_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """One match's row and its deals (as `matches` and `deals` give them), or None."""
        names = self._table_names("matches")
        rows = self._rows(f"SELECT {', '.join(names)} FROM {self._m} WHERE id = ?", (match_id,))
        if not rows:
            return None
        rows[0]["seed"] = _from_u64(rows[0]["seed"])
        names = self._deal_names
        cur = self.db.execute(f"{self._deal_select(names)} WHERE m.id = ? ORDER BY d.deal", (match_id,))
        actions = names.index("actions") if self._v3 else None
        found = cur.fetchall()
        deals = [dict(zip(names, r, strict=True)) for r in (self._plain_rows(found, 2, actions) if found else [])]
        return rows[0], deals

    def runs(self) -> list[dict[str, Any]]:
        return self._rows("SELECT * FROM runs ORDER BY id")

    def columns(self, table: str) -> list[tuple[str, str, bool]]:
        """A table's columns in order: name, declared SQLite type, whether NULL is allowed
        (for exports that type every column, even of an empty table). ``deals`` gives what
        readers get (`DEAL_COLUMNS`: the match's text id, the actions as text) whatever the
        version; ``matches`` leaves out version 3's internal key ``n``, and gives a score or
        margin column declared INTEGER as REAL where the store holds a fraction in it (a
        stake shared by two seats tied for first place in three-pagat is half a point)."""
        if table not in ("meta", "runs", "agents", "matches", "deals"):
            raise ValueError(f"no table {table!r} in a results store")
        if table == "deals":
            return list(DEAL_COLUMNS[: len(self._deal_names)])
        rows = self._rows(f"PRAGMA table_info({self._m if table == 'matches' else table})")
        shown = set(self._table_names(table))
        out = [(r["name"], r["type"], not r["notnull"] and not r["pk"]) for r in rows if r["name"] in shown]
        if table == "matches":  # a shared stake (three-pagat) scores a half: such a column reads as REAL
            real = {n for n, declared, _ in out if n in _FRACTIONAL and declared == "INTEGER" and self._has_real(n)}
            out = [(n, "REAL" if n in real else declared, null) for n, declared, null in out]
        return out

    def _has_real(self, column: str) -> bool:
        return bool(self._rows(f"SELECT 1 AS x FROM {self._m} WHERE typeof({column}) = 'real' LIMIT 1"))

    # -- merging --------------------------------------------------------------------------
    def merge_from(self, other: Store) -> int:
        """Copy the matches of another store of the same config; returns how many were new.

        A match present in both must be identical in every column but the timings."""
        if other.config_hash is None:
            return 0
        self.bind_config(other.config, other.config_hash)
        self.bind_agents(other.agents())
        if self.version != str(SCHEMA_VERSION):
            self._migrate()
        mine = {m["id"]: m for m in self.matches()}
        new = 0
        with self._transaction():
            for m in other.matches():
                if m["id"] in mine:
                    have = mine[m["id"]]  # a column one of the stores lacks (an older version) is NULL
                    if any(have.get(k) != m.get(k) for k in {*have, *m} if k not in TIMING_COLUMNS):
                        raise StoreError(f"{other.path}: match {m['id']} differs from the one in {self.path}")
                    continue
                m = dict(m, seed=_u64(m["seed"]), run_id=None, latencies=_repack(m["latencies"]), cpu=_repack(m["cpu"]))
                _, deals = other.match(m["id"])
                self._insert(m["id"], m, [dict(d, seed=_u64(d["seed"]), actions=d["actions"].split()) for d in deals])
                new += 1
        return new
