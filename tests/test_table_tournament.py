"""Tournaments at tables (issue 18): the three-handed and partnership games end to end with
real agent processes: the seatings, a killed run resumed, shards merged, the ratings.

Stores are read with sqlite3 directly (the ``table_matches`` and ``table_deals`` views a
user is told about in docs/store.md), not through `arena.results.store`.
"""

from __future__ import annotations

import collections
import itertools
import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from running import ROOT, arena, count, ok, one_line_error

from arena.game import derive_seed
from arena.results.store import Store
from arena.stats.table_rating import TableResults

TIMING = {
    "run_id", "started", "finished", "latencies", "cpu",
    *(f"{k}{s}" for k in ("latency_mean", "latency_max", "cpu_ms") for s in range(4)),
}  # fmt: skip
THREE = ["random", "greedy", "heuristic", "node-greedy"]
FOUR = ["random", "greedy", "heuristic", "node-greedy", "agents/c-cautious"]


def rows(path: Path, sql: str) -> list[dict]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute(sql)]
    finally:
        con.close()


def results(path: Path) -> tuple[list[dict], list[dict]]:
    """Every match (timings left out) and deal of a store, by id."""
    matches = [{k: v for k, v in m.items() if k not in TIMING}
               for m in rows(path, "SELECT * FROM table_matches ORDER BY id")]  # fmt: skip
    return matches, rows(path, "SELECT * FROM table_deals ORDER BY match_id, deal")


def signed(x: int) -> int:
    """A seed as SQLite keeps it (a signed 64-bit integer)."""
    return x - (1 << 64) if x >= 1 << 63 else x


def seats(m: dict) -> tuple[str, ...]:
    return tuple(m[f"seat{s}"] for s in range(4) if m[f"seat{s}"] is not None)


def tournament(store: Path, variant: str, agents: list[str], *extra: str, pairs: int = 1, seed: int = 9):
    return arena("tournament", "--agents", ",".join(agents), "--variant", variant, "--pairs", str(pairs),
                 "--seed", str(seed), "--quiet", "--no-report", "--no-sandbox", "--store", store, *extra)  # fmt: skip


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    store = tmp_path_factory.mktemp("three") / "t.sqlite"
    return store, ok(tournament(store, "three-pagat", THREE, pairs=2))


@pytest.fixture(scope="module")
def four(tmp_path_factory):
    store = tmp_path_factory.mktemp("four") / "f.sqlite"
    return store, ok(tournament(store, "four-pagat", FOUR))


def test_three_handed_round_robin_plays_every_table_in_every_rotation_on_one_deck(three):
    store, p = three
    matches = rows(store, "SELECT * FROM table_matches")
    by_set = collections.defaultdict(list)
    for m in matches:
        by_set[m["pairing"], m["pair_index"]].append(m)
    tables = {"~".join(t) for t in itertools.combinations(sorted(THREE), 3)}
    assert {t for t, _ in by_set} == tables and {k for _, k in by_set} == {0, 1}
    assert len(matches) == 4 * 2 * 3
    for (table, k), games in by_set.items():
        agents = table.split("~")
        assert {m["seed"] for m in games} == {signed(derive_seed(9, "table", *agents, k))}  # one deck for the set
        rotations = [seats(m) for m in sorted(games, key=lambda m: m["game"])]
        first = rotations[0]
        assert rotations == [first[r:] + first[:r] for r in range(3)]  # each agent holds each seat's cards once
        assert sorted(first) == agents
        for m in games:
            assert m["players"] == 3 and m["kind"] == "winner" and m["seat3"] is None
            assert m["fault"] is None and m["winner"] in (0, 1, 2)
            assert m["winner_name"] == seats(m)[m["winner"]]
            assert [m[f"place{s}"] for s in range(3)] == [1 if s == m["winner"] else 2 for s in range(3)]
            assert m["score2"] is not None and m["margin"] > 0
    # every deal is stored per seat (three sides) with its gains
    deals = rows(store, "SELECT * FROM table_deals")
    assert deals and all(d["points2"] is not None and d["gain2"] is not None for d in deals)
    assert "heuristic" in p.stdout and "24 matches played now, 24 of 24" in p.stdout


def test_a_stored_table_match_replays_identically(three, tmp_path):
    store, _ = three
    m = rows(store, "SELECT * FROM table_matches ORDER BY id LIMIT 1")[0]
    p = ok(arena("replay", store, m["id"], "--no-sandbox", "--logs", tmp_path))
    score = " / ".join(f"{m[f'score{s}']:g}" for s in range(3))
    assert p.stdout.strip().startswith(f"IDENTICAL: {m['id']}:") and p.stdout.strip().endswith(score), p.stdout


def test_permutations_play_both_directions_round_the_table(tmp_path):
    store = tmp_path / "p.sqlite"
    ok(tournament(store, "three-cutthroat", ["random", "greedy", "heuristic"], "--seating", "permutations"))
    games = sorted(rows(store, "SELECT * FROM table_matches"), key=lambda m: m["game"])
    orders = [seats(m) for m in games]
    assert len(orders) == len(set(orders)) == 6  # all six orders of three agents
    assert len({m["seed"] for m in games}) == 1


def test_partnerships_swap_and_rotate_so_everyone_partners_everyone(four):
    store, p = four
    matches = rows(store, "SELECT * FROM table_matches")
    names = [n.split("/")[-1] for n in FOUR]
    tables = {"~".join(t) for t in itertools.combinations(sorted(names), 4)}
    assert {m["pairing"] for m in matches} == tables and len(matches) == 5 * 6
    for table in tables:
        games = [m for m in matches if m["pairing"] == table]
        assert len({m["seed"] for m in games}) == 1 and {m["game"] for m in games} == set(range(6))
        partners = collections.Counter()
        hands = collections.Counter()
        for m in games:
            s = seats(m)
            assert m["kind"] == "team" and m["players"] == 4
            partners.update([frozenset((s[0], s[2])), frozenset((s[1], s[3]))])
            hands.update([(frozenset((s[0], s[2])), 0), (frozenset((s[1], s[3])), 1)])
            if m["winner"] is not None:
                assert m["winner_name"] == "+".join(s[m["winner"]::2])
                assert [m[f"place{i}"] for i in range(4)] == [1 if i % 2 == m["winner"] else 2 for i in range(4)]
        # each of the 6 possible partnerships twice, once holding each pair of hands (seats 0+2, then 1+3)
        assert len(partners) == 6 and set(partners.values()) == {2}
        assert set(hands.values()) == {1}
    out = json.loads(ok(arena("ratings", store, "--json")).stdout)
    assert out["matches"] == 30 and "sum of its members" in out["reference"]
    assert {r["agent"] for r in out["ratings"]} == set(names)
    assert all(r["games"] == 24 for r in out["ratings"])  # each agent sits at 4 of the 5 tables
    # the fast read (agents as numbers, looked up in SQL) gives what the read by name gives
    with Store(store, create=False) as s:
        fast, by_name = TableResults.of_store(s, names), TableResults.from_chunks(s.table_result_chunks(size=7), names)
        partial = TableResults.of_store(s, names[:2])  # agents the caller did not name: read by name
    for f in ("seat", "winner", "place", "count"):
        assert (getattr(fast, f) == getattr(by_name, f)).all() and (getattr(partial, f) >= -1).all()
    assert fast.kinds == by_name.kinds == {"team"} and sorted(partial.names) == sorted(names)
    eplan = rows(store, "EXPLAIN QUERY PLAN SELECT seat0, seat1, seat2, seat3, kind, winner, place0, place1, place2, "
                        "place3 FROM match_rows WHERE players IS NOT NULL")  # fmt: skip
    assert "COVERING INDEX match_rows_result" in eplan[0]["detail"]


def test_a_killed_table_run_resumes_to_the_same_results_as_an_uninterrupted_one(tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    args = ["--agents", "random,greedy,heuristic,node-greedy", "--variant", "four-bidding", "--pairs", "6",
            "--seed", "4", "--concurrency", "2", "--quiet", "--no-report", "--no-sandbox"]  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-m", "arena", "tournament", *args, "--store", str(a)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while count(a) < 8:
            assert proc.poll() is None, f"the run ended before it could be killed: {proc.communicate()}"
            assert time.monotonic() < deadline, "too few matches stored in 120 s"
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    partial = count(a)
    assert 8 <= partial < 36
    # resumed from the store alone: the table config is kept in it
    resumed = ok(arena("tournament", "--store", a, "--resume", "--quiet", "--no-report", "--no-sandbox"))
    ok(arena("tournament", *args, "--store", b))
    assert results(a) == results(b)
    assert f"{36 - partial} matches played now, 36 of 36" in resumed.stdout
    bids = rows(a, "SELECT bidder, bid, gain0, gain1 FROM table_deals WHERE bidder IS NOT NULL")
    assert bids and all(1 <= d["bid"] <= 5 and 0 <= d["bidder"] <= 3 for d in bids)


def test_table_shards_merge_into_the_unsharded_tournament(tmp_path):
    s1, s2, m, whole = (tmp_path / f"{n}.sqlite" for n in ("s1", "s2", "m", "whole"))
    agents = ["random", "greedy", "heuristic"]
    ok(tournament(s1, "three-sitout", agents, "--shard", "1/2", "--seating", "permutations", pairs=2))
    ok(tournament(s2, "three-sitout", agents, "--shard", "2/2", "--seating", "permutations", pairs=2))
    ok(tournament(whole, "three-sitout", agents, "--seating", "permutations", pairs=2))
    one, two = ({r["id"] for r in rows(s, "SELECT id FROM matches")} for s in (s1, s2))
    assert one and two and not one & two
    ok(arena("merge", m, s1, s2))
    assert results(m) == results(whole)
    matches = rows(whole, "SELECT * FROM table_matches")
    assert all(x["kind"] == "order" for x in matches)
    assert all(sorted(x[f"place{s}"] for s in range(3)) in ([1, 2, 3], [1, 2, 2]) for x in matches)
    maps = rows(whole, "SELECT seat_map FROM table_deals")
    assert maps and all(len(r["seat_map"].split()) == 2 for r in maps)  # the two match seats holding the hand
    for x in matches:  # each match seat's gains (the dealer sitting out scores too) add up to its score
        gains = rows(whole, f"SELECT sum(gain0) AS g0, sum(gain1) AS g1, sum(gain2) AS g2 FROM table_deals "
                            f"WHERE match_id = '{x['id']}'")[0]  # fmt: skip
        assert [gains[f"g{s}"] for s in range(3)] == [x[f"score{s}"] for s in range(3)]


@pytest.mark.parametrize(
    ("extra", "needles"),
    [
        (["--variant", "four-pagat", "--agents", "random,greedy,heuristic"], ["--agents", "4 to 64", "four-pagat"]),
        (["--variant", "three-pagat", "--format", "head-to-head", "--agents", "random,greedy,heuristic,node-greedy"],
         ["--agents", "exactly 3"]),
        (["--variant", "four-pagat", "--seating", "permutations", "--agents", "random,greedy,heuristic,node-greedy"],
         ["--seating", "three-handed"]),
        (["--variant", "three-sitout", "--agents", f"random,greedy,{ROOT}/tests/agents/broken/two-handed.toml"],
         ["two-handed", "three-sitout"]),
    ],
)
def test_bad_table_configs_are_one_line_errors_before_any_match(extra, needles, tmp_path):
    store = tmp_path / "never.sqlite"
    p = arena("tournament", *extra, "--pairs", "1", "--quiet", "--no-report", "--store", store)
    one_line_error(p, *needles)
    assert not store.exists()


def test_a_table_tournament_on_a_dask_cluster_equals_the_local_run(three, tmp_path):
    pytest.importorskip("distributed")
    store, _ = three
    on_cluster = tmp_path / "c.sqlite"
    ok(tournament(on_cluster, "three-pagat", THREE, "--cluster", "local:2", pairs=2))
    assert results(on_cluster) == results(store)
