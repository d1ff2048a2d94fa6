"""The ``arena`` command, run as a real subprocess the way a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def arena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("variant", ["sixty-six", "schnapsen"])
def test_selfplay_prints_wins_game_points_and_distribution(variant):
    p = arena("selfplay", "--variant", variant, "--agents", "random,greedy", "--matches", "30", "--seed", "4")
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "30 matches" in out and f"variant {variant}" in out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.startswith(("random ", "greedy "))}
    assert int(rows["random"][1]) + int(rows["greedy"][1]) == 30
    assert int(rows["greedy"][1]) > int(rows["random"][1])  # greedy is much the stronger
    assert "1 pt" in out and "how the deals each strategy won ended" in out


def test_selfplay_is_reproducible_and_seed_dependent():
    a = arena("selfplay", "--matches", "12", "--seed", "7", "--json")
    b = arena("selfplay", "--matches", "12", "--seed", "7", "--json")
    c = arena("selfplay", "--matches", "12", "--seed", "8", "--json")
    assert a.returncode == b.returncode == c.returncode == 0
    ra, rc = json.loads(a.stdout), json.loads(c.stdout)
    assert a.stdout == b.stdout and ra != rc
    t = ra["tallies"]
    assert sum(x["matches_won"] for x in t) == 12
    assert sum(x["deals_won"] for x in t) + ra["drawn_deals"] == ra["deals"]
    for x in t:
        assert sum(x["deals_won_by_points"].values()) == x["deals_won"]
        by = {int(k): v for k, v in x["deals_won_by_points"].items()}
        assert x["game_points"] == sum(k * v for k, v in by.items())  # no draw carry by default


@pytest.mark.parametrize(
    "args, message",
    [
        (["selfplay", "--variant", "skat"], "arena: error: --variant: unknown variant 'skat'"),
        (["selfplay", "--agents", "random,genius"], "arena: error: --agents: unknown strategy 'genius'"),
        (["selfplay", "--agents", "random"], "arena: error: --agents: expected two strategies"),
        (["selfplay", "--matches", "0"], "arena: error: --matches: must be at least 1"),
        (["selfplay", "--seed", "-3"], "arena: error: --seed: must be a non-negative integer"),
    ],
)
def test_bad_arguments_are_one_line_errors(args, message):
    p = arena(*args)
    assert p.returncode == 2
    assert p.stderr.strip() == p.stderr.strip().splitlines()[0]  # one line
    assert p.stderr.startswith(message)
    assert "Traceback" not in p.stderr


def test_rules_lists_presets_and_flags():
    p = arena("rules")
    assert p.returncode == 0
    assert "exchange_rank" in p.stdout and "schnapsen" in p.stdout
    presets = json.loads(arena("rules", "--json").stdout)
    assert presets["schnapsen"]["deck"] == 20


def test_no_command_prints_help():
    p = arena()
    assert p.returncode == 2 and "selfplay" in p.stdout
