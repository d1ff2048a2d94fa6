"""``arena ladder run --cluster``: a ladder's rounds on a Dask cluster, end to end and unmocked.

Each test copies one ladder of bundled agents (made once: submitting runs the conformance
checks) and runs ``arena`` as a real subprocess against a real ``distributed`` cluster: one
the command starts (``local:2``), the module's (started once, so that its start-up is paid
once), one whose workers cannot isolate agents, or a scheduler started with Dask's own
command (so that it can be killed). A cluster's run must store what the local runner
stores for the same ladder: the same pairs, matches, deals and ratings per round.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from running import arena, count, new_local_cluster, ok, one_line_error

from arena.results.store import TIMING_COLUMNS

distributed = pytest.importorskip("distributed")  # the test extra installs it; CI has it

ROOT = Path(__file__).resolve().parent.parent
FAST = ["--move-ms", "200", "--first-move-ms", "3000", "--bank-ms", "2000"]
AGENTS = ("random", "greedy", "c-cautious")  # c-cautious is built by each worker, in the sandbox






def tables(db: Path) -> dict[str, object]:
    """What a ladder's store holds, less what depends on the machine or the run (timing
    columns, row numbers, the run that wrote a match, when a pair was planned or a rating
    recorded): matches, deals, planned pairs, ratings after each round."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    try:
        matches = {
            r["id"]: {k: r[k] for k in r.keys() if k not in TIMING_COLUMNS and k != "n"}
            for r in con.execute("SELECT * FROM matches")
        }
        return {
            "matches": matches,
            "deals": [dict(r) for r in con.execute("SELECT * FROM deals ORDER BY match_id, deal")],
            "pairs": [dict(r) for r in con.execute("SELECT id, round, a, b, seed FROM ladder_pairs ORDER BY id")],
            "history": [dict(r) for r in con.execute("SELECT round, agent, elo, se, games FROM history ORDER BY 1, 2")],
        }
    finally:
        con.close()


def same_ladder(a: Path, b: Path) -> None:
    ta, tb = tables(a / "ladder.sqlite"), tables(b / "ladder.sqlite")
    assert sorted(ta["matches"]) == sorted(tb["matches"]), "match ids differ"
    differ = [i for i in sorted(ta["matches"]) if ta["matches"][i] != tb["matches"][i]]
    assert not differ, f"{len(differ)} matches differ, first {differ[0]}"
    for t in ("deals", "pairs", "history"):
        assert ta[t] == tb[t], f"the {t} differ"


def standings(folder: Path, env: dict[str, str]) -> str:
    return ok(arena("ladder", "standings", "--ladder", folder, env=env)).stdout


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, str]:
    """An environment whose agent cache (the workers' unpacked, built agents) is this module's own."""
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path_factory.mktemp("cache"))}


@pytest.fixture(scope="module")
def template(tmp_path_factory, env) -> Path:
    """A ladder of three bundled agents, three pairs (six matches) a round, none played."""
    folder = tmp_path_factory.mktemp("template") / "lad"
    ok(arena("ladder", "init", folder, "--concurrency", "2", "--round-pairs", "3", *FAST, env=env))
    for a in AGENTS:
        ok(arena("submit", a, "--ladder", folder, env=env))
    return folder


def copy(template: Path, dest: Path, round_pairs: int | None = None) -> Path:
    """The template ladder copied (its secret and entries with it): the same ladder."""
    shutil.copytree(template, dest, symlinks=True)
    if round_pairs is not None:  # how a ladder is scheduled, not what its matches are
        toml = dest / "ladder.toml"
        toml.write_text(toml.read_text().replace("round_pairs = 3", f"round_pairs = {round_pairs}"))
    return dest


def local_cluster(n: int, env: dict[str, str]) -> distributed.LocalCluster:
    """A LocalCluster of ``n`` worker processes with ``env`` set."""
    return new_local_cluster(n, env=env)


@pytest.fixture(scope="module")
def cluster(env) -> Iterator[str]:
    """The module's LocalCluster of two worker processes: its address."""
    c = local_cluster(2, {"XDG_CACHE_HOME": env["XDG_CACHE_HOME"]})
    try:
        yield c.scheduler_address
    finally:
        c.close(timeout=20)


@pytest.fixture(scope="module")
def reference(template, tmp_path_factory, env) -> Path:
    """The ladder every cluster run must reproduce, played here: four matches (round 0
    left open), then two rounds (round 0 finished, round 1)."""
    folder = copy(template, tmp_path_factory.mktemp("ref") / "lad")
    ok(arena("ladder", "run", "--ladder", folder, "--matches", "4", "--quiet", env=env))
    ok(arena("ladder", "run", "--ladder", folder, "--rounds", "2", "--quiet", env=env))
    assert count(folder / "ladder.sqlite") == 12
    return folder


# -- values refused before anything is played ---------------------------------------------------------------------
def run_patched(argv: list[str], patch: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """``arena ARGV`` in a fresh interpreter that first runs ``patch``."""
    code = f"import sys; {patch}; from arena.cli.main import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env=env)  # fmt: skip


def test_a_bad_address_or_no_dask_is_one_line_and_nothing_is_played(template, tmp_path, env):
    folder = copy(template, tmp_path / "lad")
    run = ["ladder", "run", "--ladder", str(folder), "--rounds", "1", "--cluster"]
    one_line_error(arena(*run, "local:0", env=env), "--cluster", "local:0")
    one_line_error(arena(*run, "bogus://10.0.0.1:8786", env=env), "--cluster bogus://10.0.0.1:8786",
                   "not a Dask scheduler's address", "unknown address scheme")  # fmt: skip
    # nothing listens there: Dask tries until the deadline (60 s; 1 s here), then one line
    port = distributed.utils.open_port()
    p = run_patched([*run, f"tcp://127.0.0.1:{port}"], "import arena.tournament.cluster as c; c.CONNECT_S = 1", env)
    one_line_error(
        p,
        f"--cluster tcp://127.0.0.1:{port}: cannot reach the Dask scheduler",
        "0 matches in the ladder",
        f"resume with: arena ladder run --ladder {folder} --cluster tcp://",
    )
    p = run_patched([*run, "local:2"], "sys.modules['dask'] = sys.modules['distributed'] = None", env)
    assert one_line_error(p).endswith("--cluster needs Dask, which is not installed: pip install "
                                      "'sixtysix-arena[cluster]'")  # fmt: skip
    assert count(folder / "ladder.sqlite") == 0


# -- on a cluster --------------------------------------------------------------------------------------------------
def test_a_ladder_on_a_cluster_stores_what_the_local_runner_stores(reference, template, cluster, tmp_path, env):
    folder, events = copy(template, tmp_path / "lad"), tmp_path / "events.jsonl"
    # --matches 4 on a LocalCluster the command starts: round 0 stays open, as locally
    p = ok(arena("ladder", "run", "--ladder", folder, "--matches", "4", "--cluster", "local:2", "--events", events,
                 env=env))  # fmt: skip
    assert "at a time per worker on Dask cluster local:2" in p.stderr
    assert "4 matches played now, 4 in the ladder" in p.stdout
    assert "4 matches, 0 rounds finished, 1 open (planned, not all played)" in standings(folder, env)
    # --rounds 2 on another cluster: the open round is finished first, then one more
    p = ok(arena("ladder", "run", "--ladder", folder, "--rounds", "2", "--cluster", cluster, "--events", events,
                 env=env))  # fmt: skip
    assert "round 0 done: 2 matches played in this run, 6 stored" in p.stderr
    assert "round 1 done: 8 matches played in this run, 12 stored" in p.stderr
    assert "12 matches, 2 rounds finished; store" in standings(folder, env)
    same_ladder(folder, reference)
    log = [json.loads(line) for line in events.read_text().splitlines()]
    chunks = [e for e in log if e["event"] == "chunk_finished"]
    assert chunks and all(e["worker"].startswith("tcp://") for e in chunks)
    assert len([e for e in log if e["event"] == "match_finished"]) == 12
    assert [e["round"] for e in log if e["event"] == "round_finished"] == [0, 1]
    # the workers unpacked each entry by its key and content, and built c-cautious there, in the sandbox
    cache = Path(env["XDG_CACHE_HOME"]) / "sixtysix-arena/cluster"
    assert sorted(x.name.split("-")[0] for x in cache.iterdir()) == ["c", "greedy@1.0.0", "random@1.0.0"]
    (c,) = cache.glob("c-cautious@1.0.0-*")
    assert (c / "agent").is_file()
    if os.geteuid() == 0:  # a root referee builds submitted code under a uid of the sandbox's, as arena submit does
        assert (c / "agent").stat().st_uid != 0


def test_workers_that_cannot_isolate_agents_refuse_the_ladder_unless_unsafe(template, tmp_path, env):
    folder = copy(template, tmp_path / "lad")
    no_bwrap = {"ARENA_BWRAP": str(tmp_path / "no-bwrap"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    c = local_cluster(1, no_bwrap)
    try:
        p = arena("ladder", "run", "--ladder", folder, "--rounds", "1", "--cluster", c.scheduler_address, env=env)
        one_line_error(p, "worker tcp://", f"ladder {folder.name!r} runs submitted code, but agents cannot be "
                       "isolated here", "--unsafe-sandbox", "0 matches in the ladder", "1 open")  # fmt: skip
        assert not (tmp_path / "cache").exists(), "submitted code was unpacked on a worker that refuses it"
        ok(arena("ladder", "run", "--ladder", folder, "--rounds", "1", "--unsafe-sandbox", "--cluster",
                 c.scheduler_address, env=env))  # fmt: skip
    finally:
        c.close(timeout=20)
    assert "6 matches, 1 round finished; store" in standings(folder, env)


def test_a_lost_scheduler_is_one_line_the_round_stays_open_and_a_rerun_goes_on(template, cluster, tmp_path, env):
    folder = copy(template, tmp_path / "lad", round_pairs=20)  # rounds of 40 matches in 4 chunks: one is open
    db = folder / "ladder.sqlite"
    dask = str(Path(sys.executable).parent / "dask")
    sfile = tmp_path / "scheduler.json"
    procs: list[subprocess.Popen] = []
    try:
        procs.append(subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                       "--scheduler-file", str(sfile)], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, env=env))  # fmt: skip
        procs.append(subprocess.Popen([dask, "worker", "--scheduler-file", str(sfile), "--nthreads", "1",
                                       "--no-dashboard", "--memory-limit", "0"], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, env=env))  # fmt: skip
        deadline = time.monotonic() + 30
        while not sfile.exists():
            assert time.monotonic() < deadline and procs[0].poll() is None, "the scheduler did not start"
            time.sleep(0.05)
        address = json.loads(sfile.read_text())["address"]
        proc = subprocess.Popen([sys.executable, "-m", "arena", "ladder", "run", "--ladder", str(folder), "--quiet",
                                 "--cluster", address], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env)  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while count(db) < 4:
                assert proc.poll() is None, f"the run ended early: {proc.communicate()}"
                assert time.monotonic() < deadline, "fewer than 4 matches stored in 60 s"
                time.sleep(0.02)
            procs[0].send_signal(signal.SIGKILL)
            out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.communicate(timeout=30)
    finally:
        for p in reversed(procs):  # the worker: SIGTERM closes it and its worker process; the scheduler is reaped
            if p.poll() is None:
                p.terminate()
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)
    stored = count(db)
    line = one_line_error(subprocess.CompletedProcess(proc.args, proc.returncode, out, err),
                          "lost the Dask scheduler", f"{stored} matches in the ladder {folder}", "1 open")  # fmt: skip
    assert line.endswith(f"resume with: arena ladder run --ladder {folder} --cluster {address}")
    assert 4 <= stored and stored % 40, stored
    rounds = stored // 40 + 1  # the open round is finished by the rerun
    p = ok(arena("ladder", "run", "--ladder", folder, "--rounds", "1", "--cluster", cluster, "--quiet", env=env))
    assert f"{40 * rounds - stored} matches played now, {40 * rounds} in the ladder" in p.stdout
    # nothing lost, nothing doubled: the ladder a local run of as many rounds stores
    local = copy(template, tmp_path / "local", round_pairs=20)
    ok(arena("ladder", "run", "--ladder", local, "--rounds", str(rounds), "--quiet", env=env))
    same_ladder(folder, local)
