"""Playouts: a cheap, deterministic policy on engine states (`policy_action`) and
`playout`, which plays a world to the end of its deal with it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from ..game.actions import CLOSE, DECLARE, DRAW, EXCHANGE, MARRY
from ..game.cards import KING, MARRIAGE_BITS, POINTS, QUEEN, SUIT_MASK, cards_of
from ..game.state import CLOSE_OFFER, DRAW_PENDING, FOLLOW, LEAD, OVER, State
from ..game.variant import Variant
from .inference import marriage_lead

__all__ = ["close_pays", "lead_likelihood", "may_close", "modeled_policy", "playout", "policy_action", "result_value"]


def policy_action(st: State, closes: Callable[[State, int], bool] | None = None) -> int:
    """A fast, greedy-like choice for the seat to act in a (perfect-information) world:
    the playout policy. ``closes(state, seat)``, if given, decides whether to close
    instead of the policy's own test (`close_pays`; see `modeled_policy`).

    Claims 66 when true, always exchanges and shows marriages (40 first). Closes when a
    quick playout of the closed deal with every card known wins it (from a count of
    `CLOSE_PROBE_COUNT`). Open talon: leads its cheapest non-trump card outside a
    marriage pair; follows with the card that best weighs the trick (its points, pending
    marriage points, reaching 66) against what the card is worth keeping (trump power,
    aces and tens that rule their suit, marriage halves). Strict phase: leads a card the
    opponent cannot beat (the richest), else its cheapest; follows by winning as cheaply
    as it can, else by playing its cheapest legal card. The answer is always one of
    ``st.legal_actions()``; they are computed only when a special action may be open.
    """
    ph = st.phase
    s = st.to_act
    v = st.variant
    if ph == FOLLOW:
        if v.out_timing == "any_time" and st.tricks[s] and st.count(s) >= 66:
            return DECLARE
        return _policy_follow(st, s) if st.strict else _follow_kv(st, s)
    if ph == LEAD:
        return _policy_lead(st, s) if closes is None else _policy_lead(st, s, closes)
    if ph == DRAW_PENDING:
        if st.tricks[s] and st.count(s) >= 66:
            return DECLARE
        return CLOSE if (close_pays if closes is None else closes)(st, s) else DRAW
    if ph == CLOSE_OFFER:
        return EXCHANGE
    raise ValueError("policy_action: the deal is over")


#: The playout policy considers closing only from this count on.
CLOSE_PROBE_COUNT = 30


def may_close(st: State, s: int) -> bool:
    """Whether a playout asks if ``s`` closes: closing allowed at all, a count of
    `CLOSE_PROBE_COUNT` or more (pending marriage points included) and enough talon cards
    to close."""
    cnt = st.count(s) + (st.mpending[s] if not st.tricks[s] else 0)
    if cnt < CLOSE_PROBE_COUNT:
        return False
    v = st.variant
    return v.closing and st.talon_size() >= v.close_min_talon and (v.close_on_first_lead or st.n_tricks > 0)


def close_pays(st: State, s: int) -> bool:
    """Whether closing now wins the deal for ``s`` when the rest is played out greedily
    with every card known (`_closed_sim`: a quick perfect-information test, for playouts)."""
    if not may_close(st, s):
        return False
    v = st.variant
    o = s ^ 1
    return _closed_sim(
        v,
        st.trump,
        st.hand[s],
        st.hand[o],
        st.count(s),
        st.count(o),
        st.tricks[s],
        st.tricks[o],
        st.mpending[s],
        st.mpending[o],
    )


def _closed_sim(v: Variant, trump: int, hc: int, ho: int, pc: int, po: int, tc: int, to: int, mc: int, mo: int) -> bool:
    """Greedy strict-phase play of a deal the first seat (hands ``hc``, counts ``pc``,
    tricks ``tc``, pending marriage points ``mc``) has just closed and leads: does the
    closer reach 66 on lead, or take the last trick with 66, before the other seat gets
    the lead with 66? The leader leads its richest sure winner, else its cheapest card;
    the follower wins as cheaply as it can, else plays its cheapest legal card."""
    head = v.strict_must_head
    must_trump = v.strict_must_trump
    pts = POINTS
    closer_leads = True
    while True:
        if closer_leads:
            if tc and pc >= 66:
                return True
            hl, hf = hc, ho
        else:
            if to and po >= 66:
                return False
            hl, hf = ho, hc
        lc = _strict_lead(hl, hf, trump)
        ls = lc // 6
        fc = _strict_follow(hf, lc, trump, head, must_trump)
        fs = fc // 6
        follower_wins = fc < lc if fs == ls else fs == trump
        g = pts[lc] + pts[fc]
        if closer_leads:
            hc ^= 1 << lc
            ho ^= 1 << fc
        else:
            ho ^= 1 << lc
            hc ^= 1 << fc
        closer_won = closer_leads != follower_wins
        if closer_won:
            pc += g + (mc if not tc else 0)
            tc += 1
        else:
            po += g + (mo if not to else 0)
            to += 1
        if not hc:
            return closer_won and pc >= 66
        closer_leads = closer_won


def _policy_lead(st: State, s: int, close_pays: Callable[[State, int], bool] = close_pays) -> int:
    h = st.hand[s]
    if st.tricks[s] and st.count(s) >= 66:
        return DECLARE
    trump = st.trump
    ms = st.marriage_suit
    step = st.step
    if ms >= 0:
        if not st.strict and step <= 2 and close_pays(st, s):
            return CLOSE
        k = ms * 6 + KING
        return k if st.variant.marriage_lead == "king_only" else k + 1
    can_exchange = step == 0 and st.turn_up >= 0 and h >> st.ex_card & 1
    if can_exchange or (step <= 1 and (h >> KING) & (h >> QUEEN) & MARRIAGE_BITS):
        acts = st.legal_actions()
        if EXCHANGE in acts:
            return EXCHANGE
        best_m = -1
        for a in acts:
            if MARRY <= a < EXCHANGE:
                if a - MARRY == trump:
                    return a
                if best_m < 0:
                    best_m = a
        if best_m >= 0:
            return best_m
    if not st.strict and step <= 2 and close_pays(st, s):
        return CLOSE
    if not st.strict:
        return _cheapest_open_lead(h, trump)
    return _strict_lead(h, st.hand[s ^ 1], trump)


def modeled_policy(
    me: int, close_rule: Callable[[State, int], bool] | None, own_rule: Callable[[State, int], bool] | None = None
) -> Callable[[State], int]:
    """The playout policy with the other seat of ``me`` closing by ``close_rule(state,
    seat)`` (a model of how it decides from its own information) instead of the policy's
    perfect-information test; from a count of `CLOSE_PROBE_COUNT`, where closing is legal.
    ``me`` plays `policy_action` unchanged, or closes by ``own_rule`` if given (None for
    either: that seat's perfect-information test)."""

    def rule_test(rule: Callable[[State, int], bool] | None) -> Callable[[State, int], bool] | None:
        if rule is None:
            return None
        return lambda st, s: may_close(st, s) and rule(st, s)

    other, own = rule_test(close_rule), rule_test(own_rule)

    def policy(st: State) -> int:
        return policy_action(st, own if st.to_act == me else other)

    return policy


def _strict_lead(h: int, o: int, trump: int) -> int:
    """Strict-phase lead from ``h`` against the hand ``o``: the richest card ``o`` cannot
    beat, else the cheapest card (side suits before trumps)."""
    best, best_key = -1, 1 << 30
    pts = POINTS
    tm = SUIT_MASK[trump]
    for c in cards_of(h):
        t = c // 6 == trump
        same = o & SUIT_MASK[c // 6]
        if (not same & ((1 << c) - 1)) if same else (t or not o & tm):
            key = t - 4 * pts[c]
        else:
            key = 1000 + 2 * pts[c] + t
        if key < best_key:
            best, best_key = c, key
    return best


def _strict_follow(h: int, lc: int, trump: int, head: bool, must_trump: bool) -> int:
    """Strict-phase follow from ``h`` to the lead ``lc`` under the variant's follow rules
    (``head``: must beat the lead in its suit if it can; ``must_trump``: must trump when
    void): the cheapest legal winner, else the cheapest legal card."""
    ls = lc // 6
    same = h & SUIT_MASK[ls]
    if same:
        legal = (same & ((1 << lc) - 1) or same) if head else same
    elif must_trump and h & SUIT_MASK[trump]:
        legal = h & SUIT_MASK[trump]
    else:
        legal = h
    best, best_key = -1, 1 << 30
    pts = POINTS
    for c in cards_of(legal):
        cs = c // 6
        t = cs == trump
        key = (0 if (c < lc if cs == ls else t) else 1000) + 2 * pts[c] + t
        if key < best_key:
            best, best_key = c, key
    return best


def _open_lead_key(c: int, h: int, trump: int) -> int:
    """How reluctant the open-phase policy is to lead ``c`` from hand ``h``: trumps last,
    then marriage halves, else by points (the lowest key is led)."""
    r = c % 6
    key = (1000 if c // 6 == trump else 0) + 2 * POINTS[c]
    if (r == KING and h >> (c + 1) & 1) or (r == QUEEN and h >> (c - 1) & 1):
        key += 100
    return key


def _cheapest_open_lead(h: int, trump: int) -> int:
    best, best_key = -1, 1 << 30
    for c in cards_of(h):
        key = _open_lead_key(c, h, trump)
        if key < best_key:
            best, best_key = c, key
    return best


#: `lead_likelihood`: how fast a lead's likelihood falls with its key above the cheapest
#: (a ten led from a hand holding a jack of another side suit: exp(-16 / 8), about 0.14).
LEAD_TEMPERATURE = 8.0
#: ... and never below this: a model of someone else's play is only a model.
LEAD_FLOOR = 0.05


def lead_likelihood(st: State) -> float:
    """How likely, relative to the likeliest hand, the card on the table was led from the
    hand the opponent holds in this world, if it leads as the open-phase policy does
    (cheap side cards first, marriage halves and trumps kept; softened by
    `LEAD_TEMPERATURE`, floored at `LEAD_FLOOR`). 1.0 where there is nothing to infer: no
    card on the table, a lead bound to a marriage, or a lead after the close or the last
    draw (the policy leads by the other hand there)."""
    if st.phase != FOLLOW or st.strict or marriage_lead(st):
        return 1.0
    lc = st.lead_card
    h = st.hand[st.leader] | 1 << lc
    trump = st.trump
    low = min(_open_lead_key(c, h, trump) for c in cards_of(h))
    x = _open_lead_key(lc, h, trump) - low
    return 1.0 if x <= 0 else max(LEAD_FLOOR, math.exp(-x / LEAD_TEMPERATURE))


def _policy_follow(st: State, s: int) -> int:
    """Strict-phase follow: the cheapest legal winner, else the cheapest legal card."""
    v = st.variant
    return _strict_follow(st.hand[s], st.lead_card, st.trump, v.strict_must_head, v.strict_must_trump)


_KEEP_TRUMP = (14, 11, 7, 7, 6, 5)


def _gone(st: State) -> int:
    """Cards out of play in a world: in neither hand, not in the talon."""
    live = st.hand[0] | st.hand[1]
    if st.turn_up >= 0:
        live |= 1 << st.turn_up
    for c in st.stock[st.stock_pos :]:
        live |= 1 << c
    return ((1 << 24) - 1) & ~live


def _keep(c: int, h: int, gone: int, st: State) -> float:
    """What card ``c`` is worth in hand ``h`` beyond its points: its power to win later
    tricks and to make a marriage (``gone``: cards out of play)."""
    s, r = divmod(c, 6)
    trump = st.trump
    if s == trump:
        v = _KEEP_TRUMP[r]
        if r == 1 and (gone | h) >> (s * 6) & 1:
            v = 13
        if c == st.ex_card and st.turn_up >= 0 and st.talon_size() >= 4:
            v += 4
    elif r == 0:
        v = 4
    elif r == 1:
        v = 4 if (gone | h) >> (s * 6) & 1 else 1
    else:
        v = 0
    if r == KING or r == QUEEN:
        partner = c + 1 if r == KING else c - 1
        mp = 40 if s == trump else 20
        if h >> partner & 1:
            v += 0.75 * mp
        elif not gone >> partner & 1:
            v += mp / 10
    return v


def _follow_kv(st: State, s: int) -> int:
    """Open-phase follow weighing the trick against the keep value of the card spent."""
    lc = st.lead_card
    trump = st.trump
    h = st.hand[s]
    lead = st.leader
    ls = lc // 6
    gone = _gone(st) | (1 << lc)
    pend_s = st.mpending[s] if not st.tricks[s] else 0
    pend_l = st.mpending[lead] if not st.tricks[lead] else 0
    cnt_s = st.count(s)
    cnt_l = st.count(lead)
    pl = POINTS[lc]
    best, best_v = -1, -1e9
    for f in cards_of(h):
        fs = f // 6
        g = pl + POINTS[f]
        if (f < lc) if fs == ls else fs == trump:
            d = g + pend_s
            if cnt_s + d >= 66:
                d += 40
            d += 1
            ha = h & ~(1 << f)
            pairs = (ha >> KING) & (ha >> QUEEN) & MARRIAGE_BITS
            while pairs:
                b = pairs & -pairs
                d += 8 if (b.bit_length() - 1) // 6 == trump else 4
                pairs ^= b
        else:
            d = g + pend_l
            if cnt_l + d >= 66:
                d += 40
            d = -d
        val = d - _keep(f, h, gone, st)
        if val > best_v:
            best, best_v = f, val
    return best


def playout(st: State, policy: Callable[[State], int] = policy_action) -> State:
    """Play ``st`` (changed in place) to the end with ``policy`` for both seats; returns it."""
    apply = st.apply_legal
    while st.phase != OVER:
        apply(policy(st))
    return st


def seat_value(st: State, seat: int, util: Sequence[float]) -> float:
    """What the finished deal is worth to ``seat`` (``util`` by game points -3..3), with
    the card-point margin as a small tie-break."""
    r = st.result
    return result_value(-1 if r.winner is None else r.winner, r.game_points, r.points, seat, util)


def result_value(winner: int, game_points: int, points: Sequence[int], seat: int, util: Sequence[float]) -> float:
    """`seat_value` of a deal's end given by its facts (``winner`` -1 for a drawn hand;
    ``points`` each seat's final count), as the C playout reports them."""
    g = 0 if winner < 0 else (game_points if winner == seat else -game_points)
    return util[g + 3] + (points[seat] - points[seat ^ 1]) * 0.001
