"""``arena compare``: an SPRT on duplicate pairs between two versions, with real agents."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from test_report import render

ROOT = Path(__file__).resolve().parent.parent


def arena(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)  # fmt: skip


def stored(store: Path) -> list[tuple]:
    with sqlite3.connect(store) as db:
        return db.execute("SELECT id, winner, score0, score1 FROM matches ORDER BY idx").fetchall()


def test_sprt_accepts_h1_for_a_much_stronger_new_version_and_stops(tmp_path):
    store = tmp_path / "c.sqlite"
    p = arena("compare", "greedy", "random", "--elo1", "100", "--store", str(store), "--concurrency", "4")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    progress = [x for x in lines if x.startswith("pairs ")]
    assert progress and all("LLR" in x and "Elo" in x and "LOS" in x for x in progress)
    assert progress[-1].endswith("H1") and all(x.endswith("continue") for x in progress[:-1])
    decided_at = int(re.match(r"pairs (\d+)", progress[-1]).group(1))
    assert any(x.startswith("H1 accepted: greedy is stronger than random") for x in lines)
    rows = stored(store)
    # It stopped: the matches still in flight at the decision were cancelled, not stored.
    assert 2 * decided_at <= len(rows) <= 2 * decided_at + 4
    assert lines[-1] == f"report: {tmp_path / 'c' / 'index.html'}"
    seen = render(tmp_path / "c" / "index.html")
    assert seen["sections"][-1] == "sprt" and seen["broken"] == []


def test_sprt_accepts_h0_when_new_is_weaker(tmp_path):
    p = arena("compare", "random", "greedy", "--elo0", "0", "--elo1", "50", "--store", str(tmp_path / "c.sqlite"),
              "--quiet", "--no-report")  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("H0 accepted: random does not gain 50 Elo over greedy")


def test_the_decision_depends_only_on_the_results(tmp_path):
    """Pairs are fed in pair order, so two runs of one seed (any concurrency) stop at the same pair,
    and a resumed, already decided comparison plays nothing more."""
    outs = []
    for k, conc in ((0, "1"), (1, "4")):
        store = tmp_path / f"c{k}.sqlite"
        p = arena("compare", "greedy", "c-cautious", "--elo1", "30", "--store", str(store), "--concurrency", conc,
                  "--seed", "1", "--no-report")  # fmt: skip
        assert p.returncode == 0, p.stderr
        outs.append([x for x in p.stdout.splitlines() if x.startswith("pairs ")])
    assert outs[0] == outs[1]
    before = stored(tmp_path / "c0.sqlite")
    p = arena("compare", "greedy", "c-cautious", "--elo1", "30", "--store", str(tmp_path / "c0.sqlite"), "--resume",
              "--seed", "1", "--no-report", "--quiet")  # fmt: skip
    assert p.returncode == 0 and stored(tmp_path / "c0.sqlite") == before
    assert p.stdout.startswith("H1 accepted")


def test_fixed_number_of_pairs(tmp_path):
    store = tmp_path / "f.sqlite"
    p = arena("compare", "greedy", "c-cautious", "--fixed", "4", "--store", str(store), "--quiet", "--no-report")
    assert p.returncode == 0, p.stderr
    assert len(stored(store)) == 8
    assert "4 pairs: Elo" in p.stdout and "LOS" in p.stdout and "mean pair margin" in p.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--elo0", "5", "--elo1", "5"], "--elo0/--elo1: need elo0 < elo1"),
        (["--alpha", "0.7"], "--alpha: must be between 0 and 0.5"),
        (["--fixed", "0"], "--max-pairs/--fixed: must be at least 1"),
    ],
)
def test_bad_settings_are_one_line_errors(args, message, tmp_path):
    p = arena("compare", "greedy", "random", "--store", str(tmp_path / "x.sqlite"), *args)
    assert p.returncode == 2 and p.stderr.startswith(f"arena: error: {message}")
    assert not (tmp_path / "x.sqlite").exists()


def test_other_settings_on_a_stored_comparison_are_refused(tmp_path):
    store = str(tmp_path / "c.sqlite")
    assert (
        arena("compare", "greedy", "random", "--elo1", "100", "--store", store, "--quiet", "--no-report").returncode
        == 0
    )
    p = arena("compare", "greedy", "random", "--elo1", "80", "--store", store, "--resume", "--quiet")
    assert p.returncode == 2 and "holds a comparison with other settings" in p.stderr
