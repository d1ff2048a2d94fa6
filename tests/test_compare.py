"""``arena compare``: an SPRT on duplicate pairs between two versions, with real agents."""

from __future__ import annotations

import math
import os
import pty
import re
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from running import interrupt_after
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
    p = arena("compare", "greedy", "random", "--elo1", "100", "--store", str(store), "--concurrency", "4", "--verbose")
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
                  "--seed", "1", "--no-report", "--verbose")  # fmt: skip
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


def test_a_one_sided_result_is_finite_and_honest_and_stdout_holds_only_the_result(tmp_path):
    """greedy wins every pair against random: no ``+inf [+nan, +nan]``, but a lower bound, and
    no line per pair on stdout unless --verbose (the live status goes to stderr)."""
    store = tmp_path / "c.sqlite"
    p = arena("compare", "greedy", "random", "--elo0", "0", "--elo1", "5", "--store", str(store), "--no-report")
    assert p.returncode == 0, p.stderr
    [result] = p.stdout.splitlines()
    assert result.startswith("H1 accepted: greedy is stronger than random")
    assert "inf" not in result and "nan" not in result
    m = re.search(r"(\d+) pairs: Elo > \+(\d+) \(every pair won: 95% lower bound; no upper bound\), LOS > 99.9%",
                  result)  # fmt: skip
    assert m, result
    pairs, bound = int(m.group(1)), int(m.group(2))
    assert bound == round(-400 * math.log10(1 / 0.025 ** (1 / pairs) - 1))  # the exact one-sided limit
    assert "comparing greedy (new) with random (old)" in p.stderr  # the header and status are not results


def test_ctrl_c_says_what_is_stored_and_how_to_resume(tmp_path):
    store = tmp_path / "c.sqlite"
    argv = ["compare", "greedy", "c-cautious", "--fixed", "40", "--seed", "3", "--store", str(store),
            "--concurrency", "2", "--no-report"]  # fmt: skip
    status, _, err = interrupt_after(argv, store, 4)
    assert status == 130 and "Traceback" not in err
    last = err.strip().splitlines()[-1]
    n = len(stored(store))
    assert last.startswith(f"arena: interrupted: {n} matches in {store}, ") and "resume with: arena compare " in last
    again = shlex.split(last.split("resume with: ", 1)[1])
    assert again == ["arena", *argv, "--resume"]
    p = arena(*again[1:], "--quiet")
    assert p.returncode == 0, p.stderr
    assert len(stored(store)) == 80 and "40 pairs: Elo" in p.stdout


def test_on_a_terminal_the_status_line_is_redrawn_in_place(tmp_path):
    """stderr a real pseudo-terminal: one status line kept current with carriage returns;
    stdout (a pipe) gets the result only."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "arena", "compare", "greedy", "c-cautious", "--fixed", "30",
                             "--store", str(tmp_path / "t.sqlite"), "--concurrency", "2", "--no-report"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=slave, text=True)  # fmt: skip
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the terminal closed: the run is over
            break
        if not chunk:
            break
        seen += chunk
    out, _ = proc.communicate(timeout=300)
    os.close(master)
    assert proc.returncode == 0
    redraws = seen.decode().split("\r\x1b[K")[1:]
    assert redraws and all(" matches stored, pairs " in r for r in redraws), seen[-400:]
    assert out.splitlines()[0].startswith(("inconclusive", "NEW is")) and "30 pairs: Elo" in out
    assert "matches stored" not in out
