"""Tournaments end to end: ``arena tournament`` and the commands around its store.

Everything runs the way a user runs it: ``python -m arena ...`` as a real subprocess with
real agent processes, stores in a temporary folder, and the results read back from the
SQLite store directly (read-only), not through the code under test.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from running import group_alive

from arena.game import derive_seed
from arena.results.store import TIMING_COLUMNS

ROOT = Path(__file__).resolve().parent.parent
RR = ["random", "greedy", "c-cautious"]
RR_PAIRINGS = [("random", "greedy"), ("random", "c-cautious"), ("greedy", "c-cautious")]
CRASH = "tests/agents/broken/crash-mid-match.toml"


def arena(*args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena", *map(str, args)], capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )


def ok(p: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert p.returncode == 0, f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    return p


def one_line_error(p: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit 2 and exactly one line on stderr, ``arena: error: ...``, holding every needle."""
    assert p.returncode == 2, f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    err = p.stderr.strip()
    assert "Traceback" not in p.stderr, p.stderr
    assert len(err.splitlines()) == 1, f"not one line:\n{p.stderr}"
    assert err.startswith("arena: error: "), err
    for n in needles:
        assert n in err, f"{n!r} not in {err!r}"
    return err


def tournament(store: Path, *extra: str | Path, agents=RR, pairs: int = 3, seed: int = 7, report: bool = False):
    """``arena tournament`` by flags; the HTML report (slow, not tested here) only when asked."""
    return arena("tournament", "--agents", ",".join(agents), "--pairs", str(pairs), "--seed", str(seed),
                 "--store", store, "--quiet", *extra, *([] if report else ["--no-report"]))  # fmt: skip


# -- reading a store, independently of arena.results.store -------------------------------------------------------------
def connect_ro(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    con.row_factory = sqlite3.Row
    return con


def rows(path: Path, sql: str, args=()) -> list[dict]:
    con = connect_ro(path)
    try:
        return [dict(r) for r in con.execute(sql, args)]
    finally:
        con.close()


def results(path: Path) -> tuple[list[dict], list[dict]]:
    """The matches (without the machine-dependent columns) and deals of a store, sorted."""
    matches = [
        {k: v for k, v in m.items() if k not in TIMING_COLUMNS} for m in rows(path, "SELECT * FROM matches ORDER BY id")
    ]
    deals = rows(path, "SELECT * FROM deals ORDER BY match_id, deal")
    return matches, deals


def ids(path: Path) -> list[str]:
    return [r["id"] for r in rows(path, "SELECT id FROM matches")]


def count_or_zero(path: Path) -> int:
    """Matches stored so far, read while a runner may be writing (0 while there is no table yet)."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.2)
        try:
            return con.execute("SELECT count(*) FROM matches").fetchone()[0]
        finally:
            con.close()
    except sqlite3.OperationalError:  # no file yet, no table yet, database is locked
        return 0


def u64(x: int) -> int:
    return x + (1 << 64) if x < 0 else x


def expected_ids(pairings, pairs: int) -> set[str]:
    return {f"{a}~{b}#{k}.{g}" for a, b in pairings for k in range(pairs) for g in (0, 1)}


def standings_rows(stdout: str) -> dict[str, list[str]]:
    """The standings table printed on stdout: agent name -> its columns."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["agent", "played"])
    out = {}
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        cols = line.split()
        out[cols[0]] = cols[1:]
    return out


# -- processes --------------------------------------------------------------------------------------------------
def _stat(pid: int) -> list[str] | None:
    """Fields of /proc/PID/stat after the command name (state is [0], ppid [1], pgid [2], starttime [19])."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2 :].split()


def children_of(ppid: int) -> list[tuple[int, str]]:
    """(pid, start time) of the live children of a process."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            f = _stat(int(entry))
            if f and int(f[1]) == ppid and f[0] != "Z":
                out.append((int(entry), f[19]))
    return out


def alive(pid: int, start: str) -> bool:
    f = _stat(pid)
    return f is not None and f[19] == start and f[0] != "Z"




# -- fixtures ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def rr(tmp_path_factory):
    """The small round-robin of random, greedy and c-cautious: (store, completed process)."""
    store = tmp_path_factory.mktemp("rr") / "rr.sqlite"
    p = ok(tournament(store, report=True))  # the default run, report included
    return store, p


@pytest.fixture(scope="module")
def crash(tmp_path_factory):
    """A round-robin with an agent that crashes in every match, with an event stream."""
    d = tmp_path_factory.mktemp("crash")
    store, events = d / "crash.sqlite", d / "events.jsonl"
    p = ok(tournament(store, "--events", events, agents=["random", "greedy", CRASH], pairs=2, seed=3))
    return store, events, p


# -- 1. a round-robin end to end ----------------------------------------------------------------------------------
def test_round_robin_stores_every_duplicate_pair_with_shared_seeds(rr):
    store, p = rr
    matches = rows(store, "SELECT * FROM matches")
    assert len(matches) == 18
    assert sorted(m["id"] for m in matches) == sorted(expected_ids(RR_PAIRINGS, 3))
    by_id = {m["id"]: m for m in matches}
    deals = rows(store, "SELECT * FROM deals ORDER BY match_id, deal")
    deals_of: dict[str, list[dict]] = {}
    for d in deals:
        deals_of.setdefault(d["match_id"], []).append(d)
    assert sorted(deals_of) == sorted(by_id)  # every match has deals, no deal without its match
    for m in matches:
        assert len(deals_of[m["id"]]) == m["deals"]
        assert [d["deal"] for d in deals_of[m["id"]]] == list(range(m["deals"]))
        assert m["forfeit_seat"] is None and m["fault"] is None
        assert m["winner"] in (0, 1) and m["winner_name"] == (m["seat0"], m["seat1"])[m["winner"]]
        assert max(m["score0"], m["score1"]) >= 7
    pair_seeds = set()
    for a, b in RR_PAIRINGS:
        for k in range(3):
            g0, g1 = by_id[f"{a}~{b}#{k}.0"], by_id[f"{a}~{b}#{k}.1"]
            for g in (g0, g1):
                assert (g["pairing"], g["pair_index"]) == (f"{a}~{b}", k)
            assert (g0["game"], g1["game"]) == (0, 1)
            assert (g0["seat0"], g0["seat1"]) == (a, b) and (g1["seat0"], g1["seat1"]) == (b, a)
            assert g0["seed"] == g1["seed"]
            assert u64(g0["seed"]) == derive_seed(7, "pair", *sorted((a, b)), k)  # as schedule.py documents
            pair_seeds.add(g0["seed"])
            d0, d1 = deals_of[g0["id"]], deals_of[g1["id"]]
            for j in range(min(len(d0), len(d1))):
                assert d0[j]["seed"] == d1[j]["seed"], f"{a}~{b}#{k}: deal {j} dealt from different decks"
    assert len(pair_seeds) == 9  # every pair has its own seed

    table = standings_rows(p.stdout)
    assert set(table) == set(RR)
    assert all(int(cols[0]) == 12 for cols in table.values())  # each agent plays two pairings of 6 matches
    assert sum(int(cols[1]) for cols in table.values()) == 18
    assert str(store) in p.stdout

    runs = rows(store, "SELECT * FROM runs")
    assert len(runs) == 1
    assert runs[0]["finished"] is not None and runs[0]["finished"] >= runs[0]["started"]
    assert runs[0]["matches_played"] == 18 and runs[0]["shard"] is None
    meta = {r["key"]: r["value"] for r in rows(store, "SELECT * FROM meta")}
    assert json.loads(meta["config"])["agents"] == RR and json.loads(meta["config"])["seed"] == 7
    assert {a["name"] for a in rows(store, "SELECT * FROM agents")} == set(RR)


def test_toml_config_gives_the_same_tournament_as_flags(rr, tmp_path):
    store, p_flags = rr
    other = tmp_path / "from-config.sqlite"
    config = tmp_path / "t.toml"
    config.write_text(
        'format = "round-robin"\n'
        'agents = ["random", "greedy", "c-cautious"]\n'
        "pairs = 3\n"
        "seed = 7\n"
        f"store = {json.dumps(str(other))}\n"
    )
    p = ok(arena("tournament", config, "--quiet", "--no-report"))
    assert other.is_file()
    assert results(other) == results(store)
    meta = lambda s: {r["key"]: r["value"] for r in rows(s, "SELECT * FROM meta")}  # noqa: E731
    assert meta(other)["config_hash"] == meta(store)["config_hash"]
    assert standings_rows(p.stdout) == standings_rows(p_flags.stdout)


@pytest.mark.parametrize(
    "fmt, agents, extra, pairings",
    [
        ("head-to-head", ["greedy", "random"], [], [("greedy", "random")]),
        ("gauntlet", RR, ["--challenger", "greedy"], [("greedy", "random"), ("greedy", "c-cautious")]),
        ("round-robin", ["random", "greedy"], [], [("random", "greedy")]),
    ],
)
def test_each_format_schedules_its_pairings(fmt, agents, extra, pairings, tmp_path):
    store = tmp_path / "s.sqlite"
    p = ok(tournament(store, "--format", fmt, *extra, agents=agents, pairs=2))
    got = rows(store, "SELECT id, pairing, seat0, seat1 FROM matches")
    assert {m["pairing"] for m in got} == {f"{a}~{b}" for a, b in pairings}
    assert sorted(m["id"] for m in got) == sorted(expected_ids(pairings, 2))
    in_play = {n for a, b in pairings for n in (a, b)}
    assert set(standings_rows(p.stdout)) == in_play


def test_the_order_of_the_agents_does_not_change_the_deals_or_the_results(tmp_path):
    """``greedy,random`` and ``random,greedy`` play the same matches: same decks, same seats, same results."""

    def played(order: list[str]) -> set[tuple]:
        store = tmp_path / f"{'-'.join(order)}.sqlite"
        ok(tournament(store, "--format", "head-to-head", agents=order, pairs=2))
        deals = rows(store, "SELECT match_id, group_concat(seed) AS seeds FROM "
                     "(SELECT * FROM deals ORDER BY match_id, deal) GROUP BY match_id")
        seeds = {d["match_id"]: d["seeds"] for d in deals}
        got = rows(store, "SELECT id, seat0, seat1, seed, winner_name, score0, score1 FROM matches")
        return {(m["seat0"], m["seat1"], m["seed"], seeds[m["id"]], m["winner_name"], m["score0"], m["score1"])
                for m in got}  # fmt: skip

    one, other = played(["greedy", "random"]), played(["random", "greedy"])
    assert len(one) == 4 and one == other


# -- 2. SIGKILL mid-run, then --resume --------------------------------------------------------------------------
def test_killed_run_resumes_to_the_same_results_as_an_uninterrupted_one(tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    total = 3 * 40 * 2
    args = ["--agents", ",".join(RR), "--pairs", "40", "--seed", "5", "--concurrency", "2", "--quiet", "--no-report"]
    cmd = [sys.executable, "-m", "arena", "tournament", *args, "--store", str(a)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while count_or_zero(a) < 20:
            assert proc.poll() is None, f"the run ended before it could be killed: {proc.communicate()}"
            assert time.monotonic() < deadline, "the run stored too few matches in 60 s"
            time.sleep(0.01)
        agents = children_of(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL

    # The agent processes see their stdin close and exit: none is left behind.
    assert agents, "no agent process found under the runner"
    deadline = time.monotonic() + 5
    while any(alive(*c) for c in agents) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [c for c in agents if alive(*c)] == [], "agent processes outlived the killed runner"
    assert [pid for pid, _ in agents if group_alive(pid)] == []  # nor anything they started (own sessions)

    partial = count_or_zero(a)
    assert 20 <= partial < total
    killed_runs = rows(a, "SELECT * FROM runs")
    assert len(killed_runs) == 1 and killed_runs[0]["finished"] is None

    resumed = ok(arena("tournament", *args, "--store", a, "--resume"))
    uninterrupted = ok(arena("tournament", *args, "--store", b))

    assert sorted(ids(a)) == sorted(ids(b)) and len(ids(a)) == len(set(ids(a))) == total
    ma, da = results(a)
    mb, db = results(b)
    assert ma == mb
    assert da == db
    assert standings_rows(resumed.stdout) == standings_rows(uninterrupted.stdout)
    runs = rows(a, "SELECT * FROM runs ORDER BY id")
    assert len(runs) == 2 and runs[1]["finished"] is not None
    assert runs[1]["matches_played"] == total - partial
    assert f"{total - partial} matches played now, {total} of {total}" in resumed.stdout

    # Without --resume a store holding this tournament's matches is refused.
    again = arena("tournament", *args, "--store", a)
    one_line_error(again, "--resume", str(a))
    assert len(ids(a)) == total


# -- 3. a crashing agent forfeits only its own matches ------------------------------------------------------------
def test_crashing_agent_forfeits_its_matches_and_the_tournament_completes(crash):
    store, _, p = crash
    matches = rows(store, "SELECT * FROM matches")
    pairings = [("random", "greedy"), ("random", "crash-mid-match"), ("greedy", "crash-mid-match")]
    assert sorted(m["id"] for m in matches) == sorted(expected_ids(pairings, 2))
    for m in matches:
        seats = (m["seat0"], m["seat1"])
        if "crash-mid-match" in seats:
            bad = seats.index("crash-mid-match")
            assert m["fault"] in ("crash", "handshake"), m
            assert m["forfeit_seat"] == bad, m
            assert m["winner"] == 1 - bad and m["winner_name"] == seats[1 - bad], m
            assert m["fault_detail"]
        else:
            assert m["fault"] is None and m["forfeit_seat"] is None, m
            assert m["winner"] in (0, 1)
    table = standings_rows(p.stdout)
    assert table["crash-mid-match"][:3] == ["8", "0", "8"]  # played, won, lost
    assert table["crash-mid-match"][-1] == "8"  # forfeits
    assert table["random"][-1] == table["greedy"][-1] == "0"


# -- 4. shards merged equal one run ------------------------------------------------------------------------------
def test_shards_merged_equal_an_unsharded_run_and_another_config_is_refused(tmp_path):
    s1, s2, m, whole, other = (tmp_path / f"{n}.sqlite" for n in ("s1", "s2", "m", "whole", "other"))
    ok(tournament(s1, "--shard", "1/2", seed=11))
    ok(tournament(s2, "--shard", "2/2", seed=11))
    ok(tournament(whole, seed=11))
    i1, i2 = set(ids(s1)), set(ids(s2))
    assert i1 and i2 and not i1 & i2
    assert i1 | i2 == set(ids(whole)) == expected_ids(RR_PAIRINGS, 3)
    assert {r["shard"] for r in rows(s1, "SELECT shard FROM runs")} == {"1/2"}

    merged = ok(arena("merge", m, s1, s2))
    assert f"{m}: 18 matches" in merged.stdout
    assert results(m) == results(whole)
    assert len(ids(m)) == len(set(ids(m))) == 18
    # Merging a shard again adds nothing and changes nothing.
    ok(arena("merge", m, s1))
    assert results(m) == results(whole)

    ok(tournament(other, agents=["random", "greedy"], pairs=1, seed=12))
    before = results(m)
    one_line_error(arena("merge", m, other), "another config")
    assert results(m) == before


# -- 5. bad configs are one-line errors before anything runs -----------------------------------------------------
BAD_CONFIGS = {
    "unknown-field": ('agents = ["random", "greedy"]\ncolour = "red"\n', ["unknown field 'colour'"]),
    "pairs-zero": ('agents = ["random", "greedy"]\npairs = 0\n', ["'pairs'", "positive integer"]),
    "swiss": ('agents = ["random", "greedy"]\nformat = "swiss"\n', ["'format'", "swiss"]),
    "gauntlet-no-challenger": ('agents = ["random", "greedy"]\nformat = "gauntlet"\n', ["'challenger'"]),
    "head-to-head-of-3": (
        'agents = ["random", "greedy", "c-cautious"]\nformat = "head-to-head"\n',
        ["'agents'", "exactly 2"],
    ),
    "bad-variant-flag": (
        'agents = ["random", "greedy"]\nvariant = {base = "schnapsen", close_min_talon = 3}\n',
        ["'variant'", "close_min_talon"],
    ),
    "time-control-unknown-key": (
        'agents = ["random", "greedy"]\n[time_control]\nmove_ms = 100\nturbo = 1\n',
        ["'time_control'", "turbo"],
    ),
    "unknown-agent-in-file": ('agents = ["random", "nobody"]\n', ["'agents'", "nobody"]),
    "not-toml": ('agents = ["random", "greedy"\npairs = 2\n', ["not valid TOML"]),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_bad_config_file_is_a_one_line_error_before_any_match(case, tmp_path):
    text, needles = BAD_CONFIGS[case]
    store = tmp_path / "never.sqlite"
    config = tmp_path / "bad.toml"
    config.write_text(f"store = {json.dumps(str(store))}\n" + text)
    one_line_error(arena("tournament", config, "--quiet"), str(config), *needles)
    assert not store.exists() and not list(tmp_path.glob("never*"))


@pytest.mark.parametrize(
    "args, needles",
    [
        (["--agents", "random,nobody"], ["--agents", "unknown agent 'nobody'"]),
        (["--agents", "random,random"], ["--agents", "twice"]),
        (["--agents", "random,greedy", "--pairs", "0"], ["--pairs", "positive integer"]),
        (["--agents", "random,greedy", "--format", "gauntlet"], ["challenger", "gauntlet"]),
        (["--agents", "random,greedy", "--variant", "skat"], ["--variant", "skat"]),
        (["--agents", "random,greedy", "--shard", "3/2"], ["--shard"]),
        (["--agents", "random,greedy", "--move-ms", "-5"], ["move_ms", "-5"]),
    ],
    ids=["unknown-agent", "agent-twice", "pairs-zero", "gauntlet-no-challenger", "variant", "shard", "move-ms"],
)
def test_bad_flags_are_one_line_errors_before_any_match(args, needles, tmp_path):
    store = tmp_path / "never.sqlite"
    p = arena("tournament", *args, "--store", store, "--quiet")
    one_line_error(p, *needles)
    assert not store.exists() and not list(tmp_path.glob("never*"))


def test_non_string_challenger_is_a_one_line_error(tmp_path):
    """``challenger = 5`` once crashed with a TypeError traceback; it is a one-line error naming the field."""
    store = tmp_path / "never.sqlite"
    config = tmp_path / "bad.toml"
    config.write_text(f'store = {json.dumps(str(store))}\nagents = ["random", "greedy"]\nformat = "gauntlet"\n'
                      "challenger = 5\n")  # fmt: skip
    one_line_error(arena("tournament", config, "--quiet"), str(config), "'challenger'")
    assert not store.exists()


def test_missing_config_file_is_a_one_line_error(tmp_path):
    config = tmp_path / "nowhere.toml"
    store = tmp_path / "never.sqlite"
    one_line_error(arena("tournament", config, "--store", store, "--quiet"), str(config), "no such config file")
    assert not store.exists()


# -- 6. the event stream ------------------------------------------------------------------------------------------
def test_events_file_streams_the_run_as_json_lines(crash):
    store, path, _ = crash
    events = [json.loads(line) for line in path.read_text().splitlines()]
    assert all(e["v"] == 1 and isinstance(e["event"], str) for e in events)
    assert events[0]["event"] == "run_started" and events[0]["total"] == 12
    assert events[-1]["event"] == "run_finished"
    assert events[-1]["played"] == events[-1]["done"] == events[-1]["total"] == 12
    assert {e["event"] for e in events} <= {"run_started", "match_finished", "fault", "run_finished"}
    stored = {m["id"]: m for m in rows(store, "SELECT * FROM matches")}
    finished = [e for e in events if e["event"] == "match_finished"]
    assert sorted(e["match_id"] for e in finished) == sorted(stored)  # one each
    for e in finished:
        m = stored[e["match_id"]]
        assert e["winner"] == m["winner_name"]
        assert e["score"] == [m["score0"], m["score1"]]
        assert (e["forfeit"] or {}).get("fault") == m["fault"]
    faults = [e for e in events if e["event"] == "fault"]
    assert sorted(e["match_id"] for e in faults) == sorted(i for i, m in stored.items() if m["fault"])
    assert len(faults) == 8
    for e in faults:
        m = stored[e["match_id"]]
        assert e["agent"] == "crash-mid-match" and e["seat"] == m["forfeit_seat"] and e["fault"] == m["fault"]


# -- 7. export -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_export_writes_tables_pandas_reads_in_one_call(fmt, rr, tmp_path):
    pd = pytest.importorskip("pandas")
    store, _ = rr
    out = tmp_path / "out"
    p = ok(arena("export", store, "--format", fmt, "-o", out))
    read = (lambda f: pd.read_csv(f)) if fmt == "csv" else (lambda f: pd.read_json(f, lines=True))
    matches, deals = read(out / f"matches.{fmt}"), read(out / f"deals.{fmt}")
    n_deals = len(rows(store, "SELECT match_id FROM deals"))
    assert len(matches) == 18 and len(deals) == n_deals
    assert f"matches.{fmt}: 18 rows" in p.stdout and f"deals.{fmt}: {n_deals} rows" in p.stdout
    assert sorted(matches["match_id"]) == sorted(ids(store))
    # Seeds are unsigned 64-bit: they must survive exactly.
    assert {int(s) for s in matches["seed"]} == {u64(r["seed"]) for r in rows(store, "SELECT seed FROM matches")}
    assert {int(s) for s in deals["seed"]} == {u64(r["seed"]) for r in rows(store, "SELECT seed FROM deals")}


def test_export_parquet_works_or_names_pyarrow(rr, tmp_path):
    store, _ = rr
    out = tmp_path / "out"
    p = arena("export", store, "--format", "parquet", "-o", out)
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        one_line_error(p, "pyarrow")
        return
    ok(p)
    import pandas as pd

    assert len(pd.read_parquet(out / "matches.parquet")) == 18


def test_export_of_a_missing_store_is_a_one_line_error(tmp_path):
    one_line_error(arena("export", tmp_path / "nothing.sqlite"), "no such store")


# -- 8. replay ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("match_id", ["random~greedy#1.0", "greedy~c-cautious#2.1"])
def test_replay_of_a_stored_match_is_identical(match_id, rr, tmp_path):
    store, _ = rr
    p = ok(arena("replay", store, match_id, "--logs", tmp_path / "logs"))
    line = p.stdout.strip().splitlines()[-1]
    assert line.startswith(f"IDENTICAL: {match_id}: "), p.stdout


def test_replay_play_by_play_prints_every_deal(rr, tmp_path):
    store, _ = rr
    match_id = "random~c-cautious#0.1"
    p = ok(arena("replay", store, match_id, "--play-by-play", "--logs", tmp_path / "logs"))
    n = len(rows(store, "SELECT deal FROM deals WHERE match_id = ?", (match_id,)))
    deal_lines = [line for line in p.stdout.splitlines() if line.startswith("deal ")]
    assert [line.split(":")[0] for line in deal_lines] == [f"deal {k}" for k in range(n)]
    assert p.stdout.strip().splitlines()[-1].startswith(f"IDENTICAL: {match_id}")


def test_replay_of_an_unknown_match_is_a_one_line_error(rr, tmp_path):
    store, _ = rr
    one_line_error(arena("replay", store, "random~greedy#99.0", "--logs", tmp_path / "logs"), "random~greedy#99.0")


# -- 9. demo ---------------------------------------------------------------------------------------------------
def test_demo_plays_all_four_bundled_agents(tmp_path):
    store = tmp_path / "demo.sqlite"
    p = ok(arena("demo", "--pairs", "2", "--store", store, "--quiet"))
    table = standings_rows(p.stdout)
    assert set(table) == {"random", "greedy", "node-greedy", "c-cautious"}
    assert all(int(cols[0]) == 12 for cols in table.values())  # 3 opponents x 2 pairs x 2 games
    assert str(store) in p.stdout
    matches = rows(store, "SELECT * FROM matches")
    assert len(matches) == 24 and all(m["fault"] is None for m in matches)
