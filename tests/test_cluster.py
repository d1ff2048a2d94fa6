"""Tournaments on a Dask cluster (``arena tournament --cluster``), end to end and unmocked.

Every test runs ``arena`` as a real subprocess against a real ``distributed`` cluster of
worker processes: a ``LocalCluster`` the command starts (``local:2``), one this test
starts (so that it can kill a worker or give one a PATH without ``node``), or a scheduler
and workers started with Dask's own commands (so that the scheduler can be killed). Each
cluster is closed, and each process this file starts reaped, on every path. The stores are
read with ``sqlite3``, not through the code under test.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from running import arena, count, new_local_cluster, ok, one_line_error

from arena.errors import UserError
from arena.results.store import TIMING_COLUMNS
from arena.runtime.agents import resolve
from arena.tournament.cluster import chunk_pairs, make_chunks, pairs_of, parse_target
from arena.tournament.cluster_worker import pack, unpack
from arena.tournament.schedule import load_config

distributed = pytest.importorskip("distributed")  # the test extra installs it; CI has it

ROOT = Path(__file__).resolve().parent.parent
AGENTS = "random,greedy,c-cautious"
ARGS = ["--agents", AGENTS, "--pairs", "12", "--seed", "5", "--concurrency", "2", "--no-report"]
TOTAL = 3 * 12 * 2






def tables(path: Path) -> tuple[dict[str, dict], list[dict]]:
    """A store's matches by id and its deals, less what depends on the machine: the timing
    columns and the matches' row numbers (``n``: the order they were written in)."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    try:
        matches = {
            r["id"]: {k: r[k] for k in r.keys() if k not in TIMING_COLUMNS and k != "n"}
            for r in con.execute("SELECT * FROM matches")
        }
        deals = [dict(r) for r in con.execute("SELECT * FROM deals ORDER BY match_id, deal")]  # version 2's form
    finally:
        con.close()
    return matches, deals


def same_tables(a: Path, b: Path) -> None:
    """Assert that two stores hold the same tables (`tables`), naming the first matches that differ."""
    (ma, da), (mb, db) = tables(a), tables(b)
    assert sorted(ma) == sorted(mb), f"match ids differ: {sorted(set(ma) ^ set(mb))[:5]}"
    differ = [i for i in sorted(ma) if ma[i] != mb[i]]
    assert not differ, f"{len(differ)} matches differ, first {differ[0]}: {ma[differ[0]]} != {mb[differ[0]]}"
    assert da == db, "the deals differ"


def run_events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def children(pid: int) -> list[int]:
    """Live descendants of ``pid`` (from /proc), so that a test can check none outlives it."""
    by_parent: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            if fields[0] != "Z":
                by_parent.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for c in by_parent.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def wait_gone(pids: list[int], timeout: float = 20) -> list[int]:
    """The processes of ``pids`` still alive after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = [p for p in pids if Path(f"/proc/{p}").exists() and _state(p) not in ("Z", None)]
        if not left:
            return []
        time.sleep(0.1)
    return left


def _state(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2 :].split()[0]


@contextlib.contextmanager
def local_cluster(n: int = 2, **kw) -> Iterator[tuple[distributed.LocalCluster, distributed.Client]]:
    """A LocalCluster of ``n`` single-threaded worker processes and a client of it, closed
    on every path (its worker processes with it)."""
    cluster = new_local_cluster(n, **kw)
    try:
        client = distributed.Client(cluster, timeout=30)
        try:
            yield cluster, client
        finally:
            client.close(timeout=20)
    finally:
        cluster.close(timeout=20)


def start(argv: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "arena", *argv], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip


def wait_stored(proc: subprocess.Popen, db: Path, n: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while count(db) < n:
        assert proc.poll() is None, f"the run ended early: {proc.communicate()}"
        assert time.monotonic() < deadline, f"fewer than {n} matches stored in {timeout:g} s"
        time.sleep(0.02)


def reap(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.communicate(timeout=30)


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """The tournament every cluster run must reproduce, played by the local runner."""
    db = tmp_path_factory.mktemp("ref") / "local.sqlite"
    ok(arena("tournament", *ARGS, "--quiet", "--store", db, timeout=120))
    assert count(db) == TOTAL
    return db


@pytest.fixture
def cache(tmp_path, monkeypatch) -> dict[str, str]:
    """An environment whose agent cache (builds, the workers' unpacked agents) is this test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}


# -- the schedule in chunks, agents as archives (no cluster) --------------------------------------------------------
def test_chunks_are_whole_duplicate_pairs_in_schedule_order_and_sized_by_the_rule():
    cfg = load_config(None, {"agents": AGENTS.split(","), "pairs": 12, "seed": 5})
    specs = cfg.schedule()
    assert chunk_pairs(36, threads=2, concurrency=2) == 5  # ceil(36 / (4 * 2)) pairs, above 2 * concurrency
    assert chunk_pairs(36, threads=8, concurrency=2) == 4  # never below 2 * concurrency (fixed costs)
    assert chunk_pairs(3, threads=8, concurrency=2) == 3  # never more than there is
    assert chunk_pairs(100_000, threads=1, concurrency=2) == 256  # never more than MAX_CHUNK_PAIRS
    chunks = make_chunks(specs, 5)
    assert [len(c) for c in chunks] == [10] * 7 + [2]
    assert [s for c in chunks for s in c] == specs  # every match once, in schedule order
    for c in chunks:
        assert {(s.pairing, s.pair_index) for s in c} == {(p[0].pairing, p[0].pair_index) for p in pairs_of(c)}
        assert all(len(p) == 2 for p in pairs_of(c))  # no pair is split between chunks


def test_an_agent_archive_is_checked_by_its_hashes_and_unpacked_and_built_once(tmp_path):
    c = resolve("c-cautious")
    archive = pack(c)
    assert archive == pack(c)  # reproducible: the same folder, the same bytes
    with tarfile.open(fileobj=io.BytesIO(archive.data)) as tar:
        assert "agent" not in tar.getnames() and "agent.toml" in tar.getnames()  # build outputs stay home
    m = unpack(archive, "here", root=tmp_path)
    assert m.content_hash() == c.content_hash() and (m.folder / "agent").is_file()  # built
    built = (m.folder / "agent").stat().st_mtime_ns
    assert unpack(archive, "here", root=tmp_path).folder == m.folder
    assert (m.folder / "agent").stat().st_mtime_ns == built  # not built again
    half = len(archive.data) // 2
    flipped = archive.data[:half] + bytes([archive.data[half] ^ 1]) + archive.data[half + 1 :]
    damaged = type(archive)(**{**archive.__dict__, "data": flipped})
    with pytest.raises(UserError, match="arrived damaged"):
        unpack(damaged, "here", root=tmp_path / "other")
    lying = type(archive)(**{**archive.__dict__, "content_hash": "0" * 64})
    with pytest.raises(UserError, match="content hash differs"):
        unpack(lying, "here", root=tmp_path / "other")


def test_cluster_values_are_checked(tmp_path):
    assert parse_target("local:3").workers == 3 and parse_target("local").workers >= 1
    assert parse_target("tcp://10.0.0.1:8786").address == "tcp://10.0.0.1:8786"
    p = arena("tournament", *ARGS, "--store", tmp_path / "s.sqlite", "--cluster", "local:0")
    one_line_error(p, "--cluster", "local:0")
    assert not (tmp_path / "s.sqlite").exists()


def test_without_dask_the_flag_says_how_to_install_it(tmp_path):
    code = ("import sys; sys.modules['dask'] = sys.modules['distributed'] = None; "
            "from arena.cli.main import main; sys.exit(main(sys.argv[1:]))")  # fmt: skip
    p = subprocess.run([sys.executable, "-c", code, "tournament", *ARGS, "--store", str(tmp_path / "s.sqlite"),
                        "--cluster", "local:2"], capture_output=True, text=True, timeout=60, cwd=ROOT)  # fmt: skip
    one_line_error(p, "pip install 'sixtysix-arena[cluster]'")


# -- on a cluster --------------------------------------------------------------------------------------------------
def test_a_local_cluster_of_two_workers_gives_the_tables_of_the_local_runner(reference, tmp_path, cache):
    db, events = tmp_path / "cluster.sqlite", tmp_path / "events.jsonl"
    p = ok(arena("tournament", *ARGS, "--store", db, "--cluster", "local:2", "--events", events, env=cache,
                 timeout=120))  # fmt: skip
    same_tables(db, reference)
    assert f"{TOTAL} matches played now, {TOTAL} of {TOTAL}" in p.stdout
    assert "chunks of up to 5 duplicate pairs on local:2" in p.stderr
    chunks = [e for e in run_events(events) if e["event"] == "chunk_finished"]
    assert len(chunks) == 8 and sum(e["matches"] for e in chunks) == TOTAL
    assert all(e["worker"].startswith("tcp://") and e["worker_rate"] > 0 for e in chunks)
    assert len([e for e in run_events(events) if e["event"] == "match_finished"]) == TOTAL
    # Each worker unpacked and built each agent once, into the cache, by content.
    unpacked = sorted(x.name.split("-")[0] for x in (tmp_path / "cache/sixtysix-arena/cluster").iterdir())
    assert unpacked == ["c", "greedy", "random"]
    # Resumed, nothing is played again and nothing doubled.
    again = ok(arena("tournament", *ARGS, "--store", db, "--cluster", "local:2", "--resume", env=cache))
    assert f"0 matches played now, {TOTAL} of {TOTAL}" in again.stdout
    same_tables(db, reference)


def test_a_worker_killed_mid_run_loses_nothing_and_doubles_nothing(reference, tmp_path, cache):
    db, events = tmp_path / "cluster.sqlite", tmp_path / "events.jsonl"
    with local_cluster(2) as (cluster, client):
        proc = start(["tournament", *ARGS, "--quiet", "--store", str(db), "--events", str(events),
                      "--cluster", cluster.scheduler_address], env=cache)  # fmt: skip
        try:
            wait_stored(proc, db, 4)
            deadline = time.monotonic() + 30
            while not (busy := [w for w, keys in client.processing().items() if keys]):
                assert time.monotonic() < deadline, "no worker is busy"
                time.sleep(0.02)
            pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
            agents = children(pid)
            os.kill(pid, signal.SIGKILL)
            before = count(db)
            out, err = proc.communicate(timeout=120)
        finally:
            reap(proc)
    assert proc.returncode == 0, err
    assert before < TOTAL, "the run ended before the worker was killed"
    same_tables(db, reference)  # nothing lost, nothing doubled, nothing different
    assert wait_gone(agents) == [], "the killed worker's agent processes outlived it"
    lost = [e for e in run_events(events) if e["event"] == "worker_lost"]
    assert [e["worker"] for e in lost] == [busy[0]], (run_events(events)[-5:], err)
    assert f"lost Dask worker {busy[0]}" in err


def test_a_worker_lacking_node_fails_its_task_in_one_line(tmp_path, cache):
    bin_dir = tmp_path / "bin"  # a PATH with what the worker needs but node
    bin_dir.mkdir()
    db = tmp_path / "node.sqlite"
    with local_cluster(1, env={"PATH": str(bin_dir)}) as (cluster, _):
        p = arena("tournament", "--agents", "random,node-greedy", "--pairs", "1", "--seed", "1", "--quiet",
                  "--no-report", "--no-sandbox", "--store", db, "--cluster", cluster.scheduler_address, env=cache,
                  timeout=120)  # fmt: skip
    one_line_error(p, "worker tcp://", "agent 'node-greedy' needs 'node'", "apt-get install nodejs",
                   "0 of 2 matches are in", "--resume")  # fmt: skip
    assert shutil.which("node"), "this machine has node: only the worker lacks it"


def test_a_lost_scheduler_ends_the_run_in_one_line_and_resume_goes_on(reference, tmp_path, cache):
    db = tmp_path / "cluster.sqlite"
    dask = str(Path(sys.executable).parent / "dask")
    sfile = tmp_path / "scheduler.json"
    procs: list[subprocess.Popen] = []
    try:
        scheduler = subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                      "--scheduler-file", str(sfile)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, env=cache)  # fmt: skip
        procs.append(scheduler)
        deadline = time.monotonic() + 30
        while not sfile.exists():
            assert time.monotonic() < deadline and scheduler.poll() is None, "the scheduler did not start"
            time.sleep(0.05)
        address = json.loads(sfile.read_text())["address"]
        for _ in range(2):
            procs.append(subprocess.Popen([dask, "worker", "--scheduler-file", str(sfile), "--nthreads", "1",
                                           "--no-dashboard", "--memory-limit", "0"], stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL, env=cache))  # fmt: skip
        proc = start(["tournament", *ARGS, "--quiet", "--store", str(db), "--cluster", address], env=cache)
        try:
            wait_stored(proc, db, 4)
            scheduler.send_signal(signal.SIGKILL)
            out, err = proc.communicate(timeout=120)
        finally:
            reap(proc)
    finally:
        for p in procs:  # workers: SIGTERM closes each and its worker process; then the scheduler's reaped
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)
    p = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    one_line_error(p, "lost the Dask scheduler", f"of {TOTAL} matches are in {db}", "--resume")
    stored = count(db)
    assert 4 <= stored < TOTAL
    resumed = ok(arena("tournament", *ARGS, "--store", db, "--cluster", "local:2", "--resume", env=cache))
    assert f"{TOTAL - stored} matches played now, {TOTAL} of {TOTAL}" in resumed.stdout
    same_tables(db, reference)


def test_a_killed_client_leaves_no_process_and_resumes_to_the_same_tables(reference, tmp_path, cache):
    db = tmp_path / "cluster.sqlite"
    proc = start(["tournament", *ARGS, "--quiet", "--store", str(db), "--cluster", "local:2"], env=cache)
    try:
        wait_stored(proc, db, 4)
        workers = children(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        reap(proc)
    assert workers, "no worker process found under the client"
    assert wait_gone(workers) == [], "worker or agent processes outlived the killed client"
    stored = count(db)
    assert 4 <= stored < TOTAL
    resumed = ok(arena("tournament", *ARGS, "--store", db, "--cluster", "local:2", "--resume", env=cache))
    assert f"{TOTAL - stored} matches played now" in resumed.stdout
    same_tables(db, reference)


def test_compare_on_a_cluster_gives_the_local_verdict_and_stops_the_cluster_when_the_sprt_decides(tmp_path, cache):
    argv = ["compare", "greedy", "random", "--seed", "3", "--elo1", "100", "--max-pairs", "2000", "--quiet",
            "--no-report", "--concurrency", "2"]  # fmt: skip
    local = ok(arena(*argv, "--store", tmp_path / "local.sqlite", env=cache))
    with local_cluster(2) as (cluster, client):
        t0 = time.monotonic()
        on = ok(arena(*argv, "--store", tmp_path / "cluster.sqlite", "--cluster", cluster.scheduler_address,
                      env=cache))  # fmt: skip
        took = time.monotonic() - t0
        deadline = time.monotonic() + 10  # the chunks still playing at the decision stop (a Dask Event)
        while any(client.processing().values()):
            assert time.monotonic() < deadline, f"the cluster still plays: {client.processing()}"
            time.sleep(0.1)
    verdict = [line for line in local.stdout.splitlines() if "accepted" in line]
    assert verdict and verdict == [line for line in on.stdout.splitlines() if "accepted" in line]
    assert "H1 accepted" in verdict[0] and "10 pairs" in verdict[0]
    stored = count(tmp_path / "cluster.sqlite")
    assert 20 <= stored < 2 * 4 * 32, stored  # the decision's pairs, not the 2000 pairs asked for at most
    assert took < 60


def test_the_agents_stderr_on_a_worker_reaches_the_clients_logs(tmp_path, cache):
    """What agents write to stderr on a worker comes back with each chunk, into the run's
    logs beside the store as a local run writes it (one file per worker and process)."""
    db = tmp_path / "flood.sqlite"
    flood = str(ROOT / "tests" / "agents" / "broken" / "stderr-flood.toml")
    ok(arena("tournament", "--agents", f"random,{flood}", "--pairs", "1", "--seed", "1", "--quiet", "--no-report",
             "--no-sandbox", "--store", db, "--cluster", "local:1", env=cache, timeout=120))  # fmt: skip
    assert count(db) == 2
    logs = {p.name: p for p in (tmp_path / "flood-logs").iterdir()}
    mine = [name for name in logs if "stderr-flood" in name]
    assert len(mine) == 1 and mine[0].startswith("127.0.0.1_"), sorted(logs)  # WORKER-LABEL-N.log
    data = logs[mine[0]].read_bytes()
    assert len(data) >= 1_000_000 and data[:100] == b"x" * 100  # the flood, up to the runtime's cap
    assert oct(logs[mine[0]].stat().st_mode & 0o777) == "0o600"
