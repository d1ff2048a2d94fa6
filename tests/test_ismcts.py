"""The open phase's information-set tree search (`arena.bots.ismcts`) and the expert that uses it."""

from __future__ import annotations

import random

import pytest

from arena.bots.expert import OPEN_SEARCHES, ExpertStrategy
from arena.bots.ismcts import Tree, tree_actions
from arena.bots.playout import may_close, policy_action, seat_value
from arena.bots.strategies import GreedyStrategy
from arena.bots.worlds import InfoSet, Worlds
from arena.game import CLOSE, DECLARE, EXCHANGE, MARRY, derive_seed, observation
from arena.play.selfplay import play_match
from tests.test_expert import PRESETS, random_states


def open_states(variant: str, n: int, seed: int) -> list:
    """Positions with the talon open and more than two cards in it, a real choice to make."""
    out = [
        st
        for st in random_states(variant, 60 * n, seed, close_rate=0.05)
        if not st.is_over() and not st.strict and st.talon_size() > 2 and len(st.legal_actions()) > 2
    ]
    return random.Random(seed).sample(out, n)


@pytest.mark.parametrize("variant", PRESETS)
def test_the_tree_weighs_only_what_the_expert_would_choose_between(variant):
    never = lambda st, s: False  # noqa: E731
    always = lambda st, s: True  # noqa: E731
    seen = {"declare": 0, "exchange": 0, "marriage": 0, "close": 0}
    for st in random_states(variant, 4000, 17, close_rate=0.1):
        if st.is_over():
            continue
        legal = st.legal_actions()
        acts = tree_actions(st, always)
        assert acts and set(acts) <= set(legal)
        s = st.to_act
        if DECLARE in legal and st.count(s) >= 66:
            assert acts == [DECLARE]  # a true claim is always made
            seen["declare"] += 1
            continue
        assert DECLARE not in acts  # never a false one
        if EXCHANGE in legal:
            assert acts == [EXCHANGE]
            seen["exchange"] += 1
            continue
        marriages = [a for a in legal if MARRY <= a < EXCHANGE]
        if marriages:
            assert len(acts) == 1 and acts[0] in marriages
            if MARRY + st.trump in marriages:
                assert acts == [MARRY + st.trump]  # forty before twenty
            seen["marriage"] += 1
            continue
        if CLOSE in legal:
            assert CLOSE in acts and CLOSE not in tree_actions(st, never)
            seen["close"] += 1
    assert min(seen.values()) > 0, seen


def _tree_over(st, n: int, seed: int) -> tuple[Tree, list[int]]:
    """A tree of ``n`` iterations over uniform worlds of the seat to act's information."""
    me = st.to_act
    info = InfoSet(observation(st, me), st.variant)
    worlds = Worlds(info)
    util = [float(g) for g in range(-3, 4)]

    def playout(w):
        while not w.is_over():
            w.apply_legal(policy_action(w))
        return seat_value(w, me, util)

    tree = Tree(me, playout, policy_action, may_close)
    cands = [a for a in tree_actions(st, may_close) if a != CLOSE]
    rng = random.Random(seed)
    for _ in range(n):
        tree.iterate(worlds.sample(rng), cands, rng)
    return tree, cands


def _walk(node, depth=0):
    yield node, depth
    for kid in node.kids.values():
        yield from _walk(kid, depth + 1)


@pytest.mark.parametrize("variant", PRESETS)
def test_every_iteration_is_counted_once_at_the_root_and_nodes_key_on_what_the_seat_sees(variant):
    deep = 0
    for k, st in enumerate(open_states(variant, 12, 23)):
        me = st.to_act
        tree, cands = _tree_over(st, 150, k)
        may_draw = InfoSet(observation(st, me), st.variant).pool | (1 << st.turn_up if st.turn_up >= 0 else 0)
        values = tree.root_values(cands)
        assert sum(n for _, n, _ in values) == 150
        if len(cands) > 1:
            assert all(n >= 1 for _, n, _ in values)  # every candidate tried
        for node, depth in _walk(tree.root):
            deep = max(deep, depth)
            for _a, bits in node.kids:
                # a child is told apart by the action and by the card the searching seat
                # drew after it (at most one: one it has not seen, the turn-up, or its own
                # card laid down as the turn-up by an exchange), never by anything drawn
                # by or dealt to the other seat
                assert bits.bit_count() <= 1
                assert bits & ~(may_draw | st.hand[me]) == 0
            for _a, (visits, _total, avail) in node.stats.items():
                assert 0 <= visits <= avail  # chosen at most as often as it was available
    assert deep >= 3  # the tree grows past the root's replies


def test_the_tree_prefers_the_action_that_wins_in_every_world():
    """With one clearly best candidate (its value shifted up in every world), the root's
    most visited and best valued action is that one: UCB concentrates on it."""
    st = open_states("sixty-six", 1, 5)[0]
    me = st.to_act
    info = InfoSet(observation(st, me), st.variant)
    worlds = Worlds(info)
    cands = [a for a in tree_actions(st, may_close) if a != CLOSE]
    good = cands[-1]

    def playout(w):
        return 2.0 if w.history[len(st.history)] == good else 0.0

    tree = Tree(me, playout, policy_action, may_close)
    rng = random.Random(1)
    for _ in range(200):
        w = worlds.sample(rng)
        w.history = list(st.history)
        tree.iterate(w, cands, rng)
    best = max(tree.root_values(cands), key=lambda t: t[1])
    assert best[0] == good and best[2] == 2.0


def test_a_choice_is_decided_once_no_iterations_left_can_change_it():
    for k, st in enumerate(open_states("sixty-six", 6, 31)):
        tree, cands = _tree_over(st, 120, k)
        if len(cands) < 2:
            assert tree.decided(cands, 10**6)  # one candidate: nothing to decide
            continue
        visits = sorted((n for _, n, _ in tree.root_values(cands)), reverse=True)
        lead = visits[0] - visits[1]
        assert tree.decided(cands, lead - 1)
        assert not tree.decided(cands, lead)  # a tie would break the other way: not decided


def test_the_timed_tree_stops_once_its_choice_is_decided():
    """Given far more time than its cap of rounds needs, the anytime tree stops short of
    the cap on decisions whose leader no remaining round could overtake, never before the
    fixed count of rounds, and plays what it would have played at the cap."""
    early = searched = 0
    for k, st in enumerate(open_states("sixty-six", 8, 37)):
        obs, legal = observation(st, st.to_act), st.legal_action_strings()
        expert = ExpertStrategy(k, move_ms=2000, budget="time", open_search="ismcts")
        expert.MAX_WORLDS = 120  # the cap on rounds, well within the budget: the settle test stops short of it
        action = expert.choose(obs, legal)
        assert action in legal
        if expert.last["kind"] != "playouts":
            continue
        searched += 1
        full = ExpertStrategy(k, move_ms=2000, budget="time", open_search="ismcts")
        full.MAX_WORLDS, full.SETTLE_EVERY = 120, 10**9  # never checks: runs to the cap
        assert full.choose(obs, legal) == action and full.last["samples"] == 120
        assert expert.last["samples"] >= expert.PLAYOUT_WORLDS
        early += expert.last["samples"] < expert.MAX_WORLDS
    assert searched >= 5 and early >= 3


def test_open_search_is_checked_by_name():
    assert "pimc" in OPEN_SEARCHES and "ismcts" in OPEN_SEARCHES
    with pytest.raises(ValueError, match="open_search"):
        ExpertStrategy(1, open_search="minimax")


@pytest.mark.parametrize("variant", PRESETS)
def test_the_tree_expert_plays_legal_deterministic_actions(variant):
    for k, st in enumerate(open_states(variant, 30, 29)):
        seat = st.to_act
        obs, legal = observation(st, seat), st.legal_action_strings()
        a = ExpertStrategy(k, effort=0.3, infer=True, lead_model="value", open_search="ismcts")(obs, legal)
        assert a in legal
        assert ExpertStrategy(k, effort=0.3, infer=True, lead_model="value", open_search="ismcts")(obs, legal) == a


@pytest.mark.parametrize("variant", PRESETS)
def test_the_tree_expert_beats_greedy(variant):
    """A strength floor, not a measurement (docs/agents-strength.md has those): at a fifth
    of its work it wins most of 20 matches against the greedy player, seats swapped."""
    won = 0
    for i in range(20):
        expert = ExpertStrategy(derive_seed(3, "x", i), effort=0.2, open_search="ismcts")
        seat = i % 2
        greedy = GreedyStrategy(derive_seed(3, "greedy", i))
        m = play_match(variant, derive_seed(3, "match", i), [expert, greedy] if seat == 0 else [greedy, expert])
        won += m.result.winner == seat
    assert won >= 16, won
