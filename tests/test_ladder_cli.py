"""``arena ladder`` as a user meets it: rounds said the same way by standings and history,
and a Ctrl-C that says what is stored and how to go on. Real subprocesses, a real ladder."""

from __future__ import annotations

import shlex
import sqlite3
from pathlib import Path

import pytest
from running import arena, count, interrupt_after

ROOT = Path(__file__).resolve().parent.parent
FAST = ["--move-ms", "200", "--first-move-ms", "3000", "--bank-ms", "2000"]


@pytest.fixture
def ladder(tmp_path: Path) -> Path:
    """A ladder of random and greedy, three pairs (six matches) a round."""
    folder = tmp_path / "lad"
    p = arena("ladder", "init", folder, "--concurrency", "2", "--round-pairs", "3", *FAST)
    assert p.returncode == 0, p.stderr
    for a in ("random", "greedy"):
        p = arena("submit", a, "--ladder", folder)
        assert p.returncode == 0, p.stderr
    return folder


def test_standings_and_history_say_the_rounds_the_same_way(ladder, tmp_path):
    # two matches of a six-match round: the round is open, none is finished
    p = arena("ladder", "run", "--ladder", ladder, "--matches", "2", "--quiet")
    assert p.returncode == 0, p.stderr
    standings = arena("ladder", "standings", "--ladder", ladder)
    assert standings.returncode == 0, standings.stderr
    assert "2 matches, 0 rounds finished, 1 open (planned, not all played)" in standings.stdout
    assert "1 rounds" not in standings.stdout
    history = arena("ladder", "history", "--ladder", ladder, "--out", tmp_path / "h")
    assert history.returncode == 0, history.stderr
    assert history.stdout.startswith("no round finished yet (2 matches, 0 rounds finished, 1 open")
    assert not (tmp_path / "h" / "history.png").exists()
    # the next run finishes the open round first: both now say one round
    p = arena("ladder", "run", "--ladder", ladder, "--rounds", "1", "--quiet")
    assert p.returncode == 0, p.stderr
    standings = arena("ladder", "standings", "--ladder", ladder).stdout
    assert "6 matches, 1 round finished; store" in standings
    history = arena("ladder", "history", "--ladder", ladder, "--out", tmp_path / "h")
    assert history.returncode == 0, history.stderr
    assert history.stdout.splitlines()[0] == "6 matches, 1 round finished"
    assert (tmp_path / "h" / "history.png").is_file()


def test_ctrl_c_says_what_is_stored_and_how_to_go_on(ladder):
    db = ladder / "ladder.sqlite"
    status, _, err = interrupt_after(["ladder", "run", "--ladder", str(ladder), "--quiet"], db, 3)
    assert status == 130 and "Traceback" not in err
    last = err.strip().splitlines()[-1]
    n = count(db, "SELECT count(*) FROM matches")
    assert last.startswith(f"arena: interrupted: {n} matches in the ladder {ladder} (")
    again = shlex.split(last.split("resume with: ", 1)[1])
    assert again == ["arena", "ladder", "run", "--ladder", str(ladder)]
    p = arena(*again[1:], "--rounds", "1", "--quiet")
    assert p.returncode == 0, p.stderr
    assert count(db, "SELECT count(*) FROM matches") > n


def test_a_round_killed_before_its_ratings_is_finished_and_the_next_one_played(ladder):
    # a run killed between the round's last match and its ratings: all six matches
    # stored, no history row for the round (made so in the real store)
    db = ladder / "ladder.sqlite"
    p = arena("ladder", "run", "--ladder", ladder, "--rounds", "1", "--quiet")
    assert p.returncode == 0, p.stderr
    with sqlite3.connect(db) as con:
        con.execute("DELETE FROM history")
    assert "1 open (planned, not all played)" in arena("ladder", "standings", "--ladder", ladder).stdout
    p = arena("ladder", "run", "--ladder", ladder, "--rounds", "1", "--quiet")
    assert p.returncode == 0, p.stderr
    assert count(db, "SELECT count(*) FROM matches") == 12
    assert "12 matches, 2 rounds finished; store" in arena("ladder", "standings", "--ladder", ladder).stdout
