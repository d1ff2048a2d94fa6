"""Property tests of the rules engine over many seeded deals (both presets).

Every deal is driven by ``random.Random`` from a fixed seed and checked step by step
against invariants that follow from RULES.md, computed here independently of the
engine's own bookkeeping: card conservation, trick accounting, the legal-action sets of
the lead, follow and draw phases (F1.6, F1.9-F1.13, F1.11, E1), the talon sizes (F1.7,
E9) and the result of each deal (F1.14-F1.19, F2.9, E4, E5, E7). Hypothesis drives the
information-set, bad-input and clone properties with ``derandomize=True`` and no
example database, so every run checks the same cases.
"""

from __future__ import annotations

import dataclasses
import json
import operator
import random
from collections import Counter
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.bots.strategies import make_strategy
from arena.game import (
    CLOSE,
    DECLARE,
    DRAW,
    EXCHANGE,
    MARRY,
    PASS,
    REASONS,
    TERMINAL,
    ActionError,
    DealResult,
    IllegalActionError,
    Match,
    State,
    action_str,
    card_str,
    cards_of,
    deck_order,
    get_variant,
    new_deal,
    observation,
    pack_of,
)
from arena.game.cards import POINTS, RANKS
from arena.play.selfplay import play_match

VARIANTS = ["sixty-six", "schnapsen"]
KING, QUEEN = RANKS.index("K"), RANKS.index("Q")
ALL_ACTION_STRINGS = [action_str(a) for a in range(PASS + 1)]
ACTION_IDS = {s: a for a, s in enumerate(ALL_ACTION_STRINGS)}

#: Deals per (variant, policy) in the bulk invariant test.
N_DEALS = 1000
#: No deal may take more actions than this (12 tricks of at most 6 actions each).
MAX_STEPS = 200

PROPERTY_SETTINGS = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


# -- independent rule helpers ---------------------------------------------------------------
def suit(c: int) -> int:
    return c // 6


def rank(c: int) -> int:
    """Rank index, 0 = Ace (strongest) .. 5 = nine."""
    return c % 6


def n_cards(mask: int) -> int:
    return mask.bit_count()


def mask_of(cards) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def trick_winner(leader: int, lead: int, follow: int, trump: int) -> int:
    """F1.5: higher card of the same suit, else the only trump, else the led card."""
    if suit(follow) == suit(lead):
        return leader if rank(lead) < rank(follow) else 1 - leader
    if suit(follow) == trump:
        return 1 - leader
    return leader


def strict_follows(hand: list[int], lead: int, trump: int) -> list[int]:
    """F1.11: head in suit, else follow in suit, else trump, else anything."""
    same = [c for c in hand if suit(c) == suit(lead)]
    higher = [c for c in same if rank(c) < rank(lead)]
    if higher:
        return higher
    if same:
        return same
    return [c for c in hand if suit(c) == trump] or hand


def trick_points(log, seat: int) -> int:
    return sum(POINTS[lc] + POINTS[fc] for _, lc, fc, w in log if w == seat)


def trick_counts(log) -> list[int]:
    return [sum(1 for t in log if t[3] == s) for s in (0, 1)]


def scale(tricks: int, count: int) -> int:
    """F1.17 from the loser's tricks and card points."""
    if tricks == 0:
        return 3
    return 2 if count < 33 else 1


@dataclasses.dataclass
class Trace:
    """What the driver saw happen in a deal, recorded before each action is applied."""

    trump: int
    marriages: list = dataclasses.field(default_factory=list)  # (seat, points)
    closer: int | None = None
    close_tricks: tuple = ()
    close_counts: tuple = ()
    declarer: int | None = None
    # Per lead turn (E1): reset when a card is led.
    did_exchange: bool = False
    married: int | None = None
    did_close: bool = False
    lead_talons: list = dataclasses.field(default_factory=list)
    lead_hand_sizes: list = dataclasses.field(default_factory=list)

    def counts(self, log, bonus: tuple = (0, 0)) -> list[int]:
        """Card points: tricks plus marriages, which count once the declarer has a trick."""
        tricks = trick_counts(log)
        return [
            trick_points(log, s) + bonus[s] + (sum(p for w, p in self.marriages if w == s) if tricks[s] else 0)
            for s in (0, 1)
        ]

    def record(self, state: State, a: int) -> None:
        s = state.current_player()
        if a < MARRY and state.phase_name == "lead":
            self.lead_talons.append(state.talon_size())
            self.lead_hand_sizes.append(n_cards(state.hand[s]))
            self.did_exchange = self.did_close = False
            self.married = None
        elif MARRY <= a < EXCHANGE:
            su = a - MARRY
            self.marriages.append((s, 40 if su == self.trump else 20))
            self.married = su
        elif a == EXCHANGE:
            self.did_exchange = True
        elif a == CLOSE:
            self.closer = s
            self.close_tricks = tuple(trick_counts(state.trick_log))
            self.close_counts = tuple(self.counts(state.trick_log))
            self.did_close = True
        elif a == DECLARE:
            self.declarer = s


def expected_legal(state: State, trace: Trace) -> list[int]:
    """The legal action ids under the preset rules, derived from RULES.md, not from the engine."""
    v = state.variant
    s = state.current_player()
    hand = list(cards_of(state.hand[s]))
    tricks = trick_counts(state.trick_log)
    exhausted = state.turn_up < 0
    talon_open = trace.closer is None and not exhausted
    phase = state.phase_name
    if phase == "follow":
        assert s == 1 - state.leader
        # F1.6 free play while the talon is open; F1.11 once closed or exhausted.
        return hand if talon_open else sorted(strict_follows(hand, state.lead_card, trace.trump))
    if phase == "draw":
        # F1.13: the winner may close before drawing (66 only), while more than two cards remain.
        assert v.close_before_draw and talon_open and state.talon_size() >= 4
        return [CLOSE, DECLARE, DRAW]
    assert phase == "lead", phase
    assert s == state.leader
    if trace.married is not None:
        acts = [trace.married * 6 + KING, trace.married * 6 + QUEEN]  # F1.10: lead one of the pair
    else:
        acts = list(hand)
        if not trace.did_close and (talon_open or v.marriage_after_close):
            held = state.hand[s]
            acts += [MARRY + su for su in range(4) if held >> (su * 6 + KING) & 1 and held >> (su * 6 + QUEEN) & 1]
        ex_card = trace.trump * 6 + RANKS.index(v.exchange_rank)
        if (
            not trace.did_exchange
            and not trace.did_close
            and talon_open
            and state.hand[s] >> ex_card & 1
            and (tricks[s] or not v.exchange_needs_trick)
        ):
            acts.append(EXCHANGE)  # F1.9 / F2.5
    if not trace.did_close and talon_open:
        acts.append(CLOSE)  # F1.13 / F2.7
    if tricks[s]:
        acts.append(DECLARE)  # F1.16, E6
    return sorted(acts)


def expected_result(state: State, trace: Trace) -> tuple:
    """(winner, game points, reason, points, tricks, declarer) per F1.14-F1.19, F2.9, E4, E5."""
    v = state.variant
    log = state.trick_log
    tricks = trick_counts(log)
    closer, d = trace.closer, trace.declarer
    played_out_unclosed = d is None and closer is None
    bonus = [0, 0]
    if played_out_unclosed and v.exhausted_rule == "higher_total":
        bonus[log[-1][3]] = 10  # F1.15 / F1.19
    count = trace.counts(log, tuple(bonus))

    def closer_out(c: int) -> tuple:
        o = 1 - c
        if v.close_score_basis == "at_close":
            return c, scale(trace.close_tricks[o], trace.close_counts[o]), "out"
        return c, scale(tricks[o], count[o]), "out"

    def failed_close(c: int) -> tuple:
        o = 1 - c
        return o, 3 if trace.close_tricks[o] == 0 else 2, "failed-close"

    if d is not None:
        o = 1 - d
        if count[d] >= 66:
            if closer is None:
                res = d, scale(tricks[o], count[o]), "out"
            elif closer == d:
                res = closer_out(d)
            else:
                res = d, 3 if trace.close_tricks[d] == 0 else 2, "beaten-closer"
        elif closer == d:
            res = failed_close(d)  # E5
        else:
            res = o, 3 if tricks[o] == 0 else 2, "false-claim"
    else:
        w = log[-1][3]
        if closer is not None:
            res = closer_out(closer) if w == closer and count[closer] >= 66 else failed_close(closer)  # E4
        elif v.exhausted_rule == "last_trick_wins":
            res = w, 1, "last-trick"
        elif count[0] == count[1]:
            res = None, 0, "drawn"
        else:
            winner = 0 if count[0] > count[1] else 1
            res = winner, scale(tricks[1 - winner], count[1 - winner]), "higher-total"
    return (*res, tuple(count), tuple(tricks), d)


# -- the driver ---------------------------------------------------------------------------------
POLICIES = {
    "random": (),  # uniform over all legal actions
    "no-declare": (DECLARE,),  # closes happen and closed deals are played to the last trick
    "playout": (CLOSE, DECLARE),  # every deal is played out, unclosed
    "honest": (DECLARE,),  # declares exactly when its count reaches 66, closes rarely
    "early-close": (DECLARE,),  # declares like "honest", closes at the first chance (opening lead)
}


def choose(state: State, rng: random.Random, policy: str) -> int:
    legal = state.legal_actions()
    if policy in ("honest", "early-close") and DECLARE in legal and state.count(state.current_player()) >= 66:
        return DECLARE
    if policy == "early-close" and CLOSE in legal:
        return CLOSE
    choices = [a for a in legal if a not in POLICIES[policy]]
    assert choices, f"no action outside {POLICIES[policy]} in {state!r}"
    if policy == "honest" and CLOSE in choices and rng.random() < 0.9:
        choices.remove(CLOSE)  # uniform play closes far too often to reach the other endings
    return rng.choice(choices)


def replay(state: State) -> State:
    """Rebuild a deal from its seed, dealer, match context and action list."""
    r = new_deal(state.variant, state.seed, state.dealer, score=state.score, carry=state.carry, deal_no=state.deal_no)
    for a in state.history:
        r.apply_action(a)
    return r


def check_state(state: State, trace: Trace) -> None:
    v = state.variant
    pack = pack_of(v)
    log = state.trick_log
    # Cards are conserved: every card of the pack is in exactly one place.
    places = [*cards_of(state.hand[0]), *cards_of(state.hand[1]), *state.stock[state.stock_pos :]]
    if state.turn_up >= 0:
        places.append(state.turn_up)
    for _, lc, fc, _ in log:
        places += [lc, fc]
    if state.lead_card >= 0:
        places.append(state.lead_card)
    assert sorted(places) == list(pack), f"cards not conserved in {state!r}"
    assert state.trump == trace.trump

    # Tricks: F1.4 (forehand first, then the winner leads), F1.5 (who wins), trick accounting.
    assert state.n_tricks == len(log)
    leader = (state.dealer + 1) % 2
    for lead, lc, fc, w in log:
        assert lead == leader
        assert w == trick_winner(lead, lc, fc, trace.trump), f"wrong trick winner {(lead, lc, fc, w)}"
        leader = w
    assert state.leader == leader
    assert list(state.tricks) == trick_counts(log)
    bonus = [0, 0]
    if state.result is not None and state.result.reason in ("higher-total", "drawn"):
        bonus[log[-1][3]] = 10
    assert list(state.points) == [trick_points(log, s) + bonus[s] for s in (0, 1)]

    # E9: the talon always holds an even number of cards.
    assert state.talon_size() % 2 == 0
    assert 0 <= state.talon_size() <= 2 * (len(pack) // 2 - v.hand_size)

    # Hand sizes and phases.
    h0, h1 = n_cards(state.hand[0]), n_cards(state.hand[1])
    phase = state.phase_name
    assert (phase == "follow") == (state.lead_card >= 0)
    if phase == "follow":
        assert n_cards(state.hand[1 - state.leader]) == n_cards(state.hand[state.leader]) + 1
    else:
        assert h0 == h1
    talon_open = trace.closer is None and state.turn_up >= 0
    if phase == "lead" and talon_open:
        assert h0 == v.hand_size  # F1.7: both hold a full hand again before each open-phase lead
    if phase == "draw":
        assert h0 == v.hand_size - 1

    legal = state.legal_actions()
    if state.is_over():
        assert legal == [] and state.legal_action_strings() == []
        assert state.current_player() == TERMINAL
        assert state.result is not None
        return
    assert state.result is None
    assert state.returns() == (0, 0)
    assert state.current_player() in (0, 1)
    assert legal, f"no legal action in {state!r}"
    assert all(a < b for a, b in zip(legal, legal[1:], strict=False)), f"unsorted or duplicated: {legal}"
    assert state.legal_action_strings() == [action_str(a) for a in legal]
    for a in legal:
        c = state.clone()
        c.apply_action(action_str(a))
        assert c.history == [*state.history, a]
    assert legal == expected_legal(state, trace), f"legal actions differ from RULES.md in {state!r}"


def check_result(state: State, trace: Trace) -> None:
    v = state.variant
    r = state.result
    assert isinstance(r, DealResult)
    assert r.reason in REASONS
    if r.winner is None:
        assert r.reason == "drawn" and r.game_points == 0
    else:
        assert r.winner in (0, 1) and 1 <= r.game_points <= 3 and r.reason != "drawn"
    ret = state.returns()
    assert len(ret) == 2 and sum(ret) == 0
    if r.winner is not None:
        assert ret[r.winner] == r.game_points
    assert r.points == tuple(state.count(s) for s in (0, 1))
    got = (r.winner, r.game_points, r.reason, r.points, r.tricks, r.declarer)
    assert got == expected_result(state, trace), f"result differs from RULES.md: {state!r}"

    # Card points won in tricks.
    played = sum(POINTS[lc] + POINTS[fc] for _, lc, fc, _ in state.trick_log)
    if trace.declarer is None:  # played to the last trick
        assert state.hand == [0, 0]
        if trace.closer is None:
            assert played == 120
            assert state.n_tricks == len(pack_of(v)) // 2
            assert sum(state.points) == 120 + (10 if v.exhausted_rule == "higher_total" else 0)
        else:
            unplayed = sum(POINTS[c] for c in state.stock[state.stock_pos :]) + POINTS[state.turn_up]
            assert played + unplayed == 120
            assert sum(state.points) == played


def run_deal(variant: str, seed: int, dealer: int, policy: str) -> tuple[State, Trace]:
    """Play one random deal, checking every state; return the final state and its trace."""
    state = new_deal(variant, seed, dealer)
    trace = Trace(trump=state.turn_up // 6)
    rng = random.Random(seed ^ 0x5EED)
    for _ in range(MAX_STEPS):
        check_state(state, trace)
        if state.is_over():
            check_result(state, trace)
            return state, trace
        a = choose(state, rng, policy)
        trace.record(state, a)
        state.apply_action(a)
    raise AssertionError(f"deal {variant} seed {seed} did not end in {MAX_STEPS} actions")


# -- 1. invariants over thousands of deals ---------------------------------------------------------
@pytest.mark.parametrize("policy", list(POLICIES))
@pytest.mark.parametrize("variant", VARIANTS)
def test_random_deals_keep_invariants(variant: str, policy: str) -> None:
    v = get_variant(variant)
    # expected_legal and expected_result spell out these flags' preset values only.
    assert (v.exchange_timing, v.out_timing, v.exchange_on_close, v.marriage_needs_trick) == (
        "lead_only",
        "after_trick_or_meld",
        "none",
        "to_count",
    )
    assert (v.marriage_lead, v.close_min_talon, v.exchange_min_talon, v.schneider_at) == ("either", 2, 2, 33)
    assert (v.failed_close, v.beaten_closer, v.false_claim, v.auto_out) == ("two_or_three",) * 3 + (False,)
    n_tricks = len(pack_of(v)) // 2
    talon0 = len(pack_of(v)) - 2 * v.hand_size
    played_out_reasons = {"higher_total": {"higher-total", "drawn"}, "last_trick_wins": {"last-trick"}}[
        v.exhausted_rule
    ]
    reasons: Counter = Counter()
    for seed in range(N_DEALS):
        state, trace = run_deal(variant, seed, seed % 2, policy)
        reasons[state.result.reason] += 1
        # F1.7 / E9: talon sizes before the leads are even and never grow.
        assert all(t % 2 == 0 for t in trace.lead_talons), trace.lead_talons
        assert trace.lead_talons == sorted(trace.lead_talons, reverse=True)
        if policy == "playout":
            assert trace.closer is None and trace.declarer is None
            assert state.result.reason in played_out_reasons
            # 12, 10, ..., 2 then 0 for the rest (10, 8, ..., 2, 0 in Schnapsen).
            assert trace.lead_talons == [max(talon0 - 2 * k, 0) for k in range(n_tricks)]
            assert trace.lead_hand_sizes == [min(v.hand_size, n_tricks - k) for k in range(n_tricks)]
    # The policies really reach the endings they are meant to exercise.
    if policy == "playout":
        assert set(reasons) == played_out_reasons  # both endings of F1.19 occur
    elif policy == "random":
        assert {"out", "false-claim", "failed-close"} <= set(reasons)
    elif policy == "no-declare":
        assert {"out", "failed-close"} <= set(reasons)
    elif policy == "honest":
        assert {
            "out",
            "failed-close",
            "beaten-closer",
            "higher-total" if v.deck == 24 else "last-trick",
        } <= set(reasons)
    elif policy == "early-close":  # the closer's opponent has no trick at the close: 3-point endings
        assert {"out", "failed-close", "beaten-closer"} <= set(reasons)


# -- 2. determinism ------------------------------------------------------------------------------
@PROPERTY_SETTINGS
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 2**64), dealer=st.integers(0, 1))
def test_same_seed_same_deal(variant: str, seed: int, dealer: int) -> None:
    a, b = new_deal(variant, seed, dealer), new_deal(variant, seed, dealer)
    assert a == b
    assert a.hand == b.hand and a.turn_up == b.turn_up and a.stock == b.stock
    # The dealer only decides who gets which batches: the forehand's cards are the same.
    other = new_deal(variant, seed, 1 - dealer)
    assert other.hand == a.hand[::-1] and other.turn_up == a.turn_up and other.stock == a.stock


@pytest.mark.parametrize("variant", VARIANTS)
def test_different_seeds_give_different_deals(variant: str) -> None:
    deals = set()
    for seed in range(3000):
        s = new_deal(variant, seed, 0)
        deals.add((tuple(s.hand), s.turn_up, s.stock))
    assert len(deals) == 3000


PAIRINGS = [("random", "random"), ("greedy", "random"), ("random", "greedy"), ("greedy", "greedy")]


@pytest.mark.parametrize("pairing", PAIRINGS, ids="-".join)
@pytest.mark.parametrize("variant", VARIANTS)
def test_seeded_match_is_reproducible(variant: str, pairing: tuple[str, str]) -> None:
    v = get_variant(variant)
    for seed in (3, 20240601):

        def run(seed: int = seed) -> Match:
            players = [make_strategy(name, 1000 * seed + i) for i, name in enumerate(pairing)]
            return play_match(variant, seed, players)

        m1, m2 = run(), run()
        assert [d.history for d in m1.deals] == [d.history for d in m2.deals]
        assert [d.result for d in m1.deals] == [d.result for d in m2.deals]
        assert m1.deals == m2.deals
        assert m1.score == m2.score and m1.result == m2.result
        score = [0, 0]
        for k, deal in enumerate(m1.deals):
            assert deal.is_over()
            assert deal.seed == m1.deal_seed(k) and deal.deal_no == k
            assert list(deal.score) == score  # each deal is shown the score before it
            if k:
                assert deal.dealer == 1 - m1.deals[k - 1].dealer  # F1.2 / F2.2: the deal alternates
            assert replay(deal) == deal
            assert max(score) < v.target  # the match did not go on past its end
            if deal.result.winner is not None:
                score[deal.result.winner] += deal.result.game_points
        assert score == m1.score and max(score) >= v.target
        assert m1.result.winner == score.index(max(score))


def test_different_seeds_give_different_matches() -> None:
    def histories(seed: int, strategy_seed: int) -> list:
        players = [make_strategy("random", strategy_seed), make_strategy("random", strategy_seed + 1)]
        return [d.history for d in play_match("sixty-six", seed, players).deals]

    assert histories(1, 10) != histories(2, 10)
    assert histories(1, 10) != histories(1, 12)


# -- 3. the deal: sizes, order, uniformity ----------------------------------------------------------
@pytest.mark.parametrize("variant", VARIANTS)
def test_deal_shape_and_fixed_order(variant: str) -> None:
    v = get_variant(variant)
    pack = pack_of(v)
    talon = {24: 12, 20: 10}[v.deck]
    for seed in range(500):
        for dealer in (0, 1):
            s = new_deal(variant, seed, dealer)
            fh = (dealer + 1) % 2
            assert [n_cards(h) for h in s.hand] == [v.hand_size] * 2
            assert s.talon_size() == talon and len(s.stock) == talon - 1 and s.stock_pos == 0
            assert s.current_player() == fh == s.leader and s.phase_name == "lead"
            assert s.trump == s.turn_up // 6
            # F1.3: 3 + 3 to forehand and dealer, 3 + 3, turn-up, talon.
            # F2.2: 3 + 3, turn-up, 2 + 2, talon.
            order = deck_order(pack, seed)
            assert sorted(order) == list(pack)
            if v.deck == 24:
                fh_cards, d_cards, tu, top = order[0:3] + order[6:9], order[3:6] + order[9:12], 12, 13
            else:
                fh_cards, d_cards, tu, top = order[0:3] + order[7:9], order[3:6] + order[9:11], 6, 11
            assert s.hand[fh] == mask_of(fh_cards) and s.hand[dealer] == mask_of(d_cards)
            assert s.turn_up == order[tu] and s.stock == tuple(order[top:])


#: 0.999 quantiles of chi-square: df 23 (24 cards) and df 19 (20 cards).
CHI2_999 = {24: 49.73, 20: 43.82}
N_UNIFORM = {"sixty-six": 24_000, "schnapsen": 20_000}


def chi_square(counts: Counter, cells: tuple[int, ...], n: int) -> float:
    expected = n / len(cells)
    assert set(counts) <= set(cells)
    return sum((counts[c] - expected) ** 2 / expected for c in cells)


@pytest.mark.parametrize("variant", VARIANTS)
def test_turn_up_and_top_of_talon_are_uniform(variant: str) -> None:
    v = get_variant(variant)
    pack = pack_of(v)
    n = N_UNIFORM[variant]
    turn_ups: Counter = Counter()
    tops: Counter = Counter()
    for seed in range(n):
        s = new_deal(variant, seed, seed % 2)
        turn_ups[s.turn_up] += 1
        tops[s.stock[0]] += 1
    crit = CHI2_999[v.deck]
    assert chi_square(turn_ups, pack, n) < crit, sorted(turn_ups.items())
    assert chi_square(tops, pack, n) < crit, sorted(tops.items())


# -- 4. information sets ---------------------------------------------------------------------------
def reach(variant: str, seed: int, dealer: int, policy: str, progress: int) -> tuple[State, int]:
    """Random play through ``progress`` percent of a deal's actions; also the publicly seen cards.

    The deal is first played to its end to learn its length, so that the states drawn are
    spread over the whole deal (opening, open phase, closed or exhausted talon, over).
    """
    full = new_deal(variant, seed, dealer)
    rng = random.Random(seed)
    while not full.is_over():
        full.apply_action(choose(full, rng, policy))
    stop = round(len(full.history) * progress / 100)
    public = 0  # every card that was ever face up: turn-ups and the pairs of marriages (F1.21)
    state = new_deal(variant, seed, dealer)
    for a in full.history[:stop]:
        if state.turn_up >= 0:
            public |= 1 << state.turn_up
        if MARRY <= a < EXCHANGE:
            su = a - MARRY
            public |= (1 << su * 6 + KING) | (1 << su * 6 + QUEEN)
        state.apply_action(a)
    if state.turn_up >= 0:
        public |= 1 << state.turn_up
    return state, public


def values(obj) -> Iterator:
    if isinstance(obj, dict):
        for k, x in obj.items():
            yield k
            yield from values(x)
    elif isinstance(obj, list | tuple):
        for x in obj:
            yield from values(x)
    else:
        yield obj


def as_json_types(obj):
    """``obj`` with tuples as lists, as a JSON round trip returns it."""
    if isinstance(obj, dict):
        return {k: as_json_types(x) for k, x in obj.items()}
    if isinstance(obj, list | tuple):
        return [as_json_types(x) for x in obj]
    return obj


deal_points = dict(
    variant=st.sampled_from(VARIANTS),
    seed=st.integers(10**7, 2**63),
    dealer=st.integers(0, 1),
    policy=st.sampled_from(list(POLICIES)),
    progress=st.sampled_from(range(101)),  # percent of the deal; spreads states better than integers()
)


@PROPERTY_SETTINGS
@given(seat=st.integers(0, 1), perm_seed=st.integers(0, 2**32), **deal_points)
def test_observation_is_an_information_set(
    variant: str, seed: int, dealer: int, policy: str, progress: int, seat: int, perm_seed: int
) -> None:
    state, public = reach(variant, seed, dealer, policy, progress)
    opp = 1 - seat
    obs = observation(state, seat)
    text = json.dumps(obs, allow_nan=False)  # (a) JSON-serialisable
    assert json.loads(text) == as_json_types(obs)  # and nothing is lost on the way (tuples become lists)

    assert obs["hand"] == [card_str(c) for c in cards_of(state.hand[seat])]
    assert obs["known_cards"][seat] == []
    # The opponent's cards this seat knows are exactly the ones that were shown face up.
    assert obs["known_cards"][opp] == [card_str(c) for c in cards_of(state.hand[opp] & public)]
    known = sum(1 << c for c in cards_of(state.hand[opp]) if card_str(c) in obs["known_cards"][opp])
    hidden_opp = list(cards_of(state.hand[opp] & ~known))
    talon = list(state.stock[state.stock_pos :])
    # (b) no hidden card is named anywhere in the observation.
    for c in hidden_opp + talon:
        assert card_str(c) not in text, f"hidden card {card_str(c)} leaks to seat {seat}: {text}"
    # ... nor is the seed.
    assert state.seed not in list(values(obs)) and str(state.seed) not in text

    # (c) permuting the hidden cards among their places does not change the observation.
    places = hidden_opp + talon
    shuffled = random.Random(perm_seed).sample(places, len(places))
    twin = state.clone()
    twin.hand[opp] = (state.hand[opp] & known) | mask_of(shuffled[: len(hidden_opp)])
    twin.stock = state.stock[: state.stock_pos] + tuple(shuffled[len(hidden_opp) :])
    assert sorted(places) == sorted(cards_of(twin.hand[opp] & ~known) + twin.stock[twin.stock_pos :])
    assert observation(twin, seat) == obs
    if twin.hand[opp] != state.hand[opp]:
        assert observation(twin, opp) != observation(state, opp)  # control: the permutation did move cards


# -- 5. bad input ----------------------------------------------------------------------------------
action_texts = st.one_of(
    st.text(max_size=12),
    st.sampled_from(ALL_ACTION_STRINGS),
    st.builds(
        operator.add,
        st.sampled_from(["play:", "marry:", "PLAY:", "play", "marry:", " play:", "play: ", "marry: ", ""]),
        st.text(alphabet="ATKQJ9CDHSatkqjcdhs0123 :\x00", max_size=3),
    ),
    st.sampled_from([s.upper() for s in ALL_ACTION_STRINGS] + [s + " " for s in ALL_ACTION_STRINGS]),
)


@PROPERTY_SETTINGS
@given(action=action_texts, **deal_points)
def test_bad_action_text_is_rejected_and_changes_nothing(
    variant: str, seed: int, dealer: int, policy: str, progress: int, action: str
) -> None:
    assert issubclass(ActionError, ValueError) and issubclass(IllegalActionError, ValueError)
    state, _ = reach(variant, seed, dealer, policy, progress)
    before = state.clone()
    if action in state.legal_action_strings():
        state.apply_action(action)
        expected = before.clone()
        expected.apply_legal(ACTION_IDS[action])
        assert state == expected
        return
    with pytest.raises((ActionError, IllegalActionError)) as err:
        state.apply_action(action)
    # Well-formed but not legal here is IllegalActionError; anything else is malformed.
    assert err.type is (IllegalActionError if action in ACTION_IDS else ActionError)
    assert state == before


@PROPERTY_SETTINGS
@given(
    action=st.one_of(
        st.integers(),
        st.integers(-3, PASS + 3),
        st.sampled_from([None, True, False, 1.0, b"play:AC", ("play:AC",), ["close"]]),
    ),
    **deal_points,
)
def test_bad_action_ids_are_rejected_and_change_nothing(
    variant: str, seed: int, dealer: int, policy: str, progress: int, action: object
) -> None:
    state, _ = reach(variant, seed, dealer, policy, progress)
    before = state.clone()
    if type(action) is int and action in state.legal_actions():
        state.apply_action(action)
        assert state.history == [*before.history, action]
        return
    with pytest.raises((ActionError, IllegalActionError)) as err:
        state.apply_action(action)
    assert err.type is (IllegalActionError if type(action) is int else ActionError)
    assert state == before


# -- 6. clone independence ---------------------------------------------------------------------------
@PROPERTY_SETTINGS
@given(branch_seed=st.integers(0, 2**32), **deal_points)
def test_clone_is_independent(
    variant: str, seed: int, dealer: int, policy: str, progress: int, branch_seed: int
) -> None:
    state, _ = reach(variant, seed, dealer, policy, progress)
    snapshot = replay(state)  # built without clone()
    assert snapshot == state
    twin = state.clone()
    assert twin == state and twin is not state
    for name in State.__slots__:
        value = getattr(state, name)
        assert getattr(twin, name) == value
        if isinstance(value, list):
            assert getattr(twin, name) is not value, f"clone shares the list {name}"
    # Play the clone to the end: the original does not move.
    rng = random.Random(branch_seed)
    moved = False
    while not twin.is_over():
        twin.apply_action(rng.choice(twin.legal_actions()))
        moved = True
    assert state == snapshot
    assert state.hand == snapshot.hand and state.history == snapshot.history
    assert state.trick_log == snapshot.trick_log and state.points == snapshot.points
    if moved:
        assert twin != state
    # And the other way round: moving the original leaves an earlier clone alone.
    if not state.is_over():
        twin = state.clone()
        state.apply_action(rng.choice(state.legal_actions()))
        assert twin == snapshot and twin != state
