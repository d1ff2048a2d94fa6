"""bench/oracle_split.py, the hand oracle at one kind of decision: a real run and its errors."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"


def run(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True, text=True, timeout=300)


def test_shown_nothing_it_is_the_expert_and_shown_the_hand_it_plays_otherwise():
    r = run("oracle_split.py", "none", "all", "close-choice", "--pairs", "2", "--workers", "1")
    assert r.returncode == 0, r.stderr
    results = re.findall(r"expert\[([a-z-]+)\] against heuristic.*\n(score .*)\n(game points .*)", r.stdout)
    assert [k for k, _, _ in results] == ["none", "all", "close-choice"]
    expert = run("strength.py", 'expert{"infer": true, "lead_model": "value"}', "heuristic",
                 "--pairs", "2", "--seed", "61", "--workers", "1")  # fmt: skip
    assert expert.returncode == 0, expert.stderr
    assert expert.stdout.splitlines()[1:] == list(results[0][1:])  # the same play, deal for deal
    assert results[1][1:] != results[0][1:]  # the hand changes the play


def test_an_unknown_kind_is_one_line_naming_the_kinds():
    r = run("oracle_split.py", "talon3")
    assert r.returncode != 0 and r.stdout == ""
    assert r.stderr.startswith("oracle_split.py: unknown kind 'talon3'; kinds: none, all, strict,")
    assert r.stderr.count("\n") == 1


def test_strength_plays_the_oracles_and_names_its_players_in_one_line():
    """bench/strength.py's ``oracle`` and ``hand-oracle`` are the expert's search shown the
    true world or hand: they play the same deals otherwise than the expert does, and the
    hand oracle's play is oracle_split's ``all``."""
    args = ("heuristic", "--pairs", "2", "--seed", "61", "--workers", "1")
    out = {name: run("strength.py", name + '{"infer": true, "lead_model": "value"}', *args)
           for name in ("expert", "oracle", "hand-oracle")}  # fmt: skip
    for r in out.values():
        assert r.returncode == 0, r.stderr
    lines = {name: r.stdout.splitlines()[1:] for name, r in out.items()}
    assert lines["oracle"] != lines["expert"] and lines["hand-oracle"] != lines["expert"]
    split = run("oracle_split.py", "all", "--pairs", "2", "--workers", "1")
    assert re.findall(r"\n(score .*)\n(game points .*)", split.stdout) == [tuple(lines["hand-oracle"])]
    bad = run("strength.py", "orcle", "heuristic")
    assert bad.returncode != 0 and bad.stdout == ""
    assert bad.stderr == (
        "strength.py: a player is heuristic, or expert, oracle or hand-oracle with optional {JSON}, got 'orcle'\n"
    )
