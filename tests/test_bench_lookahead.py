"""bench/lookahead.py, the cost of a playout at each lookahead level: a real run and its errors."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "bench" / "lookahead.py"

pytest.importorskip("arena.bots._cplayout", reason="the C kernel is not built (no C compiler at install)")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("variant", ["sixty-six", "schnapsen"])
def test_each_level_is_timed_against_the_plain_playout(variant):
    r = run("--states", "12", "--samples", "2", "--levels", "0,1", "--variant", variant)
    assert r.returncode == 0, r.stderr
    assert f"{variant}: 12 open-talon states, 2 samples, C kernel" in r.stdout
    rows = re.findall(r"level (\d): +([\d.]+) µs a playout \(([\d.]+) to ([\d.]+)\), +([\d.]+)x level 0", r.stdout)
    assert [row[0] for row in rows] == ["0", "1"]
    for _, med, lo, hi, _ in rows:
        assert 0 < float(lo) <= float(med) <= float(hi)
    assert float(rows[0][4]) == 1.0


@pytest.mark.parametrize(
    "variant, why", [("three-pagat", "the kernel does not model three-pagat"), ("nonsense", "unknown variant")]
)
def test_a_variant_the_kernel_does_not_model_is_refused_in_one_line(variant, why):
    r = run("--states", "4", "--samples", "1", "--variant", variant)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("bench/lookahead.py: --variant: ") and why in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_pruned_level_is_timed_beside_the_full_one():
    r = run("--states", "8", "--samples", "1", "--levels", "0,2,2w2")
    assert r.returncode == 0, r.stderr
    rows = re.findall(r"level (\dw?\d?): +([\d.]+) µs a playout", r.stdout)
    assert [row[0] for row in rows] == ["0", "2", "2w2"] and all(float(x) > 0 for _, x in rows)


@pytest.mark.parametrize("levels", ["1w2", "2,x", "4", "2w40"])
def test_a_bad_level_list_is_refused_in_one_line(levels):
    r = run("--states", "4", "--samples", "1", "--levels", levels)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("bench/lookahead.py: --levels: ") and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("variant, talons", [("sixty-six", 12), ("schnapsen", 10)])
def test_by_talon_gives_one_row_per_talon_size_dearest_first(variant, talons):
    """``--by-talon``: a row per number of talon cards, from the deal's first lead down,
    its states counted (they add up to ``--states``) and each level's µs a playout."""
    r = run("--states", "40", "--samples", "1", "--levels", "0,2w2", "--variant", variant, "--by-talon")
    assert r.returncode == 0, r.stderr
    assert f"{variant}: 40 open-talon states, 1 samples, C kernel; µs a playout" in r.stdout
    rows = [tuple(map(float, m)) for m in re.findall(r"^ +(\d+) +(\d+) +([\d.]+) +([\d.]+)$", r.stdout, re.M)]
    assert rows[0][0] == talons and [t for t, *_ in rows] == sorted({t for t, *_ in rows}, reverse=True)
    assert sum(n for _, n, *_ in rows) == 40
    assert all(plain > 0 and deep > 0 for *_, plain, deep in rows)
    assert rows[0][3] > rows[-1][3]  # a pruned level-2 playout from the first lead costs more than from the last


@pytest.mark.parametrize("flag", ["--states", "--samples"])
def test_nothing_to_time_is_refused_in_one_line(flag):
    r = run("--states", "4", "--samples", "1", flag, "0")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == f"bench/lookahead.py: {flag}: must be 1 or more, got 0\n"
