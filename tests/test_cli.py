"""The ``arena`` command, run as a real subprocess the way a user runs it."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from running import arena, interrupt_after
from running import count as stored

from arena.game import ALL_PRESETS

ROOT = Path(__file__).resolve().parent.parent
#: An agent that declares only the two-handed games.
TWO_HANDED = str(ROOT / "tests" / "agents" / "broken" / "two-handed.toml")


def resume_hint(err: str) -> list[str]:
    """The command an interrupted run says resumes it (without the leading ``arena``)."""
    last = err.strip().splitlines()[-1]
    assert last.startswith("arena: interrupted: ") and "resume with: " in last, err
    words = shlex.split(last.split("resume with: ", 1)[1])
    assert words[0] == "arena"
    return words[1:]


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
        # the three- and four-handed games: refused before any process starts (or folder is made)
        (["match", "random", "greedy", "--variant", "four-pagat"], "arena: error: four-pagat seats 4 agents; 2 given"),
        (["compare", "random", "greedy", "--variant", "three-sitout", "--reference", TWO_HANDED, "--fixed", "2"],
         "arena: error: --reference: agent 'two-handed' plays only sixty-six, schnapsen (field 'variants' of "),
        (["ladder", "init", "/nonexistent/lad", "--variant", "five-handed"],
         "arena: error: flags: field 'variant' is not a valid variant: unknown variant 'five-handed'"),
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
    head, out_timing = (next(x for x in p.stdout.splitlines() if x.startswith(k)) for k in ("flag", "out_timing"))
    assert head.split()[1:-1] == list(ALL_PRESETS)  # one column per preset
    assert out_timing.split()[1:-3] == [ALL_PRESETS[n].out_timing for n in ALL_PRESETS]  # columns never run together
    presets = json.loads(arena("rules", "--json").stdout)
    assert presets["schnapsen"]["deck"] == 20


def test_a_bare_arena_prints_the_help_with_where_to_start():
    p = arena()
    assert p.returncode == 0 and p.stderr == ""
    assert p.stdout == arena("--help").stdout
    listed = [line.split()[0] for line in p.stdout.split("COMMAND\n", 1)[1].splitlines() if line.startswith("    ")]
    assert listed[0] == "demo" and {"tournament", "agents", "selfplay", "ladder"} <= set(listed)
    start = p.stdout.split("start here:", 1)[1]
    assert start.index("arena demo") < start.index("arena tournament") and "docs/" in start


def test_argparse_errors_are_one_line(tmp_path):
    for args in (["nonsense"], ["tournament", "--format", "swiss"], ["ladder"], ["tournament", "--pairs", "x"]):
        p = arena(*args)
        assert p.returncode == 2 and p.stderr.startswith("arena: error: "), p.stderr
        assert len(p.stderr.strip().splitlines()) == 1 and "--help" in p.stderr


# -- Ctrl-C, and resuming from the store alone ---------------------------------------------------------------
def test_ctrl_c_says_what_is_stored_and_the_store_alone_resumes_the_tournament(tmp_path):
    store = tmp_path / "t.sqlite"
    args = ["tournament", "--agents", "random,greedy", "--pairs", "60", "--concurrency", "2", "--store", str(store),
            "--move-ms", "500", "--no-report"]  # fmt: skip
    status, _, err = interrupt_after(args, store, 4)
    assert status == 130 and "Traceback" not in err
    partial = stored(store)
    assert f"arena: interrupted: {partial} of 120 matches are in {store}" in err
    again = resume_hint(err)
    assert again == ["tournament", "--store", str(store), "--resume"]  # the config is in the store
    p = arena(*again, "--quiet", "--no-report")
    assert p.returncode == 0, p.stderr
    assert stored(store) == 120 and f"{120 - partial} matches played now, 120 of 120" in p.stdout
    with sqlite3.connect(store) as db:  # the same tournament went on: its secret, its time control
        config = json.loads(db.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()[0])
        runs = db.execute("SELECT matches_played FROM runs ORDER BY id").fetchall()
    assert config["seed"] == "secret" and config["time_control"]["move_ms"] == 500
    assert [r[0] for r in runs] == [partial, 120 - partial]


def test_resuming_from_a_store_that_holds_no_tournament_is_one_line(tmp_path):
    p = arena("tournament", "--store", tmp_path / "none.sqlite", "--resume")
    assert p.returncode == 2 and p.stderr.startswith("arena: error: ") and "no such store" in p.stderr
    p = arena("tournament", "--resume")
    assert p.returncode == 2 and "--store STORE --resume" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


# -- --help: every default shown ------------------------------------------------------------------------------
#: Options that have no default: off, or nothing, unless given.
NO_DEFAULT = {
    ("tournament", "--agents"), ("tournament", "--challenger"), ("tournament", "--secret-file"),
    ("tournament", "--shard"), ("tournament", "--events"), ("compare", "--fixed"), ("compare", "--secret-file"),
    ("match", "--record"), ("secret", "--out"), ("submit", "--ladder"), ("ladder run", "--events"),
    ("ladder standings", "--csv"),
}  # fmt: skip


def _parsers(parser, path):
    """``parser`` and its subcommands' parsers, with their command words."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _parsers(child, [*path, name])


def _option_help(text: str) -> dict[str, str]:
    """Each option string of a ``--help`` page -> its help text (lines joined)."""
    out: dict[str, str] = {}
    current: list[str] = []
    for line in text.splitlines():
        if line.startswith("  -"):
            invocation, _, help_text = line.strip().partition("  ")
            current = [part.split()[0] for part in invocation.split(", ")]
            for opt in current:
                out[opt] = help_text.strip()
        elif line.startswith("   ") and current:
            for opt in current:
                out[opt] = f"{out[opt]} {line.strip()}".strip()
        else:
            current = []
    return out


def test_every_option_shows_its_default_and_choices_in_help():
    """Walks every command (and ladder's actions): the real ``arena CMD --help`` output shows
    each option's default, or says what it is; choices are listed."""
    from arena.cli.commands import COMMANDS
    from arena.cli.main import command_parser
    from arena.game import PRESETS

    seen = 0
    for name in COMMANDS:
        for path, parser in _parsers(command_parser(name), [name]):
            p = subprocess.run([sys.executable, "-m", "arena", *path, "--help"], capture_output=True, text=True,
                               timeout=120, cwd=ROOT, env={**os.environ, "COLUMNS": "300"})  # fmt: skip
            assert p.returncode == 0, p.stderr
            helps = _option_help(p.stdout)
            where = " ".join(path)
            for action in parser._actions:
                if not action.option_strings or isinstance(action, argparse._HelpAction | argparse._VersionAction):
                    continue
                opt = next((o for o in action.option_strings if o.startswith("--")), action.option_strings[0])
                text = helps[opt]
                seen += 1
                if action.default is not None and action.default is not False:
                    assert "default" in text and str(action.default) in text, (where, opt, text)
                elif action.nargs != 0 and (where, opt) not in NO_DEFAULT:
                    assert "default" in text, f"arena {where} {opt}: its help says no default: {text!r}"
                for choice in action.choices or ():
                    assert choice in text or choice in p.stdout.split(opt, 1)[1].split("\n", 1)[0], (where, opt)
                if opt == "--variant":
                    assert all(preset in text for preset in PRESETS), (where, text)
    assert seen > 80


def test_ladder_init_words_its_time_control_for_a_new_ladder():
    text = arena("ladder", "init", "--help").stdout
    assert "override the config" not in text and "time control of the ladder's matches" in text
    assert "(default: 1000)" in " ".join(text.split())


# -- selfplay takes every built-in strategy ---------------------------------------------------------------------
@pytest.mark.parametrize("pairing, matches", [("heuristic,greedy", "20"), ("expert,random", "2")])
def test_selfplay_accepts_every_built_in_strategy(pairing, matches):
    p = arena("selfplay", "--agents", pairing, "--matches", matches, "--seed", "2", "--json")
    assert p.returncode == 0, p.stderr
    tallies = {t["name"]: t["matches_won"] for t in json.loads(p.stdout)["tallies"]}
    strong, weak = pairing.split(",")
    assert tallies[strong] + tallies[weak] == int(matches) and tallies[strong] > tallies[weak]
    assert p.stdout == arena("selfplay", "--agents", pairing, "--matches", matches, "--seed", "2", "--json").stdout
    listed = arena("selfplay", "--agents", "random,genius").stderr
    assert "random, greedy, heuristic, expert" in listed


def test_selfplay_of_a_strategy_against_itself_tells_the_two_apart():
    p = arena("selfplay", "--agents", "greedy,greedy", "--matches", "6", "--json")
    assert p.returncode == 0, p.stderr
    tallies = json.loads(p.stdout)["tallies"]
    assert [t["name"] for t in tallies] == ["greedy#1", "greedy#2"] and sum(t["matches_won"] for t in tallies) == 6
    text = arena("selfplay", "--agents", "greedy,greedy", "--matches", "6").stdout
    rows = [line.split()[0] for line in text.splitlines() if line.startswith("greedy")]
    assert rows[:2] == ["greedy#1", "greedy#2"]


# -- arena agents -------------------------------------------------------------------------------------------------
def test_agents_lists_the_bundled_ones_and_those_of_a_folder(tmp_path):
    mine = tmp_path / "agents" / "mine"
    mine.mkdir(parents=True)
    manifest = 'name = "mine"\nversion = "0.3"\nlanguage = "python"\ncommand = ["{python}", "agent.py"]\n'
    (mine / "agent.toml").write_text(manifest + 'description = "my first agent"\n')
    (tmp_path / "agents" / "broken").mkdir()
    (tmp_path / "agents" / "broken" / "agent.toml").write_text('name = "broken"\n')
    p = arena("agents", cwd=tmp_path)  # ./agents is where names are looked up first
    assert p.returncode == 0, p.stderr
    out = p.stdout
    for name in ("random", "greedy", "heuristic", "expert", "node-greedy", "c-cautious"):
        assert f"  {name} " in out
    assert "  mine " in out and "my first agent" in out and "{python} agent.py" in out
    assert "broken" in out and "BROKEN: " in out and "missing field" in out  # shown, not silently skipped
    assert "node agent.js" in out and "javascript" in out
    assert out.index("./agents: by name or folder") < out.index("bundled (")
    entries = json.loads(arena("agents", "--json", cwd=tmp_path).stdout)
    c = next(e for e in entries if e.get("name") == "c-cautious")
    assert c["language"] == "c" and c["command"] == ["./agent"] and c["build"][0] == "cc" and c["description"]
    # a folder given: its agents too, manifest files included
    given = arena("agents", ROOT / "tests" / "agents" / "broken", "--json")
    names = {e.get("name") for e in json.loads(given.stdout) if not e["by_name"]}
    assert {"crash-at-start", "parrot", "wrong-version"} <= names
    missing = arena("agents", tmp_path / "nowhere")
    assert missing.returncode == 2 and missing.stderr.startswith("arena: error: ") and "nowhere" in missing.stderr
