"""The bundled agents in all three languages, through the real ``arena`` commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.referee import MatchRecord

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ["random", "greedy", "node-greedy", "c-cautious"]


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
