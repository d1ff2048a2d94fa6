"""The heuristic strategy (`arena.bots.heuristic`): legal, honest, sound on hand-built positions, and
clearly stronger than greedy.

Positions come from `helpers.make` (seat 0 is the forehand unless ``dealer=0``) and are
driven with the engine's checked `apply_action`; the strategy sees exactly what an agent
sees: ``observation(state, seat)`` and ``state.legal_action_strings()``.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import do, make

from arena.bots.heuristic import HeuristicStrategy
from arena.bots.strategies import GreedyStrategy, RandomStrategy
from arena.game import derive_seed, get_variant, new_deal, observation
from arena.play.selfplay import play_match

ROOT = Path(__file__).resolve().parent.parent
BOTH = ["sixty-six", "schnapsen"]


def choose(state, seed: int = 0) -> str:
    """The heuristic's action for the seat to act."""
    seat = state.current_player()
    legal = state.legal_action_strings()
    action = HeuristicStrategy(seed)(observation(state, seat), legal)
    assert action in legal
    return action


def play(state, seed: int = 0) -> str:
    """Let the heuristic act for the seat to act, apply it and return it."""
    action = choose(state, seed)
    state.apply_action(action)
    return action


# -- legal, honest, deterministic over thousands of random deals ----------------------------------


def drive(variant, seed: int, opponent) -> tuple[int, int]:
    """Play one deal with the heuristic in seat ``seed % 2``; check every answer it gives.

    Returns (decisions, times it could have gone out)."""
    state = new_deal(variant, seed, seed % 3 % 2)
    me = seed % 2
    hero = HeuristicStrategy(seed)
    decisions = chances = 0
    while not state.is_over():
        seat = state.current_player()
        obs = observation(state, seat)
        legal = state.legal_action_strings()
        if seat == me:
            action = hero(obs, legal)
            decisions += 1
            assert action in legal, (action, legal, obs)
            can_go_out = "declare" in legal and obs["points"][me] >= 66
            chances += can_go_out
            if can_go_out:
                assert action == "declare", (action, obs)  # at once, never later
            if action == "declare":
                assert obs["points"][me] >= 66, obs  # never falsely
        else:
            action = opponent(obs, legal)
        state.apply_action(action)
    r = state.result
    if r.declarer == me:
        assert r.winner == me and r.reason in ("out", "beaten-closer"), r
    assert not (r.reason == "false-claim" and r.declarer == me), r
    return decisions, chances


@pytest.mark.parametrize(
    "variant",
    [
        "sixty-six",
        "schnapsen",
        # Flags change only what the legal list offers; the strategy must still answer legally.
        get_variant("sixty-six").with_flags(exchange_on_close="opponent", marriage_lead="king_only"),
        get_variant("schnapsen").with_flags(exchange_timing="any_time", out_timing="any_time", close_min_talon=4),
    ],
    ids=["sixty-six", "schnapsen", "sixty-six-flags", "schnapsen-flags"],
)
def test_only_legal_actions_and_never_a_false_claim(variant):
    decisions = chances = 0
    for seed in range(2000):
        opponent = (RandomStrategy if seed % 2 else GreedyStrategy)(seed)
        d, c = drive(variant, seed, opponent)
        decisions += d
        chances += c
    assert decisions > 10_000
    assert chances > 300  # it did reach 66 often, and went out each time at once


@pytest.mark.parametrize("variant", BOTH)
def test_deterministic_for_a_seed(variant):
    def run(seed: int) -> list[list[int]]:
        m = play_match(variant, 77, [HeuristicStrategy(seed), GreedyStrategy(1)])
        return [s.history for s in m.deals]

    assert run(5) == run(5)


def test_fast():
    hero, rival = HeuristicStrategy(3), GreedyStrategy(3)
    spent, n = 0.0, 0
    for seed in range(200):
        for variant in BOTH:
            state = new_deal(variant, seed, seed % 2)
            while not state.is_over():
                seat = state.current_player()
                obs, legal = observation(state, seat), state.legal_action_strings()
                if seat == 0:
                    t = time.perf_counter()
                    action = hero(obs, legal)
                    spent += time.perf_counter() - t
                    n += 1
                else:
                    action = rival(obs, legal)
                state.apply_action(action)
    assert spent / n < 0.001, f"{1e6 * spent / n:.0f} us a decision"


# -- hand-built positions -------------------------------------------------------------------------


def test_exchanges_the_trump_nine_when_it_may():
    st = make("9S TH KC 9C JD 9D", "9H QH JH KD QD JC", "AS")
    do(st, "play:TH play:9H draw")  # seat 0 has a trick and leads
    assert "exchange" in st.legal_action_strings()
    assert play(st) == "exchange"
    assert "AS" in observation(st, 0)["hand"]


def test_exchanges_the_trump_jack_in_schnapsen_on_the_opening_lead():
    st = make("JS TH KC QC TD", "KH QH JH KD QD", "AS", "schnapsen")
    assert play(st) == "exchange"


def test_takes_exchange_over_pass_at_the_close_offer():
    v = get_variant("sixty-six").with_flags(exchange_on_close="opponent")
    st = make("AC TC KC QC JC 9C", "9S TH KH QH JH 9H", "AS", v)
    do(st, "close")
    assert st.legal_action_strings() == ["exchange", "pass"]
    assert play(st) == "exchange"


def test_shows_the_trump_marriage_first():
    st = make("KS QS KH QH 9C 9D", "AC TC AD TD AH TH", "JS")
    assert {"marry:H", "marry:S"} <= set(st.legal_action_strings())
    assert play(st) == "marry:S"
    assert play(st) in ("play:KS", "play:QS")


def test_goes_out_through_a_marriage():
    st = make("KH QH 9C 9D JC AS", "AC TC AD TD KD QD", "TS", tricks=[2, 1], points=[50, 20])
    assert play(st) == "marry:H"
    assert observation(st, 0)["points"][0] == 70
    assert play(st) == "declare"
    assert st.result.winner == 0 and st.result.reason == "out"


def test_goes_out_at_once_with_66():
    st = make("KH 9C 9D JC AS QD", "AC TC AD TD KD QH", "TS", tricks=[2, 1], points=[66, 20])
    assert play(st) == "declare"
    assert st.result.reason == "out" and st.result.winner == 0


def test_never_claims_with_65():
    st = make("KH 9C 9D JC AS QD", "AC TC AD TD KD QH", "TS", tricks=[2, 1], points=[65, 20])
    assert choose(st) != "declare"


def test_closes_when_sure_tricks_make_66_and_leads_the_top_trump():
    # Ace and ten of trumps are 21 more: 45 + 21 = 66 whatever the opponent throws.
    st = make("AS TS 9C 9D 9H JC", "AC TC AD TD KD QD", "QS", tricks=[2, 1], points=[45, 12])
    assert play(st) == "close"
    assert play(st) == "play:AS"


def test_closes_before_drawing_when_sure():
    st = make("AS TS JC 9D 9H QD", "9C TC AD TD KD KH", "QS", tricks=[2, 1], points=[45, 12])
    do(st, "play:JC play:9C")  # won: the draw is pending
    assert st.legal_action_strings() == ["close", "declare", "draw"]
    assert play(st) == "close"


def test_does_not_close_a_weak_hand():
    st = make("AS TS JC 9D 9H QD", "9C TC AD TD KD KH", "QS", tricks=[2, 1], points=[20, 12])
    do(st, "play:JC play:9C")
    assert play(st) == "draw"
    st = make("9C JC 9D JD 9H QS", "AC TC AD TD KD KH", "AS")
    assert choose(st) != "close"


def test_takes_a_ten_with_the_ace():
    st = make("AH 9C JD QS KC 9D", "TH TC AD TD KD QH", "KS", dealer=0)  # seat 1 leads
    do(st, "play:TH")
    assert play(st) == "play:AH"


def test_trumps_a_led_ace_with_a_low_trump():
    st = make("JS AS KC 9D QD JC", "AH TC AD TD KD QH", "TS", dealer=0)
    do(st, "play:AH")
    assert play(st) == "play:JS"


def test_throws_low_on_a_led_nine():
    st = make("AS JS AC KD JD 9C", "9H TC AD TD QD QH", "TS", dealer=0)
    do(st, "play:9H")
    assert play(st) == "play:9C"


def test_leads_low_and_keeps_trump_honours():
    st = make("AS TS KD QH 9C JD", "AC TC AD TD KH QD", "QS")
    assert play(st) == "play:9C"


def test_shows_a_marriage_rather_than_breaking_it():
    st = make("AS TS KH QH 9C JD", "AC TC AD TD KD QD", "QS", tricks=[1, 1], points=[10, 10])
    assert play(st) == "marry:H"
    assert play(st) in ("play:KH", "play:QH")


def test_heads_with_the_cheapest_winning_card_once_closed():
    st = make("AH TH 9C 9D JC QS", "KH TC AD TD KD QD", "KS", dealer=0)  # seat 1 leads
    do(st, "close play:KH")
    assert set(st.legal_action_strings()) == {"play:AH", "play:TH"}
    assert play(st) == "play:TH"


def test_gives_least_when_it_cannot_win_once_closed():
    st = make("9H JC QC AD 9D KS", "AH TC TD QD KD JH", "QS", dealer=0)
    do(st, "close play:AH")
    assert st.legal_action_strings() == ["play:9H"]  # must follow
    assert play(st) == "play:9H"
    st = make("AC JC QC AD 9D KD", "AH TC TD QD JD JH", "QS", dealer=0)
    do(st, "close play:AH")  # no heart, no trump: anything
    assert play(st) == "play:9D"


def test_goes_out_in_the_exhausted_endgame():
    # Talon exhausted, seat 0 to lead with 56: the ace of trumps draws the ten (21 points) and
    # goes out; a club would let the opponent's king take the lead.
    st = make("AS JC 9C", "TS KC QH", None, trump="S", leader=0, tricks=[3, 3], points=[56, 40])
    assert play(st) == "play:AS"
    do(st, "play:TS")
    assert play(st) == "declare"
    assert st.result.winner == 0 and st.result.reason == "out"


# -- strength -------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", BOTH)
def test_beats_greedy_clearly(variant):
    n, wins = 300, 0
    for i in range(n):
        hero, rival = HeuristicStrategy(derive_seed(9, "hero", i)), GreedyStrategy(derive_seed(9, "rival", i))
        seat = i % 2
        match = play_match(variant, derive_seed(9, "match", i), [hero, rival] if seat == 0 else [rival, hero])
        wins += match.result.winner == seat
    rate = wins / n
    print(f"heuristic vs greedy ({variant}): won {wins} of {n} matches ({100 * rate:.1f}%)")
    assert rate > 0.6


# -- the agent ------------------------------------------------------------------------------------


def test_agent_passes_arena_check(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "arena", "check", "agents/heuristic", "--logs", str(tmp_path / "logs")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.splitlines()[-1].endswith("passed, 0 failed")


@pytest.mark.parametrize("variant", BOTH)
def test_its_close_rule_read_off_an_engine_state_is_the_one_it_plays(variant):
    """`close_by_rule` (the expert's model of a closer who sees only its own cards) builds
    the heuristic's view from the engine state directly: every fact equals the view of the
    observation, and the rule closes exactly where the heuristic itself closes."""
    from arena.bots.heuristic import _View, close_by_rule

    checked = closes = 0
    for k in range(60):
        state = new_deal(variant, derive_seed(8, "deal", k), k % 2)
        other = GreedyStrategy(k) if k % 3 else HeuristicStrategy(k + 1)
        players = [HeuristicStrategy(k), other]
        while not state.is_over():
            seat = state.current_player()
            obs = observation(state, seat)
            legal = state.legal_action_strings()
            if "close" in legal:
                fast, slow = _View.of_state(state, seat), _View(obs)
                for name in _View.__slots__:
                    assert getattr(fast, name) == getattr(slow, name), (name, obs)
                rule = close_by_rule(state, seat)
                assert rule == HeuristicStrategy._should_close(HeuristicStrategy(0), slow)
                if "draw" in legal and "declare" not in legal:
                    assert (HeuristicStrategy(k)(obs, legal) == "close") == rule
                checked += 1
                closes += rule
            state.apply_action(players[(seat + k) % 2](obs, legal))
    assert checked >= 200 and closes >= 5
