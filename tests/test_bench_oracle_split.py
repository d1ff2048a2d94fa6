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
