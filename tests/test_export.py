"""``arena export`` on a real store: every format read back, every column of its native type."""

from __future__ import annotations

import json
import sqlite3
import struct
import zlib
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest
from running import arena

ROOT = Path(__file__).resolve().parent.parent
U64 = 1 << 64


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("export") / "ex.sqlite"
    crash = "tests/agents/broken/crash-mid-match.toml"
    p = arena("tournament", "--agents", f"random,greedy,{crash}", "--pairs", "3", "--seed", "5", "--store", str(path),
              "--quiet", "--no-report")  # fmt: skip
    assert p.returncode == 0, p.stderr
    return path


def raw(store: Path, sql: str) -> list[sqlite3.Row]:
    db = sqlite3.connect(store)
    db.row_factory = sqlite3.Row
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def packed(value: bytes | None) -> list[list[float | None]] | None:
    """A stored ``latencies`` or ``cpu`` value read as docs/store.md says: a ``<BII``
    header (width, seat 0's count, seat 1's), then microseconds, the width's largest value
    for a missing one; with the width's high bit set, the values' byte planes (lowest
    bytes first) compressed with raw DEFLATE."""
    if value is None:
        return None
    assert isinstance(value, bytes), "a version 2 or 3 store keeps latencies packed"
    width, n0, n1 = struct.unpack_from("<BII", value)
    body = value[9:]
    if width & 0x80:
        width &= 0x7F
        planes = zlib.decompress(body, wbits=-15)
        assert len(planes) == width * (n0 + n1)
        body = bytes(planes[j * (n0 + n1) + i] for i in range(n0 + n1) for j in range(width))
    code = {2: "H", 4: "I", 8: "Q"}[width]
    us = struct.unpack(f"<{n0 + n1}{code}", body)
    ms = [None if u == (1 << 8 * width) - 1 else u / 1000 for u in us]
    return [ms[:n0], ms[n0:]]


def stored_deals(store: Path) -> dict[tuple[str, int], dict]:
    """Every deal row of a version 3 store, keyed by (match id, deal), with its actions as
    docs/store.md says to read them: varint codes looked up in ``action_codes``."""
    codes = dict(raw(store, "SELECT code, action FROM action_codes"))
    out = {}
    for r in raw(store, "SELECT m.id AS match_id, d.* FROM deal_rows d JOIN match_rows m ON m.n = d.match_n"):
        acts, c, shift = [], 0, 0
        for b in r["actions"]:
            c |= (b & 0x7F) << shift
            shift = shift + 7 if b & 0x80 else 0
            if not b & 0x80:
                acts.append(codes[c])
                c = 0
        out[r["match_id"], r["deal"]] = dict(r, actions=acts)
    return out


def export(store: Path, fmt: str, out: Path) -> tuple[Path, Path]:
    p = arena("export", str(store), "--format", fmt, "-o", str(out))
    assert p.returncode == 0, p.stderr
    return out / f"matches.{fmt}", out / f"deals.{fmt}"


def test_the_store_keeps_seeds_signed(store):
    # What docs/store.md says: seeds of 2**63 and above are stored as negative integers,
    # and printf('%llu', seed) gives them back exactly (as text).
    rows = raw(store, "SELECT seed, printf('%llu', seed) AS u FROM deals")
    assert any(r["seed"] < 0 for r in rows), "pick a --seed whose deals include a seed >= 2**63"
    assert all(int(r["u"]) == r["seed"] % U64 for r in rows)


def test_jsonl_has_lists_iso_times_unsigned_seeds_and_one_match_key(store, tmp_path):
    matches_path, deals_path = export(store, "jsonl", tmp_path)
    matches = [json.loads(line) for line in matches_path.read_text().splitlines()]
    deals = [json.loads(line) for line in deals_path.read_text().splitlines()]
    stored = {r["id"]: r for r in raw(store, "SELECT * FROM matches")}
    assert len(matches) == len(stored) == 18 and len(deals) == raw(store, "SELECT count(*) FROM deals")[0][0]
    for m in matches:
        assert "id" not in m
        s = stored[m["match_id"]]
        assert type(m["seed"]) is int and m["seed"] == s["seed"] % U64 and 0 <= m["seed"] < U64
        assert m["latencies"] == packed(s["latencies"]) and m["cpu"] == packed(s["cpu"])
        assert len(m["latencies"]) == 2 and all(isinstance(x, float) for x in m["latencies"][0])
        started = datetime.fromisoformat(m["started"])
        assert started.tzinfo == UTC and abs(started.timestamp() - s["started"]) < 1e-5
        assert m["started"].endswith("+00:00") and "T" in m["started"]
        assert m["forfeit_seat"] is None or type(m["forfeit_seat"]) is int
        assert type(m["winner"]) is int and (m["fault_deal"] is None or type(m["fault_deal"]) is int)
    assert any(m["fault"] == "crash" for m in matches) and any(m["forfeit_seat"] is None for m in matches)
    assert any(m["seed"] >= 1 << 63 for m in matches + deals)
    stored = stored_deals(store)
    for d in deals:
        s = stored[d["match_id"], d["deal"]]
        assert d["actions"] == s["actions"] and all(isinstance(a, str) for a in d["actions"])
        assert d["seed"] == s["seed"] % U64
    assert {d["match_id"] for d in deals} <= {m["match_id"] for m in matches}


def test_parquet_types(store, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet", reason="the parquet extra (pyproject: sixtysix-arena[parquet])")
    import pyarrow as pa

    matches_path, deals_path = export(store, "parquet", tmp_path)
    schema = pq.read_schema(matches_path)
    assert schema.field("match_id").type in (pa.string(), pa.large_string()) and "id" not in schema.names
    assert schema.field("seed").type == pa.uint64()
    assert schema.field("winner").type == schema.field("forfeit_seat").type == pa.int64()
    assert schema.field("fault").type in (pa.string(), pa.large_string())
    assert pa.types.is_timestamp(schema.field("started").type) and schema.field("started").type.tz == "UTC"
    assert schema.field("latencies").type == pa.list_(pa.list_(pa.float64()))
    assert pq.read_schema(deals_path).field("actions").type == pa.list_(pa.string())
    assert pq.read_schema(deals_path).field("seed").type == pa.uint64()
    m = pd.read_parquet(matches_path)
    assert m["seed"].dtype == "UInt64" and m["forfeit_seat"].dtype == "Int64" and m["winner"].dtype == "Int64"
    assert m["forfeit_seat"].isna().any() and str(m["started"].dtype).startswith("datetime64")
    assert str(m["started"].dt.tz) == "UTC"
    jsonl = [json.loads(x) for x in export(store, "jsonl", tmp_path / "j")[0].read_text().splitlines()]
    assert [int(x) for x in m["seed"]] == [r["seed"] for r in jsonl]
    assert [list(map(list, x)) for x in m["latencies"]] == [r["latencies"] for r in jsonl]
    d = pd.read_parquet(deals_path)
    assert d["seed"].dtype == "UInt64" and d["points0"].dtype == "Int64" and list(d["actions"][0])[0].count(":") == 1


def test_csv_reads_back_with_the_documented_recipe(store, tmp_path):
    matches_path, deals_path = export(store, "csv", tmp_path)
    # the recipe of docs/store.md
    m = pd.read_csv(matches_path, dtype_backend="numpy_nullable", dtype={"seed": "UInt64"},
                    parse_dates=["started", "finished"])  # fmt: skip
    d = pd.read_csv(deals_path, dtype_backend="numpy_nullable", dtype={"seed": "UInt64"})
    stored = {r["id"]: r for r in raw(store, "SELECT * FROM matches")}
    assert "id" not in m.columns and m["seed"].dtype == "UInt64"
    assert [int(s) for s in m["seed"]] == [stored[i]["seed"] % U64 for i in m["match_id"]]
    assert m["forfeit_seat"].dtype == "Int64" and m["forfeit_seat"].isna().any()  # not float64 with NaN
    assert str(m["started"].dt.tz) == "UTC"
    # lists are JSON text in CSV
    assert [json.loads(x) for x in m["latencies"]] == [packed(stored[i]["latencies"]) for i in m["match_id"]]
    assert json.loads(d["actions"][0])[0].count(":") == 1
    assert d["seed"].dtype == "UInt64" and d["winner"].dtype == "Int64"


def test_an_empty_store_exports_typed_empty_tables(tmp_path):
    from arena.results.store import Store

    path = tmp_path / "empty.sqlite"
    Store(path).close()  # a real store file with the schema and no match
    p = arena("export", str(path), "--format", "jsonl")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "empty-export" / "matches.jsonl").read_text() == ""
    matches_path, _ = export(path, "csv", tmp_path / "c")
    assert matches_path.read_text().startswith("match_id,idx,run_id,")
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    matches_path, deals_path = export(path, "parquet", tmp_path / "p")
    assert pq.read_schema(matches_path).field("seed").type == pa.uint64()
    assert pq.read_schema(deals_path).field("actions").type == pa.list_(pa.string())


def test_export_of_a_missing_store_is_a_one_line_error(tmp_path):
    p = arena("export", str(tmp_path / "nope.sqlite"))
    assert p.returncode == 2 and p.stderr.strip() == f"arena: error: {tmp_path / 'nope.sqlite'}: no such store"


# Stores of versions 1 and 2 (read as they are, exported byte for byte as before, migrated when
# written): tests/test_store_compact.py.


def test_a_shared_stake_exports_its_half_point(tmp_path):
    # three-pagat: two seats tied for first place share the stakes, so a match score can be
    # a half (this seed's tournament has one); the column is exported as a float, not lost.
    path = tmp_path / "tp.sqlite"
    p = arena("tournament", "--agents", "random,greedy,heuristic", "--variant", "three-pagat", "--pairs", "3",
              "--seed", "3", "--store", str(path), "--quiet", "--no-report", "--no-sandbox")  # fmt: skip
    assert p.returncode == 0, p.stderr
    halves = raw(path, "SELECT score0, score1, margin FROM match_rows WHERE typeof(score0) = 'real' "
                       "OR typeof(score1) = 'real' OR typeof(margin) = 'real'")  # fmt: skip
    assert halves, "the seed no longer gives a shared stake"
    for fmt in ("jsonl", "csv"):
        matches, _ = export(path, fmt, tmp_path / fmt)
        df = pd.read_json(matches, lines=True) if fmt == "jsonl" else pd.read_csv(matches)
        assert len(df) == 9
        got = {(r.score0, r.score1, r.margin) for r in df.itertuples()}
        assert {tuple(r) for r in halves} <= got
