"""Submissions and ladders end to end: ``arena submit`` and ``arena ladder ...`` run as a
user runs them (real subprocesses, real agents in the sandbox, a real SQLite file read
back directly)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from arena.ladder.rounds import choose_pairs
from arena.stats.rating import fit

ROOT = Path(__file__).resolve().parent.parent
FAST = ["--move-ms", "200", "--first-move-ms", "3000", "--bank-ms", "2000"]


def arena(*args: str | Path, timeout: float = 180, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena", *map(str, args)], capture_output=True, text=True, timeout=timeout, cwd=cwd
    )


def rows(db: Path, sql: str) -> list[tuple]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def agent(tmp: Path, name: str, manifest: str, files: dict[str, str | bytes] | None = None) -> Path:
    """An agent folder in ``tmp`` with the given manifest text and files."""
    folder = tmp / name
    folder.mkdir(parents=True)
    (folder / "agent.toml").write_text(manifest)
    for rel, data in (files or {}).items():
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data) if isinstance(data, bytes) else p.write_text(data)
    return folder


GOOD_PY = 'from arena.sdk import run\nrun(lambda obs, legal: legal[0], name="mine")\n'


def good(tmp: Path, name: str = "mine", version: str = "1.0", body: str = GOOD_PY) -> Path:
    return agent(
        tmp,
        f"{name}-{version}",
        f'name = "{name}"\nversion = "{version}"\nlanguage = "python"\ncommand = ["{{python}}", "agent.py"]\n',
        {"agent.py": body},
    )


@pytest.fixture
def ladder(tmp_path: Path) -> Path:
    folder = tmp_path / "lad"
    p = arena("ladder", "init", folder, "--concurrency", "2", "--round-pairs", "3", *FAST)
    assert p.returncode == 0, p.stderr
    return folder


# -- submissions --------------------------------------------------------------------------------


def _bad_manifests(tmp: Path) -> list[tuple[Path, str]]:
    head = 'name = "bad"\nversion = "1"\nlanguage = "python"\n'
    big = good(tmp, "big")
    (big / "blob.bin").write_bytes(os.urandom(2 << 20))
    link = good(tmp, "link")
    (link / "secret").symlink_to("/etc/passwd")
    return [
        (agent(tmp, "missing", 'name = "bad"\nversion = "1"\nlanguage = "python"\n'), "missing field 'command'"),
        (agent(tmp, "typed", head + 'command = "agent.py"\n'), "field 'command' must be a non-empty list of strings"),
        (agent(tmp, "notfound", head + 'command = ["no-such-program-xyz"]\n'), "program 'no-such-program-xyz' is not"),
        (agent(tmp, "escape", head + 'command = ["{python}", "../other/agent.py"]\n'), "outside the agent's folder"),
        (agent(tmp, "absolute", head + 'command = ["{python}", "/etc/agent.py"]\n'), "names an absolute path"),
        (agent(tmp, "nofile", head + 'command = ["./agent"]\n'), "program './agent' is not in the folder"),
        (big, "the folder is too large (2.0 MiB; the limit is 1 MiB)"),
        (link, "a symlink that leads out of the agent's folder"),
        (
            agent(
                tmp,
                "nobuild",
                head + 'command = ["./agent"]\nbuild = ["cc", "-o", "agent", "agent.c"]\n',
                {"agent.c": "this is not C\n"},
            ),
            "build failed (status 1)",
        ),  # fmt: skip
        (
            ROOT / "tests/agents/broken/illegal.toml",
            "illegal.toml: conformance check failed: ",
        ),
        (tmp / "nowhere", "unknown agent"),
    ]


def test_each_malformed_submission_gets_its_one_line_error(ladder, tmp_path):
    (ladder / "ladder.toml").write_text((ladder / "ladder.toml").read_text().replace("max_mb = 50", "max_mb = 1"))
    for folder, message in _bad_manifests(tmp_path / "agents"):
        p = arena("submit", folder, "--ladder", ladder)
        err = p.stderr.strip().splitlines()
        assert p.returncode == 2, (folder, p.stdout, p.stderr)
        assert err[-1].startswith("arena: error: ") and message in err[-1], (folder, err[-1])
        assert "Traceback" not in p.stderr
    # nothing was entered, nothing left behind
    assert rows(ladder / "ladder.sqlite", "SELECT count(*) FROM entries") == [(0,)]
    assert not [p for p in (ladder / "agents").iterdir()]


def test_submission_is_immutable_keyed_by_version_and_content(ladder, tmp_path):
    db = ladder / "ladder.sqlite"
    v1 = good(tmp_path, "mine", "1.0")
    p = arena("submit", v1, "--ladder", ladder)
    assert p.returncode == 0, p.stderr
    assert "mine@1.0: entered" in p.stdout
    [(key, folder, status, digest)] = rows(db, "SELECT key, folder, status, content_hash FROM entries")
    copy = Path(folder)
    assert (key, status) == ("mine@1.0", "active") and copy.is_relative_to(ladder / "agents")
    assert copy.name == f"1.0-{digest[:12]}" and (copy / "agent.py").read_text() == GOOD_PY
    assert not os.stat(copy / "agent.py").st_mode & 0o222  # read-only
    # the same content again: nothing changes
    p = arena("submit", v1, "--ladder", ladder)
    assert p.returncode == 0 and "already in the ladder with this content; nothing changed" in p.stdout
    assert rows(db, "SELECT count(*) FROM entries") == [(1,)]
    # the same version with other content: refused
    (v1 / "agent.py").write_text(GOOD_PY + "# changed\n")
    p = arena("submit", v1, "--ladder", ladder)
    assert p.returncode == 2 and "mine@1.0 is already in the ladder with other content" in p.stderr
    # changing the original does not change the copy
    assert (copy / "agent.py").read_text() == GOOD_PY
    # a new version is a new entry; the old one is retired and keeps its record
    assert arena("submit", "greedy", "--ladder", ladder).returncode == 0
    assert arena("ladder", "run", "--ladder", ladder, "--rounds", "1", "--quiet").returncode == 0
    old_games = rows(db, "SELECT count(*) FROM matches WHERE seat0 = 'mine@1.0' OR seat1 = 'mine@1.0'")[0][0]
    assert old_games == 6
    p = arena("submit", good(tmp_path, "mine", "2.0"), "--ladder", ladder)
    assert p.returncode == 0 and "mine@1.0: retired (replaced by mine@2.0); its record stays" in p.stdout
    p = arena("ladder", "run", "--ladder", ladder, "--rounds", "1", "--quiet")
    assert p.returncode == 0, p.stderr
    seats = rows(
        db, "SELECT seat0, seat1 FROM matches WHERE pair_index IN (SELECT id FROM ladder_pairs WHERE round = 1)"
    )
    assert seats and all("mine@1.0" not in s for s in seats) and any("mine@2.0" in s for s in seats)
    assert rows(db, "SELECT count(*) FROM matches WHERE seat0 = 'mine@1.0' OR seat1 = 'mine@1.0'") == [(old_games,)]
    p = arena("ladder", "standings", "--ladder", ladder)
    assert p.returncode == 0
    assert "mine@1.0" in p.stdout and "retired" in p.stdout and "mine@2.0" in p.stdout


def test_submit_without_a_ladder_only_checks(tmp_path):
    p = arena("submit", "agents/c-cautious")
    assert p.returncode == 0, p.stderr
    assert "c-cautious@1.0.0: valid, built and conformant" in p.stdout
    p = arena("submit", tmp_path / "missing-folder")
    assert p.returncode == 2 and "unknown agent" in p.stderr


# -- ladder settings and commands ---------------------------------------------------------------


@pytest.mark.parametrize(
    "edit, message",
    [
        (("name = ", "seed = -3\nname = "), "field 'seed' must be a non-negative integer"),
        (("concurrency = 2", "concurrency = 0"), "field 'concurrency' must be a positive integer"),
        (("memory_mb = 1024", "memory_mb = 'lots'"), "[sandbox]: field 'memory_mb' must be a positive integer"),
        (("check = true", "check = 1"), "[submit]: field 'check' must be true or false"),
        (("name = ", "colour = 'red'\nname = "), "unknown field 'colour'"),
        (("move_ms = 200", "move_ms = -1"), "[time_control]"),
    ],
)
def test_bad_ladder_settings_are_one_line_errors(ladder, edit, message):
    cfg = ladder / "ladder.toml"
    cfg.write_text(cfg.read_text().replace(*edit, 1))
    p = arena("ladder", "standings", "--ladder", ladder)
    assert p.returncode == 2
    assert p.stderr.startswith(f"arena: error: {cfg}") and message in p.stderr and len(p.stderr.splitlines()) == 1


def test_ladder_commands_name_what_is_missing(tmp_path, ladder):
    p = arena("ladder", "run", "--ladder", tmp_path / "none", "--matches", "2")
    assert p.returncode == 2 and "no ladder here (no ladder.toml); make one with arena ladder init" in p.stderr
    p = arena("ladder", "init", ladder)
    assert p.returncode == 2 and "already holds a ladder" in p.stderr
    p = arena("ladder", "retire", "ghost", "--ladder", ladder)
    assert p.returncode == 2 and "no entry 'ghost'" in p.stderr
    p = arena("ladder", "run", "--ladder", ladder, "--matches", "4")  # no agents: nothing to do, says so
    assert p.returncode == 0 and "no agents yet" in p.stdout
    assert oct(ladder.stat().st_mode & 0o777) == "0o700"
    assert oct((ladder / "ladder.sqlite").stat().st_mode & 0o777) == "0o600"


def test_retire_stops_scheduling_and_keeps_the_record(ladder):
    db = ladder / "ladder.sqlite"
    for a in ("random", "greedy", "c-cautious"):
        assert arena("submit", a, "--ladder", ladder).returncode == 0
    assert arena("ladder", "run", "--ladder", ladder, "--rounds", "2", "--quiet").returncode == 0
    before = rows(db, "SELECT count(*) FROM matches WHERE 'random@1.0.0' IN (seat0, seat1)")[0][0]
    p = arena("ladder", "retire", "random", "--ladder", ladder)
    assert p.returncode == 0 and "random@1.0.0: retired; its record stays" in p.stdout
    assert arena("ladder", "run", "--ladder", ladder, "--rounds", "2", "--quiet").returncode == 0
    rounds = rows(db, "SELECT DISTINCT round FROM ladder_pairs WHERE 'random@1.0.0' IN (a, b)")
    assert max(r for (r,) in rounds) < 2
    assert rows(db, "SELECT count(*) FROM matches WHERE 'random@1.0.0' IN (seat0, seat1)") == [(before,)]
    p = arena("ladder", "standings", "--ladder", ladder, "--active")
    assert p.returncode == 0 and "random@1.0.0" not in p.stdout and "greedy@1.0.0" in p.stdout
    # history: a PNG and the HTML report with the chart
    p = arena("ladder", "history", "--ladder", ladder)
    assert p.returncode == 0, p.stderr
    png = ladder / "report" / "history.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (ladder / "report" / "index.html").read_text()
    assert 'id="history"' in page and 'data-name="history"' in page
    assert rows(db, "SELECT count(DISTINCT round) FROM history") == [(4,)]


def test_ladder_run_matches_plays_that_many_more_each_run(ladder):
    """``--matches N`` is N more matches per run, not a total for the store."""
    db = ladder / "ladder.sqlite"
    for a in ("random", "greedy"):
        assert arena("submit", a, "--ladder", ladder).returncode == 0
    assert "play N more matches in this run" in arena("ladder", "run", "--help").stdout
    for total in (3, 6, 9):  # the second run starts with the first run's open round
        p = arena("ladder", "run", "--ladder", ladder, "--matches", "3", "--quiet")
        assert p.returncode == 0, p.stderr
        assert f"3 matches played now, {total} in the ladder" in p.stdout
        assert rows(db, "SELECT count(*) FROM matches") == [(total,)]
        assert rows(db, "SELECT matches_played FROM runs ORDER BY id DESC LIMIT 1") == [(3,)]


# -- killed and resumed -------------------------------------------------------------------------

TIMINGS = "id, seat0, seat1, seed, winner, score0, score1, deals, fault"


def test_a_ladder_killed_with_sigkill_resumes_losing_and_repeating_nothing(ladder):
    db = ladder / "ladder.sqlite"
    for a in ("random", "greedy", "c-cautious"):
        assert arena("submit", a, "--ladder", ladder).returncode == 0
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "ladder", "run", "--ladder", str(ladder), "--quiet"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.2)
        n = rows(db, "SELECT count(*) FROM matches")[0][0]
        if n >= 9 and n % 6:  # in the middle of a round
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = rows(db, f"SELECT {TIMINGS} FROM matches ORDER BY id")
    planned = rows(db, "SELECT id, round, a, b, seed FROM ladder_pairs ORDER BY id")
    last = planned[-1][1]
    assert len(before) >= 9 and rows(db, f"SELECT count(*) FROM history WHERE round = {last}") == [(0,)]
    deals_before = rows(db, "SELECT count(*) FROM deals")[0][0]
    assert deals_before == rows(db, "SELECT sum(deals) FROM matches")[0][0]  # whole matches only
    p = arena("ladder", "run", "--ladder", ladder, "--rounds", "1")
    assert p.returncode == 0, p.stderr
    after = rows(db, f"SELECT {TIMINGS} FROM matches ORDER BY id")
    # what was stored is unchanged; the open round was finished, not planned again
    assert set(before) <= set(after)
    assert rows(db, "SELECT id, round, a, b, seed FROM ladder_pairs ORDER BY id") == planned
    assert len(after) == 2 * len(planned)
    assert f"{len(after) - len(before)} matches played now" in p.stdout
    assert rows(db, "SELECT count(*) FROM deals")[0][0] == rows(db, "SELECT sum(deals) FROM matches")[0][0]
    assert [r for (r,) in rows(db, "SELECT DISTINCT round FROM history ORDER BY round")] == list(range(last + 1))
    assert not any(Path("/tmp").glob(f"arena-sandbox-{proc.pid}-*"))  # the dead run's folders are cleaned up


# -- the scheduler --------------------------------------------------------------------------------


def test_scheduler_prefers_new_agents_and_close_ratings():
    import random

    # a and b: many games, close; c: far below; d: new
    games = [{"seat0": "a", "seat1": "b", "winner": i % 2} for i in range(60)]
    games += [{"seat0": "a", "seat1": "c", "winner": 0} for _ in range(20)]
    games += [{"seat0": "b", "seat1": "c", "winner": 0} for _ in range(20)]
    rated = fit(games, ["a", "b", "c", "d"])
    picks = [choose_pairs(["a", "b", "c", "d"], rated, 1, random.Random(s))[0] for s in range(400)]
    with_d = sum("d" in p for p in picks)
    assert with_d > 0.6 * len(picks)  # the agent without games first
    assert sum(set(p) == {"a", "c"} for p in picks) < sum(set(p) == {"a", "b"} for p in picks) + 40
    # a round spreads out (each pick counts as played): not one pairing over and over
    round_ = choose_pairs(["a", "b", "c", "d"], rated, 12, random.Random(1))
    assert {p for p in round_ if "d" in p} == {("a", "d"), ("b", "d"), ("c", "d")}
    # and it is reproducible
    assert round_ == choose_pairs(["a", "b", "c", "d"], rated, 12, random.Random(1))


# -- hostile agents in a running ladder ------------------------------------------------------------

HOSTILE = ROOT / "tests" / "agents" / "hostile"


def _hostile(tmp: Path, behaviour: str, env: dict[str, str]) -> Path:
    """A submittable folder for one hostile behaviour, its [env] pointing at real targets."""
    folder = tmp / f"hostile-{behaviour}"
    folder.mkdir(parents=True)
    shutil.copy2(HOSTILE / "hostile.py", folder)
    text = (HOSTILE / f"{behaviour}.toml").read_text().split("[env]")[0]
    if env:
        text += "[env]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in env.items())
    (folder / "agent.toml").write_text(text)
    return folder


@pytest.mark.skipif(os.geteuid() != 0, reason="file isolation needs a uid per agent: the referee must run as root")
def test_hostile_agents_are_contained_and_recorded_while_the_ladder_goes_on(tmp_path):
    lad = tmp_path / "lad"
    assert arena("ladder", "init", lad, "--concurrency", "2", "--round-pairs", "8", *FAST).returncode == 0
    cfg = lad / "ladder.toml"
    text = cfg.read_text().replace("memory_mb = 1024", "memory_mb = 256").replace("processes = 64", "processes = 24")
    cfg.write_text(text.replace("file_mb = 64", "file_mb = 8").replace("check = true", "check = false"))
    db = lad / "ladder.sqlite"
    for a in ("random", "greedy"):
        assert arena("submit", a, "--ladder", lad).returncode == 0
    greedy_copy = rows(db, "SELECT folder FROM entries WHERE name = 'greedy'")[0][0]
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    secrets = os.pathsep.join([str(db), str(cfg), f"{greedy_copy}/agent.py", str(lad / "agents")])
    envs = {
        "memory": {}, "fork": {}, "bigfile": {}, "spin": {},
        "network": {"HOSTILE_PORT": str(port)},
        "read": {"HOSTILE_PATHS": secrets},
        "stderr-peek": {"HOSTILE_LOGS": str(lad / "logs"), "HOSTILE_PATHS": str(lad / "logs" / "greedy@1.0.0-1.log")},
    }  # fmt: skip
    for behaviour, env in envs.items():
        p = arena("submit", _hostile(tmp_path / "src", behaviour, env), "--ladder", lad)
        assert p.returncode == 0, p.stderr
    p, uids = _run_noting_uids(["ladder", "run", "--ladder", lad, "--matches", "48"], timeout=300)
    assert p.returncode == 0, p.stderr
    assert uids, "no agent process of the run was ever seen"
    matches = rows(db, "SELECT seat0, seat1, forfeit_seat, fault, fault_detail FROM matches")
    assert len(matches) == 48
    by_agent: dict[str, list[tuple]] = {}
    for seat0, seat1, fseat, fault, detail in matches:
        for seat, key in enumerate((seat0, seat1)):
            by_agent.setdefault(key, []).append((fault if fseat == seat else None, detail))
    logs = {k: "".join(p.read_text() for p in (lad / "logs").glob(f"{k}-*.log")) for k in by_agent}
    # every hostile agent played and its games were recorded; the others' went on
    for behaviour in envs:
        assert by_agent.get(f"hostile-{behaviour}@0"), f"hostile-{behaviour} never played"
    # (a match ends at the first forfeit: against another hostile agent, one may not get to attack)
    faults = {k: [(f, d) for f, d in v if f is not None] for k, v in by_agent.items()}
    memory = faults["hostile-memory@0"]
    # its cap stops it (MemoryError at the limit); on a machine loaded far past its cores,
    # filling 240 MiB may outlast its clock first: a timeout is then its own fault too
    assert memory and all(f in ("crash", "timeout") for f, _ in memory), memory
    assert any(f == "crash" and "MemoryError after" in d for f, d in memory), memory
    assert faults["hostile-spin@0"] and all(f == "timeout" for f, _ in faults["hostile-spin@0"])
    for quiet in ("fork", "network", "read", "stderr-peek", "bigfile", "random", "greedy"):
        key = quiet + "@1.0.0" if quiet in ("random", "greedy") else f"hostile-{quiet}@0"
        assert not faults[key], faults[key]
    fork = re.search(r"forked (\d+) children, then fork failed", logs["hostile-fork@0"])
    assert fork and int(fork.group(1)) < 24
    # no interface up, or (bubblewrap) a loopback of its own where nothing listens
    assert re.search(r"connect failed: .*(Network is unreachable|Connection refused)", logs["hostile-network@0"])
    with pytest.raises(BlockingIOError):
        listener.accept()  # nothing ever connected
    listener.close()
    assert "read OK" not in logs["hostile-read@0"] and logs["hostile-read@0"].count("denied") >= 4
    assert "read OK" not in logs["hostile-stderr-peek@0"] and "denied" in logs["hostile-stderr-peek@0"]
    assert "File too large" in logs["hostile-bigfile@0"]
    # no process of this run's agents is left running (other runs on the machine have their own uids)
    assert _alive_of(uids) == []
    assert rows(db, "SELECT count(*) FROM history")[0][0] > 0
    p = arena("ladder", "standings", "--ladder", lad)
    assert p.returncode == 0 and "hostile-spin@0" in p.stdout


def _descendants(pid: int) -> list[int]:
    """The processes below ``pid`` now (children lists of /proc, recursively)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tasks:
            try:
                kids = [int(x) for x in Path(f"/proc/{p}/task/{t}/children").read_text().split()]
            except (OSError, ValueError):
                continue
            out += kids
            todo += kids
    return out


def _run_noting_uids(args: list[str | Path], timeout: float) -> tuple[subprocess.CompletedProcess, set[int]]:
    """Run ``arena ARGS`` to the end, noting the sandbox uids of the processes below it:
    the uids this run allocated (unique on the machine while they run), so that the check
    for leftovers looks at this run's agents only, never at another run's."""
    from arena.runtime.sandbox import UID_BASE, UID_SPAN

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([sys.executable, "-m", "arena", *map(str, args)], cwd=ROOT, stdout=out, stderr=err)
        uids: set[int] = set()
        deadline = time.monotonic() + timeout
        while proc.poll() is None and time.monotonic() < deadline:
            for pid in _descendants(proc.pid):
                try:
                    uid = os.stat(f"/proc/{pid}").st_uid
                except OSError:
                    continue
                if UID_BASE < uid < UID_BASE + UID_SPAN:  # (UID_BASE itself: the sandbox probe's, any run's)
                    uids.add(uid)
            time.sleep(0.05)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
            pytest.fail(f"arena {args[0]} took more than {timeout} s")
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out.read(), err.read()), uids


def _alive_of(uids: set[int], seconds: float = 10.0) -> list[int]:
    """Live (not zombie) processes of ``uids``, after up to ``seconds`` for a killed orphan
    to be reaped."""
    deadline = time.monotonic() + seconds
    while True:
        left = []
        for p in Path("/proc").iterdir():
            try:
                if p.name.isdigit() and p.stat().st_uid in uids:
                    if (p / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                        left.append(int(p.name))
            except (OSError, IndexError):
                continue
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def test_a_submission_joins_a_running_ladder_at_the_next_round(ladder):
    db = ladder / "ladder.sqlite"
    for a in ("random", "greedy"):
        assert arena("submit", a, "--ladder", ladder).returncode == 0
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "ladder", "run", "--ladder", str(ladder), "--quiet"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while rows(db, "SELECT count(*) FROM history")[0][0] == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        p = arena("submit", "c-cautious", "--ladder", ladder)  # while it runs
        assert p.returncode == 0, p.stderr
        [(submitted,)] = rows(db, "SELECT submitted FROM entries WHERE name = 'c-cautious'")
        while time.monotonic() < deadline:
            if rows(db, "SELECT count(*) FROM matches WHERE 'c-cautious@1.0.0' IN (seat0, seat1)")[0][0]:
                break
            time.sleep(0.2)
        else:
            pytest.fail("the new entry never played")
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "arena: interrupted" in err
    # its first pair was planned in a round that began after it was entered
    [(first_round, planned)] = rows(
        db, "SELECT round, planned FROM ladder_pairs WHERE 'c-cautious@1.0.0' IN (a, b) ORDER BY id LIMIT 1"
    )
    assert planned >= submitted and first_round >= 1
    # an interrupted run leaves whole matches only, and resumes
    assert rows(db, "SELECT count(*) FROM deals")[0][0] == rows(db, "SELECT sum(deals) FROM matches")[0][0]
    p = arena("ladder", "run", "--ladder", ladder, "--rounds", "1", "--quiet")
    assert p.returncode == 0, p.stderr


def test_a_damaged_entry_stops_the_run_with_one_line_and_loses_nothing(ladder):
    db = ladder / "ladder.sqlite"
    for a in ("random", "greedy"):
        assert arena("submit", a, "--ladder", ladder).returncode == 0
    assert arena("ladder", "run", "--ladder", ladder, "--rounds", "1", "--quiet").returncode == 0
    before = rows(db, "SELECT count(*) FROM matches")
    [(folder,)] = rows(db, "SELECT folder FROM entries WHERE name = 'greedy'")
    shutil.rmtree(folder)  # someone deleted the immutable copy
    p = arena("ladder", "run", "--ladder", ladder, "--rounds", "1", "--quiet")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.startswith("arena: error: ") and f"{folder}: no agent.toml" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    assert rows(db, "SELECT count(*) FROM matches") == before
