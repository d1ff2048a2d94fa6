"""A store you can trust: damaged files, read-only folders, a full disk, and a store
changed under a running tournament, each one line and exit status 2, with what was stored
before kept.

Real SQLite files and real runs (``python -m arena`` as a subprocess, the bundled random
and greedy agents, no sandbox: these tests are about the store), read back directly
(read-only), not through the code under test. A full disk is a small tmpfs and a
read-only folder a read-only tmpfs (both need root, which CI is) or a folder the
unprivileged user of `asuser` cannot write.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from asuser import as_user, can_switch, give, user_env

ROOT = Path(__file__).resolve().parent.parent
QUICK = ["--agents", "random,greedy", "--seed", "7", "--quiet", "--no-report", "--no-sandbox"]
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root (CI runs as root)")


def arena(*args: str | Path, timeout: float = 120, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena", *map(str, args)], capture_output=True, text=True, timeout=timeout,
        cwd=ROOT, **kw,
    )  # fmt: skip


def tournament(store: Path, pairs: int, *extra: str | Path, **kw) -> subprocess.CompletedProcess:
    return arena("tournament", *QUICK, "--pairs", str(pairs), "--store", store, *extra, **kw)


def one_line_error(p: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit 2 and exactly one line on stderr, ``arena: error: ...``, holding every needle."""
    assert p.returncode == 2, f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    assert "Traceback" not in p.stderr, p.stderr
    err = p.stderr.strip()
    assert len(err.splitlines()) == 1, f"not one line:\n{p.stderr}"
    assert err.startswith("arena: error: "), err
    for n in needles:
        assert n in err, f"{n!r} not in {err!r}"
    assert "matches played now" not in p.stdout, p.stdout
    return err


def count(store: Path, sql: str = "SELECT count(*) FROM matches") -> int:
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
    try:
        return con.execute(sql).fetchone()[0]
    finally:
        con.close()


def whole(store: Path) -> int:
    """The matches in a store, after checking it holds whole matches only."""
    n = count(store)
    assert count(store, "SELECT count(*) FROM deals") == count(store, "SELECT coalesce(sum(deals), 0) FROM matches")
    return n


@contextlib.contextmanager
def tmpfs(folder: Path, options: str) -> Iterator[Path]:
    """A tmpfs mounted on ``folder`` for the block; unmounted after, whatever happens."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], check=True)
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


# -- a file that is not a store, or a damaged one ---------------------------------------------------------------
def _text(tmp: Path) -> Path:
    path = tmp / "notes.sqlite"
    path.write_text("these are my notes, not a database\n" * 20)
    return path


def _stored(tmp: Path, name: str) -> Path:
    """A real store of a few matches, its run finished and the file closed."""
    path = tmp / f"{name}.sqlite"
    p = tournament(path, 10)
    assert p.returncode == 0, p.stderr
    assert not Path(f"{path}-wal").exists() and whole(path) == 20
    return path


def _garbage_after_header(tmp: Path) -> Path:
    path = _stored(tmp, "garbage")
    data = path.read_bytes()
    path.write_bytes(data[:100] + os.urandom(len(data) - 100))  # a valid header, then noise
    return path


def _truncated(tmp: Path) -> Path:
    path = _stored(tmp, "truncated")
    os.truncate(path, 4096)  # the first page only: the header and the schema
    return path


@pytest.mark.parametrize(
    "make, problem",
    [
        (_text, "not a results store (file is not a database)"),
        (_garbage_after_header, "the store is damaged (database disk image is malformed)"),
        (_truncated, "the store is damaged (database disk image is malformed)"),
    ],
    ids=["text", "garbage-after-header", "truncated"],
)
def test_a_file_that_is_not_a_whole_store_is_one_line_and_left_as_it_is(tmp_path, make, problem):
    path = make(tmp_path)
    before = path.read_bytes()
    one_line_error(tournament(path, 10, "--resume"), f"{path}: {problem}")
    one_line_error(arena("ratings", path), f"{path}: {problem}")
    assert path.read_bytes() == before


# -- a folder the store cannot be written in ---------------------------------------------------------------------
@ROOT_ONLY
def test_a_read_only_mount_is_one_line_and_an_existing_store_is_kept(tmp_path):
    good = _stored(tmp_path, "good")
    with tmpfs(tmp_path / "ro", "ro,size=1m") as ro:
        one_line_error(
            tournament(ro / "rr.sqlite", 2),
            f"{ro / 'rr.sqlite'}: cannot write: the store or its folder is read-only (Read-only file system)",
        )
        one_line_error(tournament(ro / "sub" / "rr.sqlite", 2), f"{ro / 'sub' / 'rr.sqlite'}: cannot write")
    with tmpfs(tmp_path / "ro", "size=1m") as ro:
        shutil.copy(good, ro / "good.sqlite")
        subprocess.run(["mount", "-o", "remount,ro", str(ro)], check=True)
        one_line_error(
            tournament(ro / "good.sqlite", 10, "--resume"),
            f"{ro / 'good.sqlite'}: cannot write: the store or its folder is read-only (Read-only file system)",
        )
        # Only reading: SQLite still cannot make its -shm file next to it.
        one_line_error(arena("ratings", ro / "good.sqlite"), f"{ro / 'good.sqlite'}: cannot open the store: ")
        subprocess.run(["mount", "-o", "remount,rw", str(ro)], check=True)
        assert whole(ro / "good.sqlite") == 20


@pytest.fixture
def user_home() -> Iterator[Path]:
    """A folder of the unprivileged user's own, reachable by it (tmp_path is not)."""
    if os.geteuid() == 0 and not can_switch():
        pytest.skip("running as root without useradd: no unprivileged user to stop at a read-only folder")
    home = Path(tempfile.mkdtemp(prefix="arena-store-test-"))
    os.chmod(home, 0o755)
    try:
        yield home
    finally:
        for dirpath, _dirs, _files in os.walk(home):
            os.chmod(dirpath, 0o755)
        shutil.rmtree(home)


def test_a_folder_the_user_cannot_write_is_one_line_and_an_existing_store_is_kept(user_home):
    """As the user (as root: the unprivileged user of `asuser`; chmod does not stop root)."""
    store = _stored(user_home, "good")  # made by the test, then handed over
    locked = user_home / "locked"
    locked.mkdir()
    shutil.move(store, locked / "good.sqlite")
    (user_home / "new").mkdir()
    if os.geteuid() == 0:
        give(user_home)
    os.chmod(locked, 0o555)  # the user may write the file, not create its -wal and -shm
    os.chmod(user_home / "new", 0o555)

    def run(*args: str | Path) -> subprocess.CompletedProcess:
        argv = [sys.executable, "-m", "arena", *map(str, args)]
        if os.geteuid() == 0:
            argv, env = as_user(argv, extra=[user_home]), user_env(user_home)
        else:
            env = None
        return subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)

    new = user_home / "new" / "rr.sqlite"
    one_line_error(
        run("tournament", *QUICK, "--pairs", "2", "--store", new),
        f"{new}: cannot write: the store or its folder is not writable by this user (Permission denied)",
    )
    old = locked / "good.sqlite"
    one_line_error(
        run("tournament", *QUICK, "--pairs", "10", "--resume", "--store", old),
        f"{old}: cannot write: its folder must be writable, for SQLite's -wal and -shm files "
        "(attempt to write a readonly database)",
    )
    assert not new.exists() and whole(old) == 20


# -- a full disk ------------------------------------------------------------------------------------------------
@ROOT_ONLY
@pytest.mark.parametrize("command", ["tournament", "compare"])
def test_a_disk_filling_up_mid_run_stops_it_with_one_line_and_keeps_what_was_stored(tmp_path, command):
    events = tmp_path / "events.jsonl"
    with tmpfs(tmp_path / "small", "size=600k") as small:
        store = small / "rr.sqlite"
        if command == "tournament":
            p = tournament(store, 5000, "--events", events)
        else:
            p = arena("compare", "random", "greedy", "--fixed", "5000", "--seed", "7", "--store", store, "--quiet",
                      "--no-report", "--no-sandbox")  # fmt: skip
        one_line_error(p, f"{store}: cannot write: the disk is full (database or disk is full)")
        stored = whole(store)
        assert 0 < stored < 10_000
        if command == "tournament":  # every match reported as stored is there
            finished = [json.loads(line) for line in events.read_text().splitlines()]
            assert stored == sum(e["event"] == "match_finished" for e in finished), events.read_text()[-2000:]
        # a resumed run on the full disk says the same, and loses nothing
        if command == "tournament":
            one_line_error(tournament(store, 5000, "--resume"), "cannot write: the disk is full")
        assert whole(store) == stored


# -- a store changed under a running tournament -----------------------------------------------------------------
def _wait_for_matches(store: Path, proc: subprocess.Popen, n: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the run ended before the store could be changed"
        try:
            if count(store) >= n:
                return
        except sqlite3.Error:
            pass  # not made yet
        time.sleep(0.05)
    pytest.fail(f"fewer than {n} matches stored after {timeout} s")


def _run_and_change(argv: list, store: Path, change, timeout: float) -> subprocess.CompletedProcess:
    """Start a run, apply `change` to its store once 10 matches are in, and collect its output."""
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_matches(store, proc, 10)
        change(store)
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _truncate(size: int) -> Callable[[Path], None]:
    def cut(store: Path) -> None:
        """Copy the write-ahead log into the file (any connection may), so that the file
        holds the matches, then cut it short. (Before a checkpoint the log holds every
        page, and the run's first checkpoint would write the whole file back.)"""
        con = sqlite3.connect(store, timeout=10)
        try:
            con.execute("PRAGMA wal_checkpoint(PASSIVE)")
        finally:
            con.close()
        assert store.stat().st_size > 16384
        os.truncate(store, size)

    return cut


def _replace(store: Path) -> None:
    Path(f"{store}.new").write_text("not a store\n")
    os.replace(f"{store}.new", store)


# How to change the store, and what the run may say (any one of these): after the cut, a
# checkpoint of the run may write pages back past it, leaving holes of zeros.
CHANGES = {
    "truncated-to-0": (_truncate(0), ["the store changed under the run (file ", "the store is damaged ("]),
    "truncated-to-8k": (_truncate(8192), ["the store changed under the run (file ", "the store is damaged ("]),
    "replaced": (_replace, ["the store changed under the run (file replaced): 0 of 300 matches"]),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_store_changed_under_a_running_tournament_fails_the_run(tmp_path, change):
    store = tmp_path / "rr.sqlite"
    do, problems = CHANGES[change]
    argv = [sys.executable, "-m", "arena", "tournament", *QUICK, "--pairs", "150", "--store", str(store)]
    p = _run_and_change(argv, store, do, timeout=120)
    message = one_line_error(p, f"{store}: the store ", "matches written by this run are in it")
    assert any(f"{store}: {problem}" in message for problem in problems), message
    assert "300 of 300" not in message


def test_a_ladder_store_replaced_under_a_running_ladder_fails_the_run(tmp_path):
    lad = tmp_path / "lad"
    p = arena("ladder", "init", lad, "--round-pairs", "4", "--move-ms", "200", "--first-move-ms", "3000")
    assert p.returncode == 0, p.stderr
    for a in ("random", "greedy"):
        assert arena("submit", a, "--ladder", lad).returncode == 0
    store = lad / "ladder.sqlite"
    argv = [sys.executable, "-m", "arena", "ladder", "run", "--ladder", str(lad), "--matches", "200", "--quiet"]
    p = _run_and_change(argv, store, _replace, timeout=180)
    # what the sandbox goes without here is said even with --quiet: not about the store
    p.stderr = "\n".join(line for line in p.stderr.splitlines() if not line.startswith("arena: sandbox: "))
    one_line_error(p, f"{store}: the store changed under the run (file replaced): 0 of 200 matches written")
