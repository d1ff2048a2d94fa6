"""Version 3 of the results store: compact deals (action codes, integer keys), compressed
latencies, and stores of versions 1 and 2 read as they are and migrated when written.

``fixtures/store-v2/`` was made by the arena before version 3 (schema version 2): a real
tournament (random, greedy and heuristic, 2 pairs, seed 11) and its ``arena export`` as
CSV and JSON lines, from that code. Every test works on a copy. Stores are real SQLite
files, read back directly (raw SQL, as docs/store.md tells a user to) where that is the point.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import struct
from pathlib import Path

import pytest
from running import arena

from arena.play.referee import DealRecord, MatchRecord
from arena.results.store import BUILTIN_ACTIONS, SCHEMA_VERSION, Store, StoreError, pack_ms, unpack_ms

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "store-v2"
TOURNAMENT = ["tournament", "--agents", "random,greedy,heuristic", "--pairs", "2", "--seed", "11", "--quiet",
              "--no-report", "--no-sandbox"]  # fmt: skip


def raw(store: Path, sql: str, args: tuple = ()) -> list[tuple]:
    db = sqlite3.connect(store)
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def version(store: Path) -> str:
    return raw(store, "SELECT value FROM meta WHERE key = 'schema_version'")[0][0]


def copy_fixture(tmp_path: Path, name: str = "old.sqlite") -> Path:
    path = tmp_path / name
    shutil.copy(FIXTURE / "rr.sqlite", path)
    path.chmod(0o600)
    return path


def to_version_1(path: Path) -> None:
    """Make a version 2 store what version 1 wrote: latencies and CPU times as JSON text."""
    db = sqlite3.connect(path)
    with db:
        for match_id, lat, cpu in db.execute("SELECT id, latencies, cpu FROM matches").fetchall():
            db.execute("UPDATE matches SET latencies = ?, cpu = ? WHERE id = ?",
                       (json.dumps(unpack_ms(lat)), json.dumps(unpack_ms(cpu)), match_id))  # fmt: skip
        db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    db.close()


def export(store: Path, fmt: str, out: Path) -> dict[str, bytes]:
    """``arena export`` of a store: each table's file as bytes."""
    p = arena("export", str(store), "--format", fmt, "-o", str(out))
    assert p.returncode == 0, p.stderr
    return {t: (out / f"{t}.{fmt}").read_bytes() for t in ("matches", "deals")}


def fixture_export(fmt: str) -> dict[str, bytes]:
    return {t: (FIXTURE / f"export-{fmt}" / f"{t}.{fmt}").read_bytes() for t in ("matches", "deals")}


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- versions 1 and 2: read as they are --------------------------------------------------------


@pytest.mark.parametrize("old", ["1", "2"])
def test_an_old_store_is_read_as_it_is_and_exports_byte_for_byte_as_before(tmp_path, old):
    path = copy_fixture(tmp_path)
    if old == "1":
        to_version_1(path)
    before = digest(path)
    for fmt in ("csv", "jsonl"):
        assert export(path, fmt, tmp_path / fmt) == fixture_export(fmt)
    assert version(path) == old and digest(path) == before  # a reader changes nothing
    with Store(path, create=False) as s:
        assert s.version == old and s.count() == 12
        row, deals = s.match("random~heuristic#1.0")
        assert deals and all(isinstance(d["actions"], str) and d["actions"] for d in deals)


# -- migration ---------------------------------------------------------------------------------


@pytest.mark.parametrize("old", ["1", "2"])
def test_opening_an_old_store_to_write_migrates_it_and_nothing_read_from_it_changes(tmp_path, old):
    path = copy_fixture(tmp_path)
    if old == "1":
        to_version_1(path)
    with Store(path, create=False) as s:
        want = (s.matches(), s.deals(), s.runs(), s.agents(), s.config, s.result_counts(), s.deal_counts())
        want_match = s.match("greedy~heuristic#0.1")
    with Store(path) as s:  # opened to write, as a resumed tournament or a merge does
        assert s.version == str(SCHEMA_VERSION) == "4"
    assert version(path) == "4"
    assert raw(path, "PRAGMA integrity_check") == [("ok",)]
    with Store(path, create=False) as s:
        got = (s.matches(), s.deals(), s.runs(), s.agents(), s.config, s.result_counts(), s.deal_counts())
        # latencies are repacked (the same values: compare them unpacked)
        for rows in (want[0], got[0]):
            for r in rows:
                r["latencies"], r["cpu"] = unpack_ms(r["latencies"]), unpack_ms(r["cpu"])
        assert got == want
        m, deals = s.match("greedy~heuristic#0.1")
        assert deals == want_match[1] and unpack_ms(m["latencies"]) == unpack_ms(want_match[0]["latencies"])
    for fmt in ("csv", "jsonl"):
        assert export(path, fmt, tmp_path / fmt) == fixture_export(fmt)
    tables = {r[0] for r in raw(path, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"meta", "runs", "agents", "match_rows", "deal_rows", "action_codes"}
    views = {r[0] for r in raw(path, "SELECT name FROM sqlite_master WHERE type = 'view'")}
    assert views == {"matches", "deals", "table_matches", "table_deals"}
    assert {r[0] for r in raw(path, "SELECT typeof(actions) FROM deal_rows")} == {"blob"}
    assert {r[0] for r in raw(path, "SELECT typeof(latencies) FROM matches")} == {"blob"}
    # the actions are one byte each: every one is a built-in action
    assert raw(path, "SELECT count(*) FROM action_codes") == [(len(BUILTIN_ACTIONS),)]
    # SQL written for version 2 reads the view ``deals`` and gets what it got then
    v2_sql = "SELECT * FROM deals ORDER BY match_id, deal"
    assert raw(path, v2_sql) == raw(FIXTURE / "rr.sqlite", v2_sql)
    v2_sql = "SELECT * FROM matches ORDER BY id"  # the same columns; latencies repacked
    assert [r[:-2] for r in raw(path, v2_sql)] == [r[:-2] for r in raw(FIXTURE / "rr.sqlite", v2_sql)]


def test_a_resumed_tournament_migrates_an_old_store_and_plays_only_what_is_missing(tmp_path):
    """A version 2 store with its last 4 matches missing (a killed run): ``--resume``
    migrates it, plays those 4, and the 8 kept export byte for byte as before."""
    fresh = tmp_path / "fresh.sqlite"  # the same tournament played now, for the agents and the 4 games
    p = arena(*TOURNAMENT, "--store", str(fresh))
    assert p.returncode == 0, p.stderr
    path = copy_fixture(tmp_path)
    db = sqlite3.connect(path)
    with db:
        db.execute("DELETE FROM deals WHERE match_id IN (SELECT id FROM matches WHERE idx >= 8)")
        db.execute("DELETE FROM matches WHERE idx >= 8")
        # the bundled agents may have changed since the fixture was made: their hashes are
        # the one thing in it tied to today's agent code
        for name, content_hash, folder in raw(fresh, "SELECT name, content_hash, folder FROM agents"):
            db.execute("UPDATE agents SET content_hash = ?, folder = ? WHERE name = ?", (content_hash, folder, name))
    db.close()
    p = arena(*TOURNAMENT, "--store", str(path), "--resume")
    assert p.returncode == 0, p.stderr
    assert "4 matches played now, 12 of 12" in p.stdout
    assert version(path) == "4"
    got = export(path, "jsonl", tmp_path / "got")
    want = fixture_export("jsonl")
    lines = {t: got[t].decode().splitlines() for t in got}
    old_lines = {t: want[t].decode().splitlines() for t in want}
    assert lines["matches"][:8] == old_lines["matches"][:8]
    kept = {json.loads(x)["match_id"] for x in old_lines["matches"][:8]}
    assert [x for x in lines["deals"] if json.loads(x)["match_id"] in kept] == [
        x for x in old_lines["deals"] if json.loads(x)["match_id"] in kept
    ]
    with Store(path, create=False) as s, Store(fresh, create=False) as f:
        games = ("id", "winner", "score0", "score1", "deals")
        assert [tuple(r.values()) for r in s.matches(games)] == [tuple(r.values()) for r in f.matches(games)]
        assert [(d["match_id"], d["actions"]) for d in s.deals()] == [(d["match_id"], d["actions"]) for d in f.deals()]


def test_merging_an_old_store_into_a_new_one_copies_every_deal(tmp_path):
    old = copy_fixture(tmp_path)
    new = tmp_path / "new.sqlite"
    with Store(new) as s, Store(old, create=False) as o:
        assert s.merge_from(o) == 12
        assert o.version == "2"  # the source is only read
    assert version(old) == "2"
    assert export(new, "jsonl", tmp_path / "j")["deals"] == fixture_export("jsonl")["deals"]
    with Store(new, create=False) as s, Store(old, create=False) as o:
        assert s.deals() == o.deals()
        assert [unpack_ms(m["cpu"]) for m in s.matches()] == [unpack_ms(m["cpu"]) for m in o.matches()]


def test_a_store_of_a_future_version_is_refused_in_one_line_naming_the_file(tmp_path):
    path = copy_fixture(tmp_path)
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    db.close()
    before = digest(path)
    for command in (["export", str(path), "-o", str(tmp_path / "out")], ["ratings", str(path)]):
        p = arena(*command)
        assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
        assert p.stderr.strip() == (
            f"arena: error: {path}: store schema version 5, written by a newer arena; this one reads versions "
            "1, 2, 3, 4"
        )
    with pytest.raises(StoreError, match="store schema version 5"):
        Store(path)  # opened to write: refused too, and not touched
    assert digest(path) == before and version(path) == "5"


def test_a_migration_that_fails_halfway_leaves_the_old_store_as_it_was(tmp_path, monkeypatch):
    """The migration is one transaction: a failure on the 7th match (here a repacking
    that raises) rolls it all back, and the store is still a whole version 2 store."""
    import arena.results.store as store_module

    path = copy_fixture(tmp_path)
    calls = []

    def failing(value):
        calls.append(value)
        if len(calls) > 12:
            raise RuntimeError("boom")
        return store_module.pack_ms(unpack_ms(value))

    monkeypatch.setattr(store_module, "_repack", failing)
    with pytest.raises(sqlite3.OperationalError, match="user-defined function raised exception"):
        Store(path)
    monkeypatch.undo()
    assert version(path) == "2" and raw(path, "PRAGMA integrity_check") == [("ok",)]
    tables = {r[0] for r in raw(path, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"meta", "runs", "agents", "matches", "deals"}
    assert export(path, "jsonl", tmp_path / "j") == fixture_export("jsonl")
    with Store(path) as s:  # and the next writer migrates it
        assert s.version == "4" and s.count() == 12


# -- new action strings, codes and latencies ---------------------------------------------------


def record(actions: list[list[str]], latency: list[list[float | None]] | None = None) -> MatchRecord:
    lat = latency or [[0.5] * 3, [1.25] * 2]
    return MatchRecord(
        match_id="x", seed=(1 << 64) - 5, variant={}, time_control={}, agents=["a", "b"], winner=0,
        score=[7, 0], margin=7, forfeit=None,
        deals=[DealRecord(seed=k + (1 << 63), dealer=k % 2, actions=a, winner=0, game_points=1, carried=0,
                          reason="out", points=[66, 20], tricks=[4, 2]) for k, a in enumerate(actions)],
        latency_ms=lat, cpu_ms=[[None] * len(lat[0]), [0.001] * len(lat[1])],
    )  # fmt: skip


def write(s: Store, match_id: str, rec: MatchRecord, index: int = 0) -> None:
    s.write_match(run_id=None, index=index, match_id=match_id, pairing="a~b", pair_index=index, game=0,
                  seats=["a", "b"], record=rec, started=1.5, finished=2.5)  # fmt: skip


def test_new_action_strings_are_kept_exactly_and_get_codes_of_their_own(tmp_path):
    """Actions of game forms the code table does not know (and 200 more, past one byte a
    code) come back exactly, through every reader and the export, and in another process."""
    path = tmp_path / "s.sqlite"
    odd = ["bid:2", "trump:H", "play:8C", "play:7S", "pass", "bid:5", "sing:X", "é:ünïcode", "x" * 300]
    many = [f"new:{k}" for k in range(200)]
    deals = [odd, [], many, ["play:TH", "marry:S", "close", "draw", "declare"]]
    with Store(path) as s:
        write(s, "m0", record(deals))
        with pytest.raises(StoreError, match="already recorded"):  # rolled back: its new code is forgotten
            write(s, "m0", record([["only:in-the-rolled-back-one"]]))
        write(s, "m1", record([["after:rollback", "bid:2"]]), index=1)
    codes = dict(raw(path, "SELECT action, code FROM action_codes"))
    assert "only:in-the-rolled-back-one" not in codes
    assert sorted(codes.values()) == list(range(1, len(codes) + 1))
    assert [codes[a] for a in BUILTIN_ACTIONS] == list(range(1, len(BUILTIN_ACTIONS) + 1))
    assert codes["sing:X"] > len(BUILTIN_ACTIONS) and codes["new:199"] > 127
    sizes = [r[0] for r in raw(path, "SELECT length(actions) FROM deal_rows ORDER BY match_n, deal")]
    width = {a: 1 + (code >= 128) for a, code in codes.items()}  # one byte a code below 128, else two
    assert sizes == [len(odd), 0, sum(width[a] for a in many), 5, width["after:rollback"] + 1]
    assert width["new:0"] == 1 and width["new:199"] == 2
    with Store(path, create=False) as s:
        assert [d["actions"].split() for d in s.deals()] == [*deals, ["after:rollback", "bid:2"]]
        assert [d["actions"] for d in s.match("m0")[1]] == [" ".join(a) for a in deals]
        assert s.match("m0")[1][0]["seed"] == 1 << 63 and s.match("m0")[0]["seed"] == (1 << 64) - 5
    # the view ``deals`` decodes them in SQL alone, two-byte codes included
    view = raw(path, "SELECT match_id, deal, actions FROM deals ORDER BY match_id, deal")
    assert view == [("m0", k, " ".join(a)) for k, a in enumerate(deals)] + [("m1", 0, "after:rollback bid:2")]
    out = tmp_path / "out"
    p = arena("export", str(path), "--format", "jsonl", "-o", str(out))
    assert p.returncode == 0, p.stderr
    got = [json.loads(x) for x in (out / "deals.jsonl").read_text().splitlines()]
    assert [d["actions"] for d in got] == [*deals, ["after:rollback", "bid:2"]]
    assert [d["match_id"] for d in got] == ["m0"] * 4 + ["m1"]


def test_two_writers_adding_actions_never_share_a_code(tmp_path):
    path = tmp_path / "s.sqlite"
    with Store(path) as a, Store(path) as b:
        write(a, "a0", record([["only:a", "both"]]), 0)
        write(b, "b0", record([["only:b", "both"]]), 1)  # b has not read a's codes yet
        write(a, "a1", record([["only:b", "only:a"]]), 2)  # nor a b's
        assert [d["actions"] for d in b.deals()] == ["only:a both", "only:b both", "only:b only:a"]
    codes = raw(path, "SELECT action FROM action_codes WHERE code > ?", (len(BUILTIN_ACTIONS),))
    assert sorted(r[0] for r in codes) == ["both", "only:a", "only:b"]


def test_an_unknown_action_code_is_a_damaged_store(tmp_path):
    path = tmp_path / "s.sqlite"
    with Store(path) as s:
        write(s, "m0", record([["play:TH"]]))
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE deal_rows SET actions = x'7f'")
    db.close()
    with Store(path, create=False) as s, pytest.raises(StoreError, match="damaged"):
        s.deals()


@pytest.mark.parametrize(
    "lists",
    [
        [[], []],
        [[0.001, 0.0, None], []],
        [[0.25] * 40, [None] * 40],
        [[70.5, 0.2, 65.534], [None, 65.535]],  # 65535 us is the 2-byte missing value: a wider width
        [[4_000_000.0, 0.001], [1e12]],
        [[1.5, 2.25], [3.125]],
    ],
)
def test_latencies_round_trip_exactly(lists):
    packed = pack_ms(lists)
    assert isinstance(packed, bytes) and unpack_ms(packed) == lists


@pytest.mark.parametrize(
    "lists",
    [
        [[0.5, None, 1.25], [2.0], [0.001, 0.002]],  # three seats
        [[0.25] * 30, [None] * 30, [1.5] * 30, [70.5] * 30],  # four, long enough to pack as planes
        [[1e12], [], [0.0]],  # a wide width
        [[0.1]],  # one
    ],
)
def test_latencies_of_tables_round_trip_and_two_seats_keep_version_3s_bytes(lists):
    packed = pack_ms(lists)
    assert isinstance(packed, bytes) and packed[0] & 0x40 and unpack_ms(packed) == lists
    assert unpack_ms(pack_ms([[0.5, 1.0], [2.0]]))[1] == [2.0]
    assert pack_ms([[0.5, 1.0], [2.0]])[:9] == struct.pack("<BII", 2, 2, 1)  # two seats: the version-3 header
    assert unpack_ms(pack_ms([[float("nan")], [], [1.0]])) is not None  # text for what does not pack


def test_latencies_compress_and_old_packed_values_still_read():
    typical = [[0.1 + k % 7 * 0.037 for k in range(37)], [0.2 + k % 5 * 0.011 for k in range(37)]]
    typical = [[round(x, 3) for x in xs] for xs in typical]
    packed = pack_ms(typical)
    assert packed[0] == 0x82 and len(packed) < 9 + 2 * 74
    assert unpack_ms(packed) == typical
    import struct

    old = struct.pack("<BII", 2, 1, 1) + struct.pack("<2H", 1500, 65535)  # version 2's form
    assert unpack_ms(old) == [[1.5], [None]]
    assert unpack_ms("[[1.5], [null]]") == [[1.5], [None]]  # version 1's


def test_reading_in_schedule_order_needs_no_sort(tmp_path):
    """Exports and reports read matches and deals in schedule order through an index and
    the deals' key: no temporary sort, so memory stays flat however large the store."""
    path = tmp_path / "s.sqlite"
    with Store(path) as s:
        for k in (3, 1, 2, 0):
            write(s, f"m{k}", record([["play:TH"], ["close", "play:AS"]]), index=k)
        assert [r["id"] for r in s.matches(["id"])] == ["m0", "m1", "m2", "m3"]
        assert [d["match_id"] for d in s.deals()] == ["m0", "m0", "m1", "m1", "m2", "m2", "m3", "m3"]
        for sql in (
            f"SELECT id FROM match_rows ORDER BY {s._order}",
            f"{s._deal_select(['match_id', 'actions'])} ORDER BY m.idx, m.n, d.deal",
        ):
            plan = " ".join(str(r[-1]) for r in s.db.execute(f"EXPLAIN QUERY PLAN {sql}"))
            assert "TEMP B-TREE" not in plan, plan


def test_merging_translates_action_codes_between_stores(tmp_path):
    """Codes past the built-in ones are each store's own: a merge copies the action
    strings, not the codes."""
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    with Store(a) as s:
        s.bind_config({"x": 1}, "h")
        write(s, "m0", record([["bid:2", "only:a"], ["trump:H"]]))
    with Store(b) as s:
        s.bind_config({"x": 1}, "h")
        write(s, "m1", record([["only:b", "bid:2"]]), index=1)  # "only:b" takes the code "only:a" has in a
    with Store(b) as s, Store(a, create=False) as o:
        assert s.merge_from(o) == 1
        assert [(d["match_id"], d["actions"]) for d in s.deals()] == [
            ("m0", "bid:2 only:a"),
            ("m0", "trump:H"),
            ("m1", "only:b bid:2"),
        ]
    first_new = len(BUILTIN_ACTIONS) + 1
    assert raw(a, "SELECT action FROM action_codes WHERE code = ?", (first_new,)) == [("only:a",)]
    assert raw(b, "SELECT action FROM action_codes WHERE code = ?", (first_new,)) == [("only:b",)]


# -- version 3 (two-handed only) to version 4 (tables) ---------------------------------------------
#
# ``fixtures/store-v3/`` was made by the release before version 4 (commit 9277d25): the same
# tournament as store-v2 (random, greedy, heuristic, 2 pairs, seed 11), its export as CSV and
# JSON lines from that code.
FIXTURE_3 = FIXTURE.parent / "store-v3"


def copy_fixture_3(tmp_path: Path) -> Path:
    path = tmp_path / "v3.sqlite"
    shutil.copy(FIXTURE_3 / "rr.sqlite", path)
    path.chmod(0o600)
    return path


def fixture_3_export(fmt: str) -> dict[str, bytes]:
    return {t: (FIXTURE_3 / f"export-{fmt}" / f"{t}.{fmt}").read_bytes() for t in ("matches", "deals")}


def test_a_version_3_store_opened_to_write_becomes_version_4_and_reads_and_exports_as_before(tmp_path):
    path = copy_fixture_3(tmp_path)
    assert version(path) == "3"
    before = digest(path)
    for fmt in ("csv", "jsonl"):  # read as it is
        assert export(path, fmt, tmp_path / f"r{fmt}") == fixture_3_export(fmt)
    assert digest(path) == before and version(path) == "3"
    def everything(s: Store) -> tuple:
        return s.matches(), s.deals(), s.result_counts(), s.pair_counts(), s.deal_counts(), s.match("random~greedy#1.1")

    with Store(path, create=False) as s:
        want = everything(s)
    v3_sql = ("SELECT * FROM matches ORDER BY id", "SELECT * FROM deals ORDER BY match_id, deal")
    v3_rows = [raw(path, q) for q in v3_sql]
    with Store(path) as s:  # opened to write, as a resumed tournament or a merge does
        assert s.version == "4" and s.players == 2
    assert version(path) == "4" and raw(path, "PRAGMA integrity_check") == [("ok",)]
    with Store(path, create=False) as s:
        assert everything(s) == want and s.table_counts() == []
    for fmt in ("csv", "jsonl"):
        assert export(path, fmt, tmp_path / f"w{fmt}") == fixture_3_export(fmt)
    assert [raw(path, q) for q in v3_sql] == v3_rows  # SQL written for version 3 reads what it did
    # the new columns are there, NULL in every two-handed row
    assert raw(path, "SELECT count(*) FROM table_matches WHERE players IS NULL AND seat2 IS NULL") == [(12,)]
    assert raw(path, "SELECT count(*) FROM table_deals WHERE gain0 IS NULL AND bidder IS NULL") == [(47,)]


def test_a_resumed_tournament_on_a_version_3_store_plays_only_what_is_missing(tmp_path):
    fresh = tmp_path / "fresh.sqlite"
    assert arena(*TOURNAMENT, "--store", str(fresh)).returncode == 0
    path = copy_fixture_3(tmp_path)
    db = sqlite3.connect(path)
    with db:
        db.execute("DELETE FROM deal_rows WHERE match_n IN (SELECT n FROM match_rows WHERE idx >= 9)")
        db.execute("DELETE FROM match_rows WHERE idx >= 9")
        for name, content_hash, folder in raw(fresh, "SELECT name, content_hash, folder FROM agents"):
            db.execute("UPDATE agents SET content_hash = ?, folder = ? WHERE name = ?", (content_hash, folder, name))
    db.close()
    p = arena(*TOURNAMENT, "--store", str(path), "--resume")
    assert p.returncode == 0, p.stderr
    assert "3 matches played now, 12 of 12" in p.stdout and version(path) == "4"
    got = export(path, "jsonl", tmp_path / "got")["matches"].decode().splitlines()
    assert got[:9] == fixture_3_export("jsonl")["matches"].decode().splitlines()[:9]
    with Store(path, create=False) as s, Store(fresh, create=False) as f:
        games = ("id", "winner", "score0", "score1", "deals")
        assert [tuple(r.values()) for r in s.matches(games)] == [tuple(r.values()) for r in f.matches(games)]
