"""The model of the opponent's open-phase lead (`arena.bots.inference`) and the expert's
worlds weighted by it (``lead_model="value"``)."""

from __future__ import annotations

import math
import random

import pytest

from arena.bots import inference
from arena.bots.expert import ExpertStrategy
from arena.bots.heuristic import HeuristicStrategy
from arena.bots.inference import (
    DECLINED,
    FLOOR,
    TEMPERATURE,
    Seen,
    declined_since,
    history_likelihood,
    lead_values,
    opponent_likelihood,
    value_lead_likelihood,
    view,
)
from arena.bots.playout import lead_likelihood
from arena.bots.worlds import InfoSet, Worlds
from arena.game import card_str, cards_of, deal_from_cards, derive_seed, get_variant, observation, parse_card
from arena.game.state import DRAW_PENDING, FOLLOW, LEAD
from arena.play.selfplay import play_match

LEADER = ["AD", "TD", "JH", "KH", "KS", "QS"]
OTHER = ["AC", "KD", "9D", "AH", "9S", "JS"]
TALON = ["TC", "KC", "QC", "JC", "QD", "JD", "TH", "QH", "9H", "AS", "TS"]


def _deal():
    """Sixty-Six, clubs trump (the nine turned up), seat 0 to lead from LEADER."""
    st = deal_from_cards("sixty-six", [LEADER, OTHER], "9C", TALON, dealer=1)
    assert st.to_act == 0
    return st


def _seen(st, s):
    """What seat ``s`` has not seen in ``st``, and the rest of its view, as the model takes it."""
    pool = st.hand[s ^ 1]
    for c in st.stock[st.stock_pos :]:
        pool |= 1 << c
    return Seen(pool, st.hand[s ^ 1].bit_count(), st.count(s), st.count(s ^ 1), st.trump, st.turn_up, st.ex_card, 11)


def test_lead_values_prefer_a_cheap_side_card_and_keep_marriage_halves_and_tens():
    st = _deal()
    values = {card_str(c): v for v, c in lead_values(st.hand[0], _seen(st, 0))}
    assert max(values, key=values.__getitem__) == "JH"  # the cheap side card
    # a ten that an unseen ace may take, and the spade marriage, are kept
    assert values["JH"] > values["KH"] > values["TD"]
    assert values["TD"] > values["KS"] and values["TD"] > values["QS"]


def _plain_deal():
    """As `_deal`, the queen of spades swapped for the other seat's jack: no marriage to show."""
    leader = ["AD", "TD", "JH", "KH", "KS", "JS"]
    other = ["AC", "KD", "9D", "AH", "9S", "QS"]
    st = deal_from_cards("sixty-six", [leader, other], "9C", TALON, dealer=1)
    assert st.to_act == 0
    return st


def test_value_lead_likelihood_weighs_the_card_led_against_the_best_lead():
    values = {card_str(c): v for v, c in lead_values(_plain_deal().hand[0], _seen(_plain_deal(), 0))}
    best = max(values.values())
    assert values["JH"] == best
    for card in ("JH", "KH", "TD", "AD"):
        st = _plain_deal()
        st.apply_action(f"play:{card}")
        want = max(FLOOR, math.exp(-(best - values[card]) / TEMPERATURE))
        assert value_lead_likelihood(st) == pytest.approx(want)
    st = _plain_deal()
    st.apply_action("play:JH")
    assert value_lead_likelihood(st) == 1.0
    st.apply_action("play:AH")  # the trick is complete: nothing on the table to weigh
    assert st.lead_card < 0 and value_lead_likelihood(st) == 1.0
    marriage = _deal()
    marriage.apply_action("marry:S")  # a lead bound to a marriage says nothing about the hand
    marriage.apply_action("play:KS")
    assert value_lead_likelihood(marriage) == 1.0
    assert lead_likelihood(marriage) == 1.0  # the 2.1.0 model too


def test_a_marriage_or_an_exchange_not_taken_makes_the_hand_unlikely():
    # Leading the jack of hearts while holding K+Q of spades: it would have shown them.
    st = _deal()
    st.apply_action("play:JH")
    assert value_lead_likelihood(st) == pytest.approx(DECLINED)
    # The trump nine held with the ace turned up, by a leader with a trick (so it may
    # exchange): it would have exchanged first.
    leader = ["9C", "TD", "JH", "KH", "KS", "JS"]
    other = ["TC", "KD", "9D", "AH", "9S", "QS"]
    talon = ["KC", "QC", "JC", "AD", "QD", "JD", "TH", "QH", "9H", "AS", "TS"]
    kept = deal_from_cards("sixty-six", [leader, other], "AC", talon, dealer=1)
    kept.apply_action("play:JH")
    kept.apply_action("play:9S")  # seat 0 takes the trick and leads again
    kept.apply_action("draw")
    assert kept.to_act == 0 and kept.tricks[0] == 1
    took = kept.clone()
    kept.apply_action("play:JS")
    took.apply_action("exchange")
    took.apply_action("play:JS")
    assert value_lead_likelihood(kept) <= DECLINED < value_lead_likelihood(took)


class _Recorder:
    """The heuristic, shown the referee's state (as the oracle is) to record, at each of its
    open-phase leads, the model's best card and the likelihood of the true world."""

    sees_state = True
    state = None

    def __init__(self, seed: int, log: list):
        self.heuristic = HeuristicStrategy(seed)
        self.log = log

    def __call__(self, obs, legal):
        action = self.heuristic(obs, legal)
        st = self.state
        plays = [a for a in legal if a.startswith("play:")]
        if st.phase == LEAD and not st.strict and st.marriage_suit < 0 and action in plays and len(plays) > 1:
            me = obs["seat"]
            best = max(lead_values(st.hand[me], _seen(st, me)))[1]
            after = st.clone()
            after.apply_action(action)
            self.log.append((obs, parse_card(action[5:]) == best, after))
        return action


def test_the_model_predicts_the_heuristics_leads_and_makes_the_true_world_likelier():
    log: list = []
    for k in range(12):
        play_match("sixty-six", derive_seed(4, "match", k), [_Recorder(k, log), _Recorder(k + 50, log)])
    assert len(log) > 150
    # The model is the heuristic's rule for leading, on a world: it names its lead nearly always.
    assert sum(hit for _, hit, _ in log) / len(log) > 0.9
    # So the true world (the leader's real hand) is likelier than the worlds the follower
    # samples uniformly, and the weighted sampler draws hands closer to the truth.
    rng = random.Random(3)
    v = get_variant("sixty-six")
    true_l, sampled_l = [], []
    for obs, _, after in log[::3]:
        seat = obs["seat"] ^ 1
        info = InfoSet(observation(after, seat), v)
        worlds = Worlds(info)
        true_l.append(value_lead_likelihood(after))
        sampled_l.append(sum(value_lead_likelihood(worlds.sample(rng)) for _ in range(30)) / 30)
    assert sum(true_l) / len(true_l) > sum(sampled_l) / len(sampled_l) + 0.1


def test_weighted_worlds_agree_with_the_observation():
    st = _plain_deal()
    st.apply_action("play:TD")
    obs = observation(st, 1)
    info = InfoSet(obs, "sixty-six")
    worlds = Worlds(info, value_lead_likelihood)
    rng = random.Random(9)
    drawn = [worlds.sample(rng) for _ in range(300)]
    for world in drawn:
        assert observation(world, 1) == obs
    # the ten is rarely led from a hand that holds a cheap side card it could lead instead
    uniform = Worlds(info)
    mean_w = sum(value_lead_likelihood(w) for w in drawn) / len(drawn)
    mean_u = sum(value_lead_likelihood(uniform.sample(rng)) for _ in range(300)) / 300
    assert mean_w > 2 * mean_u


def test_the_expert_with_the_value_model_plays_legal_deterministic_actions_and_refuses_unknown_models():
    st = _plain_deal()
    st.apply_action("play:TD")
    obs, legal = observation(st, 1), st.legal_action_strings()
    a = ExpertStrategy(5, effort=0.3, infer=True, lead_model="value")(obs, legal)
    assert a in legal
    assert ExpertStrategy(5, effort=0.3, infer=True, lead_model="value")(obs, legal) == a
    b = ExpertStrategy(5, effort=0.3, infer=True, lead_model="value+since")(obs, legal)
    assert b in legal
    c = ExpertStrategy(5, effort=0.3, infer=True, lead_model="history")(obs, legal)
    assert c in legal
    assert ExpertStrategy(5, effort=0.3, infer=True, lead_model="history")(obs, legal) == c
    msg = "lead_model must be one of cheap, value, value\\+since, history, got 'psychic'"
    with pytest.raises(ValueError, match=msg):
        ExpertStrategy(5, lead_model="psychic")


def test_an_exchange_not_taken_on_the_last_lead_weighs_on_until_cards_are_drawn():
    # Seat 0 holds the trump nine under the ace turned up, takes the first trick, and leads
    # again without exchanging though it may; seat 1 takes that trick.
    leader = ["9C", "TD", "JH", "KH", "KS", "JS"]
    other = ["TC", "KD", "9D", "AH", "9S", "QS"]
    talon = ["KC", "QC", "JC", "AD", "QD", "JD", "TH", "QH", "9H", "AS", "TS"]
    st = deal_from_cards("sixty-six", [leader, other], "AC", talon, dealer=1)
    for a in ("play:JH", "play:9S", "draw", "play:JS", "play:QS"):
        st.apply_action(a)
    assert st.to_act == 1 and st.phase == DRAW_PENDING
    # Before the draw its hand is the one it led from: it would have exchanged.
    assert declined_since(st) == pytest.approx(DECLINED)
    assert opponent_likelihood(st) == pytest.approx(DECLINED)
    st.apply_action("draw")
    assert st.to_act == 1 and st.phase == LEAD
    # One of its six cards is new: the nine was that card with chance 1/6.
    assert declined_since(st) == pytest.approx(1 / 6 + 5 / 6 * DECLINED)
    # A world in which seat 0 does not hold the nine is not weighed down.
    world = st.clone()
    swap = next(c for c in range(24) if world.hand[1] >> c & 1)
    world.hand[0] ^= (1 << world.ex_card) | (1 << swap)
    world.hand[1] ^= (1 << world.ex_card) | (1 << swap)
    assert declined_since(world) == 1.0
    # Nothing to weigh with the opponent's card on the table or the talon closed.
    st.apply_action("play:9D")
    assert st.phase == FOLLOW and declined_since(st) == 1.0


class _Leads:
    """The heuristic, shown the referee's state: its hand and view at each of its
    open-phase leads and follows."""

    sees_state = True
    state = None

    def __init__(self, seed: int):
        self.heuristic = HeuristicStrategy(seed)
        self.leads: dict[tuple[int, int], tuple[int, Seen]] = {}

    def __call__(self, obs, legal):
        action = self.heuristic(obs, legal)
        st = self.state
        if st.phase in (LEAD, FOLLOW) and not st.strict and action.startswith("play:"):
            self.leads[(st.deal_no, st.n_tricks)] = (st.hand[obs["seat"]], view(st, obs["seat"]))
        return action


class _Weigher:
    """The heuristic, shown the referee's state: at each of its decisions, the hands its
    opponent may have held at its past leads and follows (`history_likelihood`'s account)
    and how much each model's weight of the true world beats a uniform world's."""

    sees_state = True
    state = None

    def __init__(self, seed: int, variant, other: _Leads):
        self.heuristic = HeuristicStrategy(seed)
        self.rng = random.Random(seed)
        self.variant = variant
        self.other = other
        self.checked = 0
        self.nats = {"value": 0.0, "history": 0.0}

    def __call__(self, obs, legal):
        st = self.state
        if len(legal) > 1 and st.trick_log:
            hist = inference._History(st)
            at: dict = {}
            h = st.hand[hist.o] | (1 << st.lead_card if st.phase == FOLLOW else 0)
            hist.likelihood(h, at)
            for j, (dist, seen) in at.items():
                true_hand, true_view = self.other.leads[(st.deal_no, j)]
                # the true hand is one the history allows; the chances of the hands add to 1
                assert dist.get(true_hand, 0.0) > 0.0
                assert sum(dist.values()) == pytest.approx(1.0)
                # and the view then is the leader's own: unseen cards, counts, turn-up, talon
                assert seen.pool & ~true_hand == true_view.pool
                assert (seen.opp_n, seen.mine, seen.theirs, seen.turn_up, seen.ex_bonus) == (
                    true_view.opp_n, true_view.mine, true_view.theirs, true_view.turn_up, true_view.ex_bonus)
                self.checked += 1
        info = InfoSet(obs, self.variant)
        if not info.strict and len(legal) > 1:
            worlds = Worlds(info)
            sampled = [worlds.sample(self.rng) for _ in range(30)]
            for name, f in (("value", value_lead_likelihood), ("history", history_likelihood)):
                self.nats[name] += math.log(f(st) / (sum(f(w) for w in sampled) / len(sampled)))
        return self.heuristic(obs, legal)


@pytest.mark.parametrize("variant", ["sixty-six", "schnapsen"])
def test_the_history_rebuilds_the_opponents_past_plays_and_tells_more_than_the_lead_on_the_table(variant):
    v = get_variant(variant)
    checked = 0
    nats = {"value": 0.0, "history": 0.0}
    for k in range(6):
        other = _Leads(k + 100)
        me = _Weigher(k, v, other)
        play_match(v, derive_seed(8, "match", k), [me, other] if k % 2 else [other, me])
        checked += me.checked
        for name in nats:
            nats[name] += me.nats[name]
    assert checked > 100
    # the history weighs the same lead on the table and the opponent's past plays besides:
    # against the player the models were taken from, it says more about its hand
    assert nats["value"] > 0
    assert nats["history"] > 1.5 * nats["value"]


def test_history_weights_are_the_same_for_the_same_world_and_need_no_cache():
    st = _plain_deal()
    for a in ("play:JH", "play:9S", "draw", "play:JS", "play:QS", "draw"):
        st.apply_action(a)
    # seat 1 took the second trick and leads; seat 0 answers its lead and is weighing worlds
    st.apply_action("play:" + card_str(min(cards_of(st.hand[1]))))
    obs = observation(st, 0)
    worlds = Worlds(InfoSet(obs, "sixty-six"))
    rng = random.Random(2)
    drawn = [worlds.sample(rng) for _ in range(40)]
    first = [history_likelihood(w) for w in drawn]
    inference._HISTORY[0] = None  # a fresh account of the deal
    again = [history_likelihood(w) for w in reversed(drawn)][::-1]
    assert first == again
    assert all(0.0 < x <= 1.0 for x in first)
    # its lead on the table and its lead to the second trick both weigh: a world that
    # fits both is likelier than one that fits the one on the table only
    assert max(first) > min(first)
