"""Protocol version 2 on the wire: the JSON Schemas of its messages, the recorded table
transcripts (arena.play.transcripts), and the observation each seat is sent, checked
against the rules engine in every preset, with real agent processes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trio
from jsonschema import Draft202012Validator, ValidationError
from referencing import Registry, Resource
from running import feed_transcript

from arena.game import ALL_PRESETS, Match, TableState, Variant, get_variant, observation
from arena.game.table_observation import table_observation
from arena.game.variant import FLAG_VALUES
from arena.play import conformance, transcripts
from arena.play.referee import agent_seed
from arena.runtime.sandbox import Policy, Sandbox

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "protocol" / "schema"
V1_AGENT = str(ROOT / "tests" / "agents" / "broken" / "v1.toml")
#: What version 2 adds to the referee's messages (`hello.protocols` is older: 1.2).
V2_FIELDS = {"match_start": {"players", "partners", "opponents", "variant"}, "deal_start": {"seats"},
             "match_end": {"result"}}  # fmt: skip


@pytest.fixture(scope="module")
def v() -> dict[str, Draft202012Validator]:
    """A validator per schema file; the schemas refer to each other by relative ``$ref``."""
    schemas = {p.stem: json.loads(p.read_text()) for p in SCHEMAS.glob("*.json")}
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas.values())
    for s in schemas.values():
        Draft202012Validator.check_schema(s)
    return {name: Draft202012Validator(s, registry=registry) for name, s in schemas.items()}


def _wire(x: Any) -> Any:
    """``x`` as it arrives: through JSON (tuples become lists)."""
    return json.loads(json.dumps(x))


def _validate_all(v: dict[str, Draft202012Validator], lines: list[dict[str, Any]]) -> set[str]:
    kinds = set()
    for x in lines:
        assert set(x) == {"dir", "seat", "msg"} and x["dir"] in ("to-agent", "from-agent")
        msg = x["msg"]
        v[msg["type"]].validate(msg)
        kinds.add(msg["type"])
    return kinds


# -- the schemas ----------------------------------------------------------------------------------
def test_the_schemas_know_every_variant_flag_and_its_values(v):
    flags = v["hello"].schema["$defs"]["variant"]["properties"]
    assert set(flags) == set(FLAG_VALUES) | {"name", "target"}
    for flag, values in FLAG_VALUES.items():
        if flag != "target":
            assert flags[flag]["enum"] == list(values), flag
    for preset in ALL_PRESETS.values():
        v["hello"].validate({"type": "hello", "protocol": 1 if preset.players == 2 else 2, "variant": preset.to_dict(),
                             "time_control": {"move_ms": 1, "bank_ms": 0, "first_move_ms": 1, "grace_ms": 0,
                                              "clock": "wall"}, "seed": 0})  # fmt: skip


@pytest.mark.parametrize("name", list(transcripts.RECORDINGS))
def test_every_message_of_the_table_transcripts_matches_the_schemas(v, name):
    lines = transcripts.load(name)
    kinds = _validate_all(v, lines)
    assert kinds == {"hello", "ready", "match_start", "deal_start", "request", "action", "deal_end", "match_end"}
    phases = {x["msg"]["observation"]["phase"] for x in lines if x["msg"]["type"] == "request"}
    want = {"three-pagat": {"name", "lead", "follow"}, "four-pagat": {"lead", "meld", "follow"},
            "four-bidding": {"bid", "lead", "follow"}}[name]  # fmt: skip
    assert want <= phases
    players = transcripts.RECORDINGS[name].variant.players
    assert {x["seat"] for x in lines} == set(range(players))


@pytest.mark.parametrize(
    "schema, bad",
    [
        ("action", {"type": "action", "id": 1, "action": "bid:6"}),
        ("action", {"type": "action", "id": 1, "action": "trump:X"}),
        ("hello", {"type": "hello", "protocol": 1, "variant": {"name": "x", "players": 3, "deck": 24},
                   "time_control": {"move_ms": 1, "bank_ms": 0, "first_move_ms": 1, "grace_ms": 0, "clock": "wall"},
                   "seed": 0}),  # version 1 seats two
        ("match_start", {"type": "match_start", "match_id": "m", "seat": 2, "opponent": "x", "seed": 0}),
        ("match_start", {"type": "match_start", "match_id": "m", "seat": 0, "opponent": "x", "seed": 0,
                         "players": []}),  # version 2's fields come together
        ("deal_start", {"type": "deal_start", "match_id": "m", "deal": 0, "dealer": 0, "score": [-1, 0]}),
        ("deal_start", {"type": "deal_start", "match_id": "m", "deal": 0, "dealer": 0, "score": [0, 0], "x": 1}),
        ("match_end", {"type": "match_end", "match_id": "m", "winner": None, "score": [0, 7], "reason": "played"}),
    ],
)  # fmt: skip
def test_the_schemas_refuse_what_the_referee_never_sends(v, schema, bad):
    with pytest.raises(ValidationError):
        v[schema].validate(bad)


def test_the_table_observation_schema_is_strict(v):
    req = next(x["msg"] for x in transcripts.load("four-bidding") if x["msg"]["type"] == "request")
    obs = req["observation"]
    v["table_observation"].validate(obs)
    v["request"].validate(req)
    v["action"].validate({"type": "action", "id": 1, "action": "play:7C"})  # the 32-card pack
    for broken in (
        {**obs, "turn_up": None},  # a two-handed field
        {k: x for k, x in obs.items() if k != "bids"},
        {**obs, "hand_sizes": [6, 6, 6]},  # four seats
        {**obs, "points": [0, 0, 0]},  # two teams
        {**obs, "hand": ["1C"]},
        {**obs, "phase": "draw"},
        {**obs, "bids": [{"seat": 0, "bid": 6}]},
    ):
        with pytest.raises(ValidationError):
            v["table_observation"].validate(broken)
        with pytest.raises(ValidationError):
            v["request"].validate({**req, "observation": broken})


# -- the recorded transcripts -----------------------------------------------------------------------
@pytest.mark.parametrize("name", list(transcripts.RECORDINGS))
def test_table_transcripts_replay_exactly(name):
    """The files are what the code gives now (the agents' seeds come from the referee)."""
    assert trio.run(transcripts.record, name) == transcripts.load(name)


@pytest.mark.parametrize("name", list(transcripts.RECORDINGS))
def test_a_seats_lines_fed_to_its_agent_give_its_recorded_answers(name):
    """How an author replays a table transcript (SPEC.md section 11): one seat's lines in,
    the recorded answers out, for a seat that also follows (seat 1)."""
    got, want = feed_transcript(transcripts.load(name), 1, transcripts.RECORDINGS[name].agents[1])
    assert got == want


# -- the wire observation is the engine's ---------------------------------------------------------
#: A short match of each preset: (variant, seed). The recorded ones are read from their files.
MATCHES = {
    "sixty-six": (get_variant("sixty-six"), 2),
    "schnapsen": (get_variant("schnapsen"), 3),
    "three-sitout": (get_variant("three-sitout"), 3),
    "three-cutthroat": (Variant.from_dict({"base": "three-cutthroat", "target": 5}), 2),
    "kreuzmariage": (get_variant("kreuzmariage"), 4),
}


def _transcript(preset: str) -> tuple[Variant, int, list[dict[str, Any]]]:
    if preset in transcripts.RECORDINGS:
        r = transcripts.RECORDINGS[preset]
        return r.variant, r.seed, transcripts.load(preset)
    variant, seed = MATCHES[preset]
    with Sandbox(Policy(enabled=False)) as sandbox:
        lines = trio.run(lambda: transcripts.record_match(["random"] * variant.players, seed, variant, sandbox=sandbox))
    return variant, seed, lines


def _engine_observation(state: Any, seat: int) -> dict[str, Any]:
    if isinstance(state, TableState):
        return table_observation(state, seat)
    return observation(state, seat)


@pytest.mark.parametrize("preset", list(ALL_PRESETS))
def test_every_request_carries_the_engines_observation(v, preset):
    """Replay the match in the engine: every seat's messages (deal starts, requests, deal
    ends, the match end) are what the engine says at that point for that seat."""
    variant, seed, lines = _transcript(preset)
    _validate_all(v, lines)
    n = variant.players
    sent = [[x["msg"] for x in lines if x["seat"] == s and x["dir"] == "to-agent"] for s in range(n)]
    answers = [
        {m["id"]: m["action"] for x in lines if x["seat"] == s and x["dir"] == "from-agent" for m in [x["msg"]]
         if m["type"] == "action"}
        for s in range(n)
    ]  # fmt: skip
    of = [{k: [m for m in sent[s] if m["type"] == k] for k in ("request", "deal_start", "deal_end")} for s in range(n)]
    requests = [iter(of[s]["request"]) for s in range(n)]
    for s in range(n):
        [start] = [m for m in sent[s] if m["type"] == "match_start"]
        assert start["seed"] == agent_seed(seed, s) and start["variant"] == variant.to_dict()
    match = Match(variant, seed)
    asked = 0
    while not match.is_over():
        state = match.new_deal()
        k = state.deal_no
        score = _wire(match.score)
        for s in range(n):
            start = of[s]["deal_start"][k]
            assert (start["deal"], start["dealer"], start["score"], start["seats"]) == (
                k, state.dealer, score, list(match.seats)
            )  # fmt: skip
        while not state.is_over():
            ds = state.current_player()
            seat = match.seats[ds]
            req = next(requests[seat])
            assert req["seat"] == ds
            assert req["observation"] == _wire(_engine_observation(state, ds)), (preset, k, req["id"])
            assert req["legal"] == state.legal_action_strings()
            state.apply_action(answers[seat][req["id"]])
            asked += 1
        match.finish_deal()
        for s in range(n):
            end = of[s]["deal_end"][k]
            assert (end["result"], end["score"]) == (_wire(state.result.to_dict()), _wire(match.score))
    assert all(next(r, None) is None for r in requests) and asked == sum(len(of[s]["request"]) for s in range(n))
    assert asked > 0 and len(match.deals) >= 2
    if variant.deck == 32:  # the 8s and 7s reach the wire
        assert any(a[-2] in "87" for s in range(n) for r in of[s]["request"] for a in r["legal"] if a[:5] == "play:")
    assert all(len(of[s]["deal_end"]) == len(match.deals) for s in range(n))
    result = match.result
    for s in range(n):
        [end] = [m for m in sent[s] if m["type"] == "match_end"]
        assert (end["winner"], end["score"], end["reason"]) == (result.winner, _wire(result.score), "played")
        assert end["result"]["kind"] == result.kind


def test_a_version_1_agent_gets_no_field_of_version_2(v):
    """A version-1 agent beside a version-2 one in a two-handed game: its lines are version
    1's, and they match the schemas' version-1 shapes."""
    variant = get_variant("sixty-six")
    with Sandbox(Policy(enabled=False)) as sandbox:
        lines = trio.run(lambda: transcripts.record_match([V1_AGENT, "random"], 2, variant, sandbox=sandbox))
    _validate_all(v, lines)
    for seat, version in ((0, 1), (1, 2)):
        got = [x["msg"] for x in lines if x["seat"] == seat]
        assert next(m for m in got if m["type"] == "ready")["protocol"] == version
        for m in got:
            added = V2_FIELDS.get(m["type"], set()) & set(m)
            assert added == (set() if version == 1 else V2_FIELDS.get(m["type"], set())), m
        assert not any("games" in m for m in got if m["type"] == "ready" and version == 1)


def test_the_two_handed_transcript_and_the_positions_match_the_schemas(v):
    """Version 1's example (a version-2 agent in each seat) and positions stay valid, and
    the table positions are requests of version 2."""
    lines = [json.loads(x) for x in conformance.TRANSCRIPT_FILE.read_text().splitlines()]
    _validate_all(v, lines)
    for p in conformance.load_positions():
        v["observation"].validate(p["observation"])
    table = conformance.EXAMPLES / "table-positions.jsonl"
    if not table.is_file():
        pytest.skip("no table positions recorded yet")
    games = set()
    for line in table.read_text().splitlines():
        p = json.loads(line)
        obs = p["observation"]
        request = {"type": "request", "id": 1, "match_id": "m", "seat": obs["seat"], "observation": obs,
                   "legal": p["legal"], "time_left_ms": 1000}  # fmt: skip
        v["request"].validate(request)
        v["observation" if p["variant"]["name"] == "three-sitout" else "table_observation"].validate(obs)
        games.add(p["variant"]["name"])
    assert games == {name for name, x in ALL_PRESETS.items() if x.players > 2}
