"""The hostile suite: hostile agents (tests/agents/hostile) in real ``arena tournament``
runs, each test run twice: with the referee as root (as pytest runs) and as the
unprivileged user of `asuser` (the launcher execs into the referee, so the process
started here is the referee). Each test checks containment (what the agent's own log
says it tried and got), the record (the store's rows) and that nothing outlives the run
(no process the run started, no file on the host).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from asuser import as_user, can_switch, give, user_env

from arena.runtime.sandbox import UID_BASE, Limits, probe

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests" / "agents" / "hostile"
MIB = 1 << 20
#: Generous for the honest side: no test here expects a timeout, and on a machine loaded
#: far past its cores (other arena runs beside this one) greedy must not lose on time.
TC = ("--move-ms", "3000", "--first-move-ms", "5000", "--bank-ms", "0")
#: The thief spends up to about 1.5 s of CPU hunting at its first decision.
THIEF_TC = ("--move-ms", "3000", "--first-move-ms", "15000", "--bank-ms", "0")

CAPS = probe() if sys.platform.startswith("linux") else None
pytestmark = pytest.mark.skipif(
    CAPS is None or not CAPS.isolated,
    reason=f"no bubblewrap sandbox here: {CAPS.bwrap_why if CAPS else 'not Linux'}",
)
MODES = [
    "root",
    pytest.param("user", marks=pytest.mark.skipif(not can_switch(), reason="needs root (and useradd) to switch users")),
]


# -- processes ---------------------------------------------------------------------------------------------------
def _stat(pid: int | str) -> tuple[str, int, int] | None:
    """(state, ppid, start time) of a process, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return fields[0], int(fields[1]), int(fields[19])


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def live_pids() -> list[int]:
    """Every process that runs (zombies left out)."""
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and (_stat(p) or ("Z",))[0] not in "ZX"]


def with_marker(marker: str, role: str | None = None) -> list[int]:
    """Live processes with ``marker`` in their environment (and ``HOSTILE_ROLE=role``)."""
    out = []
    for pid in live_pids():
        env = _read(f"/proc/{pid}/environ")
        if marker.encode() in env and (role is None or f"HOSTILE_ROLE={role}".encode() in env.split(b"\0")):
            out.append(pid)
    return out


def of_uid(uid: int) -> list[int]:
    """Live processes of ``uid``."""
    out = []
    for pid in live_pids():
        try:
            if os.stat(f"/proc/{pid}").st_uid == uid:
                out.append(pid)
        except OSError:
            pass
    return out


class Tree:
    """Every process seen below a root process (pid -> start time, uid, command line)."""

    def __init__(self, root: int):
        self.root = root
        self.seen: dict[int, tuple[int, int, str]] = {}

    def scan(self) -> None:
        children: dict[int, list[int]] = {}
        for p in os.listdir("/proc"):
            st = _stat(p) if p.isdigit() else None
            if st is not None:
                children.setdefault(st[1], []).append(int(p))
        todo = list(children.get(self.root, []))
        while todo:
            pid = todo.pop()
            st = _stat(pid)
            if st is None:
                continue
            if pid not in self.seen:
                try:
                    uid = os.stat(f"/proc/{pid}").st_uid
                except OSError:
                    continue
                cmd = _read(f"/proc/{pid}/cmdline").replace(b"\0", b" ").decode(errors="replace")[:120]
                self.seen[pid] = (st[2], uid, cmd)
            todo.extend(children.get(pid, []))

    def alive(self) -> list[tuple[int, str]]:
        """(pid, command line now) of the processes seen that still run (the same process:
        the same start time)."""
        out = []
        for pid, (start, _uid, _cmd) in self.seen.items():
            st = _stat(pid)
            if st is not None and st[2] == start and st[0] not in "ZX":
                out.append((pid, _read(f"/proc/{pid}/cmdline").replace(b"\0", b" ").decode(errors="replace")[:120]))
        return out

    @property
    def uids(self) -> set[int]:
        return {uid for _start, uid, _cmd in self.seen.values()}


def gone_within(check, seconds: float = 10.0):
    """Poll ``check()`` until it gives something empty; returns its last answer. (The time
    is a bound, not a measure: on a loaded machine the kernel may take a while to reap.)"""
    deadline = time.monotonic() + seconds
    while True:
        left = check()
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


# -- the referee in one mode -------------------------------------------------------------------------------------
@dataclasses.dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    tree: Tree


@dataclasses.dataclass
class Referee:
    """``arena tournament`` as root or as the user, in ``home``: a folder of its own
    under the system's temp dir (tmp_path is in a 0700 folder the user cannot enter)."""

    mode: str
    home: Path
    marker: str  # in every hostile agent's environment (and so its sandbox's processes'): what is the run's

    def command(self, argv: list[str]) -> list[str]:
        return as_user(argv) if self.mode == "user" else argv

    def start(self, *args: str | Path) -> tuple[subprocess.Popen, object, object]:
        if self.mode == "user":
            give(self.home)
        out, err = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
        argv = [sys.executable, "-m", "arena", "tournament", *map(str, args), "--quiet", "--no-report"]
        env = user_env(self.home) if self.mode == "user" else None
        proc = subprocess.Popen(self.command(argv), cwd=ROOT, env=env, stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL)  # fmt: skip
        return proc, out, err

    def run(self, *args: str | Path, timeout: float = 90) -> Run:
        """Run to the end, noting every process the referee starts."""
        proc, out, err = self.start(*args)
        tree = Tree(proc.pid)
        deadline = time.monotonic() + timeout
        while proc.poll() is None:
            tree.scan()
            if time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                pytest.fail(f"arena tournament took more than {timeout} s")
            time.sleep(0.05)
        out.seek(0)
        err.seek(0)
        return Run(proc.returncode, out.read(), err.read(), tree)

    def agent(self, behaviour: str, **env: str) -> Path:
        """A copy of the hostile agent in ``home`` whose manifest's [env] is ``env`` and the marker."""
        env = {"HOSTILE_MARKER": self.marker, **env}
        folder = self.home / f"agent-{behaviour}"
        folder.mkdir(exist_ok=True)
        shutil.copy2(HOSTILE / "hostile.py", folder)
        head = (HOSTILE / f"{behaviour}.toml").read_text().split("[env]")[0].rstrip()
        lines = [f"{k} = {json.dumps(v)}" for k, v in env.items()]
        (folder / f"{behaviour}.toml").write_text(head + "\n\n[env]\n" + "\n".join(lines) + "\n")
        return folder / f"{behaviour}.toml"

    def agent_uids(self, tree: Tree) -> set[int]:
        """As root, the uids the run's agents ran as: each process its own, unique on the
        machine while it ran (UID_BASE itself is the sandbox probe's, which any referee may
        be running). As the user, none: the user is shared with other tests and benches."""
        return {u for u in tree.uids if u > UID_BASE} if self.mode == "root" else set()

    def leftovers(self, tree: Tree) -> list:
        """Whatever of the run still runs: processes seen below the referee, processes with
        the marker, processes of the agents' uids."""
        return tree.alive() + with_marker(self.marker) + [p for u in self.agent_uids(tree) for p in of_uid(u)]


@pytest.fixture(params=MODES)
def referee(request):
    home = Path(tempfile.mkdtemp(prefix="arena-hostile-"))
    os.chmod(home, 0o700)
    if request.param == "user":
        give(home)
    yield Referee(request.param, home, f"hostile-{uuid.uuid4().hex}")
    shutil.rmtree(home, ignore_errors=True)


# -- checks ------------------------------------------------------------------------------------------------------
def rows(store: Path) -> list[dict]:
    """The store's matches: id, pair_index, game, seat0, seat1, forfeit_seat, fault, fault_detail, winner."""
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    try:
        cols = "id, pair_index, game, seat0, seat1, forfeit_seat, fault, fault_detail, winner"
        return [dict(r) for r in con.execute(f"SELECT {cols} FROM matches ORDER BY idx")]
    finally:
        con.close()


def meta(store: Path) -> dict[str, str]:
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        return dict(con.execute("SELECT key, value FROM meta"))
    finally:
        con.close()


def ok(run: Run) -> None:
    assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout}\n{run.stderr}"
    assert "Traceback" not in run.stderr, run.stderr
    assert "going on without" not in run.stderr, run.stderr  # every sandbox mechanism was on


def nothing_left(referee: Referee, run: Run) -> None:
    """No process the run started is alive, none with its marker, none of the agents' uids."""
    assert run.tree.seen, "no process of the run was ever seen"
    assert gone_within(lambda: referee.leftovers(run.tree)) == []


def lines(log: str, what: str) -> list[str]:
    return [x for x in log.splitlines() if x.startswith(f"hostile: {what}")]


def logs_of(folder: Path, name: str) -> list[str]:
    found = [p.read_text(errors="replace") for p in sorted(folder.glob(f"{name}-*.log"))]
    assert found, f"no log of {name} in {folder}: {sorted(os.listdir(folder))}"
    return found


def attacker_faults_only(store: Path, attacker: str, matches: int) -> list[dict]:
    """Every match stored; a fault, if any, is the attacker's own."""
    got = rows(store)
    assert len(got) == matches, got
    for r in got:
        assert r["winner"] in (0, 1), r
        if r["fault"] is not None or r["forfeit_seat"] is not None:
            assert (r["seat0"], r["seat1"])[r["forfeit_seat"]] == attacker, r
    return got


# -- the thief ---------------------------------------------------------------------------------------------------
def thief_config(referee: Referee, pairs: int, seed: int | None) -> tuple[Path, Path, Path, list[Path]]:
    """A thief-against-greedy config whose thief looks into the config, the store, its
    WAL, the logs and the report folder: (config, store, logs, those paths)."""
    out = referee.home
    cfg, store, logs = out / "t.toml", out / "t.sqlite", out / "logs"
    paths = [cfg, store, Path(f"{store}-wal"), logs, out / "t"]  # out/t: where the report would go
    thief = referee.agent("thief", HOSTILE_PATHS=os.pathsep.join(map(str, paths)), HOSTILE_TRIES="200000")
    seed_line = "" if seed is None else f"seed = {seed}\n"
    cfg.write_text(
        f'format = "head-to-head"\nagents = [{json.dumps(str(thief))}, "greedy"]\npairs = {pairs}\n{seed_line}'
        f"concurrency = 2\nstore = {json.dumps(str(store))}\n"
    )
    return cfg, store, logs, paths


def test_thief_finds_no_seed_nor_deck_and_plays_like_its_honest_twin(referee):
    pairs = 12
    cfg, store, logs, paths = thief_config(referee, pairs, seed=None)
    run = referee.run(cfg, "--logs", logs, *THIEF_TC)
    ok(run)
    secret = meta(store).get("secret")  # a run without --seed draws a secret root seed of 128 bits for its store
    assert secret is not None and int(secret) >= 1 << 64, f"no secret root seed in the store: {meta(store)}"
    for log in logs_of(logs, "hostile-thief"):
        found = lines(log, "no seed found")
        assert len(found) == 1 and "found root seed" not in log, log
        assert int(re.search(r"after (\d+) tries", found[0]).group(1)) > 10_000, found  # it did search
        for path in paths:  # the config, the store, its WAL, the logs and the report: out of its sight
            assert f"hostile: denied {path}:" in log, (path, log)
            assert f"read OK {path}" not in log and f"listed {path}" not in log, log
        pids = json.loads(re.search(r"hostile: pids (\[.*?\]) \(I am (\d+)\)", log).group(1))
        own = int(re.search(r"\(I am (\d+)\)", log).group(1))
        assert set(pids) <= {1, own}, pids  # its init and itself: no other process, so no cmdline of others
        for line in lines(log, "read OK /proc/"):
            assert re.match(rf"hostile: read OK /proc/({own}|1)/", line), line
            assert "tournament" not in line and "sqlite" not in line, line
        env = json.loads(lines(log, "env ")[0].removeprefix("hostile: env "))
        assert "HOSTILE_PATHS" in env and not any(k.startswith("ARENA") for k in env), env
        assert secret not in log and format(int(secret), "x") not in log
    # When it finds nothing it plays as greedy does, so each pair is greedy against greedy
    # on one deck with the seats swapped: one win each, exactly what its honest twin scores.
    got = rows(store)
    assert len(got) == 2 * pairs and all(r["fault"] is None for r in got), got
    for k in range(pairs):
        pair = [r for r in got if r["pair_index"] == k]
        wins = sum((r["seat0"], r["seat1"])[r["winner"]] == "hostile-thief" for r in pair)
        assert wins == 1, pair
    nothing_left(referee, run)


def test_control_thief_finds_a_plain_seed_and_wins(referee):
    # The same thief with a guessable --seed: it finds the seed and turns it into wins, so
    # the test above can fail.
    pairs = 3
    cfg, store, logs, _paths = thief_config(referee, pairs, seed=7)
    run = referee.run(cfg, "--logs", logs, *THIEF_TC)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    assert "going on without" not in run.stderr, run.stderr
    for log in logs_of(logs, "hostile-thief"):
        assert re.search(r"^hostile: found root seed 7\b", log, re.M), log
    got = rows(store)
    assert len(got) == 2 * pairs and all(r["fault"] is None for r in got), got
    wins = sum((r["seat0"], r["seat1"])[r["winner"]] == "hostile-thief" for r in got)
    assert wins >= 2 * pairs - 1, got  # its honest twin wins exactly `pairs`
    nothing_left(referee, run)


# -- signals -----------------------------------------------------------------------------------------------------
def test_signals_reach_no_one_outside_the_sandbox(referee):
    decoy = subprocess.Popen(referee.command(["sleep", "120"]), stdin=subprocess.DEVNULL)
    try:
        me, d = os.getpid(), decoy.pid
        # Around this test's pid, the decoy's, and the next pids: the referee's and its children's.
        pids = f"{max(2, me - 50)}-{me + 50},{d},{d + 1}-{d + 400}"
        agent = referee.agent("signals", HOSTILE_PIDS=pids)
        store, pairs = referee.home / "s.sqlite", 2
        run = referee.run("--agents", f"{agent},greedy", "--pairs", pairs, "--concurrency", 2, "--store", store,
                          "--logs", referee.home / "logs", *TC)  # fmt: skip
        ok(run)
        state = _stat(d)
        assert decoy.poll() is None and state is not None and state[0] not in "TtZX", state  # alive, not stopped
    finally:
        decoy.kill()
        decoy.wait()
    for log in logs_of(referee.home / "logs", "hostile-signals"):
        counts = lines(log, "signals ")
        assert len(counts) == 1 and "'ok'" not in counts[0] and "ESRCH" in counts[0], log
        assert lines(log, "kill(-1, SIGKILL)"), log
        # kill(-1) signals every process it may but itself and its init: in its PID namespace, no one.
        assert "hostile: kill(-1, SIGKILL) failed: [Errno 3] No such process" in log, log
    attacker_faults_only(store, "hostile-signals", 2 * pairs)
    nothing_left(referee, run)


# -- daemon ------------------------------------------------------------------------------------------------------
def test_daemon_dies_with_its_sandbox_at_the_end_of_a_run(referee):
    marker = referee.marker
    agent = referee.agent("daemon", HOSTILE_SLEEP_MS="5")
    store, pairs = referee.home / "s.sqlite", 2
    daemons: set[int] = set()
    proc, out, err = referee.start("--agents", f"{agent},greedy", "--pairs", pairs, "--concurrency", 2,
                                   "--store", store, "--logs", referee.home / "logs", *TC)  # fmt: skip
    tree = Tree(proc.pid)
    deadline = time.monotonic() + 90
    while proc.poll() is None and time.monotonic() < deadline:
        tree.scan()
        daemons.update(with_marker(marker, role="daemon"))
        time.sleep(0.05)
    proc.wait(timeout=5)
    err.seek(0)
    run = Run(proc.returncode, "", err.read(), tree)
    ok(run)
    assert daemons, "the daemon was never seen alive"
    for log in logs_of(referee.home / "logs", "hostile-daemon"):
        assert lines(log, "daemon started"), log
    attacker_faults_only(store, "hostile-daemon", 2 * pairs)
    assert with_marker(marker) == []  # at once: the referee's exit waited for every sandbox to die
    nothing_left(referee, run)


def test_daemon_dies_when_the_referee_is_killed_and_resume_completes(referee):
    marker = referee.marker
    agent = referee.agent("daemon", HOSTILE_SLEEP_MS="20")
    store, pairs = referee.home / "s.sqlite", 4
    args = ("--agents", f"{agent},greedy", "--pairs", pairs, "--concurrency", 2, "--store", store,
            "--logs", referee.home / "logs", *TC)  # fmt: skip
    proc, _out, err = referee.start(*args)
    tree = Tree(proc.pid)
    deadline = time.monotonic() + 60
    while not with_marker(marker, role="daemon"):
        tree.scan()
        assert proc.poll() is None, "the run ended before its daemon was seen"
        assert time.monotonic() < deadline, "no daemon within 60 s"
        time.sleep(0.02)
    tree.scan()
    sandboxes = [cmd for _pid, cmd in tree.alive() if "bwrap" in cmd]
    assert sandboxes, tree.seen  # the referee's sandboxes, seen alive before the kill
    proc.send_signal(signal.SIGKILL)  # the referee itself: in user mode the launcher exec'd into it
    proc.wait(timeout=5)
    assert proc.returncode == -signal.SIGKILL
    left = gone_within(lambda: referee.leftovers(tree))
    assert left == [], f"processes of the run outlived the referee by 10 s: {left}"
    stored = len(rows(store))
    assert stored < 2 * pairs, "the run was over before the kill"
    run = referee.run(*args, "--resume")
    ok(run)
    got = attacker_faults_only(store, "hostile-daemon", 2 * pairs)
    assert len({r["id"] for r in got}) == 2 * pairs
    nothing_left(referee, run)


# -- fill --------------------------------------------------------------------------------------------------------
def _host_files(marker: str) -> list[str]:
    """Files named after ``marker`` anywhere under the host's /tmp and /dev/shm."""
    out = []
    for top in ("/tmp", "/dev/shm"):
        for dirpath, _dirs, files in os.walk(top):
            out.extend(os.path.join(dirpath, f) for f in files if marker in f)
    return out


def _entries(uids: set[int]) -> set[str]:
    """Top-level entries of the host's /tmp and /dev/shm owned by ``uids``."""
    out = set()
    for top in ("/tmp", "/dev/shm"):
        for name in os.listdir(top):
            try:
                if os.lstat(os.path.join(top, name)).st_uid in uids:
                    out.add(os.path.join(top, name))
            except OSError:
                pass
    return out


def test_fill_stops_at_each_cap_and_leaves_nothing_on_the_host(referee):
    cap = 8
    assert cap < min(Limits().disk_mb, Limits().tmp_mb, Limits().shm_mb)  # smaller than the defaults
    marker = referee.marker  # it names the files it writes
    agent = referee.agent("fill")
    store, pairs = referee.home / "s.sqlite", 1
    cfg = referee.home / "fill.toml"
    cfg.write_text(
        f'format = "head-to-head"\nagents = [{json.dumps(str(agent))}, "greedy"]\npairs = {pairs}\n'
        f"concurrency = 2\nstore = {json.dumps(str(store))}\n"
        f"[sandbox]\ndisk_mb = {cap}\ntmp_mb = {cap}\nshm_mb = {cap}\n"
    )
    before = {os.path.join(top, name) for top in ("/tmp", "/dev/shm") for name in os.listdir(top)}
    run = referee.run(cfg, "--logs", referee.home / "logs", *TC)
    ok(run)
    for log in logs_of(referee.home / "logs", "hostile-fill"):
        for where in ("/tmp", "/dev/shm", "/home/agent"):
            m = re.search(rf"^hostile: fill {re.escape(where)}: (\d+) bytes in [\d.]+ s, then (.*)$", log, re.M)
            assert m, (where, log)
            assert m.group(2).startswith("[Errno 28] No space left on device"), m.group(0)
            # Its copy of the agent's folder takes a little of the working directory's cap.
            assert cap * MIB // 2 < int(m.group(1)) <= cap * MIB, m.group(0)
    attacker_faults_only(store, "hostile-fill", 2 * pairs)
    nothing_left(referee, run)
    assert _host_files(marker) == []
    # As root, nothing new of the agents' uids either (as the user, whose files other tests
    # may be making meanwhile, the marker is what tells the run's files).
    new = _entries(referee.agent_uids(run.tree)) - before
    assert new == set(), new
