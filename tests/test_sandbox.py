"""Hostile agents against the sandbox: real processes, real limits, no mocks.

Each test plays a hostile agent (tests/agents/hostile) against the bundled random agent
inside a `Sandbox` with small limits and checks that the attack was contained (the
agent's own stderr log says what it tried and what it got), recorded (a forfeit of its
seat, or a normal match when it survives), and cleaned up (no process of its uid left,
its working directory gone). The isolation tests need a uid of its own per agent, so a
referee that runs as root; they are skipped elsewhere (CI runs as root).
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

from arena.agents import Manifest, resolve
from arena.duel import duel
from arena.game import get_variant
from arena.protocol import TimeControl
from arena.referee import MatchRecord
from arena.sandbox import ENV_WHITELIST, UID_BASE, UID_SPAN, Limits, Policy, Sandbox, probe

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests" / "agents" / "hostile"
TC = TimeControl(move_ms=300, bank_ms=0, first_move_ms=2000, grace_ms=200)
LIMITS = Limits(memory_mb=256, processes=32, file_mb=8)
MIB = 1 << 20

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux-only")
CAPS = probe()
own_uid = pytest.mark.skipif(not CAPS.own_uid, reason=f"no uid of its own per agent: {CAPS.own_uid_why}")
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
    cwds: list[Path]  # each seat's working directory
    root: Path  # the sandbox's root folder


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
        assert not root.exists(), "the sandbox root outlived its run"
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
    for cwd in p.cwds:
        assert not cwd.exists(), f"{cwd} outlived its process"


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
    if CAPS.own_uid and CAPS.network:
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
    uid: list[int] = []

    def on_event(kind, data):  # after each of its moves: how many processes its uid has
        if kind == "action" and data["seat"] == 0 and uid:
            peak[0] = max(peak[0], len(alive_of_uids(set(uid))))

    p = play(
        [hostile("fork"), resolve("random")],
        tmp_path,
        on_event=on_event,
        on_start=lambda seat, proc: uid.append(proc.launch.uid) if seat == 0 else None,
    )
    line = hostile_line(p.logs[0], "forked")
    n = int(re.search(r"forked (\d+) children, then fork failed", line).group(1))
    assert "Resource temporarily unavailable" in line, line
    assert 1 <= n < LIMITS.processes  # the agent itself is one of its uid's processes
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
        p_root.append(sb.root)
        p = play([hostile("bigfile"), resolve("random")], tmp_path, sandbox=sb, on_event=on_event)
        left = [os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(sb.root) for f in fs]
        assert all(size <= limit for size in left)
    assert not p.root.exists()
    f = p.record.forfeit
    if f is not None:  # a program that does not ignore SIGXFSZ dies of it
        assert f.seat == 0 and f.code == "crash" and "SIGXFSZ" in f.detail, f
    else:  # Python ignores SIGXFSZ, so its write fails with EFBIG at the limit and it plays on
        line = hostile_line(p.logs[0], "write stopped")
        m = re.search(r"write stopped after (\d+) bytes: \[Errno 27\] File too large; file size (\d+)", line)
        assert m, line
        assert int(m.group(1)) == int(m.group(2)) == limit
        assert 0 < biggest[0] <= limit
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
        assert "Network is unreachable" in line, line
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
        other = sb.root / "0-random"  # seat 0 is launched first: the sandbox's process 0
        protected = [
            ladder / "ladder.sqlite",
            ladder,
            shared / "store.sqlite",
            other,
            other / "agent.py",
            other / "agent.toml",
            sb.root,
        ]
        paths = os.pathsep.join([*map(str, protected), "hostile.py"])
        p = play([resolve("random"), hostile("read", HOSTILE_PATHS=paths)], tmp_path, sandbox=sb)
        assert p.cwds[0] == other  # the path the agent was given was the other seat's copy
    log = p.logs[1]
    assert "hostile: read OK hostile.py" in log, log  # it can read: its own copy
    for path in protected:
        assert f"hostile: denied {path}: [Errno 13] Permission denied" in log, (path, log)
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
        assert f"hostile: denied {other}: [Errno 13] Permission denied" in log, log
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
    assert logs and all(f"hostile: denied {out / 'logs'}:" in log for log in logs)  # the logs' folder is private
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
    expected = {"working directory", "environment", "memory", "CPU time", "file size", "processes", "network",
                "file isolation", "process isolation", "no new privileges", "cleanup"}  # fmt: skip
    assert set(state) == expected, r.stdout
    assert state["memory"] == ("on", "RLIMIT_DATA 256 MiB")
    for always in ("working directory", "environment", "memory", "CPU time", "file size", "no new privileges"):
        assert state[always][0] == "on", r.stdout
    if not CAPS.own_uid:
        pytest.skip(f"no uid of its own per agent here: {CAPS.own_uid_why}")
    for mechanism in ("network", "file isolation", "processes", "process isolation"):
        assert state[mechanism][0] == "on", r.stdout
    assert state["processes"][1] == "RLIMIT_NPROC 32"
    assert "missing:" not in r.stdout


# -- the CPU-time limit over a process's life ---------------------------------------------------------------------
def test_a_process_near_its_cpu_limit_is_replaced_between_matches(tmp_path):
    # "burn" uses 0.3 s of CPU at each match start; with a 1 s limit a process is replaced
    # after about three matches, between two of them, so no match is lost to SIGXCPU.
    from arena.runner import run_tournament
    from arena.schedule import load_config
    from arena.store import Store

    burn = str(ROOT / "tests" / "agents" / "broken" / "burn.toml")
    cfg = load_config(
        None,
        {"format": "head-to-head", "agents": [burn, "random"], "pairs": 4, "seed": 3, "concurrency": 1,
         "store": str(tmp_path / "s.sqlite")},
        {"move_ms": 1000, "first_move_ms": 2000, "bank_ms": 0},
    )  # fmt: skip
    logs = tmp_path / "logs"
    logs.mkdir()
    with Store(cfg.store) as store, Sandbox(Policy(limits=dataclasses.replace(LIMITS, cpu_s=1))) as sb:
        store.bind_config(cfg.identity(), cfg.config_hash)
        played = trio.run(lambda: run_tournament(cfg, cfg.schedule(), store, store.start_run("t", None, []),
                                                 logs=logs, sandbox=sb))  # fmt: skip
        rows = store.matches()
    assert played == 8 and all(r["fault"] is None for r in rows), [r["fault_detail"] for r in rows]
    assert len(list(logs.glob("burn-*.log"))) >= 2  # the first process was replaced


@own_uid
def test_agent_cannot_see_other_processes_nor_the_referees_command_line(tmp_path):
    if not CAPS.hide_processes:
        pytest.skip("no /proc of its own here")
    me = os.getpid()  # the referee: a tournament's command line may carry --seed
    paths = os.pathsep.join([f"/proc/{me}/cmdline", f"/proc/{me}/environ", "/proc/1/cmdline"])
    p = play([hostile("read", HOSTILE_PATHS=paths), resolve("random")], tmp_path)
    assert p.record.forfeit is None, p.record.forfeit
    log = p.logs[0]
    assert "read OK" not in log and log.count("hostile: denied /proc/") == 3, log
    assert Path(f"/proc/{me}/cmdline").read_bytes()  # the test itself can read it: the check can fail


@own_uid
def test_agent_cannot_read_the_tournament_config_with_its_seed(tmp_path, world_dirs):
    if not CAPS.hide_processes:
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
    assert logs and all(f"read OK {cfg} 0 bytes" in log for log in logs), logs  # it saw an empty file
    assert not any("987654321" in log for log in logs)
    assert "987654321" in cfg.read_text()  # the file itself is untouched
