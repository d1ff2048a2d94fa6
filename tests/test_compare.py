"""``arena compare``: an SPRT on duplicate pairs between two versions, with real agents."""

from __future__ import annotations

import csv
import html
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
from running import arena, interrupt_after
from test_report import render
from test_startup import agent

ROOT = Path(__file__).resolve().parent.parent


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
    [verdict] = [x for x in lines if x.startswith("H1 accepted")]
    assert verdict.startswith(
        "H1 accepted: the results favour a gain of 100 nElo over one of 0 nElo for greedy against random; had "
        "greedy's true gain been 0 nElo or less, this verdict would come at most about 5% of the time. "
    )
    # every pair won: the live lines use the final result's words, a one-sided bound, never "n/a" or 100%
    assert all(" (every pair won: 95% lower bound; no upper bound), LOS > 99.9%  " in x for x in progress[1:])
    assert "100.0%" not in p.stdout + p.stderr
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
    assert p.stdout.startswith(
        "H0 accepted: the results favour a gain of 0 nElo over one of 50 nElo for random against greedy; had "
        "random's true gain been 50 nElo or more, this verdict would come at most about 5% of the time. "
    )


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
    assert "4 pairs: " in p.stdout and "Elo" in p.stdout and "LOS" in p.stdout and "mean pair margin" in p.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--elo0", "5", "--elo1", "5"], "--elo0/--elo1: need elo0 < elo1"),
        (["--alpha", "0.7"], "--alpha: must be between 0 and 0.5"),
        (["--fixed", "0"], "--max-pairs/--fixed: must be at least 1"),
        (["--elo1", "300"], "--elo0/--elo1: the normalized model takes bounds within ±200 nElo"),
        (["--split", "-0.1"], "--split: must be at least 0 and below 1"),
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
    assert result.startswith("H1 accepted: the results favour a gain of 5 nElo over one of 0 nElo for greedy")
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
    assert len(stored(store)) == 80 and "40 pairs: " in p.stdout


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
    assert out.splitlines()[0].startswith(("inconclusive", "NEW is")) and "30 pairs: " in out and "Elo" in out
    assert "matches stored" not in out


# -- issue 13: void pairs, honest words, the plan --------------------------------------------------


def sprt_section(store: Path) -> tuple[str, dict]:
    """``arena report STORE``'s comparison: the paragraph under its heading and the CSV's row."""
    p = arena("report", str(store))
    assert p.returncode == 0, p.stderr
    folder = store.with_suffix("")
    page = (folder / "index.html").read_text()
    m = re.search(r'<h2 id="sprt">[^<]*</h2>\s*<p>(.*?)</p>', page, re.S)
    assert m, "no comparison section"
    [row] = list(csv.DictReader((folder / "sprt.csv").open()))
    return html.unescape(m.group(1)), row


@pytest.mark.parametrize("broken", ["new", "both"])
def test_a_pair_with_no_result_is_void_live_on_resume_and_in_the_report(broken, tmp_path):
    """NEW (or both) cannot be started until its runtime is fixed: its matches are lost before
    play (with both, they have no winner at all). Their pairs are void, said and left out of the
    test, the same way in the run and the report; the run stops (every further pair would be
    void) with status 1 and the command that goes on; once fixed, --resume plays them and ends
    with a verdict the report repeats word for word."""
    tmp_path.chmod(0o755)  # as root, agents run as uids of their own: they must reach their folder
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    wrapper = bin_ / "flaky-runtime"  # on PATH, but fails until "fixed" exists beside it
    wrapper.write_text(
        '#!/bin/sh\n[ -e "$(dirname "$0")/fixed" ] || { echo "flaky-runtime: its library is missing" >&2; exit 1; }\n'
        'exec "$@"\n'
    )
    wrapper.chmod(0o755)
    new = agent(tmp_path, "fgreedy", ["flaky-runtime", "{python}", "agent.py"])
    old = agent(tmp_path, "frandom", ["flaky-runtime", "{python}", "agent.py"], source=ROOT / "agents" / "random")
    env = dict(os.environ, PATH=f"{bin_}{os.pathsep}{os.environ['PATH']}")
    store = tmp_path / "c.sqlite"
    argv = ["compare", str(new), str(old) if broken == "both" else "random", "--elo1", "100", "--store", str(store),
            "--concurrency", "1", "--seed", "3", "--no-report"]  # fmt: skip

    p = subprocess.run([sys.executable, "-m", "arena", *argv], capture_output=True, text=True, cwd=ROOT, env=env,
                       timeout=300)  # fmt: skip
    assert p.returncode == 1, p.stderr
    assert "Traceback" not in p.stderr
    [result] = p.stdout.splitlines()
    m = re.search(r"\. (\d+) pairs? void: a game had no result \(a seat could not be started\), left out of the "
                  r"test; --resume plays them again\.$", result)  # fmt: skip
    assert m, result
    void = int(m.group(1))
    assert void >= 1 and result.startswith("no decision yet. 0 pairs: ")
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("arena: the comparison is not finished: ")
    assert last.endswith(f"go on with: {shlex.join(['arena', *argv, '--resume'])}")
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT winner, fault, deals FROM matches").fetchall()
    assert rows and all(fault == "handshake" and deals == 0 for _, fault, deals in rows)
    assert any(w is None for w, *_ in rows) == (broken == "both")  # both seats failed: no winner at all
    said, row = sprt_section(store)
    assert said == result  # the report reads the store the same way
    assert (row["pairs"], row["void"], row["status"], row["finished"]) == ("0", str(void), "continue", "False")

    (bin_ / "fixed").touch()
    p = subprocess.run([sys.executable, "-m", "arena", *argv, "--resume"], capture_output=True, text=True, cwd=ROOT,
                       env=env, timeout=300)  # fmt: skip
    assert p.returncode == 0, p.stderr
    [result] = p.stdout.splitlines()
    assert result.startswith("H1 accepted: the results favour a gain of 100 nElo over one of 0 nElo for fgreedy")
    assert "void" not in result
    pairs = int(re.search(r"\. (\d+) pairs: ", result).group(1))
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM matches WHERE deals = 0").fetchone() == (0,)
    said, row = sprt_section(store)
    assert said == result
    assert (row["status"], row["pairs"], row["void"], row["finished"]) == ("H1", str(pairs), "0", "True")


def test_two_copies_of_one_program_are_said_to_have_played_identically(tmp_path):
    """Agents' seeds derive from the match seed and the seat, so a copy of greedy mirrors it
    exactly: every pair splits 1-1 with mirror-image scores. Said in words, live and at the end,
    instead of a zero-width interval."""
    tmp_path.chmod(0o755)
    copy = agent(tmp_path, "copy", ["{python}", "agent.py"])  # greedy's program under another name
    p = arena("compare", str(copy), "greedy", "--fixed", "12", "--store", str(tmp_path / "c.sqlite"), "--verbose",
              "--no-report")  # fmt: skip
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    identical = (
        "every pair split 1-1 with mirror-image scores: the two agents played identically; no evidence either way"
    )
    assert lines[-1].startswith(
        f"inconclusive: every pair split 1-1, so the results cannot tell the two apart. 12 pairs: {identical} "
    )
    assert "every pair margin was +0 game points" in lines[-1]
    progress = [x for x in lines if x.startswith("pairs ")]
    assert progress[0].startswith("pairs 1 (0: 0, 1/2: 1, 1: 0)  Elo n/a (1 pair: no interval yet), LOS n/a")
    assert len(progress) == 12 and all(x.endswith(identical + " (no interval)") for x in progress[1:])
    assert "0.0]" not in p.stdout and "[-0.0" not in p.stdout


def test_plan_prints_the_simulated_operating_characteristics_without_playing(tmp_path):
    p = arena("compare", "--plan", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert out.startswith(
        "plan: GSPRT on normalized Elo, H0 elo0=0 nElo against H1 elo1=10 nElo, alpha=0.05, beta=0.05, at most "
        "20,000 pairs\nsimulated: 1,000 tests per true gain (seed 1), assuming 70% of pairs split 1-1 (--split)\n"
    )
    table = {x.split(" = ")[0]: x.split() for x in out.splitlines() if x.startswith(("elo0 =", "midway =", "elo1 ="))}
    assert set(table) == {"elo0", "midway", "elo1"}

    def pct(text: str) -> float:
        return float(text.rstrip("%")) / 100

    # columns: name = gain unit, P(H1), P(H0), P(cap), mean pairs, 90% within
    assert 0.02 <= pct(table["elo0"][4]) <= 0.08 and 0.92 <= pct(table["elo1"][4]) <= 0.98
    assert max(pct(table[k][6]) for k in table) <= 0.03
    assert "other split shares (the normalized model barely depends on it):" in out
    assert "  50% split: P(H1) " in out and "  90% split: P(H1) " in out
    assert not (tmp_path / "reports").exists()  # nothing played, nothing stored

    # a real run's header gives the same planned figures, in one line
    plan = arena("compare", "--plan", "--elo1", "100").stdout
    row = {x.split(" = ")[0]: x.split() for x in plan.splitlines() if x.startswith(("elo0 =", "elo1 ="))}
    run = arena("compare", "greedy", "random", "--elo1", "100", "--store", str(tmp_path / "c.sqlite"), "--no-report")
    assert run.returncode == 0, run.stderr
    [planned] = [x for x in run.stderr.splitlines() if x.startswith("planned (simulated")]
    assert f"P(H1) {row['elo0'][4]} at elo0, {row['elo1'][4]} at elo1; " in planned

    bad = arena("compare", "--plan", "--split", "1.2")
    assert bad.returncode == 2 and bad.stderr.startswith("arena: error: --split: must be at least 0 and below 1")
    none = arena("compare")
    assert none.returncode == 2 and none.stderr.startswith("arena: error: NEW and OLD: name the two versions")


def test_a_comparison_reads_stored_rows_and_records_alike_and_leaves_void_pairs_out():
    """In process: a pair with a match lost before play (a fault, no deal) or with no winner is
    void; the report's DataFrame records (NaN for a missing value) read the same as store rows;
    pairs are fed in pair order whatever the order the matches come in."""
    import pandas as pd

    from arena.tournament.compare import Comparison, has_result

    def row(pair, game, winner, fault=None, deals=5):
        seats = ("new", "old") if game == 0 else ("old", "new")
        return {"id": f"{pair}.{game}", "pair_index": pair, "game": game, "seat0": seats[0], "seat1": seats[1],
                "winner": winner, "score0": 7 if winner == 0 else 2, "score1": 7 if winner == 1 else 2,
                "fault": fault, "fault_deal": None, "deals": 0 if fault else deals}  # fmt: skip

    rows = [
        row(0, 0, 0), row(0, 1, 1),  # NEW won both
        row(1, 0, 1, fault="handshake"), row(1, 1, 1),  # lost before play: void
        row(2, 0, 1), row(2, 1, None, fault="handshake"),  # no winner at all: void
        row(3, 0, 0), row(3, 1, 0),  # split
    ]  # fmt: skip
    assert [has_result(r) for r in rows] == [True, True, False, True, True, False, True, True]
    settings = {"new": "new", "old": "old", "elo0": 0.0, "elo1": 10.0, "alpha": 0.05, "beta": 0.05,
                "max_pairs": 4, "fixed": False, "model": "normalized"}  # fmt: skip
    seen = []
    live = Comparison(settings)
    live.on_pair = lambda p: seen.append((p.index, p.score))
    for r in reversed(rows):
        live.add(r)
    assert seen == [(0, 1.0), (1, None), (2, None), (3, 0.5)]
    stored = Comparison.from_rows(rows, settings)
    records = Comparison.from_rows(pd.DataFrame(rows).to_dict("records"), settings)
    for c in (live, stored, records):
        assert (c.void, c.test.counts, c.margins) == (2, (0, 1, 1), [10, 0])
        assert not c.finished and c.test.status == "continue"
    assert live.describe() == stored.describe() == records.describe()
    assert live.describe().endswith(" 2 pairs void: a game had no result (a seat could not be started), left out of "
                                    "the test; --resume plays them again.")  # fmt: skip
    assert "; void 2)" in live.line()
    with pytest.raises(ValueError, match="read twice"):
        live.add(rows[0])
