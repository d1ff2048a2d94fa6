"""The bundled foreign-language agents at three and four seats (protocol version 2):
node-greedy (Node.js) and c-cautious (C99) negotiate the version, pass the conformance
suite in every table game, play legal and sound cards by their policy, and play matches
that replay in the engine and repeat exactly. Real processes, built as `arena check`
builds them (a staged copy of the folder)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
import trio
from running import replay_record

from arena.game import ALL_PRESETS, get_variant
from arena.ladder.submit import stage
from arena.play.conformance import check
from arena.play.duel import duel
from arena.play.referee import MatchRecord
from arena.protocol.codec import TimeControl
from arena.runtime.agents import Manifest, resolve
from arena.runtime.sandbox import Policy, Sandbox

FOREIGN = ["node-greedy", "c-cautious"]
TABLE_GAMES = [p for p in ALL_PRESETS if get_variant(p).players > 2]
TC = TimeControl(move_ms=2000, bank_ms=5000, first_move_ms=5000, grace_ms=500)
RANKS = "ATKQJ987"


@pytest.fixture(scope="module")
def staged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Sandbox, dict[str, Manifest]]]:
    """Each foreign agent copied and built once (the C agent by its manifest's cc line)."""
    work = tmp_path_factory.mktemp("foreign")
    with Sandbox(Policy(enabled=False)) as sandbox:
        yield sandbox, {name: stage(resolve(name), work / name, sandbox, 300.0) for name in FOREIGN}


def ready_for(m: Manifest, hello: dict[str, Any]) -> dict[str, Any]:
    """The agent's first line in answer to ``hello``."""
    lines = json.dumps(hello) + "\n" + '{"type":"quit"}\n'
    p = subprocess.run(m.command, input=lines, capture_output=True, text=True, cwd=m.folder, timeout=30)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.splitlines()[0])


@pytest.mark.parametrize("name", FOREIGN)
def test_the_agents_negotiate_version_2_and_answer_a_version_1_referee_in_version_1(staged, name):
    _, agents = staged
    hello = {"type": "hello", "protocol": 1, "protocol_minor": 2, "seed": 3,
             "variant": get_variant("sixty-six").to_dict(), "time_control": TC.to_dict()}  # fmt: skip
    v1 = ready_for(agents[name], hello)  # a 1.0/1.1 referee: no "protocols"
    assert v1["protocol"] == 1 and "games" not in v1 and v1["name"] == name
    v2 = ready_for(agents[name], {**hello, "protocols": [1, 2]})
    assert v2["protocol"] == 2 and v2["games"] == list(ALL_PRESETS)
    four = get_variant("four-pagat").to_dict()
    table = ready_for(agents[name], {**hello, "protocol": 2, "protocols": [2], "variant": four})
    assert table["protocol"] == 2 and "four-pagat" in table["games"]


@pytest.mark.parametrize("preset", TABLE_GAMES)
@pytest.mark.parametrize("name", FOREIGN)
def test_the_agents_pass_the_conformance_suite_in_every_table_game(staged, name, preset):
    sandbox, agents = staged
    items = trio.run(lambda: check(agents[name], lambda item: None, sandbox=sandbox, games=[preset]))
    assert all(i.ok for i in items), [f"{i.name}: {i.detail}" for i in items if not i.ok]
    assert f"match ({preset}, seat 0)" in [i.name for i in items]  # a whole match against random


# -- matches of node-greedy, c-cautious and random -----------------------------------------------
def decisions(lines: list[tuple[str, bytes]]) -> list[tuple[dict[str, Any], str]]:
    """Each request one seat got, with the action it answered."""
    asked: dict[int, dict[str, Any]] = {}
    out = []
    for direction, line in lines:
        m = json.loads(line)
        if direction == "to-agent" and m["type"] == "request":
            asked[m["id"]] = m
        elif direction == "from-agent" and m["type"] == "action":
            out.append((asked.pop(m["id"]), m["action"]))
    return out


def beats(card: str, winning: str, trump: str) -> bool:
    if card[1] == winning[1]:
        return RANKS.index(card[0]) < RANKS.index(winning[0])
    return card[1] == trump and winning[1] != trump


def check_policy(req: dict[str, Any], action: str) -> None:
    """What the table policy of both agents promises, on one real decision."""
    obs, legal = req["observation"], req["legal"]
    assert action in legal
    mine = obs["points"][obs["team"]]
    assert (action == "declare") == ("declare" in legal and mine >= 66), (obs, action)
    assert action != "bid:5"  # never the moon
    if action != "declare" and obs["phase"] in ("lead", "meld") and any(a.startswith("marry:") for a in legal):
        assert action.startswith("marry:")  # a marriage whenever one may be shown
    if obs["phase"] != "follow" or len(legal) == 1:
        return
    trick = obs["current_trick"]
    winning = dict((s, c) for s, c in trick["cards"])[trick["winning"]]
    plays = [a[5:] for a in legal]
    played = beats(action[5:], winning, obs["trump"])
    if obs["players"] == 4 and trick["winning"] == obs["partner"]:
        assert not played or all(beats(c, winning, obs["trump"]) for c in plays)  # the partner's trick stands
    elif any(beats(c, winning, obs["trump"]) for c in plays):
        assert played  # it takes a trick it can take


def replayed(rec: MatchRecord, preset: str) -> tuple:
    """The result the engine gives for the record's actions."""
    _, result = replay_record(rec, get_variant(preset))
    return result.winner, list(result.score), result.kind


@pytest.mark.parametrize(
    ("preset", "lineup"),
    [
        ("three-pagat", ["node-greedy", "c-cautious", "random"]),
        ("three-cutthroat", ["c-cautious", "random", "node-greedy"]),
        ("four-pagat", ["node-greedy", "c-cautious", "random", "random"]),
        ("kreuzmariage", ["c-cautious", "random", "node-greedy", "random"]),  # the 32-card pack
        ("four-bidding", ["node-greedy", "random", "c-cautious", "random"]),  # the two foreign agents partners
    ],
)
def test_a_table_of_node_greedy_c_cautious_and_random_replays_and_repeats(staged, preset, lineup):
    sandbox, agents = staged
    v = get_variant(preset)
    manifests = [agents.get(name) or resolve(name) for name in lineup]

    def play(transcripts: list[list[tuple[str, bytes]]]) -> MatchRecord:
        return trio.run(lambda: duel(manifests, 17, v, TC, transcripts=transcripts, sandbox=sandbox))

    ta: list[list[tuple[str, bytes]]] = [[] for _ in lineup]
    a, b = play(ta), play([[] for _ in lineup])
    assert a.forfeit is None and a.agents == [f"{name} 1.0.0" for name in lineup]
    assert (a.winner, a.score, a.kind) == replayed(a, preset)
    assert [d.actions for d in a.deals] == [d.actions for d in b.deals]  # same seed, same actions
    assert (a.winner, a.score, a.places) == (b.winner, b.score, b.places)
    for seat, name in enumerate(lineup):
        if name == "random":
            continue
        made = decisions(ta[seat])
        assert made and len(made) == len(a.latency_ms[seat])
        for req, action in made:
            check_policy(req, action)
        kinds = {action.split(":")[0] for _, action in made}
        assert "play" in kinds and kinds <= {"play", "marry", "declare", "pass", "bid", "trump"}


def test_three_sitout_deals_are_played_by_the_two_handed_logic(staged):
    """The dealer sits out and the other two play a two-handed hand: the agents get the
    two-handed observation there and answer it as in Sixty-Six (exchanges, draws)."""
    sandbox, agents = staged
    v = get_variant("three-sitout")
    transcripts: list[list[tuple[str, bytes]]] = [[] for _ in range(3)]
    lineup = [agents["node-greedy"], agents["c-cautious"], resolve("random")]
    rec = trio.run(lambda: duel(lineup, 5, v, TC, transcripts=transcripts, sandbox=sandbox))
    assert rec.forfeit is None and (rec.winner, rec.score, rec.kind) == replayed(rec, "three-sitout")
    for seat in (0, 1):
        made = decisions(transcripts[seat])
        assert made and all("talon_size" in req["observation"] for req, _ in made)
        assert all(action in ("exchange", "declare") for req, action in made if "exchange" in req["legal"])
        assert all(action != "declare" or req["observation"]["points"][req["observation"]["seat"]] >= 66
                   for req, action in made)  # fmt: skip
