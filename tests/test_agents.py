"""The bundled agents in all three languages, through the real ``arena`` commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.game import TABLE_PRESETS
from arena.play.referee import MatchRecord

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ["random", "greedy", "heuristic", "node-greedy", "c-cautious"]


def arena(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )


@pytest.mark.parametrize("agent", BUNDLED)
def test_every_bundled_agent_passes_the_conformance_suite(agent, tmp_path):
    p = arena("check", f"agents/{agent}", "--logs", str(tmp_path / "logs"))
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert not any(line.startswith("FAIL") for line in lines)
    assert sum(line.startswith("PASS") for line in lines) >= 18
    assert lines[-1].endswith("passed, 0 failed")
    assert any(line.startswith("PASS  position (schnapsen)") for line in lines)
    assert any(line.startswith("PASS  position (sixty-six-close-offer)") for line in lines)
    for game in TABLE_PRESETS:  # they all play every table game too: positions and a match each
        assert any(line.startswith(f"PASS  position ({game})") for line in lines), game
        assert any(line.startswith(f"PASS  match ({game}") for line in lines), game


@pytest.mark.parametrize("variant", ["sixty-six", "schnapsen"])
def test_cross_language_match_is_legal_and_reproducible(variant, tmp_path):
    runs = []
    for k in range(2):
        rec_path = tmp_path / f"m{k}.json"
        p = arena("match", "node-greedy", "c-cautious", "--seed", "21", "--variant", variant, "--record",
                  str(rec_path), "--logs", str(tmp_path / "logs"))  # fmt: skip
        assert p.returncode == 0, p.stderr
        runs.append((p.stdout, MatchRecord.from_dict(json.loads(rec_path.read_text()))))
    (out_a, a), (out_b, b) = runs
    assert a.forfeit is None and max(a.score) >= 7
    assert [d.actions for d in a.deals] == [d.actions for d in b.deals]
    play_by_play = lambda out: [x for x in out.splitlines() if not x.startswith("record:")]  # noqa: E731
    assert play_by_play(out_a) == play_by_play(out_b)
    assert "deal 0:" in out_a and out_a.splitlines()[-2].startswith("result: ")
    assert a.agents == ["node-greedy 1.0.0", "c-cautious 1.0.0"]


def test_match_command_play_by_play_and_record(tmp_path):
    rec_path = tmp_path / "sub" / "match.json"
    p = arena("match", "random", "greedy", "--seed", "2", "--record", str(rec_path), "--logs", str(tmp_path))
    assert p.returncode == 0, p.stderr
    out = p.stdout.splitlines()
    assert out[0].startswith("deal 0: ") and "trump" in out[0]
    assert any(line.strip().startswith("-> ") for line in out)
    rec = json.loads(rec_path.read_text())
    assert rec["seed"] == 2 and rec["variant"]["name"] == "sixty-six" and rec["deals"]
    assert sum(len(d["actions"]) for d in rec["deals"]) == len(rec["latency_ms"][0]) + len(rec["latency_ms"][1])
    assert out[-2] == f"result: {['random', 'greedy'][rec['winner']]} wins " + (
        f"{rec['score'][0]}-{rec['score'][1]} (margin {rec['margin']}) in {len(rec['deals'])} deals"
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["match", "nobody", "greedy"], "arena: error: unknown agent 'nobody'"),
        (["match", "random", "greedy", "--variant", "skat"], "arena: error: --variant: unknown variant 'skat'"),
        (["match", "random", "greedy", "--move-ms", "-5"], "arena: error: time control: time control 'move_ms'"),
        (["check", "tests/agents"], "arena: error: tests/agents: no agent.toml in this folder"),
    ],
)
def test_bad_match_and_check_arguments_are_one_line_errors(args, message):
    p = arena(*args)
    assert p.returncode == 2 and p.stderr.startswith(message), p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_a_bad_build_is_a_one_line_error(tmp_path):
    (tmp_path / "agent.toml").write_text(
        'name = "nobuild"\nversion = "1"\nlanguage = "c"\ncommand = ["./agent"]\n'
        'build = ["cc", "-o", "agent", "missing.c"]\n'
    )
    p = arena("check", str(tmp_path))
    assert p.returncode == 2 and "build failed (status 1)" in p.stderr and "missing.c" in p.stderr


@pytest.mark.parametrize(
    "broken, failing",
    [("crash-at-start", "FAIL  handshake: handshake:"), ("illegal", "FAIL  match (sixty-six, seat 0): illegal-action")],
)
def test_check_reports_failures_with_reasons(broken, failing):
    p = arena("check", f"tests/agents/broken/{broken}.toml")
    assert p.returncode == 1
    assert any(line.startswith(failing) for line in p.stdout.splitlines()), p.stdout
    assert p.stdout.splitlines()[-1].endswith("failed") and not p.stdout.splitlines()[-1].endswith(" 0 failed")


# -- what check and submit agree on, and what a manifest may say ---------------------------------
DOT_AGENT = """\
import json
from pathlib import Path

from arena.sdk import run

PREFS = json.loads(Path({prefs!r}).read_text())


def choose(observation, legal):
    return legal[PREFS["pick"] % len(legal)]


if __name__ == "__main__":
    raise SystemExit(run(choose, name="dotty", version="1.0"))
"""


def write_agent(folder: Path, manifest: str, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True)
    (folder / "agent.toml").write_text(manifest)
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def test_check_runs_the_agent_from_the_copy_submit_stores(tmp_path):
    """A folder whose agent needs a dot-file: submit's stored copy leaves it out, so check
    (which runs the same copy) fails too, and both say what was left out. Without the
    dot-file the two pass alike."""
    manifest = 'name = "dotty"\nversion = "1.0"\nlanguage = "python"\ncommand = ["{python}", "agent.py"]\n'
    folder = write_agent(
        tmp_path / "dotty", manifest, {"agent.py": DOT_AGENT.format(prefs=".prefs.json"), ".prefs.json": '{"pick": 1}'}
    )
    logs = str(tmp_path / "logs")
    p = arena("check", str(folder), "--logs", logs)
    assert p.returncode == 1, p.stdout + p.stderr
    out = p.stdout.splitlines()
    assert "note: the agent runs without .prefs.json (dot-files and what .gitignore lists" in p.stdout
    assert any(line.startswith("FAIL  handshake: handshake: dotty exited with status 1") for line in out), p.stdout
    p = arena("submit", str(folder))
    assert p.returncode == 2
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith(f"arena: error: {folder / 'agent.toml'}: conformance check failed: handshake:")
    assert last.endswith("(the stored copy leaves out .prefs.json: dot-files and what .gitignore lists are "
                         "not part of an agent)")  # fmt: skip

    (folder / ".prefs.json").rename(folder / "prefs.json")
    (folder / "agent.py").write_text(DOT_AGENT.format(prefs="prefs.json"))
    p = arena("check", str(folder), "--logs", logs)
    assert p.returncode == 0 and "note:" not in p.stdout, p.stdout
    p = arena("submit", str(folder))
    assert p.returncode == 0 and "dotty@1.0: valid, built and conformant" in p.stdout, p.stderr


SCHNAPSEN_ONLY = """\
import sys

from arena.sdk import run


def choose(observation, legal):
    if observation["variant"] != "schnapsen":
        print("schnap-only: asked to play " + observation["variant"], file=sys.stderr)
        raise SystemExit(3)
    return legal[0]


if __name__ == "__main__":
    raise SystemExit(run(choose, name="schnap-only", version="1.0"))
"""


def test_an_agent_that_plays_only_schnapsen_says_so_and_is_paired_only_there(tmp_path):
    manifest = (
        'name = "schnap-only"\nversion = "1.0"\nlanguage = "python"\ncommand = ["{python}", "agent.py"]\n'
        'variants = ["schnapsen"]\n'
    )
    folder = str(write_agent(tmp_path / "schnap", manifest, {"agent.py": SCHNAPSEN_ONLY}))
    logs = str(tmp_path / "logs")
    p = arena("check", folder, "--logs", logs)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "plays only schnapsen (field 'variants'): the other games are not checked" in p.stdout
    items = [line for line in p.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert not any("sixty-six" in line for line in items), p.stdout
    assert any(line.startswith("PASS  position (schnapsen)") for line in items)
    assert {line.split(":")[0] for line in items if "match" in line} == {
        "PASS  match (schnapsen, seat 0)", "PASS  match (schnapsen, seat 1)"
    }  # fmt: skip

    refusal = f"plays only schnapsen (field 'variants' of {folder}/agent.toml), not sixty-six"
    for args in (
        ["match", folder, "random", "--logs", logs],
        ["tournament", "--agents", f"{folder},random", "--pairs", "1", "--store", str(tmp_path / "t.sqlite")],
    ):
        p = arena(*args)
        assert p.returncode == 2 and p.stderr.startswith("arena: error: --variant: agent 'schnap-only' "), p.stderr
        assert refusal in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "t.sqlite").exists()
    p = arena("match", folder, "random", "--variant", "schnapsen", "--seed", "3", "--logs", logs)
    assert p.returncode == 0 and "result: " in p.stdout, p.stderr

    ladder = tmp_path / "ladder"
    assert arena("ladder", "init", str(ladder)).returncode == 0
    p = arena("submit", folder, "--ladder", str(ladder))
    assert p.returncode == 2 and refusal in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


@pytest.mark.parametrize(
    "manifest, message",
    [
        ('name = "x"\n', "missing fields 'version', 'language', 'command' (required: name, version, language, "
                         "command; optional: build, description, env, variants)"),
        ('name = "x"\nversion = "1"\nlanguage = "c"\n', "missing field 'command' (required: "),
        ('name = "x"\nversion = "1"\nlanguage = "c"\ncommand = ["./a"]\nvariants = ["skat"]\n',
         "field 'variants' names 'skat'; the games are sixty-six, schnapsen"),
        ('name = "x"\nversion = "1"\nlanguage = "c"\ncommand = ["./a"]\nvariants = []\n',
         "field 'variants' must be a non-empty list of strings"),
    ],
)  # fmt: skip
def test_manifest_errors_name_every_missing_field_in_one_line(tmp_path, manifest, message):
    (tmp_path / "agent.toml").write_text(manifest)
    p = arena("check", str(tmp_path))
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert p.stderr.startswith(f"arena: error: {tmp_path / 'agent.toml'}: {message}"), p.stderr
