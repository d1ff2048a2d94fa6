"""`arena check` and faults at three- and four-seat tables (issue 17), with real agent processes.

The recorded table positions are real decisions the engine reaches again from their deal
records; the random agent passes the whole suite in every table game; an agent that
declares only two-handed games is checked only in those; and each fault kind (crash,
hang, illegal action, malformed line) at a three- and a four-seat table ends as
protocol/SPEC.md section 12 says, with no process left behind.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import trio
from jsonschema import Draft202012Validator
from running import group_alive

from arena.game import TABLE_PRESETS, Variant, get_variant, new_deal, observation
from arena.play import conformance
from arena.play.duel import duel
from arena.protocol.codec import TimeControl
from arena.runtime.agents import load_manifest, resolve
from arena.runtime.sandbox import Policy, Sandbox

BROKEN = Path(__file__).resolve().parent / "agents" / "broken"
FAST = TimeControl(move_ms=300, bank_ms=0, first_move_ms=300, grace_ms=100)


# -- the recorded positions -----------------------------------------------------------------------
def test_table_positions_file_is_what_the_engine_gives_now():
    recorded = conformance.load_positions(conformance.TABLE_POSITIONS_FILE)
    assert recorded == json.loads(json.dumps(conformance.table_positions()))
    assert {p["variant"]["name"] for p in recorded} == set(TABLE_PRESETS)
    for name in TABLE_PRESETS:
        labels = [p["label"] for p in recorded if p["variant"]["name"] == name]
        assert len(labels) == len(set(labels)) >= 7, name
        assert labels == [label for label, _ in conformance.TABLE_SITUATIONS[name]]
    phases = {p["observation"]["phase"] for p in recorded}
    assert {"bid", "name", "lead", "meld", "follow", "last", "draw"} <= phases
    kinds = {a.split(":")[0] for p in recorded for a in p["legal"]}
    assert {"play", "marry", "declare", "pass", "bid", "trump", "exchange", "close", "draw"} <= kinds
    # the two-handed test set is a file of its own, unchanged by the tables
    assert all(p["variant"].get("form", "two_handed") == "two_handed" for p in conformance.load_positions())


@pytest.mark.parametrize(
    "p",
    conformance.load_positions(conformance.TABLE_POSITIONS_FILE),
    ids=lambda p: f"{p['variant']['name']}: {p['label']}",
)
def test_each_table_position_replays_to_its_observation_and_legal_list(p):
    variant = Variant.from_dict(p["variant"])
    assert variant == get_variant(p["variant"]["name"])  # the preset itself: what `check` says hello with
    state = new_deal(variant, p["deal"]["seed"], p["deal"]["dealer"])
    for action in p["deal"]["actions"]:
        assert not state.is_over()
        state.apply_action(action)
    obs = p["observation"]
    assert state.current_player() == obs["seat"] == obs["to_act"]
    assert json.loads(json.dumps(observation(state, obs["seat"]))) == obs
    assert state.legal_action_strings() == p["legal"]
    assert len(p["legal"]) >= 2 or p["label"].startswith(("the last trick", "meld without"))
    # and it is the situation its label names
    test = dict(conformance.TABLE_SITUATIONS[variant.name])[p["label"]]
    assert test(state, p["legal"])
    if variant.form == "dealer_sits_out":
        assert obs["talon_size"] >= 0 and len(obs["hand_sizes"]) == 2  # a two-handed hand
        return
    # every card of the pack is somewhere: hands, tricks, the table, the widow (all dealt but F3.1's decision)
    if obs["phase"] != "name":
        widow = 3 if variant.form == "cutthroat" else 0
        on_table = len(obs["current_trick"]["cards"]) if obs["current_trick"] else 0
        played = sum(len(t["cards"]) for t in obs["tricks"])
        assert sum(obs["hand_sizes"]) + played + on_table + widow == variant.deck
        assert obs["trick_counts"] == [sum(t["winner"] == s for t in obs["tricks"]) for s in range(variant.players)]


def test_table_positions_match_the_observation_schemas():
    """The table observation's schema (SPEC section 12); three-sitout's hands are two-handed."""
    schemas = conformance.EXAMPLES.parent / "schema"
    if not (schemas / "table_observation.json").is_file():
        pytest.skip("no table_observation schema yet")
    validators = {
        name: Draft202012Validator(json.loads((schemas / f"{name}.json").read_text()))
        for name in ("observation", "table_observation")
    }
    for p in conformance.load_positions(conformance.TABLE_POSITIONS_FILE):
        two_handed = p["variant"]["form"] == "dealer_sits_out"
        validators["observation" if two_handed else "table_observation"].validate(p["observation"])


# -- the suite on table agents ------------------------------------------------------------------
def _check(manifest, games=None) -> list[conformance.Item]:
    with Sandbox(Policy(enabled=False)) as sandbox:
        return trio.run(lambda: conformance.check(manifest, lambda item: None, sandbox=sandbox, games=games))


def test_random_passes_check_in_every_table_game():
    items = _check(resolve("random"), games=list(TABLE_PRESETS))
    failed = [(i.name, i.detail) for i in items if not i.ok]
    assert not failed
    names = [i.name for i in items]
    for name in TABLE_PRESETS:
        recorded = [p for p in conformance.load_positions(conformance.TABLE_POSITIONS_FILE)
                    if p["variant"]["name"] == name]  # fmt: skip
        assert sum(n.startswith(f"position ({name}): ") for n in names) == len(recorded)
        assert f"8 requests at once ({name})" in names  # random declares capacity 16
        assert f"match ({name}, seat 0)" in names
    assert names[:2] == ["handshake", "ping"] and "quit" in names


def test_an_agent_of_two_handed_games_is_checked_only_in_those():
    random_66 = dataclasses.replace(resolve("random"), variants=("sixty-six",))
    items = _check(random_66)
    assert items and all(i.ok for i in items), [(i.name, i.detail) for i in items if not i.ok]
    named = " ".join(i.name for i in items)
    assert "sixty-six" in named
    assert not any(g in named for g in (*TABLE_PRESETS, "schnapsen"))


def test_a_version_1_agent_that_declares_a_table_game_fails_to_start_there_and_is_checked_in_the_rest():
    items = _check(load_manifest(BROKEN / "v1.toml"))  # variants: sixty-six, three-pagat
    bad = [(i.name, i.detail) for i in items if not i.ok]
    assert bad == [("start (three-pagat)", bad[0][1])] and "speaks protocol version 1" in bad[0][1]
    assert [i.name for i in items if i.name.startswith("match")] == [
        "match (sixty-six, seat 0)",
        "match (sixty-six, seat 1)",
    ]


def test_a_table_agent_that_answers_illegally_fails_its_position_items():
    illegal = load_manifest(BROKEN / "illegal-table.toml")
    items = _check(dataclasses.replace(illegal, variants=("four-pagat",)))
    bad = [i for i in items if not i.ok]
    assert bad and bad[0].name.startswith("position (four-pagat): ") and "not in" in bad[0].detail


# -- faults at tables -----------------------------------------------------------------------------


FAULTS = [
    ("crash-mid-match-table", "crash", "exited with status 1"),
    ("hang-table", "timeout", "no answer to request"),
    ("illegal-table", "illegal-action", "legal:"),
    ("garbage-table", "malformed", "line is not JSON"),
]


@pytest.mark.parametrize("game", ["three-pagat", "four-pagat"])
@pytest.mark.parametrize("agent, code, detail", FAULTS, ids=[f[1] for f in FAULTS])
def test_a_fault_at_a_table_forfeits_by_the_rules_and_leaves_no_process(agent, code, detail, game, tmp_path):
    v = get_variant(game)
    seat = 1  # team 1 in four-pagat
    lineup = [resolve("random")] * v.players
    lineup[seat] = load_manifest(BROKEN / f"{agent}.toml")
    pgids: list[int] = []
    transcripts: list[list[tuple[str, bytes]]] = [[] for _ in range(v.players)]
    with Sandbox(Policy(enabled=False)) as sandbox:
        rec = trio.run(
            lambda: duel(lineup, 5, v, FAST, logs=tmp_path, on_start=lambda s, p: pgids.append(p.pid),
                         transcripts=transcripts, sandbox=sandbox)
        )  # fmt: skip
    f = rec.forfeit
    assert f is not None and (f.seat, f.code) == (seat, code), f
    assert detail in f.detail and f.deal == 0 and f.decision is not None
    if v.players == 4:  # the faulting seat's team loses; the other team wins with the target
        assert rec.kind == "team" and rec.winner == 0 and rec.score[0] >= v.target
        assert rec.places == [1, 2, 1, 2]
    else:  # the faulting seat is last; the others by the score so far
        assert rec.places[seat] == 3 and sorted(rec.places[s] for s in (0, 2)) in ([1, 2], [1, 1])
        assert rec.winner in (0, 2, None) and (rec.winner is None) == (rec.places[0] == rec.places[2])
    for other in range(v.players):  # every other seat is told the match ended by forfeit
        sent = [json.loads(line) for d, line in transcripts[other] if d == "to-agent"]
        ends = [m for m in sent if m["type"] == "match_end"]
        if other == seat:
            assert ends == []
        else:
            assert len(ends) == 1 and ends[0]["reason"] == "forfeit"
            assert ends[0]["result"] == {"kind": rec.kind, "winner": rec.winner, "places": rec.places}
    assert len(pgids) == v.players
    for pgid in pgids:
        assert group_alive(pgid) == [], f"processes left in group {pgid}"
