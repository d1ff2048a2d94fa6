"""Hostile agents against the sandbox: real processes, real limits, no mocks.

Each test plays a hostile agent (tests/agents/hostile) against the bundled random agent
inside a `Sandbox` with small limits and checks that the attack was contained (the
agent's own stderr log says what it tried and what it got), recorded (a forfeit of its
seat, or a normal match when it survives), and cleaned up (no process of its uid left,
its working directory gone). With bubblewrap (`Capabilities.isolated`) every agent has namespaces of its own, as
root and as a normal user; without it, the isolation tests need a uid of its own per
agent, so a referee that runs as root, and are skipped elsewhere (CI runs as root and has
bubblewrap). tests/test_hostile.py runs the attacks in whole tournaments, as root and as
an unprivileged user.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import select
import shutil
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest
import trio

from arena.game import get_variant
from arena.play.duel import duel
from arena.play.referee import MatchRecord
from arena.protocol.codec import TimeControl
from arena.runtime.agents import Manifest, resolve
from arena.runtime.sandbox import ENV_WHITELIST, UID_BASE, UID_SPAN, Limits, Policy, Sandbox, probe

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests" / "agents" / "hostile"
TC = TimeControl(move_ms=300, bank_ms=0, first_move_ms=2000, grace_ms=200)
LIMITS = Limits(memory_mb=256, processes=32, file_mb=8)
MIB = 1 << 20

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux-only")
CAPS = probe()
ISOLATED = CAPS.isolated
own_uid = pytest.mark.skipif(
    not (CAPS.own_uid or ISOLATED), reason=f"no uid or namespaces of its own per agent: {CAPS.own_uid_why}"
)
netns = pytest.mark.skipif(CAPS.network is None, reason=f"no network namespace: {CAPS.network_why}")


# -- helpers ----------------------------------------------------------------------------------------------------
def hostile(behaviour: str, **env: str) -> Manifest:
    """The hostile agent of that behaviour, its manifest's [env] updated with ``env``."""
    m = resolve(str(HOSTILE / f"{behaviour}.toml"))
    assert m.name == f"hostile-{behaviour}"
    return dataclasses.replace(m, env=tuple(sorted({**dict(m.env), **env}.items())))


@dataclasses.dataclass
class Played:
    record: MatchRecord
    logs: list[str]  # each seat's stderr log
    uids: list[int | None]  # the uid each seat ran as
    pids: list[int]
    cwds: list[Path]  # each seat's working directory (on the host; "/" with namespaces)
    root: Path | None  # the sandbox's root folder (None with namespaces: nothing on the host)
    inner: list[int | None]  # with namespaces: each seat's sandbox init and agent pids


def play(
    manifests: list[Manifest],
    logs: Path,
    *,
    sandbox: Sandbox | None = None,
    seed: int = 1,
    on_event=None,
    on_start=None,
) -> Played:
    """One match in ``sandbox`` (default: a new one with `LIMITS`), logs in ``logs``."""
    started: dict[int, object] = {}

    def note(seat: int, proc) -> None:
        started[seat] = proc
        if on_start is not None:
            on_start(seat, proc)

    def run(sb: Sandbox) -> MatchRecord:
        return trio.run(
            lambda: duel(manifests, seed, get_variant("sixty-six"), TC, logs=logs, sandbox=sb, on_start=note,
                         on_event=on_event)
        )  # fmt: skip

    if sandbox is None:
        with Sandbox(Policy(limits=LIMITS)) as sb:
            rec, root = run(sb), sb.root
        assert root is None or not root.exists(), "the sandbox root outlived its run"
    else:
        rec, root = run(sandbox), sandbox.root
    texts = []
    for seat, m in enumerate(manifests):
        path = logs / f"match-{seed}-seat{seat}-{m.name}.log"
        texts.append(path.read_text(errors="replace") if path.exists() else "")
    seats = sorted(started)
    return Played(
        record=rec,
        logs=texts,
        uids=[started[s].launch.uid for s in seats],
        pids=[started[s].pid for s in seats],
        cwds=[Path(started[s].launch.cwd) for s in seats],
        root=root,
        inner=[pid for s in seats for pid in (started[s]._init_pid, started[s].agent_pid)],
    )


def _state(pid: str) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def alive_of_uids(uids) -> list[tuple[int, int]]:
    """(pid, uid) of every live (not zombie) process whose uid is in ``uids``."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                uid = os.stat(f"/proc/{entry}").st_uid
            except OSError:
                continue
            if uid in uids and _state(entry) not in (None, "Z"):
                out.append((int(entry), uid))
    return out


def alive_in_group(pgid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                out.append(int(entry))
    return out


def assert_nothing_left(p: Played) -> None:
    """No process of the match's uids, or of its process groups, is alive; its working
    directories are gone."""
    uids = {u for u in p.uids if u is not None}
    assert all(UID_BASE <= u < UID_BASE + UID_SPAN for u in uids) or not CAPS.own_uid, p.uids
    assert alive_of_uids(uids) == []
    for pid in p.pids:
        assert alive_in_group(pid) == []
    if ISOLATED:
        assert None not in p.inner, p.inner  # the referee found each sandbox's init and agent
        assert [pid for pid in p.inner if _state(str(pid)) not in (None, "Z")] == []
        return
    for cwd in p.cwds:
        assert not cwd.exists(), f"{cwd} outlived its process"


def descendants(pid: int) -> list[int]:
    """Every live descendant of a process (children lists of /proc, recursively)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for task in os.listdir(f"/proc/{p}/task") if os.path.isdir(f"/proc/{p}/task") else []:
            try:
                kids = [int(x) for x in Path(f"/proc/{p}/task/{task}/children").read_text().split()]
            except (OSError, ValueError):
                continue
            for k in kids:
                if _state(str(k)) not in (None, "Z"):
                    out.append(k)
                    todo.append(k)
    return out


def denied(log: str, path: Path | str) -> bool:
    """Whether the hostile agent's log says it could not read ``path``: permission denied,
    or with namespaces also absent from its file tree."""
    errors = ["[Errno 13] Permission denied", *(["[Errno 2] No such file or directory"] if ISOLATED else [])]
    return any(f"hostile: denied {path}: {e}" in log for e in errors)


def hostile_line(log: str, what: str) -> str:
    """The hostile agent's ``hostile: WHAT...`` line in its log."""
    lines = [x for x in log.splitlines() if x.startswith(f"hostile: {what}")]
    assert lines, f"no 'hostile: {what}' line in the log:\n{log}"
    return lines[0]


@pytest.fixture
def world_dirs():
    """Make folders under the system's temp dir (which any user may traverse, unlike
    tmp_path) and remove them after."""
    made: list[Path] = []

    def make(mode: int) -> Path:
        d = Path(tempfile.mkdtemp(prefix="arena-test-"))
        os.chmod(d, mode)
        made.append(d)
        return d

    yield make
    for d in made:
        shutil.rmtree(d, ignore_errors=True)


# -- resource limits --------------------------------------------------------------------------------------------
def test_memory_bomb_crashes_at_the_limit_and_forfeits(tmp_path):
    p = play([hostile("memory"), resolve("random")], tmp_path)
    f = p.record.forfeit
    assert f is not None and f.seat == 0 and f.code == "crash", p.record.forfeit
    assert "exited with status 1" in f.detail and "MemoryError" in f.detail, f.detail
    got = int(re.search(r"MemoryError after (\d+) MiB", hostile_line(p.logs[0], "MemoryError")).group(1))
    assert got < LIMITS.memory_mb
    assert p.record.winner == 1 and p.record.score[1] > p.record.score[0]
    json.dumps(p.record.to_dict())  # a complete, storable record
    assert_nothing_left(p)


def test_memory_bomb_in_a_tournament_forfeits_each_match_and_the_run_is_stored(tmp_path):
    store = tmp_path / "t.sqlite"
    cfg = tmp_path / "t.toml"
    cfg.write_text(
        f"""
format = "head-to-head"
agents = ["random", "{HOSTILE / "memory.toml"}"]
pairs = 1
seed = 5
concurrency = 2
store = "{store}"
[time_control]
move_ms = {TC.move_ms}
bank_ms = {TC.bank_ms}
first_move_ms = {TC.first_move_ms}
grace_ms = {TC.grace_ms}
[sandbox]
memory_mb = {LIMITS.memory_mb}
processes = {LIMITS.processes}
file_mb = {LIMITS.file_mb}
"""
    )
    r = subprocess.run(
        [sys.executable, "-m", "arena", "tournament", str(cfg), "--quiet", "--no-report", "--logs", str(tmp_path)],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    assert "Traceback" not in r.stderr
    if ISOLATED:
        assert "going on without" not in r.stderr, r.stderr
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT seat0, seat1, forfeit_seat, fault, fault_detail, winner FROM matches").fetchall()
    finally:
        con.close()
    assert len(rows) == 2
    for seat0, seat1, forfeit_seat, fault, detail, winner in rows:
        bad = [seat0, seat1].index("hostile-memory")
        assert (forfeit_seat, fault, winner) == (bad, "crash", 1 - bad), (seat0, seat1, forfeit_seat, fault, detail)
        assert "MemoryError" in detail


@own_uid
def test_fork_bomb_stops_at_the_process_limit_and_every_child_is_killed(tmp_path):
    peak = [0]
    seat0 = []

    def count() -> int:  # the agent and its children: in its sandbox, or of its uid
        agent = seat0[0]
        if ISOLATED:
            return len(descendants(agent._init_pid))
        return len(alive_of_uids({agent.launch.uid}))

    def on_event(kind, data):  # after each of its moves: how many processes it has
        if kind == "action" and data["seat"] == 0 and seat0:
            peak[0] = max(peak[0], count())

    p = play(
        [hostile("fork"), resolve("random")],
        tmp_path,
        on_event=on_event,
        on_start=lambda seat, proc: seat0.append(proc) if seat == 0 else None,
    )
    line = hostile_line(p.logs[0], "forked")
    n = int(re.search(r"forked (\d+) children, then fork failed", line).group(1))
    assert "Resource temporarily unavailable" in line, line
    # The agent is one of its uid's processes (and with namespaces, so is the sandbox's init).
    assert 1 <= n <= LIMITS.processes - (2 if ISOLATED else 1)
    assert peak[0] == n + 1, (peak[0], n)  # the children really lived, outside its process group
    assert p.record.forfeit is None, p.record.forfeit  # it survived and kept playing
    assert p.record.winner in (0, 1)
    assert_nothing_left(p)


def test_big_file_stops_at_the_file_size_limit_and_is_removed(tmp_path):
    limit = LIMITS.file_mb * MIB
    biggest = [0]
    p_root: list[Path] = []

    def on_event(kind, data):  # while the match goes on: the largest file in the sandbox
        if kind == "action" and data["seat"] == 0:
            for d, _, files in os.walk(p_root[0]):
                for name in files:
                    try:
                        biggest[0] = max(biggest[0], os.path.getsize(os.path.join(d, name)))
                    except OSError:
                        pass

    with Sandbox(Policy(limits=LIMITS)) as sb:
        p_root.append(sb.root or "/nonexistent")  # with namespaces the file is in the sandbox's tmpfs
        p = play([hostile("bigfile"), resolve("random")], tmp_path, sandbox=sb, on_event=on_event)
        left = [os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(p_root[0]) for f in fs]
        assert all(size <= limit for size in left)
    assert p.root is None or not p.root.exists()
    f = p.record.forfeit
    if f is not None:  # a program that does not ignore SIGXFSZ dies of it
        assert f.seat == 0 and f.code == "crash" and "SIGXFSZ" in f.detail, f
    else:  # Python ignores SIGXFSZ, so its write fails with EFBIG at the limit and it plays on
        line = hostile_line(p.logs[0], "write stopped")
        m = re.search(r"write stopped after (\d+) bytes: \[Errno 27\] File too large; file size (\d+)", line)
        assert m, line
        assert int(m.group(1)) == int(m.group(2)) == limit
        assert ISOLATED or 0 < biggest[0] <= limit
    assert_nothing_left(p)


def test_cpu_spin_times_out_and_is_killed(tmp_path):
    p = play([resolve("random"), hostile("spin")], tmp_path)
    f = p.record.forfeit
    assert f is not None and f.seat == 1 and f.code == "timeout", f
    assert f"within {TC.first_move_ms + TC.grace_ms} ms" in f.detail, f.detail
    hostile_line(p.logs[1], "spinning")
    assert p.record.winner == 0
    assert_nothing_left(p)


# -- isolation --------------------------------------------------------------------------------------------------
@netns
def test_network_is_unreachable_even_on_loopback(tmp_path):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        port = listener.getsockname()[1]
        p = play([hostile("network", HOSTILE_PORT=str(port)), resolve("random")], tmp_path)
        line = hostile_line(p.logs[0], "connect")
        assert line.startswith("hostile: connect failed:"), line
        # its own namespace: no interface up, or (bubblewrap) a loopback of its own with no listener
        assert "Network is unreachable" in line or (ISOLATED and "Connection refused" in line), line
        readable, _, _ = select.select([listener], [], [], 0.3)
        assert readable == [], "the agent's connection reached the listener"
        with pytest.raises(BlockingIOError):
            listener.accept()
        # The listener works: a connection from outside the sandbox does reach it.
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            readable, _, _ = select.select([listener], [], [], 2.0)
            assert readable == [listener]
    finally:
        listener.close()
    assert p.record.forfeit is None, p.record.forfeit
    assert_nothing_left(p)


@own_uid
def test_agent_cannot_read_private_files_nor_another_agents_copy(tmp_path, world_dirs):
    secret = f"ladder-secret-{uuid.uuid4().hex}"
    ladder = world_dirs(0o700)  # like the ladder's folder: root's, 0700, files 0600
    (ladder / "ladder.sqlite").write_text(secret)
    os.chmod(ladder / "ladder.sqlite", 0o600)
    shared = world_dirs(0o755)  # a folder anyone may enter, holding a file private to root
    (shared / "store.sqlite").write_text(secret)
    os.chmod(shared / "store.sqlite", 0o600)
    with Sandbox(Policy(limits=LIMITS)) as sb:
        # the other seat's files: its working copy on the host, or with namespaces its folder
        other = resolve("random").folder if ISOLATED else sb.root / "0-random"
        protected = [
            ladder / "ladder.sqlite",
            ladder,
            shared / "store.sqlite",
            other,
            other / "agent.py",
            other / "agent.toml",
            *([Path("/etc/shadow"), ROOT / "README.md"] if ISOLATED else [sb.root]),
        ]
        paths = os.pathsep.join([*map(str, protected), "hostile.py"])
        p = play([resolve("random"), hostile("read", HOSTILE_PATHS=paths)], tmp_path, sandbox=sb)
        assert ISOLATED or p.cwds[0] == other  # the path the agent was given was the other seat's copy
    log = p.logs[1]
    assert "hostile: read OK hostile.py" in log, log  # it can read: its own copy
    for path in protected:
        assert denied(log, path), (path, log)
        assert f"read OK {path}" not in log and f"listed {path}" not in log, log
    assert secret not in log
    assert "RandomStrategy" not in log  # a line of the other agent's code
    assert p.record.forfeit is None, p.record.forfeit
    assert_nothing_left(p)


@own_uid
def test_agents_cannot_read_each_others_stderr_logs(world_dirs):
    logs = world_dirs(0o755)  # only the logs' own mode protects them
    markers = [f"marker-{seat}-{uuid.uuid4().hex}" for seat in (0, 1)]
    names = [logs / f"match-1-seat{seat}-hostile-stderr-peek.log" for seat in (0, 1)]
    seats = [
        hostile("stderr-peek", HOSTILE_PATHS=str(names[1 - s]), HOSTILE_LOGS=str(logs), HOSTILE_MARKER=markers[s])
        for s in (0, 1)
    ]
    p = play(seats, logs)
    for s in (0, 1):
        log, other = p.logs[s], names[1 - s]
        assert f"hostile: marker {markers[s]}" in log, log
        assert stat.S_IMODE(os.stat(names[s]).st_mode) == 0o600
        assert denied(log, other), log
        assert "hostile: glob" in log and f"read OK {other}" not in log, log
        assert markers[1 - s] not in log, log
    assert p.record.forfeit is None, p.record.forfeit
    assert_nothing_left(p)


def test_agent_sees_only_whitelisted_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_SECRET_TEST", "hunter2-env-secret")
    monkeypatch.setenv("PYTHONPATH", "/nowhere-secret")
    with Sandbox(Policy(limits=LIMITS)) as sb:
        p = play([hostile("env", HOSTILE_EXTRA="from-the-manifest"), resolve("random")], tmp_path, sandbox=sb)
        root = sb.root
    log = p.logs[0]
    seen = json.loads(hostile_line(log, "env ").removeprefix("hostile: env "))
    env = seen["environ"]
    assert "ARENA_SECRET_TEST" not in env and "hunter2-env-secret" not in log
    assert "PYTHONPATH" not in env
    allowed = {*ENV_WHITELIST, "HOME", "TMPDIR", "PYTHONDONTWRITEBYTECODE", "HOSTILE_EXTRA"}
    assert set(env) <= allowed, set(env) - allowed
    assert env["HOSTILE_EXTRA"] == "from-the-manifest"  # the manifest's [env] does get through
    if ISOLATED:  # its working copy and /tmp inside its own mount namespace
        assert env["HOME"] == seen["cwd"] == "/home/agent" and env["TMPDIR"] == "/tmp", seen
    else:
        assert env["HOME"] == seen["cwd"] == str(p.cwds[0])
        assert Path(seen["cwd"]).parent == root
        assert env["TMPDIR"] == str(Path(seen["cwd"]) / ".tmp")
    if CAPS.own_uid:
        assert seen["uid"] == p.uids[0] and UID_BASE <= seen["uid"] < UID_BASE + UID_SPAN
    assert p.record.forfeit is None, p.record.forfeit
    assert_nothing_left(p)


@own_uid
def test_agent_cannot_read_the_tournament_store(tmp_path, world_dirs):
    out = world_dirs(0o755)  # like reports/ in a checkout: a folder anyone may enter
    store = out / "t.sqlite"
    paths = os.pathsep.join(str(p) for p in (store, f"{store}-wal", out / "logs"))
    folder = tmp_path / "agent"
    folder.mkdir()
    shutil.copy2(HOSTILE / "hostile.py", folder)
    (folder / "read.toml").write_text(
        (HOSTILE / "read.toml").read_text().split("[env]")[0] + f"[env]\nHOSTILE_PATHS = {json.dumps(paths)}\n"
    )
    r = subprocess.run(
        [sys.executable, "-m", "arena", "tournament", "--agents", f"random,{folder / 'read.toml'}", "--pairs", "1",
         "--seed", "2", "--store", str(store), "--logs", str(out / "logs"), "--quiet", "--no-report",
         "--first-move-ms", "2000", "--move-ms", "300", "--bank-ms", "0"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    logs = [p.read_text() for p in sorted((out / "logs").glob("hostile-read-*.log"))]
    assert logs and all(denied(log, out / "logs") for log in logs)  # the logs' folder is private
    for log in logs:
        assert "hostile: read OK" not in log and "SQLite format 3" not in log, log


def test_agent_starts_with_default_signal_dispositions(tmp_path):
    # A shell reports the dispositions it inherited from the launcher, then becomes the agent.
    m = dataclasses.replace(
        hostile("env"),
        command=("/bin/sh", "-c", 'grep SigIgn /proc/self/status >&2; exec "$0" hostile.py env', "{python}"),
    )
    p = play([m, resolve("random")], tmp_path)
    assert p.record.forfeit is None, p.record.forfeit
    ignored = int(re.search(r"^SigIgn:\s*([0-9a-f]+)$", p.logs[0], re.M).group(1), 16)
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        assert not ignored & (1 << (sig - 1)), f"the agent starts with {sig.name} ignored"


# -- arena sandbox-info -----------------------------------------------------------------------------------------
def test_sandbox_info_lists_every_mechanism_on(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[sandbox]\nmemory_mb = 256\nprocesses = 32\n")
    r = subprocess.run(
        [sys.executable, "-m", "arena", "sandbox-info", str(cfg)], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert r.returncode == 0, r.stderr
    state = {}
    for line in r.stdout.splitlines()[1:]:
        m = re.match(r"^  (on |OFF)  (\S+(?: \S+)*)\s{2,}(.*)$", line)
        if m:
            state[m.group(2)] = (m.group(1).strip(), m.group(3))
    expected = {"namespaces", "working directory", "environment", "memory", "CPU time", "file size", "disk space",
                "processes", "network", "file isolation", "process isolation", "signals", "no new privileges",
                "cleanup"}  # fmt: skip
    assert set(state) == expected, r.stdout
    assert state["memory"] == ("on", "RLIMIT_DATA 256 MiB")
    for always in ("working directory", "environment", "memory", "CPU time", "file size", "no new privileges"):
        assert state[always][0] == "on", r.stdout
    if not ISOLATED:
        assert state["namespaces"][0] == "OFF" and "missing:" in r.stdout
        pytest.skip(f"no namespaces here: {CAPS.bwrap_why}")
    assert all(on == "on" for on, _ in state.values()), r.stdout
    assert state["processes"][1] == "RLIMIT_NPROC 32, counted in its own user namespace"
    assert "missing:" not in r.stdout



def test_where_bubblewrap_itself_works_the_arena_sandbox_works_too():
    # a sandbox that quietly falls back would skip every namespace test: where bwrap can
    # make its namespaces at all, the arena's own command line must work (whatever the
    # checkout's path: a clone under /tmp once hid its interpreter under the private /tmp)
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        pytest.skip("bubblewrap is not installed")
    plain = subprocess.run([bwrap, "--unshare-all", "--ro-bind", "/", "/", "true"], capture_output=True, timeout=30)
    if plain.returncode != 0:
        pytest.skip(f"bubblewrap cannot make namespaces here: {plain.stderr.decode().strip()}")
    assert ISOLATED, CAPS.bwrap_why

# -- the CPU-time limit over a process's life ---------------------------------------------------------------------
def test_a_process_near_its_cpu_limit_is_replaced_between_matches(tmp_path):
    # "burn" uses 0.3 s of CPU at each match start; with a 3 s limit a process is replaced
    # once it has been charged 2.4 s, between two matches, so no match is lost to the
    # kernel's SIGKILL at the limit. The charge is the kernel's own count (on a loaded
    # host it runs ahead of the real CPU time by a third or more, and a recycler that read
    # the real time lost a match to SIGKILL); 0.6 s of margin holds a 0.3 s match counted
    # twice over. The deadlines are loose: a loaded host must not turn the burn into a timeout.
    from arena.results.store import Store
    from arena.tournament.runner import run_tournament
    from arena.tournament.schedule import load_config

    burn = str(ROOT / "tests" / "agents" / "broken" / "burn.toml")
    cfg = load_config(
        None,
        {"format": "head-to-head", "agents": [burn, "random"], "pairs": 6, "seed": 3, "concurrency": 1,
         "store": str(tmp_path / "s.sqlite")},
        {"move_ms": 5000, "first_move_ms": 20000, "bank_ms": 0},
    )  # fmt: skip
    logs = tmp_path / "logs"
    logs.mkdir()
    with Store(cfg.store) as store, Sandbox(Policy(limits=dataclasses.replace(LIMITS, cpu_s=3))) as sb:
        store.bind_config(cfg.identity(), cfg.config_hash)
        played = trio.run(lambda: run_tournament(cfg, cfg.schedule(), store, store.start_run("t", None, []),
                                                 logs=logs, sandbox=sb))  # fmt: skip
        rows = store.matches()
    assert played == 12 and all(r["fault"] is None for r in rows), [r["fault_detail"] for r in rows]
    assert len(list(logs.glob("burn-*.log"))) >= 2  # the first process was replaced


def test_the_cpu_charge_read_for_recycling_is_the_one_the_kernel_kills_at():
    # A process under a 1 s RLIMIT_CPU burns until the kernel kills it; read as the pool
    # reads it (before it is reaped), its charge is at the limit. Its real CPU time, which
    # /proc/<pid>/stat gives, is often below (0.87 s here under load): a recycler at 80%
    # of that count can be too late.
    from arena.runtime.process import cpu_charged_s

    code = "import resource\nresource.setrlimit(resource.RLIMIT_CPU, (1, 1))\nwhile True: pass\n"
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        died = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # a zombie: its clocks still read
        charged = cpu_charged_s(proc.pid)
    finally:
        proc.kill()
        proc.wait()
    assert (died.si_code, died.si_status) == (os.CLD_KILLED, signal.SIGKILL)
    assert charged is not None and 1.0 <= charged < 1.1, charged


@own_uid
def test_agent_cannot_see_other_processes_nor_the_referees_command_line(tmp_path):
    if not (CAPS.hide_processes or ISOLATED):
        pytest.skip("no /proc of its own here")
    me = os.getpid()  # the referee: a tournament's command line may carry --seed
    paths = os.pathsep.join([f"/proc/{me}/cmdline", f"/proc/{me}/environ", "/proc/1/cmdline"])
    p = play([hostile("read", HOSTILE_PATHS=paths), resolve("random")], tmp_path)
    assert p.record.forfeit is None, p.record.forfeit
    log = p.logs[0]
    if ISOLATED:  # a PID namespace: the referee has no pid there, and pid 1 is the sandbox's own init
        assert denied(log, f"/proc/{me}/cmdline") and denied(log, f"/proc/{me}/environ"), log
        assert "read OK /proc/1/cmdline" not in log or "jail.py" in hostile_line(log, "read OK /proc/1/cmdline")
    else:
        assert "read OK" not in log and log.count("hostile: denied /proc/") == 3, log
    assert Path(f"/proc/{me}/cmdline").read_bytes()  # the test itself can read it: the check can fail


@own_uid
def test_agent_cannot_read_the_tournament_config_with_its_seed(tmp_path, world_dirs):
    if not (CAPS.hide_processes or ISOLATED):
        pytest.skip("no mount namespace of its own here")
    out = world_dirs(0o755)
    cfg = out / "t.toml"
    folder = tmp_path / "agent"
    folder.mkdir()
    shutil.copy2(HOSTILE / "hostile.py", folder)
    (folder / "read.toml").write_text(
        (HOSTILE / "read.toml").read_text().split("[env]")[0] + f"[env]\nHOSTILE_PATHS = {json.dumps(str(cfg))}\n"
    )
    cfg.write_text(
        f'agents = ["random", {json.dumps(str(folder / "read.toml"))}]\npairs = 1\nseed = 987654321\n'
        f"store = {json.dumps(str(out / 't.sqlite'))}\n[time_control]\nmove_ms = 300\nfirst_move_ms = 2000\n"
    )
    os.chmod(cfg, 0o644)  # readable by anyone, as a user's config usually is
    r = subprocess.run(
        [sys.executable, "-m", "arena", "tournament", str(cfg), "--logs", str(out / "logs"), "--quiet", "--no-report"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    logs = [p.read_text() for p in (out / "logs").glob("hostile-read-*.log")]
    # it saw an empty file, or with namespaces no file at all
    assert logs and all(f"read OK {cfg} 0 bytes" in log or (ISOLATED and denied(log, cfg)) for log in logs), logs
    assert not any("987654321" in log for log in logs)
    assert "987654321" in cfg.read_text()  # the file itself is untouched


# -- without namespaces: said once, and ladders refuse untrusted code ------------------------------------------------
def arena_cli(*argv: str, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena", *argv], capture_output=True, text=True, timeout=120, cwd=cwd,
        env={**os.environ, **env},
    )  # fmt: skip


def test_without_bubblewrap_a_run_says_so_in_one_line_and_plays(tmp_path):
    r = arena_cli("match", "greedy", "random", "--seed", "3", ARENA_BWRAP=str(tmp_path / "no-bwrap"))
    assert r.returncode == 0, r.stderr
    lines = [x for x in r.stderr.splitlines() if "going on without" in x]
    assert len(lines) == 1 and "namespaces" in lines[0] and "no-bwrap is not a program" in lines[0], r.stderr
    assert "result:" in r.stdout
    info = arena_cli("sandbox-info", ARENA_BWRAP=str(tmp_path / "no-bwrap"))
    assert re.search(r"^  OFF  namespaces ", info.stdout, re.M) and "missing:" in info.stdout, info.stdout


def test_a_ladder_refuses_submitted_code_where_agents_cannot_be_isolated(tmp_path):
    off = {"ARENA_BWRAP": str(tmp_path / "no-bwrap")}
    assert arena_cli("ladder", "init", "lad", "--move-ms", "200", cwd=tmp_path, **off).returncode == 0
    for argv in (("submit", "greedy", "--ladder", "lad"), ("ladder", "run", "--ladder", "lad", "--matches", "2")):
        r = arena_cli(*argv, cwd=tmp_path, **off)
        assert r.returncode == 2, (argv, r.stdout, r.stderr)
        assert r.stderr.strip().splitlines() == [
            "arena: error: ladder 'lad' runs submitted code, but agents cannot be isolated here: "
            f"ARENA_BWRAP={off['ARENA_BWRAP']} is not a program; pass --unsafe-sandbox to run it anyway"
        ], r.stderr
    # the organiser's explicit choice: it runs, and says what is missing
    for name in ("greedy", "random"):
        r = arena_cli("submit", name, "--ladder", "lad", "--unsafe-sandbox", cwd=tmp_path, **off)
        assert r.returncode == 0, r.stderr
    r = arena_cli("ladder", "run", "--ladder", "lad", "--matches", "2", "--unsafe-sandbox", "--quiet", cwd=tmp_path,
                  **off)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "going on without namespaces" in r.stderr
    if ISOLATED:  # and where bubblewrap works, no flag is needed
        assert arena_cli("ladder", "run", "--ladder", "lad", "--matches", "2", "--quiet", cwd=tmp_path).returncode == 0


def test_a_live_runs_folder_is_not_swept_by_a_run_in_another_pid_namespace(tmp_path):
    # Without namespaces the agents' working copies live in a root folder named after the
    # run's pid; every run removes the folders of dead runs. A run in another PID namespace
    # (a container sharing /tmp, say) does not see that pid: it must still leave a live
    # run's folder alone (it once removed it, and the live run's agents could not start:
    # "can't open file '.../0-random/agent.py'"), and a dead run's folder is still removed.
    bwrap = shutil.which("bwrap")
    if bwrap is None or subprocess.run([bwrap, "--unshare-pid", "--dev-bind", "/", "/", "true"],
                                       capture_output=True, timeout=30).returncode != 0:  # fmt: skip
        pytest.skip("no bubblewrap that makes a PID namespace here")
    off = {**os.environ, "ARENA_BWRAP": str(tmp_path / "no-bwrap")}  # the path with a root folder
    hold = ("import sys\nfrom arena.runtime.sandbox import Sandbox\nwith Sandbox(warn=lambda s: None) as sb:\n"
            "    (sb.root / '0-random').mkdir()\n    print(sb.root, flush=True)\n    sys.stdin.read()\n")  # fmt: skip
    sweep = ("import os, sys\nfrom arena.runtime.sandbox import Sandbox\nwith Sandbox(warn=lambda s: None):\n"
             "    print(os.path.exists(f'/proc/{sys.argv[1]}'))\n")  # fmt: skip
    live = subprocess.Popen([sys.executable, "-c", hold], cwd=ROOT, env=off, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        root = Path(live.stdout.readline().strip())
        assert root.name.startswith(f"arena-sandbox-{live.pid}-") and (root / "0-random").is_dir(), root
        other = subprocess.run(
            [bwrap, "--unshare-pid", "--dev-bind", "/", "/", "--proc", "/proc", "--", sys.executable, "-c", sweep,
             str(live.pid)], cwd=ROOT, env=off, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert other.returncode == 0, other.stderr
        assert other.stdout.strip() == "False"  # there, the live run's pid is not a process
        assert (root / "0-random").is_dir(), "another run removed a live run's folder"
    finally:
        live.kill()  # dies without cleaning up: its folder is now stale
        live.wait()
    assert root.exists()
    again = subprocess.run([sys.executable, "-c", sweep, str(live.pid)], cwd=ROOT, env=off, capture_output=True,
                           text=True, timeout=120)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert not root.exists(), "a dead run's folder was left behind"


def test_sandbox_uids_are_unique_across_referees_and_lapse_with_them(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("uids of their own are given by a root referee only")
    from arena.runtime.sandbox import allocate_uid

    # Another referee holds 300 uids (in another process); ours never draws one of them.
    code = (
        "import sys, time; from arena.runtime.sandbox import allocate_uid\n"
        "held = [allocate_uid() for _ in range(300)]\n"
        "print(' '.join(str(u) for u, _ in held), flush=True); time.sleep(60)\n"
    )
    other = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        theirs = {int(x) for x in other.stdout.readline().split()}
        assert len(theirs) == 300
        ours = [allocate_uid() for _ in range(300)]
        assert len({u for u, _ in ours}) == 300 and not theirs & {u for u, _ in ours}
        # While held, a uid cannot be claimed: its lock is taken.
        import fcntl

        uid, fd = ours[0]
        lock = Path("/run/arena-uids" if os.access("/run", os.W_OK) else Path(tempfile.gettempdir(), ".arena-uids"))
        probe_fd = os.open(lock / str(uid), os.O_RDWR)
        with pytest.raises(BlockingIOError):
            fcntl.flock(probe_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.close(fd)  # released: now it can
        fcntl.flock(probe_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.close(probe_fd)
        for _, f in ours[1:]:
            os.close(f)
    finally:
        other.kill()
        other.wait()
    # The other referee is gone (killed): its claims lapsed with it.
    fd = os.open(lock / str(next(iter(theirs))), os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.close(fd)


# -- cleanup never reaches outside its own folders ---------------------------------------------------------------
REMOVE = (
    "import sys, pathlib; from arena.runtime.sandbox import _remove; [_remove(pathlib.Path(p)) for p in sys.argv[1:]]"
)


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """A scratch TMPDIR like /tmp (mode 1777) for the sandbox's folders."""
    d = tmp_path / "tmp"
    d.mkdir()
    os.chmod(d, 0o1777)
    monkeypatch.setenv("TMPDIR", str(d))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    assert tempfile.gettempdir() == str(d)
    return d


def test_removing_a_folder_that_is_already_gone_leaves_its_parent_alone(scratch):
    from arena.runtime.sandbox import _remove

    before = os.stat(scratch)
    gone = Path(tempfile.mkdtemp(prefix="arena-sb-"))
    os.rmdir(gone)
    _remove(gone)  # no error: already removed
    _remove(gone / "deeper")
    after = os.stat(scratch)
    assert oct(stat.S_IMODE(after.st_mode)) == oct(stat.S_IMODE(before.st_mode)) == oct(0o1777)
    assert (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)


def test_removing_read_only_and_unreadable_folders_chmods_only_inside_the_tree(scratch):
    """A tree as a hostile agent may leave it: a read-only folder, an unreadable one inside
    it, and symlinks to its parent and to a folder outside. It is removed whole; neither
    the parent (1777) nor a symlink's target changes mode. As root permissions do not
    stop the removal, so the removal then runs as an unprivileged user, owner of the
    scratch folder (so a stray chmod of it would succeed and show)."""
    from asuser import as_user, can_switch, give, user_env

    outside = scratch / "outside"
    outside.mkdir()
    (outside / "keep").write_text("keep")
    os.chmod(outside, 0o755)
    tree = Path(tempfile.mkdtemp(prefix="arena-sb-"))
    (tree / "ro" / "locked" / "deep").mkdir(parents=True)
    (tree / "ro" / "f").write_text("x")
    (tree / "ro" / "locked" / "g").write_text("y")
    (tree / "link-out").symlink_to(outside)
    (tree / "ro" / "link-parent").symlink_to(scratch)
    command = [sys.executable, "-c", REMOVE, str(tree)]
    if os.geteuid() == 0:
        if not can_switch():
            pytest.skip("running as root without useradd: permissions would not stop the removal")
        give(scratch)
        command = as_user(command, extra=[scratch])
    os.chmod(tree / "ro" / "locked", 0o000)
    os.chmod(tree / "ro", 0o500)
    os.chmod(tree, 0o500)
    before = {p: os.stat(p) for p in (scratch, outside)}
    env = user_env(scratch) if os.geteuid() == 0 else dict(os.environ)
    p = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert not os.path.lexists(tree), sorted(os.listdir(tree))
    for path, st in before.items():
        now = os.stat(path)
        assert (stat.S_IMODE(now.st_mode), now.st_uid) == (stat.S_IMODE(st.st_mode), st.st_uid), path
    assert stat.S_IMODE(os.stat(scratch).st_mode) == 0o1777
    assert (outside / "keep").read_text() == "keep"
