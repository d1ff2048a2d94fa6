"""The close valued as a closer who cannot see the cards plays it (`closer_values`)."""

from __future__ import annotations

import random

import pytest

from arena.bots.closed_play import closer_values
from arena.bots.endgame import Search
from arena.bots.expert import ExpertStrategy
from arena.bots.heuristic import HeuristicStrategy
from arena.bots.worlds import InfoSet, Worlds
from arena.game import CLOSE, DECLARE, derive_seed, get_variant, observation
from arena.play.selfplay import play_match


class _CloseRecorder:
    """The expert, keeping the referee's state wherever it may close."""

    sees_state = True
    state = None

    def __init__(self, player):
        self.player = player
        self.positions = []

    def __call__(self, obs, legal):
        if self.state is not None and "close" in legal:
            self.positions.append((self.state.clone(), obs["seat"]))
        return self.player(obs, legal)


def _close_positions(variant: str, matches: int) -> list:
    v = get_variant(variant)
    out = []
    for k in range(matches):
        rec = _CloseRecorder(ExpertStrategy(k, variant=v))
        play_match(v, derive_seed(3, "match", k), [rec, HeuristicStrategy(k)])
        out += rec.positions
    return out


def _closed_worlds(st, seat, n: int, seed: int) -> list:
    worlds = Worlds(InfoSet(observation(st, seat), st.variant))
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        w = worlds.sample(rng)
        w.apply_legal(CLOSE)
        out.append(w)
    return out


@pytest.mark.parametrize("variant", ["sixty-six", "schnapsen"])
def test_a_closer_who_cannot_see_does_no_better_than_one_who_can(variant):
    util = [float(g) for g in range(-3, 4)]
    checked = lower = 0
    for st, seat in _close_positions(variant, 4):
        ws = _closed_worlds(st, seat, 10, 1)
        if ws[0].to_act != seat:
            continue
        # resample=0 is the old valuation: the best first lead by the mean, every world solved after it
        acts = [a for a in ws[0].legal_actions() if a != DECLARE or ws[0].count(seat) >= 66]
        solved = {a: [] for a in acts}
        for w in ws:
            for a, val in Search().action_values(w, acts):
                solved[a].append(util[(val if seat == 0 else -val) + 3])
        first, old = closer_values(ws, seat, util)
        assert first in acts and old == solved[first]
        assert sum(old) == max(sum(x) for x in solved.values())
        if sum(old) < -len(ws):  # a close that loses anyway: nothing to tell
            continue
        # replanning each later play over fresh worlds can only lose against an opponent who plays
        # its exact best reply in each world (that reply holds any closer to the world's value)
        first2, nested = closer_values(ws, seat, util, 6, 7)
        assert all(x <= y + 1e-9 for x, y in zip(nested, solved[first2], strict=True))
        assert (first2, nested) == closer_values(ws, seat, util, 6, 7)  # deterministic per seed
        checked += 1
        lower += sum(nested) < sum(solved[first2]) - 1e-9
    assert checked >= 6
    assert lower >= 1  # and somewhere it does lose: the old valuation saw cards the closer cannot


def test_the_expert_values_its_close_as_a_closer_who_cannot_see_when_asked():
    """``CLOSE_RESAMPLE``: on the same worlds, the close is worth no more than the old
    valuation says, somewhere less; the actions stay legal and deterministic."""
    v = get_variant("sixty-six")
    compared = lower = 0
    two_cards = set()  # with two talon cards left every action is solved: the close lowered after
    for st, seat in _close_positions("sixty-six", 3):
        obs = observation(st, seat)
        legal = st.legal_action_strings()
        old = ExpertStrategy(5, variant=v, infer=True, lead_model="value")
        new = ExpertStrategy(5, variant=v, infer=True, lead_model="value")
        new.CLOSE_RESAMPLE = 6
        a_old, a_new = old(obs, legal), new(obs, legal)
        assert a_new in legal and a_new == new(obs, legal)
        if "close_value" in old.last and "close_value" in new.last:
            compared += 1
            assert new.last["close_value"] <= old.last["close_value"] + 1e-9
            lower += new.last["close_value"] < old.last["close_value"] - 1e-9
            if st.talon_size() == 2:
                two_cards.add(new.last["close_value"] < old.last["close_value"] - 1e-9)
        if a_new == "close":
            assert a_old == "close"  # valued lower, a close is never newly made
    assert compared >= 10 and lower >= 1
    assert two_cards == {True, False}  # two-card closes were compared, some valued lower
