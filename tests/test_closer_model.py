"""Which kind of closer the opponent is (`arena.bots.closer_model`), on real matches."""

from __future__ import annotations

import pytest

from arena.bots.closer_model import CloserEvidence, before_lead
from arena.bots.expert import ExpertStrategy
from arena.bots.heuristic import HeuristicStrategy, close_by_rule
from arena.bots.inference import lead_values, marriage_lead, value_lead_chance, view
from arena.game import derive_seed, get_variant
from arena.play.selfplay import play_match


class _Seeing:
    """A player handed the referee's state before each decision (as the oracle is)."""

    sees_state = True
    state = None

    def __init__(self, player, log):
        self.player = player
        self.log = log

    def __call__(self, obs, legal):
        self.log.append((self, self.state.clone(), legal))
        return self.player(obs, legal)


class _RandomCloser(HeuristicStrategy):
    """The heuristic's play, but it closes at random, a fifth of the times it may."""

    def __call__(self, obs, legal):
        if "close" in legal and self.rng.random() < 0.2:
            return "close"
        if "draw" in legal:
            return "draw"
        return super().__call__(obs, [a for a in legal if a != "close"])


@pytest.mark.parametrize("variant", ["sixty-six", "schnapsen"])
def test_the_position_before_a_lead_is_the_one_the_leader_decided_in(variant):
    """Rebuilt from the state after the lead, the leader's hand, and so what the rule says,
    are those of its last decision where it could close; whether it closed is what it did."""
    v = get_variant(variant)
    checked = closed = 0
    for k in range(8):
        log = []
        heur, exp = _Seeing(HeuristicStrategy(k), log), _Seeing(ExpertStrategy(k, variant=v, effort=0.2), log)
        play_match(v, derive_seed(4, "match", k), [heur, exp] if k % 2 else [exp, heur])
        last_chance = None  # the heuristic's last decision where closing was open to it
        for who, st, legal in log:
            if who is heur and "close" in legal:
                last_chance = st
            if who is not exp or st.lead_card < 0 or st.leader == st.to_act:
                continue
            seen = before_lead(st)
            if seen is None:
                continue
            pre, did_close = seen
            o = pre.to_act
            assert last_chance is not None and last_chance.deal_no == st.deal_no
            assert last_chance.n_tricks == st.n_tricks and last_chance.hand[o] == pre.hand[o]
            assert did_close == (st.closed_by == o)
            assert close_by_rule(pre, o) == close_by_rule(last_chance, o) == did_close  # the heuristic's rule
            checked += 1
            closed += did_close
    assert checked >= 20 and closed >= 2


def test_the_evidence_names_a_player_of_the_rule_and_not_a_random_closer():
    """Over real matches with the expert's own sampled worlds: the heuristic closes by the
    rule, so the evidence rises; a player closing at random makes it fall."""
    v = get_variant("sixty-six")
    final = {"rule": [], "random": []}
    for k in range(6):
        for kind, opp in (("rule", HeuristicStrategy(k)), ("random", _RandomCloser(k))):
            me = ExpertStrategy(k, variant=v, effort=0.2, opponent_close="adaptive")
            play_match(v, derive_seed(6, "match", k), [me, opp] if k % 2 else [opp, me])
            assert me.closer.chances >= 3
            final[kind].append(me.closer.p_rule)
    assert sum(final["rule"]) / 6 > 0.5 > sum(final["random"]) / 6
    assert min(final["rule"]) > max(final["random"]) - 0.5


def test_a_lead_that_says_nothing_about_closing_is_not_evidence():
    """No lead on the table, a lead after the talon was closed or emptied: no evidence."""
    v = get_variant("sixty-six")
    log = []
    exp = _Seeing(ExpertStrategy(2, variant=v, effort=0.2), log)
    for k in range(4):
        play_match(v, derive_seed(5, "match", k), [exp, HeuristicStrategy(k)])
    ev = CloserEvidence(close_by_rule)
    prior = ev.p_rule
    kinds = set()
    for _, st, _ in log:
        closes = [e[2] for e in st.events if e[0] == "close"]
        if st.lead_card < 0:
            kinds.add("no lead")
        elif closes and closes[0] < st.n_tricks:
            kinds.add("closed before")
        elif st.talon_size() == 0:
            kinds.add("talon gone")
        else:
            continue
        assert before_lead(st) is None
        assert not ev.observe(lambda st=st: st, 3)
    assert kinds == {"no lead", "closed before", "talon gone"}
    assert ev.p_rule == prior and ev.chances == 0


def test_the_lead_chance_is_a_distribution_over_the_leaders_cards():
    """`value_lead_chance`: over the cards the leader could have led instead, the chances
    sum to 1, the card of best value is the likeliest, and a higher temperature is flatter."""
    v = get_variant("sixty-six")
    log = []
    exp = _Seeing(ExpertStrategy(1, variant=v, effort=0.2), log)
    play_match(v, derive_seed(7, "match", 0), [exp, HeuristicStrategy(0)])
    checked = 0
    for _, st, _ in log:
        if st.lead_card < 0 or st.strict or marriage_lead(st):
            continue
        o = st.leader
        h = st.hand[o] | 1 << st.lead_card
        led = []
        for c in range(24):
            if h >> c & 1:
                alt = st.clone()
                alt.hand[o] = h & ~(1 << c)
                alt.lead_card = c
                led.append((value_lead_chance(alt), value_lead_chance(alt, 8.0), c))
        assert abs(sum(x for x, _, _ in led) - 1) < 1e-9 and abs(sum(y for _, y, _ in led) - 1) < 1e-9
        best = max(lead_values(h, view(st, o)))[1]
        assert max(led)[2] == best or max(led)[0] == next(x for x, _, c in led if c == best)
        assert max(x for x, _, _ in led) >= max(y for _, y, _ in led) - 1e-12
        checked += 1
    assert checked >= 5
