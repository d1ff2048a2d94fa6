"""bench/closing.py, the position A/B for the close: a real run and its errors."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "bench" / "closing.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300)


def test_same_positions_finished_by_each_configuration():
    """The same configuration twice agrees at every position (the finish is deterministic);
    a lower margin closes more often on the same positions."""
    quick = 'expert{"effort": 0.2}'
    low = 'expert{"effort": 0.2, "CLOSE_MARGIN": -1.0}'
    r = run(quick, quick, low, "--matches", "1", "--workers", "1")
    assert r.returncode == 0, r.stderr
    n = int(re.search(r"against heuristic: (\d+) positions", r.stdout).group(1))
    assert n >= 10
    closes = [int(x) for x in re.findall(r"closes at (\d+)", r.stdout)]
    assert len(closes) == 3 and closes[0] == closes[1] < closes[2]
    assert "[1] - [0]: +0.000 ± 0.000 (first action differs at 0, result at 0)" in r.stdout
    parted = re.search(r"\[2\] - \[0\]: .* \(first action differs at (\d+)", r.stdout)
    assert int(parted.group(1)) >= closes[2] - closes[0]


def test_positions_at_a_talon_size_for_the_open_phase():
    """``--at 4``: every decision with a choice while the talon holds four cards; solving
    them exactly (``EXACT_TALON``) parts from the playouts at some of them."""
    quick = 'expert{"effort": 0.2}'
    exact = 'expert{"effort": 0.2, "EXACT_TALON": 4}'
    r = run(quick, quick, exact, "--matches", "1", "--workers", "1", "--at", "4")
    assert r.returncode == 0, r.stderr
    n = int(re.search(r"against heuristic: (\d+) positions", r.stdout).group(1))
    assert n >= 4
    assert "[1] - [0]: +0.000 ± 0.000 (first action differs at 0, result at 0)" in r.stdout
    assert int(re.search(r"\[2\] - \[0\]: .* \(first action differs at (\d+)", r.stdout).group(1)) >= 1
    # no decision is taken with an odd number of talon cards in Sixty-Six
    r = run(quick, "--matches", "1", "--workers", "1", "--at", "3")
    assert r.returncode != 0 and r.stdout == ""
    assert r.stderr == "closing.py: fewer than two positions with 3 talon cards; play more matches\n"


@pytest.mark.parametrize(
    "args, message",
    [
        (["heuristic"], "closing.py: every CONFIG is an expert{...}"),
        (["expert", "--variant", "nope"], "closing.py: unknown variant 'nope'"),
        (["expert", "--variant", "three-pagat"], "closing.py: the expert plays two-handed games"),
        (['expert{"bogus": 1}'], "closing.py: ExpertStrategy has no setting 'bogus'"),
        (["expert{oops"], "closing.py: 'expert{oops': bad JSON"),
    ],
)
def test_bad_input_is_one_line(args, message):
    r = run(*args)
    assert r.returncode != 0 and r.stdout == ""
    assert r.stderr.startswith(message) and r.stderr.count("\n") == 1, r.stderr
