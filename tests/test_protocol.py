"""The wire codec (arena.protocol.codec), the JSON Schemas, and the recorded examples."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, ValidationError
from referencing import Registry, Resource
from running import feed_transcript

from arena.bots.search import sample_worlds
from arena.game import Variant, new_deal, observation, parse_card
from arena.game.cards import POINTS
from arena.play import conformance
from arena.protocol.codec import (
    MAX_AGENT_LINE,
    PROTOCOL_MINOR,
    AgentProtocolError,
    Answer,
    DealEnd,
    DealStart,
    Hello,
    LineSplitter,
    MatchEnd,
    MatchStart,
    Ping,
    Pong,
    Quit,
    Ready,
    Request,
    decode_agent_line,
    decode_referee_line,
    encode,
)

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "protocol" / "schema"

REFEREE_MESSAGES = [
    Hello(
        protocol=1, variant={"name": "sixty-six", "players": 2, "deck": 24}, time_control={"move_ms": 1}, seed=2**64 - 1
    ),
    MatchStart(match_id="m", seat=1, opponent="greedy", seed=2**64 - 1),
    DealStart(match_id="m", deal=0, dealer=1, score=[0, 0]),
    Request(id=3, match_id="m", seat=0, observation={"hand": ["AH"]}, legal=["play:AH"], time_left_ms=900),
    DealEnd(match_id="m", deal=0, result={"winner": None}, score=[1, 2]),
    MatchEnd(match_id="m", winner=0, score=[7, 2], reason="played"),
    Ping(id=7),
    Quit(),
]
AGENT_MESSAGES = [Ready(protocol=1, name="x", version="1", capacity=4), Answer(id=3, action="play:AH"), Pong(id=7)]


@pytest.mark.parametrize("msg", REFEREE_MESSAGES, ids=lambda m: m.type)
def test_referee_messages_round_trip(msg):
    line = encode(msg)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line)["type"] == msg.type
    assert decode_referee_line(line) == msg


@pytest.mark.parametrize("msg", AGENT_MESSAGES, ids=lambda m: m.type)
def test_agent_messages_round_trip(msg):
    assert decode_agent_line(encode(msg)) == msg
    assert decode_agent_line(encode(msg).decode().rstrip("\n") + "\r") == msg


def test_unknown_fields_are_ignored_and_capacity_defaults_to_one():
    assert decode_agent_line(b'{"type":"ready","protocol":1,"name":"a","version":"","x":[1]}') == Ready(
        protocol=1, name="a", version="", capacity=1
    )
    assert decode_agent_line(b'{"id":4,"action":"close","type":"action","comment":"hi"}') == Answer(
        id=4, action="close"
    )


@pytest.mark.parametrize(
    "line, message",
    [
        (b"", "line is not JSON"),
        (b"hello", "line is not JSON"),
        (b"\xff\xfe", "not valid UTF-8"),
        (b"[1,2]", "not a JSON object"),
        (b'{"type":"move","id":1}', "unknown message type 'move'"),
        (b'{"id":1,"action":"close"}', "unknown message type None"),
        (b'{"type":"action","id":"1","action":"close"}', "integer 'id'"),
        (b'{"type":"action","id":1.0,"action":"close"}', "integer 'id'"),
        (b'{"type":"action","id":true,"action":"close"}', "integer 'id'"),
        (b'{"type":"action","id":1,"action":7}', "string 'action'"),
        (b'{"type":"pong"}', "pong message needs an integer 'id'"),
        (b'{"type":"ready","protocol":"1","name":"a","version":"1"}', "integer 'protocol'"),
        (b'{"type":"ready","protocol":1,"name":"","version":"1"}', "'name' string of 1..64"),
        (b'{"type":"ready","protocol":1,"name":"a","version":"1","capacity":0}', "'capacity' must be an integer"),
        (b'{"type":"action","id":1,"action":"close"} trailing', "line is not JSON"),
        (b"[" * 100_000, "line is not JSON"),
    ],
)
def test_malformed_agent_lines_are_typed_faults(line, message):
    with pytest.raises(AgentProtocolError) as e:
        decode_agent_line(line)
    assert e.value.code == "malformed" and message in str(e.value)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(
    "line",
    [
        b"NaN",
        b"Infinity",
        b'{"type":"pong","id":NaN}',
        b'{"type":"action","id":1,"action":"close","score":-Infinity}',
        b'{"type":"ready","protocol":1,"name":"a","version":"1","x":[1,{"y":Infinity}]}',
    ],
)
def test_nan_and_infinity_are_not_json(line):
    """Python's json accepts NaN, Infinity and -Infinity; the wire does not, even in a
    field the referee would ignore."""
    with pytest.raises(AgentProtocolError) as e:
        decode_agent_line(line)
    assert e.value.code == "malformed" and "is not a JSON value" in str(e.value)


@settings(max_examples=2000, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.binary(max_size=300), st.text(max_size=300).map(str.encode), st.from_regex(
    r'\{"type":"(action|pong|ready)"(,"[a-z]+":("[^"]*"|-?[0-9]+|true|null|\[\]))*\}', fullmatch=True
).map(str.encode)))  # fmt: skip
def test_no_line_crashes_the_decoder(line):
    try:
        msg = decode_agent_line(line)
    except AgentProtocolError as e:
        assert e.code == "malformed"
    else:
        assert isinstance(msg, Ready | Answer | Pong)


@settings(max_examples=300, derandomize=True, database=None)
@given(st.lists(st.binary(max_size=40).filter(lambda b: b"\n" not in b), max_size=8), st.data())
def test_line_splitter_is_independent_of_chunking(lines, data):
    stream = b"".join(line + b"\n" for line in lines)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=6)))
    splitter = LineSplitter(max_line=64)
    got = []
    prev = 0
    for cut in [*cuts, len(stream)]:
        got += splitter.feed(stream[prev:cut])
        prev = cut
    assert got == [line[:-1] if line.endswith(b"\r") else line for line in lines]
    assert splitter.pending == 0


def test_line_splitter_refuses_oversized_lines_before_their_end():
    s = LineSplitter(max_line=10)
    assert s.feed(b"0123456789") == []
    with pytest.raises(AgentProtocolError) as e:
        s.feed(b"x")  # no newline yet, already too long
    assert e.value.code == "oversized"
    with pytest.raises(AgentProtocolError, match="line of 12 bytes"):
        LineSplitter(max_line=10).feed(b"ok\n0123456789ab\n")
    # one whole line in one read (the fast path) is held to the same limit
    assert LineSplitter(max_line=10).feed(b"0123456789\n") == [b"0123456789"]
    with pytest.raises(AgentProtocolError, match="line of 11 bytes"):
        LineSplitter(max_line=10).feed(b"0123456789a\n")
    assert LineSplitter().max_line == MAX_AGENT_LINE == 65536


# -- JSON Schemas -----------------------------------------------------------------------------
def _validators() -> dict[str, Draft202012Validator]:
    schemas = {p.stem: json.loads(p.read_text()) for p in SCHEMAS.glob("*.json")}
    # request.json refers to "observation.json", relative to its own $id.
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas.values())
    return {name: Draft202012Validator(s, registry=registry) for name, s in schemas.items()}


def test_every_message_type_has_a_valid_schema():
    v = _validators()
    assert set(v) == {m.type for m in REFEREE_MESSAGES + AGENT_MESSAGES} | {"observation", "table_observation"}
    for validator in v.values():
        Draft202012Validator.check_schema(validator.schema)


def test_recorded_examples_match_the_schemas():
    v = _validators()
    lines = [json.loads(x) for x in conformance.TRANSCRIPT_FILE.read_text().splitlines()]
    kinds = set()
    for x in lines:
        msg = x["msg"]
        kinds.add(msg["type"])
        v[msg["type"]].validate(msg)
    assert {"hello", "ready", "match_start", "deal_start", "request", "action", "deal_end", "match_end"} <= kinds
    for p in conformance.load_positions():
        v["observation"].validate(p["observation"])
    with pytest.raises(ValidationError):
        v["action"].validate({"type": "action", "id": 1, "action": "play:1H"})


# -- recorded examples ------------------------------------------------------------------------
def test_positions_file_is_what_the_engine_gives_now():
    assert conformance.load_positions() == json.loads(json.dumps(conformance.positions()))
    labels = {(p["variant"]["name"], p["label"]) for p in conformance.load_positions()}
    phases = {p["observation"]["phase"] for p in conformance.load_positions()}
    assert phases == {"lead", "follow", "draw", "close-offer"} and len(labels) == 17
    kinds = {a.split(":")[0] for p in conformance.load_positions() for a in p["legal"]}
    assert kinds == {"play", "marry", "exchange", "close", "declare", "draw", "pass"}
    for name in ("sixty-six", "schnapsen"):
        group = [p["observation"] for p in conformance.load_positions() if p["variant"]["name"] == name]
        assert any(o["trick_counts"] == [0, 0] for o in group)  # the start of a deal
        assert any(o["marriages"] for o in group) and any(o["closed"] for o in group)
        assert any(o["talon_size"] == 0 and not o["closed"] for o in group)  # the talon exhausted
        assert any(sum(o["hand_sizes"]) <= 2 for o in group)  # the last trick


def test_every_recorded_position_is_a_reachable_state():
    """Each position is the deal it names, replayed: and its cards add up, so an agent
    that rebuilds the world from its observation (as search agents do) can use it."""
    for p in conformance.load_positions():
        variant = Variant.from_dict(p["variant"])
        obs, where = p["observation"], p["label"]
        state = new_deal(variant, p["deal"]["seed"], p["deal"]["dealer"])
        for action in p["deal"]["actions"]:
            state.apply_action(action)
        assert json.loads(json.dumps(observation(state, obs["seat"]))) == obs, where
        assert state.legal_action_strings() == p["legal"], where
        seat, opp = obs["seat"], 1 - obs["seat"]
        # Every card of the pack is somewhere: own hand, finished tricks, the table, the
        # talon, the opponent's hand.
        on_table = 1 if obs["current_trick"] else 0
        assert len(obs["hand"]) == obs["hand_sizes"][seat], where
        total = len(obs["hand"]) + 2 * len(obs["tricks"]) + on_table + obs["talon_size"] + obs["hand_sizes"][opp]
        assert total == variant.deck, where
        seen = (
            obs["hand"]
            + [c for t in obs["tricks"] for c in t["cards"]]
            + ([obs["current_trick"]["card"]] if on_table else [])
        )
        assert len(set(seen)) == len(seen), where
        # Tricks listed, tricks counted and card points agree.
        assert obs["trick_counts"] == [sum(t["winner"] == s for t in obs["tricks"]) for s in (0, 1)], where
        won = [
            sum(POINTS[parse_card(c)] for t in obs["tricks"] if t["winner"] == s for c in t["cards"]) for s in (0, 1)
        ]
        credited = [sum(m["points"] for m in obs["marriages"] if m["seat"] == s and m["credited"]) for s in (0, 1)]
        assert obs["points"] == [w + c for w, c in zip(won, credited, strict=True)], where
        assert obs["out_of_play"] == (obs["talon_size"] - (obs["turn_up"] is not None) if obs["closed"] else 0)
        # A searching agent's worlds: consistent samples, each a state this seat sees as obs.
        for world in sample_worlds(obs, variant, 5, random.Random(1)):
            assert json.loads(json.dumps(observation(world, seat))) == obs, where


@pytest.mark.parametrize("variant", ["sixty-six", "schnapsen"])
def test_observation_counts_hand_sizes_and_the_cards_a_close_puts_out_of_play(variant):
    """hand_sizes and out_of_play are the real counts at every decision of real deals, and
    name no card: the face-down cards of a closed talon stay unknown."""
    closed_seen = 0
    for seed in range(40):
        rng = random.Random(seed)
        state = new_deal(variant, seed, seed % 2)
        while not state.is_over():
            for seat in (0, 1):
                obs = observation(state, seat)
                assert obs["hand_sizes"] == [state.hand[0].bit_count(), state.hand[1].bit_count()]
                down = len(state.stock) - state.stock_pos
                if state.closed_by >= 0:
                    closed_seen += down > 0
                    assert obs["out_of_play"] == down
                else:
                    assert obs["out_of_play"] == 0
                assert isinstance(obs["out_of_play"], int)
            state.apply_action(rng.choice(state.legal_action_strings()))
    assert closed_seen  # the closed case did occur


def test_hello_says_its_minor_revision_and_an_older_hello_still_decodes():
    line = encode(Hello(protocol=1, variant={}, time_control={}, seed=5))
    assert line.startswith(b'{"type":"hello","protocol":1,"protocol_minor":2,')
    assert PROTOCOL_MINOR == 2 and decode_referee_line(line).protocol_minor == 2
    old = b'{"type":"hello","protocol":1,"variant":{},"time_control":{},"seed":5}'  # a 1.0 referee
    assert decode_referee_line(old) == Hello(protocol=1, protocol_minor=0, variant={}, time_control={}, seed=5)
    with pytest.raises(AgentProtocolError, match="hello message lacks seed"):
        decode_referee_line(b'{"type":"hello","protocol":1,"variant":{},"time_control":{}}')


def test_transcript_replays_exactly():
    recorded = [json.loads(x) for x in conformance.TRANSCRIPT_FILE.read_text().splitlines()]
    assert trio.run(conformance.record_transcript) == recorded


@pytest.mark.parametrize("seat", [0, 1])
def test_transcript_fed_to_the_recorded_agent_gives_its_recorded_answers(seat):
    lines = [json.loads(x) for x in conformance.TRANSCRIPT_FILE.read_text().splitlines()]
    got, want = feed_transcript(lines, seat, conformance.TRANSCRIPT_MATCH["agents"][seat])
    assert got == want


def test_sdk_refuses_another_protocol_version_clearly():
    hello = json.dumps({"type": "hello", "protocol": 3, "variant": {}, "time_control": {}, "seed": 1})
    p = subprocess.run(
        [sys.executable, "agent.py"], cwd=ROOT / "agents" / "random", input=hello + "\n", capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert p.returncode == 2 and p.stdout == ""
    assert "referee speaks protocol version 3; this agent speaks 1 or 2" in p.stderr


PLAYER_AGENT = """\
import json, sys
from arena.sdk import run

def player(setup):
    print(json.dumps({"setup": [setup.seed, setup.variant, setup.time_control, setup.match_id]}), file=sys.stderr)
    def act(request):
        print(json.dumps({"request": [request.id, request.match_id, request.time_left_ms]}), file=sys.stderr)
        return request.legal[-1]
    return act

raise SystemExit(run(player=player, name="whole", version="1"))
"""


def test_sdk_player_gets_the_match_setup_and_the_whole_request(tmp_path):
    """``run(player=...)``: one player per match, made from the match's seed and hello's
    variant and time control, called with every request whole (time left included)."""
    lines = [json.loads(x)["msg"] for x in conformance.TRANSCRIPT_FILE.read_text().splitlines()
             if json.loads(x)["seat"] == 0 and json.loads(x)["dir"] == "to-agent"]  # fmt: skip
    (tmp_path / "agent.py").write_text(PLAYER_AGENT)
    p = subprocess.run([sys.executable, "agent.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                       input="".join(json.dumps(m) + "\n" for m in lines))  # fmt: skip
    assert p.returncode == 0, p.stderr
    seen = [json.loads(x) for x in p.stderr.splitlines()]
    [hello] = [m for m in lines if m["type"] == "hello"]
    starts = [m for m in lines if m["type"] == "match_start"]
    requests = [m for m in lines if m["type"] == "request"]
    assert [s["setup"] for s in seen if "setup" in s] == [
        [m["seed"], hello["variant"], hello["time_control"], m["match_id"]] for m in starts
    ]
    assert [s["request"] for s in seen if "request" in s] == [
        [r["id"], r["match_id"], r["time_left_ms"]] for r in requests
    ]
    answers = [json.loads(x) for x in p.stdout.splitlines() if json.loads(x)["type"] == "action"]
    assert [a["action"] for a in answers] == [r["legal"][-1] for r in requests]



def test_the_wire_stays_strict_json_whichever_library_encodes_it():
    """orjson writes a NaN as null, cannot write an integer beyond 64 bits, and refuses a
    number beyond a double's range: the codec refuses the first, writes the second
    exactly, and calls the third malformed."""
    with pytest.raises(ValueError):
        encode(DealEnd(match_id="m", deal=1, result={"x": float("nan")}, score=[0, 0]))
    line = encode(DealEnd(match_id="m", deal=1, result={"winner": None, "big": 2**70}, score=[0, 0]))
    assert b'"big":1180591620717411303424' in line and line.endswith(b"}\n")
    assert decode_referee_line(encode(Ping(id=2**64 - 1))) == Ping(id=2**64 - 1)
    with pytest.raises(AgentProtocolError) as e:
        decode_agent_line(b'{"type":"pong","id":1,"x":1e400}')
    assert e.value.code == "malformed"
