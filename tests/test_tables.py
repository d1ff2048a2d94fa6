"""Three and four agents at one table (protocol version 2): the negotiation, the referee
for N seats, its forfeit rules and deal limit, with real agent processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio
from running import arena, replay_record

from arena.game import ALL_PRESETS, Match, get_variant
from arena.play.duel import duel
from arena.play.referee import MAX_DEALS, forfeit_result
from arena.protocol.codec import (
    AgentProtocolError,
    DealStart,
    Hello,
    MatchStart,
    Ready,
    TimeControl,
    decode_agent_line,
    encode,
)
from arena.runtime.agents import load_manifest, resolve
from arena.runtime.sandbox import Policy, Sandbox

ROOT = Path(__file__).resolve().parent.parent
BROKEN = ROOT / "tests" / "agents" / "broken"
TC = TimeControl(move_ms=2000, bank_ms=5000, first_move_ms=5000, grace_ms=500)


# -- the handshake ------------------------------------------------------------------------------
def test_hello_offers_version_2_beside_1_for_two_handed_games_and_only_2_for_tables():
    two = Hello.for_game(get_variant("sixty-six").to_dict(), TC.to_dict(), 5)
    assert (two.protocol, two.protocols) == (1, [1, 2])
    table = Hello.for_game(get_variant("four-pagat").to_dict(), TC.to_dict(), 5)
    assert (table.protocol, table.protocols) == (2, [2])
    wire = json.loads(encode(table))
    assert wire["variant"]["form"] == "pagat" and wire["variant"]["players"] == 4


def test_a_version_1_agent_gets_version_1_bytes():
    """The fields of version 2 are sent only when set: a v1 agent's lines are unchanged."""
    line = encode(MatchStart(match_id="m", seat=0, opponent="greedy", seed=7))
    assert line == b'{"type":"match_start","match_id":"m","seat":0,"opponent":"greedy","seed":7}\n'
    line = encode(DealStart(match_id="m", deal=0, dealer=1, score=[0, 0]))
    assert line == b'{"type":"deal_start","match_id":"m","deal":0,"dealer":1,"score":[0,0]}\n'


def test_ready_games_say_which_games_an_agent_plays():
    r = decode_agent_line(b'{"type":"ready","protocol":2,"name":"x","version":"1","games":["three-pagat"]}')
    assert r.plays(get_variant("three-pagat").to_dict())
    assert r.plays(get_variant("three-pagat").with_flags(undertrump="free").to_dict())  # a variant of it
    assert not r.plays(get_variant("four-pagat").to_dict()) and not r.plays(get_variant("sixty-six").to_dict())
    v1 = Ready(protocol=1, name="x", version="1")
    assert v1.plays(get_variant("schnapsen").to_dict()) and not v1.plays(get_variant("three-pagat").to_dict())
    with pytest.raises(AgentProtocolError, match="'games' must be a list of game names"):
        decode_agent_line(b'{"type":"ready","protocol":2,"name":"x","version":"1","games":"three-pagat"}')


# -- matches of every table game, real processes ------------------------------------------------
@pytest.mark.parametrize("preset", [p for p in ALL_PRESETS if get_variant(p).players > 2])
def test_random_agents_play_every_table_game_to_its_end(preset):
    v = get_variant(preset)
    transcripts: list[list[tuple[str, bytes]]] = [[] for _ in range(v.players)]
    with Sandbox(Policy(enabled=False)) as sandbox:
        rec = trio.run(
            lambda: duel([resolve("random")] * v.players, 11, v, TC, transcripts=transcripts, sandbox=sandbox)
        )
    assert rec.forfeit is None and len(rec.latency_ms) == v.players
    match, result = replay_record(rec, v)  # the record replays in the engine to the same result
    assert (rec.winner, rec.score, rec.kind) == (result.winner, list(result.score), result.kind)
    assert rec.adjudicated == (len(rec.deals) == MAX_DEALS and not match.is_over())
    for seat, lines in enumerate(transcripts):
        sent = [json.loads(line) for d, line in lines if d == "to-agent"]
        got = [json.loads(line) for d, line in lines if d == "from-agent"]
        assert sent[0]["type"] == "hello" and sent[0]["protocol"] == 2 and got[0]["protocol"] == 2
        start = next(m for m in sent if m["type"] == "match_start")
        assert [p["seat"] for p in start["players"]] == list(range(v.players))
        assert start["variant"] == v.to_dict()
        if v.players == 4:  # partners opposite
            assert start["partners"] == [seat ^ 2] and start["opponents"] == sorted({seat ^ 1, seat ^ 3})
        end = next(m for m in sent if m["type"] == "match_end")
        assert end["result"]["kind"] == rec.kind and end["winner"] == rec.winner
        requests = [m for m in sent if m["type"] == "request"]
        assert len(requests) == len(rec.latency_ms[seat])
        for r in requests:  # each request is the seat's own information set
            obs = r["observation"]
            mapped = seat if preset != "three-sitout" else None
            assert mapped is None or obs["seat"] == seat
            assert r["legal"]


def test_three_sitout_requests_speak_of_the_deals_seats_and_the_dealer_sits_out():
    v = get_variant("three-sitout")
    transcripts: list[list[tuple[str, bytes]]] = [[] for _ in range(3)]
    with Sandbox(Policy(enabled=False)) as sandbox:
        trio.run(lambda: duel([resolve("random")] * 3, 4, v, TC, transcripts=transcripts, sandbox=sandbox))
    for seat, lines in enumerate(transcripts):
        seats = None
        for direction, line in lines:
            m = json.loads(line)
            if direction != "to-agent":
                continue
            if m["type"] == "deal_start":
                seats = m["seats"]
                assert len(seats) == 2
            elif m["type"] == "request":
                assert seat in seats, "a seat that sits out this deal got a request"
                assert seats[m["seat"]] == seat and m["observation"]["seat"] == m["seat"]


# -- forfeits and refusals -----------------------------------------------------------------------
def test_a_fault_in_a_team_game_is_the_teams():
    v = get_variant("four-pagat")
    crash = load_manifest(BROKEN / "crash-mid-match-table.toml")
    with Sandbox(Policy(enabled=False)) as sandbox:
        rec = trio.run(
            lambda: duel([resolve("random"), crash, resolve("random"), resolve("random")], 2, v, TC, sandbox=sandbox)
        )
    assert rec.forfeit.seat == 1 and rec.forfeit.code == "crash"
    assert rec.kind == "team" and rec.winner == 0 and rec.score[0] >= v.target
    assert rec.places == [1, 2, 1, 2]


def test_a_fault_at_a_three_handed_table_places_the_seat_last():
    v = get_variant("three-pagat")
    crash = load_manifest(BROKEN / "crash-mid-match-table.toml")
    with Sandbox(Policy(enabled=False)) as sandbox:
        rec = trio.run(lambda: duel([resolve("random"), resolve("random"), crash], 2, v, TC, sandbox=sandbox))
    assert rec.forfeit.seat == 2 and rec.places[2] == 3 and sorted(rec.places[:2]) in ([1, 2], [1, 1])


def test_forfeit_rules_by_hand():
    m = Match("three-sitout", 1)
    m.score[:] = [5, 2, 2]
    m.finished = [1]
    winner, _, places, kind = forfeit_result(m, [0])
    assert (winner, places, kind) == (1, [3, 1, 2], "order")  # the place taken stands; the faulter last
    m = Match("three-pagat", 1)
    m.score[:] = [3, 3, 1]
    assert forfeit_result(m, [2])[0::2] == (None, [1, 1, 3])  # equal leaders share first: no winner
    m = Match("kreuzmariage", 1)
    assert forfeit_result(m, [0, 1])[0] is None  # both teams faulted


def test_a_version_1_agent_at_a_table_is_refused_in_one_line():
    p = arena("match", BROKEN / "v1.toml", "random", "random", "--variant", "three-pagat", "--quiet", "--no-sandbox")
    assert p.returncode == 1, p.stderr
    assert "agent speaks protocol version 1, this referee speaks 2 for this game" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_arena_match_counts_the_seats_and_the_games_agents_declare():
    p = arena("match", "random", "random", "--variant", "four-pagat", "--quiet")
    assert p.returncode == 2 and p.stderr.strip() == "arena: error: four-pagat seats 4 agents; 2 given"
    p = arena("match", BROKEN / "two-handed.toml", "random", "random", "--variant", "three-sitout", "--quiet")
    assert p.returncode == 2 and "agent 'two-handed' plays only sixty-six, schnapsen (field 'variants' of " in p.stderr
    assert p.stderr.strip().endswith("two-handed.toml), not three-sitout")
    p = arena("match", "random", "random", "random", "random", "--variant", "kreuzmariage", "--seed", "3",
              "--no-sandbox")  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "8C" in p.stdout or "7C" in p.stdout or "8H" in p.stdout  # the 32-card pack, dealt and shown
    assert p.stdout.strip().splitlines()[-1].startswith("result: random#")
